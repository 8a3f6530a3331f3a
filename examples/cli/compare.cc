// decomposed compare EXPECTED ACTUAL [--inputs] [--mode torch|numpy|xla]
//     [--rtol R] [--atol A] [--equal-nan] [--show N] [--json]
//     [--allow-dtype-mismatch] [--dtype TYPE | --dtype INDEX=TYPE ...]
//     [--snapshot-type auto|decomposed|snapshot] [--plot OUT.svg]
// and the three-way form, with --baseline (three_way.h).
// Exit codes (the table in command.h): 0 every tensor passes, 1 some tensor
// fails or is missing, 2 usage errors or unreadable input, as diff, cmp and
// XLA's compare_literals (docs/compare.md).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "command.h"
#include "progress.h"
#include "three_way.h"
#include "decomposed/analysis/report.h"
#include "decomposed/npy/npy_reader.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string expected, actual;
  bool inputs = false;
  CompareMode mode = CompareMode::kTorch;
  std::optional<double> rtol, atol;
  bool equal_nan = false;
  int64_t show = 5;
  bool json = false;
  bool allow_dtype_mismatch = false;
  std::vector<std::string> dtypes;
  SnapshotType snapshot_type = SnapshotType::kAuto;
  bool progress = false, quiet = false;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("EXPECTED", st->expected,
                 "decomposed or classic snapshot, unpack directory, bundle call "
                 "directory, .npy or .pt file")
      ->required();
  app.add_option("ACTUAL", st->actual, "the same forms")->required();
  app.add_flag("--inputs", st->inputs,
               "compare the inputs of snapshots (value_input<i>.npy of unpack "
               "directories) instead of the outputs");
  AddEnumOption(app, "--mode", &st->mode, kCompareModeNames, "closeness rule");
  app.add_option("--rtol", st->rtol, "relative tolerance (overrides the mode's default)")
      ->check(kNonNegativeReal);
  app.add_option("--atol", st->atol, "absolute tolerance (overrides the mode's default)")
      ->check(kNonNegativeReal);
  app.add_flag("--equal-nan", st->equal_nan, "two NaNs match");
  app.add_option("--show", st->show, "mismatches to list per tensor")
      ->check(kNonNegative)
      ->capture_default_str();
  app.add_flag("--json", st->json, "print JSON");
  app.add_flag("--allow-dtype-mismatch", st->allow_dtype_mismatch,
               "compare tensors of different types in f64");
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddProgressOptions(app, &st->progress, &st->quiet);
  app.add_option("--dtype", st->dtypes,
                 "true type of void (|V1, |V2) .npy tensors: TYPE for all, or "
                 "INDEX=TYPE (bf16, f8e4m3fn, ...)");
  std::shared_ptr<ThreeWayCli> tw = AddThreeWayOptions(app);
  return [st, tw, &app]() -> int {
    TensorSetOptions so;
    so.inputs = st->inputs;
    so.snapshot_type = st->snapshot_type;
    if (absl::Status s = ParseDtypeOptions(st->dtypes, &so); !s.ok()) {
      throw CLI::ValidationError("--dtype", std::string(s.message()));
    }
    if (tw->active()) {
      return RunThreeWay(app, *tw, st->expected, st->actual, so, st->equal_nan, st->json,
                         ProgressModeOf(st->progress, st->quiet));
    }
    RequireTwoSided(app, *tw);
    CompareOptions o;
    o.mode = st->mode;
    o.rtol = st->rtol;
    o.atol = st->atol;
    o.equal_nan = st->equal_nan;
    o.show = static_cast<size_t>(st->show);
    o.allow_dtype_mismatch = st->allow_dtype_mismatch;
    // Unreadable input: the exit-code table's 2 for this command.
    auto fail = [&](const absl::Status& s) { return Fail(app, s); };
    absl::StatusOr<std::unique_ptr<TensorSet>> e = OpenTensorSet(st->expected, so);
    if (!e.ok()) return fail(e.status());
    absl::StatusOr<std::unique_ptr<TensorSet>> a = OpenTensorSet(st->actual, so);
    if (!a.ok()) return fail(a.status());
    // The files' sizes estimate the bytes compared (both sides summed).
    ProgressLine progress("compare",
                          TotalFileBytes({st->expected, st->actual}),
                          ProgressModeOf(st->progress, st->quiet));
    uint64_t done = 0;
    o.on_bytes = [&](uint64_t n) { progress.Update(done += n); };
    ScatterPlot plot(*tw);  // --plot: the scatter of actual against expected
    absl::StatusOr<CompareReport> r =
        CompareTensorSets(plot.Expected(**e), plot.Actual(**a), o);
    if (r.ok()) progress.Complete();
    progress.Done();
    if (!r.ok()) return fail(r.status());
    std::cout << (st->json ? CompareReportJson(*r) : CompareReportText(*r));
    if (absl::Status s = plot.Write(*r); !s.ok()) return fail(s);
    return ExitCode(ExitStyle::kQuestion,
                    r->pass ? Outcome::kSuccess : Outcome::kNo);
  };
}

const Registrar kRegistrar({"compare",
                            "compare two runs' tensors element by element "
                            "(torch, numpy or xla rules), or three ways "
                            "with --baseline",
                            &Setup, ExitStyle::kQuestion});

}  // namespace
}  // namespace decomposed::cli
