#include "decomposed/capture/regular_file.h"
#include "decomposed/status.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace decomposed::capture {

absl::StatusOr<RegularFile> RegularFile::Open(const std::string& path) {
  struct stat pst;
  if (::stat(path.c_str(), &pst) == 0 && !S_ISREG(pst.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a regular file"));
  }
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) return s;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoError(errno, absl::StrCat("stat ", path));
  }
  RegularFile f;
  f.fd_ = std::make_shared<OwnedFd>(std::move(fd));
  f.size_ = static_cast<uint64_t>(st.st_size);
  f.path_ = path;
  return f;
}

absl::Status RegularFile::ReadAt(uint64_t offset, size_t n,
                                 std::string* out) const {
  if (offset > size_ || n > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat(path_, ": reading ", n,
                                              " bytes at byte ", offset,
                                              " but the file has ", size_));
  }
  out->resize(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_->get(), out->data() + got, n - got,
                        static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("reading ", path_));
    }
    if (r == 0) {
      return absl::OutOfRangeError(absl::StrCat(path_, ": file shrank"));
    }
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace decomposed::capture
