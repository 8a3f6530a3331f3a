// Opening an input by name: the one place a command turns a path (or "-",
// standard input) into a descriptor, once, and tells a regular file (read
// with FdSource / MmapSource and their fast paths: pread, mmap,
// copy_file_range) from a stream (a pipe, a FIFO, a character device: read
// once, through SpoolSource, io/spool_source.h). Snapshots are opened
// through SnapshotFile (snapshot/reader.h), which calls it.
//
// Example:
//   absl::StatusOr<decomposed::InputFile> in = decomposed::OpenInput("-");
//   if (!in.ok()) return in.status();
//   if (in->regular) {
//     decomposed::FdSource src(std::move(in->fd));  // ... read it ...
//   } else {
//     decomposed::SpoolSource<decomposed::OwnedFd> src(std::move(in->fd));
//   }
#ifndef DECOMPOSED_IO_INPUT_H_
#define DECOMPOSED_IO_INPUT_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
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

// True for kStdinPath ("-").
inline bool IsStdin(const std::string& path) { return path == kStdinPath; }

// Marks the failure to open an input (OpenError); its value is the path.
inline constexpr std::string_view kOpenPayload = "decomposed/open";

// The failure to open `path` with `error` (an errno): "Could not open:
// <path>: <strerror text>" ("standard input" for "-"), the code from errno,
// with the errno, the path and kOpenPayload as payloads. snapshot-unpack's
// own text is "Could not open: <path>", without the reason: its drop-in
// prints that when IsOpenError says so.
inline absl::Status OpenError(const std::string& path, int error) {
  absl::Status s = ErrnoError(
      error, absl::StrCat("Could not open: ",
                          IsStdin(path) ? "standard input" : path));
  s.SetPayload(Sv(kPathPayload), absl::Cord(path));
  s.SetPayload(Sv(kOpenPayload), absl::Cord(path));
  return s;
}

// True when `s` is OpenError's.
inline bool IsOpenError(const absl::Status& s) {
  return s.GetPayload(Sv(kOpenPayload)).has_value();
}

// Opens `path` read-only, or duplicates standard input for "-": the one
// open(2) of an input. Errors: OpenError; kFailedPrecondition for a
// directory.
inline absl::StatusOr<InputFile> OpenInput(const std::string& path) {
  InputFile in;
  if (IsStdin(path)) {
    int fd = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return OpenError(path, errno);
    in.fd = OwnedFd(fd);
  } else {
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return OpenError(path, errno);
    in.fd = OwnedFd(fd);
  }
  struct stat st;
  if (::fstat(in.fd.get(), &st) != 0) return OpenError(path, errno);
  if (S_ISDIR(st.st_mode)) {
    absl::Status s = absl::FailedPreconditionError(
        absl::StrCat(path, ": expected a file or a pipe, found a directory"));
    s.SetPayload(Sv(kPathPayload), absl::Cord(path));
    return s;
  }
  in.regular =
      S_ISREG(st.st_mode) && ::lseek(in.fd.get(), 0, SEEK_CUR) == 0;
  return in;
}

// The whole of a small input (`path` or "-"), read through OpenInput: at
// most `max_bytes`, more is kResourceExhausted naming the limit, so an
// endless one (/dev/zero) stops there. Errors: OpenInput's (a directory
// included), a read's errno.
inline absl::StatusOr<std::string> ReadSmallInput(const std::string& path,
                                                  uint64_t max_bytes) {
  absl::StatusOr<InputFile> in = OpenInput(path);
  if (!in.ok()) return in.status();
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(in->fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoError(errno, absl::StrCat("reading ", path));
      s.SetPayload(Sv(kPathPayload), absl::Cord(path));
      return s;
    }
    if (n == 0) return text;
    if (text.size() + static_cast<uint64_t>(n) > max_bytes) {
      absl::Status s = absl::ResourceExhaustedError(absl::StrCat(
          path, ": more than ", max_bytes, " bytes (the limit for this input)"));
      s.SetPayload(Sv(kPathPayload), absl::Cord(path));
      return s;
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace decomposed

#endif  // DECOMPOSED_IO_INPUT_H_
