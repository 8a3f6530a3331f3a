// The HLO printer (hlo/print.h).
#include "decomposed/hlo/print.h"

#include <bit>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace decomposed::hlo {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

using xla::F32;
using xla::PRED;
using xla::S32;

std::unique_ptr<HloModule> View(const xla::HloModuleProto& proto) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(proto);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::unique_ptr<HloModule> Build(const HloModuleBuilder& mb) {
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  EXPECT_TRUE(proto.ok()) << proto.status();
  return proto.ok() ? View(*proto) : nullptr;
}

std::string Print(const HloModule& m, HloTextStyle style,
                  bool large_constants = false,
                  const HloModuleTextExtras* extras = nullptr) {
  HloPrintOptions options;
  options.style = style;
  options.print_large_constants = large_constants;
  std::string text;
  StringSink sink(&text);
  absl::Status s = PrintHloModule(m, options, sink, extras);
  EXPECT_TRUE(s.ok()) << s;
  return text;
}

// The line of the instruction `name` (without its `%`), or "".
std::string LineOf(const std::string& text, const std::string& name) {
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    const std::string line(piece);
    if (line.size() < 2) continue;
    size_t at = 2;  // the indent
    if (line.compare(at, 5, "ROOT ") == 0) at += 5;
    if (line.compare(at, 1, "%") == 0) at += 1;
    if (line.compare(at, name.size() + 3, name + " = ") == 0) return line;
  }
  return "";
}

xla::HloModuleProto ParseProto(const std::string& text) {
  xla::HloModuleProto p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

// sum(x, y) = x + y on f32 scalars: ids 1 (computation), 2, 3, 4.
HloComputationBuilder& AddSum(HloModuleBuilder& mb) {
  HloComputationBuilder& sum = mb.AddComputation("sum");
  sum.Add(sum.Parameter(0, MakeScalarShape(F32), "x"),
          sum.Parameter(1, MakeScalarShape(F32), "y"));
  return sum;
}

// --- Whole modules in the three styles --------------------------------------------

class HloPrintBasicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HloModuleBuilder mb("m");
    HloComputationBuilder& sum = AddSum(mb);              // 1..4
    HloComputationBuilder& main = mb.AddEntryComputation("main");  // 5
    HloOp p = main.Parameter(0, MakeArrayShape(F32, {2, 3}), "p");  // 6
    HloOp zero = main.ConstantR0(F32, 0);                           // 7
    HloOp r = main.Reduce({p}, {zero}, {1}, sum);                   // 8
    main.Tuple({r, main.Exp(p)});                                   // 9, 10
    module_ = Build(mb);
    ASSERT_NE(module_, nullptr);
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(HloPrintBasicTest, Long) {
  EXPECT_EQ(Print(*module_, HloTextStyle::kLong),
            R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2,3]{1,0})}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[2,3]) -> (f32[2], f32[2,3]) {
  %p = f32[2,3]{1,0} parameter(0)
  %constant.7 = f32[] constant(0)
  %reduce.8 = f32[2]{0} reduce(f32[2,3]{1,0} %p, f32[] %constant.7), dimensions={1}, to_apply=%sum
  %exponential.9 = f32[2,3]{1,0} exponential(f32[2,3]{1,0} %p)
  ROOT %tuple.10 = (f32[2]{0}, f32[2,3]{1,0}) tuple(f32[2]{0} %reduce.8, f32[2,3]{1,0} %exponential.9)
}

)");
}

TEST_F(HloPrintBasicTest, Modern) {
  EXPECT_EQ(Print(*module_, HloTextStyle::kModern),
            R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2,3]{1,0})}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.4 = f32[] add(%x, %y)
}

ENTRY %main (p: f32[2,3]) -> (f32[2], f32[2,3]) {
  %p = f32[2,3]{1,0} parameter(0)
  %constant.7 = f32[] constant(0)
  %reduce.8 = f32[2]{0} reduce(%p, %constant.7), dimensions={1}, to_apply=%sum
  %exponential.9 = f32[2,3]{1,0} exponential(%p)
  ROOT %tuple.10 = (f32[2]{0}, f32[2,3]{1,0}) tuple(%reduce.8, %exponential.9)
}

)");
}

TEST_F(HloPrintBasicTest, Short) {
  EXPECT_EQ(Print(*module_, HloTextStyle::kShort),
            R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2,3]{1,0})}

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add.4 = f32[] add(x, y)
}

ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  constant.7 = f32[] constant(0)
  reduce.8 = f32[2]{0} reduce(p, constant.7), dimensions={1}, to_apply=sum
  exponential.9 = f32[2,3]{1,0} exponential(p)
  ROOT tuple.10 = (f32[2]{0}, f32[2,3]{1,0}) tuple(reduce.8, exponential.9)
}

)");
}

TEST_F(HloPrintBasicTest, StringAndSinkAgree) {
  HloPrintOptions options;
  std::string via_sink;
  StringSink sink(&via_sink);
  ASSERT_TRUE(PrintHloModule(*module_, options, sink).ok());
  EXPECT_EQ(PrintHloModuleToString(*module_, options), via_sink);
}

// --- Order -------------------------------------------------------------------------------

// Instructions print in XLA's post-order over the instruction list sorted by
// id: from each instruction without users, control predecessors (the last
// first) before operands (the first first). Proto order, ids and the
// post-order all differ here.
TEST(HloPrintOrderTest, InstructionsInXlasPostOrder) {
  std::unique_ptr<HloModule> m = View(ParseProto(R"pb(
    name: "order" entry_computation_id: 100
    computations {
      name: "main" id: 100 root_id: 9
      instructions { name: "b" opcode: "parameter" id: 1 parameter_number: 1
                     shape { element_type: F32 } }
      instructions { name: "a" opcode: "parameter" id: 2 parameter_number: 0
                     shape { element_type: F32 } }
      instructions { name: "neg" opcode: "negate" id: 7 operand_ids: 2
                     shape { element_type: F32 } }
      instructions { name: "unused" opcode: "multiply" id: 4 operand_ids: [1, 2]
                     shape { element_type: F32 } }
      instructions { name: "sum" opcode: "add" id: 8 operand_ids: [7, 1]
                     shape { element_type: F32 } }
      instructions { name: "side" opcode: "exponential" id: 10 operand_ids: 2
                     shape { element_type: F32 } }
      instructions { name: "side2" opcode: "negate" id: 11 operand_ids: 1
                     shape { element_type: F32 } }
      instructions { name: "r" opcode: "tuple" id: 9 operand_ids: 8
                     control_predecessor_ids: [10, 11]
                     shape { element_type: TUPLE tuple_shapes { element_type: F32 } } }
    }
    host_program_shape {
      parameters { element_type: F32 } parameters { element_type: F32 }
      result { element_type: TUPLE tuple_shapes { element_type: F32 } }
    })pb"));
  ASSERT_NE(m, nullptr);
  // Sorted by id: b1 a2 unused4 neg7 sum8 r9 side10 side11. Without users:
  // unused, r, side, side2 (control edges are not uses). unused: b, a,
  // unused. r: side2 (the last control predecessor, on top of the stack),
  // side, then sum's operands neg (b is done), sum, r.
  EXPECT_EQ(Print(*m, HloTextStyle::kLong),
            R"(HloModule order, entry_computation_layout={(f32[], f32[])->(f32[])}

ENTRY %main (a: f32[], b: f32[]) -> (f32[]) {
  %b = f32[] parameter(1)
  %a = f32[] parameter(0)
  %unused = f32[] multiply(f32[] %b, f32[] %a)
  %side2 = f32[] negate(f32[] %b)
  %side = f32[] exponential(f32[] %a)
  %neg = f32[] negate(f32[] %a)
  %sum = f32[] add(f32[] %neg, f32[] %b)
  ROOT %r = (f32[]) tuple(f32[] %sum), control-predecessors={%side, %side2}
}

)");
  // The short style drops control predecessors, not the order.
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kShort), "r"),
            "  ROOT r = (f32[]) tuple(sum)");
}

// Computations print callees first (a depth-first post-order over the
// computations sorted by id, from each computation nothing calls, in id
// order): an uncalled computation of a larger id comes after the entry.
TEST(HloPrintOrderTest, ComputationsInXlasPostOrder) {
  std::unique_ptr<HloModule> m = View(ParseProto(R"pb(
    name: "calls" entry_computation_id: 1
    computations {
      name: "unused" id: 2 root_id: 20
      instructions { name: "u" opcode: "parameter" id: 20 shape { element_type: F32 } }
    }
    computations {
      name: "c_a" id: 5 root_id: 51
      instructions { name: "pa" opcode: "parameter" id: 50 shape { element_type: F32 } }
      instructions { name: "ca" opcode: "call" id: 51 operand_ids: 50
                     called_computation_ids: 3 shape { element_type: F32 } }
    }
    computations {
      name: "c_b" id: 3 root_id: 31
      instructions { name: "pb" opcode: "parameter" id: 30 shape { element_type: F32 } }
      instructions { name: "nb" opcode: "negate" id: 31 operand_ids: 30
                     shape { element_type: F32 } }
    }
    computations {
      name: "main" id: 1 root_id: 12
      instructions { name: "p" opcode: "parameter" id: 10 shape { element_type: F32 } }
      instructions { name: "call1" opcode: "call" id: 11 operand_ids: 10
                     called_computation_ids: 3 shape { element_type: F32 } }
      instructions { name: "call2" opcode: "call" id: 12 operand_ids: 11
                     called_computation_ids: 5 shape { element_type: F32 } }
    }
    host_program_shape { parameters { element_type: F32 } result { element_type: F32 } })pb"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Print(*m, HloTextStyle::kShort), R"(HloModule calls, entry_computation_layout={(f32[])->f32[]}

c_b {
  pb = f32[] parameter(0)
  ROOT nb = f32[] negate(pb)
}

c_a {
  pa = f32[] parameter(0)
  ROOT ca = f32[] call(pa), to_apply=c_b
}

ENTRY main {
  p = f32[] parameter(0)
  call1 = f32[] call(p), to_apply=c_b
  ROOT call2 = f32[] call(call1), to_apply=c_a
}

unused {
  ROOT u = f32[] parameter(0)
}

)");
}

// A scheduled module prints is_scheduled and its sequence's order.
TEST(HloPrintOrderTest, ScheduleOrder) {
  xla::HloModuleProto proto = ParseProto(R"pb(
    name: "s" entry_computation_id: 1
    computations {
      name: "main" id: 1 root_id: 4
      instructions { name: "a" opcode: "parameter" id: 2 shape { element_type: F32 } }
      instructions { name: "b" opcode: "negate" id: 3 operand_ids: 2 shape { element_type: F32 } }
      instructions { name: "c" opcode: "exponential" id: 5 operand_ids: 2 shape { element_type: F32 } }
      instructions { name: "d" opcode: "add" id: 4 operand_ids: [3, 5] shape { element_type: F32 } }
    }
    host_program_shape { parameters { element_type: F32 } result { element_type: F32 } }
    schedule { sequences { key: 1 value { instruction_ids: [2, 5, 3, 4] } } })pb");
  std::unique_ptr<HloModule> m = View(proto);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Print(*m, HloTextStyle::kShort),
            R"(HloModule s, is_scheduled=true, entry_computation_layout={(f32[])->f32[]}

ENTRY main {
  a = f32[] parameter(0)
  c = f32[] exponential(a)
  b = f32[] negate(a)
  ROOT d = f32[] add(b, c)
}

)");
  // A sequence that leaves an instruction out cannot be printed.
  (*proto.mutable_schedule()->mutable_sequences())[1].mutable_instruction_ids()->RemoveLast();
  m = View(proto);
  std::string text;
  StringSink sink(&text);
  absl::Status s = PrintHloModule(*m, HloPrintOptions(), sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "computation \"main\": schedule: instruction \"d\" is not scheduled");
}

// --- The header ------------------------------------------------------------------------

TEST(HloPrintHeaderTest, AliasesDonorsAttributesAndExtras) {
  xla::HloModuleProto proto = ParseProto(R"pb(
    name: "h" entry_computation_id: 1
    computations {
      name: "main" id: 1 root_id: 9
      instructions { name: "p0" opcode: "parameter" id: 2 parameter_number: 0
                     shape { element_type: F32 dimensions: 2 layout { minor_to_major: 0 } } }
      instructions { name: "p1" opcode: "parameter" id: 3 parameter_number: 1 shape { element_type: S32 } }
      instructions { name: "t" opcode: "tuple" id: 9 operand_ids: [2, 3]
                     shape { element_type: TUPLE
                             tuple_shapes { element_type: F32 dimensions: 2 layout { minor_to_major: 0 } }
                             tuple_shapes { element_type: S32 } } }
    }
    host_program_shape {
      parameters { element_type: F32 dimensions: 2 layout { minor_to_major: 0 } }
      parameters { element_type: S32 }
      result { element_type: TUPLE
               tuple_shapes { element_type: F32 dimensions: 2 layout { minor_to_major: 0 } }
               tuple_shapes { element_type: S32 } }
    }
    input_output_alias {
      entries { output_shape_index: 1 parameter_number: 1 kind: MUST_ALIAS }
      entries { output_shape_index: 0 parameter_number: 0 kind: MAY_ALIAS }
    }
    buffer_donor {
      entries { parameter_number: 1 }
      entries { parameter_number: 0 parameter_shape_index: 0 }
    }
    frontend_attributes { map { key: "z" value: "1" } map { key: "a" value: "x\"y" } })pb");
  std::unique_ptr<HloModule> m = View(proto);
  ASSERT_NE(m, nullptr);
  const std::string header =
      "HloModule h, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, "
      "must-alias) }, buffer_donor={ (0, {0}), (1, {}) }";
  const std::string layout =
      ", entry_computation_layout={(f32[2]{0}, s32[])->(f32[2]{0}, s32[])}";
  const std::string attributes = ", frontend_attributes={a=\"x\\\"y\",z=\"1\"}";
  std::string text = Print(*m, HloTextStyle::kShort);
  EXPECT_EQ(text.substr(0, text.find('\n')), header + layout + attributes);

  // The module config's attributes a parsed text carried, in XLA's places.
  HloModuleTextExtras extras;
  extras.config_attributes = {{"num_partitions", "2"},
                              {"custom_thing", "{1,2}"},
                              {"replica_count", "4"},
                              {"alias_passthrough_params", "true"}};
  text = Print(*m, HloTextStyle::kLong, false, &extras);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            header + ", alias_passthrough_params=true" + layout +
                ", replica_count=4, num_partitions=2, custom_thing={1,2}" +
                attributes);
  // A text without entry_computation_layout prints none again.
  extras.has_entry_computation_layout = false;
  text = Print(*m, HloTextStyle::kLong, false, &extras);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            header + ", alias_passthrough_params=true, replica_count=4, "
                     "num_partitions=2, custom_thing={1,2}" +
                attributes);
}

// entry_computation_layout annotates every 5th parameter; without a host
// program shape it is the entry's signature with default layouts.
TEST(HloPrintHeaderTest, EntryComputationLayout) {
  HloModuleBuilder mb("e");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  std::vector<HloOp> params;
  for (int i = 0; i < 6; ++i) {
    params.push_back(main.Parameter(i, MakeScalarShape(F32), absl::StrCat("p", i)));
  }
  xla::ShapeProto column_major = MakeArrayShape(F32, {2, 3});
  column_major.mutable_layout()->clear_minor_to_major();
  column_major.mutable_layout()->add_minor_to_major(0);
  column_major.mutable_layout()->add_minor_to_major(1);
  main.Parameter(6, column_major, "p6");
  main.Tuple(params);
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  const std::string results =
      "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])";
  std::string text = Print(*View(*proto), HloTextStyle::kShort);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule e, entry_computation_layout={(f32[], f32[], f32[], "
            "f32[], f32[], /*index=5*/f32[], f32[2,3]{0,1})->" + results + "}");
  proto->clear_host_program_shape();
  text = Print(*View(*proto), HloTextStyle::kShort);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule e, entry_computation_layout={(f32[], f32[], f32[], "
            "f32[], f32[], /*index=5*/f32[], f32[2,3]{1,0})->" + results + "}");
}

// --- Operands ------------------------------------------------------------------------------

TEST(HloPrintOperandsTest, IndexCommentEveryFifthOperand) {
  HloModuleBuilder mb("i");
  HloComputationBuilder& main = mb.AddEntryComputation("main");  // 1
  std::vector<HloOp> ops;
  for (int i = 0; i < 7; ++i) {  // 2..8
    ops.push_back(main.Parameter(i, MakeScalarShape(F32), std::string(1, 'a' + i)));
  }
  main.Tuple(ops);  // 9
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string shape =
      "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[])";
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kLong), "tuple.9"),
            "  ROOT %tuple.9 = " + shape +
                " tuple(f32[] %a, f32[] %b, f32[] %c, f32[] %d, f32[] %e, "
                "/*index=5*/f32[] %f, f32[] %g)");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kModern), "tuple.9"),
            "  ROOT %tuple.9 = " + shape +
                " tuple(%a, %b, %c, %d, %e, /*index=5*/%f, %g)");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kShort), "tuple.9"),
            "  ROOT tuple.9 = " + shape + " tuple(a, b, c, d, e, f, g)");
}

// --- Shapes -----------------------------------------------------------------------------

TEST(HloPrintShapeTest, ShapesAndLayouts) {
  xla::ShapeProto s = MakeArrayShape(F32, {2, 3});
  EXPECT_EQ(ShapeToText(s), "f32[2,3]{1,0}");
  EXPECT_EQ(ShapeToText(s, /*print_layout=*/false), "f32[2,3]");
  s.clear_layout();
  EXPECT_EQ(ShapeToText(s), "f32[2,3]");
  EXPECT_EQ(ShapeToText(MakeScalarShape(xla::BF16)), "bf16[]");
  xla::ShapeProto scalar = MakeScalarShape(F32);
  scalar.mutable_layout()->set_memory_space(1);
  EXPECT_EQ(ShapeToText(scalar), "f32[]{:S(1)}");
  EXPECT_EQ(ShapeToText(MakeTokenShape()), "token[]");
  EXPECT_EQ(ShapeToText(MakeArrayShape(xla::F8E4M3FN, {4})), "f8e4m3fn[4]{0}");
  EXPECT_EQ(ShapeToText(MakeArrayShape(PRED, {0})), "pred[0]{0}");

  xla::ShapeProto tiled = MakeArrayShape(xla::BF16, {8, 128});
  xla::TileProto* t = tiled.mutable_layout()->add_tiles();
  t->add_dimensions(8);
  t->add_dimensions(128);
  tiled.mutable_layout()->add_tiles()->add_dimensions(2);
  tiled.mutable_layout()->mutable_tiles(1)->add_dimensions(1);
  tiled.mutable_layout()->set_element_size_in_bits(4);
  tiled.mutable_layout()->set_memory_space(2);
  EXPECT_EQ(ShapeToText(tiled), "bf16[8,128]{1,0:T(8,128)(2,1)E(4)S(2)}");
  tiled.mutable_layout()->set_tail_padding_alignment_in_elements(1);
  EXPECT_EQ(ShapeToText(tiled), "bf16[8,128]{1,0:T(8,128)(2,1)E(4)S(2)}");
  tiled.mutable_layout()->set_tail_padding_alignment_in_elements(4);
  EXPECT_EQ(ShapeToText(tiled), "bf16[8,128]{1,0:T(8,128)(2,1)L(4)E(4)S(2)}");

  xla::ShapeProto dynamic = MakeArrayShape(F32, {4, 5});
  dynamic.add_is_dynamic_dimension(true);
  dynamic.add_is_dynamic_dimension(false);
  EXPECT_EQ(ShapeToText(dynamic), "f32[<=4,5]{1,0}");
  dynamic.set_dimensions(0, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ShapeToText(dynamic, false), "f32[?,5]");

  std::vector<xla::ShapeProto> six(6, MakeArrayShape(S32, {1}));
  six[5] = MakeTupleShape({MakeScalarShape(PRED), MakeTokenShape()});
  EXPECT_EQ(ShapeToText(MakeTupleShape(six)),
            "(s32[1]{0}, s32[1]{0}, s32[1]{0}, s32[1]{0}, s32[1]{0}, "
            "/*index=5*/(pred[], token[]))");
  EXPECT_EQ(ShapeToText(MakeTupleShape(std::vector<xla::ShapeProto>{})), "()");
  xla::ShapeProto bad;
  bad.set_element_type(static_cast<xla::PrimitiveType>(99));
  EXPECT_EQ(ShapeToText(bad), "<type 99>");
}

// --- Constants ------------------------------------------------------------------------------

// The literal of `type` and `dims` holding `values`.
xla::LiteralProto Lit(int type, std::vector<int64_t> dims,
                      std::vector<double> values) {
  absl::StatusOr<xla::LiteralProto> l = MakeLiteral(type, dims, values);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? *l : xla::LiteralProto();
}

xla::LiteralProto F32Bits(uint32_t bits) {
  xla::LiteralProto l = Lit(F32, {}, {0});
  l.set_f32s(0, std::bit_cast<float>(bits));
  return l;
}

TEST(HloPrintConstantTest, FloatsRoundTrip) {
  // Six significant digits when they read back as the same float, else 9.
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {1.5})), "1.5");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {0.1})), "0.1");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {1.0 / 3})), "0.333333343");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {16777217})), "16777216");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {1234567})), "1234567");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {1e10})), "1e+10");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {-0.0})), "-0");
  EXPECT_EQ(LiteralToText(Lit(F32, {}, {1e-7})), "1e-07");
  EXPECT_EQ(LiteralToText(F32Bits(0x7f800000)), "inf");
  EXPECT_EQ(LiteralToText(F32Bits(0xff800000)), "-inf");
  EXPECT_EQ(LiteralToText(F32Bits(0x7fc00000)), "nan");
  EXPECT_EQ(LiteralToText(F32Bits(0xffc00000)), "-nan");
  // A NaN's payload prints when it is not the plain quiet NaN's.
  EXPECT_EQ(LiteralToText(F32Bits(0x7fc00001)), "nan(0x400001)");
  EXPECT_EQ(LiteralToText(F32Bits(0x7f800001)), "nan(0x1)");
  // f64: 15 digits, else 17.
  EXPECT_EQ(LiteralToText(Lit(xla::F64, {}, {0.1})), "0.1");
  EXPECT_EQ(LiteralToText(Lit(xla::F64, {}, {1.0 / 3})), "0.33333333333333331");
  // The narrow types print max_digits10 digits of their exact value.
  EXPECT_EQ(LiteralToText(Lit(xla::BF16, {}, {0.1})), "0.1001");
  EXPECT_EQ(LiteralToText(Lit(xla::BF16, {}, {1})), "1");
  EXPECT_EQ(LiteralToText(Lit(xla::F16, {}, {0.1})), "0.099976");
  EXPECT_EQ(LiteralToText(Lit(xla::F8E4M3FN, {}, {1.125})), "1.12");
  EXPECT_EQ(LiteralToText(Lit(xla::F8E5M2, {}, {0.75})), "0.75");
  EXPECT_EQ(LiteralToText(Lit(xla::F8E5M2, {}, {1.25})), "1.2");
  xla::LiteralProto bf16_nan = Lit(xla::BF16, {}, {0});
  bf16_nan.set_bf16s(std::string("\xc1\xff", 2));  // 0xffc1: -nan, payload 0x41
  EXPECT_EQ(LiteralToText(bf16_nan), "-nan(0x41)");
  xla::LiteralProto f8_nan = Lit(xla::F8E4M3FN, {}, {0});
  f8_nan.set_f8e4m3fns(std::string("\x7f", 1));
  EXPECT_EQ(LiteralToText(f8_nan), "nan");
}

TEST(HloPrintConstantTest, IntegersPredsComplex) {
  EXPECT_EQ(LiteralToText(Lit(PRED, {}, {1})), "true");
  EXPECT_EQ(LiteralToText(Lit(PRED, {}, {0})), "false");
  EXPECT_EQ(LiteralToText(Lit(PRED, {3}, {1, 0, 1})), "{1, 0, 1}");
  EXPECT_EQ(LiteralToText(Lit(xla::S8, {2}, {-5, 7})), "{-5, 7}");
  absl::StatusOr<xla::LiteralProto> u64 = MakeUintLiteral(
      xla::U64, {}, {std::numeric_limits<uint64_t>::max()});
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(LiteralToText(*u64), "18446744073709551615");
  absl::StatusOr<xla::LiteralProto> s64 = MakeIntLiteral(
      xla::S64, {}, {std::numeric_limits<int64_t>::min()});
  ASSERT_TRUE(s64.ok());
  EXPECT_EQ(LiteralToText(*s64), "-9223372036854775808");
  absl::StatusOr<xla::LiteralProto> c = MakeComplexLiteral(
      xla::C64, {2}, {{1, 2}, {0.5, -0.25}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(LiteralToText(*c), "{(1, 2), (0.5, -0.25)}");
}

TEST(HloPrintConstantTest, ArraysNested) {
  EXPECT_EQ(LiteralToText(Lit(S32, {2, 2}, {1, 2, 3, 4})), "{ { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(LiteralToText(Lit(S32, {2, 1}, {1, 2})), "{ {1}, {2} }");
  EXPECT_EQ(LiteralToText(Lit(S32, {1, 2, 1}, {1, 2})), "{ { {1}, {2} } }");
  EXPECT_EQ(LiteralToText(Lit(S32, {2, 1, 2}, {1, 2, 3, 4})),
            "{ { { 1, 2 } }, { { 3, 4 } } }");
  // Rank > 3: the inner braces carry their parent's index.
  EXPECT_EQ(LiteralToText(Lit(S32, {1, 1, 1, 2}, {1, 2})),
            "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }");
  EXPECT_EQ(LiteralToText(Lit(S32, {1, 2, 1, 1}, {5, 6})),
            "{ { /*i0=0*/ { /*i1=0*/ {5} }, { /*i1=1*/ {6} } } }");
  EXPECT_EQ(LiteralToText(Lit(F32, {0}, {})), "{}");
  EXPECT_EQ(LiteralToText(Lit(F32, {2, 0}, {})), "{ {}, {} }");
  EXPECT_EQ(LiteralToText(Lit(F32, {0, 2}, {})), "{  }");
  EXPECT_EQ(LiteralToText(Lit(F32, {1, 0, 1, 1}, {})), "{ { /*i0=0*/ } }");
  // Data is stored in the layout's order; values print in logical order.
  xla::LiteralProto column_major = Lit(S32, {2, 2}, {1, 2, 3, 4});
  column_major.mutable_shape()->mutable_layout()->set_minor_to_major(0, 0);
  column_major.mutable_shape()->mutable_layout()->set_minor_to_major(1, 1);
  EXPECT_EQ(LiteralToText(column_major), "{ { 1, 3 }, { 2, 4 } }");
  // Tuples and tokens.
  xla::LiteralProto tuple;
  *tuple.mutable_shape() = MakeTupleShape({MakeScalarShape(F32), MakeArrayShape(S32, {2})});
  *tuple.add_tuple_literals() = Lit(F32, {}, {1});
  *tuple.add_tuple_literals() = Lit(S32, {2}, {2, 3});
  EXPECT_EQ(LiteralToText(tuple), "( 1, {2, 3} )");
  EXPECT_EQ(LiteralToText(tuple, /*print_large_constants=*/false), "{...}");
}

TEST(HloPrintConstantTest, LargeAndElidedConstants) {
  std::vector<double> eleven(11);
  for (int i = 0; i < 11; ++i) eleven[i] = i;
  HloModuleBuilder mb("c");
  HloComputationBuilder& main = mb.AddEntryComputation("main");  // 1
  main.ConstantArray(F32, {10}, std::vector<double>(eleven.begin(), eleven.end() - 1));  // 2
  main.ConstantArray(F32, {11}, eleven);                          // 3
  main.ConstantArray(F32, {2, 0, 50}, {});                        // 4
  HloOp elided = main.ConstantArray(F32, {2}, {1, 2});            // 5
  xla::LiteralProto* l = main.mutable_proto(elided)->mutable_literal();
  l->clear_f32s();
  ASSERT_TRUE(IsElidedLiteral(*l));
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string ten = "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}";
  const std::string all = "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}";
  std::string text = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(text, "constant.2"), "  %constant.2 = f32[10]{0} constant(" + ten + ")");
  EXPECT_EQ(LineOf(text, "constant.3"), "  %constant.3 = f32[11]{0} constant({...})");
  EXPECT_EQ(LineOf(text, "constant.4"),
            "  %constant.4 = f32[2,0,50]{2,1,0} constant({ {  }, {  } })");
  EXPECT_EQ(LineOf(text, "constant.5"), "  ROOT %constant.5 = f32[2]{0} constant({...})");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kModern), "constant.3"),
            "  %constant.3 = f32[11]{0} constant({...})");
  text = Print(*m, HloTextStyle::kLong, /*large_constants=*/true);
  EXPECT_EQ(LineOf(text, "constant.3"), "  %constant.3 = f32[11]{0} constant(" + all + ")");
  EXPECT_EQ(LineOf(text, "constant.5"), "  ROOT %constant.5 = f32[2]{0} constant({...})");
  text = Print(*m, HloTextStyle::kShort);
  EXPECT_EQ(LineOf(text, "constant.3"), "  constant.3 = f32[11]{0} constant(" + all + ")");
  EXPECT_EQ(LineOf(text, "constant.5"), "  ROOT constant.5 = f32[2]{0} constant({...})");
}

TEST(HloPrintConstantTest, MalformedLiteralIsAnError) {
  HloModuleBuilder mb("c");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp c = main.ConstantArray(F32, {3}, {1, 2, 3});
  main.mutable_proto(c)->mutable_literal()->mutable_f32s()->RemoveLast();
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  std::string text;
  StringSink sink(&text);
  absl::Status s = PrintHloModule(*m, HloPrintOptions(), sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "computation \"main\", instruction \"constant.2\" (id 2): literal: "
            "a literal of 3 elements holds 2 elements of data");
  EXPECT_EQ(LiteralToText(main.mutable_proto(c)->literal()),
            "/*malformed literal: a literal of 3 elements holds 2 elements of "
            "data*/{...}");
}

// --- Per-opcode attributes ------------------------------------------------------------------

TEST(HloPrintAttributesTest, ShapeOps) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& c = mb.AddEntryComputation("main");           // 1
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4, 6}), "p");          // 2
  c.Slice(p, {0, 2}, {4, 6});                                          // 3
  c.Slice(p, {0, 0}, {4, 6}, {2, 3});                                  // 4
  HloOp zero = c.ConstantR0(F32, 0);                                   // 5
  c.Pad(p, zero, MakePaddingConfig({{1, 2, 0}, {0, 0, 0}}));           // 6
  c.Pad(p, zero, MakePaddingConfig({{0, 0, 1}, {-1, 0, 0}}));          // 7
  c.Transpose(p, {1, 0});                                              // 8
  c.Broadcast(zero, {3}, {});                                          // 9
  c.Reshape(p, {24});                                                  // 10
  c.Reverse(p, {0});                                                   // 11
  c.Concatenate({p, p}, 1);                                            // 12
  c.Iota(MakeArrayShape(S32, {5}), 0);                                 // 13
  HloOp i = c.Parameter(1, MakeScalarShape(S32), "i");                 // 14
  c.DynamicSlice(p, {i, i}, {2, 3});                                   // 15
  c.GetTupleElement(c.Tuple({p, zero}), 1);                            // 16, 17
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(t, "slice.3"),
            "  %slice.3 = f32[4,4]{1,0} slice(f32[4,6]{1,0} %p), slice={[0:4], [2:6]}");
  EXPECT_EQ(LineOf(t, "slice.4"),
            "  %slice.4 = f32[2,2]{1,0} slice(f32[4,6]{1,0} %p), slice={[0:4:2], [0:6:3]}");
  EXPECT_EQ(LineOf(t, "pad.6"),
            "  %pad.6 = f32[7,6]{1,0} pad(f32[4,6]{1,0} %p, f32[] %constant.5), padding=1_2x0_0");
  EXPECT_EQ(LineOf(t, "pad.7"),
            "  %pad.7 = f32[7,5]{1,0} pad(f32[4,6]{1,0} %p, f32[] %constant.5), "
            "padding=0_0_1x-1_0_0");
  EXPECT_EQ(LineOf(t, "transpose.8"),
            "  %transpose.8 = f32[6,4]{1,0} transpose(f32[4,6]{1,0} %p), dimensions={1,0}");
  EXPECT_EQ(LineOf(t, "broadcast.9"),
            "  %broadcast.9 = f32[3]{0} broadcast(f32[] %constant.5), dimensions={}");
  EXPECT_EQ(LineOf(t, "reshape.10"), "  %reshape.10 = f32[24]{0} reshape(f32[4,6]{1,0} %p)");
  EXPECT_EQ(LineOf(t, "reverse.11"),
            "  %reverse.11 = f32[4,6]{1,0} reverse(f32[4,6]{1,0} %p), dimensions={0}");
  EXPECT_EQ(LineOf(t, "concatenate.12"),
            "  %concatenate.12 = f32[4,12]{1,0} concatenate(f32[4,6]{1,0} %p, "
            "f32[4,6]{1,0} %p), dimensions={1}");
  EXPECT_EQ(LineOf(t, "iota.13"), "  %iota.13 = s32[5]{0} iota(), iota_dimension=0");
  EXPECT_EQ(LineOf(t, "dynamic-slice.15"),
            "  %dynamic-slice.15 = f32[2,3]{1,0} dynamic-slice(f32[4,6]{1,0} %p, "
            "s32[] %i, s32[] %i), dynamic_slice_sizes={2,3}");
  EXPECT_EQ(LineOf(t, "get-tuple-element.17"),
            "  ROOT %get-tuple-element.17 = f32[] get-tuple-element((f32[4,6]{1,0}, "
            "f32[]) %tuple.16), index=1");
}

// --- Real modules ------------------------------------------------------------------

// Other projects' modules and the text XLA wrote from them: the shared
// folder beside the source tree (DECOMPOSED_REAL_DIR overrides it).
fs::path RealDir() {
  if (const char* dir = std::getenv("DECOMPOSED_REAL_DIR")) return dir;
  return fs::path(DECOMPOSED_SOURCE_DIR) / ".." / "shared" / "real";
}

// The module of a binary HloProto or HloModuleProto file, or nullopt.
std::optional<xla::HloModuleProto> LoadModule(const fs::path& p) {
  const std::string bytes = ReadFile(p);
  google::protobuf::LogSilencer quiet;
  xla::HloProto hp;
  if (hp.ParseFromString(bytes) && hp.hlo_module().computations_size() > 0) {
    return hp.hlo_module();
  }
  xla::HloModuleProto m;
  if (m.ParseFromString(bytes) && m.computations_size() > 0) return m;
  return std::nullopt;
}

// The style a text of XLA's is in: short without `%` names, long with
// operand shapes, modern without.
HloTextStyle StyleOfText(const std::string& text) {
  if (!absl::StrContains(text, "\nENTRY %")) return HloTextStyle::kShort;
  if (absl::StrContains(text, "(%")) return HloTextStyle::kModern;
  return HloTextStyle::kLong;
}

// The first line where two texts differ, for failure messages.
std::string FirstDifference(const std::string& want, const std::string& got) {
  std::vector<std::string> a = absl::StrSplit(want, '\n');
  std::vector<std::string> b = absl::StrSplit(got, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string x = i < a.size() ? a[i] : "<end>";
    std::string y = i < b.size() ? b[i] : "<end>";
    if (x != y) {
      return absl::StrCat("line ", i + 1, ":\n  XLA: ", x, "\n  ours: ", y);
    }
  }
  return "no difference";
}

// What the files' writers changed in XLA's text: trailing newlines (some
// stripped the blank line XLA ends a module with) and, in texts of XLA
// before 2023, entry_computation_layout's parameters joined by "," where
// XLA now writes ", " with `/*index=N*/` comments. Both are undone on our
// text before comparing.
std::string AsWritten(std::string ours, const std::string& xla) {
  const size_t eol = xla.find('\n');
  const std::string header = xla.substr(0, eol);
  const size_t layout = header.find("entry_computation_layout={(");
  if (layout != std::string::npos && header.find("->", layout) != std::string::npos &&
      header.substr(layout, header.find("->", layout) - layout).find(", ") ==
          std::string::npos) {
    const size_t our_eol = ours.find('\n');
    const std::string key = "entry_computation_layout={(";
    const size_t start = ours.find(key) + key.size();
    const size_t arrow = ours.find(")->", start);
    if (ours.find(key) < our_eol && arrow < our_eol) {
      std::string params = ours.substr(start, arrow - start);
      int depth = 0;
      std::string joined;
      for (size_t i = 0; i < params.size(); ++i) {
        const char c = params[i];
        if (c == '(' || c == '{' || c == '[') ++depth;
        if (c == ')' || c == '}' || c == ']') --depth;
        // ", " between top-level parameters.
        if (c == ',' && depth == 0 && i + 1 < params.size() && params[i + 1] == ' ') {
          joined += ',';
          ++i;
          if (params.compare(i + 1, 8, "/*index=") == 0) i = params.find("*/", i) + 1;
          continue;
        }
        joined += c;
      }
      ours.replace(start, arrow - start, joined);
    }
  }
  while (!ours.empty() && ours.back() == '\n') ours.pop_back();
  size_t keep = xla.size();
  while (keep > 0 && xla[keep - 1] == '\n') --keep;
  return ours + xla.substr(keep);
}

TEST(HloPrintRealTest, EveryRealModulePrintsAndMatchesXlasText) {
  const fs::path real = RealDir();
  if (!fs::exists(real)) GTEST_SKIP() << real << " is absent";
  // The modules with the text XLA printed from the same proto beside them.
  // (neuronx-distributed's dummy_hlo_nki_kernel.txt is not one: it names an
  // instruction "call.606" that the proto names "call.0", uses that name
  // twice, and orders the entry as no XLA does; only printing is checked.)
  const std::map<std::string, std::string> pairs = {
      {"fn_hlo.pb", "fn_hlo.txt"},
      {"xla_sample.pb", "xla_sample.hlo"},
      {"dummy_hlo_no_kernel_calls.txt.hlo", "dummy_hlo_no_kernel_calls.txt"},
  };
  int printed = 0, compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(real)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (!absl::EndsWith(name, ".pb") && !absl::EndsWith(name, ".txt.hlo")) continue;
    std::optional<xla::HloModuleProto> proto = LoadModule(e.path());
    if (!proto.has_value()) continue;  // a snapshot or literal without a module
    absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
    ASSERT_TRUE(m.ok()) << e.path() << ": " << m.status();
    for (HloTextStyle style :
         {HloTextStyle::kLong, HloTextStyle::kModern, HloTextStyle::kShort}) {
      std::string text;
      StringSink sink(&text);
      HloPrintOptions options;
      options.style = style;
      absl::Status s = PrintHloModule(**m, options, sink);
      ASSERT_TRUE(s.ok()) << e.path() << ": " << s;
      ASSERT_TRUE(absl::StartsWith(text, "HloModule ")) << e.path();
      EXPECT_TRUE(absl::EndsWith(text, "}\n\n")) << e.path();
    }
    ++printed;
    auto pair = pairs.find(name);
    if (pair == pairs.end()) continue;
    const std::string want = ReadFile(e.path().parent_path() / pair->second);
    HloPrintOptions options;
    options.style = StyleOfText(want);
    HloModuleTextExtras extras;
    extras.has_entry_computation_layout =
        absl::StrContains(want.substr(0, want.find('\n')),
                          "entry_computation_layout=");
    std::string got;
    StringSink sink(&got);
    ASSERT_TRUE(PrintHloModule(**m, options, sink, &extras).ok());
    got = AsWritten(std::move(got), want);
    EXPECT_EQ(got, want) << e.path() << "\n" << FirstDifference(want, got);
    ++compared;
  }
  // The spu, xla-rs, TraceLens, iree, ROCm, Neuron and derived modules.
  EXPECT_GE(printed, 20);
  EXPECT_EQ(compared, static_cast<int>(pairs.size()));
}

}  // namespace
}  // namespace decomposed::hlo
