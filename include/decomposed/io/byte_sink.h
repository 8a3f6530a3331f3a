// Byte sinks: where encoders write bytes.
//
// Contract of a ByteSink `s`:
//   bool s.Write(std::string_view data)  append; false on error (sticky).
//   uint64_t s.position()                bytes written so far.
//   const absl::Status& s.status()       the first error.
//   bool s.Flush()                       push buffered bytes to the OS
//                                        (no-op for memory sinks).
// Some sinks (StringSink, FdSink, AtomicFileSink) also have
//   bool s.Rewrite(offset, data)         overwrite bytes already written
//                                        (a zip entry's CRC, once known).
//
// Sinks provided: StringSink (std::string), VectorSink (std::vector<char>),
// OstreamSink, FdSink / FdSinkRef (buffered write(2)), and AtomicFileSink,
// which writes `<dir>/.<name>.tmp.XXXXXX` beside the target and renames it
// over the target on Commit(); dropped without Commit() it removes the temp
// file, so a failed run never leaves a partial file under a final name.
//
// Example:
//   decomposed::AtomicFileSink out;
//   if (auto s = out.Open("/tmp/x.npy"); !s.ok()) return s;
//   out.Write(header); out.Write(payload);
//   return out.Commit();
#ifndef DECOMPOSED_IO_BYTE_SINK_H_
#define DECOMPOSED_IO_BYTE_SINK_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"

namespace decomposed {

template <class S>
concept ByteSink = requires(S& s, const S& cs, std::string_view d) {
  { s.Write(d) } -> std::same_as<bool>;
  { s.Flush() } -> std::same_as<bool>;
  { cs.position() } -> std::same_as<uint64_t>;
  { cs.status() } -> std::convertible_to<const absl::Status&>;
};

// Appends to a borrowed std::string.
class StringSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  bool Write(std::string_view d) {
    out_->append(d);
    return true;
  }
  bool Flush() { return true; }
  // Overwrites bytes already written (false when they are not all there).
  bool Rewrite(uint64_t offset, std::string_view d) {
    if (offset > out_->size() || d.size() > out_->size() - offset) {
      return false;
    }
    out_->replace(static_cast<size_t>(offset), d.size(), d);
    return true;
  }
  uint64_t position() const { return out_->size(); }
  const absl::Status& status() const { return status_; }

 private:
  std::string* out_;
  absl::Status status_;
};

// Appends to a borrowed std::vector<char>.
class VectorSink {
 public:
  explicit VectorSink(std::vector<char>* out) : out_(out) {}
  bool Write(std::string_view d) {
    out_->insert(out_->end(), d.begin(), d.end());
    return true;
  }
  bool Flush() { return true; }
  uint64_t position() const { return out_->size(); }
  const absl::Status& status() const { return status_; }

 private:
  std::vector<char>* out_;
  absl::Status status_;
};

// Counts bytes and discards them (sizes, benchmarks, validation).
class NullSink {
 public:
  bool Write(std::string_view d) {
    pos_ += d.size();
    return true;
  }
  bool Flush() { return true; }
  uint64_t position() const { return pos_; }
  const absl::Status& status() const { return status_; }

 private:
  uint64_t pos_ = 0;
  absl::Status status_;
};

// Writes to a borrowed std::ostream.
class OstreamSink {
 public:
  explicit OstreamSink(std::ostream& out) : out_(&out) {}
  bool Write(std::string_view d) {
    if (!status_.ok()) return false;
    out_->write(d.data(), static_cast<std::streamsize>(d.size()));
    if (!out_->good()) {
      status_ = absl::DataLossError(
          absl::StrCat("writing at byte ", pos_, ": stream failed"));
      return false;
    }
    pos_ += d.size();
    return true;
  }
  bool Flush() {
    if (!status_.ok()) return false;
    out_->flush();
    if (!out_->good()) {
      status_ = absl::DataLossError("flushing stream failed");
      return false;
    }
    return true;
  }
  uint64_t position() const { return pos_; }
  const absl::Status& status() const { return status_; }

 private:
  std::ostream* out_;
  uint64_t pos_ = 0;
  absl::Status status_;
};

// Writes all of [p, p+n) to fd, retrying short writes and EINTR.
inline absl::Status WriteFully(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "write");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

// Buffered file-descriptor sink. Writes at least as large as the buffer go
// straight to the fd. Flush() is called by the destructor; call it yourself
// to see its error.
template <FdHolder H>
class BasicFdSink {
 public:
  static constexpr size_t kDefaultBufferSize = 256 << 10;

  explicit BasicFdSink(H fd, size_t buffer_size = kDefaultBufferSize)
      : fd_(std::move(fd)),
        capacity_(buffer_size ? buffer_size : 1),
        buffer_(new char[capacity_]) {}
  // The moved-from sink is left empty: its destructor writes nothing.
  BasicFdSink(BasicFdSink&& o) noexcept
      : fd_(std::move(o.fd_)),
        capacity_(o.capacity_),
        buffer_(std::move(o.buffer_)),
        used_(std::exchange(o.used_, 0)),
        pos_(o.pos_),
        status_(std::move(o.status_)) {}
  BasicFdSink& operator=(BasicFdSink&&) = delete;
  ~BasicFdSink() { Flush(); }

  bool Write(std::string_view d) {
    if (!status_.ok()) return false;
    // One copy into the buffer, of fewer bytes than the buffer holds. The
    // capacity is read once: after Flush() (a call that may write memory)
    // GCC could not tell that it had not grown, and warned of a copy of a
    // buffer's worth from a small array (-Wstringop-overread).
    const size_t capacity = capacity_;
    if (d.size() > capacity - used_) [[unlikely]] {
      if (!Flush()) return false;
      if (d.size() >= capacity) return Direct(d);
    }
    std::memcpy(buffer_.get() + used_, d.data(), d.size());
    used_ += d.size();
    pos_ += d.size();
    return true;
  }
  bool Flush() {
    if (!status_.ok() || used_ == 0) return status_.ok();
    absl::Status s = WriteFully(fd_.get(), buffer_.get(), used_);
    used_ = 0;
    if (!s.ok()) {
      status_ = absl::Status(
          s.code(), absl::StrCat(s.message(), " (at byte ", pos_, ")"));
      return false;
    }
    return true;
  }
  uint64_t position() const { return pos_; }
  const absl::Status& status() const { return status_; }
  // The descriptor; Flush() first before writing to it directly, and call
  // Wrote(n) after to keep position() right.
  int fd() const { return fd_.get(); }
  void Wrote(uint64_t n) { pos_ += n; }
  // Overwrites bytes already written at [offset, offset + d.size()), which
  // must end at or before position(): in the buffer when they are still
  // there, else with pwrite(2) (the fd's offset does not move). Offsets are
  // file offsets, so this is for sinks that started at offset 0 of their
  // file (AtomicFileSink's). Used to write a zip entry's CRC-32 back into
  // its local header once the entry is streamed (npy/npz_writer.h).
  bool Rewrite(uint64_t offset, std::string_view d) {
    if (!status_.ok()) return false;
    if (offset > pos_ || d.size() > pos_ - offset) {
      Fail(absl::FailedPreconditionError(absl::StrCat(
          "rewriting bytes ", offset, "..", offset + d.size(),
          " of a sink at byte ", pos_)));
      return false;
    }
    const uint64_t flushed = pos_ - used_;
    size_t in_buffer = 0;  // the tail of d still in the buffer
    if (offset + d.size() > flushed) {
      const uint64_t from = std::max(offset, flushed);
      in_buffer = static_cast<size_t>(offset + d.size() - from);
      std::memcpy(buffer_.get() + (from - flushed),
                  d.data() + (d.size() - in_buffer), in_buffer);
    }
    const size_t on_disk = d.size() - in_buffer;
    for (size_t done = 0; done < on_disk;) {
      ssize_t w = ::pwrite(fd_.get(), d.data() + done, on_disk - done,
                           static_cast<off_t>(offset + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        Fail(ErrnoError(w < 0 ? errno : EIO,
                                 absl::StrCat("pwrite at byte ", offset)));
        return false;
      }
      done += static_cast<size_t>(w);
    }
    return true;
  }
  void Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  // Owning sinks only: flushes, then closes the descriptor and reports a
  // close(2) error (EINTR, after which Linux has closed it, counts as done).
  absl::Status Close()
    requires std::same_as<H, OwnedFd>
  {
    Flush();
    if (fd_.Close() != 0 && errno != EINTR) {
      Fail(ErrnoError(
          errno, absl::StrCat("close (after byte ", pos_, ")")));
    }
    return status_;
  }

 private:
  bool Direct(std::string_view d) {
    absl::Status s = WriteFully(fd_.get(), d.data(), d.size());
    if (!s.ok()) {
      status_ = absl::Status(
          s.code(), absl::StrCat(s.message(), " (at byte ", pos_, ")"));
      return false;
    }
    pos_ += d.size();
    return true;
  }

  H fd_;
  size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
  uint64_t pos_ = 0;
  absl::Status status_;
};

using FdSink = BasicFdSink<OwnedFd>;
using FdSinkRef = BasicFdSink<UnownedFd>;

// Writes a temp file beside `path` and renames it over `path` on Commit().
// Destroyed (or Abandon()ed) without a successful Commit(), it unlinks the
// temp file. The temp name is `<dir>/.<base>.tmp.XXXXXX`, with <base>
// shortened to its first NAME_MAX - 12 bytes when needed so that any final
// name the file system takes (up to 255 bytes) has a temp name too; stale
// temp files from a killed process match `.*.tmp.??????` and may be removed
// by anyone. Commit() reports errors of write, fsync, close and rename; on
// any of them the temp file is removed and the final name is untouched.
class AtomicFileSink {
 public:
  AtomicFileSink() = default;
  AtomicFileSink(const AtomicFileSink&) = delete;
  AtomicFileSink& operator=(const AtomicFileSink&) = delete;
  ~AtomicFileSink() { Abandon(); }

  // Creates the temp file. `mode` is applied before the rename (0644 by
  // default, like a plain open with a 022 umask).
  absl::Status Open(const std::string& path, mode_t mode = 0644) {
    Abandon();
    path_ = path;
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    std::string base =
        slash == std::string::npos ? path : path.substr(slash + 1);
    // "." + base + ".tmp.XXXXXX" must itself fit in NAME_MAX bytes.
    constexpr size_t kMaxBase = NAME_MAX - 12;
    if (base.size() > kMaxBase) base.resize(kMaxBase);
    temp_ = absl::StrCat(dir, ".", base, ".tmp.XXXXXX");
    int fd = ::mkostemp(temp_.data(), O_CLOEXEC);
    if (fd < 0) {
      // Named as the output, not the temp file the user never asked for;
      // a missing directory said so (outputs do not create directories,
      // as cp does not).
      const int e = errno;
      absl::Status s = ErrnoError(
          e, absl::StrCat("writing ", path,
                          e == ENOENT ? absl::StrCat(" (no directory ",
                                                     dir.empty() ? "." : dir, ")")
                                      : std::string()));
      temp_.clear();
      return s;
    }
    ::fchmod(fd, mode);
    sink_ = std::make_unique<FdSink>(OwnedFd(fd));
    return absl::OkStatus();
  }

  bool Write(std::string_view d) { return sink_ && sink_->Write(d); }
  bool Flush() { return sink_ && sink_->Flush(); }
  // FdSink::Rewrite: overwrites bytes already written (the temp file's).
  bool Rewrite(uint64_t offset, std::string_view d) {
    return sink_ && sink_->Rewrite(offset, d);
  }
  uint64_t position() const { return sink_ ? sink_->position() : 0; }
  const absl::Status& status() const {
    static const absl::Status* not_open =
        new absl::Status(absl::FailedPreconditionError("sink not open"));
    return sink_ ? sink_->status() : *not_open;
  }
  FdSink* fd_sink() { return sink_.get(); }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

  // Flushes, closes and renames the temp file to the target path. With
  // `sync`, fsyncs the file first (crash safety at a cost in speed).
  absl::Status Commit(bool sync = false) {
    if (!sink_) return absl::FailedPreconditionError("sink not open");
    if (!sink_->Flush()) {
      absl::Status s = sink_->status();
      Abandon();
      return WithPath(s);
    }
    if (sync && ::fsync(sink_->fd()) != 0) {
      absl::Status s = ErrnoError(errno, "fsync");
      Abandon();
      return WithPath(s);
    }
    if (absl::Status s = sink_->Close(); !s.ok()) {
      Abandon();
      return WithPath(s);
    }
    sink_.reset();
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      absl::Status s = ErrnoError(
          errno, absl::StrCat("renaming ", temp_, " to ", path_));
      ::unlink(temp_.c_str());
      temp_.clear();
      return s;
    }
    temp_.clear();
    return absl::OkStatus();
  }

  // Drops the temp file. Safe to call at any time.
  void Abandon() {
    sink_.reset();
    if (!temp_.empty()) {
      ::unlink(temp_.c_str());
      temp_.clear();
    }
  }

 private:
  absl::Status WithPath(const absl::Status& s) {
    return absl::Status(s.code(),
                        absl::StrCat("writing ", path_, ": ", s.message()));
  }

  std::string path_;
  std::string temp_;
  std::unique_ptr<FdSink> sink_;
};

static_assert(ByteSink<StringSink>);
static_assert(ByteSink<VectorSink>);
static_assert(ByteSink<NullSink>);
static_assert(ByteSink<OstreamSink>);
static_assert(ByteSink<FdSink>);
static_assert(ByteSink<AtomicFileSink>);

}  // namespace decomposed

#endif  // DECOMPOSED_IO_BYTE_SINK_H_
