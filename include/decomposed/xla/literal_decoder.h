// The streaming LiteralProto decoder: a body on the wire in, an array out to
// an ArraySink (array_sink.h), with XLA's CreateFromProto(
// prohibit_empty_literal=true) rules (docs/format.md §8.3,
// §9.4 and §10). No protobuf message is built: memory stays bounded
// whatever the literal's size, including literals over protobuf's 2 GiB
// limit. The decoder knows no file format: the .npy writer
// (npy/literal_to_npy.h), the bundle tensor writer (capture) and the
// in-memory ArrayBuffer (array_buffer.h) are sinks.
//
// The pieces, one header each:
//   literal_plan.h    pass 1: PlanLiteral + ResolveArrayPlan (the plan:
//                     element type, dims, layout order, byte size)
//   varint_decode.h   packed varints -> fixed-width elements, in chunks
//   payload_copy.h    verbatim bytes: zero-copy view, buffer, kernel copy
//   transpose.h       PhysicalStore + Gather for layouts the sink does not
//                     take as they are
//   literal_decoder.h pass 2 (this file): DecodeLiteral ties them together.
//
// DecodeLiteral plans the literal, tells the sink (Begin), seeks back to the
// data and streams it:
//   * fixed-width data in one packed/bytes record, row-major (or
//     column-major for a sink that accepts it): payload_copy.h;
//   * varint types (PRED, S32, S64, U32, U64) in one packed record:
//     varint_decode.h;
//   * any other legal encoding (data before the shape, unpacked repeated
//     fields, a field split over several records, a `bytes` field given
//     twice: the last one wins) by re-walking the records;
//   * any other layout (a permutation, or column-major for a sink that does
//     not accept it): gathered in logical order straight from a zero-copy
//     source, or in tiles read with pread from a file source (FdSource) when
//     the data is one run of it; else first collected in a PhysicalStore (in
//     memory up to `max_in_memory_transpose` bytes, beyond in an unlinked
//     temp file read back in tiles). Tiles hold at most
//     `transpose_budget_bytes`, so memory stays bounded at any size.
//
// Sources must be RewindableSource (byte_source.h: a ByteSource with Seek()).
// A literal is one or more byte ranges of the source whose concatenation is
// the LiteralProto, or the `length` bytes from the current position.
//
// Errors (absl::Status, naming the frame given by the caller, the byte
// offset, what was expected and what was found):
//   kInvalidArgument  malformed records; no shape ("LiteralProto has no
//                     shape"); a shape XLA rejects (no layout, bad
//                     minor_to_major, element_size_in_bits != 0, negative
//                     dimensions, OPAQUE_TYPE); a TUPLE or TOKEN where an
//                     array is needed; S1/U1/F6E3M2FN/F6E2M3FN (XLA has no
//                     CopyFromProto case); element counts that do not match
//                     the shape exactly (a non-empty shape without data
//                     included); a record running past its range.
//   kOutOfRange       the source ends inside a declared range.
//   kResourceExhausted  a limit of limits.h.
//   kFailedPrecondition the source cannot seek back.
//   others            I/O errors of the source, and the sink's own errors.
// On error the sink holds a partial array (see array_sink.h).
//
// Example (a literal into memory):
//   decomposed::MemorySource src(body);
//   decomposed::ArrayBuffer array;
//   absl::Status s = decomposed::DecodeLiteral(
//       src, body.size(), decomposed::Frame{"input", 0, "body"}, array);
//   if (!s.ok()) return s;
//   // array.type() == PrimitiveType::kF32, array.dims() == {2, 3},
//   // array.bytes() holds 24 bytes in row-major order
#ifndef DECOMPOSED_XLA_LITERAL_DECODER_H_
#define DECOMPOSED_XLA_LITERAL_DECODER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"
#include "decomposed/xla/array_sink.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/xla/payload_copy.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"
#include "decomposed/xla/transpose.h"
#include "decomposed/xla/varint_decode.h"

namespace decomposed {

struct LiteralDecodeOptions {
  CopyMethod copy = CopyMethod::kAuto;
  // Reused buffer for copies and decoded varints.
  size_t buffer_bytes = 1 << 20;
  // Transposes of up to this many payload bytes are collected in memory;
  // larger ones in an unlinked temp file under `temp_dir`.
  uint64_t max_in_memory_transpose = 32 << 20;
  // Directory for transpose temp files; empty: $TMPDIR, else /tmp.
  std::string temp_dir;
  // An array literal with no layout reads as major-to-minor instead of
  // failing as in XLA (ResolveArrayPlan; `--lenient-layout`).
  bool lenient_layout = false;
  // Optional, for progress displays: called with the number of payload
  // bytes just handed to the sink, per chunk (one buffer, one view, or one
  // kernel copy of at most 64 MiB while this is set).
  std::function<void(uint64_t)> on_payload;
  // Memory for a transpose read by position (a file source, or a temp
  // file): the tiles of internal::GatherTiled (transpose.h).
  uint64_t transpose_budget_bytes = 32 << 20;
};

namespace internal {

// Pass 2: streams the planned array data, in physical order, into `out`
// (a PayloadWriter or a PhysicalStore).
template <RewindableSource S, class Out>
absl::Status EmitData(S& src, std::span<const ByteRange> ranges,
                      const LiteralPlan& plan, const Frame& frame, Out& out,
                      char* buf, size_t cap, LiteralPath* path) {
  const PrimitiveTypeInfo& t = *plan.type;
  const uint32_t field = t.proto_field;
  const LiteralFieldStats& f = plan.fields[field];
  const DataEncoding enc = t.encoding;
  auto seek = [&](uint64_t pos) -> absl::Status {
    if (src.Seek(pos)) return absl::OkStatus();
    if (!src.status().ok()) return Prefix(src.status(), frame);
    return FrameError(absl::StatusCode::kFailedPrecondition, frame, pos,
                      "a source that can seek back to the data",
                      "a source that cannot");
  };
  if (plan.data_bytes == 0 && !IsVarintEncoding(enc)) {
    *path = LiteralPath::kEmpty;
    return absl::OkStatus();
  }
  // One record (or, for bytes fields, the last one wins): direct.
  if (enc == DataEncoding::kBytes ||
      (f.records == 1 && f.len_records == 1 && !IsVarintEncoding(enc))) {
    const ByteRange& r = enc == DataEncoding::kBytes ? f.last : f.first;
    if (absl::Status s = seek(r.offset); !s.ok()) return s;
    *path = LiteralPath::kBufferCopy;
    return out.Raw(src, r.length, frame);
  }
  if (IsVarintEncoding(enc) && f.records == 1 && f.len_records == 1) {
    if (absl::Status s = seek(f.first.offset); !s.ok()) return s;
    *path = LiteralPath::kVarint;
    absl::Status s = DecodePackedVarintsFor(enc, src, f.first.length, frame,
                                            out, buf, cap, plan.element_count);
    if (!s.ok()) return s;
  } else {
    *path = LiteralPath::kGeneral;
    absl::Status s = WalkRecords(
        src, ranges, frame, [&](wire::Field& r) -> absl::Status {
          if (r.number != field || !AcceptsWireType(enc, r.wire_type)) {
            return absl::OkStatus();
          }
          if (r.wire_type == wire::kLen) {
            if (IsVarintEncoding(enc)) {
              return DecodePackedVarintsFor(enc, src, r.length, frame, out,
                                            buf, cap, plan.element_count);
            }
            return out.Raw(src, r.length, frame);
          }
          char v[8];
          size_t n = r.length;
          if (IsVarintEncoding(enc)) {
            StoreVarintFor(enc, r.value, v, &n);
          } else {
            std::memcpy(v, &r.value, n);
          }
          if (n > out.remaining()) {
            return FrameError(absl::StatusCode::kInvalidArgument, frame,
                              r.offset,
                              absl::StrCat(plan.element_count, " elements"),
                              "more values than the shape holds");
          }
          return out.Put(std::string_view(v, n));
        });
    if (!s.ok()) return s;
  }
  if (out.remaining() != 0) {
    uint64_t eb = t.element_bytes;
    return FrameError(
        absl::StatusCode::kInvalidArgument, frame,
        f.records ? f.first.offset : (ranges.empty() ? 0 : ranges[0].offset),
        absl::StrCat(plan.element_count, " elements of ", Sv(t.name), " for ",
                     plan.shape.ToString()),
        absl::StrCat((plan.data_bytes - out.remaining()) / eb,
                     " elements"));
  }
  return absl::OkStatus();
}

// Whether the planned array reaches `sink` through the transposing store,
// and in which order it is announced.
inline bool NeedsTranspose(const LiteralPlan& plan, const ArraySink& sink) {
  if (plan.data_bytes == 0) return false;
  return plan.order == PhysicalOrder::kPermuted ||
         (plan.order == PhysicalOrder::kColumnMajor &&
          !sink.AcceptsColumnMajor());
}

}  // namespace internal

// What an ArraySink is told about a resolved plan (ResolveArrayPlan), for a
// sink that does (`column_major_ok`) or does not take column-major data.
inline ArrayHeader ArrayHeaderFor(const LiteralPlan& plan,
                                  bool column_major_ok) {
  ArrayHeader h;
  h.type = plan.type;
  h.dims = plan.shape.dimensions;
  h.order = plan.order == PhysicalOrder::kColumnMajor && column_major_ok
                ? ElementOrder::kColumnMajor
                : ElementOrder::kRowMajor;
  h.element_count = plan.element_count;
  h.byte_size = plan.data_bytes;
  h.size_proven = !IsVarintEncoding(plan.type->encoding);
  return h;
}

// The byte range of the source that holds a resolved plan's (ResolveArrayPlan)
// elements verbatim, in logical row-major order, little endian: exactly the
// bytes DecodeLiteral would write to a sink, so a reader may take them from
// the source itself. nullopt when the data needs work first: varints, data
// split over several records, or a layout other than row-major. An empty
// array gives an empty range.
inline std::optional<ByteRange> VerbatimRowMajorRun(const LiteralPlan& plan) {
  if (plan.type == nullptr) return std::nullopt;
  const DataEncoding enc = plan.type->encoding;
  if (plan.data_bytes == 0 && !IsVarintEncoding(enc)) return ByteRange{0, 0};
  if (plan.order != PhysicalOrder::kRowMajor || IsVarintEncoding(enc)) {
    return std::nullopt;
  }
  const LiteralFieldStats& f = plan.fields[plan.type->proto_field];
  // EmitData's direct path: one record, or the last of a bytes field.
  if (enc != DataEncoding::kBytes && !(f.records == 1 && f.len_records == 1)) {
    return std::nullopt;
  }
  const ByteRange& r = enc == DataEncoding::kBytes ? f.last : f.first;
  if (r.length != plan.data_bytes) return std::nullopt;  // decode: error
  return r;
}

// Decodes the literal made of `ranges` of `src` into `sink`. See the file
// comment for the rules and errors. `plan_out` / `path_out`, when given,
// receive the plan and the path taken. On return the source position is
// unspecified (inside the ranges).
template <RewindableSource S>
absl::Status DecodeLiteral(S& src, std::span<const ByteRange> ranges,
                           const Frame& frame, ArraySink& sink,
                           const LiteralDecodeOptions& options = {},
                           LiteralPlan* plan_out = nullptr,
                           LiteralPath* path_out = nullptr) {
  const uint64_t body_offset = ranges.empty() ? src.position()
                                              : ranges[0].offset;
  absl::StatusOr<LiteralPlan> planned = PlanLiteral(src, ranges, frame);
  if (!planned.ok()) return planned.status();
  LiteralPlan& plan = *planned;
  if (absl::Status s = ResolveArrayPlan(plan, frame, body_offset,
                                        options.lenient_layout);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = sink.Begin(ArrayHeaderFor(plan,
                                                 sink.AcceptsColumnMajor()));
      !s.ok()) {
    return s;
  }
  const size_t cap = std::max<size_t>(options.buffer_bytes, 64);
  std::unique_ptr<char[]> buf(new char[cap]);
  LiteralPath path = LiteralPath::kGeneral;
  internal::PayloadWriter out(sink, plan.data_bytes, options.copy,
                              buf.get(), cap);
  if (options.on_payload) out.set_on_payload(&options.on_payload);
  if (!internal::NeedsTranspose(plan, sink)) {
    absl::Status s = internal::EmitData(src, ranges, plan, frame, out,
                                        buf.get(), cap, &path);
    if (!s.ok()) return s;
    if (path == LiteralPath::kBufferCopy) path = out.path();
  } else {
    const LiteralFieldStats& f = plan.fields[plan.type->proto_field];
    const size_t eb = plan.type->element_bytes;
    path = LiteralPath::kTranspose;
    bool direct_view = false;
    // The payload is one run of the source: gathered from it in place.
    const bool one_run =
        !IsVarintEncoding(plan.type->encoding) &&
        (plan.type->encoding == DataEncoding::kBytes ||
         (f.records == 1 && f.len_records == 1));
    const ByteRange& run =
        plan.type->encoding == DataEncoding::kBytes ? f.last : f.first;
    if constexpr (ZeroCopySource<S>) {
      if (one_run) {
        if (!src.Seek(run.offset)) {
          return FrameError(absl::StatusCode::kFailedPrecondition, frame,
                            run.offset, "a seekable source", "none");
        }
        std::optional<std::string_view> v =
            src.ReadView(static_cast<size_t>(run.length));
        if (!v) return TruncatedError(frame, run.offset, run.length, 0);
        direct_view = true;
        absl::Status s =
            internal::Gather(*v, plan.shape, eb, out, buf.get(), cap);
        if (!s.ok()) return s;
      }
    } else if constexpr (internal::FdBackedSource<S>) {
      // A file: tiles read with pread, in bounded memory (no temp copy).
      if (one_run && run.length == plan.data_bytes && src.size() &&
          run.offset + run.length <= *src.size()) {
        direct_view = true;
        const int fd = src.fd();
        const uint64_t origin = src.backend().origin() + run.offset;
        absl::Status s = internal::GatherTiled(
            [&](uint64_t off, char* dst, size_t n) -> absl::Status {
              absl::Status r = internal::PreadFully(fd, origin + off, dst, n,
                                                    frame.str());
              if (absl::IsOutOfRange(r)) {
                return TruncatedError(frame, run.offset + off, n, 0);
              }
              return r;
            },
            plan.shape, eb, out, options.transpose_budget_bytes);
        if (!s.ok()) return s;
      }
    }
    if (!direct_view) {
      internal::PhysicalStore store;
      if (absl::Status s = store.Init(plan.data_bytes,
                                      options.max_in_memory_transpose,
                                      options.temp_dir);
          !s.ok()) {
        return s;
      }
      LiteralPath inner;
      absl::Status s = internal::EmitData(src, ranges, plan, frame, store,
                                          buf.get(), cap, &inner);
      if (!s.ok()) return s;
      if (store.in_file()) {
        // Read back in tiles: a mapping would make every page resident.
        s = internal::GatherTiled(
            [&](uint64_t off, char* dst, size_t n) {
              return store.ReadAt(off, dst, n);
            },
            plan.shape, eb, out, options.transpose_budget_bytes);
      } else {
        absl::StatusOr<std::string_view> v = store.View();
        if (!v.ok()) return v.status();
        s = internal::Gather(*v, plan.shape, eb, out, buf.get(), cap);
      }
      if (!s.ok()) return s;
    }
  }
  if (absl::Status s = sink.Finish(); !s.ok()) return s;
  if (plan_out) *plan_out = std::move(plan);
  if (path_out) *path_out = path;
  return absl::OkStatus();
}

// One contiguous body [src.position(), + length).
template <RewindableSource S>
absl::Status DecodeLiteral(S& src, uint64_t length, const Frame& frame,
                           ArraySink& sink,
                           const LiteralDecodeOptions& options = {},
                           LiteralPlan* plan_out = nullptr,
                           LiteralPath* path_out = nullptr) {
  ByteRange r{src.position(), length};
  return DecodeLiteral(src, std::span<const ByteRange>(&r, 1), frame, sink,
                       options, plan_out, path_out);
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_DECODER_H_
