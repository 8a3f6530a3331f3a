// Bisect and the tensor-parallel replay against plain runs, as ratios
// measured in one process (docs/eval.md §9.5, §10.4):
//   BM_BisectOverSingleRun: Bisect (xla against f32, every instruction
//     compared) over one Evaluate of the same module; the target is <= 2.5.
//   BM_TpReplayOverSingleRuns/N: EvaluateReplicas of N ranks over N
//     Evaluates of one rank's module with its collectives made the identity
//     (single-member groups: the same arithmetic, nothing exchanged); the
//     target is <= 1.2.
// Each iteration times both sides back to back; the `ratio` counter is
// the total of one over the total of the other.
#include <benchmark/benchmark.h>

#include <chrono>

#include "decomposed/analysis/divergence.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/replicas.h"
#include "tp_test_models.h"

namespace {

using decomposed::eval::Value;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A transformer-sized attention block and MLP, dense.
const decomposed::tp_test::Attention kAttention{128, 8, 32};
const decomposed::tp_test::Mlp kMlp{128, 256, 1024};

// The comparisons' worst case: nothing but elementwise ops (every value
// compared, no GEMM to hide them), a GELU-and-residual chain on f32[512,1024].
struct ElementwiseChain {
  std::unique_ptr<decomposed::hlo::HloModule> Build(int64_t) const {
    using namespace decomposed::hlo;
    namespace xla = decomposed::xla;
    HloModuleBuilder mb("chain");
    HloComputationBuilder& c = mb.AddEntryComputation("main");
    HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {512, 1024}), "x");
    HloOp half = c.Broadcast(c.ConstantR0(xla::F32, 0.5), {512, 1024}, {});
    HloOp k = c.Broadcast(c.ConstantR0(xla::F32, 0.7978845608), {512, 1024}, {});
    HloOp v = x;
    for (int i = 0; i < 4; ++i) {
      HloOp t = c.Tanh(c.Multiply(k, v));
      v = c.Add(c.Multiply(c.Multiply(half, v), c.Add(t, c.Broadcast(c.ConstantR0(xla::F32, 1), {512, 1024}, {}))), x);
    }
    c.Tuple({v});
    return decomposed::tp_test::BuildModule(mb);
  }
  std::vector<float> Random(uint32_t seed) const {
    return decomposed::tp_test::RandomValues(512 * 1024, seed);
  }
  std::vector<Value> DenseInputs(const std::vector<float>& x) const {
    return {decomposed::tp_test::F32Array({512, 1024}, x)};
  }
};

template <class Model>
void BisectOverSingleRun(benchmark::State& state, const Model& model) {
  auto m = model.Build(0);
  const std::vector<Value> in = model.DenseInputs(model.Random(1));
  double single = 0, bisect = 0;
  int64_t instructions = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    absl::StatusOr<Value> r = decomposed::eval::Evaluate(*m, in, {});
    const auto t1 = Clock::now();
    absl::StatusOr<decomposed::BisectReport> b = decomposed::Bisect(*m, in, {});
    const auto t2 = Clock::now();
    if (!r.ok() || !b.ok()) {
      state.SkipWithError("evaluation failed");
      return;
    }
    instructions = b->instructions;
    benchmark::DoNotOptimize(r);
    single += Seconds(t0, t1);
    bisect += Seconds(t1, t2);
  }
  state.counters["ratio"] = bisect / single;
  state.counters["single_ms"] = 1e3 * single / state.iterations();
  state.counters["bisect_ms"] = 1e3 * bisect / state.iterations();
  state.counters["instructions"] = static_cast<double>(instructions);
}

void BM_BisectOverSingleRun_Attention(benchmark::State& state) {
  BisectOverSingleRun(state, kAttention);
}
void BM_BisectOverSingleRun_Mlp(benchmark::State& state) { BisectOverSingleRun(state, kMlp); }
void BM_BisectOverSingleRun_Elementwise(benchmark::State& state) {
  BisectOverSingleRun(state, ElementwiseChain{});
}
BENCHMARK(BM_BisectOverSingleRun_Elementwise)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_BisectOverSingleRun_Attention)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_BisectOverSingleRun_Mlp)->Unit(benchmark::kMillisecond)->MinTime(2);

void BM_TpReplayOverSingleRuns(benchmark::State& state) {
  const int64_t n = state.range(0);
  const decomposed::tp_test::Mlp& model = kMlp;
  auto shard = model.Build(n);
  // The same rank module with each rank alone in its group: one rank runs
  // on its own, its all-reduce the identity.
  decomposed::hlo::CollectiveOptions alone;
  for (int64_t r = 0; r < n; ++r) alone.replica_groups.push_back({r});
  auto solo = model.Build(n, &alone);
  const auto w = model.Random(3);
  std::vector<std::vector<Value>> in;
  for (int64_t r = 0; r < n; ++r) in.push_back(model.RankInputs(w, n, r));
  const decomposed::hlo::HloModule* mods[] = {shard.get()};
  double singles = 0, replay = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int64_t r = 0; r < n; ++r) {
      absl::StatusOr<Value> v = decomposed::eval::Evaluate(*solo, in[r], {});
      if (!v.ok()) {
        state.SkipWithError("evaluation failed");
        return;
      }
      benchmark::DoNotOptimize(v);
    }
    const auto t1 = Clock::now();
    absl::StatusOr<std::vector<Value>> out = decomposed::eval::EvaluateReplicas(mods, in, {});
    const auto t2 = Clock::now();
    if (!out.ok()) {
      state.SkipWithError("replay failed");
      return;
    }
    singles += Seconds(t0, t1);
    replay += Seconds(t1, t2);
  }
  state.counters["ratio"] = replay / singles;
  state.counters["singles_ms"] = 1e3 * singles / state.iterations();
  state.counters["replay_ms"] = 1e3 * replay / state.iterations();
}
BENCHMARK(BM_TpReplayOverSingleRuns)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
