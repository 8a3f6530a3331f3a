#include "decomposed/snapshot/convert.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/snapshot/classic.h"
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

absl::Status DecomposedToClassic(const std::string& in, const std::string& out,
                                 const ConvertOptions& options) {
  MmapSource src(in);
  if (!src.status().ok()) return src.status();
  DecomposedReader reader(src, options.read);
  std::string snapshot;
  absl::StatusOr<ElementInfo> head = reader.ReadHeader(&snapshot);
  if (!head.ok()) return WithFile(head.status(), in);
  absl::StatusOr<std::string> header = LiteralEmptySnapshot(snapshot);
  if (!header.ok()) return WithFile(header.status(), in);
  Literals literals(src, options.validate);
  std::vector<LiteralSource*> inputs, outputs;
  // The elements of one list; each body is borrowed from the mapping.
  auto take = [&](BlockReader<MmapSource>& list,
                  std::vector<LiteralSource*>* to) -> absl::Status {
    ElementInfo e;
    for (;;) {
      absl::StatusOr<bool> more = list.Next(&e);
      if (!more.ok()) return more.status();
      if (!*more) return absl::OkStatus();
      // The reader checked the body is held: the view cannot fail.
      std::optional<std::string_view> body =
          list.body().ReadView(static_cast<size_t>(e.length));
      if (!body) return TruncatedError(list.BodyFrame(), e.offset, e.length, 0);
      literals.Add(*body, e.offset, list.BodyFrame().str(), to);
    }
  };
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return WithFile(n.status(), in);
  if (absl::Status s = take(reader.inputs(), &inputs); !s.ok()) {
    return WithFile(s, in);
  }
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return WithFile(m.status(), in);
  if (m->has_value()) {
    if (absl::Status s = take(reader.outputs(), &outputs); !s.ok()) {
      return WithFile(s, in);
    }
  }
  if (absl::Status s = reader.Finish(); !s.ok()) return WithFile(s, in);
  absl::StatusOr<ClassicPlan> plan = PlanClassic(*header, inputs, outputs);
  if (!plan.ok()) return WithFile(plan.status(), in);
  AtomicFileSink sink;
  if (absl::Status s = sink.Open(out); !s.ok()) return s;
  if (absl::Status s = WriteClassicSnapshot(sink, *header, plan->arguments,
                                            plan->result, options.progress);
      !s.ok()) {
    return WithFile(s, in);
  }
  return sink.Commit();
}

absl::Status ClassicToDecomposed(const std::string& in, const std::string& out,
                                 const ConvertOptions& options) {
  MmapSource src(in);
  if (!src.status().ok()) return src.status();
  const Frame frame{"HloSnapshot"};
  const ByteRange whole{0, *src.size()};
  absl::StatusOr<ClassicSnapshot> snap =
      IndexClassicSnapshot(src, whole, frame);
  if (!snap.ok()) return WithFile(snap.status(), in);
  std::string header;
  if (absl::Status s = ReadLiteralEmptySnapshot(src, whole, frame, &header);
      !s.ok()) {
    return WithFile(s, in);
  }
  xla::HloSnapshot parsed;
  if (!parsed.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    return WithFile(absl::InvalidArgumentError(
                        "HloSnapshot: the hlo and other non-literal fields do "
                        "not parse (at byte 0)"),
                    in);
  }
  Literals literals(src, options.validate);
  std::vector<LiteralSource*> inputs, outputs;
  absl::Status s = ForEachClassicInput(
      src, *snap, frame,
      [](int64_t i) {
        return Frame{"input", i, "body"};
      },
      [&](std::span<const ByteRange> literal, int64_t i) {
        return literals.AddRanges(literal, absl::StrCat("input ", i), &inputs);
      });
  if (!s.ok()) return WithFile(s, in);
  absl::StatusOr<std::vector<LiteralRanges>> outs =
      ClassicOutputs(src, *snap, Frame{"result"});
  if (!outs.ok()) return WithFile(outs.status(), in);
  for (const LiteralRanges& o : *outs) {
    if (absl::Status a = literals.AddRanges(
            o, absl::StrCat("output ", outputs.size()), &outputs);
        !a.ok()) {
      return WithFile(a, in);
    }
  }
  AtomicFileSink sink;
  if (absl::Status o = sink.Open(out); !o.ok()) return o;
  DecomposedProducer<AtomicFileSink> w(sink, options.write);
  if (options.progress) w.set_progress(options.progress);
  if (absl::Status w0 = w.WriteHeader(header); !w0.ok()) return w0;
  if (absl::Status w1 = w.WriteInputs(inputs); !w1.ok()) {
    return WithFile(w1, in);
  }
  if (!outputs.empty() || options.write.write_output_count) {
    if (absl::Status w2 = w.WriteOutputs(outputs); !w2.ok()) {
      return WithFile(w2, in);
    }
  }
  if (absl::Status f = w.Finish(); !f.ok()) return f;
  return sink.Commit();
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
                             const ConvertOptions& options) {
  if (to == SnapshotType::kAuto) {
    return absl::InvalidArgumentError(
        "convert: the output form must be decomposed or snapshot (classic)");
  }
  absl::StatusOr<SnapshotType> type = ResolveSnapshotType(in, from);
  if (!type.ok()) return type.status();
  if (*type == to) {
    absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(in);
    return absl::InvalidArgumentError(absl::StrCat(
        in, ": already a ",
        to == SnapshotType::kDecomposed ? "decomposed snapshot"
                                        : "classic HloSnapshot",
        e.ok() && !e->evidence.empty() ? absl::StrCat(" (", e->evidence, ")")
                                       : std::string(),
        "; nothing to convert (--snapshot-type names the input's form)"));
  }
  absl::Status s = *type == SnapshotType::kDecomposed
                       ? DecomposedToClassic(in, out, options)
                       : ClassicToDecomposed(in, out, options);
  return WithSnapshotTypeHint(s, in, *type);
}

}  // namespace decomposed
