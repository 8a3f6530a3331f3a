// The version of this library, its CLI and its Python package: the one
// version number in the tree. CMake's project() version, the Python wheel's
// metadata (python/build_backend.py), `decomposed --version` and
// `decomposed.__version__` are all read from DECOMPOSED_VERSION below, so a
// release changes this line and nothing else.
//
// Example:
//   std::cout << "decomposed " << decomposed::kVersion << "\n";  // 0.1.0
//   static_assert(decomposed::kVersionMajor == 0);
#ifndef DECOMPOSED_VERSION_H_
#define DECOMPOSED_VERSION_H_

#include <string_view>

// MAJOR.MINOR.PATCH, each a decimal number (CMake and the wheel backend
// parse this line: keep it one string literal).
#define DECOMPOSED_VERSION "0.1.0"

namespace decomposed {

inline constexpr std::string_view kVersion = DECOMPOSED_VERSION;

namespace version_internal {
// The decimal number at part `i` (0: major) of "MAJOR.MINOR.PATCH".
constexpr int Part(std::string_view v, int i) {
  int n = 0;
  for (char c : v) {
    if (c == '.') {
      if (i-- == 0) return n;
      n = 0;
    } else {
      n = n * 10 + (c - '0');
    }
  }
  return i == 0 ? n : -1;
}
}  // namespace version_internal

inline constexpr int kVersionMajor = version_internal::Part(kVersion, 0);
inline constexpr int kVersionMinor = version_internal::Part(kVersion, 1);
inline constexpr int kVersionPatch = version_internal::Part(kVersion, 2);
static_assert(kVersionMajor >= 0 && kVersionMinor >= 0 && kVersionPatch >= 0,
              "DECOMPOSED_VERSION must be MAJOR.MINOR.PATCH");

}  // namespace decomposed

#endif  // DECOMPOSED_VERSION_H_
