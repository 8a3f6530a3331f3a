// The capture policy's dry run, `decomposed capture plan` and
// decomposed.capture.plan() in Python: which NEFF executions of a list of
// forwards the configuration would capture, and where, writing nothing.
//
// `forwards` is a JSON list; each entry is a forward as ForwardInfoFromJson
// reads it (selector.h: only "req_ids" is required, the rest default as
// ForwardInfo does) plus "neffs", the NEFF hashes executed in that forward,
// in order. An entry without "req_ids" (or with null) is a forward without a published
// context (warmup): its executions move no call counter. One
// SnapshotCapturer per hash and one budget of config.max_captures for the
// whole plan (its own, not the process-global one), as a process serving
// these forwards would have.
//
// The result:
//   {"config": SnapshotConfigJson(config), "warnings": [...],
//    "root": root, "rank": {"global_rank", "tp_rank", "dp_rank"},
//    "rank_selected": bool, "budget_log": [the budget's log lines],
//    "captures": [{"forward": k, "neff": hash, "call_index": N,
//                  "dir": "<hash>/rank<G>/call<N>", "selected_by": [...],
//                  "matches": [MatchJson...]}]}
// kInvalidArgument "forward K: ..." when an entry is malformed (not an
// object, no "neffs" list, a hash that is not a string, a field of the wrong
// type), or when `forwards` is not a list.
//
// Example:
//   absl::StatusOr<SnapshotConfig> c = ResolveSnapshotConfigFromEnvironment();
//   nlohmann::json forwards = nlohmann::json::parse(
//       R"([{"req_ids": ["r1"], "positions": [3], "neffs": ["a1b2"]}])");
//   absl::StatusOr<nlohmann::json> plan =
//       PlanCaptures(*c, forwards, RankInfo{}, DefaultSnapshotRoot());
//   // (*plan)["captures"][0]["dir"] == "a1b2/rank0/call0" when enabled
#ifndef DECOMPOSED_CAPTURE_PLAN_H_
#define DECOMPOSED_CAPTURE_PLAN_H_

#include <string>

#include "absl/status/statusor.h"
#include "decomposed/capture/capturer.h"
#include "decomposed/capture/config.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

absl::StatusOr<nlohmann::json> PlanCaptures(const SnapshotConfig& config,
                                            const nlohmann::json& forwards,
                                            const RankInfo& rank,
                                            const std::string& root);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_PLAN_H_
