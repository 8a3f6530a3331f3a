// Pack throughput against `cp` of the same bytes, in the same process run.
//
// For each element type (F32, BF16 as a |V2 .npy with a .npy.meta sidecar)
// one .npy file of PACK_BENCH_BYTES bytes (default 1 GiB) is created in
// PACK_BENCH_DIR (default /tmp) and synced, so that its writeback does not
// land inside a timed run. Every iteration times one /bin/cp of the .npy
// (the baseline: the kernel's copy of the same bytes) and one pack of the
// same file with PackToFile (module + one input, AtomicFileSink output),
// in an order that flips each iteration; both write fresh names, and the
// outputs are removed and a sync() runs (untimed) before each run. The
// benchmark's time is the pack time (manual timing); counters report
//   cp_s        mean seconds of cp per iteration
//   ratio_vs_cp pack time / cp time, summed over the iterations (aim: <= 1.05)
//   median_ratio  median pack time / median cp time
//   best_ratio    fastest pack run / fastest cp run (bench/samples.h says
//                 why these two are reported)
//   peak_rss_mb this process's peak RSS (cp runs in a child and is not
//               counted), which stays flat as the input grows
// Run: scripts/bench-pack.sh (builds, runs, prints the table).
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "decomposed/npy/npy.h"
#include "decomposed/snapshot/producer.h"
#include "progress_cost.h"
#include "samples.h"

extern char** environ;

namespace decomposed {
namespace {

std::string Dir() {
  const char* d = std::getenv("PACK_BENCH_DIR");
  return d ? d : "/tmp";
}
uint64_t InputBytes() {
  const char* b = std::getenv("PACK_BENCH_BYTES");
  return b ? std::strtoull(b, nullptr, 10) : (uint64_t{1} << 30);
}

// Writes a .npy of `bytes` data bytes (rounded down to whole elements).
std::string MakeNpy(const std::string& name, const std::string& descr,
                    int width) {
  std::string path = Dir() + "/pack_bench_" + name + ".npy";
  int64_t n = static_cast<int64_t>(InputBytes() / width);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string header = FormatNpyHeader({descr, false, {n}});
  out.write(header.data(), header.size());
  std::vector<char> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>(i * 31);
  uint64_t left = static_cast<uint64_t>(n) * width;
  while (left > 0) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    out.write(chunk.data(), k);
    left -= k;
  }
  out.close();
  ::sync();
  return path;
}

double RunCp(const std::string& from, const std::string& to) {
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid;
  const char* argv[] = {"cp", from.c_str(), to.c_str(), nullptr};
  if (posix_spawn(&pid, "/bin/cp", nullptr, nullptr,
                  const_cast<char* const*>(argv), environ) != 0) {
    return -1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto t1 = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double>(t1 - t0).count();
}

double PeakRssMb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

void BM_PackVsCp(benchmark::State& state, const std::string& kind) {
  const bool bf16 = kind == "bf16";
  std::string npy = bf16 ? MakeNpy("bf16", "|V2", 2) : MakeNpy("f32", "<f4", 4);
  if (bf16) {
    std::ofstream(npy + ".meta") << R"({"ml_dtype": "bfloat16"})";
  }
  std::string module = std::string("\x0a\x05" "bench", 7);
  absl::StatusOr<std::string> snap = SnapshotFromModule(module);
  std::string out = Dir() + "/pack_bench_out.dhs";
  std::string cp_out = Dir() + "/pack_bench_cp.npy";
  double cp_total = 0, pack_total = 0;
  std::vector<double> cp_runs, pack_runs;
  uint64_t bytes = 0;
  bool cp_first = false;
  for (auto _ : state) {
    cp_first = !cp_first;
    double cp = 0, pack = 0;
    for (bool is_cp : {cp_first, !cp_first}) {
      std::remove(out.c_str());
      std::remove(cp_out.c_str());
      ::sync();
      if (is_cp) {
        cp = RunCp(npy, cp_out);
        if (cp < 0) {
          state.SkipWithError("cannot run /bin/cp");
          return;
        }
        continue;
      }
      PackRequest req;
      req.snapshot = *snap;
      req.inputs.push_back(NpyLiteral(npy, std::nullopt));
      auto t0 = std::chrono::steady_clock::now();
      absl::Status s = PackToFile(req, out);
      auto t1 = std::chrono::steady_clock::now();
      if (!s.ok()) {
        state.SkipWithError(std::string(s.message()).c_str());
        return;
      }
      pack = std::chrono::duration<double>(t1 - t0).count();
    }
    cp_total += cp;
    pack_total += pack;
    cp_runs.push_back(cp);
    pack_runs.push_back(pack);
    state.SetIterationTime(pack);
    bytes += InputBytes();
  }
  std::remove(out.c_str());
  std::remove(cp_out.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  double iters = static_cast<double>(state.iterations());
  state.counters["cp_s"] = iters ? cp_total / iters : 0;
  state.counters["ratio_vs_cp"] = cp_total > 0 ? pack_total / cp_total : 0;
  const double cp_median = bench::Median(cp_runs);
  const double cp_best = bench::Fastest(cp_runs);
  state.counters["median_ratio"] =
      cp_median > 0 ? bench::Median(pack_runs) / cp_median : 0;
  state.counters["best_ratio"] =
      cp_best > 0 ? bench::Fastest(pack_runs) / cp_best : 0;
  state.counters["peak_rss_mb"] = PeakRssMb();
  state.counters["input_mb"] = InputBytes() / 1048576.0;
  std::remove(npy.c_str());
  std::remove((npy + ".meta").c_str());
}

// The CLI's progress line must cost nothing measurable: pack of the F32
// input with the line off and on (ProgressLine of examples/cli/progress.h,
// forced on, drawn to stderr), alternating in one process, in turn first
// (the order flips each iteration), into a fresh output name.
void BM_PackProgress(benchmark::State& state) {
  std::string npy = MakeNpy("f32", "<f4", 4);
  std::string module = std::string("\x0a\x05" "bench", 7);
  absl::StatusOr<std::string> snap = SnapshotFromModule(module);
  std::string out = Dir() + "/pack_bench_progress.dhs";
  bench::TimeProgressOnOff(
      state, "pack", InputBytes(), [&] { std::remove(out.c_str()); },
      [&](std::function<void(uint64_t)> progress) {
        PackRequest req;
        req.snapshot = *snap;
        req.inputs.push_back(NpyLiteral(npy, std::nullopt));
        req.progress = std::move(progress);
        return PackToFile(req, out);
      });
  std::remove(out.c_str());
  std::remove(npy.c_str());
}
BENCHMARK(BM_PackProgress)->Iterations(6)->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_PackVsCp, F32, std::string("f32"))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);
BENCHMARK_CAPTURE(BM_PackVsCp, BF16, std::string("bf16"))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

}  // namespace
}  // namespace decomposed

BENCHMARK_MAIN();
