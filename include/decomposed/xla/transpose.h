// The transposing store: a literal whose layout is not the order its sink
// takes (any permutation other than row-major, and column-major for sinks
// that do not accept it) is collected in physical order, then gathered in
// logical row-major order.
//
//   PhysicalStore  collects the physical-order payload: in memory up to a
//                  threshold, beyond it in an unlinked temp file that is
//                  mapped when complete (file-backed, reclaimable pages, so
//                  anonymous memory stays bounded). Memory grows with the
//                  data that arrives, never with the declared size alone.
//   Gather()       walks a physical-order payload (a zero-copy view of the
//                  source, or a PhysicalStore's view) in logical row-major
//                  order, writing whole elements through a reused buffer.
//
// Errors: OS errors creating, writing or mapping the temp file; more bytes
// than declared (kFailedPrecondition); the output's own errors.
//
// Example (F32[2,3]{0,1}: column-major physical data to row-major):
//   decomposed::internal::PhysicalStore store;
//   if (auto s = store.Init(24, 32 << 20, ""); !s.ok()) return s;
//   store.Put(physical_bytes);                 // 24 bytes, column-major
//   absl::StatusOr<std::string_view> v = store.View();
//   char buf[256];
//   absl::Status s = decomposed::internal::Gather(*v, shape, 4, out, buf,
//                                                 sizeof(buf));
#ifndef DECOMPOSED_XLA_TRANSPOSE_H_
#define DECOMPOSED_XLA_TRANSPOSE_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/status.h"
#include "decomposed/xla/shape.h"

namespace decomposed::internal {

inline absl::Status Errno(std::string_view what) {
  return absl::ErrnoToStatus(errno, std::string(what));
}

// Collects physical-order payload for a transpose: in memory, or in an
// unlinked temp file that is mapped when complete.
class PhysicalStore {
 public:
  PhysicalStore() = default;
  PhysicalStore(const PhysicalStore&) = delete;
  PhysicalStore& operator=(const PhysicalStore&) = delete;
  ~PhysicalStore() {
    if (map_) ::munmap(map_, size_);
  }

  // Prepares for `bytes` bytes: kept in memory when bytes <= max_in_memory,
  // else in a temp file in `temp_dir` (empty: $TMPDIR, else /tmp).
  absl::Status Init(uint64_t bytes, uint64_t max_in_memory,
                    const std::string& temp_dir) {
    size_ = bytes;
    if (bytes <= max_in_memory) {
      // No reserve: memory grows with the data that arrives, never with
      // the declared size alone (varint counts are only checked at the end).
      return absl::OkStatus();
    }
    std::string dir = temp_dir;
    if (dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      dir = t && *t ? t : "/tmp";
    }
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::string tmpl = dir + "/.decomposed-transpose.XXXXXX";
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
      if (fd < 0) {
        return Errno(absl::StrCat("creating a transpose temp file in ", dir));
      }
      ::unlink(tmpl.c_str());
    }
    file_ = std::make_unique<FdSink>(OwnedFd(fd));
    return absl::OkStatus();
  }

  uint64_t remaining() const { return size_ - written_; }

  absl::Status Put(std::string_view d) {
    if (d.size() > size_ - written_) {
      return absl::FailedPreconditionError("transpose: more than declared");
    }
    written_ += d.size();
    if (file_) {
      if (!file_->Write(d)) return file_->status();
    } else {
      mem_.append(d);
    }
    return absl::OkStatus();
  }

  template <ByteSource S>
  absl::Status Raw(S& src, uint64_t n, const Frame& frame) {
    return ForEachChunk(src, n, frame,
                        [&](std::string_view c) { return Put(c); });
  }

  // The complete physical data.
  absl::StatusOr<std::string_view> View() {
    if (!file_) return std::string_view(mem_);
    if (!file_->Flush()) return file_->status();
    if (size_ == 0) return std::string_view();
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, file_->fd(), 0);
    if (p == MAP_FAILED) return Errno("mapping the transpose temp file");
    map_ = p;
    return std::string_view(static_cast<const char*>(p), size_);
  }

 private:
  uint64_t size_ = 0;
  uint64_t written_ = 0;
  std::string mem_;
  std::unique_ptr<FdSink> file_;
  void* map_ = nullptr;
};

// Writes `phys` (elements of `eb` bytes in `shape`'s physical order) to
// `out` in logical C order, through `buf`.
template <class Out>
absl::Status Gather(std::string_view phys, const Shape& shape, size_t eb,
                    Out& out, char* buf, size_t cap) {
  const size_t r = shape.dimensions.size();
  const std::vector<int64_t>& dims = shape.dimensions;
  std::vector<uint64_t> stride(r, 0);
  uint64_t acc = 1;
  for (int64_t d : shape.layout.minor_to_major) {
    stride[static_cast<size_t>(d)] = acc;
    acc *= static_cast<uint64_t>(dims[static_cast<size_t>(d)]);
  }
  uint64_t total = acc;
  if (total == 0 || r == 0) return out.Put(phys);
  const uint64_t inner = static_cast<uint64_t>(dims[r - 1]);
  const uint64_t s_in = stride[r - 1] * eb;
  std::vector<uint64_t> idx(r, 0);
  uint64_t base = 0;  // byte offset of idx with idx[r-1] = 0
  size_t ob = 0;
  const size_t cap_e = cap / eb * eb;
  const char* p = phys.data();
  for (uint64_t row = 0; row < total / inner; ++row) {
    const char* q = p + base;
    for (uint64_t j = 0; j < inner; ++j, q += s_in) {
      if (ob + eb > cap_e) {
        if (absl::Status s = out.Put(std::string_view(buf, ob)); !s.ok()) {
          return s;
        }
        ob = 0;
      }
      switch (eb) {
        case 1: buf[ob] = *q; break;
        case 2: std::memcpy(buf + ob, q, 2); break;
        case 4: std::memcpy(buf + ob, q, 4); break;
        case 8: std::memcpy(buf + ob, q, 8); break;
        default: std::memcpy(buf + ob, q, eb);
      }
      ob += eb;
    }
    for (size_t d = r - 1; d-- > 0;) {
      base += stride[d] * eb;
      if (++idx[d] < static_cast<uint64_t>(dims[d])) break;
      base -= stride[d] * eb * static_cast<uint64_t>(dims[d]);
      idx[d] = 0;
    }
  }
  if (ob) return out.Put(std::string_view(buf, ob));
  return absl::OkStatus();
}

}  // namespace decomposed::internal

#endif  // DECOMPOSED_XLA_TRANSPOSE_H_
