// The printer (hlo/print.h) and the parser (hlo/parse.h) against each
// other: print(parse(t)) == t for texts written by hand as XLA prints them,
// in each style, header attributes kept; and parse(print(m)) == m field by
// field (ids renumbered, nothing else changed) for the random modules of
// hlo/random_module.h in every style.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "hlo_parse_both.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/random_module.h"
#include "decomposed/hlo/tensors_dump.h"
#include "decomposed/hlo/text.h"
#include "decomposed/hlo/validate.h"
#include "decomposed/io/byte_sink.h"
#include "hlo_compare_util.h"

namespace decomposed::hlo {
namespace {

std::string Reprint(const std::string& text, HloTextStyle style,
                    bool large_constants = false) {
  absl::StatusOr<ParsedHloText> t = ParseBothWays(text);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return "";
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  HloPrintOptions options;
  options.style = style;
  options.print_large_constants = large_constants;
  return PrintHloModuleToString(**m, options, &t->extras);
}

// The header and the rest of a text's blank-line-separated blocks (the
// stack frame index's tables, the computations), the rest sorted. The
// blank lines themselves are not compared: the first block after the
// tables follows two.
std::vector<std::string> Blocks(const std::string& text) {
  std::vector<std::string> blocks;
  for (absl::string_view b : absl::StrSplit(text, "\n\n")) {
    while (absl::ConsumePrefix(&b, "\n")) {
    }
    if (!b.empty() || blocks.empty()) blocks.emplace_back(b);
  }
  std::sort(blocks.begin() + 1, blocks.end());
  return blocks;
}

// XLA orders what it prints by ids (a loaded module's computations and
// instructions sorted by id): here the entry's instructions by id are p.1,
// c.8, c.9, t.10, so the computations c.8 and c.9 call come out b.2 first,
// though c.9 comes first in the post-order. The ids are the names'
// numbers (XlaBuilder's <name>.<id>); numbered in text order instead, a.5
// would print first. Worked out by hand.
constexpr char kOrderedByIds[] = R"(HloModule m, entry_computation_layout={(f32[])->(f32[], f32[])}

%b.2 (x.3: f32[]) -> f32[] {
  %x.3 = f32[] parameter(0)
  ROOT %n.4 = f32[] negate(%x.3)
}

%a.5 (y.6: f32[]) -> f32[] {
  %y.6 = f32[] parameter(0)
  ROOT %e.7 = f32[] exponential(%y.6)
}

ENTRY %main.11 (p.1: f32[]) -> (f32[], f32[]) {
  %p.1 = f32[] parameter(0)
  %c.9 = f32[] call(%p.1), to_apply=%a.5
  %c.8 = f32[] call(%p.1), to_apply=%b.2
  ROOT %t.10 = (f32[], f32[]) tuple(%c.9, %c.8)
}

)";

TEST(HloRoundTripTest, ComputationsPrintInTheOrderOfTheNamesIds) {
  EXPECT_EQ(Reprint(kOrderedByIds, HloTextStyle::kModern, false), kOrderedByIds);
}

// XLA's spelling until 2023: the entry layout's parameters joined by ","
// alone. Kept from the text; without it the parameters print joined by
// ", ". Worked out by hand.
constexpr char kCompactEntryLayout[] = R"(HloModule m, entry_computation_layout={(f32[2]{0},f32[2]{0},f32[2]{0})->f32[2]{0}}

ENTRY main {
  a = f32[2]{0} parameter(0)
  b = f32[2]{0} parameter(1)
  s = f32[2]{0} add(a, b)
  c = f32[2]{0} parameter(2)
  ROOT r = f32[2]{0} add(s, c)
}

)";

TEST(HloRoundTripTest, TheEntryLayoutOf2023KeepsItsSpelling) {
  EXPECT_EQ(Reprint(kCompactEntryLayout, HloTextStyle::kShort), kCompactEntryLayout);
  std::string later = kCompactEntryLayout;
  later.replace(later.find("{0},f32"), 7, "{0}, f32");
  later.replace(later.find("{0},f32"), 7, "{0}, f32");
  EXPECT_EQ(Reprint(later, HloTextStyle::kShort), later);
  absl::StatusOr<ParsedHloText> t = ParseBothWays(kCompactEntryLayout);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->extras.compact_entry_layout_parameters);
  // From the proto alone (no text's extras): the later spelling.
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
  ASSERT_TRUE(m.ok()) << m.status();
  HloPrintOptions o;
  o.style = HloTextStyle::kShort;
  EXPECT_EQ(PrintHloModuleToString(**m, o), later);
}

// XLA's dumps: the short style with metadata (print_metadata set over
// ShortParsable). Worked out by hand.
constexpr char kShortWithMetadata[] = R"(HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY main {
  p = f32[2]{0} parameter(0)
  ROOT n = f32[2]{0} negate(p), metadata={op_name="jit(f)/neg" stack_frame_id=1}
}

)";

TEST(HloRoundTripTest, TheShortStyleWithMetadata) {
  absl::StatusOr<ParsedHloText> t = ParseBothWays(kShortWithMetadata);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
  ASSERT_TRUE(m.ok()) << m.status();
  HloPrintOptions o;
  o.style = HloTextStyle::kShort;
  o.print_metadata = true;
  EXPECT_EQ(PrintHloModuleToString(**m, o, &t->extras), kShortWithMetadata);
  o.print_metadata.reset();
  std::string without = kShortWithMetadata;
  without.erase(without.find(", metadata="), without.find('\n', without.find(", metadata=")) -
                                                 without.find(", metadata="));
  EXPECT_EQ(PrintHloModuleToString(**m, o, &t->extras), without);
  // And the long style without it.
  o.style = HloTextStyle::kLong;
  o.print_metadata = false;
  EXPECT_EQ(PrintHloModuleToString(**m, o, &t->extras).find("metadata"), std::string::npos);
}

const char* StyleName(HloTextStyle s) {
  return s == HloTextStyle::kLong ? "long"
         : s == HloTextStyle::kModern ? "modern"
                                      : "short";
}

// --- print(parse(t)) == t -------------------------------------------------------------

// Written by hand as XLA prints each style (hlo/text.h): header attributes
// in XLA's order, computations callees first, instructions in XLA's
// post-order, `/*index=5*/` comments, constants of more than ten elements
// elided in the long and modern styles.
constexpr char kLongText[] =
    R"(HloModule m, input_output_alias={ {0}: (1, {}, must-alias) }, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0}, f32[4]{0})->(f32[2,3]{1,0}, f32[], f32[11]{0}, f32[4]{0})}, replica_count=2, num_partitions=4

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p0: f32[2,3], p1: f32[2,3], p2: f32[4]) -> (f32[2,3], f32[], f32[11], f32[4]) {
  %p0 = f32[2,3]{1,0} parameter(0), frontend_attributes={neff_input_names="input0"}
  %p1 = f32[2,3]{1,0} parameter(1), frontend_attributes={neff_input_names="input1"}
  %multiply = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %p0, f32[2,3]{1,0} %p1), metadata={op_type="aten__mul" op_name="aten__mul" source_file="/tmp/m.py" source_line=12}
  %constant = f32[] constant(0)
  %reduce = f32[] reduce(f32[2,3]{1,0} %multiply, f32[] %constant), dimensions={0,1}, to_apply=%add
  %big = f32[11]{0} constant({...})
  %p2 = f32[4]{0} parameter(2)
  %async-start = ((f32[4]{0}), f32[4]{0}) negate-start(f32[4]{0} %p2)
  %async-done = f32[4]{0} negate-done(((f32[4]{0}), f32[4]{0}) %async-start)
  ROOT %tuple = (f32[2,3]{1,0}, f32[], f32[11]{0}, f32[4]{0}) tuple(f32[2,3]{1,0} %multiply, f32[] %reduce, f32[11]{0} %big, f32[4]{0} %async-done), frontend_attributes={neff_output_names="output0,output1,output2"}
}

)";

constexpr char kModernText[] =
    R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, /*index=5*/f32[8]{0})->f32[8]{0}}

%region_0.1 (Arg_0.2: f32[], Arg_1.3: f32[]) -> f32[] {
  %Arg_0.2 = f32[] parameter(0)
  %Arg_1.3 = f32[] parameter(1)
  ROOT %maximum.4 = f32[] maximum(%Arg_0.2, %Arg_1.3), metadata={op_name="jit(f)/reduce_max" source_file="f.py" source_line=4}
}

ENTRY %main.12 (Arg_0.5: f32[8], Arg_1.6: f32[8], Arg_2.7: f32[8], Arg_3.8: f32[8], Arg_4.9: f32[8], Arg_5.10: f32[8]) -> f32[8] {
  %Arg_0.5 = f32[8]{0} parameter(0)
  %Arg_1.6 = f32[8]{0} parameter(1)
  %Arg_2.7 = f32[8]{0} parameter(2)
  %Arg_3.8 = f32[8]{0} parameter(3)
  %Arg_4.9 = f32[8]{0} parameter(4)
  %Arg_5.10 = f32[8]{0} parameter(5)
  %concatenate.11 = f32[48]{0} concatenate(%Arg_0.5, %Arg_1.6, %Arg_2.7, %Arg_3.8, %Arg_4.9, /*index=5*/%Arg_5.10), dimensions={0}
  %constant.13 = f32[] constant(-inf)
  %reduce.14 = f32[] reduce(%concatenate.11, %constant.13), dimensions={0}, to_apply=%region_0.1
  %broadcast.15 = f32[8]{0} broadcast(%reduce.14), dimensions={}
  ROOT %subtract.16 = f32[8]{0} subtract(%Arg_0.5, %broadcast.15), sharding={devices=[2]<=[2]}
}

)";

// No entry_computation_layout: the reprint has none either. A while calls
// its body first, so the body prints first.
constexpr char kShortText[] = R"(HloModule m, num_partitions=2

body {
  p = (s32[], f32[3]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  add = s32[] add(i, one)
  x = f32[3]{0} get-tuple-element(p), index=1
  c = f32[3]{0} constant({1.5, -2, 0.25})
  m = f32[3]{0} multiply(x, c)
  ROOT t = (s32[], f32[3]{0}) tuple(add, m)
}

cond {
  p.1 = (s32[], f32[3]{0}) parameter(0)
  i.1 = s32[] get-tuple-element(p.1), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i.1, n), direction=LT
}

ENTRY main {
  z = s32[] constant(0)
  a = f32[3]{0} parameter(0)
  t.1 = (s32[], f32[3]{0}) tuple(z, a)
  w = (s32[], f32[3]{0}) while(t.1), condition=cond, body=body
  ROOT r = f32[3]{0} get-tuple-element(w), index=1
}

)";

TEST(HandWrittenRoundTripTest, LongStyle) {
  EXPECT_EQ(Reprint(kLongText, HloTextStyle::kLong), kLongText);
}

TEST(HandWrittenRoundTripTest, ModernStyle) {
  EXPECT_EQ(Reprint(kModernText, HloTextStyle::kModern), kModernText);
}

TEST(HandWrittenRoundTripTest, ShortStyle) {
  EXPECT_EQ(Reprint(kShortText, HloTextStyle::kShort), kShortText);
  absl::StatusOr<ParsedHloText> t = ParseBothWays(kShortText);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->extras.has_entry_computation_layout);
}

// XLA's print_name_after_closing_brace: `} // <name>` after a computation
// of more than 5 instructions (body has 8), none after a smaller one (cond
// 4, main 5). A text that has them prints them again; the option adds
// them to a text that had none.
TEST(HandWrittenRoundTripTest, NameAfterClosingBrace) {
  std::string with = kShortText;
  const size_t body_end = with.find("}\n\ncond {");
  ASSERT_NE(body_end, std::string::npos);
  with.insert(body_end + 1, " // body");
  EXPECT_EQ(Reprint(with, HloTextStyle::kShort), with);
  absl::StatusOr<ParsedHloText> t = ParseBothWays(with);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->extras.name_after_closing_brace);
  absl::StatusOr<ParsedHloText> plain = ParseBothWays(kShortText);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->extras.name_after_closing_brace);
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(plain->module);
  ASSERT_TRUE(m.ok());
  HloPrintOptions options;
  options.style = HloTextStyle::kShort;
  options.print_name_after_closing_brace = true;
  EXPECT_EQ(PrintHloModuleToString(**m, options, &plain->extras), with);
  // Off overrides the extras of a text that had them.
  absl::StatusOr<std::unique_ptr<HloModule>> mw = HloModule::Create(t->module);
  ASSERT_TRUE(mw.ok());
  options.print_name_after_closing_brace = false;
  EXPECT_EQ(PrintHloModuleToString(**mw, options, &t->extras), kShortText);
  // A comment naming another computation is only a comment.
  std::string other = kShortText;
  other.insert(body_end + 1, " // cond");
  absl::StatusOr<ParsedHloText> o = ParseBothWays(other);
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->extras.name_after_closing_brace);
}

// A short-style dump with XLA's operand index annotations (`/*index=5*/`
// before the 6th operand) prints with them again; the option gives them to
// a text without.
TEST(HandWrittenRoundTripTest, ShortStyleOperandIndexAnnotations) {
  const std::string plain =
      "HloModule m, entry_computation_layout={(f32[])->(f32[], f32[], f32[], "
      "f32[], f32[], /*index=5*/f32[])}\n\nENTRY main {\n  p = f32[] parameter(0)\n"
      "  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) "
      "tuple(p, p, p, p, p, p)\n}\n\n";
  std::string annotated = plain;
  annotated.replace(annotated.find("p, p)"), 5, "p, /*index=5*/p)");
  EXPECT_EQ(Reprint(plain, HloTextStyle::kShort), plain);
  EXPECT_EQ(Reprint(annotated, HloTextStyle::kShort), annotated);
  absl::StatusOr<ParsedHloText> t = ParseBothWays(annotated);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->extras.operand_index_annotations);
  absl::StatusOr<ParsedHloText> u = ParseBothWays(plain);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_FALSE(u->extras.operand_index_annotations);
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(u->module);
  ASSERT_TRUE(m.ok());
  HloPrintOptions options;
  options.style = HloTextStyle::kShort;
  options.print_operand_index_annotation_interval = 5;
  EXPECT_EQ(PrintHloModuleToString(**m, options, &u->extras), annotated);
  // XLA's `i % N == 0`: -5 annotates as 5 does; 0 never.
  options.print_operand_index_annotation_interval = -5;
  EXPECT_EQ(PrintHloModuleToString(**m, options, &u->extras), annotated);
  options.print_operand_index_annotation_interval = 0;
  EXPECT_EQ(PrintHloModuleToString(**m, options, &t->extras), plain);
  // The long style's annotations (before `%` names with shapes) are the
  // style's own, not this.
  absl::StatusOr<ParsedHloText> l = ParseBothWays(Reprint(plain, HloTextStyle::kLong));
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(l->extras.operand_index_annotations);
}

// XLA's header prints frontend_attributes, then origin_recovery_table.
TEST(HandWrittenRoundTripTest, OriginRecoveryTableAfterFrontendAttributes) {
  const std::string body = "\n\nENTRY main {\n  ROOT p = f32[] parameter(0)\n}\n\n";
  const std::string xla_order =
      "HloModule m, frontend_attributes={k=\"v\"}, origin_recovery_table={t}" + body;
  EXPECT_EQ(Reprint(xla_order, HloTextStyle::kShort), xla_order);
  EXPECT_EQ(Reprint("HloModule m, origin_recovery_table={t}, frontend_attributes={k=\"v\"}" +
                        body,
                    HloTextStyle::kShort),
            xla_order);
}

// 8-bit NaNs print back with their sign and payload (AppendNan: a payload
// only where the type has one and it is not the quiet NaN's).
TEST(HandWrittenRoundTripTest, EightBitNans) {
  const std::string text =
      "HloModule m\n\n"
      "ENTRY e {\n"
      "  a = f8e4m3fn[3]{0} constant({nan, 7, -nan})\n"
      "  b = f8e5m2[4]{0} constant({nan, -nan, nan(0x1), -nan(0x3)})\n"
      "  c = f8e3m4[2]{0} constant({-nan(0xf), nan})\n"
      "  ROOT t = (f8e4m3fn[3]{0}, f8e5m2[4]{0}, f8e3m4[2]{0}) tuple(a, b, c)\n"
      "}\n\n";
  EXPECT_EQ(Reprint(text, HloTextStyle::kShort), text);
}

// The in-place collective-permute's slice sizes, one list per slice: of
// the input's rank, one list when the start indices are one tuple of
// scalars, one per tuple when they are a tuple of them.
TEST(HandWrittenRoundTripTest, InPlaceCollectivePermuteSliceSizes) {
  const std::string head =
      "ENTRY main {\n"
      "  src = f32[8,4]{1,0} parameter(0)\n"
      "  zero = f32[] constant(0)\n"
      "  dst = f32[8,16]{1,0} broadcast(zero), dimensions={}\n"
      "  i0 = s32[] constant(0)\n"
      "  at0 = (s32[], s32[]) tuple(i0, i0)\n"
      "  i8 = s32[] constant(8)\n"
      "  at1 = (s32[], s32[]) tuple(i0, i8)\n";
  const std::string one =
      "HloModule inplace\n\n" + head +
      "  ROOT cp = f32[8,16]{1,0} collective-permute(src, dst, at0, at1), channel_id=3, "
      "source_target_pairs={{0,1},{1,0}}, slice_sizes={{8,4}}\n"
      "}\n\n";
  EXPECT_EQ(Reprint(one, HloTextStyle::kShort), one);
  const std::string two =
      "HloModule inplace2\n\n" + head +
      "  starts = ((s32[], s32[]), (s32[], s32[])) tuple(at0, at1)\n"
      "  ROOT cp = f32[8,16]{1,0} collective-permute(src, dst, starts, starts), "
      "source_target_pairs={{0,1},{1,0}}, slice_sizes={{8,2},{8,2}}\n"
      "}\n\n";
  EXPECT_EQ(Reprint(two, HloTextStyle::kShort), two);
}

// An async-start's output_to_operand_aliasing prints before calls=.
TEST(HandWrittenRoundTripTest, AsyncStartAliasing) {
  const std::string text =
      "HloModule aliased\n"
      "\n"
      "wrapped {\n"
      "  x = (f32[4]{0}, f32[4]{0}) parameter(0)\n"
      "  first = f32[4]{0} get-tuple-element(x), index=0\n"
      "  ROOT n = f32[4]{0} negate(first)\n"
      "}\n"
      "\n"
      "ENTRY main {\n"
      "  a = f32[4]{0} parameter(0)\n"
      "  b = f32[4]{0} parameter(1)\n"
      "  pair = (f32[4]{0}, f32[4]{0}) tuple(a, b)\n"
      "  start = (((f32[4]{0}, f32[4]{0})), f32[4]{0}, u32[]) async-start(pair), output_to_operand_aliasing={{1}: (0, {1})}, calls=wrapped\n"
      "  ROOT done = f32[4]{0} async-done(start)\n"
      "}\n"
      "\n";
  EXPECT_EQ(Reprint(text, HloTextStyle::kShort), text);
}

// origin= prints in every style, before metadata, walking the shape: a
// tuple's leaves in parentheses, `{}` where the value has no element.
TEST(HandWrittenRoundTripTest, Origins) {
  const std::string text =
      "HloModule origins\n"
      "\n"
      "ENTRY main {\n"
      "  p = f32[2]{0} parameter(0), origin={{\"p0\"}}\n"
      "  e = f32[2]{0} exponential(p), origin={[synthetic_call]}\n"
      "  q = (f32[2]{0}, f32[2]{0}) parameter(1), origin={({\"arg\" {0}}, {})}\n"
      "  ROOT t = (f32[2]{0}, (f32[2]{0}, f32[2]{0})) tuple(e, q), origin={({\"out\"}, ({\"arg\" {0}}, {\"x\" {1,2}}))}, metadata={op_name=\"m\"}\n"
      "}\n"
      "\n";
  HloPrintOptions options;
  options.style = HloTextStyle::kShort;
  options.print_metadata = true;
  absl::StatusOr<ParsedHloText> t = ParseBothWays(text);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(PrintHloModuleToString(**m, options, &t->extras), text);
  // XLA's protos hold an element for every node of the value, an empty
  // leaf's without an array: still `{}`.
  for (xla::HloComputationProto& c : *t->module.mutable_computations()) {
    for (xla::HloInstructionProto& in : *c.mutable_instructions()) {
      if (in.name() != "q") continue;
      in.mutable_original_value()->add_elements();                    // the root, {}
      in.mutable_original_value()->add_elements()->add_shape_index(1);  // leaf {1}
    }
  }
  m = HloModule::Create(t->module);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(PrintHloModuleToString(**m, options, &t->extras), text);
}

// A last_tile_dims subgroup of XLA's UNREDUCED type.
TEST(HandWrittenRoundTripTest, UnreducedSubgroup) {
  const std::string text =
      "HloModule unreduced\n"
      "\n"
      "ENTRY main {\n"
      "  ROOT p = f32[4,8]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}\n"
      "}\n"
      "\n";
  EXPECT_EQ(Reprint(text, HloTextStyle::kShort), text);
}

// A custom-call's tuple literal prints each element with its shape, and
// parses back so (nested and empty tuples too).
TEST(HandWrittenRoundTripTest, CustomCallTupleLiteral) {
  const std::string text =
      "HloModule tuplelit\n"
      "\n"
      "ENTRY main {\n"
      "  ROOT c = f32[2]{0} custom-call(), custom_call_target=\"Target\", literal=( s32[2]{0} {4, 5}, ( pred[] true, f32[] 1.5 ), (  ) )\n"
      "}\n"
      "\n";
  EXPECT_EQ(Reprint(text, HloTextStyle::kShort), text);
}

// A text in one style printed in the others: the same module.
TEST(HandWrittenRoundTripTest, AcrossStyles) {
  for (const char* text : {kLongText, kModernText, kShortText}) {
    absl::StatusOr<ParsedHloText> a = ParseBothWays(text);
    ASSERT_TRUE(a.ok()) << a.status();
    for (HloTextStyle style : {HloTextStyle::kLong, HloTextStyle::kModern,
                               HloTextStyle::kShort}) {
      absl::StatusOr<ParsedHloText> b = ParseBothWays(Reprint(text, style));
      ASSERT_TRUE(b.ok()) << b.status();
      testing::DiffOptions diff;
      if (style == HloTextStyle::kShort) {
        diff.ignored_instruction_fields = {"metadata"};
      }
      EXPECT_EQ(testing::DiffModules(a->module, b->module, diff), "")
          << StyleName(style);
    }
  }
}

// --- parse(print(m)) == m ------------------------------------------------------------

// An async-start of a computation of one instruction prints as XLA's
// syntax sugar (`negate-start(...)`), which drops that computation's and
// its instructions' names, and the wrapped instruction's own metadata,
// backend_config and frontend attributes (the parser gives it the
// start's, as XLA's does). Both sides get the same names here and lose
// those attributes, so that everything else is compared.
// A compare's type equal to its operands' default is not printed (as XLA
// prints it): written or not, it is the same comparison.
void NormalizeDefaultComparisonTypes(xla::HloModuleProto* m) {
  for (auto& c : *m->mutable_computations()) {
    absl::flat_hash_map<int64_t, const xla::HloInstructionProto*> by_id;
    for (const auto& i : c.instructions()) by_id[i.id()] = &i;
    for (auto& i : *c.mutable_instructions()) {
      if (i.opcode() != "compare" || i.operand_ids_size() == 0) continue;
      const auto* op = by_id[i.operand_ids(0)];
      if (op != nullptr &&
          i.comparison_type() ==
              ComparisonTypeString(DefaultComparisonType(op->shape().element_type()))) {
        i.clear_comparison_type();
      }
    }
  }
}

// XLA prints epsilon with 6 significant digits (StrCat of a float).
void NormalizeEpsilons(xla::HloModuleProto* m) {
  for (auto& c : *m->mutable_computations()) {
    for (auto& i : *c.mutable_instructions()) {
      if (i.epsilon() != 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", static_cast<double>(i.epsilon()));
        i.set_epsilon(std::strtof(buf, nullptr));
      }
    }
  }
}

void NormalizeSugaredAsync(xla::HloModuleProto* m) {
  absl::flat_hash_map<int64_t, xla::HloComputationProto*> by_id;
  for (auto& c : *m->mutable_computations()) by_id[c.id()] = &c;
  for (const auto& c : m->computations()) {
    for (const auto& i : c.instructions()) {
      if (i.opcode() != "async-start" || i.called_computation_ids_size() != 1) {
        continue;
      }
      xla::HloComputationProto* w = by_id[i.called_computation_ids(0)];
      bool single = true;
      for (const auto& x : w->instructions()) {
        single = single && (x.id() == w->root_id() || x.opcode() == "parameter");
      }
      if (!single) continue;
      w->set_name(absl::StrCat(i.name(), ".wrapped"));
      w->clear_program_shape();
      for (auto& x : *w->mutable_instructions()) {
        if (x.id() == w->root_id()) {
          x.set_name(absl::StrCat(i.name(), ".op"));
          x.clear_metadata();
          x.clear_backend_config();
          x.clear_frontend_attributes();
          x.clear_statistics_viz();
          x.clear_original_value();
          x.clear_sharding();
        } else {
          x.set_name(absl::StrCat(i.name(), ".param", x.parameter_number()));
        }
      }
    }
  }
}

class RandomRoundTripTest : public ::testing::TestWithParam<HloTextStyle> {};

TEST_P(RandomRoundTripTest, ParsePrintIsTheModule) {
  const HloTextStyle style = GetParam();
  int modules = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    absl::StatusOr<xla::HloModuleProto> proto = RandomModule(seed);
    ASSERT_TRUE(proto.ok()) << seed << ": " << proto.status();
    absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
    ASSERT_TRUE(m.ok()) << seed << ": " << m.status();
    HloPrintOptions options;
    options.style = style;
    options.print_large_constants = true;
    const std::string text = PrintHloModuleToString(**m, options);
    ASSERT_FALSE(text.empty()) << seed;
    absl::StatusOr<ParsedHloText> back = ParseBothWays(text);
    ASSERT_TRUE(back.ok()) << "seed " << seed << " (" << StyleName(style)
                           << "): " << back.status() << "\n"
                           << text;
    testing::DiffOptions diff;
    if (style == HloTextStyle::kShort) {
      // The short style prints neither metadata (nor the stack frame
      // index with it) nor control predecessors.
      diff.ignored_instruction_fields = {"metadata"};
      diff.ignore_control_predecessors = true;
    }
    xla::HloModuleProto want = *proto, got = back->module;
    if (style == HloTextStyle::kShort) want.clear_stack_frame_index();
    for (xla::HloModuleProto* x : {&want, &got}) {
      NormalizeSugaredAsync(x);
      NormalizeDefaultComparisonTypes(x);
      NormalizeEpsilons(x);
    }
    const std::string d = testing::DiffModules(want, got, diff);
    EXPECT_EQ(d, "") << "seed " << seed << " (" << StyleName(style) << ")\n"
                     << text;
    if (!d.empty()) return;
    // And the text again: each computation byte for byte. Their order may
    // differ once: the printer visits callees in the order of the proto's
    // instruction list, which is the builder's order of creation in `m`
    // and the text's (XLA's post-order) once parsed. The short style drops
    // control predecessors, which order the first text's instructions, so
    // there the order settles a round later. Then the text is a fixed
    // point.
    bool control = false;
    for (const auto& c : proto->computations()) {
      for (const auto& i : c.instructions()) {
        control = control || i.control_predecessor_ids_size() > 0;
      }
    }
    const std::string text2 = Reprint(text, style, /*large_constants=*/true);
    const std::string text3 = Reprint(text2, style, /*large_constants=*/true);
    if (style != HloTextStyle::kShort || !control) {
      EXPECT_EQ(Blocks(text2), Blocks(text)) << "seed " << seed;
      EXPECT_EQ(text3, text2) << "seed " << seed;
    } else {
      EXPECT_EQ(Reprint(text3, style, /*large_constants=*/true), text3)
          << "seed " << seed;
    }
    ++modules;
  }
  EXPECT_EQ(modules, 300);
}

// With XLA's defaults the long and modern styles elide constants of more
// than ten elements: those read back as elided literals (their shape
// alone), which print as {...} again; printed in full they read back as
// they were.
TEST(ElidedRoundTripTest, LargeConstants) {
  for (int type : {xla::F32, xla::S32, xla::PRED, xla::BF16, xla::C64, xla::U8}) {
    HloModuleBuilder mb("big");
    HloComputationBuilder& c = mb.AddEntryComputation("main");
    std::vector<double> values(24);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 7);
    HloOp k = c.ConstantArray(type, {4, 6}, values);
    c.Tuple({k, c.ConstantArray(type, {2}, {1, 0})});
    absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
    ASSERT_TRUE(proto.ok()) << proto.status();
    absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
    ASSERT_TRUE(m.ok());
    for (HloTextStyle style : {HloTextStyle::kLong, HloTextStyle::kModern}) {
      HloPrintOptions options;
      options.style = style;
      const std::string text = PrintHloModuleToString(**m, options);
      ASSERT_NE(text.find("constant({...})"), std::string::npos) << text;
      absl::StatusOr<ParsedHloText> back = ParseBothWays(text);
      ASSERT_TRUE(back.ok()) << back.status();
      const xla::HloInstructionProto& big =
          back->module.computations(0).instructions(0);
      ASSERT_EQ(big.opcode(), "constant");
      EXPECT_TRUE(IsElidedLiteral(big.literal())) << text;
      EXPECT_EQ(big.literal().shape().SerializeAsString(),
                proto->computations(0).instructions(0).literal().shape().SerializeAsString());
      EXPECT_EQ(Reprint(text, style), text);
      options.print_large_constants = true;
      const std::string full = PrintHloModuleToString(**m, options);
      absl::StatusOr<ParsedHloText> whole = ParseBothWays(full);
      ASSERT_TRUE(whole.ok()) << whole.status();
      EXPECT_EQ(testing::DiffModules(*proto, whole->module), "") << full;
    }
  }
}

TEST(ElidedRoundTripTest, TupleConstants) {
  // XLA's long and modern styles print every tuple constant as `{...}`;
  // read back, each element is elided and prints `{...}` in the short style.
  const std::string text = R"(HloModule m, entry_computation_layout={()->(f32[], s32[2]{0})}

ENTRY %e () -> (f32[], s32[2]) {
  ROOT %c = (f32[], s32[2]{0}) constant({...})
}

)";
  EXPECT_EQ(Reprint(text, HloTextStyle::kLong), text);
  const std::string short_text = Reprint(text, HloTextStyle::kShort);
  EXPECT_NE(short_text.find("ROOT c = (f32[], s32[2]{0}) constant(( {...}, {...} ))"),
            std::string::npos)
      << short_text;
  EXPECT_EQ(Reprint(short_text, HloTextStyle::kShort), short_text);
  EXPECT_EQ(Reprint(short_text, HloTextStyle::kLong), text);
}

INSTANTIATE_TEST_SUITE_P(Styles, RandomRoundTripTest,
                         ::testing::Values(HloTextStyle::kLong,
                                           HloTextStyle::kModern,
                                           HloTextStyle::kShort),
                         [](const auto& info) { return StyleName(info.param); });


// --- torch-xla graph dumps (hlo/tensors_dump.h) -----------------------------------

// Two graphs as torch-xla writes them: a report, `## BEGIN_GRAPH`, the
// module as XLA's long style prints it (ending in a blank line), a further
// blank line, `## END_GRAPH`, two blank lines. The modules are written by
// hand from the printing rules (docs/hlo.md §2).
const char kReport0[] =
    "[ScheduleSyncTensorsGraph]\n"
    "TensorsGraphInfo:\n"
    "  mark_step (/w/xla_model.py:949)\n"
    "  train (/w/train.py:12)\n"
    "\n"
    "Hashes: (0123abcd)\n";
const char kModule0[] =
    "HloModule IrToHlo.4, entry_computation_layout={(f32[2]{0})->(f32[2]{0})}\n"
    "\n"
    "ENTRY %IrToHlo.4 (p0.1: f32[2]) -> (f32[2]) {\n"
    "  %p0.1 = f32[2]{0} parameter(0)\n"
    "  %negate.2 = f32[2]{0} negate(f32[2]{0} %p0.1)\n"
    "  ROOT %tuple.3 = (f32[2]{0}) tuple(f32[2]{0} %negate.2)\n"
    "}\n"
    "\n";
const char kModule1[] =
    "HloModule IrToHlo.3, entry_computation_layout={(s32[])->(s32[])}\n"
    "\n"
    "ENTRY %IrToHlo.3 (p0.1: s32[]) -> (s32[]) {\n"
    "  %p0.1 = s32[] parameter(0)\n"
    "  ROOT %tuple.2 = (s32[]) tuple(s32[] %p0.1)\n"
    "}\n"
    "\n";

std::string TwoGraphDump() {
  return absl::StrCat(kReport0, "\n## BEGIN_GRAPH\n", kModule0,
                      "\n## END_GRAPH\n\n\n[ScheduleSyncTensorsGraph]\n"
                      "TensorsGraphInfo:\n  step (/w/train.py:30)\n\n"
                      "Hashes: (4567ef01)\n\n## BEGIN_GRAPH\n",
                      kModule1, "\n## END_GRAPH\n\n\n");
}

TEST(TensorsDumpTest, SplitsIntoReportsAndModules) {
  const std::string text = TwoGraphDump();
  EXPECT_TRUE(LooksLikeTensorsDump(text));
  absl::StatusOr<TensorsDump> d = SplitTensorsDump(text);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->graphs.size(), 2u);
  const TensorsDumpGraph& g0 = d->graphs[0];
  EXPECT_EQ(g0.text, kModule0);
  EXPECT_EQ(g0.line, 9);  // 6 report lines, a blank line, BEGIN, then it
  EXPECT_EQ(std::string(g0.report) + "\n", kReport0);
  EXPECT_EQ(g0.before, absl::StrCat(kReport0, "\n## BEGIN_GRAPH\n"));
  const TensorsDumpGraph& g1 = d->graphs[1];
  EXPECT_EQ(g1.text, kModule1);
  EXPECT_EQ(g1.report,
            "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  step "
            "(/w/train.py:30)\n\nHashes: (4567ef01)");
  // Module 0 is lines 9-16 (its last line empty), then an empty line, END,
  // two empty lines, 5 report lines, an empty line, BEGIN at 27.
  EXPECT_EQ(g1.line, 28);
  EXPECT_EQ(d->after, "\n## END_GRAPH\n\n\n");
  // Every byte is in a piece, in order.
  EXPECT_EQ(std::string(g0.before) + std::string(g0.text) + std::string(g1.before) +
                std::string(g1.text) + std::string(d->after),
            text);
}

TEST(TensorsDumpTest, PrintsTheSameDumpAgainInEachStyle) {
  const std::string text = TwoGraphDump();
  absl::StatusOr<TensorsDump> d = SplitTensorsDump(text);
  ASSERT_TRUE(d.ok()) << d.status();
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(PrintTensorsDump(*d, HloPrintOptions(), sink).ok());
  EXPECT_EQ(out, text);
  // In the short style the reports stay and the modules change style.
  HloPrintOptions shorter;
  shorter.style = HloTextStyle::kShort;
  std::string s;
  StringSink short_sink(&s);
  ASSERT_TRUE(PrintTensorsDump(*d, shorter, short_sink).ok());
  EXPECT_EQ(s, absl::StrCat(
                   kReport0, "\n## BEGIN_GRAPH\n",
                   "HloModule IrToHlo.4, entry_computation_layout={(f32[2]{0})->(f32[2]{0})}\n"
                   "\n"
                   "ENTRY IrToHlo.4 {\n"
                   "  p0.1 = f32[2]{0} parameter(0)\n"
                   "  negate.2 = f32[2]{0} negate(p0.1)\n"
                   "  ROOT tuple.3 = (f32[2]{0}) tuple(negate.2)\n"
                   "}\n"
                   "\n",
                   std::string(d->graphs[1].before),
                   "HloModule IrToHlo.3, entry_computation_layout={(s32[])->(s32[])}\n"
                   "\n"
                   "ENTRY IrToHlo.3 {\n"
                   "  p0.1 = s32[] parameter(0)\n"
                   "  ROOT tuple.2 = (s32[]) tuple(p0.1)\n"
                   "}\n"
                   "\n",
                   std::string(d->after)));
  // A module that does not parse is named by graph and line.
  std::string bad = TwoGraphDump();
  bad.replace(bad.find("negate(f32[2]{0} %p0.1)"), 6, "nagate");
  absl::StatusOr<TensorsDump> b = SplitTensorsDump(bad);
  ASSERT_TRUE(b.ok()) << b.status();
  std::string ignored;
  StringSink bad_sink(&ignored);
  absl::Status st = PrintTensorsDump(*b, HloPrintOptions(), bad_sink);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(st.message(), "graph 0, whose text starts at line 9: line 5, "))
      << st.message();
}

TEST(TensorsDumpTest, Detection) {
  EXPECT_TRUE(LooksLikeTensorsDump("## BEGIN_GRAPH\nHloModule m\n"));
  EXPECT_TRUE(LooksLikeTensorsDump("\n\n[GetTensors]\nx\n## BEGIN_GRAPH\n"));
  EXPECT_FALSE(LooksLikeTensorsDump("[GetTensors]\nno graph follows\n"));
  EXPECT_FALSE(LooksLikeTensorsDump("HloModule m\n\n## BEGIN_GRAPH\n"));
  EXPECT_FALSE(LooksLikeTensorsDump("[not a title\n## BEGIN_GRAPH\n"));
  EXPECT_FALSE(LooksLikeTensorsDump(""));
}

TEST(TensorsDumpTest, MalformedDumpsNameTheLine) {
  auto error = [](const std::string& text) {
    absl::StatusOr<TensorsDump> d = SplitTensorsDump(text);
    EXPECT_FALSE(d.ok());
    return d.ok() ? std::string() : std::string(d.status().message());
  };
  EXPECT_EQ(error("[T]\n## BEGIN_GRAPH\nHloModule m\n"),
            "line 3: expected `## END_GRAPH` for the `## BEGIN_GRAPH` of line 2, "
            "found the end of the file");
  EXPECT_EQ(error("[T]\n## BEGIN_GRAPH\nHloModule m\n## BEGIN_GRAPH\n"),
            "line 4: expected `## END_GRAPH` for the `## BEGIN_GRAPH` of line 2, "
            "found another `## BEGIN_GRAPH`");
  EXPECT_EQ(error("[T]\n## END_GRAPH\n"),
            "line 2: expected `## BEGIN_GRAPH` before `## END_GRAPH`, found "
            "`## END_GRAPH` outside a graph");
  EXPECT_EQ(error("[T]\n## BEGIN_GRAPH\n\n## END_GRAPH\n"),
            "line 4: expected the module's HLO text after `## BEGIN_GRAPH` of "
            "line 2, found `## END_GRAPH` first");
  EXPECT_EQ(error("[T]\nreport only\n"),
            "line 2: expected a `## BEGIN_GRAPH` line, found none in the file");
}

}  // namespace
}  // namespace decomposed::hlo
