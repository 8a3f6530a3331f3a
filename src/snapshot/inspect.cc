#include "decomposed/snapshot/inspect.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed {
namespace {

// Scans one literal body (a bounded view of `length` bytes): its shape and
// payload bytes. `frame` locates it; its box is the caller's.
template <ByteSource S>
absl::Status ScanLiteral(S& body, uint64_t length, const Frame& frame,
                         const ElementInfo& where, InspectedLiteral* out) {
  absl::StatusOr<LiteralPlan> scan =
      PlanLiteral(body, length, frame, {.shape_must_be_message = true});
  if (!scan.ok()) return scan.status();
  out->frame = where;
  out->has_shape = scan->has_shape;
  out->shape = std::move(scan->shape);
  out->data_bytes = scan->record_bytes;
  return absl::OkStatus();
}

// Scans every element of one list: where it is, and its shape.
template <ByteSource S>
absl::Status ScanList(S& src, BlockReader<S>& list,
                      std::vector<InspectedLiteral>* out) {
  ElementInfo e;
  for (;;) {
    ReleaseBefore(src, src.position());  // a stream keeps one element
    absl::StatusOr<bool> more = list.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    out->emplace_back();
    if (absl::Status s = ScanLiteral(list.body(), e.length, list.BodyFrame(),
                                     e, &out->back());
        !s.ok()) {
      return s;
    }
  }
}

// Scans a literal of a classic file given as ranges (several for a merged
// result): each occurrence through a view of its own; several occurrences'
// shapes merge as protobuf merges them.
absl::Status ScanRanges(MmapSource& src, std::span<const ByteRange> ranges,
                        const Frame& frame, InspectedLiteral* out) {
  ElementInfo where;
  where.offset = ranges[0].offset;
  for (size_t k = 0; k < ranges.size(); ++k) {
    const ByteRange& r = ranges[k];
    where.length += r.length;
    if (!src.Seek(r.offset)) {
      return TruncatedError(frame, r.offset, r.length, 0);
    }
    LimitedSource<MmapSource> view(src, r.offset + r.length);
    InspectedLiteral part;
    if (absl::Status s = ScanLiteral(view, r.length, frame, where, &part);
        !s.ok()) {
      return s;
    }
    out->data_bytes += part.data_bytes;
    if (k == 0) {
      out->has_shape = part.has_shape;
      out->shape = std::move(part.shape);
    }
  }
  out->frame = where;
  if (ranges.size() > 1) {
    absl::StatusOr<LiteralPlan> plan = PlanLiteral(src, ranges, frame);
    if (!plan.ok()) return plan.status();
    out->has_shape = plan->has_shape;
    out->shape = std::move(plan->shape);
  }
  return absl::OkStatus();
}

std::string ShapeString(const xla::ShapeProto& s) {
  Shape shape;
  absl::StatusOr<Shape> parsed =
      ParseShape(s.SerializeAsString(), Frame{"program shape"});
  return parsed.ok() ? parsed->ToString() : "<malformed>";
}

// The module facts of serialized HloSnapshot bytes, when they parse.
std::optional<InspectedModule> ModuleInfo(const std::string& snapshot) {
  xla::HloSnapshot snap;
  if (!snap.ParseFromString(snapshot)) return std::nullopt;
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
  m.single_tuple_parameter =
      internal::SingleTupleParameter(mod.host_program_shape());
  if (mod.host_program_shape().has_result()) {
    m.result = ShapeString(mod.host_program_shape().result());
  }
  return m;
}

template <RewindableSource S>
absl::Status InspectDecomposed(S& src, const InspectOptions& options,
                               InspectReport* report) {
  DecomposedReader reader(src, options.read);
  std::string snapshot;
  absl::StatusOr<ElementInfo> header =
      reader.ReadHeader(options.module_info ? &snapshot : nullptr);
  if (!header.ok()) return header.status();
  report->snapshot = *header;
  if (options.module_info) report->module = ModuleInfo(snapshot);
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return n.status();
  report->input_count_offset = reader.inputs().count_offset();
  if (absl::Status s = ScanList(src, reader.inputs(), &report->inputs); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return m.status();
  if (m->has_value()) {
    report->output_count_offset = reader.outputs().count_offset();
    if (absl::Status s = ScanList(src, reader.outputs(), &report->outputs);
        !s.ok()) {
      return s;
    }
  }
  return reader.Finish();
}

absl::Status InspectClassic(MmapSource& src, const InspectOptions& options,
                            InspectReport* report) {
  const Frame frame{"HloSnapshot"};
  const ByteRange whole{0, *src.size()};
  report->snapshot.length = whole.length;
  absl::StatusOr<ClassicSnapshot> snap =
      IndexClassicSnapshot(src, whole, frame);
  if (!snap.ok()) return snap.status();
  if (options.module_info) {
    std::string header;
    if (ReadLiteralEmptySnapshot(src, whole, frame, &header).ok()) {
      report->module = ModuleInfo(header);
    }
  }
  absl::Status s = ForEachClassicInput(
      src, *snap, frame, [](int64_t i) { return Frame{"input", i, "body"}; },
      [&](std::span<const ByteRange> literal, int64_t i) {
        report->inputs.emplace_back();
        return ScanRanges(src, literal, Frame{"input", i, "body"},
                          &report->inputs.back());
      });
  if (!s.ok()) return s;
  if (snap->result.empty()) return absl::OkStatus();
  report->output_count_offset = snap->result[0].offset;
  absl::StatusOr<std::vector<LiteralRanges>> outputs =
      ClassicOutputs(src, *snap, Frame{"result"});
  if (!outputs.ok()) return outputs.status();
  for (size_t j = 0; j < outputs->size(); ++j) {
    report->outputs.emplace_back();
    const Frame frame_j{"output", static_cast<int64_t>(j), "body"};
    if (absl::Status o =
            ScanRanges(src, (*outputs)[j], frame_j, &report->outputs.back());
        !o.ok()) {
      return o;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InspectReport> InspectFile(const std::string& path,
                                          const InspectOptions& options) {
  absl::StatusOr<SnapshotInput> in =
      OpenSnapshotInput(path, options.snapshot_type);
  if (!in.ok()) return in.status();
  const SnapshotType type = in->type;
  InspectReport report;
  report.type = type;
  if (!in->is_stream()) {
    MmapSource src(in->open_path);
    if (!src.status().ok()) return src.status();
    report.file_size = *src.size();
    absl::Status s = type == SnapshotType::kClassic
                         ? InspectClassic(src, options, &report)
                         : InspectDecomposed(src, options, &report);
    if (!s.ok()) {
      return WithSnapshotTypeHint(WithFile(s, path), in->open_path, type);
    }
    return report;
  }
  absl::Status s;
  if (type == SnapshotType::kClassic) {
    // Read twice (indexed, then each literal): spilled whole first.
    absl::StatusOr<OwnedFd> spilled = SpillSnapshotInput(*in);
    if (!spilled.ok()) return spilled.status();
    MmapSource src(*spilled, path);
    if (!src.status().ok()) return src.status();
    report.file_size = *src.size();
    s = InspectClassic(src, options, &report);
  } else {
    // One pass: Finish() reads to the end, so the size is known after.
    SpoolSource<OwnedFd>& src = *in->stream;
    s = InspectDecomposed(src, options, &report);
    report.file_size = src.size().value_or(src.position());
  }
  if (!s.ok()) {
    return WithSnapshotTypeHint(WithFile(s, path), in->evidence, type);
  }
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
                                  : nlohmann::ordered_json(nullptr)}};
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
                    "classic HloSnapshot file, %d bytes\nsnapshot: "
                    "HloSnapshot @%d (%d bytes)\n",
                    r.file_size, r.snapshot.offset, r.snapshot.length)
              : absl::StrFormat(
                    "decomposed file, %d bytes\nheader: box @%d (%d "
                    "bytes), HloSnapshot @%d (%d bytes)\n",
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
