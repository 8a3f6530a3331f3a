// Element-wise comparison of two arrays, streamed chunk by chunk, with the
// closeness rules people already use (torch.testing.assert_close, NumPy's
// isclose, XLA's ErrorSpec) and the metrics an accuracy debugger reads: how
// many elements mismatch, the largest absolute and relative errors and where
// they are, mean absolute and RMS error, cosine similarity, NaN and Inf
// counts, and the first few mismatches. Memory is O(show), whatever the size
// of the arrays. docs/compare.md has the rules in full.
//
// Elements arrive in logical row-major order in the literal codec's output
// form (xla/element_value.h): both arrays are fed the same number of
// elements in step, through Add(). The arrays may be fed in chunks of any
// size.
//
// Rules (a = actual, e = expected; NaN pairs and equal infinities below hold
// in every mode):
//   kTorch  close when a == e, or |a - e| is finite and <= atol + |rtol * e|,
//           computed in f64 (complex128 for complex, exact for integers and
//           bool), as torch.isclose does after assert_close promotes both
//           sides. Defaults per type: DefaultTolerance().
//   kNumpy  numpy.isclose(a, e, rtol, atol): both finite and
//           |a - e| <= atol + rtol * |e|, else a == e; computed in the
//           precision NumPy uses for the type: float16 arithmetic for F16,
//           float32 for F32 and C64, float64 for F64, C128, integers and
//           bool; BF16 and the minifloats as float32 (the upcast a NumPy
//           user makes, as NumPy has no such types). For complex arrays
//           NumPy 1.24 turns an element with an infinite part into NaN
//           before comparing (isclose multiplies by ones_like): such
//           elements match only each other, and only with equal_nan.
//   kXla    a mismatch only when abs error > atol AND rel error > rtol
//           (XLA's ErrorSpec), in f64; integers and bool must be equal.
//   NaN     two NaNs (either part, for complex) match only with equal_nan;
//           a NaN against a number always mismatches; pairs with a NaN on
//           either side are left out of every error metric.
//   Errors  abs = |a - e| (the modulus for complex); rel = abs / |e| in
//           IEEE arithmetic, 0 when a == e, +inf when e == 0 and a != e:
//           so +inf when only the actual side is infinite, and NaN when the
//           expected side is infinite and a != e (|3 - inf| / |inf|), as
//           torch.testing.assert_close and NumPy compute it. The first
//           index of the largest value wins; a NaN rel is the largest (as
//           torch.max and numpy.max propagate NaN): the greatest relative
//           difference is then NaN, at the first such index. cosine = Re(sum a * conj(e)) /
//           sqrt(sum |a|^2 * sum |e|^2); absent when either norm is 0 or
//           not finite. Sums are compensated (Neumaier), so metrics do not
//           drift with the element count.
//
// Example:
//   decomposed::ElementComparator c(options.mode, kF32, kF32,
//                                   decomposed::ResolveTolerance(
//                                       options, kF32, kF32),
//                                   /*show=*/5);
//   c.Add(expected_bytes, actual_bytes, n);      // as often as needed
//   decomposed::CompareMetrics m = c.Finish();   // m.mismatches, ...
#ifndef DECOMPOSED_ANALYSIS_COMPARE_H_
#define DECOMPOSED_ANALYSIS_COMPARE_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/names.h"

namespace decomposed {

enum class CompareMode : uint8_t { kTorch, kNumpy, kXla };

// "torch", "numpy", "xla": both directions read this table (names.h).
inline constexpr EnumName<CompareMode> kCompareModeNames[] = {
    {"torch", CompareMode::kTorch},
    {"numpy", CompareMode::kNumpy},
    {"xla", CompareMode::kXla},
};
inline std::string_view CompareModeName(CompareMode m) {
  return NameOf(kCompareModeNames, m);
}
inline std::optional<CompareMode> CompareModeFromName(std::string_view n) {
  return ValueOf(kCompareModeNames, n);
}

struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool equal_nan = false;
};

// What the user asked for; unset values take the mode's default.
struct CompareOptions {
  CompareMode mode = CompareMode::kTorch;
  std::optional<double> rtol;
  std::optional<double> atol;
  bool equal_nan = false;
  size_t show = 5;                     // first mismatches to keep per tensor
  bool allow_dtype_mismatch = false;   // compare different types in f64
  // Optional, for progress displays: called with the number of tensor bytes
  // just compared, both sides summed (per window or chunk; from the
  // calling thread).
  std::function<void(uint64_t)> on_bytes;
};

// The mode's default tolerance for one type:
//   torch: assert_close's table: BF16 (1.6e-2, 1e-5), F16 (1e-3, 1e-5),
//          F32 and C64 (1.3e-6, 1e-5), F64 and C128 (1e-7, 1e-7); every
//          other float type (the minifloats) as BF16; integers and bool 0.
//   numpy: (1e-5, 1e-8) for every type.
//   xla:   (1e-3, 1e-3) for floats; integers and bool exact.
inline Tolerance DefaultTolerance(CompareMode mode, PrimitiveType t) {
  const ElementKind k = KindOf(t);
  const bool is_float = k == ElementKind::kReal || k == ElementKind::kComplex;
  switch (mode) {
    case CompareMode::kNumpy:
      return {1e-5, 1e-8, false};
    case CompareMode::kXla:
      if (!is_float) return {0, 0, false};
      return {1e-3, 1e-3, false};
    case CompareMode::kTorch:
      break;
  }
  switch (t) {
    case PrimitiveType::kF16: return {1e-3, 1e-5, false};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: return {1.3e-6, 1e-5, false};
    case PrimitiveType::kF64:
    case PrimitiveType::kC128: return {1e-7, 1e-7, false};
    default: break;
  }
  if (is_float) return {1.6e-2, 1e-5, false};
  return {0, 0, false};
}

// The tolerance for comparing `expected` with `actual`: the defaults of the
// two types (the larger of each, as assert_close does for mixed types),
// overridden by what `o` sets.
inline Tolerance ResolveTolerance(const CompareOptions& o, PrimitiveType expected,
                                  PrimitiveType actual) {
  Tolerance a = DefaultTolerance(o.mode, expected);
  Tolerance b = DefaultTolerance(o.mode, actual);
  Tolerance t{std::max(a.rtol, b.rtol), std::max(a.atol, b.atol), o.equal_nan};
  if (o.rtol) t.rtol = *o.rtol;
  if (o.atol) t.atol = *o.atol;
  return t;
}

// One mismatching element: its linear (row-major) index and both values
// (for complex, re and im; for the others im is 0).
struct ElementMismatch {
  uint64_t index = 0;
  Complex expected;
  Complex actual;
};

struct CompareMetrics {
  uint64_t elements = 0;
  uint64_t mismatches = 0;
  // Absent when no pair without a NaN was seen.
  std::optional<double> max_abs_error;
  uint64_t max_abs_error_index = 0;
  std::optional<double> max_rel_error;
  uint64_t max_rel_error_index = 0;
  std::optional<double> mean_abs_error;
  std::optional<double> rms_error;
  // sqrt(mean |e|^2) over the same pairs: the scale rms_error is relative
  // to (divergence.h's relative error).
  std::optional<double> expected_rms;
  std::optional<double> cosine;
  uint64_t expected_nan = 0, actual_nan = 0;
  uint64_t expected_inf = 0, actual_inf = 0;
  std::vector<ElementMismatch> first_mismatches;
};


class ElementComparator {
 public:
  // Compares arrays of `expected_type` and `actual_type` (equal unless the
  // caller allows a mismatch, in which case both are read as f64 / complex
  // and the torch and numpy rules run in f64). `mode` picks the rule.
  // Movable, not copyable; a moved-from comparator may only be destroyed
  // or assigned to.
  ElementComparator(CompareMode mode, PrimitiveType expected_type,
                    PrimitiveType actual_type, Tolerance tol, size_t show);
  ~ElementComparator();
  ElementComparator(ElementComparator&&) noexcept;
  ElementComparator& operator=(ElementComparator&&) noexcept;

  // Feeds `n` elements of each array. `expected` and `actual` point at
  // n * element-size bytes each. Elements are taken in blocks at fixed
  // positions, whatever the sizes of the calls, so the metrics do not
  // depend on how the data was cut.
  void Add(const char* expected, const char* actual, uint64_t n);

  CompareMetrics Finish();

 private:
  class Impl;  // src/analysis/compare.cc, over the vectorized kernels
  std::unique_ptr<Impl> impl_;
};

// Row-major multi-index of linear `index` in `dims` (empty for a scalar).
inline std::vector<int64_t> UnravelIndex(uint64_t index, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out(dims.size(), 0);
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] <= 0) break;
    out[k] = static_cast<int64_t>(index % static_cast<uint64_t>(dims[k]));
    index /= static_cast<uint64_t>(dims[k]);
  }
  return out;
}

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_COMPARE_H_
