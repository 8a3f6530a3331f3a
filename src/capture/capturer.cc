#include "decomposed/capture/capturer.h"

#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

namespace decomposed::capture {

std::string VllmCacheRoot(const EnvLookup& env) {
  std::string root;
  if (std::optional<std::string> v = env("VLLM_CACHE_ROOT")) {
    root = *v;
  } else {
    std::string cache;
    if (std::optional<std::string> x = env("XDG_CACHE_HOME")) {
      cache = *x;
    } else {
      cache = "~/.cache";
    }
    root = cache + "/vllm";
  }
  // os.path.expanduser: a leading "~" or "~/" is $HOME.
  if (root == "~" || root.rfind("~/", 0) == 0) {
    std::optional<std::string> home = env("HOME");
    if (home) root = *home + root.substr(1);
  }
  return root;
}

std::string DefaultSnapshotRoot(const EnvLookup& env) {
  std::string r = VllmCacheRoot(env);
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r + "/neuron/snapshots";
}

std::string CallDirName(std::string_view hash, int64_t global_rank,
                        int64_t call_index) {
  return absl::StrCat(Sv(hash), "/rank", global_rank, "/call", call_index);
}

SnapshotCapturer::SnapshotCapturer(SnapshotConfig config,
                                   std::string compilation_hash, RankInfo rank,
                                   std::string root, CaptureBudget* budget)
    : selector_(std::move(config)),
      hash_(std::move(compilation_hash)),
      rank_(rank),
      root_(std::move(root)),
      budget_(budget) {}

CaptureDecision SnapshotCapturer::OnExecute(const ForwardInfo* forward) {
  CaptureDecision d;
  if (forward == nullptr) return d;
  d.has_context = true;
  d.call_index = calls_++;
  const SnapshotConfig& c = selector_.config();
  d.rank_selected = c.enabled && c.RankSelected(rank_.tp_rank);
  if (!d.rank_selected) return d;
  d.verdict = selector_.Decide(selector_.EvaluateForward(*forward), d.call_index);
  if (!d.verdict.selected) return d;
  CaptureBudget& b = budget_ ? *budget_ : CaptureBudget::Global(c.max_captures);
  if (!b.TryConsume()) {
    d.budget_refused = true;
    return d;
  }
  d.capture = true;
  d.call_dir = absl::StrCat(root_, "/",
                            CallDirName(hash_, rank_.global_rank, d.call_index));
  return d;
}

absl::StatusOr<CaptureDecision> SnapshotCapturer::Capture(
    const ForwardInfo* forward, std::span<const HostTensor> inputs,
    const BundleWriteOptions& options) {
  CaptureDecision d = OnExecute(forward);
  if (!d.capture) return d;
  CallMeta m;
  m.hash = hash_;
  m.format = selector_.config().format;
  m.global_rank = rank_.global_rank;
  m.tp_rank = rank_.tp_rank;
  m.dp_rank = rank_.dp_rank;
  m.call_index = d.call_index;
  m.selected_by = d.verdict.selected_by;
  m.matches = d.verdict.matches;
  m.forward = *forward;
  absl::Status s = WriteBundle(d.call_dir, inputs, m, options);
  if (!s.ok()) return s;
  return d;
}

}  // namespace decomposed::capture
