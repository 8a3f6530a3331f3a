// XLA's shape rules (hlo/shape_inference.h), one test per rule: the result
// worked out by hand from operation_semantics, and the exact error of a bad
// case.
#include "decomposed/hlo/shape_inference.h"

#include <string>
#include <vector>

#include "decomposed/hlo/builder.h"
#include "gtest/gtest.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

ShapeProto A(int type, std::initializer_list<int64_t> dims) {
  return MakeArrayShape(type, std::vector<int64_t>(dims));
}
ShapeProto S(int type) { return MakeScalarShape(type); }
ShapeProto T(std::vector<ShapeProto> e) { return MakeTupleShape(e); }

// The shape, or "error: <message>".
std::string D(const absl::StatusOr<ShapeProto>& s) {
  if (!s.ok()) return absl::StrCat("error: ", s.status().message());
  return DescribeShape(*s);
}

xla::ProgramShapeProto Sig(std::vector<ShapeProto> params, ShapeProto result) {
  xla::ProgramShapeProto p;
  for (const ShapeProto& s : params) *p.add_parameters() = s;
  *p.mutable_result() = result;
  return p;
}

TEST(ShapeHelpersTest, DescribeAndCompare) {
  ShapeProto a = A(xla::F32, {2, 3});
  EXPECT_EQ(DescribeShape(a), "f32[2,3]");
  EXPECT_EQ(DescribeShape(a, true), "f32[2,3]{1,0}");
  EXPECT_EQ(DescribeShape(T({a, S(xla::S32), MakeTokenShape()})),
            "(f32[2,3], s32[], token[])");
  a.add_is_dynamic_dimension(false);
  a.add_is_dynamic_dimension(true);
  EXPECT_EQ(DescribeShape(a), "f32[2,<=3]");
  // Compatible ignores layouts and dynamic flags, not types or dimensions.
  ShapeProto b = A(xla::F32, {2, 3});
  b.mutable_layout()->set_minor_to_major(0, 0);
  b.mutable_layout()->set_minor_to_major(1, 1);
  EXPECT_TRUE(ShapesCompatible(a, b));
  EXPECT_FALSE(LayoutsAgree(A(xla::F32, {2, 3}), b));
  EXPECT_FALSE(ShapesCompatible(a, A(xla::BF16, {2, 3})));
  EXPECT_TRUE(ShapesCompatibleIgnoringFpPrecision(a, A(xla::BF16, {2, 3})));
  EXPECT_FALSE(ShapesCompatibleIgnoringFpPrecision(a, A(xla::S32, {2, 3})));
  EXPECT_TRUE(ShapesCompatibleIgnoringElementType(a, A(xla::S32, {2, 3})));
  EXPECT_FALSE(ShapesCompatible(a, T({a})));
  EXPECT_EQ(ElementTypeName(xla::F8E4M3FN), "f8e4m3fn");
  EXPECT_EQ(ElementTypeName(99), "<type 99>");
  EXPECT_EQ(ElementBitWidth(xla::S4), 4);
  EXPECT_EQ(ElementBitWidth(xla::C128), 128);
}

TEST(ShapeHelpersTest, WellFormedness) {
  EXPECT_TRUE(CheckShapeWellFormed(A(xla::F32, {2, 3})).ok());
  ShapeProto bad = A(xla::F32, {2, 3});
  bad.mutable_layout()->set_minor_to_major(1, 1);  // {1,1}
  EXPECT_EQ(CheckShapeWellFormed(bad).message(),
            "expected a layout that is a permutation of 2 dimensions, found "
            "minor_to_major {1,1} on f32[2,3]");
  ShapeProto neg = A(xla::F32, {-1});
  EXPECT_EQ(CheckShapeWellFormed(neg).message(),
            "expected non-negative dimensions, found f32[-1]");
  ShapeProto unknown;
  unknown.set_element_type(static_cast<xla::PrimitiveType>(77));
  EXPECT_EQ(CheckShapeWellFormed(unknown).message(),
            "expected a known element type, found element_type 77");
  ShapeProto tuple_dims = T({S(xla::F32)});
  tuple_dims.add_dimensions(2);
  EXPECT_EQ(CheckShapeWellFormed(tuple_dims).message(),
            "expected a tuple shape without dimensions or layout, found "
            "(f32[])");
  ShapeProto big = A(xla::F32, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(CheckShapeWellFormed(big).message(),
            "expected an element count that fits in 64 bits, found "
            "f32[1099511627776,1099511627776]");
  ShapeProto dyn = A(xla::F32, {2});
  dyn.add_is_dynamic_dimension(true);
  dyn.add_is_dynamic_dimension(true);
  EXPECT_EQ(CheckShapeWellFormed(dyn).message(),
            "expected 1 is_dynamic_dimension entries, found 2");
}

TEST(ShapeHelpersTest, MixedPrecision) {
  const ShapeProto f = A(xla::F32, {2}), h = A(xla::BF16, {2});
  EXPECT_EQ(CheckMixedPrecision(HloOpcode::kAdd, {&f, &h}).message(),
            "add: expected floating-point operands of one precision, found f32 "
            "and bf16");
  EXPECT_TRUE(CheckMixedPrecision(HloOpcode::kTuple, {&f, &h}).ok());
  EXPECT_TRUE(CheckMixedPrecision(HloOpcode::kDot, {&f, &h}).ok());
  const ShapeProto i = A(xla::S32, {2});
  EXPECT_TRUE(CheckMixedPrecision(HloOpcode::kSelect, {&i, &f, &f}).ok());
}

TEST(UnaryShapeTest, TypesPerOpcode) {
  const ShapeProto f = A(xla::F32, {2, 3});
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kExp, f)), "f32[2,3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kIsFinite, f)), "pred[2,3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kReal, A(xla::C64, {4}))), "f32[4]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kImag, A(xla::C128, {4}))), "f64[4]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kAbs, A(xla::C64, {4}))), "f32[4]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kAbs, A(xla::S8, {4}))), "s8[4]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kAbs, A(xla::U8, {4}))),
            "error: abs: expected a signed integer, floating-point or complex "
            "operand, found u8[4]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kFloor, A(xla::S32, {2}))),
            "error: floor: expected a floating-point operand, found s32[2]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kSqrt, A(xla::C64, {2}))), "c64[2]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kClz, f)),
            "error: count-leading-zeros: expected an integer operand, found "
            "f32[2,3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kPopulationCount, A(xla::U16, {}))),
            "u16[]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kNot, A(xla::PRED, {3}))), "pred[3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kNegate, A(xla::PRED, {3}))),
            "error: negate: expected an integer, floating-point or complex "
            "operand, found pred[3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kSign, A(xla::U32, {3}))),
            "error: sign: expected a signed integer, floating-point or complex "
            "operand, found u32[3]");
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kLog, T({f}))),
            "error: log: expected an array operand, found (f32[2,3])");
  // copy takes any shape.
  EXPECT_EQ(D(InferUnaryShape(HloOpcode::kCopy, T({f}))), "(f32[2,3])");
}

TEST(BinaryShapeTest, EqualDimensionsNoImplicitBroadcast) {
  const ShapeProto f = A(xla::F32, {2, 3});
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kAdd, f, f)), "f32[2,3]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kAdd, f, A(xla::F32, {3, 2}))),
            "error: add: expected operands of the same dimensions, found "
            "f32[2,3] and f32[3,2]");
  // A scalar is not broadcast in HLO.
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kMultiply, f, S(xla::F32))),
            "error: multiply: expected operands of the same dimensions, found "
            "f32[2,3] and f32[]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kAdd, f, A(xla::S32, {2, 3}))),
            "error: add: expected operands of one element type, found f32[2,3] "
            "and s32[2,3]");
  // Floating-point precisions mix in the rule; the more precise wins.
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kAdd, A(xla::BF16, {2}),
                               A(xla::F32, {2}))),
            "f32[2]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kSubtract, A(xla::PRED, {2}),
                               A(xla::PRED, {2}))),
            "error: subtract: expected arithmetic operands, found pred[2]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kAnd, f, f)),
            "error: and: expected pred or integer operands, found f32[2,3]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kXor, A(xla::U8, {4}),
                               A(xla::U8, {4}))),
            "u8[4]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kCompare, f, f)), "pred[2,3]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kComplex, f, f)), "c64[2,3]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kComplex, A(xla::F64, {1}),
                               A(xla::F64, {1}))),
            "c128[1]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kComplex, A(xla::F16, {1}),
                               A(xla::F16, {1}))),
            "error: complex: expected two f32 or two f64 operands, found "
            "f16[1] and f16[1]");
  EXPECT_EQ(D(InferBinaryShape(HloOpcode::kShiftRightLogical, A(xla::S32, {2}),
                               A(xla::S32, {2}))),
            "s32[2]");
}

TEST(TernaryShapeTest, SelectAndClamp) {
  const ShapeProto f = A(xla::F32, {4});
  const ShapeProto p = A(xla::PRED, {4});
  EXPECT_EQ(D(InferSelectShape(p, f, f)), "f32[4]");
  EXPECT_EQ(D(InferSelectShape(A(xla::S32, {4}), f, f)),
            "error: select: expected a pred predicate, found s32[4]");
  EXPECT_EQ(D(InferSelectShape(S(xla::PRED), f, f)),
            "error: select: expected a predicate of the operands' dimensions, "
            "found pred[] for f32[4]");
  EXPECT_EQ(D(InferSelectShape(p, f, A(xla::F32, {5}))),
            "error: select: expected on-true and on-false operands of one "
            "shape, found f32[4] and f32[5]");
  // clamp: scalar bounds or operand-shaped ones.
  EXPECT_EQ(D(InferClampShape(S(xla::F32), f, S(xla::F32))), "f32[4]");
  EXPECT_EQ(D(InferClampShape(f, f, f)), "f32[4]");
  EXPECT_EQ(D(InferClampShape(A(xla::F32, {2}), f, f)),
            "error: clamp: expected min and max of the operand's element "
            "type, each a scalar or of its dimensions, found f32[2], f32[4], "
            "f32[4]");
  EXPECT_EQ(D(InferClampShape(S(xla::S32), f, S(xla::F32))),
            "error: clamp: expected min and max of the operand's element "
            "type, each a scalar or of its dimensions, found s32[], f32[4], "
            "f32[]");
}

TEST(ConvertShapeTest, ConvertBitcastConvertReducePrecision) {
  EXPECT_EQ(D(InferConvertShape(A(xla::F32, {2, 3}), xla::S8)), "s8[2,3]");
  EXPECT_EQ(D(InferConvertShape(A(xla::F32, {2}), xla::TUPLE)),
            "error: convert: expected an array element type to convert to, "
            "found tuple");
  // Equal widths keep the dimensions.
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::F32, {2, 3}), xla::S32)),
            "s32[2,3]");
  // 32 bits to 8: a minor dimension of 4 appears.
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::F32, {2}), xla::U8)), "u8[2,4]");
  // 32 bits to 4: of 8.
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::F32, {}), xla::S4)), "s4[8]");
  // 8 bits to 32: the minor dimension of 4 goes.
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::U8, {2, 4}), xla::F32)),
            "f32[2]");
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::U8, {2, 3}), xla::F32)),
            "error: bitcast-convert: expected a minor dimension of 4 (the "
            "ratio of the bit widths), found u8[2,3] to f32");
  EXPECT_EQ(D(InferBitcastConvertShape(A(xla::F64, {2}), xla::C64)),
            "error: bitcast-convert: expected both or neither type complex, "
            "found f64[2] to c64");
  EXPECT_EQ(D(InferReducePrecisionShape(A(xla::F32, {2}), 5, 10)), "f32[2]");
  EXPECT_EQ(D(InferReducePrecisionShape(A(xla::F32, {2}), 0, 10)),
            "error: reduce-precision: expected exponent_bits >= 1, found 0");
  EXPECT_EQ(D(InferReducePrecisionShape(A(xla::S32, {2}), 5, 10)),
            "error: reduce-precision: expected a floating-point operand, found "
            "s32[2]");
}

TEST(ShapeOpsTest, IotaBroadcastReshapeTranspose) {
  EXPECT_EQ(D(InferIotaShape(A(xla::S32, {4, 2}), 1)), "s32[4,2]");
  EXPECT_EQ(D(InferIotaShape(S(xla::S32), 0)),
            "error: iota: expected a result of rank >= 1, found s32[]");
  EXPECT_EQ(D(InferIotaShape(A(xla::F32, {4}), 1)),
            "error: iota: expected an iota dimension in [0, 1), found 1");
  EXPECT_EQ(D(InferIotaShape(A(xla::PRED, {4}), 0)),
            "error: iota: expected an integer, floating-point or complex "
            "result, found pred[4]");
  // f32[3] into dimension 1 of [2,3].
  EXPECT_EQ(D(InferBroadcastShape(A(xla::F32, {3}), {2, 3}, {1})), "f32[2,3]");
  // A transposing broadcast: operand dims {0,1} to output {1,0}.
  EXPECT_EQ(D(InferBroadcastShape(A(xla::F32, {2, 3}), {3, 5, 2}, {2, 0})),
            "f32[3,5,2]");
  EXPECT_EQ(D(InferBroadcastShape(A(xla::F32, {3}), {2, 3}, {0})),
            "error: broadcast: expected output dimension 0 to be 3 (operand "
            "dimension 0 of f32[3]), found 2");
  EXPECT_EQ(D(InferBroadcastShape(A(xla::F32, {3}), {2, 3}, {})),
            "error: broadcast: expected one dimension per operand dimension "
            "(1), found dimensions={} for f32[3]");
  EXPECT_EQ(D(InferBroadcastShape(A(xla::F32, {3}), {3}, {3})),
            "error: broadcast: expected dimensions in [0, 1), found {3}");
  EXPECT_EQ(D(InferReshapeShape(A(xla::F32, {2, 3}), {6})), "f32[6]");
  EXPECT_EQ(D(InferReshapeShape(A(xla::F32, {2, 3}), {4})),
            "error: reshape: expected the same element count, found 6 "
            "(f32[2,3]) and 4 (f32[4])");
  // result dimension i is operand dimension permutation[i].
  EXPECT_EQ(D(InferTransposeShape(A(xla::F32, {2, 3, 4}), {2, 0, 1})),
            "f32[4,2,3]");
  EXPECT_EQ(D(InferTransposeShape(A(xla::F32, {2, 3}), {0, 0})),
            "error: transpose: expected dimensions that permute the 2 operand "
            "dimensions, found {0,0} for f32[2,3]");
}

TEST(ShapeOpsTest, SliceAndDynamicSlice) {
  // [2:9:3] of 10: elements 2, 5, 8.
  EXPECT_EQ(D(InferSliceShape(A(xla::F32, {10}), {2}, {9}, {3})), "f32[3]");
  EXPECT_EQ(D(InferSliceShape(A(xla::F32, {10, 4}), {0, 1}, {10, 4}, {1, 1})),
            "f32[10,3]");
  EXPECT_EQ(D(InferSliceShape(A(xla::F32, {10}), {0}, {11}, {1})),
            "error: slice: expected a limit <= 10, found 11 in dimension 0 of "
            "f32[10]");
  EXPECT_EQ(D(InferSliceShape(A(xla::F32, {10}), {5}, {4}, {1})),
            "error: slice: expected start <= limit, found 5 > 4 in dimension 0 "
            "of f32[10]");
  EXPECT_EQ(D(InferSliceShape(A(xla::F32, {10}), {0}, {4}, {0})),
            "error: slice: expected a positive stride, found 0 in dimension 0 "
            "of f32[10]");
  const ShapeProto i = S(xla::S32);
  EXPECT_EQ(D(InferDynamicSliceShape(A(xla::F32, {4, 5}), {&i, &i}, {2, 3})),
            "f32[2,3]");
  const ShapeProto vec = A(xla::S32, {2});
  EXPECT_EQ(D(InferDynamicSliceShape(A(xla::F32, {4, 5}), {&vec}, {2, 3})),
            "f32[2,3]");
  EXPECT_EQ(D(InferDynamicSliceShape(A(xla::F32, {4, 5}), {&i}, {2, 3})),
            "error: dynamic-slice: expected one start index per dimension of "
            "f32[4,5] (2), found 1");
  const ShapeProto fi = S(xla::F32);
  EXPECT_EQ(D(InferDynamicSliceShape(A(xla::F32, {4, 5}), {&fi, &fi}, {2, 3})),
            "error: dynamic-slice: expected integer scalar start indices, "
            "found f32[]");
  EXPECT_EQ(D(InferDynamicSliceShape(A(xla::F32, {4, 5}), {&i, &i}, {2, 6})),
            "error: dynamic-slice: expected slice sizes within f32[4,5], found "
            "{2,6}");
  EXPECT_EQ(D(InferDynamicUpdateSliceShape(A(xla::F32, {4, 5}),
                                           A(xla::F32, {2, 5}), {&i, &i})),
            "f32[4,5]");
  EXPECT_EQ(D(InferDynamicUpdateSliceShape(A(xla::F32, {4, 5}),
                                           A(xla::F32, {2, 6}), {&i, &i})),
            "error: dynamic-update-slice: expected an update within the "
            "operand, found f32[2,6] for f32[4,5]");
  EXPECT_EQ(D(InferDynamicUpdateSliceShape(A(xla::F32, {4, 5}),
                                           A(xla::F32, {2}), {&i, &i})),
            "error: dynamic-update-slice: expected an update of the operand's "
            "rank, found f32[2] for f32[4,5]");
}

TEST(ShapeOpsTest, ConcatenatePadReverse) {
  const ShapeProto a = A(xla::F32, {2, 3}), b = A(xla::F32, {4, 3});
  EXPECT_EQ(D(InferConcatenateShape({&a, &b}, 0)), "f32[6,3]");
  EXPECT_EQ(D(InferConcatenateShape({&a, &b}, 1)),
            "error: concatenate: expected operands that differ only in "
            "dimension 1, found f32[2,3] and f32[4,3]");
  EXPECT_EQ(D(InferConcatenateShape({&a}, 2)),
            "error: concatenate: expected a dimension in [0, 2), found 2");
  // 4 elements, low 1, high -1, interior 2: 4 + 1 - 1 + 3 * 2 = 10.
  EXPECT_EQ(D(InferPadShape(A(xla::F32, {4}), S(xla::F32),
                            MakePaddingConfig({{1, -1, 2}}))),
            "f32[10]");
  EXPECT_EQ(D(InferPadShape(A(xla::F32, {2, 3}), S(xla::F32),
                            MakePaddingConfig({{0, 0, 0}, {-1, 2, 0}}))),
            "f32[2,4]");
  EXPECT_EQ(D(InferPadShape(A(xla::F32, {2}), S(xla::F32),
                            MakePaddingConfig({{-3, 0, 0}}))),
            "error: pad: expected a non-negative padded size, found -1 in "
            "dimension 0 of f32[2]");
  EXPECT_EQ(D(InferPadShape(A(xla::F32, {2}), S(xla::F32),
                            MakePaddingConfig({{0, 0, -1}}))),
            "error: pad: expected non-negative interior padding, found -1 in "
            "dimension 0");
  EXPECT_EQ(D(InferPadShape(A(xla::F32, {2}), A(xla::F32, {1}),
                            MakePaddingConfig({{0, 0, 0}}))),
            "error: pad: expected a scalar padding value, found f32[1]");
  EXPECT_EQ(D(InferReverseShape(A(xla::F32, {2, 3}), {0, 1})), "f32[2,3]");
  EXPECT_EQ(D(InferReverseShape(A(xla::F32, {2, 3}), {1, 1})),
            "error: reverse: expected distinct dimensions, found {1,1}");
}

TEST(GatherScatterTest, Gather) {
  // Row lookup: 3 indices into f32[10,4], each taking a whole row.
  const ShapeProto operand = A(xla::F32, {10, 4});
  const ShapeProto idx = A(xla::S32, {3});
  EXPECT_EQ(D(InferGatherShape(operand, idx,
                               MakeGatherDimensionNumbers({1}, {0}, {0}, 1),
                               {1, 4})),
            "f32[3,4]");
  // Keeping the collapsed dimension as an offset of size 1.
  EXPECT_EQ(D(InferGatherShape(operand, idx,
                               MakeGatherDimensionNumbers({1, 2}, {}, {0}, 1),
                               {1, 4})),
            "f32[3,1,4]");
  EXPECT_EQ(D(InferGatherShape(operand, idx,
                               MakeGatherDimensionNumbers({1}, {0}, {0}, 1),
                               {2, 4})),
            "error: gather: expected slice size 0 or 1 in collapsed dimension "
            "0, found 2");
  EXPECT_EQ(D(InferGatherShape(operand, idx,
                               MakeGatherDimensionNumbers({1}, {0}, {0, 1}, 1),
                               {1, 4})),
            "error: gather: expected start_index_map to have one entry per "
            "index in dimension index_vector_dim=1 of s32[3] (1), found {0,1}");
  EXPECT_EQ(D(InferGatherShape(operand, A(xla::F32, {3}),
                               MakeGatherDimensionNumbers({1}, {0}, {0}, 1),
                               {1, 4})),
            "error: gather: expected integer indices, found f32[3]");
  // Batching: operand [2,5,4] batched on 0 with indices [2,3,1] batched on
  // 0; out = (indices batch 2, indices 3, offset 4).
  EXPECT_EQ(D(InferGatherShape(A(xla::F32, {2, 5, 4}), A(xla::S32, {2, 3, 1}),
                               MakeGatherDimensionNumbers({2}, {1}, {1}, 2, {0},
                                                          {0}),
                               {1, 1, 4})),
            "f32[2,3,4]");
}

TEST(GatherScatterTest, Scatter) {
  const ShapeProto operand = A(xla::F32, {10, 4});
  const ShapeProto idx = A(xla::S32, {3});
  const ShapeProto upd = A(xla::F32, {3, 4});
  const xla::ProgramShapeProto add =
      Sig({S(xla::F32), S(xla::F32)}, S(xla::F32));
  const xla::ScatterDimensionNumbers dn =
      MakeScatterDimensionNumbers({1}, {0}, {0}, 1);
  EXPECT_EQ(D(InferScatterShape({&operand, &idx, &upd}, add, dn)), "f32[10,4]");
  const ShapeProto bad_upd = A(xla::F32, {3, 4, 1});
  EXPECT_EQ(D(InferScatterShape({&operand, &idx, &bad_upd}, add, dn)),
            "error: scatter: expected updates of rank 2, found f32[3,4,1]");
  const ShapeProto big = A(xla::F32, {3, 5});
  EXPECT_EQ(D(InferScatterShape({&operand, &idx, &big}, add, dn)),
            "error: scatter: expected update window dimension 1 of f32[3,5] <= "
            "4, found 5");
  const xla::ProgramShapeProto three =
      Sig({S(xla::F32), S(xla::F32), S(xla::F32)}, S(xla::F32));
  EXPECT_EQ(D(InferScatterShape({&operand, &idx, &upd}, three, dn)),
            "error: scatter: expected a computation of 2 parameters, found "
            "(f32[], f32[], f32[]) -> f32[]");
  EXPECT_EQ(D(InferScatterShape({&operand, &idx}, add, dn)),
            "error: scatter: expected operands, indices and as many updates as "
            "operands (an odd count >= 3), found 2 operands");
}

TEST(ContractionTest, Dot) {
  const ShapeProto a = A(xla::F32, {2, 3}), b = A(xla::F32, {3, 4});
  EXPECT_EQ(D(InferDotShape(a, b, MakeDotDimensionNumbers({1}, {0}))),
            "f32[2,4]");
  // Batch first, then lhs free, then rhs free.
  EXPECT_EQ(D(InferDotShape(A(xla::F32, {5, 2, 3}), A(xla::F32, {5, 3, 4}),
                            MakeDotDimensionNumbers({2}, {1}, {0}, {0}))),
            "f32[5,2,4]");
  EXPECT_EQ(D(InferDotShape(a, a, MakeDotDimensionNumbers({1}, {1}))),
            "f32[2,2]");
  EXPECT_EQ(D(InferDotShape(a, a, MakeDotDimensionNumbers({1}, {0}))),
            "error: dot: expected contracting dimensions of one size, found "
            "lhs dimension 1 (3) and rhs dimension 0 (2) for f32[2,3] and "
            "f32[2,3]");
  EXPECT_EQ(D(InferDotShape(a, b, MakeDotDimensionNumbers({2}, {0}))),
            "error: dot: expected distinct contracting and batch dimensions "
            "within each operand's rank, found lhs_contracting={2} "
            "lhs_batch={} rhs_contracting={0} rhs_batch={} for f32[2,3] and "
            "f32[3,4]");
  // The result type may widen (s8 -> s32) or change float precision.
  EXPECT_EQ(D(InferDotShape(A(xla::S8, {2, 3}), A(xla::S8, {3, 4}),
                            MakeDotDimensionNumbers({1}, {0}), xla::S32)),
            "s32[2,4]");
  EXPECT_EQ(D(InferDotShape(A(xla::BF16, {2, 3}), A(xla::BF16, {3, 4}),
                            MakeDotDimensionNumbers({1}, {0}), xla::F32)),
            "f32[2,4]");
  EXPECT_EQ(D(InferDotShape(A(xla::S32, {2, 3}), A(xla::S32, {3, 4}),
                            MakeDotDimensionNumbers({1}, {0}), xla::S8)),
            "error: dot: expected a result type at least as wide as the "
            "operands' s32, found s8");
}

TEST(ContractionTest, Convolution) {
  absl::StatusOr<xla::ConvolutionDimensionNumbers> dn =
      ConvolutionDimensionNumbersFromLabels("b01f_01io->b01f");
  ASSERT_TRUE(dn.ok()) << dn.status();
  const ShapeProto in = A(xla::F32, {1, 5, 5, 2});
  const ShapeProto k = A(xla::F32, {3, 3, 2, 4});
  // 5 - 3 + 1 = 3 per spatial dimension.
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1, MakeWindow({3, 3}), *dn)),
            "f32[1,3,3,4]");
  // Padding 1 on each side keeps 5.
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1,
                                    MakeWindow({3, 3}, {}, {{1, 1}, {1, 1}}),
                                    *dn)),
            "f32[1,5,5,4]");
  // Stride 2 with padding 1: (7 - 3) / 2 + 1 = 3.
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1,
                                    MakeWindow({3, 3}, {2, 2}, {{1, 1}, {1, 1}}),
                                    *dn)),
            "f32[1,3,3,4]");
  // Base dilation 2: (5 - 1) * 2 + 1 = 9, then 9 - 3 + 1 = 7.
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1,
                                    MakeWindow({3, 3}, {}, {}, {2, 2}), *dn)),
            "f32[1,7,7,4]");
  // Window dilation 2: the window spans 5, so 5 - 5 + 1 = 1.
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1,
                                    MakeWindow({3, 3}, {}, {}, {}, {2, 2}), *dn)),
            "f32[1,1,1,4]");
  // Two feature groups: 2 input features, kernel input features 1.
  EXPECT_EQ(D(InferConvolutionShape(in, A(xla::F32, {3, 3, 1, 4}), 2, 1,
                                    MakeWindow({3, 3}), *dn)),
            "f32[1,3,3,4]");
  // Two batch groups: batch 2 becomes 1.
  EXPECT_EQ(D(InferConvolutionShape(A(xla::F32, {2, 5, 5, 2}), k, 1, 2,
                                    MakeWindow({3, 3}), *dn)),
            "f32[1,3,3,4]");
  EXPECT_EQ(D(InferConvolutionShape(in, A(xla::F32, {3, 3, 3, 4}), 1, 1,
                                    MakeWindow({3, 3}), *dn)),
            "error: convolution: expected input features (2) = kernel input "
            "features (3) * feature_group_count (1) for f32[1,5,5,2] and "
            "f32[3,3,3,4]");
  EXPECT_EQ(D(InferConvolutionShape(in, k, 1, 1, MakeWindow({2, 3}), *dn)),
            "error: convolution: expected window size 3 (kernel spatial "
            "dimension 0), found 2 for f32[1,5,5,2] and f32[3,3,2,4]");
  // Another layout: feature-major input, kernel oi01, output bf01.
  absl::StatusOr<xla::ConvolutionDimensionNumbers> nchw =
      ConvolutionDimensionNumbersFromLabels("bf01_oi01->bf01");
  ASSERT_TRUE(nchw.ok());
  EXPECT_EQ(D(InferConvolutionShape(A(xla::F32, {1, 2, 5, 6}),
                                    A(xla::F32, {4, 2, 3, 2}), 1, 1,
                                    MakeWindow({3, 2}), *nchw)),
            "f32[1,4,3,5]");
}

TEST(WindowTest, Errors) {
  const int64_t base[] = {5};
  EXPECT_EQ(InferWindowDimensions(base, MakeWindow({0})).status().message(),
            "expected a positive size in window dimension 0, found 0");
  EXPECT_EQ(InferWindowDimensions(base, MakeWindow({2}, {0})).status().message(),
            "expected a positive stride in window dimension 0, found 0");
  xla::Window w = MakeWindow({2});
  w.mutable_dimensions(0)->set_base_dilation(0);
  EXPECT_EQ(InferWindowDimensions(base, w).status().message(),
            "expected a base dilation >= 1 in window dimension 0, found 0");
  EXPECT_EQ(InferWindowDimensions(base, MakeWindow({2, 2})).status().message(),
            "expected a window of 1 dimensions, found 2");
  // Huge padding overflows 64 bits: an error, not a wrap.
  xla::Window huge = MakeWindow({2}, {}, {{INT64_MAX, INT64_MAX}});
  EXPECT_FALSE(InferWindowDimensions(base, huge).ok());
}

TEST(ReductionTest, Reduce) {
  const ShapeProto x = A(xla::F32, {2, 3});
  const ShapeProto z = S(xla::F32);
  const xla::ProgramShapeProto add = Sig({z, z}, z);
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {1}, add)), "f32[2]");
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {0, 1}, add)), "f32[]");
  // Variadic arg-max: (f32, s32) pairs.
  const ShapeProto i = A(xla::S32, {2, 3});
  const ShapeProto zi = S(xla::S32);
  const xla::ProgramShapeProto argmax =
      Sig({z, zi, z, zi}, T({z, zi}));
  EXPECT_EQ(D(InferReduceShape({&x, &i, &z, &zi}, {1}, argmax)),
            "(f32[2], s32[2])");
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {1}, Sig({z, z, z}, z))),
            "error: reduce: expected a computation of 2 parameters, found "
            "(f32[], f32[], f32[]) -> f32[]");
  EXPECT_EQ(D(InferReduceShape({&x, &i, &z, &zi}, {1}, add)),
            "error: reduce: expected a computation of 4 parameters, found "
            "(f32[], f32[]) -> f32[]");
  EXPECT_EQ(D(InferReduceShape({&x, &zi}, {1}, add)),
            "error: reduce: expected initial value 0 of type f32[], found "
            "s32[]");
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {2}, add)),
            "error: reduce: expected dimensions in [0, 2), found {2} for "
            "f32[2,3]");
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {1, 1}, add)),
            "error: reduce: expected distinct dimensions, found {1,1}");
  EXPECT_EQ(D(InferReduceShape({&x, &z, &z}, {1}, add)),
            "error: reduce: expected inputs and as many initial values (an even "
            "count >= 2), found 3 operands");
  EXPECT_EQ(D(InferReduceShape({&x, &z}, {1}, Sig({z, z}, A(xla::F32, {1})))),
            "error: reduce: expected a computation returning scalars, found "
            "(f32[], f32[]) -> f32[1]");
}

TEST(ReductionTest, ReduceWindowAndSelectAndScatter) {
  const ShapeProto x = A(xla::F32, {4, 6});
  const ShapeProto z = S(xla::F32);
  const xla::ProgramShapeProto add = Sig({z, z}, z);
  // 2x3 windows with strides 2x3: (4-2)/2+1 = 2, (6-3)/3+1 = 2.
  EXPECT_EQ(D(InferReduceWindowShape({&x, &z}, MakeWindow({2, 3}, {2, 3}), add)),
            "f32[2,2]");
  // Padding 1 low on dimension 0: (5-2)/1+1 = 4.
  EXPECT_EQ(D(InferReduceWindowShape(
                {&x, &z}, MakeWindow({2, 1}, {}, {{1, 0}, {0, 0}}), add)),
            "f32[4,6]");
  const xla::ProgramShapeProto ge = Sig({z, z}, S(xla::PRED));
  EXPECT_EQ(D(InferSelectAndScatterShape(x, ge, MakeWindow({2, 3}, {2, 3}),
                                         A(xla::F32, {2, 2}), z, add)),
            "f32[4,6]");
  EXPECT_EQ(D(InferSelectAndScatterShape(x, ge, MakeWindow({2, 3}, {2, 3}),
                                         A(xla::F32, {2, 3}), z, add)),
            "error: select-and-scatter: expected a source of the windowed "
            "operand's shape f32[2,2], found f32[2,3]");
  EXPECT_EQ(D(InferSelectAndScatterShape(x, add, MakeWindow({2, 3}, {2, 3}),
                                         A(xla::F32, {2, 2}), z, add)),
            "error: select-and-scatter: expected a select computation (f32[], "
            "f32[]) -> pred[], found (f32[], f32[]) -> f32[]");
}

TEST(ReductionTest, SortTopKMap) {
  const ShapeProto k = A(xla::F32, {3, 4});
  const ShapeProto v = A(xla::S32, {3, 4});
  const ShapeProto z = S(xla::F32), zi = S(xla::S32), p = S(xla::PRED);
  EXPECT_EQ(D(InferSortShape({&k}, 1, Sig({z, z}, p))), "f32[3,4]");
  EXPECT_EQ(D(InferSortShape({&k, &v}, 0, Sig({z, z, zi, zi}, p))),
            "(f32[3,4], s32[3,4])");
  EXPECT_EQ(D(InferSortShape({&k, &v}, 0, Sig({z, z}, p))),
            "error: sort: expected a comparator (f32[], f32[], s32[], s32[]) "
            "-> pred[], found (f32[], f32[]) -> pred[]");
  EXPECT_EQ(D(InferSortShape({&k}, 2, Sig({z, z}, p))),
            "error: sort: expected a dimension in [0, 2), found 2");
  EXPECT_EQ(D(InferTopKShape(A(xla::F32, {5, 10}), 3)),
            "(f32[5,3], s32[5,3])");
  EXPECT_EQ(D(InferTopKShape(A(xla::F32, {5, 10}), 11)),
            "error: topk: expected k in [0, 10] for f32[5,10], found 11");
  const ShapeProto a = A(xla::F32, {3});
  EXPECT_EQ(D(InferMapShape({&a, &a}, Sig({z, z}, z), {0})), "f32[3]");
  EXPECT_EQ(D(InferMapShape({&a, &a}, Sig({z}, z), {0})),
            "error: map: expected a computation of 2 parameters, found (f32[]) "
            "-> f32[]");
  EXPECT_EQ(D(InferMapShape({&a}, Sig({zi}, z), {0})),
            "error: map: expected parameter 0 of the computation to be f32[], "
            "found (s32[]) -> f32[]");
}

TEST(ControlFlowTest, TupleCallWhileConditionalFusion) {
  const ShapeProto f = A(xla::F32, {2});
  const ShapeProto i = S(xla::S32);
  EXPECT_EQ(D(InferTupleShape({&f, &i})), "(f32[2], s32[])");
  const ShapeProto t = T({f, i});
  EXPECT_EQ(D(InferGetTupleElementShape(t, 1)), "s32[]");
  EXPECT_EQ(D(InferGetTupleElementShape(t, 2)),
            "error: get-tuple-element: expected a tuple index in [0, 2) for "
            "(f32[2], s32[]), found 2");
  EXPECT_EQ(D(InferGetTupleElementShape(f, 0)),
            "error: get-tuple-element: expected a tuple operand, found f32[2]");
  EXPECT_EQ(D(InferCallShape({&f}, Sig({f}, i))), "s32[]");
  EXPECT_EQ(D(InferCallShape({&f, &f}, Sig({f}, i))),
            "error: call: expected a computation of 2 parameters, found "
            "(f32[2]) -> s32[]");
  EXPECT_EQ(D(InferCallShape({&i}, Sig({f}, i))),
            "error: call: expected operand 0 of parameter 0's shape f32[2], "
            "found s32[]");
  const ShapeProto p = S(xla::PRED);
  EXPECT_EQ(D(InferWhileShape(Sig({t}, p), Sig({t}, t), t)), "(f32[2], s32[])");
  EXPECT_EQ(D(InferWhileShape(Sig({t}, i), Sig({t}, t), t)),
            "error: while: expected a condition returning pred[], found "
            "((f32[2], s32[])) -> s32[]");
  EXPECT_EQ(D(InferWhileShape(Sig({t}, p), Sig({t}, f), t)),
            "error: while: expected the operand, the condition's and the "
            "body's parameter and the body's result of one shape, found "
            "operand (f32[2], s32[]), condition ((f32[2], s32[])) -> pred[], "
            "body ((f32[2], s32[])) -> f32[2]");
  const std::vector<xla::ProgramShapeProto> two = {Sig({f}, i), Sig({i}, i)};
  EXPECT_EQ(D(InferConditionalShape(p, two, {&f, &i})), "s32[]");
  const std::vector<xla::ProgramShapeProto> three = {Sig({f}, i), Sig({i}, i),
                                                     Sig({i}, i)};
  EXPECT_EQ(D(InferConditionalShape(i, three, {&f, &i, &i})), "s32[]");
  EXPECT_EQ(D(InferConditionalShape(p, three, {&f, &i, &i})),
            "error: conditional: expected 2 branch computations for a pred "
            "index, found 3");
  const std::vector<xla::ProgramShapeProto> differ = {Sig({f}, i), Sig({i}, f)};
  EXPECT_EQ(D(InferConditionalShape(p, differ, {&f, &i})),
            "error: conditional: expected every branch to return s32[], found "
            "branch 1 returning f32[2]");
  EXPECT_EQ(D(InferConditionalShape(S(xla::F32), two, {&f, &i})),
            "error: conditional: expected a pred[] or s32[] branch index, "
            "found f32[]");
  EXPECT_EQ(D(InferFusionShape({&f, &i}, Sig({f, i}, f))), "f32[2]");
  EXPECT_EQ(D(InferFusionShape({&f}, Sig({f, i}, f))),
            "error: fusion: expected a fused computation of at most 1 "
            "parameter, found (f32[2], s32[]) -> f32[2]");
}

TEST(BatchNormTest, TrainingInferenceGrad) {
  const ShapeProto x = A(xla::F32, {2, 3, 4});
  const ShapeProto f3 = A(xla::F32, {3});
  EXPECT_EQ(D(InferBatchNormTrainingShape(x, f3, f3, 1)),
            "(f32[2,3,4], f32[3], f32[3])");
  EXPECT_EQ(D(InferBatchNormTrainingShape(x, f3, f3, 2)),
            "error: batch-norm-training: expected scale f32[4] (the features "
            "of f32[2,3,4]), found f32[3]");
  EXPECT_EQ(D(InferBatchNormTrainingShape(x, f3, f3, 3)),
            "error: batch-norm-training: expected a feature_index in [0, 3), "
            "found 3");
  EXPECT_EQ(D(InferBatchNormTrainingShape(A(xla::S32, {2, 3}), f3, f3, 1)),
            "error: batch-norm-training: expected a floating-point operand, "
            "found s32[2,3]");
  EXPECT_EQ(D(InferBatchNormInferenceShape(x, f3, f3, f3, f3, 1)),
            "f32[2,3,4]");
  EXPECT_EQ(D(InferBatchNormInferenceShape(x, f3, f3, A(xla::F32, {2}), f3, 1)),
            "error: batch-norm-inference: expected mean f32[3] (the features "
            "of f32[2,3,4]), found f32[2]");
  EXPECT_EQ(D(InferBatchNormGradShape(x, f3, f3, f3, x, 1)),
            "(f32[2,3,4], f32[3], f32[3])");
  EXPECT_EQ(D(InferBatchNormGradShape(x, f3, f3, f3, A(xla::F32, {2, 3}), 1)),
            "error: batch-norm-grad: expected a grad_output of the operand's "
            "shape f32[2,3,4], found f32[2,3]");
}

TEST(CollectiveTest, Shapes) {
  const ShapeProto x = A(xla::F32, {2, 3});
  const ShapeProto y = A(xla::S32, {4});
  EXPECT_EQ(D(InferAllReduceShape({&x})), "f32[2,3]");
  EXPECT_EQ(D(InferAllReduceShape({&x, &y})), "(f32[2,3], s32[4])");
  EXPECT_EQ(D(InferAllGatherShape({&x}, 0, 4)), "f32[8,3]");
  EXPECT_EQ(D(InferAllGatherShape({&x}, 2, 4)),
            "error: all-gather: expected a dimension in [0, 2) for f32[2,3], "
            "found 2");
  EXPECT_EQ(D(InferAllGatherStartShape({&x}, 1, 2)), "(f32[2,3], f32[2,6])");
  const ShapeProto big = A(xla::F32, {8, 3});
  EXPECT_EQ(D(InferReduceScatterShape({&big}, 0, 4)), "f32[2,3]");
  EXPECT_EQ(D(InferReduceScatterShape({&big}, 1, 2)),
            "error: reduce-scatter: expected dimension 1 of f32[8,3] divisible "
            "by the shard count 2");
  // split 8 by 4 into dimension 0, concatenated on 1: [2, 12].
  EXPECT_EQ(D(InferAllToAllShape(big, 0, 1, 4)), "f32[2,12]");
  EXPECT_EQ(D(InferAllToAllTupleShape({&x, &x})), "(f32[2,3], f32[2,3])");
  EXPECT_EQ(D(InferAllToAllTupleShape({&x, &y})),
            "error: all-to-all: expected operands of one shape, found f32[2,3] "
            "and s32[4]");
  EXPECT_EQ(D(InferCollectivePermuteShape({&x})), "f32[2,3]");
  EXPECT_EQ(D(InferCollectivePermuteStartShape({&x})),
            "(f32[2,3], f32[2,3], u32[], u32[])");
  EXPECT_EQ(D(InferAsyncCollectiveDoneShape(
                HloOpcode::kCollectivePermuteDone,
                *InferCollectivePermuteStartShape({&x}))),
            "f32[2,3]");
  EXPECT_EQ(D(InferAsyncCollectiveDoneShape(HloOpcode::kAllGatherDone, x)),
            "error: all-gather-done: expected a tuple operand of at least 2 "
            "elements, found f32[2,3]");
}

TEST(OtherOpsTest, RngAndTokens) {
  const ShapeProto z = S(xla::F32);
  EXPECT_EQ(D(InferRngShape(z, z, xla::RNG_NORMAL, A(xla::F32, {3}))), "f32[3]");
  EXPECT_EQ(D(InferRngShape(S(xla::S32), S(xla::S32), xla::RNG_NORMAL,
                            A(xla::S32, {3}))),
            "error: rng: expected floating-point operands for RNG_NORMAL, "
            "found s32[]");
  EXPECT_EQ(D(InferRngShape(z, A(xla::F32, {1}), xla::RNG_UNIFORM,
                            A(xla::F32, {3}))),
            "error: rng: expected two scalar operands, found f32[] and f32[1]");
  EXPECT_EQ(D(InferRngBitGeneratorShape(A(xla::U64, {2}), A(xla::U32, {4, 4}))),
            "(u64[2], u32[4,4])");
  EXPECT_EQ(DescribeShape(InferRngGetAndUpdateStateShape()), "u64[2]");
  EXPECT_EQ(DescribeShape(InferReplicaIdShape()), "u32[]");
  EXPECT_EQ(D(InferAddDependencyShape(z, MakeTokenShape())), "f32[]");
  EXPECT_EQ(D(InferAddDependencyShape(z, z)),
            "error: add-dependency: expected a token operand 1, found f32[]");
  EXPECT_EQ(D(InferSendShape(A(xla::F32, {2}), MakeTokenShape())),
            "(f32[2], u32[], token[])");
  EXPECT_EQ(D(InferRecvDoneShape(*InferRecvShape(A(xla::F32, {2}),
                                                 MakeTokenShape()))),
            "(f32[2], token[])");
  EXPECT_EQ(D(InferInfeedShape(A(xla::F32, {2}), MakeTokenShape())),
            "(f32[2], token[])");
  EXPECT_EQ(D(InferOutfeedShape(A(xla::F32, {2}), MakeTokenShape(),
                                A(xla::F32, {3}))),
            "error: outfeed: expected outfeed_shape to be operand 0's shape "
            "f32[2], found f32[3]");
  EXPECT_EQ(DescribeShape(InferCopyStartShape(A(xla::F32, {2}))),
            "(f32[2], f32[2], u32[])");
  EXPECT_EQ(D(InferCopyDoneShape(InferCopyStartShape(A(xla::F32, {2})))),
            "f32[2]");
  EXPECT_EQ(D(InferGetDimensionSizeShape(A(xla::F32, {2, 7}), 1)), "s32[]");
  EXPECT_EQ(D(InferSetDimensionSizeShape(A(xla::F32, {2, 7}), S(xla::S32), 1)),
            "f32[2,<=7]");
  const xla::ProgramShapeProto wrapped =
      Sig({A(xla::F32, {2})}, A(xla::F32, {2}));
  const ShapeProto a2 = A(xla::F32, {2});
  EXPECT_EQ(D(InferAsyncStartShape({&a2}, wrapped, {})),
            "((f32[2]), f32[2])");
  EXPECT_EQ(D(InferAsyncDoneShape(*InferAsyncStartShape({&a2}, wrapped, {}),
                                  wrapped)),
            "f32[2]");
}

TEST(OtherOpsTest, LinearAlgebraAndFft) {
  EXPECT_EQ(D(InferCholeskyShape(A(xla::F32, {2, 3, 3}))), "f32[2,3,3]");
  EXPECT_EQ(D(InferCholeskyShape(A(xla::F32, {3, 4}))),
            "error: cholesky: expected square minor dimensions of rank >= 2, "
            "found f32[3,4]");
  xla::TriangularSolveOptions o;
  o.set_left_side(true);
  o.set_transpose_a(xla::TriangularSolveOptions::NO_TRANSPOSE);
  EXPECT_EQ(D(InferTriangularSolveShape(A(xla::F32, {3, 3}), A(xla::F32, {3, 5}),
                                        o)),
            "f32[3,5]");
  EXPECT_EQ(D(InferTriangularSolveShape(A(xla::F32, {3, 3}), A(xla::F32, {5, 3}),
                                        o)),
            "error: triangular-solve: expected a and b to share their row "
            "dimension, found f32[3,3] and f32[5,3]");
  o.set_transpose_a(xla::TriangularSolveOptions::TRANSPOSE_INVALID);
  EXPECT_EQ(D(InferTriangularSolveShape(A(xla::F32, {3, 3}), A(xla::F32, {3, 5}),
                                        o)),
            "error: triangular-solve: expected transpose_a NO_TRANSPOSE, "
            "TRANSPOSE or ADJOINT, found 0");
  // RFFT of length 8 keeps 8 / 2 + 1 = 5 complex values.
  EXPECT_EQ(D(InferFftShape(A(xla::F32, {4, 8}), xla::RFFT, {8})), "c64[4,5]");
  EXPECT_EQ(D(InferFftShape(A(xla::C64, {4, 5}), xla::IRFFT, {8})), "f32[4,8]");
  EXPECT_EQ(D(InferFftShape(A(xla::C128, {4, 8}), xla::FFT, {4, 8})),
            "c128[4,8]");
  EXPECT_EQ(D(InferFftShape(A(xla::F32, {4, 8}), xla::FFT, {8})),
            "error: fft: expected a complex operand, found f32[4,8]");
  EXPECT_EQ(D(InferFftShape(A(xla::F32, {4, 8}), xla::RFFT, {6})),
            "error: fft: expected minor dimensions {6} (fft_length), found "
            "f32[4,8]");
  EXPECT_EQ(D(InferFftShape(A(xla::C64, {8}), xla::FFT, {1, 2, 3, 4})),
            "error: fft: expected an fft_length of 1 to 3 entries, found "
            "{1,2,3,4}");
}

TEST(ConstantTest, LiteralMustHoldItsElements) {
  absl::StatusOr<xla::LiteralProto> l = MakeLiteral(xla::F32, {2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(D(InferConstantShape(*l)), "f32[2,2]");
  l->add_f32s(5);
  EXPECT_EQ(D(InferConstantShape(*l)),
            "error: constant: expected 4 elements of literal data for f32[2,2], "
            "found 5");
  // bf16 data is two bytes an element.
  absl::StatusOr<xla::LiteralProto> h = MakeLiteral(xla::BF16, {3}, {1, 2, 3});
  ASSERT_TRUE(h.ok());
  h->mutable_bf16s()->pop_back();
  EXPECT_EQ(D(InferConstantShape(*h)),
            "error: constant: expected 3 elements of literal data for bf16[3], "
            "found 2 and a fraction");
  // Only the shape: the form a text dump's `{...}` leaves.
  xla::LiteralProto elided;
  *elided.mutable_shape() = A(xla::F32, {100});
  EXPECT_EQ(D(InferConstantShape(elided)), "f32[100]");
  xla::LiteralProto no_layout;
  *no_layout.mutable_shape() = A(xla::F32, {1});
  no_layout.mutable_shape()->clear_layout();
  no_layout.add_f32s(1);
  EXPECT_EQ(D(InferConstantShape(no_layout)),
            "error: constant: expected a literal shape with a layout (XLA: "
            "\"LiteralProto has no layout\"), found f32[1]");
}

}  // namespace
}  // namespace decomposed::hlo
