// Bisect and the tensor-parallel replay against plain runs, as ratios
// measured in one process (docs/eval.md §9.5, §10.4):
//   BM_BisectOverSingleRun_*: Bisect (xla against f32) over one Evaluate
//     (xla) of the same module; the target is <= 2.5. ratio_to_both_runs:
//     over the xla run plus the f32 run, what the lockstep adds to them.
//   BM_TpReplayOverSingleRuns/N: EvaluateReplicas of N ranks over N
//     Evaluates of one rank's module with its collectives made the identity
//     (single-member groups: the same arithmetic, nothing exchanged); the
//     target is <= 1.2.
// Each iteration times both sides back to back; the `ratio` counter is
// the total of one over the total of the other.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstring>

#include "decomposed/analysis/divergence.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/literal.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/run/run.h"
#include "decomposed/snapshot/producer.h"
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

// Nothing but elementwise ops (no GEMM to amortise anything), a
// GELU-and-residual chain on [512,1024]. In f32 both runs make the same
// bytes at every step, which the lockstep knows without comparing; in bf16
// (xla rounds, f32 keeps f32) every value is compared: the comparisons'
// worst case.
struct ElementwiseChain {
  int type = decomposed::xla::F32;
  std::unique_ptr<decomposed::hlo::HloModule> Build(int64_t) const {
    using namespace decomposed::hlo;
    HloModuleBuilder mb("chain");
    HloComputationBuilder& c = mb.AddEntryComputation("main");
    HloOp x = c.Parameter(0, MakeArrayShape(type, {512, 1024}), "x");
    auto scalar = [&](double v) { return c.Broadcast(c.ConstantR0(type, v), {512, 1024}, {}); };
    HloOp half = scalar(0.5), k = scalar(0.7978845608), one = scalar(1);
    HloOp v = x;
    for (int i = 0; i < 4; ++i) {
      HloOp t = c.Tanh(c.Multiply(k, v));
      v = c.Add(c.Multiply(c.Multiply(half, v), c.Add(t, one)), x);
    }
    c.Tuple({v});
    return decomposed::tp_test::BuildModule(mb);
  }
  std::vector<float> Random(uint32_t seed) const {
    return decomposed::tp_test::RandomValues(512 * 1024, seed);
  }
  std::vector<Value> DenseInputs(const std::vector<float>& x) const {
    decomposed::eval::Array f = decomposed::tp_test::F32Array({512, 1024}, x);
    if (type == decomposed::xla::F32) return {f};
    decomposed::eval::Array b =
        *decomposed::eval::Array::Allocate(decomposed::PrimitiveType::kBF16, {512, 1024});
    for (size_t i = 0; i < x.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &x[i], 4);
      b.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);
    }
    return {b};
  }
};

template <class Model>
void BisectOverSingleRun(benchmark::State& state, const Model& model) {
  auto m = model.Build(0);
  const std::vector<Value> in = model.DenseInputs(model.Random(1));
  double single = 0, bisect = 0, reference = 0;
  int64_t instructions = 0, compared = 0;
  for (auto _ : state) {
    const decomposed::BisectOptions options;
    const auto t0 = Clock::now();
    absl::StatusOr<Value> r = decomposed::eval::Evaluate(*m, in, options.actual);
    const auto t1 = Clock::now();
    absl::StatusOr<decomposed::BisectReport> b = decomposed::Bisect(*m, in, options);
    const auto t2 = Clock::now();
    // The reference run alone (f32: bf16 values stored as f32 cost more).
    absl::StatusOr<Value> f = decomposed::eval::Evaluate(*m, in, options.reference);
    const auto t3 = Clock::now();
    if (!r.ok() || !b.ok() || !f.ok()) {
      state.SkipWithError("evaluation failed");
      return;
    }
    instructions = b->instructions;
    compared = b->compared;
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(f);
    single += Seconds(t0, t1);
    bisect += Seconds(t1, t2);
    reference += Seconds(t2, t3);
  }
  state.counters["ratio"] = bisect / single;
  // Bisect over the two runs it makes: what stepping and comparing add.
  state.counters["ratio_to_both_runs"] = bisect / (single + reference);
  state.counters["reference_ms"] = 1e3 * reference / state.iterations();
  state.counters["single_ms"] = 1e3 * single / state.iterations();
  state.counters["bisect_ms"] = 1e3 * bisect / state.iterations();
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["compared"] = static_cast<double>(compared);
}

void BM_BisectOverSingleRun_Attention(benchmark::State& state) {
  BisectOverSingleRun(state, kAttention);
}
void BM_BisectOverSingleRun_Mlp(benchmark::State& state) { BisectOverSingleRun(state, kMlp); }
void BM_BisectOverSingleRun_ElementwiseF32(benchmark::State& state) {
  BisectOverSingleRun(state, ElementwiseChain{decomposed::xla::F32});
}
void BM_BisectOverSingleRun_ElementwiseBf16(benchmark::State& state) {
  BisectOverSingleRun(state, ElementwiseChain{decomposed::xla::BF16});
}
BENCHMARK(BM_BisectOverSingleRun_ElementwiseF32)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_BisectOverSingleRun_ElementwiseBf16)->Unit(benchmark::kMillisecond)->MinTime(2);
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

// `run --three-way` over one `run` of the same snapshot, in one process:
// each iteration times run::RunSnapshot without a check and with the
// three-way check (the f32 baseline run, the run, and ThreeWayCompare
// against the recorded outputs), both loading the snapshot from the file.
// The snapshot holds the module, its inputs and, as recorded outputs, the
// xla run's own. The target is at most 2.2.
template <class Model>
void ThreeWayOverSingleRun(benchmark::State& state, const Model& model) {
  auto m = model.Build(0);
  const std::vector<Value> in = model.DenseInputs(model.Random(1));
  absl::StatusOr<Value> out = decomposed::eval::Evaluate(*m, in, {});
  if (!out.ok()) {
    state.SkipWithError("evaluation failed");
    return;
  }
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("replay_bench_" + std::to_string(::getpid()) + ".decomposed_hlo_snapshot"))
          .string();
  decomposed::PackRequest pack;
  pack.snapshot = *decomposed::SnapshotFromModule(m->proto().SerializeAsString());
  for (const Value& v : in) {
    pack.inputs.push_back(
        decomposed::ProtoLiteral(*decomposed::eval::LiteralFromArray(v.array())));
  }
  for (const Value& v : decomposed::eval::FlattenOutputs(*out)) {
    pack.outputs.push_back(
        decomposed::ProtoLiteral(*decomposed::eval::LiteralFromArray(v.array())));
  }
  if (!decomposed::PackToFile(pack, path).ok()) {
    state.SkipWithError("pack failed");
    return;
  }
  decomposed::run::RunRequest plain;
  plain.source.snapshot = path;
  decomposed::run::RunRequest three = plain;
  three.check = decomposed::run::RunCheck::kThreeWay;
  double single = 0, three_way = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    absl::StatusOr<decomposed::run::RunReport> a = decomposed::run::RunSnapshot(plain);
    const auto t1 = Clock::now();
    absl::StatusOr<decomposed::run::RunReport> b = decomposed::run::RunSnapshot(three);
    const auto t2 = Clock::now();
    if (!a.ok() || !b.ok() || !b->three_way) {
      state.SkipWithError("run failed");
      break;
    }
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    single += Seconds(t0, t1);
    three_way += Seconds(t1, t2);
  }
  std::filesystem::remove(path);
  state.counters["ratio"] = three_way / single;
  state.counters["single_ms"] = 1e3 * single / state.iterations();
  state.counters["three_way_ms"] = 1e3 * three_way / state.iterations();
}

void BM_ThreeWayOverSingleRun_Mlp(benchmark::State& state) {
  ThreeWayOverSingleRun(state, kMlp);
}
void BM_ThreeWayOverSingleRun_ElementwiseF32(benchmark::State& state) {
  ThreeWayOverSingleRun(state, ElementwiseChain{decomposed::xla::F32});
}
void BM_ThreeWayOverSingleRun_ElementwiseBf16(benchmark::State& state) {
  ThreeWayOverSingleRun(state, ElementwiseChain{decomposed::xla::BF16});
}
BENCHMARK(BM_ThreeWayOverSingleRun_Mlp)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_ThreeWayOverSingleRun_ElementwiseF32)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_ThreeWayOverSingleRun_ElementwiseBf16)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
