// Streaming LiteralProto encoder: writes the body of an array literal from
// an ElementSource (the element bytes, in chunks, as many passes as the
// encoder needs), with its exact length known before the first byte is
// written, and without ever building the body in memory. The encoder knows
// no file format: .npy files reach it through npy/npy_literal.h, bundle
// tensors through capture/replay.cc, memory through SpanElementSource.
// Related headers: varint_encode.h (elements -> varints), literal_source.h
// (LiteralSource: a literal to write, whatever its origin).
//
// The body is what XLA's LiteralBase::ToProto writes (docs/format.md
// §8.3 and §9.6), field by field in field-number order as protobuf
// serializes it:
//
//   0a <len> ShapeProto
//     10 <element_type>
//     1a <len> <dimensions, packed varints>          (rank > 0)
//     2a <len> LayoutProto                            (always, even rank 0)
//       0a <len> <minor_to_major, packed varints>     (rank > 0)
//       80 01 01  tail_padding_alignment_in_elements = 1
//                                                    (ShapeEncodeOptions)
//     32 <len> <is_dynamic_dimension, one 00 per dim> (rank > 0)
//   <tag> <len> <data>                                (element count > 0)
//
// One data field, chosen by the element type (primitive_type.h):
//   F32, C64 -> packed fixed32 (f32s 0x42, c64s 0x62: re, im, ...)
//   F64, C128 -> packed fixed64 (f64s 0x4a, c128s 0x92 0x01)
//   8/16-bit ints, F16, BF16, all F8/F6/F4, S4/U4/S2/U2/S1/U1 -> bytes,
//     raw little-endian elements, one element per byte for sub-byte types
//   PRED -> packed bool varints (0x12), one byte per element, non-zero -> 1
//   S32, S64, U32, U64 -> packed varints (S32 sign-extended to 64 bits, so
//     negatives take 10 bytes, as protobuf's int32 does)
// A zero-element array writes no data field: proto3 omits an empty packed
// field or empty bytes, so the body equals protobuf's own serialization.
//
// Layout choice (tail_padding_alignment_in_elements): modern XLA's
// Layout::ToProto always writes 1 (field 16, bytes `80 01 01`); XLA reads 0
// as 1, and TF-2.11-era readers keep it as an unknown field that does not
// take part in shape comparison. We write it by default so our bodies are
// byte-identical to what current XLA writes; set
// ShapeEncodeOptions::tail_padding_alignment = false for the TF 2.11 form
// (a scalar's layout is then the empty message `2a 00`).
//
// Data order is physical: the element bytes come in the layout's
// minor_to_major order (row-major for the default layout {rank-1, ..., 0},
// column-major for {0, ..., rank-1}).
//
// Length up front: for fixed-size encodings the data length is
// count * element bytes. For varint types (S32, S64, U32, U64) the encoder
// makes one sizing pass over the data (ElementSource::ForEachChunk is called
// twice); the write pass recomputes the length and fails with kDataLoss if
// the data changed in between.
//
// Example:
//   float v[2] = {1.0f, 2.0f};
//   decomposed::SpanElementSource data(
//       std::string_view(reinterpret_cast<const char*>(v), sizeof(v)));
//   absl::StatusOr<decomposed::LiteralEncoder> e = decomposed::LiteralEncoder::Create(
//       {decomposed::PrimitiveType::kF32, {2}, std::nullopt}, &data);
//   if (!e.ok()) return e.status();
//   std::string out;                                   // e->body_size() bytes
//   absl::Status s = e->Write([&](std::string_view c) {
//     out.append(c); return absl::OkStatus(); });
#ifndef DECOMPOSED_XLA_LITERAL_ENCODER_H_
#define DECOMPOSED_XLA_LITERAL_ENCODER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/wire/writer.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"
#include "decomposed/xla/varint_encode.h"

namespace decomposed {

// Receives consecutive chunks of output; a non-OK status stops the writer.
using ChunkFn = std::function<absl::Status(std::string_view)>;

// An array's element type, dimensions and layout.
struct ArraySpec {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  // nullopt: the default row-major layout {rank-1, ..., 0}.
  std::optional<std::vector<int64_t>> minor_to_major;

  std::vector<int64_t> Layout() const {
    if (minor_to_major) return *minor_to_major;
    std::vector<int64_t> m;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      m.push_back(i);
    }
    return m;
  }
};

struct ShapeEncodeOptions {
  // Write tail_padding_alignment_in_elements = 1 in every layout, as modern
  // XLA does (see the file comment).
  bool tail_padding_alignment = true;
};

// Checks that `spec` describes an array XLA can load: an array element type
// (not TUPLE/TOKEN/OPAQUE/BUFFER/INVALID), non-negative dims, rank <=
// kMaxRank, minor_to_major a permutation of 0..rank-1, and an element count
// and byte size within limits. Returns the element count.
inline absl::StatusOr<uint64_t> ValidateArraySpec(const ArraySpec& spec,
                                                  const Frame& frame) {
  const PrimitiveTypeInfo* info =
      FindPrimitiveType(static_cast<int64_t>(spec.type));
  if (!info || info->encoding == DataEncoding::kNone) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, 0,
                      "an array element type",
                      info ? std::string(info->name)
                           : absl::StrCat(static_cast<int>(spec.type)));
  }
  if (spec.dims.size() > limits::kMaxRank) {
    return FrameError(absl::StatusCode::kResourceExhausted, frame, 0,
                      absl::StrCat("rank <= ", limits::kMaxRank),
                      absl::StrCat("rank ", spec.dims.size()));
  }
  Shape s;
  s.element_type = static_cast<int64_t>(spec.type);
  s.dimensions = spec.dims;
  s.has_layout = true;
  s.layout.minor_to_major = spec.Layout();
  if (absl::Status st = ValidateShape(s, frame, 0); !st.ok()) return st;
  return ElementCount(s, frame, 0, info->element_bytes);
}


// The ShapeProto bytes for an array (see the file comment). `spec` must be
// valid (ValidateArraySpec).
inline std::string EncodeArrayShape(const ArraySpec& spec,
                                    const ShapeEncodeOptions& options = {}) {
  std::string s;
  wire::AppendVarintField(&s, 2, static_cast<uint64_t>(spec.type));
  std::string packed;
  if (!spec.dims.empty()) {
    wire::AppendPackedVarints(&packed, spec.dims);
    wire::AppendLenField(&s, 3, packed);
  }
  std::string layout;
  if (!spec.dims.empty()) {
    packed.clear();
    wire::AppendPackedVarints(&packed, spec.Layout());
    wire::AppendLenField(&layout, 1, packed);
  }
  if (options.tail_padding_alignment) wire::AppendVarintField(&layout, 16, 1);
  wire::AppendLenField(&s, 5, layout);
  if (!spec.dims.empty()) {
    wire::AppendLenField(&s, 6, std::string(spec.dims.size(), '\0'));
  }
  return s;
}

// The bytes of one array's elements, in physical order, little endian,
// Info(type).element_bytes per element. ForEachChunk may be called more
// than once and must yield the same bytes each time; chunks may split
// elements.
class ElementSource {
 public:
  virtual ~ElementSource() = default;
  virtual absl::Status ForEachChunk(const ChunkFn& fn) = 0;
};

// A borrowed span of memory.
class SpanElementSource final : public ElementSource {
 public:
  explicit SpanElementSource(std::string_view bytes) : bytes_(bytes) {}
  absl::Status ForEachChunk(const ChunkFn& fn) override {
    // Bounded chunks keep a varint conversion's progress granular.
    constexpr size_t kChunk = 8 << 20;
    for (size_t off = 0; off < bytes_.size(); off += kChunk) {
      absl::Status s = fn(bytes_.substr(off, kChunk));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  std::string_view bytes_;
};
struct LiteralEncodeOptions {
  ShapeEncodeOptions shape;
  // Names the literal in error messages ("input 3").
  std::string name = "literal";
  // S1, U1, F6E3M2FN and F6E2M3FN have a data field but XLA's
  // CreateFromProto cannot load them (snapshot-unpack would abort), so they
  // are refused unless this is set.
  bool allow_unloadable_types = false;
};

// Encodes one array literal from an ElementSource. Create() validates the
// spec and computes the exact body size (a sizing pass for S32, S64, U32,
// U64; PRED is one byte per element); Write() streams the body.
class LiteralEncoder {
 public:
  // `data` must outlive the encoder and yield count * element_bytes bytes.
  static absl::StatusOr<LiteralEncoder> Create(
      ArraySpec spec, ElementSource* data,
      const LiteralEncodeOptions& options = {}) {
    LiteralEncoder e;
    e.spec_ = std::move(spec);
    e.data_ = data;
    e.options_ = options;
    const Frame frame{e.options_.name};
    absl::StatusOr<uint64_t> count = ValidateArraySpec(e.spec_, frame);
    if (!count.ok()) return count.status();
    e.count_ = *count;
    const PrimitiveTypeInfo& info = Info(e.spec_.type);
    if (!info.loadable && !options.allow_unloadable_types) {
      return absl::UnimplementedError(absl::StrCat(
          e.options_.name, ": ", Sv(info.name),
          " literals cannot be loaded by XLA's CreateFromProto (no "
          "CopyFromProto case), so no consumer could read this file"));
    }
    e.shape_ = EncodeArrayShape(e.spec_, options.shape);
    e.data_bytes_in_ = e.count_ * info.element_bytes;
    if (info.encoding == DataEncoding::kBool) {
      e.payload_ = e.count_;
    } else if (IsVarintEncoding(info.encoding)) {
      if (e.count_ > 0) {
        internal::VarintConverter conv(info.encoding, info.element_bytes);
        uint64_t got = 0;
        absl::Status s = data->ForEachChunk([&](std::string_view c) {
          got += c.size();
          if (got > e.data_bytes_in_) return absl::OkStatus();
          return conv.Feed(c, [](std::string_view) {
            return absl::OkStatus();
          });
        });
        if (!s.ok()) return s;
        if (got != e.data_bytes_in_) return e.SizeMismatch(got);
        e.payload_ = conv.out_bytes();
      }
    } else {
      e.payload_ = e.data_bytes_in_;
    }
    e.body_size_ = wire::LenFieldSize(1, e.shape_.size());
    if (e.count_ > 0) {
      e.body_size_ += wire::LenFieldSize(info.proto_field, e.payload_);
    }
    return e;
  }

  uint64_t body_size() const { return body_size_; }
  uint64_t element_count() const { return count_; }
  // Bytes of the data field's payload (0 for an empty array).
  uint64_t payload_size() const { return payload_; }
  // The serialized ShapeProto.
  const std::string& shape_bytes() const { return shape_; }
  const ArraySpec& spec() const { return spec_; }

  // The bytes before the data payload: the shape field and, for a
  // non-empty array, the data field's tag and length.
  std::string Head() const {
    std::string head;
    wire::AppendLenField(&head, 1, shape_);
    if (count_ > 0) {
      wire::AppendLenHeader(&head, Info(spec_.type).proto_field, payload_);
    }
    return head;
  }
  // True when the data payload is the source bytes unchanged (fixed-size
  // and bytes encodings), so it can be copied without conversion.
  bool PayloadIsVerbatim() const {
    return !IsVarintEncoding(Info(spec_.type).encoding);
  }

  // Streams exactly body_size() bytes to `fn`.
  absl::Status Write(const ChunkFn& fn) {
    const PrimitiveTypeInfo& info = Info(spec_.type);
    if (absl::Status s = fn(Head()); !s.ok()) return s;
    if (count_ == 0) return absl::OkStatus();
    uint64_t got = 0;
    if (!IsVarintEncoding(info.encoding)) {
      absl::Status s = data_->ForEachChunk([&](std::string_view c) {
        if (got + c.size() > data_bytes_in_) {
          return SizeMismatch(got + c.size());
        }
        got += c.size();
        return fn(c);
      });
      if (!s.ok()) return s;
      if (got != data_bytes_in_) return SizeMismatch(got);
      return absl::OkStatus();
    }
    internal::VarintConverter conv(info.encoding, info.element_bytes);
    conv.set_emit(true);
    uint64_t emitted = 0;
    auto emit = [&](std::string_view c) -> absl::Status {
      emitted += c.size();
      if (emitted > payload_) return Changed();
      return fn(c);
    };
    absl::Status s = data_->ForEachChunk([&](std::string_view c) {
      if (got + c.size() > data_bytes_in_) return SizeMismatch(got + c.size());
      got += c.size();
      return conv.Feed(c, emit);
    });
    if (!s.ok()) return s;
    if (got != data_bytes_in_) return SizeMismatch(got);
    if (absl::Status f = conv.Flush(emit); !f.ok()) return f;
    if (emitted != payload_) return Changed();
    return absl::OkStatus();
  }

 private:
  LiteralEncoder() = default;

  absl::Status SizeMismatch(uint64_t got) const {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.name, " data: expected ", data_bytes_in_, " bytes for ",
        Sv(Info(spec_.type).name), "[", absl::StrJoin(spec_.dims, ","),
        "], found ", got, got > data_bytes_in_ ? " or more" : "",
        " (at byte ", std::min(got, data_bytes_in_), ")"));
  }
  absl::Status Changed() const {
    return absl::DataLossError(absl::StrCat(
        options_.name,
        " data: the varint payload differs from the sizing pass (the data "
        "changed while it was being written)"));
  }

  ArraySpec spec_;
  ElementSource* data_ = nullptr;
  LiteralEncodeOptions options_;
  std::string shape_;
  uint64_t count_ = 0;
  uint64_t data_bytes_in_ = 0;
  uint64_t payload_ = 0;
  uint64_t body_size_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_ENCODER_H_
