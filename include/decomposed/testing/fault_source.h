// A fault-injecting byte source for tests: serves a byte string through
// BufferedSource<FaultBackend>, the same window logic FdSource and
// IstreamSource use, while misbehaving the way read(2) may:
//   * short reads (at most `max_read` bytes per call; 1 gives 1-byte reads),
//   * EINTR (every `eintr_every`-th call fails with errno EINTR first),
//   * an I/O error (the `fail_on_call`-th call, 1-based, fails with
//     `fail_errno`, and every later call fails too),
//   * optionally unknown size and no seeking, like a pipe.
// Not used by the library itself; installed so that downstream code can
// test its own readers the same way.
//
// Example:
//   decomposed::testing::FaultOptions o;
//   o.max_read = 1;          // 1-byte reads
//   o.eintr_every = 3;       // every 3rd read(2) is interrupted
//   o.fail_on_call = 40;     // the 40th read fails with EIO
//   decomposed::testing::FaultSource src(bytes, o);
//   auto v = decomposed::ReadBox(src, {"count box"});
#ifndef DECOMPOSED_TESTING_FAULT_SOURCE_H_
#define DECOMPOSED_TESTING_FAULT_SOURCE_H_

#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "decomposed/io/byte_source.h"

namespace decomposed::testing {

struct FaultOptions {
  // Largest number of bytes one ReadSome call returns (0: no limit).
  size_t max_read = 0;
  // Every `eintr_every`-th ReadSome call (counting all calls, 1-based)
  // returns -1 with errno EINTR before doing anything (0: never).
  uint64_t eintr_every = 0;
  // The `fail_on_call`-th ReadSome call and every later one return -1 with
  // errno `fail_errno` (0: never).
  uint64_t fail_on_call = 0;
  int fail_errno = EIO;
  // Report the size and allow seeking (like a regular file) or not (like a
  // pipe).
  bool known_size = true;
  bool seekable = true;
  // Buffer size of the BufferedSource (its minimum is limits::kMaxPull).
  size_t buffer_size = limits::kMaxPull;
};

// The Backend half: see BufferedSource in byte_source.h. Holds a copy of the
// data.
class FaultBackend {
 public:
  FaultBackend(std::string data, const FaultOptions& options)
      : data_(std::move(data)), options_(options) {}

  ssize_t ReadSome(char* dst, size_t n) {
    ++calls_;
    if (options_.fail_on_call != 0 && calls_ >= options_.fail_on_call) {
      errno = options_.fail_errno;
      return -1;
    }
    if (options_.eintr_every != 0 && calls_ % options_.eintr_every == 0) {
      ++eintrs_;
      errno = EINTR;
      return -1;
    }
    size_t k = std::min(n, data_.size() - pos_);
    if (options_.max_read != 0) k = std::min(k, options_.max_read);
    if (k) std::memcpy(dst, data_.data() + pos_, k);
    pos_ += k;
    return static_cast<ssize_t>(k);
  }
  bool Seekable() const { return options_.seekable; }
  bool SeekTo(uint64_t pos) {
    ++seeks_;
    if (pos > data_.size()) {
      errno = EINVAL;
      return false;
    }
    pos_ = static_cast<size_t>(pos);
    return true;
  }
  std::optional<uint64_t> Size() const {
    if (!options_.known_size) return std::nullopt;
    return data_.size();
  }

  uint64_t calls() const { return calls_; }
  uint64_t eintrs() const { return eintrs_; }
  uint64_t seeks() const { return seeks_; }

 private:
  std::string data_;
  FaultOptions options_;
  size_t pos_ = 0;
  uint64_t calls_ = 0;
  uint64_t eintrs_ = 0;
  uint64_t seeks_ = 0;
};

class FaultSource : public BufferedSource<FaultBackend> {
 public:
  FaultSource(std::string_view data, const FaultOptions& options = {})
      : BufferedSource<FaultBackend>(
            FaultBackend(std::string(data), options), options.buffer_size) {}
};

static_assert(ByteSource<FaultSource>);

}  // namespace decomposed::testing

#endif  // DECOMPOSED_TESTING_FAULT_SOURCE_H_
