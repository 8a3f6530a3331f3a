// The HLO printer (hlo/print.h).
#include "decomposed/hlo/print.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/parse.h"
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

  // The module config's attributes a parsed text carried, in XLA's places;
  // one XLA's printer does not know after the frontend attributes, where
  // XLA's HloModule::Print writes its custom fields.
  HloModuleTextExtras extras;
  extras.config_attributes = {{"num_partitions", "2"},
                              {"custom_thing", "{1,2}"},
                              {"replica_count", "4"},
                              {"alias_passthrough_params", "true"}};
  text = Print(*m, HloTextStyle::kLong, false, &extras);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            header + ", alias_passthrough_params=true" + layout +
                ", replica_count=4, num_partitions=2" + attributes +
                ", custom_thing={1,2}");
  // A text without entry_computation_layout prints none again.
  extras.has_entry_computation_layout = false;
  text = Print(*m, HloTextStyle::kLong, false, &extras);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            header + ", alias_passthrough_params=true, replica_count=4, "
                     "num_partitions=2" +
                attributes + ", custom_thing={1,2}");
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

// XLA's PrintStackFrameIndex, worked out by hand: the four tables after
// the header when the module has frames and the style prints metadata,
// entries numbered from 1, names C-escaped, a location's fields in the
// order line, end_line, column, end_column, zeros printed, a frame's
// parent as the proto's + 1; then the blank line that ends the header.
TEST(HloPrintHeaderTest, StackFrameIndex) {
  HloModuleBuilder mb("frames");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp p = main.Parameter(0, MakeArrayShape(F32, {4}), "p");
  HloOp n = main.Negate(p);
  xla::OpMetadata md;
  md.set_op_name("jit(f)/neg");
  md.set_stack_frame_id(2);
  main.SetMetadata(n, md);
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  xla::StackFrameIndexProto* index = proto->mutable_stack_frame_index();
  index->add_file_names("a/model.py");
  index->add_file_names("lib/\"ops\".py");
  index->add_function_names("main");
  index->add_function_names("layer");
  auto* l1 = index->add_file_locations();
  l1->set_file_name_id(1);
  l1->set_function_name_id(1);
  l1->set_line(10);
  l1->set_end_line(10);
  l1->set_column(3);
  l1->set_end_column(20);
  auto* l2 = index->add_file_locations();
  l2->set_file_name_id(2);
  l2->set_function_name_id(2);
  l2->set_line(42);  // the rest 0, printed
  auto* f1 = index->add_stack_frames();
  f1->set_file_location_id(1);
  auto* f2 = index->add_stack_frames();
  f2->set_file_location_id(2);
  f2->set_parent_frame_id(1);
  const std::string tables =
      "\n\nFileNames\n"
      "1 \"a/model.py\"\n"
      "2 \"lib/\\\"ops\\\".py\"\n"
      "\nFunctionNames\n"
      "1 \"main\"\n"
      "2 \"layer\"\n"
      "\nFileLocations\n"
      "1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=3 end_column=20}\n"
      "2 {file_name_id=2 function_name_id=2 line=42 end_line=0 column=0 end_column=0}\n"
      "\nStackFrames\n"
      "1 {file_location_id=1 parent_frame_id=1}\n"
      "2 {file_location_id=2 parent_frame_id=2}\n"
      "\n\n";
  const std::string header = "HloModule frames, entry_computation_layout={(f32[4]{0})->f32[4]{0}}";
  const std::string long_text = Print(*View(*proto), HloTextStyle::kLong);
  EXPECT_EQ(long_text.substr(0, header.size() + tables.size()), header + tables);
  EXPECT_EQ(LineOf(long_text, "negate.3"),
            "  ROOT %negate.3 = f32[4]{0} negate(f32[4]{0} %p), "
            "metadata={op_name=\"jit(f)/neg\" stack_frame_id=2}");
  const std::string modern = Print(*View(*proto), HloTextStyle::kModern);
  EXPECT_EQ(modern.substr(0, header.size() + tables.size()), header + tables);
  // Short prints no metadata: neither the tables nor the id.
  const std::string short_text = Print(*View(*proto), HloTextStyle::kShort);
  EXPECT_EQ(short_text.find("FileNames"), std::string::npos);
  EXPECT_EQ(short_text.substr(0, header.size() + 2), header + "\n\n");
  // Parsed back: the same index, end_line and end_column included.
  absl::StatusOr<ParsedHloText> back = ParseHloText(long_text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->module.stack_frame_index().SerializeAsString(),
            proto->stack_frame_index().SerializeAsString());
  EXPECT_EQ(Print(*View(back->module), HloTextStyle::kLong), long_text);
  // XLA prints the index when it names a file: without frames the tables
  // print with an empty StackFrames; without file names, nothing.
  proto->mutable_stack_frame_index()->clear_stack_frames();
  const std::string no_frames = Print(*View(*proto), HloTextStyle::kLong);
  const std::string tables_without_frames =
      tables.substr(0, tables.find("\nStackFrames\n")) + "\nStackFrames\n\n\n";
  EXPECT_EQ(no_frames.substr(0, header.size() + tables_without_frames.size()),
            header + tables_without_frames);
  proto->mutable_stack_frame_index()->clear_file_names();
  EXPECT_EQ(Print(*View(*proto), HloTextStyle::kLong).find("FunctionNames"), std::string::npos);
}

// OpMetadata's fields in OpMetadataToString's order: the source span after
// source_line, stack_frame_id last; an id alone is printable metadata.
TEST(HloPrintAttributesTest, MetadataSourceSpanAndStackFrame) {
  HloModuleBuilder mb("md");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp p = main.Parameter(0, MakeArrayShape(F32, {2}), "p");
  HloOp a = main.Negate(p);
  xla::OpMetadata md;
  md.set_op_type("neg");
  md.set_source_file("m.py");
  md.set_source_line(5);
  md.set_source_end_line(6);
  md.set_source_column(7);
  md.set_source_end_column(8);
  md.set_scheduling_name("s");
  md.set_stack_frame_id(9);
  main.SetMetadata(a, md);
  HloOp b = main.Negate(a);
  xla::OpMetadata id_only;
  id_only.set_stack_frame_id(4);
  main.SetMetadata(b, id_only);
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string text = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(text, "negate.3"),
            "  %negate.3 = f32[2]{0} negate(f32[2]{0} %p), metadata={op_type=\"neg\" "
            "source_file=\"m.py\" source_line=5 source_end_line=6 source_column=7 "
            "source_end_column=8 scheduling_name=\"s\" stack_frame_id=9}");
  EXPECT_EQ(LineOf(text, "negate.4"),
            "  ROOT %negate.4 = f32[2]{0} negate(f32[2]{0} %negate.3), "
            "metadata={stack_frame_id=4}");
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

TEST(HloPrintAttributesTest, ContractionsAndWindows) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& sum = AddSum(mb);                                // 1..4
  HloComputationBuilder& c = mb.AddEntryComputation("main");               // 5
  HloOp a = c.Parameter(0, MakeArrayShape(F32, {2, 3, 4}), "a");           // 6
  HloOp b = c.Parameter(1, MakeArrayShape(F32, {2, 4, 5}), "b");           // 7
  const xla::DotDimensionNumbers dn = MakeDotDimensionNumbers({2}, {1}, {0}, {0});
  c.Dot(a, b, dn);                                                         // 8
  xla::PrecisionConfig pc;
  pc.add_operand_precision(xla::PrecisionConfig::HIGHEST);
  pc.add_operand_precision(xla::PrecisionConfig::DEFAULT);
  c.Dot(a, b, dn, std::nullopt, pc);                                       // 9
  HloOp m2 = c.Parameter(2, MakeArrayShape(F32, {3, 4}), "m2");            // 10
  c.Dot(m2, m2, MakeDotDimensionNumbers({1}, {1}));                        // 11
  HloOp in = c.Parameter(3, MakeArrayShape(F32, {1, 5, 5, 2}), "in");      // 12
  HloOp k = c.Parameter(4, MakeArrayShape(F32, {3, 3, 2, 4}), "k");        // 13
  absl::StatusOr<xla::ConvolutionDimensionNumbers> dnums =
      ConvolutionDimensionNumbersFromLabels("b01f_01io->b01f");
  ASSERT_TRUE(dnums.ok());
  c.Convolution(in, k, MakeWindow({3, 3}, {2, 2}, {{1, 1}, {1, 1}}), *dnums);  // 14
  HloOp k2 = c.Parameter(5, MakeArrayShape(F32, {1, 1, 1, 2}), "k2");      // 15
  c.Convolution(in, k2, MakeWindow({1, 1}), *dnums, 2);                    // 16
  HloOp zero = c.ConstantR0(F32, 0);                                       // 17
  c.ReduceWindow({in}, {zero}, MakeWindow({1, 2, 2, 1}, {1, 2, 2, 1}), sum);  // 18
  c.ReduceWindow({in}, {zero},
                 MakeWindow({1, 3, 3, 1}, {}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}},
                            {}, {1, 2, 2, 1}),
                 sum);                                                     // 19
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  const std::string dot =
      " dot(f32[2,3,4]{2,1,0} %a, f32[2,4,5]{2,1,0} %b), lhs_batch_dims={0}, "
      "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}";
  EXPECT_EQ(LineOf(t, "dot.8"), "  %dot.8 = f32[2,3,5]{2,1,0}" + dot);
  EXPECT_EQ(LineOf(t, "dot.9"),
            "  %dot.9 = f32[2,3,5]{2,1,0}" + dot + ", operand_precision={highest,default}");
  EXPECT_EQ(LineOf(t, "dot.11"),
            "  %dot.11 = f32[3,3]{1,0} dot(f32[3,4]{1,0} %m2, f32[3,4]{1,0} %m2), "
            "lhs_contracting_dims={1}, rhs_contracting_dims={1}");
  EXPECT_EQ(LineOf(t, "convolution.14"),
            "  %convolution.14 = f32[1,3,3,4]{3,2,1,0} convolution(f32[1,5,5,2]{3,2,1,0} "
            "%in, f32[3,3,2,4]{3,2,1,0} %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, "
            "dim_labels=b01f_01io->b01f");
  EXPECT_EQ(LineOf(t, "convolution.16"),
            "  %convolution.16 = f32[1,5,5,2]{3,2,1,0} convolution(f32[1,5,5,2]{3,2,1,0} "
            "%in, f32[1,1,1,2]{3,2,1,0} %k2), window={size=1x1}, "
            "dim_labels=b01f_01io->b01f, feature_group_count=2");
  EXPECT_EQ(LineOf(t, "reduce-window.18"),
            "  %reduce-window.18 = f32[1,2,2,2]{3,2,1,0} reduce-window(f32[1,5,5,2]{3,2,1,0} "
            "%in, f32[] %constant.17), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%sum");
  EXPECT_EQ(LineOf(t, "reduce-window.19"),
            "  ROOT %reduce-window.19 = f32[1,3,3,2]{3,2,1,0} reduce-window("
            "f32[1,5,5,2]{3,2,1,0} %in, f32[] %constant.17), window={size=1x3x3x1 "
            "pad=0_0x1_1x1_1x0_0 rhs_dilate=1x2x2x1}, to_apply=%sum");
}

// XLA's CreateFromProto resizes operand_precision to the operand count (dot,
// convolution, custom-call) or to 2 (ragged-dot, scaled-dot) before printing:
// missing entries are DEFAULT, extra ones are dropped.
TEST(HloPrintAttributesTest, PrecisionListTakesTheOperandCount) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& c = mb.AddEntryComputation("main");               // 1
  HloOp a = c.Parameter(0, MakeArrayShape(F32, {2, 3}), "a");              // 2
  HloOp b = c.Parameter(1, MakeArrayShape(F32, {3, 4}), "b");              // 3
  const xla::DotDimensionNumbers dn = MakeDotDimensionNumbers({1}, {0});
  c.Dot(a, b, dn);                                                         // 4
  c.Dot(a, b, dn);                                                         // 5
  c.CustomCall("foo", {a, b, a}, MakeArrayShape(F32, {2}));                // 6
  xla::HloInstructionProto sd;
  sd.set_opcode("scaled-dot");
  *sd.mutable_shape() = MakeArrayShape(F32, {2, 4});
  *sd.mutable_dot_dimension_numbers() = dn;
  sd.mutable_precision_config()->add_operand_precision(xla::PrecisionConfig::DEFAULT);
  sd.mutable_precision_config()->add_operand_precision(xla::PrecisionConfig::HIGH);
  sd.mutable_precision_config()->add_operand_precision(xla::PrecisionConfig::HIGHEST);
  HloOp one = c.ConstantR0(F32, 1);                                        // 7
  c.AddInstruction(sd, {a, b, one, one});                                  // 8
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  for (xla::HloInstructionProto& in :
       *proto->mutable_computations(0)->mutable_instructions()) {
    xla::PrecisionConfig* pc = in.mutable_precision_config();
    if (in.id() == 4) {  // one entry: padded with default
      pc->clear_operand_precision();
      pc->add_operand_precision(xla::PrecisionConfig::HIGH);
    } else if (in.id() == 5) {  // the non-default third entry is dropped
      pc->clear_operand_precision();
      pc->add_operand_precision(xla::PrecisionConfig::DEFAULT);
      pc->add_operand_precision(xla::PrecisionConfig::DEFAULT);
      pc->add_operand_precision(xla::PrecisionConfig::HIGHEST);
    } else if (in.id() == 6) {  // three operands, one entry
      pc->clear_operand_precision();
      pc->add_operand_precision(xla::PrecisionConfig::HIGH);
    }
  }
  std::unique_ptr<HloModule> m = View(*proto);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kShort);
  EXPECT_EQ(LineOf(t, "dot.4"),
            "  dot.4 = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}, operand_precision={high,default}");
  EXPECT_EQ(LineOf(t, "dot.5"),
            "  dot.5 = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}");
  EXPECT_EQ(LineOf(t, "custom-call.6"),
            "  custom-call.6 = f32[2]{0} custom-call(a, b, a), "
            "operand_precision={high,default,default}, custom_call_target=\"foo\"");
  EXPECT_EQ(LineOf(t, "scaled-dot.8"),
            "  ROOT scaled-dot.8 = f32[2,4]{1,0} scaled-dot(a, b, constant.7, constant.7), "
            "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
            "operand_precision={default,high}");
}

TEST(HloPrintAttributesTest, GatherScatter) {
  HloModuleBuilder mb("g");
  HloComputationBuilder& sum = AddSum(mb);                                // 1..4
  HloComputationBuilder& c = mb.AddEntryComputation("main");               // 5
  HloOp o = c.Parameter(0, MakeArrayShape(F32, {3, 4}), "o");              // 6
  HloOp i = c.Parameter(1, MakeArrayShape(S32, {2, 1}), "i");              // 7
  c.Gather(o, i, MakeGatherDimensionNumbers({1}, {0}, {0}, 1), {1, 4});    // 8
  HloOp u = c.Parameter(2, MakeArrayShape(F32, {2, 4}), "u");              // 9
  c.Scatter({o}, i, {u}, sum, MakeScatterDimensionNumbers({1}, {0}, {0}, 1),
            /*indices_are_sorted=*/true);                                  // 10
  HloOp ob = c.Parameter(3, MakeArrayShape(F32, {2, 3, 4}), "ob");         // 11
  c.Gather(ob, i, MakeGatherDimensionNumbers({1}, {1}, {1}, 1, {0}, {0}),
           {1, 1, 4});                                                     // 12
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(t, "gather.8"),
            "  %gather.8 = f32[2,4]{1,0} gather(f32[3,4]{1,0} %o, s32[2,1]{1,0} %i), "
            "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,4}");
  EXPECT_EQ(LineOf(t, "scatter.10"),
            "  %scatter.10 = f32[3,4]{1,0} scatter(f32[3,4]{1,0} %o, s32[2,1]{1,0} %i, "
            "f32[2,4]{1,0} %u), update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
            "indices_are_sorted=true, to_apply=%sum");
  EXPECT_EQ(LineOf(t, "gather.12"),
            "  ROOT %gather.12 = f32[2,4]{1,0} gather(f32[2,3,4]{2,1,0} %ob, s32[2,1]{1,0} "
            "%i), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, "
            "index_vector_dim=1, slice_sizes={1,1,4}");
}

TEST(HloPrintAttributesTest, CompareDirectionAndType) {
  HloModuleBuilder mb("c");
  HloComputationBuilder& c = mb.AddEntryComputation("main");         // 1
  HloOp f = c.Parameter(0, MakeArrayShape(F32, {2}), "f");           // 2
  HloOp s = c.Parameter(1, MakeArrayShape(S32, {2}), "s");           // 3
  c.Compare(f, f, ComparisonDirection::kGt);                         // 4
  c.Compare(f, f, ComparisonDirection::kLt, ComparisonType::kTotalOrder);  // 5
  c.Compare(f, f, ComparisonDirection::kEq, ComparisonType::kFloat);       // 6
  c.Compare(s, s, ComparisonDirection::kNe);                               // 7
  xla::HloInstructionProto legacy;
  legacy.set_opcode("less-than");
  *legacy.mutable_shape() = MakeArrayShape(PRED, {2});
  c.AddInstruction(legacy, {f, f});                                        // 8
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kModern);
  EXPECT_EQ(LineOf(t, "compare.4"),
            "  %compare.4 = pred[2]{0} compare(%f, %f), direction=GT");
  EXPECT_EQ(LineOf(t, "compare.5"),
            "  %compare.5 = pred[2]{0} compare(%f, %f), direction=LT, type=TOTALORDER");
  EXPECT_EQ(LineOf(t, "compare.6"),
            "  %compare.6 = pred[2]{0} compare(%f, %f), direction=EQ");
  EXPECT_EQ(LineOf(t, "compare.7"),
            "  %compare.7 = pred[2]{0} compare(%s, %s), direction=NE");
  // The comparison opcodes XLA upgrades to compare on loading.
  EXPECT_EQ(LineOf(t, "less-than.8"),
            "  ROOT %less-than.8 = pred[2]{0} compare(%f, %f), direction=LT");
}

TEST(HloPrintAttributesTest, CustomCall) {
  HloModuleBuilder mb("cc");
  HloComputationBuilder& c = mb.AddEntryComputation("main");          // 1
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4}), "p");            // 2
  const xla::ShapeProto f4 = MakeArrayShape(F32, {4});
  c.CustomCall("foo", {p}, f4);                                       // 3
  c.CustomCall("bar\"x", {p}, f4, R"({"k": [1, {"a": "}"}]})");        // 4
  HloOp n = c.CustomCall("AwsNeuronSoftmax", {p}, f4, "3");           // 5
  c.mutable_proto(n)->set_custom_call_api_version(xla::API_VERSION_UNSPECIFIED);
  HloOp e = c.CustomCall("side", {p}, f4, "a\nb");                    // 6
  xla::HloInstructionProto* ep = c.mutable_proto(e);
  ep->set_custom_call_has_side_effect(true);
  ep->set_custom_call_schedule(xla::SCHEDULE_LATEST);
  ep->set_custom_call_api_version(xla::API_VERSION_STATUS_RETURNING);
  ep->set_constrain_layout(true);
  *ep->add_operand_shapes_with_layout() = f4;
  ep->add_output_operand_aliasing()->set_operand_index(0);
  ep->mutable_metadata()->set_op_name("x");
  c.Tuple({});                                                        // 7
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(t, "custom-call.3"),
            "  %custom-call.3 = f32[4]{0} custom-call(f32[4]{0} %p), custom_call_target=\"foo\"");
  // A JSON object prints as it is; other configs are escaped in quotes.
  EXPECT_EQ(LineOf(t, "custom-call.4"),
            "  %custom-call.4 = f32[4]{0} custom-call(f32[4]{0} %p), "
            "custom_call_target=\"bar\\\"x\", backend_config={\"k\": [1, {\"a\": \"}\"}]}");
  EXPECT_EQ(LineOf(t, "custom-call.5"),
            "  %custom-call.5 = f32[4]{0} custom-call(f32[4]{0} %p), "
            "custom_call_target=\"AwsNeuronSoftmax\", api_version=API_VERSION_UNSPECIFIED, "
            "backend_config=\"3\"");
  EXPECT_EQ(LineOf(t, "custom-call.6"),
            "  %custom-call.6 = f32[4]{0} custom-call(f32[4]{0} %p), "
            "custom_call_target=\"side\", operand_layout_constraints={f32[4]{0}}, "
            "custom_call_has_side_effect=true, output_to_operand_aliasing={{}: (0, {})}, "
            "schedule=SCHEDULE_LATEST, api_version=API_VERSION_STATUS_RETURNING, "
            "metadata={op_name=\"x\"}, backend_config=\"a\\nb\"");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kShort), "custom-call.6"),
            "  custom-call.6 = f32[4]{0} custom-call(p), "
            "custom_call_target=\"side\", operand_layout_constraints={f32[4]{0}}, "
            "custom_call_has_side_effect=true, output_to_operand_aliasing={{}: (0, {})}, "
            "schedule=SCHEDULE_LATEST, api_version=API_VERSION_STATUS_RETURNING, "
            "backend_config=\"a\\nb\"");
}

TEST(HloPrintAttributesTest, Collectives) {
  HloModuleBuilder mb("col");
  HloComputationBuilder& sum = AddSum(mb);                        // 1..4
  HloComputationBuilder& c = mb.AddEntryComputation("main");       // 5
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4}), "p");         // 6
  CollectiveOptions o1;
  o1.replica_groups = {{0, 1}, {2, 3}};
  o1.channel_id = 5;
  o1.use_global_device_ids = true;
  c.AllReduce({p}, sum, o1);                                       // 7
  c.AllReduce({p}, sum);                                           // 8
  CollectiveOptions o2;
  o2.replica_groups = {{0, 1}};
  o2.constrain_layout = true;
  c.AllGather({p}, 0, o2);                                         // 9
  CollectiveOptions o3;
  o3.replica_groups = {{0, 1}};
  c.ReduceScatter({p}, sum, 0, o3);                                // 10
  c.AllToAll({p}, 0, o3);                                          // 11
  c.CollectivePermute(p, {{0, 1}, {1, 0}}, 3);                     // 12
  auto iota_groups = [&](std::vector<int64_t> reshape, std::vector<int> perm) {
    HloOp op = c.AllReduce({p}, sum);
    xla::IotaReplicaGroupListProto* iota = c.mutable_proto(op)
                                               ->mutable_collective_device_list()
                                               ->mutable_iota_replica_group_list();
    iota->set_num_replica_groups(2);
    iota->set_num_devices_per_group(4);
    for (int64_t d : reshape) iota->add_iota_reshape_dims(d);
    for (int d : perm) iota->add_iota_transpose_perm(d);
  };
  iota_groups({4, 2}, {1, 0});                                     // 13
  iota_groups({2, 4}, {0, 1});                                     // 14
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(t, "all-reduce.7"),
            "  %all-reduce.7 = f32[4]{0} all-reduce(f32[4]{0} %p), channel_id=5, "
            "replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum");
  EXPECT_EQ(LineOf(t, "all-reduce.8"),
            "  %all-reduce.8 = f32[4]{0} all-reduce(f32[4]{0} %p), replica_groups={}, "
            "to_apply=%sum");
  EXPECT_EQ(LineOf(t, "all-gather.9"),
            "  %all-gather.9 = f32[8]{0} all-gather(f32[4]{0} %p), replica_groups={{0,1}}, "
            "constrain_layout=true, dimensions={0}");
  EXPECT_EQ(LineOf(t, "reduce-scatter.10"),
            "  %reduce-scatter.10 = f32[2]{0} reduce-scatter(f32[4]{0} %p), "
            "replica_groups={{0,1}}, dimensions={0}, to_apply=%sum");
  EXPECT_EQ(LineOf(t, "all-to-all.11"),
            "  %all-to-all.11 = f32[4]{0} all-to-all(f32[4]{0} %p), "
            "replica_groups={{0,1}}, dimensions={0}");
  EXPECT_EQ(LineOf(t, "collective-permute.12"),
            "  %collective-permute.12 = f32[4]{0} collective-permute(f32[4]{0} %p), "
            "channel_id=3, source_target_pairs={{0,1},{1,0}}");
  // The iota form of replica groups, its reshape and transpose canonical.
  EXPECT_EQ(LineOf(t, "all-reduce.13"),
            "  %all-reduce.13 = f32[4]{0} all-reduce(f32[4]{0} %p), "
            "replica_groups=[2,4]<=[4,2]T(1,0), to_apply=%sum");
  EXPECT_EQ(LineOf(t, "all-reduce.14"),
            "  ROOT %all-reduce.14 = f32[4]{0} all-reduce(f32[4]{0} %p), "
            "replica_groups=[2,4]<=[8], to_apply=%sum");
}

TEST(HloPrintAttributesTest, CalledComputationsAndTheRest) {
  HloModuleBuilder mb("misc");
  HloComputationBuilder& sum = AddSum(mb);                                 // 1..4
  HloComputationBuilder& lt = mb.AddComputation("lt");                      // 5
  lt.Compare(lt.Parameter(0, MakeScalarShape(F32), "l0"),                   // 6
             lt.Parameter(1, MakeScalarShape(F32), "l1"),                   // 7
             ComparisonDirection::kLt);                                     // 8
  HloComputationBuilder& cond = mb.AddComputation("cond");                  // 9
  cond.Compare(cond.Parameter(0, MakeScalarShape(F32), "cp"),               // 10
               cond.ConstantR0(F32, 1), ComparisonDirection::kLt);          // 11, 12
  HloComputationBuilder& body = mb.AddComputation("body");                  // 13
  body.Negate(body.Parameter(0, MakeScalarShape(F32), "bp"));               // 14, 15
  HloComputationBuilder& t = mb.AddComputation("t");                        // 16
  t.Exp(t.Parameter(0, MakeScalarShape(F32), "tp"));                        // 17, 18
  HloComputationBuilder& f = mb.AddComputation("f");                        // 19
  f.Negate(f.Parameter(0, MakeScalarShape(F32), "fp"));                     // 20, 21
  HloComputationBuilder& fused = mb.AddComputation("fused");                // 22
  fused.Exp(fused.Parameter(0, MakeArrayShape(F32, {4}), "fz"));            // 23, 24
  HloComputationBuilder& c = mb.AddEntryComputation("main");                // 25
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4}), "p");                  // 26
  HloOp s0 = c.Parameter(1, MakeScalarShape(F32), "s0");                    // 27
  c.Sort({p}, 0, lt, /*is_stable=*/true);                                   // 28
  c.TopK(p, 2);                                                             // 29
  c.Rng(s0, s0, xla::RNG_UNIFORM, {3});                                     // 30
  c.ReducePrecision(p, 5, 10);                                              // 31
  c.Map({p, p}, sum);                                                       // 32
  c.While(cond, body, s0);                                                  // 33
  HloOp pr = c.Parameter(2, MakeScalarShape(PRED), "pr");                   // 34
  c.Conditional(pr, {s0, s0}, {&t, &f});                                    // 35
  HloOp ix = c.Parameter(3, MakeScalarShape(S32), "ix");                    // 36
  c.Conditional(ix, {s0, s0}, {&t, &f});                                    // 37
  c.Call(sum, {s0, s0});                                                    // 38
  c.Fusion("kLoop", {p}, fused);                                            // 39
  HloOp x = c.Parameter(4, MakeArrayShape(F32, {2, 3}), "bx");              // 40
  HloOp scale = c.Parameter(5, MakeArrayShape(F32, {3}), "scale");          // 41
  HloOp off = c.Parameter(6, MakeArrayShape(F32, {3}), "off");              // 42
  c.BatchNormTraining(x, scale, off, 0.001f, 1);                            // 43
  HloOp cx = c.Parameter(7, MakeArrayShape(xla::C64, {4}), "cx");           // 44
  c.Fft(cx, xla::FFT, {4});                                                 // 45
  HloOp tok = c.AfterAll({});                                               // 46
  c.Infeed(tok, MakeArrayShape(F32, {2}), "cfg");                           // 47
  c.Outfeed(p, tok);                                                        // 48
  HloOp st = c.Parameter(8, MakeArrayShape(xla::U64, {2}), "st");           // 49
  c.RngBitGenerator(st, xla::RNG_PHILOX, MakeArrayShape(xla::U32, {4}));    // 50
  c.GetDimensionSize(p, 0);                                                 // 51
  c.RngGetAndUpdateState(3);                                                // 52
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string text = Print(*m, HloTextStyle::kLong);
  auto line = [&](const std::string& name) { return LineOf(text, name); };
  EXPECT_EQ(line("sort.28"), "  %sort.28 = f32[4]{0} sort(f32[4]{0} %p), dimensions={0}, "
                             "is_stable=true, to_apply=%lt");
  EXPECT_EQ(line("topk.29"),
            "  %topk.29 = (f32[2]{0}, s32[2]{0}) topk(f32[4]{0} %p), k=2, largest=true");
  EXPECT_EQ(line("rng.30"),
            "  %rng.30 = f32[3]{0} rng(f32[] %s0, f32[] %s0), distribution=rng_uniform");
  EXPECT_EQ(line("reduce-precision.31"),
            "  %reduce-precision.31 = f32[4]{0} reduce-precision(f32[4]{0} %p), "
            "exponent_bits=5, mantissa_bits=10");
  EXPECT_EQ(line("map.32"), "  %map.32 = f32[4]{0} map(f32[4]{0} %p, f32[4]{0} %p), "
                            "dimensions={0}, to_apply=%sum");
  EXPECT_EQ(line("while.33"),
            "  %while.33 = f32[] while(f32[] %s0), condition=%cond, body=%body");
  EXPECT_EQ(line("conditional.35"),
            "  %conditional.35 = f32[] conditional(pred[] %pr, f32[] %s0, f32[] %s0), "
            "true_computation=%t, false_computation=%f");
  EXPECT_EQ(line("conditional.37"),
            "  %conditional.37 = f32[] conditional(s32[] %ix, f32[] %s0, f32[] %s0), "
            "branch_computations={%t, %f}");
  EXPECT_EQ(line("call.38"), "  %call.38 = f32[] call(f32[] %s0, f32[] %s0), to_apply=%sum");
  EXPECT_EQ(line("fusion.39"),
            "  %fusion.39 = f32[4]{0} fusion(f32[4]{0} %p), kind=kLoop, calls=%fused");
  EXPECT_EQ(line("batch-norm-training.43"),
            "  %batch-norm-training.43 = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) "
            "batch-norm-training(f32[2,3]{1,0} %bx, f32[3]{0} %scale, f32[3]{0} %off), "
            "epsilon=0.001, feature_index=1");
  EXPECT_EQ(line("fft.45"),
            "  %fft.45 = c64[4]{0} fft(c64[4]{0} %cx), fft_type=FFT, fft_length={4}");
  EXPECT_EQ(line("after-all.46"), "  %after-all.46 = token[] after-all()");
  EXPECT_EQ(line("infeed.47"),
            "  %infeed.47 = (f32[2]{0}, token[]) infeed(token[] %after-all.46), "
            "infeed_config=\"cfg\"");
  EXPECT_EQ(line("outfeed.48"),
            "  %outfeed.48 = token[] outfeed(f32[4]{0} %p, token[] %after-all.46), "
            "outfeed_shape=f32[4]{0}");
  EXPECT_EQ(line("rng-bit-generator.50"),
            "  %rng-bit-generator.50 = (u64[2]{0}, u32[4]{0}) rng-bit-generator(u64[2]{0} "
            "%st), algorithm=rng_philox");
  EXPECT_EQ(line("get-dimension-size.51"),
            "  %get-dimension-size.51 = s32[] get-dimension-size(f32[4]{0} %p), "
            "dimensions={0}");
  EXPECT_EQ(line("rng-get-and-update-state.52"),
            "  ROOT %rng-get-and-update-state.52 = u64[2]{0} rng-get-and-update-state(), "
            "delta=3");
  // The fused computation prints before its caller, as a computation.
  EXPECT_NE(text.find("\n%fused (fz: f32[4]) -> f32[4] {\n  %fz = f32[4]{0} parameter(0)\n"
                      "  ROOT %exponential.24 = f32[4]{0} exponential(f32[4]{0} %fz)\n}\n"),
            std::string::npos);
}

// An async op whose wrapped computation is one instruction prints as that
// instruction's -start / -done form; the wrapped computation does not print.
// Otherwise async-start calls the computation by name.
TEST(HloPrintAttributesTest, AsyncSyntaxSugar) {
  HloModuleBuilder mb("a");
  HloComputationBuilder& w = mb.AddComputation("wrapped");                  // 1
  w.CustomCall("foo", {w.Parameter(0, MakeArrayShape(F32, {4}), "wp")},     // 2
               MakeArrayShape(F32, {4}));                                    // 3
  HloComputationBuilder& w2 = mb.AddComputation("wrapped2");                // 4
  w2.Negate(w2.Negate(w2.Parameter(0, MakeArrayShape(F32, {4}), "wp2")));   // 5, 6, 7
  HloComputationBuilder& c = mb.AddEntryComputation("main");                 // 8
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4}), "p");                   // 9
  HloOp start = c.AsyncStart(w, {p});                                        // 10
  c.AsyncDone(start);                                                        // 11
  HloOp start2 = c.AsyncStart(w2, {p});                                      // 12
  c.AsyncDone(start2);                                                       // 13
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string text = Print(*m, HloTextStyle::kShort);
  const std::string shape = ShapeToText(start.shape());
  EXPECT_EQ(text.find("\nwrapped {"), std::string::npos) << text;
  EXPECT_EQ(LineOf(text, "async-start.10"),
            "  async-start.10 = " + shape +
                " custom-call-start(p), custom_call_target=\"foo\"");
  EXPECT_EQ(LineOf(text, "async-done.11"),
            "  async-done.11 = f32[4]{0} custom-call-done(async-start.10)");
  EXPECT_NE(text.find("\nwrapped2 {\n"), std::string::npos) << text;
  EXPECT_EQ(LineOf(text, "async-start.12"),
            "  async-start.12 = " + ShapeToText(start2.shape()) +
                " async-start(p), calls=wrapped2");
  EXPECT_EQ(LineOf(text, "async-done.13"),
            "  ROOT async-done.13 = f32[4]{0} async-done(async-start.12)");
}

TEST(HloPrintAttributesTest, RareAttributes) {
  HloModuleBuilder mb("r");
  HloComputationBuilder& sum = AddSum(mb);                                // 1..4
  HloComputationBuilder& c = mb.AddEntryComputation("main");               // 5
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {2, 2}), "p");              // 6
  HloOp n = c.Negate(p);                                                   // 7
  xla::StatisticsViz* stats = c.mutable_proto(n)->mutable_statistics_viz();
  stats->set_stat_index_to_visualize(1);
  xla::Statistic* a = stats->add_statistics();
  a->set_stat_name("a");
  a->set_stat_val(0.5);
  xla::Statistic* nans = stats->add_statistics();
  nans->set_stat_name("nan_count");
  nans->set_stat_val(3);
  c.mutable_proto(n)->mutable_result_accuracy()->set_mode(xla::ResultAccuracy::HIGHEST);
  HloOp r = c.Reshape(p, {4});                                             // 8
  c.mutable_proto(r)->add_dimensions(1);
  c.Map({p, p}, sum);                                                      // 9
  HloOp a2 = c.Parameter(1, MakeArrayShape(F32, {2, 2}), "a2");            // 10
  xla::TriangularSolveOptions tso;
  tso.set_left_side(true);
  tso.set_lower(true);
  tso.set_transpose_a(xla::TriangularSolveOptions::NO_TRANSPOSE);
  c.TriangularSolve(p, a2, tso);                                           // 11
  c.Cholesky(p, /*lower=*/true);                                           // 12
  HloOp r3 = c.Parameter(2, MakeScalarShape(F32), "r3");                   // 13
  c.mutable_proto(r3)->mutable_parameter_replication()->add_replicated_at_leaf_buffers(true);
  c.Domain(p);                                                             // 14
  HloOp copy = c.CopyStart(p);                                             // 15
  c.mutable_proto(copy)->set_cross_program_prefetch_index(0);
  c.CopyDone(copy);                                                        // 16
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok()) << proto.status();
  for (xla::HloComputationProto& comp : *proto->mutable_computations()) {
    if (comp.name() == "sum") comp.set_execution_thread("host");
  }
  std::unique_ptr<HloModule> m = View(*proto);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kLong);
  EXPECT_EQ(LineOf(t, "negate.7"),
            "  %negate.7 = f32[2,2]{1,0} negate(f32[2,2]{1,0} %p), "
            "statistics={visualizing_index=1,a=0.5,nan_count=3}, "
            "result_accuracy={mode=highest}");
  EXPECT_EQ(LineOf(t, "reshape.8"),
            "  %reshape.8 = f32[4]{0} reshape(f32[2,2]{1,0} %p), inferred_dimension=1");
  EXPECT_EQ(LineOf(t, "map.9"),
            "  %map.9 = f32[2,2]{1,0} map(f32[2,2]{1,0} %p, f32[2,2]{1,0} %p), "
            "dimensions={0,1}, to_apply=%sum");
  EXPECT_EQ(LineOf(t, "triangular-solve.11"),
            "  %triangular-solve.11 = f32[2,2]{1,0} triangular-solve(f32[2,2]{1,0} %p, "
            "f32[2,2]{1,0} %a2), left_side=true, lower=true, transpose_a=NO_TRANSPOSE");
  EXPECT_EQ(LineOf(t, "cholesky.12"),
            "  %cholesky.12 = f32[2,2]{1,0} cholesky(f32[2,2]{1,0} %p), lower=true");
  EXPECT_EQ(LineOf(t, "r3"), "  %r3 = f32[] parameter(2), parameter_replication={true}");
  EXPECT_EQ(LineOf(t, "domain.14"),
            "  %domain.14 = f32[2,2]{1,0} domain(f32[2,2]{1,0} %p), "
            "domain={kind=\"sharding\", entry={}, exit={}}");
  EXPECT_TRUE(absl::EndsWith(LineOf(t, "copy-start.15"),
                             " copy-start(f32[2,2]{1,0} %p), cross_program_prefetch_index=0"))
      << LineOf(t, "copy-start.15");
  EXPECT_NE(t.find("  ROOT %add.4 = f32[] add(f32[] %x, f32[] %y)\n}, "
                   "execution_thread=\"host\"\n\n"),
            std::string::npos)
      << t;
}

TEST(HloPrintAttributesTest, SendRecvChannels) {
  HloModuleBuilder mb("sr");
  HloComputationBuilder& c = mb.AddEntryComputation("main");      // 1
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {4}), "p");        // 2
  HloOp tok = c.AfterAll({});                                     // 3
  HloOp send = c.Send(p, tok, 7);                                 // 4
  HloOp send_done = c.SendDone(send);                             // 5
  // XLA takes a send-done's channel from its send.
  c.mutable_proto(send_done)->clear_channel_id();
  HloOp recv = c.Recv(tok, MakeArrayShape(F32, {2}), 8, /*is_host_transfer=*/true);  // 6
  HloOp recv_done = c.RecvDone(recv);                             // 7
  c.mutable_proto(recv_done)->set_is_host_transfer(true);
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string t = Print(*m, HloTextStyle::kModern);
  EXPECT_TRUE(absl::EndsWith(LineOf(t, "send.4"), " send(%p, %after-all.3), channel_id=7"))
      << LineOf(t, "send.4");
  EXPECT_EQ(LineOf(t, "send-done.5"),
            "  %send-done.5 = token[] send-done(%send.4), channel_id=7");
  EXPECT_TRUE(absl::EndsWith(LineOf(t, "recv.6"),
                             " recv(%after-all.3), channel_id=8, is_host_transfer=true"))
      << LineOf(t, "recv.6");
  EXPECT_TRUE(absl::EndsWith(LineOf(t, "recv-done.7"),
                             " recv-done(%recv.6), channel_id=8, is_host_transfer=true"))
      << LineOf(t, "recv-done.7");
}

// --- Metadata, attributes, sharding ------------------------------------------------------

TEST(HloPrintAttributesTest, MetadataFrontendAttributesBackendConfig) {
  HloModuleBuilder mb("meta");
  HloComputationBuilder& c = mb.AddEntryComputation("main");        // 1
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {2}), "p");          // 2
  HloOp n = c.Negate(p);                                            // 3
  xla::OpMetadata md;
  md.set_op_type("ty\"pe");
  md.set_op_name("a/b\n\xc3\xa9");
  md.set_source_file("f.py");
  md.set_source_line(7);
  c.SetMetadata(n, md);
  c.SetFrontendAttribute(n, "zeta", "1");
  c.SetFrontendAttribute(n, "alpha", "x y");
  c.SetFrontendAttribute(n, "json", R"({"k": 1})");
  xla::OpSharding replicated;
  replicated.set_type(xla::OpSharding::REPLICATED);
  c.SetSharding(n, replicated);
  c.SetBackendConfig(n, R"({"a":"b"})");
  HloOp only_line = c.Negate(p);                                    // 4
  xla::OpMetadata line_only;
  line_only.set_source_line(3);  // without a name, type or file: no metadata
  c.SetMetadata(only_line, line_only);
  c.Negate(p);                                                      // 5
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string attributes =
      ", sharding={replicated}, frontend_attributes={alpha=\"x y\",json={\"k\": 1},"
      "zeta=\"1\"}";
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kLong), "negate.3"),
            "  %negate.3 = f32[2]{0} negate(f32[2]{0} %p)" + attributes +
                ", metadata={op_type=\"ty\\\"pe\" op_name=\"a/b\\n\\303\\251\" "
                "source_file=\"f.py\" source_line=7}, backend_config={\"a\":\"b\"}");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kShort), "negate.3"),
            "  negate.3 = f32[2]{0} negate(p)" + attributes +
                ", backend_config={\"a\":\"b\"}");
  EXPECT_EQ(LineOf(Print(*m, HloTextStyle::kLong), "negate.4"),
            "  %negate.4 = f32[2]{0} negate(f32[2]{0} %p)");
}

TEST(HloPrintAttributesTest, Sharding) {
  HloModuleBuilder mb("sh");
  HloComputationBuilder& c = mb.AddEntryComputation("main");        // 1
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {2}), "p");          // 2
  auto sharded = [&](const xla::OpSharding& s) { c.SetSharding(c.Negate(p), s); };
  xla::OpSharding s;
  s.set_type(xla::OpSharding::MAXIMAL);
  s.add_tile_assignment_devices(3);
  sharded(s);                                                        // 3
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  s.add_tile_assignment_dimensions(2);
  s.add_tile_assignment_devices(1);
  s.add_tile_assignment_devices(0);
  sharded(s);                                                        // 4
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : {4, 1}) s.add_tile_assignment_dimensions(d);
  s.add_iota_reshape_dims(4);
  s.add_iota_transpose_perm(0);
  sharded(s);                                                        // 5
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : {2, 2}) s.add_tile_assignment_dimensions(d);
  for (int64_t d : {2, 2}) s.add_iota_reshape_dims(d);
  for (int d : {1, 0}) s.add_iota_transpose_perm(d);
  sharded(s);                                                        // 6
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : {2, 2}) s.add_tile_assignment_dimensions(d);
  for (int64_t d : {1, 0, 3, 2}) s.add_tile_assignment_devices(d);
  s.set_replicate_on_last_tile_dim(true);
  sharded(s);                                                        // 7
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : {1, 4}) s.add_tile_assignment_dimensions(d);
  for (int64_t d : {0, 1, 2, 3}) s.add_tile_assignment_devices(d);
  s.set_replicate_on_last_tile_dim(true);
  sharded(s);                                                        // 8
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::OTHER);
  for (int64_t d : {2, 2}) s.add_tile_assignment_dimensions(d);
  for (int64_t d : {0, 1, 2, 3}) s.add_tile_assignment_devices(d);
  s.add_last_tile_dims(xla::OpSharding::MANUAL);
  sharded(s);                                                        // 9
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::REPLICATED);
  s.add_metadata()->set_op_name("s");
  s.set_is_shard_group(true);
  s.set_shard_group_id(7);
  sharded(s);                                                        // 10
  HloOp t = c.Tuple({p, p, p, p, p, p});                             // 11
  s = xla::OpSharding();
  s.set_type(xla::OpSharding::TUPLE);
  for (int i = 0; i < 5; ++i) s.add_tuple_shardings()->set_type(xla::OpSharding::REPLICATED);
  xla::OpSharding* last = s.add_tuple_shardings();
  last->set_type(xla::OpSharding::MAXIMAL);
  last->add_tile_assignment_devices(0);
  c.SetSharding(t, s);
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  const std::string text = Print(*m, HloTextStyle::kShort);
  auto sharding = [&](const std::string& name) {
    const std::string line = LineOf(text, name);
    const size_t at = line.find("sharding=");
    return at == std::string::npos ? line : line.substr(at);
  };
  EXPECT_EQ(sharding("negate.3"), "sharding={maximal device=3}");
  EXPECT_EQ(sharding("negate.4"), "sharding={devices=[2]1,0}");
  EXPECT_EQ(sharding("negate.5"), "sharding={devices=[4,1]<=[4]}");
  EXPECT_EQ(sharding("negate.6"), "sharding={devices=[2,2]<=[2,2]T(1,0)}");
  // Partial replication sorts the devices of each replicated group, and is
  // plain replication when the last dimension holds every device.
  EXPECT_EQ(sharding("negate.7"), "sharding={devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  EXPECT_EQ(sharding("negate.8"), "sharding={replicated}");
  EXPECT_EQ(sharding("negate.9"), "sharding={devices=[2,2]0,1,2,3 last_tile_dims={manual}}");
  EXPECT_EQ(sharding("negate.10"), "sharding={replicated shard_as 7}");
  EXPECT_EQ(sharding("tuple.11"),
            "sharding={{replicated}, {replicated}, {replicated}, {replicated}, "
            "{replicated}, /*index=5*/{maximal device=0}}");
  // Sharding metadata prints where instruction metadata does.
  const std::string long_line = LineOf(Print(*m, HloTextStyle::kLong), "negate.10");
  EXPECT_EQ(long_line.substr(long_line.find("sharding=")),
            "sharding={replicated shard_as 7 metadata={op_name=\"s\"}}");
}

// --- Errors and streaming ---------------------------------------------------------------

TEST(HloPrintErrorTest, UnknownElementType) {
  HloModuleBuilder mb("e");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp p = c.Parameter(0, MakeArrayShape(F32, {2}), "p");
  HloOp n = c.Negate(p);
  xla::ShapeProto bad = MakeArrayShape(F32, {2});
  bad.set_element_type(static_cast<xla::PrimitiveType>(99));
  c.SetShape(n, bad);
  c.Negate(p);
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  std::string text;
  StringSink sink(&text);
  absl::Status s = PrintHloModule(*m, HloPrintOptions(), sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "computation \"main\", instruction \"negate.3\" (id 3): shape: an "
            "element type XLA does not know");
  EXPECT_EQ(PrintHloModuleToString(*m), "");
}

// A sink that records the chunks it is given, and can fail.
class ChunkSink {
 public:
  bool Write(std::string_view d) {
    if (fail_) {
      status_ = absl::DataLossError("disk full");
      return false;
    }
    chunks_.emplace_back(d);
    pos_ += d.size();
    return true;
  }
  bool Flush() { return status_.ok(); }
  uint64_t position() const { return pos_; }
  const absl::Status& status() const { return status_; }
  bool fail_ = false;
  std::vector<std::string> chunks_;

 private:
  uint64_t pos_ = 0;
  absl::Status status_;
};
static_assert(ByteSink<ChunkSink>);

TEST(HloPrintStreamTest, BigModulesArriveInChunks) {
  HloModuleBuilder mb("big");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(F32, {128, 256}), "x");
  for (int i = 0; i < 20000; ++i) x = c.Negate(x);
  std::unique_ptr<HloModule> m = Build(mb);
  ASSERT_NE(m, nullptr);
  ChunkSink sink;
  ASSERT_TRUE(PrintHloModule(*m, HloPrintOptions(), sink).ok());
  const std::string whole = PrintHloModuleToString(*m);
  EXPECT_GT(whole.size(), size_t{1} << 20);
  EXPECT_GE(sink.chunks_.size(), 4u);
  std::string joined;
  for (const std::string& chunk : sink.chunks_) {
    EXPECT_LE(chunk.size(), (size_t{256} << 10) + 4096);
    joined += chunk;
  }
  EXPECT_EQ(joined, whole);
  // So does one long constant, in the short style.
  HloModuleBuilder cb("big_constant");
  HloComputationBuilder& cc = cb.AddEntryComputation("main");
  std::vector<double> values(300000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * static_cast<double>(i);
  cc.ConstantArray(F32, {static_cast<int64_t>(values.size())}, values);
  std::unique_ptr<HloModule> constant = Build(cb);
  ASSERT_NE(constant, nullptr);
  ChunkSink constant_sink;
  HloPrintOptions short_style;
  short_style.style = HloTextStyle::kShort;
  ASSERT_TRUE(PrintHloModule(*constant, short_style, constant_sink).ok());
  EXPECT_GE(constant_sink.chunks_.size(), 4u);
  for (const std::string& chunk : constant_sink.chunks_) {
    EXPECT_LE(chunk.size(), (size_t{256} << 10) + (size_t{64} << 10));
  }
  // A sink that fails stops the printing with its status.
  ChunkSink failing;
  failing.fail_ = true;
  absl::Status s = PrintHloModule(*m, HloPrintOptions(), failing);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(failing.chunks_.empty());
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

// XLA's own texts as the oracle of float formatting: every scalar floating
// constant in the texts XLA dumped (torch-neuronx, torch-xla, JAX and the
// ROCm perf dumps; not the benchmark and tool inputs, which people edited:
// one says so, and writes `0.0` and `55906239034112`), read back and
// printed again, gives the same digits.
TEST(HloPrintRealTest, ScalarFloatConstantsOfXlasTexts) {
  const fs::path real = RealDir();
  if (!fs::exists(real)) GTEST_SKIP() << real << " is absent";
  const std::map<std::string, int> types = {
      {"f32", F32}, {"f64", xla::F64}, {"bf16", xla::BF16}, {"f16", xla::F16}};
  int checked = 0;
  std::set<std::string> seen;
  const std::vector<std::string> dumps = {
      "kahfizulkifli+GraphHelper", "pytorch+xla", "ROCm+xla/perf_tools",
      "aws-neuron+neuronx-distributed", "iree-org+iree", "LaurentMazare+xla-rs"};
  for (const auto& e : fs::recursive_directory_iterator(real)) {
    const std::string path = fs::relative(e.path(), real).string();
    if (!e.is_regular_file() || e.path().extension() == ".pb" ||
        absl::EndsWith(path, ".txt.hlo") ||
        std::none_of(dumps.begin(), dumps.end(), [&](const std::string& d) {
          return absl::StartsWith(path, d + "/");
        })) {
      continue;
    }
    const std::string text = ReadFile(e.path());
    for (const auto& [name, type] : types) {
      const std::string key = " " + name + "[] constant(";
      for (size_t at = text.find(key); at != std::string::npos;
           at = text.find(key, at + 1)) {
        const size_t begin = at + key.size();
        const size_t end = text.find(')', begin);
        if (end == std::string::npos) break;
        const std::string digits = text.substr(begin, end - begin);
        if (digits.empty() || digits.find_first_not_of("0123456789.e+-") !=
                                  std::string::npos) {
          continue;  // nan, inf: their bits are not in the text
        }
        if (!seen.insert(name + digits).second) continue;
        char* rest = nullptr;
        const double v = std::strtod(digits.c_str(), &rest);
        ASSERT_EQ(*rest, '\0') << digits;
        EXPECT_EQ(LiteralToText(Lit(type, {}, {v})), digits)
            << name << " in " << e.path();
        ++checked;
      }
    }
  }
  // The dumps hold a few hundred distinct ones.
  EXPECT_GE(checked, 100);
}

}  // namespace
}  // namespace decomposed::hlo
