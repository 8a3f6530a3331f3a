// StatsAccumulator (stats.h): counts and moments block by block, with the
// vectorized kernel (kernels.h) on blocks of finite real values.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "decomposed/analysis/stats.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"
#include "src/analysis/kernels.h"

namespace decomposed {

class StatsAccumulator::Impl {
 public:
  explicit Impl(PrimitiveType type)
      : type_(type), kind_(KindOf(type)), bytes_(Info(type).element_bytes) {
    s_.integral = kind_ == ElementKind::kSigned || kind_ == ElementKind::kUnsigned ||
                  kind_ == ElementKind::kBool;
    s_.is_signed = kind_ == ElementKind::kSigned;
  }

  // Feeds `n` elements at `p` (n * element-size bytes). Elements are taken
  // in blocks at fixed positions (multiples of kBlock), whatever the sizes
  // of the calls, so the result does not depend on how the data was cut.
  void Add(const char* p, uint64_t n) {
    if (pending_ > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, kBlock - pending_));
      std::memcpy(pending_bytes_ + pending_ * bytes_, p, k * bytes_);
      pending_ += k;
      p += k * bytes_;
      n -= k;
      if (pending_ < kBlock) return;
      Block(pending_bytes_, kBlock);
      pending_ = 0;
    }
    for (; n >= kBlock; n -= kBlock, p += kBlock * bytes_) Block(p, kBlock);
    if (n > 0) {
      std::memcpy(pending_bytes_, p, static_cast<size_t>(n) * bytes_);
      pending_ = static_cast<size_t>(n);
    }
  }

  TensorStats Finish() {
    if (pending_ > 0) {
      Block(pending_bytes_, pending_);
      pending_ = 0;
    }
    s_.elements = index_;
    if (finite_ > 0) {
      if (kind_ != ElementKind::kComplex) {
        s_.min = min_;
        s_.max = max_;
      } else {
        s_.mean_im = static_cast<double>(mean_im_);
      }
      s_.mean = static_cast<double>(mean_re_);
      s_.std = static_cast<double>(std::sqrt(m2_ / static_cast<long double>(finite_)));
    }
    return s_;
  }

 private:
  // Elements are read a block at a time. The finite values of a block are
  // summarised by the vectorized kernel (min, max, zeros, and the sums of
  // x - K and (x - K)^2 for K the running mean, or the block's first value
  // for the first block) and merged into the running values by Chan et
  // al.'s pairwise update. Shifting by the running mean keeps the block's
  // sum of squares free of cancellation: its rounding error is a few ulps
  // of the block's own contribution to the total (Welford's accuracy)
  // without a division per element.
  static constexpr size_t kBlock = 512;

  void Block(const char* p, size_t k) {
    size_t m = 0;  // finite values gathered into re_ (and im_)
    switch (kind_) {
      case ElementKind::kSigned:
        for (size_t i = 0; i < k; ++i, p += bytes_) {
          const int64_t v = SignedValue(type_, p);
          if (index_ + i == 0 || v < s_.min_signed) s_.min_signed = v;
          if (index_ + i == 0 || v > s_.max_signed) s_.max_signed = v;
          re_[m++] = static_cast<double>(v);
        }
        break;
      case ElementKind::kUnsigned:
      case ElementKind::kBool:
        for (size_t i = 0; i < k; ++i, p += bytes_) {
          const uint64_t v = UnsignedValue(type_, p);
          if (index_ + i == 0 || v < s_.min_unsigned) s_.min_unsigned = v;
          if (index_ + i == 0 || v > s_.max_unsigned) s_.max_unsigned = v;
          re_[m++] = static_cast<double>(v);
        }
        break;
      case ElementKind::kComplex:
        for (size_t i = 0; i < k; ++i, p += bytes_) {
          const Complex z = ComplexValue(type_, p);
          if (std::isnan(z.re) || std::isnan(z.im)) {
            Nan(index_ + i);
          } else if (std::isinf(z.re) || std::isinf(z.im)) {
            ++s_.pos_inf;
          } else {
            s_.zeros += z.re == 0 && z.im == 0;
            re_[m] = z.re;
            im_[m++] = z.im;
          }
        }
        MergeComplex(m);
        index_ += k;
        return;
      default: {
        const std::optional<internal::KernelType> kt = internal::KernelTypeOf(type_);
        if (kt) {
          const double shift =
              finite_ > 0 ? static_cast<double>(mean_re_) : internal::KernelValue(*kt, p);
          if (MergeSums(internal::SumsBlock(*kt, p, k, shift), *kt, p, k, shift)) {
            index_ += k;
            return;
          }
        }
        internal::BlockToDoubles(type_, p, k, re_, im_);  // real: im_ untouched
        // Compact the finite values in place.
        for (size_t i = 0; i < k; ++i) {
          const double v = re_[i];
          if (std::fabs(v) <= std::numeric_limits<double>::max()) {
            re_[m++] = v;
          } else if (std::isnan(v)) {
            Nan(index_ + i);
          } else {
            (v > 0 ? s_.pos_inf : s_.neg_inf) += 1;
          }
        }
        break;
      }
    }
    index_ += k;
    if (m == 0) return;
    const double shift = finite_ > 0 ? static_cast<double>(mean_re_) : re_[0];
    const char* v = reinterpret_cast<const char*>(re_);
    const internal::KernelType f64 = internal::KernelType::kF64;
    (void)MergeSums(internal::SumsBlock(f64, v, m, shift), f64, v, m, shift);  // all finite
  }

  // Merges the summary `b` of the n values of `kt` at `p`; false (nothing
  // merged) when they were not all finite. Sums that overflow (values near
  // the type's limit: their squares pass the largest double) are redone
  // one value at a time by Welford's update, in long double.
  bool MergeSums(const internal::BlockSums& b, internal::KernelType kt, const char* p,
                 uint64_t n, double shift) {
    if (!b.all_finite) return false;
    s_.zeros += b.zeros;
    const double nb = static_cast<double>(n);
    const double mean = shift + b.s / nb;
    const double raw_m2 = b.q - b.s * (b.s / nb);  // inf - inf is NaN
    if (std::isfinite(b.s) && std::isfinite(b.q) && std::isfinite(mean) &&
        std::isfinite(raw_m2)) {
      Merge(n, mean, 0, std::max(0.0, raw_m2));
    } else {
      const size_t w = internal::KernelTypeBytes(kt);
      for (uint64_t i = 0; i < n; ++i) Welford(internal::KernelValue(kt, p + i * w), 0);
    }
    if (finite_ == n || b.min < min_) min_ = b.min;
    if (finite_ == n || b.max > max_) max_ = b.max;
    return true;
  }

  void MergeComplex(size_t m) {
    if (m == 0) return;
    double sr = 0, si = 0;
    for (size_t i = 0; i < m; ++i) {
      sr += re_[i];
      si += im_[i];
    }
    const double mr = sr / static_cast<double>(m), mi = si / static_cast<double>(m);
    double m2 = 0;
    for (size_t i = 0; i < m; ++i) {
      const double dr = re_[i] - mr, di = im_[i] - mi;
      m2 += dr * dr + di * di;
    }
    if (!std::isfinite(mr) || !std::isfinite(mi) || !std::isfinite(m2)) {
      for (size_t i = 0; i < m; ++i) Welford(re_[i], im_[i]);
      return;
    }
    Merge(m, mr, mi, m2);
  }

  // Chan et al.: merges n values of mean (mr, mi) and squared deviations
  // m2 into the running values.
  // The running values are long double: the squared deviations of values
  // near the largest double pass it (f64 [1e308, -1e308]).
  void Merge(uint64_t n, double mr, double mi, double m2) {
    const long double na = static_cast<long double>(finite_), nb = static_cast<long double>(n);
    finite_ += n;
    const long double nt = static_cast<long double>(finite_);
    const long double dr = mr - mean_re_, di = mi - mean_im_;
    mean_re_ += dr * (nb / nt);
    mean_im_ += di * (nb / nt);
    m2_ += m2 + (dr * dr + di * di) * (na * nb / nt);
  }

  void Welford(double re, double im) {
    ++finite_;
    const long double n = static_cast<long double>(finite_);
    const long double dr = re - mean_re_, di = im - mean_im_;
    mean_re_ += dr / n;
    mean_im_ += di / n;
    m2_ += dr * (re - mean_re_) + di * (im - mean_im_);
  }

  void Nan(uint64_t index) {
    if (s_.nan++ == 0) s_.first_nan_index = index;
  }

  PrimitiveType type_;
  ElementKind kind_;
  size_t bytes_;
  uint64_t index_ = 0;
  uint64_t finite_ = 0;
  long double mean_re_ = 0, mean_im_ = 0, m2_ = 0;
  double min_ = 0, max_ = 0;
  TensorStats s_;
  double re_[kBlock], im_[kBlock];
  size_t pending_ = 0;  // elements of a partial block, in pending_bytes_
  char pending_bytes_[kBlock * 16];  // 16: the widest element (C128)
};

StatsAccumulator::StatsAccumulator(PrimitiveType type)
    : impl_(std::make_unique<Impl>(type)) {}
StatsAccumulator::~StatsAccumulator() = default;
StatsAccumulator::StatsAccumulator(StatsAccumulator&&) noexcept = default;
StatsAccumulator& StatsAccumulator::operator=(StatsAccumulator&&) noexcept = default;

void StatsAccumulator::Add(const char* p, uint64_t n) { impl_->Add(p, n); }

TensorStats StatsAccumulator::Finish() { return impl_->Finish(); }

}  // namespace decomposed
