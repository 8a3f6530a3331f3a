// InferInstructionShape and InferConstantShape (hlo/shape_inference.h): the
// rule each opcode's instruction is checked with, fed from the instruction's
// operands, attributes and called computations.
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/hlo/text.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

absl::Status Fail(HloOpcode op, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(HloOpcodeString(op)), ": ", what));
}

template <class R>
absl::Span<const int64_t> SpanOf(const R& repeated) {
  return absl::Span<const int64_t>(repeated.data(), repeated.size());
}

// The number of values a literal field holds for `type` (bytes fields:
// their size in bytes, complex fields: two values per element).
int64_t LiteralValues(const xla::LiteralProto& l, int type) {
  switch (static_cast<PrimitiveType>(type)) {
    case PrimitiveType::kPred: return l.preds_size();
    case PrimitiveType::kS32: return l.s32s_size();
    case PrimitiveType::kS64: return l.s64s_size();
    case PrimitiveType::kU32: return l.u32s_size();
    case PrimitiveType::kU64: return l.u64s_size();
    case PrimitiveType::kF32: return l.f32s_size();
    case PrimitiveType::kF64: return l.f64s_size();
    case PrimitiveType::kC64: return l.c64s_size();
    case PrimitiveType::kC128: return l.c128s_size();
    case PrimitiveType::kS8: return static_cast<int64_t>(l.s8s().size());
    case PrimitiveType::kU8: return static_cast<int64_t>(l.u8s().size());
    case PrimitiveType::kS16: return static_cast<int64_t>(l.s16s().size());
    case PrimitiveType::kU16: return static_cast<int64_t>(l.u16s().size());
    case PrimitiveType::kF16: return static_cast<int64_t>(l.f16s().size());
    case PrimitiveType::kBF16: return static_cast<int64_t>(l.bf16s().size());
    case PrimitiveType::kF8E5M2: return static_cast<int64_t>(l.f8e5m2s().size());
    case PrimitiveType::kF8E4M3FN:
      return static_cast<int64_t>(l.f8e4m3fns().size());
    case PrimitiveType::kF8E4M3B11FNUZ:
      return static_cast<int64_t>(l.f8e4m3b11fnuzs().size());
    case PrimitiveType::kF8E5M2FNUZ:
      return static_cast<int64_t>(l.f8e5m2fnuzs().size());
    case PrimitiveType::kF8E4M3FNUZ:
      return static_cast<int64_t>(l.f8e4m3fnuzs().size());
    case PrimitiveType::kF8E4M3: return static_cast<int64_t>(l.f8e4m3s().size());
    case PrimitiveType::kF8E3M4: return static_cast<int64_t>(l.f8e3m4s().size());
    case PrimitiveType::kF8E8M0FNU:
      return static_cast<int64_t>(l.f8e8m0fnus().size());
    case PrimitiveType::kF4E2M1FN:
      return static_cast<int64_t>(l.f4e2m1fns().size());
    case PrimitiveType::kF6E3M2FN:
      return static_cast<int64_t>(l.f6e3m2fns().size());
    case PrimitiveType::kF6E2M3FN:
      return static_cast<int64_t>(l.f6e2m3fns().size());
    case PrimitiveType::kS4: return static_cast<int64_t>(l.s4s().size());
    case PrimitiveType::kU4: return static_cast<int64_t>(l.u4s().size());
    case PrimitiveType::kS2: return static_cast<int64_t>(l.s2s().size());
    case PrimitiveType::kU2: return static_cast<int64_t>(l.u2s().size());
    case PrimitiveType::kS1: return static_cast<int64_t>(l.s1s().size());
    case PrimitiveType::kU1: return static_cast<int64_t>(l.u1s().size());
    default: return 0;
  }
}

// Values per element in LiteralValues' unit.
int64_t ValuesPerElement(int type) {
  const PrimitiveTypeInfo* info = FindPrimitiveType(type);
  if (info == nullptr) return 1;
  switch (info->encoding) {
    case DataEncoding::kBytes: return info->element_bytes;
    case DataEncoding::kFixed32: return info->element_bytes / 4;
    case DataEncoding::kFixed64: return info->element_bytes / 8;
    default: return 1;
  }
}

absl::Status CheckLiteral(const xla::LiteralProto& l, int depth) {
  const HloOpcode op = HloOpcode::kConstant;
  const ShapeProto& s = l.shape();
  if (IsTupleShape(s)) {
    if (depth > limits::kMaxTupleDepth) {
      return Fail(op, "expected a shallower tuple literal, found deeper nesting");
    }
    if (l.tuple_literals_size() != s.tuple_shapes_size()) {
      return Fail(op, absl::StrCat("expected ", s.tuple_shapes_size(),
                                   " tuple elements in the literal, found ",
                                   l.tuple_literals_size()));
    }
    for (int i = 0; i < l.tuple_literals_size(); ++i) {
      if (!ShapesCompatible(l.tuple_literals(i).shape(), s.tuple_shapes(i))) {
        return Fail(op, absl::StrCat("expected literal tuple element ", i,
                                     " of shape ", DescribeShape(s.tuple_shapes(i)),
                                     ", found ",
                                     DescribeShape(l.tuple_literals(i).shape())));
      }
      if (absl::Status st = CheckLiteral(l.tuple_literals(i), depth + 1);
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }
  if (!IsArrayShape(s)) return absl::OkStatus();  // token: no data
  if (IsElidedLiteral(l)) return absl::OkStatus();
  if (!s.has_layout()) {
    return Fail(op, absl::StrCat("expected a literal shape with a layout (XLA: "
                                 "\"LiteralProto has no layout\"), found ",
                                 DescribeShape(s)));
  }
  absl::StatusOr<int64_t> n = ElementCount(s);
  if (!n.ok()) return Fail(op, n.status().message());
  const int64_t per = ValuesPerElement(s.element_type());
  const int64_t have = LiteralValues(l, s.element_type());
  int64_t want = 0;
  if (__builtin_mul_overflow(*n, per, &want) || have != want) {
    return Fail(op, absl::StrCat("expected ", *n, " elements of literal data "
                                 "for ",
                                 DescribeShape(s), ", found ", have / per,
                                 have % per ? " and a fraction" : ""));
  }
  return absl::OkStatus();
}

std::vector<const ShapeProto*> OperandShapes(const HloInstruction& instr,
                                             int64_t from = 0) {
  std::vector<const ShapeProto*> out;
  for (int64_t i = from; i < instr.operand_count(); ++i) {
    out.push_back(&instr.operand(i)->shape());
  }
  return out;
}

absl::Status NeedOperands(const HloInstruction& instr, int64_t n) {
  if (instr.operand_count() == n) return absl::OkStatus();
  return Fail(instr.opcode(), absl::StrCat("expected ", Counted(n, "operand"),
                                           ", found ", instr.operand_count()));
}

absl::Status NeedAtLeast(const HloInstruction& instr, int64_t n) {
  if (instr.operand_count() >= n) return absl::OkStatus();
  return Fail(instr.opcode(),
              absl::StrCat("expected at least ", Counted(n, "operand"),
                           ", found ", instr.operand_count()));
}

absl::Status NeedCalled(const HloInstruction& instr, size_t n) {
  if (instr.called_computations().size() == n) return absl::OkStatus();
  return Fail(instr.opcode(),
              absl::StrCat("expected ", Counted(n, "called computation"),
                           ", found ", instr.called_computations().size()));
}

absl::StatusOr<int64_t> OneDimension(const HloInstruction& instr) {
  if (instr.dimensions().size() != 1) {
    return Fail(instr.opcode(),
                absl::StrCat("expected 1 dimension, found ",
                             instr.dimensions().size()));
  }
  return instr.dimensions()[0];
}

absl::StatusOr<xla::ProgramShapeProto> Called(const HloInstruction& instr,
                                              size_t i) {
  absl::StatusOr<xla::ProgramShapeProto> p =
      ComputationProgramShape(*instr.called_computations()[i]);
  if (!p.ok()) return Fail(instr.opcode(), p.status().message());
  return p;
}

// The elements of the instruction's own tuple shape from index `from` on.
std::vector<ShapeProto> OwnElementsFrom(const HloInstruction& instr, int from) {
  std::vector<ShapeProto> out;
  const ShapeProto& s = instr.shape();
  if (IsTupleShape(s)) {
    for (int i = from; i < s.tuple_shapes_size(); ++i) {
      out.push_back(s.tuple_shapes(i));
    }
  }
  return out;
}

// ceil(a / b), with 1 where b is 0 (the shapes then decide).
int64_t ShardRatio(int64_t a, int64_t b) {
  if (b <= 0 || a <= 0) return 1;
  return a / b + (a % b != 0);
}

using Result = absl::StatusOr<std::optional<ShapeProto>>;

Result Wrap(absl::StatusOr<ShapeProto> s) {
  if (!s.ok()) return s.status();
  return std::optional<ShapeProto>(*std::move(s));
}

// A rule shared by two opcodes names the instruction's own opcode.
Result Reprefix(HloOpcode op, absl::StatusOr<ShapeProto> s) {
  if (s.ok()) return std::optional<ShapeProto>(*std::move(s));
  absl::string_view m = s.status().message();
  const size_t colon = m.find(": ");
  return Fail(op, colon == absl::string_view::npos ? m : m.substr(colon + 2));
}

}  // namespace

absl::StatusOr<ShapeProto> InferConstantShape(const xla::LiteralProto& literal) {
  if (absl::Status s = CheckShapeWellFormed(literal.shape()); !s.ok()) {
    return Fail(HloOpcode::kConstant,
                absl::StrCat("literal shape: ", s.message()));
  }
  if (absl::Status s = CheckLiteral(literal, 0); !s.ok()) return s;
  return literal.shape();
}

Result InferInstructionShape(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  const xla::HloInstructionProto& p = instr.proto();
  if (std::optional<int> arity = HloOpcodeArity(op);
      arity.has_value() && op != HloOpcode::kDot) {
    if (absl::Status s = NeedOperands(instr, *arity); !s.ok()) return s;
  }
  auto operand = [&](int64_t i) -> const ShapeProto& {
    return instr.operand(i)->shape();
  };
  const ShapeProto& own = instr.shape();
  if (IsElementwiseUnary(op) && op != HloOpcode::kConvert &&
      op != HloOpcode::kBitcastConvert && op != HloOpcode::kReducePrecision) {
    return Wrap(InferUnaryShape(op, operand(0)));
  }
  if (IsElementwiseBinary(op) && op != HloOpcode::kStochasticConvert) {
    return Wrap(InferBinaryShape(op, operand(0), operand(1)));
  }
  switch (op) {
    case HloOpcode::kConvert:
      return Wrap(InferConvertShape(operand(0), own.element_type()));
    case HloOpcode::kBitcastConvert:
      return Wrap(InferBitcastConvertShape(operand(0), own.element_type()));
    case HloOpcode::kStochasticConvert:
      return Wrap(InferStochasticConvertShape(operand(0), operand(1),
                                              own.element_type()));
    case HloOpcode::kReducePrecision:
      return Wrap(InferReducePrecisionShape(operand(0), p.exponent_bits(),
                                            p.mantissa_bits()));
    case HloOpcode::kSelect:
      return Wrap(InferSelectShape(operand(0), operand(1), operand(2)));
    case HloOpcode::kClamp:
      return Wrap(InferClampShape(operand(0), operand(1), operand(2)));
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
      return Wrap(InferUnaryShape(op, operand(0)));
    case HloOpcode::kConstant:
      if (!p.has_literal()) {
        return Fail(op, "expected a literal, found none");
      }
      return Wrap(InferConstantShape(p.literal()));
    case HloOpcode::kIota: {
      if (p.dimensions_size() != 1) {
        return Fail(op, absl::StrCat("expected 1 dimension, found ",
                                     p.dimensions_size()));
      }
      return Wrap(InferIotaShape(own, p.dimensions(0)));
    }
    case HloOpcode::kBroadcast:
      if (!IsArrayShape(own)) {
        return Fail(op, absl::StrCat("expected an array result, found ",
                                     DescribeShape(own)));
      }
      if (instr.operand(0)->shape().element_type() != own.element_type() &&
          IsArrayShape(operand(0))) {
        return Fail(op, absl::StrCat("expected a result of the operand's "
                                     "element type ",
                                     ElementTypeName(operand(0).element_type()),
                                     ", found ", DescribeShape(own)));
      }
      return Wrap(InferBroadcastShape(operand(0), SpanOf(own.dimensions()),
                                      instr.dimensions()));
    case HloOpcode::kReshape:
      if (!IsArrayShape(own)) {
        return Fail(op, absl::StrCat("expected an array result, found ",
                                     DescribeShape(own)));
      }
      return Wrap(InferReshapeShape(operand(0), SpanOf(own.dimensions())));
    case HloOpcode::kDynamicReshape: {
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      if (!IsArrayShape(own)) {
        return Fail(op, absl::StrCat("expected an array result, found ",
                                     DescribeShape(own)));
      }
      if (instr.operand_count() != own.dimensions_size() + 1) {
        return Fail(op, absl::StrCat("expected one size operand per result "
                                     "dimension (",
                                     own.dimensions_size(), "), found ",
                                     instr.operand_count() - 1));
      }
      for (int64_t i = 1; i < instr.operand_count(); ++i) {
        if (!ShapesCompatible(operand(i), MakeScalarShape(xla::S32))) {
          return Fail(op, absl::StrCat("expected s32[] size operands, found ",
                                       DescribeShape(operand(i))));
        }
      }
      absl::StatusOr<ShapeProto> r =
          InferReshapeShape(operand(0), SpanOf(own.dimensions()));
      if (!r.ok()) return Fail(op, r.status().message());
      return std::optional<ShapeProto>(own);
    }
    case HloOpcode::kTranspose:
      return Wrap(InferTransposeShape(operand(0), instr.dimensions()));
    case HloOpcode::kSlice: {
      std::vector<int64_t> starts, limits, strides;
      for (const auto& d : p.slice_dimensions()) {
        starts.push_back(d.start());
        limits.push_back(d.limit());
        strides.push_back(d.stride());
      }
      return Wrap(InferSliceShape(operand(0), starts, limits, strides));
    }
    case HloOpcode::kDynamicSlice: {
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      return Wrap(InferDynamicSliceShape(operand(0), OperandShapes(instr, 1),
                                         SpanOf(p.dynamic_slice_sizes())));
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (absl::Status s = NeedAtLeast(instr, 2); !s.ok()) return s;
      return Wrap(InferDynamicUpdateSliceShape(operand(0), operand(1),
                                               OperandShapes(instr, 2)));
    }
    case HloOpcode::kConcatenate: {
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      return Wrap(InferConcatenateShape(OperandShapes(instr), *d));
    }
    case HloOpcode::kPad:
      if (!p.has_padding_config()) {
        return Fail(op, "expected a padding_config, found none");
      }
      return Wrap(InferPadShape(operand(0), operand(1), p.padding_config()));
    case HloOpcode::kReverse:
      return Wrap(InferReverseShape(operand(0), instr.dimensions()));
    case HloOpcode::kGather:
      if (!p.has_gather_dimension_numbers()) {
        return Fail(op, "expected gather_dimension_numbers, found none");
      }
      return Wrap(InferGatherShape(operand(0), operand(1),
                                   p.gather_dimension_numbers(),
                                   SpanOf(p.gather_slice_sizes())));
    case HloOpcode::kScatter: {
      if (!p.has_scatter_dimension_numbers()) {
        return Fail(op, "expected scatter_dimension_numbers, found none");
      }
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferScatterShape(OperandShapes(instr), *c,
                                    p.scatter_dimension_numbers()));
    }
    case HloOpcode::kGetDimensionSize: {
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      return Wrap(InferGetDimensionSizeShape(operand(0), *d));
    }
    case HloOpcode::kSetDimensionSize: {
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      return Wrap(InferSetDimensionSizeShape(operand(0), operand(1), *d));
    }
    case HloOpcode::kDot: {
      if (!p.has_dot_dimension_numbers()) {
        return Fail(op, "expected dot_dimension_numbers, found none");
      }
      if (p.dot_sparsity_size() > 0) {
        // Sparse dots compress an operand; no rule here.
        return std::optional<ShapeProto>();
      }
      if (absl::Status s = NeedOperands(instr, 2); !s.ok()) return s;
      return Wrap(InferDotShape(operand(0), operand(1),
                                p.dot_dimension_numbers(), own.element_type()));
    }
    case HloOpcode::kConvolution:
      if (absl::Status s = NeedOperands(instr, 2); !s.ok()) return s;
      if (!p.has_window() || !p.has_convolution_dimension_numbers()) {
        return Fail(op, "expected a window and convolution_dimension_numbers, "
                        "found none");
      }
      return Wrap(InferConvolutionShape(
          operand(0), operand(1), instr.feature_group_count(),
          instr.batch_group_count(), p.window(),
          p.convolution_dimension_numbers(), own.element_type()));
    case HloOpcode::kReduce: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferReduceShape(OperandShapes(instr), instr.dimensions(), *c));
    }
    case HloOpcode::kReduceWindow: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferReduceWindowShape(OperandShapes(instr), p.window(), *c));
    }
    case HloOpcode::kSelectAndScatter: {
      if (absl::Status s = NeedCalled(instr, 2); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> select = Called(instr, 0);
      if (!select.ok()) return select.status();
      absl::StatusOr<xla::ProgramShapeProto> scatter = Called(instr, 1);
      if (!scatter.ok()) return scatter.status();
      return Wrap(InferSelectAndScatterShape(operand(0), *select, p.window(),
                                             operand(1), operand(2), *scatter));
    }
    case HloOpcode::kSort: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferSortShape(OperandShapes(instr), *d, *c));
    }
    case HloOpcode::kTopK:
      return Wrap(InferTopKShape(operand(0), p.k()));
    case HloOpcode::kMap: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      // XLA maps over every dimension whatever `dimensions` holds.
      int64_t rank = 0;
      for (int64_t i = 0; i < instr.operand_count(); ++i) {
        rank = std::max<int64_t>(rank, operand(i).dimensions_size());
      }
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
      return Wrap(InferMapShape(OperandShapes(instr), *c, dims));
    }
    case HloOpcode::kTuple:
      return Wrap(InferTupleShape(OperandShapes(instr)));
    case HloOpcode::kGetTupleElement:
      return Wrap(InferGetTupleElementShape(operand(0), p.tuple_index()));
    case HloOpcode::kCall: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferCallShape(OperandShapes(instr), *c));
    }
    case HloOpcode::kWhile: {
      if (absl::Status s = NeedCalled(instr, 2); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> body = Called(instr, 0);
      if (!body.ok()) return body.status();
      absl::StatusOr<xla::ProgramShapeProto> cond = Called(instr, 1);
      if (!cond.ok()) return cond.status();
      return Wrap(InferWhileShape(*cond, *body, operand(0)));
    }
    case HloOpcode::kConditional: {
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      std::vector<xla::ProgramShapeProto> branches;
      for (size_t i = 0; i < instr.called_computations().size(); ++i) {
        absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, i);
        if (!c.ok()) return c.status();
        branches.push_back(*std::move(c));
      }
      return Wrap(InferConditionalShape(operand(0), branches,
                                        OperandShapes(instr, 1)));
    }
    case HloOpcode::kFusion: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferFusionShape(OperandShapes(instr), *c));
    }
    case HloOpcode::kBatchNormTraining:
      return Wrap(InferBatchNormTrainingShape(operand(0), operand(1), operand(2),
                                              p.feature_index()));
    case HloOpcode::kBatchNormInference:
      return Wrap(InferBatchNormInferenceShape(operand(0), operand(1),
                                               operand(2), operand(3),
                                               operand(4), p.feature_index()));
    case HloOpcode::kBatchNormGrad:
      return Wrap(InferBatchNormGradShape(operand(0), operand(1), operand(2),
                                          operand(3), operand(4),
                                          p.feature_index()));
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: {
      return Reprefix(op, InferAllReduceShape(OperandShapes(instr)));
    }
    case HloOpcode::kAllReduceDone:
      return std::optional<ShapeProto>(operand(0));
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      // The shard count is what the result says it is, as XLA reads it.
      const ShapeProto* out = &own;
      if (op == HloOpcode::kAllGatherStart && IsTupleShape(own) &&
          own.tuple_shapes_size() >= 2) {
        out = &own.tuple_shapes(1);
      }
      if (instr.operand_count() > 1 && IsTupleShape(*out) &&
          out->tuple_shapes_size() > 0) {
        out = &out->tuple_shapes(0);
      }
      int64_t shards = 1;
      if (*d >= 0 && *d < out->dimensions_size() &&
          *d < operand(0).dimensions_size()) {
        shards = ShardRatio(out->dimensions(*d), operand(0).dimensions(*d));
      }
      return Wrap(op == HloOpcode::kAllGather
                      ? InferAllGatherShape(OperandShapes(instr), *d, shards)
                      : InferAllGatherStartShape(OperandShapes(instr), *d,
                                                 shards));
    }
    case HloOpcode::kReduceScatter: {
      absl::StatusOr<int64_t> d = OneDimension(instr);
      if (!d.ok()) return d.status();
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      const ShapeProto* out = &own;
      if (instr.operand_count() > 1 && IsTupleShape(own) &&
          own.tuple_shapes_size() > 0) {
        out = &own.tuple_shapes(0);
      }
      int64_t shards = 1;
      if (*d >= 0 && *d < out->dimensions_size() &&
          *d < operand(0).dimensions_size()) {
        shards = ShardRatio(operand(0).dimensions(*d), out->dimensions(*d));
      }
      return Wrap(InferReduceScatterShape(OperandShapes(instr), *d, shards));
    }
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      return Wrap(InferAsyncCollectiveDoneShape(op, operand(0)));
    case HloOpcode::kAllToAll: {
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      if (p.dimensions_size() > 1) {
        return Fail(op, absl::StrCat("expected at most 1 dimension (the split "
                                     "dimension), found ",
                                     p.dimensions_size()));
      }
      if (p.dimensions_size() == 1) {
        if (absl::Status s = NeedOperands(instr, 1); !s.ok()) return s;
        // XLA splits and concatenates along the one dimension: the shape
        // is the operand's whatever the group size.
        return Wrap(InferAllToAllShape(operand(0), p.dimensions(0),
                                       p.dimensions(0), 1));
      }
      return Wrap(InferAllToAllTupleShape(OperandShapes(instr)));
    }
    case HloOpcode::kCollectivePermute:
      return Wrap(InferCollectivePermuteShape(OperandShapes(instr)));
    case HloOpcode::kCollectivePermuteStart:
      return Wrap(InferCollectivePermuteStartShape(OperandShapes(instr),
                                                   OwnElementsFrom(instr, 2)));
    case HloOpcode::kCollectiveBroadcast: {
      if (absl::Status s = NeedAtLeast(instr, 1); !s.ok()) return s;
      std::vector<const ShapeProto*> shapes = OperandShapes(instr);
      if (shapes.size() == 1) return std::optional<ShapeProto>(*shapes[0]);
      return std::optional<ShapeProto>(MakeTupleShape(shapes));
    }
    case HloOpcode::kRng:
      if (absl::Status s = NeedOperands(instr, 2); !s.ok()) return s;
      return Wrap(InferRngShape(operand(0), operand(1), p.distribution(), own));
    case HloOpcode::kRngBitGenerator:
      // XLA checks a tuple result only.
      if (!IsTupleShape(own)) return std::optional<ShapeProto>();
      if (own.tuple_shapes_size() != 2) {
        return Fail(op, absl::StrCat("expected a (state, output) result, found ",
                                     DescribeShape(own)));
      }
      return Wrap(InferRngBitGeneratorShape(operand(0), own.tuple_shapes(1)));
    case HloOpcode::kRngGetAndUpdateState:
      return std::optional<ShapeProto>(InferRngGetAndUpdateStateShape());
    case HloOpcode::kAfterAll:
      return std::optional<ShapeProto>(MakeTokenShape());
    case HloOpcode::kAddDependency:
      return Wrap(InferAddDependencyShape(operand(0), operand(1)));
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return std::optional<ShapeProto>(InferReplicaIdShape());
    case HloOpcode::kCholesky:
      return Wrap(InferCholeskyShape(operand(0)));
    case HloOpcode::kTriangularSolve:
      return Wrap(InferTriangularSolveShape(operand(0), operand(1),
                                            p.triangular_solve_options()));
    case HloOpcode::kFft:
      return Wrap(InferFftShape(operand(0), p.fft_type(), SpanOf(p.fft_length())));
    case HloOpcode::kCopyStart:
      return std::optional<ShapeProto>(InferCopyStartShape(operand(0)));
    case HloOpcode::kCopyDone:
      return Wrap(InferCopyDoneShape(operand(0)));
    case HloOpcode::kSend:
      return Wrap(InferSendShape(operand(0), operand(1)));
    case HloOpcode::kSendDone:
      return std::optional<ShapeProto>(MakeTokenShape());
    case HloOpcode::kRecv:
      if (!IsTupleShape(own) || own.tuple_shapes_size() < 1) {
        return Fail(op, absl::StrCat("expected a (data, u32[], token) result, "
                                     "found ",
                                     DescribeShape(own)));
      }
      return Wrap(InferRecvShape(own.tuple_shapes(0), operand(0)));
    case HloOpcode::kRecvDone:
      return Wrap(InferRecvDoneShape(operand(0)));
    case HloOpcode::kInfeed:
      if (!IsTupleShape(own) || own.tuple_shapes_size() != 2) {
        return Fail(op, absl::StrCat("expected a (data, token) result, found ",
                                     DescribeShape(own)));
      }
      return Wrap(InferInfeedShape(own.tuple_shapes(0), operand(0)));
    case HloOpcode::kOutfeed:
      return Wrap(InferOutfeedShape(operand(0), operand(1), p.outfeed_shape()));
    case HloOpcode::kAsyncStart: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferAsyncStartShape(OperandShapes(instr), *c,
                                       OwnElementsFrom(instr, 2)));
    }
    case HloOpcode::kAsyncUpdate: {
      if (absl::Status s = NeedOperands(instr, 1); !s.ok()) return s;
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      Result done = Reprefix(op, InferAsyncDoneShape(operand(0), *c));
      if (!done.ok()) return done.status();
      return std::optional<ShapeProto>(operand(0));
    }
    case HloOpcode::kAsyncDone: {
      if (absl::Status s = NeedCalled(instr, 1); !s.ok()) return s;
      absl::StatusOr<xla::ProgramShapeProto> c = Called(instr, 0);
      if (!c.ok()) return c.status();
      return Wrap(InferAsyncDoneShape(operand(0), *c));
    }
    default:
      // custom-call, parameter, bitcast, kUnknown and the opcodes with no
      // rule here.
      return std::optional<ShapeProto>();
  }
}

}  // namespace decomposed::hlo
