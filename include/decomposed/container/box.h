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
// Reader rules (strict by default):
//   * L == 0 is an error (an empty LiteralProto carries no value).
//   * L >= 0x80 is an error: snapshot-unpack sign-extends it to a negative
//     length. BoxReadOptions::lenient_length_byte reads it as unsigned, as
//     AWS's Python reader does.
//   * The payload must carry exactly one u64s value, packed (tag 0x3a) or
//     unpacked (tag 0x38), possibly split over several records.
//   * A `shape` (field 1), if present, must be a U64 scalar: element_type 9,
//     no dimensions, no tuple shapes, no dynamic dimensions, and a layout
//     (optional) with no minor_to_major and element_size_in_bits 0.
//   * Any other field is an error.
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
#include "decomposed/wire/wire.h"
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

// Validates a box's shape submessage [p, end); `base` is the stream offset
// of p.
inline absl::Status CheckBoxShape(const char* p, const char* end,
                                  uint64_t base, const Frame& frame) {
  const char* start = p;
  bool have_type = false;
  while (p < end) {
    uint64_t off = base + static_cast<uint64_t>(p - start);
    uint64_t tag;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a ShapeProto field tag", "a malformed varint");
    }
    uint64_t v;
    if (tag == wire::MakeTag(2, wire::kVarint)) {
      if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "shape element_type varint", "a malformed varint");
      }
      if (v != 9) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "shape element_type U64 (9)",
                          absl::StrCat("element_type ", v));
      }
      have_type = true;
    } else if (tag == wire::MakeTag(3, wire::kLen) ||
               tag == wire::MakeTag(6, wire::kLen)) {
      // Packed dimensions / is_dynamic_dimension: only the empty list fits a
      // scalar.
      if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk || v != 0) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "a scalar shape (no dimensions)",
                          "a shape with dimensions");
      }
    } else if (tag == wire::MakeTag(5, wire::kLen)) {
      uint64_t len;
      if (wire::ReadVarint(&p, end, &len) != wire::VarintResult::kOk ||
          len > static_cast<uint64_t>(end - p)) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "a layout within the shape",
                          "a layout length past the end of the box");
      }
      const char* le = p + len;
      while (p < le) {
        uint64_t loff = base + static_cast<uint64_t>(p - start);
        uint64_t ltag, lv;
        if (wire::ReadVarint(&p, le, &ltag) != wire::VarintResult::kOk) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame, loff,
                            "a LayoutProto field tag", "a malformed varint");
        }
        bool known = ltag == wire::MakeTag(7, wire::kVarint) ||
                     ltag == wire::MakeTag(8, wire::kVarint) ||
                     ltag == wire::MakeTag(16, wire::kVarint) ||
                     ltag == wire::MakeTag(1, wire::kLen);
        if (!known ||
            wire::ReadVarint(&p, le, &lv) != wire::VarintResult::kOk) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame, loff,
                            "a scalar layout (only element_size_in_bits, "
                            "memory_space, tail_padding_alignment)",
                            absl::StrCat("layout field ", ltag >> 3,
                                         " wire type ", ltag & 7));
        }
        if ((ltag == wire::MakeTag(1, wire::kLen) ||
             ltag == wire::MakeTag(7, wire::kVarint)) &&
            lv != 0) {
          return FrameError(
              absl::StatusCode::kInvalidArgument, frame, loff,
              "a scalar layout",
              ltag == wire::MakeTag(1, wire::kLen)
                  ? "a non-empty minor_to_major"
                  : absl::StrCat("element_size_in_bits ", lv));
        }
      }
    } else {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a U64 scalar shape",
                        absl::StrCat("shape field ", tag >> 3, " wire type ",
                                     tag & 7));
    }
  }
  if (!have_type) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, base,
                      "shape element_type U64 (9)",
                      "no element_type (PRIMITIVE_TYPE_INVALID)");
  }
  return absl::OkStatus();
}

// Parses a box payload [p, p+n); `base` is the stream offset of p.
inline absl::Status ParseBoxPayload(const char* p, size_t n, uint64_t base,
                                    const Frame& frame, uint64_t* value) {
  const char* start = p;
  const char* end = p + n;
  uint64_t count = 0;
  auto here = [&] { return base + static_cast<uint64_t>(p - start); };
  while (p < end) {
    uint64_t off = here();
    uint64_t tag;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a LiteralProto field tag", "a malformed varint");
    }
    if (tag == wire::MakeTag(7, wire::kLen)) {
      uint64_t len;
      if (wire::ReadVarint(&p, end, &len) != wire::VarintResult::kOk ||
          len > static_cast<uint64_t>(end - p)) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "packed u64s within the box",
                          "a length past the end of the box");
      }
      const char* pe = p + len;
      while (p < pe) {
        uint64_t voff = here();
        uint64_t v;
        if (wire::ReadVarint(&p, pe, &v) != wire::VarintResult::kOk) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame, voff,
                            "a u64s varint", "a malformed varint");
        }
        if (count++ == 0) *value = v;
      }
    } else if (tag == wire::MakeTag(7, wire::kVarint)) {
      uint64_t v;
      if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, here(),
                          "a u64s varint", "a malformed varint");
      }
      if (count++ == 0) *value = v;
    } else if (tag == wire::MakeTag(1, wire::kLen)) {
      uint64_t len;
      if (wire::ReadVarint(&p, end, &len) != wire::VarintResult::kOk ||
          len > static_cast<uint64_t>(end - p)) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "a shape within the box",
                          "a length past the end of the box");
      }
      absl::Status s = CheckBoxShape(p, p + len, here(), frame);
      if (!s.ok()) return s;
      p += len;
    } else {
      return FrameError(
          absl::StatusCode::kInvalidArgument, frame, off,
          "only u64s (field 7) and an optional U64 shape in a box",
          absl::StrCat("field ", tag >> 3, " wire type ", tag & 7));
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
    if (!src.status().ok()) return Prefix(src.status(), frame.str());
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
                     "char and sign-extends it to a negative length; the "
                     "lenient option reads it as unsigned, as AWS's Python "
                     "reader does)"));
  }
  if (!src.Pull(1 + size_t{len})) {
    if (!src.status().ok()) return Prefix(src.status(), frame.str());
    return TruncatedError(frame, start + 1, len, src.available() - 1);
  }
  absl::Status s =
      ParseBoxPayload(src.cursor() + 1, len, start + 1, frame, value);
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
