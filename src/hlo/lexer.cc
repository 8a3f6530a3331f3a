#include "lexer.h"

#include <cstdio>
#include <cstring>

namespace decomposed::hlo::internal {

Token Lexer::Lex(size_t& pos) const {
  const size_t n = text_.size();
  const char* s = text_.data();
  while (true) {
    // Whitespace and comments.
    while (pos < n) {
      const char c = s[pos];
      if (IsSpace(static_cast<unsigned char>(c))) {
        ++pos;
        continue;
      }
      if (c == '/' && pos + 1 < n && s[pos + 1] == '*') {
        const size_t start = pos;
        const size_t close = text_.find("*/", pos + 2);
        if (close == absl::string_view::npos) {
          pos = n;
          return {Tok::kError, start, n};
        }
        pos = close + 2;
        continue;
      }
      if (c == '/' && pos + 1 < n && s[pos + 1] == '/') {
        while (pos < n && s[pos] != '\n' && s[pos] != '\r') ++pos;
        continue;
      }
      break;
    }
    if (pos >= n) return {Tok::kEof, n, n};
    const size_t b = pos;
    const unsigned char c = static_cast<unsigned char>(s[pos]);
    auto one = [&](Tok k) {
      ++pos;
      return Token{k, b, pos};
    };
    if (IsIdentStart(c)) {
      ++pos;
      while (pos < n && IsIdentChar(static_cast<unsigned char>(s[pos]))) ++pos;
      // `foo->`: the arrow is not part of the identifier.
      if (s[pos - 1] == '-' && pos < n && s[pos] == '>') --pos;
      return {Tok::kIdent, b, pos};
    }
    if (IsDigit(c) || c == '-' || c == '.') {
      if (c == '-' && pos + 1 < n && s[pos + 1] == '>') {
        pos += 2;
        return {Tok::kArrow, b, pos};
      }
      if (c == '.' && pos + 2 < n && s[pos + 1] == '.' && s[pos + 2] == '.') {
        pos += 3;
        return {Tok::kDots, b, pos};
      }
      size_t p = pos;
      if (s[p] == '-') {
        ++p;
        if (p < n && IsIdentStart(static_cast<unsigned char>(s[p]))) {
          // `-inf`, `-nan`.
          ++p;
          while (p < n && IsIdentChar(static_cast<unsigned char>(s[p]))) ++p;
          pos = p;
          return {Tok::kIdent, b, pos};
        }
      }
      const size_t digits_begin = p;
      while (p < n && IsDigit(static_cast<unsigned char>(s[p]))) ++p;
      size_t int_digits = p - digits_begin;
      bool decimal = false;
      size_t frac_digits = 0;
      if (p < n && s[p] == '.') {
        size_t q = p + 1;
        while (q < n && IsDigit(static_cast<unsigned char>(s[q]))) ++q;
        frac_digits = q - p - 1;
        if (int_digits > 0 || frac_digits > 0) {
          decimal = true;
          p = q;
        }
      }
      if (int_digits == 0 && frac_digits == 0) {
        pos = b + 1;
        return {Tok::kError, b, pos};
      }
      if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        if (q < n && (s[q] == '+' || s[q] == '-')) ++q;
        const size_t exp_begin = q;
        while (q < n && IsDigit(static_cast<unsigned char>(s[q]))) ++q;
        if (q > exp_begin) {
          decimal = true;
          p = q;
        }
      }
      pos = p;
      return {decimal ? Tok::kDecimal : Tok::kInt, b, pos};
    }
    switch (c) {
      case '%': {
        size_t p = pos + 1;
        if (p < n && IsIdentStart(static_cast<unsigned char>(s[p]))) {
          ++p;
          while (p < n && IsIdentChar(static_cast<unsigned char>(s[p]))) ++p;
          if (s[p - 1] == '-' && p < n && s[p] == '>') --p;
          pos = p;
          return {Tok::kName, b, pos};
        }
        return one(Tok::kError);
      }
      case '"':
      case '\'': {
        // The closing quote: memchr to the next quote, then count the
        // backslashes before it (an odd number escapes it).
        size_t p = pos + 1;
        while (true) {
          const void* q = p < n ? std::memchr(s + p, c, n - p) : nullptr;
          if (q == nullptr) {
            p = n;
            break;
          }
          p = static_cast<size_t>(static_cast<const char*>(q) - s);
          size_t back = 0;
          while (p - back > pos + 1 && s[p - back - 1] == '\\') ++back;
          if (back % 2 == 0) break;
          ++p;
        }
        if (p >= n) {
          pos = n;
          return {Tok::kError, b, n};
        }
        pos = p + 1;
        return {Tok::kString, b, pos};
      }
      case '=': return one(Tok::kEqual);
      case ',': return one(Tok::kComma);
      case ':': return one(Tok::kColon);
      case '{': return one(Tok::kLbrace);
      case '}': return one(Tok::kRbrace);
      case '(': return one(Tok::kLparen);
      case ')': return one(Tok::kRparen);
      case '[': return one(Tok::kLsquare);
      case ']': return one(Tok::kRsquare);
      case '?': return one(Tok::kQuestion);
      case '*': return one(Tok::kStar);
      case '#': return one(Tok::kHash);
      case '+': return one(Tok::kPlus);
      case '~': return one(Tok::kTilde);
      case '@': return one(Tok::kAt);
      case '<':
        if (pos + 1 < n && s[pos + 1] == '=') {
          pos += 2;
          return {Tok::kLeq, b, pos};
        }
        return one(Tok::kError);
      default:
        return one(Tok::kError);
    }
  }
}

absl::string_view Lexer::ScanBraces() {
  const size_t b = current_.begin;
  const size_t n = text_.size();
  const char* s = text_.data();
  size_t depth = 0;
  size_t p = b;
  while (p < n) {
    const char c = s[p];
    if (c == '"') {
      ++p;
      while (p < n && s[p] != '"') {
        if (s[p] == '\\') ++p;
        ++p;
      }
      if (p >= n) return {};
      ++p;
      continue;
    }
    ++p;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        pos_ = p;
        current_ = Lex(pos_);
        prev_end_ = p;
        return text_.substr(b, p - b);
      }
    }
  }
  return {};
}

void Lexer::LineColumn(size_t offset, size_t* line, size_t* column) const {
  if (offset > text_.size()) offset = text_.size();
  size_t l = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++l;
      line_start = i + 1;
    }
  }
  *line = l;
  *column = offset - line_start + 1;
}

std::string DescribeToken(const Lexer& lexer, const Token& token) {
  if (token.kind == Tok::kEof) return "end of input";
  absl::string_view t = lexer.source().substr(token.begin, token.end - token.begin);
  if (token.kind == Tok::kError && !t.empty()) {
    const unsigned char c = static_cast<unsigned char>(t[0]);
    if (t.size() > 1 && (c == '"' || c == '\'')) {
      return "an unterminated string";
    }
    if (t.size() > 1 && c == '/') return "an unterminated /* comment";
    if (c < 0x20 || c >= 0x7f) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
      return buf;
    }
  }
  constexpr size_t kShown = 40;
  std::string out = "\"";
  if (t.size() > kShown) {
    out.append(t.data(), kShown);
    out.append("...");
  } else {
    out.append(t.data(), t.size());
  }
  out.push_back('"');
  return out;
}

}  // namespace decomposed::hlo::internal
