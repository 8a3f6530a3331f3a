// The numeric value of one array element, as the element's XLA type defines
// it: what compare and stats (and Python's upcast) need to read bf16, f16,
// the fp8/fp6/fp4 minifloats and the sub-byte integers without ml_dtypes.
// Elements are in the literal codec's output form (docs/format.md §5):
// little-endian, fixed width, one element per byte for the sub-byte types
// (the value in the low bits; the upper bits are ignored, as ml_dtypes does).
//
//   ElementKind KindOf(t)          bool, signed/unsigned integer, real
//                                  float, complex, or none (no array data)
//   double RealValue(t, p)         the value of a bool, integer or real
//                                  float element (exact for every type
//                                  except 64-bit integers beyond 2^53)
//   Complex ComplexValue(t, p)     C64 / C128 as (re, im) doubles
//   int64_t / uint64_t IntValue    the exact integer value
//
// Minifloat encodings (exponent bits, mantissa bits, bias, specials) follow
// ml_dtypes / XLA:
//   F8E5M2  1-5-2 bias 15, IEEE (inf, NaN)     F8E4M3  1-4-3 bias 7, IEEE
//   F8E3M4  1-3-4 bias 3, IEEE                 F8E4M3FN 1-4-3 bias 7, no inf,
//                                              NaN = S.1111.111
//   F8E4M3FNUZ 1-4-3 bias 8; F8E5M2FNUZ 1-5-2 bias 16; F8E4M3B11FNUZ 1-4-3
//     bias 11: no inf, no -0, NaN = 0x80
//   F8E8M0FNU  8 exponent bits, no sign or mantissa, bias 127, NaN = 0xff
//   F4E2M1FN 1-2-1 bias 1; F6E3M2FN 1-3-2 bias 3; F6E2M3FN 1-2-3 bias 1:
//     finite only
// Preconditions: `p` points at ElementBytes(t) readable bytes; `t` is an
// array type (KindOf(t) != kNone). Nothing here fails or allocates.
//
// Example:
//   char bf16[2] = {'\x80', '\x3f'};                    // 1.0 in bfloat16
//   double v = decomposed::RealValue(decomposed::PrimitiveType::kBF16, bf16);
#ifndef DECOMPOSED_XLA_ELEMENT_VALUE_H_
#define DECOMPOSED_XLA_ELEMENT_VALUE_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "decomposed/xla/primitive_type.h"

namespace decomposed {

enum class ElementKind : uint8_t { kNone, kBool, kSigned, kUnsigned, kReal, kComplex };

inline constexpr ElementKind KindOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred:
      return ElementKind::kBool;
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64: case PrimitiveType::kS4: case PrimitiveType::kS2:
    case PrimitiveType::kS1:
      return ElementKind::kSigned;
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64: case PrimitiveType::kU4: case PrimitiveType::kU2:
    case PrimitiveType::kU1:
      return ElementKind::kUnsigned;
    case PrimitiveType::kF16: case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kBF16: case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF4E2M1FN: case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF6E3M2FN: case PrimitiveType::kF6E2M3FN:
      return ElementKind::kReal;
    case PrimitiveType::kC64: case PrimitiveType::kC128:
      return ElementKind::kComplex;
    default:
      return ElementKind::kNone;
  }
}

// Bits of a sub-byte integer type (4, 2, 1), or 0 for the others.
inline constexpr int SubByteBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS4: case PrimitiveType::kU4: return 4;
    case PrimitiveType::kS2: case PrimitiveType::kU2: return 2;
    case PrimitiveType::kS1: case PrimitiveType::kU1: return 1;
    default: return 0;
  }
}

struct Complex {
  double re = 0;
  double im = 0;
};

namespace internal {

// How a minifloat spends its special encodings.
enum class Specials : uint8_t {
  kIeee,    // all-ones exponent: inf (mantissa 0) or NaN
  kFn,      // no inf; all-ones exponent and mantissa is NaN
  kFnuz,    // no inf, no -0; the sign bit alone (0x80) is NaN
  kFinite,  // every encoding is a finite number
};

struct Minifloat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

inline constexpr bool MinifloatOf(PrimitiveType t, Minifloat* m) {
  switch (t) {
    case PrimitiveType::kF8E5M2: *m = {5, 2, 15, Specials::kIeee}; return true;
    case PrimitiveType::kF8E4M3: *m = {4, 3, 7, Specials::kIeee}; return true;
    case PrimitiveType::kF8E3M4: *m = {3, 4, 3, Specials::kIeee}; return true;
    case PrimitiveType::kF8E4M3FN: *m = {4, 3, 7, Specials::kFn}; return true;
    case PrimitiveType::kF8E4M3FNUZ: *m = {4, 3, 8, Specials::kFnuz}; return true;
    case PrimitiveType::kF8E5M2FNUZ: *m = {5, 2, 16, Specials::kFnuz}; return true;
    case PrimitiveType::kF8E4M3B11FNUZ: *m = {4, 3, 11, Specials::kFnuz}; return true;
    case PrimitiveType::kF4E2M1FN: *m = {2, 1, 1, Specials::kFinite}; return true;
    case PrimitiveType::kF6E3M2FN: *m = {3, 2, 3, Specials::kFinite}; return true;
    case PrimitiveType::kF6E2M3FN: *m = {2, 3, 1, Specials::kFinite}; return true;
    default: return false;
  }
}

// The value of the low 1 + e + m bits of `bits` in the format `f`.
inline double DecodeMinifloat(uint32_t bits, const Minifloat& f) {
  const int width = 1 + f.exponent_bits + f.mantissa_bits;
  bits &= (1u << width) - 1;
  const uint32_t sign = bits >> (width - 1);
  const uint32_t emax = (1u << f.exponent_bits) - 1;
  const uint32_t mmax = (1u << f.mantissa_bits) - 1;
  const uint32_t e = (bits >> f.mantissa_bits) & emax;
  const uint32_t m = bits & mmax;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.specials) {
    case Specials::kIeee:
      if (e == emax) {
        if (m != 0) return nan;
        return sign ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
      }
      break;
    case Specials::kFn:
      if (e == emax && m == mmax) return nan;
      break;
    case Specials::kFnuz:
      if (sign && e == 0 && m == 0) return nan;
      break;
    case Specials::kFinite:
      break;
  }
  double v;
  if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1u << f.mantissa_bits)),
                   static_cast<int>(e) - f.bias - f.mantissa_bits);
  }
  return sign ? -v : v;
}

inline double HalfToDouble(uint16_t h) {
  return DecodeMinifloat(h, Minifloat{5, 10, 15, Specials::kIeee});
}

template <class T>
inline T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace internal

// Exact value of a signed integer element (S1..S64; sub-byte types are
// sign-extended from their low bits). Precondition: KindOf(t) == kSigned.
inline int64_t SignedValue(PrimitiveType t, const char* p) {
  switch (t) {
    case PrimitiveType::kS8: return internal::Load<int8_t>(p);
    case PrimitiveType::kS16: return internal::Load<int16_t>(p);
    case PrimitiveType::kS32: return internal::Load<int32_t>(p);
    case PrimitiveType::kS64: return internal::Load<int64_t>(p);
    default: {
      const int bits = SubByteBits(t);
      uint32_t v = static_cast<uint8_t>(*p) & ((1u << bits) - 1);
      if (v >> (bits - 1)) return static_cast<int64_t>(v) - (int64_t{1} << bits);
      return static_cast<int64_t>(v);
    }
  }
}

// Exact value of an unsigned integer or bool element (PRED is 0 or 1: any
// non-zero byte is true). Precondition: KindOf(t) is kUnsigned or kBool.
inline uint64_t UnsignedValue(PrimitiveType t, const char* p) {
  switch (t) {
    case PrimitiveType::kPred: return *p != 0 ? 1 : 0;
    case PrimitiveType::kU8: return internal::Load<uint8_t>(p);
    case PrimitiveType::kU16: return internal::Load<uint16_t>(p);
    case PrimitiveType::kU32: return internal::Load<uint32_t>(p);
    case PrimitiveType::kU64: return internal::Load<uint64_t>(p);
    default: {
      const int bits = SubByteBits(t);
      return static_cast<uint8_t>(*p) & ((1u << bits) - 1);
    }
  }
}

// The value of a bool, integer or real element as a double. Precondition:
// KindOf(t) is kBool, kSigned, kUnsigned or kReal.
inline double RealValue(PrimitiveType t, const char* p) {
  switch (t) {
    case PrimitiveType::kF32: return internal::Load<float>(p);
    case PrimitiveType::kF64: return internal::Load<double>(p);
    case PrimitiveType::kBF16:
      return std::bit_cast<float>(
          static_cast<uint32_t>(internal::Load<uint16_t>(p)) << 16);
    case PrimitiveType::kF16:
      return internal::HalfToDouble(internal::Load<uint16_t>(p));
    case PrimitiveType::kF8E8M0FNU: {
      uint8_t e = static_cast<uint8_t>(*p);
      if (e == 0xff) return std::numeric_limits<double>::quiet_NaN();
      return std::ldexp(1.0, static_cast<int>(e) - 127);
    }
    default:
      break;
  }
  internal::Minifloat f{};
  if (internal::MinifloatOf(t, &f)) {
    return internal::DecodeMinifloat(static_cast<uint8_t>(*p), f);
  }
  switch (KindOf(t)) {
    case ElementKind::kSigned: return static_cast<double>(SignedValue(t, p));
    case ElementKind::kUnsigned:
    case ElementKind::kBool: return static_cast<double>(UnsignedValue(t, p));
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

// C64 / C128 as (re, im). Precondition: KindOf(t) == kComplex.
inline Complex ComplexValue(PrimitiveType t, const char* p) {
  if (t == PrimitiveType::kC64) {
    return {internal::Load<float>(p), internal::Load<float>(p + 4)};
  }
  return {internal::Load<double>(p), internal::Load<double>(p + 8)};
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_ELEMENT_VALUE_H_
