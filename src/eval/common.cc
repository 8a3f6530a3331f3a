// What the op families share (src/eval/ops.h).
#include <cstring>

#include "src/eval/loops.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {

std::vector<int64_t> DimsOf(const xla::ShapeProto& s) {
  return {s.dimensions().begin(), s.dimensions().end()};
}

PrimitiveType TypeOf(const xla::ShapeProto& s) {
  const int t = s.element_type();
  if (t <= 0 || t >= kNumPrimitiveTypes) return PrimitiveType::kInvalid;
  return static_cast<PrimitiveType>(t);
}

bool IsTupleShape(const xla::ShapeProto& s) {
  return s.element_type() == static_cast<int>(PrimitiveType::kTuple);
}

std::string DimsString(std::span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string ShapeProtoString(const xla::ShapeProto& s) {
  if (IsTupleShape(s)) {
    std::vector<std::string> parts;
    for (const xla::ShapeProto& e : s.tuple_shapes()) parts.push_back(ShapeProtoString(e));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  const PrimitiveTypeInfo* i = FindPrimitiveType(s.element_type());
  return absl::StrCat(i ? Sv(i->name) : "?", DimsString(DimsOf(s)));
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    s[d] = acc;
    acc *= dims[d];
  }
  return s;
}

PrimitiveType ResultType(const Ctx& ctx, const hlo::HloInstruction& instr) {
  return ctx.policy->StorageType(TypeOf(instr.shape()));
}

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}
absl::Status Unsupported(std::string_view what) {
  return absl::UnimplementedError(std::string(what));
}
absl::Status Expected(std::string_view expected, std::string_view found) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected ", Sv(expected), ", found ", Sv(found)));
}

absl::StatusOr<Array> Alloc(const Ctx& ctx, PrimitiveType t,
                            std::vector<int64_t> dims) {
  return Array::Allocate(t, std::move(dims), ctx.max_bytes);
}

void CopyStrided(const Ctx& ctx, const Array& src, char* dst) {
  std::array<std::vector<int64_t>, 1> strides = {src.EffectiveStrides()};
  StridedPlan<1> plan = PlanStrided<1>(src.dims(), strides);
  const size_t w = src.element_bytes();
  auto copy = [&]<class T>() {
    const T* in = reinterpret_cast<const T*>(src.data());
    T* out = reinterpret_cast<T*>(dst);
    ForEachStrided<1>(ctx.pool, plan, kElementwiseGrain,
                      [&](int64_t pos, const std::array<int64_t, 1>& off,
                          const std::array<int64_t, 1>& st, int64_t n) {
                        const T* a = in + off[0];
                        T* o = out + pos;
                        if (st[0] == 1) {
                          std::memcpy(o, a, n * sizeof(T));
                        } else if (st[0] == 0) {
                          const T v = *a;
                          for (int64_t i = 0; i < n; ++i) o[i] = v;
                        } else {
                          for (int64_t i = 0; i < n; ++i) o[i] = a[i * st[0]];
                        }
                      });
  };
  switch (w) {
    case 1: copy.operator()<uint8_t>(); break;
    case 2: copy.operator()<uint16_t>(); break;
    case 4: copy.operator()<uint32_t>(); break;
    case 8: copy.operator()<uint64_t>(); break;
    default: {
      struct B16 { uint64_t a, b; };
      copy.operator()<B16>();
    }
  }
}

absl::StatusOr<Array> Materialize(const Ctx& ctx, const Array& a) {
  if (a.is_contiguous()) return a;
  absl::StatusOr<Array> out = Alloc(ctx, a.type(), a.dims());
  if (!out.ok()) return out.status();
  CopyStrided(ctx, a, out->mutable_data());
  return out;
}

void WrapSubByte(Array& a) {
  const int bits = SubByteBits(a.type());
  if (bits == 0) return;
  char* p = a.mutable_data();
  const int64_t n = a.element_count();
  if (KindOf(a.type()) == ElementKind::kSigned) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<char>(WrapSigned(static_cast<int8_t>(p[i]), bits));
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<char>(WrapUnsigned(static_cast<uint8_t>(p[i]), bits));
  }
}

absl::StatusOr<Array> ToCompute(const Ctx& ctx, const Array& a) {
  if (!IsNarrowFloat(a.type())) return a;
  if (!a.is_contiguous()) {
    // Convert the base a view reads (a broadcast's small operand) and keep
    // the strides; views over more than their own size are copied first.
    int64_t span = 1;
    bool nonneg = true;
    for (size_t d = 0; d < a.dims().size(); ++d) {
      if (a.dims()[d] == 0) { span = 0; break; }
      if (a.strides()[d] < 0) nonneg = false;
      span += (a.dims()[d] - 1) * a.strides()[d];
    }
    if (nonneg && span <= a.element_count()) {
      absl::StatusOr<Array> base = Alloc(ctx, PrimitiveType::kF32, {span});
      if (!base.ok()) return base.status();
      NarrowToF32(a.type(), a.data(), base->mutable_data<float>(), span);
      return Array::View(*base, a.dims(), a.strides());
    }
    absl::StatusOr<Array> c = Materialize(ctx, a);
    if (!c.ok()) return c.status();
    return ToCompute(ctx, *c);
  }
  absl::StatusOr<Array> out = Alloc(ctx, PrimitiveType::kF32, a.dims());
  if (!out.ok()) return out.status();
  const size_t w = a.element_bytes();
  ctx.pool->ParallelFor(a.element_count(), kElementwiseGrain,
                        [&](int64_t b, int64_t e) {
                          NarrowToF32(a.type(), a.data() + b * w,
                                      out->mutable_data<float>() + b, e - b);
                        });
  return out;
}

absl::StatusOr<const Array*> ArrayOperand(Operands ops, int64_t i) {
  if (i >= static_cast<int64_t>(ops.size())) {
    return Expected(absl::StrCat("at least ", i + 1, " operands"),
                    absl::StrCat(ops.size()));
  }
  if (!ops[i]->is_array()) {
    return Expected(absl::StrCat("an array as operand ", i),
                    absl::StrCat("the tuple ", ops[i]->ShapeString()));
  }
  return &ops[i]->array();
}

hlo::HloOpcode SimpleBinaryReducer(const hlo::HloComputation& c,
                                   bool* param1_only) {
  if (param1_only) *param1_only = false;
  const hlo::HloInstruction* root = c.root();
  if (!root || c.parameters().size() != 2 || !c.parameters()[0] ||
      !c.parameters()[1]) {
    return hlo::HloOpcode::kUnknown;
  }
  if (root == c.parameters()[1]) {
    if (param1_only) *param1_only = true;
    return hlo::HloOpcode::kUnknown;
  }
  switch (root->opcode()) {
    case hlo::HloOpcode::kAdd: case hlo::HloOpcode::kMultiply:
    case hlo::HloOpcode::kMaximum: case hlo::HloOpcode::kMinimum:
    case hlo::HloOpcode::kAnd: case hlo::HloOpcode::kOr: case hlo::HloOpcode::kXor:
      break;
    default:
      return hlo::HloOpcode::kUnknown;
  }
  if (root->operand_count() != 2) return hlo::HloOpcode::kUnknown;
  const auto* a = root->operand(0);
  const auto* b = root->operand(1);
  const auto* p0 = c.parameters()[0];
  const auto* p1 = c.parameters()[1];
  if ((a == p0 && b == p1) || (a == p1 && b == p0)) {
    // Scalar parameters of the root's type (no implicit convert).
    if (p0->shape().dimensions_size() != 0 || p1->shape().dimensions_size() != 0 ||
        p0->shape().element_type() != root->shape().element_type() ||
        p1->shape().element_type() != root->shape().element_type()) {
      return hlo::HloOpcode::kUnknown;
    }
    return root->opcode();
  }
  return hlo::HloOpcode::kUnknown;
}

bool IsLiftable(const hlo::HloComputation& c) {
  for (const hlo::HloInstruction* i : c.instructions()) {
    const hlo::HloOpcode op = i->opcode();
    if (op == hlo::HloOpcode::kTuple || op == hlo::HloOpcode::kGetTupleElement) continue;
    if (IsTupleShape(i->shape()) || i->shape().dimensions_size() != 0) return false;
    if (op == hlo::HloOpcode::kParameter || op == hlo::HloOpcode::kConstant) continue;
    if (hlo::IsElementwiseUnary(op) || hlo::IsElementwiseBinary(op)) continue;
    switch (op) {
      case hlo::HloOpcode::kSelect: case hlo::HloOpcode::kClamp:
      case hlo::HloOpcode::kConvert: case hlo::HloOpcode::kCompare:
      case hlo::HloOpcode::kCopy:
        continue;
      default:
        return false;
    }
  }
  return true;
}

}  // namespace decomposed::eval::internal
