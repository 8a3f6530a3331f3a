#include "decomposed/snapshot/convert.h"

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/xla/shape.h"

namespace decomposed {
namespace {

// A literal given as several serialized occurrences (a merged `result`):
// their concatenation, which protobuf parses as their merge.
class MergedLiteral final : public LiteralSource {
 public:
  MergedLiteral(std::vector<std::unique_ptr<LiteralSource>> parts,
                std::string name)
      : parts_(std::move(parts)), name_(std::move(name)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    uint64_t total = 0;
    for (auto& p : parts_) {
      absl::StatusOr<uint64_t> n = p->Prepare();
      if (!n.ok()) return n.status();
      total += *n;
    }
    return total;
  }
  absl::Status Write(const ChunkFn& fn) override {
    for (auto& p : parts_) {
      if (absl::Status s = p->Write(fn); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    std::string shape;  // the shapes merge as the literals do
    for (auto& p : parts_) {
      absl::StatusOr<std::string> s = p->ShapeBytes();
      if (!s.ok()) return s.status();
      shape += *s;
    }
    return shape;
  }
  std::string name() const override { return name_; }

 private:
  std::vector<std::unique_ptr<LiteralSource>> parts_;
  std::string name_;
};

// Collects literal sources that borrow their bytes from `src` (an mmap).
class Literals {
 public:
  Literals(MmapSource& src, bool validate) : src_(src), validate_(validate) {}

  // Adds the literal `bytes` (at `offset` of the file) to `list`, named
  // `label` in errors.
  void Add(std::string_view bytes, uint64_t offset, const std::string& label,
           std::vector<LiteralSource*>* list) {
    owned_.push_back(SerializedLiteralView(bytes, validate_, label, offset));
    list->push_back(owned_.back().get());
  }

  // Adds the literal made of `ranges` of `src`. Seeks `src`: not for use
  // while a reader is positioned in it.
  absl::Status AddRanges(std::span<const ByteRange> ranges,
                         const std::string& label,
                         std::vector<LiteralSource*>* list) {
    if (ranges.size() == 1) {
      absl::StatusOr<std::string_view> b = View(ranges[0], label);
      if (!b.ok()) return b.status();
      Add(*b, ranges[0].offset, label, list);
      return absl::OkStatus();
    }
    if (validate_) {
      // The merged literal, checked as the unpack decoder plans it.
      const Frame frame{label};
      absl::StatusOr<LiteralPlan> plan = PlanLiteral(src_, ranges, frame);
      if (!plan.ok()) return plan.status();
      if (absl::Status s =
              CheckPlanShape(*plan, frame, frame, ranges[0].offset);
          !s.ok()) {
        return s;
      }
    }
    std::vector<std::unique_ptr<LiteralSource>> parts;
    for (const ByteRange& r : ranges) {
      absl::StatusOr<std::string_view> b = View(r, label);
      if (!b.ok()) return b.status();
      parts.push_back(SerializedLiteralView(*b, false, label, r.offset));
    }
    owned_.push_back(std::make_unique<MergedLiteral>(std::move(parts), label));
    list->push_back(owned_.back().get());
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::string_view> View(const ByteRange& r,
                                        const std::string& label) {
    std::optional<std::string_view> bytes;
    if (src_.Seek(r.offset)) {
      bytes = src_.ReadView(static_cast<size_t>(r.length));
    }
    if (!bytes) return TruncatedError(Frame{label}, r.offset, r.length, 0);
    return *bytes;
  }

  MmapSource& src_;
  bool validate_;
  std::vector<std::unique_ptr<LiteralSource>> owned_;
};

// An error of the output file names that file (kPathPayload), so that it
// is not taken for the input's: Python's OSError then gives its name.
absl::Status OutputError(const absl::Status& s, const std::string& out) {
  if (s.ok() || PathOf(s)) return s;
  absl::Status named = s;
  named.SetPayload(Sv(kPathPayload), absl::Cord(out));
  return named;
}

// Converts what `reader` reads (a mapped file, whose bodies the output
// borrows) to the other form, written atomically to `out`.
template <RewindableSource S>
absl::Status ConvertFrom(SnapshotReader<S>& reader, const std::string& out,
                         const ConvertOptions& options, ConvertReport* report) {
  absl::StatusOr<const SnapshotHeader*> head = reader.ReadHeader();
  if (!head.ok()) return head.status();
  if (!(*head)->contents.ok()) return (*head)->contents;
  const bool to_classic = reader.type() == SnapshotType::kDecomposed;
  std::string header;
  if (absl::Status s = reader.ReadLiteralEmptySnapshot(&header); !s.ok()) {
    return s;
  }
  if (!to_classic) {
    xla::HloSnapshot parsed;
    if (!parsed.ParseFromArray(header.data(),
                               static_cast<int>(header.size()))) {
      return FrameError(absl::StatusCode::kInvalidArgument,
                        Frame{"HloSnapshot"}, 0,
                        "hlo and other non-literal fields protobuf can parse",
                        "bytes it rejects");
    }
  }
  Literals literals(reader.source(), options.validate);
  std::vector<LiteralSource*> inputs, outputs;
  SnapshotLiteral lit;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&lit);
    if (!more.ok()) return more.status();
    if (!*more) break;
    // Each body borrowed from the mapping (leaving the source at its end).
    if (absl::Status s = literals.AddRanges(
            lit.ranges, lit.frame().str(),
            lit.role == LiteralRole::kInput ? &inputs : &outputs);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  if (report != nullptr) {
    report->from = reader.type();
    report->to = to_classic ? SnapshotType::kClassic : SnapshotType::kDecomposed;
    report->inputs = inputs.size();
    report->outputs = outputs.size();
  }
  AtomicFileSink sink;
  if (to_classic) {
    absl::StatusOr<ClassicPlan> plan = PlanClassic(header, inputs, outputs);
    if (!plan.ok()) return plan.status();
    if (absl::Status s = sink.Open(out); !s.ok()) return OutputError(s, out);
    if (absl::Status s = WriteClassicSnapshot(sink, header, plan->arguments,
                                              plan->result, options.progress);
        !s.ok()) {
      return s;
    }
    return OutputError(sink.Commit(), out);
  }
  if (absl::Status s = sink.Open(out); !s.ok()) return OutputError(s, out);
  DecomposedProducer<AtomicFileSink> w(sink, options.write);
  if (options.progress) w.set_progress(options.progress);
  if (absl::Status s = w.WriteHeader(header); !s.ok()) return s;
  if (absl::Status s = w.WriteInputs(inputs); !s.ok()) return s;
  if (!outputs.empty() || options.write.write_output_count) {
    if (absl::Status s = w.WriteOutputs(outputs); !s.ok()) return s;
  }
  if (absl::Status s = w.Finish(); !s.ok()) return s;
  return OutputError(sink.Commit(), out);
}

}  // namespace

absl::Status ConvertDecomposedToClassic(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options) {
  return ConvertSnapshot(in, out, SnapshotType::kClassic,
                         SnapshotType::kDecomposed, options);
}

absl::Status ConvertClassicToDecomposed(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options) {
  return ConvertSnapshot(in, out, SnapshotType::kDecomposed,
                         SnapshotType::kClassic, options);
}

absl::Status ConvertSnapshot(const std::string& in, const std::string& out,
                             SnapshotType to, SnapshotType from,
                             const ConvertOptions& options,
                             ConvertReport* report) {
  if (to == SnapshotType::kAuto) {
    return absl::InvalidArgumentError(
        "convert: the output form must be decomposed or snapshot (classic)");
  }
  SnapshotOpenOptions open;
  open.type = from;
  open.box = options.read.box;
  open.access = SnapshotAccess::kMapped;  // the output borrows the bodies
  open.spill_streams = true;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(in, open);
  if (!file.ok()) return file.status();
  SnapshotFile& f = **file;
  if (f.type() == to) {
    const SnapshotTypeEvidence& e = f.evidence();
    if (to == SnapshotType::kClassic && from == SnapshotType::kAuto &&
        e.evidence.empty()) {
      // Classic is what detection answers when the bytes are not
      // decomposed: only a readable HloSnapshot is "already" one; any
      // other file gets the error every reader gives it ("not a
      // decomposed or classic snapshot; ...").
      absl::Status h = f.Read({.box = options.read.box}, [](auto& reader) {
        return reader.ReadHeader().status();
      });
      if (!h.ok()) return f.Annotate(h);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        in, ": already a ", Sv(SnapshotFormName(to)),
        !e.evidence.empty() ? absl::StrCat(" (", e.evidence, ")")
                            : std::string(),
        "; nothing to convert (--snapshot-type names the input's form)"));
  }
  SnapshotReadOptions read;
  read.box = options.read.box;
  absl::Status s = f.Read(read, [&](auto& reader) -> absl::Status {
    if constexpr (ZeroCopySource<std::remove_reference_t<
                      decltype(reader.source())>>) {
      return ConvertFrom(reader, out, options, report);
    } else {
      return absl::InternalError("convert: the input is not mapped");
    }
  });
  if (s.ok() && report != nullptr) {
    struct stat st;
    if (::stat(out.c_str(), &st) == 0) report->bytes = static_cast<uint64_t>(st.st_size);
  }
  // The output's errors name the output, not the input.
  if (PathOf(s) == out) return s;
  return f.Annotate(s);
}

}  // namespace decomposed
