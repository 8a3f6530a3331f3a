#include "decomposed/snapshot/producer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/xla/shape.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed {
namespace {

// One top-level field record of a message.
struct Record {
  uint32_t field = 0;
  uint32_t wire_type = 0;
  uint64_t start = 0;   // offset of the tag
  uint64_t value = 0;   // offset of the payload (LEN) or the value
  uint64_t length = 0;  // payload bytes (LEN) or value bytes
  uint64_t end = 0;     // offset after the record
};

// Splits `data` into its top-level records. Offsets are relative to `data`;
// `base` is added only in error messages.
absl::Status ScanRecords(std::string_view data, uint64_t base,
                         const Frame& frame, std::vector<Record>* out) {
  const char* begin = data.data();
  const char* p = begin;
  const char* end = begin + data.size();
  while (p < end) {
    Record r;
    r.start = static_cast<uint64_t>(p - begin);
    uint64_t tag;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        base + r.start, "a field tag", "a malformed varint");
    }
    if (uint64_t n = static_cast<uint64_t>(p - begin) - r.start;
        !wire::IsValidTag(tag, n)) {
      return BadTagError(frame, base + r.start, "a message", tag, n);
    }
    r.field = static_cast<uint32_t>(tag >> 3);
    r.wire_type = static_cast<uint32_t>(tag & 7);
    const char* vstart = p;
    if (r.wire_type == wire::kLen) {
      uint64_t len;
      if (wire::ReadVarint(&p, end, &len) != wire::VarintResult::kOk) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame,
                          base + r.start, "a length varint",
                          "a malformed varint");
      }
      if (len > static_cast<uint64_t>(end - p)) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame, base + r.start,
            absl::StrCat("field ", r.field, " of at most ", end - p,
                         " bytes (what is left)"),
            absl::StrCat(len, " bytes"));
      }
      r.value = static_cast<uint64_t>(p - begin);
      r.length = len;
      p += len;
    } else {
      if (!internal::SkipField(&p, end, r.wire_type)) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame,
                          base + r.start,
                          absl::StrCat("a well-formed field ", r.field),
                          absl::StrCat("wire type ", r.wire_type,
                                       " malformed or truncated"));
      }
      r.value = static_cast<uint64_t>(vstart - begin);
      r.length = static_cast<uint64_t>(p - vstart);
    }
    r.end = static_cast<uint64_t>(p - begin);
    out->push_back(r);
  }
  return absl::OkStatus();
}

std::string_view Sub(std::string_view d, uint64_t off, uint64_t len) {
  return d.substr(static_cast<size_t>(off), static_cast<size_t>(len));
}

// Shape of a literal body: the concatenated payloads of its field-1
// records, parsed.
absl::StatusOr<Shape> BodyShape(std::string_view body, uint64_t base,
                                const Frame& frame,
                                std::vector<Record>* records) {
  records->clear();
  if (absl::Status s = ScanRecords(body, base, frame, records); !s.ok()) {
    return s;
  }
  std::string shape;
  for (const Record& r : *records) {
    if (r.field == 1 && r.wire_type == wire::kLen) {
      shape.append(Sub(body, r.value, r.length));
    }
  }
  return ParseShape(shape, frame, base);
}

class Tuple final : public LiteralBody {
 public:
  Tuple(std::vector<LiteralBody*> elements, std::string name)
      : elements_(std::move(elements)), name_(std::move(name)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (prepared_) return size_;
    shape_.clear();
    wire::AppendVarintField(&shape_, 2,
                            static_cast<uint64_t>(PrimitiveType::kTuple));
    sizes_.clear();
    for (LiteralBody* e : elements_) {
      absl::StatusOr<uint64_t> n = e->Prepare();
      if (!n.ok()) return n.status();
      absl::StatusOr<std::string> s = e->ShapeBytes();
      if (!s.ok()) return s.status();
      wire::AppendLenField(&shape_, 4, *s);
      sizes_.push_back(*n);
    }
    size_ = 1 + wire::VarintSize(shape_.size()) + shape_.size();
    for (uint64_t n : sizes_) size_ += 1 + wire::VarintSize(n) + n;
    prepared_ = true;
    return size_;
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!prepared_) return absl::FailedPreconditionError("Prepare() not called");
    std::string head;
    wire::AppendLenField(&head, 1, shape_);
    if (absl::Status s = fn(head); !s.ok()) return s;
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (absl::Status s = fn(internal::LenPrefix(10, sizes_[i])); !s.ok()) {
        return s;
      }
      if (absl::Status s = elements_[i]->Write(fn); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    if (!prepared_) return absl::FailedPreconditionError("Prepare() not called");
    return shape_;
  }
  std::string name() const override { return name_; }

 private:
  std::vector<LiteralBody*> elements_;
  std::string name_;
  std::string shape_;
  std::vector<uint64_t> sizes_;
  uint64_t size_ = 0;
  bool prepared_ = false;
};

absl::StatusOr<bool> IsTupleLiteral(LiteralBody* b) {
  absl::StatusOr<uint64_t> n = b->Prepare();
  if (!n.ok()) return n.status();
  absl::StatusOr<std::string> s = b->ShapeBytes();
  if (!s.ok()) return s.status();
  absl::StatusOr<Shape> shape = ParseShape(*s, Frame{b->name(), -1, "shape"});
  if (!shape.ok()) return shape.status();
  return shape->is_tuple();
}

}  // namespace

namespace internal {

std::string LenPrefix(uint32_t field, uint64_t length) {
  std::string s;
  wire::AppendLenHeader(&s, field, length);
  return s;
}

absl::Status SplitHeader(std::string_view header, std::string* before,
                         std::string* after) {
  std::vector<Record> records;
  if (absl::Status s = ScanRecords(header, 0, Frame{"snapshot"}, &records);
      !s.ok()) {
    return s;
  }
  before->clear();
  after->clear();
  for (const Record& r : records) {
    if (r.field == 2 || r.field == 3) {
      return FrameError(absl::StatusCode::kInvalidArgument, Frame{"snapshot"},
                        r.start, "a literal-empty HloSnapshot header",
                        absl::StrCat("field ", r.field,
                                     r.field == 2 ? " (arguments)"
                                                  : " (result)"));
    }
    (r.field < 2 ? before : after)->append(Sub(header, r.start,
                                               r.end - r.start));
  }
  return absl::OkStatus();
}

}  // namespace internal

absl::StatusOr<std::string> SnapshotFromModule(std::string_view module) {
  if (module.size() > limits::kMaxSnapshotBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "module: ", module.size(), " bytes is over protobuf's 2 GiB limit"));
  }
  xla::HloModuleProto parsed;
  if (!parsed.ParseFromArray(module.data(), static_cast<int>(module.size()))) {
    return absl::InvalidArgumentError(
        "module: expected a serialized HloModuleProto (binary protobuf, as "
        "snapshot-unpack writes model.hlo), found bytes that do not parse as "
        "one (at byte 0)");
  }
  std::string hlo = internal::LenPrefix(1, module.size());
  hlo.append(module);
  std::string snap = internal::LenPrefix(1, hlo.size());
  snap += hlo;
  if (snap.size() > limits::kMaxSnapshotBytes) {
    return absl::ResourceExhaustedError(
        "module: the wrapping HloSnapshot would pass protobuf's 2 GiB limit");
  }
  return snap;
}

absl::StatusOr<std::string> LiteralEmptySnapshot(std::string_view snapshot) {
  std::vector<Record> records;
  if (absl::Status s =
          ScanRecords(snapshot, 0, Frame{"snapshot"}, &records);
      !s.ok()) {
    return s;
  }
  std::string out;
  for (const Record& r : records) {
    if (r.field == 2 || r.field == 3) continue;
    out.append(Sub(snapshot, r.start, r.end - r.start));
  }
  return out;
}

absl::StatusOr<std::string> HeaderFromSnapshotFile(const std::string& path) {
  absl::StatusOr<std::string> type = DetectSnapshotType(path);
  if (!type.ok()) return type.status();
  MmapSource src(path);
  if (!src.status().ok()) return src.status();
  std::string header;
  if (*type == "decomposed") {
    DecomposedReader reader(src);
    std::string snapshot;
    absl::StatusOr<ElementInfo> e = reader.ReadHeader(&snapshot);
    if (!e.ok()) return WithFile(e.status(), path);
    absl::StatusOr<std::string> h = LiteralEmptySnapshot(snapshot);
    if (!h.ok()) return WithFile(h.status(), path);
    header = *std::move(h);
  } else {
    std::string_view data(src.cursor(), src.available());
    std::vector<Record> records;
    if (absl::Status s = ScanRecords(data, 0, Frame{"HloSnapshot"}, &records);
        !s.ok()) {
      return WithFile(s, path);
    }
    for (const Record& r : records) {
      if (r.field == 2 || r.field == 3) continue;
      header.append(Sub(data, r.start, r.end - r.start));
    }
  }
  xla::HloSnapshot parsed;
  if (header.size() > limits::kMaxSnapshotBytes ||
      !parsed.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": expected an HloSnapshot (classic or decomposed), found bytes "
              "whose non-literal fields do not parse as one (at byte 0)"));
  }
  return header;
}

absl::StatusOr<std::string> ReadMessageFile(const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) return s;
  FdSource src(std::move(fd));
  std::optional<uint64_t> size = src.size();
  if (!size) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected a regular file"));
  }
  if (*size > limits::kMaxSnapshotBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": ", *size,
        " bytes is over protobuf's 2 GiB message limit; no protobuf reader "
        "can parse it as one message"));
  }
  std::string out;
  if (absl::Status s = ReadToString(src, *size, Frame{"file"}, &out);
      !s.ok()) {
    return WithFile(s, path);
  }
  return out;
}

std::unique_ptr<LiteralBody> ProtoBody(const xla::LiteralProto& literal,
                                       std::string name) {
  return SerializedBody(literal.SerializeAsString(), true, std::move(name));
}

std::unique_ptr<LiteralBody> TupleBody(std::vector<LiteralBody*> elements,
                                       std::string name) {
  return std::make_unique<Tuple>(std::move(elements), std::move(name));
}

absl::StatusOr<uint64_t> ClassicSnapshotSize(
    std::string_view header, std::span<LiteralBody* const> arguments,
    LiteralBody* result) {
  std::string before, after;
  if (absl::Status s = internal::SplitHeader(header, &before, &after);
      !s.ok()) {
    return s;
  }
  uint64_t total = before.size() + after.size();
  auto add = [&](LiteralBody* b) -> absl::Status {
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    total += 1 + wire::VarintSize(*n) + *n;
    return absl::OkStatus();
  };
  for (LiteralBody* a : arguments) {
    if (absl::Status s = add(a); !s.ok()) return s;
  }
  if (result) {
    if (absl::Status s = add(result); !s.ok()) return s;
  }
  return total;
}

absl::StatusOr<ClassicPlan> PlanClassic(std::string_view header,
                                        std::vector<LiteralBody*> inputs,
                                        std::vector<LiteralBody*> outputs) {
  xla::HloSnapshot snap;
  if (header.size() > limits::kMaxSnapshotBytes ||
      !snap.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    return absl::InvalidArgumentError(
        "snapshot: expected serialized HloSnapshot bytes, found bytes that "
        "do not parse as one (at byte 0)");
  }
  const xla::HloModuleProto& mod = snap.hlo().hlo_module();
  const bool has_ps = mod.has_host_program_shape();
  const xla::ProgramShapeProto& ps = mod.host_program_shape();
  ClassicPlan plan;
  bool one_tuple_param = has_ps && ps.parameters_size() == 1 &&
                         ps.parameters(0).element_type() == xla::TUPLE;
  bool pass_through = true;
  if (one_tuple_param) {
    pass_through = false;
    if (inputs.size() == 1) {
      absl::StatusOr<bool> t = IsTupleLiteral(inputs[0]);
      if (!t.ok()) return t.status();
      pass_through = *t;
    }
  }
  if (pass_through) {
    plan.arguments = inputs;
  } else {
    plan.owned.push_back(TupleBody(inputs, "argument 0 (tuple of inputs)"));
    plan.arguments.push_back(plan.owned.back().get());
  }
  if (!outputs.empty()) {
    bool tuple_result = !has_ps || !ps.has_result() ||
                        ps.result().element_type() == xla::TUPLE;
    if (tuple_result) {
      if (has_ps && ps.has_result() &&
          ps.result().tuple_shapes_size() !=
              static_cast<int>(outputs.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "result: expected ", ps.result().tuple_shapes_size(),
            " outputs (the elements of host_program_shape.result), found ",
            outputs.size()));
      }
      plan.owned.push_back(TupleBody(outputs, "result (tuple of outputs)"));
      plan.result = plan.owned.back().get();
    } else {
      if (outputs.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "result: expected 1 output (host_program_shape.result is an "
            "array), found ",
            outputs.size()));
      }
      plan.result = outputs[0];
    }
  }
  return plan;
}

absl::Status CopyFileRangeTo(const std::string& path, uint64_t offset,
                             uint64_t length, int out_fd,
                             const std::function<void(uint64_t)>& progress) {
  OwnedFd in;
  if (absl::Status s = OpenForReading(path, &in); !s.ok()) return s;
  loff_t off = static_cast<loff_t>(offset);
  uint64_t left = length;
  bool kernel = true;
  std::unique_ptr<char[]> buf;
  constexpr size_t kBuf = 1 << 20;
  while (left > 0) {
    // Large steps let the kernel move big extents; 64 MiB with a progress
    // display keeps it lively.
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(left, progress ? (64 << 20) : (1 << 30)));
    ssize_t got;
    if (kernel) {
      got = ::copy_file_range(in.get(), &off, out_fd, nullptr, want, 0);
      if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                      errno == EOPNOTSUPP || errno == EBADF ||
                      errno == EPERM)) {
        kernel = false;  // not supported here: copy through user space
        buf.reset(new char[kBuf]);
        continue;
      }
    } else {
      got = ::pread(in.get(), buf.get(), std::min(want, kBuf), off);
      if (got > 0) {
        if (absl::Status s = WriteFully(out_fd, buf.get(),
                                        static_cast<size_t>(got));
            !s.ok()) {
          return s;
        }
        off += got;
      }
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(
          errno, absl::StrCat("copying ", path, " at byte ", off));
    }
    if (got == 0) {
      return TruncatedError(Frame{"npy data"}, offset, length,
                            length - left);
    }
    left -= static_cast<uint64_t>(got);
    if (progress) progress(length - left);
  }
  return absl::OkStatus();
}

absl::Status PackToFile(PackRequest& request, const std::string& path) {
  AtomicFileSink sink;
  if (absl::Status s = sink.Open(path); !s.ok()) return s;
  std::vector<LiteralBody*> inputs, outputs;
  for (auto& b : request.inputs) inputs.push_back(b.get());
  for (auto& b : request.outputs) outputs.push_back(b.get());
  if (request.format == OutputFormat::kDecomposed) {
    DecomposedProducer<AtomicFileSink> w(sink, request.write);
    if (request.progress) w.set_progress(request.progress);
    if (absl::Status s = w.WriteSnapshot(request.snapshot); !s.ok()) return s;
    if (absl::Status s = w.WriteInputs(inputs); !s.ok()) return s;
    if (!outputs.empty()) {
      if (absl::Status s = w.WriteOutputs(outputs); !s.ok()) return s;
    }
    if (absl::Status s = w.Finish(); !s.ok()) return s;
  } else {
    absl::StatusOr<ClassicPlan> plan =
        PlanClassic(request.snapshot, inputs, outputs);
    if (!plan.ok()) return plan.status();
    if (absl::Status s =
            WriteClassicSnapshot(sink, request.snapshot, plan->arguments,
                                 plan->result, request.progress);
        !s.ok()) {
      return s;
    }
  }
  return sink.Commit();
}

absl::Status ConvertDecomposedToClassic(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options) {
  MmapSource src(in);
  if (!src.status().ok()) return src.status();
  DecomposedReader reader(src, options.read);
  std::string snapshot;
  absl::StatusOr<ElementInfo> head = reader.ReadHeader(&snapshot);
  if (!head.ok()) return WithFile(head.status(), in);
  absl::StatusOr<std::string> header = LiteralEmptySnapshot(snapshot);
  if (!header.ok()) return WithFile(header.status(), in);
  std::vector<std::unique_ptr<LiteralBody>> owned;
  std::vector<LiteralBody*> inputs, outputs;
  auto take = [&](const ElementInfo& e, std::string_view region,
                  int64_t index, std::vector<LiteralBody*>* list) {
    std::string_view body(src.cursor(), static_cast<size_t>(e.length));
    owned.push_back(SerializedBodyView(body, options.validate,
                                       absl::StrCat(Sv(region), " ", index,
                                                    " body"),
                                       e.offset));
    list->push_back(owned.back().get());
  };
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return WithFile(n.status(), in);
  ElementInfo e;
  for (int64_t i = 0;; ++i) {
    absl::StatusOr<bool> more = reader.NextInput(&e);
    if (!more.ok()) return WithFile(more.status(), in);
    if (!*more) break;
    take(e, "input", i, &inputs);
  }
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return WithFile(m.status(), in);
  if (m->has_value()) {
    for (int64_t i = 0;; ++i) {
      absl::StatusOr<bool> more = reader.NextOutput(&e);
      if (!more.ok()) return WithFile(more.status(), in);
      if (!*more) break;
      take(e, "output", i, &outputs);
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

absl::Status ConvertClassicToDecomposed(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options) {
  MmapSource src(in);
  if (!src.status().ok()) return src.status();
  std::string_view data(src.cursor(), src.available());
  std::vector<Record> records;
  if (absl::Status s = ScanRecords(data, 0, Frame{"HloSnapshot"}, &records);
      !s.ok()) {
    return WithFile(s, in);
  }
  std::string header;
  std::vector<const Record*> args;
  const Record* result = nullptr;
  for (const Record& r : records) {
    if ((r.field == 2 || r.field == 3) && r.wire_type != wire::kLen) {
      return WithFile(
          FrameError(absl::StatusCode::kInvalidArgument, Frame{"HloSnapshot"},
                     r.start, "a length-delimited LiteralProto",
                     absl::StrCat("field ", r.field, " wire type ",
                                  r.wire_type)),
          in);
    }
    if (r.field == 2) {
      args.push_back(&r);
    } else if (r.field == 3) {
      if (result) {
        return WithFile(
            FrameError(absl::StatusCode::kUnimplemented, Frame{"result"},
                       r.start, "one result record",
                       "a second one (protobuf would merge them)"),
            in);
      }
      result = &r;
    } else {
      header.append(Sub(data, r.start, r.end - r.start));
    }
  }
  if (header.size() > limits::kMaxSnapshotBytes) {
    return absl::ResourceExhaustedError("snapshot header over 2 GiB");
  }
  xla::HloSnapshot snap;
  if (!snap.ParseFromArray(header.data(), static_cast<int>(header.size()))) {
    return WithFile(absl::InvalidArgumentError(
                        "HloSnapshot: the hlo and other non-literal fields do "
                        "not parse (at byte 0)"),
                    in);
  }
  const xla::ProgramShapeProto& ps = snap.hlo().hlo_module().host_program_shape();
  bool one_tuple_param = snap.hlo().hlo_module().has_host_program_shape() &&
                         ps.parameters_size() == 1 &&
                         ps.parameters(0).element_type() == xla::TUPLE;

  std::vector<std::unique_ptr<LiteralBody>> owned;
  std::vector<LiteralBody*> inputs, outputs;
  auto add = [&](std::string_view body, uint64_t offset, std::string name,
                 std::vector<LiteralBody*>* list) {
    owned.push_back(
        SerializedBodyView(body, options.validate, std::move(name), offset));
    list->push_back(owned.back().get());
  };
  // Adds the top-level tuple elements of a literal, or the literal itself
  // when it is not a tuple (or `split` is false).
  auto add_split = [&](const Record& r, bool split, std::string_view region,
                       std::vector<LiteralBody*>* list) -> absl::Status {
    std::string_view body = Sub(data, r.value, r.length);
    if (split) {
      std::vector<Record> sub;
      absl::StatusOr<Shape> shape =
          BodyShape(body, r.value, Frame{region}, &sub);
      if (!shape.ok()) return shape.status();
      if (shape->is_tuple()) {
        for (const Record& t : sub) {
          if (t.field != 10) continue;
          if (t.wire_type != wire::kLen) {
            return FrameError(absl::StatusCode::kInvalidArgument,
                              Frame{region}, r.value + t.start,
                              "length-delimited tuple_literals",
                              absl::StrCat("wire type ", t.wire_type));
          }
          add(Sub(body, t.value, t.length), r.value + t.value,
              absl::StrCat(Sv(region), " ", list->size()), list);
        }
        return absl::OkStatus();
      }
    }
    add(body, r.value, absl::StrCat(Sv(region), " ", list->size()), list);
    return absl::OkStatus();
  };
  for (const Record* r : args) {
    if (absl::Status s = add_split(*r, one_tuple_param && args.size() == 1,
                                   "input", &inputs);
        !s.ok()) {
      return WithFile(s, in);
    }
  }
  if (result) {
    if (absl::Status s = add_split(*result, true, "output", &outputs);
        !s.ok()) {
      return WithFile(s, in);
    }
  }
  AtomicFileSink sink;
  if (absl::Status s = sink.Open(out); !s.ok()) return s;
  DecomposedProducer<AtomicFileSink> w(sink, options.write);
  if (options.progress) w.set_progress(options.progress);
  if (absl::Status s = w.WriteSnapshot(header); !s.ok()) return s;
  if (absl::Status s = w.WriteInputs(inputs); !s.ok()) return WithFile(s, in);
  if (!outputs.empty() || options.write.write_output_count) {
    if (absl::Status s = w.WriteOutputs(outputs); !s.ok()) {
      return WithFile(s, in);
    }
  }
  if (absl::Status s = w.Finish(); !s.ok()) return s;
  return sink.Commit();
}

}  // namespace decomposed
