// ParseHloText (hlo/parse.h): hand-written texts in the three styles of
// hlo/text.h with every proto field checked one by one, every attribute XLA
// prints, the leniency of XLA's parser, literals of every type and form
// (bytes worked out by hand from the formats), and errors with their exact
// `line L, column C: expected X, found Y` messages.
#include "decomposed/hlo/parse.h"
#include "hlo_parse_both.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/text.h"
#include "decomposed/hlo/validate.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {
namespace {

ParsedHloText Parse(std::string_view text) {
  absl::StatusOr<ParsedHloText> t = ParseBothWays(text);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  return *std::move(t);
}

std::string Error(std::string_view text) {
  absl::StatusOr<ParsedHloText> t = ParseBothWays(text);
  if (t.ok()) return "parsed";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

const xla::HloComputationProto& Comp(const ParsedHloText& t,
                                     std::string_view name) {
  for (const auto& c : t.module.computations()) {
    if (c.name() == name) return c;
  }
  ADD_FAILURE() << "no computation " << name;
  static const xla::HloComputationProto none;
  return none;
}

const xla::HloInstructionProto& Instr(const ParsedHloText& t,
                                      std::string_view name) {
  for (const auto& c : t.module.computations()) {
    for (const auto& i : c.instructions()) {
      if (i.name() == name) return i;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  static const xla::HloInstructionProto none;
  return none;
}

// The instruction an id names.
const xla::HloInstructionProto& ById(const ParsedHloText& t, int64_t id) {
  for (const auto& c : t.module.computations()) {
    for (const auto& i : c.instructions()) {
      if (i.id() == id) return i;
    }
  }
  ADD_FAILURE() << "no instruction of id " << id;
  static const xla::HloInstructionProto none;
  return none;
}

std::vector<std::string> OperandNames(const ParsedHloText& t,
                                      const xla::HloInstructionProto& i) {
  std::vector<std::string> out;
  for (int64_t id : i.operand_ids()) out.push_back(ById(t, id).name());
  return out;
}

std::string CompName(const ParsedHloText& t, int64_t id) {
  for (const auto& c : t.module.computations()) {
    if (c.id() == id) return c.name();
  }
  return absl::StrCat("<no computation ", id, ">");
}

std::vector<std::string> Called(const ParsedHloText& t,
                                const xla::HloInstructionProto& i) {
  std::vector<std::string> out;
  for (int64_t id : i.called_computation_ids()) out.push_back(CompName(t, id));
  return out;
}

std::vector<int64_t> V(const google::protobuf::RepeatedField<int64_t>& f) {
  return {f.begin(), f.end()};
}

xla::ShapeProto ShapeOf(const std::string& text) {
  // A parameter of that shape, read back.
  ParsedHloText t = Parse(absl::StrCat("ENTRY e { ROOT p = ", text, " parameter(0) }"));
  return t.module.computations(0).instructions(0).shape();
}

// --- The three styles ------------------------------------------------------------

// Long style: `%` names, operand shapes, metadata, program shapes in the
// computation headers, `/*index=5*/` comments, frontend attributes.
constexpr std::string_view kLong = R"(HloModule SyncTensorsGraph.21, input_output_alias={ {0}: (1, {}, must-alias) }, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->(f32[2,3]{1,0}, f32[])}

%AddComputation.9 (x.10: f32[], y.11: f32[]) -> f32[] {
  %x.10 = f32[] parameter(0)
  %y.11 = f32[] parameter(1)
  ROOT %add.12 = f32[] add(f32[] %x.10, f32[] %y.11)
}

ENTRY %SyncTensorsGraph.21 (p0.1: f32[2,3], p1.2: f32[2,3]) -> (f32[2,3], f32[]) {
  %p1.2 = f32[2,3]{1,0} parameter(1), frontend_attributes={neff_input_names="input1"}
  %p0.1 = f32[2,3]{1,0} parameter(0), frontend_attributes={neff_input_names="input0"}
  %multiply.3 = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %p0.1, f32[2,3]{1,0} %p1.2), metadata={op_type="aten__mul" op_name="aten__mul" source_file="/tmp/m.py" source_line=12}
  %constant.4 = f32[] constant(0), metadata={op_type="prim__Constant" op_name="prim__Constant"}
  %reduce.13 = f32[] reduce(f32[2,3]{1,0} %multiply.3, f32[] %constant.4), dimensions={0,1}, to_apply=%AddComputation.9
  ROOT %tuple.14 = (f32[2,3]{1,0}, f32[]) tuple(f32[2,3]{1,0} %multiply.3, f32[] %reduce.13), frontend_attributes={neff_output_names="output0,output1"}
}

)";

// Without a number ending every name, distinct, the ids are XLA's
// parser's: one counter over the module in text order, each computation's
// instructions then the computation.
TEST(HloParseTest, IdsInTextOrderWithoutANumberEndingEveryName) {
  for (const char* text : {
           // `add` has no number.
           "c.5 {\n  a.7 = f32[] parameter(0)\n  ROOT add = f32[] negate(a.7)\n}\n\n"
           "ENTRY e.9 {\n  p.3 = f32[] parameter(0)\n  ROOT r.1 = f32[] call(p.3), to_apply=c.5\n}\n",
           // Two instructions end in 7.
           "c.5 {\n  a.7 = f32[] parameter(0)\n  ROOT n.8 = f32[] negate(a.7)\n}\n\n"
           "ENTRY e.9 {\n  p.7 = f32[] parameter(0)\n  ROOT r.1 = f32[] call(p.7), to_apply=c.5\n}\n",
           // A number past 32 bits (XLA's ids are 32-bit).
           "c.5 {\n  a.7 = f32[] parameter(0)\n  ROOT n.8 = f32[] negate(a.7)\n}\n\n"
           "ENTRY e.9 {\n  p.3 = f32[] parameter(0)\n  ROOT r.4294967297 = f32[] call(p.3), to_apply=c.5\n}\n",
           // The computations both end in 5.
           "c.5 {\n  a.7 = f32[] parameter(0)\n  ROOT n.8 = f32[] negate(a.7)\n}\n\n"
           "ENTRY e.5 {\n  p.3 = f32[] parameter(0)\n  ROOT r.1 = f32[] call(p.3), to_apply=c.5\n}\n"}) {
    const ParsedHloText t = Parse(text);
    const xla::HloModuleProto& m = t.module;
    ASSERT_EQ(m.computations_size(), 2) << text;
    EXPECT_EQ(m.computations(0).instructions(0).id(), 1) << text;
    EXPECT_EQ(m.computations(0).instructions(1).id(), 2) << text;
    EXPECT_EQ(V(m.computations(0).instructions(1).operand_ids()), (std::vector<int64_t>{1}));
    EXPECT_EQ(m.computations(0).id(), 3) << text;
    EXPECT_EQ(m.computations(1).instructions(0).id(), 4) << text;
    EXPECT_EQ(m.computations(1).root_id(), 5) << text;
    EXPECT_EQ(V(m.computations(1).instructions(1).called_computation_ids()),
              (std::vector<int64_t>{3}));
    EXPECT_EQ(m.computations(1).id(), 6) << text;
    EXPECT_EQ(m.entry_computation_id(), 6) << text;
  }
}

TEST(HloParseTest, LongStyle) {
  const ParsedHloText t = Parse(kLong);
  const xla::HloModuleProto& m = t.module;
  EXPECT_EQ(m.name(), "SyncTensorsGraph.21");
  ASSERT_EQ(m.computations_size(), 2);
  // Ids: every name ends in a number, distinct among the instructions and
  // among the computations (XlaBuilder's <name>.<id>), so those are the
  // ids.
  const xla::HloComputationProto& add = m.computations(0);
  EXPECT_EQ(add.name(), "AddComputation.9");
  EXPECT_EQ(add.id(), 9);
  EXPECT_EQ(add.root_id(), 12);
  ASSERT_EQ(add.instructions_size(), 3);
  EXPECT_EQ(add.instructions(0).name(), "x.10");
  EXPECT_EQ(add.instructions(0).id(), 10);
  EXPECT_EQ(add.instructions(0).opcode(), "parameter");
  EXPECT_EQ(add.instructions(0).parameter_number(), 0);
  EXPECT_EQ(add.instructions(1).parameter_number(), 1);
  EXPECT_EQ(add.instructions(2).opcode(), "add");
  EXPECT_EQ(V(add.instructions(2).operand_ids()), (std::vector<int64_t>{10, 11}));
  EXPECT_FALSE(add.is_fusion_computation());
  ASSERT_EQ(add.program_shape().parameters_size(), 2);
  EXPECT_EQ(add.program_shape().parameter_names(0), "x.10");
  EXPECT_EQ(add.program_shape().parameter_names(1), "y.11");
  EXPECT_EQ(add.program_shape().result().element_type(), xla::F32);

  const xla::HloComputationProto& e = m.computations(1);
  EXPECT_EQ(e.name(), "SyncTensorsGraph.21");
  EXPECT_EQ(e.id(), 21);
  EXPECT_EQ(m.entry_computation_id(), 21);
  EXPECT_EQ(m.entry_computation_name(), "SyncTensorsGraph.21");
  EXPECT_EQ(m.id(), 21);
  EXPECT_EQ(e.root_id(), 14);
  ASSERT_EQ(e.instructions_size(), 6);
  // Text order, kept.
  const char* names[] = {"p1.2", "p0.1", "multiply.3", "constant.4", "reduce.13",
                         "tuple.14"};
  const int64_t ids[] = {2, 1, 3, 4, 13, 14};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(e.instructions(i).name(), names[i]);
    EXPECT_EQ(e.instructions(i).id(), ids[i]);
  }
  EXPECT_EQ(V(e.instructions(4).called_computation_ids()), (std::vector<int64_t>{9}));
  const xla::HloInstructionProto& p1 = e.instructions(0);
  EXPECT_EQ(p1.parameter_number(), 1);
  EXPECT_EQ(p1.frontend_attributes().map().at("neff_input_names"), "input1");
  const xla::ShapeProto& s = p1.shape();
  EXPECT_EQ(s.element_type(), xla::F32);
  EXPECT_EQ(V(s.dimensions()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(V(s.layout().minor_to_major()), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s.is_dynamic_dimension_size(), 0);

  const xla::HloInstructionProto& mul = Instr(t, "multiply.3");
  EXPECT_EQ(OperandNames(t, mul), (std::vector<std::string>{"p0.1", "p1.2"}));
  EXPECT_EQ(mul.metadata().op_type(), "aten__mul");
  EXPECT_EQ(mul.metadata().op_name(), "aten__mul");
  EXPECT_EQ(mul.metadata().source_file(), "/tmp/m.py");
  EXPECT_EQ(mul.metadata().source_line(), 12);

  const xla::HloInstructionProto& c = Instr(t, "constant.4");
  EXPECT_EQ(c.literal().shape().element_type(), xla::F32);
  ASSERT_EQ(c.literal().f32s_size(), 1);
  EXPECT_EQ(c.literal().f32s(0), 0.0f);
  EXPECT_FALSE(IsElidedLiteral(c.literal()));

  const xla::HloInstructionProto& r = Instr(t, "reduce.13");
  EXPECT_EQ(V(r.dimensions()), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Called(t, r), (std::vector<std::string>{"AddComputation.9"}));

  const xla::HloInstructionProto& tuple = Instr(t, "tuple.14");
  EXPECT_EQ(tuple.shape().element_type(), xla::TUPLE);
  ASSERT_EQ(tuple.shape().tuple_shapes_size(), 2);
  EXPECT_FALSE(tuple.shape().has_layout());
  EXPECT_EQ(tuple.frontend_attributes().map().at("neff_output_names"),
            "output0,output1");

  // The header.
  EXPECT_TRUE(t.extras.has_entry_computation_layout);
  EXPECT_TRUE(t.extras.config_attributes.empty());
  ASSERT_EQ(m.host_program_shape().parameters_size(), 2);
  EXPECT_EQ(m.host_program_shape().parameter_names_size(), 0);
  EXPECT_EQ(m.host_program_shape().result().tuple_shapes_size(), 2);
  ASSERT_EQ(m.input_output_alias().entries_size(), 1);
  const auto& alias = m.input_output_alias().entries(0);
  EXPECT_EQ(V(alias.output_shape_index()), (std::vector<int64_t>{0}));
  EXPECT_EQ(alias.parameter_number(), 1);
  EXPECT_EQ(alias.parameter_shape_index_size(), 0);
  EXPECT_EQ(alias.kind(), xla::MUST_ALIAS);
  EXPECT_FALSE(m.has_schedule());
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
}

// Modern style: as long, without operand shapes.
TEST(HloParseTest, ModernStyle) {
  const ParsedHloText t = Parse(R"(HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%region_0.2 (Arg_0.3: f32[], Arg_1.4: f32[]) -> f32[] {
  %Arg_0.3 = f32[] parameter(0)
  %Arg_1.4 = f32[] parameter(1)
  ROOT %maximum.5 = f32[] maximum(%Arg_0.3, %Arg_1.4), metadata={op_name="jit(f)/max" source_file="f.py" source_line=3}
}

ENTRY %main.10 (Arg_0.1: f32[4]) -> f32[4] {
  %Arg_0.1 = f32[4]{0} parameter(0), metadata={op_name="x"}
  %constant.6 = f32[] constant(-inf)
  %reduce.7 = f32[] reduce(%Arg_0.1, %constant.6), dimensions={0}, to_apply=%region_0.2
  %broadcast.8 = f32[4]{0} broadcast(%reduce.7), dimensions={}
  ROOT %subtract.9 = f32[4]{0} subtract(%Arg_0.1, %broadcast.8)
}
)");
  const xla::HloModuleProto& m = t.module;
  EXPECT_EQ(m.name(), "jit_f");
  ASSERT_EQ(m.computations_size(), 2);
  EXPECT_EQ(m.computations(1).name(), "main.10");
  EXPECT_EQ(Instr(t, "maximum.5").metadata().op_name(), "jit(f)/max");
  EXPECT_EQ(Instr(t, "maximum.5").metadata().source_line(), 3);
  const xla::LiteralProto& l = Instr(t, "constant.6").literal();
  ASSERT_EQ(l.f32s_size(), 1);
  EXPECT_EQ(l.f32s(0), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(OperandNames(t, Instr(t, "reduce.7")),
            (std::vector<std::string>{"Arg_0.1", "constant.6"}));
  EXPECT_EQ(Instr(t, "broadcast.8").dimensions_size(), 0);
  EXPECT_EQ(OperandNames(t, Instr(t, "subtract.9")),
            (std::vector<std::string>{"Arg_0.1", "broadcast.8"}));
  EXPECT_EQ(m.computations(1).root_id(), Instr(t, "subtract.9").id());
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
}

// Short style: no `%`, no metadata, no program shapes in the headers, every
// constant in full; here without entry_computation_layout.
TEST(HloParseTest, ShortStyle) {
  const ParsedHloText t = Parse(R"(HloModule m, replica_count=2, num_partitions=4

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main.3 {
  p = f32[2,3]{0,1} parameter(0)
  c = f32[2,3]{1,0} constant({ { 1, 2, 3 }, { 4, 5, 6 } })
  a = f32[2,3]{1,0} add(p, c)
  ROOT r = f32[3]{0} reduce(a, f32[] constant(0)), dimensions={0}, to_apply=add
}
)");
  const xla::HloModuleProto& m = t.module;
  EXPECT_EQ(m.name(), "m");
  // Config attributes kept verbatim, in order.
  ASSERT_EQ(t.extras.config_attributes.size(), 2u);
  EXPECT_EQ(t.extras.config_attributes[0],
            (std::pair<std::string, std::string>{"replica_count", "2"}));
  EXPECT_EQ(t.extras.config_attributes[1],
            (std::pair<std::string, std::string>{"num_partitions", "4"}));
  // No entry_computation_layout: inferred from the parameters and root.
  EXPECT_FALSE(t.extras.has_entry_computation_layout);
  ASSERT_EQ(m.host_program_shape().parameters_size(), 1);
  EXPECT_EQ(V(m.host_program_shape().parameters(0).layout().minor_to_major()),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(V(m.host_program_shape().result().dimensions()),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(m.host_program_shape().parameter_names_size(), 0);
  // The nested anonymous constant: added before its user, named
  // <opcode>.anon.
  const xla::HloComputationProto& e = Comp(t, "main.3");
  ASSERT_EQ(e.instructions_size(), 5);
  EXPECT_EQ(e.instructions(3).name(), "constant.anon");
  EXPECT_EQ(e.instructions(4).name(), "r");
  EXPECT_EQ(OperandNames(t, e.instructions(4)),
            (std::vector<std::string>{"a", "constant.anon"}));
  const xla::LiteralProto& c = Instr(t, "c").literal();
  ASSERT_EQ(c.f32s_size(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.f32s(i), static_cast<float>(i + 1));
  EXPECT_EQ(Called(t, Instr(t, "r")), (std::vector<std::string>{"add"}));
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
}

// --- Leniency -------------------------------------------------------------------

TEST(HloParseTest, NoHeaderNoEntryNoRoot) {
  // The last computation is the entry, the last instruction each root; the
  // module is named after the entry.
  const ParsedHloText u = Parse(R"(body {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  t = (s32[]) tuple(s32[] add(i, one))
}

cond {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}

main {
  p = s32[] constant(0)
  t = (s32[]) tuple(p)
  w = (s32[]) while(t), condition=cond, body=body
}
)");
  const xla::HloModuleProto& m = u.module;
  EXPECT_EQ(m.name(), "module_main");
  EXPECT_EQ(m.entry_computation_name(), "main");
  ASSERT_EQ(m.computations_size(), 3);
  EXPECT_EQ(m.entry_computation_id(), m.computations(2).id());
  // Roots: the last instruction where no ROOT is written.
  EXPECT_EQ(ById(u, m.computations(0).root_id()).name(), "t");
  EXPECT_EQ(ById(u, m.computations(2).root_id()).name(), "w");
  // Names used again in later computations are renamed as XLA's
  // NameUniquer renames them.
  EXPECT_EQ(m.computations(1).instructions(0).name(), "p.1");
  EXPECT_EQ(m.computations(1).instructions(1).name(), "i.1");
  EXPECT_EQ(m.computations(2).instructions(0).name(), "p.2");
  EXPECT_EQ(m.computations(2).instructions(1).name(), "t.1");
  // A while calls its body first.
  EXPECT_EQ(Called(u, m.computations(2).instructions(2)),
            (std::vector<std::string>{"body", "cond"}));
  EXPECT_EQ(m.computations(0).instructions(3).name(), "add.anon");
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
}

TEST(HloParseTest, NestedAnonymousOperandsAndComments) {
  const ParsedHloText t = Parse(R"(HloModule m
/* a block
   comment */
ENTRY e {
  x = f32[2]{0} parameter(0) // trailing comment
  y = f32[2]{0} parameter(1)
  ROOT r = f32[2]{0} add(f32[2]{0} sqrt(f32[2]{0} negate(x)), /*index=1*/ y)
}
)");
  const xla::HloComputationProto& e = t.module.computations(0);
  ASSERT_EQ(e.instructions_size(), 5);
  EXPECT_EQ(e.instructions(2).name(), "negate.anon");
  EXPECT_EQ(e.instructions(3).name(), "sqrt.anon");
  EXPECT_EQ(OperandNames(t, e.instructions(3)),
            (std::vector<std::string>{"negate.anon"}));
  EXPECT_EQ(OperandNames(t, e.instructions(4)),
            (std::vector<std::string>{"sqrt.anon", "y"}));
  EXPECT_TRUE(ValidateModuleProto(t.module).ok());
}

TEST(HloParseTest, AttributesInAnyOrder) {
  const char* a = R"(s {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[4,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(p, z), to_apply=s, dimensions={0}, metadata={source_line=3 op_type="x"}
})";
  const ParsedHloText t = Parse(a);
  const xla::HloInstructionProto& r = Instr(t, "r");
  EXPECT_EQ(V(r.dimensions()), (std::vector<int64_t>{0}));
  EXPECT_EQ(Called(t, r), (std::vector<std::string>{"s"}));
  EXPECT_EQ(r.metadata().op_type(), "x");
  EXPECT_EQ(r.metadata().source_line(), 3);
  // Shapes without layouts get the default one.
  EXPECT_EQ(V(Instr(t, "p").shape().layout().minor_to_major()),
            (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(Instr(t, "z").shape().has_layout());
  EXPECT_EQ(Instr(t, "z").shape().layout().minor_to_major_size(), 0);
}

TEST(HloParseTest, ScanTakesToApply) {
  // What the printer writes for a scan: its computation as to_apply=.
  const ParsedHloText t = Parse(R"(s {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] scan(p, z), to_apply=s
})");
  EXPECT_EQ(Called(t, Instr(t, "r")), (std::vector<std::string>{"s"}));
}

TEST(HloParseTest, ScheduledModule) {
  const ParsedHloText t = Parse(R"(HloModule m, is_scheduled=true

ENTRY e {
  b = f32[] parameter(1)
  a = f32[] parameter(0)
  ROOT s = f32[] subtract(a, b)
}
)");
  const xla::HloModuleProto& m = t.module;
  ASSERT_TRUE(m.has_schedule());
  const auto& seqs = m.schedule().sequences();
  ASSERT_EQ(seqs.size(), 1u);
  const auto& seq = seqs.at(m.computations(0).id());
  ASSERT_EQ(seq.instruction_ids_size(), 3);
  EXPECT_EQ(ById(t, seq.instruction_ids(0)).name(), "b");
  EXPECT_EQ(ById(t, seq.instruction_ids(1)).name(), "a");
  EXPECT_EQ(ById(t, seq.instruction_ids(2)).name(), "s");
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
  // The config attributes of the header, verbatim; is_scheduled is not one.
  const ParsedHloText u = Parse(
      "HloModule m, allow_spmd_sharding_propagation_to_output={true,false}, "
      "alias_passthrough_params=true\nENTRY e { ROOT p = f32[] parameter(0) }");
  ASSERT_EQ(u.extras.config_attributes.size(), 2u);
  EXPECT_EQ(u.extras.config_attributes[0].second, "{true,false}");
  EXPECT_EQ(u.extras.config_attributes[1].first, "alias_passthrough_params");
  EXPECT_EQ(u.extras.config_attributes[1].second, "true");
}

}  // namespace
}  // namespace decomposed::hlo

namespace decomposed::hlo {
namespace {

// --- Every attribute XLA's printer writes ---------------------------------------

constexpr std::string_view kAttributes = R"(HloModule attrs

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GE
}

fused {
  f0 = f32[4]{0} parameter(0)
  ROOT fn = f32[4]{0} negate(f0)
}

wrapped {
  w0 = f32[4]{0} parameter(0)
  ROOT wn = f32[4]{0} exponential(w0)
}

branch0 {
  b0 = f32[4]{0} parameter(0)
  ROOT b0n = f32[4]{0} negate(b0)
}

branch1 {
  b1 = f32[4]{0} parameter(0)
  ROOT b1c = f32[4]{0} copy(b1)
}

ENTRY main {
  p = f32[4]{0} parameter(0), parameter_replication={true}
  m = f32[2,3]{1,0} parameter(1)
  i = s32[] parameter(2)
  q = pred[] parameter(3)
  img = f32[1,5,5,2]{3,2,1,0} parameter(4)
  ker = f32[3,3,2,4]{3,2,1,0} parameter(5)
  idx = s32[3,1]{1,0} parameter(6)
  tok = token[] after-all()
  iota.1 = s32[4]{0} iota(), iota_dimension=0
  bc = f32[2,3,4]{2,1,0} broadcast(p), dimensions={2}
  tr = f32[3,2]{0,1} transpose(m), dimensions={1,0}
  rs = f32[6]{0} reshape(m), inferred_dimension=0
  rv = f32[2,3]{1,0} reverse(m), dimensions={0,1}
  cc = f32[4,3]{1,0} concatenate(m, m), dimensions={0}
  sl = f32[1,2]{1,0} slice(m), slice={[1:2], [0:3:2]}
  pd = f32[3,9]{1,0} pad(m, f32[] constant(0)), padding=0_1x1_1_2
  ds = f32[1,2]{1,0} dynamic-slice(m, i, i), dynamic_slice_sizes={1,2}
  dus = f32[2,3]{1,0} dynamic-update-slice(m, ds, i, i)
  gte = f32[2,3]{1,0} get-tuple-element((f32[2,3]{1,0}, s32[]) tuple(m, i)), index=0
  cmp = pred[4]{0} compare(p, p), direction=NE, type=FLOAT
  cv = bf16[4]{0} convert(p)
  rp = f32[4]{0} reduce-precision(p), exponent_bits=5, mantissa_bits=10
  dot.1 = f32[2,2]{1,0} dot(m, tr), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}, algorithm=dot_bf16_bf16_f32
  bdot = f32[2,3]{1,0} dot(bc, bc), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  conv = f32[1,5,5,4]{3,2,1,0} convolution(img, ker), window={size=3x3 stride=1x1 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1
  rw = f32[2,1]{1,0} reduce-window(m, f32[] constant(0)), window={size=1x3 stride=1x2 pad=0_0x-1_1 rhs_reversal=0x1}, to_apply=add
  red = f32[2]{0} reduce(m, f32[] constant(0)), dimensions={1}, to_apply=add
  srt = f32[4]{0} sort(p), dimensions={0}, is_stable=true, to_apply=less
  tk = (f32[2]{0}, s32[2]{0}) topk(p), k=2, largest=false
  gth = f32[3,3]{1,0} gather(m, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true
  sct = f32[2,3]{1,0} scatter(m, idx, gth), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add
  sas = f32[1,5,5,2]{3,2,1,0} select-and-scatter(img, img, f32[] constant(0)), window={size=1x1x1x1}, select=ge, scatter=add
  bnt = (f32[1,5,5,2]{3,2,1,0}, f32[2]{0}, f32[2]{0}) batch-norm-training(img, f32[2]{0} constant({1, 1}), f32[2]{0} constant({0, 0})), epsilon=0.001, feature_index=3
  cl = f32[4]{0} clamp(f32[] constant(0), p, f32[] constant(1))
  fu = f32[4]{0} fusion(p), kind=kLoop, calls=fused, output_to_operand_aliasing={{}: (0, {})}
  ca = f32[4]{0} call(p), to_apply=fused, is_composite=true
  cd = f32[4]{0} conditional(i, p, p), branch_computations={branch0, branch1}
  cd2 = f32[4]{0} conditional(q, p, p), true_computation=branch0, false_computation=branch1
  as = ((f32[4]{0}), f32[4]{0}, u32[]) async-start(p), calls=wrapped, async_execution_thread="parallel"
  ad = f32[4]{0} async-done(as)
  ar = f32[4]{0} all-reduce(p), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
  ag = f32[8]{0} all-gather(p), channel_id=4, replica_groups=[2,2]<=[4], dimensions={0}, constrain_layout=true
  rsc = f32[2]{0} reduce-scatter(p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, to_apply=add
  a2a = f32[4]{0} all-to-all(p), replica_groups={{0,1}}, dimensions={0}
  cp = f32[4]{0} collective-permute(p), channel_id=5, source_target_pairs={{0,1},{1,0}}
  rid = u32[] replica-id()
  pid = u32[] partition-id()
  cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(p), cross_program_prefetch_index=0
  cdn = f32[4]{0} copy-done(cs)
  cc1 = f32[4]{0} custom-call(p, m), custom_call_target="AwsNeuronSoftmax", api_version=API_VERSION_TYPED_FFI, backend_config="3", custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[4]{0}, f32[2,3]{0,1}}, output_to_operand_aliasing={{}: (0, {})}, padding_type=PADDING_SAME
  cc2 = f32[4]{0} custom-call(p), custom_call_target="t", called_computations={fused}, backend_config={"k": {"v": "}"}}
  cc3 = f32[4]{0} custom-call(p), custom_call_target="t", to_apply=fused, literal=s32[2]{0} {5, 6}, api_version=API_VERSION_UNSPECIFIED
  rng = f32[4]{0} rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform
  rbg = (u64[2]{0}, u32[4]{0}) rng-bit-generator(u64[2]{0} constant({1, 2})), algorithm=rng_three_fry
  rgs = u64[2]{0} rng-get-and-update-state(), delta=4
  fft.1 = c64[4]{0} fft(c64[4]{0} convert(p)), fft_type=FFT, fft_length={4}
  tri = f32[3,3]{1,0} triangular-solve(f32[3,3]{1,0} constant({...}), f32[3,3]{1,0} constant({...})), left_side=true, lower=true, unit_diagonal=true, transpose_a=TRANSPOSE
  cho = f32[3,3]{1,0} cholesky(tri), lower=true
  gds = s32[] get-dimension-size(m), dimensions={1}
  sds = f32[2,<=3]{1,0} set-dimension-size(m, gds), dimensions={1}
  inf = ((f32[4]{0}), token[]) infeed(tok), infeed_config="in"
  outf = token[] outfeed(p, tok), outfeed_config="out", outfeed_shape=f32[4]{0}
  snd = (f32[4]{0}, u32[], token[]) send(p, tok), channel_id=6, is_host_transfer=true
  sdd = token[] send-done(snd), channel_id=6, is_host_transfer=true
  rcv = (f32[4]{0}, u32[], token[]) recv(tok), channel_id=7
  rcd = (f32[4]{0}, token[]) recv-done(rcv), channel_id=7
  dom = f32[4]{0} domain(p), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  ex = f32[4]{0} exponential(p), result_accuracy={mode=highest}
  lg = f32[4]{0} log(p), result_accuracy={tolerance={atol=0.5,rtol=0.25,ulps=2}}
  st = f32[4]{0} sqrt(p), statistics={visualizing_index=1,stat-0=0.5,stat-1=2}
  ROOT r = (f32[4]{0}, f32[4]{0}) tuple(ex, lg), control-predecessors={st, cl}, sharding={{replicated}, {maximal device=1}}
}
)";

TEST(HloParseTest, EveryAttribute) {
  const ParsedHloText t = Parse(kAttributes);
  EXPECT_EQ(Instr(t, "p").parameter_replication().replicated_at_leaf_buffers_size(), 1);
  EXPECT_TRUE(Instr(t, "p").parameter_replication().replicated_at_leaf_buffers(0));
  EXPECT_EQ(V(Instr(t, "iota.1").dimensions()), (std::vector<int64_t>{0}));
  EXPECT_EQ(V(Instr(t, "bc").dimensions()), (std::vector<int64_t>{2}));
  EXPECT_EQ(V(Instr(t, "tr").dimensions()), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(V(Instr(t, "tr").shape().layout().minor_to_major()),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(V(Instr(t, "rv").dimensions()), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(V(Instr(t, "cc").dimensions()), (std::vector<int64_t>{0}));
  // XLA's reshape keeps its inferred dimension as its one dimension.
  EXPECT_EQ(V(Instr(t, "rs").dimensions()), (std::vector<int64_t>{0}));
  {
    const auto& s = Instr(t, "sl").slice_dimensions();
    ASSERT_EQ(s.size(), 2);
    EXPECT_EQ(s[0].start(), 1);
    EXPECT_EQ(s[0].limit(), 2);
    EXPECT_EQ(s[0].stride(), 1);
    EXPECT_EQ(s[1].start(), 0);
    EXPECT_EQ(s[1].limit(), 3);
    EXPECT_EQ(s[1].stride(), 2);
  }
  {
    const auto& pc = Instr(t, "pd").padding_config();
    ASSERT_EQ(pc.dimensions_size(), 2);
    EXPECT_EQ(pc.dimensions(0).edge_padding_low(), 0);
    EXPECT_EQ(pc.dimensions(0).edge_padding_high(), 1);
    EXPECT_EQ(pc.dimensions(0).interior_padding(), 0);
    EXPECT_EQ(pc.dimensions(1).edge_padding_low(), 1);
    EXPECT_EQ(pc.dimensions(1).edge_padding_high(), 1);
    EXPECT_EQ(pc.dimensions(1).interior_padding(), 2);
  }
  EXPECT_EQ(V(Instr(t, "ds").dynamic_slice_sizes()), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(OperandNames(t, Instr(t, "dus")),
            (std::vector<std::string>{"m", "ds", "i", "i"}));
  EXPECT_EQ(Instr(t, "gte").tuple_index(), 0);
  EXPECT_EQ(Instr(t, "cmp").comparison_direction(), "NE");
  EXPECT_EQ(Instr(t, "cmp").comparison_type(), "FLOAT");
  EXPECT_EQ(Instr(t, "g").comparison_direction(), "GE");
  EXPECT_EQ(Instr(t, "g").comparison_type(), "");  // not written: not set
  EXPECT_EQ(Instr(t, "rp").exponent_bits(), 5);
  EXPECT_EQ(Instr(t, "rp").mantissa_bits(), 10);
  {
    const auto& d = Instr(t, "dot.1");
    EXPECT_EQ(V(d.dot_dimension_numbers().lhs_contracting_dimensions()),
              (std::vector<int64_t>{1}));
    EXPECT_EQ(V(d.dot_dimension_numbers().rhs_contracting_dimensions()),
              (std::vector<int64_t>{0}));
    EXPECT_EQ(d.dot_dimension_numbers().lhs_batch_dimensions_size(), 0);
    ASSERT_EQ(d.precision_config().operand_precision_size(), 2);
    EXPECT_EQ(d.precision_config().operand_precision(0), xla::PrecisionConfig::HIGHEST);
    EXPECT_EQ(d.precision_config().operand_precision(1), xla::PrecisionConfig::DEFAULT);
    EXPECT_EQ(d.precision_config().algorithm(),
              xla::PrecisionConfig::ALG_DOT_BF16_BF16_F32);
    const auto& b = Instr(t, "bdot");
    EXPECT_EQ(V(b.dot_dimension_numbers().lhs_batch_dimensions()),
              (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(V(b.dot_dimension_numbers().rhs_batch_dimensions()),
              (std::vector<int64_t>{0, 1}));
    // Without operand_precision: DEFAULT per operand, as XLA keeps it.
    ASSERT_EQ(b.precision_config().operand_precision_size(), 2);
    EXPECT_EQ(b.precision_config().operand_precision(1), xla::PrecisionConfig::DEFAULT);
  }
  {
    const auto& c = Instr(t, "conv");
    ASSERT_EQ(c.window().dimensions_size(), 2);
    for (const auto& d : c.window().dimensions()) {
      EXPECT_EQ(d.size(), 3);
      EXPECT_EQ(d.stride(), 1);
      EXPECT_EQ(d.padding_low(), 1);
      EXPECT_EQ(d.padding_high(), 1);
      EXPECT_EQ(d.base_dilation(), 1);
      EXPECT_EQ(d.window_dilation(), 1);
      EXPECT_FALSE(d.window_reversal());
    }
    const auto& dn = c.convolution_dimension_numbers();
    EXPECT_EQ(dn.input_batch_dimension(), 0);
    EXPECT_EQ(dn.input_feature_dimension(), 3);
    EXPECT_EQ(V(dn.input_spatial_dimensions()), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(V(dn.kernel_spatial_dimensions()), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(dn.kernel_input_feature_dimension(), 2);
    EXPECT_EQ(dn.kernel_output_feature_dimension(), 3);
    EXPECT_EQ(dn.output_batch_dimension(), 0);
    EXPECT_EQ(dn.output_feature_dimension(), 3);
    EXPECT_EQ(V(dn.output_spatial_dimensions()), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(c.feature_group_count(), 1);
    EXPECT_EQ(c.batch_group_count(), 1);
  }
  {
    const auto& w = Instr(t, "rw").window();
    ASSERT_EQ(w.dimensions_size(), 2);
    EXPECT_EQ(w.dimensions(1).size(), 3);
    EXPECT_EQ(w.dimensions(1).stride(), 2);
    EXPECT_EQ(w.dimensions(1).padding_low(), -1);
    EXPECT_EQ(w.dimensions(1).padding_high(), 1);
    EXPECT_FALSE(w.dimensions(0).window_reversal());
    EXPECT_TRUE(w.dimensions(1).window_reversal());
    EXPECT_EQ(Called(t, Instr(t, "rw")), (std::vector<std::string>{"add"}));
  }
  EXPECT_TRUE(Instr(t, "srt").is_stable());
  EXPECT_EQ(Called(t, Instr(t, "srt")), (std::vector<std::string>{"less"}));
  EXPECT_EQ(Instr(t, "tk").k(), 2);
  EXPECT_FALSE(Instr(t, "tk").largest());
  {
    const auto& g = Instr(t, "gth");
    const auto& d = g.gather_dimension_numbers();
    EXPECT_EQ(V(d.offset_dims()), (std::vector<int64_t>{1}));
    EXPECT_EQ(V(d.collapsed_slice_dims()), (std::vector<int64_t>{0}));
    EXPECT_EQ(V(d.start_index_map()), (std::vector<int64_t>{0}));
    EXPECT_EQ(d.index_vector_dim(), 1);
    EXPECT_EQ(V(g.gather_slice_sizes()), (std::vector<int64_t>{1, 3}));
    EXPECT_TRUE(g.indices_are_sorted());
  }
  {
    const auto& s = Instr(t, "sct");
    const auto& d = s.scatter_dimension_numbers();
    EXPECT_EQ(V(d.update_window_dims()), (std::vector<int64_t>{1}));
    EXPECT_EQ(V(d.inserted_window_dims()), (std::vector<int64_t>{0}));
    EXPECT_EQ(V(d.scatter_dims_to_operand_dims()), (std::vector<int64_t>{0}));
    EXPECT_EQ(d.index_vector_dim(), 1);
    EXPECT_TRUE(s.indices_are_sorted());
    EXPECT_TRUE(s.unique_indices());
    EXPECT_EQ(Called(t, s), (std::vector<std::string>{"add"}));
  }
  EXPECT_EQ(Called(t, Instr(t, "sas")), (std::vector<std::string>{"ge", "add"}));
  EXPECT_FLOAT_EQ(Instr(t, "bnt").epsilon(), 0.001f);
  EXPECT_EQ(Instr(t, "bnt").feature_index(), 3);
  {
    const auto& f = Instr(t, "fu");
    EXPECT_EQ(f.fusion_kind(), "kLoop");
    EXPECT_EQ(Called(t, f), (std::vector<std::string>{"fused"}));
    ASSERT_EQ(f.output_operand_aliasing_size(), 1);
    EXPECT_EQ(f.output_operand_aliasing(0).operand_index(), 0);
    EXPECT_TRUE(Comp(t, "fused").is_fusion_computation());
  }
  EXPECT_TRUE(Instr(t, "ca").is_composite());
  EXPECT_EQ(Called(t, Instr(t, "cd")),
            (std::vector<std::string>{"branch0", "branch1"}));
  EXPECT_EQ(Called(t, Instr(t, "cd2")),
            (std::vector<std::string>{"branch0", "branch1"}));
  EXPECT_EQ(Called(t, Instr(t, "as")), (std::vector<std::string>{"wrapped"}));
  EXPECT_EQ(Instr(t, "as").async_execution_thread(), "parallel");
  // async-done calls what its start calls.
  EXPECT_EQ(Called(t, Instr(t, "ad")), (std::vector<std::string>{"wrapped"}));
  EXPECT_EQ(Instr(t, "ad").async_execution_thread(), "parallel");
  {
    const auto& a = Instr(t, "ar");
    EXPECT_EQ(a.channel_id(), 3);
    ASSERT_EQ(a.replica_groups_size(), 2);
    EXPECT_EQ(V(a.replica_groups(1).replica_ids()), (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(a.use_global_device_ids());
    EXPECT_EQ(Called(t, a), (std::vector<std::string>{"add"}));
  }
  {
    const auto& a = Instr(t, "ag");
    EXPECT_EQ(a.replica_groups_size(), 0);
    const auto& iota = a.collective_device_list().iota_replica_group_list();
    EXPECT_EQ(iota.num_replica_groups(), 2);
    EXPECT_EQ(iota.num_devices_per_group(), 2);
    EXPECT_EQ(V(iota.iota_reshape_dims()), (std::vector<int64_t>{4}));
    ASSERT_EQ(iota.iota_transpose_perm_size(), 1);
    EXPECT_EQ(iota.iota_transpose_perm(0), 0);
    EXPECT_TRUE(a.constrain_layout());
    EXPECT_EQ(V(a.dimensions()), (std::vector<int64_t>{0}));
    const auto& r = Instr(t, "rsc").collective_device_list().iota_replica_group_list();
    EXPECT_EQ(V(r.iota_reshape_dims()), (std::vector<int64_t>{2, 2}));
    ASSERT_EQ(r.iota_transpose_perm_size(), 2);
    EXPECT_EQ(r.iota_transpose_perm(0), 1);
    EXPECT_EQ(r.iota_transpose_perm(1), 0);
  }
  {
    const auto& c = Instr(t, "cp");
    ASSERT_EQ(c.source_target_pairs_size(), 2);
    EXPECT_EQ(c.source_target_pairs(0).source(), 0);
    EXPECT_EQ(c.source_target_pairs(0).target(), 1);
    EXPECT_EQ(c.source_target_pairs(1).source(), 1);
  }
  EXPECT_TRUE(Instr(t, "cs").has_cross_program_prefetch_index());
  EXPECT_EQ(Instr(t, "cs").cross_program_prefetch_index(), 0);
  {
    const auto& c = Instr(t, "cc1");
    EXPECT_EQ(c.custom_call_target(), "AwsNeuronSoftmax");
    EXPECT_EQ(c.custom_call_api_version(), xla::API_VERSION_TYPED_FFI);
    EXPECT_EQ(c.backend_config(), "3");
    EXPECT_TRUE(c.custom_call_has_side_effect());
    EXPECT_EQ(c.custom_call_schedule(), xla::SCHEDULE_LATEST);
    EXPECT_TRUE(c.constrain_layout());
    ASSERT_EQ(c.operand_shapes_with_layout_size(), 2);
    EXPECT_EQ(V(c.operand_shapes_with_layout(1).layout().minor_to_major()),
              (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(c.output_operand_aliasing_size(), 1);
    EXPECT_EQ(c.padding_type(), xla::PADDING_SAME);
    const auto& c2 = Instr(t, "cc2");
    EXPECT_EQ(Called(t, c2), (std::vector<std::string>{"fused"}));
    // A JSON dictionary kept as written, braces in strings included.
    EXPECT_EQ(c2.backend_config(), "{\"k\": {\"v\": \"}\"}}");
    // No api_version= is XLA's default, ORIGINAL; UNSPECIFIED is kept.
    EXPECT_EQ(c2.custom_call_api_version(), xla::API_VERSION_ORIGINAL);
    const auto& c3 = Instr(t, "cc3");
    EXPECT_EQ(c3.custom_call_api_version(), xla::API_VERSION_UNSPECIFIED);
    EXPECT_EQ(Called(t, c3), (std::vector<std::string>{"fused"}));
    ASSERT_EQ(c3.literal().s32s_size(), 2);
    EXPECT_EQ(c3.literal().s32s(1), 6);
  }
  EXPECT_EQ(Instr(t, "rng").distribution(), xla::RNG_UNIFORM);
  EXPECT_EQ(Instr(t, "rbg").rng_algorithm(), xla::RNG_THREE_FRY);
  EXPECT_EQ(Instr(t, "rgs").delta(), 4);
  EXPECT_EQ(Instr(t, "fft.1").fft_type(), xla::FFT);
  EXPECT_EQ(V(Instr(t, "fft.1").fft_length()), (std::vector<int64_t>{4}));
  {
    const auto& o = Instr(t, "tri").triangular_solve_options();
    EXPECT_TRUE(o.left_side());
    EXPECT_TRUE(o.lower());
    EXPECT_TRUE(o.unit_diagonal());
    EXPECT_EQ(o.transpose_a(), xla::TriangularSolveOptions::TRANSPOSE);
    EXPECT_TRUE(Instr(t, "cho").cholesky_options().lower());
  }
  EXPECT_EQ(V(Instr(t, "gds").dimensions()), (std::vector<int64_t>{1}));
  {
    const auto& s = Instr(t, "sds").shape();
    ASSERT_EQ(s.is_dynamic_dimension_size(), 2);
    EXPECT_FALSE(s.is_dynamic_dimension(0));
    EXPECT_TRUE(s.is_dynamic_dimension(1));
  }
  EXPECT_EQ(Instr(t, "inf").infeed_config(), "in");
  EXPECT_EQ(Instr(t, "outf").outfeed_config(), "out");
  EXPECT_EQ(V(Instr(t, "outf").outfeed_shape().dimensions()),
            (std::vector<int64_t>{4}));
  EXPECT_EQ(Instr(t, "snd").channel_id(), 6);
  EXPECT_TRUE(Instr(t, "snd").is_host_transfer());
  EXPECT_TRUE(Instr(t, "sdd").is_host_transfer());
  EXPECT_EQ(Instr(t, "rcd").channel_id(), 7);
  EXPECT_FALSE(Instr(t, "rcv").is_host_transfer());
  // entry= is the user side, domain_exit_sharding; exit= the operand side.
  EXPECT_EQ(Instr(t, "dom").domain_exit_sharding().type(), xla::OpSharding::MAXIMAL);
  EXPECT_EQ(Instr(t, "dom").domain_entry_sharding().type(), xla::OpSharding::REPLICATED);
  EXPECT_EQ(Instr(t, "ex").result_accuracy().mode(), xla::ResultAccuracy::HIGHEST);
  {
    const auto& tol = Instr(t, "lg").result_accuracy().tolerance();
    EXPECT_EQ(tol.atol(), 0.5);
    EXPECT_EQ(tol.rtol(), 0.25);
    EXPECT_EQ(tol.ulps(), 2);
  }
  {
    const auto& s = Instr(t, "st").statistics_viz();
    EXPECT_EQ(s.stat_index_to_visualize(), 1);
    ASSERT_EQ(s.statistics_size(), 2);
    EXPECT_EQ(s.statistics(0).stat_name(), "stat-0");
    EXPECT_EQ(s.statistics(0).stat_val(), 0.5);
    EXPECT_EQ(s.statistics(1).stat_val(), 2);
  }
  {
    const auto& r = Instr(t, "r");
    std::vector<std::string> preds;
    for (int64_t id : r.control_predecessor_ids()) preds.push_back(ById(t, id).name());
    EXPECT_EQ(preds, (std::vector<std::string>{"st", "cl"}));
    EXPECT_EQ(r.sharding().type(), xla::OpSharding::TUPLE);
    ASSERT_EQ(r.sharding().tuple_shardings_size(), 2);
    EXPECT_EQ(r.sharding().tuple_shardings(1).type(), xla::OpSharding::MAXIMAL);
    EXPECT_EQ(V(r.sharding().tuple_shardings(1).tile_assignment_devices()),
              (std::vector<int64_t>{1}));
  }
  // Two elided constants: the shape alone.
  int elided = 0;
  for (const auto& i : Comp(t, "main").instructions()) {
    if (i.opcode() == "constant" && IsElidedLiteral(i.literal())) ++elided;
  }
  EXPECT_EQ(elided, 2);
  ValidateOptions lax;
  lax.allow_mixed_precision = true;
  EXPECT_TRUE(ValidateModuleProto(t.module, lax).ok())
      << ValidateModuleProto(t.module, lax);
}

TEST(HloParseTest, Shardings) {
  struct Case {
    const char* text;
    xla::OpSharding::Type type;
    std::vector<int64_t> dims, devices, reshape;
    std::vector<int32_t> perm;
    bool replicate_last = false;
  };
  const Case cases[] = {
      {"{replicated}", xla::OpSharding::REPLICATED, {}, {}, {}, {}},
      {"{manual}", xla::OpSharding::MANUAL, {}, {}, {}, {}},
      {"{unknown}", xla::OpSharding::UNKNOWN, {}, {}, {}, {}},
      {"{maximal device=3}", xla::OpSharding::MAXIMAL, {}, {3}, {}, {}},
      {"{devices=[2,1]0,1}", xla::OpSharding::OTHER, {2, 1}, {0, 1}, {}, {}},
      {"{devices=[8]<=[8]}", xla::OpSharding::OTHER, {8}, {}, {8}, {0}},
      {"{devices=[2,2]<=[2,2]T(1,0)}", xla::OpSharding::OTHER, {2, 2}, {}, {2, 2}, {1, 0}},
      {"{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", xla::OpSharding::OTHER,
       {2, 1, 2}, {0, 1, 2, 3}, {}, {}, true},
  };
  for (const Case& c : cases) {
    const ParsedHloText t = Parse(absl::StrCat(
        "ENTRY e { ROOT p = f32[4,4] parameter(0), sharding=", c.text, " }"));
    const xla::OpSharding& s = t.module.computations(0).instructions(0).sharding();
    EXPECT_EQ(s.type(), c.type) << c.text;
    EXPECT_EQ(V(s.tile_assignment_dimensions()), c.dims) << c.text;
    EXPECT_EQ(V(s.tile_assignment_devices()), c.devices) << c.text;
    EXPECT_EQ(V(s.iota_reshape_dims()), c.reshape) << c.text;
    EXPECT_EQ(std::vector<int32_t>(s.iota_transpose_perm().begin(),
                                   s.iota_transpose_perm().end()),
              c.perm)
        << c.text;
    EXPECT_EQ(s.replicate_on_last_tile_dim(), c.replicate_last) << c.text;
  }
  const ParsedHloText t = Parse(
      "ENTRY e { ROOT p = f32[4] parameter(0), sharding={devices=[2,2]<=[4] "
      "last_tile_dims={manual} shard_as 3 metadata={op_name=\"a\"}} }");
  const xla::OpSharding& s = t.module.computations(0).instructions(0).sharding();
  ASSERT_EQ(s.last_tile_dims_size(), 1);
  EXPECT_EQ(s.last_tile_dims(0), xla::OpSharding::MANUAL);
  EXPECT_TRUE(s.is_shard_group());
  EXPECT_EQ(s.shard_group_id(), 3);
  EXPECT_EQ(s.shard_group_type(), xla::OpSharding::AS);
  ASSERT_EQ(s.metadata_size(), 1);
  EXPECT_EQ(s.metadata(0).op_name(), "a");
  // An empty tuple sharding.
  EXPECT_EQ(Parse("ENTRY e { ROOT t = () tuple(), sharding={} }")
                .module.computations(0).instructions(0).sharding().type(),
            xla::OpSharding::TUPLE);
}

TEST(HloParseTest, MetadataAndFrontendAttributes) {
  const ParsedHloText t = Parse(R"(ENTRY e {
  ROOT p = f32[] parameter(0), metadata={op_type="a\"b" op_name="n\x41\n" source_file="f.py" source_line=7 source_end_line=8 source_column=2 source_end_column=9 profile_type={1,2} deduplicated_name="d" scheduling_name="s" stack_frame_id=4}, frontend_attributes={b="2",a="1",json={"x": 1}}, backend_config={"operation_queue_id":"0"}
})");
  const xla::HloInstructionProto& p = t.module.computations(0).instructions(0);
  const xla::OpMetadata& md = p.metadata();
  EXPECT_EQ(md.op_type(), "a\"b");
  EXPECT_EQ(md.op_name(), "nA\n");
  EXPECT_EQ(md.source_file(), "f.py");
  EXPECT_EQ(md.source_line(), 7);
  EXPECT_EQ(md.source_end_line(), 8);
  EXPECT_EQ(md.source_column(), 2);
  EXPECT_EQ(md.source_end_column(), 9);
  ASSERT_EQ(md.profile_type_size(), 2);
  EXPECT_EQ(md.profile_type(0), xla::WINDOW);
  EXPECT_EQ(md.deduplicated_name(), "d");
  EXPECT_EQ(md.scheduling_name(), "s");
  EXPECT_EQ(md.stack_frame_id(), 4);
  const auto& fa = p.frontend_attributes().map();
  ASSERT_EQ(fa.size(), 3u);
  EXPECT_EQ(fa.at("a"), "1");
  EXPECT_EQ(fa.at("b"), "2");
  EXPECT_EQ(fa.at("json"), "{\"x\": 1}");
  EXPECT_EQ(p.backend_config(), "{\"operation_queue_id\":\"0\"}");
}

TEST(HloParseTest, ModuleHeaderAndStackFrames) {
  const ParsedHloText t = Parse(R"(HloModule m, buffer_donor={ (0, {}), (1, {1,2}) }, frontend_attributes={fa="v"}

FileNames
1 "a.py"
2 "b.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=4}
StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY e {
  a = f32[] parameter(0)
  b = (f32[], (f32[], f32[])) parameter(1)
  ROOT r = f32[] copy(a)
}
)");
  const xla::HloModuleProto& m = t.module;
  ASSERT_EQ(m.buffer_donor().entries_size(), 2);
  EXPECT_EQ(m.buffer_donor().entries(1).parameter_number(), 1);
  EXPECT_EQ(V(m.buffer_donor().entries(1).parameter_shape_index()),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(m.frontend_attributes().map().at("fa"), "v");
  const auto& sf = m.stack_frame_index();
  ASSERT_EQ(sf.file_names_size(), 2);
  EXPECT_EQ(sf.file_names(1), "b.py");
  ASSERT_EQ(sf.function_names_size(), 1);
  ASSERT_EQ(sf.file_locations_size(), 1);
  EXPECT_EQ(sf.file_locations(0).line(), 3);
  EXPECT_EQ(sf.file_locations(0).column(), 1);
  ASSERT_EQ(sf.stack_frames_size(), 1);
  EXPECT_EQ(sf.stack_frames(0).file_location_id(), 1);
  EXPECT_EQ(sf.stack_frames(0).parent_frame_id(), 0);
  EXPECT_TRUE(ValidateModuleProto(m).ok()) << ValidateModuleProto(m);
}

}  // namespace
}  // namespace decomposed::hlo

namespace decomposed::hlo {
namespace {

// --- Literals -------------------------------------------------------------------------

// The literal of `ENTRY e { ROOT c = <shape> constant(<value>) }`.
xla::LiteralProto Lit(const std::string& shape, const std::string& value) {
  const ParsedHloText t =
      Parse(absl::StrCat("ENTRY e { ROOT c = ", shape, " constant(", value, ") }"));
  if (t.module.computations_size() == 0) return {};
  return t.module.computations(0).instructions(0).literal();
}

std::string LitError(const std::string& shape, const std::string& value) {
  return Error(absl::StrCat("ENTRY e { ROOT c = ", shape, " constant(", value, ") }"));
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

TEST(HloParseLiteralTest, Integers) {
  EXPECT_EQ(Lit("s8[2]", "{-128, 127}").s8s(), std::string("\x80\x7f", 2));
  EXPECT_EQ(Lit("u8[]", "255").u8s(), "\xff");
  EXPECT_EQ(Lit("s16[]", "-2").s16s(), std::string("\xfe\xff", 2));
  EXPECT_EQ(Lit("u16[]", "65535").u16s(), std::string("\xff\xff", 2));
  EXPECT_EQ(Lit("s32[2]", "{-2147483648, 2147483647}").s32s(1), 2147483647);
  EXPECT_EQ(Lit("s64[]", "-9223372036854775808").s64s(0),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Lit("u64[]", "18446744073709551615").u64s(0),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Lit("u32[]", "4294967295").u32s(0), 4294967295u);
  // Sub-byte types: one byte per element, the value in the low bits.
  EXPECT_EQ(Lit("s4[3]", "{-8, -3, 7}").s4s(), std::string("\x08\x0d\x07", 3));
  EXPECT_EQ(Lit("u4[]", "15").u4s(), "\x0f");
  EXPECT_EQ(Lit("s2[2]", "{-2, 1}").s2s(), std::string("\x02\x01", 2));
  EXPECT_EQ(Lit("u1[2]", "{1, 0}").u1s(), std::string("\x01\x00", 2));
  EXPECT_EQ(LitError("s8[]", "128"),
            "line 1, column 34: expected a value within the range of s8, found "
            "\"128\"");
  EXPECT_EQ(LitError("u8[]", "-1"),
            "line 1, column 34: expected a value within the range of u8, found "
            "\"-1\"");
  EXPECT_EQ(LitError("s4[]", "8"),
            "line 1, column 34: expected a value within the range of s4, found "
            "\"8\"");
  EXPECT_EQ(LitError("s64[]", "9223372036854775808"),
            "line 1, column 35: expected a value within the range of s64, found "
            "\"9223372036854775808\"");
  EXPECT_EQ(LitError("s32[]", "1.5"),
            "line 1, column 35: expected an integer for s32, found \"1.5\"");
}

TEST(HloParseLiteralTest, Preds) {
  const xla::LiteralProto l = Lit("pred[4]", "{1, 0, true, false}");
  ASSERT_EQ(l.preds_size(), 4);
  EXPECT_TRUE(l.preds(0));
  EXPECT_FALSE(l.preds(1));
  EXPECT_TRUE(l.preds(2));
  EXPECT_FALSE(l.preds(3));
  EXPECT_TRUE(Lit("pred[]", "true").preds(0));
}

TEST(HloParseLiteralTest, Floats) {
  EXPECT_EQ(Bits(Lit("f32[]", "1.5").f32s(0)), 0x3fc00000u);
  EXPECT_EQ(Bits(Lit("f32[]", "-0").f32s(0)), 0x80000000u);
  EXPECT_EQ(Bits(Lit("f32[]", "1e-45").f32s(0)), 0x00000001u);  // denormal
  EXPECT_EQ(Bits(Lit("f32[]", "3.40282347e+38").f32s(0)), 0x7f7fffffu);
  EXPECT_EQ(Bits(Lit("f32[]", "inf").f32s(0)), 0x7f800000u);
  EXPECT_EQ(Bits(Lit("f32[]", "-inf").f32s(0)), 0xff800000u);
  EXPECT_EQ(Bits(Lit("f32[]", "nan").f32s(0)), 0x7fc00000u);
  EXPECT_EQ(Bits(Lit("f32[]", "-nan").f32s(0)), 0xffc00000u);
  EXPECT_EQ(Bits(Lit("f32[]", "nan(0x1)").f32s(0)), 0x7f800001u);
  EXPECT_EQ(Bits(Lit("f32[]", "2").f32s(0)), 0x40000000u);  // an integer token
  EXPECT_EQ(Bits(Lit("f32[]", ".5").f32s(0)), 0x3f000000u);
  EXPECT_EQ(Bits(Lit("f64[]", "0.1").f64s(0)), 0x3fb999999999999aull);
  EXPECT_EQ(Bits(Lit("f64[]", "-nan").f64s(0)), 0xfff8000000000000ull);
  EXPECT_EQ(Bits(Lit("f64[]", "nan(0x123)").f64s(0)), 0x7ff0000000000123ull);
  // 16-bit floats, little-endian: f16 1.5 = 0x3e00, 65504 = 0x7bff, -nan =
  // 0xfe00; bf16 1.5 = 0x3fc0, 1 = 0x3f80.
  EXPECT_EQ(Lit("f16[3]", "{1.5, 65504, -nan}").f16s(),
            std::string("\x00\x3e\xff\x7b\x00\xfe", 6));
  EXPECT_EQ(Lit("bf16[2]", "{1.5, 1}").bf16s(), std::string("\xc0\x3f\x80\x3f", 4));
  // 65519 rounds to 65504; 65520 rounds to inf: out of range.
  EXPECT_EQ(Lit("f16[]", "65519").f16s(), std::string("\xff\x7b", 2));
  EXPECT_EQ(LitError("f16[]", "65520"),
            "line 1, column 35: expected a value within the range of f16, found "
            "\"65520\"");
  EXPECT_EQ(LitError("f32[]", "1e39"),
            "line 1, column 35: expected a value within the range of f32, found "
            "\"1e39\"");
  EXPECT_EQ(LitError("f64[]", "1e309"),
            "line 1, column 35: expected a number for f64[] within the range of "
            "f64, found \"1e309\"");
  // 8-bit floats: e4m3fn 1.5 = 0 0111 100, 448 = 0 1111 110 (its largest);
  // e5m2 1.5 = 0 01111 10; 500 is past e4m3fn's largest and it has no inf.
  EXPECT_EQ(Lit("f8e4m3fn[2]", "{1.5, 448}").f8e4m3fns(), std::string("\x3c\x7e", 2));
  EXPECT_EQ(Lit("f8e5m2[]", "1.5").f8e5m2s(), "\x3e");
  EXPECT_EQ(LitError("f8e4m3fn[]", "500"),
            "line 1, column 40: expected a value within the range of f8e4m3fn, "
            "found \"500\"");
  EXPECT_EQ(LitError("f8e4m3fn[]", "nan(0x1)"),
            "line 1, column 40: expected a NaN payload that f8e4m3fn can hold (it "
            "has none), found \"0x1\"");
}

// A NaN keeps its sign and payload in the 8-bit types that can hold them
// (XLA's round trip of `{nan, 7, -nan}` in f8e4m3fn): e4m3fn has one NaN
// per sign, S 1111 111; the IEEE-like e5m2, e4m3, e3m4 write `nan` as the
// quiet NaN (exponent all ones, the top mantissa bit alone) and take a
// payload `nan(0x1)` in the mantissa; fnuz has one NaN, 1 0000 000; e8m0
// one, 0xff.
TEST(HloParseLiteralTest, EightBitNansKeepSignAndPayload) {
  // 7 = 1.75 * 2^2: exponent 2 + 7 = 1001, mantissa 110.
  EXPECT_EQ(Lit("f8e4m3fn[3]", "{nan, 7, -nan}").f8e4m3fns(), "\x7f\x4e\xff");
  EXPECT_EQ(Lit("f8e5m2[4]", "{nan, -nan, nan(0x1), -nan(0x3)}").f8e5m2s(),
            "\x7e\xfe\x7d\xff");
  EXPECT_EQ(Lit("f8e4m3[2]", "{nan(0x7), -nan}").f8e4m3s(), "\x7f\xfc");
  EXPECT_EQ(Lit("f8e3m4[2]", "{-nan(0xf), nan}").f8e3m4s(), "\xff\x78");
  EXPECT_EQ(Lit("f8e4m3fnuz[2]", "{nan, -nan}").f8e4m3fnuzs(), "\x80\x80");
  EXPECT_EQ(Lit("f8e8m0fnu[]", "nan").f8e8m0fnus(), "\xff");
  EXPECT_EQ(LitError("f8e5m2[]", "nan(0x4)"),
            "line 1, column 38: expected a NaN payload that f8e5m2 can hold, "
            "found \"0x4\"");
}

TEST(HloParseLiteralTest, ComplexAndTuples) {
  const xla::LiteralProto c = Lit("c64[2]", "{(1, 2), (3, -4.5)}");
  ASSERT_EQ(c.c64s_size(), 4);
  EXPECT_EQ(c.c64s(1), 2.0f);
  EXPECT_EQ(c.c64s(3), -4.5f);
  const xla::LiteralProto z = Lit("c128[]", "(0.5, inf)");
  ASSERT_EQ(z.c128s_size(), 2);
  EXPECT_EQ(z.c128s(1), std::numeric_limits<double>::infinity());
  const xla::LiteralProto t = Lit("(f32[], s32[2])", "( 1.5, {1, 2} )");
  EXPECT_EQ(t.shape().element_type(), xla::TUPLE);
  ASSERT_EQ(t.tuple_literals_size(), 2);
  EXPECT_EQ(t.tuple_literals(0).f32s(0), 1.5f);
  EXPECT_EQ(t.tuple_literals(1).s32s(1), 2);
}

TEST(HloParseLiteralTest, NestingCommentsLayoutsAndEmptyArrays) {
  const xla::LiteralProto l = Lit(
      "s32[2,2,2]",
      "{ /*i0=0*/ { { 1, 2 }, { 3, 4 } }, /*i0=1*/ { { 5, 6 }, { 7, 8 } } }");
  ASSERT_EQ(l.s32s_size(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(l.s32s(i), i + 1);
  // The literal holds its data in its layout's physical order: column-major
  // here.
  const xla::LiteralProto cm = Lit("s32[2,3]{0,1}", "{ { 1, 2, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(V(cm.shape().layout().minor_to_major()), (std::vector<int64_t>{0, 1}));
  std::vector<int32_t> got(cm.s32s().begin(), cm.s32s().end());
  EXPECT_EQ(got, (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Lit("f32[0]", "{}").f32s_size(), 0);
  EXPECT_EQ(Lit("f32[2,0]", "{ {}, {} }").f32s_size(), 0);
  EXPECT_FALSE(IsElidedLiteral(Lit("f32[0]", "{}")));
}

TEST(HloParseLiteralTest, ElidedConstants) {
  for (const char* shape : {"f32[100]{0}", "s32[4,40]{1,0}", "pred[11]"}) {
    const xla::LiteralProto l = Lit(shape, "{...}");
    EXPECT_TRUE(IsElidedLiteral(l)) << shape;
    EXPECT_TRUE(l.has_shape()) << shape;
    EXPECT_EQ(l.ByteSizeLong(), l.shape().ByteSizeLong() + 2) << shape;
  }
  // A scalar, and a tuple (each element elided; XLA's long and modern
  // styles print every tuple constant as `{...}`).
  EXPECT_TRUE(IsElidedLiteral(Lit("f32[]", "{...}")));
  const xla::LiteralProto t = Lit("(f32[], (s32[2]{0}))", "{...}");
  EXPECT_EQ(t.shape().element_type(), xla::TUPLE);
  ASSERT_EQ(t.tuple_literals_size(), 2);
  EXPECT_TRUE(IsElidedLiteral(t.tuple_literals(0)));
  EXPECT_EQ(t.tuple_literals(0).shape().element_type(), xla::F32);
  ASSERT_EQ(t.tuple_literals(1).tuple_literals_size(), 1);
  EXPECT_TRUE(IsElidedLiteral(t.tuple_literals(1).tuple_literals(0)));
  EXPECT_EQ(t.tuple_literals(1).tuple_literals(0).shape().dimensions(0), 2);
  // The short style prints such a tuple element by element.
  const xla::LiteralProto t2 = Lit("(f32[], s32[2]{0})", "( {...}, {1, 2} )");
  EXPECT_TRUE(IsElidedLiteral(t2.tuple_literals(0)));
  EXPECT_EQ(t2.tuple_literals(1).s32s_size(), 2);
  EXPECT_EQ(LitError("f32[2,2]", "{ {...} }"),
            "line 1, column 41: expected \"...\" only directly inside the outer "
            "braces of f32[2,2], found \"...\"");
}

TEST(HloParseLiteralTest, CountsCheckedAgainstTheText) {
  EXPECT_EQ(LitError("f32[3]", "{1, 2}"),
            "line 1, column 41: expected 3 elements in dimension 0 of f32[3], not "
            "2, found \"}\"");
  EXPECT_EQ(LitError("f32[2]", "{1, 2, 3}"),
            "line 1, column 43: expected 2 elements in dimension 0 of f32[2] and "
            "\"}\", found \"3\"");
  EXPECT_EQ(LitError("f32[2,2]", "{1, 2, 3, 4}"),
            "line 1, column 39: expected \"{\" (f32[2,2] nests 2 levels of "
            "braces), found \"1\"");
  EXPECT_EQ(LitError("f32[2]", "{{1, 2}}"),
            "line 1, column 37: expected a value (f32[2] nests 1 level of "
            "braces), found \"{\"");
  EXPECT_EQ(LitError("f32[]", "{1}"),
            "line 1, column 35: expected a value (f32[] nests 0 levels of "
            "braces), found \"{\"");
  // A shape far larger than memory: a parameter is only a shape; a
  // constant's literal holds what the text writes, checked element by
  // element against the shape.
  EXPECT_EQ(ShapeOf("s32[99999999999]").dimensions(0), 99999999999);
  EXPECT_EQ(LitError("s32[99999999999,99999999999]", "{ {1, 2} }"),
            "line 1, column 65: expected 99999999999 elements in dimension 1 of "
            "s32[99999999999,99999999999], not 2, found \"}\"");
  EXPECT_TRUE(IsElidedLiteral(Lit("s32[99999999999]", "{...}")));
}

// --- Errors -----------------------------------------------------------------------------

TEST(HloParseErrorTest, MessagesNameTheLineColumnAndToken) {
  EXPECT_EQ(Error(""), "line 1, column 1: expected a computation, found end of input");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, q)\n}"),
            "line 3, column 25: expected an instruction defined before in "
            "computation \"e\", found \"q\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p), "
                  "foo=1\n}"),
            "line 3, column 29: expected an attribute of negate (sharding, "
            "frontend_attributes, statistics, parameter_replication, "
            "control-predecessors, origin, metadata, backend_config), found "
            "unknown attribute \"foo\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p), "
                  "dimensions={0}\n}"),
            "line 3, column 29: expected an attribute of negate (sharding, "
            "frontend_attributes, statistics, parameter_replication, "
            "control-predecessors, origin, metadata, backend_config), found "
            "attribute \"dimensions\"");
  EXPECT_EQ(Error("ENTRY e {\n  t = (f32[]) parameter(0)\n  ROOT g = f32[] "
                  "get-tuple-element(t)\n}"),
            "line 3, column 18: expected attribute index= for get-tuple-element, "
            "found none");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                  "frobnicate(p)\n}"),
            "line 3, column 18: expected an opcode, found \"frobnicate\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f33[] parameter(0)\n}"),
            "line 2, column 7: expected the instruction's shape, found \"f33\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}"),
            "line 3, column 3: expected an instruction name not used before in "
            "computation \"e\", found \"p\", defined at line 2, column 3");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] "
                  "add(f32[3] p, p)\n}"),
            "line 3, column 23: expected the shape of operand \"p\", f32[2], found "
            "f32[3]");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p)\n}"),
            "line 3, column 21: expected 2 operands for add, found 1");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                  "negate(p), metadata={}, metadata={}\n}"),
            "line 3, column 42: expected each attribute once, found \"metadata\" "
            "again");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                  "call(p), to_apply=nope\n}"),
            "line 3, column 36: expected a computation defined before, found "
            "\"nope\"");
  EXPECT_EQ(Error("ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] "
                  "parameter(1)\n}"),
            "line 3, column 3: expected one ROOT in computation \"e\", found a "
            "second, \"q\"");
  EXPECT_EQ(Error("ENTRY a { ROOT p = f32[] parameter(0) }\nENTRY b { ROOT p = "
                  "f32[] parameter(0) }"),
            "line 2, column 1: expected one ENTRY computation, found a second, "
            "\"b\"");
  EXPECT_EQ(Error("a { ROOT p = f32[] parameter(0) }\na { ROOT p = f32[] "
                  "parameter(0) }"),
            "line 2, column 1: expected a computation name not used before, found "
            "\"a\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  p2 = f32[] parameter(0)\n}"),
            "line 3, column 24: expected each parameter number once in "
            "computation \"e\", found 0 again");
  EXPECT_EQ(Error("HloModule m, foo=1\nENTRY e { ROOT p = f32[] parameter(0) }"),
            "line 1, column 14: expected a module attribute (is_scheduled, "
            "entry_computation_layout, input_output_alias, buffer_donor, "
            "frontend_attributes, replica_count, num_partitions, "
            "alias_passthrough_params, "
            "allow_spmd_sharding_propagation_to_parameters, "
            "allow_spmd_sharding_propagation_to_output, origin_recovery_table), "
            "found \"foo\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[2]{0,1} parameter(0)\n}"),
            "line 2, column 13: expected a layout of 1 dimensions for f32[2], "
            "found 2");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[2,2]{10,1} parameter(0)\n}"),
            "line 2, column 15: expected a layout that orders the 2 dimensions "
            "of f32[2,2], each of 0..1 once, found {10,1}");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[2,2]{1,1} parameter(0)\n}"),
            "line 2, column 15: expected a layout that orders the 2 dimensions "
            "of f32[2,2], each of 0..1 once, found {1,1}");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                  "compare(p, p), direction=XX\n}"),
            "line 3, column 43: expected a comparison direction (EQ, NE, GE, GT, "
            "LE, LT), found \"XX\"");
  EXPECT_EQ(Error("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] "
                  "negate(p)\n"),
            "line 4, column 1: expected \"}\" to end computation \"e\", found end "
            "of input");
}

TEST(HloParseErrorTest, BadBytes) {
  EXPECT_EQ(Error("ENTRY e { /* never closed"),
            "line 1, column 11: expected an instruction name, ROOT or \"}\", found "
            "an unterminated /* comment");
  EXPECT_EQ(Error(std::string("ENTRY e {\n  p = f32[] parameter(0)\0\n}", 35)),
            "line 2, column 25: expected an instruction name, ROOT or \"}\", "
            "found byte 0x00");
  EXPECT_EQ(Error("ENTRY e { ROOT c = s32[] custom-call(), custom_call_target=\"abc }"),
            "line 1, column 60: expected a quoted string, found an unterminated "
            "string");
  EXPECT_EQ(Error("ENTRY e {\n  -inf = f32[] parameter(0)\n}"),
            "line 2, column 3: expected an instruction name, ROOT or \"}\", found "
            "\"-inf\"");
  // Device lists and iota forms hold as many devices as the tiles.
  EXPECT_EQ(Error("ENTRY e { ROOT p = f32[8] parameter(0), "
                  "sharding={devices=[2]<=[0]} }"),
            "line 1, column 64: expected iota dimensions of 2 devices, as many as "
            "[2], found [0]");
  EXPECT_EQ(Error("ENTRY e { ROOT p = f32[8] parameter(0), "
                  "sharding={devices=[2,2]<=[2,2]T(0,0)} }"),
            "line 1, column 72: expected T(...) ordering the 2 iota dimensions, "
            "each once, found (0,0)");
  EXPECT_EQ(Error("ENTRY e { ROOT p = f32[8] parameter(0), "
                  "sharding={devices=[2,2]0,1,2} }"),
            "line 1, column 64: expected 4 devices, as many as [2,2], found 3");
  EXPECT_EQ(Error("ENTRY e { ROOT p = f32[8] parameter(0), "
                  "sharding={devices=[0]} }"),
            "line 1, column 51: expected tile dimensions of at least 1 whose "
            "product fits in 64 bits, found [0]");
  EXPECT_EQ(Error("ENTRY e { p = f32[8] parameter(0)\n ROOT a = f32[8] "
                  "all-gather(p), replica_groups=[2,2]<=[3], dimensions={0} }"),
            "line 2, column 55: expected iota dimensions of 4 devices, as many as "
            "[2,2], found [3]");
  EXPECT_EQ(Error("ENTRY e { ROOT p = f32[] parameter(0) } @"),
            "line 1, column 41: expected a computation name or ENTRY, found \"@\"");
}

TEST(HloParseErrorTest, NestingIsBounded) {
  // Deeper than HloParseOptions::max_depth: an error, not a deep recursion.
  std::string deep = "ENTRY e { p = f32[] parameter(0)\n ROOT r = f32[] ";
  for (int i = 0; i < 10000; ++i) deep += "negate(f32[] ";
  deep += "p";
  for (int i = 0; i < 10000; ++i) deep += ")";
  deep += " }";
  const std::string e = Error(deep);
  EXPECT_NE(e.find("expected nesting at most 128 deep"), std::string::npos) << e;
  std::string tuple = "ENTRY e { ROOT p = ";
  for (int i = 0; i < 100000; ++i) tuple += "(";
  const std::string e2 = Error(tuple);
  EXPECT_NE(e2.find("expected nesting at most 128 deep"), std::string::npos) << e2;
  HloParseOptions shallow;
  shallow.max_depth = 4;
  EXPECT_FALSE(ParseBothWays("ENTRY e { ROOT p = (((f32[]))) parameter(0) }",
                            shallow)
                   .ok());
  EXPECT_TRUE(ParseBothWays("ENTRY e { ROOT p = ((f32[])) parameter(0) }", shallow)
                  .ok());
}

TEST(HloParseErrorTest, TextLargerThanTheLimit) {
  HloParseOptions small;
  small.max_text_bytes = 8;
  absl::StatusOr<ParsedHloText> t = ParseBothWays("ENTRY e { }", small);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
}

// ParseHloTextToProto reads back what it needs of a finished instruction
// from its record: a shape nested deeper than protobuf's recursion limit
// (100) and strings that are not UTF-8 (which protobuf refuses to parse)
// give the module ParseHloText gives (ParseBothWays compares them).
TEST(HloParseBytesTest, RecordsReadBackBeyondWhatProtobufParses) {
  const std::string deep = "HloModule m\n\nENTRY e {\n  ROOT p = " + std::string(100, '(') +
                           "f32[]" + std::string(100, ')') + " parameter(0)\n}\n";
  EXPECT_TRUE(ParseBothWays(deep).ok());
  const std::string not_utf8 =
      "HloModule m\n\nENTRY e {\n  x = f32[] parameter(0)\n"
      "  s = ((f32[]), f32[], s32[]) negate-start(x), metadata={op_name=\"\xff\"}\n"
      "  ROOT d = f32[] negate-done(s)\n}\n";
  absl::StatusOr<ParsedHloText> t = ParseBothWays(not_utf8);
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string called =
      "HloModule m\n\nw {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n\n"
      "ENTRY e {\n  x = f32[] parameter(0)\n"
      "  s = ((f32[]), f32[], s32[]) async-start(x), calls=w, metadata={op_name=\"\xfe\"}\n"
      "  ROOT d = f32[] async-done(s)\n}\n";
  absl::StatusOr<ParsedHloText> c = ParseBothWays(called);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->module.computations(1).instructions(2).called_computation_ids_size(), 1);
}

// The fusion a sugared fusion-start wraps calls a fusion computation, as a
// plain fusion does: flagged, and without a schedule of its own.
TEST(HloParseBytesTest, SugaredFusionStartCallsAFusionComputation) {
  absl::StatusOr<ParsedHloText> t = ParseBothWays(
      "HloModule m, is_scheduled=true\n\nfused {\n  a = f32[2] parameter(0)\n"
      "  ROOT n = f32[2] negate(a)\n}\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
      "  s = ((f32[2]), f32[2], s32[]) fusion-start(x), kind=kLoop, calls=fused\n"
      "  ROOT d = f32[2] fusion-done(s)\n}\n");
  ASSERT_TRUE(t.ok()) << t.status();
  const xla::HloComputationProto& fused = Comp(*t, "fused");
  EXPECT_TRUE(fused.is_fusion_computation());
  EXPECT_FALSE(t->module.schedule().sequences().contains(fused.id()));
}

// `} // name` after a computation's execution thread, as XLA prints both.
TEST(HloParseBytesTest, NameAfterTheExecutionThread) {
  std::string body;
  for (int i = 1; i <= 5; ++i) {
    body += "  n" + std::to_string(i) + " = f32[] negate(" +
            (i == 1 ? std::string("a") : "n" + std::to_string(i - 1)) + ")\n";
  }
  absl::StatusOr<ParsedHloText> t = ParseBothWays(
      "HloModule m\n\nw {\n  a = f32[] parameter(0)\n" + body +
      "  ROOT r = f32[] negate(n5)\n}, execution_thread=\"t\" // w\n\n"
      "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->extras.name_after_closing_brace);
}

}  // namespace
}  // namespace decomposed::hlo
