// Protobuf wire-format primitives, hand-written for speed and for 64-bit
// sizes (protobuf's own CodedInputStream uses `int` sizes). Not API.
#ifndef DECOMPOSED_WIRE_WIRE_H_
#define DECOMPOSED_WIRE_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

namespace decomposed::wire {

inline constexpr size_t kMaxVarintBytes = 10;

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

inline constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes the minimal varint for v; returns the end. `out` needs 10 bytes.
inline char* WriteVarint(uint64_t v, char* out) {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

// Writes v as exactly `width` bytes (width >= VarintSize(v), <= 10), using
// redundant continuation bytes: a legal encoding that lets a writer reserve
// space for a number it patches later.
inline char* WriteVarintPadded(uint64_t v, size_t width, char* out) {
  for (size_t i = 0; i + 1 < width; ++i) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v & 0x7f);
  return out;
}

// A field tag as protobuf accepts one: a varint of at most 5 bytes
// (protobuf reads tags as 32-bit varints and fails on a longer one, even a
// zero-padded one) whose value fits in 32 bits (field numbers end at
// 2^29 - 1) and names a field >= 1. Protobuf fails the whole parse on any
// other tag, so our decoders do too, rather than read `tag >> 3` cut to 32
// bits as some other field. `bytes` is the varint's encoded length.
inline constexpr size_t kMaxTagBytes = 5;
// Protobuf reads the size of a length-delimited field as a 32-bit varint
// too: at most 5 bytes (see ReadSize in shape.h).
inline constexpr size_t kMaxSizeBytes = 5;
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

#endif  // DECOMPOSED_WIRE_WIRE_H_
