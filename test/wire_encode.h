// The protobuf wire encoding, written by hand from the encoding's rules
// (docs/format.md §2), for tests that build bytes without this project's
// writer or protobuf: the one C++ copy (test/wire.py is the Python one).
//
//   Varint(300) == "\xac\x02"; Len(1, "x") == "\x0a\x01x";
//   Box(5) == "\x03\x3a\x01\x05" (a decomposed length box: u64s = [5]).
#ifndef DECOMPOSED_TEST_WIRE_ENCODE_H_
#define DECOMPOSED_TEST_WIRE_ENCODE_H_

#include <cstdint>
#include <string>

namespace decomposed::wire_encode {

// A base-128 varint (a negative int64 is passed as its uint64 bits).
inline std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

// A field's key: number and wire type (0 varint, 1 fixed64, 2 length-
// delimited, 5 fixed32).
inline std::string Tag(uint32_t field, uint32_t wire_type) {
  return Varint(uint64_t{field} << 3 | wire_type);
}

// A length-delimited field.
inline std::string Len(uint32_t field, const std::string& payload) {
  return Tag(field, 2) + Varint(payload.size()) + payload;
}

// A varint field.
inline std::string VarintField(uint32_t field, uint64_t v) {
  return Tag(field, 0) + Varint(v);
}

// A decomposed snapshot's length box: one length byte, then a LiteralProto
// with u64s = [v] (field 7).
inline std::string Box(uint64_t v) {
  const std::string payload = Len(7, Varint(v));
  return std::string(1, static_cast<char>(payload.size())) + payload;
}

}  // namespace decomposed::wire_encode

#endif  // DECOMPOSED_TEST_WIRE_ENCODE_H_
