// The process-global capture budget (VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_
// MAX_CAPTURES, default 4): every selected NEFF execution consumes one unit;
// when none is left nothing more is captured, and one log line says so (the
// first refused capture logs, later ones are silent).
//
// Thread-safe: TryConsume() is one compare-and-swap loop.
//
// The process-global instance is created by the first Global(max) call with
// that max (later calls return it unchanged, as vLLM resolves the config
// once per process). Tests install their own with SetGlobalForTesting().
//
// Example:
//   CaptureBudget& b = CaptureBudget::Global(config.max_captures);
//   if (verdict.selected && b.TryConsume()) write_bundle();
#ifndef DECOMPOSED_CAPTURE_BUDGET_H_
#define DECOMPOSED_CAPTURE_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

namespace decomposed::capture {

class CaptureBudget {
 public:
  using Logger = std::function<void(std::string_view line)>;

  // `max_captures` > 0. `logger` receives the exhaustion line; the default
  // writes it to stderr.
  explicit CaptureBudget(int64_t max_captures, Logger logger = nullptr);
  CaptureBudget(const CaptureBudget&) = delete;
  CaptureBudget& operator=(const CaptureBudget&) = delete;

  // Takes one unit. False when the budget is spent (logs once).
  bool TryConsume();

  int64_t max_captures() const { return max_; }
  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  int64_t remaining() const { return max_ - used(); }
  bool exhausted() const { return remaining() <= 0; }

  // The process-global budget; created on first use with `max_captures`.
  static CaptureBudget& Global(int64_t max_captures);
  // Replaces the global with `budget` (not owned; nullptr restores the
  // process's own). Not thread-safe against concurrent Global() calls.
  static void SetGlobalForTesting(CaptureBudget* budget);

 private:
  const int64_t max_;
  std::atomic<int64_t> used_{0};
  std::atomic<bool> logged_{false};
  Logger logger_;
};

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_BUDGET_H_
