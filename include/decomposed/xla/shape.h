// A hand-written decoder for xla.ShapeProto / LayoutProto bytes, built on
// wire::FieldReader (protobuf's wire rules and merge semantics), with the
// validation XLA's CreateFromProto applies (docs/format.md
// §9). test/wire/wire_agreement_test.cc and test/fuzz/shape_fuzz.cc hold
// it to protobuf: it accepts exactly the bytes protobuf accepts, except
// where wire/format.h's stricter rules or this library's limits refuse.
//
// Example:
//   absl::StatusOr<decomposed::Shape> s =
//       decomposed::ParseShape(bytes, {"input 0 body shape"}, base_offset);
#ifndef DECOMPOSED_XLA_SHAPE_H_
#define DECOMPOSED_XLA_SHAPE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/wire/reader.h"
#include "decomposed/limits.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/status.h"

namespace decomposed {

struct Layout {
  std::vector<int64_t> minor_to_major;
  int64_t element_size_in_bits = 0;
  int64_t memory_space = 0;
  int64_t tail_padding_alignment_in_elements = 0;
  size_t tiles = 0;  // count of TileProto entries (do not affect indexing)
};

struct Shape {
  int64_t element_type = 0;  // raw PrimitiveType number, possibly unknown
  std::vector<int64_t> dimensions;
  std::vector<Shape> tuple_shapes;
  bool has_layout = false;
  Layout layout;
  std::vector<bool> is_dynamic_dimension;

  bool is_tuple() const { return element_type == 13; }
  // XLA's name, or "<n>" for an unknown number.
  std::string TypeName() const {
    const PrimitiveTypeInfo* i = FindPrimitiveType(element_type);
    return i ? std::string(i->name) : absl::StrCat("<", element_type, ">");
  }
  // "F32[2,3]{1,0}" (XLA-like), tuples as "(S32[], F32[4]{0})".
  std::string ToString() const {
    if (is_tuple()) {
      std::vector<std::string> parts;
      for (const Shape& s : tuple_shapes) parts.push_back(s.ToString());
      return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
    }
    std::string s = absl::StrCat(TypeName(), "[",
                                 absl::StrJoin(dimensions, ","), "]");
    if (has_layout && !dimensions.empty()) {
      absl::StrAppend(&s, "{", absl::StrJoin(layout.minor_to_major, ","), "}");
    }
    return s;
  }
};

namespace internal {

using ShapeFieldReader = wire::FieldReader<MemorySource>;

// A field holding more than kMaxRank entries (kResourceExhausted).
inline absl::Status TooManyEntries(const Frame& frame, uint64_t off,
                                   uint32_t field) {
  return FrameError(absl::StatusCode::kResourceExhausted, frame, off,
                    absl::StrCat("at most ", limits::kMaxRank,
                                 " entries in field ", field, " (kMaxRank)"),
                    "more");
}

// A repeated scalar field occurrence protobuf reads as values: unpacked
// (wire type 0) or packed (2). With another wire type protobuf keeps it as
// an unknown field, and so we skip it.
inline bool IsRepeatedVarint(const wire::Field& f) {
  return f.wire_type == wire::kVarint || f.wire_type == wire::kLen;
}

// Appends the values of repeated int64 (or bool) occurrence `f` to `out`;
// occurrences append, and all of them together may hold kMaxRank values.
template <class T>
bool AppendRepeated(ShapeFieldReader& r, const wire::Field& f,
                    std::vector<T>* out) {
  return r.ForEachVarint(f, [&](uint64_t v) -> absl::Status {
    if (out->size() >= limits::kMaxRank) {
      return TooManyEntries(r.frame(), f.tag_offset, f.number);
    }
    if constexpr (std::is_same_v<T, bool>) {
      out->push_back(v != 0);
    } else {
      out->push_back(static_cast<int64_t>(v));
    }
    return absl::OkStatus();
  });
}

// Checks a message of integer fields the way protobuf parses it:
// TileProto {repeated int64 dimensions = 1} and SplitConfigProto {int64
// dimension = 1; repeated int64 split_indices = 2}. `repeated` is the
// number of the repeated field, whose packed form must hold varints.
inline absl::Status CheckIntMessage(ShapeFieldReader r, uint32_t repeated) {
  wire::Field f;
  while (r.Next(f)) {
    if (f.Is(repeated, wire::kLen) && !r.ForEachVarint(f, [](uint64_t) {})) {
      break;
    }
  }
  return r.status();
}

inline absl::Status ParseShapeFields(ShapeFieldReader& r, int depth,
                                     Shape* s, size_t* nodes);

// Reads the fields of one LayoutProto occurrence into `l` (occurrences
// merge). Fields that do not affect indexing are still checked as protobuf
// checks them (nested messages parse, packed fields hold varints), so that
// bytes we accept are bytes XLA accepts. `depth` is the enclosing shape's.
inline absl::Status ParseLayoutFields(ShapeFieldReader& r, int depth,
                                      Layout* l, size_t* nodes) {
  wire::Field f;
  while (r.Next(f)) {
    const bool varint = f.wire_type == wire::kVarint;
    const bool len = f.wire_type == wire::kLen;
    switch (f.number) {
      case 1:  // minor_to_major
        if (IsRepeatedVarint(f) && !AppendRepeated(r, f, &l->minor_to_major)) {
          return r.status();
        }
        break;
      case 7:
        if (varint) l->element_size_in_bits = static_cast<int64_t>(f.value);
        break;
      case 8:
        if (varint) l->memory_space = static_cast<int64_t>(f.value);
        break;
      case 16:
        if (varint) {
          l->tail_padding_alignment_in_elements =
              static_cast<int64_t>(f.value);
        }
        break;
      case 6:  // tiles: TileProto
        if (len) {
          ++l->tiles;
          absl::Status st = CheckIntMessage(r.Submessage(f, "TileProto"), 1);
          if (!st.ok()) return st;
        }
        break;
      case 17:  // split_configs: SplitConfigProto
        if (len) {
          absl::Status st =
              CheckIntMessage(r.Submessage(f, "SplitConfigProto"), 2);
          if (!st.ok()) return st;
        }
        break;
      case 10:  // physical_shape: ShapeProto
        if (len) {
          // Two message levels down (layout, then shape): protobuf's
          // nesting limit counts both.
          Shape physical;
          ShapeFieldReader sub = r.Submessage(f, "ShapeProto");
          absl::Status st = ParseShapeFields(sub, depth + 2, &physical, nodes);
          if (!st.ok()) return st;
        }
        break;
      case 9:   // dim_level_types (enum), packed
      case 13:  // dim_unique (bool), packed
      case 14:  // dim_ordered (bool), packed
        if (len && !r.ForEachVarint(f, [](uint64_t) {})) return r.status();
        break;
      default:  // other fields: skipped, as protobuf keeps or ignores them
        break;
    }
  }
  return r.status();
}

// Reads the fields of one ShapeProto occurrence into `s` (occurrences
// merge, as protobuf merges them: repeated fields append, the last scalar
// wins, layouts merge). `nodes` counts the shapes parsed so far
// (limits::kMaxShapeNodes); `depth` the message nesting.
inline absl::Status ParseShapeFields(ShapeFieldReader& r, int depth,
                                     Shape* s, size_t* nodes) {
  if (depth > limits::kMaxTupleDepth) {
    return FrameError(absl::StatusCode::kResourceExhausted, r.frame(),
                      r.source().position(),
                      absl::StrCat("tuple nesting of at most ",
                                   limits::kMaxTupleDepth),
                      "deeper nesting");
  }
  wire::Field f;
  while (r.Next(f)) {
    switch (f.number) {
      case 2:  // element_type
        // An enum is an int32 on the wire: protobuf keeps the low 32 bits
        // of a longer varint, and so does XLA; so do we.
        if (f.wire_type == wire::kVarint) {
          s->element_type = static_cast<int32_t>(static_cast<uint32_t>(f.value));
        }
        break;
      case 3:  // dimensions
        if (IsRepeatedVarint(f) && !AppendRepeated(r, f, &s->dimensions)) {
          return r.status();
        }
        break;
      case 6:  // is_dynamic_dimension
        if (IsRepeatedVarint(f) &&
            !AppendRepeated(r, f, &s->is_dynamic_dimension)) {
          return r.status();
        }
        break;
      case 4:  // tuple_shapes
        if (f.wire_type == wire::kLen) {
          if (++*nodes > limits::kMaxShapeNodes) {
            return FrameError(absl::StatusCode::kResourceExhausted, r.frame(),
                              f.tag_offset,
                              absl::StrCat("at most ", limits::kMaxShapeNodes,
                                           " tuple element shapes"),
                              "more");
          }
          s->tuple_shapes.emplace_back();
          ShapeFieldReader sub = r.Submessage(f, "ShapeProto");
          absl::Status st =
              ParseShapeFields(sub, depth + 1, &s->tuple_shapes.back(), nodes);
          if (!st.ok()) return st;
        }
        break;
      case 5:  // layout
        if (f.wire_type == wire::kLen) {
          s->has_layout = true;
          ShapeFieldReader sub = r.Submessage(f, "LayoutProto");
          absl::Status st = ParseLayoutFields(sub, depth, &s->layout, nodes);
          if (!st.ok()) return st;
        }
        break;
      default:  // unknown fields: skipped, as protobuf keeps them
        break;
    }
  }
  return r.status();
}

// Parses one occurrence of a ShapeProto, held in `bytes` at stream offset
// `base`, into `s` (merging with what `s` holds).
inline absl::Status ParseShapeOccurrence(std::string_view bytes,
                                         uint64_t base, const Frame& frame,
                                         Shape* s, size_t* nodes) {
  MemorySource src(bytes, base);
  ShapeFieldReader r(src, base + bytes.size(), frame, "ShapeProto");
  return ParseShapeFields(r, 0, s, nodes);
}

}  // namespace internal

// Decodes ShapeProto bytes with protobuf's wire rules (wire::FieldReader)
// and merge semantics. Checks only the wire format and the limits
// (kMaxRank entries per repeated field, kMaxTupleDepth nesting,
// kMaxShapeNodes shapes: kResourceExhausted); see ValidateShape for XLA's
// rules. `base` is the stream offset of `bytes` for messages.
inline absl::StatusOr<Shape> ParseShape(std::string_view bytes,
                                        const Frame& frame,
                                        uint64_t base = 0) {
  Shape s;
  size_t nodes = 0;
  absl::Status st =
      internal::ParseShapeOccurrence(bytes, base, frame, &s, &nodes);
  if (!st.ok()) return st;
  return s;
}

// A message's `shape` field may occur more than once. Protobuf parses each
// occurrence by itself and merges them (a field may not start in one and
// end in the next); so do we. `bytes` holds the occurrences back to back;
// ShapePart gives each one's size and stream offset (for messages). With
// no parts, `bytes` is one occurrence at offset 0.
struct ShapePart {
  size_t size = 0;
  uint64_t offset = 0;
};
inline absl::StatusOr<Shape> ParseShapeParts(
    std::string_view bytes, const std::vector<ShapePart>& parts,
    const Frame& frame) {
  if (parts.empty()) return ParseShape(bytes, frame, 0);
  Shape s;
  size_t nodes = 0;
  size_t at = 0;
  for (const ShapePart& part : parts) {
    absl::Status st = internal::ParseShapeOccurrence(
        bytes.substr(at, part.size), part.offset, frame, &s, &nodes);
    if (!st.ok()) return st;
    at += part.size;
  }
  return s;
}

// Number of elements of an array shape, checked against kMaxElementCount
// and the 64-bit range (with `element_bytes`). Negative dims are rejected.
inline absl::StatusOr<uint64_t> ElementCount(const Shape& s,
                                             const Frame& frame,
                                             uint64_t offset,
                                             uint64_t element_bytes = 1) {
  uint64_t n = 1;
  for (int64_t d : s.dimensions) {
    if (d < 0) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                        "non-negative dimensions",
                        absl::StrCat("dimension ", d));
    }
    if (d != 0 && n > limits::kMaxElementCount / static_cast<uint64_t>(d)) {
      return FrameError(absl::StatusCode::kResourceExhausted, frame, offset,
                        absl::StrCat("at most ", limits::kMaxElementCount,
                                     " elements"),
                        absl::StrCat("dimensions [",
                                     absl::StrJoin(s.dimensions, ","), "]"));
    }
    n *= static_cast<uint64_t>(d);
  }
  if (element_bytes > 1 && n > limits::kMaxElementCount / element_bytes * 8) {
    return FrameError(absl::StatusCode::kResourceExhausted, frame, offset,
                      "a byte size that fits in 64 bits",
                      absl::StrCat(n, " elements of ", element_bytes,
                                   " bytes"));
  }
  return n;
}

// XLA's checks for an array literal's shape (CreateFromProto steps 2-4 and
// the element_size_in_bits rule of CopyFromProto), applied recursively to
// tuples. `offset` locates the shape for messages.
inline absl::Status ValidateShape(const Shape& s, const Frame& frame,
                                  uint64_t offset, int depth = 0) {
  if (depth > limits::kMaxTupleDepth) {
    return FrameError(absl::StatusCode::kResourceExhausted, frame, offset,
                      "shallower tuple nesting", "too deep");
  }
  const PrimitiveTypeInfo* info = FindPrimitiveType(s.element_type);
  if (!info || s.element_type == 0) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "a known element type",
                      absl::StrCat("element_type ", s.element_type));
  }
  if (s.is_tuple()) {
    if (!s.dimensions.empty() || s.has_layout) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                        "a tuple shape without dimensions or layout",
                        "dimensions or a layout on a TUPLE shape");
    }
    for (const Shape& t : s.tuple_shapes) {
      if (absl::Status st = ValidateShape(t, frame, offset, depth + 1);
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }
  if (s.element_type == 14) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "an array shape", "OPAQUE_TYPE");
  }
  if (s.element_type == 17) return absl::OkStatus();  // TOKEN
  if (info->encoding == DataEncoding::kNone) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "an array element type", std::string(info->name));
  }
  if (!s.tuple_shapes.empty()) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "no tuple_shapes on an array shape",
                      absl::StrCat(s.tuple_shapes.size(), " tuple_shapes"));
  }
  if (!s.has_layout) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "a layout (XLA: \"LiteralProto has no layout\"; "
                      "--lenient-layout reads none as major-to-minor)",
                      "none");
  }
  const size_t rank = s.dimensions.size();
  if (!s.is_dynamic_dimension.empty() &&
      s.is_dynamic_dimension.size() != rank) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      absl::StrCat(rank, " is_dynamic_dimension entries"),
                      absl::StrCat(s.is_dynamic_dimension.size()));
  }
  const std::vector<int64_t>& m2m = s.layout.minor_to_major;
  bool perm = m2m.size() == rank;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; perm && i < m2m.size(); ++i) {
    int64_t d = m2m[i];
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[d]) {
      perm = false;
    } else {
      seen[d] = true;
    }
  }
  if (!perm) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, frame, offset,
        absl::StrCat("minor_to_major a permutation of 0..", rank, "-1"),
        absl::StrCat("{", absl::StrJoin(m2m, ","), "}"));
  }
  if (s.layout.element_size_in_bits != 0) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, offset,
                      "element_size_in_bits 0 (XLA literals are unpacked)",
                      absl::StrCat(s.layout.element_size_in_bits));
  }
  absl::StatusOr<uint64_t> n =
      ElementCount(s, frame, offset, info->element_bytes);
  if (!n.ok()) return n.status();
  return absl::OkStatus();
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_SHAPE_H_
