// The .npy header: formatting and parsing (NumPy's format.py rules,
// docs/format.md §12.2 and §13).
//
//   \x93NUMPY <major> <minor> <header length: u16 LE (1.0) | u32 LE (2.0/3.0)>
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  + spaces + \n
//
// FormatNpyHeader writes version 1.0, or 2.0 when the header text would not
// fit 65535 bytes, padded so the data starts at a multiple of 64 bytes.
// ParseNpyHeader reads versions 1.0, 2.0 and 3.0 (UTF-8 header) with any
// padding, keys in any order.
//
// Example:
//   std::string h = decomposed::FormatNpyHeader({"<f4", false, {2, 3}});
//   absl::StatusOr<decomposed::NpyHeader> p = decomposed::ParseNpyHeader(h);
#ifndef DECOMPOSED_NPY_NPY_H_
#define DECOMPOSED_NPY_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

struct NpyHeader {
  std::string descr;          // "<f4", "|V2", "|b1", ...
  bool fortran_order = false;
  std::vector<int64_t> shape; // empty: a scalar
  // Set by ParseNpyHeader: total header bytes (magic to data start) and the
  // version read.
  uint64_t header_bytes = 0;
  int major_version = 1;
};

inline constexpr std::string_view kNpyMagic = "\x93NUMPY";
inline constexpr size_t kNpyAlignment = 64;

// Python repr of a shape tuple: "()", "(5,)", "(2, 3)".
inline std::string NpyShapeRepr(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// The full header (magic through the final '\n').
inline std::string FormatNpyHeader(const NpyHeader& h) {
  std::string dict = absl::StrCat(
      "{'descr': '", h.descr,
      "', 'fortran_order': ", h.fortran_order ? "True" : "False",
      ", 'shape': ", NpyShapeRepr(h.shape), ", }");
  // +1 for the trailing newline.
  size_t prefix = 6 + 2 + 2;
  bool v2 = false;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + kNpyAlignment - 1) / kNpyAlignment * kNpyAlignment;
  if (padded - prefix > 65535) {
    v2 = true;
    prefix = 6 + 2 + 4;
    total = prefix + dict.size() + 1;
    padded = (total + kNpyAlignment - 1) / kNpyAlignment * kNpyAlignment;
  }
  size_t text_len = padded - prefix;
  std::string out(kNpyMagic);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) {
    out.push_back(static_cast<char>((text_len >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(text_len - dict.size() - 1, ' ');
  out.push_back('\n');
  return out;
}

namespace internal {

class PyLiteralParser {
 public:
  explicit PyLiteralParser(std::string_view s) : s_(s) {}
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' ||
                              s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    Ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    Ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool String(std::string* out) {
    Ws();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    char q = s_[i_++];
    size_t j = s_.find(q, i_);
    if (j == std::string_view::npos) return false;
    *out = std::string(s_.substr(i_, j - i_));
    i_ = j + 1;
    return true;
  }
  bool Word(std::string* out) {
    Ws();
    size_t j = i_;
    while (j < s_.size() && (absl::ascii_isalnum(s_[j]) || s_[j] == '_' ||
                             s_[j] == '-' || s_[j] == '+'))
      ++j;
    if (j == i_) return false;
    *out = std::string(s_.substr(i_, j - i_));
    i_ = j;
    return true;
  }
  bool AtEnd() {
    Ws();
    return i_ == s_.size();
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace internal

// Parses a header from the first bytes of a file. `data` must hold at least
// the whole header; NpyHeaderSize() tells how much that is from the first
// 12 bytes.
inline absl::StatusOr<uint64_t> NpyHeaderSize(std::string_view prefix) {
  const Frame f{"npy header"};
  if (prefix.size() < 10) {
    return FrameError(absl::StatusCode::kOutOfRange, f, prefix.size(),
                      "at least 10 header bytes",
                      absl::StrCat(prefix.size(), " bytes"));
  }
  if (prefix.substr(0, 6) != kNpyMagic) {
    return FrameError(absl::StatusCode::kInvalidArgument, f, 0,
                      "the magic \\x93NUMPY", "other bytes");
  }
  uint8_t major = static_cast<uint8_t>(prefix[6]);
  uint8_t minor = static_cast<uint8_t>(prefix[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return FrameError(absl::StatusCode::kInvalidArgument, f, 6,
                      "version 1.0, 2.0 or 3.0",
                      absl::StrCat(major, ".", minor));
  }
  uint64_t len;
  uint64_t fixed;
  if (major == 1) {
    len = static_cast<uint8_t>(prefix[8]) |
          (static_cast<uint64_t>(static_cast<uint8_t>(prefix[9])) << 8);
    fixed = 10;
  } else {
    if (prefix.size() < 12) {
      return FrameError(absl::StatusCode::kOutOfRange, f, prefix.size(),
                        "12 header bytes", absl::StrCat(prefix.size()));
    }
    len = 0;
    for (int i = 0; i < 4; ++i) {
      len |= static_cast<uint64_t>(static_cast<uint8_t>(prefix[8 + i]))
             << (8 * i);
    }
    fixed = 12;
  }
  if (len > limits::kMaxNpyHeaderBytes) {
    return FrameError(absl::StatusCode::kResourceExhausted, f, 8,
                      absl::StrCat("a header of at most ",
                                   limits::kMaxNpyHeaderBytes, " bytes"),
                      absl::StrCat(len, " bytes"));
  }
  return fixed + len;
}

inline absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view data) {
  const Frame f{"npy header"};
  absl::StatusOr<uint64_t> total = NpyHeaderSize(data);
  if (!total.ok()) return total.status();
  if (data.size() < *total) {
    return TruncatedError(f, 0, *total, data.size());
  }
  NpyHeader h;
  h.major_version = static_cast<uint8_t>(data[6]);
  h.header_bytes = *total;
  uint64_t fixed = h.major_version == 1 ? 10 : 12;
  std::string_view text = data.substr(fixed, *total - fixed);
  internal::PyLiteralParser p(text);
  auto bad = [&](std::string_view what) {
    return FrameError(absl::StatusCode::kInvalidArgument, f, fixed,
                      "a dict with 'descr', 'fortran_order' and 'shape'",
                      what);
  };
  if (!p.Eat('{')) return bad("no '{'");
  bool have_descr = false, have_fortran = false, have_shape = false;
  while (!p.Eat('}')) {
    std::string key;
    if (!p.String(&key)) return bad("a non-string key");
    if (!p.Eat(':')) return bad("no ':' after a key");
    if (key == "descr") {
      if (p.Peek('[')) {
        return FrameError(absl::StatusCode::kUnimplemented, f, fixed,
                          "a simple dtype", "a structured dtype (list descr)");
      }
      if (!p.String(&h.descr)) return bad("a non-string descr");
      have_descr = true;
    } else if (key == "fortran_order") {
      std::string w;
      if (!p.Word(&w) || (w != "True" && w != "False")) {
        return bad("fortran_order not True/False");
      }
      h.fortran_order = w == "True";
      have_fortran = true;
    } else if (key == "shape") {
      if (!p.Eat('(')) return bad("a shape that is not a tuple");
      while (!p.Eat(')')) {
        std::string w;
        int64_t d;
        if (!p.Word(&w) || !absl::SimpleAtoi(w, &d) || d < 0) {
          return bad("a shape entry that is not a non-negative integer");
        }
        if (h.shape.size() >= limits::kMaxRank) {
          return FrameError(absl::StatusCode::kResourceExhausted, f, fixed,
                            absl::StrCat("rank <= ", limits::kMaxRank),
                            "a higher rank");
        }
        h.shape.push_back(d);
        if (!p.Eat(',') && !p.Peek(')')) return bad("a malformed shape");
      }
      have_shape = true;
    } else {
      return bad(absl::StrCat("an unknown key '", key, "'"));
    }
    if (!p.Eat(',') && !p.Peek('}')) return bad("no ',' between entries");
  }
  if (!p.AtEnd()) return bad("text after the dict");
  if (!have_descr || !have_fortran || !have_shape) return bad("missing keys");
  return h;
}

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_NPY_H_
