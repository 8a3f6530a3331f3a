// The first pass over a LiteralProto body on the wire: PlanLiteral walks
// every field record without reading array data (seekable sources skip it)
// and returns a LiteralPlan: the merged shape, where each data field's
// records are, the `tuple_literals` occurrences. ResolveArrayPlan then
// applies XLA's CreateFromProto(prohibit_empty_literal=true) rules
// (docs/format.md §10) and fills in what an array sink
// needs: element type, logical dims, layout order and byte size. No data is
// read in either step; the decoder (literal_decoder.h) does that.
//
// This is the one first pass of the library: unpack, verify, inspect,
// convert and the decoder all plan a literal through it.
//
// A body is given either as a contiguous run of the source from its current
// position (any ByteSource; the source ends at the body end), or as byte
// ranges of a RewindableSource whose concatenation is the LiteralProto
// (protobuf merges repeated occurrences of a message field, and parsing
// concatenated serializations is exactly that merge).
//
// Rules: several `shape` occurrences merge (their payloads are concatenated
// and parsed once). A data field given with a wire type protobuf does not
// accept for it is an unknown field, as in protobuf; so is `shape` given as
// anything but a length-delimited record, unless
// LiteralPlanOptions::shape_must_be_message refuses it (inspect's stricter
// rule).
//
// Errors (absl::Status naming `frame` and the byte offset):
//   kInvalidArgument   a malformed tag (protobuf's tag rules, wire.h),
//                      varint or length; a wire type 3/4/6/7; a record
//                      running past its range; a malformed shape
//                      (ParseShapeParts); with ResolveArrayPlan, the XLA
//                      rules below.
//   kOutOfRange        the source holds less than a range declares.
//   kResourceExhausted a shape over limits::kMaxShapeBytes, over
//                      limits::kMaxTupleLiterals tuple elements.
//   kFailedPrecondition a range the source cannot seek to.
//
// Example (the shape of one body, then what an array sink would get):
//   decomposed::MemorySource src(body);
//   absl::StatusOr<decomposed::LiteralPlan> plan =
//       decomposed::PlanLiteral(src, body.size(), decomposed::Frame{"input", 0, "body"});
//   if (!plan.ok()) return plan.status();
//   if (absl::Status s = decomposed::ResolveArrayPlan(*plan, frame, 0); !s.ok())
//     return s;
//   // plan->type->name == "F32", plan->shape.dimensions == {2, 3},
//   // plan->order == PhysicalOrder::kRowMajor, plan->data_bytes == 24
#ifndef DECOMPOSED_XLA_LITERAL_PLAN_H_
#define DECOMPOSED_XLA_LITERAL_PLAN_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"
#include "decomposed/wire/reader.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"

namespace decomposed {

// A range of stream positions [offset, offset + length).
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Records of one LiteralProto field, accumulated over all its occurrences.
struct LiteralFieldStats {
  uint64_t records = 0;      // occurrences with an accepted wire type
  uint64_t len_records = 0;  // of which packed / bytes (LEN)
  uint64_t bytes = 0;        // payload bytes of all occurrences
  uint64_t values = 0;       // fixed-width values, all occurrences
  uint64_t unpacked = 0;     // single-value (unpacked) occurrences
  bool misaligned = false;   // a packed fixed record of a ragged length
  ByteRange first;           // payload of the first occurrence
  ByteRange last;            // payload of the last occurrence
  uint32_t first_wire_type = 0;
};

// The order in which the proto holds an array's elements, ignoring
// dimensions of size 1: row-major (the default layout {rank-1, ..., 0}),
// column-major ({0, 1, ..., rank-1}), or another permutation.
enum class PhysicalOrder { kRowMajor, kColumnMajor, kPermuted };

// What the first pass found, and (after ResolveArrayPlan) the array.
struct LiteralPlan {
  bool has_shape = false;
  uint64_t shape_offset = 0;  // stream offset of the first shape payload
  Shape shape;
  // The `shape` payloads, concatenated (at most limits::kMaxShapeBytes).
  std::string shape_bytes;
  // `tuple_literals` occurrences, in order (each is one tuple element).
  std::vector<ByteRange> tuple_literals;
  // Indexed by LiteralProto field number (2..36 are data fields).
  LiteralFieldStats fields[kNumPrimitiveTypes];
  uint64_t records = 0;     // all records seen
  uint64_t record_bytes = 0;  // payload / value bytes of every non-shape record

  // Set by ResolveArrayPlan.
  const PrimitiveTypeInfo* type = nullptr;
  uint64_t element_count = 0;
  uint64_t data_bytes = 0;  // element_count * type->element_bytes
  PhysicalOrder order = PhysicalOrder::kRowMajor;
};

struct LiteralPlanOptions {
  // Refuse a `shape` record that is not length-delimited (protobuf keeps it
  // as an unknown field, so the literal has no shape). inspect sets it.
  bool shape_must_be_message = false;
};


namespace internal {

// LiteralProto data field number -> how it is stored (kNone: not data).
inline DataEncoding FieldEncoding(uint32_t field) {
  if (field == 10) return DataEncoding::kNone;  // tuple_literals
  for (const PrimitiveTypeInfo& i : kPrimitiveTypes) {
    if (i.proto_field == field && i.encoding != DataEncoding::kNone) {
      return i.encoding;
    }
  }
  return DataEncoding::kNone;
}

// Wire types protobuf accepts for a field of `e` (packed and unpacked).
inline bool AcceptsWireType(DataEncoding e, uint32_t wt) {
  switch (e) {
    case DataEncoding::kBytes:
      return wt == wire::kLen;
    case DataEncoding::kBool:
    case DataEncoding::kVarint32:
    case DataEncoding::kVarint64:
    case DataEncoding::kVarintU32:
    case DataEncoding::kVarintU64:
      return wt == wire::kLen || wt == wire::kVarint;
    case DataEncoding::kFixed32:
      return wt == wire::kLen || wt == wire::kFixed32;
    case DataEncoding::kFixed64:
      return wt == wire::kLen || wt == wire::kFixed64;
    default:
      return false;
  }
}

// Moves `src` to `pos`: forward by skipping (any source), back by seeking
// (RewindableSource only).
template <ByteSource S>
absl::Status MoveTo(S& src, uint64_t pos, const Frame& frame) {
  if (src.position() == pos) return absl::OkStatus();
  if (src.position() < pos) {
    return SkipBytes(src, pos - src.position(), frame);
  }
  if constexpr (RewindableSource<S>) {
    if (src.Seek(pos)) return absl::OkStatus();
    if (!src.status().ok()) return Prefix(src.status(), frame);
  }
  return FrameError(absl::StatusCode::kFailedPrecondition, frame, pos,
                    "a source that can seek to the literal",
                    "a source that cannot go back");
}

// Calls fn(wire::Field&) -> absl::Status for every field of every range,
// in order, read by one wire::FieldReader per range (protobuf's rules; a
// literal body's length-delimited fields may exceed 2 GiB, so the reader
// takes large sizes). For a length-delimited field the source is at the
// payload; fn may read it (within field.end()) or not. A source that is not
// rewindable must sit at the start of the first range, and the ranges must
// ascend. `message` names the message in errors.
template <ByteSource S, class Fn>
absl::Status WalkRecords(S& src, std::span<const ByteRange> ranges,
                         const Frame& frame, Fn&& fn,
                         std::string_view message = "LiteralProto") {
  for (const ByteRange& range : ranges) {
    if (absl::Status s = MoveTo(src, range.offset, frame); !s.ok()) return s;
    wire::FieldReader<S> reader(src, range.offset + range.length, frame,
                                message, {.large_len_fields = true});
    wire::Field f;
    while (reader.Next(f)) {
      if (absl::Status s = fn(f); !s.ok()) return s;
    }
    if (!reader.ok()) return reader.status();
  }
  return absl::OkStatus();
}

template <ByteSource S>
absl::StatusOr<LiteralPlan> PlanRanges(S& src,
                                       std::span<const ByteRange> ranges,
                                       const Frame& frame,
                                       const LiteralPlanOptions& options) {
  LiteralPlan plan;
  std::string& shape_bytes = plan.shape_bytes;
  std::vector<ShapePart> shape_parts;
  absl::Status st = WalkRecords(
      src, ranges, frame, [&](wire::Field& r) -> absl::Status {
        ++plan.records;
        if (r.number == 1 && r.wire_type == wire::kLen) {
          if (shape_bytes.size() + r.length > limits::kMaxShapeBytes) {
            return FrameError(
                absl::StatusCode::kResourceExhausted, frame, r.offset,
                absl::StrCat("a shape of at most ", limits::kMaxShapeBytes,
                             " bytes"),
                absl::StrCat(shape_bytes.size() + r.length, " bytes"));
          }
          if (!plan.has_shape) plan.shape_offset = r.offset;
          plan.has_shape = true;
          std::string part;
          if (absl::Status s = ReadToString(src, r.length, frame, &part);
              !s.ok()) {
            return s;
          }
          shape_bytes += part;
          shape_parts.push_back({part.size(), r.offset});
          return absl::OkStatus();
        }
        if (r.number == 1 && options.shape_must_be_message) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame,
                            r.tag_offset,
                            "shape (field 1) as a length-delimited message",
                            absl::StrCat("wire type ", static_cast<uint32_t>(r.wire_type)));
        }
        plan.record_bytes += r.length;
        if (r.number == 10 && r.wire_type == wire::kLen) {
          if (plan.tuple_literals.size() >= limits::kMaxTupleLiterals) {
            return FrameError(absl::StatusCode::kResourceExhausted, frame,
                              r.tag_offset,
                              absl::StrCat("at most ", limits::kMaxTupleLiterals,
                                           " tuple_literals"),
                              "more");
          }
          plan.tuple_literals.push_back({r.offset, r.length});
          return absl::OkStatus();
        }
        if (r.number >= kNumPrimitiveTypes) return absl::OkStatus();
        DataEncoding e = FieldEncoding(r.number);
        if (!AcceptsWireType(e, r.wire_type)) {
          // Protobuf keeps a known field with a foreign wire type as an
          // unknown field; XLA never looks at it.
          return absl::OkStatus();
        }
        LiteralFieldStats& f = plan.fields[r.number];
        if (f.records == 0) {
          f.first = {r.offset, r.length};
          f.first_wire_type = r.wire_type;
        }
        f.last = {r.offset, r.length};
        ++f.records;
        f.bytes += r.length;
        if (r.wire_type == wire::kLen) {
          ++f.len_records;
          size_t w = FixedValueWidth(e);
          if (w) {
            if (r.length % w) f.misaligned = true;
            f.values += r.length / w;
          }
        } else {
          ++f.unpacked;
          if (FixedValueWidth(e)) ++f.values;
        }
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (plan.has_shape) {
    absl::StatusOr<Shape> s =
        ParseShapeParts(shape_bytes, shape_parts,
                        Frame{frame.name, frame.index, "shape"});
    if (!s.ok()) return s.status();
    plan.shape = *std::move(s);
  }
  return plan;
}

}  // namespace internal

// Plans the literal made of `ranges` of `src` (concatenated). Reads only the
// shape; on return the source position is unspecified (inside the ranges).
template <RewindableSource S>
absl::StatusOr<LiteralPlan> PlanLiteral(
    S& src, std::span<const ByteRange> ranges, const Frame& frame,
    const LiteralPlanOptions& options = {}) {
  return internal::PlanRanges(src, ranges, frame, options);
}

// Plans the body [src.position(), src.position() + length) of any source.
// On success the source is at the body end.
template <ByteSource S>
absl::StatusOr<LiteralPlan> PlanLiteral(S& src, uint64_t length,
                                        const Frame& frame,
                                        const LiteralPlanOptions& options = {}) {
  const ByteRange body{src.position(), length};
  return internal::PlanRanges(src, std::span<const ByteRange>(&body, 1), frame,
                              options);
}

// The physical order of `shape`'s elements (ignoring dimensions of size 1).
inline PhysicalOrder PhysicalOrderOf(const Shape& shape) {
  std::vector<int64_t> eff;
  for (int64_t d : shape.layout.minor_to_major) {
    if (shape.dimensions[static_cast<size_t>(d)] != 1) eff.push_back(d);
  }
  bool dec = true, inc = true;
  for (size_t i = 1; i < eff.size(); ++i) {
    if (eff[i] > eff[i - 1]) dec = false;
    if (eff[i] < eff[i - 1]) inc = false;
  }
  if (dec) return PhysicalOrder::kRowMajor;
  if (inc) return PhysicalOrder::kColumnMajor;
  return PhysicalOrder::kPermuted;
}

// The checks on a planned literal's shape that every consumer applies, the
// decoder and the writers of already-serialized literals alike: the shape
// is present (kInvalidArgument under `frame` at `body_offset`: XLA's
// "LiteralProto has no shape"), then valid (ValidateShape under
// `shape_frame`).
inline absl::Status CheckPlanShape(const LiteralPlan& plan, const Frame& frame,
                                   const Frame& shape_frame,
                                   uint64_t body_offset) {
  if (!plan.has_shape) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, body_offset,
                      "a shape field (XLA: \"LiteralProto has no shape\")",
                      "none");
  }
  return ValidateShape(plan.shape, shape_frame, plan.shape_offset);
}

// XLA's CreateFromProto checks on a planned array literal; fills the plan's
// type, counts and order. Varint element counts are checked while decoding.
// `body_offset` locates the body for errors that have no better offset.
// `lenient_layout` (docs/format.md §14, `--lenient-layout`): an array shape
// with no layout reads as the default major-to-minor layout
// ({rank-1, ..., 0}), as AWS's Python reader loads it; XLA refuses it.
inline absl::Status ResolveArrayPlan(LiteralPlan& plan, const Frame& frame,
                                     uint64_t body_offset,
                                     bool lenient_layout = false) {
  const Frame shape_frame{frame.name, frame.index, "shape"};
  if (lenient_layout && plan.has_shape && !plan.shape.has_layout &&
      !plan.shape.is_tuple() && plan.shape.element_type != 17 /* TOKEN */) {
    plan.shape.has_layout = true;
    plan.shape.layout = Layout{};
    for (size_t d = plan.shape.dimensions.size(); d-- > 0;) {
      plan.shape.layout.minor_to_major.push_back(static_cast<int64_t>(d));
    }
  }
  if (absl::Status s = CheckPlanShape(plan, frame, shape_frame, body_offset);
      !s.ok()) {
    return s;
  }
  const Shape& shape = plan.shape;
  const PrimitiveTypeInfo* info = FindPrimitiveType(shape.element_type);
  if (shape.is_tuple() || shape.element_type == 17) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, shape_frame, plan.shape_offset,
        "an array literal (one .npy holds one array)",
        absl::StrCat("a ", Sv(info->name), " literal ", shape.ToString()));
  }
  if (!info->loadable) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, shape_frame, plan.shape_offset,
        "an element type XLA can load from a LiteralProto",
        absl::StrCat(Sv(info->name),
                     " (XLA's CopyFromProto has no case for it)"));
  }
  absl::StatusOr<uint64_t> n =
      ElementCount(shape, shape_frame, plan.shape_offset, info->element_bytes);
  if (!n.ok()) return n.status();
  plan.type = info;
  plan.element_count = *n;
  plan.data_bytes = *n * info->element_bytes;
  const LiteralFieldStats& f = plan.fields[info->proto_field];
  const std::string field_name = absl::StrCat(
      Sv(info->name), " data (LiteralProto field ", info->proto_field, ")");
  const uint64_t where = f.records ? f.first.offset : body_offset;
  switch (info->encoding) {
    case DataEncoding::kBytes: {
      uint64_t have = f.records ? f.last.length : 0;
      if (have != plan.data_bytes) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame,
            f.records ? f.last.offset : body_offset,
            absl::StrCat(plan.data_bytes, " bytes of ", field_name, " (",
                         *n, " elements of ", shape.ToString(), ")"),
            f.records ? absl::StrCat(have, " bytes") : std::string("no data"));
      }
      break;
    }
    case DataEncoding::kFixed32:
    case DataEncoding::kFixed64: {
      uint64_t per = info->element_bytes / FixedValueWidth(info->encoding);
      if (f.misaligned) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, where,
                          absl::StrCat("packed ", field_name, " of whole ",
                                       FixedValueWidth(info->encoding),
                                       "-byte values"),
                          "a ragged length");
      }
      if (f.values != *n * per) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame, where,
            absl::StrCat(*n * per, " values of ", field_name, " (", *n,
                         " elements of ", shape.ToString(), ")"),
            f.records ? absl::StrCat(f.values, " values")
                      : std::string("no data"));
      }
      break;
    }
    default:  // varints: counted while decoding
      if (f.records == 0 && *n > 0) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame, body_offset,
            absl::StrCat(*n, " elements of ", field_name, " for ",
                         shape.ToString(),
                         " (XLA: prohibit_empty_literal)"),
            "no data");
      }
  }
  plan.order = PhysicalOrderOf(shape);
  return absl::OkStatus();
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_PLAN_H_
