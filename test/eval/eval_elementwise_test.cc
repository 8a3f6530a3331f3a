// Elementwise ops: hand-worked goldens for XLA's edge rules (integer
// division and remainder, shifts, convert saturation, rounding ties, total
// order compare, NaN-propagating max/min, sub-byte wraparound), broadcast
// operands read without materialising, and the errors. Random inputs
// against NumPy and torch are in test/eval_interop.py.
#include <cmath>
#include <limits>

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

// A module computing `opcode`(p0, p1) on two operands of `shape`.
std::unique_ptr<hlo::HloModule> BinaryModule(std::string_view opcode, std::string_view shape,
                                             std::string_view out_shape = "",
                                             const CompBuilder::Attrs& attrs = {}) {
  CompBuilder c("main");
  int64_t a = c.Param(0, shape), b = c.Param(1, shape);
  c.Op(opcode, out_shape.empty() ? shape : out_shape, {a, b}, attrs);
  ModuleBuilder m;
  m.Add(c);
  return m.Build();
}

std::unique_ptr<hlo::HloModule> UnaryModule(std::string_view opcode, std::string_view shape,
                                            std::string_view out_shape = "",
                                            const CompBuilder::Attrs& attrs = {}) {
  CompBuilder c("main");
  int64_t a = c.Param(0, shape);
  c.Op(opcode, out_shape.empty() ? shape : out_shape, {a}, attrs);
  ModuleBuilder m;
  m.Add(c);
  return m.Build();
}

TEST(EvalElementwise, SignedDivisionAndRemainderFollowXla) {
  // x/0 = -1, INT_MIN/-1 = INT_MIN, x%0 = x, INT_MIN%-1 = 0, remainder
  // takes the dividend's sign.
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  Array a = MakeArray<int32_t>(PrimitiveType::kS32, {6}, {7, -7, 5, kMin, kMin, -9});
  Array b = MakeArray<int32_t>(PrimitiveType::kS32, {6}, {2, 2, 0, -1, 3, 4});
  auto div = BinaryModule("divide", "s32[6]");
  auto q = testing::Run(*div, {a, b});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_THAT(ToVector<int32_t>(q->array()), ElementsAre(3, -3, -1, kMin, kMin / 3, -2));
  auto rem = BinaryModule("remainder", "s32[6]");
  auto r = testing::Run(*rem, {a, b});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(1, -1, 5, 0, kMin % 3, -1));
}

TEST(EvalElementwise, UnsignedDivisionByZeroIsAllOnes) {
  Array a = MakeArray<uint8_t>(PrimitiveType::kU8, {3}, {7, 200, 0});
  Array b = MakeArray<uint8_t>(PrimitiveType::kU8, {3}, {0, 3, 0});
  auto q = testing::Run(*BinaryModule("divide", "u8[3]"), {a, b});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_THAT(ToVector<uint8_t>(q->array()), ElementsAre(255, 66, 255));
  auto r = testing::Run(*BinaryModule("remainder", "u8[3]"), {a, b});
  EXPECT_THAT(ToVector<uint8_t>(r->array()), ElementsAre(7, 2, 0));
}

TEST(EvalElementwise, ShiftsByTheWidthOrMore) {
  Array a = MakeArray<int8_t>(PrimitiveType::kS8, {5}, {1, -128, -128, 64, -1});
  Array b = MakeArray<int8_t>(PrimitiveType::kS8, {5}, {7, 8, 1, -1, 9});
  auto shl = testing::Run(*BinaryModule("shift-left", "s8[5]"), {a, b});
  ASSERT_TRUE(shl.ok()) << shl.status();
  EXPECT_THAT(ToVector<int8_t>(shl->array()), ElementsAre(-128, 0, 0, 0, 0));
  auto sra = testing::Run(*BinaryModule("shift-right-arithmetic", "s8[5]"), {a, b});
  EXPECT_THAT(ToVector<int8_t>(sra->array()), ElementsAre(0, -1, -64, 0, -1));
  auto srl = testing::Run(*BinaryModule("shift-right-logical", "s8[5]"), {a, b});
  EXPECT_THAT(ToVector<int8_t>(srl->array()), ElementsAre(0, 0, 64, 0, 0));
}

TEST(EvalElementwise, SubByteIntegersWrapAtTheirWidth) {
  // s4: 7 + 1 = -8; -8 / -1 = -8; shift by 4 = 0; popcnt(-1) = 4.
  Array a = MakeArray<int8_t>(PrimitiveType::kS4, {3}, {7, -8, -1});
  Array b = MakeArray<int8_t>(PrimitiveType::kS4, {3}, {1, -1, 4});
  auto add = testing::Run(*BinaryModule("add", "s4[3]"), {a, b});
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_THAT(ToVector<int8_t>(add->array()), ElementsAre(-8, 7, 3));
  auto div = testing::Run(*BinaryModule("divide", "s4[3]"), {a, b});
  EXPECT_THAT(ToVector<int8_t>(div->array()), ElementsAre(7, -8, 0));
  auto shl = testing::Run(*BinaryModule("shift-left", "s4[3]"), {a, b});
  EXPECT_THAT(ToVector<int8_t>(shl->array()), ElementsAre(-2, 0, 0));
  auto pc = testing::Run(*UnaryModule("popcnt", "s4[3]"), {a});
  EXPECT_THAT(ToVector<int8_t>(pc->array()), ElementsAre(3, 1, 4));
  auto clz = testing::Run(*UnaryModule("count-leading-zeros", "u4[3]"),
                          {MakeArray<uint8_t>(PrimitiveType::kU4, {3}, {1, 8, 0})});
  EXPECT_THAT(ToVector<uint8_t>(clz->array()), ElementsAre(3, 0, 4));
}

TEST(EvalElementwise, ConvertFloatToIntSaturatesAndNanIsZero) {
  const float inf = std::numeric_limits<float>::infinity();
  Array a = MakeArray<float>(PrimitiveType::kF32, {7},
                             {1e10f, -1e10f, NAN, inf, -inf, -2.7f, 2.7f});
  auto s32 = testing::Run(*UnaryModule("convert", "f32[7]", "s32[7]"), {a});
  ASSERT_TRUE(s32.ok()) << s32.status();
  const int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  EXPECT_THAT(ToVector<int32_t>(s32->array()), ElementsAre(kMax, kMin, 0, kMax, kMin, -2, 2));
  auto u8 = testing::Run(*UnaryModule("convert", "f32[7]", "u8[7]"), {a});
  EXPECT_THAT(ToVector<uint8_t>(u8->array()), ElementsAre(255, 0, 0, 255, 0, 0, 2));
  auto s4 = testing::Run(*UnaryModule("convert", "f32[7]", "s4[7]"), {a});
  EXPECT_THAT(ToVector<int8_t>(s4->array()), ElementsAre(7, -8, 0, 7, -8, -2, 2));
}

TEST(EvalElementwise, ConvertToBf16RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
  Array a = MakeArray<float>(PrimitiveType::kF32, {4},
                             {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -0.0f, 3.4e38f});
  auto b = testing::Run(*UnaryModule("convert", "f32[4]", "bf16[4]"), {a});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(ToVector<uint16_t>(b->array()), ElementsAre(0x3f80, 0x3f82, 0x8000, 0x7f80));
  // f8e4m3fn has no inf: overflow is NaN; 0.0625 + tiny rounds to 0.0625.
  Array c = MakeArray<float>(PrimitiveType::kF32, {3}, {1000.0f, 448.0f, -0.0703125f});
  auto f8 = testing::Run(*UnaryModule("convert", "f32[3]", "f8e4m3fn[3]"), {c});
  ASSERT_TRUE(f8.ok()) << f8.status();
  // 448 = 0x7e (largest), -0.0703125 = -(1+1/8)*2^-4 = 0x99.
  EXPECT_THAT(ToVector<uint8_t>(f8->array()), ElementsAre(0x7f, 0x7e, 0x99));
}

TEST(EvalElementwise, RoundingTies) {
  Array a = MakeArray<float>(PrimitiveType::kF32, {6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f});
  auto afz = testing::Run(*UnaryModule("round-nearest-afz", "f32[6]"), {a});
  ASSERT_TRUE(afz.ok()) << afz.status();
  EXPECT_THAT(ToVector<float>(afz->array()), ElementsAre(1, 2, 3, -1, -2, -3));
  auto even = testing::Run(*UnaryModule("round-nearest-even", "f32[6]"), {a});
  EXPECT_THAT(ToVector<float>(even->array()), ElementsAre(0, 2, 2, -0.0f, -2, -2));
}

TEST(EvalElementwise, CompareEveryDirectionFloatAndTotalOrder) {
  Array a = MakeArray<float>(PrimitiveType::kF32, {4}, {-0.0f, NAN, 1.0f, 2.0f});
  Array b = MakeArray<float>(PrimitiveType::kF32, {4}, {0.0f, NAN, 2.0f, 1.0f});
  struct Case {
    const char* dir;
    std::vector<uint8_t> flt, total;
  };
  const Case cases[] = {
      {"EQ", {1, 0, 0, 0}, {0, 1, 0, 0}}, {"NE", {0, 1, 1, 1}, {1, 0, 1, 1}},
      {"LT", {0, 0, 1, 0}, {1, 0, 1, 0}}, {"LE", {1, 0, 1, 0}, {1, 1, 1, 0}},
      {"GT", {0, 0, 0, 1}, {0, 0, 0, 1}}, {"GE", {1, 0, 0, 1}, {0, 1, 0, 1}},
  };
  for (const Case& c : cases) {
    for (bool total : {false, true}) {
      auto m = BinaryModule("compare", "f32[4]", "pred[4]", [&](xla::HloInstructionProto& i) {
        i.set_comparison_direction(c.dir);
        if (total) i.set_comparison_type("TOTALORDER");
      });
      auto r = testing::Run(*m, {a, b});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(ToVector<uint8_t>(r->array()), total ? c.total : c.flt) << c.dir << " " << total;
    }
  }
}

TEST(EvalElementwise, MaximumAndMinimumPropagateNan) {
  Array a = MakeArray<float>(PrimitiveType::kF32, {3}, {NAN, 1, 3});
  Array b = MakeArray<float>(PrimitiveType::kF32, {3}, {1, NAN, 2});
  auto mx = testing::Run(*BinaryModule("maximum", "f32[3]"), {a, b});
  ASSERT_TRUE(mx.ok());
  auto v = ToVector<float>(mx->array());
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_EQ(v[2], 3);
}

TEST(EvalElementwise, Bf16IsComputedInF32AndRoundedOncePerInstruction) {
  // bf16 1 + bf16 2^-8: in f32 exactly 1 + 2^-8, a tie, rounded to 1.0.
  Array a = MakeArray<uint16_t>(PrimitiveType::kBF16, {2}, {0x3f80, 0x3f80});
  Array b = MakeArray<uint16_t>(PrimitiveType::kBF16, {2}, {0x3b80, 0x3c00});  // 2^-8, 2^-7
  auto r = testing::Run(*BinaryModule("add", "bf16[2]"), {a, b});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<uint16_t>(r->array()), ElementsAre(0x3f80, 0x3f81));
  // kF32: the values stay f32, nothing is rounded.
  EvalOptions f32;
  f32.numerics = Numerics::kF32;
  auto r32 = testing::Run(*BinaryModule("add", "bf16[2]"), {a, b}, f32);
  ASSERT_TRUE(r32.ok()) << r32.status();
  EXPECT_EQ(r32->array().type(), PrimitiveType::kF32);
  EXPECT_THAT(ToVector<float>(r32->array()), ElementsAre(1.0f + 0x1p-8f, 1.0f + 0x1p-7f));
}

TEST(EvalElementwise, BroadcastOperandIsReadWithStridesNotCopied) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[2,3]");
  int64_t s = c.Param(1, "f32[3]");
  int64_t b = c.Op("broadcast", "f32[2,3]", {s}, [](xla::HloInstructionProto& i) { i.add_dimensions(1); });
  c.Op("multiply", "f32[2,3]", {x, b});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  bool broadcast_was_view = false;
  EvalOptions opts;
  opts.on_instruction = [&](const InstructionEvent& e) {
    if (e.instruction.opcode() == hlo::HloOpcode::kBroadcast) {
      broadcast_was_view = !e.value.array().is_contiguous();
    }
    return absl::OkStatus();
  };
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                               MakeArray<float>(PrimitiveType::kF32, {3}, {10, 100, 1000})},
                        opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(broadcast_was_view);
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(10, 200, 3000, 40, 500, 6000));
}

TEST(EvalElementwise, SelectAndClamp) {
  CompBuilder c("main");
  int64_t p = c.Param(0, "pred[]");
  int64_t x = c.Param(1, "s32[4]");
  int64_t y = c.Param(2, "s32[4]");
  int64_t sel = c.Op("select", "s32[4]", {p, x, y});
  int64_t lo = c.Constant("s32[]", {0});
  int64_t hi = c.Constant("s32[]", {5});
  c.Op("clamp", "s32[4]", {lo, sel, hi});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<uint8_t>(PrimitiveType::kPred, {}, {1}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {4}, {-3, 2, 9, 5}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {4}, {0, 0, 0, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<int32_t>(r->array()), ElementsAre(0, 2, 5, 5));
}

TEST(EvalElementwise, BitcastConvertAndReducePrecision) {
  auto bc = testing::Run(*UnaryModule("bitcast-convert", "f32[2]", "u32[2]"),
                         {MakeArray<float>(PrimitiveType::kF32, {2}, {1.0f, -2.0f})});
  ASSERT_TRUE(bc.ok()) << bc.status();
  EXPECT_THAT(ToVector<uint32_t>(bc->array()), ElementsAre(0x3f800000u, 0xc0000000u));
  // To bf16's precision (8 exponent, 7 mantissa bits): as convert to bf16
  // and back; to 5 exponent bits, 70000 overflows to inf, 1e-6 flushes.
  auto rp = testing::Run(*UnaryModule("reduce-precision", "f32[3]", "", [](xla::HloInstructionProto& i) {
                           i.set_exponent_bits(5);
                           i.set_mantissa_bits(10);
                         }),
                         {MakeArray<float>(PrimitiveType::kF32, {3}, {70000.0f, 1e-6f, 1.0f + 0x1p-11f})});
  ASSERT_TRUE(rp.ok()) << rp.status();
  auto v = ToVector<float>(rp->array());
  EXPECT_TRUE(std::isinf(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], 1.0f);
}

TEST(EvalElementwise, MismatchedOperandsAreAnErrorNamingTheInstruction) {
  CompBuilder c("main");
  int64_t a = c.Param(0, "f32[2]");
  int64_t b = c.Param(1, "s32[2]");
  c.Op("add", "f32[2]", {a, b});
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("computation \"main\""));
  EXPECT_THAT(r.status().message(), HasSubstr("(add)"));
  EXPECT_THAT(r.status().message(), HasSubstr("found S32"));
}

TEST(EvalElementwise, InputOfTheWrongShapeNamesTheParameter) {
  auto m = BinaryModule("add", "f32[2]");
  auto r = testing::Run(*m, {MakeArray<float>(PrimitiveType::kF32, {3}, {1, 2, 3}),
                             MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("parameter 0 expected F32[2], found F32[3]"));
}

}  // namespace
}  // namespace decomposed::eval
