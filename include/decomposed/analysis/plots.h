// The pictures of compare, as standalone SVG documents (analysis/svg.h),
// drawn as Neuron's module test guidelines draw them with matplotlib:
//
// ThreeWaySvg: per row (all tensors first when there are several, then each
// tensor: the failing ones first, then in index order, at most
// kMaxPlotTensors), on the left the histograms of the target error (red)
// and the reference error (blue) overlaid, on BC's own bins (the report's
// `edges`), counts on a log scale, each set's sigma (RMS) as a dashed
// vertical line; on the right the QQ-plot, target quantiles against
// reference quantiles with the 45-degree line (points above it: the target
// error is larger at that quantile). The row's title gives BC, the
// sigma-ratio, the worst ratios and the verdict.
//
// ScatterSvg: per tensor (at most kMaxPlotTensors), the sampled elements'
// actual values against their expected values (analysis/scatter.h) with the
// y = x line; the title gives the tensor's verdict, greatest absolute
// difference and the points drawn out of the elements. Non-finite values are
// not drawn.
//
// Each bar of a histogram is a <rect class="bin target|reference"
// data-count="N"/> inside a <g class="histogram" data-counted="M"> (the
// counts of a set sum to M); each QQ point a <circle class="qq"/>, each
// scatter point a <circle class="point"/>. WriteSvgFile writes a document
// through AtomicFileSink (a temp file beside the target, renamed over it).
//
// Example:
//   absl::StatusOr<decomposed::ThreeWayReport> r = decomposed::ThreeWayCompare(runs, {});
//   absl::Status s = decomposed::WriteSvgFile("errors.svg", decomposed::ThreeWaySvg(*r));
#ifndef DECOMPOSED_ANALYSIS_PLOTS_H_
#define DECOMPOSED_ANALYSIS_PLOTS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/analysis/three_way.h"

namespace decomposed {

// Tensors drawn in one picture (each row is about 300 pixels high).
inline constexpr size_t kMaxPlotTensors = 32;

std::string ThreeWaySvg(const ThreeWayReport& report);

// `report` gives each tensor's verdict and metrics for the titles; tensors
// without points are left out.
std::string ScatterSvg(const CompareReport& report, const std::vector<ScatterTensor>& points);

// Writes `svg` to `path` atomically. Errors name the path.
absl::Status WriteSvgFile(const std::string& path, std::string_view svg);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_PLOTS_H_
