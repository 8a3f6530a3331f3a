// SpliceCopy: moves bytes from a file to a file descriptor through a pipe
// with splice(2), the way unpack copies a verbatim payload and pack copies
// a .npy's data (docs/unpack.md#closer-to-cp).
//
// Why not copy_file_range(2), which does the same in one call: between two
// ext4 files the kernel runs copy_file_range as a splice through an
// internal pipe of 16 pages (64 KiB), and the formats fix offsets that
// differ modulo the page size, so each page takes two partial copies in
// small batches. Why a 256 KiB pipe: a 1 MiB pipe makes each write 1 MiB,
// ext4 then allocates large page-cache folios, and on the VM we measure on
// fresh large blocks cost up to 4x on first touch (the host backs them
// again), so a run right after other work took 2 s instead of 0.45 s per
// GiB. Measured per GiB through the CLI, each tool after another, medians
// of 9 (docs/unpack.md#closer-to-cp): a 256 KiB pipe 0.46-0.50 s, a 1 MiB
// pipe 1.2-1.3 s (0.41-0.47 s when it follows itself), the 64 KiB of
// copy_file_range 0.55-0.57 s, `cp` 0.52 s. The payload still crosses
// memory once, page cache to page cache: nothing is mapped or read into
// this process.
//
// Example:
//   bool unsupported = false;
//   absl::StatusOr<uint64_t> n = decomposed::SpliceCopy(
//       in_fd, offset, out_fd, length, nullptr, &unsupported);
//   // *n < length and unsupported: copy the rest another way;
//   // *n < length otherwise: the source ended early.
#ifndef DECOMPOSED_IO_SPLICE_COPY_H_
#define DECOMPOSED_IO_SPLICE_COPY_H_

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/io/fd.h"
#include "decomposed/status.h"

namespace decomposed {

// The pipe size SpliceCopy asks for (under the default pipe-max-size of
// 1 MiB, so an unprivileged process gets it); a smaller pipe still works.
inline constexpr int kSplicePipeBytes = 256 << 10;

// Copies `n` bytes of `in` (a regular file) from byte `offset` (`in`'s
// file offset is not used or moved) to `out` at its current file position
// (advanced by the bytes written). `progress`, when not null, gets each
// chunk's size (at most kSplicePipeBytes) once it is written.
//
// Returns the bytes copied:
//   * n: all of them;
//   * fewer, `*unsupported` false: `in` ended early (the caller reports the
//     truncation; those bytes are written);
//   * fewer, `*unsupported` true: the kernel refuses splice for this pair
//     (EINVAL, ENOSYS, EOPNOTSUPP, EBADF, EXDEV, ESPIPE: an O_APPEND output,
//     a file system without splice support, an `in` that cannot seek). The bytes counted are written, none
//     is held back, and the caller copies the rest another way.
// Errors: read and write errors of either side ("splice: ..." with errno's
// code). The pipe is closed in every case.
inline absl::StatusOr<uint64_t> SpliceCopy(
    int in, uint64_t offset, int out, uint64_t n,
    const std::function<void(uint64_t)>* progress, bool* unsupported) {
  *unsupported = false;
  auto refused = [](int e) {
    return e == EINVAL || e == ENOSYS || e == EOPNOTSUPP || e == EBADF ||
           e == EXDEV || e == ESPIPE;
  };
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    if (errno == EMFILE || errno == ENFILE) {
      *unsupported = true;  // no descriptors left for a pipe: copy another way
      return uint64_t{0};
    }
    return ErrnoError(errno, "splice: pipe2");
  }
  OwnedFd read_end(p[0]), write_end(p[1]);
  int pipe_bytes = ::fcntl(p[1], F_SETPIPE_SZ, kSplicePipeBytes);
  if (pipe_bytes <= 0) pipe_bytes = ::fcntl(p[1], F_GETPIPE_SZ);
  if (pipe_bytes <= 0) pipe_bytes = 1 << 16;
  loff_t off = static_cast<loff_t>(offset);
  uint64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(n - done, static_cast<uint64_t>(pipe_bytes)));
    ssize_t r = ::splice(in, &off, p[1], nullptr, want,
                         SPLICE_F_MOVE | SPLICE_F_MORE);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (refused(errno)) {
        *unsupported = true;
        return done;
      }
      return ErrnoError(errno, "splice: reading the source");
    }
    if (r == 0) return done;  // the source ended
    size_t in_pipe = static_cast<size_t>(r);
    while (in_pipe > 0) {
      ssize_t w = ::splice(p[0], nullptr, out, nullptr, in_pipe,
                           SPLICE_F_MOVE | SPLICE_F_MORE);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && refused(errno)) {
        // The output refuses splice: write what the pipe holds with
        // read/write, then let the caller go on another way.
        std::unique_ptr<char[]> buf(new char[in_pipe]);
        size_t got = 0;
        while (got < in_pipe) {
          ssize_t k = ::read(p[0], buf.get() + got, in_pipe - got);
          if (k < 0 && errno == EINTR) continue;
          if (k <= 0) return ErrnoError(errno, "splice: draining");
          got += static_cast<size_t>(k);
        }
        for (size_t put = 0; put < got;) {
          ssize_t k = ::write(out, buf.get() + put, got - put);
          if (k < 0 && errno == EINTR) continue;
          if (k <= 0) {
            return ErrnoError(k < 0 ? errno : EIO,
                                       "splice: writing the output");
          }
          put += static_cast<size_t>(k);
        }
        done += static_cast<uint64_t>(r);
        if (progress != nullptr) (*progress)(static_cast<uint64_t>(r));
        *unsupported = true;
        return done;
      }
      if (w <= 0) {
        return ErrnoError(w < 0 ? errno : EIO,
                                   "splice: writing the output");
      }
      in_pipe -= static_cast<size_t>(w);
    }
    done += static_cast<uint64_t>(r);
    if (progress != nullptr) (*progress)(static_cast<uint64_t>(r));
  }
  return done;
}

}  // namespace decomposed

#endif  // DECOMPOSED_IO_SPLICE_COPY_H_
