// The protobuf wire format, as protobuf itself parses it: wire types, the
// rules for a field tag, varints on a byte range, little-endian loads, the
// one field record type (`wire::Field`) and the wire errors every decoder
// reports. The reader (wire/reader.h) and the writer (wire/writer.h) are
// built on these; decoders use those, not this file's pieces one by one.
//
// Rules (protobuf 3.21, docs/format.md §3), and the three
// places where we are stricter than protobuf, each refusing bytes no
// protobuf writer produces rather than guessing what they mean:
//   * a varint is at most 10 bytes. Stricter: we refuse a 10th byte above 1
//     (bits past 64, which protobuf drops silently);
//   * a tag is a varint of at most limits::kMaxTagBytes (5) bytes, even a
//     zero-padded one, naming a field >= 1. Stricter: its value must fit 32
//     bits (protobuf drops the bits of a 5-byte tag past 32 and so reads
//     some other field);
//   * wire types 0 (varint), 1 (fixed64), 2 (length-delimited), 5 (fixed32);
//     6 and 7 do not exist. Stricter: 3 and 4 (groups) are refused (XLA's
//     protos use none; protobuf skips an unknown group);
//   * a length is a varint of at most limits::kMaxLenSizeBytes (5) bytes
//     whose value is at most limits::kMaxLenSize.
//
// Example:
//   const char* p = bytes.data();
//   uint64_t tag;
//   if (wire::ReadVarint(&p, bytes.data() + bytes.size(), &tag) ==
//           wire::VarintResult::kOk &&
//       wire::IsValidTag(tag, p - bytes.data())) {
//     // ... field tag >> 3, wire type tag & 7 ...
//   }
#ifndef DECOMPOSED_WIRE_FORMAT_H_
#define DECOMPOSED_WIRE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed::wire {

inline constexpr size_t kMaxVarintBytes = 10;
inline constexpr size_t kMaxTagBytes = limits::kMaxTagBytes;
inline constexpr size_t kMaxSizeBytes = limits::kMaxLenSizeBytes;

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

inline constexpr uint32_t MakeTag(uint32_t field, WireType type) {
  return (field << 3) | type;
}

// A field tag as we accept one: a varint of at most 5 bytes (protobuf
// reads tags as 32-bit varints and fails on a longer one, even a
// zero-padded one) naming a field >= 1 (protobuf fails on field 0), whose
// value fits in 32 bits (field numbers end at 2^29 - 1). The last rule is
// stricter than protobuf, which cuts a 5-byte tag to 32 bits and reads
// `tag >> 3` as some other field; we refuse it instead. `bytes` is the
// varint's encoded length.
inline constexpr bool IsValidTag(uint64_t tag, uint64_t bytes) {
  return bytes <= kMaxTagBytes && tag <= 0xffffffffu && (tag >> 3) != 0;
}

enum class VarintResult { kOk, kTruncated, kOverflow };

// Decodes a varint from [p, end). On kOk, *out is set and *p advanced.
// kTruncated: the data ends inside the varint. kOverflow: more than 10 bytes,
// or a 10th byte carrying bits beyond 64.
inline VarintResult ReadVarint(const char** p, const char* end,
                               uint64_t* out) {
  const uint8_t* q = reinterpret_cast<const uint8_t*>(*p);
  const uint8_t* e = reinterpret_cast<const uint8_t*>(end);
  if (q < e && *q < 0x80) [[likely]] {
    *out = *q;
    *p += 1;
    return VarintResult::kOk;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < kMaxVarintBytes; ++i) {
    if (q + i >= e) return VarintResult::kTruncated;
    uint64_t b = q[i];
    if (i == 9 && b > 1) return VarintResult::kOverflow;
    v |= (b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *out = v;
      *p += i + 1;
      return VarintResult::kOk;
    }
  }
  return VarintResult::kOverflow;
}

inline uint32_t LoadLE32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86-64 / aarch64 little endian; see CMake check.
}
inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// One field occurrence of a message, as FieldReader::Next returns it. Every
// hand-written decoder works on this record. Offsets are absolute stream
// positions (as ByteSource::position() counts them).
struct Field {
  uint32_t number = 0;          // field number, >= 1
  WireType wire_type = kVarint;  // 0, 1, 2 or 5
  uint64_t tag_offset = 0;      // where the tag starts
  uint64_t offset = 0;          // where the value / the payload starts
                                //   (for kLen: after the size varint)
  uint64_t length = 0;          // bytes of the value (a varint's encoded
                                //   length; 4 or 8) or of the payload (kLen)
  uint64_t value = 0;           // the varint or fixed value; 0 for kLen

  // Where the field ends (the next field's tag_offset).
  uint64_t end() const { return offset + length; }
  bool Is(uint32_t n, WireType t) const {
    return number == n && wire_type == t;
  }
};

}  // namespace decomposed::wire

namespace decomposed {

// A field tag protobuf refuses (see wire::IsValidTag): field number 0, a
// tag over 32 bits, or one encoded in more than 5 bytes. `message` names
// the message, as in "a ShapeProto"; `bytes` is the tag's encoded length.
inline absl::Status BadTagError(const Frame& frame, uint64_t offset,
                                std::string_view message, uint64_t tag,
                                uint64_t bytes) {
  std::string found;
  if (tag >> 32) {
    found = absl::StrCat("tag ", tag, " (over 32 bits)");
  } else if (bytes > wire::kMaxTagBytes) {
    found = absl::StrCat("tag ", tag, " encoded in ", bytes, " bytes");
  } else {
    found = "field number 0";
  }
  return FrameError(
      absl::StatusCode::kInvalidArgument, frame, offset,
      absl::StrCat(Sv(message), " field tag (field 1 to 2^29-1, at most ",
                   wire::kMaxTagBytes, " bytes)"),
      found);
}

}  // namespace decomposed

#endif  // DECOMPOSED_WIRE_FORMAT_H_
