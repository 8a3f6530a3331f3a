// compare --baseline (the three-way comparison) and compare --plot; see
// three_way.h.
#include "three_way.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "decomposed/analysis/plots.h"

namespace decomposed::cli {
namespace {

// compare's options that have no meaning in the three-way form.
constexpr const char* kTwoSidedOnly[] = {"--mode", "--rtol", "--atol", "--show",
                                         "--allow-dtype-mismatch"};
// The options that have meaning only in the three-way form.
constexpr const char* kThreeWayOnly[] = {"--bc-threshold", "--max-sigma-ratio",
                                         "--max-linf-ratio", "--max-l2-ratio", "--bins",
                                         "--quantiles"};

bool Given(const CLI::App& app, const char* name) {
  const CLI::Option* o = app.get_option_no_throw(name);
  return o != nullptr && o->count() > 0;
}

}  // namespace

std::shared_ptr<ThreeWayCli> AddThreeWayOptions(CLI::App& app) {
  auto tw = std::make_shared<ThreeWayCli>();
  app.add_option("MORE", tw->more,
                 "further EXPECTED ACTUAL pairs, one per --baseline (three-way)");
  app.add_option("--baseline", tw->baselines,
                 "three-way comparison: the FP32 side the errors of EXPECTED and ACTUAL "
                 "are measured from (once per EXPECTED ACTUAL pair, in order)")
      ->allow_extra_args(false);
  ThreeWayOptions& o = tw->options;
  app.add_option("--bc-threshold", o.bc_threshold,
                 "three-way: pass when the Bhattacharyya coefficient is at least this ...")
      ->check(kUnitInterval)
      ->capture_default_str();
  app.add_option("--max-sigma-ratio", o.max_sigma_ratio,
                 "three-way: ... or the sigma-ratio at most this")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--max-linf-ratio", o.max_linf_ratio,
                 "three-way: and the worst L-inf ratio below this")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--max-l2-ratio", o.max_l2_ratio,
                 "three-way: and the worst L2 ratio below this")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--bins", o.bins, "three-way: histogram bins of the coefficient")
      ->check(CLI::Range(size_t{1}, kMaxThreeWayBins))
      ->capture_default_str();
  app.add_option("--quantiles", o.quantiles, "three-way: QQ-plot quantile levels")
      ->check(CLI::Range(size_t{2}, kMaxThreeWayQuantiles))
      ->capture_default_str();
  app.add_option("--plot", tw->plot,
                 "write an SVG picture: error histograms and QQ-plot (with --baseline), "
                 "else the scatter of actual against expected");
  app.add_option("--plot-points", tw->plot_points,
                 "scatter points sampled per tensor (two-sided --plot)")
      ->check(CLI::Range(size_t{1}, kMaxScatterPoints))
      ->capture_default_str();
  return tw;
}

void RequireTwoSided(const CLI::App& app, const ThreeWayCli& tw) {
  if (!tw.more.empty()) {
    throw CLI::ValidationError(
        "MORE", "more than two sides need --baseline (one per EXPECTED ACTUAL pair)");
  }
  for (const char* name : kThreeWayOnly) {
    if (Given(app, name)) throw CLI::ValidationError(name, "applies only with --baseline");
  }
}

int RunThreeWay(const CLI::App& app, const ThreeWayCli& tw, const std::string& expected,
                const std::string& actual, const TensorSetOptions& sets, bool equal_nan,
                bool json, ProgressMode progress_mode) {
  for (const char* name : kTwoSidedOnly) {
    if (Given(app, name)) {
      throw CLI::ValidationError(name, "is a two-sided option: it has no meaning with --baseline");
    }
  }
  if (Given(app, "--plot-points")) {
    throw CLI::ValidationError("--plot-points", "applies to the two-sided --plot only");
  }
  std::vector<std::string> sides = {expected, actual};
  sides.insert(sides.end(), tw.more.begin(), tw.more.end());
  if (sides.size() % 2 != 0) {
    throw CLI::ValidationError("MORE", "sides come in EXPECTED ACTUAL pairs: one is alone");
  }
  if (sides.size() / 2 != tw.baselines.size()) {
    throw CLI::ValidationError(
        "--baseline", absl::StrCat(sides.size() / 2, " EXPECTED ACTUAL pairs but ",
                                   tw.baselines.size(), " --baseline: give one per pair"));
  }
  auto fail = [&](const absl::Status& s) {
    Fail(app, s);
    return kExitUsage;
  };
  std::vector<std::unique_ptr<TensorSet>> open;
  std::vector<ThreeWayRun> runs;
  std::vector<std::string> paths;
  for (size_t k = 0; k < tw.baselines.size(); ++k) {
    ThreeWayRun run;
    using Slot = std::pair<const std::string*, TensorSet**>;
    for (auto [path, slot] : {Slot{&sides[2 * k], &run.expected},
                              Slot{&sides[2 * k + 1], &run.actual},
                              Slot{&tw.baselines[k], &run.baseline}}) {
      absl::StatusOr<std::unique_ptr<TensorSet>> s = OpenTensorSet(*path, sets);
      if (!s.ok()) return fail(s.status());
      *slot = s->get();
      open.push_back(*std::move(s));
      paths.push_back(*path);
    }
    runs.push_back(run);
  }
  ThreeWayOptions o = tw.options;
  o.equal_nan = equal_nan;
  ProgressLine progress("compare", TotalFileBytes(paths), progress_mode);
  uint64_t done = 0;
  o.on_bytes = [&](uint64_t n) { progress.Update(done += n); };
  absl::StatusOr<ThreeWayReport> r = ThreeWayCompare(runs, o);
  if (r.ok()) progress.Complete();
  progress.Done();
  if (!r.ok()) return fail(r.status());
  std::cout << (json ? ThreeWayReportJson(*r) : ThreeWayReportText(*r));
  if (!tw.plot.empty()) {
    if (absl::Status s = WriteSvgFile(tw.plot, ThreeWaySvg(*r)); !s.ok()) return fail(s);
  }
  return r->pass ? kExitOk : kExitFailure;
}

ScatterPlot::ScatterPlot(const ThreeWayCli& tw) : path_(tw.plot) {
  if (!path_.empty()) tap_ = std::make_unique<ScatterTap>(tw.plot_points);
}

TensorSet& ScatterPlot::Expected(TensorSet& set) {
  if (!tap_) return set;
  expected_ = tap_->WrapExpected(set);
  return *expected_;
}

TensorSet& ScatterPlot::Actual(TensorSet& set) {
  if (!tap_) return set;
  actual_ = tap_->WrapActual(set);
  return *actual_;
}

absl::Status ScatterPlot::Write(const CompareReport& report) {
  if (!tap_) return absl::OkStatus();
  return WriteSvgFile(path_, ScatterSvg(report, tap_->Take()));
}

}  // namespace decomposed::cli
