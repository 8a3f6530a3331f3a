#include "decomposed/capture/plan.h"

#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/capture/budget.h"
#include "decomposed/capture/selector.h"
#include "decomposed/status.h"

namespace decomposed::capture {

absl::StatusOr<nlohmann::json> PlanCaptures(const SnapshotConfig& config,
                                            const nlohmann::json& forwards,
                                            const RankInfo& rank,
                                            const std::string& root) {
  if (!forwards.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a JSON list of forwards, found ", forwards.type_name()));
  }
  std::vector<std::string> budget_log;
  CaptureBudget budget(config.max_captures,
                       [&](std::string_view l) { budget_log.emplace_back(l); });
  std::map<std::string, std::unique_ptr<SnapshotCapturer>> capturers;
  nlohmann::json captures = nlohmann::json::array();
  for (size_t k = 0; k < forwards.size(); ++k) {
    const nlohmann::json& f = forwards[k];
    const std::string where = absl::StrCat("forward ", k);
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", Sv(what)));
    };
    if (!f.is_object()) return bad("not an object");
    std::optional<ForwardInfo> info;
    auto ids = f.find("req_ids");
    if (ids != f.end() && !ids->is_null()) {
      absl::StatusOr<ForwardInfo> fi = ForwardInfoFromJson(f);
      if (!fi.ok()) return Prefix(fi.status(), where);
      info = *std::move(fi);
    }
    auto neffs = f.find("neffs");
    if (neffs == f.end() || !neffs->is_array()) return bad("no \"neffs\" list");
    for (const nlohmann::json& n : *neffs) {
      if (!n.is_string()) return bad("a NEFF hash that is not a string");
      const std::string hash = n.get<std::string>();
      std::unique_ptr<SnapshotCapturer>& cap = capturers[hash];
      if (!cap) {
        cap = std::make_unique<SnapshotCapturer>(config, hash, rank, root,
                                                 &budget);
      }
      CaptureDecision d = cap->OnExecute(info ? &*info : nullptr);
      if (!d.capture) continue;
      nlohmann::json matches = nlohmann::json::array();
      for (const Match& m : d.verdict.matches) matches.push_back(MatchJson(m));
      captures.push_back({{"forward", k},
                          {"neff", hash},
                          {"call_index", d.call_index},
                          {"dir", CallDirName(hash, rank.global_rank,
                                              d.call_index)},
                          {"selected_by", d.verdict.selected_by},
                          {"matches", std::move(matches)}});
    }
  }
  return nlohmann::json{
      {"config", SnapshotConfigJson(config)},
      {"warnings", config.warnings},
      {"root", root},
      {"rank",
       {{"global_rank", rank.global_rank},
        {"tp_rank", rank.tp_rank},
        {"dp_rank", rank.dp_rank}}},
      {"rank_selected", config.enabled && config.RankSelected(rank.tp_rank)},
      {"budget_log", budget_log},
      {"captures", std::move(captures)}};
}

}  // namespace decomposed::capture
