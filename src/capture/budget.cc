#include "decomposed/capture/budget.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"

namespace decomposed::capture {

namespace {
std::atomic<CaptureBudget*> g_override{nullptr};
}  // namespace

CaptureBudget::CaptureBudget(int64_t max_captures, Logger logger)
    : max_(max_captures), logger_(std::move(logger)) {
  if (!logger_) {
    logger_ = [](std::string_view line) { std::cerr << line << "\n"; };
  }
}

bool CaptureBudget::TryConsume() {
  int64_t u = used_.load(std::memory_order_relaxed);
  while (u < max_) {
    if (used_.compare_exchange_weak(u, u + 1, std::memory_order_relaxed)) {
      return true;
    }
  }
  if (!logged_.exchange(true)) {
    logger_(absl::StrCat(
        "input snapshot: capture budget of ", max_,
        " exhausted (VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_MAX_CAPTURES); no "
        "further captures in this process"));
  }
  return false;
}

CaptureBudget& CaptureBudget::Global(int64_t max_captures) {
  if (CaptureBudget* o = g_override.load()) return *o;
  static CaptureBudget* process = new CaptureBudget(max_captures);
  return *process;
}

void CaptureBudget::SetGlobalForTesting(CaptureBudget* budget) {
  g_override.store(budget);
}

}  // namespace decomposed::capture
