// Histograms, the Bhattacharyya coefficient and quantiles of error sets: the
// pieces of the three-way comparison (analysis/three_way.h) that compare two
// error distributions. Header-only and free of I/O, so they are tested as
// functions (test/analysis/three_way_test.cc) against values worked out with NumPy.
//
// The binning is the one vLLM-Neuron's three-way assertion uses
// (docs/compare.md, "Three-way comparison"): `bins` equal bins between the
// smallest and the largest error of both sets together,
// np.linspace(lo, hi, bins + 1), each value counted as np.histogram counts
// it (a bin holds [edge j, edge j+1); the last also holds its upper edge).
// The coefficient is sum_j sqrt(p_j * q_j) with p = counts / (total + 1e-10)
// as there, clipped to [0, 1]; 1 when lo == hi.
//
// ErrorQuantileSketch keeps counts of non-negative float32 values in
// log-spaced buckets (2^11 per power of two: each bucket spans at most
// 2^-11, about 0.05%, of its values; exact zeros apart), allocated per
// power of two as values arrive, so its memory is at most 256 x 16 KiB
// whatever the count. Its
// quantiles follow np.quantile's default (linear) method with each order
// statistic read from its bucket; the smallest and largest are exact.
//
// Example:
//   std::vector<double> edges = decomposed::LinearEdges(0.0, 1.0, 100);
//   std::vector<uint64_t> p(100), q(100);
//   for (float x : target) ++p[decomposed::BinOf(edges, x)];
//   for (float x : reference) ++q[decomposed::BinOf(edges, x)];
//   double bc = decomposed::BhattacharyyaCoefficient(p, q);
#ifndef DECOMPOSED_ANALYSIS_ERROR_HISTOGRAM_H_
#define DECOMPOSED_ANALYSIS_ERROR_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace decomposed {

// np.linspace(lo, hi, bins + 1) as NumPy 1.24 computes it: edge j is
// j * ((hi - lo) / bins) + lo, and the last edge is hi itself.
// Precondition: bins >= 1, lo <= hi, both finite.
inline std::vector<double> LinearEdges(double lo, double hi, size_t bins) {
  std::vector<double> edges(bins + 1);
  const double step = (hi - lo) / static_cast<double>(bins);
  for (size_t j = 0; j < bins; ++j) {
    edges[j] = step == 0 ? lo : static_cast<double>(j) * step + lo;
  }
  edges[bins] = hi;
  return edges;
}

// The bin np.histogram(x, edges) counts x in: the largest j < bins with
// edges[j] <= x (bin j holds [edges[j], edges[j+1]), the last bin also
// edges[bins]). Precondition: edges from LinearEdges, edges[0] <= x <=
// edges.back().
// `scale` is bins / (edges.back() - edges.front()) (BinScale), which only
// speeds up the first guess: the result is always decided by the edges.
inline size_t BinOf(const std::vector<double>& edges, double x, double scale) {
  const size_t bins = edges.size() - 1;
  const double lo = edges.front();
  if (!(edges.back() > lo)) return bins - 1;
  // A guess from the step, then moved to the exact edges (at most a step
  // either way, as the edges are rounded).
  const double g = (x - lo) * scale;
  size_t j = g <= 0 ? 0 : std::min(static_cast<size_t>(g), bins - 1);
  while (j > 0 && x < edges[j]) --j;
  while (j + 1 < bins && x >= edges[j + 1]) ++j;
  return j;
}
inline double BinScale(const std::vector<double>& edges) {
  const double span = edges.back() - edges.front();
  return span > 0 ? static_cast<double>(edges.size() - 1) / span : 0.0;
}
inline size_t BinOf(const std::vector<double>& edges, double x) {
  return BinOf(edges, x, BinScale(edges));
}

// vLLM-Neuron's Bhattacharyya coefficient of two histograms over the same
// bins: sum_j sqrt(p_j q_j), p = counts / (sum + 1e-10), clipped to [0, 1].
// 0 when either histogram is empty.
inline double BhattacharyyaCoefficient(const std::vector<uint64_t>& p,
                                       const std::vector<uint64_t>& q) {
  double np = 0, nq = 0;
  for (uint64_t c : p) np += static_cast<double>(c);
  for (uint64_t c : q) nq += static_cast<double>(c);
  if (np == 0 || nq == 0) return 0;
  const double dp = np + 1e-10, dq = nq + 1e-10;
  double s = 0;
  const size_t n = std::min(p.size(), q.size());
  for (size_t j = 0; j < n; ++j) {
    s += std::sqrt((static_cast<double>(p[j]) / dp) * (static_cast<double>(q[j]) / dq));
  }
  return std::clamp(s, 0.0, 1.0);
}

// np.linspace(0, 1, n): the quantile levels of a QQ-plot of n points.
inline std::vector<double> QuantileLevels(size_t n) {
  if (n == 1) return {0.0};
  std::vector<double> levels = LinearEdges(0.0, 1.0, n - 1);
  return levels;
}

class ErrorQuantileSketch {
 public:
  static constexpr int kSubBits = 11;
  static constexpr size_t kSubBuckets = size_t{1} << kSubBits;
  static constexpr int kBinades = 256;  // float32 exponents (255: Inf/NaN, unused)

  ErrorQuantileSketch() = default;
  ErrorQuantileSketch(const ErrorQuantileSketch&) = delete;
  ErrorQuantileSketch& operator=(const ErrorQuantileSketch&) = delete;

  // Counts `x`. Precondition: x >= 0 and finite (+0 or a positive float).
  void Add(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x) & 0x7fffffffu;
    if (n_ == 0 || x < min_) min_ = x;
    if (n_ == 0 || x > max_) max_ = x;
    ++n_;
    if (bits == 0) {  // exact zeros (common: equal values) are their own bucket
      ++zeros_;
      return;
    }
    const uint32_t e = bits >> 23;
    const uint32_t sub = (bits >> (23 - kSubBits)) & (kSubBuckets - 1);
    std::unique_ptr<uint64_t[]>& b = binades_[e];
    if (!b) b.reset(new uint64_t[kSubBuckets]());
    ++b[sub];
  }

  uint64_t count() const { return n_; }

  // Adds every value `o` holds (as if each had been added here).
  void Merge(const ErrorQuantileSketch& o) {
    if (o.n_ == 0) return;
    if (n_ == 0 || o.min_ < min_) min_ = o.min_;
    if (n_ == 0 || o.max_ > max_) max_ = o.max_;
    n_ += o.n_;
    zeros_ += o.zeros_;
    for (int e = 0; e < kBinades; ++e) {
      const uint64_t* src = o.binades_[e].get();
      if (!src) continue;
      std::unique_ptr<uint64_t[]>& b = binades_[e];
      if (!b) b.reset(new uint64_t[kSubBuckets]());
      for (size_t s = 0; s < kSubBuckets; ++s) b[s] += src[s];
    }
  }

  void Clear() {
    for (auto& b : binades_) b.reset();
    n_ = zeros_ = 0;
    min_ = max_ = 0;
  }

  // The quantiles at `levels` (each in [0, 1], ascending), by np.quantile's
  // linear method: x_(floor h) + (h - floor h) * (x_(floor h + 1) -
  // x_(floor h)) with h = level * (n - 1), each order statistic x_(r) read
  // from its bucket (linearly within it, by its rank there; the first and
  // last exactly). Empty when nothing was added.
  std::vector<double> Quantiles(const std::vector<double>& levels) const {
    std::vector<double> out;
    if (n_ == 0) return out;
    // The order statistics needed, ascending, answered in one sweep.
    std::vector<uint64_t> ranks;
    for (double p : levels) {
      const double h = std::clamp(p, 0.0, 1.0) * static_cast<double>(n_ - 1);
      const uint64_t r = static_cast<uint64_t>(std::floor(h));
      ranks.push_back(r);
      ranks.push_back(std::min(r + 1, n_ - 1));
    }
    std::vector<uint64_t> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::vector<double> values(sorted.size());
    size_t next = 0;
    uint64_t before = zeros_;
    while (next < sorted.size() && sorted[next] < zeros_) values[next++] = 0;
    for (int e = 0; e < kBinades && next < sorted.size(); ++e) {
      const uint64_t* b = binades_[e].get();
      if (!b) continue;
      for (size_t s = 0; s < kSubBuckets && next < sorted.size(); ++s) {
        const uint64_t c = b[s];
        if (c == 0) continue;
        while (next < sorted.size() && sorted[next] < before + c) {
          const uint64_t r = sorted[next];
          double v;
          if (r == 0) {
            v = min_;
          } else if (r == n_ - 1) {
            v = max_;
          } else {
            const uint32_t key = (static_cast<uint32_t>(e) << kSubBits) | static_cast<uint32_t>(s);
            const double lower = std::bit_cast<float>(key << (23 - kSubBits));
            const double upper = std::bit_cast<float>((key + 1) << (23 - kSubBits));
            v = lower + (upper - lower) * (static_cast<double>(r - before) + 0.5) /
                            static_cast<double>(c);
            v = std::clamp(v, static_cast<double>(min_), static_cast<double>(max_));
          }
          values[next++] = v;
        }
        before += c;
      }
    }
    auto value_of = [&](uint64_t r) {
      return values[static_cast<size_t>(
          std::lower_bound(sorted.begin(), sorted.end(), r) - sorted.begin())];
    };
    for (size_t k = 0; k < levels.size(); ++k) {
      const double h = std::clamp(levels[k], 0.0, 1.0) * static_cast<double>(n_ - 1);
      const double frac = h - std::floor(h);
      const double a = value_of(ranks[2 * k]), b = value_of(ranks[2 * k + 1]);
      out.push_back(a + frac * (b - a));
    }
    return out;
  }

 private:
  std::array<std::unique_ptr<uint64_t[]>, kBinades> binades_;
  uint64_t n_ = 0, zeros_ = 0;
  float min_ = 0, max_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_ERROR_HISTOGRAM_H_
