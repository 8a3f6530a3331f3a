// Directory helpers shared by the writers (unpack's output prefix, bundle
// and replay directories). Not API.
#ifndef DECOMPOSED_IO_DIRS_H_
#define DECOMPOSED_IO_DIRS_H_

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

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
      return ErrnoError(errno,
                                 absl::StrCat("creating directory ", part));
    }
  }
  return absl::OkStatus();
}

// A private temporary directory (mkdtemp, mode 0700) holding plain files.
// Unless Release()d, the destructor unlinks every entry in it and removes
// it, so a failed writer leaves nothing behind. Create() errors: the errno
// status of mkdtemp(3).
//
// Example:
//   decomposed::internal::TempDirectory tmp;
//   if (absl::Status s = tmp.Create("out/.call3.tmp."); !s.ok()) return s;
//   // ... write files under tmp.path(), rename tmp.path() into place ...
//   tmp.Release();
class TempDirectory {
 public:
  TempDirectory() = default;
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  ~TempDirectory() { Remove(); }

  // Creates `<prefix>XXXXXX` (prefix names the parent directory too).
  absl::Status Create(const std::string& prefix) {
    Remove();
    std::string t = prefix + "XXXXXX";
    if (::mkdtemp(t.data()) == nullptr) {
      std::string parent = prefix.substr(0, prefix.rfind('/') + 1);
      return ErrnoError(
          errno, absl::StrCat("creating a temporary directory in ",
                              parent.empty() ? std::string(".") : parent));
    }
    path_ = std::move(t);
    return absl::OkStatus();
  }
  const std::string& path() const { return path_; }
  // Keeps the directory (it was renamed into place).
  void Release() { path_.clear(); }

 private:
  void Remove() {
    if (path_.empty()) return;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") ::unlink((path_ + "/" + n).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(path_.c_str());
    path_.clear();
  }

  std::string path_;
};

}  // namespace decomposed::internal

#endif  // DECOMPOSED_IO_DIRS_H_
