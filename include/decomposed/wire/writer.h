// The protobuf wire writer: tags, varints and length-delimited fields, the
// one place the library encodes them. Two forms: raw (into a caller's
// buffer of at least kMaxVarintBytes per varint, returning the end) for hot
// loops, and appending to a std::string for building small messages
// (shapes, literal heads, HloSnapshot records). Every encoding is the
// minimal one, as protobuf writes it.
//
// Example (ShapeProto {element_type: U64 layout {}}, bytes 10 09 2a 00):
//   std::string s;
//   wire::AppendVarintField(&s, 2, 9);   // tag (2 << 3) | 0 = 0x10, then 09
//   wire::AppendLenField(&s, 5, "");     // tag (5 << 3) | 2 = 0x2a, size 00
#ifndef DECOMPOSED_WIRE_WRITER_H_
#define DECOMPOSED_WIRE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "decomposed/wire/format.h"

namespace decomposed::wire {

// Bytes of the minimal varint of v (1..10).
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

// Writes the tag of `field` (1 .. 2^29-1) with wire type `type`; returns
// the end. `out` needs kMaxTagBytes bytes.
inline char* WriteTag(uint32_t field, WireType type, char* out) {
  return WriteVarint(MakeTag(field, type), out);
}

// Encoded size of a varint field, and of a length-delimited field holding
// `size` payload bytes (tag + size varint + payload).
inline constexpr uint64_t VarintFieldSize(uint32_t field, uint64_t value) {
  return VarintSize(MakeTag(field, kVarint)) + VarintSize(value);
}
inline constexpr uint64_t LenFieldSize(uint32_t field, uint64_t size) {
  return VarintSize(MakeTag(field, kLen)) + VarintSize(size) + size;
}

inline void AppendVarint(std::string* out, uint64_t v) {
  char buf[kMaxVarintBytes];
  out->append(buf, static_cast<size_t>(WriteVarint(v, buf) - buf));
}
inline void AppendTag(std::string* out, uint32_t field, WireType type) {
  AppendVarint(out, MakeTag(field, type));
}
// `field` as a varint (int32, int64, uint64, bool, enum: negative values
// as their 64-bit two's complement, 10 bytes, as protobuf writes them).
inline void AppendVarintField(std::string* out, uint32_t field,
                              uint64_t value) {
  AppendTag(out, field, kVarint);
  AppendVarint(out, value);
}
// The tag and size of a length-delimited field whose `size` payload bytes
// the caller writes next (for payloads streamed or built elsewhere).
inline void AppendLenHeader(std::string* out, uint32_t field, uint64_t size) {
  AppendTag(out, field, kLen);
  AppendVarint(out, size);
}
// A whole length-delimited field (a submessage, bytes or a packed list).
inline void AppendLenField(std::string* out, uint32_t field,
                           std::string_view payload) {
  AppendLenHeader(out, field, payload.size());
  out->append(payload.data(), payload.size());
}
// The payload of a packed repeated varint field: each value's varint.
inline void AppendPackedVarints(std::string* out,
                                std::span<const int64_t> values) {
  for (int64_t v : values) AppendVarint(out, static_cast<uint64_t>(v));
}

}  // namespace decomposed::wire

#endif  // DECOMPOSED_WIRE_WRITER_H_
