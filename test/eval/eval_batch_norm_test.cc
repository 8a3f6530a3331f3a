// batch-norm-training/-inference/-grad against the formulas, on a
// [2, 3, 2] operand with feature_index 1 (hand-summed references).
#include <cmath>

#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::CompBuilder;
using testing::MakeArray;
using testing::ModuleBuilder;
using testing::ToVector;

const std::vector<float> kX = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // [2,3,2]

TEST(EvalBatchNorm, TrainingGivesNormalisedValuesMeanAndBiasedVariance) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2,3,2]"), s = c.Param(1, "f32[3]"), o = c.Param(2, "f32[3]");
  c.Op("batch-norm-training", "(f32[2,3,2], f32[3], f32[3])", {x, s, o}, [](auto& i) {
    i.set_feature_index(1);
    i.set_epsilon(0.001f);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray(PrimitiveType::kF32, {2, 3, 2}, kX),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {1, 2, 1}),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {0, 0, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  // Feature 0 holds {1, 2, 7, 8}: mean 4.5, variance (12.25+6.25+6.25+12.25)/4 = 9.25.
  EXPECT_THAT(ToVector<float>(r->element(1).array()), ElementsAre(4.5f, 6.5f, 8.5f));
  EXPECT_THAT(ToVector<float>(r->element(2).array()), ElementsAre(9.25f, 9.25f, 9.25f));
  std::vector<float> y = ToVector<float>(r->element(0).array());
  EXPECT_NEAR(y[0], (1 - 4.5) / std::sqrt(9.25 + 0.001), 1e-6);
  EXPECT_NEAR(y[2], 2 * (3 - 6.5) / std::sqrt(9.25 + 0.001), 1e-6);
  EXPECT_NEAR(y[4], (5 - 8.5) / std::sqrt(9.25 + 0.001) + 5, 1e-6);
}

TEST(EvalBatchNorm, GradMatchesTheFormula) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2,3,2]"), s = c.Param(1, "f32[3]"), mu = c.Param(2, "f32[3]"),
          v = c.Param(3, "f32[3]"), g = c.Param(4, "f32[2,3,2]");
  c.Op("batch-norm-grad", "(f32[2,3,2], f32[3], f32[3])", {x, s, mu, v, g}, [](auto& i) {
    i.set_feature_index(1);
    i.set_epsilon(0.0f);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  std::vector<float> gy = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto r = testing::Run(*mod, {MakeArray(PrimitiveType::kF32, {2, 3, 2}, kX),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {2, 1, 1}),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {4.5f, 6.5f, 8.5f}),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {9.25f, 9.25f, 9.25f}),
                               MakeArray(PrimitiveType::kF32, {2, 3, 2}, gy)});
  ASSERT_TRUE(r.ok()) << r.status();
  const double sd = std::sqrt(9.25);
  // Feature 0: sum(g) = 1, sum(g*(x-mu)) = -3.5.
  EXPECT_NEAR(ToVector<float>(r->element(2).array())[0], 1, 1e-6);
  EXPECT_NEAR(ToVector<float>(r->element(1).array())[0], -3.5 / sd, 1e-6);
  // grad_x[0] = 2/sd * (1 - 1/4 - (1-4.5) * (-3.5/4) / 9.25).
  EXPECT_NEAR(ToVector<float>(r->element(0).array())[0], 2 / sd * (1 - 0.25 - (-3.5) * (-3.5 / 4) / 9.25), 1e-5);
}

}  // namespace
}  // namespace decomposed::eval
