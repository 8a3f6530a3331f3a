// Neuron's custom-call targets of known semantics (hlo-facts §4;
// docs/eval.md §5), the registry's dispatch, and the targets that cannot
// run off the device. Everything computes in f64 and is rounded to f32
// (f64 for f64) and then to the result type, once.
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval {
namespace {

using internal::Ctx;

const Ctx& CtxOf(const CustomCallContext& c) { return *static_cast<const Ctx*>(c.evaluator_state); }

// The dimension a target's backend_config names in decimal ("3", "-1").
absl::StatusOr<int64_t> ConfigDim(const CustomCallContext& c, int64_t rank) {
  std::string s = c.instruction.backend_config();
  absl::string_view v(s);
  while (!v.empty() && (v.front() == '"' || v.front() == ' ')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.remove_suffix(1);
  int64_t d = 0;
  if (!absl::SimpleAtoi(v, &d) || d < -rank || d >= rank) {
    return internal::Expected(absl::StrCat("a backend_config naming a dimension below ", rank),
                              absl::StrCat("\"", s, "\""));
  }
  return d < 0 ? d + rank : d;
}

struct Lanes {
  Array values;  // f64, contiguous
  int64_t a = 1, n = 1, b = 1;
  double at(int64_t i, int64_t k, int64_t j) const { return values.data<double>()[(i * n + k) * b + j]; }
};

absl::StatusOr<Lanes> LanesOf(const Ctx& ctx, const Array& x, int64_t dim) {
  absl::StatusOr<Array> d = internal::ConvertArray(ctx, x, PrimitiveType::kF64);
  if (!d.ok()) return d.status();
  absl::StatusOr<Array> m = internal::Materialize(ctx, *d);
  if (!m.ok()) return m.status();
  Lanes l;
  l.values = *m;
  for (int64_t i = 0; i < dim; ++i) l.a *= x.dims()[i];
  l.n = x.dims()[dim];
  for (int64_t i = dim + 1; i < x.rank(); ++i) l.b *= x.dims()[i];
  return l;
}

absl::StatusOr<Value> Emit(const Ctx& ctx, const Array& f64, PrimitiveType type) {
  absl::StatusOr<Array> c = internal::ConvertArray(ctx, f64, ctx.policy->NormComputeType(type));
  if (!c.ok()) return c.status();
  absl::StatusOr<Array> r = internal::ConvertArray(ctx, *c, type);
  if (!r.ok()) return r.status();
  return Value(*r);
}

absl::StatusOr<const Array*> Operand(std::span<const Value> ops, size_t i) {
  if (i >= ops.size() || !ops[i].is_array()) {
    return internal::Expected(absl::StrCat("an array operand ", i), absl::StrCat(ops.size(), " operands"));
  }
  return &ops[i].array();
}

absl::StatusOr<Value> Identity(const CustomCallContext& c, std::span<const Value> ops) {
  if (ops.size() == 1) return ops[0];
  (void)c;
  return Value::Tuple(std::vector<Value>(ops.begin(), ops.end()));
}

absl::StatusOr<Value> Softmax(const CustomCallContext& c, std::span<const Value> ops, bool backward) {
  const Ctx& ctx = CtxOf(c);
  absl::StatusOr<const Array*> x = Operand(ops, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> dim = ConfigDim(c, (*x)->rank());
  if (!dim.ok()) return dim.status();
  absl::StatusOr<Lanes> l = LanesOf(ctx, **x, *dim);
  if (!l.ok()) return l.status();
  std::optional<Lanes> out;
  if (backward) {
    absl::StatusOr<const Array*> o = Operand(ops, 1);
    if (!o.ok()) return o.status();
    if ((*o)->dims() != (*x)->dims()) return internal::Expected("(grad, out) of one shape", (*o)->ShapeString());
    absl::StatusOr<Lanes> lo = LanesOf(ctx, **o, *dim);
    if (!lo.ok()) return lo.status();
    out = *lo;
  }
  absl::StatusOr<Array> r = Array::Allocate(PrimitiveType::kF64, (*x)->dims(), c.max_array_bytes);
  if (!r.ok()) return r.status();
  double* pr = r->mutable_data<double>();
  for (int64_t i = 0; i < l->a; ++i) {
    for (int64_t j = 0; j < l->b; ++j) {
      if (backward) {
        double s = 0;
        for (int64_t k = 0; k < l->n; ++k) s += l->at(i, k, j) * out->at(i, k, j);
        for (int64_t k = 0; k < l->n; ++k) pr[(i * l->n + k) * l->b + j] = out->at(i, k, j) * (l->at(i, k, j) - s);
      } else {
        double m = -INFINITY;
        for (int64_t k = 0; k < l->n; ++k) m = std::max(m, l->at(i, k, j));
        double s = 0;
        for (int64_t k = 0; k < l->n; ++k) s += std::exp(l->at(i, k, j) - m);
        for (int64_t k = 0; k < l->n; ++k) pr[(i * l->n + k) * l->b + j] = std::exp(l->at(i, k, j) - m) / s;
      }
    }
  }
  return Emit(ctx, *r, (*x)->type());
}

absl::StatusOr<Value> RmsNorm(const CustomCallContext& c, std::span<const Value> ops) {
  const Ctx& ctx = CtxOf(c);
  absl::StatusOr<const Array*> x = Operand(ops, 0);
  absl::StatusOr<const Array*> w = Operand(ops, 1);
  absl::StatusOr<const Array*> e = Operand(ops, 2);
  for (auto* s : {&x, &w, &e}) {
    if (!s->ok()) return s->status();
  }
  absl::StatusOr<int64_t> dim = ConfigDim(c, (*x)->rank());
  if (!dim.ok()) return dim.status();
  const int64_t n = (*x)->dims()[*dim];
  if ((*e)->element_count() != 1 || !((*w)->rank() == 1 && (*w)->dims()[0] == n)) {
    return internal::Expected(absl::StrCat("(x, weight[", n, "], eps[])"),
                              absl::StrCat((*x)->ShapeString(), ", ", (*w)->ShapeString(), ", ", (*e)->ShapeString()));
  }
  absl::StatusOr<Lanes> l = LanesOf(ctx, **x, *dim);
  absl::StatusOr<Lanes> lw = LanesOf(ctx, **w, 0);
  if (!l.ok()) return l.status();
  if (!lw.ok()) return lw.status();
  absl::StatusOr<Array> ec = (*e)->Contiguous(c.max_array_bytes);
  if (!ec.ok()) return ec.status();
  if (KindOf(ec->type()) != ElementKind::kReal) {
    return internal::Expected("a real eps", ec->ShapeString());
  }
  const double eps = RealValue(ec->type(), ec->data());
  absl::StatusOr<Array> r = Array::Allocate(PrimitiveType::kF64, (*x)->dims(), c.max_array_bytes);
  if (!r.ok()) return r.status();
  double* pr = r->mutable_data<double>();
  for (int64_t i = 0; i < l->a; ++i) {
    for (int64_t j = 0; j < l->b; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += l->at(i, k, j) * l->at(i, k, j);
      const double inv = 1.0 / std::sqrt(s / static_cast<double>(n) + eps);
      for (int64_t k = 0; k < n; ++k) pr[(i * n + k) * l->b + j] = l->at(i, k, j) * inv * lw->at(0, k, 0);
    }
  }
  return Emit(ctx, *r, (*x)->type());
}

absl::StatusOr<Value> Gelu(const CustomCallContext& c, std::span<const Value> ops, bool tanh_form) {
  const Ctx& ctx = CtxOf(c);
  absl::StatusOr<const Array*> x = Operand(ops, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<Array> d = internal::ConvertArray(ctx, **x, PrimitiveType::kF64);
  if (!d.ok()) return d.status();
  absl::StatusOr<Array> dm = internal::Materialize(ctx, *d);
  if (!dm.ok()) return dm.status();
  absl::StatusOr<Array> r = Array::Allocate(PrimitiveType::kF64, (*x)->dims(), c.max_array_bytes);
  if (!r.ok()) return r.status();
  const double* px = dm->data<double>();
  double* pr = r->mutable_data<double>();
  for (int64_t i = 0; i < r->element_count(); ++i) {
    const double v = px[i];
    pr[i] = tanh_form ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                      : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  }
  return Emit(ctx, *r, (*x)->type());
}

absl::StatusOr<Value> ArgMaxMin(const CustomCallContext& c, std::span<const Value> ops, bool max) {
  const Ctx& ctx = CtxOf(c);
  absl::StatusOr<const Array*> x = Operand(ops, 0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int64_t> dim = ConfigDim(c, (*x)->rank());
  if (!dim.ok()) return dim.status();
  absl::StatusOr<Lanes> l = LanesOf(ctx, **x, *dim);
  if (!l.ok()) return l.status();
  std::vector<int64_t> dims = (*x)->dims();
  dims.erase(dims.begin() + *dim);
  absl::StatusOr<Array> r = Array::Allocate(PrimitiveType::kS64, dims, c.max_array_bytes);
  if (!r.ok()) return r.status();
  for (int64_t i = 0; i < l->a; ++i) {
    for (int64_t j = 0; j < l->b; ++j) {
      int64_t best = 0;
      for (int64_t k = 1; k < l->n; ++k) {
        const double v = l->at(i, k, j), b = l->at(i, best, j);
        if (std::isnan(b)) break;  // the first NaN wins, as torch's argmax/argmin
        if (std::isnan(v) || (max ? v > b : v < b)) best = k;
      }
      r->mutable_data<int64_t>()[i * l->b + j] = best;
    }
  }
  const PrimitiveType itype = internal::TypeOf(c.instruction.shape());
  absl::StatusOr<Array> out = internal::ConvertArray(ctx, *r, ctx.policy->StorageType(itype));
  if (!out.ok()) return out.status();
  return Value(*out);
}

absl::StatusOr<Value> NeuronTopK(const CustomCallContext& c, std::span<const Value> ops) {
  Ctx ctx = CtxOf(c);
  absl::StatusOr<const Array*> x = Operand(ops, 0);
  if (!x.ok()) return x.status();
  std::string s = c.instruction.backend_config();
  absl::string_view v(s);
  while (!v.empty() && (v.front() == '"' || v.front() == ' ')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.remove_suffix(1);
  int64_t k = 0;
  if (!absl::SimpleAtoi(v, &k)) {
    return internal::Expected("a backend_config giving k in decimal", absl::StrCat("\"", s, "\""));
  }
  PrimitiveType itype = PrimitiveType::kU32;
  const xla::ShapeProto& rs = c.instruction.shape();
  if (internal::IsTupleShape(rs) && rs.tuple_shapes_size() == 2) itype = internal::TypeOf(rs.tuple_shapes(1));
  return internal::TopKOf(ctx, **x, k, true, itype);
}

CustomCallRegistry MakeBuiltins() {
  CustomCallRegistry r;
  for (const char* t : {"AwsNeuronTransferWithStaticRing", "TorchNeuronInlineMark", "TorchNeuronOutputMark"}) {
    r.Register(t, Identity);
  }
  r.Register("AwsNeuronSoftmax", [](const CustomCallContext& c, std::span<const Value> o) { return Softmax(c, o, false); });
  r.Register("AwsNeuronSoftmaxBackward", [](const CustomCallContext& c, std::span<const Value> o) { return Softmax(c, o, true); });
  r.Register("AwsNeuronRmsNorm", RmsNorm);
  r.Register("AwsNeuronGelu", [](const CustomCallContext& c, std::span<const Value> o) { return Gelu(c, o, false); });
  r.Register("AwsNeuronGeluApprxTanh", [](const CustomCallContext& c, std::span<const Value> o) { return Gelu(c, o, true); });
  r.Register("AwsNeuronArgMax", [](const CustomCallContext& c, std::span<const Value> o) { return ArgMaxMin(c, o, true); });
  r.Register("AwsNeuronArgMin", [](const CustomCallContext& c, std::span<const Value> o) { return ArgMaxMin(c, o, false); });
  r.Register("AwsNeuronTopK", NeuronTopK);
  return r;
}

}  // namespace

const CustomCallRegistry& BuiltinCustomCalls() {
  static const CustomCallRegistry* r = new CustomCallRegistry(MakeBuiltins());
  return *r;
}

const char* UnreplayableCustomCallReason(std::string_view target) {
  if (target == "AwsNeuronCustomNativeKernel") return "an NKI kernel compiled for the NeuronCore";
  if (target == "AwsNeuronCustomOp") return "a GPSIMD C++ operator built for the NeuronCore";
  if (target == "AwsNeuronCollectiveMatmul") return "a dot over the shards of every rank (the others are not in the snapshot)";
  return nullptr;
}

namespace internal {

absl::StatusOr<Value> EvalCustomCall(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const std::string& target = instr.custom_call_target();
  // A registered function comes first: a caller may give an NKI kernel or a
  // GPSIMD op a CPU implementation of its own.
  const CustomCallFunction* fn = ctx.custom_calls->Find(target);
  if (const char* why = UnreplayableCustomCallReason(target); why && !fn) {
    return Unsupported(absl::StrCat("cannot run off the device: ", why));
  }
  if (!fn && (target == "AwsNeuronRmsNormBackward" || target == "AwsNeuronGeluBackward" ||
              target == "ResizeNearest" || target == "ResizeNearestGrad")) {
    return Unsupported("a Neuron target whose operand roles are not public, so it is not built in "
                       "(register it: EvalOptions::custom_calls)");
  }
  if (!fn) {
    return Unsupported(absl::StrCat("the target is not known to the evaluator (register it: "
                                    "EvalOptions::custom_calls)"));
  }
  std::vector<Value> args;
  for (const Value* v : ops) args.push_back(*v);
  CustomCallContext c{instr, *ctx.policy, ctx.max_bytes, &ctx};
  return (*fn)(c, args);
}

}  // namespace internal
}  // namespace decomposed::eval
