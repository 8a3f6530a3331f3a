// A hand-written decoder for xla.ShapeProto / LayoutProto bytes, with the
// validation XLA's CreateFromProto applies (xla-wire-facts.md section 5).
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/wire/wire.h"
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

// Reads the size of a length-delimited field as protobuf does inside the
// messages it parses: a varint of at most 5 bytes (a zero-padded longer
// one is refused), which must fit in [*p, end). Shapes are bounded by
// limits::kMaxShapeBytes, far below protobuf's 2 GiB.
inline bool ReadSize(const char** p, const char* end, uint64_t* len) {
  const char* start = *p;
  return wire::ReadVarint(p, end, len) == wire::VarintResult::kOk &&
         *p - start <= static_cast<ptrdiff_t>(wire::kMaxSizeBytes) &&
         *len <= static_cast<uint64_t>(end - *p);
}

// Reads a packed or unpacked repeated varint field occurrence into `out`.
// kTooMany: `out` would exceed `max_items` (a limit, not malformed bytes).
enum class RepeatedResult { kOk, kMalformed, kTooMany };
inline RepeatedResult ReadRepeatedVarint(const char** p, const char* end,
                                         uint32_t wt,
                                         std::vector<int64_t>* out,
                                         size_t max_items) {
  uint64_t v;
  if (wt == wire::kVarint) {
    if (wire::ReadVarint(p, end, &v) != wire::VarintResult::kOk) {
      return RepeatedResult::kMalformed;
    }
    if (out->size() >= max_items) return RepeatedResult::kTooMany;
    out->push_back(static_cast<int64_t>(v));
    return RepeatedResult::kOk;
  }
  if (wt != wire::kLen) return RepeatedResult::kMalformed;
  uint64_t len;
  if (!ReadSize(p, end, &len)) return RepeatedResult::kMalformed;
  const char* e = *p + len;
  while (*p < e) {
    if (wire::ReadVarint(p, e, &v) != wire::VarintResult::kOk) {
      return RepeatedResult::kMalformed;
    }
    if (out->size() >= max_items) return RepeatedResult::kTooMany;
    out->push_back(static_cast<int64_t>(v));
  }
  return RepeatedResult::kOk;
}

// A field holding more than kMaxRank entries (kResourceExhausted).
inline absl::Status TooManyEntries(const Frame& frame, uint64_t off,
                                   uint32_t field) {
  return FrameError(absl::StatusCode::kResourceExhausted, frame, off,
                    absl::StrCat("at most ", limits::kMaxRank,
                                 " entries in field ", field, " (kMaxRank)"),
                    "more");
}

// Skips one field value of wire type `wt` (a length as ReadSize reads it).
inline bool SkipField(const char** p, const char* end, uint32_t wt) {
  uint64_t v;
  switch (wt) {
    case wire::kVarint:
      return wire::ReadVarint(p, end, &v) == wire::VarintResult::kOk;
    case wire::kFixed64:
      if (end - *p < 8) return false;
      *p += 8;
      return true;
    case wire::kFixed32:
      if (end - *p < 4) return false;
      *p += 4;
      return true;
    case wire::kLen:
      if (!ReadSize(p, end, &v)) return false;
      *p += v;
      return true;
    default:
      return false;  // groups are not used by XLA's protos
  }
}

// True when [p, end) is a run of well-formed varints (a packed field).
inline bool ValidPackedVarints(const char* p, const char* end) {
  uint64_t v;
  while (p < end) {
    if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk) return false;
  }
  return true;
}

// Reads a length prefix (ReadSize); *body is the contents, *p is moved past
// them.
inline bool ReadLenPrefixed(const char** p, const char* end,
                            const char** body, uint64_t* len) {
  if (!ReadSize(p, end, len)) return false;
  *body = *p;
  *p += *len;
  return true;
}

// Checks a message of integer fields only, the way protobuf does while
// parsing: TileProto {repeated int64 dimensions = 1} and SplitConfigProto
// {int64 dimension = 1; repeated int64 split_indices = 2}. `packed` is the
// number of the repeated field, whose packed form must hold varints.
inline bool ValidIntMessage(const char* p, const char* end, uint32_t packed) {
  while (p < end) {
    uint64_t tag;
    const char* tag_start = p;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk ||
        !wire::IsValidTag(tag, static_cast<uint64_t>(p - tag_start))) {
      return false;
    }
    uint32_t wt = static_cast<uint32_t>(tag & 7);
    if ((tag >> 3) == packed && wt == wire::kLen) {
      const char* body;
      uint64_t len;
      if (!ReadLenPrefixed(&p, end, &body, &len) ||
          !ValidPackedVarints(body, body + len)) {
        return false;
      }
    } else if (!SkipField(&p, end, wt)) {
      return false;
    }
  }
  return true;
}

inline absl::Status ParseShapeInto(const char* p, const char* end,
                                   uint64_t base, const Frame& frame,
                                   int depth, Shape* s, size_t* nodes);

// Fields that do not affect indexing are still checked as protobuf checks
// them (nested messages parse, packed fields hold varints), so that bytes we
// accept are bytes XLA accepts. `depth` is the enclosing shape's.
inline absl::Status ParseLayoutInto(const char* p, const char* end,
                                    uint64_t base, const Frame& frame,
                                    int depth, Layout* l, size_t* nodes) {
  const char* start = p;
  while (p < end) {
    uint64_t off = base + static_cast<uint64_t>(p - start);
    uint64_t tag;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a LayoutProto field tag", "a malformed varint");
    }
    if (uint64_t n = base + static_cast<uint64_t>(p - start) - off;
        !wire::IsValidTag(tag, n)) {
      return BadTagError(frame, off, "a LayoutProto", tag, n);
    }
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    uint32_t wt = static_cast<uint32_t>(tag & 7);
    bool ok = true;
    uint64_t v = 0;
    auto scalar = [&](int64_t* dst) {
      ok = wt == wire::kVarint &&
           wire::ReadVarint(&p, end, &v) == wire::VarintResult::kOk;
      if (ok) *dst = static_cast<int64_t>(v);
    };
    switch (field) {
      case 1: {
        RepeatedResult r = ReadRepeatedVarint(&p, end, wt,
                                              &l->minor_to_major,
                                              limits::kMaxRank);
        if (r == RepeatedResult::kTooMany) {
          return TooManyEntries(frame, off, field);
        }
        ok = r == RepeatedResult::kOk;
        break;
      }
      case 7: scalar(&l->element_size_in_bits); break;
      case 8: scalar(&l->memory_space); break;
      case 16: scalar(&l->tail_padding_alignment_in_elements); break;
      default: {
        // Length-delimited known fields are checked; with another wire
        // type protobuf keeps them as unknown fields, and so we skip them.
        const char* body;
        uint64_t len;
        bool checked = wt == wire::kLen &&
                       (field == 6 || field == 9 || field == 10 ||
                        field == 13 || field == 14 || field == 17);
        if (!checked) {
          ok = SkipField(&p, end, wt);
          break;
        }
        ok = ReadLenPrefixed(&p, end, &body, &len);
        if (!ok) break;
        if (field == 6) {  // tiles: TileProto
          ++l->tiles;
          ok = ValidIntMessage(body, body + len, 1);
        } else if (field == 17) {  // split_configs: SplitConfigProto
          ok = ValidIntMessage(body, body + len, 2);
        } else if (field == 10) {  // physical_shape: ShapeProto
          // Two message levels down (layout, then shape): protobuf's
          // nesting limit counts both.
          Shape physical;
          uint64_t sub = base + static_cast<uint64_t>(body - start);
          absl::Status st = ParseShapeInto(body, body + len, sub, frame,
                                           depth + 2, &physical, nodes);
          if (!st.ok()) return st;
        } else {  // packed dim_level_types, dim_unique, dim_ordered
          ok = ValidPackedVarints(body, body + len);
        }
      }
    }
    if (!ok) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        absl::StrCat("a well-formed layout field ", field),
                        "malformed bytes or more than kMaxRank entries");
    }
  }
  return absl::OkStatus();
}

// `nodes` counts the shapes parsed so far (limits::kMaxShapeNodes).
inline absl::Status ParseShapeInto(const char* p, const char* end,
                                   uint64_t base, const Frame& frame,
                                   int depth, Shape* s, size_t* nodes) {
  if (depth > limits::kMaxTupleDepth) {
    return FrameError(absl::StatusCode::kResourceExhausted, frame, base,
                      absl::StrCat("tuple nesting of at most ",
                                   limits::kMaxTupleDepth),
                      "deeper nesting");
  }
  const char* start = p;
  while (p < end) {
    uint64_t off = base + static_cast<uint64_t>(p - start);
    uint64_t tag;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a ShapeProto field tag", "a malformed varint");
    }
    if (uint64_t n = base + static_cast<uint64_t>(p - start) - off;
        !wire::IsValidTag(tag, n)) {
      return BadTagError(frame, off, "a ShapeProto", tag, n);
    }
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    uint32_t wt = static_cast<uint32_t>(tag & 7);
    bool ok = true;
    uint64_t v = 0;
    if (field == 2) {
      ok = wt == wire::kVarint &&
           wire::ReadVarint(&p, end, &v) == wire::VarintResult::kOk;
      // An enum is an int32 on the wire: protobuf keeps the low 32 bits of
      // a longer varint, and so does XLA; so do we.
      if (ok) {
        s->element_type = static_cast<int32_t>(static_cast<uint32_t>(v));
      }
    } else if (field == 3) {
      RepeatedResult r = ReadRepeatedVarint(&p, end, wt, &s->dimensions,
                                            limits::kMaxRank);
      if (r == RepeatedResult::kTooMany) {
        return TooManyEntries(frame, off, field);
      }
      ok = r == RepeatedResult::kOk;
    } else if (field == 6) {
      // Repeated occurrences append: the room left bounds them all.
      std::vector<int64_t> flags;
      size_t room = limits::kMaxRank -
                    std::min(limits::kMaxRank, s->is_dynamic_dimension.size());
      RepeatedResult r = ReadRepeatedVarint(&p, end, wt, &flags, room);
      if (r == RepeatedResult::kTooMany) {
        return TooManyEntries(frame, off, field);
      }
      ok = r == RepeatedResult::kOk;
      for (int64_t f : flags) s->is_dynamic_dimension.push_back(f != 0);
      // Several occurrences merge: the total is bounded like dimensions.
      if (s->is_dynamic_dimension.size() > limits::kMaxRank) ok = false;
    } else if (field == 4 || field == 5) {
      ok = wt == wire::kLen && ReadSize(&p, end, &v);
      if (ok) {
        uint64_t sub = base + static_cast<uint64_t>(p - start);
        absl::Status st;
        if (field == 4) {
          if (++*nodes > limits::kMaxShapeNodes) {
            return FrameError(absl::StatusCode::kResourceExhausted, frame, off,
                              absl::StrCat("at most ", limits::kMaxShapeNodes,
                                           " tuple element shapes"),
                              "more");
          }
          s->tuple_shapes.emplace_back();
          st = ParseShapeInto(p, p + v, sub, frame, depth + 1,
                              &s->tuple_shapes.back(), nodes);
        } else {
          s->has_layout = true;  // fields of repeated occurrences merge
          st = ParseLayoutInto(p, p + v, sub, frame, depth, &s->layout,
                               nodes);
        }
        if (!st.ok()) return st;
        p += v;
      }
    } else {
      ok = SkipField(&p, end, wt);
    }
    if (!ok) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        absl::StrCat("a well-formed shape field ", field),
                        "malformed bytes or more than kMaxRank entries");
    }
  }
  return absl::OkStatus();
}

}  // namespace internal

// Decodes ShapeProto bytes. Checks only the wire format; see ValidateShape
// for XLA's rules. `base` is the stream offset of `bytes` for messages.
inline absl::StatusOr<Shape> ParseShape(std::string_view bytes,
                                        const Frame& frame,
                                        uint64_t base = 0) {
  Shape s;
  size_t nodes = 0;
  absl::Status st = internal::ParseShapeInto(
      bytes.data(), bytes.data() + bytes.size(), base, frame, 0, &s, &nodes);
  if (!st.ok()) return st;
  return s;
}

// A message's `shape` field may occur more than once. Protobuf parses each
// occurrence by itself and merges them, which is parsing their
// concatenation once each occurrence is well-formed on its own (a field
// may not start in one and end in the next). `bytes` holds the
// occurrences back to back; ShapePart gives each one's size and stream
// offset (for messages).
struct ShapePart {
  size_t size = 0;
  uint64_t offset = 0;
};
inline absl::StatusOr<Shape> ParseShapeParts(
    std::string_view bytes, const std::vector<ShapePart>& parts,
    const Frame& frame) {
  if (parts.size() > 1) {
    size_t at = 0;
    for (const ShapePart& part : parts) {
      absl::StatusOr<Shape> one =
          ParseShape(bytes.substr(at, part.size), frame, part.offset);
      if (!one.ok()) return one.status();
      at += part.size;
    }
  }
  return ParseShape(bytes, frame, parts.empty() ? 0 : parts[0].offset);
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
                      "a layout (XLA: \"LiteralProto has no layout\")",
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
