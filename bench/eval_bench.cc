// The evaluator's speed, as ratios against baselines run in the same
// process (docs/eval.md §7):
//   BM_EvalDot / BM_CblasSgemm / BM_EigenGemm  a dot through Evaluate, the
//       same GEMM called on OpenBLAS directly, and Eigen's product on the
//       same shapes (FLOP/s counters; the first two give the evaluator's
//       share of the BLAS's own speed, the last two the BLAS choice);
//   BM_EvalAdd / BM_Memcpy / BM_MemcpyFresh  an elementwise add through
//       Evaluate against memcpy of the same output size into a reused and
//       into a fresh buffer (bytes/s of the array written);
//   BM_EvalAddBroadcast  the add with a broadcast operand (not materialised);
//   BM_EvalMlp, BM_EvalAttention  whole graphs at a few sizes, whose torch
//       eager times bench/eval_vs_torch.py measures for the same math.
// Run: build/bin/eval_bench --benchmark_repetitions=3
#include <cblas.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#if __has_include(<Eigen/Dense>)
#include <Eigen/Dense>
#define DECOMPOSED_BENCH_EIGEN 1
#endif

#include "benchmark/benchmark.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/hlo/module.h"

namespace {

using decomposed::PrimitiveType;
using decomposed::eval::Array;
using decomposed::eval::Value;
namespace xla = decomposed::xla;

int64_t next_id = 1;

xla::ShapeProto Shape(PrimitiveType t, std::vector<int64_t> dims) {
  xla::ShapeProto s;
  s.set_element_type(static_cast<xla::PrimitiveType>(t));
  for (int64_t d : dims) s.add_dimensions(d);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) s.mutable_layout()->add_minor_to_major(d);
  return s;
}

struct Comp {
  xla::HloComputationProto c;
  explicit Comp(const std::string& name) {
    c.set_name(name + std::to_string(next_id));
    c.set_id(next_id++);
  }
  xla::HloInstructionProto* Op(const std::string& opcode, const xla::ShapeProto& s, std::vector<int64_t> ops = {}) {
    auto* i = c.add_instructions();
    i->set_id(next_id++);
    i->set_name(opcode + "." + std::to_string(i->id()));
    i->set_opcode(opcode);
    *i->mutable_shape() = s;
    for (int64_t o : ops) i->add_operand_ids(o);
    c.set_root_id(i->id());
    return i;
  }
  int64_t Param(int64_t n, const xla::ShapeProto& s) {
    auto* i = Op("parameter", s);
    i->set_parameter_number(n);
    return i->id();
  }
  int64_t Dot(int64_t a, int64_t b, const xla::ShapeProto& s, std::vector<int64_t> lc, std::vector<int64_t> rc,
              std::vector<int64_t> lb = {}, std::vector<int64_t> rb = {}) {
    auto* i = Op("dot", s, {a, b});
    auto* d = i->mutable_dot_dimension_numbers();
    for (int64_t x : lc) d->add_lhs_contracting_dimensions(x);
    for (int64_t x : rc) d->add_rhs_contracting_dimensions(x);
    for (int64_t x : lb) d->add_lhs_batch_dimensions(x);
    for (int64_t x : rb) d->add_rhs_batch_dimensions(x);
    return i->id();
  }
  int64_t Broadcast(int64_t x, const xla::ShapeProto& s, std::vector<int64_t> dims) {
    auto* i = Op("broadcast", s, {x});
    for (int64_t d : dims) i->add_dimensions(d);
    return i->id();
  }
  int64_t Scalar(float v) {
    auto* i = Op("constant", Shape(PrimitiveType::kF32, {}));
    *i->mutable_literal()->mutable_shape() = Shape(PrimitiveType::kF32, {});
    i->mutable_literal()->add_f32s(v);
    return i->id();
  }
};

std::unique_ptr<decomposed::hlo::HloModule> Module(std::vector<Comp*> comps) {
  xla::HloModuleProto m;
  m.set_name("bench");
  for (Comp* c : comps) *m.add_computations() = c->c;
  return *decomposed::hlo::HloModule::Create(std::move(m));
}

Array RandomF32(std::vector<int64_t> dims, uint32_t seed = 1) {
  Array a = *Array::Allocate(PrimitiveType::kF32, std::move(dims));
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < a.element_count(); ++i) a.mutable_data<float>()[i] = d(g);
  return a;
}

void RunModule(benchmark::State& state, const decomposed::hlo::HloModule& m, std::vector<Value> in) {
  decomposed::eval::EvalOptions o;
  o.threads = 0;
  for (auto _ : state) {
    auto r = decomposed::eval::Evaluate(m, in, o);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r->is_array());
  }
}

void GemmArgs(benchmark::internal::Benchmark* b) {
  for (int64_t n : {128, 512, 1024}) b->Args({n, n, n});
  b->Args({64, 4096, 1024});  // a decode-step projection: few rows
  b->UseRealTime();
}

void BM_EvalDot(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  Comp c("main");
  int64_t a = c.Param(0, Shape(PrimitiveType::kF32, {M, K})), b = c.Param(1, Shape(PrimitiveType::kF32, {K, N}));
  c.Dot(a, b, Shape(PrimitiveType::kF32, {M, N}), {1}, {0});
  auto m = Module({&c});
  RunModule(state, *m, {RandomF32({M, K}), RandomF32({K, N}, 2)});
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EvalDot)->Apply(GemmArgs);

void BM_CblasSgemm(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  Array a = RandomF32({M, K}), b = RandomF32({K, N}, 2);
  std::vector<float> out(M * N);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data<float>(), K, b.data<float>(), N,
                0.0f, out.data(), N);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CblasSgemm)->Apply(GemmArgs);

#if defined(DECOMPOSED_BENCH_EIGEN)
void BM_EigenGemm(benchmark::State& state) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  Mat a = Mat::Random(M, K), b = Mat::Random(K, N), out(M, N);
  for (auto _ : state) {
    out.noalias() = a * b;
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EigenGemm)->Apply(GemmArgs);
#endif

constexpr int64_t kElems = 1 << 24;  // 64 MiB of f32 per array

void BM_EvalAdd(benchmark::State& state) {
  Comp c("main");
  auto s = Shape(PrimitiveType::kF32, {kElems});
  int64_t a = c.Param(0, s), b = c.Param(1, s);
  c.Op("add", s, {a, b});
  auto m = Module({&c});
  RunModule(state, *m, {RandomF32({kElems}), RandomF32({kElems}, 2)});
  state.counters["out B/s"] = benchmark::Counter(4.0 * kElems, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EvalAdd)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_EvalAddBroadcast(benchmark::State& state) {
  Comp c("main");
  const int64_t rows = kElems / 4096;
  auto s = Shape(PrimitiveType::kF32, {rows, 4096});
  int64_t a = c.Param(0, s), b = c.Param(1, Shape(PrimitiveType::kF32, {4096}));
  int64_t bb = c.Broadcast(b, s, {1});
  c.Op("add", s, {a, bb});
  auto m = Module({&c});
  RunModule(state, *m, {RandomF32({rows, 4096}), RandomF32({4096}, 2)});
  state.counters["out B/s"] = benchmark::Counter(4.0 * kElems, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EvalAddBroadcast)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Memcpy(benchmark::State& state) {
  std::vector<float> a(kElems, 1.0f), out(kElems);
  for (auto _ : state) {
    std::memcpy(out.data(), a.data(), kElems * sizeof(float));
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["out B/s"] = benchmark::Counter(4.0 * kElems, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

// memcpy into a fresh allocation each time: what any op that returns new
// memory pays (the kernel's page faults and zeroing), as Evaluate does.
void BM_MemcpyFresh(benchmark::State& state) {
  std::vector<float> a(kElems, 1.0f);
  for (auto _ : state) {
    std::unique_ptr<float[]> out(new float[kElems]);
    std::memcpy(out.get(), a.data(), kElems * sizeof(float));
    benchmark::DoNotOptimize(out.get());
  }
  state.counters["out B/s"] = benchmark::Counter(4.0 * kElems, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MemcpyFresh)->UseRealTime()->Unit(benchmark::kMillisecond);

// x[T,H] -> relu(x W1 + b1) W2, as bench/eval_vs_torch.py's mlp.
void BM_EvalMlp(benchmark::State& state) {
  const int64_t T = state.range(0), H = state.range(1), F = 4 * H;
  Comp c("main");
  int64_t x = c.Param(0, Shape(PrimitiveType::kF32, {T, H}));
  int64_t w1 = c.Param(1, Shape(PrimitiveType::kF32, {H, F}));
  int64_t b1 = c.Param(2, Shape(PrimitiveType::kF32, {F}));
  int64_t w2 = c.Param(3, Shape(PrimitiveType::kF32, {F, H}));
  auto sf = Shape(PrimitiveType::kF32, {T, F});
  int64_t h = c.Dot(x, w1, sf, {1}, {0});
  h = c.Op("add", sf, {h, c.Broadcast(b1, sf, {1})})->id();
  h = c.Op("maximum", sf, {h, c.Broadcast(c.Scalar(0), sf, {})})->id();
  c.Dot(h, w2, Shape(PrimitiveType::kF32, {T, H}), {1}, {0});
  auto m = Module({&c});
  RunModule(state, *m, {RandomF32({T, H}), RandomF32({H, F}, 2), RandomF32({F}, 3), RandomF32({F, H}, 4)});
}
BENCHMARK(BM_EvalMlp)->Args({128, 256})->Args({512, 512})->Args({1024, 1024})->UseRealTime()->Unit(benchmark::kMillisecond);

// softmax(q k^T / sqrt(D)) v over [B*heads, T, D], as eval_vs_torch.py's.
void BM_EvalAttention(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1), D = 64;
  Comp add("add"), mx("max");
  for (Comp* r : {&add, &mx}) {
    auto s = Shape(PrimitiveType::kF32, {});
    int64_t a = r->Param(0, s), b = r->Param(1, s);
    r->Op(r == &add ? "add" : "maximum", s, {a, b});
  }
  Comp c("main");
  auto sq = Shape(PrimitiveType::kF32, {B, T, D});
  auto ss = Shape(PrimitiveType::kF32, {B, T, T});
  auto sr = Shape(PrimitiveType::kF32, {B, T});
  int64_t q = c.Param(0, sq), k = c.Param(1, sq), v = c.Param(2, sq);
  int64_t s = c.Dot(q, k, ss, {2}, {2}, {0}, {0});
  s = c.Op("multiply", ss, {s, c.Broadcast(c.Scalar(0.125f), ss, {})})->id();
  auto* mred = c.Op("reduce", sr, {s, c.Scalar(-1e30f)});
  mred->add_dimensions(2);
  mred->add_called_computation_ids(mx.c.id());
  int64_t e = c.Op("exponential", ss, {c.Op("subtract", ss, {s, c.Broadcast(mred->id(), ss, {0, 1})})->id()})->id();
  auto* sum = c.Op("reduce", sr, {e, c.Scalar(0)});
  sum->add_dimensions(2);
  sum->add_called_computation_ids(add.c.id());
  int64_t p = c.Op("divide", ss, {e, c.Broadcast(sum->id(), ss, {0, 1})})->id();
  c.Dot(p, v, sq, {2}, {1}, {0}, {0});
  auto m = Module({&add, &mx, &c});
  RunModule(state, *m, {RandomF32({B, T, D}), RandomF32({B, T, D}, 2), RandomF32({B, T, D}, 3)});
}
BENCHMARK(BM_EvalAttention)->Args({8, 128})->Args({16, 512})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
