// XLA's shape rules (hlo/shape_inference.h): element types, shape helpers
// and the per-opcode rules. The dispatcher over an HloInstruction is in
// shape_inference_instruction.cc.
#include "decomposed/hlo/shape_inference.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;
using PT = ::decomposed::PrimitiveType;

constexpr int kTuple = static_cast<int>(PT::kTuple);
constexpr int kToken = static_cast<int>(PT::kToken);
constexpr int kOpaque = static_cast<int>(PT::kOpaque);
constexpr int kBuffer = static_cast<int>(PT::kBuffer);
constexpr int kPred = static_cast<int>(PT::kPred);
constexpr int kS32 = static_cast<int>(PT::kS32);
constexpr int kU32 = static_cast<int>(PT::kU32);
constexpr int kU64 = static_cast<int>(PT::kU64);
constexpr int kF32 = static_cast<int>(PT::kF32);
constexpr int kF64 = static_cast<int>(PT::kF64);
constexpr int kC64 = static_cast<int>(PT::kC64);
constexpr int kC128 = static_cast<int>(PT::kC128);

// (exponent bits, significand bits) of a floating type, for choosing the
// more precise of two (XLA's HigherPrecisionType: range first, then
// precision).
std::pair<int, int> FloatBits(int t) {
  switch (static_cast<PT>(t)) {
    case PT::kF64: return {11, 52};
    case PT::kF32: return {8, 23};
    case PT::kBF16: return {8, 7};
    case PT::kF16: return {5, 10};
    case PT::kF8E5M2: case PT::kF8E5M2FNUZ: return {5, 2};
    case PT::kF8E4M3FN: case PT::kF8E4M3B11FNUZ: case PT::kF8E4M3FNUZ:
    case PT::kF8E4M3: return {4, 3};
    case PT::kF8E3M4: return {3, 4};
    case PT::kF8E8M0FNU: return {8, 0};
    case PT::kF6E3M2FN: return {3, 2};
    case PT::kF6E2M3FN: return {2, 3};
    case PT::kF4E2M1FN: return {2, 1};
    default: return {-1, -1};
  }
}

int HigherPrecisionType(int a, int b) {
  if (a == b || !IsFloatingType(a) || !IsFloatingType(b)) return a;
  return FloatBits(b) > FloatBits(a) ? b : a;
}

bool SameTypeIgnoringFp(int a, int b) {
  return a == b || (IsFloatingType(a) && IsFloatingType(b));
}

std::string Op(HloOpcode op) { return std::string(HloOpcodeString(op)); }

std::string S(const ShapeProto& s) { return DescribeShape(s); }

std::string List(absl::Span<const int64_t> v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

absl::Span<const int64_t> Dims(const ShapeProto& s) {
  return absl::Span<const int64_t>(s.dimensions().data(),
                                   s.dimensions_size());
}

int64_t Rank(const ShapeProto& s) { return s.dimensions_size(); }

template <class R>
absl::Span<const int64_t> SpanOf(const R& repeated) {
  return absl::Span<const int64_t>(repeated.data(), repeated.size());
}

// "<opcode>: <what>".
absl::Status Fail(HloOpcode op, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(Op(op), ": ", what));
}

absl::Status ExpectArray(HloOpcode op, const ShapeProto& s,
                         std::string_view role) {
  if (IsArrayShape(s)) return absl::OkStatus();
  return Fail(op, absl::StrCat("expected an array ", Sv(role), ", found ",
                               S(s)));
}

bool InRange(int64_t v, int64_t n) { return v >= 0 && v < n; }

bool AddOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
bool MulOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

absl::Status Overflow(HloOpcode op, std::string_view what) {
  return Fail(op, absl::StrCat("expected ", Sv(what),
                               " that fits in 64 bits, found an overflow"));
}

bool AllUnique(absl::Span<const int64_t> v) {
  absl::flat_hash_set<int64_t> seen;
  for (int64_t x : v) {
    if (!seen.insert(x).second) return false;
  }
  return true;
}

bool IsSortedStrictly(absl::Span<const int64_t> v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i - 1] >= v[i]) return false;
  }
  return true;
}

bool Contains(absl::Span<const int64_t> v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The operand's shape with another element type (its layout kept).
ShapeProto WithType(const ShapeProto& s, int type) {
  ShapeProto out = s;
  out.set_element_type(static_cast<xla::PrimitiveType>(type));
  return out;
}

ShapeProto Scalar(int type) { return MakeScalarShape(type); }

}  // namespace

// --- Element types --------------------------------------------------------------

bool IsFloatingType(int t) { return FloatBits(t).first >= 0; }
bool IsComplexType(int t) { return t == kC64 || t == kC128; }
bool IsSignedIntegralType(int t) {
  switch (static_cast<PT>(t)) {
    case PT::kS1: case PT::kS2: case PT::kS4: case PT::kS8: case PT::kS16:
    case PT::kS32: case PT::kS64:
      return true;
    default:
      return false;
  }
}
bool IsUnsignedIntegralType(int t) {
  switch (static_cast<PT>(t)) {
    case PT::kU1: case PT::kU2: case PT::kU4: case PT::kU8: case PT::kU16:
    case PT::kU32: case PT::kU64:
      return true;
    default:
      return false;
  }
}
bool IsIntegralType(int t) {
  return IsSignedIntegralType(t) || IsUnsignedIntegralType(t);
}
bool IsArrayElementType(int t) {
  return t == kPred || IsIntegralType(t) || IsFloatingType(t) ||
         IsComplexType(t);
}

int ElementBitWidth(int t) {
  switch (static_cast<PT>(t)) {
    case PT::kPred: case PT::kS8: case PT::kU8: return 8;
    case PT::kS1: case PT::kU1: return 1;
    case PT::kS2: case PT::kU2: return 2;
    case PT::kS4: case PT::kU4: case PT::kF4E2M1FN: return 4;
    case PT::kF6E3M2FN: case PT::kF6E2M3FN: return 6;
    case PT::kS16: case PT::kU16: case PT::kF16: case PT::kBF16: return 16;
    case PT::kS32: case PT::kU32: case PT::kF32: return 32;
    case PT::kS64: case PT::kU64: case PT::kF64: case PT::kC64: return 64;
    case PT::kC128: return 128;
    default:
      return IsFloatingType(t) ? 8 : 0;  // the f8 types
  }
}

std::string ElementTypeName(int t) {
  const PrimitiveTypeInfo* info = FindPrimitiveType(t);
  if (info == nullptr || t == 0) return absl::StrCat("<type ", t, ">");
  if (t == kOpaque) return "opaque";
  std::string s(info->name);
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

// --- Shapes ------------------------------------------------------------------------

ShapeProto MakeArrayShape(int element_type, absl::Span<const int64_t> dims) {
  ShapeProto s;
  s.set_element_type(static_cast<xla::PrimitiveType>(element_type));
  for (int64_t d : dims) s.add_dimensions(d);
  xla::LayoutProto* layout = s.mutable_layout();
  for (int64_t i = static_cast<int64_t>(dims.size()); i-- > 0;) {
    layout->add_minor_to_major(i);
  }
  return s;
}

ShapeProto MakeScalarShape(int element_type) {
  return MakeArrayShape(element_type, {});
}

ShapeProto MakeTupleShape(absl::Span<const ShapeProto> elements) {
  ShapeProto s;
  s.set_element_type(xla::TUPLE);
  for (const ShapeProto& e : elements) *s.add_tuple_shapes() = e;
  return s;
}

ShapeProto MakeTupleShape(ShapeList elements) {
  ShapeProto s;
  s.set_element_type(xla::TUPLE);
  for (const ShapeProto* e : elements) *s.add_tuple_shapes() = *e;
  return s;
}

ShapeProto MakeTokenShape() {
  ShapeProto s;
  s.set_element_type(xla::TOKEN);
  return s;
}

bool IsTupleShape(const ShapeProto& s) { return s.element_type() == kTuple; }
bool IsTokenShape(const ShapeProto& s) { return s.element_type() == kToken; }
bool IsArrayShape(const ShapeProto& s) {
  return IsArrayElementType(s.element_type());
}
bool IsScalarShape(const ShapeProto& s) {
  return IsArrayShape(s) && s.dimensions_size() == 0;
}

namespace {

void AppendShape(const ShapeProto& s, bool with_layout, int depth,
                 std::string* out) {
  if (s.element_type() == kTuple) {
    if (depth > limits::kMaxTupleDepth) {
      out->append("(...)");
      return;
    }
    out->push_back('(');
    for (int i = 0; i < s.tuple_shapes_size(); ++i) {
      if (i > 0) out->append(", ");
      AppendShape(s.tuple_shapes(i), with_layout, depth + 1, out);
    }
    out->push_back(')');
    return;
  }
  absl::StrAppend(out, ElementTypeName(s.element_type()), "[");
  for (int i = 0; i < s.dimensions_size(); ++i) {
    if (i > 0) out->push_back(',');
    if (i < s.is_dynamic_dimension_size() && s.is_dynamic_dimension(i)) {
      out->append("<=");
    }
    absl::StrAppend(out, s.dimensions(i));
  }
  out->push_back(']');
  if (with_layout && s.has_layout() && s.dimensions_size() > 0) {
    absl::StrAppend(out, "{", absl::StrJoin(s.layout().minor_to_major(), ","),
                    "}");
  }
}

absl::Status BadShape(std::string_view expected, std::string_view found) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected ", Sv(expected), ", found ", Sv(found)));
}

absl::Status CheckShape(const ShapeProto& s, int depth) {
  const int t = s.element_type();
  if (t == 0 || FindPrimitiveType(t) == nullptr) {
    return BadShape("a known element type", absl::StrCat("element_type ", t));
  }
  const bool empty_layout =
      !s.has_layout() || s.layout().minor_to_major_size() == 0;
  if (t == kTuple) {
    if (depth >= limits::kMaxTupleDepth) {
      return BadShape(absl::StrCat("tuples nested at most ",
                                   limits::kMaxTupleDepth, " deep"),
                      "deeper nesting");
    }
    if (s.dimensions_size() > 0 || !empty_layout) {
      return BadShape("a tuple shape without dimensions or layout",
                      DescribeShape(s, true));
    }
    for (const ShapeProto& e : s.tuple_shapes()) {
      if (absl::Status st = CheckShape(e, depth + 1); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (t == kToken || t == kOpaque || t == kBuffer) {
    if (s.dimensions_size() > 0 || !empty_layout ||
        (t != kBuffer && s.tuple_shapes_size() > 0)) {
      return BadShape(absl::StrCat("a ", ElementTypeName(t),
                                   " shape without dimensions or layout"),
                      DescribeShape(s, true));
    }
    for (const ShapeProto& e : s.tuple_shapes()) {
      if (absl::Status st = CheckShape(e, depth + 1); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (s.tuple_shapes_size() > 0) {
    return BadShape("an array shape without tuple elements",
                    absl::StrCat(s.tuple_shapes_size(), " tuple_shapes on ",
                                 ElementTypeName(t)));
  }
  const int64_t rank = s.dimensions_size();
  if (rank > static_cast<int64_t>(limits::kMaxRank)) {
    return BadShape(absl::StrCat("at most ", limits::kMaxRank, " dimensions"),
                    absl::StrCat(rank));
  }
  for (int64_t d : s.dimensions()) {
    if (d < 0) {
      return BadShape("non-negative dimensions", DescribeShape(s));
    }
  }
  if (!ElementCount(s).ok()) {
    return BadShape("an element count that fits in 64 bits",
                    DescribeShape(s));
  }
  if (s.is_dynamic_dimension_size() != 0 &&
      s.is_dynamic_dimension_size() != rank) {
    return BadShape(absl::StrCat(rank, " is_dynamic_dimension entries"),
                    absl::StrCat(s.is_dynamic_dimension_size()));
  }
  if (s.has_layout()) {
    const auto& m2m = s.layout().minor_to_major();
    bool perm = m2m.size() == rank;
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int i = 0; perm && i < m2m.size(); ++i) {
      if (!InRange(m2m[i], rank) || seen[m2m[i]]) {
        perm = false;
      } else {
        seen[m2m[i]] = true;
      }
    }
    if (!perm) {
      return BadShape(
          absl::StrCat("a layout that is a permutation of ",
                       Counted(static_cast<uint64_t>(rank), "dimension")),
          absl::StrCat("minor_to_major {", absl::StrJoin(m2m, ","), "} on ",
                       DescribeShape(s)));
    }
  }
  return absl::OkStatus();
}

enum class Compare { kExact, kIgnoreFp, kIgnoreElementType };

bool Compatible(const ShapeProto& a, const ShapeProto& b, Compare mode,
                int depth) {
  const bool at = a.element_type() == kTuple;
  const bool bt = b.element_type() == kTuple;
  if (at || bt) {
    if (!(at && bt) || a.tuple_shapes_size() != b.tuple_shapes_size() ||
        depth > limits::kMaxTupleDepth) {
      return false;
    }
    for (int i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!Compatible(a.tuple_shapes(i), b.tuple_shapes(i), mode, depth + 1)) {
        return false;
      }
    }
    return true;
  }
  const bool aa = IsArrayShape(a);
  const bool ba = IsArrayShape(b);
  if (aa != ba) return false;
  if (!aa) return a.element_type() == b.element_type();
  switch (mode) {
    case Compare::kExact:
      if (a.element_type() != b.element_type()) return false;
      break;
    case Compare::kIgnoreFp:
      if (!SameTypeIgnoringFp(a.element_type(), b.element_type())) return false;
      break;
    case Compare::kIgnoreElementType:
      break;
  }
  return SameDimensions(a, b);
}

}  // namespace

std::string DescribeShape(const ShapeProto& s, bool with_layout) {
  std::string out;
  AppendShape(s, with_layout, 0, &out);
  return out;
}

std::string DescribeProgramShape(const xla::ProgramShapeProto& p) {
  std::string out = "(";
  for (int i = 0; i < p.parameters_size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(DescribeShape(p.parameters(i)));
  }
  absl::StrAppend(&out, ") -> ", DescribeShape(p.result()));
  return out;
}

absl::Status CheckShapeWellFormed(const ShapeProto& s) {
  return CheckShape(s, 0);
}

bool ShapesCompatible(const ShapeProto& a, const ShapeProto& b) {
  return Compatible(a, b, Compare::kExact, 0);
}
bool ShapesCompatibleIgnoringFpPrecision(const ShapeProto& a,
                                         const ShapeProto& b) {
  return Compatible(a, b, Compare::kIgnoreFp, 0);
}
bool ShapesCompatibleIgnoringElementType(const ShapeProto& a,
                                         const ShapeProto& b) {
  return Compatible(a, b, Compare::kIgnoreElementType, 0);
}

bool SameDimensions(const ShapeProto& a, const ShapeProto& b) {
  if (a.dimensions_size() != b.dimensions_size()) return false;
  for (int i = 0; i < a.dimensions_size(); ++i) {
    if (a.dimensions(i) != b.dimensions(i)) return false;
  }
  return true;
}

namespace {
bool LayoutsAgreeAt(const ShapeProto& a, const ShapeProto& b, int depth) {
  if (a.element_type() == kTuple && b.element_type() == kTuple) {
    if (depth > limits::kMaxTupleDepth) return true;
    const int n = std::min(a.tuple_shapes_size(), b.tuple_shapes_size());
    for (int i = 0; i < n; ++i) {
      if (!LayoutsAgreeAt(a.tuple_shapes(i), b.tuple_shapes(i), depth + 1)) {
        return false;
      }
    }
    return true;
  }
  if (!a.has_layout() || !b.has_layout()) return true;
  if (a.dimensions_size() == 0 || b.dimensions_size() == 0) return true;
  const auto& x = a.layout().minor_to_major();
  const auto& y = b.layout().minor_to_major();
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
}
}  // namespace

bool LayoutsAgree(const ShapeProto& a, const ShapeProto& b) {
  return LayoutsAgreeAt(a, b, 0);
}

absl::StatusOr<int64_t> ElementCount(const ShapeProto& s) {
  int64_t n = 1;
  for (int64_t d : s.dimensions()) {
    if (d < 0 || !MulOk(n, d, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected a non-negative element count that fits in "
                       "64 bits, found dimensions [",
                       absl::StrJoin(s.dimensions(), ","), "]"));
    }
  }
  return n;
}

absl::StatusOr<xla::ProgramShapeProto> ComputationProgramShape(
    const HloComputation& computation) {
  xla::ProgramShapeProto p;
  const auto params = computation.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          DescribeComputation(computation), ": expected parameters numbered 0 to ",
          params.size() - 1, ", found no parameter ", i));
    }
    *p.add_parameters() = params[i]->shape();
    p.add_parameter_names(params[i]->name());
  }
  *p.mutable_result() = computation.root()->shape();
  return p;
}

absl::Status CheckMixedPrecision(HloOpcode opcode, ShapeList operands) {
  switch (opcode) {
    case HloOpcode::kCall: case HloOpcode::kConditional:
    case HloOpcode::kConstant: case HloOpcode::kConvolution:
    case HloOpcode::kDot: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone: case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncStart:
    case HloOpcode::kCopyDone: case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall: case HloOpcode::kDomain:
    case HloOpcode::kFusion: case HloOpcode::kGetTupleElement:
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed: case HloOpcode::kParameter:
    case HloOpcode::kRecv: case HloOpcode::kRecvDone:
    case HloOpcode::kReducePrecision: case HloOpcode::kReduceWindow:
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSort:
    case HloOpcode::kTuple: case HloOpcode::kWhile:
    case HloOpcode::kUnknown:
      return absl::OkStatus();
    default:
      break;
  }
  int seen = 0;
  // Walks a shape's array leaves (tuples of operands) without recursion
  // deeper than the tuple limit.
  struct Walker {
    int* seen;
    HloOpcode op;
    absl::Status Visit(const ShapeProto& s, int depth) {
      if (s.element_type() == kTuple) {
        if (depth > limits::kMaxTupleDepth) return absl::OkStatus();
        for (const ShapeProto& e : s.tuple_shapes()) {
          if (absl::Status st = Visit(e, depth + 1); !st.ok()) return st;
        }
        return absl::OkStatus();
      }
      const int t = s.element_type();
      if (!IsFloatingType(t)) return absl::OkStatus();
      if (*seen == 0) {
        *seen = t;
      } else if (*seen != t) {
        return Fail(op, absl::StrCat(
                            "expected floating-point operands of one "
                            "precision, found ",
                            ElementTypeName(*seen), " and ", ElementTypeName(t)));
      }
      return absl::OkStatus();
    }
  } walker{&seen, opcode};
  for (const ShapeProto* s : operands) {
    if (absl::Status st = walker.Visit(*s, 0); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// --- Elementwise ----------------------------------------------------------------------

absl::StatusOr<ShapeProto> InferUnaryShape(HloOpcode op,
                                           const ShapeProto& operand) {
  if (op == HloOpcode::kCopy || op == HloOpcode::kDomain ||
      op == HloOpcode::kOptimizationBarrier) {
    return operand;
  }
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  const int t = operand.element_type();
  auto type_error = [&](std::string_view expected) {
    return Fail(op, absl::StrCat("expected ", Sv(expected), " operand, found ",
                                 S(operand)));
  };
  switch (op) {
    case HloOpcode::kFloor: case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven:
    case HloOpcode::kErf:
      if (!IsFloatingType(t)) return type_error("a floating-point");
      return operand;
    case HloOpcode::kCos: case HloOpcode::kSin: case HloOpcode::kTan:
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt: case HloOpcode::kCbrt: case HloOpcode::kTanh:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin:
    case HloOpcode::kAsinh: case HloOpcode::kAtan: case HloOpcode::kAtanh:
    case HloOpcode::kCosh: case HloOpcode::kSinh:
      if (!IsFloatingType(t) && !IsComplexType(t)) {
        return type_error("a floating-point or complex");
      }
      return operand;
    case HloOpcode::kReal: case HloOpcode::kImag:
      if (t == kC64) return WithType(operand, kF32);
      if (t == kC128) return WithType(operand, kF64);
      if (IsFloatingType(t)) return operand;
      return type_error("a floating-point or complex");
    case HloOpcode::kAbs:
      if (t == kC64) return WithType(operand, kF32);
      if (t == kC128) return WithType(operand, kF64);
      if (IsSignedIntegralType(t) || IsFloatingType(t)) return operand;
      return type_error("a signed integer, floating-point or complex");
    case HloOpcode::kClz: case HloOpcode::kPopulationCount:
      if (!IsIntegralType(t)) return type_error("an integer");
      return operand;
    case HloOpcode::kNegate:
      if (t == kPred) return type_error("an integer, floating-point or complex");
      return operand;
    case HloOpcode::kSign:
      if (!IsSignedIntegralType(t) && !IsFloatingType(t) && !IsComplexType(t)) {
        return type_error("a signed integer, floating-point or complex");
      }
      return operand;
    case HloOpcode::kNot:
      if (t != kPred && !IsIntegralType(t)) return type_error("a pred or integer");
      return operand;
    case HloOpcode::kIsFinite:
      if (!IsFloatingType(t)) return type_error("a floating-point");
      return WithType(operand, kPred);
    default:
      return Fail(op, "is not a unary elementwise opcode");
  }
}

absl::StatusOr<ShapeProto> InferBinaryShape(HloOpcode op, const ShapeProto& lhs,
                                            const ShapeProto& rhs) {
  if (absl::Status s = ExpectArray(op, lhs, "lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, rhs, "rhs"); !s.ok()) return s;
  if (!SameTypeIgnoringFp(lhs.element_type(), rhs.element_type())) {
    return Fail(op, absl::StrCat("expected operands of one element type, found ",
                                 S(lhs), " and ", S(rhs)));
  }
  if (!SameDimensions(lhs, rhs)) {
    return Fail(op, absl::StrCat("expected operands of the same dimensions, "
                                 "found ",
                                 S(lhs), " and ", S(rhs)));
  }
  const int t = lhs.element_type();
  const int result = HigherPrecisionType(t, rhs.element_type());
  switch (op) {
    case HloOpcode::kAdd: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
      return WithType(lhs, result);
    case HloOpcode::kSubtract: case HloOpcode::kAtan2: case HloOpcode::kPower:
    case HloOpcode::kDivide: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      if (t == kPred) {
        return Fail(op, absl::StrCat("expected arithmetic operands, found ",
                                     S(lhs)));
      }
      return WithType(lhs, result);
    case HloOpcode::kMulhi:
      if (!IsIntegralType(t)) {
        return Fail(op, absl::StrCat("expected integer operands, found ",
                                     S(lhs)));
      }
      return lhs;
    case HloOpcode::kComplex:
      if (t == kF32 && rhs.element_type() == kF32) return WithType(lhs, kC64);
      if (t == kF64 && rhs.element_type() == kF64) return WithType(lhs, kC128);
      return Fail(op, absl::StrCat("expected two f32 or two f64 operands, "
                                   "found ",
                                   S(lhs), " and ", S(rhs)));
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      if (t != kPred && !IsIntegralType(t)) {
        return Fail(op, absl::StrCat("expected pred or integer operands, "
                                     "found ",
                                     S(lhs)));
      }
      return lhs;
    case HloOpcode::kCompare:
      return WithType(lhs, kPred);
    default:
      return Fail(op, "is not a binary elementwise opcode");
  }
}

absl::StatusOr<ShapeProto> InferSelectShape(const ShapeProto& pred,
                                            const ShapeProto& on_true,
                                            const ShapeProto& on_false) {
  const HloOpcode op = HloOpcode::kSelect;
  if (absl::Status s = ExpectArray(op, pred, "predicate"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, on_true, "on-true operand"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectArray(op, on_false, "on-false operand"); !s.ok()) {
    return s;
  }
  if (!ShapesCompatibleIgnoringFpPrecision(on_true, on_false)) {
    return Fail(op, absl::StrCat("expected on-true and on-false operands of one "
                                 "shape, found ",
                                 S(on_true), " and ", S(on_false)));
  }
  if (pred.element_type() != kPred) {
    return Fail(op, absl::StrCat("expected a pred predicate, found ", S(pred)));
  }
  if (!SameDimensions(pred, on_true)) {
    return Fail(op, absl::StrCat("expected a predicate of the operands' "
                                 "dimensions, found ",
                                 S(pred), " for ", S(on_true)));
  }
  return WithType(on_true, HigherPrecisionType(on_true.element_type(),
                                               on_false.element_type()));
}

absl::StatusOr<ShapeProto> InferClampShape(const ShapeProto& min,
                                           const ShapeProto& operand,
                                           const ShapeProto& max) {
  const HloOpcode op = HloOpcode::kClamp;
  if (absl::Status s = ExpectArray(op, min, "min"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, max, "max"); !s.ok()) return s;
  for (const ShapeProto* bound : {&min, &max}) {
    const bool ok =
        SameTypeIgnoringFp(bound->element_type(), operand.element_type()) &&
        (IsScalarShape(*bound) || SameDimensions(*bound, operand));
    if (!ok) {
      return Fail(op, absl::StrCat("expected min and max of the operand's "
                                   "element type, each a scalar or of its "
                                   "dimensions, found ",
                                   S(min), ", ", S(operand), ", ", S(max)));
    }
  }
  return operand;
}

absl::StatusOr<ShapeProto> InferConvertShape(const ShapeProto& operand,
                                             int new_element_type) {
  const HloOpcode op = HloOpcode::kConvert;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!IsArrayElementType(new_element_type)) {
    return Fail(op, absl::StrCat("expected an array element type to convert "
                                 "to, found ",
                                 ElementTypeName(new_element_type)));
  }
  return WithType(operand, new_element_type);
}

absl::StatusOr<ShapeProto> InferBitcastConvertShape(const ShapeProto& operand,
                                                    int new_element_type) {
  const HloOpcode op = HloOpcode::kBitcastConvert;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!IsArrayElementType(new_element_type)) {
    return Fail(op, absl::StrCat("expected an array element type to convert "
                                 "to, found ",
                                 ElementTypeName(new_element_type)));
  }
  const int old_type = operand.element_type();
  if (IsComplexType(old_type) != IsComplexType(new_element_type)) {
    return Fail(op, absl::StrCat("expected both or neither type complex, found ",
                                 S(operand), " to ",
                                 ElementTypeName(new_element_type)));
  }
  const int in_bits = ElementBitWidth(old_type);
  const int out_bits = ElementBitWidth(new_element_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return Fail(op, absl::StrCat("expected bit widths that divide each other, "
                                 "found ",
                                 ElementTypeName(old_type), " (", in_bits,
                                 " bits) to ", ElementTypeName(new_element_type),
                                 " (", out_bits, " bits)"));
  }
  ShapeProto out = operand;
  out.set_element_type(static_cast<xla::PrimitiveType>(new_element_type));
  if (in_bits > out_bits) {
    const int64_t ratio = in_bits / out_bits;
    std::vector<int64_t> dims(Dims(operand).begin(), Dims(operand).end());
    dims.push_back(ratio);
    ShapeProto grown = MakeArrayShape(new_element_type, dims);
    if (absl::Status s = CheckShapeWellFormed(grown); !s.ok()) {
      return Fail(op, s.message());
    }
    return grown;
  }
  if (in_bits < out_bits) {
    const int64_t ratio = out_bits / in_bits;
    if (Rank(operand) == 0 || operand.dimensions(Rank(operand) - 1) != ratio) {
      return Fail(op, absl::StrCat("expected a minor dimension of ", ratio,
                                   " (the ratio of the bit widths), found ",
                                   S(operand), " to ",
                                   ElementTypeName(new_element_type)));
    }
    std::vector<int64_t> dims(Dims(operand).begin(), Dims(operand).end() - 1);
    return MakeArrayShape(new_element_type, dims);
  }
  return out;
}

absl::StatusOr<ShapeProto> InferStochasticConvertShape(
    const ShapeProto& operand, const ShapeProto& random, int new_element_type) {
  const HloOpcode op = HloOpcode::kStochasticConvert;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, random, "random operand"); !s.ok()) {
    return s;
  }
  if (!IsUnsignedIntegralType(random.element_type())) {
    return Fail(op, absl::StrCat("expected unsigned random bits, found ",
                                 S(random)));
  }
  if (!IsFloatingType(operand.element_type())) {
    return Fail(op, absl::StrCat("expected a floating-point operand, found ",
                                 S(operand)));
  }
  if (ElementBitWidth(operand.element_type()) !=
      ElementBitWidth(random.element_type())) {
    return Fail(op, absl::StrCat("expected random bits as wide as the operand, "
                                 "found ",
                                 S(random), " for ", S(operand)));
  }
  if (!SameDimensions(operand, random)) {
    return Fail(op, absl::StrCat("expected random bits of the operand's "
                                 "dimensions, found ",
                                 S(random), " for ", S(operand)));
  }
  if (!IsArrayElementType(new_element_type)) {
    return Fail(op, absl::StrCat("expected an array element type to convert "
                                 "to, found ",
                                 ElementTypeName(new_element_type)));
  }
  return WithType(operand, new_element_type);
}

absl::StatusOr<ShapeProto> InferReducePrecisionShape(const ShapeProto& operand,
                                                     int64_t exponent_bits,
                                                     int64_t mantissa_bits) {
  const HloOpcode op = HloOpcode::kReducePrecision;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!IsFloatingType(operand.element_type())) {
    return Fail(op, absl::StrCat("expected a floating-point operand, found ",
                                 S(operand)));
  }
  if (exponent_bits < 1) {
    return Fail(op, absl::StrCat("expected exponent_bits >= 1, found ",
                                 exponent_bits));
  }
  if (mantissa_bits < 0) {
    return Fail(op, absl::StrCat("expected mantissa_bits >= 0, found ",
                                 mantissa_bits));
  }
  return operand;
}

// --- Shape-changing ops -------------------------------------------------------------------

absl::StatusOr<ShapeProto> InferIotaShape(const ShapeProto& shape,
                                          int64_t iota_dimension) {
  const HloOpcode op = HloOpcode::kIota;
  if (absl::Status s = ExpectArray(op, shape, "result"); !s.ok()) return s;
  const int t = shape.element_type();
  if (!IsIntegralType(t) && !IsFloatingType(t) && !IsComplexType(t)) {
    return Fail(op, absl::StrCat("expected an integer, floating-point or "
                                 "complex result, found ",
                                 S(shape)));
  }
  if (Rank(shape) == 0) {
    return Fail(op, absl::StrCat("expected a result of rank >= 1, found ",
                                 S(shape)));
  }
  if (!InRange(iota_dimension, Rank(shape))) {
    return Fail(op, absl::StrCat("expected an iota dimension in [0, ",
                                 Rank(shape), "), found ", iota_dimension));
  }
  return shape;
}

absl::StatusOr<ShapeProto> InferBroadcastShape(
    const ShapeProto& operand, absl::Span<const int64_t> output_dims,
    absl::Span<const int64_t> dimensions) {
  const HloOpcode op = HloOpcode::kBroadcast;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  const int64_t out_rank = static_cast<int64_t>(output_dims.size());
  if (static_cast<int64_t>(dimensions.size()) != Rank(operand)) {
    return Fail(op, absl::StrCat("expected one dimension per operand "
                                 "dimension (",
                                 Rank(operand), "), found dimensions=",
                                 List(dimensions), " for ", S(operand)));
  }
  for (int64_t d : output_dims) {
    if (d < 0) {
      return Fail(op, absl::StrCat("expected non-negative output dimensions, "
                                   "found [",
                                   absl::StrJoin(output_dims, ","), "]"));
    }
  }
  if (!AllUnique(dimensions)) {
    return Fail(op, absl::StrCat("expected distinct dimensions, found ",
                                 List(dimensions)));
  }
  for (int64_t i = 0; i < Rank(operand); ++i) {
    const int64_t d = dimensions[i];
    if (!InRange(d, out_rank)) {
      return Fail(op, absl::StrCat("expected dimensions in [0, ", out_rank,
                                   "), found ", List(dimensions)));
    }
    if (output_dims[d] != operand.dimensions(i)) {
      return Fail(op, absl::StrCat(
                          "expected output dimension ", d, " to be ",
                          operand.dimensions(i), " (operand dimension ", i,
                          " of ", S(operand), "), found ", output_dims[d]));
    }
  }
  return MakeArrayShape(operand.element_type(), output_dims);
}

absl::StatusOr<ShapeProto> InferReshapeShape(const ShapeProto& operand,
                                             absl::Span<const int64_t> new_dims) {
  const HloOpcode op = HloOpcode::kReshape;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  ShapeProto out = MakeArrayShape(operand.element_type(), new_dims);
  absl::StatusOr<int64_t> from = ElementCount(operand);
  absl::StatusOr<int64_t> to = ElementCount(out);
  if (!from.ok() || !to.ok()) {
    return Fail(op, absl::StrCat("expected valid dimensions, found ",
                                 S(operand), " to ", S(out)));
  }
  if (*from != *to) {
    return Fail(op, absl::StrCat("expected the same element count, found ",
                                 *from, " (", S(operand), ") and ", *to, " (",
                                 S(out), ")"));
  }
  return out;
}

absl::StatusOr<ShapeProto> InferTransposeShape(
    const ShapeProto& operand, absl::Span<const int64_t> permutation) {
  const HloOpcode op = HloOpcode::kTranspose;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  const int64_t rank = Rank(operand);
  bool ok = static_cast<int64_t>(permutation.size()) == rank;
  std::vector<bool> seen(static_cast<size_t>(ok ? rank : 0), false);
  for (size_t i = 0; ok && i < permutation.size(); ++i) {
    if (!InRange(permutation[i], rank) || seen[permutation[i]]) {
      ok = false;
    } else {
      seen[permutation[i]] = true;
    }
  }
  if (!ok) {
    return Fail(op, absl::StrCat("expected dimensions that permute the ", rank,
                                 " operand dimensions, found ",
                                 List(permutation), " for ", S(operand)));
  }
  std::vector<int64_t> dims;
  dims.reserve(permutation.size());
  for (int64_t p : permutation) dims.push_back(operand.dimensions(p));
  return MakeArrayShape(operand.element_type(), dims);
}

absl::StatusOr<ShapeProto> InferSliceShape(const ShapeProto& operand,
                                           absl::Span<const int64_t> starts,
                                           absl::Span<const int64_t> limits,
                                           absl::Span<const int64_t> strides) {
  const HloOpcode op = HloOpcode::kSlice;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (static_cast<int64_t>(starts.size()) != Rank(operand) ||
      limits.size() != starts.size() || strides.size() != starts.size()) {
    return Fail(op, absl::StrCat("expected a start, limit and stride for each "
                                 "of the ",
                                 Rank(operand), " dimensions of ", S(operand),
                                 ", found ", starts.size(), ", ", limits.size(),
                                 " and ", strides.size()));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t start = starts[i], limit = limits[i], stride = strides[i];
    const std::string where =
        absl::StrCat(" in dimension ", i, " of ", S(operand));
    if (start < 0) {
      return Fail(op, absl::StrCat("expected a non-negative start, found ",
                                   start, where));
    }
    if (limit > operand.dimensions(i)) {
      return Fail(op, absl::StrCat("expected a limit <= ",
                                   operand.dimensions(i), ", found ", limit,
                                   where));
    }
    if (start > limit) {
      return Fail(op, absl::StrCat("expected start <= limit, found ", start,
                                   " > ", limit, where));
    }
    if (stride <= 0) {
      return Fail(op, absl::StrCat("expected a positive stride, found ", stride,
                                   where));
    }
    dims.push_back((limit - start) / stride + ((limit - start) % stride != 0));
  }
  return MakeArrayShape(operand.element_type(), dims);
}

namespace {

// The index operands of dynamic-slice and dynamic-update-slice: one scalar
// per dimension, or one rank-1 array (the older form).
absl::Status CheckSliceIndices(HloOpcode op, const ShapeProto& operand,
                               ShapeList indices) {
  if (!indices.empty() && IsArrayShape(*indices[0]) && Rank(*indices[0]) == 1) {
    if (indices.size() != 1) {
      return Fail(op, absl::StrCat("expected one rank-1 index operand, found ",
                                   indices.size()));
    }
    if (!IsIntegralType(indices[0]->element_type()) ||
        indices[0]->dimensions(0) != Rank(operand)) {
      return Fail(op, absl::StrCat("expected integer start indices s32[",
                                   Rank(operand), "] for ", S(operand),
                                   ", found ", S(*indices[0])));
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(indices.size()) != Rank(operand)) {
    return Fail(op, absl::StrCat("expected one start index per dimension of ",
                                 S(operand), " (", Rank(operand), "), found ",
                                 indices.size()));
  }
  for (const ShapeProto* index : indices) {
    if (!IsScalarShape(*index) || !IsIntegralType(index->element_type())) {
      return Fail(op, absl::StrCat("expected integer scalar start indices, "
                                   "found ",
                                   S(*index)));
    }
    if (!ShapesCompatible(*index, *indices[0])) {
      return Fail(op, absl::StrCat("expected start indices of one type, found ",
                                   S(*indices[0]), " and ", S(*index)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShapeProto> InferDynamicSliceShape(
    const ShapeProto& operand, ShapeList indices,
    absl::Span<const int64_t> slice_sizes) {
  const HloOpcode op = HloOpcode::kDynamicSlice;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (absl::Status s = CheckSliceIndices(op, operand, indices); !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(slice_sizes.size()) != Rank(operand)) {
    return Fail(op, absl::StrCat("expected one slice size per dimension of ",
                                 S(operand), ", found ", List(slice_sizes)));
  }
  for (size_t i = 0; i < slice_sizes.size(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return Fail(op, absl::StrCat("expected slice sizes within ", S(operand),
                                   ", found ", List(slice_sizes)));
    }
  }
  return MakeArrayShape(operand.element_type(), slice_sizes);
}

absl::StatusOr<ShapeProto> InferDynamicUpdateSliceShape(
    const ShapeProto& operand, const ShapeProto& update, ShapeList indices) {
  const HloOpcode op = HloOpcode::kDynamicUpdateSlice;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, update, "update"); !s.ok()) return s;
  if (absl::Status s = CheckSliceIndices(op, operand, indices); !s.ok()) {
    return s;
  }
  if (Rank(update) != Rank(operand)) {
    return Fail(op, absl::StrCat("expected an update of the operand's rank, "
                                 "found ",
                                 S(update), " for ", S(operand)));
  }
  if (!SameTypeIgnoringFp(update.element_type(), operand.element_type())) {
    return Fail(op, absl::StrCat("expected an update of the operand's element "
                                 "type, found ",
                                 S(update), " for ", S(operand)));
  }
  for (int64_t i = 0; i < Rank(operand); ++i) {
    if (update.dimensions(i) > operand.dimensions(i)) {
      return Fail(op, absl::StrCat("expected an update within the operand, "
                                   "found ",
                                   S(update), " for ", S(operand)));
    }
  }
  return operand;
}

absl::StatusOr<ShapeProto> InferConcatenateShape(ShapeList operands,
                                                 int64_t dimension) {
  const HloOpcode op = HloOpcode::kConcatenate;
  if (operands.empty()) return Fail(op, "expected operands, found none");
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
  }
  const ShapeProto& first = *operands[0];
  if (!InRange(dimension, Rank(first))) {
    return Fail(op, absl::StrCat("expected a dimension in [0, ", Rank(first),
                                 "), found ", dimension));
  }
  std::vector<int64_t> dims(Dims(first).begin(), Dims(first).end());
  int type = first.element_type();
  for (size_t k = 1; k < operands.size(); ++k) {
    const ShapeProto& s = *operands[k];
    if (Rank(s) != Rank(first) ||
        !SameTypeIgnoringFp(s.element_type(), first.element_type())) {
      return Fail(op, absl::StrCat("expected operands of one rank and element "
                                   "type, found ",
                                   S(first), " and ", S(s)));
    }
    for (int64_t i = 0; i < Rank(s); ++i) {
      if (i != dimension && s.dimensions(i) != first.dimensions(i)) {
        return Fail(op, absl::StrCat("expected operands that differ only in "
                                     "dimension ",
                                     dimension, ", found ", S(first), " and ",
                                     S(s)));
      }
    }
    if (!AddOk(dims[dimension], s.dimensions(dimension), &dims[dimension])) {
      return Overflow(op, "a result dimension");
    }
    type = HigherPrecisionType(type, s.element_type());
  }
  return MakeArrayShape(type, dims);
}

absl::StatusOr<ShapeProto> InferPadShape(const ShapeProto& operand,
                                         const ShapeProto& value,
                                         const xla::PaddingConfig& config) {
  const HloOpcode op = HloOpcode::kPad;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!IsScalarShape(value)) {
    return Fail(op, absl::StrCat("expected a scalar padding value, found ",
                                 S(value)));
  }
  if (!SameTypeIgnoringFp(value.element_type(), operand.element_type())) {
    return Fail(op, absl::StrCat("expected a padding value of the operand's "
                                 "element type, found ",
                                 S(value), " for ", S(operand)));
  }
  if (config.dimensions_size() != Rank(operand)) {
    return Fail(op, absl::StrCat("expected a padding for each of the ",
                                 Rank(operand), " dimensions of ", S(operand),
                                 ", found ", config.dimensions_size()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < Rank(operand); ++i) {
    const auto& p = config.dimensions(i);
    const int64_t d = operand.dimensions(i);
    if (p.interior_padding() < 0) {
      return Fail(op, absl::StrCat("expected non-negative interior padding, "
                                   "found ",
                                   p.interior_padding(), " in dimension ", i));
    }
    int64_t n = 0;
    if (!MulOk(std::max<int64_t>(d - 1, 0), p.interior_padding(), &n) ||
        !AddOk(n, d, &n) || !AddOk(n, p.edge_padding_low(), &n) ||
        !AddOk(n, p.edge_padding_high(), &n)) {
      return Overflow(op, "a padded dimension");
    }
    if (n < 0) {
      return Fail(op, absl::StrCat("expected a non-negative padded size, found ",
                                   n, " in dimension ", i, " of ", S(operand)));
    }
    dims.push_back(n);
  }
  return MakeArrayShape(
      HigherPrecisionType(operand.element_type(), value.element_type()), dims);
}

absl::StatusOr<ShapeProto> InferReverseShape(const ShapeProto& operand,
                                             absl::Span<const int64_t> dimensions) {
  const HloOpcode op = HloOpcode::kReverse;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!AllUnique(dimensions)) {
    return Fail(op, absl::StrCat("expected distinct dimensions, found ",
                                 List(dimensions)));
  }
  for (int64_t d : dimensions) {
    if (!InRange(d, Rank(operand))) {
      return Fail(op, absl::StrCat("expected dimensions in [0, ", Rank(operand),
                                   "), found ", List(dimensions)));
    }
  }
  return operand;
}

namespace {

// The checks gather and scatter share on an index-dimension list.
absl::Status CheckDimList(HloOpcode op, std::string_view name,
                          absl::Span<const int64_t> dims, int64_t bound,
                          bool sorted) {
  for (int64_t d : dims) {
    if (!InRange(d, bound)) {
      return Fail(op, absl::StrCat("expected ", Sv(name), " in [0, ", bound,
                                   "), found ", List(dims)));
    }
  }
  if (sorted ? !IsSortedStrictly(dims) : !AllUnique(dims)) {
    return Fail(op, absl::StrCat("expected ", Sv(name),
                                 sorted ? " sorted and distinct" : " distinct",
                                 ", found ", List(dims)));
  }
  return absl::OkStatus();
}

absl::Status CheckDisjoint(HloOpcode op, std::string_view a_name,
                           absl::Span<const int64_t> a, std::string_view b_name,
                           absl::Span<const int64_t> b) {
  for (int64_t x : a) {
    if (Contains(b, x)) {
      return Fail(op, absl::StrCat("expected ", Sv(a_name), " and ", Sv(b_name),
                                   " to share no dimension, found ", List(a),
                                   " and ", List(b)));
    }
  }
  return absl::OkStatus();
}

// start_indices / scatter_indices with the index vector dimension made
// explicit (a trailing 1 when index_vector_dim == rank).
absl::StatusOr<std::vector<int64_t>> ExpandedIndices(HloOpcode op,
                                                     const ShapeProto& indices,
                                                     int64_t index_vector_dim) {
  if (!IsArrayShape(indices) || !IsIntegralType(indices.element_type())) {
    return Fail(op, absl::StrCat("expected integer indices, found ",
                                 S(indices)));
  }
  if (index_vector_dim < 0 || index_vector_dim > Rank(indices)) {
    return Fail(op, absl::StrCat("expected index_vector_dim in [0, ",
                                 Rank(indices) + 1, "), found ",
                                 index_vector_dim, " for ", S(indices)));
  }
  std::vector<int64_t> dims(Dims(indices).begin(), Dims(indices).end());
  if (index_vector_dim == Rank(indices)) dims.push_back(1);
  return dims;
}

}  // namespace

absl::StatusOr<ShapeProto> InferGatherShape(
    const ShapeProto& operand, const ShapeProto& start_indices,
    const xla::GatherDimensionNumbers& dn,
    absl::Span<const int64_t> slice_sizes) {
  const HloOpcode op = HloOpcode::kGather;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> idx =
      ExpandedIndices(op, start_indices, dn.index_vector_dim());
  if (!idx.ok()) return idx.status();
  const int64_t rank = Rank(operand);
  const int64_t idx_rank = static_cast<int64_t>(idx->size());
  const auto offset_dims = SpanOf(dn.offset_dims());
  const auto collapsed = SpanOf(dn.collapsed_slice_dims());
  const auto start_map = SpanOf(dn.start_index_map());
  const auto batching = SpanOf(dn.operand_batching_dims());
  const auto idx_batching = SpanOf(dn.start_indices_batching_dims());
  const int64_t out_rank =
      static_cast<int64_t>(offset_dims.size()) + idx_rank - 1;
  if (absl::Status s = CheckDimList(op, "offset_dims", offset_dims, out_rank,
                                    true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDimList(op, "collapsed_slice_dims", collapsed, rank,
                                    true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDimList(op, "operand_batching_dims", batching, rank,
                                    true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDisjoint(op, "collapsed_slice_dims", collapsed,
                                     "operand_batching_dims", batching);
      !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(start_map.size()) != (*idx)[dn.index_vector_dim()]) {
    return Fail(op, absl::StrCat(
                        "expected start_index_map to have one entry per index "
                        "in dimension index_vector_dim=",
                        dn.index_vector_dim(), " of ", S(start_indices), " (",
                        (*idx)[dn.index_vector_dim()], "), found ",
                        List(start_map)));
  }
  if (absl::Status s = CheckDimList(op, "start_index_map", start_map, rank,
                                    false);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDisjoint(op, "start_index_map", start_map,
                                     "operand_batching_dims", batching);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDimList(op, "start_indices_batching_dims",
                                    idx_batching, idx_rank, false);
      !s.ok()) {
    return s;
  }
  if (Contains(idx_batching, dn.index_vector_dim())) {
    return Fail(op, absl::StrCat("expected start_indices_batching_dims without "
                                 "index_vector_dim=",
                                 dn.index_vector_dim(), ", found ",
                                 List(idx_batching)));
  }
  if (idx_batching.size() != batching.size()) {
    return Fail(op, absl::StrCat("expected as many start_indices_batching_dims "
                                 "as operand_batching_dims, found ",
                                 List(idx_batching), " and ", List(batching)));
  }
  for (size_t i = 0; i < batching.size(); ++i) {
    if (operand.dimensions(batching[i]) != (*idx)[idx_batching[i]]) {
      return Fail(op, absl::StrCat("expected batching dimensions of one size, "
                                   "found operand dimension ",
                                   batching[i], " of ", S(operand),
                                   " and indices dimension ", idx_batching[i],
                                   " of ", S(start_indices)));
    }
  }
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return Fail(op, absl::StrCat("expected one slice size per dimension of ",
                                 S(operand), ", found ", List(slice_sizes)));
  }
  if (static_cast<int64_t>(offset_dims.size() + collapsed.size() +
                           batching.size()) != rank) {
    return Fail(op, absl::StrCat(
                        "expected offset_dims, collapsed_slice_dims and "
                        "operand_batching_dims to number the ",
                        rank, " operand dimensions, found ", List(offset_dims),
                        ", ", List(collapsed), " and ", List(batching)));
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return Fail(op, absl::StrCat("expected slice sizes within ", S(operand),
                                   ", found ", List(slice_sizes)));
    }
  }
  for (int64_t d : collapsed) {
    if (slice_sizes[d] > 1) {
      return Fail(op, absl::StrCat("expected slice size 0 or 1 in collapsed "
                                   "dimension ",
                                   d, ", found ", slice_sizes[d]));
    }
  }
  for (int64_t d : batching) {
    if (slice_sizes[d] > 1) {
      return Fail(op, absl::StrCat("expected slice size 0 or 1 in batching "
                                   "dimension ",
                                   d, ", found ", slice_sizes[d]));
    }
  }
  std::vector<int64_t> dims;
  int64_t operand_dim = 0, index_dim = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (Contains(offset_dims, i)) {
      while (Contains(collapsed, operand_dim) || Contains(batching, operand_dim)) {
        ++operand_dim;
      }
      dims.push_back(slice_sizes[operand_dim++]);
    } else {
      if (index_dim == dn.index_vector_dim()) ++index_dim;
      dims.push_back((*idx)[index_dim++]);
    }
  }
  return MakeArrayShape(operand.element_type(), dims);
}

namespace {

// XLA's VerifyReducerShape: `reducer` takes N accumulators then N elements,
// all scalars, and returns the N accumulators (a tuple when N > 1).
absl::Status CheckReducer(HloOpcode op, const xla::ProgramShapeProto& reducer,
                          ShapeList inits, absl::Span<const int> input_types) {
  const int64_t n = static_cast<int64_t>(input_types.size());
  if (reducer.parameters_size() != 2 * n) {
    return Fail(op, absl::StrCat("expected a computation of ", 2 * n,
                                 " parameters, found ",
                                 DescribeProgramShape(reducer)));
  }
  const ShapeProto& result = reducer.result();
  std::vector<const ShapeProto*> acc;
  if (IsTupleShape(result)) {
    if (result.tuple_shapes_size() != n) {
      return Fail(op, absl::StrCat("expected a computation returning ", n,
                                   " scalars, found ",
                                   DescribeProgramShape(reducer)));
    }
    for (const ShapeProto& e : result.tuple_shapes()) acc.push_back(&e);
  } else {
    if (n != 1) {
      return Fail(op, absl::StrCat("expected a computation returning a tuple "
                                   "of ",
                                   n, " scalars, found ",
                                   DescribeProgramShape(reducer)));
    }
    acc.push_back(&result);
  }
  for (const ShapeProto* a : acc) {
    if (!IsScalarShape(*a)) {
      return Fail(op, absl::StrCat("expected a computation returning scalars, "
                                   "found ",
                                   DescribeProgramShape(reducer)));
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!ShapesCompatible(*acc[i], reducer.parameters(i))) {
      return Fail(op, absl::StrCat("expected parameter ", i,
                                   " of the computation to be its result ", i,
                                   ", found ", DescribeProgramShape(reducer)));
    }
    if (!ShapesCompatibleIgnoringFpPrecision(*acc[i], *inits[i])) {
      return Fail(op, absl::StrCat("expected initial value ", i, " of type ",
                                   S(*acc[i]), ", found ", S(*inits[i])));
    }
    const ShapeProto element = Scalar(input_types[i]);
    if (!ShapesCompatibleIgnoringFpPrecision(element,
                                             reducer.parameters(n + i)) ||
        !ShapesCompatibleIgnoringFpPrecision(*acc[i],
                                             reducer.parameters(n + i))) {
      return Fail(op, absl::StrCat("expected parameter ", n + i,
                                   " of the computation to be ", S(element),
                                   ", found ", DescribeProgramShape(reducer)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShapeProto> InferScatterShape(
    ShapeList args, const xla::ProgramShapeProto& update_computation,
    const xla::ScatterDimensionNumbers& dn) {
  const HloOpcode op = HloOpcode::kScatter;
  const int64_t n = static_cast<int64_t>(args.size()) / 2;
  if (n < 1 || static_cast<int64_t>(args.size()) != 2 * n + 1) {
    return Fail(op, absl::StrCat("expected operands, indices and as many "
                                 "updates as operands (an odd count >= 3), "
                                 "found ",
                                 Counted(args.size(), "operand")));
  }
  const ShapeProto& indices = *args[n];
  absl::StatusOr<std::vector<int64_t>> idx =
      ExpandedIndices(op, indices, dn.index_vector_dim());
  if (!idx.ok()) return idx.status();
  const int64_t idx_rank = static_cast<int64_t>(idx->size());
  const auto window = SpanOf(dn.update_window_dims());
  const auto inserted = SpanOf(dn.inserted_window_dims());
  const auto to_operand = SpanOf(dn.scatter_dims_to_operand_dims());
  const auto batching = SpanOf(dn.input_batching_dims());
  const auto idx_batching = SpanOf(dn.scatter_indices_batching_dims());
  std::vector<int> update_types;
  std::vector<ShapeProto> init_shapes;
  for (int64_t k = 0; k < n; ++k) {
    const ShapeProto& operand = *args[k];
    const ShapeProto& updates = *args[n + 1 + k];
    if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
    if (absl::Status s = ExpectArray(op, updates, "updates"); !s.ok()) return s;
    if (!SameDimensions(operand, *args[0])) {
      return Fail(op, absl::StrCat("expected operands of one dimensions, found ",
                                   S(*args[0]), " and ", S(operand)));
    }
    const int64_t rank = Rank(operand);
    const int64_t expected_updates_rank =
        idx_rank - 1 + static_cast<int64_t>(window.size());
    if (Rank(updates) != expected_updates_rank) {
      return Fail(op, absl::StrCat("expected updates of rank ",
                                   expected_updates_rank, ", found ",
                                   S(updates)));
    }
    if (absl::Status s = CheckDimList(op, "update_window_dims", window,
                                      Rank(updates), true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckDimList(op, "inserted_window_dims", inserted,
                                      rank, true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckDimList(op, "input_batching_dims", batching, rank,
                                      true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckDisjoint(op, "inserted_window_dims", inserted,
                                       "input_batching_dims", batching);
        !s.ok()) {
      return s;
    }
    if (static_cast<int64_t>(window.size() + inserted.size() +
                             batching.size()) != rank) {
      return Fail(op, absl::StrCat(
                          "expected update_window_dims, inserted_window_dims "
                          "and input_batching_dims to number the ",
                          rank, " operand dimensions, found ", List(window),
                          ", ", List(inserted), " and ", List(batching)));
    }
    if (static_cast<int64_t>(to_operand.size()) !=
        (*idx)[dn.index_vector_dim()]) {
      return Fail(op, absl::StrCat(
                          "expected scatter_dims_to_operand_dims to have one "
                          "entry per index in dimension index_vector_dim=",
                          dn.index_vector_dim(), " of ", S(indices), " (",
                          (*idx)[dn.index_vector_dim()], "), found ",
                          List(to_operand)));
    }
    if (absl::Status s = CheckDimList(op, "scatter_dims_to_operand_dims",
                                      to_operand, rank, false);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckDisjoint(op, "scatter_dims_to_operand_dims",
                                       to_operand, "input_batching_dims",
                                       batching);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckDimList(op, "scatter_indices_batching_dims",
                                      idx_batching, idx_rank, false);
        !s.ok()) {
      return s;
    }
    if (Contains(idx_batching, dn.index_vector_dim()) ||
        idx_batching.size() != batching.size()) {
      return Fail(op, absl::StrCat("expected one scatter_indices_batching_dims "
                                   "entry per input_batching_dims entry, none "
                                   "of them index_vector_dim=",
                                   dn.index_vector_dim(), ", found ",
                                   List(idx_batching), " and ",
                                   List(batching)));
    }
    for (size_t i = 0; i < batching.size(); ++i) {
      if (operand.dimensions(batching[i]) != (*idx)[idx_batching[i]]) {
        return Fail(op, absl::StrCat("expected batching dimensions of one "
                                     "size, found operand dimension ",
                                     batching[i], " of ", S(operand),
                                     " and indices dimension ",
                                     idx_batching[i], " of ", S(indices)));
      }
    }
    // The window dimensions of the updates fit the operand's dimensions that
    // are neither inserted nor batching.
    std::vector<int64_t> max_window;
    for (int64_t i = 0; i < rank; ++i) {
      if (!Contains(inserted, i) && !Contains(batching, i)) {
        max_window.push_back(operand.dimensions(i));
      }
    }
    for (size_t i = 0; i < window.size(); ++i) {
      if (updates.dimensions(window[i]) > max_window[i]) {
        return Fail(op, absl::StrCat("expected update window dimension ",
                                     window[i], " of ", S(updates), " <= ",
                                     max_window[i], ", found ",
                                     updates.dimensions(window[i])));
      }
    }
    int64_t index_dim = 0;
    for (int64_t i = 0; i < Rank(updates); ++i) {
      if (Contains(window, i)) continue;
      if (index_dim == dn.index_vector_dim()) ++index_dim;
      if (updates.dimensions(i) != (*idx)[index_dim]) {
        return Fail(op, absl::StrCat("expected update scatter dimension ", i,
                                     " of ", S(updates),
                                     " to match indices dimension ", index_dim,
                                     " of ", S(indices), " (",
                                     (*idx)[index_dim], ")"));
      }
      ++index_dim;
    }
    update_types.push_back(updates.element_type());
    init_shapes.push_back(Scalar(operand.element_type()));
  }
  std::vector<const ShapeProto*> inits;
  for (const ShapeProto& s : init_shapes) inits.push_back(&s);
  if (absl::Status s = CheckReducer(op, update_computation, inits, update_types);
      !s.ok()) {
    return s;
  }
  if (n == 1) return *args[0];
  return MakeTupleShape(args.subspan(0, n));
}

absl::StatusOr<ShapeProto> InferGetDimensionSizeShape(const ShapeProto& operand,
                                                      int64_t dimension) {
  const HloOpcode op = HloOpcode::kGetDimensionSize;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!InRange(dimension, Rank(operand))) {
    return Fail(op, absl::StrCat("expected a dimension in [0, ", Rank(operand),
                                 "), found ", dimension));
  }
  if (operand.dimensions(dimension) > INT32_MAX) {
    return Fail(op, absl::StrCat("expected a dimension size that fits in s32, "
                                 "found ",
                                 operand.dimensions(dimension)));
  }
  return Scalar(kS32);
}

absl::StatusOr<ShapeProto> InferSetDimensionSizeShape(const ShapeProto& operand,
                                                      const ShapeProto& size,
                                                      int64_t dimension) {
  const HloOpcode op = HloOpcode::kSetDimensionSize;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (!InRange(dimension, Rank(operand))) {
    return Fail(op, absl::StrCat("expected a dimension in [0, ", Rank(operand),
                                 "), found ", dimension));
  }
  if (!IsScalarShape(size) || size.element_type() != kS32) {
    return Fail(op, absl::StrCat("expected an s32[] size, found ", S(size)));
  }
  ShapeProto out = operand;
  if (out.is_dynamic_dimension_size() != Rank(out)) {
    out.clear_is_dynamic_dimension();
    for (int64_t i = 0; i < Rank(out); ++i) out.add_is_dynamic_dimension(false);
  }
  out.set_is_dynamic_dimension(static_cast<int>(dimension), true);
  return out;
}

// --- Contractions ------------------------------------------------------------------------

namespace {

absl::StatusOr<int> ResultType(HloOpcode op, int from,
                               std::optional<int> preferred) {
  if (!preferred.has_value() || *preferred == from) return from;
  if (!IsArrayElementType(*preferred)) {
    return Fail(op, absl::StrCat("expected an array result type, found ",
                                 ElementTypeName(*preferred)));
  }
  if (!IsFloatingType(from) && !IsComplexType(from) &&
      ElementBitWidth(*preferred) < ElementBitWidth(from)) {
    return Fail(op, absl::StrCat("expected a result type at least as wide as "
                                 "the operands' ",
                                 ElementTypeName(from), ", found ",
                                 ElementTypeName(*preferred)));
  }
  return *preferred;
}

}  // namespace

absl::StatusOr<ShapeProto> InferDotShape(const ShapeProto& lhs,
                                         const ShapeProto& rhs,
                                         const xla::DotDimensionNumbers& dn,
                                         std::optional<int> result_type) {
  const HloOpcode op = HloOpcode::kDot;
  if (absl::Status s = ExpectArray(op, lhs, "lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, rhs, "rhs"); !s.ok()) return s;
  const auto lc = SpanOf(dn.lhs_contracting_dimensions());
  const auto rc = SpanOf(dn.rhs_contracting_dimensions());
  const auto lb = SpanOf(dn.lhs_batch_dimensions());
  const auto rb = SpanOf(dn.rhs_batch_dimensions());
  const std::string shapes = absl::StrCat(" for ", S(lhs), " and ", S(rhs));
  auto side_ok = [](absl::Span<const int64_t> c, absl::Span<const int64_t> b,
                    int64_t rank) {
    absl::flat_hash_set<int64_t> seen;
    for (absl::Span<const int64_t> list : {c, b}) {
      for (int64_t d : list) {
        if (!InRange(d, rank) || !seen.insert(d).second) return false;
      }
    }
    return true;
  };
  if (!side_ok(lc, lb, Rank(lhs)) || !side_ok(rc, rb, Rank(rhs))) {
    return Fail(op, absl::StrCat(
                        "expected distinct contracting and batch dimensions "
                        "within each operand's rank, found lhs_contracting=",
                        List(lc), " lhs_batch=", List(lb), " rhs_contracting=",
                        List(rc), " rhs_batch=", List(rb), shapes));
  }
  if (lc.size() != rc.size()) {
    return Fail(op, absl::StrCat("expected as many lhs as rhs contracting "
                                 "dimensions, found ",
                                 List(lc), " and ", List(rc)));
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dimensions(lc[i]) != rhs.dimensions(rc[i])) {
      return Fail(op, absl::StrCat("expected contracting dimensions of one "
                                   "size, found lhs dimension ",
                                   lc[i], " (", lhs.dimensions(lc[i]),
                                   ") and rhs dimension ", rc[i], " (",
                                   rhs.dimensions(rc[i]), ")", shapes));
    }
  }
  if (lb.size() != rb.size()) {
    return Fail(op, absl::StrCat("expected as many lhs as rhs batch "
                                 "dimensions, found ",
                                 List(lb), " and ", List(rb)));
  }
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dimensions(lb[i]) != rhs.dimensions(rb[i])) {
      return Fail(op, absl::StrCat("expected batch dimensions of one size, "
                                   "found lhs dimension ",
                                   lb[i], " (", lhs.dimensions(lb[i]),
                                   ") and rhs dimension ", rb[i], " (",
                                   rhs.dimensions(rb[i]), ")", shapes));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.dimensions(d));
  for (int64_t i = 0; i < Rank(lhs); ++i) {
    if (!Contains(lc, i) && !Contains(lb, i)) dims.push_back(lhs.dimensions(i));
  }
  for (int64_t i = 0; i < Rank(rhs); ++i) {
    if (!Contains(rc, i) && !Contains(rb, i)) dims.push_back(rhs.dimensions(i));
  }
  absl::StatusOr<int> type = ResultType(
      op, HigherPrecisionType(lhs.element_type(), rhs.element_type()),
      result_type);
  if (!type.ok()) return type.status();
  return MakeArrayShape(*type, dims);
}

absl::StatusOr<std::vector<int64_t>> InferWindowDimensions(
    absl::Span<const int64_t> base, const xla::Window& window) {
  if (window.dimensions_size() != static_cast<int64_t>(base.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a window of ", base.size(),
                     " dimensions, found ", window.dimensions_size()));
  }
  std::vector<int64_t> out;
  for (int i = 0; i < window.dimensions_size(); ++i) {
    const xla::WindowDimension& w = window.dimensions(i);
    auto bad = [&](std::string_view what, int64_t v) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", Sv(what), " in window dimension ", i, ", found ", v));
    };
    if (w.size() <= 0) return bad("a positive size", w.size());
    if (w.stride() <= 0) return bad("a positive stride", w.stride());
    if (w.base_dilation() < 1) return bad("a base dilation >= 1", w.base_dilation());
    if (w.window_dilation() < 1) {
      return bad("a window dilation >= 1", w.window_dilation());
    }
    int64_t dilated_base = 0, padded = 0, dilated_window = 0;
    const bool ok =
        (base[i] == 0 ||
         (MulOk(base[i] - 1, w.base_dilation(), &dilated_base) &&
          AddOk(dilated_base, 1, &dilated_base))) &&
        AddOk(dilated_base, w.padding_low(), &padded) &&
        AddOk(padded, w.padding_high(), &padded) &&
        MulOk(w.size() - 1, w.window_dilation(), &dilated_window) &&
        AddOk(dilated_window, 1, &dilated_window);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected window dimension ", i,
          " to fit in 64 bits, found an overflow"));
    }
    out.push_back(dilated_window > padded
                      ? 0
                      : (padded - dilated_window) / w.stride() + 1);
  }
  return out;
}

absl::StatusOr<ShapeProto> InferConvolutionShape(
    const ShapeProto& lhs, const ShapeProto& rhs, int64_t feature_group_count,
    int64_t batch_group_count, const xla::Window& window,
    const xla::ConvolutionDimensionNumbers& dn,
    std::optional<int> result_type) {
  const HloOpcode op = HloOpcode::kConvolution;
  if (absl::Status s = ExpectArray(op, lhs, "lhs"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, rhs, "rhs"); !s.ok()) return s;
  if (feature_group_count <= 0 || batch_group_count <= 0) {
    return Fail(op, absl::StrCat("expected positive group counts, found "
                                 "feature_group_count=",
                                 feature_group_count, " batch_group_count=",
                                 batch_group_count));
  }
  if (feature_group_count > 1 && batch_group_count > 1) {
    return Fail(op, absl::StrCat("expected at most one group count above 1, "
                                 "found feature_group_count=",
                                 feature_group_count, " batch_group_count=",
                                 batch_group_count));
  }
  const int64_t spatial = dn.input_spatial_dimensions_size();
  if (dn.kernel_spatial_dimensions_size() != spatial ||
      dn.output_spatial_dimensions_size() != spatial) {
    return Fail(op, absl::StrCat("expected as many input, kernel and output "
                                 "spatial dimensions, found ",
                                 spatial, ", ",
                                 dn.kernel_spatial_dimensions_size(), " and ",
                                 dn.output_spatial_dimensions_size()));
  }
  if (window.dimensions_size() != spatial) {
    return Fail(op, absl::StrCat("expected a window of ", spatial,
                                 " dimensions, found ",
                                 window.dimensions_size()));
  }
  const int64_t rank = spatial + 2;
  if (Rank(lhs) != rank || Rank(rhs) != rank) {
    return Fail(op, absl::StrCat("expected operands of rank ", rank,
                                 " (2 + spatial), found ", S(lhs), " and ",
                                 S(rhs)));
  }
  auto is_perm = [rank](int64_t a, int64_t b, const auto& rest) {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    std::vector<int64_t> all = {a, b};
    all.insert(all.end(), rest.begin(), rest.end());
    for (int64_t d : all) {
      if (!InRange(d, rank) || seen[d]) return false;
      seen[d] = true;
    }
    return true;
  };
  if (!is_perm(dn.input_batch_dimension(), dn.input_feature_dimension(),
               dn.input_spatial_dimensions())) {
    return Fail(op, "expected input dimension numbers naming each lhs "
                    "dimension once");
  }
  if (!is_perm(dn.kernel_input_feature_dimension(),
               dn.kernel_output_feature_dimension(),
               dn.kernel_spatial_dimensions())) {
    return Fail(op, "expected kernel dimension numbers naming each rhs "
                    "dimension once");
  }
  if (!is_perm(dn.output_batch_dimension(), dn.output_feature_dimension(),
               dn.output_spatial_dimensions())) {
    return Fail(op, "expected output dimension numbers naming each result "
                    "dimension once");
  }
  const std::string shapes = absl::StrCat(" for ", S(lhs), " and ", S(rhs));
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension());
  const int64_t batch = lhs.dimensions(dn.input_batch_dimension());
  const int64_t k_in = rhs.dimensions(dn.kernel_input_feature_dimension());
  const int64_t k_out = rhs.dimensions(dn.kernel_output_feature_dimension());
  if (k_out % batch_group_count != 0) {
    return Fail(op, absl::StrCat("expected kernel output features (", k_out,
                                 ") divisible by batch_group_count ",
                                 batch_group_count, shapes));
  }
  if (in_features % feature_group_count != 0 ||
      in_features / feature_group_count != k_in) {
    return Fail(op, absl::StrCat(
                        "expected input features (", in_features,
                        ") = kernel input features (", k_in,
                        ") * feature_group_count (", feature_group_count, ")",
                        shapes));
  }
  if (k_out % feature_group_count != 0) {
    return Fail(op, absl::StrCat("expected kernel output features (", k_out,
                                 ") divisible by feature_group_count ",
                                 feature_group_count, shapes));
  }
  if (batch % batch_group_count != 0) {
    return Fail(op, absl::StrCat("expected the input batch (", batch,
                                 ") divisible by batch_group_count ",
                                 batch_group_count, shapes));
  }
  std::vector<int64_t> base;
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t k = rhs.dimensions(dn.kernel_spatial_dimensions(i));
    if (window.dimensions(i).size() != k) {
      return Fail(op, absl::StrCat("expected window size ", k,
                                   " (kernel spatial dimension ", i,
                                   "), found ", window.dimensions(i).size(),
                                   shapes));
    }
    base.push_back(lhs.dimensions(dn.input_spatial_dimensions(i)));
  }
  absl::StatusOr<std::vector<int64_t>> win = InferWindowDimensions(base, window);
  if (!win.ok()) return Fail(op, win.status().message());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  dims[dn.output_batch_dimension()] = batch / batch_group_count;
  dims[dn.output_feature_dimension()] = k_out;
  for (int64_t i = 0; i < spatial; ++i) {
    dims[dn.output_spatial_dimensions(i)] = (*win)[i];
  }
  absl::StatusOr<int> type = ResultType(
      op, HigherPrecisionType(lhs.element_type(), rhs.element_type()),
      result_type);
  if (!type.ok()) return type.status();
  return MakeArrayShape(*type, dims);
}

// --- Reductions and called computations -------------------------------------------------

absl::StatusOr<ShapeProto> InferReduceShape(ShapeList args,
                                            absl::Span<const int64_t> dimensions,
                                            const xla::ProgramShapeProto& reducer) {
  const HloOpcode op = HloOpcode::kReduce;
  if (args.empty() || args.size() % 2 != 0) {
    return Fail(op, absl::StrCat("expected inputs and as many initial values "
                                 "(an even count >= 2), found ",
                                 Counted(args.size(), "operand")));
  }
  const size_t n = args.size() / 2;
  std::vector<int> types;
  for (size_t i = 0; i < n; ++i) {
    if (absl::Status s = ExpectArray(op, *args[i], "input"); !s.ok()) return s;
    if (!SameDimensions(*args[0], *args[i])) {
      return Fail(op, absl::StrCat("expected inputs of one dimensions, found ",
                                   S(*args[0]), " and ", S(*args[i])));
    }
    types.push_back(args[i]->element_type());
  }
  const ShapeProto& arg = *args[0];
  for (int64_t d : dimensions) {
    if (!InRange(d, Rank(arg))) {
      return Fail(op, absl::StrCat("expected dimensions in [0, ", Rank(arg),
                                   "), found ", List(dimensions), " for ",
                                   S(arg)));
    }
  }
  if (absl::Status s = CheckReducer(op, reducer, args.subspan(n), types);
      !s.ok()) {
    return s;
  }
  if (!AllUnique(dimensions)) {
    return Fail(op, absl::StrCat("expected distinct dimensions, found ",
                                 List(dimensions)));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < Rank(arg); ++i) {
    if (!Contains(dimensions, i)) dims.push_back(arg.dimensions(i));
  }
  const ShapeProto& result = reducer.result();
  if (!IsTupleShape(result)) return MakeArrayShape(result.element_type(), dims);
  std::vector<ShapeProto> parts;
  for (const ShapeProto& e : result.tuple_shapes()) {
    parts.push_back(MakeArrayShape(e.element_type(), dims));
  }
  return MakeTupleShape(parts);
}

absl::StatusOr<ShapeProto> InferReduceWindowShape(
    ShapeList args, const xla::Window& window,
    const xla::ProgramShapeProto& reducer) {
  const HloOpcode op = HloOpcode::kReduceWindow;
  if (args.empty() || args.size() % 2 != 0) {
    return Fail(op, absl::StrCat("expected inputs and as many initial values "
                                 "(an even count >= 2), found ",
                                 Counted(args.size(), "operand")));
  }
  const size_t n = args.size() / 2;
  std::vector<int> types;
  for (size_t i = 0; i < n; ++i) {
    if (absl::Status s = ExpectArray(op, *args[i], "input"); !s.ok()) return s;
    if (!SameDimensions(*args[0], *args[i])) {
      return Fail(op, absl::StrCat("expected inputs of one dimensions, found ",
                                   S(*args[0]), " and ", S(*args[i])));
    }
    types.push_back(args[i]->element_type());
  }
  if (absl::Status s = CheckReducer(op, reducer, args.subspan(n), types);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<int64_t>> dims =
      InferWindowDimensions(Dims(*args[0]), window);
  if (!dims.ok()) return Fail(op, dims.status().message());
  std::vector<ShapeProto> parts;
  for (size_t i = 0; i < n; ++i) {
    parts.push_back(MakeArrayShape(args[n + i]->element_type(), *dims));
  }
  if (n == 1) return parts[0];
  return MakeTupleShape(parts);
}

absl::StatusOr<ShapeProto> InferSelectAndScatterShape(
    const ShapeProto& operand, const xla::ProgramShapeProto& select,
    const xla::Window& window, const ShapeProto& source,
    const ShapeProto& init, const xla::ProgramShapeProto& scatter) {
  const HloOpcode op = HloOpcode::kSelectAndScatter;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, source, "source"); !s.ok()) return s;
  const ShapeProto element = Scalar(operand.element_type());
  if (select.parameters_size() != 2 ||
      !ShapesCompatible(select.result(), Scalar(kPred)) ||
      !ShapesCompatibleIgnoringFpPrecision(element, select.parameters(0)) ||
      !ShapesCompatibleIgnoringFpPrecision(element, select.parameters(1))) {
    return Fail(op, absl::StrCat("expected a select computation (", S(element),
                                 ", ", S(element), ") -> pred[], found ",
                                 DescribeProgramShape(select)));
  }
  const ShapeProto* inits[] = {&init};
  const int types[] = {source.element_type()};
  if (absl::Status s = CheckReducer(op, scatter, inits, types); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<int64_t>> dims =
      InferWindowDimensions(Dims(operand), window);
  if (!dims.ok()) return Fail(op, dims.status().message());
  const ShapeProto windowed = MakeArrayShape(operand.element_type(), *dims);
  if (!ShapesCompatibleIgnoringFpPrecision(source, windowed)) {
    return Fail(op, absl::StrCat("expected a source of the windowed operand's "
                                 "shape ",
                                 S(windowed), ", found ", S(source)));
  }
  return operand;
}

absl::StatusOr<ShapeProto> InferSortShape(
    ShapeList operands, int64_t dimension,
    const xla::ProgramShapeProto& comparator) {
  const HloOpcode op = HloOpcode::kSort;
  if (operands.empty()) return Fail(op, "expected operands, found none");
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
    if (!SameDimensions(*operands[0], *s)) {
      return Fail(op, absl::StrCat("expected operands of one dimensions, found ",
                                   S(*operands[0]), " and ", S(*s)));
    }
  }
  if (!InRange(dimension, Rank(*operands[0]))) {
    return Fail(op, absl::StrCat("expected a dimension in [0, ",
                                 Rank(*operands[0]), "), found ", dimension));
  }
  const int64_t n = static_cast<int64_t>(operands.size());
  bool ok = comparator.parameters_size() == 2 * n &&
            ShapesCompatible(comparator.result(), Scalar(kPred));
  for (int64_t p = 0; ok && p < 2 * n; ++p) {
    ok = ShapesCompatibleIgnoringFpPrecision(
        Scalar(operands[p / 2]->element_type()), comparator.parameters(p));
  }
  if (!ok) {
    std::vector<std::string> want;
    for (int64_t p = 0; p < 2 * n; ++p) {
      want.push_back(S(Scalar(operands[p / 2]->element_type())));
    }
    return Fail(op, absl::StrCat("expected a comparator (",
                                 absl::StrJoin(want, ", "),
                                 ") -> pred[], found ",
                                 DescribeProgramShape(comparator)));
  }
  if (n == 1) return *operands[0];
  return MakeTupleShape(operands);
}

absl::StatusOr<ShapeProto> InferTopKShape(const ShapeProto& operand, int64_t k) {
  const HloOpcode op = HloOpcode::kTopK;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (Rank(operand) == 0) {
    return Fail(op, absl::StrCat("expected an operand of rank >= 1, found ",
                                 S(operand)));
  }
  const int64_t last = operand.dimensions(Rank(operand) - 1);
  if (k < 0 || k > last) {
    return Fail(op, absl::StrCat("expected k in [0, ", last, "] for ",
                                 S(operand), ", found ", k));
  }
  std::vector<int64_t> dims(Dims(operand).begin(), Dims(operand).end());
  dims.back() = k;
  return MakeTupleShape(std::vector<ShapeProto>{
      MakeArrayShape(operand.element_type(), dims), MakeArrayShape(kS32, dims)});
}

absl::StatusOr<ShapeProto> InferMapShape(ShapeList operands,
                                         const xla::ProgramShapeProto& computation,
                                         absl::Span<const int64_t> dimensions) {
  const HloOpcode op = HloOpcode::kMap;
  if (operands.empty()) return Fail(op, "expected operands, found none");
  const ShapeProto* arg = operands[0];
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
    if (SameDimensions(*s, *arg)) continue;
    // XLA lets a scalar of the same element type stand beside arrays.
    if (SameTypeIgnoringFp(s->element_type(), arg->element_type())) {
      if (IsScalarShape(*s)) continue;
      if (IsScalarShape(*arg)) {
        arg = s;
        continue;
      }
    }
    return Fail(op, absl::StrCat("expected operands of one dimensions, found ",
                                 S(*operands[0]), " and ", S(*s)));
  }
  if (static_cast<int64_t>(dimensions.size()) != Rank(*arg)) {
    return Fail(op, absl::StrCat("expected dimensions 0 to ", Rank(*arg) - 1,
                                 ", found ", List(dimensions)));
  }
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] != static_cast<int64_t>(i)) {
      return Fail(op, absl::StrCat("expected dimensions 0 to ", Rank(*arg) - 1,
                                   ", found ", List(dimensions)));
    }
  }
  if (computation.parameters_size() != static_cast<int64_t>(operands.size())) {
    return Fail(op, absl::StrCat("expected a computation of ", operands.size(),
                                 " parameters, found ",
                                 DescribeProgramShape(computation)));
  }
  if (!IsScalarShape(computation.result())) {
    return Fail(op, absl::StrCat("expected a computation returning a scalar, "
                                 "found ",
                                 DescribeProgramShape(computation)));
  }
  for (int i = 0; i < computation.parameters_size(); ++i) {
    const ShapeProto& p = computation.parameters(i);
    if (!IsScalarShape(p) ||
        !SameTypeIgnoringFp(p.element_type(), operands[i]->element_type())) {
      return Fail(op, absl::StrCat("expected parameter ", i,
                                   " of the computation to be ",
                                   S(Scalar(operands[i]->element_type())),
                                   ", found ",
                                   DescribeProgramShape(computation)));
    }
  }
  return MakeArrayShape(computation.result().element_type(), Dims(*arg));
}

absl::StatusOr<ShapeProto> InferTupleShape(ShapeList operands) {
  return MakeTupleShape(operands);
}

absl::StatusOr<ShapeProto> InferGetTupleElementShape(const ShapeProto& operand,
                                                     int64_t index) {
  const HloOpcode op = HloOpcode::kGetTupleElement;
  if (!IsTupleShape(operand)) {
    return Fail(op, absl::StrCat("expected a tuple operand, found ",
                                 S(operand)));
  }
  if (!InRange(index, operand.tuple_shapes_size())) {
    return Fail(op, absl::StrCat("expected a tuple index in [0, ",
                                 operand.tuple_shapes_size(), ") for ",
                                 S(operand), ", found ", index));
  }
  return operand.tuple_shapes(static_cast<int>(index));
}

absl::StatusOr<ShapeProto> InferCallShape(ShapeList operands,
                                          const xla::ProgramShapeProto& callee) {
  const HloOpcode op = HloOpcode::kCall;
  if (callee.parameters_size() != static_cast<int64_t>(operands.size())) {
    return Fail(op, absl::StrCat("expected a computation of ", operands.size(),
                                 " parameters, found ",
                                 DescribeProgramShape(callee)));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!ShapesCompatible(*operands[i], callee.parameters(i))) {
      return Fail(op, absl::StrCat("expected operand ", i, " of parameter ", i,
                                   "'s shape ", S(callee.parameters(i)),
                                   ", found ", S(*operands[i])));
    }
  }
  return callee.result();
}

absl::StatusOr<ShapeProto> InferWhileShape(const xla::ProgramShapeProto& condition,
                                           const xla::ProgramShapeProto& body,
                                           const ShapeProto& init) {
  const HloOpcode op = HloOpcode::kWhile;
  if (condition.parameters_size() != 1) {
    return Fail(op, absl::StrCat("expected a condition of 1 parameter, found ",
                                 DescribeProgramShape(condition)));
  }
  if (body.parameters_size() != 1) {
    return Fail(op, absl::StrCat("expected a body of 1 parameter, found ",
                                 DescribeProgramShape(body)));
  }
  if (!ShapesCompatible(condition.result(), Scalar(kPred))) {
    return Fail(op, absl::StrCat("expected a condition returning pred[], "
                                 "found ",
                                 DescribeProgramShape(condition)));
  }
  if (!ShapesCompatible(body.result(), body.parameters(0)) ||
      !ShapesCompatible(condition.parameters(0), init) ||
      !ShapesCompatible(body.parameters(0), init)) {
    return Fail(op, absl::StrCat("expected the operand, the condition's and "
                                 "the body's parameter and the body's result "
                                 "of one shape, found operand ",
                                 S(init), ", condition ",
                                 DescribeProgramShape(condition), ", body ",
                                 DescribeProgramShape(body)));
  }
  return init;
}

absl::StatusOr<ShapeProto> InferConditionalShape(
    const ShapeProto& branch_index,
    absl::Span<const xla::ProgramShapeProto> branches, ShapeList operands) {
  const HloOpcode op = HloOpcode::kConditional;
  const bool is_pred = ShapesCompatible(branch_index, Scalar(kPred));
  if (!is_pred && !ShapesCompatible(branch_index, Scalar(kS32))) {
    return Fail(op, absl::StrCat("expected a pred[] or s32[] branch index, "
                                 "found ",
                                 S(branch_index)));
  }
  if (is_pred ? branches.size() != 2 : branches.empty()) {
    return Fail(op, absl::StrCat("expected ",
                                 is_pred ? "2 branch computations for a pred "
                                           "index"
                                         : "at least 1 branch computation",
                                 ", found ", branches.size()));
  }
  if (operands.size() != branches.size()) {
    return Fail(op, absl::StrCat("expected one operand per branch (",
                                 branches.size(), "), found ",
                                 operands.size()));
  }
  for (size_t j = 0; j < branches.size(); ++j) {
    if (branches[j].parameters_size() != 1) {
      return Fail(op, absl::StrCat("expected branch ", j,
                                   " to take 1 parameter, found ",
                                   DescribeProgramShape(branches[j])));
    }
    if (!ShapesCompatible(branches[j].parameters(0), *operands[j])) {
      return Fail(op, absl::StrCat("expected branch ", j, " to take operand ",
                                   j + 1, "'s shape ", S(*operands[j]),
                                   ", found ",
                                   DescribeProgramShape(branches[j])));
    }
    if (!ShapesCompatible(branches[j].result(), branches[0].result())) {
      return Fail(op, absl::StrCat("expected every branch to return ",
                                   S(branches[0].result()), ", found branch ",
                                   j, " returning ",
                                   S(branches[j].result())));
    }
  }
  return branches[0].result();
}

absl::StatusOr<ShapeProto> InferFusionShape(ShapeList operands,
                                            const xla::ProgramShapeProto& fused) {
  const HloOpcode op = HloOpcode::kFusion;
  if (fused.parameters_size() > static_cast<int64_t>(operands.size())) {
    return Fail(op, absl::StrCat("expected a fused computation of at most ",
                                 Counted(operands.size(), "parameter"),
                                 ", found ",
                                 DescribeProgramShape(fused)));
  }
  for (int i = 0; i < fused.parameters_size(); ++i) {
    if (!ShapesCompatible(fused.parameters(i), *operands[i])) {
      return Fail(op, absl::StrCat("expected fused parameter ", i,
                                   " of operand ", i, "'s shape ",
                                   S(*operands[i]), ", found ",
                                   S(fused.parameters(i))));
    }
  }
  return fused.result();
}

// --- Batch norm ------------------------------------------------------------------------------

namespace {

absl::Status CheckBatchNormOperand(HloOpcode op, const ShapeProto& operand,
                                   int64_t feature_index) {
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (Rank(operand) < 1) {
    return Fail(op, absl::StrCat("expected an operand of rank >= 1, found ",
                                 S(operand)));
  }
  if (!InRange(feature_index, Rank(operand))) {
    return Fail(op, absl::StrCat("expected a feature_index in [0, ",
                                 Rank(operand), "), found ", feature_index));
  }
  if (!IsFloatingType(operand.element_type())) {
    return Fail(op, absl::StrCat("expected a floating-point operand, found ",
                                 S(operand)));
  }
  return absl::OkStatus();
}

absl::Status CheckFeatureVector(HloOpcode op, std::string_view role,
                                const ShapeProto& v, const ShapeProto& operand,
                                int64_t feature_index) {
  const int64_t features = operand.dimensions(feature_index);
  if (!IsArrayShape(v) || Rank(v) != 1 ||
      !SameTypeIgnoringFp(v.element_type(), operand.element_type()) ||
      v.dimensions(0) != features) {
    return Fail(op, absl::StrCat("expected ", Sv(role), " ",
                                 ElementTypeName(operand.element_type()), "[",
                                 features, "] (the features of ", S(operand),
                                 "), found ", S(v)));
  }
  return absl::OkStatus();
}

ShapeProto FeatureShape(const ShapeProto& operand, int64_t feature_index) {
  return MakeArrayShape(operand.element_type(),
                        {operand.dimensions(feature_index)});
}

}  // namespace

absl::StatusOr<ShapeProto> InferBatchNormTrainingShape(
    const ShapeProto& operand, const ShapeProto& scale,
    const ShapeProto& offset, int64_t feature_index) {
  const HloOpcode op = HloOpcode::kBatchNormTraining;
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  for (auto [role, v] : {std::pair<const char*, const ShapeProto*>{"scale", &scale},
                         {"offset", &offset}}) {
    if (absl::Status s = CheckFeatureVector(op, role, *v, operand, feature_index);
        !s.ok()) {
      return s;
    }
  }
  const ShapeProto f = FeatureShape(operand, feature_index);
  return MakeTupleShape(std::vector<ShapeProto>{operand, f, f});
}

absl::StatusOr<ShapeProto> InferBatchNormInferenceShape(
    const ShapeProto& operand, const ShapeProto& scale,
    const ShapeProto& offset, const ShapeProto& mean,
    const ShapeProto& variance, int64_t feature_index) {
  const HloOpcode op = HloOpcode::kBatchNormInference;
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  for (auto [role, v] : {std::pair<const char*, const ShapeProto*>{"scale", &scale},
                         {"offset", &offset},
                         {"mean", &mean},
                         {"variance", &variance}}) {
    if (absl::Status s = CheckFeatureVector(op, role, *v, operand, feature_index);
        !s.ok()) {
      return s;
    }
  }
  return operand;
}

absl::StatusOr<ShapeProto> InferBatchNormGradShape(
    const ShapeProto& operand, const ShapeProto& scale, const ShapeProto& mean,
    const ShapeProto& variance, const ShapeProto& grad_output,
    int64_t feature_index) {
  const HloOpcode op = HloOpcode::kBatchNormGrad;
  if (absl::Status s = CheckBatchNormOperand(op, operand, feature_index);
      !s.ok()) {
    return s;
  }
  if (!IsArrayShape(grad_output) ||
      !SameTypeIgnoringFp(grad_output.element_type(), operand.element_type()) ||
      !SameDimensions(grad_output, operand)) {
    return Fail(op, absl::StrCat("expected a grad_output of the operand's "
                                 "shape ",
                                 S(operand), ", found ", S(grad_output)));
  }
  for (auto [role, v] : {std::pair<const char*, const ShapeProto*>{"scale", &scale},
                         {"mean", &mean},
                         {"variance", &variance}}) {
    if (absl::Status s = CheckFeatureVector(op, role, *v, operand, feature_index);
        !s.ok()) {
      return s;
    }
  }
  const ShapeProto f = FeatureShape(operand, feature_index);
  return MakeTupleShape(std::vector<ShapeProto>{operand, f, f});
}

// --- Collectives ------------------------------------------------------------------------------

absl::StatusOr<ShapeProto> InferAllReduceShape(ShapeList operands) {
  const HloOpcode op = HloOpcode::kAllReduce;
  if (operands.empty()) return Fail(op, "expected operands, found none");
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
  }
  if (operands.size() == 1) return *operands[0];
  return MakeTupleShape(operands);
}

namespace {

absl::StatusOr<ShapeProto> ScaleDimension(HloOpcode op, ShapeList operands,
                                          int64_t dimension, int64_t count,
                                          bool divide) {
  if (operands.empty()) return Fail(op, "expected operands, found none");
  if (count <= 0) {
    return Fail(op, absl::StrCat("expected a positive shard count, found ",
                                 count));
  }
  std::vector<ShapeProto> out;
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
    if (!InRange(dimension, Rank(*s))) {
      return Fail(op, absl::StrCat("expected a dimension in [0, ", Rank(*s),
                                   ") for ", S(*s), ", found ", dimension));
    }
    std::vector<int64_t> dims(Dims(*s).begin(), Dims(*s).end());
    if (divide) {
      if (dims[dimension] % count != 0) {
        return Fail(op, absl::StrCat("expected dimension ", dimension, " of ",
                                     S(*s), " divisible by the shard count ",
                                     count));
      }
      dims[dimension] /= count;
    } else if (!MulOk(dims[dimension], count, &dims[dimension])) {
      return Overflow(op, "a gathered dimension");
    }
    out.push_back(MakeArrayShape(s->element_type(), dims));
  }
  if (out.size() == 1) return out[0];
  return MakeTupleShape(out);
}

}  // namespace

absl::StatusOr<ShapeProto> InferAllGatherShape(ShapeList operands,
                                               int64_t dimension,
                                               int64_t shard_count) {
  return ScaleDimension(HloOpcode::kAllGather, operands, dimension, shard_count,
                        false);
}

absl::StatusOr<ShapeProto> InferAllGatherStartShape(ShapeList operands,
                                                    int64_t dimension,
                                                    int64_t shard_count) {
  absl::StatusOr<ShapeProto> gathered =
      ScaleDimension(HloOpcode::kAllGatherStart, operands, dimension,
                     shard_count, false);
  if (!gathered.ok()) return gathered.status();
  const ShapeProto input =
      operands.size() == 1 ? *operands[0] : MakeTupleShape(operands);
  return MakeTupleShape(std::vector<ShapeProto>{input, *gathered});
}

absl::StatusOr<ShapeProto> InferReduceScatterShape(ShapeList operands,
                                                   int64_t dimension,
                                                   int64_t shard_count) {
  return ScaleDimension(HloOpcode::kReduceScatter, operands, dimension,
                        shard_count, true);
}

absl::StatusOr<ShapeProto> InferAllToAllShape(const ShapeProto& operand,
                                              int64_t split_dimension,
                                              int64_t concat_dimension,
                                              int64_t split_count) {
  const HloOpcode op = HloOpcode::kAllToAll;
  if (absl::Status s = ExpectArray(op, operand, "operand"); !s.ok()) return s;
  if (split_count <= 0) {
    return Fail(op, absl::StrCat("expected a positive split count, found ",
                                 split_count));
  }
  if (!InRange(split_dimension, Rank(operand)) ||
      !InRange(concat_dimension, Rank(operand))) {
    return Fail(op, absl::StrCat("expected split and concat dimensions in [0, ",
                                 Rank(operand), ") for ", S(operand),
                                 ", found ", split_dimension, " and ",
                                 concat_dimension));
  }
  std::vector<int64_t> dims(Dims(operand).begin(), Dims(operand).end());
  if (dims[split_dimension] % split_count != 0) {
    return Fail(op, absl::StrCat("expected split dimension ", split_dimension,
                                 " of ", S(operand),
                                 " divisible by the split count ",
                                 split_count));
  }
  dims[split_dimension] /= split_count;
  if (!MulOk(dims[concat_dimension], split_count, &dims[concat_dimension])) {
    return Overflow(op, "a concatenated dimension");
  }
  return MakeArrayShape(operand.element_type(), dims);
}

absl::StatusOr<ShapeProto> InferAllToAllTupleShape(ShapeList operands) {
  const HloOpcode op = HloOpcode::kAllToAll;
  if (operands.empty()) return Fail(op, "expected operands, found none");
  for (const ShapeProto* s : operands) {
    if (absl::Status st = ExpectArray(op, *s, "operand"); !st.ok()) return st;
    if (!ShapesCompatible(*s, *operands[0])) {
      return Fail(op, absl::StrCat("expected operands of one shape, found ",
                                   S(*operands[0]), " and ", S(*s)));
    }
  }
  return MakeTupleShape(operands);
}

absl::StatusOr<ShapeProto> InferCollectivePermuteShape(ShapeList operands) {
  const HloOpcode op = HloOpcode::kCollectivePermute;
  if (operands.size() == 1) {
    if (IsTokenShape(*operands[0])) {
      return Fail(op, absl::StrCat("expected an array or tuple operand, found ",
                                   S(*operands[0])));
    }
    return *operands[0];
  }
  if (operands.size() == 4) return *operands[1];
  return Fail(op, absl::StrCat("expected 1 operand (or 4 in place), found ",
                               operands.size()));
}

absl::StatusOr<ShapeProto> InferCollectivePermuteStartShape(
    ShapeList operands, absl::Span<const ShapeProto> context) {
  const HloOpcode op = HloOpcode::kCollectivePermuteStart;
  if (operands.size() != 1 && operands.size() != 4) {
    return Fail(op, absl::StrCat("expected 1 operand (or 4 in place), found ",
                                 operands.size()));
  }
  std::vector<ShapeProto> parts = {*operands[0],
                                   *operands[operands.size() == 1 ? 0 : 1]};
  if (context.empty()) {
    parts.push_back(Scalar(kU32));
    parts.push_back(Scalar(kU32));
  } else {
    parts.insert(parts.end(), context.begin(), context.end());
  }
  return MakeTupleShape(parts);
}

absl::StatusOr<ShapeProto> InferAsyncCollectiveDoneShape(HloOpcode op,
                                                         const ShapeProto& start) {
  if (!IsTupleShape(start) || start.tuple_shapes_size() < 2) {
    return Fail(op, absl::StrCat("expected a tuple operand of at least 2 "
                                 "elements, found ",
                                 S(start)));
  }
  return start.tuple_shapes(1);
}

// --- Everything else ---------------------------------------------------------------------------

absl::StatusOr<ShapeProto> InferRngShape(const ShapeProto& a,
                                         const ShapeProto& b, int distribution,
                                         const ShapeProto& result) {
  const HloOpcode op = HloOpcode::kRng;
  if (!IsScalarShape(a) || !IsScalarShape(b)) {
    return Fail(op, absl::StrCat("expected two scalar operands, found ", S(a),
                                 " and ", S(b)));
  }
  if (a.element_type() != b.element_type()) {
    return Fail(op, absl::StrCat("expected operands of one element type, found ",
                                 S(a), " and ", S(b)));
  }
  if (!IsArrayShape(result)) {
    return Fail(op, absl::StrCat("expected an array result, found ",
                                 S(result)));
  }
  const int t = a.element_type();
  if (distribution == xla::RNG_UNIFORM) {
    if (!IsFloatingType(t) && !IsIntegralType(t) && t != kPred) {
      return Fail(op, absl::StrCat("expected numeric or pred operands for "
                                   "RNG_UNIFORM, found ",
                                   S(a)));
    }
  } else if (distribution == xla::RNG_NORMAL) {
    if (!IsFloatingType(t)) {
      return Fail(op, absl::StrCat("expected floating-point operands for "
                                   "RNG_NORMAL, found ",
                                   S(a)));
    }
  } else {
    return Fail(op, absl::StrCat("expected distribution RNG_UNIFORM or "
                                 "RNG_NORMAL, found ",
                                 distribution));
  }
  return MakeArrayShape(t, Dims(result));
}

absl::StatusOr<ShapeProto> InferRngBitGeneratorShape(const ShapeProto& state,
                                                     const ShapeProto& output) {
  const HloOpcode op = HloOpcode::kRngBitGenerator;
  if (absl::Status s = ExpectArray(op, state, "state"); !s.ok()) return s;
  if (absl::Status s = ExpectArray(op, output, "output"); !s.ok()) return s;
  return MakeTupleShape(std::vector<ShapeProto>{state, output});
}

ShapeProto InferRngGetAndUpdateStateShape() { return MakeArrayShape(kU64, {2}); }

ShapeProto InferReplicaIdShape() { return Scalar(kU32); }

absl::StatusOr<ShapeProto> InferAddDependencyShape(const ShapeProto& operand,
                                                   const ShapeProto& token) {
  if (!IsTokenShape(token)) {
    return Fail(HloOpcode::kAddDependency,
                absl::StrCat("expected a token operand 1, found ", S(token)));
  }
  return operand;
}

absl::StatusOr<ShapeProto> InferCholeskyShape(const ShapeProto& a) {
  const HloOpcode op = HloOpcode::kCholesky;
  if (!IsArrayShape(a) ||
      (!IsFloatingType(a.element_type()) && !IsComplexType(a.element_type()))) {
    return Fail(op, absl::StrCat("expected a floating-point or complex "
                                 "operand, found ",
                                 S(a)));
  }
  if (Rank(a) < 2 || a.dimensions(Rank(a) - 1) != a.dimensions(Rank(a) - 2)) {
    return Fail(op, absl::StrCat("expected square minor dimensions of rank >= "
                                 "2, found ",
                                 S(a)));
  }
  return a;
}

absl::StatusOr<ShapeProto> InferTriangularSolveShape(
    const ShapeProto& a, const ShapeProto& b,
    const xla::TriangularSolveOptions& options) {
  const HloOpcode op = HloOpcode::kTriangularSolve;
  if (!IsArrayShape(a) || !IsArrayShape(b) ||
      (!IsFloatingType(a.element_type()) && !IsComplexType(a.element_type())) ||
      a.element_type() != b.element_type()) {
    return Fail(op, absl::StrCat("expected floating-point or complex operands "
                                 "of one element type, found ",
                                 S(a), " and ", S(b)));
  }
  if (Rank(a) < 2 || Rank(b) != Rank(a)) {
    return Fail(op, absl::StrCat("expected operands of one rank >= 2, found ",
                                 S(a), " and ", S(b)));
  }
  const int64_t r = Rank(a);
  if (a.dimensions(r - 1) != a.dimensions(r - 2)) {
    return Fail(op, absl::StrCat("expected square minor dimensions of a, "
                                 "found ",
                                 S(a)));
  }
  if (a.dimensions(r - 1) != b.dimensions(r - (options.left_side() ? 2 : 1))) {
    return Fail(op, absl::StrCat("expected a and b to share their ",
                                 options.left_side() ? "row" : "column",
                                 " dimension, found ", S(a), " and ", S(b)));
  }
  for (int64_t i = 0; i < r - 2; ++i) {
    if (a.dimensions(i) != b.dimensions(i)) {
      return Fail(op, absl::StrCat("expected equal batch dimensions, found ",
                                   S(a), " and ", S(b)));
    }
  }
  const int t = options.transpose_a();
  if (t != xla::TriangularSolveOptions::NO_TRANSPOSE &&
      t != xla::TriangularSolveOptions::TRANSPOSE &&
      t != xla::TriangularSolveOptions::ADJOINT) {
    return Fail(op, absl::StrCat("expected transpose_a NO_TRANSPOSE, TRANSPOSE "
                                 "or ADJOINT, found ",
                                 t));
  }
  return b;
}

absl::StatusOr<ShapeProto> InferFftShape(const ShapeProto& in, int fft_type,
                                         absl::Span<const int64_t> length) {
  const HloOpcode op = HloOpcode::kFft;
  if (absl::Status s = ExpectArray(op, in, "operand"); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(length.size());
  if (n < 1 || n > 3) {
    return Fail(op, absl::StrCat("expected an fft_length of 1 to 3 entries, "
                                 "found ",
                                 List(length)));
  }
  if (Rank(in) < n) {
    return Fail(op, absl::StrCat("expected an operand of rank >= ", n,
                                 ", found ", S(in)));
  }
  const int t = in.element_type();
  const int64_t r = Rank(in);
  switch (fft_type) {
    case xla::FFT:
    case xla::IFFT:
      if (!IsComplexType(t)) {
        return Fail(op, absl::StrCat("expected a complex operand, found ",
                                     S(in)));
      }
      return in;
    case xla::RFFT: {
      if (t != kF32 && t != kF64) {
        return Fail(op, absl::StrCat("expected an f32 or f64 operand for RFFT, "
                                     "found ",
                                     S(in)));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (in.dimensions(r - n + i) != length[i]) {
          return Fail(op, absl::StrCat("expected minor dimensions ",
                                       List(length), " (fft_length), found ",
                                       S(in)));
        }
      }
      std::vector<int64_t> dims(Dims(in).begin(), Dims(in).end());
      if (length[n - 1] != 0) dims.back() = length[n - 1] / 2 + 1;
      return MakeArrayShape(t == kF32 ? kC64 : kC128, dims);
    }
    case xla::IRFFT: {
      if (!IsComplexType(t)) {
        return Fail(op, absl::StrCat("expected a complex operand, found ",
                                     S(in)));
      }
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (in.dimensions(r - n + i) != length[i]) {
          return Fail(op, absl::StrCat("expected minor dimensions matching "
                                       "fft_length ",
                                       List(length), ", found ", S(in)));
        }
      }
      const int64_t last = in.dimensions(r - 1);
      if ((last != 0 || length[n - 1] != 0) &&
          last != length[n - 1] / 2 + 1) {
        return Fail(op, absl::StrCat("expected a minor dimension of ",
                                     length[n - 1] / 2 + 1,
                                     " (fft_length / 2 + 1), found ", S(in)));
      }
      std::vector<int64_t> dims(Dims(in).begin(), Dims(in).end());
      dims.back() = length[n - 1];
      return MakeArrayShape(t == kC64 ? kF32 : kF64, dims);
    }
    default:
      return Fail(op, absl::StrCat("expected fft_type FFT, IFFT, RFFT or "
                                   "IRFFT, found ",
                                   fft_type));
  }
}

ShapeProto InferCopyStartShape(const ShapeProto& operand) {
  return MakeTupleShape(
      std::vector<ShapeProto>{operand, operand, Scalar(kU32)});
}

absl::StatusOr<ShapeProto> InferCopyDoneShape(const ShapeProto& start) {
  const HloOpcode op = HloOpcode::kCopyDone;
  if (!IsTupleShape(start) || start.tuple_shapes_size() < 2 ||
      !ShapesCompatible(start.tuple_shapes(0), start.tuple_shapes(1))) {
    return Fail(op, absl::StrCat("expected a copy-start tuple whose elements 0 "
                                 "and 1 have one shape, found ",
                                 S(start)));
  }
  return start.tuple_shapes(0);
}

absl::StatusOr<ShapeProto> InferSendShape(const ShapeProto& data,
                                          const ShapeProto& token) {
  if (!IsTokenShape(token)) {
    return Fail(HloOpcode::kSend,
                absl::StrCat("expected a token operand 1, found ", S(token)));
  }
  return MakeTupleShape(
      std::vector<ShapeProto>{data, Scalar(kU32), MakeTokenShape()});
}

absl::StatusOr<ShapeProto> InferRecvShape(const ShapeProto& data,
                                          const ShapeProto& token) {
  if (!IsTokenShape(token)) {
    return Fail(HloOpcode::kRecv,
                absl::StrCat("expected a token operand, found ", S(token)));
  }
  return MakeTupleShape(
      std::vector<ShapeProto>{data, Scalar(kU32), MakeTokenShape()});
}

absl::StatusOr<ShapeProto> InferRecvDoneShape(const ShapeProto& recv) {
  if (!IsTupleShape(recv) || recv.tuple_shapes_size() < 1) {
    return Fail(HloOpcode::kRecvDone,
                absl::StrCat("expected a recv tuple operand, found ", S(recv)));
  }
  return MakeTupleShape(
      std::vector<ShapeProto>{recv.tuple_shapes(0), MakeTokenShape()});
}

absl::StatusOr<ShapeProto> InferInfeedShape(const ShapeProto& data,
                                            const ShapeProto& token) {
  if (!IsTokenShape(token)) {
    return Fail(HloOpcode::kInfeed,
                absl::StrCat("expected a token operand, found ", S(token)));
  }
  return MakeTupleShape(std::vector<ShapeProto>{data, MakeTokenShape()});
}

absl::StatusOr<ShapeProto> InferOutfeedShape(const ShapeProto& data,
                                             const ShapeProto& token,
                                             const ShapeProto& outfeed_shape) {
  const HloOpcode op = HloOpcode::kOutfeed;
  if (!IsTokenShape(token)) {
    return Fail(op, absl::StrCat("expected a token operand 1, found ", S(token)));
  }
  if (!ShapesCompatible(data, outfeed_shape)) {
    return Fail(op, absl::StrCat("expected outfeed_shape to be operand 0's "
                                 "shape ",
                                 S(data), ", found ", S(outfeed_shape)));
  }
  return MakeTokenShape();
}

absl::StatusOr<ShapeProto> InferAsyncStartShape(
    ShapeList operands, const xla::ProgramShapeProto& wrapped,
    absl::Span<const ShapeProto> context) {
  const HloOpcode op = HloOpcode::kAsyncStart;
  if (wrapped.parameters_size() != static_cast<int64_t>(operands.size())) {
    return Fail(op, absl::StrCat("expected a wrapped computation of ",
                                 operands.size(), " parameters, found ",
                                 DescribeProgramShape(wrapped)));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!ShapesCompatible(*operands[i], wrapped.parameters(i))) {
      return Fail(op, absl::StrCat("expected operand ", i, " of parameter ", i,
                                   "'s shape ", S(wrapped.parameters(i)),
                                   ", found ", S(*operands[i])));
    }
  }
  std::vector<ShapeProto> params(wrapped.parameters().begin(),
                                 wrapped.parameters().end());
  std::vector<ShapeProto> parts = {MakeTupleShape(params), wrapped.result()};
  parts.insert(parts.end(), context.begin(), context.end());
  return MakeTupleShape(parts);
}

absl::StatusOr<ShapeProto> InferAsyncDoneShape(
    const ShapeProto& start, const xla::ProgramShapeProto& wrapped) {
  const HloOpcode op = HloOpcode::kAsyncDone;
  if (!IsTupleShape(start) || start.tuple_shapes_size() < 2 ||
      !ShapesCompatible(start.tuple_shapes(1), wrapped.result())) {
    return Fail(op, absl::StrCat("expected an async tuple whose element 1 is "
                                 "the wrapped result ",
                                 S(wrapped.result()), ", found ", S(start)));
  }
  return start.tuple_shapes(1);
}

}  // namespace decomposed::hlo
