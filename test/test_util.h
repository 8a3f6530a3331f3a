// Helpers shared by the tests: hex byte strings and temp files.
#ifndef DECOMPOSED_TEST_TEST_UTIL_H_
#define DECOMPOSED_TEST_TEST_UTIL_H_

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace decomposed::test {

// "03 3a 01 00" -> the 4 bytes. Spaces and newlines are ignored.
inline std::string HexBytes(std::string_view hex) {
  std::string out;
  int hi = -1;
  for (char c : hex) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    int d = std::isdigit(static_cast<unsigned char>(c))
                ? c - '0'
                : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (d < 0 || d > 15) throw std::invalid_argument("bad hex digit");
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(static_cast<char>(hi * 16 + d));
      hi = -1;
    }
  }
  if (hi >= 0) throw std::invalid_argument("odd number of hex digits");
  return out;
}

// Lower-case hex with a space between bytes, for readable failures.
inline std::string ToHex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// A fresh temp directory, removed (with its files) when destroyed.
class TempDir {
 public:
  TempDir() {
    const char* t = getenv("TMPDIR");
    path_ = std::string(t && *t ? t : "/tmp") + "/decomposed_test.XXXXXX";
    if (!mkdtemp(path_.data())) throw std::runtime_error("mkdtemp failed");
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    (void)!system(cmd.c_str());
  }
  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const {
    return path_ + "/" + std::string(name);
  }
  std::string Write(std::string_view name, std::string_view bytes) const {
    std::string p = File(name);
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::string path_;
};

inline bool FileExists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

inline std::string ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A version 1.0 .npy header for the dict text `dict`, by the spec's rule
// (docs/format.md §12.2): magic, 1.0, u16 length, the text padded
// with spaces so the whole header is a multiple of 64 bytes, then '\n'.
// Written by hand, independently of decomposed::FormatNpyHeader.
inline std::string HandNpyHeader(const std::string& dict) {
  size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  size_t text = total - 10;
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(text & 0xff);
  h += static_cast<char>(text >> 8);
  h += dict;
  h.append(text - dict.size() - 1, ' ');
  h += '\n';
  return h;
}

// The names in `dir` other than "." and "..", sorted; empty when `dir`
// cannot be opened.
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace decomposed::test

#endif  // DECOMPOSED_TEST_TEST_UTIL_H_
