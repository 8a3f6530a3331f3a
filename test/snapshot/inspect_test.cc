// InspectFile on examples/example.decomposed_hlo_snapshot, whose
// layout is worked out below by hand from examples/make_example.py.
//
// Shapes (ShapeProto: element_type 2, dimensions 3 packed, layout 5,
// is_dynamic_dimension 6 packed; LayoutProto.minor_to_major 1 packed):
//   F32[2,3]: 10 0b | 1a 02 02 03 | 2a 04 (0a 02 01 00) | 32 02 00 00
//             = 2 + 4 + 6 + 4 = 16 bytes
//   S32[4]:   10 04 | 1a 01 04 | 2a 03 (0a 01 00) | 32 01 00
//             = 2 + 3 + 5 + 3 = 13 bytes
//   F32[]:    10 0b | 2a 00                                   = 4 bytes
// Region [0], the HloSnapshot. The entry computation (HloInstructionProto:
// name 1, opcode 2, shape 3, metadata 7, literal 8, parameter_number 9,
// id 35 (tag 98 02), operand_ids 36 (tag a2 02, packed)):
//   x       0a 01 "x" (3) + 12 09 "parameter" (11) + 1a 10 <F32[2,3]> (18)
//           + 48 00 (2) + 98 02 01 (3)                           = 37 bytes
//   y       3 + 11 + 1a 0d <S32[4]> (15) + 48 01 (2) + 3         = 34 bytes
//   two     0a 03 "two" (5) + 12 08 "constant" (10) + 1a 04 <F32[]> (6)
//           + 42 0c (0a 04 <F32[]> + 42 04 <2.0f>) (14) + 3      = 38 bytes
//   twos    0a 04 "twos" (6) + 12 09 "broadcast" (11) + 18 + 3
//           + a2 02 01 03 (4)                                    = 42 bytes
//   product 0a 07 "product" (9) + 12 08 "multiply" (10) + 18
//           + 3a 30 <OpMetadata: 0a 03 "mul" (5) + 12 0d "example/twice"
//           (15) + 1a 18 "examples/make_example.py" (26) + 20 70 (2)> (50)
//           + 3 + a2 02 02 01 04 (5)                             = 95 bytes
//   result  0a 06 "result" (8) + 12 05 "tuple" (7) + 1a 14 (10 0d 22 10
//           <F32[2,3]>) (22) + 3 + a2 02 01 05 (4)               = 44 bytes
//   HloComputationProto = 0a 04 "main" (6) + 12 25 <x> (39) + 12 22 <y> (36)
//                       + 12 26 <two> (40) + 12 2a <twos> (44)
//                       + 12 5f <product> (97) + 12 2c <result> (46)
//                       + 28 01 (2) + 30 06 (2)                   = 312 bytes
//   ProgramShapeProto = 0a 10 <F32> (18) + 0a 0d <S32> (15)
//                     + 12 14 (10 0d 22 10 <F32>) (22) + 1a 01 78 (3)
//                     + 1a 01 79 (3)                          = 61 bytes
//   HloModuleProto    = 0a 07 "example" (9) + 12 04 "main" (6)
//                     + 1a b8 02 <computation> (315)
//                     + 22 3d <program shape> (63) + 28 01 (2)
//                     + 30 01 (2)                             = 397 bytes
//   HloProto          = 0a 8d 03 <module>                     = 400 bytes
//   HloSnapshot       = 0a 90 03 <hlo>                        = 403 bytes
// Literals:
//   input 0  F32[2,3]: 0a 10 <F32> (18) + 42 18 <24 float bytes> (26) = 44
//   input 1  S32[4] [-2,-1,0,7]: 0a 0d <S32> (15) + 22 16 <varints
//            10 + 10 + 1 + 1 bytes> (24)                              = 39
//   output 0 F32[2,3]: as input 0                                      = 44
// The region [0] box holds 403, a two-byte varint: 04 3a 02 93 03 (5
// bytes); every other box is a minimal box of a value < 128: 4 bytes.
//   @0   box(403)  @5 snapshot (403)
//   @408 box(2)    input count
//   @412 box(44)   @416 input 0 (44)
//   @460 box(39)   @464 input 1 (39)
//   @503 box(1)    output count
//   @507 box(44)   @511 output 0 (44)
//   @555 end
#include "decomposed/snapshot/inspect.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::ReadFile;
using ::decomposed::test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kExample =
    std::string(DECOMPOSED_SOURCE_DIR) + "/examples/example.decomposed_hlo_snapshot";

void ExpectFrame(const ElementInfo& e, uint64_t box_offset, uint64_t offset,
                 uint64_t length) {
  EXPECT_EQ(e.box_offset, box_offset);
  EXPECT_EQ(e.box_length, offset - box_offset);
  EXPECT_EQ(e.offset, offset);
  EXPECT_EQ(e.length, length);
}

TEST(InspectTest, ExampleLayout) {
  absl::StatusOr<InspectReport> r = InspectFile(kExample);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->file_size, 555u);
  ExpectFrame(r->snapshot, 0, 5, 403);
  EXPECT_EQ(r->input_count_offset, 408u);
  ASSERT_EQ(r->inputs.size(), 2u);
  ExpectFrame(r->inputs[0].frame, 412, 416, 44);
  ExpectFrame(r->inputs[1].frame, 460, 464, 39);
  ASSERT_TRUE(r->output_count_offset.has_value());
  EXPECT_EQ(*r->output_count_offset, 503u);
  ASSERT_EQ(r->outputs.size(), 1u);
  ExpectFrame(r->outputs[0].frame, 507, 511, 44);

  EXPECT_TRUE(r->inputs[0].has_shape);
  EXPECT_EQ(r->inputs[0].shape.TypeName(), "F32");
  EXPECT_THAT(r->inputs[0].shape.dimensions, ElementsAre(2, 3));
  EXPECT_EQ(r->inputs[0].data_bytes, 24u);  // 6 floats
  EXPECT_EQ(r->inputs[1].shape.TypeName(), "S32");
  EXPECT_THAT(r->inputs[1].shape.dimensions, ElementsAre(4));
  EXPECT_EQ(r->inputs[1].data_bytes, 22u);  // the packed varints
  EXPECT_EQ(r->outputs[0].shape.TypeName(), "F32");

  ASSERT_TRUE(r->module.has_value());
  EXPECT_EQ(r->module->name, "example");
  EXPECT_EQ(r->module->entry_computation_name, "main");
  EXPECT_THAT(r->module->parameter_names, ElementsAre("x", "y"));
  EXPECT_THAT(r->module->parameters,
              ElementsAre("F32[2,3]{1,0}", "S32[4]{0}"));
  // The module's one-line summary, from the instructions listed above: one
  // computation of six instructions (x, y, two, twos, product, result), no
  // dot or convolution, so no notable opcodes and no FLOPs.
  EXPECT_EQ(r->module->summary,
            "module example: 1 computation, 6 instructions, entry main "
            "(2 parameters) -> (f32[2,3])");
  EXPECT_TRUE(r->module->summary_error.empty());
  EXPECT_THAT(InspectReportText(*r), HasSubstr("\n" + r->module->summary + "\n"));
  EXPECT_EQ(InspectReportJson(*r)["module"]["summary"], r->module->summary);
}

TEST(InspectTest, JsonHasTheKeysOfIssue2) {
  absl::StatusOr<InspectReport> r = InspectFile(kExample);
  ASSERT_TRUE(r.ok()) << r.status();
  nlohmann::ordered_json j = InspectReportJson(*r);
  // {"type": "decomposed", "snapshot": {"offset", "length"},
  //  "inputs": [{"offset", "length", "element_type", "dims"}],
  //  "outputs": [...] or null}; offset/length are the body's.
  EXPECT_EQ(j["type"], "decomposed");
  EXPECT_EQ(j["snapshot"]["offset"], 5);
  EXPECT_EQ(j["snapshot"]["length"], 403);
  ASSERT_TRUE(j["inputs"].is_array());
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["offset"], 416);
  EXPECT_EQ(j["inputs"][0]["length"], 44);
  EXPECT_EQ(j["inputs"][0]["element_type"], "F32");
  EXPECT_EQ(j["inputs"][0]["dims"], nlohmann::ordered_json({2, 3}));
  EXPECT_EQ(j["inputs"][1]["offset"], 464);
  EXPECT_EQ(j["inputs"][1]["length"], 39);
  EXPECT_EQ(j["inputs"][1]["element_type"], "S32");
  EXPECT_EQ(j["inputs"][1]["dims"], nlohmann::ordered_json({4}));
  ASSERT_TRUE(j["outputs"].is_array());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["offset"], 511);
  EXPECT_EQ(j["outputs"][0]["length"], 44);
  EXPECT_EQ(j["outputs"][0]["element_type"], "F32");
  // The length boxes too.
  EXPECT_EQ(j["inputs"][1]["box"]["offset"], 460);
  EXPECT_EQ(j["inputs"][1]["box"]["length"], 4);
  // Round-trips through text.
  EXPECT_EQ(nlohmann::ordered_json::parse(j.dump()), j);
}

TEST(InspectTest, OutputsNullWhenRegion2IsAbsent) {
  TempDir dir;
  std::string data = ReadFile(kExample);
  ASSERT_EQ(data.size(), 555u);
  std::string path = dir.Write("no_outputs", data.substr(0, 503));
  absl::StatusOr<InspectReport> r = InspectFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->output_count_offset.has_value());
  nlohmann::ordered_json j = InspectReportJson(*r);
  EXPECT_TRUE(j["outputs"].is_null());
  EXPECT_EQ(j["inputs"].size(), 2u);
  EXPECT_THAT(InspectReportText(*r), HasSubstr("outputs: absent"));
}

TEST(InspectTest, ErrorsNameFrameOffsetAndFile) {
  TempDir dir;
  std::string data = ReadFile(kExample);
  // Cut inside input 1's body (@464, 39 bytes): 10 bytes of it remain.
  std::string path = dir.Write("cut", data.substr(0, 474));
  absl::StatusOr<InspectReport> r = InspectFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(r.status().message(),
            "input 1 body: declared 39 bytes but 10 remain (at byte 464 of " +
                path + ")");
  // Trailing garbage after region [2].
  path = dir.Write("trailing", data + "xx");
  r = InspectFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("trailing data"));
  EXPECT_THAT(r.status().message(), HasSubstr("at byte 555 of " + path));
  // A missing file.
  r = InspectFile(dir.File("missing"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST(InspectTest, TextListsEveryFrame) {
  absl::StatusOr<InspectReport> r = InspectFile(kExample);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string text = InspectReportText(*r);
  EXPECT_THAT(text,
              HasSubstr("header: box @0 (5 bytes), HloSnapshot @5 (403 bytes)"));
  EXPECT_THAT(text, HasSubstr("input 0: box @412 (4 bytes), body @416 (44 bytes)"));
  EXPECT_THAT(text, HasSubstr("input 1: box @460 (4 bytes), body @464 (39 bytes)"));
  EXPECT_THAT(text, HasSubstr("output 0: box @507 (4 bytes), body @511 (44 bytes)"));
}

// A classic HloSnapshot, laid out by hand:
//   @0   0a 05 0a 03 0a 01 6d            hlo { hlo_module { name "m" } }
//   @7   12 16                           arguments, 22 bytes @9:
//          0a 0a (10 0b 1a 01 02 2a 03 0a 01 00)   F32[2]{0}
//          42 08 <1.0f 2.0f>                        f32s, 8 bytes
//   @31  1a 21                           result, 33 bytes @33:
//          0a 0e (10 0d 22 0a <S32[1]{0} shape>)   TUPLE (S32[1])
//   @49    52 0f                         tuple_literals, 15 bytes @51:
//            0a 0a (10 04 1a 01 01 2a 03 0a 01 00) 22 01 07
//   @66  end
TEST(InspectTest, ClassicFileThroughTheClassicMapping) {
  TempDir dir;
  const std::string f32_shape = test::HexBytes("10 0b 1a 01 02 2a 03 0a 01 00");
  const std::string s32_shape = test::HexBytes("10 04 1a 01 01 2a 03 0a 01 00");
  std::string file = test::HexBytes("0a 05 0a 03 0a 01 6d 12 16 0a 0a") +
                     f32_shape + test::HexBytes("42 08 00 00 80 3f 00 00 00 40") +
                     test::HexBytes("1a 21 0a 0e 10 0d 22 0a") + s32_shape +
                     test::HexBytes("52 0f 0a 0a") + s32_shape +
                     test::HexBytes("22 01 07");
  ASSERT_EQ(file.size(), 66u);
  std::string path = dir.Write("classic.pb", file);
  InspectOptions o;
  o.snapshot_type = SnapshotType::kAuto;
  absl::StatusOr<InspectReport> r = InspectFile(path, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->type, SnapshotType::kClassic);
  EXPECT_EQ(r->file_size, 66u);
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].frame.offset, 9u);
  EXPECT_EQ(r->inputs[0].frame.length, 22u);
  EXPECT_EQ(r->inputs[0].frame.box_length, 0u);  // no boxes in a classic file
  EXPECT_EQ(r->inputs[0].shape.ToString(), "F32[2]{0}");
  EXPECT_EQ(r->inputs[0].data_bytes, 8u);
  ASSERT_TRUE(r->output_count_offset.has_value());
  EXPECT_EQ(*r->output_count_offset, 33u);
  ASSERT_EQ(r->outputs.size(), 1u);  // the tuple's one element
  EXPECT_EQ(r->outputs[0].frame.offset, 51u);
  EXPECT_EQ(r->outputs[0].frame.length, 15u);
  EXPECT_EQ(r->outputs[0].shape.ToString(), "S32[1]{0}");
  ASSERT_TRUE(r->module.has_value());
  EXPECT_EQ(r->module->name, "m");
  // A module of no computations does not validate: no summary, the
  // validator's reason instead.
  EXPECT_TRUE(r->module->summary.empty());
  EXPECT_THAT(r->module->summary_error, HasSubstr("no computations"));
  nlohmann::ordered_json j = InspectReportJson(*r);
  EXPECT_TRUE(j["module"]["summary"].is_null());
  EXPECT_THAT(InspectReportText(*r),
              HasSubstr("module: m (entry ), invalid: "));
  EXPECT_EQ(j["type"], "snapshot");
  EXPECT_TRUE(j["snapshot"]["box"].is_null());
  EXPECT_TRUE(j["inputs"][0]["box"].is_null());
  EXPECT_EQ(j["outputs"][0]["offset"], 51);
  std::string text = InspectReportText(*r);
  EXPECT_THAT(text, HasSubstr("classic snapshot, 66 bytes"));
  EXPECT_THAT(text, HasSubstr("input 0: body @9 (22 bytes) F32[2]{0}"));
  EXPECT_THAT(text, HasSubstr("outputs: 1 (result @33)"));
  // The default type is auto: the file is detected as classic. Read as
  // decomposed, it is a broken decomposed file, and the error says what it
  // looks like.
  absl::StatusOr<InspectReport> detected = InspectFile(path);
  ASSERT_TRUE(detected.ok()) << detected.status();
  EXPECT_EQ(detected->type, SnapshotType::kClassic);
  InspectOptions as_decomposed;
  as_decomposed.snapshot_type = SnapshotType::kDecomposed;
  absl::StatusOr<InspectReport> broken = InspectFile(path, as_decomposed);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(std::string(broken.status().message()),
              HasSubstr("; this looks like a classic snapshot (HloSnapshot "
                        "field 1 (hlo) of "));
}

TEST(InspectTest, ExampleMatchesItsGenerator) {
  // The committed example is exactly what make_example.py writes.
  TempDir dir;
  std::string out = dir.File("regen");
  std::string cmd = "/usr/bin/python3 " + std::string(DECOMPOSED_SOURCE_DIR) +
                    "/examples/make_example.py " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(ReadFile(out), ReadFile(kExample));
}

}  // namespace
}  // namespace decomposed
