#include "decomposed/snapshot/verify.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed {
namespace {

// Decodes one literal (all checks of the unpack decoder) into a NullSink.
absl::Status CheckLiteral(MmapSource& src, std::span<const ByteRange> ranges,
                          const Frame& frame) {
  NullSink sink;
  LiteralDecodeOptions o;
  return DecodeLiteralToNpy(src, ranges, frame, sink, o);
}

absl::Status CheckSnapshotBytes(std::string_view bytes, uint64_t offset) {
  xla::HloSnapshot snap;
  if (bytes.size() > limits::kMaxSnapshotBytes ||
      !snap.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, Frame{"snapshot"},
                      offset, "a serialized HloSnapshot",
                      "bytes that do not parse as one");
  }
  return absl::OkStatus();
}

void VerifyDecomposed(MmapSource& src, const VerifyOptions& options,
                      VerifyReport* r) {
  DecomposedReadOptions ro;
  ro.box = options.box;
  DecomposedReader reader(src, ro);
  auto fatal = [&](const absl::Status& s) {
    r->problems.push_back(ProblemFromStatus(s));
  };
  std::string snapshot;
  absl::StatusOr<ElementInfo> head = reader.ReadHeader(&snapshot);
  if (!head.ok()) return fatal(head.status());
  if (absl::Status s = CheckSnapshotBytes(snapshot, head->offset); !s.ok()) {
    fatal(s);  // the framing is intact: go on with the literals
  }
  snapshot.clear();
  snapshot.shrink_to_fit();
  auto block = [&](RepeatedReader<MmapSource>& rr,
                   uint64_t* count) -> bool {
    ElementInfo e;
    for (;;) {
      absl::StatusOr<bool> more = rr.Next(&e);
      if (!more.ok()) {
        fatal(more.status());
        return false;
      }
      if (!*more) return true;
      ++*count;
      ByteRange body{e.offset, e.length};
      absl::Status s = CheckLiteral(
          src, std::span<const ByteRange>(&body, 1), rr.BodyFrame());
      if (!s.ok()) r->problems.push_back(ProblemFromStatus(s));
      // Back to the body end: the decoder leaves the position inside.
      if (!src.Seek(e.offset + e.length)) {
        fatal(absl::InternalError("cannot seek back to the element end"));
        return false;
      }
    }
  };
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return fatal(n.status());
  if (!block(reader.inputs(), &r->inputs)) return;
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return fatal(m.status());
  if (m->has_value()) {
    r->outputs = 0;
    if (!block(reader.outputs(), &*r->outputs)) return;
  }
  if (absl::Status s = reader.Finish(); !s.ok()) fatal(s);
}

void VerifyClassic(MmapSource& src, VerifyReport* r) {
  const uint64_t size = *src.size();
  const Frame top{"HloSnapshot"};
  std::vector<wire::Field> args, results;
  std::string header;
  std::string_view all(src.cursor(), src.available());
  ByteRange whole{0, size};
  absl::Status s = internal::WalkRecords(
      src, std::span<const ByteRange>(&whole, 1), top,
      [&](wire::Field& w) -> absl::Status {
        if (w.number == 2 || w.number == 3) {
          if (w.wire_type != wire::kLen) {
            return FrameError(absl::StatusCode::kInvalidArgument, top,
                              w.tag_offset, "a length-delimited LiteralProto",
                              absl::StrCat("field ", w.number, " wire type ",
                                           static_cast<uint32_t>(w.wire_type)));
          }
          (w.number == 2 ? args : results).push_back(w);
        } else {
          uint64_t end = w.offset + w.length;  // value or payload bytes
          header.append(all.substr(w.tag_offset, end - w.tag_offset));
        }
        return absl::OkStatus();
      });
  if (!s.ok()) {
    r->problems.push_back(ProblemFromStatus(s));
    return;
  }
  if (absl::Status h = CheckSnapshotBytes(header, 0); !h.ok()) {
    r->problems.push_back(ProblemFromStatus(h));
  }
  for (const wire::Field& a : args) {
    ByteRange body{a.offset, a.length};
    absl::Status l = CheckLiteral(src, std::span<const ByteRange>(&body, 1),
                                  Frame{"input", static_cast<int64_t>(
                                                     r->inputs),
                                        "body"});
    ++r->inputs;
    if (!l.ok()) r->problems.push_back(ProblemFromStatus(l));
  }
  if (results.empty()) return;
  std::vector<ByteRange> ranges;
  for (const auto& w : results) ranges.push_back({w.offset, w.length});
  const Frame rf{"result"};
  absl::StatusOr<LiteralPlan> plan = PlanLiteral(src, ranges, rf);
  if (!plan.ok()) {
    r->problems.push_back(ProblemFromStatus(plan.status()));
    return;
  }
  r->outputs = 0;
  if (plan->has_shape && plan->shape.is_tuple()) {
    for (const ByteRange& t : plan->tuple_literals) {
      absl::Status l = CheckLiteral(
          src, std::span<const ByteRange>(&t, 1),
          Frame{"output", static_cast<int64_t>(*r->outputs), "body"});
      ++*r->outputs;
      if (!l.ok()) r->problems.push_back(ProblemFromStatus(l));
    }
    return;
  }
  absl::Status l = CheckLiteral(src, ranges, Frame{"output", 0, "body"});
  *r->outputs = 1;
  if (!l.ok()) r->problems.push_back(ProblemFromStatus(l));
}

}  // namespace

VerifyProblem ProblemFromStatus(const absl::Status& s) {
  VerifyProblem p;
  p.code = s.code();
  p.message = std::string(s.message());
  size_t colon = p.message.find(": ");
  if (colon != std::string::npos) p.frame = p.message.substr(0, colon);
  size_t at = p.message.rfind("at byte ");
  if (at != std::string::npos) {
    size_t b = at + 8, e = b;
    while (e < p.message.size() && p.message[e] >= '0' &&
           p.message[e] <= '9') {
      ++e;
    }
    uint64_t v;
    if (e > b && absl::SimpleAtoi(absl::string_view(p.message.data() + b,
                                                    e - b),
                                  &v)) {
      p.offset = v;
    }
  }
  return p;
}

absl::StatusOr<VerifyReport> VerifyFile(const std::string& path,
                                        const VerifyOptions& options) {
  std::string type = options.snapshot_type;
  if (type == "auto") {
    absl::StatusOr<std::string> t = DetectSnapshotType(path);
    if (!t.ok()) return t.status();
    type = *t;
  }
  if (type != "decomposed" && type != "snapshot") {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot type: expected auto, decomposed or snapshot, found '", type,
        "'"));
  }
  MmapSource src(path);
  if (!src.status().ok()) return src.status();
  VerifyReport r;
  r.path = path;
  r.type = type;
  if (type == "decomposed") {
    VerifyDecomposed(src, options, &r);
  } else {
    VerifyClassic(src, &r);
  }
  return r;
}

nlohmann::ordered_json VerifyReportJson(const VerifyReport& r) {
  nlohmann::ordered_json j;
  j["file"] = r.path;
  j["type"] = r.type;
  j["valid"] = r.valid();
  j["inputs"] = r.inputs;
  j["outputs"] = r.outputs ? nlohmann::ordered_json(*r.outputs)
                           : nlohmann::ordered_json(nullptr);
  j["problems"] = nlohmann::ordered_json::array();
  for (const VerifyProblem& p : r.problems) {
    j["problems"].push_back(
        {{"frame", p.frame},
         {"offset", p.offset ? nlohmann::ordered_json(*p.offset)
                             : nlohmann::ordered_json(nullptr)},
         {"code", absl::StatusCodeToString(p.code)},
         {"message", p.message}});
  }
  return j;
}

}  // namespace decomposed
