// Reductions and sorting: reduce with a simple and with a variadic
// (argmax) reducer, reduce-window max pooling with padding, select-and-
// scatter, map, multi-operand stable sort with a comparator, topk.
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using testing::CompBuilder;
using testing::MakeArray;
using testing::ModuleBuilder;
using testing::ToVector;

TEST(EvalReduce, SumOverEachDimensionAndMax) {
  auto add = testing::BinaryComputation("add", "f32");
  auto mx = testing::BinaryComputation("maximum", "f32");
  for (int dim : {0, 1}) {
    CompBuilder c("main");
    int64_t x = c.Param(0, "f32[2,3]");
    int64_t z = c.Constant("f32[]", {0});
    int64_t s = c.Op("reduce", dim == 0 ? "f32[3]" : "f32[2]", {x, z}, [&](auto& i) {
      i.add_dimensions(dim);
      i.add_called_computation_ids(add.id());
    });
    int64_t lo = c.Constant("f32[]", {-1e30});
    int64_t m = c.Op("reduce", "f32[]", {x, lo}, [&](auto& i) {
      i.add_dimensions(0); i.add_dimensions(1);
      i.add_called_computation_ids(mx.id());
    });
    c.Op("tuple", dim == 0 ? "(f32[3], f32[])" : "(f32[2], f32[])", {s, m});
    ModuleBuilder mb;
    mb.Add(add);
    mb.Add(mx);
    mb.Add(c);
    auto mod = mb.Build();
    auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
    ASSERT_TRUE(r.ok()) << r.status();
    if (dim == 0) EXPECT_THAT(ToVector<float>(r->element(0).array()), ElementsAre(5, 7, 9));
    else EXPECT_THAT(ToVector<float>(r->element(0).array()), ElementsAre(6, 15));
    EXPECT_THAT(ToVector<float>(r->element(1).array()), ElementsAre(6));
  }
}

// (value, index) argmax reducer: larger value wins, ties to the lower index.
CompBuilder ArgMaxReducer() {
  CompBuilder c("argmax");
  int64_t v0 = c.Param(0, "f32[]"), i0 = c.Param(1, "s32[]"), v1 = c.Param(2, "f32[]"), i1 = c.Param(3, "s32[]");
  int64_t gt = c.Op("compare", "pred[]", {v0, v1}, [](auto& i) { i.set_comparison_direction("GT"); });
  int64_t eq = c.Op("compare", "pred[]", {v0, v1}, [](auto& i) { i.set_comparison_direction("EQ"); });
  int64_t lt = c.Op("compare", "pred[]", {i0, i1}, [](auto& i) { i.set_comparison_direction("LT"); });
  int64_t tie = c.Op("and", "pred[]", {eq, lt});
  int64_t keep = c.Op("or", "pred[]", {gt, tie});
  int64_t v = c.Op("select", "f32[]", {keep, v0, v1});
  int64_t i = c.Op("select", "s32[]", {keep, i0, i1});
  c.Op("tuple", "(f32[], s32[])", {v, i});
  return c;
}

TEST(EvalReduce, VariadicArgmaxRunsLiftedAndKeepsTheFirstOfTies) {
  CompBuilder red = ArgMaxReducer();
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2,5]");
  int64_t io = c.Op("iota", "s32[2,5]", {}, [](auto& i) { i.add_dimensions(1); });
  int64_t lo = c.Constant("f32[]", {-1e30});
  int64_t zero = c.Constant("s32[]", {0});
  c.Op("reduce", "(f32[2], s32[2])", {x, io, lo, zero}, [&](auto& i) {
    i.add_dimensions(1);
    i.add_called_computation_ids(red.id());
  });
  ModuleBuilder mb;
  mb.Add(red);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2, 5}, {1, 7, 3, 7, 2, 9, 0, 9, 9, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->element(0).array()), ElementsAre(7, 9));
  EXPECT_THAT(ToVector<int32_t>(r->element(1).array()), ElementsAre(1, 0));
}

TEST(EvalReduceWindow, MaxPoolWithPaddingUsesTheInitValue) {
  auto mx = testing::BinaryComputation("maximum", "f32");
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[4]");
  int64_t lo = c.Constant("f32[]", {-100});
  c.Op("reduce-window", "f32[3]", {x, lo}, [&](auto& i) {
    auto* w = i.mutable_window()->add_dimensions();
    w->set_size(2); w->set_stride(2); w->set_padding_low(1); w->set_padding_high(1);
    i.add_called_computation_ids(mx.id());
  });
  ModuleBuilder mb;
  mb.Add(mx);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {4}, {-5, 3, 8, -7})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(-5, 8, -7));
}

TEST(EvalSelectAndScatter, GradientOfMaxPool) {
  CompBuilder ge("ge");
  {
    int64_t a = ge.Param(0, "f32[]"), b = ge.Param(1, "f32[]");
    ge.Op("compare", "pred[]", {a, b}, [](auto& i) { i.set_comparison_direction("GE"); });
  }
  auto add = testing::BinaryComputation("add", "f32");
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[4]"), s = c.Param(1, "f32[2]");
  int64_t z = c.Constant("f32[]", {0});
  c.Op("select-and-scatter", "f32[4]", {x, s, z}, [&](auto& i) {
    auto* w = i.mutable_window()->add_dimensions();
    w->set_size(2); w->set_stride(2);
    i.add_called_computation_ids(ge.id());
    i.add_called_computation_ids(add.id());
  });
  ModuleBuilder mb;
  mb.Add(ge);
  mb.Add(add);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {4}, {1, 5, 5, 2}),
                               MakeArray<float>(PrimitiveType::kF32, {2}, {10, 20})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(0, 10, 20, 0));
}

TEST(EvalMap, AppliesTheComputationElementwise) {
  CompBuilder f("f");
  {
    int64_t a = f.Param(0, "f32[]"), b = f.Param(1, "f32[]");
    int64_t two = f.Constant("f32[]", {2});
    int64_t m = f.Op("multiply", "f32[]", {a, two});
    f.Op("subtract", "f32[]", {m, b});
  }
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[3]"), y = c.Param(1, "f32[3]");
  c.Op("map", "f32[3]", {x, y}, [&](auto& i) { i.add_dimensions(0); i.add_called_computation_ids(f.id()); });
  ModuleBuilder mb;
  mb.Add(f);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {3}, {1, 2, 3}),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(1, 3, 5));
}

TEST(EvalSort, TwoOperandsByKeyIsStable) {
  CompBuilder lt("lt");
  {
    int64_t a = lt.Param(0, "s32[]"), b = lt.Param(1, "s32[]");
    lt.Param(2, "s32[]");
    lt.Param(3, "s32[]");
    lt.Op("compare", "pred[]", {a, b}, [](auto& i) { i.set_comparison_direction("LT"); });
  }
  CompBuilder c("main");
  int64_t k = c.Param(0, "s32[6]"), v = c.Param(1, "s32[6]");
  c.Op("sort", "(s32[6], s32[6])", {k, v}, [&](auto& i) {
    i.add_dimensions(0); i.set_is_stable(true); i.add_called_computation_ids(lt.id());
  });
  ModuleBuilder mb;
  mb.Add(lt);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<int32_t>(PrimitiveType::kS32, {6}, {3, 1, 3, 2, 1, 3}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {6}, {0, 1, 2, 3, 4, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->element(0).array()), ElementsAre(1, 1, 2, 3, 3, 3));
  EXPECT_THAT(ToVector<int32_t>(r->element(1).array()), ElementsAre(1, 4, 3, 0, 2, 5));
}

TEST(EvalSort, AComparatorThatIsNotOneCompareRunsOnScalars) {
  // Descending by |x|: compare(abs(a), abs(b)), GT.
  CompBuilder gt("absgt");
  {
    int64_t a = gt.Param(0, "f32[]"), b = gt.Param(1, "f32[]");
    int64_t aa = gt.Op("abs", "f32[]", {a}), ab = gt.Op("abs", "f32[]", {b});
    gt.Op("compare", "pred[]", {aa, ab}, [](auto& i) { i.set_comparison_direction("GT"); });
  }
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[5]");
  c.Op("sort", "f32[5]", {x}, [&](auto& i) { i.add_dimensions(0); i.add_called_computation_ids(gt.id()); });
  ModuleBuilder mb;
  mb.Add(gt);
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {5}, {1, -4, 2, 4, -3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(-4, 4, -3, 2, 1));
}

TEST(EvalTopK, LargestFirstTiesByIndex) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2,4]");
  c.Op("topk", "(f32[2,2], s32[2,2])", {x}, [](auto& i) { i.set_k(2); i.set_largest(true); });
  ModuleBuilder mb;
  mb.Add(c);
  auto mod = mb.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2, 4}, {1, 5, 5, 2, -1, -3, 0, -2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->element(0).array()), ElementsAre(5, 5, 0, -1));
  EXPECT_THAT(ToVector<int32_t>(r->element(1).array()), ElementsAre(1, 2, 2, 0));
}

}  // namespace
}  // namespace decomposed::eval
