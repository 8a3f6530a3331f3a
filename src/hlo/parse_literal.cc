// Shapes, layouts and literals of HLO text, into ShapeProto and
// LiteralProto as XLA stores them (xla-wire-facts.md §5: data in the
// layout's physical order, one byte per element for the sub-byte types,
// 16-bit floats little-endian).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/limits.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"
#include "parser.h"

namespace decomposed::hlo::internal {
namespace {

using PT = ::decomposed::PrimitiveType;

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// Element type names as HLO text spells them ("f32", "pred", "token").
const absl::flat_hash_map<absl::string_view, int>& TypeByName() {
  static const auto* m = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, int>();
    static std::string names[kNumPrimitiveTypes];
    for (const PrimitiveTypeInfo& info : kPrimitiveTypes) {
      const int t = static_cast<int>(info.type);
      if (info.type == PT::kInvalid || info.type == PT::kTuple ||
          info.type == PT::kBuffer) {
        continue;
      }
      names[t] = info.type == PT::kOpaque ? "opaque"
                                          : absl::AsciiStrToLower(absl::string_view(info.name.data(), info.name.size()));
      m->emplace(names[t], t);
    }
    return m;
  }();
  return *m;
}

bool IsArrayType(int t) { return IsArrayElementType(t); }

// IEEE formats of 16 bits from a double: round to nearest even; a NaN gets
// `payload` (or the quiet NaN) and its sign.
uint16_t EncodeHalf(double v, int exp_bits, int man_bits,
                    std::optional<uint64_t> payload) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t sign = std::signbit(v) ? uint16_t{0x8000} : 0;
  const uint16_t exp_all = static_cast<uint16_t>(((1 << exp_bits) - 1) << man_bits);
  if (std::isnan(v)) {
    const uint64_t p = payload.value_or(uint64_t{1} << (man_bits - 1));
    return static_cast<uint16_t>(sign | exp_all | p);
  }
  const double a = std::fabs(v);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | exp_all);
  if (a == 0) return sign;
  int k = 0;
  std::frexp(a, &k);
  int e = k - 1;
  const int emin = 1 - bias;
  if (e < emin) e = emin;
  double r = std::nearbyint(std::ldexp(a, man_bits - e));
  if (r >= std::ldexp(1.0, man_bits + 1)) {
    r /= 2;
    ++e;
  }
  if (e > bias) return static_cast<uint16_t>(sign | exp_all);
  const uint32_t m = static_cast<uint32_t>(r);
  if (m < (1u << man_bits)) return static_cast<uint16_t>(sign | m);
  return static_cast<uint16_t>(sign | ((e + bias) << man_bits) |
                               (m - (1u << man_bits)));
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// The value class of an element type.
enum class ValueKind { kPred, kSigned, kUnsigned, kFloat, kComplex };

ValueKind KindOfType(int t) {
  if (t == xla::PRED) return ValueKind::kPred;
  if (IsSignedIntegralType(t)) return ValueKind::kSigned;
  if (IsUnsignedIntegralType(t)) return ValueKind::kUnsigned;
  if (IsComplexType(t)) return ValueKind::kComplex;
  return ValueKind::kFloat;
}

// Positions in physical (layout) order of the row-major elements, or empty
// when the layout is the default one.
std::vector<int64_t> PhysicalOrder(const xla::ShapeProto& shape, int64_t n) {
  const int rank = shape.dimensions_size();
  if (rank < 2 || !shape.has_layout()) return {};
  const auto& m2m = shape.layout().minor_to_major();
  if (m2m.size() != rank) return {};
  bool is_default = true;
  for (int i = 0; i < rank; ++i) is_default = is_default && m2m[i] == rank - 1 - i;
  if (is_default) return {};
  std::vector<int64_t> stride(static_cast<size_t>(rank));
  int64_t s = 1;
  for (int i = 0; i < rank; ++i) {
    stride[static_cast<size_t>(m2m[i])] = s;
    s *= shape.dimensions(static_cast<int>(m2m[i]));
  }
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t physical = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = physical;
    for (int d = rank - 1; d >= 0; --d) {
      const size_t du = static_cast<size_t>(d);
      physical += stride[du];
      if (++index[du] < shape.dimensions(d)) break;
      physical -= stride[du] * index[du];
      index[du] = 0;
    }
  }
  return out;
}

template <class T>
void Permute(std::vector<T>* v, const std::vector<int64_t>& order) {
  if (order.empty()) return;
  std::vector<T> out(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    out[static_cast<size_t>(order[i])] = (*v)[i];
  }
  *v = std::move(out);
}

}  // namespace

// --- Shapes ---------------------------------------------------------------------------------

bool Parser::CanBeShape() const {
  if (kind() == Tok::kLparen) return true;
  if (kind() != Tok::kIdent) return false;
  if (text() == "b") return lexer_.PeekNext().kind == Tok::kLparen;
  return TypeByName().contains(text());
}

bool Parser::ParseShape(xla::ShapeProto* out) {
  if (!Enter()) return false;
  if (kind() == Tok::kLparen) {
    lexer_.Advance();
    out->set_element_type(xla::TUPLE);
    if (kind() != Tok::kRparen) {
      do {
        if (!ParseShape(out->add_tuple_shapes())) return false;
      } while (EatIf(Tok::kComma));
    }
    if (!Consume(Tok::kRparen, "\",\" or \")\" in a tuple shape")) return false;
    Leave();
    return true;
  }
  if (IsIdent("b") && lexer_.PeekNext().kind == Tok::kLparen) {
    lexer_.Advance();
    lexer_.Advance();
    out->set_element_type(xla::BUFFER);
    if (!ParseShape(out->add_tuple_shapes()) ||
        !Consume(Tok::kRparen, "\")\" after a buffer's shape")) {
      return false;
    }
    Leave();
    return true;
  }
  if (kind() != Tok::kIdent) return Expect("a shape");
  auto it = TypeByName().find(text());
  if (it == TypeByName().end()) return Expect("a shape");
  const int type = it->second;
  out->set_element_type(static_cast<xla::PrimitiveType>(type));
  lexer_.Advance();
  if (!Consume(Tok::kLsquare, "\"[\" after the element type")) return false;
  bool dynamic = false;
  std::vector<bool> is_dynamic;
  if (kind() != Tok::kRsquare) {
    do {
      bool d = false;
      int64_t size = 0;
      if (EatIf(Tok::kQuestion)) {
        d = true;
        size = std::numeric_limits<int64_t>::min();
      } else {
        if (EatIf(Tok::kLeq)) d = true;
        const size_t at = offset();
        if (!ParseInt64(&size, "a dimension size")) return false;
        if (size < 0) return Fail(at, "a dimension size >= 0", absl::StrCat(size));
      }
      if (out->dimensions_size() >= static_cast<int>(limits::kMaxRank)) {
        return Expect(absl::StrCat("at most ", limits::kMaxRank, " dimensions"));
      }
      out->add_dimensions(size);
      is_dynamic.push_back(d);
      dynamic = dynamic || d;
    } while (EatIf(Tok::kComma));
  }
  if (!Consume(Tok::kRsquare, "\",\" or \"]\" after a dimension")) return false;
  if (dynamic) {
    for (bool d : is_dynamic) out->add_is_dynamic_dimension(d);
  }
  if (kind() == Tok::kLbrace) {
    const Tok next = lexer_.PeekNext().kind;
    if (next == Tok::kInt || next == Tok::kColon) {
      if (!ParseLayout(out)) return false;
      Leave();
      return true;
    }
  }
  if (IsArrayType(type)) {
    // The default layout, as XLA's parser fills in (scalars included).
    xla::LayoutProto* layout = out->mutable_layout();
    for (int i = out->dimensions_size(); i-- > 0;) layout->add_minor_to_major(i);
  }
  Leave();
  return true;
}

// `{1,0:T(8,128)(2,1)L(2)#(u32)*(u32)E(4)S(1)SC(0:1,2)P(f32[2])M(8)}`.
bool Parser::ParseLayout(xla::ShapeProto* shape) {
  const size_t begin = offset();
  lexer_.Advance();  // {
  xla::LayoutProto* layout = shape->mutable_layout();
  if (kind() == Tok::kInt) {
    do {
      int64_t d = 0;
      if (!ParseInt64(&d, "a dimension number")) return false;
      layout->add_minor_to_major(d);
    } while (EatIf(Tok::kComma));
  }
  auto int_in_parens = [&](int64_t* v) {
    return Consume(Tok::kLparen, "\"(\"") && ParseInt64(v) &&
           Consume(Tok::kRparen, "\")\"");
  };
  auto unsigned_type = [&](xla::PrimitiveType* t) {
    if (!Consume(Tok::kLparen, "\"(\"")) return false;
    auto it = TypeByName().find(text());
    if (kind() != Tok::kIdent || it == TypeByName().end() ||
        !IsUnsignedIntegralType(it->second)) {
      return Expect("an unsigned integer type");
    }
    *t = static_cast<xla::PrimitiveType>(it->second);
    lexer_.Advance();
    return Consume(Tok::kRparen, "\")\"");
  };
  if (EatIf(Tok::kColon)) {
    while (kind() != Tok::kRbrace) {
      int64_t v = 0;
      xla::PrimitiveType t = xla::PRIMITIVE_TYPE_INVALID;
      if (IsIdent("D")) {
        lexer_.Advance();
        if (!Consume(Tok::kLparen, "\"(\" after D")) return false;
        if (kind() != Tok::kRparen) {
          do {
            xla::DimLevelType dl = xla::DIM_DENSE;
            if (IsIdent("D")) {
              dl = xla::DIM_DENSE;
            } else if (IsIdent("C")) {
              dl = xla::DIM_COMPRESSED;
            } else if (IsIdent("S")) {
              dl = xla::DIM_SINGLETON;
            } else if (IsIdent("H")) {
              dl = xla::DIM_LOOSE_COMPRESSED;
            } else {
              return Expect("a dimension level type (D, C, S, H)");
            }
            lexer_.Advance();
            // `+` (not unique) and `~` (not ordered), read as XLA's
            // parser reads them: and dropped.
            EatIf(Tok::kPlus);
            EatIf(Tok::kTilde);
            layout->add_dim_level_types(dl);
          } while (EatIf(Tok::kComma));
        }
        if (!Consume(Tok::kRparen, "\")\" after the dimension level types")) {
          return false;
        }
      } else if (IsIdent("T")) {
        lexer_.Advance();
        if (kind() != Tok::kLparen) return Expect("\"(\" after T");
        while (kind() == Tok::kLparen) {
          lexer_.Advance();
          xla::TileProto* tile = layout->add_tiles();
          if (kind() != Tok::kRparen) {
            do {
              if (EatIf(Tok::kStar)) {
                tile->add_dimensions(std::numeric_limits<int64_t>::min());
              } else {
                if (!ParseInt64(&v, "a tile dimension or *")) return false;
                tile->add_dimensions(v);
              }
            } while (EatIf(Tok::kComma));
          }
          if (!Consume(Tok::kRparen, "\")\" after a tile")) return false;
        }
      } else if (IsIdent("L")) {
        lexer_.Advance();
        if (!int_in_parens(&v)) return false;
        layout->set_tail_padding_alignment_in_elements(v);
      } else if (kind() == Tok::kHash) {
        lexer_.Advance();
        if (!unsigned_type(&t)) return false;
        layout->set_index_primitive_type(t);
      } else if (kind() == Tok::kStar) {
        lexer_.Advance();
        if (!unsigned_type(&t)) return false;
        layout->set_pointer_primitive_type(t);
      } else if (IsIdent("E")) {
        lexer_.Advance();
        if (!int_in_parens(&v)) return false;
        layout->set_element_size_in_bits(v);
      } else if (IsIdent("S")) {
        lexer_.Advance();
        if (!int_in_parens(&v)) return false;
        layout->set_memory_space(v);
      } else if (IsIdent("SC")) {
        lexer_.Advance();
        if (kind() != Tok::kLparen) return Expect("\"(\" after SC");
        while (EatIf(Tok::kLparen)) {
          xla::SplitConfigProto* sc = layout->add_split_configs();
          if (!ParseInt64(&v)) return false;
          sc->set_dimension(v);
          if (!Consume(Tok::kColon, "\":\" after the split dimension")) return false;
          if (kind() != Tok::kRparen) {
            do {
              if (!ParseInt64(&v)) return false;
              sc->add_split_indices(v);
            } while (EatIf(Tok::kComma));
          }
          if (!Consume(Tok::kRparen, "\")\" after the split indices")) return false;
        }
      } else if (IsIdent("P")) {
        lexer_.Advance();
        if (!Consume(Tok::kLparen, "\"(\" after P") ||
            !ParseShape(layout->mutable_physical_shape()) ||
            !Consume(Tok::kRparen, "\")\" after the physical shape")) {
          return false;
        }
      } else if (IsIdent("M")) {
        lexer_.Advance();
        if (!int_in_parens(&v)) return false;
        layout->set_dynamic_shape_metadata_prefix_bytes(v);
      } else {
        return Expect("a layout attribute (D, T, L, #, *, E, S, SC, P, M) or \"}\"");
      }
    }
  }
  if (!Consume(Tok::kRbrace, "\"}\" to end the layout")) return false;
  if (layout->minor_to_major_size() != shape->dimensions_size()) {
    return Fail(begin,
                absl::StrCat("a layout of ", shape->dimensions_size(),
                             " dimensions for ", DescribeShape(*shape)),
                absl::StrCat(layout->minor_to_major_size()));
  }
  // minor_to_major must order the dimensions: each once (literals are laid
  // out by it; XLA's LayoutUtil::ValidateLayoutInShape).
  const int rank = shape->dimensions_size();
  std::vector<bool> taken(static_cast<size_t>(rank), false);
  for (int64_t d : layout->minor_to_major()) {
    if (d < 0 || d >= rank || taken[static_cast<size_t>(d)]) {
      return Fail(begin,
                  absl::StrCat("a layout that orders the ", rank,
                               " dimensions of ", DescribeShape(*shape),
                               ", each of 0..", rank - 1, " once"),
                  absl::StrCat("{", absl::StrJoin(layout->minor_to_major(), ","),
                               "}"));
    }
    taken[static_cast<size_t>(d)] = true;
  }
  return true;
}

bool Parser::ParseShapeList(google::protobuf::RepeatedPtrField<xla::ShapeProto>* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start a list of shapes")) return false;
  if (kind() != Tok::kRbrace) {
    do {
      if (!ParseShape(out->Add())) return false;
    } while (EatIf(Tok::kComma));
  }
  return Consume(Tok::kRbrace, "\",\" or \"}\" in a list of shapes");
}

// --- Literals -------------------------------------------------------------------------------

namespace {

// A literal whose data the text elided: an array's shape alone
// (IsElidedLiteral); a tuple's shape with an elided literal per element.
// The tuple shape was parsed within the nesting bound, so is this.
void ElideLiteral(const xla::ShapeProto& shape, xla::LiteralProto* out) {
  *out->mutable_shape() = shape;
  if (shape.element_type() != xla::TUPLE) return;
  for (const xla::ShapeProto& element : shape.tuple_shapes()) {
    ElideLiteral(element, out->add_tuple_literals());
  }
}

}  // namespace

// A custom-call's `literal=`: `s32[2]{0} {4, 5}`, or a tuple as XLA prints
// one with its shapes, each element with its own: `( s32[2]{0} {4, 5},
// pred[]{} true )`, nested tuples in parentheses again.
bool Parser::ParseLiteralWithShape(xla::LiteralProto* out) {
  if (kind() != Tok::kLparen) {
    xla::ShapeProto shape;
    if (!ParseShape(&shape)) return false;
    return ParseLiteral(shape, out);
  }
  if (!Enter()) return false;
  lexer_.Advance();
  xla::ShapeProto* shape = out->mutable_shape();
  shape->set_element_type(xla::TUPLE);
  while (kind() != Tok::kRparen) {
    if (shape->tuple_shapes_size() > 0 &&
        !Consume(Tok::kComma, "\",\" or \")\" in a tuple literal")) {
      return false;
    }
    xla::LiteralProto* element = out->add_tuple_literals();
    if (!ParseLiteralWithShape(element)) return false;
    *shape->add_tuple_shapes() = element->shape();
  }
  lexer_.Advance();
  Leave();
  return true;
}

bool Parser::ParseLiteral(const xla::ShapeProto& shape, xla::LiteralProto* out) {
  // `{...}` for a tuple (XLA's printer never prints a tuple constant in the
  // long and modern styles) or a scalar: its shape, as for an array.
  if ((shape.element_type() == xla::TUPLE ||
       (IsArrayType(shape.element_type()) && shape.dimensions_size() == 0)) &&
      kind() == Tok::kLbrace && lexer_.PeekNext().kind == Tok::kDots) {
    lexer_.Advance();
    lexer_.Advance();
    if (!Consume(Tok::kRbrace, "\"}\" after \"{...\"")) return false;
    ElideLiteral(shape, out);
    return true;
  }
  if (shape.element_type() == xla::TUPLE) {
    if (!Enter()) return false;
    *out->mutable_shape() = shape;
    if (!Consume(Tok::kLparen, "\"(\" to start a tuple literal")) return false;
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0 && !Consume(Tok::kComma, "\",\" between tuple elements")) {
        return false;
      }
      if (!ParseLiteral(shape.tuple_shapes(i), out->add_tuple_literals())) {
        return false;
      }
    }
    if (kind() != Tok::kRparen) {
      return Expect(absl::StrCat("\")\" after ", shape.tuple_shapes_size(),
                                 " tuple elements"));
    }
    lexer_.Advance();
    Leave();
    return true;
  }
  if (!IsArrayType(shape.element_type())) {
    return Expect(absl::StrCat("no literal for a ", DescribeShape(shape),
                               " constant"));
  }
  return ParseArrayLiteral(shape, out);
}

bool Parser::ParseArrayLiteral(const xla::ShapeProto& shape,
                               xla::LiteralProto* out) {
  const int type = shape.element_type();
  const int rank = shape.dimensions_size();
  const ValueKind vk = KindOfType(type);
  const PT pt = static_cast<PT>(type);
  const std::string described = DescribeShape(shape);
  const std::string number_for = absl::StrCat("a number for ", described);
  // Values as written, in row-major order. Nothing is reserved from the
  // shape: the vectors grow with the text.
  std::vector<uint64_t> bits;   // pred, integers, f16/bf16/f32/f64 encodings
  std::vector<double> reals;    // the 8-bit and smaller float types
  std::vector<size_t> real_offsets;  // where each of them is written
  std::vector<uint8_t> real_payloads;  // a NaN's payload (nan(0x1)), or 0
  std::vector<double> complexes;  // (re, im) pairs
  std::vector<int64_t> seen(static_cast<size_t>(rank), 0);
  int nest = 0;
  bool elided = false;
  int64_t count = 0;

  // One value at the current token, for the element type.
  auto parse_real = [&](double* v, std::optional<uint64_t>* payload) -> bool {
    const size_t at = offset();
    const bool is_nan = IsIdent("nan") || IsIdent("-nan");
    if (!ParseDouble(v, number_for)) return false;
    if (is_nan && kind() == Tok::kLparen &&
        lexer_.current().begin == lexer_.prev_end()) {
      // nan(0x7fc00001): the payload in the element type's mantissa bits.
      lexer_.Advance();
      const size_t p_at = offset();
      const absl::string_view hex = lexer_.ScanRaw([](unsigned char c, absl::string_view so_far) {
        if (so_far.size() == 1) return c == 'x';
        return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      });
      uint64_t p = 0;
      if (hex.size() < 3 || hex.substr(0, 2) != "0x" ||
          std::from_chars(hex.data() + 2, hex.data() + hex.size(), p, 16).ptr !=
              hex.data() + hex.size() ||
          !Consume(Tok::kRparen, "\")\" after the NaN payload")) {
        return Fail(p_at, "a NaN payload 0x...", hex.empty() ? Found() : Quote(hex));
      }
      int man_bits = 0;
      switch (pt) {
        case PT::kF16: man_bits = 10; break;
        case PT::kBF16: man_bits = 7; break;
        case PT::kF32: case PT::kC64: man_bits = 23; break;
        case PT::kF64: case PT::kC128: man_bits = 52; break;
        case PT::kF8E5M2: man_bits = 2; break;
        case PT::kF8E4M3: man_bits = 3; break;
        case PT::kF8E3M4: man_bits = 4; break;
        default: break;
      }
      if (man_bits == 0 || p == 0 || p >= (uint64_t{1} << man_bits)) {
        return Fail(at,
                    absl::StrCat("a NaN payload that ", ElementTypeName(type),
                                 man_bits == 0 ? " can hold (it has none)"
                                               : " can hold"),
                    Quote(hex));
      }
      *payload = p;
    }
    return true;
  };
  auto out_of_range = [&](size_t at, absl::string_view value) {
    return Fail(at, absl::StrCat("a value within the range of ",
                                 ElementTypeName(type)),
                Quote(value));
  };
  auto parse_value = [&]() -> bool {
    const size_t at = offset();
    const absl::string_view token = text();
    switch (vk) {
      case ValueKind::kPred:
        if (IsIdent("true") || IsIdent("false")) {
          bits.push_back(IsIdent("true") ? 1 : 0);
          lexer_.Advance();
          return true;
        }
        if (kind() != Tok::kInt) return Expect("true, false or an integer for pred");
        bits.push_back(token.find_first_not_of("-0") != absl::string_view::npos ? 1
                                                                              : 0);
        lexer_.Advance();
        return true;
      case ValueKind::kSigned:
      case ValueKind::kUnsigned: {
        if (kind() != Tok::kInt) {
          return Expect(absl::StrCat("an integer for ", ElementTypeName(type)));
        }
        const bool neg = token[0] == '-';
        const absl::string_view digits = token.substr(neg ? 1 : 0);
        uint64_t mag = 0;
        auto r = std::from_chars(digits.data(), digits.data() + digits.size(), mag);
        const int width = ElementBitWidth(type);
        bool ok = r.ec == std::errc() && r.ptr == digits.data() + digits.size();
        uint64_t value = 0;
        if (ok && vk == ValueKind::kSigned) {
          const uint64_t limit = uint64_t{1} << (width - 1);
          ok = neg ? mag <= limit : mag < limit;
          value = neg ? ~mag + 1 : mag;
        } else if (ok) {
          ok = (!neg || mag == 0) &&
               (width == 64 || mag < (uint64_t{1} << width));
          value = mag;
        }
        if (!ok) return out_of_range(at, token);
        if (width < 64) value &= (uint64_t{1} << width) - 1;
        bits.push_back(value);
        lexer_.Advance();
        return true;
      }
      case ValueKind::kFloat: {
        double v = 0;
        std::optional<uint64_t> payload;
        if (!parse_real(&v, &payload)) return false;
        switch (pt) {
          case PT::kF64: {
            uint64_t b = 0;
            std::memcpy(&b, &v, 8);
            if (std::isnan(v)) {
              b = (std::signbit(v) ? uint64_t{1} << 63 : 0) |
                  (uint64_t{0x7ff} << 52) |
                  payload.value_or(uint64_t{1} << 51);
            }
            bits.push_back(b);
            return true;
          }
          case PT::kF32: {
            const float f = static_cast<float>(v);
            if (std::isfinite(v) && !std::isfinite(f)) return out_of_range(at, token);
            uint32_t b = 0;
            std::memcpy(&b, &f, 4);
            if (std::isnan(v)) {
              b = (std::signbit(v) ? 0x80000000u : 0u) | 0x7f800000u |
                  static_cast<uint32_t>(payload.value_or(uint64_t{1} << 22));
            }
            bits.push_back(b);
            return true;
          }
          case PT::kF16:
          case PT::kBF16: {
            const bool half = pt == PT::kF16;
            const uint16_t h =
                EncodeHalf(v, half ? 5 : 8, half ? 10 : 7, payload);
            const uint16_t exp_all = half ? 0x7c00 : 0x7f80;
            if (std::isfinite(v) && (h & exp_all) == exp_all) {
              return out_of_range(at, token);
            }
            bits.push_back(h);
            return true;
          }
          default:
            reals.push_back(v);
            real_offsets.push_back(at);
            real_payloads.push_back(static_cast<uint8_t>(payload.value_or(0)));
            return true;
        }
      }
      case ValueKind::kComplex: {
        if (kind() != Tok::kLparen) {
          return Expect(absl::StrCat("a (real, imaginary) pair for ",
                                     ElementTypeName(type)));
        }
        lexer_.Advance();
        double re = 0, im = 0;
        std::optional<uint64_t> p1, p2;
        const size_t re_at = offset();
        const std::string re_text(text());
        if (!parse_real(&re, &p1)) return false;
        if (!Consume(Tok::kComma, "\",\" after the real part")) return false;
        const size_t im_at = offset();
        const std::string im_text(text());
        if (!parse_real(&im, &p2) ||
            !Consume(Tok::kRparen, "\")\" after the imaginary part")) {
          return false;
        }
        if (pt == PT::kC64) {
          if (std::isfinite(re) && !std::isfinite(static_cast<float>(re))) {
            return out_of_range(re_at, re_text);
          }
          if (std::isfinite(im) && !std::isfinite(static_cast<float>(im))) {
            return out_of_range(im_at, im_text);
          }
        }
        complexes.push_back(re);
        complexes.push_back(im);
        return true;
      }
    }
    return false;
  };

  do {
    switch (kind()) {
      case Tok::kLbrace:
        if (nest >= rank) {
          return Expect(absl::StrCat("a value (", described, " nests ", rank,
                                     rank == 1 ? " level" : " levels",
                                     " of braces)"));
        }
        if (nest > 0) {
          const size_t d = static_cast<size_t>(nest - 1);
          if (++seen[d] > shape.dimensions(nest - 1)) {
            return Expect(absl::StrCat(shape.dimensions(nest - 1),
                                       " elements in dimension ", nest - 1,
                                       " of ", described, " and \"}\""));
          }
        }
        ++nest;
        lexer_.Advance();
        break;
      case Tok::kRbrace: {
        if (nest == 0) return Expect("a value");
        --nest;
        const size_t d = static_cast<size_t>(nest);
        if (seen[d] != shape.dimensions(nest)) {
          return Expect(absl::StrCat(shape.dimensions(nest), " elements in dimension ",
                                     nest, " of ", described, ", not ", seen[d]));
        }
        seen[d] = 0;
        lexer_.Advance();
        break;
      }
      case Tok::kComma:
        lexer_.Advance();
        break;
      case Tok::kDots:
        if (nest != 1) {
          return Expect(absl::StrCat("\"...\" only directly inside the outer "
                                     "braces of ",
                                     described));
        }
        elided = true;
        seen[0] = shape.dimensions(0);
        lexer_.Advance();
        break;
      default: {
        if (kind() != Tok::kInt && kind() != Tok::kDecimal && kind() != Tok::kLparen &&
            !(kind() == Tok::kIdent &&
              (IsIdent("true") || IsIdent("false") || IsIdent("inf") ||
               IsIdent("-inf") || IsIdent("nan") || IsIdent("-nan")))) {
          return Expect(absl::StrCat("a value of ", described));
        }
        if (rank > 0) {
          if (nest != rank) {
            return Expect(absl::StrCat("\"{\" (", described, " nests ", rank,
                                       rank == 1 ? " level" : " levels",
                                       " of braces)"));
          }
          const size_t d = static_cast<size_t>(rank - 1);
          if (++seen[d] > shape.dimensions(rank - 1)) {
            return Expect(absl::StrCat(shape.dimensions(rank - 1),
                                       " elements in dimension ", rank - 1,
                                       " of ", described, " and \"}\""));
          }
        }
        if (!parse_value()) return false;
        ++count;
        break;
      }
    }
  } while (nest > 0);

  *out->mutable_shape() = shape;
  if (elided) return true;  // the shape alone: IsElidedLiteral
  const std::vector<int64_t> order = PhysicalOrder(shape, count);
  switch (vk) {
    case ValueKind::kComplex: {
      if (!order.empty()) {
        std::vector<std::complex<double>> c(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
          c[static_cast<size_t>(i)] = {complexes[2 * static_cast<size_t>(i)],
                                       complexes[2 * static_cast<size_t>(i) + 1]};
        }
        Permute(&c, order);
        for (int64_t i = 0; i < count; ++i) {
          complexes[2 * static_cast<size_t>(i)] = c[static_cast<size_t>(i)].real();
          complexes[2 * static_cast<size_t>(i) + 1] = c[static_cast<size_t>(i)].imag();
        }
      }
      if (pt == PT::kC64) {
        out->mutable_c64s()->Reserve(static_cast<int>(complexes.size()));
        for (double d : complexes) out->add_c64s(static_cast<float>(d));
      } else {
        out->mutable_c128s()->Add(complexes.begin(), complexes.end());
      }
      return true;
    }
    case ValueKind::kFloat:
      if (pt != PT::kF16 && pt != PT::kBF16 && pt != PT::kF32 && pt != PT::kF64) {
        // The types of 8 bits and less: MakeLiteral rounds (hlo/builder.h);
        // a finite value that becomes inf or NaN is out of range.
        Permute(&reals, order);
        Permute(&real_offsets, order);
        Permute(&real_payloads, order);
        std::vector<int64_t> dims = {static_cast<int64_t>(reals.size())};
        absl::StatusOr<xla::LiteralProto> l = MakeLiteral(type, dims, reals);
        if (!l.ok()) return Expect(std::string(l.status().message()));
        xla::LiteralProto lit = *std::move(l);
        lit.clear_shape();
        // Bytes fields hold one byte per element for these types.
        const auto* f = lit.GetDescriptor()->FindFieldByNumber(Info(pt).proto_field);
        if (std::any_of(real_payloads.begin(), real_payloads.end(),
                        [](uint8_t p) { return p != 0; })) {
          // A NaN's payload replaces the quiet one MakeLiteral wrote (the
          // parse above took payloads only for the types with them).
          std::string patched = lit.GetReflection()->GetString(lit, f);
          decomposed::internal::Minifloat m{};
          decomposed::internal::MinifloatOf(pt, &m);
          const uint8_t mask = static_cast<uint8_t>((1u << m.mantissa_bits) - 1);
          for (size_t i = 0; i < real_payloads.size() && i < patched.size(); ++i) {
            if (real_payloads[i] == 0) continue;
            patched[i] = static_cast<char>((static_cast<uint8_t>(patched[i]) & ~mask) |
                                           real_payloads[i]);
          }
          lit.GetReflection()->SetString(&lit, f, std::move(patched));
        }
        const std::string& data =
            lit.GetReflection()->GetStringReference(lit, f, nullptr);
        for (size_t i = 0; i < reals.size() && i < data.size(); ++i) {
          if (std::isfinite(reals[i]) && !std::isfinite(RealValue(pt, data.data() + i))) {
            const size_t at = real_offsets[i];
            lexer_.Reset(at);
            return out_of_range(at, text());
          }
        }
        out->MergeFrom(lit);
        return true;
      }
      break;
    default:
      break;
  }
  Permute(&bits, order);
  switch (pt) {
    case PT::kPred:
      out->mutable_preds()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) out->add_preds(b != 0);
      break;
    case PT::kS32:
      out->mutable_s32s()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) out->add_s32s(static_cast<int32_t>(b));
      break;
    case PT::kS64:
      out->mutable_s64s()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) out->add_s64s(static_cast<int64_t>(b));
      break;
    case PT::kU32:
      out->mutable_u32s()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) out->add_u32s(static_cast<uint32_t>(b));
      break;
    case PT::kU64:
      out->mutable_u64s()->Add(bits.begin(), bits.end());
      break;
    case PT::kF32: {
      out->mutable_f32s()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) {
        const uint32_t b32 = static_cast<uint32_t>(b);
        float f;
        std::memcpy(&f, &b32, 4);
        out->add_f32s(f);
      }
      break;
    }
    case PT::kF64: {
      out->mutable_f64s()->Reserve(static_cast<int>(bits.size()));
      for (uint64_t b : bits) {
        double d;
        std::memcpy(&d, &b, 8);
        out->add_f64s(d);
      }
      break;
    }
    case PT::kF16: case PT::kBF16: case PT::kS16: case PT::kU16: {
      std::string* s = pt == PT::kF16    ? out->mutable_f16s()
                       : pt == PT::kBF16 ? out->mutable_bf16s()
                       : pt == PT::kS16  ? out->mutable_s16s()
                                         : out->mutable_u16s();
      s->reserve(bits.size() * 2);
      for (uint64_t b : bits) PutLe(s, b, 2);
      break;
    }
    default: {
      // One byte per element: s8, u8 and the sub-byte integers.
      const google::protobuf::Reflection* r = out->GetReflection();
      const auto* f = out->GetDescriptor()->FindFieldByNumber(Info(pt).proto_field);
      std::string data;
      data.reserve(bits.size());
      for (uint64_t b : bits) data.push_back(static_cast<char>(b));
      r->SetString(out, f, std::move(data));
      break;
    }
  }
  return true;
}

}  // namespace decomposed::hlo::internal
