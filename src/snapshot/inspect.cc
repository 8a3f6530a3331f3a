#include "decomposed/snapshot/inspect.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed {
namespace {

// Scans every element of one list: where it is, and its shape.
template <ByteSource S>
absl::Status ScanList(RepeatedReader<S>& list,
                      std::vector<InspectedLiteral>* out) {
  ElementInfo e;
  for (;;) {
    absl::StatusOr<bool> more = list.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    absl::StatusOr<LiteralPlan> scan = PlanLiteral(
        list.body(), e.length, list.BodyFrame(), {.shape_must_be_message = true});
    if (!scan.ok()) return scan.status();
    InspectedLiteral lit;
    lit.frame = e;
    lit.has_shape = scan->has_shape;
    lit.shape = std::move(scan->shape);
    lit.data_bytes = scan->data_bytes;
    out->push_back(std::move(lit));
  }
}

std::string ShapeString(const xla::ShapeProto& s) {
  Shape shape;
  absl::StatusOr<Shape> parsed =
      ParseShape(s.SerializeAsString(), Frame{"program shape"});
  return parsed.ok() ? parsed->ToString() : "<malformed>";
}

}  // namespace

absl::StatusOr<InspectReport> InspectDecomposedFile(
    const std::string& path, const InspectOptions& options) {
  MmapSource src(path);
  if (!src.status().ok()) return src.status();
  InspectReport report;
  report.file_size = *src.size();
  DecomposedReader reader(src, options.read);
  std::string snapshot;
  absl::StatusOr<ElementInfo> header =
      reader.ReadSnapshot(options.module_info ? &snapshot : nullptr);
  if (!header.ok()) return WithFile(header.status(), path);
  report.snapshot = *header;
  if (options.module_info) {
    xla::HloSnapshot snap;
    if (snap.ParseFromString(snapshot)) {
      InspectedModule m;
      const xla::HloModuleProto& mod = snap.hlo().hlo_module();
      m.name = mod.name();
      m.entry_computation_name = mod.entry_computation_name();
      m.has_program_shape = mod.has_host_program_shape();
      for (const auto& p : mod.host_program_shape().parameters()) {
        m.parameters.push_back(ShapeString(p));
      }
      for (const auto& n : mod.host_program_shape().parameter_names()) {
        m.parameter_names.push_back(n);
      }
      if (mod.host_program_shape().has_result()) {
        m.result = ShapeString(mod.host_program_shape().result());
      }
      report.module = std::move(m);
    }
  }
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return WithFile(n.status(), path);
  report.input_count_offset = reader.inputs().count_offset();
  absl::Status s = ScanList(reader.inputs(), &report.inputs);
  if (!s.ok()) return WithFile(s, path);
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return WithFile(m.status(), path);
  if (m->has_value()) {
    report.output_count_offset = reader.outputs().count_offset();
    s = ScanList(reader.outputs(), &report.outputs);
    if (!s.ok()) return WithFile(s, path);
  }
  s = reader.Finish();
  if (!s.ok()) return WithFile(s, path);
  return report;
}

namespace {

nlohmann::ordered_json LiteralJson(const InspectedLiteral& l) {
  nlohmann::ordered_json j;
  j["offset"] = l.frame.offset;
  j["length"] = l.frame.length;
  if (l.has_shape) {
    j["element_type"] = l.shape.TypeName();
    j["dims"] = l.shape.dimensions;
    if (l.shape.has_layout && !l.shape.is_tuple()) {
      j["minor_to_major"] = l.shape.layout.minor_to_major;
    } else {
      j["minor_to_major"] = nullptr;
    }
  } else {
    j["element_type"] = nullptr;
    j["dims"] = nullptr;
    j["minor_to_major"] = nullptr;
  }
  j["payload_bytes"] = l.data_bytes;
  j["box"] = {{"offset", l.frame.box_offset}, {"length", l.frame.box_length}};
  return j;
}

std::string LiteralLine(std::string_view region, size_t i,
                        const InspectedLiteral& l) {
  return absl::StrFormat(
      "%s %d: box @%d (%d bytes), body @%d (%d bytes) %s payload %d bytes\n",
      region, i, l.frame.box_offset, l.frame.box_length, l.frame.offset,
      l.frame.length, l.has_shape ? l.shape.ToString() : "<no shape>",
      l.data_bytes);
}

}  // namespace

nlohmann::ordered_json InspectReportJson(const InspectReport& r) {
  nlohmann::ordered_json j;
  j["type"] = "decomposed";
  j["snapshot"] = {{"offset", r.snapshot.offset},
                   {"length", r.snapshot.length},
                   {"box", {{"offset", r.snapshot.box_offset},
                            {"length", r.snapshot.box_length}}}};
  if (r.module) {
    j["module"] = {{"name", r.module->name},
                   {"entry_computation_name",
                    r.module->entry_computation_name},
                   {"parameters", r.module->parameters},
                   {"parameter_names", r.module->parameter_names},
                   {"result", r.module->has_program_shape
                                  ? nlohmann::ordered_json(r.module->result)
                                  : nlohmann::ordered_json(nullptr)}};
  } else {
    j["module"] = nullptr;
  }
  j["inputs"] = nlohmann::ordered_json::array();
  for (const auto& l : r.inputs) j["inputs"].push_back(LiteralJson(l));
  if (r.output_count_offset) {
    j["outputs"] = nlohmann::ordered_json::array();
    for (const auto& l : r.outputs) j["outputs"].push_back(LiteralJson(l));
  } else {
    j["outputs"] = nullptr;
  }
  j["file_size"] = r.file_size;
  return j;
}

std::string InspectReportText(const InspectReport& r) {
  std::string out = absl::StrFormat(
      "decomposed file, %d bytes\nsnapshot: box @%d (%d bytes), HloSnapshot "
      "@%d (%d bytes)\n",
      r.file_size, r.snapshot.box_offset, r.snapshot.box_length,
      r.snapshot.offset, r.snapshot.length);
  if (r.module) {
    absl::StrAppend(&out, "module: ", r.module->name, " (entry ",
                    r.module->entry_computation_name, ")\n");
    if (r.module->has_program_shape) {
      absl::StrAppend(&out, "program shape: (",
                      absl::StrJoin(r.module->parameters, ", "), ") -> ",
                      r.module->result, "\n");
    }
  }
  absl::StrAppend(&out, "inputs: ", r.inputs.size(), " (count box @",
                  r.input_count_offset, ")\n");
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    out += LiteralLine("  input", i, r.inputs[i]);
  }
  if (r.output_count_offset) {
    absl::StrAppend(&out, "outputs: ", r.outputs.size(), " (count box @",
                    *r.output_count_offset, ")\n");
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      out += LiteralLine("  output", i, r.outputs[i]);
    }
  } else {
    out += "outputs: absent (no region [2])\n";
  }
  return out;
}

}  // namespace decomposed
