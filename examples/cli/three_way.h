// `decomposed compare`'s three-way form and its pictures, kept beside
// compare.cc so that compare's own options stay as they are:
//
//   decomposed compare EXPECTED ACTUAL [EXPECTED ACTUAL ...]
//       --baseline BASELINE [--baseline BASELINE ...]
//       [--bc-threshold B] [--max-sigma-ratio S] [--max-linf-ratio L]
//       [--max-l2-ratio R] [--bins N] [--quantiles Q] [--plot OUT.svg]
//
// The k-th EXPECTED ACTUAL pair and the k-th --baseline make run k
// (analysis/three_way.h); --inputs, --dtype, --snapshot-type, --equal-nan,
// --json, --progress and --quiet apply as in the two-sided form; --mode,
// --rtol, --atol, --show and --allow-dtype-mismatch belong to the two-sided
// form and are usage errors with --baseline. --plot OUT.svg writes the
// histograms and QQ-plots (three-way) or the scatter of actual against
// expected (two-sided, --plot-points per tensor). Exit codes as compare: 0
// pass, 1 fail, 2 usage, unreadable input or a picture that cannot be
// written.
#ifndef DECOMPOSED_EXAMPLES_CLI_THREE_WAY_H_
#define DECOMPOSED_EXAMPLES_CLI_THREE_WAY_H_

#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/analysis/three_way.h"
#include "progress.h"

namespace decomposed::cli {

struct ThreeWayCli {
  std::vector<std::string> more;       // EXPECTED ACTUAL pairs after the first
  std::vector<std::string> baselines;  // one per pair
  ThreeWayOptions options;
  std::string plot;                    // --plot OUT.svg
  size_t plot_points = kDefaultScatterPoints;
  bool active() const { return !baselines.empty(); }
};

// Adds the positional MORE (further pairs), --baseline, the thresholds,
// --bins, --quantiles, --plot and --plot-points to compare's `app`.
std::shared_ptr<ThreeWayCli> AddThreeWayOptions(CLI::App& app);

// Without --baseline: a usage error (CLI::ValidationError) when MORE holds
// sides or a three-way option was given.
void RequireTwoSided(const CLI::App& app, const ThreeWayCli& tw);

// compare --baseline: opens every side, compares, prints the report, draws
// --plot; returns the exit code. Usage errors are thrown as
// CLI::ValidationError.
int RunThreeWay(const CLI::App& app, const ThreeWayCli& tw, const std::string& expected,
                const std::string& actual, const TensorSetOptions& sets, bool equal_nan,
                bool json, ProgressMode progress);

// The two-sided --plot: wraps the sides in a ScatterTap when --plot is
// given (else passes them through) and draws the scatter after the
// comparison.
class ScatterPlot {
 public:
  explicit ScatterPlot(const ThreeWayCli& tw);
  TensorSet& Expected(TensorSet& set);
  TensorSet& Actual(TensorSet& set);
  // Writes --plot (nothing without it).
  absl::Status Write(const CompareReport& report);

 private:
  std::string path_;
  std::unique_ptr<ScatterTap> tap_;
  std::unique_ptr<TensorSet> expected_, actual_;
};

}  // namespace decomposed::cli

#endif  // DECOMPOSED_EXAMPLES_CLI_THREE_WAY_H_
