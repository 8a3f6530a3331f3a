// Custom calls: Neuron's built-in targets against their formulas, a target
// registered by the caller, and the error (with the way out) for an NKI
// kernel and for an unknown target; a substitute replaces the kernel.
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

std::unique_ptr<hlo::HloModule> CustomCallModule(std::string target, std::vector<std::string> params,
                                                 std::string out, std::string config = "") {
  CompBuilder c("main");
  std::vector<int64_t> ops;
  for (size_t i = 0; i < params.size(); ++i) ops.push_back(c.Param(static_cast<int64_t>(i), params[i]));
  c.Op("custom-call", out, ops, [&](auto& i) {
    i.set_custom_call_target(target);
    i.set_backend_config(config);
    i.set_name("kernel");
  });
  ModuleBuilder m;
  m.Add(c);
  return m.Build();
}

TEST(EvalCustomCall, NeuronSoftmaxOverTheConfiguredDim) {
  auto mod = CustomCallModule("AwsNeuronSoftmax", {"f32[2,2]"}, "f32[2,2]", "0");
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2, 2}, {0, 1, std::log(3.0f), 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> v = ToVector<float>(r->array());
  EXPECT_NEAR(v[0], 0.25, 1e-6);
  EXPECT_NEAR(v[2], 0.75, 1e-6);
  EXPECT_NEAR(v[1], 0.5, 1e-6);
}

TEST(EvalCustomCall, NeuronRmsNormGeluArgMaxTopK) {
  auto rms = CustomCallModule("AwsNeuronRmsNorm", {"f32[1,2]", "f32[2]", "f32[]"}, "f32[1,2]", "1");
  auto r = testing::Run(*rms, {MakeArray<float>(PrimitiveType::kF32, {1, 2}, {3, 4}),
                               MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2}),
                               MakeArray<float>(PrimitiveType::kF32, {}, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  const double rms_v = std::sqrt(12.5);
  EXPECT_NEAR(ToVector<float>(r->array())[1], 8 / rms_v, 1e-6);
  auto gelu = CustomCallModule("AwsNeuronGelu", {"f32[2]"}, "f32[2]");
  auto g = testing::Run(*gelu, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, -1})});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_NEAR(ToVector<float>(g->array())[0], 0.5 * (1 + std::erf(1 / std::sqrt(2.0))), 1e-6);
  auto am = CustomCallModule("AwsNeuronArgMax", {"f32[2,3]"}, "s32[2]", "1");
  auto a = testing::Run(*am, {MakeArray<float>(PrimitiveType::kF32, {2, 3}, {1, 9, 9, -1, -2, -3})});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(ToVector<int32_t>(a->array()), ElementsAre(1, 0));
  auto tk = CustomCallModule("AwsNeuronTopK", {"f32[4]"}, "(f32[2], u32[2])", "2");
  auto t = testing::Run(*tk, {MakeArray<float>(PrimitiveType::kF32, {4}, {1, 4, 2, 3})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(ToVector<float>(t->element(0).array()), ElementsAre(4, 3));
  EXPECT_THAT(ToVector<uint32_t>(t->element(1).array()), ElementsAre(1u, 3u));
}

TEST(EvalCustomCall, NkiKernelIsAnErrorWithTheWayOutAndASubstituteRuns) {
  auto mod = CustomCallModule("AwsNeuronCustomNativeKernel", {"f32[2]"}, "f32[2]", "opaque");
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("custom-call \"AwsNeuronCustomNativeKernel\""));
  EXPECT_THAT(r.status().message(), HasSubstr("NKI kernel"));
  EXPECT_THAT(r.status().message(), HasSubstr("--substitute kernel=FILE.npy"));
  EvalOptions o;
  o.substitutes["kernel"] = MakeArray<float>(PrimitiveType::kF32, {2}, {7, 8});
  auto s = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})}, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(ToVector<float>(s->array()), ElementsAre(7, 8));
  // A substitute of the wrong shape is refused.
  o.substitutes["kernel"] = MakeArray<float>(PrimitiveType::kF32, {3}, {7, 8, 9});
  auto bad = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("substitute"));
  // A CPU implementation of the kernel, registered by the caller, runs.
  CustomCallRegistry reg = BuiltinCustomCalls();
  reg.Register("AwsNeuronCustomNativeKernel",
               [](const CustomCallContext&, std::span<const Value> ops) -> absl::StatusOr<Value> {
                 const Array& x = ops[0].array();
                 absl::StatusOr<Array> out = Array::Allocate(x.type(), x.dims());
                 if (!out.ok()) return out.status();
                 for (int64_t i = 0; i < x.element_count(); ++i) {
                   out->mutable_data<float>()[i] = -x.data<float>()[i];
                 }
                 return Value(*out);
               });
  EvalOptions with_kernel;
  with_kernel.custom_calls = &reg;
  auto k = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})}, with_kernel);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(ToVector<float>(k->array()), ElementsAre(-1, -2));
}

TEST(EvalCustomCall, ACallerRegisteredTarget) {
  auto mod = CustomCallModule("MyTriple", {"f32[2]"}, "f32[2]");
  auto unknown = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("not known to the evaluator"));
  CustomCallRegistry reg = BuiltinCustomCalls();
  reg.Register("MyTriple", [](const CustomCallContext&, std::span<const Value> ops) -> absl::StatusOr<Value> {
    const Array& x = ops[0].array();
    absl::StatusOr<Array> out = Array::Allocate(x.type(), x.dims());
    if (!out.ok()) return out.status();
    for (int64_t i = 0; i < x.element_count(); ++i) out->mutable_data<float>()[i] = 3 * x.data<float>()[i];
    return Value(*out);
  });
  EvalOptions o;
  o.custom_calls = &reg;
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(3, 6));
}

}  // namespace
}  // namespace decomposed::eval
