// Protobuf is the oracle: our hand-written decoders (ReadBox, ParseShape
// for ShapeProto and LayoutProto, PlanLiteral, DecodeLiteralToNpy)
// accept exactly the bytes protobuf accepts, with the same values, except
// where a documented stricter rule of ours refuses (each such case below
// names its rule; test/protobuf_oracle.h lists them). Every case's bytes
// are hand-encoded from the wire rules (docs/format.md §3):
//   tag = (field << 3) | wire type, a varint; varints 7 bits a byte, low
//   group first, 0x80 = "more follows"; LEN = size varint + bytes.
// Field numbers: LiteralProto shape 1 (0a), u64s 7 (38 unpacked, 3a
// packed), f32s 8; ShapeProto element_type 2 (10), dimensions 3 (18, 1a),
// tuple_shapes 4 (22), layout 5 (2a), is_dynamic_dimension 6 (30, 32);
// LayoutProto minor_to_major 1 (08, 0a), tiles 6 (32),
// element_size_in_bits 7 (38), memory_space 8 (40), dim_level_types 9
// (4a), physical_shape 10 (52), index_primitive_type 11 (58),
// pointer_primitive_type 12 (60), dim_unique 13 (6a), dim_ordered 14 (72),
// dynamic_shape_metadata_prefix_bytes 15 (78), tail_padding_alignment 16
// (80 01), split_configs 17 (8a 01). U64 = 9, F32 = 11, F64 = 12, TUPLE 13.
#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/testing/fault_source.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/xla/shape.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protobuf_oracle.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::HexBytes;

struct Case {
  const char* what;
  const char* hex;
  // Set when a documented stricter rule of ours refuses bytes protobuf
  // reads: the rule, as oracle::StricterRule names it.
  const char* stricter = nullptr;
};

constexpr const char* kTagOver32 =
    "a tag over 32 bits (protobuf cuts a 5-byte tag to 32 bits)";
constexpr const char* kGroup =
    "a group wire type (protobuf skips an unknown group)";
constexpr const char* kTenthByte =
    "a varint's 10th byte above 1 (protobuf drops bits past 64)";
constexpr const char* kLimit =
    "a limit of limits.h (kMaxRank, kMaxTupleDepth, kMaxShapeNodes)";
constexpr const char* kBoxList =
    "a field outside the box's list, present on the wire though empty or of "
    "a wire type protobuf keeps as unknown";

// Checks one decoder result against protobuf's. `ours` failed or not;
// `theirs` is protobuf's verdict (with the box rules, for boxes).
void ExpectAgreement(const Case& c, const std::string& bytes,
                     const absl::Status& ours, bool theirs, bool box) {
  SCOPED_TRACE(::testing::Message() << c.what << ": " << c.hex);
  if (c.stricter == nullptr) {
    EXPECT_EQ(ours.ok(), theirs) << ours;
    return;
  }
  EXPECT_TRUE(theirs) << "protobuf refuses it: no stricter rule needed";
  EXPECT_FALSE(ours.ok());
  const char* rule = oracle::StricterRule(ours, bytes, box);
  ASSERT_NE(rule, nullptr) << ours;
  EXPECT_STREQ(rule, c.stricter) << ours;
}

// --- ShapeProto -----------------------------------------------------------

const Case kShapeCases[] = {
    {"F32[]", "10 0b"},
    {"F32[2,3]{1,0}: packed dims 02 03, layout {minor_to_major 01 00}",
     "10 0b 1a 02 02 03 2a 04 0a 02 01 00"},
    {"unpacked dimensions 2, 3", "10 0b 18 02 18 03 2a 00"},
    {"tuple (F32[], F64[3])", "10 0d 22 02 10 0b 22 05 10 0c 1a 01 03"},
    {"is_dynamic_dimension packed [1, 0] and unpacked [1]",
     "10 0b 1a 02 02 03 32 02 01 00 30 01"},
    {"element_type 2^32 + 11 in 6 bytes: 8b 80 80 80 10 (low 32 bits: F32)",
     "10 8b 80 80 80 10"},
    {"element_type -2 in 10 bytes: fe, eight ff, 01",
     "10 fe ff ff ff ff ff ff ff ff 01"},
    {"element_type with a 10th byte of 02", "10 ff ff ff ff ff ff ff ff ff 02",
     kTenthByte},
    {"element_type 11 then 12: the last wins", "10 0b 10 0c"},
    {"element_type's tag 10 zero-padded to 5 bytes: 90 80 80 80 00",
     "90 80 80 80 00 0b"},
    {"element_type's tag in 6 bytes", "90 80 80 80 80 00 0b"},
    {"tag 2^32 + 16 in 5 bytes: 90 80 80 80 10", "90 80 80 80 10 0b",
     kTagOver32},
    {"tag 2^35 + 16 in 6 bytes", "90 80 80 80 80 01 0b"},
    {"field number 0", "10 0b 00 00"},
    {"field number 0, wire type 2", "10 0b 02 00"},
    {"an unknown group (field 7, 3b ... 3c)", "10 0b 3b 3c", kGroup},
    {"a group on field 3 (dimensions)", "10 0b 1b 1c", kGroup},
    {"a lone end-group tag", "10 0b 3c"},
    {"wire type 6 and 7", "10 0b 1e 00"},
    {"wire type 7", "10 0b 1f 00"},
    {"element_type as LEN: an unknown field to protobuf", "12 00 10 0b"},
    {"dimensions as fixed32: unknown", "10 0b 1d 01 00 00 00"},
    {"layout as a varint: unknown", "10 0b 28 00"},
    {"tuple_shapes as fixed64: unknown", "10 0d 21 00 00 00 00 00 00 00 00"},
    {"unknown field 7, fixed64", "10 0b 39 01 02 03 04 05 06 07 08"},
    {"unknown field 7, fixed64 cut short", "10 0b 39 01 02"},
    {"unknown field 7, LEN", "10 0b 3a 02 aa bb"},
    {"layout size 0 in 5 bytes: 80 80 80 80 00", "10 0b 2a 80 80 80 80 00"},
    {"layout size 0 in 6 bytes", "10 0b 2a 80 80 80 80 80 00"},
    {"packed dims size 1 in 5 bytes, dimension 4",
     "10 0b 1a 81 80 80 80 00 04"},
    {"packed dims size 1 in 6 bytes", "10 0b 1a 81 80 80 80 80 00 04"},
    {"unknown field 7 LEN, size 0 in 6 bytes", "10 0b 3a 80 80 80 80 80 00"},
    {"unknown LEN field of size 2^31 - 1 in 5 bytes",
     "10 0b 3a ff ff ff ff 07"},
    {"packed dims running past the shape", "10 0b 1a 09 02"},
    {"packed dims holding a cut varint", "10 0b 1a 01 80"},
    {"an unpacked dimension with no value", "10 0b 18"},
    {"two layouts merge: {minor_to_major 0} then {memory_space 1}",
     "10 0b 1a 01 05 2a 02 08 00 2a 02 40 01"},
    {"a tuple element shape that does not parse", "10 0d 22 01 18"},
    {"rank 65: one past kMaxRank",
     "10 0b 1a 41"
     " 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01"
     " 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01"
     " 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01"
     " 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01",
     kLimit},
};

TEST(ShapeAgreement, ParseShapeAcceptsExactlyWhatProtobufAccepts) {
  for (const Case& c : kShapeCases) {
    SCOPED_TRACE(::testing::Message() << c.what << ": " << c.hex);
    const std::string bytes = HexBytes(c.hex);
    xla::ShapeProto proto;
    const bool theirs = proto.ParseFromString(bytes);
    absl::StatusOr<Shape> ours = ParseShape(bytes, Frame{"shape"}, 100);
    ExpectAgreement(c, bytes, ours.status(), theirs, false);
    if (ours.ok() && theirs) {
      EXPECT_EQ(oracle::CompareShape(*ours, proto), "");
    }
  }
}

// --- LayoutProto: each case is a layout's bytes, read as the layout of an
// F32 shape (10 0b 2a <size> <layout>) and also by protobuf alone. --------

const Case kLayoutCases[] = {
    {"empty", ""},
    {"minor_to_major packed [1, 0]", "0a 02 01 00"},
    {"minor_to_major unpacked 1, 0", "08 01 08 00"},
    {"minor_to_major as fixed32: unknown", "0d 01 00 00 00"},
    {"element_size_in_bits 4", "38 04"},
    {"element_size_in_bits as fixed32: unknown", "3d 04 00 00 00"},
    {"memory_space 1; tail_padding_alignment_in_elements 1 (tag 80 01)",
     "40 01 80 01 01"},
    {"index and pointer primitive types, metadata prefix bytes",
     "58 05 60 06 78 08"},
    {"reserved field 2 as a varint", "10 01"},
    {"tiles { dimensions: [8, 128] }: 0a 03 08 80 01", "32 05 0a 03 08 80 01"},
    {"tiles {} twice", "32 00 32 00"},
    {"tiles as a varint: unknown", "30 00"},
    {"tiles: packed dimensions of size 5 in 2 bytes", "32 02 0a 05"},
    {"tiles: packed dimensions holding a cut varint", "32 03 0a 01 80"},
    {"tiles { dimensions: 8 } with a 6-byte tag", "32 07 88 80 80 80 80 00 08"},
    {"dim_level_types packed [0, 1]; dim_ordered packed [1]",
     "4a 02 00 01 72 01 01"},
    {"dim_level_types packed, a cut varint", "4a 01 80"},
    {"dim_unique packed, a cut varint", "6a 01 ff"},
    {"dim_unique unpacked 1", "68 01"},
    {"split_configs { dimension: 0 split_indices: [3] }",
     "8a 01 05 08 00 12 01 03"},
    {"split_configs: split_indices holding 80", "8a 01 03 12 01 80"},
    {"physical_shape { element_type: U8 dimensions: 4 }", "52 04 10 06 18 04"},
    {"physical_shape: a cut tag", "52 02 d2 fb"},
    {"physical_shape: a dimension with no value", "52 01 18"},
    {"physical_shape as a varint: unknown", "50 05"},
    {"field number 0", "00 00"},
    {"a 6-byte tag (memory_space)", "c0 80 80 80 80 00 01"},
    {"a group (field 5)", "2b 2c", kGroup},
};

TEST(LayoutAgreement, LayoutsAreReadExactlyAsProtobufReadsThem) {
  for (const Case& c : kLayoutCases) {
    SCOPED_TRACE(::testing::Message() << c.what << ": " << c.hex);
    const std::string layout = HexBytes(c.hex);
    ASSERT_LT(layout.size(), 128u);
    const std::string bytes = HexBytes("10 0b 2a") +
                              static_cast<char>(layout.size()) + layout;
    xla::LayoutProto alone;
    xla::ShapeProto proto;
    const bool theirs = proto.ParseFromString(bytes);
    EXPECT_EQ(alone.ParseFromString(layout), theirs);
    absl::StatusOr<Shape> ours = ParseShape(bytes, Frame{"shape"});
    ExpectAgreement(c, bytes, ours.status(), theirs, false);
    if (ours.ok() && theirs) {
      EXPECT_EQ(oracle::CompareShape(*ours, proto), "");
      EXPECT_EQ(oracle::CompareLayout(ours->layout, alone), "");
    }
  }
}

// --- The box: each case is a box payload (a LiteralProto); the box is its
// length byte and the payload. Protobuf's verdict is its parse plus the
// box rules (oracle::BoxRulesHold), and the value is u64s(0). -----------

const Case kBoxCases[] = {
    {"minimal: packed u64s [5]", "3a 01 05"},
    {"unpacked u64s 5", "38 05"},
    {"u64s split: an empty packed record, then 5", "3a 00 38 05"},
    {"two values", "38 05 38 06"},
    {"no value", "3a 00"},
    {"u64s 2^64 - 1 in 10 bytes", "3a 0a ff ff ff ff ff ff ff ff ff 01"},
    {"u64s with a 10th byte of 02", "3a 0a ff ff ff ff ff ff ff ff ff 02",
     kTenthByte},
    {"u64s unpacked with a 10th byte of 7f",
     "38 ff ff ff ff ff ff ff ff ff 7f", kTenthByte},
    {"u64s with 11 bytes", "3a 0b ff ff ff ff ff ff ff ff ff ff 01"},
    // Issue 9: the packed u64s tag 3a zero-padded to 6 bytes
    // (ba 80 80 80 80 00) was read as 5; protobuf refuses it.
    {"u64s's tag in 6 bytes: ba 80 80 80 80 00", "ba 80 80 80 80 00 01 05"},
    {"u64s's tag in 5 bytes: ba 80 80 80 00", "ba 80 80 80 00 01 05"},
    {"u64s's tag 2^32 + 58 in 5 bytes", "ba 80 80 80 10 01 05", kTagOver32},
    {"u64s's size 1 in 5 bytes", "3a 81 80 80 80 00 05"},
    {"u64s's size 1 in 6 bytes", "3a 81 80 80 80 80 00 05"},
    {"u64s's size past the box", "3a 05 05"},
    {"u64s as fixed64", "39 05 00 00 00 00 00 00 00"},
    {"u64s, then field 0", "3a 01 05 00 00"},
    {"u64s, then an unknown group (field 8)", "3a 01 05 43 44"},
    {"u64s, then f32s unpacked (field 8, fixed32)", "3a 01 05 45 00 00 00 00"},
    {"u64s, then f32s packed and empty", "3a 01 05 42 00", kBoxList},
    {"u64s, then s64s holding a value", "3a 01 05 32 01 05"},
    {"shape in two occurrences: F32, then U64 (the last wins)",
     "0a 02 10 0b 0a 02 10 09 3a 01 05"},
    {"shape occurrences splitting a field: 10 | 09",
     "0a 01 10 0a 01 09 3a 01 05"},
    {"shape as a varint", "08 00 3a 01 05"},
};

// A box's shape: each case is a ShapeProto, boxed as
// 0a <size> <shape> 3a 01 05.
const Case kBoxShapeCases[] = {
    {"U64", "10 09"},
    {"U64 layout {}", "10 09 2a 00"},
    {"U64 layout {tail_padding_alignment_in_elements: 1}",
     "10 09 2a 03 80 01 01"},
    {"U64 layout {memory_space: 1}", "10 09 2a 02 40 01"},
    // Issue 9: element_type's tag 10 in 6 bytes was read; protobuf
    // refuses it.
    {"element_type's tag in 6 bytes: 90 80 80 80 80 00",
     "90 80 80 80 80 00 09"},
    {"element_type's tag in 5 bytes", "90 80 80 80 00 09"},
    {"element_type's tag 2^32 + 16 in 5 bytes", "90 80 80 80 10 09",
     kTagOver32},
    {"element_type 2^32 + 9 (low 32 bits: U64)", "10 89 80 80 80 10"},
    {"element_type F32", "10 0b"},
    {"element_type F32 then U64: the last wins", "10 0b 10 09"},
    {"element_type U64 then F32", "10 09 10 0b"},
    {"no element_type", "2a 00"},
    {"element_type 0 (PRIMITIVE_TYPE_INVALID)", "10 00"},
    {"element_type as LEN: unknown", "12 00 10 09"},
    {"dimensions packed and empty", "10 09 1a 00"},
    {"dimensions [1]", "10 09 1a 01 01"},
    {"dimension 1 unpacked", "10 09 18 01"},
    {"is_dynamic_dimension packed and empty", "10 09 32 00"},
    {"is_dynamic_dimension [0]", "10 09 32 01 00"},
    {"tuple_shapes {}", "10 09 22 00"},
    {"an unknown field 7", "10 09 38 01"},
    {"layout {minor_to_major: []} packed", "10 09 2a 02 0a 00"},
    {"layout {minor_to_major: 0} unpacked", "10 09 2a 02 08 00"},
    {"layout {element_size_in_bits: 4}", "10 09 2a 02 38 04"},
    {"layout {element_size_in_bits: 0}", "10 09 2a 02 38 00"},
    {"layouts {element_size_in_bits: 4} {element_size_in_bits: 0} merge to 0",
     "10 09 2a 02 38 04 2a 02 38 00"},
    {"layout {tiles {}}", "10 09 2a 02 32 00"},
    {"layout {dim_level_types: []} packed and empty", "10 09 2a 02 4a 00",
     kBoxList},
    {"layout {index_primitive_type: 5}", "10 09 2a 02 58 05"},
    {"layout with a 6-byte tag", "10 09 2a 07 c0 80 80 80 80 00 01"},
    {"layout with a group", "10 09 2a 02 43 44"},
};

void CheckBox(const Case& c, const std::string& payload) {
  const std::string box = static_cast<char>(payload.size()) + payload;
  xla::LiteralProto proto;
  const bool theirs =
      proto.ParseFromString(payload) && oracle::BoxRulesHold(proto);
  MemorySource src(box);
  absl::StatusOr<uint64_t> ours = ReadBox(src, Frame{"box"});
  ExpectAgreement(c, payload, ours.status(), theirs, true);
  if (ours.ok() && theirs) {
    EXPECT_EQ(*ours, proto.u64s(0)) << c.what;
    EXPECT_EQ(src.position(), box.size()) << c.what;
  }
  // The slow path (1-byte reads) says the same.
  decomposed::testing::FaultOptions fo;
  fo.max_read = 1;
  decomposed::testing::FaultSource slow(box, fo);
  absl::StatusOr<uint64_t> again = ReadBox(slow, Frame{"box"});
  EXPECT_EQ(ours.status(), again.status()) << c.what;
  if (ours.ok() && again.ok()) {
    EXPECT_EQ(*ours, *again) << c.what;
  }
}

TEST(BoxAgreement, ReadBoxAcceptsExactlyWhatProtobufAndTheBoxRulesAccept) {
  for (const Case& c : kBoxCases) CheckBox(c, HexBytes(c.hex));
}

TEST(BoxAgreement, ABoxShapeIsReadExactlyAsProtobufReadsIt) {
  for (const Case& c : kBoxShapeCases) {
    const std::string shape = HexBytes(c.hex);
    ASSERT_LT(shape.size(), 100u);
    CheckBox(c, HexBytes("0a") + static_cast<char>(shape.size()) + shape +
                    HexBytes("3a 01 05"));
  }
}

// The two byte strings of issue 9, with the messages they now get.
TEST(BoxAgreement, SixByteTagsAreRefusedWithTheTagNamed) {
  const std::string tag6 = HexBytes("08 ba 80 80 80 80 00 01 05");
  MemorySource a(tag6);
  absl::StatusOr<uint64_t> v = ReadBox(a, Frame{"count box"});
  EXPECT_THAT(v.status().message(),
              ::testing::HasSubstr(
                  "count box: expected a LiteralProto field tag (field 1 to "
                  "2^29-1, at most 5 bytes), found tag 58 encoded in 6 bytes "
                  "(at byte 1)"));
  const std::string shape_tag6 =
      HexBytes("0c 0a 07 90 80 80 80 80 00 09 3a 01 05");
  MemorySource b(shape_tag6);
  v = ReadBox(b, Frame{"count box"});
  EXPECT_THAT(v.status().message(),
              ::testing::HasSubstr(
                  "count box: expected a ShapeProto field tag (field 1 to "
                  "2^29-1, at most 5 bytes), found tag 16 encoded in 6 bytes "
                  "(at byte 3)"));
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
    std::string layout = absl::StrCat("\x52", Len(shape.size()), shape);
    shape = absl::StrCat("\x10\x0b\x2a", Len(layout.size()), layout);
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
              ::testing::HasSubstr("found tag 34359738378 (over 32 bits) "
                                 "(at byte 4)"));

  MemorySource src(body);
  std::string npy;
  StringSink sink(&npy);
  absl::Status d =
      DecodeLiteralToNpy(src, body.size(), Frame{"input", 0, "body"}, sink);
  EXPECT_EQ(d.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.message(), ::testing::HasSubstr("(over 32 bits)"));
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
              ::testing::HasSubstr("input 0 shape: expected a varint value of "
                                 "ShapeProto field 2, found a malformed or "
                                 "truncated varint (at byte 2)"));
  MemorySource dec_src(split);
  std::string npy;
  StringSink sink(&npy);
  absl::Status d = DecodeLiteralToNpy(dec_src, split.size(),
                                      Frame{"input", 0, "body"}, sink);
  EXPECT_THAT(d.message(), ::testing::HasSubstr("input 0 shape: expected"));
}

}  // namespace
}  // namespace decomposed
