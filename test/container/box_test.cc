// Primitive A (the boxed uint64): golden bytes worked out by hand from the
// spec, round trips, the 128-byte ceiling, and every strictness rule.
//
// Wire facts used below (docs/format.md §4 and §8.1):
//   box      = L (1 byte) then L bytes of LiteralProto
//   u64s     = LiteralProto field 7: packed tag (7<<3)|2 = 0x3a,
//              unpacked tag (7<<3)|0 = 0x38
//   shape    = LiteralProto field 1, tag (1<<3)|2 = 0x0a
//   ShapeProto.element_type = field 2, tag 0x10; U64 = 9
//   ShapeProto.dimensions   = field 3, packed tag 0x1a
//   ShapeProto.layout       = field 5, tag 0x2a
//   LayoutProto.tail_padding_alignment_in_elements = field 16, varint:
//              tag (16<<3)|0 = 128 = varint 80 01
//   varint: 7 bits per byte, low group first, 0x80 = "more follows".
#include "decomposed/container/box.h"

#include <random>
#include <string>
#include <vector>

#include "decomposed/testing/fault_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::HexBytes;
using ::decomposed::test::ToHex;
using ::testing::HasSubstr;

constexpr uint64_t kMax = ~uint64_t{0};

std::string Encode(uint64_t v, BoxWriteOptions o = {}) {
  char buf[limits::kMaxBoxBytes];
  return std::string(buf, EncodeBox(v, buf, o));
}

absl::StatusOr<uint64_t> Decode(const std::string& bytes,
                                BoxReadOptions o = {}, size_t* consumed = nullptr) {
  MemorySource src(bytes);
  absl::StatusOr<uint64_t> v = ReadBox(src, Frame{"test box"}, o);
  if (consumed) *consumed = src.position();
  return v;
}

// Decodes through 1-byte reads: the window never holds a whole box, so this
// always takes the slow path.
absl::StatusOr<uint64_t> DecodeSlow(const std::string& bytes,
                                    BoxReadOptions o = {}) {
  testing::FaultOptions f;
  f.max_read = 1;
  testing::FaultSource src(bytes, f);
  return ReadBox(src, Frame{"test box"}, o);
}

struct Golden {
  uint64_t value;
  const char* minimal;     // L 3a n varint
  const char* with_shape;  // L 0a 04 10 09 2a 00 3a n varint
};

// Minimal box = [2+n] 3a [n] <n-byte varint>. With shape, the payload grows
// by the 6 bytes `0a 04 | 10 09 2a 00` (shape {element_type: U64 layout {}}),
// so L = 8 + n.
const Golden kGolden[] = {
    // 0: varint 00 (n=1), L = 3.
    {0, "03 3a 01 00", "09 0a 04 10 09 2a 00 3a 01 00"},
    // 1: varint 01.
    {1, "03 3a 01 01", "09 0a 04 10 09 2a 00 3a 01 01"},
    // 127 = 0x7f fits in 7 bits: one byte 7f.
    {127, "03 3a 01 7f", "09 0a 04 10 09 2a 00 3a 01 7f"},
    // 128 = 1 << 7: low group 0 with "more" (80), then 1 (01). n=2, L=4.
    {128, "04 3a 02 80 01", "0a 0a 04 10 09 2a 00 3a 02 80 01"},
    // 2^32: bit 32 lies in the 5th group (bits 28..34) as 1 << 4 = 0x10;
    // four empty groups 80 80 80 80 before it. n=5, L=7.
    {uint64_t{1} << 32, "07 3a 05 80 80 80 80 10",
     "0d 0a 04 10 09 2a 00 3a 05 80 80 80 80 10"},
    // 2^64-1: nine full groups ff (63 bits), then bit 63 alone: 01. n=10,
    // L=12 (0x0c); with shape L=18 (0x12), 19 bytes in all.
    {kMax, "0c 3a 0a ff ff ff ff ff ff ff ff ff 01",
     "12 0a 04 10 09 2a 00 3a 0a ff ff ff ff ff ff ff ff ff 01"},
};

TEST(BoxTest, EncodesGoldenMinimal) {
  for (const Golden& g : kGolden) {
    EXPECT_EQ(ToHex(Encode(g.value)), ToHex(HexBytes(g.minimal))) << g.value;
    EXPECT_EQ(BoxSize(g.value), HexBytes(g.minimal).size()) << g.value;
  }
}

TEST(BoxTest, EncodesGoldenWithShape) {
  BoxWriteOptions o;
  o.with_shape = true;
  for (const Golden& g : kGolden) {
    EXPECT_EQ(ToHex(Encode(g.value, o)), ToHex(HexBytes(g.with_shape)))
        << g.value;
    EXPECT_EQ(BoxSize(g.value, o), HexBytes(g.with_shape).size()) << g.value;
  }
}

TEST(BoxTest, DecodesGolden) {
  for (const Golden& g : kGolden) {
    for (const char* hex : {g.minimal, g.with_shape}) {
      std::string b = HexBytes(hex);
      size_t consumed = 0;
      absl::StatusOr<uint64_t> v = Decode(b, {}, &consumed);
      ASSERT_TRUE(v.ok()) << hex << ": " << v.status();
      EXPECT_EQ(*v, g.value) << hex;
      EXPECT_EQ(consumed, b.size()) << hex;
      // Followed by other bytes (the fast path sees a full window).
      std::string padded = b + std::string(32, '\x55');
      v = Decode(padded, {}, &consumed);
      ASSERT_TRUE(v.ok()) << hex << ": " << v.status();
      EXPECT_EQ(*v, g.value);
      EXPECT_EQ(consumed, b.size());
      // Through 1-byte reads.
      v = DecodeSlow(b);
      ASSERT_TRUE(v.ok()) << hex << ": " << v.status();
      EXPECT_EQ(*v, g.value);
    }
  }
}

TEST(BoxTest, DecodesUnpackedTag) {
  // Unpacked u64s: tag 0x38 then the varint. 5 -> 38 05 (L=2);
  // 128 -> 38 80 01 (L=3).
  EXPECT_EQ(*Decode(HexBytes("02 38 05")), 5u);
  EXPECT_EQ(*Decode(HexBytes("03 38 80 01")), 128u);
  EXPECT_EQ(*DecodeSlow(HexBytes("03 38 80 01")), 128u);
  // The smallest legal box: 38 00 (value 0), 3 bytes.
  EXPECT_EQ(HexBytes("02 38 00").size(), kMinBoxBytes);
  EXPECT_EQ(*Decode(HexBytes("02 38 00")), 0u);
}

TEST(BoxTest, DecodesValueSplitOverTwoPackedRecords) {
  // Packed records of one field concatenate: an empty record `3a 00` then
  // `3a 01 2a` hold the single value 42. L = 2 + 3 = 5.
  EXPECT_EQ(*Decode(HexBytes("05 3a 00 3a 01 2a")), 42u);
  EXPECT_EQ(*DecodeSlow(HexBytes("05 3a 00 3a 01 2a")), 42u);
  // A packed and an unpacked record mixed, one empty: still one value.
  EXPECT_EQ(*Decode(HexBytes("04 3a 00 38 07")), 7u);
}

TEST(BoxTest, DecodesShapeWithTailPaddingInReverseOrder) {
  // u64s first: 3a 01 07 (value 7).
  // Then shape, its fields in reverse order (layout before element_type):
  //   layout {tail_padding_alignment_in_elements: 1} = 80 01 01 (3 bytes)
  //   -> 2a 03 80 01 01 (5 bytes); element_type U64 -> 10 09 (2 bytes);
  //   shape payload 7 bytes -> 0a 07 2a 03 80 01 01 10 09 (9 bytes).
  // Payload 3 + 9 = 12 -> L = 0c.
  std::string b = HexBytes("0c 3a 01 07 0a 07 2a 03 80 01 01 10 09");
  absl::StatusOr<uint64_t> v = Decode(b);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 7u);
  EXPECT_EQ(*DecodeSlow(b), 7u);
  // memory_space (field 8, tag 0x40) is also harmless in a scalar layout:
  // layout 40 01 -> 2a 02 40 01; shape 0a 06 10 09 2a 02 40 01; L = 8 + 3.
  EXPECT_EQ(*Decode(HexBytes("0b 0a 06 10 09 2a 02 40 01 3a 01 07")), 7u);
}

TEST(BoxTest, DecodesModernXlaShape) {
  // Modern XLA's Layout::ToProto always writes
  // tail_padding_alignment_in_elements = 1: layout 80 01 01 -> 2a 03 80 01 01,
  // shape 10 09 2a 03 80 01 01 (7 bytes) -> 0a 07 ... (9 bytes).
  // Value 5: 3a 01 05. L = 9 + 3 = 12 = 0c.
  std::string b = HexBytes("0c 0a 07 10 09 2a 03 80 01 01 3a 01 05");
  EXPECT_EQ(*Decode(b), 5u);
  EXPECT_EQ(*Decode(b + std::string(20, '\0')), 5u);  // fast path
  EXPECT_EQ(*DecodeSlow(b), 5u);
  // 2^64-1: 3a 0a ff x9 01, L = 9 + 12 = 21 = 0x15.
  b = HexBytes("15 0a 07 10 09 2a 03 80 01 01 3a 0a ff ff ff ff ff ff ff ff ff 01");
  EXPECT_EQ(*Decode(b + std::string(20, '\0')), kMax);
  EXPECT_EQ(*DecodeSlow(b), kMax);
}

TEST(BoxTest, RoundTrips) {
  std::vector<uint64_t> values = {0, 1, 127, 128, uint64_t{1} << 32, kMax};
  for (int b = 0; b < 64; ++b) {
    values.push_back(uint64_t{1} << b);
    values.push_back((uint64_t{1} << b) - 1);
    values.push_back((uint64_t{1} << b) + 1);
  }
  for (bool shape : {false, true}) {
    BoxWriteOptions o;
    o.with_shape = shape;
    for (uint64_t v : values) {
      std::string b = Encode(v, o);
      size_t consumed = 0;
      absl::StatusOr<uint64_t> got = Decode(b, {}, &consumed);
      ASSERT_TRUE(got.ok()) << v << ": " << got.status();
      EXPECT_EQ(*got, v);
      EXPECT_EQ(consumed, b.size());
      got = DecodeSlow(b);
      ASSERT_TRUE(got.ok()) << v << ": " << got.status();
      EXPECT_EQ(*got, v);
      // WriteBox / BoxReader / BoxWriter agree with EncodeBox.
      std::string s;
      StringSink sink(&s);
      BoxWriter<StringSink> w(sink, o);
      ASSERT_TRUE(w.Write(v));
      EXPECT_EQ(s, b);
      MemorySource src(s);
      BoxReader<MemorySource> r(src);
      EXPECT_EQ(*r.Read(Frame{"x"}), v);
    }
  }
}

TEST(BoxTest, ManyBoxesBackToBack) {
  std::string s;
  StringSink sink(&s);
  std::vector<uint64_t> values;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5000; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    values.push_back(v);
    BoxWriteOptions o;
    o.with_shape = (i % 7 == 0);
    WriteBox(sink, v, o);
  }
  MemorySource src(s);
  testing::FaultOptions f;
  f.max_read = 5;
  testing::FaultSource slow(s, f);
  for (uint64_t v : values) {
    absl::StatusOr<uint64_t> a = ReadBox(src, Frame{"b"});
    absl::StatusOr<uint64_t> b = ReadBox(slow, Frame{"b"});
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    EXPECT_EQ(*a, v);
    EXPECT_EQ(*b, v);
  }
  EXPECT_EQ(src.available(), 0u);
}

// The length byte is read through a signed char by snapshot-unpack, so a box
// must stay under 128 bytes of payload. The largest box EncodeBox writes is
// with shape (6 bytes) + 3a 0a + a 10-byte varint = 18 bytes of payload,
// 19 in all: far under the ceiling. Check every bit width, both forms.
TEST(BoxTest, NoValueReaches128Bytes) {
  size_t largest = 0;
  for (bool shape : {false, true}) {
    BoxWriteOptions o;
    o.with_shape = shape;
    for (int bits = 0; bits <= 64; ++bits) {
      uint64_t hi = bits == 64 ? kMax : (uint64_t{1} << bits) - 1;
      uint64_t lo = bits == 0 ? 0 : uint64_t{1} << (bits - 1);
      for (uint64_t v : {lo, hi, lo | (hi >> 1)}) {
        std::string b = Encode(v, o);
        EXPECT_LT(b.size(), 128u);
        EXPECT_LE(b.size(), limits::kMaxBoxBytes);
        EXPECT_EQ(static_cast<unsigned char>(b[0]), b.size() - 1);
        EXPECT_LT(static_cast<unsigned char>(b[0]), 0x80);
        largest = std::max(largest, b.size());
      }
    }
  }
  EXPECT_EQ(largest, limits::kMaxBoxBytes);
  EXPECT_EQ(Encode(kMax, BoxWriteOptions{true}).size(), 19u);
  EXPECT_EQ(Encode(kMax).size(), 13u);
}

// --- strictness -------------------------------------------------------------

absl::Status DecodeError(const std::string& hex, BoxReadOptions o = {}) {
  std::string b = HexBytes(hex);
  absl::StatusOr<uint64_t> v = Decode(b, o);
  absl::StatusOr<uint64_t> slow = DecodeSlow(b, o);
  // The fast and slow paths agree.
  EXPECT_EQ(v.ok(), slow.ok()) << hex;
  if (v.ok()) return absl::OkStatus();
  EXPECT_EQ(v.status().message(), slow.status().message());
  return v.status();
}

TEST(BoxStrictTest, LengthByteZero) {
  absl::Status s = DecodeError("00 3a 01 05");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("test box"));
  EXPECT_THAT(s.message(), HasSubstr("0 (an empty box)"));
  EXPECT_THAT(s.message(), HasSubstr("at byte 0"));
}

// A valid payload of 129 bytes: 63 empty packed records (3a 00, 126 bytes)
// then 3a 01 05 (value 5). L = 129 = 0x81.
std::string LongPayloadHex() {
  std::string hex = "81";
  for (int i = 0; i < 63; ++i) hex += " 3a 00";
  return hex + " 3a 01 05";
}

TEST(BoxStrictTest, LengthByteHighBitStrict) {
  absl::Status s = DecodeError(LongPayloadHex());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("0x81"));
  EXPECT_THAT(s.message(), HasSubstr("sign-extends"));
  EXPECT_THAT(s.message(), HasSubstr("lenient"));
}

TEST(BoxStrictTest, LengthByteHighBitLenient) {
  BoxReadOptions o;
  o.lenient_length_byte = true;
  std::string b = HexBytes(LongPayloadHex());
  ASSERT_EQ(b.size(), 130u);
  size_t consumed = 0;
  absl::StatusOr<uint64_t> v = Decode(b, o, &consumed);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 5u);
  EXPECT_EQ(consumed, 130u);
  EXPECT_EQ(*DecodeSlow(b, o), 5u);
  // 0xff: 255 bytes, the most a lenient reader takes; truncated here.
  absl::Status s = DecodeError("ff 3a 01 05", o);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("declared 255 bytes but 3 remain"));
}

TEST(BoxStrictTest, NoValue) {
  // An empty packed record.
  absl::Status s = DecodeError("02 3a 00");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("exactly one u64s value"));
  EXPECT_THAT(s.message(), HasSubstr("0 values"));
  // Only a shape.
  s = DecodeError("06 0a 04 10 09 2a 00");
  EXPECT_THAT(s.message(), HasSubstr("0 values"));
}

TEST(BoxStrictTest, TwoValues) {
  // One packed record with two varints 01 02.
  absl::Status s = DecodeError("04 3a 02 01 02");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("2 values"));
  // Two packed records of one value each.
  EXPECT_THAT(DecodeError("06 3a 01 01 3a 01 02").message(),
              HasSubstr("2 values"));
  // Two unpacked values.
  EXPECT_THAT(DecodeError("04 38 01 38 02").message(), HasSubstr("2 values"));
}

TEST(BoxStrictTest, NonU64Shape) {
  // element_type F32 = 11 = 0x0b.
  absl::Status s = DecodeError("09 0a 04 10 0b 2a 00 3a 01 05");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("element_type 11"));
  // A shape with no element_type.
  EXPECT_THAT(DecodeError("07 0a 02 2a 00 3a 01 05").message(),
              HasSubstr("no element_type"));
  // A tuple_shapes entry (field 4, tag 0x22).
  EXPECT_THAT(DecodeError("0b 0a 06 10 09 22 02 10 09 3a 01 05").message(),
              HasSubstr("shape field 4"));
  // A layout with element_size_in_bits 4 (field 7, tag 0x38).
  EXPECT_THAT(DecodeError("0b 0a 06 10 09 2a 02 38 04 3a 01 05").message(),
              HasSubstr("element_size_in_bits 4"));
  // A layout with minor_to_major [0] (field 1, tag 0x0a).
  EXPECT_THAT(DecodeError("0c 0a 07 10 09 2a 03 0a 01 00 3a 01 05").message(),
              HasSubstr("non-empty minor_to_major"));
  // A layout with tiles (field 6, tag 0x32).
  EXPECT_THAT(DecodeError("0b 0a 06 10 09 2a 02 32 00 3a 01 05").message(),
              HasSubstr("layout field 6"));
}

TEST(BoxStrictTest, ShapeWithDimensions) {
  // dimensions [2]: 1a 01 02. Shape payload 10 09 1a 01 02 (5 bytes).
  absl::Status s = DecodeError("0a 0a 05 10 09 1a 01 02 3a 01 05");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("shape with dimensions"));
  // is_dynamic_dimension [false]: 32 01 00.
  EXPECT_THAT(DecodeError("0a 0a 05 10 09 32 01 00 3a 01 05").message(),
              HasSubstr("shape with dimensions"));
  // An empty packed dimensions list is still a scalar.
  EXPECT_EQ(*Decode(HexBytes("09 0a 04 10 09 1a 00 3a 01 05")), 5u);
}

TEST(BoxStrictTest, UnknownField) {
  // u64s then field 8 varint (tag 0x40): not allowed in a box.
  absl::Status s = DecodeError("05 3a 01 05 40 01");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("field 8 wire type 0"));
  EXPECT_THAT(s.message(), HasSubstr("at byte 4"));
  // s64s (field 6, tag 0x32) holding a value.
  EXPECT_THAT(DecodeError("03 32 01 05").message(),
              HasSubstr("field 6 wire type 2"));
  // u64s as fixed64 (wire type 1, tag 0x39).
  EXPECT_THAT(DecodeError("09 39 05 00 00 00 00 00 00 00").message(),
              HasSubstr("field 7 wire type 1"));
}

TEST(BoxStrictTest, MalformedVarint) {
  // The value varint ends at the end of its packed record: 80 with "more".
  absl::Status s = DecodeError("03 3a 01 80");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("malformed varint"));
  // A tag varint cut short by the box end.
  EXPECT_THAT(DecodeError("01 80").message(),
              HasSubstr("expected a LiteralProto field tag, found a malformed "
                        "or truncated varint (at byte 1)"));
  // A packed length past the end of the box: 1 byte is left after 3a 05.
  EXPECT_THAT(DecodeError("03 3a 05 01").message(),
              HasSubstr("expected field 7 length within the 1 byte left of "
                        "the LiteralProto, found 5 bytes (at byte 1)"));
  // An unpacked value cut short.
  EXPECT_THAT(DecodeError("02 38 ff").message(),
              HasSubstr("expected a varint value of LiteralProto field 7, "
                        "found a malformed or truncated varint (at byte 1)"));
}

TEST(BoxStrictTest, VarintOverflow) {
  // 10 bytes whose last carries bit 64 (02): more than 64 bits.
  absl::Status s = DecodeError("0c 3a 0a ff ff ff ff ff ff ff ff ff 02");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("malformed varint"));
  // 11 bytes.
  EXPECT_THAT(DecodeError("0d 3a 0b ff ff ff ff ff ff ff ff ff ff 01")
                  .message(),
              HasSubstr("malformed varint"));
  // The largest legal 10-byte varint still decodes; so does a redundant
  // (non-minimal) encoding of 0.
  EXPECT_EQ(*Decode(HexBytes("0c 3a 0a ff ff ff ff ff ff ff ff ff 01")), kMax);
  EXPECT_EQ(*Decode(HexBytes("04 3a 02 80 00")), 0u);
}

TEST(BoxStrictTest, Truncated) {
  for (const char* hex : {"", "04", "04 3a 02 80"}) {
    absl::Status s = DecodeError(hex);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << hex;
    EXPECT_THAT(s.message(), HasSubstr("test box")) << hex;
  }
  EXPECT_THAT(DecodeError("").message(), HasSubstr("the end of the data"));
  EXPECT_THAT(DecodeError("04 3a 02 80").message(),
              HasSubstr("declared 4 bytes but 3 remain (at byte 1)"));
}

TEST(BoxStrictTest, OffsetsIncludeBase) {
  std::string b = HexBytes("05 3a 01 05 40 01");
  MemorySource src(b, 1000);
  absl::StatusOr<uint64_t> v = ReadBox(src, Frame{"input", 3, "body length box"});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(),
              HasSubstr("input 3 body length box: expected"));
  EXPECT_THAT(v.status().message(), HasSubstr("(at byte 1004)"));
}

// The fast path (whole box in the window) and the slow path accept and
// reject the same bytes. Random mutations of valid boxes.
TEST(BoxStrictTest, FastAndSlowPathsAgree) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60000; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    std::string b = Encode(v, BoxWriteOptions{(i % 3) == 1});
    if (i % 3 == 2) {
      // The modern XLA shape (see DecodesModernXlaShape).
      std::string m = Encode(v);
      b = static_cast<char>(m[0] + 9) +
          HexBytes("0a 07 10 09 2a 03 80 01 01") + m.substr(1);
    }
    int flips = static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) {
      size_t at = rng() % b.size();
      b[at] = static_cast<char>(rng() % 4 == 0 ? rng() : b[at] ^ (1 << (rng() % 8)));
    }
    b += std::string(16, '\x00');
    absl::StatusOr<uint64_t> fast = Decode(b);
    absl::StatusOr<uint64_t> slow = DecodeSlow(b);
    ASSERT_EQ(fast.ok(), slow.ok()) << ToHex(b);
    if (fast.ok()) {
      EXPECT_EQ(*fast, *slow) << ToHex(b);
    } else {
      EXPECT_EQ(fast.status().message(), slow.status().message()) << ToHex(b);
    }
  }
}

}  // namespace
}  // namespace decomposed
