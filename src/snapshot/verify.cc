#include "decomposed/snapshot/verify.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/hlo/validate.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/reader.h"

namespace decomposed {
namespace {

// Decodes one literal (all checks of the unpack decoder) into a NullSink.
template <RewindableSource S>
absl::Status CheckLiteral(S& src, std::span<const ByteRange> ranges,
                          const Frame& frame, const VerifyOptions& options) {
  NullSink sink;
  LiteralDecodeOptions o;
  o.lenient_layout = options.lenient_layout;
  const uint64_t base = ranges.empty() ? 0 : ranges.front().offset;
  uint64_t done = 0;
  if (options.progress) {
    o.on_payload = [&](uint64_t n) {
      done += n;
      options.progress(base + done);
    };
  }
  absl::Status s = DecodeLiteralToNpy(src, ranges, frame, sink, o);
  if (options.progress && !ranges.empty()) {
    options.progress(ranges.back().offset + ranges.back().length);
  }
  return s;
}

// Parses a header (or a classic file's non-literal fields) with protobuf,
// as snapshot-unpack does.
absl::Status CheckSnapshotBytes(std::string_view bytes, const Frame& frame,
                                uint64_t offset) {
  xla::HloSnapshot snap;
  if (bytes.size() > limits::kMaxMessageBytes ||
      !snap.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "a serialized HloSnapshot",
                      "bytes that do not parse as one");
  }
  return absl::OkStatus();
}

// At most this many module problems are listed: one defect often breaks
// several rules, and the first ones say what is wrong.
constexpr size_t kMaxModuleProblems = 20;

// A literal's element type and dims against the parameter it binds to.
struct ParameterCheck {
  std::vector<xla::ShapeProto> shapes;  // one per expected input
  std::vector<std::string> names;       // "parameter 0 (\"x\")"
  bool active = false;
  bool resolved = false;

  // An entry whose one parameter is a tuple takes the inputs as its
  // elements (as the classic reader maps them), unless there is one input.
  void Resolve(uint64_t inputs) {
    if (resolved) return;
    resolved = true;
    if (shapes.size() != 1 || shapes[0].element_type() != xla::TUPLE ||
        inputs == 1) {
      return;
    }
    const xla::ShapeProto tuple = shapes[0];
    const std::string name = names[0];
    shapes.assign(tuple.tuple_shapes().begin(), tuple.tuple_shapes().end());
    names.clear();
    for (size_t i = 0; i < shapes.size(); ++i) {
      names.push_back(absl::StrCat(name, " element ", i));
    }
  }
};

// The module's checks (docs/hlo.md §1.1), each finding a warning framed
// "module" at the module's first byte (the file reads whatever its module
// holds; --strict makes them problems); and the entry parameters the inputs
// must fit. A module protobuf cannot parse is a problem (the header check
// reports it). A snapshot without a module (an arguments-only one) has
// nothing to check.
template <RewindableSource S>
void CheckModule(SnapshotReader<S>& reader, VerifyReport* r,
                 ParameterCheck* params) {
  absl::StatusOr<const xla::HloModuleProto*> proto = reader.Module();
  if (!proto.ok()) {
    r->problems.push_back(ProblemFromStatus(proto.status()));
    return;
  }
  if (*proto == nullptr) return;
  const uint64_t at = reader.module_ranges().front().offset;
  auto framed = [&](const absl::Status& s) {
    // The message names the module or the computation and instruction.
    return ProblemFromStatus(WithLocation(s, "module", at));
  };
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module =
      hlo::HloModule::Create(**proto);
  if (!module.ok()) {
    r->warnings.push_back(framed(module.status()));
    return;
  }
  hlo::ValidateOptions vo;
  vo.max_problems = kMaxModuleProblems;
  for (const absl::Status& s : hlo::ValidateModuleAll(**module, vo)) {
    r->warnings.push_back(framed(s));
  }
  std::vector<hlo::EntryParameter> entry = (*module)->EntryParameters();
  for (const hlo::EntryParameter& p : entry) {
    if (p.shape == nullptr) return;  // a gap in the numbering: reported
    params->shapes.push_back(*p.shape);
    params->names.push_back(absl::StrCat("parameter ", p.number, " (\"",
                                         p.name, "\")"));
  }
  params->active = true;
}

// Input `lit` against its parameter: element type and dims (layouts may
// differ: a replay converts them). A mismatch is a warning.
template <RewindableSource S>
void CheckInputAgainstParameter(SnapshotReader<S>& reader,
                                const SnapshotLiteral& lit,
                                ParameterCheck& params,
                                VerifyReport* r) {
  params.Resolve(reader.input_count().value_or(0));
  if (static_cast<size_t>(lit.index) >= params.shapes.size()) return;
  absl::StatusOr<LiteralPlan> plan =
      PlanLiteral(reader.body(), lit.ranges, lit.frame());
  if (!plan.ok() || !plan->has_shape) return;  // the decoder reports it
  const Shape& found = plan->shape;
  const xla::ShapeProto& want = params.shapes[lit.index];
  bool same = found.element_type == want.element_type() &&
              found.dimensions.size() ==
                  static_cast<size_t>(want.dimensions_size());
  for (size_t d = 0; same && d < found.dimensions.size(); ++d) {
    same = found.dimensions[d] == want.dimensions(static_cast<int>(d));
  }
  if (same) return;
  const uint64_t at = lit.ranges.empty() ? 0 : lit.ranges.front().offset;
  // Spelled as the module's shapes are (XLA's text: lower-case type).
  const std::string found_text =
      absl::StrCat(absl::AsciiStrToLower(found.TypeName()), "[",
                   absl::StrJoin(found.dimensions, ","), "]");
  r->warnings.push_back(ProblemFromStatus(FrameError(
      absl::StatusCode::kInvalidArgument, lit.frame(), at,
      absl::StrCat(hlo::DescribeShape(want), " (the module's ",
                   params.names[lit.index], ")"),
      found_text)));
}

// Every check of one snapshot, through its reader: the header (its framing,
// that it parses as an HloSnapshot, the warning of a header carrying
// literals), every literal as unpack decodes it, the end. A broken literal
// is one problem and the walk goes on; a framing error ends it.
template <RewindableSource S>
void VerifyFrom(SnapshotReader<S>& reader, const VerifyOptions& options,
                VerifyReport* r) {
  auto problem = [&](const absl::Status& s) {
    r->problems.push_back(ProblemFromStatus(s));
  };
  absl::StatusOr<const SnapshotHeader*> header = reader.ReadHeader();
  if (!header.ok()) return problem(header.status());
  const bool decomposed = reader.type() == SnapshotType::kDecomposed;
  ParameterCheck params;
  {
    // Decomposed: region [0] whole, as snapshot-unpack parses it (a
    // warning for literals in it). Classic: the non-literal fields (the
    // literals are checked one by one below).
    std::string bytes;
    absl::Status h = decomposed ? reader.ReadHeaderBytes(&bytes)
                                : reader.ReadLiteralEmptySnapshot(&bytes);
    if (h.ok()) {
      h = CheckSnapshotBytes(bytes, decomposed ? Frame{"header"}
                                               : Frame{"HloSnapshot"},
                             (*header)->place.offset);
    }
    if (!h.ok()) {
      // The framing is intact: go on with the literals.
      problem(h);
    } else {
      if (!(*header)->warning.ok()) {
        r->warnings.push_back(ProblemFromStatus((*header)->warning));
      }
      CheckModule(reader, r, &params);
    }
  }
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return problem(more.status());
    if (!*more) break;
    const bool input = lit.role == LiteralRole::kInput;
    if (input) {
      ++r->inputs;
    } else {
      r->outputs = r->outputs.value_or(0) + 1;
    }
    absl::Status l = CheckLiteral(reader.body(), lit.ranges, lit.frame(),
                                  options);
    if (!l.ok()) {
      problem(l);
    } else if (input && params.active) {
      CheckInputAgainstParameter(reader, lit, params, r);
    }
  }
  if (reader.outputs_present().value_or(false) && !r->outputs) r->outputs = 0;
  if (absl::Status s = reader.Finish(); !s.ok()) return problem(s);
  if (params.active) params.Resolve(r->inputs);
  if (params.active && r->inputs != params.shapes.size()) {
    const uint64_t at = reader.input_count_offset();
    r->warnings.push_back(ProblemFromStatus(FrameError(
        absl::StatusCode::kInvalidArgument,
        decomposed ? Frame{"input", -1, "count box"} : Frame{"arguments"},
        decomposed ? at : 0,
        absl::StrCat(Counted(params.shapes.size(), "input"),
                     " (the module's entry parameters)"),
        absl::StrCat(r->inputs))));
  }
}

}  // namespace

VerifyProblem ProblemFromStatus(const absl::Status& s) {
  VerifyProblem p;
  p.code = s.code();
  p.message = std::string(s.message());
  if (std::optional<std::string> f = FrameOf(s)) p.frame = *f;
  p.offset = OffsetOf(s);
  return p;
}

absl::StatusOr<VerifyReport> VerifyFile(const std::string& path,
                                        const VerifyOptions& options) {
  SnapshotOpenOptions open;
  open.type = options.snapshot_type;
  open.box = options.box;
  open.access = SnapshotAccess::kMapped;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(path, open);
  if (!file.ok()) {
    // An empty file is a problem of the file, reported as one.
    if (file.status().code() != absl::StatusCode::kInvalidArgument) {
      return file.status();
    }
    VerifyReport r;
    r.path = path;
    r.problems.push_back(ProblemFromStatus(file.status()));
    return r;
  }
  SnapshotFile& f = **file;
  VerifyReport r;
  r.path = path;
  r.type = f.type();
  SnapshotReadOptions read;
  read.box = options.box;
  f.Read(read, [&](auto& reader) { VerifyFrom(reader, options, &r); });
  // A stream is read to its end, also after a framing error, so that its
  // writer is not cut off.
  if (absl::Status d = f.Drain(); !d.ok()) return d;
  if (options.progress) options.progress(f.size().value_or(0));
  if (options.strict) {
    r.problems.insert(r.problems.begin(), r.warnings.begin(),
                      r.warnings.end());
    r.warnings.clear();
  }
  if (!r.problems.empty()) {
    // A first problem that the other type explains says so.
    VerifyProblem& p = r.problems.front();
    const absl::Status failure(p.code, p.message);
    p.message = std::string(
        WithSnapshotTypeHint(failure, f.evidence(),
                             f.requested() == SnapshotType::kAuto
                                 ? SnapshotType::kAuto
                                 : f.type())
            .message());
  }
  return r;
}

nlohmann::ordered_json ProblemJson(const VerifyProblem& p) {
  return {{"frame", p.frame},
          {"offset", p.offset ? nlohmann::ordered_json(*p.offset)
                              : nlohmann::ordered_json(nullptr)},
          {"code", absl::StatusCodeToString(p.code)},
          {"message", p.message}};
}

nlohmann::ordered_json VerifyReportJson(const VerifyReport& r) {
  nlohmann::ordered_json j;
  j["file"] = r.path;
  j["type"] = r.type ? nlohmann::ordered_json(SnapshotTypeName(*r.type))
                     : nlohmann::ordered_json(nullptr);
  j["valid"] = r.valid();
  j["inputs"] = r.inputs;
  j["outputs"] = r.outputs ? nlohmann::ordered_json(*r.outputs)
                           : nlohmann::ordered_json(nullptr);
  for (const auto& [key, list] :
       {std::pair{"problems", &r.problems}, std::pair{"warnings", &r.warnings}}) {
    j[key] = nlohmann::ordered_json::array();
    for (const VerifyProblem& p : *list) {
      j[key].push_back(ProblemJson(p));
    }
  }
  return j;
}

}  // namespace decomposed
