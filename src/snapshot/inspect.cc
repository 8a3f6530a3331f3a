#include "decomposed/snapshot/inspect.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/summary.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed {
namespace {

// Scans one literal body (a bounded view of `length` bytes): its shape and
// payload bytes.
template <ByteSource S>
absl::Status ScanLiteral(S& body, uint64_t length, const Frame& frame,
                         InspectedLiteral* out) {
  absl::StatusOr<LiteralPlan> scan =
      PlanLiteral(body, length, frame, {.shape_must_be_message = true});
  if (!scan.ok()) return scan.status();
  out->has_shape = scan->has_shape;
  out->shape = std::move(scan->shape);
  out->data_bytes = scan->record_bytes;
  return absl::OkStatus();
}

// Scans the literal the reader handed out, from its bounded view: each
// occurrence through a view of its own (a classic file's merged result has
// several, whose shapes merge as protobuf merges them).
template <RewindableSource S>
absl::Status ScanLiteralOf(LimitedSource<S>& body, const SnapshotLiteral& lit,
                           InspectedLiteral* out) {
  out->frame = lit.element;
  const Frame frame = lit.frame();
  for (size_t k = 0; k < lit.ranges.size(); ++k) {
    const ByteRange& r = lit.ranges[k];
    if (!body.Seek(r.offset)) {
      return TruncatedError(frame, r.offset, r.length, 0);
    }
    LimitedSource<LimitedSource<S>> view(body, r.offset + r.length);
    InspectedLiteral part;
    if (absl::Status s = ScanLiteral(view, r.length, frame, &part); !s.ok()) {
      return s;
    }
    out->data_bytes += part.data_bytes;
    if (k == 0) {
      out->has_shape = part.has_shape;
      out->shape = std::move(part.shape);
    }
  }
  if (lit.ranges.size() > 1) {
    absl::StatusOr<LiteralPlan> plan = PlanLiteral(body, lit.ranges, frame);
    if (!plan.ok()) return plan.status();
    out->has_shape = plan->has_shape;
    out->shape = std::move(plan->shape);
  }
  return absl::OkStatus();
}

InspectedModule ModuleInfo(const ModuleFacts& f) {
  InspectedModule m;
  m.name = f.name;
  m.entry_computation_name = f.entry_computation_name;
  m.has_program_shape = f.program_shape.has_value();
  m.parameters = f.parameter_shapes();
  m.parameter_names = f.parameter_names();
  m.single_tuple_parameter = f.single_tuple_parameter();
  m.result = f.result_shape();
  return m;
}

template <RewindableSource S>
absl::Status InspectFrom(SnapshotReader<S>& reader,
                         const InspectOptions& options,
                         InspectReport* report) {
  absl::StatusOr<const SnapshotHeader*> header = reader.ReadHeader();
  if (!header.ok()) return header.status();
  report->snapshot = (*header)->place;
  if (options.module_info) {
    absl::StatusOr<std::optional<ModuleFacts>> facts = reader.Facts();
    if (!facts.ok()) {
      report->module_error = std::string(facts.status().message());
    } else if (*facts) {
      report->module = ModuleInfo(**facts);
      // The one-line summary needs the indexed view, which validates.
      absl::StatusOr<const xla::HloModuleProto*> proto = reader.Module();
      if (proto.ok() && *proto != nullptr) {
        absl::StatusOr<std::unique_ptr<hlo::HloModule>> view =
            hlo::HloModule::Create(**proto);
        if (view.ok()) {
          report->module->summary = hlo::SummarizeModule(**view).OneLine();
        } else {
          report->module->summary_error = std::string(view.status().message());
        }
      }
    }
  }
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::vector<InspectedLiteral>& list =
        lit.role == LiteralRole::kInput ? report->inputs : report->outputs;
    list.emplace_back();
    if (absl::Status s = ScanLiteralOf(reader.body(), lit, &list.back());
        !s.ok()) {
      return s;
    }
  }
  report->input_count_offset = reader.input_count_offset();
  if (reader.outputs_present().value_or(false)) {
    report->output_count_offset = reader.output_count_offset();
  }
  return reader.Finish();
}

}  // namespace

absl::StatusOr<InspectReport> InspectFile(const std::string& path,
                                          const InspectOptions& options) {
  SnapshotOpenOptions open;
  open.type = options.snapshot_type;
  open.box = options.read.box;
  open.access = SnapshotAccess::kMapped;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(path, open);
  if (!file.ok()) return file.status();
  SnapshotFile& f = **file;
  InspectReport report;
  report.type = f.type();
  SnapshotReadOptions read;
  read.box = options.read.box;
  absl::Status s = f.Read(read, [&](auto& reader) {
    return InspectFrom(reader, options, &report);
  });
  if (!s.ok()) return f.Annotate(s);
  // A stream read in one pass knows its size at its end.
  report.file_size = f.size().value_or(0);
  return report;
}

namespace {

nlohmann::ordered_json Box(const InspectReport& r, const ElementInfo& e) {
  if (r.type == SnapshotType::kClassic) return nullptr;
  return {{"offset", e.box_offset}, {"length", e.box_length}};
}

nlohmann::ordered_json LiteralJson(const InspectReport& r,
                                   const InspectedLiteral& l) {
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
  j["box"] = Box(r, l.frame);
  return j;
}

std::string LiteralLine(const InspectReport& r, std::string_view region,
                        size_t i, const InspectedLiteral& l) {
  std::string box =
      r.type == SnapshotType::kClassic
          ? std::string()
          : absl::StrFormat("box @%d (%d bytes), ", l.frame.box_offset,
                            l.frame.box_length);
  return absl::StrFormat(
      "%s %d: %sbody @%d (%d bytes) %s payload %d bytes\n", region, i, box,
      l.frame.offset, l.frame.length,
      l.has_shape ? l.shape.ToString() : "<no shape>", l.data_bytes);
}

}  // namespace

nlohmann::ordered_json InspectReportJson(const InspectReport& r) {
  nlohmann::ordered_json j;
  j["type"] = SnapshotTypeName(r.type);
  j["snapshot"] = {{"offset", r.snapshot.offset},
                   {"length", r.snapshot.length},
                   {"box", Box(r, r.snapshot)}};
  if (r.module) {
    j["module"] = {{"name", r.module->name},
                   {"entry_computation_name",
                    r.module->entry_computation_name},
                   {"parameters", r.module->parameters},
                   {"parameter_names", r.module->parameter_names},
                   {"result", r.module->has_program_shape
                                  ? nlohmann::ordered_json(r.module->result)
                                  : nlohmann::ordered_json(nullptr)},
                   {"summary", r.module->summary.empty()
                                   ? nlohmann::ordered_json(nullptr)
                                   : nlohmann::ordered_json(r.module->summary)},
                   {"invalid", r.module->summary_error.empty()
                                   ? nlohmann::ordered_json(nullptr)
                                   : nlohmann::ordered_json(
                                         r.module->summary_error)}};
  } else {
    j["module"] = nullptr;
  }
  j["inputs"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    nlohmann::ordered_json e = LiteralJson(r, r.inputs[i]);
    std::optional<InputParameter> p;
    if (r.module) {
      p = InputParameterOf(r.module->parameter_names,
                           r.module->single_tuple_parameter,
                           static_cast<int64_t>(i));
    }
    e["parameter"] = p ? nlohmann::ordered_json(p->name)
                       : nlohmann::ordered_json(nullptr);
    e["tuple_index"] = p && p->tuple_index >= 0
                           ? nlohmann::ordered_json(p->tuple_index)
                           : nlohmann::ordered_json(nullptr);
    j["inputs"].push_back(std::move(e));
  }
  if (r.output_count_offset) {
    j["outputs"] = nlohmann::ordered_json::array();
    for (const auto& l : r.outputs) j["outputs"].push_back(LiteralJson(r, l));
  } else {
    j["outputs"] = nullptr;
  }
  j["file_size"] = r.file_size;
  return j;
}

std::string InspectReportText(const InspectReport& r) {
  const bool classic = r.type == SnapshotType::kClassic;
  std::string out =
      classic ? absl::StrFormat(
                    "classic snapshot, %d bytes\nsnapshot: "
                    "HloSnapshot @%d (%d bytes)\n",
                    r.file_size, r.snapshot.offset, r.snapshot.length)
              : absl::StrFormat(
                    "decomposed snapshot, %d bytes\nheader: box @%d (%d "
                    "bytes), HloSnapshot @%d (%d bytes)\n",
                    r.file_size, r.snapshot.box_offset, r.snapshot.box_length,
                    r.snapshot.offset, r.snapshot.length);
  if (r.module) {
    if (!r.module->summary.empty()) {
      absl::StrAppend(&out, r.module->summary, "\n");
    } else {
      absl::StrAppend(&out, "module: ", r.module->name, " (entry ",
                      r.module->entry_computation_name, ")");
      if (!r.module->summary_error.empty()) {
        absl::StrAppend(&out, ", invalid: ", r.module->summary_error);
      }
      out += "\n";
    }
    if (r.module->has_program_shape) {
      absl::StrAppend(&out, "program shape: (",
                      absl::StrJoin(r.module->parameters, ", "), ") -> ",
                      r.module->result, "\n");
    }
  } else if (!r.module_error.empty()) {
    absl::StrAppend(&out, "module: unreadable: ", r.module_error, "\n");
  } else {
    // An arguments-only snapshot, as XLA writes some.
    out += "module: none (the HloSnapshot has no hlo.hlo_module)\n";
  }
  if (classic) {
    absl::StrAppend(&out, "inputs: ", r.inputs.size(), "\n");
  } else {
    absl::StrAppend(&out, "inputs: ", r.inputs.size(), " (count box @",
                    r.input_count_offset, ")\n");
  }
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    out += LiteralLine(r, "  input", i, r.inputs[i]);
  }
  if (r.output_count_offset) {
    absl::StrAppend(&out, "outputs: ", r.outputs.size(),
                    classic ? " (result @" : " (count box @",
                    *r.output_count_offset, ")\n");
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      out += LiteralLine(r, "  output", i, r.outputs[i]);
    }
  } else {
    out += classic ? "outputs: absent (no result)\n"
                   : "outputs: absent (no region [2])\n";
  }
  return out;
}

}  // namespace decomposed
