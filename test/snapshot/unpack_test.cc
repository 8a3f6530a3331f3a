#include "decomposed/snapshot/unpack.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "decomposed/io/limited_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot_unpack/command_line.h"
#include "test_util.h"
#include "wire_encode.h"

namespace decomposed {
namespace {

using ::decomposed::wire_encode::Box;
using ::decomposed::wire_encode::Len;
using ::decomposed::wire_encode::Varint;
using ::decomposed::wire_encode::VarintField;

using ::decomposed::test::ListDir;
using ::decomposed::test::ReadFile;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// --- hand encoders (protobuf wire format, from the spec) ---------------------

// F32[n]{0} literal of the given floats.
std::string F32Literal(const std::vector<float>& v) {
  std::string shape = VarintField(2, 11) + Len(3, Varint(v.size())) +
                      Len(5, Len(1, Varint(0)));
  std::string data(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return Len(1, shape) + Len(8, data);
}
// A module with its fields out of field-number order: re-serializing it
// would reorder them, so byte identity proves the bytes came off the wire.
const std::string kModule =
    VarintField(5, 7) + Len(1, "m") + Len(2, "main") + VarintField(6, 3);

std::string Snapshot(const std::vector<std::string>& args,
                     const std::string* result) {
  std::string s = Len(1, Len(1, kModule));
  for (const auto& a : args) s += Len(2, a);
  if (result) s += Len(3, *result);
  return s;
}

std::string Decomposed(const std::vector<std::string>& in,
                       const std::vector<std::string>* out) {
  std::string snap = Snapshot({}, nullptr);
  std::string d = Box(snap.size()) + snap + Box(in.size());
  for (const auto& b : in) d += Box(b.size()) + b;
  if (out) {
    d += Box(out->size());
    for (const auto& b : *out) d += Box(b.size()) + b;
  }
  return d;
}

// --- files ------------------------------------------------------------------

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

class UnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/unpack_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::system(("rm -rf '" + dir_ + "'").c_str());
    ::mkdir(dir_.c_str(), 0755);
    out_ = dir_ + "/out/";
    ::mkdir(out_.c_str(), 0755);
  }
  void TearDown() override { ::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& data) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << data;
    return p;
  }
  UnpackOptions Options(SnapshotType type, bool dump) {
    UnpackOptions o;
    o.snapshot_type = type;
    o.dump_snapshot_outputs = dump;
    o.output_prefix = out_;
    return o;
  }
  std::string Payload(const std::string& npy_file) {
    std::string s = ReadFile(out_ + npy_file);
    return s.size() >= 128 ? s.substr(128) : "";
  }
  std::string dir_, out_;
};

std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST_F(UnpackTest, ExampleFileDecomposed) {
  std::string path =
      std::string(DECOMPOSED_SOURCE_DIR) + "/examples/example.decomposed_hlo_snapshot";
  std::vector<UnpackedFile> files;
  absl::Status s = Unpack(path, Options(SnapshotType::kDecomposed, true), &files);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "snapshot_output0.npy",
                                      "value_input0.npy", "value_input1.npy"));
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[1].shape, "F32[2,3]{1,0}");
  // The module is the embedded bytes: box (04 3a 02 93 03), snapshot =
  // 0a 90 03 (hlo, 400 bytes) 0a 8d 03 (hlo_module, 397 bytes) <module>
  // (test/snapshot/inspect_test.cc works the sizes out).
  std::string raw = ReadFile(path);
  size_t at = 1 + static_cast<uint8_t>(raw[0]);  // after the length box
  ASSERT_EQ(at, 5u);
  ASSERT_EQ(raw.substr(at, 6), std::string("\x0a\x90\x03\x0a\x8d\x03", 6));
  EXPECT_EQ(ReadFile(out_ + "model.hlo"), raw.substr(at + 6, 397));
  int32_t want[] = {-2, -1, 0, 7};
  EXPECT_EQ(Payload("value_input1.npy"),
            std::string(reinterpret_cast<const char*>(want), 16));
  EXPECT_EQ(Payload("snapshot_output0.npy"), Floats({1, 2, 3, 4, 5, 6}));
}

TEST_F(UnpackTest, ModuleBytesComeFromTheWire) {
  std::string p = Write("x.dhs", Decomposed({F32Literal({1})}, nullptr));
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kDecomposed, false)).ok());
  EXPECT_EQ(ReadFile(out_ + "model.hlo"), kModule);
  // Re-serializing would have reordered the fields.
  xla::HloModuleProto m;
  ASSERT_TRUE(m.ParseFromString(kModule));
  EXPECT_NE(m.SerializeAsString(), kModule);
}

TEST_F(UnpackTest, NoFlagDoesNotReadRegion2) {
  std::string d = Decomposed({F32Literal({1, 2})}, nullptr) + "\xff garbage";
  std::string p = Write("x.dhs", d);
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, false));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input0.npy"));
}

TEST_F(UnpackTest, FlagWithoutRegion2IsAnError) {
  std::string p = Write("x.dhs", Decomposed({F32Literal({1})}, nullptr));
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, true));
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()), HasSubstr("holds no outputs"));
  // Errors name output j / input i (docs/format.md §2.1), not file stems.
  EXPECT_THAT(std::string(s.message()), StartsWith("output count box: "));
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input0.npy"));
}

TEST_F(UnpackTest, OutputsOneFilePerElementNoTupleSplit) {
  std::vector<std::string> outs = {F32Literal({5}), F32Literal({6, 7})};
  std::string p = Write("x.dhs", Decomposed({F32Literal({1})}, &outs));
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kDecomposed, true)).ok());
  EXPECT_EQ(Payload("snapshot_output0.npy"), Floats({5}));
  EXPECT_EQ(Payload("snapshot_output1.npy"), Floats({6, 7}));
}

TEST_F(UnpackTest, FailedLiteralKeepsFinishedFilesAndLeavesNoPartialFile) {
  // Input 1 declares F32[5] but carries 4 values; input 2 is fine.
  std::string bad = Len(1, VarintField(2, 11) + Len(3, Varint(5)) +
                               Len(5, Len(1, Varint(0)))) +
                    Len(8, Floats({1, 2, 3, 4}));
  std::string p = Write(
      "x.dhs", Decomposed({F32Literal({1}), bad, F32Literal({3})}, nullptr));
  std::vector<UnpackedFile> files;
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, false), &files);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  std::string m(s.message());
  EXPECT_THAT(m, StartsWith("input 1 body: "));
  EXPECT_THAT(m, HasSubstr("at byte"));
  EXPECT_THAT(m, HasSubstr("x.dhs"));
  EXPECT_EQ(files.size(), 2u);
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input0.npy"));
}

TEST_F(UnpackTest, TruncatedInputNamesTheFrame) {
  std::string d = Decomposed({F32Literal({1}), F32Literal({2, 3})}, nullptr);
  std::string p = Write("x.dhs", d.substr(0, d.size() - 3));
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, false));
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("input 1"));
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input0.npy"));
}

TEST_F(UnpackTest, TrailingDataAfterRegion2) {
  std::vector<std::string> outs;
  std::string p = Write("x.dhs", Decomposed({}, &outs) + "zz");
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, true));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("trailing data"));
}

TEST_F(UnpackTest, SnapshotModeTupleResultIsSplit) {
  std::string result = Len(1, VarintField(2, 13) + Len(4, "") + Len(4, "")) +
                       Len(10, F32Literal({8})) + Len(10, F32Literal({9, 10}));
  std::string p = Write(
      "x.pb", Snapshot({F32Literal({1}), F32Literal({2, 3})}, &result));
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kClassic, true)).ok());
  EXPECT_THAT(ListDir(out_),
              ElementsAre("model.hlo", "snapshot_output0.npy",
                          "snapshot_output1.npy", "value_input0.npy",
                          "value_input1.npy"));
  EXPECT_EQ(ReadFile(out_ + "model.hlo"), kModule);
  EXPECT_EQ(Payload("value_input1.npy"), Floats({2, 3}));
  EXPECT_EQ(Payload("snapshot_output1.npy"), Floats({9, 10}));
}

TEST_F(UnpackTest, SnapshotModeArrayResultAndNoFlag) {
  std::string result = F32Literal({4, 5});
  std::string p = Write("x.pb", Snapshot({F32Literal({1})}, &result));
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kClassic, true)).ok());
  EXPECT_EQ(Payload("snapshot_output0.npy"), Floats({4, 5}));
  ::unlink((out_ + "snapshot_output0.npy").c_str());
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kClassic, false)).ok());
  EXPECT_FALSE(Exists(out_ + "snapshot_output0.npy"));
}

TEST_F(UnpackTest, SnapshotModeNoResultWithFlagIsAnError) {
  std::string p = Write("x.pb", Snapshot({F32Literal({1})}, nullptr));
  absl::Status s = Unpack(p, Options(SnapshotType::kClassic, true));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("output 0 body: "));
}

TEST_F(UnpackTest, SnapshotModeMalformedFile) {
  std::string p = Write("x.pb", "\x0a\x05\x0a");
  absl::Status s = Unpack(p, Options(SnapshotType::kClassic, false));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(ListDir(out_), ElementsAre());
}

TEST_F(UnpackTest, MergedModuleOccurrencesAreParsedAndReserialized) {
  std::string second = Len(1, "other") + VarintField(5, 9);
  std::string snap = Len(1, Len(1, kModule)) + Len(1, Len(1, second));
  std::string d = Box(snap.size()) + snap + Box(0);
  std::string p = Write("x.dhs", d);
  ASSERT_TRUE(Unpack(p, Options(SnapshotType::kDecomposed, false)).ok());
  xla::HloModuleProto merged;
  ASSERT_TRUE(merged.ParseFromString(kModule + second));
  EXPECT_EQ(merged.name(), "other");
  EXPECT_EQ(ReadFile(out_ + "model.hlo"), merged.SerializeAsString());
}

TEST_F(UnpackTest, ModuleAndLiteralPasses) {
  std::string p = Write("x.dhs", Decomposed({F32Literal({1, 2})}, nullptr));
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  o.module_pass = [](xla::HloModuleProto& m) {
    m.set_name("renamed");
    return absl::OkStatus();
  };
  int calls = 0;
  o.literal_pass = [&calls](xla::LiteralProto& l, UnpackedKind kind,
                            int64_t i) {
    ++calls;
    EXPECT_EQ(kind, UnpackedKind::kInput);
    EXPECT_EQ(i, 0);
    for (float& f : *l.mutable_f32s()) f *= 10;
    return absl::OkStatus();
  };
  ASSERT_TRUE(Unpack(p, o).ok());
  EXPECT_EQ(calls, 1);
  xla::HloModuleProto m;
  ASSERT_TRUE(m.ParseFromString(ReadFile(out_ + "model.hlo")));
  EXPECT_EQ(m.name(), "renamed");
  EXPECT_EQ(Payload("value_input0.npy"), Floats({10, 20}));
  // A failing pass stops the run and names the literal.
  o.literal_pass = [](xla::LiteralProto&, UnpackedKind, int64_t) {
    return absl::InvalidArgumentError("no");
  };
  absl::Status s = Unpack(p, o);
  EXPECT_THAT(std::string(s.message()), StartsWith("input 0 literal pass"));
}

TEST_F(UnpackTest, AutoDetection) {
  std::string dec = Write("x.dhs", Decomposed({F32Literal({1})}, nullptr));
  std::string result = F32Literal({4});
  std::string snap = Write("x.pb", Snapshot({F32Literal({1})}, &result));
  EXPECT_EQ(*DetectSnapshotType(dec), SnapshotType::kDecomposed);
  EXPECT_EQ(*DetectSnapshotType(snap), SnapshotType::kClassic);
  EXPECT_EQ(*DetectSnapshotType(std::string(DECOMPOSED_SOURCE_DIR) +
                                "/examples/example.decomposed_hlo_snapshot"),
            SnapshotType::kDecomposed);
  ASSERT_TRUE(Unpack(snap, Options(SnapshotType::kAuto, true)).ok());
  EXPECT_EQ(Payload("snapshot_output0.npy"), Floats({4}));
  ASSERT_TRUE(Unpack(dec, Options(SnapshotType::kAuto, false)).ok());
}

TEST_F(UnpackTest, ToolMessages) {
  // The library says why; snapshot-unpack's command line says what the
  // tool says (below).
  absl::Status s = Unpack(dir_ + "/missing", Options(SnapshotType::kClassic, false));
  EXPECT_EQ(s.message(),
            "Could not open: " + dir_ + "/missing: No such file or directory");
  EXPECT_EQ(ErrnoOf(s), ENOENT);
  EXPECT_EQ(PathOf(s), dir_ + "/missing");
  absl::StatusOr<UnpackCommandLine> missing =
      ParseUnpackCommandLine({dir_ + "/missing"});
  ASSERT_TRUE(missing.ok()) << missing.status();
  s = RunUnpackCommandLine(*missing);
  EXPECT_EQ(s.message(), "Could not open: " + dir_ + "/missing");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  // An unknown type is the command line's to report, after the open check,
  // as in the tool (it compares the type once the file is open).
  std::string p = Write("x.dhs", Decomposed({}, nullptr));
  absl::StatusOr<UnpackCommandLine> cl =
      ParseUnpackCommandLine({"--snapshot-type=Decomposed", p});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_TRUE(cl->unsupported_snapshot_type);
  s = RunUnpackCommandLine(*cl);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ERROR: Unsupported snapshot format");
  cl = ParseUnpackCommandLine({"--snapshot-type=bogus", dir_ + "/missing"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  s = RunUnpackCommandLine(*cl);
  EXPECT_EQ(s.message(), "Could not open: " + dir_ + "/missing");
  // A known type runs.
  cl = ParseUnpackCommandLine(
      {"--snapshot-type=decomposed", "--output-prefix=" + out_, p});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_FALSE(cl->unsupported_snapshot_type);
  EXPECT_TRUE(RunUnpackCommandLine(*cl).ok());
}

TEST_F(UnpackTest, PrefixIsConcatenatedAndSidecar) {
  // BF16[2]{0}: bf16s (field 13).
  std::string bf16 = Len(1, VarintField(2, 16) + Len(3, Varint(2)) +
                                Len(5, Len(1, Varint(0)))) +
                     Len(13, std::string("\x80\x3f\x00\x40", 4));
  std::string p = Write("x.dhs", Decomposed({bf16, F32Literal({1})}, nullptr));
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  o.output_prefix = out_ + "pre_";
  o.module = "m.pb";
  o.ml_dtype_sidecar = true;
  ASSERT_TRUE(Unpack(p, o).ok());
  EXPECT_THAT(ListDir(out_), ElementsAre("pre_m.pb", "pre_value_input0.npy",
                                      "pre_value_input0.npy.meta",
                                      "pre_value_input1.npy"));
  EXPECT_EQ(ReadFile(out_ + "pre_value_input0.npy.meta"),
            "{\"ml_dtype\": \"bfloat16\"}");
  EXPECT_THAT(ReadFile(out_ + "pre_value_input0.npy"),
              HasSubstr("'descr': '|V2'"));
}

TEST_F(UnpackTest, CreatesTheOutputDirectory) {
  std::string p = Write("x.dhs", Decomposed({F32Literal({1})}, nullptr));
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  o.output_prefix = out_ + "a/b/pre_";
  ASSERT_TRUE(Unpack(p, o).ok());
  EXPECT_THAT(ListDir(out_ + "a/b"), ElementsAre("pre_model.hlo",
                                              "pre_value_input0.npy"));
  o.create_output_dir = false;
  o.output_prefix = out_ + "c/";
  EXPECT_FALSE(Unpack(p, o).ok());
  EXPECT_FALSE(Exists(out_ + "c"));
}

// The directory is made at the first piece written: an input that opens
// but is rejected before its module (8 bytes of a decomposed file: the
// header box cut short) leaves no directory behind.
TEST_F(UnpackTest, AnInputRejectedBeforeItsModuleMakesNoDirectory) {
  std::string whole = Decomposed({F32Literal({1})}, nullptr);
  std::string p = Write("cut.dhs", whole.substr(0, 8));
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  o.output_prefix = out_ + "never/";
  EXPECT_FALSE(Unpack(p, o).ok());
  EXPECT_FALSE(Exists(out_ + "never"));
  o.output_format = UnpackFormat::kNpz;
  o.npz_path = out_ + "never2/x.npz";
  EXPECT_FALSE(Unpack(p, o).ok());
  EXPECT_FALSE(Exists(out_ + "never2"));
}

// A character device is read as a stream (SpoolSource), as a pipe is:
// /dev/null is then an empty input, named by its path.
TEST_F(UnpackTest, NonRegularInputIsReadAsAStream) {
  absl::Status s = Unpack("/dev/null", Options(SnapshotType::kDecomposed, false));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("found an empty file (an interrupted capture leaves "
                        "one) (at byte 0 of /dev/null)"));
}

TEST_F(UnpackTest, LenientLengthByte) {
  // A count box of 146 payload bytes (length byte 0x92): its shape repeats
  // element_type U64 70 times. Strict mode rejects the byte, lenient reads it.
  std::string shape;
  for (int i = 0; i < 70; ++i) shape += VarintField(2, 9);
  std::string payload = Len(1, shape) + Len(7, Varint(0));
  ASSERT_EQ(payload.size(), 146u);
  std::string snap = Snapshot({}, nullptr);
  std::string d = Box(snap.size()) + snap +
                  std::string(1, static_cast<char>(payload.size())) + payload;
  std::string p = Write("x.dhs", d);
  absl::Status s = Unpack(p, Options(SnapshotType::kDecomposed, false));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("input count box"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("0x92"));
  auto cl = ParseUnpackCommandLine(
      {"--snapshot-type=decomposed", "--lenient-length-byte", p});
  ASSERT_TRUE(cl.ok());
  cl->options.output_prefix = out_;
  s = Unpack(p, cl->options);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(UnpackTest, HloSnapshotSinkOverMemory) {
  std::string lit = F32Literal({3, 4});
  std::string all = kModule + lit;
  MemorySource src(all);
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  std::vector<UnpackedFile> files;
  HloSnapshotSink sink(o, &files);
  std::vector<ByteRange> module = {{0, kModule.size()}};
  ASSERT_TRUE(sink.WriteModule(src, module).ok());
  std::vector<ByteRange> body = {{kModule.size(), lit.size()}};
  ASSERT_TRUE(sink.WriteLiteral(src, body, UnpackedKind::kInput, 5).ok());
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input5.npy"));
  EXPECT_EQ(ReadFile(out_ + "model.hlo"), kModule);
  EXPECT_EQ(Payload("value_input5.npy"), Floats({3, 4}));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].shape, "F32[2]{0}");
  EXPECT_EQ(files[1].descr, "<f4");
}

TEST_F(UnpackTest, DecoderOnAnElementViewKeepsTheKernelCopy) {
  // Unpack hands the decoder a bounded view of each element of an
  // FdSource: the view forwards the fd, so copy_file_range and splice (the
  // default for 400 KB) still apply.
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  std::string body = F32Literal(v);
  std::string p = Write("k.bin", "prefix" + body + "trailing");
  for (auto [method, want] :
       {std::pair{CopyMethod::kKernel, LiteralPath::kKernelCopy},
        std::pair{CopyMethod::kAuto, LiteralPath::kSpliceCopy}}) {
    OwnedFd fd;
    ASSERT_TRUE(OpenForReading(p, &fd).ok());
    FdSource src(std::move(fd));
    ASSERT_TRUE(src.Skip(6));
    LimitedSource<FdSource> view(src, 6 + body.size());
    AtomicFileSink out;
    ASSERT_TRUE(out.Open(out_ + "k.npy").ok());
    LiteralDecodeOptions o;
    o.copy = method;
    LiteralPath path = LiteralPath::kEmpty;
    absl::Status s = DecodeLiteralToNpy(view, body.size(),
                                        Frame{"value_input", 0, "body"}, out,
                                        o, nullptr, &path);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(out.Commit().ok());
    EXPECT_EQ(path, want);
    EXPECT_EQ(Payload("k.npy"), Floats(v));
    EXPECT_LE(src.position(), 6 + body.size());  // never past the element
  }
}

// --- the command line -----------------------------------------------------------

absl::StatusOr<UnpackCommandLine> Parse(std::vector<std::string> a) {
  return ParseUnpackCommandLine(a, "snapshot-unpack");
}

TEST(UnpackCommandLineTest, Defaults) {
  auto cl = Parse({"f"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->snapshot, "f");
  EXPECT_EQ(cl->options.module, "model.hlo");
  EXPECT_EQ(cl->options.output_prefix, "./");
  EXPECT_EQ(cl->options.snapshot_type, SnapshotType::kClassic);
  EXPECT_FALSE(cl->unsupported_snapshot_type);
  EXPECT_FALSE(cl->options.dump_snapshot_outputs);
}

TEST(UnpackCommandLineTest, LlvmStyles) {
  auto cl = Parse({"-module=a.hlo", "--output-prefix", "-weird", "f",
                   "--snapshot-type=decomposed", "-dump-snapshot-outputs"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->options.module, "a.hlo");
  EXPECT_EQ(cl->options.output_prefix, "-weird");
  EXPECT_EQ(cl->options.snapshot_type, SnapshotType::kDecomposed);
  EXPECT_TRUE(cl->options.dump_snapshot_outputs);
  EXPECT_EQ(cl->snapshot, "f");
  for (std::string v : {"true", "TRUE", "True", "1"}) {
    EXPECT_TRUE(Parse({"--dump-snapshot-outputs=" + v, "f"})
                    ->options.dump_snapshot_outputs);
  }
  for (std::string v : {"false", "FALSE", "False", "0"}) {
    EXPECT_FALSE(Parse({"--dump-snapshot-outputs=" + v, "f"})
                     ->options.dump_snapshot_outputs);
  }
  // Empty value via '=' is a value; "--" ends options.
  cl = Parse({"--output-prefix=", "--", "-f"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->options.output_prefix, "");
  EXPECT_EQ(cl->snapshot, "-f");
  EXPECT_TRUE(Parse({"-help"})->help);
  EXPECT_TRUE(Parse({"--help", "x", "y"})->help);
  EXPECT_TRUE(Parse({"-help", "--bogus"})->help);  // help acts when seen
  EXPECT_FALSE(Parse({"--bogus", "-help"}).ok());
  EXPECT_EQ(Parse({"-"})->snapshot, "-");
}

TEST(UnpackCommandLineTest, Errors) {
  auto msg = [](std::vector<std::string> a) {
    auto cl = Parse(a);
    EXPECT_FALSE(cl.ok());
    return std::string(cl.status().message());
  };
  EXPECT_THAT(msg({}), HasSubstr("Not enough positional"));
  EXPECT_THAT(msg({"a", "b"}), HasSubstr("Too many positional"));
  EXPECT_THAT(msg({"--dump-snapshot-outputs", "false", "f"}),
              HasSubstr("Too many positional"));
  EXPECT_THAT(msg({"--nope", "f"}), HasSubstr("Unknown command line argument"));
  EXPECT_THAT(msg({"f", "--module"}), HasSubstr("requires a value"));
  EXPECT_THAT(msg({"--dump-snapshot-outputs=yes", "f"}),
              HasSubstr("invalid value for boolean"));
  EXPECT_THAT(msg({"--module=a", "-module=b", "f"}),
              HasSubstr("may only occur zero or one times"));
}

TEST(UnpackCommandLineTest, FuzzedArgumentsNeverCrash) {
  const std::vector<std::string> vocab = {
      "-", "--", "-module", "--module=", "-output-prefix", "--snapshot-type",
      "-snapshot-type=auto", "-dump-snapshot-outputs", "--dump-snapshot-outputs=0",
      "-help", "f", "=", "-=", "--=x", "-ml-dtype-sidecar=1", "x=y", ""};
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::string> a;
    int n = rng() % 6;
    for (int k = 0; k < n; ++k) {
      std::string t = vocab[rng() % vocab.size()];
      if (rng() % 5 == 0) t += static_cast<char>(rng());
      a.push_back(t);
    }
    auto cl = Parse(a);
    if (cl.ok() && !cl->help) {
      // The one positional is one of the arguments, never invented.
      EXPECT_NE(std::find(a.begin(), a.end(), cl->snapshot), a.end());
    }
  }
}


// --- A header carrying literals; a literal with no layout --------------------

// Decomposed file whose header (region [0]) carries `args` arguments and,
// when `result`, a result (docs/format.md §7.2).
std::string DecomposedWithHeaderLiterals(int args, bool result,
                                         const std::vector<std::string>& in) {
  std::string f = F32Literal({9});
  std::string snap = Snapshot(std::vector<std::string>(args, f),
                              result ? &f : nullptr);
  std::string d = Box(snap.size()) + snap + Box(in.size());
  for (const auto& b : in) d += Box(b.size()) + b;
  return d + Box(0);
}

TEST_F(UnpackTest, HeaderLiteralsAreAWarningAndIgnored) {
  std::string p = Write("h.dhs", DecomposedWithHeaderLiterals(
                                     2, true, {F32Literal({1, 2})}));
  UnpackOptions o = Options(SnapshotType::kDecomposed, true);
  std::vector<std::string> warnings;
  o.on_warning = [&](const absl::Status& w) {
    warnings.push_back(std::string(w.message()));
  };
  std::vector<UnpackedFile> files;
  absl::Status s = Unpack(p, o, &files);
  ASSERT_TRUE(s.ok()) << s;
  // The header's body starts after its 3-byte length box (03 3a 01 Lm).
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "header: carries 2 arguments and a result (at byte "
            "4); a decomposed file's literals are its blocks', so unpack "
            "ignores them as snapshot-unpack does (AWS's reader keeps them)");
  // Ignored: one input file, from the input block, and no output.
  EXPECT_THAT(ListDir(out_), ElementsAre("model.hlo", "value_input0.npy"));
  EXPECT_EQ(Payload("value_input0.npy"), Floats({1, 2}));

  // One argument only: singular.
  p = Write("h1.dhs", DecomposedWithHeaderLiterals(1, false, {}));
  warnings.clear();
  ASSERT_TRUE(Unpack(p, o).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("header: carries 1 argument (at"));
  // A literal-empty header: no warning.
  p = Write("h0.dhs", DecomposedWithHeaderLiterals(0, false, {}));
  warnings.clear();
  ASSERT_TRUE(Unpack(p, o).ok());
  EXPECT_TRUE(warnings.empty());
}

// F32[2,3] with no layout field: shape = element_type 11, dimensions 2 3.
std::string F32NoLayout(const std::vector<float>& v) {
  std::string shape = VarintField(2, 11) + Len(3, Varint(2) + Varint(3));
  std::string data(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return Len(1, shape) + Len(8, data);
}

TEST_F(UnpackTest, LenientLayoutReadsNoneAsMajorToMinor) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  std::string p = Write("nl.dhs", Decomposed({F32NoLayout(v)}, nullptr));
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  absl::Status s = Unpack(p, o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("LiteralProto has no layout\"; --lenient-layout reads "
                        "none as major-to-minor"));
  EXPECT_FALSE(Exists(out_ + "value_input0.npy"));
  o.decode.lenient_layout = true;
  std::vector<UnpackedFile> files;
  s = Unpack(p, o, &files);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].shape, "F32[2,3]{1,0}");
  EXPECT_EQ(Payload("value_input0.npy"), Floats(v));
}


TEST_F(UnpackTest, ProgressReportsPositionsUpToTheFileSize) {
  std::vector<float> big(300000, 1.5f);  // 1.2 MB: more than one 1 MiB chunk
  std::string data = Decomposed({F32Literal({1}), F32Literal(big)}, nullptr);
  std::string p = Write("progress.dhs", data);
  UnpackOptions o = Options(SnapshotType::kDecomposed, false);
  std::vector<uint64_t> seen;
  o.progress = [&](uint64_t done) { seen.push_back(done); };
  ASSERT_TRUE(Unpack(p, o).ok());
  ASSERT_GE(seen.size(), 4u);  // module, input 0, chunks of input 1, end
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_LE(seen[i - 1], seen[i]) << i;
  }
  EXPECT_EQ(seen.back(), data.size());
  EXPECT_EQ(Payload("value_input1.npy"), Floats(big));
}

}  // namespace
}  // namespace decomposed
