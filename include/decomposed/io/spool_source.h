// SpoolSource: a rewindable ByteSource over a pipe, a FIFO or a character
// device (anything read(2) cannot seek in), for reading a snapshot from
// stdin in one pass.
//
// Every byte read from the descriptor is retained from a release mark
// onward, so Seek(pos) works for any pos from the mark to the end of what
// was read (and reads ahead for a pos beyond it). Retained bytes stay in
// memory up to limits::kSpoolMemoryBytes; beyond that they go to an
// unlinked temp file under $TMPDIR (else /tmp; O_TMPFILE, else mkstemp and
// unlink), read back through a window. Release(pos) is the consumer's
// promise never to seek before pos: it frees what precedes it (the file
// part is punched out with fallocate, and the source returns to memory
// once what it retains fits in half the memory limit). Without Release
// calls everything is retained: correct, bounded by the disk.
//
// size() is unknown until the data has ended, then the number of bytes the
// descriptor gave. Hold(n) reads ahead until n bytes from position() are
// retained or the data ends: readers that check a declared length against
// the size (CheckHeld, io/bounded.h) call it through HoldAhead
// (byte_source.h), so a length the data cannot hold fails with the same
// message as from a regular file, and a length it holds costs only the
// bytes the reader was about to read anyway.
//
// Extra members (beyond RewindableSource): Release(pos), Hold(n),
// held_end(), in_file(), SpillAll(). The descriptor is owned (OwnedFd) or
// borrowed (UnownedFd, e.g. stdin) as its FdHolder says.
//
// Example (unpack from stdin):
//   decomposed::SpoolSource<decomposed::UnownedFd> src(
//       decomposed::UnownedFd(0));
//   // ... read an element, seek back inside it, decode it ...
//   src.Release(src.position());  // never seek back before it again
#ifndef DECOMPOSED_IO_SPOOL_SOURCE_H_
#define DECOMPOSED_IO_SPOOL_SOURCE_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

namespace internal {

// The directory of spool files: $TMPDIR when set and non-empty, else /tmp.
inline std::string SpoolDirectory() {
  const char* t = ::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? std::string(t) : std::string("/tmp");
}

// An unlinked read-write temp file in SpoolDirectory().
inline absl::StatusOr<OwnedFd> CreateSpoolFile() {
  const std::string dir = SpoolDirectory();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    // No O_TMPFILE (old kernel, some file systems): a named file, unlinked
    // at once.
    std::string name = dir + "/decomposed-spool-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) {
      return ErrnoError(
          errno, absl::StrCat("creating a spool file in ", dir,
                              " (set TMPDIR to a writable directory)"));
    }
    ::unlink(name.c_str());
  }
  return OwnedFd(fd);
}

}  // namespace internal

template <FdHolder H>
class SpoolSource {
 public:
  // Bytes asked of read(2) at a time, and the window of the file mode.
  static constexpr size_t kChunk = 256 << 10;
  static constexpr size_t kWindow = 1 << 20;

  explicit SpoolSource(H fd, size_t memory_limit = limits::kSpoolMemoryBytes)
      : fd_(std::move(fd)),
        memory_limit_(std::max(memory_limit, 2 * kChunk)),
        cap_(kChunk),
        buf_(new char[cap_]),
        cursor_(buf_.get()),
        limit_(buf_.get()) {}
  SpoolSource(const SpoolSource&) = delete;
  SpoolSource& operator=(const SpoolSource&) = delete;

  // --- ByteSource ---
  const char* cursor() const { return cursor_; }
  const char* limit() const { return limit_; }
  size_t available() const { return static_cast<size_t>(limit_ - cursor_); }
  void Advance(size_t n) { cursor_ += n; }
  bool Pull(size_t n) {
    if (available() >= n) [[likely]]
      return true;
    return PullSlow(std::min(n, kChunk));
  }
  bool Read(char* dst, size_t n) {
    for (;;) {
      size_t k = std::min(n, available());
      if (k) std::memcpy(dst, cursor_, k);
      cursor_ += k;
      dst += k;
      n -= k;
      if (n == 0) return true;
      if (!PullSlow(1)) return false;
    }
  }
  bool Skip(uint64_t n) {
    const uint64_t here = position();
    if (n <= end_ - here) return Seek(here + n);
    if (!Seek(end_)) return false;
    n -= end_ - here;
    while (n > 0) {
      if (available() == 0 && !PullSlow(1)) return false;
      size_t k = static_cast<size_t>(std::min<uint64_t>(n, available()));
      cursor_ += k;
      n -= k;
    }
    return true;
  }
  // Repositions at absolute `pos` >= the release mark; beyond what was
  // read, reads ahead to it. False (position unchanged) before the mark;
  // false at the end of the data when pos is past it.
  bool Seek(uint64_t pos) {
    if (pos < mark_) return false;
    if (pos > end_) {
      if (!Seek(end_)) return false;
      return Skip(pos - end_);
    }
    const uint64_t wend = win_base_ + static_cast<uint64_t>(limit_ - buf_.get());
    if (pos >= win_base_ && pos <= wend) {
      cursor_ = buf_.get() + (pos - win_base_);
      return true;
    }
    // File mode only: the memory window always spans [mark, end).
    win_base_ = pos;
    cursor_ = limit_ = buf_.get();
    return true;
  }
  uint64_t position() const {
    return win_base_ + static_cast<uint64_t>(cursor_ - buf_.get());
  }
  std::optional<uint64_t> size() const {
    if (!eof_) return std::nullopt;
    return end_;
  }
  const absl::Status& status() const { return status_; }

  // --- The spool ---

  // The consumer will never seek before `pos` (clamped to position()):
  // frees what precedes it.
  void Release(uint64_t pos) {
    pos = std::min(pos, position());
    if (pos <= mark_) return;
    mark_ = pos;
    if (!file_.has_value()) return;  // memory: compacted when room is needed
    if (end_ - mark_ <= memory_limit_ / 2) {
      BackToMemory();
      return;
    }
    // Free the disk blocks before the mark (optional: a file system
    // without hole punching keeps them until the source is destroyed).
    const uint64_t drop = (mark_ - file_base_) & ~uint64_t{4095};
    if (drop > punched_) {
      ::fallocate(file_->get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(punched_),
                  static_cast<off_t>(drop - punched_));
      punched_ = drop;
    }
  }

  // Reads ahead until `n` bytes from position() are retained or the data
  // ends (size() is then known). False on a read error (status()).
  bool Hold(uint64_t n) {
    const uint64_t here = position();
    const uint64_t target =
        n > std::numeric_limits<uint64_t>::max() - here ? UINT64_MAX : here + n;
    while (end_ < target && !eof_) {
      if (!ReadMore(target - end_)) return status_.ok();
    }
    return status_.ok();
  }

  // One past the last byte read from the descriptor so far.
  uint64_t held_end() const { return end_; }
  // True while retained bytes live in the temp file.
  bool in_file() const { return file_.has_value(); }
  uint64_t release_mark() const { return mark_; }

  // Reads the rest of the data and returns a descriptor of a regular
  // (unlinked) file holding the whole stream from byte 0, for readers that
  // need a file (the classic mapping, compare and stats). Precondition:
  // nothing was released. The source stays usable.
  // With `max_bytes`, stops reading once past it (within one read, at
  // most 1 MiB): held_end() > max_bytes then tells the caller the stream
  // is longer (the file holds its first held_end() bytes), so an endless
  // source (a character device, `yes`) costs no more than that.
  absl::StatusOr<OwnedFd> SpillAll(uint64_t max_bytes = UINT64_MAX) {
    if (mark_ != 0) {
      return absl::FailedPreconditionError(
          "SpoolSource::SpillAll after Release: the stream's start is gone");
    }
    if (!file_.has_value() && !SpillToFile()) return status_;
    const uint64_t want =
        max_bytes == UINT64_MAX ? UINT64_MAX : max_bytes + 1 - std::min(max_bytes + 1, position());
    if (!Hold(want)) return status_;
    int fd = ::fcntl(file_->get(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return ErrnoError(errno, "duplicating the spool file");
    return OwnedFd(fd);
  }

 private:
  uint64_t window_end() const {
    return win_base_ + static_cast<uint64_t>(limit_ - buf_.get());
  }

  bool Fail(const absl::Status& s) {
    if (status_.ok()) status_ = s;
    return false;
  }

  // read(2) from the descriptor, retrying EINTR; 0 at the end of the data.
  ssize_t ReadFd(char* dst, size_t n) {
    for (;;) {
      ssize_t got = ::read(fd_.get(), dst, n);
      if (got >= 0) {
        if (got == 0) eof_ = true;
        return got;
      }
      if (errno == EINTR) continue;
      Fail(ErrnoError(errno,
                               absl::StrCat("reading at byte ", end_)));
      return -1;
    }
  }

  bool WriteFile(const char* p, size_t n, uint64_t pos) {
    while (n > 0) {
      ssize_t w = ::pwrite(file_->get(), p, n,
                           static_cast<off_t>(pos - file_base_));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        return Fail(ErrnoError(
            w < 0 ? errno : ENOSPC,
            absl::StrCat("writing the spool file in ",
                         internal::SpoolDirectory())));
      }
      p += w;
      n -= static_cast<size_t>(w);
      pos += static_cast<uint64_t>(w);
    }
    return true;
  }

  bool ReadFile(char* p, size_t n, uint64_t pos) {
    while (n > 0) {
      ssize_t r = ::pread(file_->get(), p, n,
                          static_cast<off_t>(pos - file_base_));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        return Fail(r < 0 ? ErrnoError(errno, "reading the spool file")
                          : absl::InternalError("the spool file is short"));
      }
      p += r;
      n -= static_cast<size_t>(r);
      pos += static_cast<uint64_t>(r);
    }
    return true;
  }

  // Memory mode: makes room for `want` more bytes at the end of the buffer
  // (dropping released bytes, growing up to the limit). False when the
  // retained bytes would pass the limit: the caller spills.
  bool MakeRoom(size_t want) {
    size_t used = static_cast<size_t>(limit_ - buf_.get());
    if (cap_ - used >= want) return true;
    if ((end_ - mark_) + want > memory_limit_) return false;
    const size_t drop = static_cast<size_t>(mark_ - win_base_);
    const size_t keep = used - drop;
    size_t cap = cap_;
    while (cap - keep < want) cap *= 2;
    cap = std::min(cap, memory_limit_ + kChunk);
    const size_t at = static_cast<size_t>(cursor_ - buf_.get()) - drop;
    if (cap != cap_) {
      std::unique_ptr<char[]> grown(new char[cap]);
      if (keep) std::memcpy(grown.get(), buf_.get() + drop, keep);
      buf_ = std::move(grown);
      cap_ = cap;
    } else if (drop) {
      std::memmove(buf_.get(), buf_.get() + drop, keep);
    }
    win_base_ = mark_;
    cursor_ = buf_.get() + at;
    limit_ = buf_.get() + keep;
    return true;
  }

  // Memory -> file: the retained bytes [mark, end) go to a new temp file;
  // the buffer shrinks to a window holding [position, end).
  bool SpillToFile() {
    absl::StatusOr<OwnedFd> f = internal::CreateSpoolFile();
    if (!f.ok()) return Fail(f.status());
    file_.emplace(*std::move(f));
    file_base_ = mark_;
    punched_ = 0;
    const char* from = buf_.get() + (mark_ - win_base_);
    if (!WriteFile(from, static_cast<size_t>(limit_ - from), mark_)) {
      return false;
    }
    const uint64_t here = position();
    const size_t keep = available();
    const size_t cap = std::max(kWindow, keep + kChunk);
    std::unique_ptr<char[]> window(new char[cap]);
    if (keep) std::memcpy(window.get(), cursor_, keep);
    buf_ = std::move(window);
    cap_ = cap;
    win_base_ = here;
    cursor_ = buf_.get();
    limit_ = buf_.get() + keep;
    return true;
  }

  // File -> memory, once what is retained fits in half the limit.
  void BackToMemory() {
    const uint64_t here = position();
    const size_t n = static_cast<size_t>(end_ - mark_);
    const size_t cap = std::max(kChunk, n + kChunk);
    std::unique_ptr<char[]> mem(new char[cap]);
    if (!ReadFile(mem.get(), n, mark_)) return;  // stays in file mode
    buf_ = std::move(mem);
    cap_ = cap;
    win_base_ = mark_;
    cursor_ = buf_.get() + (here - mark_);
    limit_ = buf_.get() + n;
    file_.reset();
  }

  // Reads one chunk (at most `want` bytes are needed, more may come) from
  // the descriptor into the retained bytes. False at the end of the data
  // or on error.
  bool ReadMore(uint64_t want) {
    if (eof_ || !status_.ok()) return false;
    const size_t ask = static_cast<size_t>(
        std::clamp<uint64_t>(want, kChunk, kChunk * 4));
    if (!file_.has_value()) {
      if (!MakeRoom(ask) && !SpillToFile()) return false;
    }
    if (!file_.has_value()) {
      size_t used = static_cast<size_t>(limit_ - buf_.get());
      ssize_t got = ReadFd(limit_, cap_ - used);
      if (got <= 0) return false;
      limit_ += got;
      end_ += static_cast<uint64_t>(got);
      return true;
    }
    // File mode: into the window's tail when the window ends at the data's
    // end, else into a scratch chunk; either way appended to the file.
    char* dst;
    size_t room;
    const bool into_window = window_end() == end_ &&
                             cap_ - static_cast<size_t>(limit_ - buf_.get()) >=
                                 kChunk;
    if (into_window) {
      dst = limit_;
      room = cap_ - static_cast<size_t>(limit_ - buf_.get());
    } else {
      if (!scratch_) scratch_.reset(new char[kChunk]);
      dst = scratch_.get();
      room = kChunk;
    }
    ssize_t got = ReadFd(dst, room);
    if (got <= 0) return false;
    if (!WriteFile(dst, static_cast<size_t>(got), end_)) return false;
    end_ += static_cast<uint64_t>(got);
    if (into_window) limit_ += got;
    return true;
  }

  bool PullSlow(size_t n) {
    if (!status_.ok()) return false;
    while (available() < n) {
      if (!file_.has_value()) {
        if (!ReadMore(n - available())) {
          if (file_.has_value()) continue;  // spilled: refill the window
          return false;
        }
        continue;
      }
      // File mode: slide the window to the cursor, then fill it from the
      // file (bytes read before) or from the descriptor.
      const uint64_t here = position();
      const size_t keep = available();
      if (cursor_ != buf_.get()) {
        if (keep) std::memmove(buf_.get(), cursor_, keep);
        win_base_ = here;
        cursor_ = buf_.get();
        limit_ = buf_.get() + keep;
      }
      const uint64_t wend = window_end();
      const size_t room = cap_ - keep;
      if (wend < end_) {
        const size_t k =
            static_cast<size_t>(std::min<uint64_t>(room, end_ - wend));
        if (!ReadFile(limit_, k, wend)) return false;
        limit_ += k;
      } else if (!ReadMore(n - keep)) {
        return false;
      }
    }
    return true;
  }

  H fd_;
  size_t memory_limit_;
  size_t cap_;
  std::unique_ptr<char[]> buf_;  // memory: [mark..end); file: the window
  std::unique_ptr<char[]> scratch_;
  uint64_t win_base_ = 0;  // stream position of buf_[0]
  const char* cursor_;
  char* limit_;
  uint64_t mark_ = 0;  // nothing before it is retained
  uint64_t end_ = 0;   // bytes read from the descriptor
  bool eof_ = false;
  std::optional<OwnedFd> file_;  // file mode: [file_base_, end_) at 0
  uint64_t file_base_ = 0;
  uint64_t punched_ = 0;  // file bytes already freed
  absl::Status status_;
};

static_assert(RewindableSource<SpoolSource<OwnedFd>>);
static_assert(RewindableSource<SpoolSource<UnownedFd>>);

}  // namespace decomposed

#endif  // DECOMPOSED_IO_SPOOL_SOURCE_H_
