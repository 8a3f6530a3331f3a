// hlo/summary.h: every count and FLOP figure worked out by hand for small
// modules built through the builder.
#include "decomposed/hlo/summary.h"

#include <gtest/gtest.h>

#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/shape_inference.h"

namespace decomposed::hlo {
namespace {

std::unique_ptr<HloModule> Make(const HloModuleBuilder& mb) {
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  EXPECT_TRUE(proto.ok()) << proto.status();
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

TEST(SummarizeModule, CountsParametersOpcodesConstantsAndDotFlops) {
  HloModuleBuilder mb("mlp");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp x = main.Parameter(0, MakeArrayShape(xla::F32, {4, 8}), "x");
  HloOp w = main.Parameter(1, MakeArrayShape(xla::F32, {8, 16}), "w");
  // dot [4,8] x [8,16] -> [4,16]: 2 * 64 * 8 = 1024 FLOP.
  HloOp d = main.Dot(x, w, MakeDotDimensionNumbers({1}, {0}));
  HloOp c = main.ConstantR0(xla::F32, 0.5);  // 4 bytes
  HloOp b = main.Broadcast(c, {4, 16}, {});
  HloOp mul = main.Binary(HloOpcode::kMultiply, d, b);
  HloOp gelu = main.CustomCall("AwsNeuronGelu", std::vector<HloOp>{d},
                               MakeArrayShape(xla::F32, {4, 16}));
  main.Tuple({mul, gelu});
  std::unique_ptr<HloModule> m = Make(mb);
  ModuleSummary s = SummarizeModule(*m);
  EXPECT_EQ(s.name, "mlp");
  EXPECT_EQ(s.entry, "main");
  ASSERT_EQ(s.parameters.size(), 2u);
  EXPECT_EQ(s.parameters[0].name, "x");
  EXPECT_EQ(s.parameters[0].shape, "f32[4,8]");
  EXPECT_EQ(s.parameters[1].number, 1);
  EXPECT_EQ(s.parameters[1].shape, "f32[8,16]");
  EXPECT_EQ(s.result, "(f32[4,16], f32[4,16])");
  EXPECT_EQ(s.computation_count, 1);
  // 2 parameters, dot, constant, broadcast, multiply, custom-call, tuple.
  EXPECT_EQ(s.instruction_count, 8);
  EXPECT_EQ(s.opcodes.at("parameter"), 2);
  EXPECT_EQ(s.opcodes.at("dot"), 1);
  EXPECT_EQ(s.custom_call_targets.at("AwsNeuronGelu"), 1);
  EXPECT_EQ(s.constant_count, 1);
  EXPECT_EQ(s.constant_bytes, 4u);
  EXPECT_EQ(s.elided_constant_count, 0);
  EXPECT_EQ(s.dot_flops, 1024);
  EXPECT_EQ(s.convolution_flops, 0);
  nlohmann::ordered_json j = s.ToJson();
  EXPECT_EQ(j["parameters"][1]["shape"], "f32[8,16]");
  EXPECT_TRUE(j["parameters"][0]["neff_name"].is_null());
  EXPECT_EQ(j["custom_call_targets"]["AwsNeuronGelu"], 1);
  EXPECT_EQ(j["constants"]["bytes"], 4);
  EXPECT_EQ(j["flops"]["total"], 1024.0);
  EXPECT_TRUE(j["collectives"].empty());
  EXPECT_EQ(s.OneLine(),
            "module mlp: 1 computation, 8 instructions, entry main (2 "
            "parameters) -> (f32[4,16], f32[4,16]); 1 dot, 1 custom-call; "
            "1.02 kFLOP");
}

TEST(SummarizeModule, BatchDotAndConvolutionFlops) {
  HloModuleBuilder mb("conv");
  HloComputationBuilder& main = mb.AddEntryComputation();
  // Batch dot [3,4,5] x [3,5,6] -> [3,4,6]: 2 * 72 * 5 = 720.
  HloOp a = main.Parameter(0, MakeArrayShape(xla::F32, {3, 4, 5}));
  HloOp b = main.Parameter(1, MakeArrayShape(xla::F32, {3, 5, 6}));
  HloOp d = main.Dot(a, b, MakeDotDimensionNumbers({2}, {1}, {0}, {0}));
  // Convolution input [1,6,6,2] (b01f), kernel [3,3,2,4] (01io), no
  // padding: output [1,4,4,4] = 64 elements; per output 3*3*2 = 18
  // multiply-adds: 2 * 64 * 18 = 2304.
  HloOp in = main.Parameter(2, MakeArrayShape(xla::F32, {1, 6, 6, 2}));
  HloOp k = main.Parameter(3, MakeArrayShape(xla::F32, {3, 3, 2, 4}));
  HloOp conv = main.Convolution(
      in, k, MakeWindow({3, 3}),
      *ConvolutionDimensionNumbersFromLabels("b01f_01io->b01f"));
  main.Tuple({d, conv});
  std::unique_ptr<HloModule> m = Make(mb);
  ModuleSummary s = SummarizeModule(*m);
  EXPECT_EQ(s.dot_flops, 720);
  EXPECT_EQ(s.convolution_flops, 2304);
  EXPECT_EQ(s.flops_unknown, 0);
}

TEST(SummarizeModule, CollectivesWithGroupsAndChannels) {
  HloModuleBuilder mb("tp");
  HloComputationBuilder& sum = mb.AddComputation("sum");
  sum.Add(sum.Parameter(0, MakeScalarShape(xla::F32)),
          sum.Parameter(1, MakeScalarShape(xla::F32)));
  HloComputationBuilder& main = mb.AddEntryComputation();
  HloOp x = main.Parameter(0, MakeArrayShape(xla::F32, {8}));
  CollectiveOptions o;
  o.replica_groups = {{0, 1}, {2, 3}};
  o.channel_id = 7;
  o.use_global_device_ids = true;
  main.AllReduce({x}, sum, o);
  std::unique_ptr<HloModule> m = Make(mb);
  ModuleSummary s = SummarizeModule(*m);
  EXPECT_EQ(s.computation_count, 2);
  ASSERT_EQ(s.collectives.size(), 1u);
  const ModuleSummary::Collective& c = s.collectives[0];
  EXPECT_EQ(c.opcode, "all-reduce");
  EXPECT_EQ(c.computation, "main");
  EXPECT_EQ(c.channel_id, 7);
  EXPECT_TRUE(c.use_global_device_ids);
  EXPECT_EQ(c.replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  nlohmann::ordered_json j = s.ToJson();
  EXPECT_EQ(j["collectives"][0]["replica_groups"].dump(), "[[0,1],[2,3]]");
  EXPECT_EQ(j["collectives"][0]["channel_id"], 7);
}

TEST(SummarizeModule, ElidedConstantsAreCountedNotSized) {
  HloModuleBuilder mb("e");
  HloComputationBuilder& main = mb.AddEntryComputation();
  HloOp big = main.ConstantArray(xla::F32, {4, 4}, std::vector<double>(16, 1.0));
  main.Tuple({big, main.ConstantR1Int(xla::S32, {1, 2, 3})});
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  // Drop the data of the first constant, as a text dump's `{...}` does.
  for (xla::HloInstructionProto& in :
       *proto->mutable_computations(0)->mutable_instructions()) {
    if (in.opcode() == "constant" && in.shape().dimensions_size() == 2) {
      xla::ShapeProto shape = in.literal().shape();
      in.mutable_literal()->Clear();
      *in.mutable_literal()->mutable_shape() = shape;
    }
  }
  std::unique_ptr<HloModule> m = *HloModule::Create(*proto);
  ModuleSummary s = SummarizeModule(*m);
  EXPECT_EQ(s.constant_count, 2);
  EXPECT_EQ(s.elided_constant_count, 1);
  EXPECT_EQ(s.constant_bytes, 12u);  // s32[3] only
  EXPECT_NE(s.OneLine().find("; 1 constant without data"), std::string::npos)
      << s.OneLine();
}

TEST(SummarizeModule, MalformedDotAddsNoFlopsAndIsCounted) {
  HloModuleBuilder mb("bad");
  HloComputationBuilder& main = mb.AddEntryComputation();
  HloOp a = main.Parameter(0, MakeArrayShape(xla::F32, {2, 3}));
  HloOp b = main.Parameter(1, MakeArrayShape(xla::F32, {3, 2}));
  HloOp d = main.Dot(a, b, MakeDotDimensionNumbers({1}, {0}));
  // A contracting dimension out of range, as a hostile proto may say.
  main.mutable_proto(d)->mutable_dot_dimension_numbers()->set_lhs_contracting_dimensions(0, 9);
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  std::unique_ptr<HloModule> m = *HloModule::Create(*proto);
  ModuleSummary s = SummarizeModule(*m);
  EXPECT_EQ(s.dot_flops, 0);
  EXPECT_EQ(s.flops_unknown, 1);
}

}  // namespace
}  // namespace decomposed::hlo
