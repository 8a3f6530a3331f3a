// batch-norm-training, -inference and -grad (docs/eval.md §4.7): the
// statistics over every dimension but feature_index, accumulated in f64;
// elements computed in f32 (f64 for f64) and rounded once to the operand's
// type. Variance is the biased one (divided by the element count), as XLA
// and torch's layer norm use.
#include <cmath>

#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

// An operand as a contiguous f64 array and its [A, F, B] view.
struct Plane {
  Array values;  // f64
  int64_t a = 1, f = 1, b = 1;
};

absl::StatusOr<Plane> PlaneOf(const Ctx& ctx, const Array& x, int64_t feature) {
  if (feature < 0 || feature >= x.rank()) {
    return Expected(absl::StrCat("a feature_index below ", x.rank()), absl::StrCat(feature));
  }
  absl::StatusOr<Array> d = ConvertArray(ctx, x, PrimitiveType::kF64);
  if (!d.ok()) return d.status();
  absl::StatusOr<Array> m = Materialize(ctx, *d);
  if (!m.ok()) return m.status();
  Plane p;
  p.values = *m;
  for (int64_t i = 0; i < feature; ++i) p.a *= x.dims()[i];
  p.f = x.dims()[feature];
  for (int64_t i = feature + 1; i < x.rank(); ++i) p.b *= x.dims()[i];
  return p;
}

absl::StatusOr<std::vector<double>> Vector(const Ctx& ctx, const Value* v, int64_t f, std::string_view what) {
  if (!v->is_array() || v->array().rank() != 1 || v->array().dims()[0] != f) {
    return Expected(absl::StrCat(Sv(what), " of ", f, " elements"), v->ShapeString());
  }
  absl::StatusOr<Array> d = ConvertArray(ctx, v->array(), PrimitiveType::kF64);
  if (!d.ok()) return d.status();
  absl::StatusOr<Array> m = Materialize(ctx, *d);
  if (!m.ok()) return m.status();
  return std::vector<double>(m->data<double>(), m->data<double>() + f);
}

// Per-feature mean and biased variance (two passes).
void Moments(const Plane& p, std::vector<double>* mean, std::vector<double>* var) {
  mean->assign(p.f, 0);
  var->assign(p.f, 0);
  const double* x = p.values.data<double>();
  const double n = static_cast<double>(p.a * p.b);
  for (int64_t i = 0; i < p.a; ++i)
    for (int64_t c = 0; c < p.f; ++c)
      for (int64_t j = 0; j < p.b; ++j) (*mean)[c] += x[(i * p.f + c) * p.b + j];
  for (double& m : *mean) m = n > 0 ? m / n : 0;
  for (int64_t i = 0; i < p.a; ++i)
    for (int64_t c = 0; c < p.f; ++c)
      for (int64_t j = 0; j < p.b; ++j) {
        const double d = x[(i * p.f + c) * p.b + j] - (*mean)[c];
        (*var)[c] += d * d;
      }
  for (double& v : *var) v = n > 0 ? v / n : 0;
}

// Rounds a double result to the compute type, then to `type`.
absl::StatusOr<Array> Emit(const Ctx& ctx, Array d, PrimitiveType type) {
  const PrimitiveType via = ctx.policy->NormComputeType(type);
  absl::StatusOr<Array> c = ConvertArray(ctx, d, via);
  if (!c.ok()) return c.status();
  return ConvertArray(ctx, *c, type);
}

absl::StatusOr<Array> FromVector(const Ctx& ctx, const std::vector<double>& v, PrimitiveType type) {
  absl::StatusOr<Array> a = Alloc(ctx, PrimitiveType::kF64, {static_cast<int64_t>(v.size())});
  if (!a.ok()) return a.status();
  std::copy(v.begin(), v.end(), a->mutable_data<double>());
  return Emit(ctx, *a, type);
}

}  // namespace

absl::StatusOr<Value> EvalBatchNorm(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  absl::StatusOr<const Array*> xin = ArrayOperand(ops, 0);
  if (!xin.ok()) return xin.status();
  const Array& x = **xin;
  const PrimitiveType type = x.type();
  absl::StatusOr<Plane> p = PlaneOf(ctx, x, instr.feature_index());
  if (!p.ok()) return p.status();
  const double eps = instr.epsilon();
  const double* px = p->values.data<double>();
  absl::StatusOr<Array> y = Alloc(ctx, PrimitiveType::kF64, x.dims());
  if (!y.ok()) return y.status();
  double* py = y->mutable_data<double>();
  auto each = [&](auto&& fn) {
    for (int64_t i = 0; i < p->a; ++i)
      for (int64_t c = 0; c < p->f; ++c)
        for (int64_t j = 0; j < p->b; ++j) {
          const int64_t k = (i * p->f + c) * p->b + j;
          fn(k, c);
        }
  };
  const size_t want = instr.opcode() == HloOpcode::kBatchNormTraining ? 3 : 5;
  if (ops.size() != want) return Expected(absl::StrCat(want, " operands"), absl::StrCat(ops.size()));
  switch (instr.opcode()) {
    case HloOpcode::kBatchNormTraining: {
      absl::StatusOr<std::vector<double>> scale = Vector(ctx, ops[1], p->f, "a scale");
      if (!scale.ok()) return scale.status();
      absl::StatusOr<std::vector<double>> offset = Vector(ctx, ops[2], p->f, "an offset");
      if (!offset.ok()) return offset.status();
      std::vector<double> mean, var;
      Moments(*p, &mean, &var);
      std::vector<double> inv(p->f);
      for (int64_t c = 0; c < p->f; ++c) inv[c] = 1.0 / std::sqrt(var[c] + eps);
      each([&](int64_t k, int64_t c) { py[k] = (*scale)[c] * (px[k] - mean[c]) * inv[c] + (*offset)[c]; });
      absl::StatusOr<Array> out = Emit(ctx, *y, type);
      absl::StatusOr<Array> m = FromVector(ctx, mean, type);
      absl::StatusOr<Array> v = FromVector(ctx, var, type);
      if (!out.ok() || !m.ok() || !v.ok()) return Invalid("batch-norm-training: conversion failed");
      return Value::Tuple({*out, *m, *v});
    }
    case HloOpcode::kBatchNormInference: {
      absl::StatusOr<std::vector<double>> scale = Vector(ctx, ops[1], p->f, "a scale");
      absl::StatusOr<std::vector<double>> offset = Vector(ctx, ops[2], p->f, "an offset");
      absl::StatusOr<std::vector<double>> mean = Vector(ctx, ops[3], p->f, "a mean");
      absl::StatusOr<std::vector<double>> var = Vector(ctx, ops[4], p->f, "a variance");
      for (auto* s : {&scale, &offset, &mean, &var}) {
        if (!s->ok()) return s->status();
      }
      each([&](int64_t k, int64_t c) {
        py[k] = (*scale)[c] * (px[k] - (*mean)[c]) / std::sqrt((*var)[c] + eps) + (*offset)[c];
      });
      absl::StatusOr<Array> out = Emit(ctx, *y, type);
      if (!out.ok()) return out.status();
      return Value(*out);
    }
    case HloOpcode::kBatchNormGrad: {
      absl::StatusOr<std::vector<double>> scale = Vector(ctx, ops[1], p->f, "a scale");
      absl::StatusOr<std::vector<double>> mean = Vector(ctx, ops[2], p->f, "a mean");
      absl::StatusOr<std::vector<double>> var = Vector(ctx, ops[3], p->f, "a variance");
      for (auto* s : {&scale, &mean, &var}) {
        if (!s->ok()) return s->status();
      }
      if (!ops[4]->is_array() || ops[4]->array().dims() != x.dims()) {
        return Expected(absl::StrCat("a grad_output like ", x.ShapeString()), ops[4]->ShapeString());
      }
      absl::StatusOr<Plane> g = PlaneOf(ctx, ops[4]->array(), instr.feature_index());
      if (!g.ok()) return g.status();
      const double* pg = g->values.data<double>();
      const double n = static_cast<double>(p->a * p->b);
      std::vector<double> sum_g(p->f, 0), sum_gx(p->f, 0);
      each([&](int64_t k, int64_t c) {
        sum_g[c] += pg[k];
        sum_gx[c] += pg[k] * (px[k] - (*mean)[c]);
      });
      std::vector<double> grad_scale(p->f), inv(p->f);
      for (int64_t c = 0; c < p->f; ++c) {
        inv[c] = 1.0 / std::sqrt((*var)[c] + eps);
        grad_scale[c] = sum_gx[c] * inv[c];
      }
      each([&](int64_t k, int64_t c) {
        const double mg = n > 0 ? sum_g[c] / n : 0, mgx = n > 0 ? sum_gx[c] / n : 0;
        py[k] = (*scale)[c] * inv[c] * (pg[k] - mg - (px[k] - (*mean)[c]) * mgx * inv[c] * inv[c]);
      });
      absl::StatusOr<Array> gx = Emit(ctx, *y, type);
      absl::StatusOr<Array> gs = FromVector(ctx, grad_scale, type);
      absl::StatusOr<Array> go = FromVector(ctx, sum_g, type);
      if (!gx.ok() || !gs.ok() || !go.ok()) return Invalid("batch-norm-grad: conversion failed");
      return Value::Tuple({*gx, *gs, *go});
    }
    default:
      return Unsupported("not a batch-norm op");
  }
}

}  // namespace decomposed::eval::internal
