// Streaming LiteralProto encoder: writes the body of an array literal from
// a source of element bytes, with its exact length known before the first
// byte is written, and without ever building the body in memory.
//
// The body is what XLA's LiteralBase::ToProto writes (xla-wire-facts.md
// sections 2, 3 and 5), field by field in field-number order as protobuf
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
//   decomposed::ArrayView view{v, decomposed::PrimitiveType::kF32, {2}};
//   auto body = decomposed::ArrayBody(view);
//   absl::StatusOr<uint64_t> n = body->Prepare();      // exact body size
//   std::string out;
//   absl::Status s = body->Write([&](std::string_view c) {
//     out.append(c); return absl::OkStatus(); });
#ifndef DECOMPOSED_XLA_LITERAL_ENCODER_H_
#define DECOMPOSED_XLA_LITERAL_ENCODER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/bounded.h"
#include "decomposed/wire/wire.h"
#include "decomposed/limits.h"
#include "decomposed/xla/literal_scan.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"
#include "decomposed/status.h"

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

namespace internal {

inline void PutVarint(std::string* out, uint64_t v) {
  char buf[wire::kMaxVarintBytes];
  out->append(buf, static_cast<size_t>(wire::WriteVarint(v, buf) - buf));
}
inline void PutTag(std::string* out, uint32_t field, wire::WireType t) {
  PutVarint(out, wire::MakeTag(field, t));
}
inline void PutLen(std::string* out, uint32_t field, std::string_view data) {
  PutTag(out, field, wire::kLen);
  PutVarint(out, data.size());
  out->append(data);
}
inline std::string PackedVarints(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) PutVarint(&s, static_cast<uint64_t>(x));
  return s;
}

}  // namespace internal

// The ShapeProto bytes for an array (see the file comment). `spec` must be
// valid (ValidateArraySpec).
inline std::string EncodeArrayShape(const ArraySpec& spec,
                                    const ShapeEncodeOptions& options = {}) {
  std::string s;
  internal::PutTag(&s, 2, wire::kVarint);
  internal::PutVarint(&s, static_cast<uint64_t>(spec.type));
  if (!spec.dims.empty()) {
    internal::PutLen(&s, 3, internal::PackedVarints(spec.dims));
  }
  std::string layout;
  if (!spec.dims.empty()) {
    internal::PutLen(&layout, 1, internal::PackedVarints(spec.Layout()));
  }
  if (options.tail_padding_alignment) {
    internal::PutTag(&layout, 16, wire::kVarint);
    internal::PutVarint(&layout, 1);
  }
  internal::PutLen(&s, 5, layout);
  if (!spec.dims.empty()) {
    internal::PutLen(&s, 6, std::string(spec.dims.size(), '\0'));
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

// The data of an .npy file, re-read from disk on every pass (the file is
// reopened, so passes are independent and memory stays bounded).
class NpyFileElementSource final : public ElementSource {
 public:
  NpyFileElementSource(std::string path, NpyArrayInfo info)
      : path_(std::move(path)), info_(std::move(info)) {}
  absl::Status ForEachChunk(const ChunkFn& fn) override {
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path_, &fd); !s.ok()) return s;
    FdSource src(std::move(fd));
    if (!src.Skip(info_.data_offset)) {
      return WithFile(TruncatedError(Frame{"npy data"}, 0, info_.data_offset,
                                     src.position()),
                      path_);
    }
    return WithFile(ForEachNpyDataChunk(src, info_, fn), path_);
  }
  const NpyArrayInfo& info() const { return info_; }

 private:
  std::string path_;
  NpyArrayInfo info_;
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

namespace internal {

// Converts little-endian elements of a varint type into varints, counting
// or emitting them. Elements may be split across chunks.
class VarintConverter {
 public:
  VarintConverter(DataEncoding enc, size_t element_bytes)
      : enc_(enc), width_(element_bytes) {}

  // Feeds a chunk; calls emit(std::string_view) with converted output
  // when `emit` is set, and always counts the output bytes.
  template <class Emit>
  absl::Status Feed(std::string_view chunk, Emit&& emit) {
    const char* p = chunk.data();
    size_t n = chunk.size();
    if (carry_len_ > 0) {
      size_t k = std::min(n, width_ - carry_len_);
      std::memcpy(carry_ + carry_len_, p, k);
      carry_len_ += k;
      p += k;
      n -= k;
      if (carry_len_ < width_) return absl::OkStatus();
      if (absl::Status s = Convert(carry_, width_, emit); !s.ok()) return s;
      carry_len_ = 0;
    }
    size_t whole = n / width_ * width_;
    if (whole) {
      if (absl::Status s = Convert(p, whole, emit); !s.ok()) return s;
    }
    std::memcpy(carry_, p + whole, n - whole);
    carry_len_ = n - whole;
    return absl::OkStatus();
  }
  template <class Emit>
  absl::Status Flush(Emit&& emit) {
    if (used_ && emit_enabled_) {
      absl::Status s = emit(std::string_view(buf_.data(), used_));
      used_ = 0;
      return s;
    }
    used_ = 0;
    return absl::OkStatus();
  }
  uint64_t out_bytes() const { return out_bytes_; }
  uint64_t elements() const { return elements_; }
  bool partial() const { return carry_len_ != 0; }
  void set_emit(bool on) {
    emit_enabled_ = on;
    if (on && buf_.empty()) buf_.resize(kBuf);
  }

 private:
  static constexpr size_t kBuf = 256 << 10;

  uint64_t Value(const char* q) const {
    switch (enc_) {
      case DataEncoding::kBool:
        return *q != 0 ? 1 : 0;
      case DataEncoding::kVarint32: {
        int32_t v;
        std::memcpy(&v, q, 4);
        return static_cast<uint64_t>(static_cast<int64_t>(v));
      }
      case DataEncoding::kVarintU32: {
        uint32_t v;
        std::memcpy(&v, q, 4);
        return v;
      }
      default: {
        uint64_t v;
        std::memcpy(&v, q, 8);
        return v;
      }
    }
  }

  template <class Emit>
  absl::Status Convert(const char* p, size_t n, Emit&& emit) {
    const size_t count = n / width_;
    elements_ += count;
    if (!emit_enabled_) {
      uint64_t total = 0;
      for (size_t i = 0; i < count; ++i) {
        total += wire::VarintSize(Value(p + i * width_));
      }
      out_bytes_ += total;
      return absl::OkStatus();
    }
    for (size_t i = 0; i < count; ++i) {
      if (kBuf - used_ < wire::kMaxVarintBytes) {
        absl::Status s = emit(std::string_view(buf_.data(), used_));
        used_ = 0;
        if (!s.ok()) return s;
      }
      char* e = wire::WriteVarint(Value(p + i * width_), buf_.data() + used_);
      size_t k = static_cast<size_t>(e - (buf_.data() + used_));
      used_ += k;
      out_bytes_ += k;
    }
    return absl::OkStatus();
  }

  DataEncoding enc_;
  size_t width_;
  char carry_[16];
  size_t carry_len_ = 0;
  bool emit_enabled_ = false;
  std::vector<char> buf_;
  size_t used_ = 0;
  uint64_t out_bytes_ = 0;
  uint64_t elements_ = 0;
};

inline bool IsVarintEncoding(DataEncoding e) {
  return e == DataEncoding::kBool || e == DataEncoding::kVarint32 ||
         e == DataEncoding::kVarint64 || e == DataEncoding::kVarintU32 ||
         e == DataEncoding::kVarintU64;
}

}  // namespace internal

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
    } else if (internal::IsVarintEncoding(info.encoding)) {
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
    e.body_size_ = 1 + wire::VarintSize(e.shape_.size()) + e.shape_.size();
    if (e.count_ > 0) {
      e.body_size_ += wire::VarintSize(wire::MakeTag(info.proto_field,
                                                     wire::kLen)) +
                      wire::VarintSize(e.payload_) + e.payload_;
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
    internal::PutLen(&head, 1, shape_);
    if (count_ > 0) {
      internal::PutTag(&head, Info(spec_.type).proto_field, wire::kLen);
      internal::PutVarint(&head, payload_);
    }
    return head;
  }
  // True when the data payload is the source bytes unchanged (fixed-size
  // and bytes encodings), so it can be copied without conversion.
  bool PayloadIsVerbatim() const {
    return !internal::IsVarintEncoding(Info(spec_.type).encoding);
  }

  // Streams exactly body_size() bytes to `fn`.
  absl::Status Write(const ChunkFn& fn) {
    const PrimitiveTypeInfo& info = Info(spec_.type);
    if (absl::Status s = fn(Head()); !s.ok()) return s;
    if (count_ == 0) return absl::OkStatus();
    uint64_t got = 0;
    if (!internal::IsVarintEncoding(info.encoding)) {
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

// ---------------------------------------------------------------------------
// LiteralBody: one literal to be written as an element body, whatever its
// origin. Prepare() computes the exact body length (reading data if it must)
// and validates; Write() streams the body. Prepare() must succeed before
// Write(); both may be called again (each Write() re-reads its data).

class LiteralBody {
 public:
  virtual ~LiteralBody() = default;
  // The exact number of bytes Write() will produce.
  virtual absl::StatusOr<uint64_t> Prepare() = 0;
  virtual absl::Status Write(const ChunkFn& fn) = 0;
  // The serialized ShapeProto of the literal (after Prepare()).
  virtual absl::StatusOr<std::string> ShapeBytes() = 0;
  // Names the literal in errors ("input 2 (a.npy)").
  virtual std::string name() const = 0;

  // When the body is `head` followed by `length` bytes of the file `path`
  // from `offset` on, unchanged, says so (after Prepare()), so that a
  // writer to a file can let the kernel copy the range (copy_file_range)
  // instead of reading and writing it. Default: not such a body.
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
// per byte). The memory must outlive the body.
struct ArrayView {
  const void* data = nullptr;
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> minor_to_major;
};

namespace internal {

class EncodedBody : public LiteralBody {
 public:
  EncodedBody(std::unique_ptr<ElementSource> src, ArraySpec spec,
              LiteralEncodeOptions options)
      : src_(std::move(src)), spec_(std::move(spec)),
        options_(std::move(options)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (enc_) return enc_->body_size();
    absl::StatusOr<LiteralEncoder> e =
        LiteralEncoder::Create(spec_, src_.get(), options_);
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
  const LiteralEncoder* encoder() const { return enc_ ? &*enc_ : nullptr; }

 protected:
  std::unique_ptr<ElementSource> src_;
  ArraySpec spec_;
  LiteralEncodeOptions options_;
  std::optional<LiteralEncoder> enc_;
};

class NpyBodyImpl final : public LiteralBody {
 public:
  NpyBodyImpl(std::string path, NpyReadOptions read,
              LiteralEncodeOptions options)
      : path_(std::move(path)), read_(read), options_(std::move(options)) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (body_) return body_->Prepare();
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path_, &fd); !s.ok()) return s;
    FdSource src(std::move(fd), 64 << 10);
    absl::StatusOr<NpyArrayInfo> info = ReadNpyArrayHeader(src, read_);
    if (!info.ok()) return Prefix(WithFile(info.status(), path_), options_.name);
    ArraySpec spec;
    spec.type = info->type;
    spec.dims = info->header.shape;
    if (info->header.fortran_order) {
      std::vector<int64_t> m;
      for (size_t i = 0; i < spec.dims.size(); ++i) {
        m.push_back(static_cast<int64_t>(i));
      }
      spec.minor_to_major = m;
    }
    info_ = *info;
    body_.emplace(std::make_unique<NpyFileElementSource>(path_, *info),
                  std::move(spec), options_);
    return body_->Prepare();
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!body_) return absl::FailedPreconditionError("Prepare() not called");
    return body_->Write(fn);
  }
  absl::StatusOr<std::string> ShapeBytes() override {
    if (!body_) return absl::FailedPreconditionError("Prepare() not called");
    return body_->ShapeBytes();
  }
  std::string name() const override { return options_.name; }
  const std::optional<NpyArrayInfo>& info() const { return info_; }
  std::optional<FileSpan> AsFileSpan() const override {
    if (!body_ || !info_ || info_->swap_unit != 0) return std::nullopt;
    const LiteralEncoder* e = body_->encoder();
    if (!e || !e->PayloadIsVerbatim() || e->element_count() == 0) {
      return std::nullopt;
    }
    return FileSpan{e->Head(), path_, info_->data_offset, info_->data_bytes};
  }

 private:
  std::string path_;
  NpyReadOptions read_;
  LiteralEncodeOptions options_;
  std::optional<NpyArrayInfo> info_;
  std::optional<EncodedBody> body_;
};

// Already-serialized body bytes (owned or borrowed).
class SerializedBodyImpl final : public LiteralBody {
 public:
  SerializedBodyImpl(std::string owned, std::string_view view,
                     bool validate, std::string name, uint64_t base_offset)
      : owned_(std::move(owned)),
        view_(owned_.empty() ? view : std::string_view(owned_)),
        validate_(validate), name_(std::move(name)), base_(base_offset) {}
  absl::StatusOr<uint64_t> Prepare() override {
    if (prepared_) return view_.size();
    MemorySource src(view_, base_);
    Frame frame{name_};
    absl::StatusOr<LiteralScan> scan =
        ScanLiteralBody(src, view_.size(), frame);
    if (!scan.ok()) return scan.status();
    if (validate_) {
      if (!scan->has_shape) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, base_,
                          "a shape (XLA: \"LiteralProto has no shape\")",
                          "none");
      }
      if (absl::Status s = ValidateShape(scan->shape, frame,
                                         scan->shape_offset);
          !s.ok()) {
        return s;
      }
    }
    // The shape bytes (merged occurrences are rare; keep them all).
    shape_.clear();
    MemorySource again(view_, base_);
    while (again.available() > 0) {
      const char* p = again.cursor();
      uint64_t tag, len = 0;
      if (wire::ReadVarint(&p, again.limit(), &tag) != wire::VarintResult::kOk)
        break;
      const char* value = p;
      uint32_t wt = tag & 7;
      if (wt == wire::kLen) {
        if (wire::ReadVarint(&p, again.limit(), &len) !=
            wire::VarintResult::kOk)
          break;
        value = p;
        p += len;
      } else if (!SkipField(&p, again.limit(), wt)) {
        break;
      }
      if ((tag >> 3) == 1 && wt == wire::kLen) {
        shape_.append(value, static_cast<size_t>(len));
      }
      again.Advance(static_cast<size_t>(p - again.cursor()));
    }
    prepared_ = true;
    return view_.size();
  }
  absl::Status Write(const ChunkFn& fn) override {
    if (!prepared_) return absl::FailedPreconditionError("Prepare() not called");
    constexpr size_t kChunk = 8 << 20;
    for (size_t off = 0; off < view_.size(); off += kChunk) {
      absl::Status s = fn(view_.substr(off, kChunk));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
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
inline std::unique_ptr<LiteralBody> ArrayBody(
    const ArrayView& view, LiteralEncodeOptions options = {}) {
  ArraySpec spec{view.type, view.dims, view.minor_to_major};
  uint64_t bytes = 0;
  if (const PrimitiveTypeInfo* i = view.data == nullptr ? nullptr :
          FindPrimitiveType(static_cast<int64_t>(view.type))) {
    absl::StatusOr<uint64_t> n = ValidateArraySpec(spec, Frame{options.name});
    if (n.ok()) bytes = *n * i->element_bytes;
  }
  return std::make_unique<internal::EncodedBody>(
      std::make_unique<SpanElementSource>(std::string_view(
          static_cast<const char*>(view.data), static_cast<size_t>(bytes))),
      std::move(spec), std::move(options));
}

// A literal from an .npy file, streamed (read once for fixed-size types,
// twice for S32/S64/U32/U64). Fortran-order files get the column-major
// layout. `read.dtype` gives void descrs their type (see npy_reader.h and
// NpyInputBody in producer.h, which also consults the .npy.meta sidecar).
inline std::unique_ptr<LiteralBody> NpyBody(std::string path,
                                            NpyReadOptions read = {},
                                            LiteralEncodeOptions options = {}) {
  return std::make_unique<internal::NpyBodyImpl>(std::move(path), read,
                                                 std::move(options));
}

// A literal already serialized: `body` is written as is. With `validate`,
// Prepare() checks the wire format and that the shape is one XLA loads.
inline std::unique_ptr<LiteralBody> SerializedBody(
    std::string body, bool validate = true, std::string name = "literal") {
  return std::make_unique<internal::SerializedBodyImpl>(
      std::move(body), std::string_view(), validate, std::move(name), 0);
}
// As SerializedBody, borrowing `body` (which must outlive the result);
// `base_offset` locates it in its file for error messages.
inline std::unique_ptr<LiteralBody> SerializedBodyView(
    std::string_view body, bool validate = true, std::string name = "literal",
    uint64_t base_offset = 0) {
  return std::make_unique<internal::SerializedBodyImpl>(
      std::string(), body, validate, std::move(name), base_offset);
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_ENCODER_H_
