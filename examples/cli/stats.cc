// decomposed stats FILE|DIR... [--inputs|--outputs] [--json]
//     [--fail-on-nonfinite] [--dtype ...]
//     [--snapshot-type auto|decomposed|snapshot] [--progress|--quiet]
// NaN hunting: per tensor NaN / Inf / zero counts and min, max, mean, std
// over the finite values; of a snapshot or unpack directory its inputs and
// outputs, or the list --inputs / --outputs names. Exit (the table in
// command.h) 0; 1 with --fail-on-nonfinite when any tensor holds a NaN or
// an Inf, saying which on stderr; 2 on usage errors or unreadable input.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "command.h"
#include "progress.h"
#include "decomposed/analysis/report.h"
#include "decomposed/npy/npy_reader.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> paths;
  bool json = false;
  bool fail_on_nonfinite = false;
  bool inputs = false, outputs = false;
  std::vector<std::string> dtypes;
  SnapshotType snapshot_type = SnapshotType::kAuto;
  bool progress = false, quiet = false;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->paths,
                 "snapshots (inputs and outputs), unpack directories, bundle "
                 "call directories, .npy or .pt files")
      ->required();
  CLI::Option* inputs = app.add_flag(
      "--inputs", st->inputs,
      "of snapshots and unpack directories, only the inputs (as compare "
      "--inputs compares them)");
  app.add_flag("--outputs", st->outputs,
               "of snapshots and unpack directories, only the outputs")
      ->excludes(inputs);
  app.add_flag("--json", st->json, "print JSON");
  app.add_flag("--fail-on-nonfinite", st->fail_on_nonfinite,
               "exit 1 when any tensor holds a NaN or an Inf");
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddProgressOptions(app, &st->progress, &st->quiet);
  app.add_option("--dtype", st->dtypes,
                 "true type of void (|V1, |V2) .npy tensors: TYPE or INDEX=TYPE");
  return [st, &app]() -> int {
    TensorSetOptions base;
    base.snapshot_type = st->snapshot_type;
    if (absl::Status s = ParseDtypeOptions(st->dtypes, &base); !s.ok()) {
      throw CLI::ValidationError("--dtype", std::string(s.message()));
    }
    std::vector<TensorStatsEntry> entries;
    ProgressLine progress("stats", TotalFileBytes(st->paths),
                          ProgressModeOf(st->progress, st->quiet));
    uint64_t done = 0;
    const BytesFn on_bytes = [&](uint64_t n) { progress.Update(done += n); };
    const StatsLists lists = st->inputs    ? StatsLists::kInputs
                             : st->outputs ? StatsLists::kOutputs
                                           : StatsLists::kBoth;
    for (const std::string& path : st->paths) {
      if (absl::Status s = AppendPathStats(path, base, &entries, on_bytes, lists);
          !s.ok()) {
        progress.Done();
        return Fail(app, s);  // the exit-code table's 2 for this command
      }
    }
    progress.Complete();
    progress.Done();
    std::cout << (st->json ? StatsReportJson(entries) : StatsReportText(entries));
    if (st->fail_on_nonfinite && AnyNonFinite(entries)) {
      std::cout.flush();
      std::cerr << CommandName(app) << ": " << NonFiniteSummary(entries) << "\n";
      return ExitCode(ExitStyle::kQuestion, Outcome::kNo);
    }
    return ExitCode(ExitStyle::kQuestion, Outcome::kSuccess);
  };
}

const Registrar kRegistrar({"stats",
                            "NaN / Inf counts and min, max, mean, std of every "
                            "tensor",
                            &Setup, ExitStyle::kQuestion});

}  // namespace
}  // namespace decomposed::cli
