// Per-tensor statistics for NaN hunting, streamed chunk by chunk in O(1)
// memory: NaN count and the first NaN's index, +Inf / -Inf counts, zeros,
// and min, max, mean and population std (ddof = 0, NumPy's default) over the
// finite values, accumulated in f64. docs/compare.md has the details.
//
// Elements arrive in logical row-major order in the literal codec's output
// form (xla/element_value.h). Per kind:
//   float    NaN / Inf as IEEE (the minifloats by their own encodings);
//            zeros count +0 and -0.
//   integer, bool  never NaN or Inf; min / max are exact (ints() holds
//            them), mean / std in f64.
//   complex  an element is NaN when either part is, Inf when either part is
//            infinite and none is NaN, zero when both parts are 0. min and
//            max are absent (complex numbers have no order); mean is the
//            complex mean (mean_im holds its imaginary part) and std is
//            sqrt(mean |z - mean|^2), as numpy.std computes it.
// mean and std are merged block by block (Chan et al.'s update of Welford's
// method), so they do not lose precision when the mean is large against the
// spread.
//
// Example:
//   decomposed::StatsAccumulator s(decomposed::PrimitiveType::kBF16);
//   s.Add(bytes, n);                        // as often as needed
//   decomposed::TensorStats t = s.Finish();  // t.nan, t.first_nan_index, ...
#ifndef DECOMPOSED_ANALYSIS_STATS_H_
#define DECOMPOSED_ANALYSIS_STATS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed {

struct TensorStats {
  uint64_t elements = 0;
  uint64_t nan = 0;
  std::optional<uint64_t> first_nan_index;  // linear, row-major
  uint64_t pos_inf = 0;
  uint64_t neg_inf = 0;  // for complex: every infinite element counts in pos_inf
  uint64_t zeros = 0;
  // Over the finite values; absent when there is none (or for complex
  // min / max).
  std::optional<double> min, max, mean, std;
  std::optional<double> mean_im;  // complex only
  // Exact min / max for integer and bool tensors.
  bool integral = false;
  bool is_signed = false;
  int64_t min_signed = 0, max_signed = 0;
  uint64_t min_unsigned = 0, max_unsigned = 0;
};

class StatsAccumulator {
 public:
  // Movable, not copyable; a moved-from accumulator may only be destroyed
  // or assigned to.
  explicit StatsAccumulator(PrimitiveType type);
  ~StatsAccumulator();
  StatsAccumulator(StatsAccumulator&&) noexcept;
  StatsAccumulator& operator=(StatsAccumulator&&) noexcept;

  // Feeds `n` elements at `p` (n * element-size bytes). Elements are taken
  // in blocks at fixed positions, whatever the sizes of the calls, so the
  // result does not depend on how the data was cut.
  void Add(const char* p, uint64_t n);

  TensorStats Finish();

 private:
  class Impl;  // src/analysis/stats.cc, over the vectorized kernels
  std::unique_ptr<Impl> impl_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_STATS_H_
