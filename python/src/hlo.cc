#include "hlo.h"

#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/serialize.h"
#include "decomposed/hlo/summary.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/snapshot/module_file.h"

namespace py = pybind11;

namespace decomposed::python {
namespace {

ThrowStatusFn g_throw = nullptr;

[[noreturn]] void Raise(const absl::Status& s, const std::string& path = "") {
  g_throw(s, path);
  throw std::runtime_error(std::string(s.message()));  // g_throw always throws
}

std::unique_ptr<hlo::HloModule> View(const py::bytes& proto_bytes) {
  xla::HloModuleProto proto;
  std::string_view b = proto_bytes;
  if (b.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(b.data(), static_cast<int>(b.size()))) {
    Raise(absl::InvalidArgumentError(
        "module: expected a serialized HloModuleProto, found bytes protobuf "
        "rejects"));
  }
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m =
      hlo::HloModule::Create(std::move(proto));
  if (!m.ok()) Raise(m.status());
  return *std::move(m);
}

hlo::HloTextStyle StyleOf(const std::string& style) {
  if (style == "long") return hlo::HloTextStyle::kLong;
  if (style == "modern") return hlo::HloTextStyle::kModern;
  if (style == "short") return hlo::HloTextStyle::kShort;
  throw py::value_error("style: expected 'long', 'modern' or 'short', found '" +
                        style + "'");
}

std::string Text(const py::bytes& proto, const std::string& style,
                 bool large_constants,
                 const std::vector<std::pair<std::string, std::string>>& config,
                 bool has_entry_layout, std::optional<bool> metadata,
                 bool compact_entry_layout, bool name_after_brace,
                 bool operand_index_annotations) {
  std::unique_ptr<hlo::HloModule> m = View(proto);
  hlo::HloPrintOptions o;
  o.style = StyleOf(style);
  o.print_large_constants = large_constants;
  o.print_metadata = metadata;
  hlo::HloModuleTextExtras extras;
  extras.config_attributes = config;
  extras.has_entry_computation_layout = has_entry_layout;
  extras.compact_entry_layout_parameters = compact_entry_layout;
  extras.name_after_closing_brace = name_after_brace;
  extras.operand_index_annotations = operand_index_annotations;
  std::string out;
  StringSink sink(&out);
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = hlo::PrintHloModule(*m, o, sink, &extras);
  }
  if (!s.ok()) Raise(s);
  return out;
}

std::string SummaryJson(const py::bytes& proto) {
  return JsonText(hlo::SummarizeModule(*View(proto)).ToJson());
}

// Every instruction: (computation, name, opcode, shape text, operand names,
// is_root), computations in proto order.
py::list Instructions(const py::bytes& proto) {
  std::unique_ptr<hlo::HloModule> m = View(proto);
  py::list out;
  for (const hlo::HloComputation* c : m->computations()) {
    for (const hlo::HloInstruction* in : c->instructions()) {
      py::list operands;
      for (const hlo::HloInstruction* o : in->operands()) operands.append(o->name());
      py::dict d;
      d["computation"] = c->name();
      d["name"] = in->name();
      d["opcode"] = in->opcode_string();
      d["shape"] = hlo::ShapeToText(in->shape());
      d["operands"] = operands;
      d["root"] = in->IsRoot();
      d["entry"] = c->IsEntry();
      const xla::OpMetadata& md = in->proto().metadata();
      d["op_name"] = md.op_name();
      d["source_file"] = md.source_file();
      d["source_line"] = md.source_line();
      out.append(std::move(d));
    }
  }
  return out;
}

// (module bytes, config attributes, has entry_computation_layout, its
// parameters in 2023's spelling, whether computations closed with `} // name`,
// whether short-style operands had index comments).
py::tuple Parse(const std::string& text) {
  absl::StatusOr<hlo::ParsedHloText> p;
  {
    py::gil_scoped_release release;
    p = hlo::ParseHloText(text);
  }
  if (!p.ok()) Raise(p.status());
  return py::make_tuple(py::bytes(hlo::DeterministicSerialization(p->module)),
                        p->extras.config_attributes,
                        p->extras.has_entry_computation_layout,
                        p->extras.compact_entry_layout_parameters,
                        p->extras.name_after_closing_brace,
                        p->extras.operand_index_annotations);
}

// (module bytes, form name, config attributes, has entry layout, its
// parameters in 2023's spelling, whether computations closed with `} // name`,
// whether short-style operands had index comments).
py::tuple Load(const std::string& path, int64_t graph) {
  absl::StatusOr<ModuleFile> f;
  {
    py::gil_scoped_release release;
    ModuleFileOptions options;
    if (graph >= 0) options.graph = graph;
    f = ReadModuleFile(path, options);
  }
  if (!f.ok()) Raise(f.status(), path);
  return py::make_tuple(py::bytes(hlo::DeterministicSerialization(f->module)),
                        std::string(ModuleFileFormName(f->form)),
                        f->extras.config_attributes,
                        f->extras.has_entry_computation_layout,
                        f->extras.compact_entry_layout_parameters,
                        f->extras.name_after_closing_brace,
                        f->extras.operand_index_annotations);
}

}  // namespace

void RegisterHlo(py::module_& m, ThrowStatusFn throw_status) {
  g_throw = throw_status;
  m.def("_hlo_text", &Text, py::arg("module"), py::arg("style"),
        py::arg("large_constants"), py::arg("config"),
        py::arg("has_entry_layout"), py::arg("metadata") = py::none(),
        py::arg("compact_entry_layout") = false, py::arg("name_after_brace") = false,
        py::arg("operand_index_annotations") = false);
  m.def("_hlo_summary_json", &SummaryJson);
  m.def("_hlo_instructions", &Instructions);
  m.def("_hlo_parse", &Parse);
  m.def("_hlo_load", &Load, py::arg("path"), py::arg("graph"));
}

}  // namespace decomposed::python
