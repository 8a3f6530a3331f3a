// The vectorized block kernels behind compare.h and stats.h (compiled in
// src/analysis/kernels.cc, with an AVX2 clone on x86-64 picked at load
// time), and the compensated sum and binary16 rounding the analysis uses.
// Private to src/analysis/ (and white-box tests): ElementComparator and
// StatsAccumulator call the kernels on the common blocks (real values, all
// finite) and keep a scalar path for the rest.
#ifndef DECOMPOSED_SRC_ANALYSIS_KERNELS_H_
#define DECOMPOSED_SRC_ANALYSIS_KERNELS_H_

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::internal {

// Neumaier's compensated sum.
struct CompensatedSum {
  double sum = 0;
  double c = 0;
  void Add(double x) {
    double t = sum + x;
    if (std::fabs(sum) >= std::fabs(x)) {
      c += (sum - t) + x;
    } else {
      c += (x - t) + sum;
    }
    sum = t;
  }
  // An infinite sum stays infinite (the compensation term is then NaN).
  double value() const { return std::isinf(sum) ? sum : sum + c; }
};

// IEEE binary16 rounding (to nearest, ties to even) of a double, as NumPy's
// npy_double_to_half / npy_float_to_half do: returns the nearest half's
// value as a float (exact: halves are floats).
inline float RoundToHalf(double f) {
  if (std::isnan(f) || std::isinf(f)) return static_cast<float>(f);
  double a = std::fabs(f);
  if (a >= 65520.0) return std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(f));
  int exp;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
  // Halves have 11 significant bits for normals (a >= 2^-14, so exp >= -13)
  // and a fixed quantum of 2^-24 for subnormals.
  int quantum_exp = exp >= -13 ? exp - 11 : -24;
  double q = std::ldexp(1.0, quantum_exp);
  double r = std::nearbyint(a / q) * q;  // default rounding: nearest even
  return static_cast<float>(std::copysign(r, f));
}


// Element types the kernels load themselves; any other type is converted
// to doubles first and handed over as kF64.
enum class KernelType : uint8_t { kF32, kF64, kBF16 };

inline std::optional<KernelType> KernelTypeOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF32: return KernelType::kF32;
    case PrimitiveType::kF64: return KernelType::kF64;
    case PrimitiveType::kBF16: return KernelType::kBF16;
    default: return std::nullopt;
  }
}
inline constexpr size_t KernelTypeBytes(KernelType t) {
  return t == KernelType::kF64 ? 8 : t == KernelType::kF32 ? 4 : 2;
}
// One element's value (exact).
inline double KernelValue(KernelType t, const char* p) {
  switch (t) {
    case KernelType::kF32: return Load<float>(p);
    case KernelType::kF64: return Load<double>(p);
    case KernelType::kBF16:
      return std::bit_cast<float>(static_cast<uint32_t>(Load<uint16_t>(p)) << 16);
  }
  return 0;
}

// k elements of `t` at `p` as doubles: re[i] their values (exact), and for
// a complex type im[i] the imaginary parts (untouched otherwise). The one
// conversion compare, stats and the three-way comparison share.
inline void BlockToDoubles(PrimitiveType t, const char* p, size_t k, double* re,
                           double* im) {
  switch (t) {
    case PrimitiveType::kF32:
      for (size_t i = 0; i < k; ++i) re[i] = Load<float>(p + 4 * i);
      return;
    case PrimitiveType::kF64:
      std::memcpy(re, p, 8 * k);
      return;
    case PrimitiveType::kBF16:
      for (size_t i = 0; i < k; ++i) {
        re[i] = std::bit_cast<float>(static_cast<uint32_t>(Load<uint16_t>(p + 2 * i)) << 16);
      }
      return;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: {
      const size_t w = t == PrimitiveType::kC64 ? 8 : 16;
      for (size_t i = 0; i < k; ++i) {
        const Complex z = ComplexValue(t, p + w * i);
        re[i] = z.re;
        im[i] = z.im;
      }
      return;
    }
    default: {
      const size_t w = Info(t).element_bytes;
      for (size_t i = 0; i < k; ++i) re[i] = RealValue(t, p + w * i);
      return;
    }
  }
}

// --- compare -------------------------------------------------------------

enum class FastRule : uint8_t { kTorch, kNumpyDouble, kNumpyFloat, kXla };

struct FastRealParams {
  FastRule rule = FastRule::kTorch;
  double rtol = 0, atol = 0;
  float rtol_f = 0, atol_f = 0;  // kNumpyFloat
  // Elements with |a - e| > rel_threshold * |e| are counted as candidates
  // for a new greatest relative difference.
  double rel_threshold = 0;
};

struct FastRealResult {
  bool finite = false;  // false: a NaN, an Inf or an overflowing difference
  uint64_t mismatches = 0;
  uint64_t rel_candidates = 0;
  double max_abs = 0;
  double abs_sum = 0, sq_sum = 0, dot = 0, e_sq = 0, a_sq = 0;
};

// The rule for a finite pair (d = |a - e|), with the operations of the
// general path (compare.h), so that both give the same answer; the kernel
// applies it lane by lane.
template <FastRule R>
inline bool FastClose(double e, double a, double d, const FastRealParams& p) {
  if constexpr (R == FastRule::kTorch) {
    return d <= p.atol + std::fabs(p.rtol * e);
  } else if constexpr (R == FastRule::kNumpyDouble) {
    return d <= p.atol + p.rtol * std::fabs(e);
  } else if constexpr (R == FastRule::kNumpyFloat) {
    const float df = static_cast<float>(a) - static_cast<float>(e);
    return std::fabs(df) <= p.atol_f + p.rtol_f * std::fabs(static_cast<float>(e));
  } else {
    return !((d > p.atol) & (d / std::fabs(e) > p.rtol));
  }
}

inline bool FastCloseFor(const FastRealParams& p, double e, double a, double d) {
  switch (p.rule) {
    case FastRule::kTorch: return FastClose<FastRule::kTorch>(e, a, d, p);
    case FastRule::kNumpyDouble: return FastClose<FastRule::kNumpyDouble>(e, a, d, p);
    case FastRule::kNumpyFloat: return FastClose<FastRule::kNumpyFloat>(e, a, d, p);
    case FastRule::kXla: return FastClose<FastRule::kXla>(e, a, d, p);
  }
  return true;
}

// k elements of `type` from each side: mismatches by p.rule, candidates
// for the greatest relative difference, the greatest absolute difference
// and the metric sums (summed in lanes). result.finite false (and nothing
// else valid) when a value or a difference is not finite.
FastRealResult FastRealBlock(KernelType type, const char* e, const char* a, size_t k,
                             const FastRealParams& p);

// --- stats ---------------------------------------------------------------

// k values: min, max, zeros, and the sums of (x - shift) and (x - shift)^2.
// all_finite false (nothing else valid) when one value is NaN or infinite.
struct BlockSums {
  bool all_finite = false;
  uint64_t zeros = 0;
  double min = 0, max = 0, s = 0, q = 0;
};
BlockSums SumsBlock(KernelType type, const char* p, size_t k, double shift);

}  // namespace decomposed::internal

#endif  // DECOMPOSED_SRC_ANALYSIS_KERNELS_H_
