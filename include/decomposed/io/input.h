// Opening an input by name: the one place a command turns a path (or "-",
// standard input) into a descriptor, and tells a regular file (read with
// FdSource / MmapSource and their fast paths: pread, mmap,
// copy_file_range) from a stream (a pipe, a FIFO, a character device: read
// once, through SpoolSource, io/spool_source.h).
//
// Example:
//   absl::StatusOr<decomposed::InputFile> in = decomposed::OpenInput("-");
//   if (in->regular) { decomposed::FdSource src(std::move(in->fd)); ... }
//   else { decomposed::SpoolSource<decomposed::OwnedFd> src(std::move(in->fd)); ... }
#ifndef DECOMPOSED_IO_INPUT_H_
#define DECOMPOSED_IO_INPUT_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/fd.h"
#include "decomposed/status.h"

namespace decomposed {

struct InputFile {
  OwnedFd fd;
  // A regular file read from byte 0: seekable, its size known. False for a
  // pipe, a FIFO, a character device, or standard input redirected from a
  // file at a non-zero offset (read as a stream from there).
  bool regular = false;
};

// The name that opens `fd` again as a new open file description (its own
// file offset): /proc/self/fd/N. Needs /proc.
inline std::string ReopenPath(int fd) {
  return absl::StrCat("/proc/self/fd/", fd);
}

// True for kStdinPath ("-").
inline bool IsStdin(const std::string& path) { return path == kStdinPath; }

// Opens `path` read-only, or duplicates standard input for "-".
// Errors: "Could not open: <path>" (the code from errno), as
// snapshot-unpack says it; kFailedPrecondition for a directory.
inline absl::StatusOr<InputFile> OpenInput(const std::string& path) {
  InputFile in;
  if (IsStdin(path)) {
    int fd = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      return absl::ErrnoToStatus(errno, "Could not open: standard input");
    }
    in.fd = OwnedFd(fd);
  } else if (absl::Status s = OpenForReading(path, &in.fd); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  struct stat st;
  if (::fstat(in.fd.get(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("Could not open: ", path));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": expected a file or a pipe, found a directory"));
  }
  in.regular =
      S_ISREG(st.st_mode) && ::lseek(in.fd.get(), 0, SEEK_CUR) == 0;
  return in;
}

}  // namespace decomposed

#endif  // DECOMPOSED_IO_INPUT_H_
