// LiteralSource: one serialized literal to be written, whatever its origin,
// with its exact size known before writing: an element body in a decomposed
// file, an `arguments` or `result` field in a classic one (the glossary's
// "body" is only the former, docs/format.md §2.5). Prepare() computes the
// size (reading data if it must: varint types take a sizing pass) and
// validates; Write() streams the serialized literal. Prepare() must succeed
// before Write(); both may be called again (each Write() re-reads its data).
// The producers (snapshot/producer.h) write any LiteralSource.
//
//   EncodedLiteral       an array from any ElementSource, through the
//                        LiteralEncoder (literal_encoder.h)
//   ArrayLiteral()       a typed array in memory (ArrayView)
//   SerializedLiteral()  bytes already serialized, optionally validated by
//                        the first pass (literal_plan.h)
//   NpyLiteral()         a .npy file (npy/npy_literal.h)
//   TupleLiteral()       a TUPLE of other literals (snapshot/classic.h)
//
// Errors: those of LiteralEncoder::Create / Write (invalid spec, data of
// the wrong size, data that changed between passes), of the first pass for
// SerializedLiteral with `validate`, and kFailedPrecondition for Write() or
// ShapeBytes() before a successful Prepare().
//
// Example:
//   float v[2] = {1.0f, 2.0f};
//   decomposed::ArrayView view{v, decomposed::PrimitiveType::kF32, {2}};
//   auto literal = decomposed::ArrayLiteral(view);
//   absl::StatusOr<uint64_t> n = literal->Prepare();   // exact size
//   std::string out;
//   absl::Status s = literal->Write([&](std::string_view c) {
//     out.append(c); return absl::OkStatus(); });
#ifndef DECOMPOSED_XLA_LITERAL_SOURCE_H_
#define DECOMPOSED_XLA_LITERAL_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_encoder.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"

namespace decomposed {

class LiteralSource {
 public:
  virtual ~LiteralSource() = default;
  // The exact number of bytes Write() will produce.
  virtual absl::StatusOr<uint64_t> Prepare() = 0;
  virtual absl::Status Write(const ChunkFn& fn) = 0;
  // The serialized ShapeProto of the literal (after Prepare()).
  virtual absl::StatusOr<std::string> ShapeBytes() = 0;
  // Names the literal in errors ("input 2 (a.npy)").
  virtual std::string name() const = 0;

  // When the literal is `head` followed by `length` bytes of the file `path`
  // from `offset` on, unchanged, says so (after Prepare()), so that a
  // writer to a file can let the kernel copy the range (copy_file_range)
  // instead of reading and writing it. Default: not such a literal.
  struct FileSpan {
    std::string head;
    std::string path;
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  virtual std::optional<FileSpan> AsFileSpan() const { return std::nullopt; }
};

// A typed array in memory: `data` holds the elements in physical order for
// the layout (row-major unless minor_to_major says otherwise), little
// endian, Info(type).element_bytes per element (sub-byte types: one element
// per byte). The memory must outlive the literal.
struct ArrayView {
  const void* data = nullptr;
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> minor_to_major;
};

// An array literal from an ElementSource, through the LiteralEncoder.
// Subclasses that are their own element source and learn the array's spec
// only when prepared (npy/npy_literal.h) use the protected constructor and
// override PrepareSpec() and source().
class EncodedLiteral : public LiteralSource {
 public:
  EncodedLiteral(std::unique_ptr<ElementSource> data, ArraySpec spec,
                 LiteralEncodeOptions options)
      : owned_(std::move(data)), spec_(std::move(spec)),
        options_(std::move(options)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (enc_) return enc_->body_size();
    absl::StatusOr<ArraySpec> spec = PrepareSpec();
    if (!spec.ok()) return spec.status();
    absl::StatusOr<LiteralEncoder> e =
        LiteralEncoder::Create(*std::move(spec), source(), options_);
    if (!e.ok()) return e.status();
    enc_.emplace(*std::move(e));
    return enc_->body_size();
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!enc_) return absl::FailedPreconditionError("Prepare() not called");
    return enc_->Write(fn);
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    if (!enc_) return absl::FailedPreconditionError("Prepare() not called");
    return enc_->shape_bytes();
  }
  std::string name() const override { return options_.name; }
  // The encoder, after a successful Prepare(); else nullptr.
  const LiteralEncoder* encoder() const { return enc_ ? &*enc_ : nullptr; }

 protected:
  explicit EncodedLiteral(LiteralEncodeOptions options)
      : options_(std::move(options)) {}
  // The array to encode (called once, by the first Prepare()).
  virtual absl::StatusOr<ArraySpec> PrepareSpec() { return spec_; }
  // Where the elements come from.
  virtual ElementSource* source() { return owned_.get(); }
  const LiteralEncodeOptions& options() const { return options_; }

 private:
  std::unique_ptr<ElementSource> owned_;
  ArraySpec spec_;
  LiteralEncodeOptions options_;
  std::optional<LiteralEncoder> enc_;
};

namespace internal {

// An already-serialized literal (owned or borrowed bytes).
class SerializedLiteralImpl final : public LiteralSource {
 public:
  SerializedLiteralImpl(std::string owned, std::string_view view,
                        bool validate, std::string name, uint64_t base_offset)
      : owned_(std::move(owned)),
        view_(owned_.empty() ? view : std::string_view(owned_)),
        validate_(validate), name_(std::move(name)), base_(base_offset) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (prepared_) return view_.size();
    MemorySource src(view_, base_);
    Frame frame{name_};
    absl::StatusOr<LiteralPlan> scan = PlanLiteral(
        src, view_.size(), frame, {.shape_must_be_message = true});
    if (!scan.ok()) return scan.status();
    if (validate_) {
      if (absl::Status s = CheckPlanShape(*scan, frame, frame, base_);
          !s.ok()) {
        return s;
      }
    }
    // The shape bytes (the plan concatenates merged occurrences).
    shape_ = std::move(scan->shape_bytes);
    prepared_ = true;
    return view_.size();
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!prepared_) return absl::FailedPreconditionError("Prepare() not called");
    return SpanElementSource(view_).ForEachChunk(fn);
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    if (!prepared_) return absl::FailedPreconditionError("Prepare() not called");
    return shape_;
  }
  std::string name() const override { return name_; }

 private:
  std::string owned_;
  std::string_view view_;
  bool validate_;
  std::string name_;
  uint64_t base_;
  std::string shape_;
  bool prepared_ = false;
};

}  // namespace internal

// A literal from a typed array in memory.
inline std::unique_ptr<LiteralSource> ArrayLiteral(
    const ArrayView& view, LiteralEncodeOptions options = {}) {
  ArraySpec spec{view.type, view.dims, view.minor_to_major};
  uint64_t bytes = 0;
  if (const PrimitiveTypeInfo* i = view.data == nullptr ? nullptr :
          FindPrimitiveType(static_cast<int64_t>(view.type))) {
    absl::StatusOr<uint64_t> n = ValidateArraySpec(spec, Frame{options.name});
    if (n.ok()) bytes = *n * i->element_bytes;
  }
  return std::make_unique<EncodedLiteral>(
      std::make_unique<SpanElementSource>(std::string_view(
          static_cast<const char*>(view.data), static_cast<size_t>(bytes))),
      std::move(spec), std::move(options));
}

// A literal already serialized: `body` is written as is. With `validate`,
// Prepare() checks the wire format and that the shape is one XLA loads.
inline std::unique_ptr<LiteralSource> SerializedLiteral(
    std::string body, bool validate = true, std::string name = "literal") {
  return std::make_unique<internal::SerializedLiteralImpl>(
      std::move(body), std::string_view(), validate, std::move(name), 0);
}
// As SerializedLiteral, borrowing `body` (which must outlive the result);
// `base_offset` locates it in its file for error messages.
inline std::unique_ptr<LiteralSource> SerializedLiteralView(
    std::string_view body, bool validate = true, std::string name = "literal",
    uint64_t base_offset = 0) {
  return std::make_unique<internal::SerializedLiteralImpl>(
      std::string(), body, validate, std::move(name), base_offset);
}


}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_SOURCE_H_
