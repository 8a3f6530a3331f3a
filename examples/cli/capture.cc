// decomposed capture plan [--global-rank G --tp-rank T --dp-rank D]
//                         FORWARDS.json
// A dry run of the input-snapshot policy with the current environment.
#include <cerrno>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "decomposed/io/input.h"
#include "decomposed/capture/capturer.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;
using nlohmann::json;

int Plan(const CLI::App& app, const RankInfo& rank, const std::string& path) {
  absl::StatusOr<SnapshotConfig> config = ResolveSnapshotConfigFromEnvironment();
  if (!config.ok()) return Fail(app, config.status());
  std::ifstream in(path);
  if (!in) {
    // The system's reason, as every command gives it.
    return Fail(app, OpenError(path, errno));
  }
  json forwards = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (forwards.is_discarded() || !forwards.is_array()) {
    return Fail(app, absl::InvalidArgumentError(
                         absl::StrCat(path, ": expected a JSON list of forwards")));
  }
  std::vector<std::string> budget_log;
  CaptureBudget budget(config->max_captures,
                       [&](std::string_view l) { budget_log.emplace_back(l); });
  std::map<std::string, std::unique_ptr<SnapshotCapturer>> capturers;
  json captures = json::array();
  for (size_t k = 0; k < forwards.size(); ++k) {
    const json& f = forwards[k];
    auto bad = [&](std::string_view what) {
      return Fail(app, absl::InvalidArgumentError(absl::StrCat(
                           path, ": forward ", k, ": ", Sv(what))));
    };
    if (!f.is_object()) return bad("not an object");
    std::optional<ForwardInfo> info;
    if (f.contains("req_ids")) {
      ForwardInfo fi;
      try {
        fi.req_ids = f.at("req_ids").get<std::vector<std::string>>();
        if (f.contains("positions")) {
          fi.positions = f.at("positions").get<std::vector<int64_t>>();
        }
        fi.is_prompt = f.value("is_prompt", false);
        fi.max_generated = f.value("max_generated", int64_t{1});
        if (f.contains("global_step") && !f["global_step"].is_null()) {
          fi.global_step = f["global_step"].get<int64_t>();
        }
      } catch (const json::exception& e) {
        return bad(e.what());
      }
      info = std::move(fi);
    }
    if (!f.contains("neffs") || !f["neffs"].is_array()) {
      return bad("no \"neffs\" list");
    }
    for (const json& n : f["neffs"]) {
      if (!n.is_string()) return bad("a NEFF hash that is not a string");
      const std::string hash = n.get<std::string>();
      auto& cap = capturers[hash];
      if (!cap) {
        cap = std::make_unique<SnapshotCapturer>(*config, hash, rank,
                                                 DefaultSnapshotRoot(), &budget);
      }
      CaptureDecision d = cap->OnExecute(info ? &*info : nullptr);
      if (!d.capture) continue;
      json matches = json::array();
      for (const Match& m : d.verdict.matches) matches.push_back(MatchJson(m));
      captures.push_back(
          {{"forward", k},
           {"neff", hash},
           {"call_index", d.call_index},
           {"dir", CallDirName(hash, rank.global_rank, d.call_index)},
           {"selected_by", d.verdict.selected_by},
           {"matches", std::move(matches)}});
    }
  }
  json out{{"config", SnapshotConfigJson(*config)},
           {"warnings", config->warnings},
           {"root", DefaultSnapshotRoot()},
           {"rank",
            {{"global_rank", rank.global_rank},
             {"tp_rank", rank.tp_rank},
             {"dp_rank", rank.dp_rank}}},
           {"rank_selected", config->enabled && config->RankSelected(rank.tp_rank)},
           {"budget_log", budget_log},
           {"captures", std::move(captures)}};
  std::cout << JsonText(out);
  return kExitOk;
}

Action Setup(CLI::App& app) {
  struct State {
    std::string forwards;
    RankInfo rank;
  };
  auto st = std::make_shared<State>();
  app.add_option("FORWARDS.json", st->forwards,
                 "a JSON list of forwards: {req_ids, positions, is_prompt, "
                 "max_generated, global_step, neffs}")
      ->required();
  AddRankOptions(app, &st->rank.global_rank, &st->rank.tp_rank,
                 &st->rank.dp_rank);
  return [st, &app] { return Plan(app, st->rank, st->forwards); };
}

const Registrar kPlan({"capture plan",
                       "dry-run the input-snapshot policy under the current "
                       "environment",
                       &Setup});

}  // namespace
}  // namespace decomposed::cli
