// File descriptors with their ownership in the type: OwnedFd closes on
// destruction, UnownedFd borrows. BasicFdSource / BasicFdSink and
// AtomicFileSink take either through the FdHolder concept, in the style of
// riegeli's FdReader<Dependency>.
#ifndef DECOMPOSED_IO_FD_H_
#define DECOMPOSED_IO_FD_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <concepts>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

namespace decomposed {

class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~OwnedFd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Closes now and reports close(2)'s result: 0, or -1 with errno set (an
  // NFS or quota error on data already written may show only here). Linux
  // releases the descriptor even on error, so it is never retried.
  int Close() {
    int fd = std::exchange(fd_, -1);
    return fd >= 0 ? ::close(fd) : 0;
  }

 private:
  int fd_ = -1;
};

class UnownedFd {
 public:
  UnownedFd() = default;
  explicit UnownedFd(int fd) : fd_(fd) {}
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

template <class H>
concept FdHolder = requires(const H& h) {
  { h.get() } -> std::same_as<int>;
};

// Opens `path` read-only. Errors carry the path.
inline absl::Status OpenForReading(const std::string& path, OwnedFd* out) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return ErrnoError(errno, absl::StrCat("opening ", path));
  }
  *out = OwnedFd(fd);
  return absl::OkStatus();
}

}  // namespace decomposed

#endif  // DECOMPOSED_IO_FD_H_
