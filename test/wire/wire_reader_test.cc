// wire::FieldReader and the wire writer, on golden bytes worked out by hand
// from the protobuf encoding rules (docs/format.md §3):
//   tag     = (field << 3) | wire type, as a varint
//   varint  = 7 bits a byte, low group first, 0x80 = "more follows"
//   fixed32 / fixed64 = 4 / 8 bytes little-endian
//   LEN     = size varint, then that many bytes
// Each message is also read through a FaultSource with 1-byte reads (the
// buffered window logic of FdSource), which must see the same fields.
#include <cstdint>
#include <string>
#include <vector>

#include "decomposed/io/byte_source.h"
#include "decomposed/testing/fault_source.h"
#include "decomposed/wire/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed::wire {
namespace {

using ::decomposed::test::HexBytes;
using ::testing::HasSubstr;

// What a test reads from one field.
struct Seen {
  uint32_t number;
  WireType type;
  uint64_t tag_offset, offset, length, value;
  bool operator==(const Seen&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Seen& s) {
  return os << "{" << s.number << "," << s.type << "," << s.tag_offset << ","
            << s.offset << "," << s.length << "," << s.value << "}";
}

// Reads every field of `bytes` (payloads skipped) from source type S.
template <class S>
absl::Status ReadAll(S& src, uint64_t size, std::vector<Seen>* out,
                     FieldReaderOptions o = {}) {
  FieldReader<S> r(src, src.position() + size, Frame{"test"}, "TestMessage",
                   o);
  Field f;
  while (r.Next(f)) {
    out->push_back({f.number, f.wire_type, f.tag_offset, f.offset, f.length,
                    f.value});
  }
  return r.status();
}

// Reads from memory and through 1-byte reads; both must agree.
absl::Status ReadBoth(const std::string& bytes, std::vector<Seen>* out,
                      FieldReaderOptions o = {}) {
  out->clear();
  MemorySource mem(bytes);
  absl::Status a = ReadAll(mem, bytes.size(), out, o);
  decomposed::testing::FaultOptions fo;
  fo.max_read = 1;
  decomposed::testing::FaultSource slow(bytes, fo);
  std::vector<Seen> again;
  absl::Status b = ReadAll(slow, bytes.size(), &again, o);
  EXPECT_EQ(a, b);
  EXPECT_EQ(*out, again);
  return a;
}

TEST(FieldReader, GoldenFieldsOfEveryWireType) {
  const std::string bytes = HexBytes(
      // field 1 varint: tag 08; 150 = 0x96 = 0b1_0010110: groups 0x16, 0x01
      // -> 96 01.
      "08 96 01"
      // field 2 fixed64: tag (2 << 3) | 1 = 0x11; 0x0102030405060708 LE.
      "11 08 07 06 05 04 03 02 01"
      // field 3 fixed32: tag (3 << 3) | 5 = 0x1d; 0x12345678 LE.
      "1d 78 56 34 12"
      // field 4 LEN: tag (4 << 3) | 2 = 0x22; size 3; "abc".
      "22 03 61 62 63"
      // field 536870911 (2^29 - 1, the largest) varint: tag 2^32 - 8 =
      // 0xfffffff8 in 5 groups: 78|80, 7f|80, 7f|80, 7f|80, 0f -> f8 ff ff ff
      // 0f; value 0.
      "f8 ff ff ff 0f 00");
  std::vector<Seen> seen;
  ASSERT_TRUE(ReadBoth(bytes, &seen).ok());
  const std::vector<Seen> want = {
      {1, kVarint, 0, 1, 2, 150},
      {2, kFixed64, 3, 4, 8, 0x0102030405060708u},
      {3, kFixed32, 12, 13, 4, 0x12345678u},
      {4, kLen, 17, 19, 3, 0},
      {536870911, kVarint, 22, 27, 1, 0},
  };
  EXPECT_EQ(seen, want);
}

TEST(FieldReader, VarintsOfTenBytes) {
  // 2^64 - 1: nine ff (63 bits), then bit 63 alone: 01.
  std::vector<Seen> seen;
  ASSERT_TRUE(ReadBoth(HexBytes("08 ff ff ff ff ff ff ff ff ff 01"), &seen).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].value, ~uint64_t{0});
  EXPECT_EQ(seen[0].length, 10u);
  // A 10th byte of 02 carries bit 64: refused (docs/format.md §3.1: protobuf
  // drops it; we refuse it).
  seen.clear();
  absl::Status s = ReadBoth(HexBytes("08 ff ff ff ff ff ff ff ff ff 02"), &seen);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("test: expected a varint value of TestMessage field 1, "
                        "found a malformed or truncated varint (at byte 0)"));
  // Eleven bytes.
  s = ReadBoth(HexBytes("08 80 80 80 80 80 80 80 80 80 80 00"), &seen);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(FieldReader, TagRules) {
  std::vector<Seen> seen;
  // Field 1 varint (tag 08) zero-padded to 5 bytes: 88 80 80 80 00, value 1.
  ASSERT_TRUE(ReadBoth(HexBytes("88 80 80 80 00 01"), &seen).ok());
  EXPECT_EQ(seen, (std::vector<Seen>{{1, kVarint, 0, 5, 1, 1}}));
  // ... and to 6 bytes: refused, as protobuf refuses it.
  absl::Status s = ReadBoth(HexBytes("88 80 80 80 80 00 01"), &seen);
  EXPECT_THAT(s.message(),
              HasSubstr("expected a TestMessage field tag (field 1 to 2^29-1, "
                        "at most 5 bytes), found tag 8 encoded in 6 bytes "
                        "(at byte 0)"));
  // Field number 0 (tag 00, then a value).
  s = ReadBoth(HexBytes("08 01 00 01"), &seen);
  EXPECT_THAT(s.message(), HasSubstr("found field number 0 (at byte 2)"));
  // Tag 2^32 + 8 in 5 bytes: 88 80 80 80 10 (bit 32 is bit 4 of group 5).
  s = ReadBoth(HexBytes("88 80 80 80 10 01"), &seen);
  EXPECT_THAT(s.message(), HasSubstr("found tag 4294967304 (over 32 bits)"));
  // A tag cut short by the end of the message.
  s = ReadBoth(HexBytes("08 01 88"), &seen);
  EXPECT_THAT(s.message(),
              HasSubstr("expected a TestMessage field tag, found a malformed "
                        "or truncated varint (at byte 2)"));
}

TEST(FieldReader, GroupsAndUnusedWireTypesAreRefused) {
  // Wire types 3 and 4 (start / end group) and 6, 7 on field 5:
  // (5 << 3) | t = 2b, 2c, 2e, 2f.
  for (const char* tag : {"2b", "2c", "2e", "2f"}) {
    std::vector<Seen> seen;
    absl::Status s = ReadBoth(HexBytes(std::string("08 01 ") + tag), &seen);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << tag;
    EXPECT_THAT(s.message(),
                HasSubstr("expected a TestMessage field of wire type 0, 1, 2 "
                          "or 5, found field 5 wire type"));
    EXPECT_THAT(s.message(), HasSubstr("(at byte 2)"));
  }
}

TEST(FieldReader, SizeRules) {
  std::vector<Seen> seen;
  // Size 3 zero-padded to 5 bytes (83 80 80 80 00): read.
  ASSERT_TRUE(ReadBoth(HexBytes("22 83 80 80 80 00 61 62 63"), &seen).ok());
  EXPECT_EQ(seen, (std::vector<Seen>{{4, kLen, 0, 6, 3, 0}}));
  // ... to 6 bytes: protobuf refuses it, and so do we ...
  const std::string six = HexBytes("22 83 80 80 80 80 00 61 62 63");
  absl::Status s = ReadBoth(six, &seen);
  EXPECT_THAT(s.message(),
              HasSubstr("expected a TestMessage field 4 length of at most 5 "
                        "bytes and 2147483631 (protobuf's limits), found 3 in "
                        "6 bytes (at byte 0)"));
  // ... unless the option for literal bodies says otherwise.
  seen.clear();
  FieldReaderOptions large;
  large.large_len_fields = true;
  ASSERT_TRUE(ReadBoth(six, &seen, large).ok());
  EXPECT_EQ(seen, (std::vector<Seen>{{4, kLen, 0, 7, 3, 0}}));
  // 2^31 - 1 in 5 bytes (ff ff ff ff 07): over protobuf's INT_MAX - 16,
  // refused for that before the (short) message is looked at ...
  s = ReadBoth(HexBytes("22 ff ff ff ff 07"), &seen);
  EXPECT_THAT(s.message(), HasSubstr("found 2147483647 in 5 bytes"));
  // ... and with the option, refused because the message is shorter.
  s = ReadBoth(HexBytes("22 ff ff ff ff 07"), &seen, large);
  EXPECT_THAT(s.message(),
              HasSubstr("expected field 4 length within the 0 bytes left of "
                        "the TestMessage, found 2147483647 bytes (at byte 0)"));
  // A size past the end of the message.
  s = ReadBoth(HexBytes("08 01 22 05 61"), &seen);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("expected field 4 length within the 1 byte left of "
                        "the TestMessage, found 5 bytes (at byte 2)"));
}

TEST(FieldReader, FixedValuesPastTheEndAreRefused) {
  std::vector<Seen> seen;
  absl::Status s = ReadBoth(HexBytes("1d 78 56 34"), &seen);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("expected TestMessage field 3 of 4 bytes within the 3 "
                        "bytes left, found a field running past the end "
                        "(at byte 0)"));
}

TEST(FieldReader, ASourceShorterThanTheMessageIsOutOfRange) {
  const std::string bytes = HexBytes("08 01 22 03 61");
  MemorySource src(bytes);
  FieldReader<MemorySource> r(src, 8, Frame{"test"}, "TestMessage");
  Field f;
  EXPECT_FALSE(r.Next(f));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(),
              HasSubstr("declared 8 bytes but 5 remain (at byte 0)"));
}

TEST(FieldReader, AnIoErrorIsPassedOnWithTheFrame) {
  const std::string bytes = HexBytes("08 96 01 08 96 01");
  decomposed::testing::FaultOptions fo;
  fo.max_read = 1;
  fo.fail_on_call = 3;
  decomposed::testing::FaultSource src(bytes, fo);
  FieldReader<decltype(src)> r(src, bytes.size(), Frame{"test"},
                               "TestMessage");
  Field f;
  while (r.Next(f)) {
  }
  // EIO, as absl::ErrnoToStatus maps it.
  EXPECT_EQ(r.status().code(), absl::ErrnoToStatus(EIO, "").code());
  EXPECT_THAT(r.status().message(), HasSubstr("test: reading at byte"));
}

// field 5 packed varints [1, 150, 0]: tag (5 << 3) | 2 = 2a, size 4,
// 01 | 96 01 | 00; then field 5 unpacked (tag 28) 7; then field 6 packed
// fixed32 [1, 2]: tag 32, size 8; then field 6 unpacked fixed32 (tag 35) 3.
const char kRepeated[] =
    "2a 04 01 96 01 00  28 07  32 08 01 00 00 00 02 00 00 00  35 03 00 00 00";

template <class S>
void ReadRepeated(S& src, uint64_t size) {
  FieldReader<S> r(src, size, Frame{"test"}, "TestMessage");
  std::vector<uint64_t> varints;
  std::vector<uint32_t> fixed;
  Field f;
  while (r.Next(f)) {
    if (f.number == 5) {
      ASSERT_TRUE(r.ForEachVarint(f, [&](uint64_t v) { varints.push_back(v); }));
    } else if (f.number == 6) {
      ASSERT_TRUE(
          r.template ForEachFixed<uint32_t>(f, [&](uint32_t v) { fixed.push_back(v); }));
    }
  }
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(varints, (std::vector<uint64_t>{1, 150, 0, 7}));
  EXPECT_EQ(fixed, (std::vector<uint32_t>{1, 2, 3}));
}

TEST(FieldReader, PackedAndUnpackedRepeatedScalars) {
  const std::string bytes = HexBytes(kRepeated);
  MemorySource mem(bytes);
  ReadRepeated(mem, bytes.size());
  decomposed::testing::FaultOptions fo;
  fo.max_read = 1;
  decomposed::testing::FaultSource slow(bytes, fo);
  ReadRepeated(slow, bytes.size());
}

TEST(FieldReader, MalformedPackedListsAreRefused) {
  // Packed varints holding a truncated varint (80).
  std::string bytes = HexBytes("2a 02 01 80");
  MemorySource src(bytes);
  FieldReader<MemorySource> r(src, bytes.size(), Frame{"test"}, "TestMessage");
  Field f;
  ASSERT_TRUE(r.Next(f));
  EXPECT_FALSE(r.ForEachVarint(f, [](uint64_t) {}, "u64s"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("expected a u64s varint, found a malformed varint "
                        "(at byte 3)"));
  EXPECT_FALSE(r.Next(f));  // sticky
  // Packed fixed32 of 3 bytes.
  bytes = HexBytes("32 03 01 00 00");
  MemorySource src2(bytes);
  FieldReader<MemorySource> r2(src2, bytes.size(), Frame{"test"}, "TestMessage");
  ASSERT_TRUE(r2.Next(f));
  EXPECT_FALSE(r2.ForEachFixed<uint32_t>(f, [](uint32_t) {}));
  EXPECT_THAT(r2.status().message(),
              HasSubstr("expected packed TestMessage field 6 of whole 4-byte "
                        "values, found 3 bytes (at byte 0)"));
  // A callback's error stops the walk and is the reader's status.
  bytes = HexBytes(kRepeated);
  MemorySource src3(bytes);
  FieldReader<MemorySource> r3(src3, bytes.size(), Frame{"test"}, "TestMessage");
  ASSERT_TRUE(r3.Next(f));
  int calls = 0;
  EXPECT_FALSE(r3.ForEachVarint(f, [&](uint64_t) {
    return ++calls == 2 ? absl::ResourceExhaustedError("enough")
                        : absl::OkStatus();
  }));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r3.status().code(), absl::StatusCode::kResourceExhausted);
}

// Outer { field 1 varint 1; field 7 Inner { field 1 varint 42 } = 3a 02 08
// 2a; field 2 varint 2 }. Reading Inner through Submessage, through Payload,
// or not at all leaves the outer reader at field 2 each time.
template <class S>
void ReadNested(S& src, uint64_t size, int how) {
  FieldReader<S> r(src, size, Frame{"test"}, "Outer");
  Field f;
  std::vector<uint32_t> outer;
  uint64_t inner_value = 0;
  while (r.Next(f)) {
    outer.push_back(f.number);
    if (!f.Is(7, kLen)) continue;
    EXPECT_EQ(f.offset, 4u);
    EXPECT_EQ(f.length, 2u);
    if (how == 1) {
      FieldReader<S> inner = r.Submessage(f, "Inner");
      Field g;
      while (inner.Next(g)) inner_value = g.value;
      ASSERT_TRUE(inner.ok()) << inner.status();
    } else if (how == 2) {
      SubSource<S> view = r.Payload(f);
      EXPECT_EQ(view.position(), 4u);
      EXPECT_FALSE(view.Pull(3));  // bounded at the field's end
      FieldReader<SubSource<S>> inner(view, f.end(), Frame{"test"}, "Inner");
      Field g;
      while (inner.Next(g)) inner_value = g.value;
      ASSERT_TRUE(inner.ok()) << inner.status();
    }
  }
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(outer, (std::vector<uint32_t>{1, 7, 2}));
  EXPECT_EQ(inner_value, how == 0 ? 0u : 42u);
}

TEST(FieldReader, SubmessagesPayloadViewsAndSkipping) {
  const std::string bytes = HexBytes("08 01 3a 02 08 2a 10 02");
  for (int how : {0, 1, 2}) {
    MemorySource mem(bytes);
    ReadNested(mem, bytes.size(), how);
    decomposed::testing::FaultOptions fo;
    fo.max_read = 1;
    decomposed::testing::FaultSource slow(bytes, fo);
    ReadNested(slow, bytes.size(), how);
  }
}

TEST(FieldReader, ReadPayloadCopiesTheBytes) {
  const std::string bytes = HexBytes("22 03 61 62 63 08 01");
  decomposed::testing::FaultOptions fo;
  fo.max_read = 1;
  decomposed::testing::FaultSource src(bytes, fo);
  FieldReader<decltype(src)> r(src, bytes.size(), Frame{"test"}, "TestMessage");
  Field f;
  ASSERT_TRUE(r.Next(f));
  std::string payload;
  ASSERT_TRUE(r.ReadPayload(f, &payload));
  EXPECT_EQ(payload, "abc");
  ASSERT_TRUE(r.Next(f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_FALSE(r.Next(f));
  EXPECT_TRUE(r.ok());
}

TEST(FieldReader, ABoundedMessageInsideALongerSource) {
  // The reader stops at `end` even though the source holds more.
  const std::string bytes = HexBytes("08 01 08 02 08 03");
  MemorySource src(bytes);
  FieldReader<MemorySource> r(src, 4, Frame{"test"}, "TestMessage");
  Field f;
  int n = 0;
  while (r.Next(f)) ++n;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(n, 2);
  EXPECT_EQ(src.position(), 4u);
  // A varint the end cuts short is malformed even if the source goes on.
  const std::string cut = HexBytes("08 96 01");
  MemorySource src2(cut);
  FieldReader<MemorySource> r2(src2, 2, Frame{"test"}, "TestMessage");
  EXPECT_FALSE(r2.Next(f));
  EXPECT_EQ(r2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WireWriter, GoldenBytes) {
  using ::decomposed::test::ToHex;
  std::string s;
  AppendVarintField(&s, 1, 150);                 // 08 96 01
  AppendLenField(&s, 4, "abc");                  // 22 03 61 62 63
  AppendLenHeader(&s, 5, 300);                   // 2a ac 02 (300 = 0x12c)
  AppendTag(&s, 536870911, kVarint);             // f8 ff ff ff 0f
  const int64_t packed[] = {1, 150, -1};
  AppendPackedVarints(&s, packed);  // 01 96 01 ff x9 01
  EXPECT_EQ(ToHex(s),
            "08 96 01 22 03 61 62 63 2a ac 02 f8 ff ff ff 0f 01 96 01 "
            "ff ff ff ff ff ff ff ff ff 01");
  EXPECT_EQ(VarintFieldSize(1, 150), 3u);
  EXPECT_EQ(LenFieldSize(4, 3), 5u);
  EXPECT_EQ(LenFieldSize(5, 300), 303u);
  char buf[kMaxVarintBytes];
  EXPECT_EQ(WriteTag(16, kVarint, buf) - buf, 2);  // 80 01
  EXPECT_EQ(ToHex(std::string_view(buf, 2)), "80 01");
}

}  // namespace
}  // namespace decomposed::wire
