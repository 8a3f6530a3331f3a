#include "decomposed/snapshot/verify.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/container/framing.h"
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
    } else if (!(*header)->warning.ok()) {
      r->warnings.push_back(ProblemFromStatus((*header)->warning));
    }
  }
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return problem(more.status());
    if (!*more) break;
    if (lit.role == LiteralRole::kInput) {
      ++r->inputs;
    } else {
      r->outputs = r->outputs.value_or(0) + 1;
    }
    absl::Status l = CheckLiteral(reader.body(), lit.ranges, lit.frame(),
                                  options);
    if (!l.ok()) problem(l);
  }
  if (reader.outputs_present().value_or(false) && !r->outputs) r->outputs = 0;
  if (absl::Status s = reader.Finish(); !s.ok()) problem(s);
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
