// Directory helpers shared by the writers (unpack's output prefix, bundle
// and replay directories). Not API.
#ifndef DECOMPOSED_INTERNAL_DIRS_H_
#define DECOMPOSED_INTERNAL_DIRS_H_

#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace decomposed::internal {

// `mkdir -p`: creates `path` and its missing parents (mode 0755, less the
// umask). OK when `path` is empty or already a directory. Errors:
// kFailedPrecondition when `path` or a parent exists and is not a
// directory; the errno status of mkdir(2) otherwise (ENAMETOOLONG, EACCES,
// ...). Iterative, so a path of any length cannot exhaust the stack.
//
// Example:
//   absl::Status s = decomposed::internal::MakeDirectories("out/a/b");
inline absl::Status MakeDirectories(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    if (path[i - 1] == '/') continue;  // "a//b": "a/" is "a"
    const std::string part = path.substr(0, i);
    struct stat st;
    if (::stat(part.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      return absl::FailedPreconditionError(
          absl::StrCat(part, " exists and is not a directory"));
    }
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno,
                                 absl::StrCat("creating directory ", part));
    }
  }
  return absl::OkStatus();
}

}  // namespace decomposed::internal

#endif  // DECOMPOSED_INTERNAL_DIRS_H_
