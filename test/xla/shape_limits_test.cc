// ParseShape bounds the memory a hostile ShapeProto can cost: repeated
// records merge, so counts are bounded in total, not per record.
#include <string>

#include "decomposed/xla/shape.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

TEST(ShapeLimits, ManyEmptyTupleShapesAreRefused) {
  // 100000 x `tuple_shapes {}` (tag 0x22, length 0): 200 KB of input that
  // became 100000 Shape objects (~16 MB).
  std::string bytes = "\x10\x0d";  // element_type: TUPLE
  for (int i = 0; i < 100000; ++i) bytes += std::string("\x22\x00", 2);
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.status().message(), testing::HasSubstr("tuple element"));
}

TEST(ShapeLimits, TupleWithManyElementsWithinTheLimitParses) {
  std::string bytes = "\x10\x0d";
  for (size_t i = 0; i < limits::kMaxShapeNodes; ++i) {
    bytes += std::string("\x22\x00", 2);
  }
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"result shape"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->tuple_shapes.size(), limits::kMaxShapeNodes);
}

TEST(ShapeLimits, DynamicDimensionFlagsAreBoundedInTotal) {
  // Unpacked is_dynamic_dimension (field 6, varint): one record each.
  std::string bytes = "\x10\x0b";  // F32
  for (int i = 0; i < 100000; ++i) bytes += "\x30\x01";
  absl::StatusOr<Shape> s = ParseShape(bytes, Frame{"input 0 body shape"});
  // A limits.h limit (kMaxRank), so kResourceExhausted (status.h), as for
  // dimensions and minor_to_major past kMaxRank (test/base/limits_test.cc).
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace decomposed
