// decomposed capture plan [--global-rank G --tp-rank T --dp-rank D]
//                         FORWARDS.json
// A dry run of the input-snapshot policy with the current environment.
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "command.h"
#include "decomposed/capture/capturer.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;
using nlohmann::json;

bool ParseRank(const Args& args, std::string_view name, int64_t* out) {
  std::string v = args.Get(name, "0");
  return absl::SimpleAtoi(v, out) && *out >= 0;
}

int Plan(const std::vector<std::string>& argv) {
  Args args(argv, {"global-rank", "tp-rank", "dp-rank"}, {});
  RankInfo rank;
  if (!args.ok() || args.positional().size() != 1 ||
      !ParseRank(args, "global-rank", &rank.global_rank) ||
      !ParseRank(args, "tp-rank", &rank.tp_rank) ||
      !ParseRank(args, "dp-rank", &rank.dp_rank)) {
    std::cerr << "decomposed capture plan: "
              << (!args.ok() ? args.error()
                  : args.positional().size() != 1
                      ? "expected one FORWARDS.json"
                      : "ranks must be non-negative integers")
              << "\nusage: decomposed capture plan [--global-rank G "
                 "--tp-rank T --dp-rank D] FORWARDS.json\n";
    return 2;
  }
  absl::StatusOr<SnapshotConfig> config = ResolveSnapshotConfigFromEnvironment();
  if (!config.ok()) {
    std::cerr << "decomposed capture plan: " << config.status().message() << "\n";
    return 1;
  }
  const std::string& path = args.positional()[0];
  std::ifstream in(path);
  if (!in) {
    std::cerr << "decomposed capture plan: cannot open " << path << "\n";
    return 1;
  }
  json forwards = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (forwards.is_discarded() || !forwards.is_array()) {
    std::cerr << "decomposed capture plan: " << path
              << ": expected a JSON list of forwards\n";
    return 1;
  }
  std::vector<std::string> budget_log;
  CaptureBudget budget(config->max_captures,
                       [&](std::string_view l) { budget_log.emplace_back(l); });
  std::map<std::string, std::unique_ptr<SnapshotCapturer>> capturers;
  json captures = json::array();
  for (size_t k = 0; k < forwards.size(); ++k) {
    const json& f = forwards[k];
    auto bad = [&](std::string_view what) {
      std::cerr << "decomposed capture plan: " << path << ": forward " << k
                << ": " << what << "\n";
      return 1;
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
  std::cout << DumpJson(out) << "\n";
  return 0;
}

const Registrar kPlan({"capture plan",
                       "capture plan [--global-rank G --tp-rank T --dp-rank D] "
                       "FORWARDS.json   dry-run the input-snapshot policy",
                       &Plan});

}  // namespace
}  // namespace decomposed::cli
