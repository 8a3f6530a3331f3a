// ParseShape reads a ShapeProto as protobuf does, field by field, where the
// wire allows more than one reading.
#include <string>

#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/shape.h"
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

}  // namespace
}  // namespace decomposed
