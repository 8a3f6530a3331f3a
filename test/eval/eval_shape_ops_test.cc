// Shape ops: hand-worked goldens (slicing, clamped dynamic slices, pad with
// negative and interior padding, concatenate, reverse, iota, a bitcast
// that changes the layout) and the aliasing rules (reshape shares its
// operand's storage).
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

Array Iota6() { return MakeArray<int32_t>(PrimitiveType::kS32, {2, 3}, {0, 1, 2, 3, 4, 5}); }

absl::StatusOr<Value> RunOne(std::string_view opcode, std::string_view in_shape, std::string_view out_shape,
                             const CompBuilder::Attrs& attrs, std::vector<Value> inputs,
                             std::vector<std::string> extra_params = {}) {
  CompBuilder c("main");
  std::vector<int64_t> ops = {c.Param(0, in_shape)};
  for (size_t i = 0; i < extra_params.size(); ++i) ops.push_back(c.Param(static_cast<int64_t>(i) + 1, extra_params[i]));
  c.Op(opcode, out_shape, ops, attrs);
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  return testing::Run(*mod, std::move(inputs));
}

TEST(EvalShapeOps, TransposeSliceReverse) {
  auto t = RunOne("transpose", "s32[2,3]", "s32[3,2]", [](auto& i) { i.add_dimensions(1); i.add_dimensions(0); }, {Iota6()});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(ToVector<int32_t>(t->array()), ElementsAre(0, 3, 1, 4, 2, 5));
  auto s = RunOne("slice", "s32[2,3]", "s32[2,2]", [](auto& i) {
    auto* a = i.add_slice_dimensions(); a->set_start(0); a->set_limit(2); a->set_stride(1);
    auto* b = i.add_slice_dimensions(); b->set_start(0); b->set_limit(3); b->set_stride(2);
  }, {Iota6()});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(ToVector<int32_t>(s->array()), ElementsAre(0, 2, 3, 5));
  auto r = RunOne("reverse", "s32[2,3]", "s32[2,3]", [](auto& i) { i.add_dimensions(1); }, {Iota6()});
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(2, 1, 0, 5, 4, 3));
  auto bad = RunOne("slice", "s32[2,3]", "s32[2,2]", [](auto& i) {
    auto* a = i.add_slice_dimensions(); a->set_start(0); a->set_limit(3);
    auto* b = i.add_slice_dimensions(); b->set_start(0); b->set_limit(2);
  }, {Iota6()});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("0 <= start <= limit <= 2 and stride >= 1 in dimension 0"));
}

TEST(EvalShapeOps, DynamicSliceAndUpdateClampTheirStarts) {
  auto idx = [](int32_t v) { return MakeArray<int32_t>(PrimitiveType::kS32, {}, {v}); };
  // Start (1, 5) for a [1,2] slice of [2,3] clamps to (1, 1).
  auto ds = RunOne("dynamic-slice", "s32[2,3]", "s32[1,2]", [](auto& i) {
    i.add_dynamic_slice_sizes(1); i.add_dynamic_slice_sizes(2);
  }, {Iota6(), idx(1), idx(5)}, {"s32[]", "s32[]"});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_THAT(ToVector<int32_t>(ds->array()), ElementsAre(4, 5));
  // Start (-4, 2) for a [1,2] update clamps to (0, 1).
  auto dus = RunOne("dynamic-update-slice", "s32[2,3]", "s32[2,3]", {},
                    {Iota6(), MakeArray<int32_t>(PrimitiveType::kS32, {1, 2}, {-1, -2}), idx(-4), idx(2)},
                    {"s32[1,2]", "s32[]", "s32[]"});
  ASSERT_TRUE(dus.ok()) << dus.status();
  EXPECT_THAT(ToVector<int32_t>(dus->array()), ElementsAre(0, -1, -2, 3, 4, 5));
}

TEST(EvalShapeOps, PadNegativeAndInterior) {
  // [0,1,2] with low -1, high 2, interior 1: [0 p 1 p 2] -> drop 1 low, add 2 high.
  CompBuilder c("main");
  int64_t x = c.Param(0, "s32[3]");
  int64_t v = c.Constant("s32[]", {9});
  c.Op("pad", "s32[6]", {x, v}, [](auto& i) {
    auto* d = i.mutable_padding_config()->add_dimensions();
    d->set_edge_padding_low(-1); d->set_edge_padding_high(2); d->set_interior_padding(1);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<int32_t>(PrimitiveType::kS32, {3}, {0, 1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(9, 1, 9, 2, 9, 9));
}

TEST(EvalShapeOps, ConcatenateIotaAndReshapeAliases) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "s32[2,3]");
  int64_t i = c.Op("iota", "s32[2,2]", {}, [](auto& p) { p.add_dimensions(1); });
  int64_t cat = c.Op("concatenate", "s32[2,5]", {x, i}, [](auto& p) { p.add_dimensions(1); });
  c.Op("reshape", "s32[10]", {cat});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  const Array* concat_value = nullptr;
  Array kept;
  bool aliased = false;
  EvalOptions o;
  o.on_instruction = [&](const InstructionEvent& e) {
    if (e.instruction.opcode() == hlo::HloOpcode::kConcatenate) { kept = e.value.array(); concat_value = &kept; }
    if (e.instruction.opcode() == hlo::HloOpcode::kReshape) aliased = e.value.array().SharesStorageWith(*concat_value);
    return absl::OkStatus();
  };
  auto r = testing::Run(*mod, {Iota6()}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(0, 1, 2, 0, 1, 3, 4, 5, 0, 1));
  EXPECT_TRUE(aliased);
}

TEST(EvalShapeOps, BitcastFollowsTheLayouts) {
  // f32[2,3]{0,1} (column-major) bitcast to f32[3,2]{1,0}: the physical
  // order is the same, so the result is the transpose.
  CompBuilder c("main");
  int64_t x = c.Param(0, "s32[2,3]");
  c.Last()->mutable_shape()->mutable_layout()->clear_minor_to_major();
  c.Last()->mutable_shape()->mutable_layout()->add_minor_to_major(0);
  c.Last()->mutable_shape()->mutable_layout()->add_minor_to_major(1);
  c.Op("bitcast", "s32[3,2]", {x});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {Iota6()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(EvalShapeOps, BitcastToPredAndS4ReadsBytesAsThoseTypes) {
  // u8 bytes 5, 0, 255 read as PRED are true, false, true (any non-zero
  // byte); a dot of that PRED vector with itself is then an OR of ANDs,
  // true. The same bytes read as S4 keep their low four bits,
  // sign-extended: 5, 0, -1.
  Array bytes = MakeArray<uint8_t>(PrimitiveType::kU8, {3}, {5, 0, 255});
  CompBuilder c("main");
  int64_t x = c.Param(0, "u8[3]");
  int64_t p = c.Op("bitcast", "pred[3]", {x});
  int64_t s4 = c.Op("bitcast", "s4[3]", {x});
  int64_t d = c.Op("dot", "pred[]", {p, p}, [](auto& i) {
    i.mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(0);
    i.mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
  });
  c.Op("tuple", "(pred[3], s4[3], pred[])", {p, s4, d});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {bytes});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<uint8_t>(r->elements()[0].array()), ElementsAre(1, 0, 1));
  EXPECT_THAT(ToVector<int8_t>(r->elements()[1].array()), ElementsAre(5, 0, -1));
  EXPECT_THAT(ToVector<uint8_t>(r->elements()[2].array()), ElementsAre(1));
}

TEST(EvalShapeOps, ElidedConstantNamesTheWayOut) {
  CompBuilder c("main");
  c.Op("constant", "f32[20]", {}, [](auto& i) { *i.mutable_literal()->mutable_shape() = testing::ParseTestShape("f32[20]"); });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("left out of the HLO text"));
  EXPECT_THAT(r.status().message(), HasSubstr("--substitute constant."));
  // With a substitute the run goes on.
  EvalOptions o;
  std::vector<float> v(20, 1.5f);
  o.substitutes[mod->entry()->root()->name()] = MakeArray<float>(PrimitiveType::kF32, {20}, v);
  auto s = testing::Run(*mod, {}, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(ToVector<float>(s->array())[19], 1.5f);
}

TEST(EvalShapeOps, HugeDeclaredShapeIsRefusedBeforeAllocation) {
  CompBuilder c("main");
  c.Op("iota", "f32[1000000,1000000]", {}, [](auto& p) { p.add_dimensions(0); });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  EvalOptions o;
  o.max_array_bytes = 1 << 20;
  auto r = testing::Run(*mod, {}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace decomposed::eval
