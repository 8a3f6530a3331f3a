#include "decomposed/snapshot/verify.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"

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

// Parses a header (or a classic file's non-literal fields); when
// `warnings` is given, also notes a header that carries literals.
absl::Status CheckSnapshotBytes(std::string_view bytes, const Frame& frame,
                                uint64_t offset,
                                std::vector<VerifyProblem>* warnings = nullptr) {
  xla::HloSnapshot snap;
  if (bytes.size() > limits::kMaxMessageBytes ||
      !snap.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "a serialized HloSnapshot",
                      "bytes that do not parse as one");
  }
  if (warnings != nullptr) {
    absl::Status w = HeaderLiteralsWarning(
        static_cast<uint64_t>(snap.arguments_size()), snap.has_result(),
        offset);
    if (!w.ok()) warnings->push_back(ProblemFromStatus(w));
  }
  return absl::OkStatus();
}

template <RewindableSource S>
void VerifyDecomposed(S& src, const VerifyOptions& options, VerifyReport* r) {
  DecomposedReadOptions ro;
  ro.box = options.box;
  DecomposedReader reader(src, ro);
  auto fatal = [&](const absl::Status& s) {
    r->problems.push_back(ProblemFromStatus(s));
  };
  std::string header;
  absl::StatusOr<ElementInfo> head = reader.ReadHeader(&header);
  if (!head.ok()) return fatal(head.status());
  if (absl::Status s =
          CheckSnapshotBytes(header, Frame{"header"}, head->offset,
                             &r->warnings);
      !s.ok()) {
    fatal(s);  // the framing is intact: go on with the literals
  }
  header.clear();
  header.shrink_to_fit();
  // Checks every element of one list; false after a framing error.
  auto check_list = [&](BlockReader<S>& list, uint64_t* count) -> bool {
    ElementInfo e;
    for (;;) {
      ReleaseBefore(src, src.position());  // a stream keeps one element
      absl::StatusOr<bool> more = list.Next(&e);
      if (!more.ok()) {
        fatal(more.status());
        return false;
      }
      if (!*more) return true;
      ++*count;
      ByteRange body{e.offset, e.length};
      absl::Status s = CheckLiteral(
          list.body(), std::span<const ByteRange>(&body, 1), list.BodyFrame(),
          options);
      if (!s.ok()) r->problems.push_back(ProblemFromStatus(s));
    }
  };
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return fatal(n.status());
  if (!check_list(reader.inputs(), &r->inputs)) return;
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return fatal(m.status());
  if (m->has_value()) {
    r->outputs = 0;
    if (!check_list(reader.outputs(), &*r->outputs)) return;
  }
  if (absl::Status s = reader.Finish(); !s.ok()) fatal(s);
}

// The classic mapping (classic.h), checked as unpack would write it.
void VerifyClassic(MmapSource& src, const VerifyOptions& options,
                   VerifyReport* r) {
  const Frame top{"HloSnapshot"};
  const ByteRange whole{0, *src.size()};
  auto problem = [&](const absl::Status& s) {
    r->problems.push_back(ProblemFromStatus(s));
  };
  absl::StatusOr<ClassicSnapshot> snap = IndexClassicSnapshot(src, whole, top);
  if (!snap.ok()) return problem(snap.status());
  std::string header;
  absl::Status h = ReadLiteralEmptySnapshot(src, whole, top, &header);
  if (h.ok()) h = CheckSnapshotBytes(header, top, 0);
  if (!h.ok()) problem(h);
  absl::Status s = ForEachClassicInput(
      src, *snap, top, [](int64_t i) { return Frame{"input", i, "body"}; },
      [&](std::span<const ByteRange> literal, int64_t i) {
        ++r->inputs;
        absl::Status l = CheckLiteral(src, literal, Frame{"input", i, "body"},
                                      options);
        if (!l.ok()) problem(l);
        return absl::OkStatus();
      });
  if (!s.ok()) return problem(s);
  if (snap->result.empty()) return;
  absl::StatusOr<std::vector<LiteralRanges>> outputs =
      ClassicOutputs(src, *snap, Frame{"result"});
  if (!outputs.ok()) return problem(outputs.status());
  r->outputs = 0;
  for (const LiteralRanges& o : *outputs) {
    const int64_t j = static_cast<int64_t>((*r->outputs)++);
    absl::Status l = CheckLiteral(src, o, Frame{"output", j, "body"}, options);
    if (!l.ok()) problem(l);
  }
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
  absl::StatusOr<SnapshotInput> in =
      OpenSnapshotInput(path, options.snapshot_type);
  if (!in.ok()) {
    // An empty file is a problem of the file, reported as one.
    if (in.status().code() != absl::StatusCode::kInvalidArgument) {
      return in.status();
    }
    VerifyReport r;
    r.path = path;
    r.problems.push_back(ProblemFromStatus(in.status()));
    return r;
  }
  const SnapshotType* type = &in->type;
  VerifyReport r;
  r.path = path;
  r.type = *type;
  if (!in->is_stream()) {
    MmapSource src(in->open_path);
    if (!src.status().ok()) return src.status();
    if (*type == SnapshotType::kDecomposed) {
      VerifyDecomposed(src, options, &r);
    } else {
      VerifyClassic(src, options, &r);
    }
    if (options.progress) options.progress(*src.size());
  } else if (*type == SnapshotType::kDecomposed) {
    // One pass; each element is retained only while it is checked.
    SpoolSource<OwnedFd>& src = *in->stream;
    VerifyDecomposed(src, options, &r);
    while (src.Pull(1)) {  // drain the pipe after a framing error
      src.Release(src.position());
      src.Advance(src.available());
    }
    if (!src.status().ok()) return WithFile(src.status(), path);
    if (options.progress) options.progress(src.size().value_or(0));
  } else {
    // Classic: read twice, so spilled whole to a temp file first.
    absl::StatusOr<OwnedFd> spilled = SpillSnapshotInput(*in);
    if (!spilled.ok()) return spilled.status();
    MmapSource src(*spilled, path);
    if (!src.status().ok()) return src.status();
    VerifyClassic(src, options, &r);
    if (options.progress) options.progress(*src.size());
  }
  if (options.strict) {
    r.problems.insert(r.problems.begin(), r.warnings.begin(),
                      r.warnings.end());
    r.warnings.clear();
  }
  if (!r.problems.empty()) {
    // A first problem that the other type explains says so.
    VerifyProblem& p = r.problems.front();
    const absl::Status failure(p.code, p.message);
    absl::Status hinted =
        in->is_stream()
            ? WithSnapshotTypeHint(failure, in->evidence, *type)
            : WithSnapshotTypeHint(failure, in->open_path, *type);
    p.message = std::string(hinted.message());
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
