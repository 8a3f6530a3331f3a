// RegularFile: a regular file opened for positioned reads, for the readers
// of formats that point into themselves (a zip's central directory and
// entries, an .npy header) and must check every offset and length against
// the file's size before they read or allocate.
//
// Open refuses anything but a regular file: opening a FIFO would block, and
// a device has no size to check lengths against. The size is taken once, at
// Open; a file that shrinks afterwards makes ReadAt fail, never return short.
// Copies share the descriptor.
//
// Errors: Open: kFailedPrecondition (not a regular file), OS errors (open,
// fstat). ReadAt: kOutOfRange (a range past size(), or the file shrank),
// OS errors (pread).
//
// Example:
//   absl::StatusOr<RegularFile> f = RegularFile::Open("call0/tensor0.pt");
//   std::string tail;
//   if (f.ok() && f->size() >= 22) s = f->ReadAt(f->size() - 22, 22, &tail);
#ifndef DECOMPOSED_CAPTURE_REGULAR_FILE_H_
#define DECOMPOSED_CAPTURE_REGULAR_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/io/fd.h"

namespace decomposed::capture {

class RegularFile {
 public:
  static absl::StatusOr<RegularFile> Open(const std::string& path);

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads exactly `n` bytes at `offset` into `*out` (resized to n). The
  // range is checked against size() before `*out` is resized, so the
  // allocation is at most the file's size; callers bound n further.
  absl::Status ReadAt(uint64_t offset, size_t n, std::string* out) const;

 private:
  std::shared_ptr<OwnedFd> fd_;
  uint64_t size_ = 0;
  std::string path_;
};

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_REGULAR_FILE_H_
