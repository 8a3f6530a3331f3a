// The module builder (hlo/builder.h), literals, and RandomModule
// (hlo/random_module.h).
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/serialize.h"

#include <set>
#include <string>

#include "decomposed/hlo/random_module.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/hlo/validate.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

std::string Bytes(const std::string& s) {
  std::string out;
  for (unsigned char c : s) absl::StrAppend(&out, absl::Hex(c, absl::kZeroPad2));
  return out;
}

// Deterministic bytes (map fields sorted by key).
std::string Serialized(const xla::HloModuleProto& m) {
  return DeterministicSerialization(m);
}

const xla::HloComputationProto* Find(const xla::HloModuleProto& m,
                                     std::string_view name) {
  for (const auto& c : m.computations()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

TEST(HloBuilderTest, IdsNamesShapesAndOrder) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& main = mb.AddEntryComputation("main");  // id 1
  HloComputationBuilder& sum = mb.AddComputation("sum");         // id 2
  HloOp x = sum.Parameter(0, MakeScalarShape(xla::F32), "x");    // id 3
  HloOp y = sum.Parameter(1, MakeScalarShape(xla::F32), "y");    // id 4
  HloOp s = sum.Add(x, y);                                       // id 5
  EXPECT_EQ(s.name(), "add.5");
  HloOp p = main.Parameter(0, MakeArrayShape(xla::F32, {2, 3}));  // id 6
  EXPECT_EQ(p.name(), "parameter.6");
  HloOp zero = main.ConstantR0(xla::F32, 0);                     // id 7
  HloOp r = main.Reduce({p}, {zero}, {1}, sum);                  // id 8
  EXPECT_EQ(r.id(), 8);
  EXPECT_EQ(r.name(), "reduce.8");
  EXPECT_EQ(DescribeShape(r.shape()), "f32[2]");
  HloOp e = main.Exp(p);                                         // id 9
  HloOp t = main.Tuple({r, e});                                  // id 10
  EXPECT_EQ(DescribeShape(t.shape()), "(f32[2], f32[2,3])");
  ASSERT_TRUE(mb.status().ok()) << mb.status();

  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name(), "m");
  ASSERT_EQ(m->computations_size(), 2);
  // The callee first, the entry last.
  EXPECT_EQ(m->computations(0).name(), "sum");
  EXPECT_EQ(m->computations(1).name(), "main");
  EXPECT_EQ(m->entry_computation_name(), "main");
  EXPECT_EQ(m->entry_computation_id(), 1);
  EXPECT_EQ(m->id(), 1);
  const xla::HloComputationProto& c = m->computations(1);
  EXPECT_EQ(c.id(), 1);
  EXPECT_EQ(c.root_id(), 10);  // the last instruction
  EXPECT_EQ(c.instructions(2).opcode(), "reduce");
  EXPECT_EQ(c.instructions(2).called_computation_ids(0), 2);
  EXPECT_EQ(c.instructions(2).operand_ids(0), 6);
  EXPECT_EQ(c.instructions(2).operand_ids(1), 7);
  EXPECT_EQ(c.instructions(2).dimensions(0), 1);
  // Program shapes: parameters by number with names; host_program_shape
  // without names, as XLA writes it.
  EXPECT_EQ(DescribeProgramShape(c.program_shape()),
            "(f32[2,3]) -> (f32[2], f32[2,3])");
  EXPECT_EQ(c.program_shape().parameter_names(0), "parameter.6");
  EXPECT_EQ(DescribeProgramShape(m->host_program_shape()),
            "(f32[2,3]) -> (f32[2], f32[2,3])");
  EXPECT_EQ(m->host_program_shape().parameter_names_size(), 0);
  EXPECT_EQ(DescribeProgramShape(m->computations(0).program_shape()),
            "(f32[], f32[]) -> f32[]");
  // Layouts: the default, major-to-minor.
  EXPECT_EQ(DescribeShape(c.instructions(0).shape(), true), "f32[2,3]{1,0}");
  EXPECT_TRUE(ValidateModuleProto(*m).ok()) << ValidateModuleProto(*m);
}

TEST(HloBuilderTest, ErrorsAreKeptAndNameTheInstruction) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp a = main.Parameter(0, MakeArrayShape(xla::F32, {2}));  // id 2
  HloOp b = main.Parameter(1, MakeArrayShape(xla::F32, {3}));  // id 3
  HloOp bad = main.Add(a, b);
  EXPECT_FALSE(bad.valid());
  const std::string want =
      "computation \"main\", instruction \"add.4\": add: expected operands of "
      "the same dimensions, found f32[2] and f32[3]";
  EXPECT_EQ(mb.status().message(), want);
  EXPECT_EQ(mb.status().code(), absl::StatusCode::kInvalidArgument);
  // Every later call returns an invalid op; the first error stays.
  EXPECT_FALSE(main.Exp(a).valid());
  EXPECT_FALSE(main.Negate(bad).valid());
  EXPECT_EQ(mb.Build().status().message(), want);
}

TEST(HloBuilderTest, OperandsOfAnotherComputationAndSealing) {
  {
    HloModuleBuilder mb("m");
    HloComputationBuilder& f = mb.AddComputation("f");
    HloOp x = f.Parameter(0, MakeScalarShape(xla::F32), "x");
    HloComputationBuilder& main = mb.AddEntryComputation("main");
    main.Negate(x);
    EXPECT_EQ(mb.status().message(),
              "computation \"main\", instruction \"negate.4\": expected "
              "operands of this computation, found operand 0 \"x\" of "
              "computation \"f\"");
  }
  {
    HloModuleBuilder mb("m");
    HloComputationBuilder& f = mb.AddComputation("f");
    HloOp x = f.Parameter(0, MakeScalarShape(xla::F32), "x");
    HloComputationBuilder& main = mb.AddEntryComputation("main");
    main.Call(f, {main.Parameter(0, MakeScalarShape(xla::F32))});
    f.Negate(x);  // f was called: its signature is fixed
    EXPECT_EQ(mb.status().message(),
              "computation \"f\", instruction \"negate.6\": expected "
              "instructions added before the computation is called, found it "
              "called already");
  }
  {
    HloModuleBuilder mb("m");
    HloComputationBuilder& main = mb.AddEntryComputation("main");
    main.Parameter(0, MakeScalarShape(xla::F32), "p");
    main.Parameter(1, MakeScalarShape(xla::F32), "p");
    EXPECT_EQ(mb.status().message(),
              "computation \"main\", instruction \"p\": expected a name unique "
              "in the module, found it used before");
  }
  {
    HloModuleBuilder mb("m");
    EXPECT_EQ(mb.Build().status().message(),
              "module \"m\": expected an entry computation, found none");
    HloComputationBuilder& main = mb.AddEntryComputation("main");
    main.Parameter(1, MakeScalarShape(xla::F32));
    EXPECT_EQ(mb.Build().status().message(),
              "computation \"main\": expected parameters numbered 0 to 0, "
              "found 1 (\"parameter.2\")");
  }
}

TEST(HloBuilderTest, ControlFlowKeepsXlaOrderOfCalledComputations) {
  HloModuleBuilder mb("loop");
  const ShapeProto s32 = MakeScalarShape(xla::S32);
  HloComputationBuilder& cond = mb.AddComputation("cond");
  cond.Compare(cond.Parameter(0, s32), cond.ConstantR0Int(xla::S32, 10),
               ComparisonDirection::kLt);
  HloComputationBuilder& body = mb.AddComputation("body");
  HloOp i = body.Parameter(0, s32);
  body.Add(i, body.ConstantR0Int(xla::S32, 1));
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp w = main.While(cond, body, main.ConstantR0Int(xla::S32, 0));
  EXPECT_EQ(DescribeShape(w.shape()), "s32[]");
  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const xla::HloComputationProto* entry = Find(*m, "main");
  ASSERT_NE(entry, nullptr);
  const xla::HloInstructionProto& wp = entry->instructions(1);
  ASSERT_EQ(wp.called_computation_ids_size(), 2);
  EXPECT_EQ(wp.called_computation_ids(0), Find(*m, "body")->id());
  EXPECT_EQ(wp.called_computation_ids(1), Find(*m, "cond")->id());
  absl::StatusOr<std::unique_ptr<HloModule>> view = HloModule::Create(*m);
  ASSERT_TRUE(view.ok());
  const HloInstruction* vw = (*view)->FindInstruction(wp.name());
  EXPECT_EQ(vw->while_body()->name(), "body");
  EXPECT_EQ(vw->while_condition()->name(), "cond");
  EXPECT_TRUE(ValidateModule(**view).ok()) << ValidateModule(**view);

  // A while whose condition returns s32 is refused by the rule.
  HloModuleBuilder bad("bad");
  HloComputationBuilder& c2 = bad.AddComputation("cond");
  c2.Parameter(0, s32);
  HloComputationBuilder& b2 = bad.AddComputation("body");
  b2.Parameter(0, s32);
  HloComputationBuilder& m2 = bad.AddEntryComputation("main");
  m2.While(c2, b2, m2.ConstantR0Int(xla::S32, 0));
  EXPECT_EQ(bad.status().message(),
            "computation \"main\", instruction \"while.7\": while: expected a "
            "condition returning pred[], found (s32[]) -> s32[]");
}

TEST(HloBuilderTest, AttributesAndOverrides) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp p = main.Parameter(0, MakeArrayShape(xla::F32, {4}), "p");
  HloOp n = main.Negate(p);
  xla::OpMetadata md;
  md.set_op_type("aten__neg");
  md.set_source_line(7);
  main.SetMetadata(n, md);
  main.SetFrontendAttribute(n, "neff_output_names", "output0");
  xla::OpSharding sh;
  sh.set_type(xla::OpSharding::REPLICATED);
  main.SetSharding(n, sh);
  HloOp c = main.CustomCall("AwsNeuronSoftmax", {n},
                            MakeArrayShape(xla::F32, {4}), "0");
  main.AddControlDependency(n, c);
  main.SetRoot(n);
  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const xla::HloComputationProto& e = m->computations(0);
  EXPECT_EQ(e.root_id(), n.id());
  const xla::HloInstructionProto& np = e.instructions(1);
  EXPECT_EQ(np.metadata().op_type(), "aten__neg");
  EXPECT_EQ(np.frontend_attributes().map().at("neff_output_names"), "output0");
  EXPECT_EQ(np.sharding().type(), xla::OpSharding::REPLICATED);
  const xla::HloInstructionProto& cp = e.instructions(2);
  EXPECT_EQ(cp.custom_call_target(), "AwsNeuronSoftmax");
  EXPECT_EQ(cp.backend_config(), "0");
  EXPECT_EQ(cp.control_predecessor_ids(0), n.id());
  EXPECT_TRUE(ValidateModuleProto(*m).ok());

  // SetShape overrides the rule's shape: validation then refuses it.
  main.SetShape(n, MakeArrayShape(xla::F32, {5}));
  absl::StatusOr<xla::HloModuleProto> m2 = mb.Build();
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ(ValidateModuleProto(*m2).message(),
            "computation \"main\", instruction \"negate.3\" (id 3): expected "
            "shape f32[4], found f32[5]");
}

TEST(HloBuilderTest, EveryFamilyBuildsAValidModule) {
  HloModuleBuilder mb("families");
  const ShapeProto f = MakeScalarShape(xla::F32);
  HloComputationBuilder& add = mb.AddComputation("add");
  add.Add(add.Parameter(0, f), add.Parameter(1, f));
  HloComputationBuilder& ge = mb.AddComputation("ge");
  ge.Compare(ge.Parameter(0, f), ge.Parameter(1, f), ComparisonDirection::kGe);
  HloComputationBuilder& lt = mb.AddComputation("lt");
  lt.Compare(lt.Parameter(0, f), lt.Parameter(1, f), ComparisonDirection::kLt);
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp x = main.Parameter(0, MakeArrayShape(xla::F32, {4, 6}), "x");
  HloOp zero = main.ConstantR0(xla::F32, 0);
  HloOp idx = main.ConstantR1Int(xla::S32, {0, 3});
  std::vector<HloOp> out;
  out.push_back(main.Dot(x, main.Transpose(x, {1, 0}),
                         MakeDotDimensionNumbers({1}, {0})));
  out.push_back(main.ReduceWindow({x}, {zero}, MakeWindow({2, 3}, {2, 3}), add));
  out.push_back(main.SelectAndScatter(
      x, ge, MakeWindow({2, 3}, {2, 3}),
      main.Parameter(1, MakeArrayShape(xla::F32, {2, 2}), "src"), zero, add));
  out.push_back(main.Sort({x}, 1, lt));
  out.push_back(main.Gather(x, idx, MakeGatherDimensionNumbers({1}, {0}, {0}, 1),
                            {1, 6}));
  out.push_back(main.Pad(x, zero, MakePaddingConfig({{1, -1, 1}, {0, 0, 0}})));
  out.push_back(main.Slice(x, {0, 1}, {4, 6}, {2, 2}));
  out.push_back(main.Broadcast(zero, {3}, {}));
  out.push_back(main.Iota(MakeArrayShape(xla::S32, {5}), 0));
  out.push_back(main.AllReduce({x}, add, {{{0, 1}}, 7, false, false}));
  for (const HloOp& o : out) EXPECT_TRUE(o.valid()) << mb.status();
  ASSERT_TRUE(mb.status().ok()) << mb.status();
  EXPECT_EQ(DescribeShape(out[1].shape()), "f32[2,2]");
  EXPECT_EQ(DescribeShape(out[4].shape()), "f32[2,6]");
  EXPECT_EQ(DescribeShape(out[5].shape()), "f32[7,6]");
  EXPECT_EQ(DescribeShape(out[6].shape()), "f32[2,3]");
  main.Tuple(out);
  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(ValidateModuleProto(*m).ok()) << ValidateModuleProto(*m);
}

TEST(LiteralTest, EncodingsPerType) {
  auto lit = [](int type, std::initializer_list<double> v) {
    absl::StatusOr<xla::LiteralProto> l =
        MakeLiteral(type, {static_cast<int64_t>(v.size())}, std::vector<double>(v));
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? *l : xla::LiteralProto();
  };
  // f16 1.0 = 0x3c00, -2.0 = 0xc000 (little endian).
  EXPECT_EQ(Bytes(lit(xla::F16, {1.0, -2.0}).f16s()), "003c00c0");
  // bf16 1.0 = 0x3f80; 1 + 2^-8 is halfway to 1 + 2^-7: to even, 1.0;
  // 1 + 3 * 2^-8 is halfway between mantissas 1 and 2: to 2 (0x3f82).
  EXPECT_EQ(Bytes(lit(xla::BF16, {1.0, 1.00390625, 1.01171875}).bf16s()),
            "803f803f823f");
  // f16: 65519 rounds to the largest finite 65504 (0x7bff); 65520 is
  // halfway to 65536 and goes to infinity (0x7c00); 2^-24 is the smallest
  // subnormal (0x0001), 2^-25 rounds to even zero.
  EXPECT_EQ(Bytes(lit(xla::F16, {65519, 65520, 5.9604644775390625e-08,
                                 2.98023223876953125e-08})
                      .f16s()),
            "ff7b007c01000000");
  // f8e4m3fn: 1.0 = 0 0111 000 = 0x38; 448 the largest (0x7e); 460 rounds to
  // it, 464 (halfway past it) is NaN (0x7f): no infinity.
  EXPECT_EQ(Bytes(lit(xla::F8E4M3FN, {1.0, 448, 460, 464}).f8e4m3fns()),
            "387e7e7f");
  // f8e5m2: 1.0 = 0 01111 00 = 0x3c; -0.5 = 1 01110 00 = 0xb8.
  EXPECT_EQ(Bytes(lit(xla::F8E5M2, {1.0, -0.5}).f8e5m2s()), "3cb8");
  // Integers: s8 and s4 one byte each (s4 sign-extended), s16 little endian.
  EXPECT_EQ(Bytes(lit(xla::S8, {-1, 127}).s8s()), "ff7f");
  EXPECT_EQ(Bytes(lit(xla::S4, {-8, 7}).s4s()), "f807");
  EXPECT_EQ(Bytes(lit(xla::S16, {-2, 0x1234}).s16s()), "feff3412");
  xla::LiteralProto p = lit(xla::PRED, {0, 2});
  ASSERT_EQ(p.preds_size(), 2);
  EXPECT_FALSE(p.preds(0));
  EXPECT_TRUE(p.preds(1));
  xla::LiteralProto c = lit(xla::C64, {1.5});
  ASSERT_EQ(c.c64s_size(), 2);
  EXPECT_EQ(c.c64s(0), 1.5f);
  EXPECT_EQ(c.c64s(1), 0.0f);
  EXPECT_EQ(DescribeShape(c.shape(), true), "c64[1]{0}");
  // Exact 64-bit integers.
  const uint64_t big[] = {18446744073709551615ull};
  absl::StatusOr<xla::LiteralProto> u = MakeUintLiteral(xla::U64, {1}, big);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->u64s(0), 18446744073709551615ull);
  // Values a type cannot hold.
  EXPECT_EQ(MakeLiteral(xla::S8, {1}, {300}).status().message(),
            "literal: expected values in [-128, 127] for s8, found 300 at index "
            "0");
  EXPECT_EQ(MakeLiteral(xla::S32, {1}, {1.5}).status().message(),
            "literal: expected integral values for s32, found 1.5 at index 0");
  EXPECT_EQ(MakeLiteral(xla::F32, {2}, {1}).status().message(),
            "literal: expected 2 values for f32[2], found 1");
  EXPECT_EQ(MakeLiteral(xla::TUPLE, {}, {1}).status().message(),
            "literal: expected an array element type, found tuple");
  // Every literal made here is one the constant rule accepts.
  for (int t : {xla::PRED, xla::S8, xla::U4, xla::S64, xla::U64, xla::F16,
                xla::BF16, xla::F64, xla::C128, xla::F8E4M3FNUZ,
                xla::F4E2M1FN, xla::F8E8M0FNU}) {
    absl::StatusOr<xla::LiteralProto> l = MakeLiteral(t, {2, 2}, {1, 0, 1, 1});
    ASSERT_TRUE(l.ok()) << ElementTypeName(t) << ": " << l.status();
    EXPECT_TRUE(InferConstantShape(*l).ok()) << ElementTypeName(t);
  }
}

TEST(LiteralTest, DimLabels) {
  absl::StatusOr<xla::ConvolutionDimensionNumbers> d =
      ConvolutionDimensionNumbersFromLabels("b01f_01io->b01f");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->input_batch_dimension(), 0);
  EXPECT_EQ(d->input_feature_dimension(), 3);
  EXPECT_EQ(d->input_spatial_dimensions(0), 1);
  EXPECT_EQ(d->input_spatial_dimensions(1), 2);
  EXPECT_EQ(d->kernel_input_feature_dimension(), 2);
  EXPECT_EQ(d->kernel_output_feature_dimension(), 3);
  EXPECT_EQ(d->kernel_spatial_dimensions(0), 0);
  EXPECT_EQ(d->output_feature_dimension(), 3);
  // Spatial digits may come in any order: "10" puts spatial 1 first.
  absl::StatusOr<xla::ConvolutionDimensionNumbers> e =
      ConvolutionDimensionNumbersFromLabels("f10b_io10->10bf");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->input_spatial_dimensions(0), 2);
  EXPECT_EQ(e->input_spatial_dimensions(1), 1);
  EXPECT_EQ(e->output_batch_dimension(), 2);
  EXPECT_EQ(ConvolutionDimensionNumbersFromLabels("b01f_01io").status().message(),
            "dim_labels \"b01f_01io\": expected <input>_<kernel>-><output>");
  EXPECT_EQ(ConvolutionDimensionNumbersFromLabels("b00f_01io->b01f")
                .status()
                .message(),
            "dim_labels \"b00f_01io->b01f\": expected an input label of b, f "
            "and spatial digits");
}

TEST(RandomModuleTest, ManySeedsValidateAndCoverEveryOpcode) {
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    absl::StatusOr<xla::HloModuleProto> m = RandomModule(seed);
    ASSERT_TRUE(m.ok()) << "seed " << seed << ": " << m.status();
    absl::StatusOr<std::unique_ptr<HloModule>> view = HloModule::Create(*m);
    ASSERT_TRUE(view.ok()) << "seed " << seed << ": " << view.status();
    std::vector<absl::Status> problems = ValidateModuleAll(**view);
    ASSERT_TRUE(problems.empty()) << "seed " << seed << ": "
                                  << problems.front().message();
    for (const auto& c : m->computations()) {
      for (const auto& i : c.instructions()) seen.insert(i.opcode());
    }
  }
  for (HloOpcode op : RandomModuleOpcodes()) {
    EXPECT_TRUE(seen.count(std::string(HloOpcodeString(op))))
        << HloOpcodeString(op) << " never generated";
  }
}

TEST(RandomModuleTest, DeterministicAndOptions) {
  absl::StatusOr<xla::HloModuleProto> a = RandomModule(42);
  absl::StatusOr<xla::HloModuleProto> b = RandomModule(42);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(Serialized(*a) == Serialized(*b));
  absl::StatusOr<xla::HloModuleProto> c = RandomModule(43);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(Serialized(*a) == Serialized(*c));
  RandomModuleOptions big;
  big.steps = 200;
  big.max_rank = 4;
  big.attributes = false;
  absl::StatusOr<xla::HloModuleProto> d = RandomModule(7, big);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(ValidateModuleProto(*d).ok()) << ValidateModuleProto(*d);
  for (const auto& comp : d->computations()) {
    for (const auto& i : comp.instructions()) {
      EXPECT_FALSE(i.has_metadata()) << i.name();
      EXPECT_EQ(i.control_predecessor_ids_size(), 0) << i.name();
    }
  }
}

}  // namespace
}  // namespace decomposed::hlo
