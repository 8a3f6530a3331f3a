// The tokens of XLA's HLO text, for the parser (src/hlo/parse.cc); not part
// of the library's API.
//
// The lexer walks the text once, on demand, one token ahead of the parser.
// A token is a kind and a byte range of the text (no copies): identifiers
// (`add.3`, `f32`, `ENTRY`, `custom-call`, `-inf`), `%` names, integers,
// decimals, quoted strings (escapes still in place) and punctuation.
// Whitespace, `/* ... */` and `// ...` comments are skipped. Tokens whose
// spelling depends on where they stand (`0_0x1_1`, `3x3`, `b01f_01io->b01f`,
// a JSON dictionary) are read by the parser with ScanRaw / ScanBraces from
// the start of the current token.
//
// Nothing here allocates, recurses or fails hard: a byte that starts no
// token (a NUL, a lone `/`, an unterminated comment or string) is a kError
// token, which the parser reports with its line and column.
#ifndef DECOMPOSED_SRC_HLO_LEXER_H_
#define DECOMPOSED_SRC_HLO_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

namespace decomposed::hlo::internal {

enum class Tok : uint8_t {
  kEof,
  kError,     // a byte that starts no token; text() is that byte (or the
              // unterminated comment or string)
  kIdent,     // [A-Za-z_][A-Za-z0-9_.-]*, or `-` + letters (`-inf`, `-nan`)
  kName,      // `%` + identifier; text() excludes the `%`
  kInt,       // -?[0-9]+
  kDecimal,   // -?(digits.digits* | .digits | digits)(e[+-]?digits)? with a
              // `.` or an exponent
  kString,    // "..." or '...'; text() includes the quotes
  kEqual,     // =
  kComma,     // ,
  kColon,     // :
  kLbrace,    // {
  kRbrace,    // }
  kLparen,    // (
  kRparen,    // )
  kLsquare,   // [
  kRsquare,   // ]
  kArrow,     // ->
  kLeq,       // <=
  kDots,      // ...
  kQuestion,  // ?
  kStar,      // *
  kHash,      // #
  kPlus,      // +
  kTilde,     // ~
  kAt,        // @
};

struct Token {
  Tok kind = Tok::kEof;
  size_t begin = 0;  // byte offset of the first byte
  size_t end = 0;    // one past the last byte
};

class Lexer {
 public:
  explicit Lexer(absl::string_view text) : text_(text) { Advance(); }

  const Token& current() const { return current_; }
  Tok kind() const { return current_.kind; }
  // The current token's bytes (a name without its `%`).
  absl::string_view text() const { return View(current_); }
  absl::string_view View(const Token& t) const {
    const size_t b = t.kind == Tok::kName ? t.begin + 1 : t.begin;
    return text_.substr(b, t.end - b);
  }
  absl::string_view source() const { return text_; }

  // Moves to the next token.
  void Advance() {
    prev_end_ = current_.end;
    current_ = Lex(pos_);
  }
  // One past the last byte of the token before the current one.
  size_t prev_end() const { return prev_end_; }
  // Moves to the token at `offset` (a token boundary the parser saw).
  void Reset(size_t offset) {
    pos_ = offset;
    current_ = Lex(pos_);
  }
  // The token after the current one, without moving.
  Token PeekNext() const {
    size_t p = pos_;
    return Lex(p);
  }

  // Rereads from the start of the current token the longest run of bytes
  // for which `allowed(byte, run_so_far)` holds, returns it (possibly
  // empty) and moves to the token after it.
  template <class Pred>
  absl::string_view ScanRaw(Pred allowed) {
    size_t p = current_.begin;
    while (p < text_.size() &&
           allowed(static_cast<unsigned char>(text_[p]),
                   text_.substr(current_.begin, p - current_.begin))) {
      ++p;
    }
    absl::string_view run = text_.substr(current_.begin, p - current_.begin);
    pos_ = p;
    current_ = Lex(pos_);
    prev_end_ = p;
    return run;
  }

  // At a `{`: the balanced `{...}` starting there (strings inside skipped,
  // with their escapes), moving past it; empty when it never closes.
  absl::string_view ScanBraces();

  // 1-based line and column of a byte offset.
  void LineColumn(size_t offset, size_t* line, size_t* column) const;

 private:
  Token Lex(size_t& pos) const;

  absl::string_view text_;
  size_t pos_ = 0;  // where the next token's lexing starts
  size_t prev_end_ = 0;
  Token current_;
};

// Byte classes, by table: the lexer's inner loops test one byte at a time.
enum : uint8_t {
  kIdentStartClass = 1,  // [A-Za-z_]
  kIdentClass = 2,       // [A-Za-z0-9_.-]
  kDigitClass = 4,       // [0-9]
  kSpaceClass = 8,       // space, \t, \n, \r
};
struct ByteClasses {
  uint8_t c[256] = {};
  constexpr ByteClasses() {
    for (int i = 0; i < 256; ++i) {
      const bool alpha = (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z');
      const bool digit = i >= '0' && i <= '9';
      uint8_t v = 0;
      if (alpha || i == '_') v |= kIdentStartClass;
      if (alpha || digit || i == '_' || i == '.' || i == '-') v |= kIdentClass;
      if (digit) v |= kDigitClass;
      if (i == ' ' || i == '\t' || i == '\n' || i == '\r') v |= kSpaceClass;
      c[i] = v;
    }
  }
};
inline constexpr ByteClasses kByteClasses{};

inline bool IsIdentChar(unsigned char c) {
  return kByteClasses.c[c] & kIdentClass;
}
inline bool IsIdentStart(unsigned char c) {
  return kByteClasses.c[c] & kIdentStartClass;
}
inline bool IsDigit(unsigned char c) { return kByteClasses.c[c] & kDigitClass; }
inline bool IsSpace(unsigned char c) { return kByteClasses.c[c] & kSpaceClass; }

// A token as an error message shows it: `"add.3"`, `"{"`, `end of input`,
// `byte 0x01`; long tokens cut to 40 bytes with "...".
std::string DescribeToken(const Lexer& lexer, const Token& token);

}  // namespace decomposed::hlo::internal

#endif  // DECOMPOSED_SRC_HLO_LEXER_H_
