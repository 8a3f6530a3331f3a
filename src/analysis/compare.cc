// ElementComparator (compare.h): the rules and metrics, block by block,
// with the vectorized kernel (kernels.h) on blocks of finite real values.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "decomposed/analysis/compare.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"
#include "src/analysis/kernels.h"

namespace decomposed {

class ElementComparator::Impl {
 public:
  // Compares arrays of `expected_type` and `actual_type` (equal unless the
  // caller allows a mismatch, in which case both are read as f64 / complex
  // and the torch and numpy rules run in f64). `mode` picks the rule.
  Impl(CompareMode mode, PrimitiveType expected_type,
                    PrimitiveType actual_type, Tolerance tol, size_t show)
      : mode_(mode),
        et_(expected_type),
        at_(actual_type),
        eb_(Info(expected_type).element_bytes),
        ab_(Info(actual_type).element_bytes),
        tol_(tol),
        show_(show) {
    const ElementKind ek = KindOf(et_), ak = KindOf(at_);
    complex_ = ek == ElementKind::kComplex || ak == ElementKind::kComplex;
    exact_ints_ = et_ == at_ && ek != ElementKind::kReal &&
                  ek != ElementKind::kComplex &&
                  (mode_ != CompareMode::kNumpy) &&
                  !(mode_ == CompareMode::kTorch && (tol_.rtol != 0 || tol_.atol != 0));
    precision_ = Precision::kDouble;
    if (mode_ == CompareMode::kNumpy && et_ == at_) {
      if (et_ == PrimitiveType::kF16) {
        precision_ = Precision::kHalf;
      } else if (et_ == PrimitiveType::kF32 || et_ == PrimitiveType::kC64 ||
                 (ek == ElementKind::kReal && et_ != PrimitiveType::kF64)) {
        precision_ = Precision::kFloat;
      }
    }
    fast_ = !complex_ && !exact_ints_ && precision_ != Precision::kHalf;
    if (et_ == at_) ktype_ = internal::KernelTypeOf(et_);
    fp_.rtol = tol_.rtol;
    fp_.atol = tol_.atol;
    fp_.rtol_f = static_cast<float>(tol_.rtol);
    fp_.atol_f = static_cast<float>(tol_.atol);
    switch (mode_) {
      case CompareMode::kTorch: fp_.rule = internal::FastRule::kTorch; break;
      case CompareMode::kXla: fp_.rule = internal::FastRule::kXla; break;
      case CompareMode::kNumpy:
        fp_.rule = precision_ == Precision::kFloat ? internal::FastRule::kNumpyFloat
                                                   : internal::FastRule::kNumpyDouble;
        break;
    }
  }

  // Feeds `n` elements of each array. `expected` and `actual` point at
  // n * element-size bytes each. Elements are taken in blocks at fixed
  // positions (multiples of kBlock), whatever the sizes of the calls, so
  // the metrics do not depend on how the data was cut.
  void Add(const char* expected, const char* actual, uint64_t n) {
    if (pending_ > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, kBlock - pending_));
      std::memcpy(pending_e_ + pending_ * eb_, expected, k * eb_);
      std::memcpy(pending_a_ + pending_ * ab_, actual, k * ab_);
      pending_ += k;
      expected += k * eb_;
      actual += k * ab_;
      n -= k;
      if (pending_ < kBlock) return;
      Blocks(pending_e_, pending_a_, kBlock);
      pending_ = 0;
    }
    const uint64_t whole = n / kBlock * kBlock;
    Blocks(expected, actual, whole);
    if (n > whole) {
      pending_ = static_cast<size_t>(n - whole);
      std::memcpy(pending_e_, expected + whole * eb_, pending_ * eb_);
      std::memcpy(pending_a_, actual + whole * ab_, pending_ * ab_);
    }
  }

  CompareMetrics Finish() {
    if (pending_ > 0) {
      Blocks(pending_e_, pending_a_, pending_);
      pending_ = 0;
    }
    return Metrics();
  }

 private:
  enum class Precision : uint8_t { kDouble, kFloat, kHalf };

  void Blocks(const char* expected, const char* actual, uint64_t n) {
    while (n > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, kBlock));
      bool converted = false;
      if (fast_ && count_ > 0) {
        // Blocks of real values, all finite: the vectorized kernel, on the
        // raw elements when it loads their type itself.
        internal::KernelType kt = internal::KernelType::kF64;
        const char* ep = reinterpret_cast<const char*>(ere_);
        const char* ap = reinterpret_cast<const char*>(are_);
        if (ktype_) {
          kt = *ktype_;
          ep = expected;
          ap = actual;
        } else {
          internal::BlockToDoubles(et_, expected, k, ere_, eim_);
          internal::BlockToDoubles(at_, actual, k, are_, aim_);
          converted = true;
        }
        if (FastBlock(kt, ep, ap, k)) {
          expected += k * eb_;
          actual += k * ab_;
          n -= k;
          continue;
        }
      }
      if (!converted) {
        internal::BlockToDoubles(et_, expected, k, ere_, eim_);
        internal::BlockToDoubles(at_, actual, k, are_, aim_);
      }
      switch (mode_) {
        case CompareMode::kTorch:
          complex_ ? Block<CompareMode::kTorch, true>(k, expected, actual)
                   : Block<CompareMode::kTorch, false>(k, expected, actual);
          break;
        case CompareMode::kNumpy:
          complex_ ? Block<CompareMode::kNumpy, true>(k, expected, actual)
                   : Block<CompareMode::kNumpy, false>(k, expected, actual);
          break;
        case CompareMode::kXla:
          complex_ ? Block<CompareMode::kXla, true>(k, expected, actual)
                   : Block<CompareMode::kXla, false>(k, expected, actual);
          break;
      }
      expected += k * eb_;
      actual += k * ab_;
      n -= k;
    }
  }

  CompareMetrics Metrics() {
    m_.elements = index_;
    if (count_ > 0) {
      m_.max_abs_error = max_abs_;
      m_.max_rel_error = max_rel_;
      m_.mean_abs_error = abs_sum_.value() / static_cast<double>(count_);
      m_.rms_error = std::sqrt(sq_sum_.value() / static_cast<double>(count_));
      double ee = e_sq_.value(), aa = a_sq_.value();
      m_.expected_rms = std::sqrt(ee / static_cast<double>(count_));
      double denom = std::sqrt(ee) * std::sqrt(aa);
      if (ee > 0 && aa > 0 && std::isfinite(denom)) {
        double c = dot_.value() / denom;
        if (std::isfinite(c)) m_.cosine = c;
      }
    }
    return m_;
  }

  static double Abs(const Complex& z) {
    return z.im == 0 ? std::fabs(z.re) : std::hypot(z.re, z.im);
  }

  bool ExactIntsEqual(const char* e, const char* a) const {
    if (KindOf(et_) == ElementKind::kSigned) return SignedValue(et_, e) == SignedValue(at_, a);
    return UnsignedValue(et_, e) == UnsignedValue(at_, a);
  }

  // numpy.isclose's within_tol for finite values, in the precision NumPy
  // computes it for this type.
  bool NumpyWithin(const Complex& a, const Complex& e) const {
    switch (precision_) {
      case Precision::kHalf: {
        using internal::RoundToHalf;
        float d = RoundToHalf(static_cast<float>(a.re) - static_cast<float>(e.re));
        float rt = RoundToHalf(tol_.rtol);
        float at = RoundToHalf(tol_.atol);
        float rhs = RoundToHalf(at + RoundToHalf(rt * std::fabs(static_cast<float>(e.re))));
        return std::fabs(d) <= rhs;
      }
      case Precision::kFloat: {
        float rt = static_cast<float>(tol_.rtol), at = static_cast<float>(tol_.atol);
        if (complex_) {
          float dr = static_cast<float>(a.re) - static_cast<float>(e.re);
          float di = static_cast<float>(a.im) - static_cast<float>(e.im);
          float ae = std::hypot(static_cast<float>(e.re), static_cast<float>(e.im));
          return std::hypot(dr, di) <= at + rt * ae;
        }
        float d = static_cast<float>(a.re) - static_cast<float>(e.re);
        return std::fabs(d) <= at + rt * std::fabs(static_cast<float>(e.re));
      }
      case Precision::kDouble:
        break;
    }
    double d = Abs(Complex{a.re - e.re, a.im - e.im});
    return d <= tol_.atol + tol_.rtol * Abs(e);
  }



  static constexpr size_t kBlock = 512;

  // A block through the vectorized kernel: `k` elements of `kt` at `ep` and
  // `ap`. False (nothing recorded) when it holds a non-finite value or
  // difference. Indices (greatest differences, first mismatches) are then
  // found by scalar passes over the block, with the kernel's own rule.
  bool FastBlock(internal::KernelType kt, const char* ep, const char* ap, size_t k) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    internal::FastRealParams p = fp_;
    // Past an infinite or NaN greatest relative difference, nothing in a
    // finite block can be greater.
    const bool rel_settled = max_rel_ == kInf || std::isnan(max_rel_);
    p.rel_threshold = rel_settled ? kInf : max_rel_ * (1 - 1e-12);
    const internal::FastRealResult r = internal::FastRealBlock(kt, ep, ap, k, p);
    if (!r.finite) return false;
    const size_t w = internal::KernelTypeBytes(kt);
    auto e_at = [&](size_t i) { return internal::KernelValue(kt, ep + i * w); };
    auto a_at = [&](size_t i) { return internal::KernelValue(kt, ap + i * w); };
    if (r.max_abs > max_abs_) {
      for (size_t i = 0; i < k; ++i) {
        if (std::fabs(a_at(i) - e_at(i)) == r.max_abs) {
          max_abs_ = r.max_abs;
          m_.max_abs_error_index = index_ + i;
          break;
        }
      }
    }
    if (r.rel_candidates > 0 && !rel_settled) {
      double thr = p.rel_threshold;
      for (size_t i = 0; i < k; ++i) {
        const double e = e_at(i);
        const double d = std::fabs(a_at(i) - e), ae = std::fabs(e);
        if (!(d > thr * ae)) continue;
        if (ae == 0) {  // d > 0: infinite, and nothing beats it
          max_rel_ = kInf;
          m_.max_rel_error_index = index_ + i;
          break;
        }
        const double rel = d / ae;
        if (rel > max_rel_) {
          max_rel_ = rel;
          m_.max_rel_error_index = index_ + i;
          thr = max_rel_ * (1 - 1e-12);
        }
      }
    }
    m_.mismatches += r.mismatches;
    if (r.mismatches > 0 && m_.first_mismatches.size() < show_) {
      for (size_t i = 0; i < k && m_.first_mismatches.size() < show_; ++i) {
        const double e = e_at(i), a = a_at(i);
        if (!internal::FastCloseFor(fp_, e, a, std::fabs(a - e))) {
          m_.first_mismatches.push_back({index_ + i, Complex{e, 0}, Complex{a, 0}});
        }
      }
    }
    count_ += k;
    index_ += k;
    abs_sum_.Add(r.abs_sum);
    sq_sum_.Add(r.sq_sum);
    dot_.Add(r.dot);
    e_sq_.Add(r.e_sq);
    a_sq_.Add(r.a_sq);
    return true;
  }

  // The rules and metrics for a block of k elements, with values in
  // ere_/eim_/are_/aim_ and raw bytes at ep/ap (for exact integers).
  template <CompareMode M, bool C>
  void Block(size_t k, const char* ep, const char* ap) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // Block sums are naive (at most kBlock terms); blocks are added with
    // compensation.
    double abs_sum = 0, sq_sum = 0, dot = 0, e_sq = 0, a_sq = 0;
    for (size_t i = 0; i < k; ++i) {
      const uint64_t index = index_ + i;
      const double er = ere_[i], ar = are_[i];
      const double ei = C ? eim_[i] : 0, ai = C ? aim_[i] : 0;
      const bool en = std::isnan(er) || (C && std::isnan(ei));
      const bool an = std::isnan(ar) || (C && std::isnan(ai));
      m_.expected_nan += en;
      m_.actual_nan += an;
      m_.expected_inf += !en && (std::isinf(er) || (C && std::isinf(ei)));
      m_.actual_inf += !an && (std::isinf(ar) || (C && std::isinf(ai)));
      // numpy.isclose multiplies complex arrays that hold a non-finite
      // value by ones_like(...): (re, im) * (1 + 0j) turns every element
      // with an infinite part into one with a NaN part. Those elements then
      // count as NaN (equal only with equal_nan), as NumPy 1.24 computes.
      const bool e_nanlike = en || (M == CompareMode::kNumpy && C &&
                                    (std::isinf(er) || std::isinf(ei)));
      const bool a_nanlike = an || (M == CompareMode::kNumpy && C &&
                                    (std::isinf(ar) || std::isinf(ai)));
      bool close;
      if (en || an) {
        close = e_nanlike && a_nanlike && tol_.equal_nan;
      } else {
        const bool equal = ar == er && (!C || ai == ei);
        const double d =
            equal ? 0.0 : (C ? std::hypot(ar - er, ai - ei) : std::fabs(ar - er));
        const double ae = C ? std::hypot(er, ei) : std::fabs(er);
        // XLA's rule takes the relative error as infinite when e == 0 or
        // either side is infinite (and a != e).
        const bool rel_inf = !equal && (ae == 0 || std::isinf(d) || std::isinf(ae));
        if (count_ == 0 || d > max_abs_) {
          max_abs_ = d;
          m_.max_abs_error_index = index;
        }
        // The metric: rel = d / ae in IEEE arithmetic (NaN for inf / inf),
        // 0 when equal, +inf when e == 0; a NaN is the greatest and stays.
        // Divided only where it can matter.
        if (count_ == 0 || (!equal && !std::isnan(max_rel_) && max_rel_ != kInf)) {
          const double rel = equal ? 0.0 : (ae == 0 ? kInf : d / ae);
          if (count_ == 0 || std::isnan(rel) || rel > max_rel_) {
            max_rel_ = rel;
            m_.max_rel_error_index = index;
          }
        } else if (!equal && max_rel_ == kInf && std::isinf(ae)) {
          const double rel = d / ae;  // NaN (inf / inf) beats +inf
          if (std::isnan(rel)) {
            max_rel_ = rel;
            m_.max_rel_error_index = index;
          }
        }
        ++count_;
        abs_sum += d;
        sq_sum += d * d;
        dot += ar * er + (C ? ai * ei : 0.0);
        e_sq += er * er + (C ? ei * ei : 0.0);
        a_sq += ar * ar + (C ? ai * ai : 0.0);
        if (exact_ints_) {
          close = ExactIntsEqual(ep + i * eb_, ap + i * ab_);
        } else if constexpr (M == CompareMode::kTorch) {
          const double allowed =
              tol_.atol + (C ? std::hypot(tol_.rtol * er, tol_.rtol * ei)
                             : std::fabs(tol_.rtol * er));
          close = equal || (std::isfinite(d) && d <= allowed);
        } else if constexpr (M == CompareMode::kNumpy) {
          const bool finite = std::isfinite(ar) && std::isfinite(er) &&
                              (!C || (std::isfinite(ai) && std::isfinite(ei)));
          if (finite) {
            close = NumpyWithin(Complex{ar, ai}, Complex{er, ei});
          } else if (C) {
            close = e_nanlike && a_nanlike && tol_.equal_nan;
          } else {
            close = equal;
          }
        } else {
          close = equal || !(d > tol_.atol && (rel_inf || d / ae > tol_.rtol));
        }
      }
      if (!close) {
        ++m_.mismatches;
        if (m_.first_mismatches.size() < show_) {
          m_.first_mismatches.push_back({index, Complex{er, ei}, Complex{ar, ai}});
        }
      }
    }
    index_ += k;
    abs_sum_.Add(abs_sum);
    sq_sum_.Add(sq_sum);
    dot_.Add(dot);
    e_sq_.Add(e_sq);
    a_sq_.Add(a_sq);
  }

  CompareMode mode_;
  PrimitiveType et_, at_;
  size_t eb_, ab_;
  Tolerance tol_;
  size_t show_;
  bool complex_ = false;
  bool exact_ints_ = false;
  Precision precision_ = Precision::kDouble;
  bool fast_ = false;
  std::optional<internal::KernelType> ktype_;
  internal::FastRealParams fp_;

  uint64_t index_ = 0;
  uint64_t count_ = 0;  // pairs without a NaN
  double max_abs_ = 0, max_rel_ = 0;
  internal::CompensatedSum abs_sum_, sq_sum_, dot_, e_sq_, a_sq_;
  CompareMetrics m_;
  double ere_[kBlock], eim_[kBlock], are_[kBlock], aim_[kBlock];
  size_t pending_ = 0;  // elements of a partial block, in pending_e_ / _a_
  char pending_e_[kBlock * 16], pending_a_[kBlock * 16];  // 16: C128
};

ElementComparator::ElementComparator(CompareMode mode, PrimitiveType expected_type,
                                     PrimitiveType actual_type, Tolerance tol,
                                     size_t show)
    : impl_(std::make_unique<Impl>(mode, expected_type, actual_type, tol, show)) {}
ElementComparator::~ElementComparator() = default;
ElementComparator::ElementComparator(ElementComparator&&) noexcept = default;
ElementComparator& ElementComparator::operator=(ElementComparator&&) noexcept = default;

void ElementComparator::Add(const char* expected, const char* actual, uint64_t n) {
  impl_->Add(expected, actual, n);
}

CompareMetrics ElementComparator::Finish() { return impl_->Finish(); }

}  // namespace decomposed
