// Tensor-parallel test models for the replay of several ranks
// (eval/replicas.h): an MLP and an attention block, each built dense and
// as rank r's shard of N (Megatron's split: the first projection by
// columns, the last by rows, the partial results summed across the ranks),
// with the weights to feed both. Shared by eval_replicas_test,
// divergence_test and the benchmark.
#ifndef DECOMPOSED_TEST_TP_TEST_MODELS_H_
#define DECOMPOSED_TEST_TP_TEST_MODELS_H_

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "decomposed/eval/value.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/shape_inference.h"

namespace decomposed::tp_test {

// The module, or nullptr with the builder's error on stderr.
inline std::unique_ptr<hlo::HloModule> BuildModule(const hlo::HloModuleBuilder& mb) {
  absl::StatusOr<xla::HloModuleProto> p = mb.Build();
  if (!p.ok()) {
    std::fprintf(stderr, "building %s: %s\n", mb.name().c_str(), p.status().ToString().c_str());
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::HloModule::Create(*std::move(p));
  if (!m.ok()) {
    std::fprintf(stderr, "building %s: %s\n", mb.name().c_str(), m.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(m);
}

inline hlo::CollectiveOptions AllRanks(int64_t n) {
  hlo::CollectiveOptions o;
  o.replica_groups.emplace_back();
  for (int64_t r = 0; r < n; ++r) o.replica_groups.back().push_back(r);
  return o;
}

inline hlo::HloComputationBuilder& ScalarBinary(hlo::HloModuleBuilder& mb, std::string name,
                                                hlo::HloOpcode op) {
  hlo::HloComputationBuilder& c = mb.AddComputation(name);
  c.Binary(op, c.Parameter(0, hlo::MakeScalarShape(xla::F32), name + ".a"),
           c.Parameter(1, hlo::MakeScalarShape(xla::F32), name + ".b"));
  return c;
}

// f32 row-major values, uniform in [-scale, scale].
inline std::vector<float> RandomValues(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

inline eval::Array F32Array(const std::vector<int64_t>& dims, const std::vector<float>& v) {
  eval::Array a = *eval::Array::Allocate(PrimitiveType::kF32, dims);
  std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(float));
  return a;
}

// Columns [c0, c0 + cols) of a row-major [rows, all] matrix.
inline std::vector<float> Columns(const std::vector<float>& m, int64_t rows, int64_t all,
                                  int64_t c0, int64_t cols) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r) {
    out.insert(out.end(), m.begin() + r * all + c0, m.begin() + r * all + c0 + cols);
  }
  return out;
}
// Rows [r0, r0 + n) of a row-major [.., cols] matrix.
inline std::vector<float> Rows(const std::vector<float>& m, int64_t cols, int64_t r0, int64_t n) {
  return {m.begin() + r0 * cols, m.begin() + (r0 + n) * cols};
}

// y = tanh(x W1) W2; x [B, H], W1 [H, F], W2 [F, H]. Sharded over `ranks`
// (0: dense): rank r holds W1's columns and W2's rows [r F/N, (r+1) F/N)
// and sums its partial y with an all-reduce over `groups` (default: one
// group of every rank).
struct Mlp {
  int64_t batch = 4, hidden = 32, ffn = 64;

  std::unique_ptr<hlo::HloModule> Build(int64_t ranks,
                                        const hlo::CollectiveOptions* groups = nullptr) const {
    const int64_t f = ranks > 0 ? ffn / ranks : ffn;
    hlo::HloModuleBuilder mb(ranks > 0 ? "mlp_shard" : "mlp");
    hlo::HloComputationBuilder& add = ScalarBinary(mb, "add", hlo::HloOpcode::kAdd);
    hlo::HloComputationBuilder& c = mb.AddEntryComputation("main");
    hlo::HloOp x = c.Parameter(0, hlo::MakeArrayShape(xla::F32, {batch, hidden}), "x");
    hlo::HloOp w1 = c.Parameter(1, hlo::MakeArrayShape(xla::F32, {hidden, f}), "w1");
    hlo::HloOp w2 = c.Parameter(2, hlo::MakeArrayShape(xla::F32, {f, hidden}), "w2");
    hlo::HloOp h = c.Dot(x, w1, hlo::MakeDotDimensionNumbers({1}, {0}));
    hlo::HloOp a = c.Tanh(h);
    hlo::HloOp y = c.Dot(a, w2, hlo::MakeDotDimensionNumbers({1}, {0}));
    if (ranks > 0) y = c.AllReduce({y}, add, groups ? *groups : AllRanks(ranks));
    c.Tuple({y});
    return BuildModule(mb);
  }

  struct Weights {
    std::vector<float> x, w1, w2;
  };
  Weights Random(uint32_t seed) const {
    return {RandomValues(batch * hidden, seed), RandomValues(hidden * ffn, seed + 1, 0.3f),
            RandomValues(ffn * hidden, seed + 2, 0.3f)};
  }
  std::vector<eval::Value> DenseInputs(const Weights& w) const {
    return {F32Array({batch, hidden}, w.x), F32Array({hidden, ffn}, w.w1),
            F32Array({ffn, hidden}, w.w2)};
  }
  std::vector<eval::Value> RankInputs(const Weights& w, int64_t ranks, int64_t r) const {
    const int64_t f = ffn / ranks;
    return {F32Array({batch, hidden}, w.x),
            F32Array({hidden, f}, Columns(w.w1, hidden, ffn, r * f, f)),
            F32Array({f, hidden}, Rows(w.w2, hidden, r * f, f))};
  }
};

// Multi-head self-attention: x [S, D]; q, k, v = x Wq, x Wk, x Wv split
// into heads of Dh; softmax(q k^T / sqrt(Dh)) v; merged heads times Wo.
// Sharded: rank r holds the heads [r H/N, (r+1) H/N) (Wq, Wk, Wv's
// columns, Wo's rows) and sums its partial output with a reduce-scatter
// over the sequence followed by an all-gather (the all-reduce of
// sequence-parallel layers).
struct Attention {
  int64_t seq = 16, heads = 8, head_dim = 8;
  int64_t model() const { return heads * head_dim; }

  std::unique_ptr<hlo::HloModule> Build(int64_t ranks) const {
    const int64_t hl = ranks > 0 ? heads / ranks : heads;
    const int64_t dl = hl * head_dim, d = model();
    hlo::HloModuleBuilder mb(ranks > 0 ? "attention_shard" : "attention");
    hlo::HloComputationBuilder& add = ScalarBinary(mb, "add", hlo::HloOpcode::kAdd);
    hlo::HloComputationBuilder& max = ScalarBinary(mb, "max", hlo::HloOpcode::kMaximum);
    hlo::HloComputationBuilder& c = mb.AddEntryComputation("main");
    hlo::HloOp x = c.Parameter(0, hlo::MakeArrayShape(xla::F32, {seq, d}), "x");
    hlo::HloOp wq = c.Parameter(1, hlo::MakeArrayShape(xla::F32, {d, dl}), "wq");
    hlo::HloOp wk = c.Parameter(2, hlo::MakeArrayShape(xla::F32, {d, dl}), "wk");
    hlo::HloOp wv = c.Parameter(3, hlo::MakeArrayShape(xla::F32, {d, dl}), "wv");
    hlo::HloOp wo = c.Parameter(4, hlo::MakeArrayShape(xla::F32, {dl, d}), "wo");
    auto heads_of = [&](hlo::HloOp w) {
      hlo::HloOp p = c.Dot(x, w, hlo::MakeDotDimensionNumbers({1}, {0}));
      return c.Transpose(c.Reshape(p, {seq, hl, head_dim}), {1, 0, 2});  // [hl, S, Dh]
    };
    hlo::HloOp q = heads_of(wq), k = heads_of(wk), v = heads_of(wv);
    hlo::HloOp s = c.Dot(q, k, hlo::MakeDotDimensionNumbers({2}, {2}, {0}, {0}));  // [hl, S, S]
    hlo::HloOp scale = c.ConstantR0(xla::F32, 1.0 / std::sqrt(static_cast<double>(head_dim)));
    s = c.Multiply(s, c.Broadcast(scale, {hl, seq, seq}, {}));
    hlo::HloOp m = c.Reduce({s}, {c.ConstantR0(xla::F32, -std::numeric_limits<double>::infinity())},
                            {2}, max);
    hlo::HloOp e = c.Exp(c.Subtract(s, c.Broadcast(m, {hl, seq, seq}, {0, 1})));
    hlo::HloOp z = c.Reduce({e}, {c.ConstantR0(xla::F32, 0)}, {2}, add);
    hlo::HloOp p = c.Divide(e, c.Broadcast(z, {hl, seq, seq}, {0, 1}));
    hlo::HloOp ctx = c.Dot(p, v, hlo::MakeDotDimensionNumbers({2}, {1}, {0}, {0}));  // [hl, S, Dh]
    ctx = c.Reshape(c.Transpose(ctx, {1, 0, 2}), {seq, dl});
    hlo::HloOp o = c.Dot(ctx, wo, hlo::MakeDotDimensionNumbers({1}, {0}));  // [S, D]
    if (ranks > 0) {
      o = c.ReduceScatter({o}, add, 0, AllRanks(ranks));
      o = c.AllGather({o}, 0, AllRanks(ranks));
    }
    c.Tuple({o});
    return BuildModule(mb);
  }

  struct Weights {
    std::vector<float> x, wq, wk, wv, wo;
  };
  Weights Random(uint32_t seed) const {
    const size_t dd = static_cast<size_t>(model() * model());
    return {RandomValues(seq * model(), seed), RandomValues(dd, seed + 1, 0.2f),
            RandomValues(dd, seed + 2, 0.2f), RandomValues(dd, seed + 3, 0.2f),
            RandomValues(dd, seed + 4, 0.2f)};
  }
  std::vector<eval::Value> DenseInputs(const Weights& w) const {
    const int64_t d = model();
    return {F32Array({seq, d}, w.x), F32Array({d, d}, w.wq), F32Array({d, d}, w.wk),
            F32Array({d, d}, w.wv), F32Array({d, d}, w.wo)};
  }
  std::vector<eval::Value> RankInputs(const Weights& w, int64_t ranks, int64_t r) const {
    const int64_t d = model(), dl = d / ranks;
    return {F32Array({seq, d}, w.x), F32Array({d, dl}, Columns(w.wq, d, d, r * dl, dl)),
            F32Array({d, dl}, Columns(w.wk, d, d, r * dl, dl)),
            F32Array({d, dl}, Columns(w.wv, d, d, r * dl, dl)),
            F32Array({dl, d}, Rows(w.wo, d, r * dl, dl))};
  }
};

}  // namespace decomposed::tp_test

#endif  // DECOMPOSED_TEST_TP_TEST_MODELS_H_
