#include "three_way.h"

#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "decomposed/analysis/plots.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/analysis/three_way.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/npy/npy_reader.h"
#include "nlohmann/json.hpp"

namespace py = pybind11;

namespace decomposed::python {
namespace {

ThrowStatusFn g_throw = nullptr;

[[noreturn]] void Raise(const absl::Status& s, const std::string& path = "") {
  g_throw(s, path);
  throw std::runtime_error(std::string(s.message()));  // g_throw always throws
}

TensorSetOptions SetOptions(bool inputs, const py::dict& dtypes) {
  TensorSetOptions o;
  o.inputs = inputs;
  for (auto [k, v] : dtypes) {
    std::string name = v.cast<std::string>();
    std::optional<PrimitiveType> t = ParseDtypeName(name);
    if (!t) throw py::value_error("unknown element type '" + name + "'");
    o.dtypes[k.cast<size_t>()] = *t;
  }
  return o;
}

std::unique_ptr<TensorSet> Open(const std::string& path, const TensorSetOptions& o) {
  absl::StatusOr<std::unique_ptr<TensorSet>> s = OpenTensorSet(path, o);
  if (!s.ok()) Raise(s.status(), path);
  return *std::move(s);
}

std::string ThreeWayJson(const std::vector<std::string>& expected,
                         const std::vector<std::string>& actual,
                         const std::vector<std::string>& baseline, bool inputs,
                         const py::dict& dtypes, double bc_threshold, double max_sigma_ratio,
                         double max_linf_ratio, double max_l2_ratio, size_t bins,
                         size_t quantiles, bool equal_nan, std::optional<std::string> plot) {
  if (expected.empty() || expected.size() != actual.size() ||
      expected.size() != baseline.size()) {
    throw py::value_error(
        "three_way: expected, actual and baseline must name as many sides each (one per run)");
  }
  ThreeWayOptions o;
  o.bc_threshold = bc_threshold;
  o.max_sigma_ratio = max_sigma_ratio;
  o.max_linf_ratio = max_linf_ratio;
  o.max_l2_ratio = max_l2_ratio;
  o.bins = bins;
  o.quantiles = quantiles;
  o.equal_nan = equal_nan;
  if (absl::Status s = ValidateThreeWayOptions(o); !s.ok()) {
    throw py::value_error(std::string(s.message()));
  }
  const TensorSetOptions so = SetOptions(inputs, dtypes);
  py::gil_scoped_release nogil;
  std::vector<std::unique_ptr<TensorSet>> open;
  std::vector<ThreeWayRun> runs;
  for (size_t k = 0; k < expected.size(); ++k) {
    ThreeWayRun run;
    open.push_back(Open(expected[k], so));
    run.expected = open.back().get();
    open.push_back(Open(actual[k], so));
    run.actual = open.back().get();
    open.push_back(Open(baseline[k], so));
    run.baseline = open.back().get();
    runs.push_back(run);
  }
  absl::StatusOr<ThreeWayReport> r = ThreeWayCompare(runs, o);
  if (!r.ok()) Raise(r.status());
  if (plot) {
    if (absl::Status s = WriteSvgFile(*plot, ThreeWaySvg(*r)); !s.ok()) Raise(s, *plot);
  }
  return ThreeWayReportJson(*r);
}

std::string ComparePlotJson(const std::string& expected, const std::string& actual,
                            std::optional<std::string> plot, size_t points, bool inputs,
                            const std::string& mode, std::optional<double> rtol,
                            std::optional<double> atol, bool equal_nan,
                            bool allow_dtype_mismatch, const py::dict& expected_dtypes,
                            const py::dict& actual_dtypes) {
  CompareOptions o;
  std::optional<CompareMode> m = CompareModeFromName(mode);
  if (!m) throw py::value_error("mode must be 'torch', 'numpy' or 'xla'");
  if (points < 1 || points > kMaxScatterPoints) {
    throw py::value_error("plot_points must be 1 to " + std::to_string(kMaxScatterPoints));
  }
  o.mode = *m;
  o.rtol = rtol;
  o.atol = atol;
  o.equal_nan = equal_nan;
  o.allow_dtype_mismatch = allow_dtype_mismatch;
  if (absl::Status s = ValidateCompareOptions(o); !s.ok()) {
    throw py::value_error(std::string(s.message()));
  }
  const TensorSetOptions eo = SetOptions(inputs, expected_dtypes);
  const TensorSetOptions ao = SetOptions(inputs, actual_dtypes);
  py::gil_scoped_release nogil;
  std::unique_ptr<TensorSet> e = Open(expected, eo);
  std::unique_ptr<TensorSet> a = Open(actual, ao);
  ScatterTap tap(points);
  std::unique_ptr<TensorSet> te = tap.WrapExpected(*e);
  std::unique_ptr<TensorSet> ta = tap.WrapActual(*a);
  absl::StatusOr<CompareReport> r = CompareTensorSets(*te, *ta, o);
  if (!r.ok()) Raise(r.status());
  std::vector<ScatterTensor> sample = tap.Take();
  if (plot) {
    if (absl::Status s = WriteSvgFile(*plot, ScatterSvg(*r, sample)); !s.ok()) Raise(s, *plot);
  }
  nlohmann::json j = nlohmann::json::parse(CompareReportJson(*r));
  nlohmann::json scatter = nlohmann::json::array();
  for (const ScatterTensor& t : sample) {
    std::vector<uint64_t> index;
    std::vector<double> ev, av;
    for (const ScatterPoint& p : t.points) {
      index.push_back(p.index);
      ev.push_back(p.expected);
      av.push_back(p.actual);
    }
    nlohmann::json x{{"index", t.index}, {"elements", t.elements}, {"element", index}};
    // NaN and infinities as "nan" / "inf" / "-inf", as the report writes them.
    auto values = [](const std::vector<double>& v) {
      nlohmann::json out = nlohmann::json::array();
      for (double d : v) {
        if (std::isnan(d)) {
          out.push_back("nan");
        } else if (std::isinf(d)) {
          out.push_back(d > 0 ? "inf" : "-inf");
        } else {
          out.push_back(d);
        }
      }
      return out;
    };
    x["expected"] = values(ev);
    x["actual"] = values(av);
    scatter.push_back(std::move(x));
  }
  j["scatter"] = std::move(scatter);
  return JsonText(j, kJsonLine);
}

}  // namespace

void RegisterThreeWay(py::module_& m, ThrowStatusFn throw_status) {
  g_throw = throw_status;
  m.def("_three_way_json", &ThreeWayJson);
  m.def("_compare_plot_json", &ComparePlotJson);
}

}  // namespace decomposed::python
