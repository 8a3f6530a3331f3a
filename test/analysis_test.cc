// compare.h, stats.h and element_value.h against values worked out by hand
// from the type definitions (docs/compare.md).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "decomposed/analysis/compare.h"
#include "decomposed/analysis/stats.h"
#include "decomposed/xla/element_value.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace decomposed
