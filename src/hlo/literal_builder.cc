// MakeLiteral and its siblings (hlo/builder.h): values to LiteralProto, in
// the field XLA uses for each element type.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/status.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::hlo {
namespace {

using PT = ::decomposed::PrimitiveType;

absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("literal: ", what));
}

// IEEE binary formats of 16 bits (f16: 5-10, bf16: 8-7), round to nearest
// even, overflow to infinity.
uint16_t EncodeIeee16(double v, int exp_bits, int man_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t sign = std::signbit(v) ? uint16_t{1} << 15 : 0;
  const uint16_t exp_all = static_cast<uint16_t>(((1 << exp_bits) - 1) << man_bits);
  if (std::isnan(v)) {
    return static_cast<uint16_t>(sign | exp_all | (1 << (man_bits - 1)));
  }
  double a = std::fabs(v);
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
  if (m < (1u << man_bits)) return static_cast<uint16_t>(sign | m);  // subnormal
  return static_cast<uint16_t>(
      sign | ((e + bias) << man_bits) | (m - (1u << man_bits)));
}

double DecodeE8M0(uint32_t c) {
  if (c == 0xff) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(c) - 127);
}

// Formats of at most 8 bits: the nearest code (ties to an even code),
// found by decoding every code; past the largest finite value, infinity
// where the format has it, NaN where it has only NaN, the largest finite
// value where it has neither.
uint8_t EncodeSmallFloat(double v, PT t) {
  internal::Minifloat f{};
  const bool e8m0 = t == PT::kF8E8M0FNU;
  if (!e8m0) internal::MinifloatOf(t, &f);
  const int width = e8m0 ? 8 : 1 + f.exponent_bits + f.mantissa_bits;
  auto decode = [&](uint32_t c) {
    return e8m0 ? DecodeE8M0(c) : internal::DecodeMinifloat(c, f);
  };
  const uint32_t codes = 1u << width;
  if (std::isnan(v)) {
    // NaN keeps its sign where the format has a NaN of each sign (fn:
    // S.1111.111; IEEE-like: S.1..1.mmm, the quiet one with the top
    // mantissa bit alone, as XLA writes `nan`); fnuz and e8m0 have one NaN.
    const uint32_t sign = e8m0 ? 0 : (std::signbit(v) ? 1u : 0u) << (width - 1);
    if (!e8m0 && f.specials == internal::Specials::kIeee) {
      return static_cast<uint8_t>(sign | (((1u << f.exponent_bits) - 1) << f.mantissa_bits) |
                                  (1u << (f.mantissa_bits - 1)));
    }
    uint32_t any = codes;
    for (uint32_t c = codes; c-- > 0;) {
      if (!std::isnan(decode(c))) continue;
      if ((c & (1u << (width - 1))) == sign) return static_cast<uint8_t>(c);
      if (any == codes) any = c;
    }
    return any == codes ? 0 : static_cast<uint8_t>(any);
  }
  uint32_t best = 0, inf_code = codes, nan_code = codes;
  double best_err = std::numeric_limits<double>::infinity();
  double max_finite = 0, below_max = 0;
  for (uint32_t c = 0; c < codes; ++c) {
    const double d = decode(c);
    if (std::isnan(d)) {
      if (nan_code == codes) nan_code = c;
      continue;
    }
    if (std::isinf(d)) {
      if ((d > 0) == (v > 0)) inf_code = c;
      continue;
    }
    if (d > max_finite) {
      below_max = max_finite;
      max_finite = d;
    } else if (d > below_max && d < max_finite) {
      below_max = d;
    }
    const double err = std::fabs(d - v);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  const double a = std::fabs(v);
  if (a > max_finite && a >= max_finite + (max_finite - below_max) / 2) {
    if (inf_code != codes) return static_cast<uint8_t>(inf_code);
    if (nan_code != codes && (e8m0 || f.specials != internal::Specials::kFinite)) {
      return static_cast<uint8_t>(nan_code);
    }
  }
  return static_cast<uint8_t>(best);
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// One element: its real and imaginary parts, or an exact integer.
struct Value {
  enum Kind { kReal, kInt, kUint } kind = kReal;
  double re = 0;
  double im = 0;
  int64_t i = 0;
  uint64_t u = 0;
};

struct IntRange {
  long double lo, hi;
};

IntRange RangeOf(PT t) {
  switch (t) {
    case PT::kS1: return {-1, 0};
    case PT::kS2: return {-2, 1};
    case PT::kS4: return {-8, 7};
    case PT::kS8: return {-128, 127};
    case PT::kS16: return {-32768, 32767};
    case PT::kS32: return {-2147483648.0L, 2147483647.0L};
    case PT::kS64: return {-9223372036854775808.0L, 9223372036854775807.0L};
    case PT::kU1: return {0, 1};
    case PT::kU2: return {0, 3};
    case PT::kU4: return {0, 15};
    case PT::kU8: return {0, 255};
    case PT::kU16: return {0, 65535};
    case PT::kU32: return {0, 4294967295.0L};
    default: return {0, 18446744073709551615.0L};
  }
}

class LiteralWriter {
 public:
  explicit LiteralWriter(PT t) : t_(t) {}

  absl::Status Put(const Value& v, int64_t index, xla::LiteralProto* l) {
    const int type = static_cast<int>(t_);
    if (IsComplexType(type)) {
      if (v.kind != Value::kReal) {
        return PutComplex(static_cast<double>(v.kind == Value::kInt
                                                  ? static_cast<double>(v.i)
                                                  : static_cast<double>(v.u)),
                          0, l);
      }
      return PutComplex(v.re, v.im, l);
    }
    if (v.im != 0) {
      return Bad(absl::StrCat("expected real values for ",
                              ElementTypeName(type), ", found a complex value "
                              "at index ",
                              index));
    }
    if (t_ == PT::kPred) {
      const bool b = v.kind == Value::kReal ? v.re != 0
                     : v.kind == Value::kInt ? v.i != 0
                                             : v.u != 0;
      l->add_preds(b);
      return absl::OkStatus();
    }
    if (IsIntegralType(type)) return PutInt(v, index, l);
    double d = v.kind == Value::kReal ? v.re
               : v.kind == Value::kInt ? static_cast<double>(v.i)
                                       : static_cast<double>(v.u);
    switch (t_) {
      case PT::kF32: l->add_f32s(static_cast<float>(d)); break;
      case PT::kF64: l->add_f64s(d); break;
      case PT::kF16: PutLe(l->mutable_f16s(), EncodeIeee16(d, 5, 10), 2); break;
      case PT::kBF16: PutLe(l->mutable_bf16s(), EncodeIeee16(d, 8, 7), 2); break;
      default: {
        const char c = static_cast<char>(EncodeSmallFloat(d, t_));
        Bytes(l)->push_back(c);
        break;
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status PutComplex(double re, double im, xla::LiteralProto* l) {
    if (t_ == PT::kC64) {
      l->add_c64s(static_cast<float>(re));
      l->add_c64s(static_cast<float>(im));
    } else {
      l->add_c128s(re);
      l->add_c128s(im);
    }
    return absl::OkStatus();
  }

  absl::Status PutInt(const Value& v, int64_t index, xla::LiteralProto* l) {
    const IntRange r = RangeOf(t_);
    long double x = 0;
    switch (v.kind) {
      case Value::kReal:
        if (!std::isfinite(v.re) || std::trunc(v.re) != v.re) {
          return Bad(absl::StrCat("expected integral values for ",
                                  ElementTypeName(static_cast<int>(t_)),
                                  ", found ", v.re, " at index ", index));
        }
        x = v.re;
        break;
      case Value::kInt: x = v.i; break;
      case Value::kUint: x = v.u; break;
    }
    if (x < r.lo || x > r.hi) {
      return Bad(absl::StrCat(
          "expected values in [", static_cast<double>(r.lo), ", ",
          static_cast<double>(r.hi), "] for ",
          ElementTypeName(static_cast<int>(t_)), ", found ",
          v.kind == Value::kInt    ? absl::StrCat(v.i)
          : v.kind == Value::kUint ? absl::StrCat(v.u)
                                   : absl::StrCat(v.re),
          " at index ", index));
    }
    // The bit pattern of the value in 64 bits (two's complement).
    const uint64_t bits =
        v.kind == Value::kUint ? v.u
        : v.kind == Value::kInt ? static_cast<uint64_t>(v.i)
                                : (v.re < 0 ? static_cast<uint64_t>(
                                                  static_cast<int64_t>(v.re))
                                            : static_cast<uint64_t>(v.re));
    switch (t_) {
      case PT::kS32: l->add_s32s(static_cast<int32_t>(bits)); break;
      case PT::kS64: l->add_s64s(static_cast<int64_t>(bits)); break;
      case PT::kU32: l->add_u32s(static_cast<uint32_t>(bits)); break;
      case PT::kU64: l->add_u64s(bits); break;
      case PT::kS16: PutLe(l->mutable_s16s(), bits, 2); break;
      case PT::kU16: PutLe(l->mutable_u16s(), bits, 2); break;
      default: Bytes(l)->push_back(static_cast<char>(bits)); break;
    }
    return absl::OkStatus();
  }

  // The bytes field of a one-byte type.
  std::string* Bytes(xla::LiteralProto* l) {
    switch (t_) {
      case PT::kS8: return l->mutable_s8s();
      case PT::kU8: return l->mutable_u8s();
      case PT::kS4: return l->mutable_s4s();
      case PT::kU4: return l->mutable_u4s();
      case PT::kS2: return l->mutable_s2s();
      case PT::kU2: return l->mutable_u2s();
      case PT::kS1: return l->mutable_s1s();
      case PT::kU1: return l->mutable_u1s();
      case PT::kF8E5M2: return l->mutable_f8e5m2s();
      case PT::kF8E4M3FN: return l->mutable_f8e4m3fns();
      case PT::kF8E4M3B11FNUZ: return l->mutable_f8e4m3b11fnuzs();
      case PT::kF8E5M2FNUZ: return l->mutable_f8e5m2fnuzs();
      case PT::kF8E4M3FNUZ: return l->mutable_f8e4m3fnuzs();
      case PT::kF8E4M3: return l->mutable_f8e4m3s();
      case PT::kF8E3M4: return l->mutable_f8e3m4s();
      case PT::kF8E8M0FNU: return l->mutable_f8e8m0fnus();
      case PT::kF4E2M1FN: return l->mutable_f4e2m1fns();
      case PT::kF6E3M2FN: return l->mutable_f6e3m2fns();
      default: return l->mutable_f6e2m3fns();
    }
  }

  PT t_;
};

template <class T, class ToValue>
absl::StatusOr<xla::LiteralProto> Build(int type, absl::Span<const int64_t> dims,
                                        absl::Span<const T> values,
                                        ToValue to_value) {
  if (!IsArrayElementType(type)) {
    return Bad(absl::StrCat("expected an array element type, found ",
                            ElementTypeName(type)));
  }
  const xla::ShapeProto shape = MakeArrayShape(type, dims);
  absl::StatusOr<int64_t> n = ElementCount(shape);
  if (!n.ok()) return Bad(n.status().message());
  if (static_cast<int64_t>(values.size()) != *n) {
    return Bad(absl::StrCat("expected ", *n, " values for ", DescribeShape(shape),
                            ", found ", values.size()));
  }
  xla::LiteralProto l;
  *l.mutable_shape() = shape;
  LiteralWriter w(static_cast<PT>(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (absl::Status s = w.Put(to_value(values[i]), static_cast<int64_t>(i), &l);
        !s.ok()) {
      return s;
    }
  }
  return l;
}

}  // namespace

absl::StatusOr<xla::LiteralProto> MakeLiteral(int type,
                                              absl::Span<const int64_t> dims,
                                              absl::Span<const double> values) {
  return Build(type, dims, values, [](double d) {
    Value v;
    v.re = d;
    return v;
  });
}

absl::StatusOr<xla::LiteralProto> MakeIntLiteral(
    int type, absl::Span<const int64_t> dims, absl::Span<const int64_t> values) {
  return Build(type, dims, values, [](int64_t i) {
    Value v;
    v.kind = Value::kInt;
    v.i = i;
    return v;
  });
}

absl::StatusOr<xla::LiteralProto> MakeUintLiteral(
    int type, absl::Span<const int64_t> dims,
    absl::Span<const uint64_t> values) {
  return Build(type, dims, values, [](uint64_t u) {
    Value v;
    v.kind = Value::kUint;
    v.u = u;
    return v;
  });
}

absl::StatusOr<xla::LiteralProto> MakeComplexLiteral(
    int type, absl::Span<const int64_t> dims,
    absl::Span<const std::complex<double>> values) {
  if (!IsComplexType(type)) {
    return Bad(absl::StrCat("expected c64 or c128 for complex values, found ",
                            ElementTypeName(type)));
  }
  return Build(type, dims, values, [](std::complex<double> c) {
    Value v;
    v.re = c.real();
    v.im = c.imag();
    return v;
  });
}

}  // namespace decomposed::hlo
