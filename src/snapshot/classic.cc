#include "decomposed/snapshot/classic.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/xla/shape.h"

namespace decomposed {
namespace {

class Tuple final : public LiteralSource {
 public:
  Tuple(std::vector<LiteralSource*> elements, std::string name)
      : elements_(std::move(elements)), name_(std::move(name)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (prepared_) return size_;
    shape_.clear();
    wire::AppendVarintField(&shape_, 2,
                            static_cast<uint64_t>(PrimitiveType::kTuple));
    sizes_.clear();
    for (LiteralSource* e : elements_) {
      absl::StatusOr<uint64_t> n = e->Prepare();
      if (!n.ok()) return n.status();
      absl::StatusOr<std::string> s = e->ShapeBytes();
      if (!s.ok()) return s.status();
      wire::AppendLenField(&shape_, 4, *s);
      sizes_.push_back(*n);
    }
    size_ = wire::LenFieldSize(1, shape_.size());
    for (uint64_t n : sizes_) size_ += wire::LenFieldSize(10, n);
    prepared_ = true;
    return size_;
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!prepared_)
      return absl::FailedPreconditionError("Prepare() not called");
    std::string head;
    wire::AppendLenField(&head, 1, shape_);
    if (absl::Status s = fn(head); !s.ok()) return s;
    for (size_t i = 0; i < elements_.size(); ++i) {
      head.clear();
      wire::AppendLenHeader(&head, 10, sizes_[i]);
      if (absl::Status s = fn(head); !s.ok()) return s;
      if (absl::Status s = elements_[i]->Write(fn); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    if (!prepared_)
      return absl::FailedPreconditionError("Prepare() not called");
    return shape_;
  }
  std::string name() const override { return name_; }

 private:
  std::vector<LiteralSource*> elements_;
  std::string name_;
  std::string shape_;
  std::vector<uint64_t> sizes_;
  uint64_t size_ = 0;
  bool prepared_ = false;
};

absl::StatusOr<bool> IsTupleLiteral(LiteralSource* b) {
  absl::StatusOr<uint64_t> n = b->Prepare();
  if (!n.ok()) return n.status();
  absl::StatusOr<std::string> s = b->ShapeBytes();
  if (!s.ok()) return s.status();
  absl::StatusOr<Shape> shape = ParseShape(*s, Frame{b->name(), -1, "shape"});
  if (!shape.ok()) return shape.status();
  return shape->is_tuple();
}

absl::Status ParseSnapshot(std::string_view bytes, const Frame& frame,
                           xla::HloSnapshot* snap) {
  if (bytes.size() > limits::kMaxMessageBytes ||
      !snap->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, 0,
                      "serialized HloSnapshot bytes",
                      "bytes that do not parse as one");
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<InputParameter> InputParameterOf(
    std::span<const std::string> parameter_names, bool single_tuple_parameter,
    int64_t input_index) {
  if (input_index < 0) return std::nullopt;
  if (single_tuple_parameter) {
    if (parameter_names.empty()) return std::nullopt;
    return InputParameter{parameter_names[0], input_index};
  }
  if (static_cast<uint64_t>(input_index) >= parameter_names.size()) {
    return std::nullopt;
  }
  return InputParameter{parameter_names[static_cast<size_t>(input_index)], -1};
}

namespace internal {

bool SingleTupleParameter(const xla::ProgramShapeProto& ps) {
  return ps.parameters_size() == 1 &&
         ps.parameters(0).element_type() == xla::TUPLE;
}

absl::StatusOr<xla::ProgramShapeProto> ParseProgramShape(std::string_view bytes,
                                                         const Frame& frame,
                                                         uint64_t offset) {
  xla::ProgramShapeProto ps;
  if (!ps.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "a ProgramShapeProto protobuf can parse",
                      "bytes it rejects");
  }
  return ps;
}

}  // namespace internal

absl::Status HeaderLiteralsWarning(uint64_t arguments, bool result,
                                   uint64_t offset) {
  if (arguments == 0 && !result) return absl::OkStatus();
  std::string what = arguments == 0 ? std::string()
                                    : Counted(arguments, "argument");
  if (result) absl::StrAppend(&what, what.empty() ? "" : " and ", "a result");
  return WithLocation(
      absl::FailedPreconditionError(absl::StrCat(
          "header: carries ", what, " (at byte ", offset,
          "); a decomposed file's literals are its blocks', so unpack "
          "ignores them as snapshot-unpack does (AWS's reader keeps them)")),
      Frame{"header"}.str(), offset);
}

absl::StatusOr<std::string> LiteralEmptySnapshot(std::string_view snapshot) {
  MemorySource src(snapshot);
  std::string out;
  if (absl::Status s = ReadLiteralEmptySnapshot(
          src, ByteRange{0, snapshot.size()}, Frame{"HloSnapshot"}, &out);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<std::string> SnapshotFromModule(std::string_view module) {
  if (module.size() > limits::kMaxMessageBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "module: ", module.size(), " bytes is over protobuf's 2 GiB limit"));
  }
  xla::HloModuleProto parsed;
  if (!parsed.ParseFromArray(module.data(), static_cast<int>(module.size()))) {
    return FrameError(absl::StatusCode::kInvalidArgument, Frame{"module"}, 0,
                      "a serialized HloModuleProto (binary protobuf, as "
                      "snapshot-unpack writes model.hlo)",
                      "bytes that do not parse as one");
  }
  std::string hlo;
  wire::AppendLenField(&hlo, 1, module);
  std::string snap;
  wire::AppendLenField(&snap, 1, hlo);
  if (snap.size() > limits::kMaxMessageBytes) {
    return absl::ResourceExhaustedError(
        "module: the wrapping HloSnapshot would pass protobuf's 2 GiB limit");
  }
  return snap;
}

absl::StatusOr<std::string> LiteralEmptySnapshotOfFile(
    const std::string& path) {
  SnapshotOpenOptions open;
  open.access = SnapshotAccess::kMapped;
  open.spill_streams = true;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(path, open);
  if (!file.ok()) return file.status();
  std::string header;
  absl::Status s = (*file)->Read({}, [&](auto& reader) -> absl::Status {
    absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
    if (!h.ok()) return h.status();
    return reader.ReadLiteralEmptySnapshot(&header);
  });
  if (!s.ok()) return (*file)->Annotate(s);
  xla::HloSnapshot parsed;
  if (absl::Status p = ParseSnapshot(
          header, Frame{"HloSnapshot without its literals"}, &parsed);
      !p.ok()) {
    return WithFile(p, path);
  }
  return header;
}

std::unique_ptr<LiteralSource> TupleLiteral(
    std::vector<LiteralSource*> elements, std::string name) {
  return std::make_unique<Tuple>(std::move(elements), std::move(name));
}

absl::StatusOr<ClassicPlan> PlanClassic(std::string_view snapshot,
                                        std::vector<LiteralSource*> inputs,
                                        std::vector<LiteralSource*> outputs) {
  xla::HloSnapshot snap;
  if (absl::Status s = ParseSnapshot(snapshot, Frame{"header"}, &snap);
      !s.ok()) {
    return s;
  }
  const xla::HloModuleProto& mod = snap.hlo().hlo_module();
  const bool has_ps = mod.has_host_program_shape();
  const xla::ProgramShapeProto& ps = mod.host_program_shape();
  ClassicPlan plan;
  bool pass_through = true;
  if (has_ps && internal::SingleTupleParameter(ps)) {
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
    plan.owned.push_back(TupleLiteral(inputs, "argument 0 (tuple of inputs)"));
    plan.arguments.push_back(plan.owned.back().get());
  }
  if (!outputs.empty()) {
    bool tuple_result =
        !has_ps || !ps.has_result() || ps.result().element_type() == xla::TUPLE;
    if (tuple_result) {
      if (has_ps && ps.has_result() &&
          ps.result().tuple_shapes_size() != static_cast<int>(outputs.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "result: expected ", ps.result().tuple_shapes_size(),
            " outputs (the elements of host_program_shape.result), found ",
            outputs.size()));
      }
      plan.owned.push_back(TupleLiteral(outputs, "result (tuple of outputs)"));
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

}  // namespace decomposed
