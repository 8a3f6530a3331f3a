// Byte sources: where decoders pull bytes from.
//
// Every reader in this library is a template over a type that satisfies the
// `ByteSource` concept below. A source exposes a *window* of buffered bytes
// [cursor(), limit()); decoders work on the window inline and call Pull()
// when it runs dry (one out-of-line refill), in the style of riegeli's
// Reader and protobuf's ZeroCopyInputStream.
//
// Contract of a ByteSource `s`:
//   const char* s.cursor(), s.limit()  the buffered window; cursor <= limit.
//   size_t s.available()               limit - cursor.
//   void s.Advance(n)                  consume n <= available() bytes.
//   bool s.Pull(n)                     make at least n bytes available,
//                                      n <= limits::kMaxPull. False when the
//                                      data ends first (status() stays OK:
//                                      a clean end) or on an I/O error
//                                      (status() is not OK). The window may
//                                      move: pointers into it are invalidated.
//   bool s.Read(dst, n)                copy exactly n bytes to dst, bypassing
//                                      the buffer for large n. False as Pull.
//   bool s.Skip(n)                     discard n bytes; seekable sources do
//                                      not read them. False when fewer remain.
//   uint64_t s.position()              bytes consumed since the start (plus
//                                      the base offset given at construction).
//   std::optional<uint64_t> s.size()   the position of the end of the data,
//                                      when known (files, memory).
//   const absl::Status& s.status()     sticky: the first I/O error.
//
// Sources that can go back (every source here except a non-seekable
// BufferedSource, for which it fails outside the buffered window) also
// satisfy `RewindableSource`: bool Seek(pos) repositions the stream at
// absolute position `pos` (as position() counts); false when it cannot.
//
// Sources whose window is the whole data and stays valid for their lifetime
// (MemorySource, MmapSource) also satisfy `ZeroCopySource`: ReadView(n)
// returns a view of the next n bytes without copying.
//
// Example:
//   decomposed::MemorySource src(std::string_view("\x04\x3a\x02\x80\x01"));
//   decomposed::BoxReader reader(src);
//   absl::StatusOr<uint64_t> n = reader.Read({"input count box"});
#ifndef DECOMPOSED_IO_BYTE_SOURCE_H_
#define DECOMPOSED_IO_BYTE_SOURCE_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/fd.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

template <class S>
concept ByteSource = requires(S& s, const S& cs, char* dst, size_t n,
                              uint64_t u) {
  { cs.cursor() } -> std::same_as<const char*>;
  { cs.limit() } -> std::same_as<const char*>;
  { cs.available() } -> std::same_as<size_t>;
  { s.Advance(n) };
  { s.Pull(n) } -> std::same_as<bool>;
  { s.Read(dst, n) } -> std::same_as<bool>;
  { s.Skip(u) } -> std::same_as<bool>;
  { cs.position() } -> std::same_as<uint64_t>;
  { cs.size() } -> std::same_as<std::optional<uint64_t>>;
  { cs.status() } -> std::convertible_to<const absl::Status&>;
};

template <class S>
concept ZeroCopySource = ByteSource<S> && requires(S& s, size_t n) {
  { s.ReadView(n) } -> std::same_as<std::optional<std::string_view>>;
};

// Bytes left in `s` when its size is known.
template <ByteSource S>
std::optional<uint64_t> Remaining(const S& s) {
  std::optional<uint64_t> size = s.size();
  if (!size) return std::nullopt;
  return *size >= s.position() ? *size - s.position() : 0;
}

// Asks a source that learns its size only at its end (SpoolSource,
// io/spool_source.h) to read ahead until `n` bytes from position() are held
// or the data ends, so that size() then answers a check of `n` bytes as a
// regular file's would. A no-op for every other source.
template <ByteSource S>
void HoldAhead(S& s, uint64_t n) {
  if constexpr (requires { s.Hold(n); }) s.Hold(n);
}

// Tells a source that retains what it read (SpoolSource) that the reader
// will never seek before `pos` again, so it may free those bytes. A no-op
// for every other source.
template <ByteSource S>
void ReleaseBefore(S& s, uint64_t pos) {
  if constexpr (requires { s.Release(pos); }) s.Release(pos);
}

// ---------------------------------------------------------------------------
// MemorySource: a borrowed span of bytes. The window is the whole span.

class MemorySource {
 public:
  // `data` must outlive the source. `base_offset` is added to position() so
  // that a sub-span reports offsets of the enclosing stream.
  explicit MemorySource(std::string_view data, uint64_t base_offset = 0)
      : begin_(data.data()),
        cursor_(data.data()),
        limit_(data.data() + data.size()),
        base_(base_offset) {}

  const char* cursor() const { return cursor_; }
  const char* limit() const { return limit_; }
  size_t available() const { return static_cast<size_t>(limit_ - cursor_); }
  void Advance(size_t n) { cursor_ += n; }
  bool Pull(size_t n) { return available() >= n; }
  bool Read(char* dst, size_t n) {
    if (available() < n) {
      cursor_ = limit_;
      return false;
    }
    if (n) std::memcpy(dst, cursor_, n);
    cursor_ += n;
    return true;
  }
  bool Skip(uint64_t n) {
    if (available() < n) {
      cursor_ = limit_;
      return false;
    }
    cursor_ += n;
    return true;
  }
  std::optional<std::string_view> ReadView(size_t n) {
    if (available() < n) return std::nullopt;
    std::string_view v(cursor_, n);
    cursor_ += n;
    return v;
  }
  // Repositions at absolute `pos` in [base, base + size].
  bool Seek(uint64_t pos) {
    if (pos < base_ || pos - base_ > static_cast<uint64_t>(limit_ - begin_)) {
      return false;
    }
    cursor_ = begin_ + (pos - base_);
    return true;
  }
  uint64_t position() const {
    return base_ + static_cast<uint64_t>(cursor_ - begin_);
  }
  std::optional<uint64_t> size() const {
    return base_ + static_cast<uint64_t>(limit_ - begin_);
  }
  // Memory cannot fail: always OK.
  const absl::Status& status() const { return OkStatusRef(); }

 private:
  static const absl::Status& OkStatusRef() {
    static const absl::Status* ok = new absl::Status();
    return *ok;
  }

  // Four plain fields: the source is trivially copyable, so decoders can
  // run their out-of-line slow paths on a copy and keep the caller's
  // source in registers (see ReadBox).
  const char* begin_;
  const char* cursor_;
  const char* limit_;
  uint64_t base_;
};
static_assert(std::is_trivially_copyable_v<MemorySource>);

// ---------------------------------------------------------------------------
// BufferedSource<Backend>: the window logic shared by sources that read
// into a buffer of their own. A Backend provides
//   ssize_t ReadSome(char* dst, size_t n);  // >0 bytes, 0 at end, -1 + errno
//   bool Seekable() const;
//   bool SeekTo(uint64_t pos);              // absolute, only if Seekable()
//   std::optional<uint64_t> Size() const;
// EINTR from ReadSome is retried here; short reads are normal.

template <class Backend>
class BufferedSource {
 public:
  static constexpr size_t kDefaultBufferSize = 256 << 10;

  explicit BufferedSource(Backend backend,
                          size_t buffer_size = kDefaultBufferSize)
      : backend_(std::move(backend)),
        capacity_(std::max(buffer_size, limits::kMaxPull)),
        buffer_(new char[capacity_]),
        cursor_(buffer_.get()),
        limit_(buffer_.get()) {
    size_ = backend_.Size();
  }
  BufferedSource(BufferedSource&&) = default;

  const char* cursor() const { return cursor_; }
  const char* limit() const { return limit_; }
  size_t available() const { return static_cast<size_t>(limit_ - cursor_); }
  void Advance(size_t n) { cursor_ += n; }

  bool Pull(size_t n) {
    if (available() >= n) [[likely]]
      return true;
    return PullSlow(n);
  }

  bool Read(char* dst, size_t n) {
    size_t from_window = std::min(n, available());
    if (from_window) std::memcpy(dst, cursor_, from_window);
    cursor_ += from_window;
    dst += from_window;
    n -= from_window;
    if (n == 0) return true;
    if (n < capacity_ / 2) {
      // Small remainder: refill the buffer and copy from it.
      while (n > 0) {
        if (!Fill()) return false;
        size_t k = std::min(n, available());
        std::memcpy(dst, cursor_, k);
        cursor_ += k;
        dst += k;
        n -= k;
      }
      return true;
    }
    // Large remainder: read straight into the destination.
    while (n > 0) {
      ssize_t got = ReadRetrying(dst, n);
      if (got <= 0) return false;
      Consumed(static_cast<uint64_t>(got));
      dst += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  bool Skip(uint64_t n) {
    size_t from_window = static_cast<size_t>(
        std::min<uint64_t>(n, available()));
    cursor_ += from_window;
    n -= from_window;
    if (n == 0) return true;
    if (!status_.ok()) return false;
    if (backend_.Seekable() && size_) {
      uint64_t here = position();
      uint64_t target = here + n;
      bool complete = target <= *size_;
      if (!complete) target = *size_;
      if (!backend_.SeekTo(target)) {
        status_ = ErrnoError(
            errno, absl::StrCat("seeking to byte ", target));
        return false;
      }
      Consumed(target - here);
      return complete;
    }
    while (n > 0) {
      if (!Fill()) return false;
      size_t k = static_cast<size_t>(std::min<uint64_t>(n, available()));
      cursor_ += k;
      n -= k;
    }
    return true;
  }

  // Repositions at absolute `pos`. Inside the buffered window only the
  // cursor moves; elsewhere the backend must be seekable. False when it
  // cannot (the position is then unchanged) or on a seek error (status()).
  bool Seek(uint64_t pos) {
    uint64_t lo = buffer_start_;
    uint64_t hi = lo + static_cast<uint64_t>(limit_ - buffer_.get());
    if (pos >= lo && pos <= hi) {
      cursor_ = buffer_.get() + (pos - lo);
      return true;
    }
    if (!status_.ok() || !backend_.Seekable() || (size_ && pos > *size_)) {
      return false;
    }
    if (!backend_.SeekTo(pos)) {
      status_ = ErrnoError(errno,
                                    absl::StrCat("seeking to byte ", pos));
      return false;
    }
    buffer_start_ = pos;
    cursor_ = limit_ = buffer_.get();
    return true;
  }

  uint64_t position() const {
    return buffer_start_ + static_cast<uint64_t>(cursor_ - buffer_.get());
  }
  std::optional<uint64_t> size() const { return size_; }
  const absl::Status& status() const { return status_; }
  Backend& backend() { return backend_; }

 private:
  // Marks `n` bytes consumed outside the buffer; the window becomes empty.
  void Consumed(uint64_t n) {
    buffer_start_ = position() + n;
    cursor_ = limit_ = buffer_.get();
  }

  ssize_t ReadRetrying(char* dst, size_t n) {
    if (!status_.ok()) return -1;
    for (;;) {
      ssize_t got = backend_.ReadSome(dst, n);
      if (got >= 0) return got;
      if (errno == EINTR) continue;
      status_ = ErrnoError(
          errno, absl::StrCat("reading at byte ", position()));
      return -1;
    }
  }

  // Discards consumed bytes and reads at least one more byte.
  bool Fill() {
    size_t keep = available();
    if (cursor_ != buffer_.get()) {
      buffer_start_ = position();
      if (keep) std::memmove(buffer_.get(), cursor_, keep);
      cursor_ = buffer_.get();
      limit_ = buffer_.get() + keep;
    }
    ssize_t got = ReadRetrying(limit_, capacity_ - keep);
    if (got <= 0) return false;
    limit_ += got;
    return true;
  }

  bool PullSlow(size_t n) {
    if (n > capacity_) n = capacity_;
    while (available() < n) {
      if (!Fill()) return false;
    }
    return true;
  }

  Backend backend_;
  size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  uint64_t buffer_start_ = 0;  // stream position of buffer_[0]
  const char* cursor_;
  char* limit_;
  std::optional<uint64_t> size_;
  absl::Status status_;
};

// ---------------------------------------------------------------------------
// File-descriptor source. Reads into its own reusable buffer: a regular file
// with pread(2) at the source's own position (so sources over descriptors
// that share one open file description -- dup()s, standard input and a
// copy of it -- never move each other, and a skip or seek is no system
// call), anything else with read(2).

template <FdHolder H>
class FdBackend {
 public:
  explicit FdBackend(H fd) : fd_(std::move(fd)) {
    struct stat st;
    if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode)) {
      off_t here = ::lseek(fd_.get(), 0, SEEK_CUR);
      if (here >= 0) {
        regular_ = true;
        origin_ = static_cast<uint64_t>(here);
        size_ = static_cast<uint64_t>(st.st_size) >= origin_
                    ? static_cast<uint64_t>(st.st_size) - origin_
                    : 0;
      }
    }
  }
  FdBackend(FdBackend&&) = default;
  FdBackend& operator=(FdBackend&&) = default;

  ssize_t ReadSome(char* dst, size_t n) {
    if (!regular_) return ::read(fd_.get(), dst, n);
    ssize_t got =
        ::pread(fd_.get(), dst, n, static_cast<off_t>(origin_ + pos_));
    if (got > 0) pos_ += static_cast<uint64_t>(got);
    return got;
  }
  bool Seekable() const { return regular_; }
  bool SeekTo(uint64_t pos) {
    if (!regular_) return false;
    pos_ = pos;
    return true;
  }
  std::optional<uint64_t> Size() const {
    if (!regular_) return std::nullopt;
    return size_;
  }
  int fd() const { return fd_.get(); }
  // Absolute file offset of stream position 0.
  uint64_t origin() const { return origin_; }

 private:
  H fd_;
  bool regular_ = false;
  uint64_t origin_ = 0;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;  // regular files: the next byte ReadSome reads
};

template <FdHolder H>
class BasicFdSource : public BufferedSource<FdBackend<H>> {
 public:
  explicit BasicFdSource(
      H fd, size_t buffer_size = BufferedSource<FdBackend<H>>::kDefaultBufferSize)
      : BufferedSource<FdBackend<H>>(FdBackend<H>(std::move(fd)),
                                     buffer_size) {}
  int fd() { return this->backend().fd(); }
};

using FdSource = BasicFdSource<OwnedFd>;      // closes the fd when destroyed
using FdSourceRef = BasicFdSource<UnownedFd>;  // borrows the fd

// ---------------------------------------------------------------------------
// std::istream source. Seekable when the stream reports positions.

class IstreamBackend {
 public:
  explicit IstreamBackend(std::istream* in) : in_(in) {
    std::streampos here = in_->tellg();
    if (here != std::streampos(-1)) {
      in_->seekg(0, std::ios::end);
      std::streampos end = in_->tellg();
      in_->seekg(here);
      if (end != std::streampos(-1) && in_->good()) {
        seekable_ = true;
        origin_ = static_cast<uint64_t>(static_cast<std::streamoff>(here));
        size_ = static_cast<uint64_t>(static_cast<std::streamoff>(end)) -
                origin_;
      }
    }
    in_->clear(in_->rdstate() & ~std::ios::failbit);
  }
  ssize_t ReadSome(char* dst, size_t n) {
    if (in_->bad()) {
      errno = EIO;
      return -1;
    }
    in_->read(dst, static_cast<std::streamsize>(n));
    std::streamsize got = in_->gcount();
    if (in_->bad()) {
      errno = EIO;
      return -1;
    }
    if (got == 0) return 0;
    in_->clear(in_->rdstate() & ~(std::ios::failbit | std::ios::eofbit));
    return static_cast<ssize_t>(got);
  }
  bool Seekable() const { return seekable_; }
  bool SeekTo(uint64_t pos) {
    in_->clear();
    in_->seekg(static_cast<std::streamoff>(origin_ + pos));
    if (!in_->good()) {
      errno = EIO;
      return false;
    }
    return true;
  }
  std::optional<uint64_t> Size() const {
    if (!seekable_) return std::nullopt;
    return size_;
  }

 private:
  std::istream* in_;
  bool seekable_ = false;
  uint64_t origin_ = 0;
  uint64_t size_ = 0;
};

// Borrows `in`, which must outlive the source.
class IstreamSource : public BufferedSource<IstreamBackend> {
 public:
  explicit IstreamSource(std::istream& in,
                         size_t buffer_size = kDefaultBufferSize)
      : BufferedSource<IstreamBackend>(IstreamBackend(&in), buffer_size) {}
};

// ---------------------------------------------------------------------------
// MmapSource: maps a whole file read-only and hands out zero-copy views.
// Satisfies ZeroCopySource. Empty files need no mapping.

class MmapSource {
 public:
  // Maps `path`. On failure the source is empty and status() says why.
  explicit MmapSource(const std::string& path) {
    OwnedFd fd;
    status_ = OpenForReading(path, &fd);
    if (!status_.ok()) return;
    Map(fd, path);
  }
  // Maps the regular file open as `fd` (which may be closed afterwards);
  // `name` names it in errors.
  MmapSource(const OwnedFd& fd, const std::string& name) { Map(fd, name); }
  MmapSource(const MmapSource&) = delete;
  MmapSource& operator=(const MmapSource&) = delete;
  ~MmapSource() {
    if (map_) ::munmap(const_cast<char*>(map_), map_size_);
  }

  const char* cursor() const { return view_.cursor(); }
  const char* limit() const { return view_.limit(); }
  size_t available() const { return view_.available(); }
  void Advance(size_t n) { view_.Advance(n); }
  bool Pull(size_t n) { return view_.Pull(n); }
  bool Read(char* dst, size_t n) { return view_.Read(dst, n); }
  bool Skip(uint64_t n) { return view_.Skip(n); }
  std::optional<std::string_view> ReadView(size_t n) {
    return view_.ReadView(n);
  }
  bool Seek(uint64_t pos) { return view_.Seek(pos); }
  uint64_t position() const { return view_.position(); }
  std::optional<uint64_t> size() const { return view_.size(); }
  const absl::Status& status() const { return status_; }

 private:
  void Map(const OwnedFd& fd, const std::string& path) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      status_ = ErrnoError(errno, absl::StrCat("stat ", path));
      return;
    }
    size_t n = static_cast<size_t>(st.st_size);
    if (n > 0) {
      void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (p == MAP_FAILED) {
        status_ = ErrnoError(errno, absl::StrCat("mmap ", path));
        return;
      }
      ::madvise(p, n, MADV_SEQUENTIAL);
      map_ = static_cast<const char*>(p);
      map_size_ = n;
    }
    view_ = MemorySource(std::string_view(map_, map_size_));
  }

  const char* map_ = nullptr;
  size_t map_size_ = 0;
  MemorySource view_{std::string_view()};
  absl::Status status_;
};

template <class S>
concept RewindableSource = ByteSource<S> && requires(S& s, uint64_t pos) {
  { s.Seek(pos) } -> std::same_as<bool>;
};

static_assert(ZeroCopySource<MemorySource>);
static_assert(RewindableSource<MemorySource>);
static_assert(RewindableSource<MmapSource>);
static_assert(RewindableSource<FdSource>);
static_assert(ZeroCopySource<MmapSource>);
static_assert(ByteSource<FdSource>);
static_assert(ByteSource<FdSourceRef>);
static_assert(ByteSource<IstreamSource>);

}  // namespace decomposed

#endif  // DECOMPOSED_IO_BYTE_SOURCE_H_
