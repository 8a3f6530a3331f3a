#include "decomposed/snapshot/verify.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/producer.h"
#include "google/protobuf/stubs/common.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}
std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/verify_test_" + name;
}
void WriteFile(const std::string& path, std::string_view data) {
  std::ofstream(path, std::ios::binary).write(data.data(), data.size());
}

// F32[2]{0} = [1, 2], as modern XLA writes it.
std::string GoodBody() {
  float v[2] = {1, 2};
  auto b = ArrayLiteral(ArrayView{v, PrimitiveType::kF32, {2}, std::nullopt});
  EXPECT_TRUE(b->Prepare().ok());
  std::string out;
  EXPECT_TRUE(b->Write([&](std::string_view c) {
                 out.append(c);
                 return absl::OkStatus();
               }).ok());
  return out;
}

// A decomposed file: module "m", the given input bodies (unvalidated), one
// good output.
std::string File(const std::vector<std::string>& inputs) {
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  EXPECT_TRUE(w.WriteModule(Bytes({0x0a, 0x01, 0x6d})).ok());
  std::vector<std::unique_ptr<LiteralSource>> owned;
  std::vector<LiteralSource*> ptrs;
  for (const auto& b : inputs) {
    owned.push_back(SerializedLiteral(b, /*validate=*/false));
    ptrs.push_back(owned.back().get());
  }
  EXPECT_TRUE(w.WriteInputs(ptrs).ok());
  auto o = SerializedLiteral(GoodBody());
  EXPECT_TRUE(w.WriteOutputs(std::vector<LiteralSource*>{o.get()}).ok());
  EXPECT_TRUE(w.Finish().ok());
  return out;
}

VerifyReport Verify(const std::string& bytes, const std::string& name,
                    SnapshotType type = SnapshotType::kDecomposed) {
  std::string path = TempPath(name);
  WriteFile(path, bytes);
  VerifyOptions o;
  o.snapshot_type = type;
  absl::StatusOr<VerifyReport> r = VerifyFile(path, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : VerifyReport{};
}

// Offsets of a File() with two inputs: [0,4) snapshot box, [4,11) snapshot,
// [11,15) input count box, [15,19) input 0 length box, then body 0.
constexpr uint64_t kInput0Body = 19;

TEST(Verify, GoodFileHasNoProblems) {
  VerifyReport r = Verify(File({GoodBody(), GoodBody()}), "good");
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(r.inputs, 2u);
  ASSERT_TRUE(r.outputs.has_value());
  EXPECT_EQ(*r.outputs, 1u);
}

TEST(Verify, SignedLengthByte) {
  std::string f = File({GoodBody()});
  f[0] = static_cast<char>(0x83);
  VerifyReport r = Verify(f, "signed");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "header length box");
  EXPECT_EQ(r.problems[0].offset, 0u);
}

TEST(Verify, SnapshotThatIsNotAnHloSnapshotAndLiteralsStillChecked) {
  std::string f = File({GoodBody(), GoodBody()});
  f.replace(4, 7, std::string(7, '\xff'));
  VerifyReport r = Verify(f, "badsnap");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "header");
  EXPECT_EQ(r.problems[0].offset, 4u);
  EXPECT_EQ(r.inputs, 2u) << "the literals after it were still checked";
}

TEST(Verify, BadCountBox) {
  std::string f = File({GoodBody()});
  f[12] = 0x38;  // 03 38 01 ...: an unpacked u64s then a stray byte
  VerifyReport r = Verify(f, "count");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "input count box");
  ASSERT_TRUE(r.problems[0].offset.has_value());
  EXPECT_GE(*r.problems[0].offset, 11u);
  EXPECT_LT(*r.problems[0].offset, 15u);
}

TEST(Verify, TruncatedBody) {
  std::string f = File({GoodBody(), GoodBody()});
  const uint64_t body1 = kInput0Body + GoodBody().size() + 4;
  f.resize(body1 + 5);
  VerifyReport r = Verify(f, "trunc");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "input 1 body");
  EXPECT_EQ(r.problems[0].offset, body1);
  EXPECT_EQ(r.problems[0].code, absl::StatusCode::kOutOfRange);
}

TEST(Verify, LiteralDefectsAreReportedOneEachAndTheWalkGoesOn) {
  // Input 0: no layout (XLA: "LiteralProto has no layout").
  std::string no_layout =
      Bytes({0x0a, 0x05, 0x10, 0x0b, 0x1a, 0x01, 0x02, 0x42, 0x08, 0, 0, 0,
             0, 0, 0, 0, 0});
  // Input 1: good.  Input 2: F32[3] with only 2 values.
  std::string short_data =
      Bytes({0x0a, 0x0a, 0x10, 0x0b, 0x1a, 0x01, 0x03, 0x2a, 0x03, 0x0a,
             0x01, 0x00, 0x42, 0x08, 0, 0, 0, 0, 0, 0, 0, 0});
  std::string f = File({no_layout, GoodBody(), short_data});
  VerifyReport r = Verify(f, "literals");
  ASSERT_EQ(r.problems.size(), 2u) << r.problems[0].message;
  EXPECT_EQ(r.problems[0].frame, "input 0 shape");
  EXPECT_NE(r.problems[0].message.find("layout"), std::string::npos)
      << r.problems[0].message;
  ASSERT_TRUE(r.problems[0].offset.has_value());
  EXPECT_GE(*r.problems[0].offset, kInput0Body);
  EXPECT_LT(*r.problems[0].offset, kInput0Body + no_layout.size());
  EXPECT_EQ(r.problems[1].frame, "input 2 body");
  EXPECT_NE(r.problems[1].message.find("found 2 values"), std::string::npos)
      << r.problems[1].message;
  const uint64_t body2 =
      kInput0Body + no_layout.size() + 4 + GoodBody().size() + 4;
  ASSERT_TRUE(r.problems[1].offset.has_value());
  EXPECT_GE(*r.problems[1].offset, body2);
  EXPECT_LT(*r.problems[1].offset, body2 + short_data.size());
  EXPECT_EQ(r.inputs, 3u);
  EXPECT_EQ(*r.outputs, 1u);
}

TEST(Verify, TrailingData) {
  std::string f = File({GoodBody()}) + "x";
  VerifyReport r = Verify(f, "trailing");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "trailing data");
  EXPECT_EQ(r.problems[0].offset, f.size() - 1);
}

TEST(Verify, ClassicSnapshot) {
  // HloSnapshot { hlo { hlo_module { name "m" } } arguments <good>
  //               arguments <no shape> result <good> }
  std::string good = GoodBody();
  std::string f = Bytes({0x0a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6d});
  f += Bytes({0x12, static_cast<int>(good.size())}) + good;
  const uint64_t bad_arg = f.size() + 2;
  f += Bytes({0x12, 0x04, 0x42, 0x02, 0x00, 0x00});
  f += Bytes({0x1a, static_cast<int>(good.size())}) + good;
  VerifyReport r = Verify(f, "classic.pb", SnapshotType::kClassic);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].frame, "input 1 body");
  EXPECT_NE(r.problems[0].message.find("no shape"), std::string::npos)
      << r.problems[0].message;
  ASSERT_TRUE(r.problems[0].offset.has_value());
  EXPECT_GE(*r.problems[0].offset, bad_arg);
  EXPECT_EQ(r.inputs, 2u);
  EXPECT_EQ(*r.outputs, 1u);
  // Auto detection picks the right type for both forms.
  EXPECT_EQ(Verify(f, "classic2.pb", SnapshotType::kAuto).type,
            SnapshotType::kClassic);
  EXPECT_EQ(Verify(File({good}), "auto.dhs", SnapshotType::kAuto).type,
            SnapshotType::kDecomposed);
}

TEST(Verify, ProblemsReadThePayloadsNotTheText) {
  VerifyProblem p = ProblemFromStatus(
      WithFile(TruncatedError(Frame{"input", 3, "body"}, 4113, 10, 2), "x"));
  EXPECT_EQ(p.frame, "input 3 body");
  EXPECT_EQ(p.offset, 4113u);
  EXPECT_EQ(p.code, absl::StatusCode::kOutOfRange);
  EXPECT_EQ(p.message,
            "input 3 body: declared 10 bytes but 2 remain (at byte 4113 of x)");
  // The same words without payloads are not parsed back.
  p = ProblemFromStatus(absl::OutOfRangeError(
      "input 3 body: declared 10 bytes but 2 remain (at byte 4113 of x)"));
  EXPECT_EQ(p.frame, "");
  EXPECT_FALSE(p.offset.has_value());
}

}  // namespace
}  // namespace decomposed

namespace decomposed {
namespace {

// Hostile input: random byte flips and truncations of a good file must give
// a report (verify) or a status (convert), never a crash, a hang or a
// partial output file.

// A header (region [0]) carrying one argument: snapshot = hlo (0a 05 | 0a 03
// | 0a 01 'm') + arguments (12 L body); one input; an empty output block.
// Boxes for values < 128 are 03 3a 01 v (docs/format.md §4.6).
std::string FileWithHeaderArgument() {
  auto box = [](size_t v) { return Bytes({0x03, 0x3a, 0x01, int(v)}); };
  const std::string body = GoodBody();
  std::string snap = Bytes({0x0a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6d, 0x12,
                            int(body.size())}) +
                     body;
  return box(snap.size()) + snap + box(1) + box(body.size()) + body + box(0);
}

TEST(Verify, HeaderLiteralsAreAWarningUnlessStrict) {
  std::string path = TempPath("header_args");
  WriteFile(path, FileWithHeaderArgument());
  absl::StatusOr<VerifyReport> r = VerifyFile(path, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->valid());
  EXPECT_EQ(r->inputs, 1u);
  // The header's warning, then the module's: "m" has no computations.
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[1].frame, "module");
  EXPECT_EQ(r->warnings[1].message, "module \"m\": has no computations");
  r->warnings.pop_back();
  EXPECT_EQ(r->warnings[0].frame, "header");
  EXPECT_EQ(r->warnings[0].offset, 4u);
  EXPECT_EQ(r->warnings[0].message,
            "header: carries 1 argument (at byte 4); a decomposed "
            "file's literals are its blocks', so unpack ignores them as "
            "snapshot-unpack does (AWS's reader keeps them)");
  nlohmann::ordered_json j = VerifyReportJson(*r);
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["problems"].size(), 0u);

  VerifyOptions strict;
  strict.strict = true;
  r = VerifyFile(path, strict);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->valid());
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(r->problems[0].code, absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r->problems[1].frame, "module");

  // A literal-empty header has no warning of its own.
  VerifyReport good = Verify(File({GoodBody()}), "no_header_args");
  ASSERT_EQ(good.warnings.size(), 1u);
  EXPECT_EQ(good.warnings[0].frame, "module");
}

// A decomposed file whose module has the entry parameters `params` (each
// a parameter of that shape; the root a tuple of them), the given input
// bodies and one good output.
std::string FileWithModule(const std::vector<xla::ShapeProto>& params,
                           const std::vector<std::string>& inputs,
                           bool break_module = false) {
  hlo::HloModuleBuilder mb("m");
  hlo::HloComputationBuilder& main = mb.AddEntryComputation("main");
  std::vector<hlo::HloOp> ps;
  for (size_t i = 0; i < params.size(); ++i) {
    ps.push_back(main.Parameter(static_cast<int64_t>(i), params[i],
                                absl::StrCat("p", i)));
  }
  hlo::HloOp root = main.Tuple(ps);
  if (break_module) {
    // A tuple whose shape says one element more than its operands give.
    xla::ShapeProto wrong = main.mutable_proto(root)->shape();
    *wrong.add_tuple_shapes() = hlo::MakeScalarShape(xla::F32);
    main.SetShape(root, wrong);
  }
  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  EXPECT_TRUE(m.ok()) << m.status();
  std::string out;
  StringSink sink(&out);
  DecomposedProducer<StringSink> w(sink);
  EXPECT_TRUE(w.WriteModule(m->SerializeAsString()).ok());
  std::vector<std::unique_ptr<LiteralSource>> owned;
  std::vector<LiteralSource*> ptrs;
  for (const auto& b : inputs) {
    owned.push_back(SerializedLiteral(b));
    ptrs.push_back(owned.back().get());
  }
  EXPECT_TRUE(w.WriteInputs(ptrs).ok());
  auto o = SerializedLiteral(GoodBody());
  EXPECT_TRUE(w.WriteOutputs(std::vector<LiteralSource*>{o.get()}).ok());
  EXPECT_TRUE(w.Finish().ok());
  return out;
}

TEST(VerifyModule, InputsThatFitTheEntryParametersGiveNoWarning) {
  const xla::ShapeProto f32x2 = hlo::MakeArrayShape(xla::F32, {2});
  VerifyReport r =
      Verify(FileWithModule({f32x2, f32x2}, {GoodBody(), GoodBody()}), "fit");
  EXPECT_TRUE(r.valid());
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].message;
}

TEST(VerifyModule, AnInputOfAnotherTypeOrDimsIsAWarningNamingBoth) {
  const xla::ShapeProto f32x2 = hlo::MakeArrayShape(xla::F32, {2});
  const xla::ShapeProto s32x3 = hlo::MakeArrayShape(xla::S32, {3});
  const std::string file = FileWithModule({f32x2, s32x3}, {GoodBody(), GoodBody()});
  VerifyReport r = Verify(file, "misfit");
  EXPECT_TRUE(r.valid());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].frame, "input 1 body");
  EXPECT_NE(r.warnings[0].message.find(
                "input 1 body: expected s32[3] (the module's parameter 1 "
                "(\"p1\")), found f32[2] (at byte "),
            std::string::npos)
      << r.warnings[0].message;

  std::string path = TempPath("misfit_strict");
  WriteFile(path, file);
  VerifyOptions strict;
  strict.strict = true;
  strict.snapshot_type = SnapshotType::kDecomposed;
  absl::StatusOr<VerifyReport> s = VerifyFile(path, strict);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->valid());
  ASSERT_EQ(s->problems.size(), 1u);
  EXPECT_EQ(s->problems[0].frame, "input 1 body");
}

TEST(VerifyModule, AnInputCountOtherThanTheParametersIsAWarning) {
  const xla::ShapeProto f32x2 = hlo::MakeArrayShape(xla::F32, {2});
  VerifyReport r =
      Verify(FileWithModule({f32x2, f32x2, f32x2}, {GoodBody(), GoodBody()}),
             "count");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].frame, "input count box");
  ASSERT_TRUE(r.warnings[0].offset.has_value());
  EXPECT_GT(*r.warnings[0].offset, 4u);
  EXPECT_NE(r.warnings[0].message.find(
                "input count box: expected 3 inputs (the module's entry "
                "parameters), found 2"),
            std::string::npos)
      << r.warnings[0].message;
}

TEST(VerifyModule, AnInvalidModuleIsAWarningFramedModule) {
  const xla::ShapeProto f32x2 = hlo::MakeArrayShape(xla::F32, {2});
  VerifyReport r = Verify(FileWithModule({f32x2}, {GoodBody()},
                                         /*break_module=*/true),
                          "badmodule");
  EXPECT_TRUE(r.valid());
  ASSERT_GE(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].frame, "module");
  // The module starts after the snapshot box (4 bytes) and the
  // HloSnapshot's hlo tag, length, HloProto tag and length.
  ASSERT_TRUE(r.warnings[0].offset.has_value());
  EXPECT_GT(*r.warnings[0].offset, 4u);
  EXPECT_EQ(r.warnings[0].message.rfind("computation \"main\", instruction ",
                                        0),
            0u)
      << r.warnings[0].message;
}

TEST(Verify, LenientLayout) {
  // F32[2] = [1, 2] with no layout: shape 10 0b 1a 01 02; data 42 08 ...
  std::string body = Bytes({0x0a, 0x05, 0x10, 0x0b, 0x1a, 0x01, 0x02, 0x42,
                            0x08, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40});
  std::string path = TempPath("no_layout");
  WriteFile(path, File({body}));
  absl::StatusOr<VerifyReport> r = VerifyFile(path, {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_EQ(r->problems[0].frame, "input 0 shape");
  EXPECT_NE(r->problems[0].message.find("--lenient-layout"), std::string::npos)
      << r->problems[0].message;
  VerifyOptions lenient;
  lenient.lenient_layout = true;
  r = VerifyFile(path, lenient);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->valid()) << r->problems[0].message;
}

TEST(VerifyRobustness, RandomCorruptions) {
  // Corrupted module names are invalid UTF-8: protobuf logs each one.
  google::protobuf::LogSilencer quiet;
  std::string good = File({GoodBody(), GoodBody()});
  std::mt19937 rng(1234);
  std::string in = TempPath("fuzz.dhs"), out = TempPath("fuzz.pb");
  int invalid = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string f = good;
    int edits = 1 + rng() % 3;
    for (int e = 0; e < edits; ++e) {
      if (rng() % 4 == 0) {
        f.resize(rng() % (f.size() + 1));
      } else if (!f.empty()) {
        f[rng() % f.size()] = static_cast<char>(rng());
      }
    }
    WriteFile(in, f);
    VerifyOptions o;
    o.snapshot_type = SnapshotType::kDecomposed;
    absl::StatusOr<VerifyReport> r = VerifyFile(in, o);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const VerifyProblem& p : r->problems) {
      EXPECT_FALSE(p.message.empty());
    }
    if (!r->valid()) ++invalid;
    std::remove(out.c_str());
    absl::Status s = ConvertDecomposedToClassic(in, out);
    struct stat st;
    EXPECT_EQ(s.ok(), ::stat(out.c_str(), &st) == 0);
    // A file verify accepts converts (and vice versa for framing).
    if (r->valid()) {
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  EXPECT_GT(invalid, 500) << "the corruptions must be noticed";
}

}  // namespace
}  // namespace decomposed
