// decomposed capture plan [--global-rank G --tp-rank T --dp-rank D]
//                         FORWARDS.json
// A dry run of the input-snapshot policy with the current environment
// (capture/plan.h, PlanCaptures: the Python package's capture.plan() too).
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "decomposed/capture/plan.h"
#include "decomposed/io/input.h"
#include "decomposed/limits.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;
using nlohmann::json;

int Plan(const CLI::App& app, const RankInfo& rank, const std::string& path) {
  absl::StatusOr<SnapshotConfig> config = ResolveSnapshotConfigFromEnvironment();
  if (!config.ok()) return Fail(app, config.status());
  // A file or "-"; the system's reason when it cannot be read, as every
  // command gives it.
  absl::StatusOr<std::string> text = ReadSmallInput(path, limits::kMaxMetaJsonBytes);
  if (!text.ok()) return Fail(app, text.status());
  json forwards = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (forwards.is_discarded()) {
    return Fail(app, absl::InvalidArgumentError(
                         absl::StrCat(path, ": expected a JSON list of forwards")));
  }
  absl::StatusOr<json> plan =
      PlanCaptures(*config, forwards, rank, DefaultSnapshotRoot());
  if (!plan.ok()) return Fail(app, Prefix(plan.status(), path));
  std::cout << JsonText(*plan);
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
