// The capturer: ties configuration, selection, budget and the bundle writer
// together for one compiled NEFF, like vLLM-Neuron's SnapshotCapturer.
//
// Per NEFF execution (OnExecute):
//   1. no published forward context (warmup): nothing, the call counter does
//      not move;
//   2. otherwise the NEFF's call index is the counter's value, and the
//      counter advances (each execution counts: a NEFF run twice in one
//      forward advances twice);
//   3. capture disabled, or this tp-rank filtered out by RANKS: nothing more;
//   4. the verdict: request/token matches of the forward OR'd with the call
//      rule for this call index;
//   5. selected: one unit of the process-global budget is consumed; when
//      none is left, nothing is captured (the budget logs once);
//   6. the bundle goes to <root>/<hash>/rank<global_rank>/call<N>/.
//
// Not thread-safe per instance (one NEFF executes on one thread at a time,
// as in the reference); the budget is.
//
// Example:
//   SnapshotCapturer cap(config, "a1b2", {.global_rank = 5, .tp_rank = 1},
//                        DefaultSnapshotRoot());
//   absl::StatusOr<CaptureDecision> d = cap.Capture(&forward, inputs);
//   // d->capture: the inputs were written to d->call_dir
#ifndef DECOMPOSED_CAPTURE_CAPTURER_H_
#define DECOMPOSED_CAPTURE_CAPTURER_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "decomposed/capture/budget.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/selector.h"

namespace decomposed::capture {

struct RankInfo {
  int64_t global_rank = 0;
  int64_t tp_rank = 0;
  int64_t dp_rank = 0;
};

// vLLM's cache root: $VLLM_CACHE_ROOT, else $XDG_CACHE_HOME/vllm, else
// ~/.cache/vllm, with a leading "~" expanded from $HOME (vllm/envs.py).
std::string VllmCacheRoot(const EnvLookup& env = ProcessEnvironment());
// <VllmCacheRoot()>/neuron/snapshots.
std::string DefaultSnapshotRoot(const EnvLookup& env = ProcessEnvironment());
// "<hash>/rank<global_rank>/call<call_index>" (relative to the root).
std::string CallDirName(std::string_view hash, int64_t global_rank,
                        int64_t call_index);

struct CaptureDecision {
  bool has_context = false;  // a forward context was published
  int64_t call_index = -1;   // -1 without a context
  bool rank_selected = false;
  Verdict verdict;            // the rules' verdict
  bool budget_refused = false;
  bool capture = false;       // selected, rank ok and budget consumed
  std::string call_dir;       // set when capture
};

class SnapshotCapturer {
 public:
  // `budget` nullptr: CaptureBudget::Global(config.max_captures).
  SnapshotCapturer(SnapshotConfig config, std::string compilation_hash,
                   RankInfo rank, std::string root,
                   CaptureBudget* budget = nullptr);

  // Steps 1-5 for one execution; advances the call counter.
  CaptureDecision OnExecute(const ForwardInfo* forward);

  // OnExecute and, when it says capture, WriteBundle of `inputs`. Errors
  // from the writer are returned (the reference aborts the forward).
  absl::StatusOr<CaptureDecision> Capture(const ForwardInfo* forward,
                                          std::span<const HostTensor> inputs,
                                          const BundleWriteOptions& options = {});

  // The next call index this NEFF will get.
  int64_t next_call_index() const { return calls_; }
  const CaptureSelector& selector() const { return selector_; }

 private:
  CaptureSelector selector_;
  std::string hash_;
  RankInfo rank_;
  std::string root_;
  CaptureBudget* budget_;
  int64_t calls_ = 0;
};

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_CAPTURER_H_
