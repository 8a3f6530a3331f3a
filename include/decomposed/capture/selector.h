// Capture selection: the three rules of vLLM-Neuron's input snapshots
// (docs/format.md §16.2), OR'd together.
//
//   call_index  per NEFF: fires when the NEFF's 0-based call index (among
//               forwards that published a context) is configured, or on
//               every call for -1. With no rule of any kind configured, call
//               0 fires; when only token/request rules are configured, it
//               never fires.
//   request     per batch row whose request id equals a target or starts
//               with target + "-" (vLLM appends "-<suffix>"). One match per
//               row; position = the row's position on decode, -1 on prefill
//               (and -1 when the row has no position).
//   token       decode only. For each real row b < min(#req_ids,
//               #positions) with position p, the first offset in
//               1..max_generated with p + offset targeted records one match
//               at position p + offset.
//
// Matches are listed request matches first, then token matches, each in
// row order. `selected_by` is the sorted set of the reasons that fired
// ("call_index" < "request" < "token").
//
// Example:
//   CaptureSelector sel(config);
//   ForwardVerdict fv = sel.EvaluateForward(forward);   // once per forward
//   Verdict v = sel.Decide(fv, /*call_index=*/3);       // per NEFF execution
//   if (v.selected) { /* capture this execution's inputs */ }
#ifndef DECOMPOSED_CAPTURE_SELECTOR_H_
#define DECOMPOSED_CAPTURE_SELECTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/capture/config.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

inline constexpr char kReasonCallIndex[] = "call_index";
inline constexpr char kReasonRequest[] = "request";
inline constexpr char kReasonToken[] = "token";

// The identity of one forward, as the model runner publishes it.
struct ForwardInfo {
  std::vector<std::string> req_ids;
  std::vector<int64_t> positions;
  bool is_prompt = false;
  // Tokens each decode row generates this step (1 + speculative tokens).
  int64_t max_generated = 1;
  std::optional<int64_t> global_step;
};

// A forward from JSON, the one reader of forwards for every caller (the
// `capture plan` file's entries, the Python hook's arguments):
//   {"req_ids": [str, ...], "positions": [int, ...], "is_prompt": bool,
//    "max_generated": int, "global_step": int or null}
// "req_ids" is required (a forward without it has no context: the caller's
// case, not a ForwardInfo). Every other field may be omitted or null, and
// then keeps the default of the struct above. Keys not listed are ignored
// (a plan's "neffs"). kInvalidArgument naming the field, what it should be
// and what it holds ("\"positions\": expected a list of integers, found
// string \"7\"") when a field has the wrong JSON type; callers prefix where
// the forward came from.
//
// Example:
//   ForwardInfoFromJson({{"req_ids", {"r1"}}, {"positions", {17}}});
//   // -> req_ids {"r1"}, positions {17}, is_prompt false, max_generated 1
absl::StatusOr<ForwardInfo> ForwardInfoFromJson(const nlohmann::json& j);

struct Match {
  int64_t batch_index = 0;
  std::string request_id;
  int64_t position = -1;
  std::string reason;  // "request" or "token"

  bool operator==(const Match&) const = default;
};

// The per-forward (NEFF-independent) part: request and token matches.
struct ForwardVerdict {
  std::vector<Match> matches;
  bool request_fired = false;
  bool token_fired = false;
};

// The decision for one NEFF execution.
struct Verdict {
  bool selected = false;
  std::vector<std::string> selected_by;  // sorted
  std::vector<Match> matches;
};

class CaptureSelector {
 public:
  explicit CaptureSelector(SnapshotConfig config) : config_(std::move(config)) {}

  // Request and token rules for one forward.
  ForwardVerdict EvaluateForward(const ForwardInfo& forward) const;
  // The call-index rule for one NEFF call index.
  bool CallRuleFires(int64_t call_index) const;
  // Both together.
  Verdict Decide(const ForwardVerdict& forward, int64_t call_index) const;

  const SnapshotConfig& config() const { return config_; }

 private:
  SnapshotConfig config_;
};

nlohmann::json MatchJson(const Match& m);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_SELECTOR_H_
