// Our hand-written decoders (ParseShape, PlanLiteral,
// DecodeLiteralToNpy) read what protobuf reads, and refuse what it refuses,
// where the wire allows more than one reading. Bytes are hand-encoded; each
// case also asks protobuf itself.
#include <string>

#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/xla/shape.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

TEST(ShapeWire, ElementTypeKeepsTheLow32BitsOfALongVarint) {
  // element_type (field 2, varint: tag 0x10) = 2^32 + 11, hand-encoded in
  // 7-bit groups, low first: 11 | 0x80, 0x80, 0x80, 0x80, 2^32 >> 28 = 0x10.
  // An enum is an int32: protobuf keeps the low 32 bits, 11 = F32.
  const std::string bytes("\x10\x8b\x80\x80\x80\x10", 6);
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->element_type, 11);
  EXPECT_EQ(s->ToString(), "F32[]");

  xla::ShapeProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_EQ(static_cast<int64_t>(proto.element_type()), s->element_type);
}

TEST(ShapeWire, NegativeElementTypeStaysNegative) {
  // -2 as a 10-byte varint (two's complement of 64 bits): 0xfe, eight 0xff,
  // 0x01. Protobuf reads the enum -2, an unknown PrimitiveType.
  const std::string bytes("\x10\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->element_type, -2);
  xla::ShapeProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_EQ(static_cast<int64_t>(proto.element_type()), -2);
}

// Tag 2^35 + 16: `tag >> 3` is 2^32 + 2, which cut to 32 bits reads as
// field 2 (element_type). Varint, 7 bits a byte, low first: 16 | 0x80,
// four 0x80 (bits 7-34 are 0), then bit 35 = 1 << (35 - 35) = 0x01.
const std::string kTagOver32Bits("\x90\x80\x80\x80\x80\x01", 6);

TEST(ShapeWire, TagOver32BitsIsRefusedAsProtobufRefusesIt) {
  const std::string bytes = kTagOver32Bits + "\x0b";  // value 11
  xla::ShapeProto proto;
  EXPECT_FALSE(proto.ParseFromString(bytes));
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(),
              testing::HasSubstr("found tag 34359738384 (over 32 bits) "
                                 "(at byte 0)"));
}

TEST(ShapeWire, TagsAreAtMostFiveBytesEvenWhenZeroPadded) {
  // element_type's tag 0x10 padded with redundant continuation bytes:
  // 10 | 0x80, 0x80 x3, 0x00 is 16 in 5 bytes, which protobuf reads...
  const std::string five("\x90\x80\x80\x80\x00\x0b", 6);
  xla::ShapeProto proto;
  EXPECT_TRUE(proto.ParseFromString(five));
  absl::StatusOr<Shape> s = ParseShape(five, Frame{"input 0 body shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "F32[]");
  // ...and in 6 bytes, which protobuf refuses (tags are 32-bit varints).
  const std::string six("\x90\x80\x80\x80\x80\x00\x0b", 7);
  EXPECT_FALSE(proto.ParseFromString(six));
  s = ParseShape(six, Frame{"input 0 body shape"});
  EXPECT_THAT(s.status().message(),
              testing::HasSubstr("found tag 16 encoded in 6 bytes (at byte 0)"));
}

TEST(ShapeWire, SizesAreAtMostFiveBytesEvenWhenZeroPadded) {
  // F32 (10 0b), then a length-delimited field whose size is written with
  // redundant continuation bytes: in 5 bytes protobuf reads it, in 6 not.
  struct Case {
    std::string field;
    bool protobuf_reads;
  };
  const Case cases[] = {
      // layout (2a), size 0 in 5 bytes / in 6 bytes.
      {std::string("\x2a\x80\x80\x80\x80\x00", 6), true},
      {std::string("\x2a\x80\x80\x80\x80\x80\x00", 7), false},
      // packed dimensions (1a), size 1 in 5 / 6 bytes, then dimension 4.
      {std::string("\x1a\x81\x80\x80\x80\x00\x04", 7), true},
      {std::string("\x1a\x81\x80\x80\x80\x80\x00\x04", 8), false},
      // an unknown field 7 (3a), size 0 in 6 bytes: protobuf still reads
      // the size to skip it.
      {std::string("\x3a\x80\x80\x80\x80\x80\x00", 7), false},
  };
  for (const Case& c : cases) {
    std::string bytes = std::string("\x10\x0b", 2) + c.field;
    xla::ShapeProto proto;
    EXPECT_EQ(proto.ParseFromString(bytes), c.protobuf_reads)
        << testing::PrintToString(c.field);
    absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
    EXPECT_EQ(s.ok(), c.protobuf_reads)
        << testing::PrintToString(c.field) << " " << s.status();
  }
}

TEST(ShapeWire, FieldNumberZeroIsRefusedAsProtobufRefusesIt) {
  // element_type F32, then tag 0x00 (field 0, varint) with value 0.
  const std::string bytes("\x10\x0b\x00\x00", 4);
  xla::ShapeProto proto;
  EXPECT_FALSE(proto.ParseFromString(bytes));
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  EXPECT_THAT(s.status().message(),
              testing::HasSubstr("found field number 0 (at byte 2)"));
  // Inside a layout (shape field 5, length 2) it is the same.
  const std::string in_layout("\x10\x0b\x2a\x02\x00\x00", 6);
  EXPECT_FALSE(proto.ParseFromString(in_layout));
  s = ParseShape(in_layout, Frame{"input 0 body shape"});
  EXPECT_THAT(s.status().message(),
              testing::HasSubstr("LayoutProto field tag"));
}

// Layout fields that do not affect indexing are still checked the way
// protobuf checks them. Each case: F32 (10 0b), then layout (field 5: 2a)
// holding one length-delimited field.
std::string F32WithLayoutField(const std::string& field) {
  return std::string("\x10\x0b\x2a", 3) +
         static_cast<char>(field.size()) + field;
}

TEST(ShapeWire, MalformedLayoutSubmessagesAreRefusedAsProtobufRefusesThem) {
  const std::string cases[] = {
      // physical_shape (field 10: 52), 2 bytes: a truncated varint tag.
      std::string("\x52\x02\xd2\xfb", 4),
      // tiles (field 6: 32), 2 bytes: dimensions packed (0a) of length 5.
      std::string("\x32\x02\x0a\x05", 4),
      // tiles, 3 bytes: packed dimensions holding one truncated varint.
      std::string("\x32\x03\x0a\x01\x80", 5),
      // dim_level_types packed (field 9: 4a), 1 byte: a truncated varint.
      std::string("\x4a\x01\x80", 3),
      // dim_unique packed (field 13: 6a), 1 byte: a truncated varint.
      std::string("\x6a\x01\xff", 3),
      // split_configs (field 17: 8a 01), 3 bytes: split_indices packed
      // (12) of length 1 holding 0x80.
      std::string("\x8a\x01\x03\x12\x01\x80", 6),
      // physical_shape holding a dimensions entry with no value: 18.
      std::string("\x52\x01\x18", 3),
  };
  for (const std::string& c : cases) {
    std::string bytes = F32WithLayoutField(c);
    xla::ShapeProto proto;
    EXPECT_FALSE(proto.ParseFromString(bytes)) << testing::PrintToString(c);
    absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument)
        << testing::PrintToString(c) << " " << s.status();
  }
}

TEST(ShapeWire, WellFormedLayoutSubmessagesParseAsProtobufParsesThem) {
  const std::string cases[] = {
      // physical_shape { element_type: U8 (6) dimensions: 4 }.
      std::string("\x52\x04\x10\x06\x18\x04", 6),
      // tiles { dimensions: [8, 128] } packed: 0a 03 08 80 01.
      std::string("\x32\x05\x0a\x03\x08\x80\x01", 7),
      // dim_level_types packed [0, 1]; dim_ordered packed [1].
      std::string("\x4a\x02\x00\x01\x72\x01\x01", 7),
      // split_configs { dimension: 0 split_indices: [3] }.
      std::string("\x8a\x01\x05\x08\x00\x12\x01\x03", 8),
      // physical_shape sent as a varint (wire type 0): an unknown field to
      // protobuf, skipped by both.
      std::string("\x50\x05", 2),
  };
  for (const std::string& c : cases) {
    std::string bytes = F32WithLayoutField(c);
    xla::ShapeProto proto;
    EXPECT_TRUE(proto.ParseFromString(bytes)) << testing::PrintToString(c);
    absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
    ASSERT_TRUE(s.ok()) << testing::PrintToString(c) << " " << s.status();
    EXPECT_EQ(s->ToString(), "F32[]");
    EXPECT_TRUE(s->has_layout);
  }
}

// A length prefix, hand-encoded: 7 bits a byte, low first.
std::string Len(size_t n) {
  std::string out;
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  out += static_cast<char>(n);
  return out;
}

// F32 wrapped `levels` times as shape { layout { physical_shape { ... } } }:
// each level is two protobuf message levels (a layout and a shape).
std::string NestedPhysicalShapes(int levels) {
  std::string shape = "\x10\x0b";
  for (int i = 0; i < levels; ++i) {
    std::string layout = "\x52" + Len(shape.size()) + shape;
    shape = "\x10\x0b\x2a" + Len(layout.size()) + layout;
  }
  return shape;
}

TEST(ShapeWire, PhysicalShapeNestingCountsTwoLevelsAgainstTheDepthLimit) {
  // 32 levels: the innermost shape is at depth 64 = kMaxTupleDepth.
  std::string ok = NestedPhysicalShapes(limits::kMaxTupleDepth / 2);
  xla::ShapeProto proto;
  EXPECT_TRUE(proto.ParseFromString(ok));
  absl::StatusOr<Shape> s = ParseShape(ok, Frame{"input 0 body shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "F32[]");
  // 33 levels (67 protobuf levels, still within protobuf's 100) is past our
  // documented limit: refused as a limit, not as malformed bytes.
  std::string deep = NestedPhysicalShapes(limits::kMaxTupleDepth / 2 + 1);
  EXPECT_TRUE(proto.ParseFromString(deep));
  s = ParseShape(deep, Frame{"input 0 body shape"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(LiteralWire, TagOver32BitsIsRefusedByTheScanAndTheDecoder) {
  // shape {element_type: F32} (0a 02 10 0b), then a record whose tag is
  // 2^35 + 10: cut to 32 bits, field 1 wire type 2, a second `shape`.
  // Varint: 10 | 0x80, four 0x80, 0x01; then length 2 and 10 0c
  // (element_type 12 = F64), which merged would turn the literal into F64.
  const std::string body = std::string("\x0a\x02\x10\x0b", 4) +
                           std::string("\x8a\x80\x80\x80\x80\x01", 6) +
                           std::string("\x02\x10\x0c", 3);
  xla::LiteralProto proto;
  EXPECT_FALSE(proto.ParseFromString(body));

  MemorySource scan_src(body);
  absl::StatusOr<LiteralPlan> scan =
      PlanLiteral(scan_src, body.size(), Frame{"input", 0, "body"});
  EXPECT_EQ(scan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scan.status().message(),
              testing::HasSubstr("found tag 34359738378 (over 32 bits) "
                                 "(at byte 4)"));

  MemorySource src(body);
  std::string npy;
  StringSink sink(&npy);
  absl::Status d =
      DecodeLiteralToNpy(src, body.size(), Frame{"input", 0, "body"}, sink);
  EXPECT_EQ(d.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.message(), testing::HasSubstr("(over 32 bits)"));
}

TEST(LiteralWire, ShapeOccurrencesMergeButEachMustBeWellFormed) {
  // shape (0a) twice: {element_type: F32} and {dimensions: 3} merge into
  // F32[3], as protobuf merges them.
  const std::string merged("\x0a\x02\x10\x0b\x0a\x02\x18\x03", 8);
  xla::LiteralProto proto;
  ASSERT_TRUE(proto.ParseFromString(merged));
  EXPECT_EQ(proto.shape().element_type(), xla::F32);
  EXPECT_EQ(proto.shape().dimensions_size(), 1);
  MemorySource src(merged);
  absl::StatusOr<LiteralPlan> scan =
      PlanLiteral(src, merged.size(), Frame{"input", 0, "body"});
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_EQ(scan->shape.ToString(), "F32[3]");

  // The tag of element_type (10) ends the first occurrence and its value
  // (0b) starts the second: concatenated they read F32, but protobuf parses
  // each occurrence by itself and refuses the first.
  const std::string split("\x0a\x01\x10\x0a\x01\x0b", 6);
  EXPECT_FALSE(proto.ParseFromString(split));
  MemorySource split_src(split);
  scan = PlanLiteral(split_src, split.size(), Frame{"input", 0, "body"});
  EXPECT_EQ(scan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scan.status().message(),
              testing::HasSubstr("input 0 shape: expected a well-formed "
                                 "shape field 2"));
  EXPECT_THAT(scan.status().message(), testing::HasSubstr("(at byte 2)"));
  MemorySource dec_src(split);
  std::string npy;
  StringSink sink(&npy);
  absl::Status d = DecodeLiteralToNpy(dec_src, split.size(),
                                      Frame{"input", 0, "body"}, sink);
  EXPECT_THAT(d.message(), testing::HasSubstr("input 0 shape: expected"));
}

}  // namespace
}  // namespace decomposed
