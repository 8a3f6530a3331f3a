// compare.h, stats.h and element_value.h against values worked out by hand
// from the type definitions (docs/compare.md).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "decomposed/analysis/compare.h"
#include "decomposed/analysis/stats.h"
#include "decomposed/xla/element_value.h"
#include "gtest/gtest.h"
#include "src/analysis/kernels.h"

namespace decomposed {
namespace {

using PT = PrimitiveType;

double V(PT t, uint8_t b) {
  char c = static_cast<char>(b);
  return RealValue(t, &c);
}
double V16(PT t, uint16_t bits) {
  char c[2];
  std::memcpy(c, &bits, 2);
  return RealValue(t, c);
}

TEST(ElementValueTest, HalfAndBfloat16) {
  EXPECT_EQ(V16(PT::kBF16, 0x3f80), 1.0);
  EXPECT_EQ(V16(PT::kBF16, 0xc040), -3.0);
  EXPECT_TRUE(std::isnan(V16(PT::kBF16, 0x7fc0)));
  EXPECT_EQ(V16(PT::kF16, 0x3c00), 1.0);
  EXPECT_EQ(V16(PT::kF16, 0xc000), -2.0);
  EXPECT_EQ(V16(PT::kF16, 0x7bff), 65504.0);
  EXPECT_EQ(V16(PT::kF16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(V16(PT::kF16, 0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(V16(PT::kF16, 0x7e00)));
}

TEST(ElementValueTest, MinifloatsTheirLargestFinitesAndSpecials) {
  EXPECT_EQ(V(PT::kF8E4M3FN, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(V(PT::kF8E4M3FN, 0x7f)));
  EXPECT_TRUE(std::isnan(V(PT::kF8E4M3FN, 0xff)));
  EXPECT_EQ(V(PT::kF8E4M3FN, 0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(V(PT::kF8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(V(PT::kF8E5M2, 0x7c), std::numeric_limits<double>::infinity());
  EXPECT_EQ(V(PT::kF8E5M2, 0xfc), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(V(PT::kF8E5M2, 0x7d)));
  EXPECT_EQ(V(PT::kF8E4M3FNUZ, 0x7f), 240.0);
  EXPECT_TRUE(std::isnan(V(PT::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(V(PT::kF8E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_TRUE(std::isnan(V(PT::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(V(PT::kF8E4M3B11FNUZ, 0x7f), 30.0);
  EXPECT_EQ(V(PT::kF8E4M3, 0x77), 240.0);
  EXPECT_EQ(V(PT::kF8E4M3, 0x78), std::numeric_limits<double>::infinity());
  EXPECT_EQ(V(PT::kF8E3M4, 0x6f), 15.5);
  EXPECT_EQ(V(PT::kF8E3M4, 0x38), 1.5);  // 0 011 1000: (1 + 8/16) * 2^(3-3)
  EXPECT_EQ(V(PT::kF4E2M1FN, 0x07), 6.0);
  EXPECT_EQ(V(PT::kF4E2M1FN, 0x0f), -6.0);
  EXPECT_EQ(V(PT::kF4E2M1FN, 0x01), 0.5);
  EXPECT_EQ(V(PT::kF4E2M1FN, 0xf7), 6.0);  // upper bits ignored
  EXPECT_EQ(V(PT::kF6E3M2FN, 0x1f), 28.0);
  EXPECT_EQ(V(PT::kF6E2M3FN, 0x1f), 7.5);
  EXPECT_EQ(V(PT::kF8E8M0FNU, 0x7f), 1.0);
  EXPECT_EQ(V(PT::kF8E8M0FNU, 0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(V(PT::kF8E8M0FNU, 0xff)));
}

TEST(ElementValueTest, SubByteAndNarrowIntegers) {
  char c = 0x0d;
  EXPECT_EQ(SignedValue(PT::kS4, &c), -3);
  c = static_cast<char>(0xfd);
  EXPECT_EQ(UnsignedValue(PT::kU4, &c), 13u);
  c = 0x03;
  EXPECT_EQ(SignedValue(PT::kS2, &c), -1);
  c = 0x02;
  EXPECT_EQ(UnsignedValue(PT::kPred, &c), 1u);
  int16_t s16 = -300;
  char b[2];
  std::memcpy(b, &s16, 2);
  EXPECT_EQ(RealValue(PT::kS16, b), -300.0);
}

TEST(RoundToHalfTest, NearestHalfAsNumpyRoundsIt) {
  using internal::RoundToHalf;
  EXPECT_EQ(RoundToHalf(1e-3), 1049.0f / 1048576.0f);  // 1.0244140625 * 2^-10
  EXPECT_EQ(RoundToHalf(1e-8), 0.0f);                  // below half of 2^-24
  EXPECT_EQ(RoundToHalf(3e-8), std::ldexp(1.0f, -24));
  EXPECT_EQ(RoundToHalf(65519.0), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToHalf(65520.0)));
  EXPECT_EQ(RoundToHalf(1.0 + std::ldexp(1.0, -11)), 1.0f);  // tie -> even
  EXPECT_EQ(RoundToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 1.0f + std::ldexp(1.0f, -9));
}

std::string F32s(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(CompareTest, TorchDefaultsForF32AndTheMetrics) {
  CompareOptions o;
  Tolerance t = ResolveTolerance(o, PT::kF32, PT::kF32);
  EXPECT_EQ(t.rtol, 1.3e-6);
  EXPECT_EQ(t.atol, 1e-5);
  std::string e = F32s({1, 2, 4, -1});
  std::string a = F32s({1, 2.5f, std::nanf(""), -1.000005f});
  ElementComparator c(o.mode, PT::kF32, PT::kF32, t, 5);
  c.Add(e.data(), a.data(), 2);  // in two chunks
  c.Add(e.data() + 8, a.data() + 8, 2);
  CompareMetrics m = c.Finish();
  EXPECT_EQ(m.elements, 4u);
  // 2 vs 2.5 fails; NaN vs 4 fails; -1 vs -1.000005 is within 1e-5 + 1.3e-6.
  EXPECT_EQ(m.mismatches, 2u);
  ASSERT_EQ(m.first_mismatches.size(), 2u);
  EXPECT_EQ(m.first_mismatches[0].index, 1u);
  EXPECT_EQ(m.first_mismatches[1].index, 2u);
  EXPECT_EQ(*m.max_abs_error, 0.5);
  EXPECT_EQ(m.max_abs_error_index, 1u);
  EXPECT_EQ(*m.max_rel_error, 0.25);
  EXPECT_EQ(m.actual_nan, 1u);
  EXPECT_EQ(m.expected_nan, 0u);
  const double d3 = std::fabs(static_cast<double>(-1.000005f) + 1.0);
  EXPECT_DOUBLE_EQ(*m.mean_abs_error, (0.5 + d3) / 3);
  EXPECT_DOUBLE_EQ(*m.rms_error, std::sqrt((0.25 + d3 * d3) / 3));
  const double a3 = -1.000005f;
  const double dot = 1 + 5 + a3 * -1, ee = 1 + 4 + 1, aa = 1 + 6.25 + a3 * a3;
  EXPECT_DOUBLE_EQ(*m.cosine, dot / (std::sqrt(ee) * std::sqrt(aa)));
}

TEST(CompareTest, NanPairsMatchOnlyWithEqualNanAndInfinitiesWhenEqual) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::string e = F32s({nan, inf, inf, 0});
  std::string a = F32s({nan, inf, -inf, 0});
  for (CompareMode mode : {CompareMode::kTorch, CompareMode::kNumpy, CompareMode::kXla}) {
    for (bool equal_nan : {false, true}) {
      CompareOptions o;
      o.mode = mode;
      o.equal_nan = equal_nan;
      ElementComparator c(mode, PT::kF32, PT::kF32, ResolveTolerance(o, PT::kF32, PT::kF32), 5);
      c.Add(e.data(), a.data(), 4);
      CompareMetrics m = c.Finish();
      EXPECT_EQ(m.mismatches, equal_nan ? 1u : 2u) << CompareModeName(mode);
      EXPECT_EQ(m.expected_inf, 2u);
      EXPECT_EQ(m.actual_inf, 2u);
      EXPECT_TRUE(std::isinf(*m.max_abs_error));
      EXPECT_EQ(m.max_abs_error_index, 2u);
    }
  }
}

TEST(CompareTest, XlaNeedsBothAbsoluteAndRelativeErrorsOver) {
  // e = 1000, a = 1000.5: abs 0.5 > 1e-3 but rel 5e-4 <= 1e-3: no mismatch.
  // e = 0.1, a = 0.1005: rel 5e-3 > 1e-3 but abs 5e-4 <= 1e-3: no mismatch.
  // e = 1, a = 1.01: both over: mismatch.
  std::vector<double> ev = {1000, 0.1, 1}, av = {1000.5, 0.1005, 1.01};
  std::string e(reinterpret_cast<const char*>(ev.data()), 24);
  std::string a(reinterpret_cast<const char*>(av.data()), 24);
  CompareOptions o;
  o.mode = CompareMode::kXla;
  ElementComparator c(o.mode, PT::kF64, PT::kF64, ResolveTolerance(o, PT::kF64, PT::kF64), 5);
  c.Add(e.data(), a.data(), 3);
  CompareMetrics m = c.Finish();
  EXPECT_EQ(m.mismatches, 1u);
  EXPECT_EQ(m.first_mismatches[0].index, 2u);
}

TEST(CompareTest, IntegersAreExactInTorchModeEvenBeyond2To53) {
  std::vector<int64_t> ev = {(int64_t{1} << 60) + 1, 5}, av = {int64_t{1} << 60, 5};
  std::string e(reinterpret_cast<const char*>(ev.data()), 16);
  std::string a(reinterpret_cast<const char*>(av.data()), 16);
  CompareOptions o;
  ElementComparator c(o.mode, PT::kS64, PT::kS64, ResolveTolerance(o, PT::kS64, PT::kS64), 5);
  c.Add(e.data(), a.data(), 2);
  EXPECT_EQ(c.Finish().mismatches, 1u);
}

TEST(CompareTest, RelativeErrorIsInfiniteAgainstAZeroExpected) {
  std::string e = F32s({0, 0}), a = F32s({0, 1e-6f});
  CompareOptions o;
  ElementComparator c(o.mode, PT::kF32, PT::kF32, ResolveTolerance(o, PT::kF32, PT::kF32), 5);
  c.Add(e.data(), a.data(), 2);
  CompareMetrics m = c.Finish();
  EXPECT_EQ(m.mismatches, 0u);  // 1e-6 <= atol
  EXPECT_TRUE(std::isinf(*m.max_rel_error));
  EXPECT_EQ(m.max_rel_error_index, 1u);
  EXPECT_FALSE(m.cosine.has_value());  // |e| = 0
}

// torch.testing.assert_close reports |3 - inf| / |inf| = nan as the
// greatest relative difference (torch.max propagates NaN); NumPy computes
// the same; an infinite actual against a finite expected is inf.
TEST(CompareTest, RelativeErrorOfAnInfiniteExpectedIsNan) {
  const float inf = std::numeric_limits<float>::infinity();
  for (CompareMode mode : {CompareMode::kTorch, CompareMode::kNumpy, CompareMode::kXla}) {
    CompareOptions o;
    o.mode = mode;
    const Tolerance t = ResolveTolerance(o, PT::kF32, PT::kF32);
    {  // expected inf, actual 3, after a finite rel of 0.5 and an inf one
      std::string e = F32s({2, 0, inf, 4, -inf}), a = F32s({3, 1, 3, 4, 5});
      ElementComparator c(mode, PT::kF32, PT::kF32, t, 5);
      c.Add(e.data(), a.data(), 5);
      CompareMetrics m = c.Finish();
      EXPECT_EQ(m.mismatches, 4u) << CompareModeName(mode);
      ASSERT_TRUE(m.max_rel_error.has_value());
      EXPECT_TRUE(std::isnan(*m.max_rel_error)) << *m.max_rel_error;
      EXPECT_EQ(m.max_rel_error_index, 2u);  // the first NaN
      EXPECT_TRUE(std::isinf(*m.max_abs_error));
    }
    {  // actual inf against a finite expected: inf, as torch says
      std::string e = F32s({3, 1}), a = F32s({inf, 1});
      ElementComparator c(mode, PT::kF32, PT::kF32, t, 5);
      c.Add(e.data(), a.data(), 2);
      CompareMetrics m = c.Finish();
      EXPECT_TRUE(std::isinf(*m.max_rel_error));
      EXPECT_EQ(m.max_rel_error_index, 0u);
    }
    {  // equal infinities: rel 0
      std::string e = F32s({inf, 1}), a = F32s({inf, 1});
      ElementComparator c(mode, PT::kF32, PT::kF32, t, 5);
      c.Add(e.data(), a.data(), 2);
      CompareMetrics m = c.Finish();
      EXPECT_EQ(m.mismatches, 0u);
      EXPECT_EQ(*m.max_rel_error, 0.0);
    }
  }
}

TEST(CompareTest, NumpyModeComputesF16InHalfPrecision) {
  // e = 2048 (0x6800), a = 2050 (0x6801: the quantum at 2048 is 2).
  // rtol = 9.7656e-4 is 2.5e-9 below 2^-10; the half quantum there is
  // 2^-21, so NumPy's float16 arithmetic rounds it to 2^-10, and atol = 1e-8
  // to 0: the bound is 2^-10 * 2048 = 2 and |a - e| = 2 <= 2: close.
  // In f64 (torch mode) the bound is 1e-8 + 9.7656e-4 * 2048 = 1.99999489:
  // a mismatch.
  uint16_t e16 = 0x6800, a16 = 0x6801;
  char e[2], a[2];
  std::memcpy(e, &e16, 2);
  std::memcpy(a, &a16, 2);
  ASSERT_EQ(RealValue(PT::kF16, e), 2048.0);
  ASSERT_EQ(RealValue(PT::kF16, a), 2050.0);
  CompareOptions o;
  o.mode = CompareMode::kNumpy;
  o.rtol = 9.7656e-4;
  o.atol = 1e-8;
  ElementComparator c(o.mode, PT::kF16, PT::kF16, ResolveTolerance(o, PT::kF16, PT::kF16), 5);
  c.Add(e, a, 1);
  EXPECT_EQ(c.Finish().mismatches, 0u);
  o.mode = CompareMode::kTorch;  // f64: 2 > 1.99999489
  ElementComparator t(o.mode, PT::kF16, PT::kF16, ResolveTolerance(o, PT::kF16, PT::kF16), 5);
  t.Add(e, a, 1);
  EXPECT_EQ(t.Finish().mismatches, 1u);
}

TEST(CompareTest, ComplexUsesTheModulus) {
  std::vector<float> ev = {3, 4}, av = {3, 4.5f};
  std::string e(reinterpret_cast<const char*>(ev.data()), 8);
  std::string a(reinterpret_cast<const char*>(av.data()), 8);
  CompareOptions o;
  o.rtol = 0.1;  // allowed 1e-5 + 0.1 * 5 = 0.50001 >= 0.5: close
  ElementComparator c(o.mode, PT::kC64, PT::kC64, ResolveTolerance(o, PT::kC64, PT::kC64), 5);
  c.Add(e.data(), a.data(), 1);
  CompareMetrics m = c.Finish();
  EXPECT_EQ(m.mismatches, 0u);
  EXPECT_EQ(*m.max_abs_error, 0.5);
  EXPECT_EQ(*m.max_rel_error, 0.1);
}

TEST(CompareTest, UnravelIndexIsRowMajor) {
  EXPECT_EQ(UnravelIndex(5, {2, 3}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(UnravelIndex(0, {}), (std::vector<int64_t>{}));
  EXPECT_EQ(UnravelIndex(23, {2, 3, 4}), (std::vector<int64_t>{1, 2, 3}));
}

TEST(StatsTest, FloatCountsAndFiniteMoments) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::string d = F32s({1, nan, -inf, 0, 3, inf, -0.0f, nan});
  StatsAccumulator s(PT::kF32);
  s.Add(d.data(), 8);
  TensorStats t = s.Finish();
  EXPECT_EQ(t.elements, 8u);
  EXPECT_EQ(t.nan, 2u);
  EXPECT_EQ(*t.first_nan_index, 1u);
  EXPECT_EQ(t.pos_inf, 1u);
  EXPECT_EQ(t.neg_inf, 1u);
  EXPECT_EQ(t.zeros, 2u);
  EXPECT_EQ(*t.min, 0.0);
  EXPECT_EQ(*t.max, 3.0);
  EXPECT_DOUBLE_EQ(*t.mean, 1.0);  // (1 + 0 + 3 + 0) / 4
  EXPECT_DOUBLE_EQ(*t.std, std::sqrt((0 + 1 + 4 + 1) / 4.0));
}

TEST(StatsTest, WelfordKeepsPrecisionWithALargeMean) {
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1e9 + (i % 2 ? 1 : -1));
  std::string d(reinterpret_cast<const char*>(v.data()), v.size() * 8);
  StatsAccumulator s(PT::kF64);
  s.Add(d.data(), v.size());
  TensorStats t = s.Finish();
  EXPECT_DOUBLE_EQ(*t.mean, 1e9);
  EXPECT_DOUBLE_EQ(*t.std, 1.0);
}

// f64 values whose squares (or sums) pass the largest double: the moments
// are still the population mean and std, not 0 or NaN (an inf - inf once
// became a std of 0, and Welford's update in double overflowed).
TEST(StatsTest, MomentsOfValuesNearTheLargestDouble) {
  struct Case {
    std::vector<double> v;
    double mean, std;
  };
  // [a, -a]: mean 0, std a. [a, a, -a]: mean a/3, deviations 2a/3, 2a/3,
  // -4a/3: variance (4 + 4 + 16)/27 a^2 = 8/9 a^2.
  for (const Case& c : {Case{{1e155, -1e155}, 0, 1e155},
                        Case{{1e200, -1e200, 1e200, -1e200}, 0, 1e200},
                        Case{{1.7e308, 1.7e308}, 1.7e308, 0},
                        Case{{1.7e308, -1.7e308}, 0, 1.7e308},
                        Case{{1e300, 1e300, -1e300}, 1e300 / 3, std::sqrt(8.0 / 9) * 1e300}}) {
    std::string d(reinterpret_cast<const char*>(c.v.data()), c.v.size() * 8);
    StatsAccumulator s(PT::kF64);
    s.Add(d.data(), c.v.size());
    TensorStats t = s.Finish();
    ASSERT_TRUE(t.mean && t.std);
    EXPECT_DOUBLE_EQ(*t.mean, c.mean) << c.v[0];
    EXPECT_DOUBLE_EQ(*t.std, c.std) << c.v[0];
  }
}

TEST(StatsTest, IntegersExactMinMaxAndNoNan) {
  std::vector<int64_t> v = {INT64_MIN, 0, INT64_MAX};
  std::string d(reinterpret_cast<const char*>(v.data()), 24);
  StatsAccumulator s(PT::kS64);
  s.Add(d.data(), 3);
  TensorStats t = s.Finish();
  EXPECT_TRUE(t.integral);
  EXPECT_EQ(t.min_signed, INT64_MIN);
  EXPECT_EQ(t.max_signed, INT64_MAX);
  EXPECT_EQ(t.zeros, 1u);
  EXPECT_EQ(t.nan, 0u);
  EXPECT_FALSE(t.first_nan_index.has_value());
}

TEST(StatsTest, EmptyTensorHasNoMoments) {
  StatsAccumulator s(PT::kF32);
  TensorStats t = s.Finish();
  EXPECT_EQ(t.elements, 0u);
  EXPECT_FALSE(t.mean.has_value());
  EXPECT_FALSE(t.min.has_value());
}

// --- the vectorized blocks against a plain element-by-element reference ------
//
// Real blocks whose values and differences are all finite go through the
// kernel (kernels.h); others through the scalar path. Each scenario mixes
// both and checks every count and index exactly against a reference written
// here from the rules of compare.h, and every sum to 1e-12 relative.

struct RefCompare {
  uint64_t mismatches = 0;
  std::vector<uint64_t> first;
  std::optional<double> max_abs, max_rel;
  uint64_t max_abs_index = 0, max_rel_index = 0;
  long double abs_sum = 0, sq_sum = 0, dot = 0, ee = 0, aa = 0;
  uint64_t count = 0;
};

// `e` and `a` hold the values (exactly representable in the element type).
RefCompare Reference(CompareMode mode, PT type, const std::vector<double>& e,
                     const std::vector<double>& a, Tolerance tol, size_t show) {
  RefCompare r;
  const double kInf = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < e.size(); ++i) {
    const double ev = e[i], av = a[i];
    bool close = false;
    if (std::isnan(ev) || std::isnan(av)) {
      close = std::isnan(ev) && std::isnan(av) && tol.equal_nan;
    } else {
      const bool equal = ev == av;
      const double d = equal ? 0 : std::fabs(av - ev);
      const double ae = std::fabs(ev);
      // XLA's rule: infinite when e == 0 or either side is infinite.
      const double rel_rule =
          equal ? 0 : (ae == 0 || std::isinf(d) || std::isinf(ae)) ? kInf : d / ae;
      // The metric, as torch and NumPy compute it: NaN for inf / inf.
      const double rel = equal ? 0 : ae == 0 ? kInf : d / ae;
      if (!r.max_abs || d > *r.max_abs) {
        r.max_abs = d;
        r.max_abs_index = i;
      }
      if (!r.max_rel || (std::isnan(rel) && !std::isnan(*r.max_rel)) ||
          rel > *r.max_rel) {
        r.max_rel = rel;
        r.max_rel_index = i;
      }
      r.abs_sum += d;
      r.sq_sum += static_cast<long double>(d) * d;
      r.dot += static_cast<long double>(av) * ev;
      r.ee += static_cast<long double>(ev) * ev;
      r.aa += static_cast<long double>(av) * av;
      ++r.count;
      switch (mode) {
        case CompareMode::kTorch:
          close = equal || (std::isfinite(d) && d <= tol.atol + std::fabs(tol.rtol * ev));
          break;
        case CompareMode::kNumpy:
          if (std::isfinite(ev) && std::isfinite(av)) {
            if (type == PT::kF32) {  // NumPy computes float32 in float32
              const float df = static_cast<float>(av) - static_cast<float>(ev);
              close = std::fabs(df) <= static_cast<float>(tol.atol) +
                                           static_cast<float>(tol.rtol) * std::fabs(static_cast<float>(ev));
            } else {
              close = std::fabs(av - ev) <= tol.atol + tol.rtol * std::fabs(ev);
            }
          } else {
            close = equal;
          }
          break;
        case CompareMode::kXla:
          close = equal || !(d > tol.atol && rel_rule > tol.rtol);
          break;
      }
    }
    if (!close) {
      ++r.mismatches;
      if (r.first.size() < show) r.first.push_back(i);
    }
  }
  return r;
}

std::string Encode(PT type, const std::vector<double>& v) {
  std::string out;
  for (double x : v) {
    if (type == PT::kF32) {
      float f = static_cast<float>(x);
      out.append(reinterpret_cast<const char*>(&f), 4);
    } else if (type == PT::kBF16) {
      uint16_t b = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(x)) >> 16);
      out.append(reinterpret_cast<const char*>(&b), 2);
    } else {
      out.append(reinterpret_cast<const char*>(&x), 8);
    }
  }
  return out;
}

// Values exactly representable in `type` (bf16: truncated float).
double Representable(PT type, double x) {
  if (type == PT::kF32) return static_cast<float>(x);
  if (type == PT::kBF16) {
    return std::bit_cast<float>(std::bit_cast<uint32_t>(static_cast<float>(x)) & 0xffff0000u);
  }
  return x;
}

void ExpectRelClose(double got, long double want, const char* what) {
  if (got == static_cast<double>(want)) return;  // infinities included
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": " << got << " vs nan";
    return;
  }
  const long double tol = 1e-12L * std::max<long double>(std::fabs(want), 1e-300L);
  EXPECT_LE(std::fabs(got - want), tol) << what << ": " << got << " vs " << static_cast<double>(want);
}

TEST(ComparatorKernelTest, AgreesWithTheReferenceInEveryModeAndScenario) {
  std::mt19937_64 rng(1130);
  std::normal_distribution<double> normal(0, 10);
  const size_t n = 20000;  // 39 blocks of 512 and a tail
  for (PT type : {PT::kF32, PT::kF64, PT::kBF16}) {
    for (int scenario = 0; scenario < 6; ++scenario) {
      std::vector<double> e(n), a(n);
      for (size_t i = 0; i < n; ++i) {
        e[i] = Representable(type, normal(rng));
        double rel = scenario == 3 ? 1e-7 * static_cast<double>(i) : std::ldexp(1.0, -int(rng() % 30));
        a[i] = Representable(type, e[i] * (1 + (rng() % 2 ? rel : -rel)));
        if (rng() % 5 == 0) a[i] = e[i];
      }
      if (scenario == 1) {  // NaN and Inf in some blocks only
        for (size_t i = 700; i < n; i += 3001) e[i] = std::nan("");
        for (size_t i = 1900; i < n; i += 5003) a[i] = std::numeric_limits<double>::infinity();
        // An infinite expected value: a NaN relative error, the greatest.
        for (size_t i = 12100; i < n; i += 7001) e[i] = -std::numeric_limits<double>::infinity();
      }
      if (scenario == 2) {  // zeros on the expected side: infinite rel
        for (size_t i = 5000; i < n; i += 97) e[i] = 0;
      }
      if (scenario == 4) {  // everything equal
        a = e;
      }
      if (scenario == 5) {  // the first element far off, then close
        a[0] = Representable(type, e[0] + 100);
      }
      const std::string eb = Encode(type, e), ab = Encode(type, a);
      for (CompareMode mode : {CompareMode::kTorch, CompareMode::kNumpy, CompareMode::kXla}) {
        for (bool equal_nan : {false, true}) {
          CompareOptions o;
          o.mode = mode;
          o.equal_nan = equal_nan;
          if (type == PT::kBF16 && mode != CompareMode::kTorch) o.rtol = 1e-3;
          const Tolerance tol = ResolveTolerance(o, type, type);
          ElementComparator c(mode, type, type, tol, 7);
          const size_t w = Info(type).element_bytes;
          // Uneven feeds: blocks do not line up with the calls.
          for (size_t i = 0, step = 1; i < n; i += step, step = step * 3 + 1) {
            const size_t k = std::min(step, n - i);
            c.Add(eb.data() + i * w, ab.data() + i * w, k);
          }
          const CompareMetrics m = c.Finish();
          const RefCompare r = Reference(mode, type, e, a, tol, 7);
          const std::string what = std::string(PrimitiveTypeName(type)) + " scenario " +
                                   std::to_string(scenario) + " mode " +
                                   std::string(CompareModeName(mode));
          EXPECT_EQ(m.elements, n) << what;
          EXPECT_EQ(m.mismatches, r.mismatches) << what;
          ASSERT_EQ(m.first_mismatches.size(), r.first.size()) << what;
          for (size_t j = 0; j < r.first.size(); ++j) {
            EXPECT_EQ(m.first_mismatches[j].index, r.first[j]) << what;
            EXPECT_EQ(m.first_mismatches[j].expected.re, e[r.first[j]]) << what;
          }
          ASSERT_TRUE(m.max_abs_error.has_value()) << what;
          EXPECT_EQ(*m.max_abs_error, *r.max_abs) << what;
          EXPECT_EQ(m.max_abs_error_index, r.max_abs_index) << what;
          EXPECT_TRUE(*m.max_rel_error == *r.max_rel ||
                      (std::isnan(*m.max_rel_error) && std::isnan(*r.max_rel)))
              << what << ": " << *m.max_rel_error << " vs " << *r.max_rel;
          EXPECT_EQ(m.max_rel_error_index, r.max_rel_index) << what;
          ExpectRelClose(*m.mean_abs_error, r.abs_sum / r.count, "mean abs");
          ExpectRelClose(*m.rms_error, std::sqrt(r.sq_sum / r.count), "rms");
          if (m.cosine) {
            ExpectRelClose(*m.cosine, r.dot / std::sqrt(r.ee * r.aa), "cosine");
          }
        }
      }
    }
  }
}

TEST(StatsKernelTest, AgreesWithTheReferenceForEveryKernelType) {
  std::mt19937_64 rng(20261130);
  std::normal_distribution<double> normal(1e4, 30);  // large mean, small spread
  const size_t n = 30001;
  for (PT type : {PT::kF32, PT::kF64, PT::kBF16, PT::kF16, PT::kS32}) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
      double x = type == PT::kS32 ? std::round(normal(rng)) : normal(rng);
      // F16: multiples of 8 (its spacing between 8192 and 16384).
      v[i] = type == PT::kF16 ? std::round(x / 8) * 8 : Representable(type, x);
    }
    if (type != PT::kS32) {
      v[1234] = std::nan("");
      v[20000] = std::numeric_limits<double>::infinity();
      v[20001] = -std::numeric_limits<double>::infinity();
    }
    v[77] = 0;
    std::string bytes;
    for (double x : v) {
      if (type == PT::kF16) {
        // Integers up to 2^11 exactly; NaN / Inf encodings by hand.
        uint16_t h;
        if (std::isnan(x)) h = 0x7e00;
        else if (std::isinf(x)) h = x > 0 ? 0x7c00 : 0xfc00;
        else if (x == 0) h = 0;
        else {
          int ex;
          double m = std::frexp(x, &ex);  // x = m 2^ex, m in [0.5, 1)
          h = static_cast<uint16_t>(((ex - 1 + 15) << 10) | (static_cast<uint32_t>(std::ldexp(m * 2 - 1, 10)) & 0x3ff));
        }
        bytes.append(reinterpret_cast<const char*>(&h), 2);
      } else if (type == PT::kS32) {
        int32_t k = static_cast<int32_t>(x);
        bytes.append(reinterpret_cast<const char*>(&k), 4);
      } else {
        bytes += Encode(type, {x});
      }
    }
    StatsAccumulator acc(type);
    const size_t w = Info(type).element_bytes;
    for (size_t i = 0, step = 5; i < n; i += step, step = step * 2 + 3) {
      acc.Add(bytes.data() + i * w, std::min(step, n - i));
    }
    const TensorStats s = acc.Finish();
    long double sum = 0;
    uint64_t fin = 0, zeros = 0;
    double lo = 0, hi = 0;
    for (double x : v) {
      if (!std::isfinite(x)) continue;
      if (fin == 0 || x < lo) lo = x;
      if (fin == 0 || x > hi) hi = x;
      sum += x;
      zeros += x == 0;
      ++fin;
    }
    const long double mean = sum / fin;
    long double m2 = 0;
    for (double x : v) {
      if (std::isfinite(x)) m2 += (x - mean) * (x - mean);
    }
    const std::string what(PrimitiveTypeName(type));
    EXPECT_EQ(s.elements, n) << what;
    EXPECT_EQ(s.zeros, zeros) << what;
    EXPECT_EQ(*s.min, lo) << what;
    EXPECT_EQ(*s.max, hi) << what;
    ExpectRelClose(*s.mean, mean, "mean");
    ExpectRelClose(*s.std, std::sqrt(m2 / fin), "std");
    if (type != PT::kS32) {
      EXPECT_EQ(s.nan, 1u) << what;
      EXPECT_EQ(*s.first_nan_index, 1234u) << what;
      EXPECT_EQ(s.pos_inf, 1u) << what;
      EXPECT_EQ(s.neg_inf, 1u) << what;
    }
  }
}

}  // namespace
}  // namespace decomposed
