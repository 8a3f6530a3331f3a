// Primitive A: the boxed uint64.
//
// On the decomposed wire every integer (a count or a length) is a "box": one
// length byte L, then L bytes of a serialized xla.LiteralProto whose packed
// `u64s` field (#7) holds the one value. Neuron's snapshot-unpack reads L
// through a *signed* char, so L must stay below 128.
//
//   off  width  field
//   0    1      L    1..127
//   1    L      LiteralProto { u64s: [value] }   (shape optional)
//
// Reader rules (strict by default). The payload is read with protobuf's
// wire rules (wire::FieldReader, wire/format.h: a tag of 6 bytes, field 0,
// a size of 6 bytes are errors, as they are for protobuf), and a field that
// occurs more than once merges as protobuf merges it (a repeated field
// appends, a scalar's last value wins). Then:
//   * L == 0 is an error (an empty LiteralProto carries no value).
//   * L >= 0x80 is an error: snapshot-unpack sign-extends it to a negative
//     length. BoxReadOptions::lenient_length_byte reads it as unsigned, as
//     AWS's Python reader does.
//   * The payload must carry exactly one u64s value, packed (tag 0x3a) or
//     unpacked (tag 0x38), possibly split over several records.
//   * A `shape` (field 1), if present, must be a U64 scalar: element_type 9
//     (its low 32 bits: an enum is an int32), no dimensions, no tuple
//     shapes, no dynamic dimensions, and a layout (optional) with no
//     minor_to_major entries and element_size_in_bits 0.
//   * Stricter than protobuf (which would keep them as unknown fields, or
//     see nothing in an empty list): any other field on the wire is an
//     error. The LiteralProto may hold only u64s and shape; the shape only
//     element_type, dimensions, is_dynamic_dimension (both empty) and
//     layout; the layout only minor_to_major (empty), element_size_in_bits,
//     memory_space and tail_padding_alignment_in_elements, each with the
//     wire type protobuf writes. test/wire/wire_agreement_test.cc lists the
//     cases where this rule, and no other, refuses what protobuf reads.
//
// Writer: EncodeBox() emits the minimal box `[L] 3a [n] <varint>` (at most
// 13 bytes), or with BoxWriteOptions::with_shape a box that also carries
// `shape {element_type: U64 layout {}}` (at most 19 bytes), as
// LiteralUtil::CreateR0<uint64_t>(v).ToProto() does in older XLA.
//
// Example:
//   char buf[decomposed::limits::kMaxBoxBytes];
//   size_t n = decomposed::EncodeBox(128, buf);  // 04 3a 02 80 01
//   decomposed::MemorySource src(std::string_view(buf, n));
//   absl::StatusOr<uint64_t> v = decomposed::ReadBox(src, {"count box"});
#ifndef DECOMPOSED_CONTAINER_BOX_H_
#define DECOMPOSED_CONTAINER_BOX_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/wire/reader.h"
#include "decomposed/wire/writer.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

struct BoxReadOptions {
  // Read a length byte >= 0x80 as unsigned (AWS's Python reader) instead of
  // rejecting it (Neuron's snapshot-unpack would sign-extend and abort).
  bool lenient_length_byte = false;
};

struct BoxWriteOptions {
  // Also write `shape {element_type: U64 layout {}}` before the value.
  bool with_shape = false;
};

// Smallest legal box: 1 length byte + unpacked `38 00`.
inline constexpr size_t kMinBoxBytes = 3;

// Bytes of the minimal varint of v: 1 + floor(bit_length(v) - 1) / 7.
inline size_t BoxVarintSize(uint64_t v) {
  return (63 - static_cast<size_t>(__builtin_clzll(v | 1))) / 7 + 1;
}

// Encodes `value` as a box into `out` and returns its size. `out` must have
// room for limits::kMaxBoxBytes bytes: the bytes past the returned size may be
// overwritten with scratch.
inline size_t EncodeBox(uint64_t value, char* out,
                        const BoxWriteOptions& options = {}) {
  char* p = out + 1;
  if (options.with_shape) {
    static constexpr char kShape[] = {0x0a, 0x04, 0x10, 0x09, 0x2a, 0x00};
    std::memcpy(p, kShape, sizeof kShape);
    p += sizeof kShape;
  }
  const size_t n = BoxVarintSize(value);
  p[0] = 0x3a;
  p[1] = static_cast<char>(n);
  if (n <= 8) [[likely]] {
    // Spread the 7-bit groups into bytes and set the continuation bit of
    // all but the last (the inverse of the SWAR decode in ReadBox).
    constexpr uint64_t kHigh = 0x8080808080808080u;
    uint64_t x = value;
    x = (x & 0x000000000fffffffu) | ((x & 0x00fffffff0000000u) << 4);
    x = (x & 0x00003fff00003fffu) | ((x & 0x0fffc0000fffc000u) << 2);
    x = (x & 0x007f007f007f007fu) | ((x & 0x3f803f803f803f80u) << 1);
    x |= (kHigh >> (64 - 8 * n)) >> 8;
    std::memcpy(p + 2, &x, 8);  // p + 2 + 8 <= out + limits::kMaxBoxBytes
  } else {
    wire::WriteVarint(value, p + 2);
  }
  const size_t size = (p - out) + 2 + n;
  out[0] = static_cast<char>(size - 1);
  return size;
}

// Size of the box EncodeBox would write.
inline size_t BoxSize(uint64_t value, const BoxWriteOptions& options = {}) {
  return 3 + (options.with_shape ? 6 : 0) + BoxVarintSize(value);
}

template <ByteSink K>
bool WriteBox(K& sink, uint64_t value, const BoxWriteOptions& options = {}) {
  char buf[limits::kMaxBoxBytes];
  return sink.Write(std::string_view(buf, EncodeBox(value, buf, options)));
}

namespace internal {

inline std::string Hex(uint8_t b) { return absl::StrFormat("0x%02x", b); }

// What the U64 shape of a box says so far. A LiteralProto's `shape` may
// occur more than once, and a ShapeProto's `layout` too: protobuf merges
// the occurrences (a scalar field's last value wins), so the element type
// and element_size_in_bits are judged once the whole payload is read.
struct BoxShape {
  bool seen = false;       // a shape occurred
  bool have_type = false;  // element_type occurred
  int32_t type = 0;        // its last value (an enum is an int32)
  uint64_t type_offset = 0;
  uint64_t shape_offset = 0;  // the first shape's payload
  int64_t element_size_in_bits = 0;
  uint64_t element_size_offset = 0;
};

// Counts the values of a repeated varint field occurrence (packed or not).
inline bool CountVarints(wire::FieldReader<MemorySource>& r,
                         const wire::Field& f, size_t* n) {
  return r.ForEachVarint(f, [n](uint64_t) { ++*n; });
}

// Reads one LayoutProto occurrence of a box's shape: only the fields a
// scalar layout may carry, and no minor_to_major entries.
inline absl::Status ReadBoxLayout(wire::FieldReader<MemorySource>& r,
                                  BoxShape* shape) {
  wire::Field f;
  while (r.Next(f)) {
    if (f.number == 1 &&
        (f.wire_type == wire::kLen || f.wire_type == wire::kVarint)) {
      size_t n = 0;
      if (!CountVarints(r, f, &n)) return r.status();
      if (n != 0) {
        return r.FieldError(f, "a scalar layout", "a non-empty minor_to_major");
      }
    } else if (f.Is(7, wire::kVarint)) {
      shape->element_size_in_bits = static_cast<int64_t>(f.value);
      shape->element_size_offset = f.tag_offset;
    } else if (!f.Is(8, wire::kVarint) && !f.Is(16, wire::kVarint)) {
      return r.FieldError(f,
                          "a scalar layout (only element_size_in_bits, "
                          "memory_space, tail_padding_alignment)",
                          absl::StrCat("layout field ", f.number,
                                       " wire type ", f.wire_type));
    }
  }
  return r.status();
}

// Reads one ShapeProto occurrence of a box: only element_type, empty
// dimensions / is_dynamic_dimension lists and a scalar layout.
inline absl::Status ReadBoxShape(wire::FieldReader<MemorySource>& r,
                                 BoxShape* shape) {
  wire::Field f;
  while (r.Next(f)) {
    if (f.Is(2, wire::kVarint)) {
      // An enum is an int32: protobuf keeps the low 32 bits.
      shape->type = static_cast<int32_t>(static_cast<uint32_t>(f.value));
      shape->type_offset = f.tag_offset;
      shape->have_type = true;
    } else if ((f.number == 3 || f.number == 6) &&
               (f.wire_type == wire::kLen || f.wire_type == wire::kVarint)) {
      size_t n = 0;
      if (!CountVarints(r, f, &n)) return r.status();
      if (n != 0) {
        return r.FieldError(f, "a scalar shape (no dimensions)",
                            "a shape with dimensions");
      }
    } else if (f.Is(5, wire::kLen)) {
      wire::FieldReader<MemorySource> layout = r.Submessage(f, "LayoutProto");
      if (absl::Status s = ReadBoxLayout(layout, shape); !s.ok()) return s;
    } else {
      return r.FieldError(f, "a U64 scalar shape",
                          absl::StrCat("shape field ", f.number,
                                       " wire type ", f.wire_type));
    }
  }
  return r.status();
}

// Parses a box payload (a LiteralProto) held in memory; `base` is its
// stream offset. The wire rules are protobuf's (wire::FieldReader); the
// box's own rules are in the file comment.
inline absl::Status ParseBoxPayload(std::string_view payload, uint64_t base,
                                    const Frame& frame, uint64_t* value) {
  MemorySource src(payload, base);
  wire::FieldReader<MemorySource> r(src, base + payload.size(), frame,
                                    "LiteralProto");
  uint64_t count = 0;
  BoxShape shape;
  auto take = [&](uint64_t v) {
    if (count++ == 0) *value = v;
  };
  wire::Field f;
  while (r.Next(f)) {
    if (f.number == 7 &&
        (f.wire_type == wire::kLen || f.wire_type == wire::kVarint)) {
      if (!r.ForEachVarint(f, take, "u64s")) return r.status();
    } else if (f.Is(1, wire::kLen)) {
      if (!shape.seen) shape.shape_offset = f.offset;
      shape.seen = true;
      wire::FieldReader<MemorySource> sub = r.Submessage(f, "ShapeProto");
      if (absl::Status s = ReadBoxShape(sub, &shape); !s.ok()) return s;
    } else {
      return r.FieldError(
          f, "only u64s (field 7) and an optional U64 shape in a box",
          absl::StrCat("field ", f.number, " wire type ", f.wire_type));
    }
  }
  if (!r.ok()) return r.status();
  if (shape.seen) {
    if (!shape.have_type) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        shape.shape_offset, "shape element_type U64 (9)",
                        "no element_type (PRIMITIVE_TYPE_INVALID)");
    }
    if (shape.type != 9) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        shape.type_offset, "shape element_type U64 (9)",
                        absl::StrCat("element_type ", shape.type));
    }
    if (shape.element_size_in_bits != 0) {
      return FrameError(
          absl::StatusCode::kInvalidArgument, frame,
          shape.element_size_offset, "a scalar layout",
          absl::StrCat("element_size_in_bits ", shape.element_size_in_bits));
    }
  }
  if (count != 1) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, base,
                      "exactly one u64s value in the box",
                      absl::StrCat(count, " values"));
  }
  return absl::OkStatus();
}

// The general box decoder, out of line. `frame` and `options` are taken by
// value so that callers build them only on this path.
template <ByteSource S>
[[gnu::noinline]] absl::Status BoxSlowPath(S& src, Frame frame,
                                           BoxReadOptions options,
                                           uint64_t* value) {
  uint64_t start = src.position();
  if (!src.Pull(1)) {
    if (!src.status().ok()) return Prefix(src.status(), frame);
    return FrameError(absl::StatusCode::kOutOfRange, frame, start,
                      "a length byte", "the end of the data");
  }
  uint8_t len = static_cast<uint8_t>(*src.cursor());
  if (len == 0) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, start,
                      "a length byte 1..127", "0 (an empty box)");
  }
  if (len >= 0x80 && !options.lenient_length_byte) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, frame, start,
        "a length byte 1..127",
        absl::StrCat(Hex(len),
                     " (snapshot-unpack reads the length byte as a signed "
                     "char and sign-extends it to a negative length; "
                     "--lenient-length-byte reads it as unsigned, as AWS's "
                     "Python reader does)"));
  }
  if (!src.Pull(1 + size_t{len})) {
    if (!src.status().ok()) return Prefix(src.status(), frame);
    return TruncatedError(frame, start + 1, len, src.available() - 1);
  }
  absl::Status s = ParseBoxPayload(std::string_view(src.cursor() + 1, len),
                                   start + 1, frame, value);
  if (!s.ok()) return s;
  src.Advance(1 + size_t{len});
  return absl::OkStatus();
}

}  // namespace internal

namespace internal {

// Decodes the varint at `p` if it is exactly `n` bytes long (bytes 0..n-2
// carry the continuation bit, byte n-1 does not) and fits in 64 bits.
// Reads 8 bytes at `p` when n <= 8, n bytes otherwise.
inline bool DecodeExactVarint(const uint8_t* p, unsigned n, uint64_t* out) {
  if (n - 1u < 8u) [[likely]] {
    // 1..8 bytes, no branch per byte: keep the n bytes, check the
    // continuation bits with one compare, pack the 7-bit groups (SWAR).
    constexpr uint64_t kHigh = 0x8080808080808080u;
    const unsigned drop = 64 - 8 * n;  // bits past the varint
    uint64_t x;
    std::memcpy(&x, p, 8);
    x = (x << drop) >> drop;
    if ((x & kHigh) != ((kHigh >> drop) >> 8)) return false;
    x &= ~kHigh;
    x = (x & 0x007f007f007f007fu) | ((x & 0x7f007f007f007f00u) >> 1);
    x = (x & 0x00003fff00003fffu) | ((x & 0x3fff00003fff0000u) >> 2);
    x = (x & 0x000000000fffffffu) | ((x & 0x0fffffff00000000u) >> 4);
    *out = x;
    return true;
  }
  if (n != 9 && n != 10) return false;
  // 9 and 10 bytes (values of 2^56 and more), byte by byte.
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t b = p[i];
    if ((b >= 0x80) != (i + 1 < n)) return false;
    v |= (b & 0x7f) << (7 * i);
  }
  if (n == 10 && p[9] > 1) return false;  // bits beyond 64
  *out = v;
  return true;
}

// Bytes of the two U64 scalar shapes XLA puts in a box, counted from the
// shape tag at `p` (0a), or 0 for any other bytes:
//   0a 04 10 09 2a 00            shape {element_type: U64 layout {}}
//   0a 07 10 09 2a 03 80 01 01   ... layout {tail_padding_alignment_in_elements: 1}
// Reads up to 10 bytes at `p`.
inline unsigned KnownBoxShapeBytes(const uint8_t* p) {
  if (p[0] != 0x0a) return 0;
  uint32_t head;
  std::memcpy(&head, p + 2, 4);
  if (p[1] == 4 && head == 0x002a0910u) return 6;
  if (p[1] == 7 && head == 0x032a0910u && p[6] == 0x80 && p[7] == 0x01 &&
      p[8] == 0x01) {
    return 9;
  }
  return 0;
}

}  // namespace internal

// Reads one box from `src`. On success the source is just past the box.
// On error the source position is unspecified. `frame` names the box in
// error messages.
template <ByteSource S>
inline absl::StatusOr<uint64_t> ReadBox(S& src, const Frame& frame,
                                        const BoxReadOptions& options = {}) {
  // Fast path: `[L] <shape> 3a [n] <n-byte varint>` fully inside the window,
  // where <shape> is empty (the minimal box EncodeBox writes) or one of the
  // two shapes XLA writes, and the varint ends exactly at the box end.
  // Anything else takes the general path, which accepts and rejects exactly
  // the same bytes (box_test checks this).
  if (src.available() >= 13) [[likely]] {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(src.cursor());
    const unsigned n = p[2];
    uint64_t x;
    if (p[1] == 0x3a && p[0] == n + 2) [[likely]] {
      if (internal::DecodeExactVarint(p + 3, n, &x)) [[likely]] {
        src.Advance(3 + n);
        return x;
      }
    } else if (src.available() >= 22) {
      // A shaped box is at most 1 + 9 + 2 + 10 bytes.
      const unsigned h = internal::KnownBoxShapeBytes(p + 1);
      const uint8_t* q = p + 1 + h;
      const unsigned m = q[1];
      if (h != 0 && q[0] == 0x3a && p[0] == h + 2 + m &&
          internal::DecodeExactVarint(q + 2, m, &x)) {
        src.Advance(3 + h + m);
        return x;
      }
    }
  }
  uint64_t v = 0;
  absl::Status s;
  if constexpr (std::is_trivially_copyable_v<S>) {
    // Run the slow path on a copy: the caller's source never has its
    // address taken, so its cursor can live in a register across a loop
    // of ReadBox calls instead of going through memory on every box.
    S copy = src;
    s = internal::BoxSlowPath(copy, frame, options, &v);
    src = copy;
  } else {
    s = internal::BoxSlowPath(src, frame, options, &v);
  }
  if (!s.ok()) return s;
  return v;
}

// A class form of ReadBox for callers that keep options with the source.
template <ByteSource S>
class BoxReader {
 public:
  explicit BoxReader(S& src, BoxReadOptions options = {})
      : src_(src), options_(options) {}
  absl::StatusOr<uint64_t> Read(const Frame& frame) {
    return ReadBox(src_, frame, options_);
  }

 private:
  S& src_;
  BoxReadOptions options_;
};

template <ByteSink K>
class BoxWriter {
 public:
  explicit BoxWriter(K& sink, BoxWriteOptions options = {})
      : sink_(sink), options_(options) {}
  bool Write(uint64_t value) { return WriteBox(sink_, value, options_); }

 private:
  K& sink_;
  BoxWriteOptions options_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_CONTAINER_BOX_H_
