// The three-way comparison (analysis/three_way.h), its histogram and
// quantile pieces (analysis/error_histogram.h), the SVG writer and pictures
// (analysis/svg.h, analysis/plots.h) and the scatter sample
// (analysis/scatter.h). Values are worked out by hand in the comments; the
// NumPy oracle over random error sets is test/three_way_interop.py.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "decomposed/analysis/error_histogram.h"
#include "decomposed/analysis/plots.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/analysis/svg.h"
#include "decomposed/analysis/three_way.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace decomposed {
namespace {

using test::HandNpyHeader;
using test::TempDir;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Tensors in memory, streamed in chunks of `chunk` elements (never as runs).
class MemorySet : public TensorSet {
 public:
  struct Tensor {
    PrimitiveType type;
    std::vector<int64_t> dims;
    std::string bytes;
  };
  explicit MemorySet(std::vector<Tensor> t, size_t chunk = 7) : t_(std::move(t)), chunk_(chunk) {}
  std::string Name() const override { return "memory"; }
  size_t size() const override { return t_.size(); }
  absl::StatusOr<TensorInfo> Describe(size_t i) override {
    return TensorInfo{t_[i].type, t_[i].dims, absl::StrCat("memory tensor ", i)};
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    const std::string& b = t_[i].bytes;
    const size_t step = chunk_ * Info(t_[i].type).element_bytes;
    const size_t end = b.size() - short_by_ * Info(t_[i].type).element_bytes;
    for (size_t p = 0; p < end; p += step) {
      if (absl::Status s = emit(std::string_view(b).substr(p, std::min(step, end - p)));
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  size_t short_by_ = 0;  // elements left out of Stream, to test a short side

 private:
  std::vector<Tensor> t_;
  size_t chunk_;
};

std::string F32Bytes(const std::vector<double>& v) {
  std::string s(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    float f = static_cast<float>(v[i]);
    std::memcpy(&s[4 * i], &f, 4);
  }
  return s;
}
std::string F64Bytes(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
}
std::string Bf16Bytes(const std::vector<double>& v) {  // truncating (the values are exact)
  std::string s(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(v[i]));
    uint16_t h = static_cast<uint16_t>(bits >> 16);
    std::memcpy(&s[2 * i], &h, 2);
  }
  return s;
}

MemorySet F32Set(const std::vector<std::vector<double>>& tensors) {
  std::vector<MemorySet::Tensor> t;
  for (const auto& v : tensors) {
    t.push_back({PrimitiveType::kF32, {static_cast<int64_t>(v.size())}, F32Bytes(v)});
  }
  return MemorySet(std::move(t));
}

absl::StatusOr<ThreeWayReport> One(TensorSet& e, TensorSet& a, TensorSet& b,
                                   ThreeWayOptions o = {}) {
  return ThreeWayCompare({{&e, &a, &b}}, o);
}

// --- histogram pieces ----------------------------------------------------------

TEST(ErrorHistogramTest, EdgesAreNumpysLinspace) {
  // np.linspace(0, 1, 5) and np.linspace(0.1, 0.7, 4): j * step + lo, the
  // last edge exactly hi.
  EXPECT_EQ(LinearEdges(0, 1, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  std::vector<double> e = LinearEdges(0.1, 0.7, 3);
  const double step = (0.7 - 0.1) / 3;
  EXPECT_EQ(e, (std::vector<double>{0.1, 1 * step + 0.1, 2 * step + 0.1, 0.7}));
  EXPECT_EQ(LinearEdges(2, 2, 3), (std::vector<double>{2, 2, 2, 2}));
}

TEST(ErrorHistogramTest, BinsAreNumpysHistogram) {
  std::vector<double> e = LinearEdges(0, 1, 4);
  EXPECT_EQ(BinOf(e, 0.0), 0u);
  EXPECT_EQ(BinOf(e, 0.2499), 0u);
  EXPECT_EQ(BinOf(e, 0.25), 1u);  // a bin holds its lower edge
  EXPECT_EQ(BinOf(e, 0.75), 3u);
  EXPECT_EQ(BinOf(e, 1.0), 3u);  // the last bin holds the upper edge too
  // All edges equal (lo == hi): np.histogram counts the value in the last bin.
  EXPECT_EQ(BinOf(LinearEdges(2, 2, 3), 2.0), 2u);
  // Against a plain search over the exact edges, for awkward ranges.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const double lo = std::ldexp(static_cast<double>(rng() % 1000), -(int)(rng() % 40));
    const double hi = lo + std::ldexp(static_cast<double>(1 + rng() % 1000), -(int)(rng() % 40));
    const size_t bins = 1 + rng() % 200;
    std::vector<double> edges = LinearEdges(lo, hi, bins);
    for (int k = 0; k < 50; ++k) {
      double x = k == 0 ? lo : k == 1 ? hi : k < 10 ? edges[rng() % edges.size()]
                                                    : lo + (hi - lo) * (rng() % 10001) / 10000.0;
      x = std::clamp(x, lo, hi);
      size_t want = 0;
      for (size_t j = 0; j < bins; ++j) {
        if (edges[j] <= x) want = j;
      }
      ASSERT_EQ(BinOf(edges, x), want) << lo << " " << hi << " " << bins << " " << x;
    }
  }
}

TEST(ErrorHistogramTest, BhattacharyyaCoefficientOfHandHistograms) {
  // p = [1, 3] / 4, q = [3, 1] / 4: 2 sqrt(3/16) = sqrt(3) / 2.
  EXPECT_NEAR(BhattacharyyaCoefficient({1, 3}, {3, 1}), std::sqrt(3.0) / 2, 1e-9);
  EXPECT_NEAR(BhattacharyyaCoefficient({5, 0, 5}, {5, 0, 5}), 1.0, 1e-9);
  EXPECT_EQ(BhattacharyyaCoefficient({4, 0}, {0, 4}), 0.0);
  EXPECT_EQ(BhattacharyyaCoefficient({0, 0}, {1, 1}), 0.0);  // an empty histogram
}

TEST(ErrorHistogramTest, SketchQuantilesAreWithinTheBucketWidth) {
  ErrorQuantileSketch s;
  std::vector<float> v;
  std::mt19937_64 rng(3);
  std::lognormal_distribution<float> d(-6, 2);
  for (int i = 0; i < 20000; ++i) v.push_back(i % 10 == 0 ? 0.0f : d(rng));
  for (float x : v) s.Add(x);
  std::vector<float> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<double> levels = QuantileLevels(101);
  ASSERT_EQ(levels.size(), 101u);
  EXPECT_EQ(levels.front(), 0.0);
  EXPECT_EQ(levels.back(), 1.0);
  std::vector<double> q = s.Quantiles(levels);
  ASSERT_EQ(q.size(), levels.size());
  EXPECT_EQ(q.front(), sorted.front());  // exact extremes
  EXPECT_EQ(q.back(), sorted.back());
  for (size_t k = 0; k < levels.size(); ++k) {
    const double h = levels[k] * (sorted.size() - 1);
    const size_t r = static_cast<size_t>(std::floor(h));
    const double a = sorted[r], b = sorted[std::min(r + 1, sorted.size() - 1)];
    const double want = a + (h - r) * (b - a);
    EXPECT_NEAR(q[k], want, std::ldexp(std::max(a, b), -10)) << levels[k];
  }
  // 10% exact zeros: the 5th percentile is 0 exactly.
  EXPECT_EQ(s.Quantiles({0.05})[0], 0.0);
  s.Clear();
  EXPECT_EQ(s.count(), 0u);
  EXPECT_TRUE(s.Quantiles(levels).empty());
}

// --- the comparison ------------------------------------------------------------

TEST(ThreeWayTest, HandWorkedRatiosAndBc) {
  // baseline 0, reference errors all 1, target errors [2, 0, 0, 0]:
  // RMS 1 and 1 (sigma-ratio 1), L-inf 2 / 1, L2 2 / 2. The errors {0, 1,
  // 2} fall in bins 0, 50 and 99 of [0, 2]: target 3 in bin 0 and 1 in bin
  // 99, reference 4 in bin 50, so BC is 0; it passes on sigma-ratio <= 1.
  MemorySet b = F32Set({{0, 0, 0, 0}});
  MemorySet e = F32Set({{1, -1, 1, -1}});
  MemorySet a = F32Set({{2, 0, 0, 0}});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tensors.size(), 1u);
  const ThreeWayMetrics& m = r->tensors[0].metrics;
  EXPECT_EQ(m.counted, 4u);
  EXPECT_DOUBLE_EQ(m.target.rms, 1.0);
  EXPECT_DOUBLE_EQ(m.reference.rms, 1.0);
  EXPECT_DOUBLE_EQ(*m.sigma_ratio, 1.0);
  EXPECT_DOUBLE_EQ(*m.linf_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*m.l2_ratio, 1.0);
  EXPECT_EQ(*m.bc, 0.0);
  EXPECT_EQ(m.target_counts[0], 3u);
  EXPECT_EQ(m.target_counts[99], 1u);
  EXPECT_EQ(m.reference_counts[50], 4u);
  EXPECT_TRUE(m.pass());
  EXPECT_TRUE(r->pass);
  EXPECT_EQ(r->inputs[0].max_target_error_index, 0u);
  EXPECT_EQ(r->inputs[0].actual_value.re, 2.0);
  // Each threshold is an option: sigma-ratio <= 0.9 fails the distribution
  // test, L-inf < 2 fails the guard.
  ThreeWayOptions o;
  o.max_sigma_ratio = 0.9;
  o.max_linf_ratio = 2.0;
  r = One(e, a, b, o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(r->tensors[0].metrics.failures, kThreeWayDistribution | kThreeWayLinf);
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kFail);
  // ... and a BC threshold of 0 passes the distribution test again.
  o.bc_threshold = 0;
  r = One(e, a, b, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensors[0].metrics.failures, kThreeWayLinf);
}

TEST(ThreeWayTest, ZeroReferenceErrorIsNamedNotDividedBy) {
  MemorySet b = F32Set({{1, 2, 3}});
  MemorySet e = F32Set({{1, 2, 3}});
  MemorySet same = F32Set({{1, 2, 3}});
  MemorySet off = F32Set({{1, 2, 3.5}});
  // Both exact: ratios 0, BC 1 (every error the same value), a pass.
  absl::StatusOr<ThreeWayReport> r = One(e, same, b);
  ASSERT_TRUE(r.ok()) << r.status();
  const ThreeWayMetrics& m = r->tensors[0].metrics;
  EXPECT_TRUE(m.zero_reference_error);
  EXPECT_EQ(*m.sigma_ratio, 0.0);
  EXPECT_EQ(*m.linf_ratio, 0.0);
  EXPECT_EQ(*m.l2_ratio, 0.0);
  EXPECT_EQ(*m.bc, 1.0);
  EXPECT_TRUE(r->pass);
  // The reference is exact, the target is not: every ratio is inf, a failure.
  MemorySet b2 = F32Set({{1, 2, 3}});
  MemorySet e2 = F32Set({{1, 2, 3}});
  r = One(e2, off, b2);
  ASSERT_TRUE(r.ok());
  const ThreeWayMetrics& f = r->tensors[0].metrics;
  EXPECT_TRUE(f.zero_reference_error);
  EXPECT_EQ(*f.sigma_ratio, kInf);
  EXPECT_EQ(*f.linf_ratio, kInf);
  EXPECT_EQ(*f.l2_ratio, kInf);
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(f.failures, kThreeWayDistribution | kThreeWayLinf | kThreeWayL2);
  nlohmann::json j = nlohmann::json::parse(ThreeWayReportJson(*r));
  EXPECT_EQ(j["tensors"][0]["sigma_ratio"], "inf");
  EXPECT_EQ(j["tensors"][0]["zero_reference_error"], true);
  EXPECT_EQ(j["inputs"][0]["linf_ratio"], "inf");
  const std::string text = ThreeWayReportText(*r);
  EXPECT_NE(text.find("every reference error is 0"), std::string::npos) << text;
}

TEST(ThreeWayTest, NonFiniteErrorsAreCountedAndLeftOut) {
  // Element 0: target NaN, reference finite -> a failure of its own kind.
  // Element 1: both sides NaN where the baseline is finite: left out, no
  // failure. Element 2: equal infinities everywhere: error 0.
  MemorySet b = F32Set({{1, 1, kInf, 4}});
  MemorySet e = F32Set({{1, kNaN, kInf, 4.5}});
  MemorySet a = F32Set({{kNaN, kNaN, kInf, 4.5}});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  const ThreeWayMetrics& m = r->tensors[0].metrics;
  EXPECT_EQ(m.elements, 4u);
  EXPECT_EQ(m.counted, 2u);
  EXPECT_EQ(m.target.nonfinite, 2u);
  EXPECT_EQ(m.reference.nonfinite, 1u);
  EXPECT_EQ(m.target_only_nonfinite, 1u);
  EXPECT_EQ(m.failures, kThreeWayNonFinite);  // the counted elements are equal
  EXPECT_DOUBLE_EQ(*m.sigma_ratio, 1.0);
  // With equal_nan, two NaNs have error 0: element 0 is counted.
  MemorySet b2 = F32Set({{kNaN, 2}});
  MemorySet e2 = F32Set({{kNaN, 2.5}});
  MemorySet a2 = F32Set({{kNaN, 2.5}});
  ThreeWayOptions o;
  o.equal_nan = true;
  r = One(e2, a2, b2, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensors[0].metrics.counted, 2u);
  EXPECT_TRUE(r->pass);
  MemorySet b3 = F32Set({{kNaN, 2}});
  MemorySet e3 = F32Set({{kNaN, 2.5}});
  MemorySet a3 = F32Set({{kNaN, 2.5}});
  r = One(e3, a3, b3);  // without it, NaN vs NaN is non-finite on both: left out
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensors[0].metrics.counted, 1u);
  EXPECT_EQ(r->tensors[0].metrics.target_only_nonfinite, 0u);
}

TEST(ThreeWayTest, MissingAndShapeMismatchFail) {
  MemorySet b({{PrimitiveType::kF32, {2}, F32Bytes({1, 2})},
               {PrimitiveType::kF32, {2}, F32Bytes({1, 2})}});
  MemorySet e({{PrimitiveType::kF32, {2}, F32Bytes({1, 2})},
               {PrimitiveType::kF32, {1, 2}, F32Bytes({1, 2})}});
  MemorySet a({{PrimitiveType::kF32, {2}, F32Bytes({1, 2})},
               {PrimitiveType::kF32, {2}, F32Bytes({1, 2})},
               {PrimitiveType::kF32, {1}, F32Bytes({1})}});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->tensors.size(), 3u);
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kPass);
  EXPECT_EQ(r->tensors[1].verdict, TensorVerdict::kShapeMismatch);
  EXPECT_EQ(r->tensors[2].verdict, TensorVerdict::kMissing);
  EXPECT_FALSE(r->inputs[2].expected.has_value());
  EXPECT_TRUE(r->inputs[2].actual.has_value());
  EXPECT_FALSE(r->pass);
  EXPECT_FALSE(r->all.pass());
  EXPECT_EQ(r->all.failures, kThreeWayUnpaired);
  const std::string text = ThreeWayReportText(*r);
  EXPECT_NE(text.find("missing on the expected and baseline side"), std::string::npos) << text;
  EXPECT_NE(text.find("shapes differ: expected [1,2], actual [2], baseline [2]"),
            std::string::npos)
      << text;
}

TEST(ThreeWayTest, RunsAggregateByConcatenationAndTakeTheWorstInput) {
  // Run 0: reference errors 1, target errors 1 (ratios 1). Run 1:
  // reference errors 1, target errors 3 (ratios 3). Over both: RMS of
  // target sqrt((2*1 + 2*9) / 4) = sqrt(5), reference 1; worst L-inf and L2
  // ratio 3, from input 1 (run 1).
  MemorySet b0 = F32Set({{0, 0}}), e0 = F32Set({{1, 1}}), a0 = F32Set({{1, -1}});
  MemorySet b1 = F32Set({{0, 0}}), e1 = F32Set({{-1, 1}}), a1 = F32Set({{3, 3}});
  absl::StatusOr<ThreeWayReport> r =
      ThreeWayCompare({{&e0, &a0, &b0}, {&e1, &a1, &b1}}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->inputs.size(), 2u);
  ASSERT_EQ(r->tensors.size(), 1u);
  EXPECT_EQ(r->tensors[0].inputs, (std::vector<size_t>{0, 1}));
  const ThreeWayMetrics& m = r->tensors[0].metrics;
  EXPECT_DOUBLE_EQ(*m.sigma_ratio, std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(*m.linf_ratio, 3.0);
  EXPECT_EQ(m.worst_linf_input, 1u);
  EXPECT_DOUBLE_EQ(*m.l2_ratio, 3.0);
  EXPECT_EQ(m.worst_l2_input, 1u);
  EXPECT_DOUBLE_EQ(*r->inputs[0].metrics.sigma_ratio, 1.0);
  EXPECT_TRUE(r->inputs[0].metrics.pass());
  EXPECT_EQ(r->inputs[1].verdict, TensorVerdict::kFail);
  // Errors {1, 3}: bins 0 and 99 of [1, 3]; target 2 + 2, reference 4 + 0.
  EXPECT_EQ(m.reference_counts[0], 4u);
  EXPECT_EQ(m.target_counts[0], 2u);
  EXPECT_EQ(m.target_counts[99], 2u);
  EXPECT_NEAR(*m.bc, std::sqrt(0.5), 1e-9);
  EXPECT_FALSE(r->pass);
  EXPECT_EQ(r->run_names.size(), 2u);
}

TEST(ThreeWayTest, MixedTypesAreComparedInF64) {
  // bf16 expected and actual, f64 baseline: 1.0078125 is a bf16 value.
  MemorySet b({{PrimitiveType::kF64, {3}, F64Bytes({1.001, 2, -4})}});
  MemorySet e({{PrimitiveType::kBF16, {3}, Bf16Bytes({1.0078125, 2, -4})}});
  MemorySet a({{PrimitiveType::kBF16, {3}, Bf16Bytes({1, 2, -4})}});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  const ThreeWayMetrics& m = r->tensors[0].metrics;
  EXPECT_DOUBLE_EQ(m.target.linf, 1.001 - 1);
  EXPECT_DOUBLE_EQ(m.reference.linf, 1.0078125 - 1.001);
  nlohmann::json j = nlohmann::json::parse(ThreeWayReportJson(*r));
  EXPECT_EQ(j["inputs"][0]["expected"]["dtype"], "bf16");
  EXPECT_EQ(j["inputs"][0]["baseline"]["dtype"], "f64");
}

// Random sides of n elements.
struct Random3 {
  std::vector<double> b, e, a;
  Random3(size_t n, uint64_t seed, double target_scale) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> d;
    for (size_t i = 0; i < n; ++i) {
      b.push_back(d(rng));
      e.push_back(b.back() + 1e-2 * d(rng));
      a.push_back(b.back() + target_scale * d(rng));
    }
  }
};

TEST(ThreeWayTest, TheErrorsSpilledToAFileGiveTheSameReport) {
  // 300k elements: more than one 1 MiB block of errors, so a budget of one
  // byte sends them to the temp file.
  Random3 v(300000, 11, 2e-2);
  MemorySet b = F32Set({v.b, {1, 2}}), e = F32Set({v.e, {1, 2.5}}), a = F32Set({v.a, {1, 2.25}});
  ThreeWayOptions in_memory;
  absl::StatusOr<ThreeWayReport> m = One(e, a, b, in_memory);
  ASSERT_TRUE(m.ok()) << m.status();
  ThreeWayOptions spill;
  spill.error_memory_bytes = 1;
  MemorySet b2 = F32Set({v.b, {1, 2}}), e2 = F32Set({v.e, {1, 2.5}}), a2 = F32Set({v.a, {1, 2.25}});
  absl::StatusOr<ThreeWayReport> s = One(e2, a2, b2, spill);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(ThreeWayReportJson(*m), ThreeWayReportJson(*s));
  uint64_t sum = 0;
  for (uint64_t c : s->tensors[0].metrics.target_counts) sum += c;
  EXPECT_EQ(sum, 300000u);
  EXPECT_FALSE(s->pass);  // target errors twice the reference's
}

TEST(ThreeWayTest, FilesReadAsRunsAndStreamsGiveTheSameReport) {
  Random3 v(5000, 5, 1e-2);
  TempDir d;
  auto npy = [&](const std::string& name, const std::vector<double>& x) {
    std::string bytes = F32Bytes(x);
    return d.Write(name, HandNpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (50, 100), }") + bytes);
  };
  std::string bp = npy("b.npy", v.b), ep = npy("e.npy", v.e), ap = npy("a.npy", v.a);
  auto bs = OpenTensorSet(bp, {}), es = OpenTensorSet(ep, {}), as = OpenTensorSet(ap, {});
  ASSERT_TRUE(bs.ok() && es.ok() && as.ok());
  absl::StatusOr<ThreeWayReport> files = One(**es, **as, **bs);
  ASSERT_TRUE(files.ok()) << files.status();
  MemorySet b({{PrimitiveType::kF32, {50, 100}, F32Bytes(v.b)}});
  MemorySet e({{PrimitiveType::kF32, {50, 100}, F32Bytes(v.e)}});
  MemorySet a({{PrimitiveType::kF32, {50, 100}, F32Bytes(v.a)}});
  absl::StatusOr<ThreeWayReport> mem = One(e, a, b);
  ASSERT_TRUE(mem.ok()) << mem.status();
  nlohmann::json jf = nlohmann::json::parse(ThreeWayReportJson(*files));
  nlohmann::json jm = nlohmann::json::parse(ThreeWayReportJson(*mem));
  jf.erase("runs");
  jm.erase("runs");
  EXPECT_EQ(jf, jm);
  EXPECT_EQ(jf["inputs"][0]["max_target_error"]["index"].size(), 2u);
}

TEST(ThreeWayTest, ErrorsNameTheSideAndTheOption) {
  MemorySet b = F32Set({{1, 2, 3}}), e = F32Set({{1, 2, 3}}), a = F32Set({{1, 2, 3}});
  a.short_by_ = 1;
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("memory tensor 0 ended before its 3 elements"),
            std::string::npos)
      << r.status();
  ThreeWayOptions o;
  o.bins = 0;
  r = One(e, e, b, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);  // aliasing or bins
  MemorySet e2 = F32Set({{1, 2, 3}});
  r = One(e, e2, b, o);
  EXPECT_NE(r.status().message().find("bins must be 1 to"), std::string::npos) << r.status();
  o = {};
  o.bc_threshold = 1.5;
  EXPECT_NE(ValidateThreeWayOptions(o).message().find("bc_threshold"), std::string::npos);
  o = {};
  o.max_l2_ratio = kNaN;
  EXPECT_NE(ValidateThreeWayOptions(o).message().find("max_l2_ratio"), std::string::npos);
  r = One(e, e, b);
  EXPECT_NE(r.status().message().find("one TensorSet as two sides"), std::string::npos);
  EXPECT_EQ(ThreeWayCompare({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ThreeWayTest, EmptyTensorsPassWithNoMetrics) {
  MemorySet b = F32Set({{}}), e = F32Set({{}}), a = F32Set({{}});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass);
  EXPECT_FALSE(r->tensors[0].metrics.sigma_ratio.has_value());
  EXPECT_FALSE(r->tensors[0].metrics.bc.has_value());
  nlohmann::json j = nlohmann::json::parse(ThreeWayReportJson(*r));
  EXPECT_TRUE(j["tensors"][0]["bc"].is_null());
  EXPECT_TRUE(j["inputs"][0]["max_target_error"].is_null());
}

// --- pictures ------------------------------------------------------------------

TEST(SvgTest, EscapesTextAndInvalidUtf8) {
  EXPECT_EQ(SvgEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(SvgEscape("\xff\xc3\xa9\x01"), "?\xc3\xa9?");  // é kept
  EXPECT_EQ(SvgEscape("\xed\xa0\x80"), "???");           // a surrogate
  SvgWriter w(10, 10);
  w.Attr("data-x", "1").Rect(1, 2, 3, 4, "#000");
  std::string doc = w.Finish();
  EXPECT_NE(doc.find("<rect x=\"1.00\" y=\"2.00\" width=\"3.00\" height=\"4.00\" fill=\"#000\" data-x=\"1\"/>"),
            std::string::npos)
      << doc;
  EXPECT_EQ(doc.substr(doc.size() - 7), "</svg>\n");
}

uint64_t SumCounts(const std::string& svg, const std::string& set) {
  std::regex bar("class=\"bin " + set + "\" data-count=\"([0-9]+)\"");
  uint64_t sum = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it) {
    sum += std::stoull((*it)[1]);
  }
  return sum;
}

TEST(PlotsTest, ThreeWayPictureHoldsTheHistogramsAndQuantiles) {
  Random3 v(1000, 2, 3e-2);
  MemorySet b = F32Set({v.b}), e = F32Set({v.e}), a = F32Set({v.a});
  absl::StatusOr<ThreeWayReport> r = One(e, a, b);
  ASSERT_TRUE(r.ok());
  std::string svg = ThreeWaySvg(*r);
  EXPECT_EQ(SumCounts(svg, "target"), 1000u);
  EXPECT_EQ(SumCounts(svg, "reference"), 1000u);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 100, true);
  size_t qq = 0;
  for (size_t p = svg.find("class=\"qq\""); p != std::string::npos; p = svg.find("class=\"qq\"", p + 1)) ++qq;
  EXPECT_EQ(qq, 101u);
  EXPECT_NE(svg.find("tensor 0: FAIL"), std::string::npos);
  TempDir d;
  ASSERT_TRUE(WriteSvgFile(d.File("x.svg"), svg).ok());
  EXPECT_EQ(test::ReadFile(d.File("x.svg")), svg);
  absl::Status s = WriteSvgFile(d.File("no/such/dir/x.svg"), svg);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x.svg"), std::string::npos) << s;
}

TEST(ScatterTest, BothSidesKeepTheSameSampledElements) {
  std::vector<double> x(10000), y(10000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(i);
    y[i] = static_cast<double>(i) + 0.5;
  }
  MemorySet e = F32Set({x, {1, 2}});
  MemorySet a = F32Set({y, {1, 2, 3}});  // tensor 1: shapes differ, not streamed
  ScatterTap tap(300);
  std::unique_ptr<TensorSet> te = tap.WrapExpected(e);
  std::unique_ptr<TensorSet> ta = tap.WrapActual(a);
  EXPECT_EQ(te->size(), 2u);
  absl::StatusOr<CompareReport> r = CompareTensorSets(*te, *ta, {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<ScatterTensor> s = tap.Take();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].index, 0u);
  EXPECT_EQ(s[0].elements, 10000u);
  ASSERT_EQ(s[0].points.size(), 300u);
  for (size_t k = 0; k < s[0].points.size(); ++k) {
    const ScatterPoint& p = s[0].points[k];
    EXPECT_EQ(p.expected, static_cast<double>(p.index));
    EXPECT_EQ(p.actual, static_cast<double>(p.index) + 0.5);
    if (k > 0) {
      EXPECT_LT(s[0].points[k - 1].index, p.index);
    }
  }
  // Spread over the tensor, not its first elements.
  EXPECT_GT(s[0].points.back().index, 9000u);
  EXPECT_LT(s[0].points.front().index, 1000u);
  std::string svg = ScatterSvg(*r, s);
  size_t drawn = 0;
  for (size_t p = svg.find("class=\"point\""); p != std::string::npos;
       p = svg.find("class=\"point\"", p + 1)) {
    ++drawn;
  }
  EXPECT_EQ(drawn, 300u);
}

}  // namespace
}  // namespace decomposed
