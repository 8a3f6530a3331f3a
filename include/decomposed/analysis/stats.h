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
// mean and std use Welford's update, so they do not lose precision when the
// mean is large against the spread.
//
// Example:
//   decomposed::StatsAccumulator s(decomposed::PrimitiveType::kBF16);
//   s.Add(bytes, n);                        // as often as needed
//   decomposed::TensorStats t = s.Finish();  // t.nan, t.first_nan_index, ...
#ifndef DECOMPOSED_ANALYSIS_STATS_H_
#define DECOMPOSED_ANALYSIS_STATS_H_

#include <cmath>
#include <cstdint>
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
  explicit StatsAccumulator(PrimitiveType type)
      : type_(type), kind_(KindOf(type)), bytes_(Info(type).element_bytes) {
    s_.integral = kind_ == ElementKind::kSigned || kind_ == ElementKind::kUnsigned ||
                  kind_ == ElementKind::kBool;
    s_.is_signed = kind_ == ElementKind::kSigned;
  }

  // Feeds `n` elements at `p` (n * element-size bytes).
  void Add(const char* p, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i, p += bytes_) One(p);
  }

  TensorStats Finish() {
    s_.elements = index_;
    if (finite_ > 0) {
      if (kind_ != ElementKind::kComplex) {
        s_.min = min_;
        s_.max = max_;
      } else {
        s_.mean_im = mean_im_;
      }
      s_.mean = mean_re_;
      s_.std = std::sqrt(m2_ / static_cast<double>(finite_));
    }
    return s_;
  }

 private:
  void Finite(double re, double im) {
    ++finite_;
    const double n = static_cast<double>(finite_);
    const double dr = re - mean_re_, di = im - mean_im_;
    mean_re_ += dr / n;
    mean_im_ += di / n;
    m2_ += dr * (re - mean_re_) + di * (im - mean_im_);
    if (kind_ != ElementKind::kComplex) {
      if (finite_ == 1 || re < min_) min_ = re;
      if (finite_ == 1 || re > max_) max_ = re;
    }
  }

  void One(const char* p) {
    const uint64_t index = index_++;
    switch (kind_) {
      case ElementKind::kSigned: {
        int64_t v = SignedValue(type_, p);
        if (index == 0 || v < s_.min_signed) s_.min_signed = v;
        if (index == 0 || v > s_.max_signed) s_.max_signed = v;
        s_.zeros += v == 0;
        Finite(static_cast<double>(v), 0);
        return;
      }
      case ElementKind::kUnsigned:
      case ElementKind::kBool: {
        uint64_t v = UnsignedValue(type_, p);
        if (index == 0 || v < s_.min_unsigned) s_.min_unsigned = v;
        if (index == 0 || v > s_.max_unsigned) s_.max_unsigned = v;
        s_.zeros += v == 0;
        Finite(static_cast<double>(v), 0);
        return;
      }
      case ElementKind::kComplex: {
        Complex z = ComplexValue(type_, p);
        if (std::isnan(z.re) || std::isnan(z.im)) {
          Nan(index);
        } else if (std::isinf(z.re) || std::isinf(z.im)) {
          ++s_.pos_inf;
        } else {
          s_.zeros += z.re == 0 && z.im == 0;
          Finite(z.re, z.im);
        }
        return;
      }
      default: {
        double v = RealValue(type_, p);
        if (std::isnan(v)) {
          Nan(index);
        } else if (std::isinf(v)) {
          (v > 0 ? s_.pos_inf : s_.neg_inf) += 1;
        } else {
          s_.zeros += v == 0;
          Finite(v, 0);
        }
        return;
      }
    }
  }

  void Nan(uint64_t index) {
    if (s_.nan++ == 0) s_.first_nan_index = index;
  }

  PrimitiveType type_;
  ElementKind kind_;
  size_t bytes_;
  uint64_t index_ = 0;
  uint64_t finite_ = 0;
  double mean_re_ = 0, mean_im_ = 0, m2_ = 0, min_ = 0, max_ = 0;
  TensorStats s_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_STATS_H_
