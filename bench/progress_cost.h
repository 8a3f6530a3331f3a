// The progress line's cost, shared by unpack_bench and pack_bench: times a
// run with the CLI's ProgressLine (examples/cli/progress.h) forced on and
// off, alternating in one process, the order flipping each iteration.
// Reports on_s and off_s (mean seconds per run) and ratio_on_vs_off.
#ifndef DECOMPOSED_BENCH_PROGRESS_COST_H_
#define DECOMPOSED_BENCH_PROGRESS_COST_H_

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "benchmark/benchmark.h"
#include "progress.h"  // examples/cli: the progress line whose cost is measured

namespace decomposed::bench {

// `prepare()` runs untimed before each run (remove old outputs...);
// `run(progress)` is timed, with `progress` empty when the line is off.
inline void TimeProgressOnOff(
    benchmark::State& state, const std::string& label, uint64_t total,
    const std::function<void()>& prepare,
    const std::function<absl::Status(std::function<void(uint64_t)>)>& run) {
  double on_s = 0, off_s = 0;
  bool on_first = false;
  for (auto _ : state) {
    on_first = !on_first;
    double iteration = 0;
    for (bool on : {on_first, !on_first}) {
      prepare();
      ::sync();
      cli::ProgressLine line(label, total,
                             on ? cli::ProgressMode::kOn
                                : cli::ProgressMode::kOff);
      std::function<void(uint64_t)> progress;
      if (on) progress = [&line](uint64_t d) { line.Update(d); };
      auto t0 = std::chrono::steady_clock::now();
      absl::Status s = run(progress);
      double t = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0).count();
      line.Done();
      if (!s.ok()) {
        state.SkipWithError(std::string(s.message()).c_str());
        return;
      }
      (on ? on_s : off_s) += t;
      iteration += t;
    }
    state.SetIterationTime(iteration);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["on_s"] = on_s / n;
  state.counters["off_s"] = off_s / n;
  state.counters["ratio_on_vs_off"] = off_s > 0 ? on_s / off_s : 0;
}

}  // namespace decomposed::bench

#endif  // DECOMPOSED_BENCH_PROGRESS_COST_H_
