// Private to src/eval: element conversions (every XLA array type to and
// from f32/f64, round to nearest even), the C++ types each element type
// computes in, and the dispatch from a PrimitiveType to a template.
#ifndef DECOMPOSED_SRC_EVAL_TYPES_H_
#define DECOMPOSED_SRC_EVAL_TYPES_H_

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::eval::internal {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// float -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t F32ToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float Bf16ToF32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// The value of a narrow float (bf16, f16, f8, f6, f4) element as float
// (exact). Precondition: IsNarrowFloat(t).
float NarrowToF32(PrimitiveType t, const char* p);
// `v` rounded to nearest even in narrow float type `t`, written at `p`
// (element_bytes(t) bytes). Overflow: inf for the IEEE types, NaN for the
// types without inf (F8E4M3FN, *FNUZ), the largest finite value for those
// without inf and NaN (F4E2M1FN, F6*). NaN -> the type's NaN (0 for F4/F6,
// which have none). F8E8M0FNU: negative, zero and NaN -> NaN (0xff).
void StoreNarrow(PrimitiveType t, double v, char* p);

// Bulk forms over contiguous runs (table-driven for the 8-bit types).
void NarrowToF32(PrimitiveType t, const char* src, float* dst, int64_t n);
void F32ToNarrow(PrimitiveType t, const float* src, char* dst, int64_t n);

// Sub-byte integers: normalise a container byte to the type's value.
inline int8_t WrapSigned(int64_t v, int bits) {
  const int shift = 64 - bits;
  return static_cast<int8_t>(static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift);
}
inline uint8_t WrapUnsigned(uint64_t v, int bits) {
  return static_cast<uint8_t>(v & ((uint64_t{1} << bits) - 1));
}

// Saturating float -> integer with NaN -> 0 (docs/eval.md §3).
template <class I, class F>
inline I SaturateToInt(F f) {
  if (std::isnan(f)) return 0;
  constexpr F lo = static_cast<F>(std::numeric_limits<I>::min());
  // max() + 1 is a power of two, exact in F.
  constexpr F hi_excl = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * 2;
  if (f <= lo) return std::numeric_limits<I>::min();
  if (f >= hi_excl) return std::numeric_limits<I>::max();
  return static_cast<I>(f);
}

// The 12 types kernels are written for.
enum class CType : uint8_t {
  kBool, kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64, kF32, kF64, kC64, kC128,
  kNone
};

// The C++ type an element type is stored and computed in: PRED bool,
// S4/S2 int8, U4/U2 uint8, the narrow floats none (they compute as F32).
inline CType CTypeOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return CType::kBool;
    case PrimitiveType::kS8: case PrimitiveType::kS4: case PrimitiveType::kS2:
    case PrimitiveType::kS1: return CType::kS8;
    case PrimitiveType::kS16: return CType::kS16;
    case PrimitiveType::kS32: return CType::kS32;
    case PrimitiveType::kS64: return CType::kS64;
    case PrimitiveType::kU8: case PrimitiveType::kU4: case PrimitiveType::kU2:
    case PrimitiveType::kU1: return CType::kU8;
    case PrimitiveType::kU16: return CType::kU16;
    case PrimitiveType::kU32: return CType::kU32;
    case PrimitiveType::kU64: return CType::kU64;
    case PrimitiveType::kF32: return CType::kF32;
    case PrimitiveType::kF64: return CType::kF64;
    case PrimitiveType::kC64: return CType::kC64;
    case PrimitiveType::kC128: return CType::kC128;
    default: return CType::kNone;
  }
}

// Calls f.template operator()<T>() with T the C++ type of `c`; returns
// false for kNone.
template <class F>
inline bool DispatchCType(CType c, F&& f) {
  switch (c) {
    case CType::kBool: f.template operator()<bool>(); return true;
    case CType::kS8: f.template operator()<int8_t>(); return true;
    case CType::kS16: f.template operator()<int16_t>(); return true;
    case CType::kS32: f.template operator()<int32_t>(); return true;
    case CType::kS64: f.template operator()<int64_t>(); return true;
    case CType::kU8: f.template operator()<uint8_t>(); return true;
    case CType::kU16: f.template operator()<uint16_t>(); return true;
    case CType::kU32: f.template operator()<uint32_t>(); return true;
    case CType::kU64: f.template operator()<uint64_t>(); return true;
    case CType::kF32: f.template operator()<float>(); return true;
    case CType::kF64: f.template operator()<double>(); return true;
    case CType::kC64: f.template operator()<c64>(); return true;
    case CType::kC128: f.template operator()<c128>(); return true;
    default: return false;
  }
}

template <class T> inline constexpr bool kIsComplex = false;
template <> inline constexpr bool kIsComplex<c64> = true;
template <> inline constexpr bool kIsComplex<c128> = true;
template <class T> inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Unsigned integer of the same size as T (for the bit views of floats).
template <size_t N> struct UintOfSize;
template <> struct UintOfSize<1> { using type = uint8_t; };
template <> struct UintOfSize<2> { using type = uint16_t; };
template <> struct UintOfSize<4> { using type = uint32_t; };
template <> struct UintOfSize<8> { using type = uint64_t; };

// Reads any real element (bool, integer, real float) as double and as
// int64/uint64 exactly.
inline double ReadAsDouble(PrimitiveType t, const char* p) {
  return RealValue(t, p);
}

}  // namespace decomposed::eval::internal

#endif  // DECOMPOSED_SRC_EVAL_TYPES_H_
