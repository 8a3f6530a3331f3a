#include "facts.h"

#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "absl/strings/ascii.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/capturer.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/plan.h"
#include "decomposed/capture/torch_dtype.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/version.h"
#include "decomposed/xla/primitive_type.h"
#include "nlohmann/json.hpp"

namespace py = pybind11;

namespace decomposed::python {
namespace {

ThrowStatusFn g_throw = nullptr;

[[noreturn]] void Raise(const absl::Status& s, const std::string& path = "") {
  g_throw(s, path);
  throw std::runtime_error(std::string(s.message()));  // g_throw always throws
}

std::string Dump(const nlohmann::json& j) {
  return JsonText(j, kJsonLine);
}

py::object NoneIfEmpty(std::string_view s) {
  return s.empty() ? py::object(py::none()) : py::object(py::str(std::string(s)));
}

// One row per XLA array type (element_bytes > 0): (lower-case name,
// element bytes, .npy descr or None when NumPy has no such type ("|V2":
// bf16, fp8, ...), ml_dtypes name or None, whether XLA can load it, the
// torch attribute or None).
py::list ElementTypes() {
  py::list rows;
  for (const PrimitiveTypeInfo& t : kPrimitiveTypes) {
    if (t.element_bytes == 0) continue;
    const bool native = !t.npy_descr.empty() && t.npy_descr[1] != 'V';
    const capture::TorchDtype* torch = capture::TorchDtypeForXla(t.type);
    rows.append(py::make_tuple(
        absl::AsciiStrToLower(std::string(t.name)), t.element_bytes,
        native ? NoneIfEmpty(t.npy_descr) : py::object(py::none()),
        NoneIfEmpty(t.ml_dtype), t.loadable,
        torch ? NoneIfEmpty(torch->attr) : py::object(py::none())));
  }
  return rows;
}

// One row per PyTorch dtype bundles know: (name "torch.float32", attribute
// "float32", element bytes, the XLA type's lower-case name or None).
py::list TorchDtypes() {
  py::list rows;
  for (const capture::TorchDtype& d : capture::kTorchDtypes) {
    rows.append(py::make_tuple(
        std::string(d.name), std::string(d.attr), d.element_bytes,
        d.xla_type == PrimitiveType::kInvalid
            ? py::object(py::none())
            : py::object(py::str(absl::AsciiStrToLower(
                  std::string(PrimitiveTypeName(d.xla_type)))))));
  }
  return rows;
}

std::string BundleLsJson(const std::string& root) {
  absl::StatusOr<nlohmann::json> list;
  {
    py::gil_scoped_release nogil;
    list = capture::ListBundlesJson(root);
  }
  if (!list.ok()) Raise(list.status(), root);
  return Dump(*list);
}

// `forwards_json`: the plan's forwards as JSON text; `env`: the capture
// variables (None: the process environment); `root`: None for
// DefaultSnapshotRoot().
std::string CapturePlanJson(const std::string& forwards_json, py::object env,
                            int64_t global_rank, int64_t tp_rank,
                            int64_t dp_rank, std::optional<std::string> root) {
  absl::StatusOr<capture::SnapshotConfig> config =
      env.is_none() ? capture::ResolveSnapshotConfigFromEnvironment()
                    : capture::ResolveSnapshotConfig(
                          env.cast<std::map<std::string, std::string>>());
  if (!config.ok()) Raise(config.status());
  nlohmann::json forwards = nlohmann::json::parse(forwards_json, nullptr,
                                                  /*allow_exceptions=*/false);
  if (forwards.is_discarded()) {
    throw py::value_error("capture.plan: forwards are not JSON");
  }
  absl::StatusOr<nlohmann::json> plan = capture::PlanCaptures(
      *config, forwards, capture::RankInfo{global_rank, tp_rank, dp_rank},
      root ? *root : capture::DefaultSnapshotRoot());
  if (!plan.ok()) Raise(plan.status());
  return Dump(*plan);
}

}  // namespace

void RegisterFacts(py::module_& m, ThrowStatusFn throw_status) {
  g_throw = throw_status;
  m.attr("__version__") = std::string(kVersion);
  m.attr("_ENV_PREFIX") = std::string(capture::kEnvPrefix);
  m.def("_element_types", &ElementTypes);
  m.def("_torch_dtypes", &TorchDtypes);
  m.def("_bundle_ls_json", &BundleLsJson, py::arg("root"));
  m.def("_capture_plan_json", &CapturePlanJson, py::arg("forwards_json"),
        py::arg("env"), py::arg("global_rank"), py::arg("tp_rank"),
        py::arg("dp_rank"), py::arg("root"));
}

}  // namespace decomposed::python
