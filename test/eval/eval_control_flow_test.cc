// call, while (and its iteration guard), conditional with a pred and an
// index selector (out of range: the last branch), fusion, a call cycle
// stopped by kMaxCallDepth.
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

// while (i < n) { i += 1; acc *= 2 } over (s32 i, f32 acc).
struct Loop {
  CompBuilder cond{"cond"}, body{"body"}, main{"main"};
  std::unique_ptr<hlo::HloModule> module;
  explicit Loop(int n) {
    const char* st = "(s32[], f32[2])";
    {
      int64_t p = cond.Param(0, st);
      int64_t i = cond.Op("get-tuple-element", "s32[]", {p}, [](auto& x) { x.set_tuple_index(0); });
      int64_t lim = cond.Constant("s32[]", {double(n)});
      cond.Op("compare", "pred[]", {i, lim}, [](auto& x) { x.set_comparison_direction("LT"); });
    }
    {
      int64_t p = body.Param(0, st);
      int64_t i = body.Op("get-tuple-element", "s32[]", {p}, [](auto& x) { x.set_tuple_index(0); });
      int64_t a = body.Op("get-tuple-element", "f32[2]", {p}, [](auto& x) { x.set_tuple_index(1); });
      int64_t one = body.Constant("s32[]", {1});
      int64_t two = body.Constant("f32[]", {2});
      int64_t i1 = body.Op("add", "s32[]", {i, one});
      int64_t b2 = body.Op("broadcast", "f32[2]", {two});
      int64_t a2 = body.Op("multiply", "f32[2]", {a, b2});
      body.Op("tuple", st, {i1, a2});
    }
    int64_t x = main.Param(0, "f32[2]");
    int64_t zero = main.Constant("s32[]", {0});
    int64_t t = main.Op("tuple", st, {zero, x});
    int64_t w = main.Op("while", st, {t}, [&](auto& i) {
      // XLA's order: the body, then the condition.
      i.add_called_computation_ids(body.id());
      i.add_called_computation_ids(cond.id());
    });
    main.Op("get-tuple-element", "f32[2]", {w}, [](auto& x) { x.set_tuple_index(1); });
    ModuleBuilder m;
    m.Add(cond);
    m.Add(body);
    m.Add(main);
    module = m.Build();
  }
};

TEST(EvalControlFlow, WhileRunsTheBodyUntilTheCondition) {
  Loop l(5);
  auto r = testing::Run(*l.module, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, -3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(32, -96));
}

TEST(EvalControlFlow, WhileGuardStopsARunawayLoop) {
  Loop l(1000);
  EvalOptions o;
  o.max_loop_iterations = 10;
  auto r = testing::Run(*l.module, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 1})}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("max_loop_iterations"));
}

TEST(EvalControlFlow, ConditionalByPredAndByIndex) {
  CompBuilder neg("neg"), dbl("dbl"), sq("sq");
  { int64_t p = neg.Param(0, "f32[]"); neg.Op("negate", "f32[]", {p}); }
  { int64_t p = dbl.Param(0, "f32[]"); dbl.Op("add", "f32[]", {p, p}); }
  { int64_t p = sq.Param(0, "f32[]"); sq.Op("multiply", "f32[]", {p, p}); }
  for (bool by_pred : {true, false}) {
    CompBuilder c("main");
    int64_t s = c.Param(0, by_pred ? "pred[]" : "s32[]");
    int64_t x = c.Param(1, "f32[]");
    std::vector<int64_t> ops = {s, x, x};
    if (!by_pred) ops.push_back(x);
    c.Op("conditional", "f32[]", ops, [&](auto& i) {
      i.add_called_computation_ids(neg.id());
      i.add_called_computation_ids(dbl.id());
      if (!by_pred) i.add_called_computation_ids(sq.id());
    });
    ModuleBuilder m;
    m.Add(neg); m.Add(dbl); m.Add(sq); m.Add(c);
    auto mod = m.Build();
    auto x3 = MakeArray<float>(PrimitiveType::kF32, {}, {3});
    if (by_pred) {
      auto t = testing::Run(*mod, {MakeArray<uint8_t>(PrimitiveType::kPred, {}, {1}), x3});
      auto f = testing::Run(*mod, {MakeArray<uint8_t>(PrimitiveType::kPred, {}, {0}), x3});
      ASSERT_TRUE(t.ok() && f.ok());
      EXPECT_EQ(ToVector<float>(t->array())[0], -3);
      EXPECT_EQ(ToVector<float>(f->array())[0], 6);
    } else {
      for (auto [idx, want] : {std::pair{0, -3.0f}, {1, 6.0f}, {2, 9.0f}, {7, 9.0f}, {-1, 9.0f}}) {
        auto r = testing::Run(*mod, {MakeArray<int32_t>(PrimitiveType::kS32, {}, {idx}), x3});
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(ToVector<float>(r->array())[0], want) << idx;
      }
    }
  }
}

TEST(EvalControlFlow, CallAndFusionRunTheirComputations) {
  CompBuilder f("fused");
  { int64_t a = f.Param(0, "f32[2]"), b = f.Param(1, "f32[2]"); f.Op("subtract", "f32[2]", {a, b}); }
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2]"), y = c.Param(1, "f32[2]");
  int64_t fu = c.Op("fusion", "f32[2]", {x, y}, [&](auto& i) { i.set_fusion_kind("kLoop"); i.add_called_computation_ids(f.id()); });
  c.Op("call", "f32[2]", {fu, y}, [&](auto& i) { i.add_called_computation_ids(f.id()); });
  ModuleBuilder m;
  m.Add(f);
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {10, 20}),
                               MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(8, 16));
}

TEST(EvalControlFlow, InnerErrorsNameTheInnerInstructionAndTheCaller) {
  CompBuilder f("inner");
  { int64_t a = f.Param(0, "f32[2]"); f.Op("rng-bit-generator", "u32[2]", {a}); }
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2]");
  c.Op("call", "u32[2]", {x}, [&](auto& i) { i.add_called_computation_ids(f.id()); });
  ModuleBuilder m;
  m.Add(f);
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("computation \"inner\""));
  EXPECT_THAT(r.status().message(), HasSubstr("(rng-bit-generator)"));
  EXPECT_THAT(r.status().message(), HasSubstr("--substitute"));
  EXPECT_THAT(r.status().message(), HasSubstr("called from computation \"main\""));
}

}  // namespace
}  // namespace decomposed::eval
