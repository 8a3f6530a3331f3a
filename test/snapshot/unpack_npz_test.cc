// unpack --to npz (NpzWriter, HloSnapshotSink's kNpz) and --manifest.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "decomposed/capture/regular_file.h"
#include "decomposed/capture/zip_reader.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/npy/npz_writer.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/unpack.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"
#include "wire_encode.h"

namespace decomposed {
namespace {

using ::decomposed::wire_encode::Len;
using ::decomposed::wire_encode::Varint;
using ::decomposed::wire_encode::VarintField;

using ::decomposed::test::ListDir;
using ::decomposed::test::ReadFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

uint32_t Le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

// --- NpzWriter and Rewrite ----------------------------------------------------

// CRC-32 of "123456789" is 0xCBF43926, the check value of the ZIP/zlib
// polynomial (reflected 0x04C11DB7, init and final xor 0xFFFFFFFF).
TEST(NpzWriterTest, StreamedEntryGetsItsCrcWrittenBack) {
  std::string zip;
  StringSink sink(&zip);
  NpzWriter<StringSink> npz(sink);
  ASSERT_TRUE(npz.BeginEntry("a.bin", 9).ok());
  const uint64_t local = 0;  // the first entry's local header
  EXPECT_EQ(Le32(zip, local + 14), 0u);  // a placeholder until EndEntry
  ASSERT_TRUE(npz.Append("1234"));
  ASSERT_TRUE(npz.Append("56789"));
  ASSERT_TRUE(npz.EndEntry().ok());
  EXPECT_EQ(Le32(zip, local + 14), 0xCBF43926u);
  EXPECT_EQ(zip.substr(npz.data_offset(), 9), "123456789");
  EXPECT_EQ(npz.data_offset() % 64, 0u);
  ASSERT_TRUE(npz.Finish().ok());
  // The central directory record holds the same CRC (at +16 of it).
  size_t cd = zip.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  EXPECT_EQ(Le32(zip, cd + 16), 0xCBF43926u);
}

TEST(NpzWriterTest, WrongSizeIsAnError) {
  std::string zip;
  StringSink sink(&zip);
  NpzWriter<StringSink> npz(sink);
  ASSERT_TRUE(npz.BeginEntry("a.bin", 10).ok());
  npz.Append("123");
  absl::Status s = npz.EndEntry();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("promised 10 bytes, wrote 3"));
}

TEST(FdSinkRewriteTest, InTheBufferAndOnDisk) {
  std::string path = ::testing::TempDir() + "/rewrite_test.bin";
  AtomicFileSink out;
  ASSERT_TRUE(out.Open(path).ok());
  out.Write("aaaaaaaa");
  ASSERT_TRUE(out.Flush());  // bytes 0..7 on disk
  out.Write("bbbbbbbb");     // bytes 8..15 in the buffer
  EXPECT_TRUE(out.Rewrite(6, "XXXX"));  // straddles both
  EXPECT_TRUE(out.Rewrite(0, "Y"));
  EXPECT_FALSE(out.Rewrite(14, "ZZZ"));  // past what was written
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  AtomicFileSink ok;
  ASSERT_TRUE(ok.Open(path).ok());
  ok.Write("aaaaaaaa");
  ok.Flush();
  ok.Write("bbbbbbbb");
  ASSERT_TRUE(ok.Rewrite(6, "XXXX"));
  ASSERT_TRUE(ok.Rewrite(0, "Y"));
  ASSERT_TRUE(ok.Commit().ok());
  EXPECT_EQ(ReadFile(path), "YaaaaaXXXXbbbbbb");
  ::unlink(path.c_str());
}

// --- Unpack to npz --------------------------------------------------------------

class UnpackNpzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/unpack_npz_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::system(("rm -rf '" + dir_ + "'").c_str());
    ::mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override { ::system(("rm -rf '" + dir_ + "'").c_str()); }
  UnpackOptions Options(const std::string& sub) {
    UnpackOptions o;
    o.snapshot_type = SnapshotType::kDecomposed;
    o.dump_snapshot_outputs = true;
    o.output_prefix = dir_ + "/" + sub + "/";
    return o;
  }
  // name -> bytes of every entry, each CRC checked against its local header.
  std::map<std::string, std::string> Entries(const std::string& npz) {
    std::map<std::string, std::string> out;
    absl::StatusOr<capture::RegularFile> f = capture::RegularFile::Open(npz);
    EXPECT_TRUE(f.ok()) << f.status();
    if (!f.ok()) return out;
    absl::StatusOr<capture::ZipDirectory> d = capture::ReadZipDirectory(*f);
    EXPECT_TRUE(d.ok()) << d.status();
    if (!d.ok()) return out;
    for (const auto& [name, e] : *d) {
      EXPECT_EQ(e.method, 0) << name << " is not stored";
      absl::StatusOr<uint64_t> at = capture::ZipEntryDataOffset(*f, name, e);
      EXPECT_TRUE(at.ok()) << at.status();
      std::string data, crc;
      EXPECT_TRUE(f->ReadAt(*at, e.size, &data).ok());
      EXPECT_TRUE(f->ReadAt(e.local_offset + 14, 4, &crc).ok());
      EXPECT_EQ(Le32(crc, 0), Crc32(0, data)) << name << ": CRC";
      out[name] = data;
    }
    return out;
  }
  std::string dir_;
};

const std::string kExample =
    std::string(DECOMPOSED_SOURCE_DIR) + "/examples/example.decomposed_hlo_snapshot";

TEST_F(UnpackNpzTest, EntriesAreTheFilesByteForByte) {
  UnpackOptions files = Options("files");
  files.ml_dtype_sidecar = true;
  ASSERT_TRUE(Unpack(kExample, files).ok());
  UnpackOptions o = Options("unused");
  o.output_format = UnpackFormat::kNpz;
  o.npz_path = dir_ + "/sub/out.npz";  // the directory is created
  std::vector<UnpackedFile> written;
  absl::Status s = Unpack(kExample, o, &written);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(ListDir(dir_ + "/sub"), ElementsAre("out.npz"));
  struct stat st;
  EXPECT_NE(::stat((dir_ + "/unused").c_str(), &st), 0);  // prefix unused
  std::map<std::string, std::string> entries = Entries(o.npz_path);
  std::vector<std::string> names;
  for (const auto& [name, data] : entries) {
    names.push_back(name);
    EXPECT_EQ(data, ReadFile(files.output_prefix + name)) << name;
  }
  EXPECT_THAT(names, ElementsAre("model.hlo", "snapshot_output0.npy",
                                 "value_input0.npy", "value_input1.npy"));
  ASSERT_EQ(written.size(), 5u);
  EXPECT_EQ(written[1].entry, "value_input0.npy");
  EXPECT_EQ(written[1].path, o.npz_path);
  EXPECT_EQ(written[1].bytes, entries["value_input0.npy"].size());
  EXPECT_EQ(written[1].archive_offset % 64, 0u);
  EXPECT_EQ(written[4].kind, UnpackedKind::kArchive);
  EXPECT_EQ(written[4].bytes, ReadFile(o.npz_path).size());
  // The entry's data, at archive_offset, is the .npy: payload 64-aligned.
  EXPECT_EQ(ReadFile(o.npz_path).substr(written[1].archive_offset,
                                        written[1].bytes),
            entries["value_input0.npy"]);
}

// Input 2 of 4 is corrupt: the archive is the one output, so nothing is
// left, neither OUT.npz nor a temp file.
TEST_F(UnpackNpzTest, AFailedRunLeavesNoArchive) {
  std::ifstream in(kExample, std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), {});
  std::string bad = good.substr(0, good.size() - 20);  // truncated
  std::string path = dir_ + "/bad.dhs";
  std::ofstream(path, std::ios::binary) << bad;
  UnpackOptions o = Options("x");
  o.output_format = UnpackFormat::kNpz;
  o.npz_path = dir_ + "/out.npz";
  std::vector<UnpackedFile> written;
  std::vector<std::string> announced;
  o.on_file = [&](const UnpackedFile& f) { announced.push_back(f.entry); };
  absl::Status s = Unpack(path, o, &written);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(ListDir(dir_), ElementsAre("bad.dhs"));
  // No archive: none of its entries is reported as written.
  EXPECT_THAT(announced, ElementsAre());
  EXPECT_TRUE(written.empty());
  // A run that completes reports each entry when the archive exists, then
  // the archive.
  std::vector<UnpackedKind> kinds;
  o.on_file = [&](const UnpackedFile& f) {
    EXPECT_TRUE(test::FileExists(o.npz_path)) << f.entry;
    kinds.push_back(f.kind);
  };
  ASSERT_TRUE(Unpack(kExample, o).ok());
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front(), UnpackedKind::kModule);
  EXPECT_EQ(kinds.back(), UnpackedKind::kArchive);
}

TEST_F(UnpackNpzTest, NoArchivePathIsAnError) {
  UnpackOptions o = Options("x");
  o.output_format = UnpackFormat::kNpz;
  absl::Status s = Unpack(kExample, o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("npz_path"));
}

// --- manifest --------------------------------------------------------------------

TEST_F(UnpackNpzTest, ManifestBesideTheFiles) {
  UnpackOptions o = Options("m");
  o.manifest = true;
  std::vector<UnpackedFile> written;
  ASSERT_TRUE(Unpack(kExample, o, &written).ok());
  EXPECT_THAT(ListDir(dir_ + "/m"),
              ElementsAre("manifest.json", "model.hlo", "snapshot_output0.npy",
                          "value_input0.npy", "value_input1.npy"));
  EXPECT_EQ(written.back().kind, UnpackedKind::kManifest);
  nlohmann::json m = nlohmann::json::parse(ReadFile(o.output_prefix + "manifest.json"));
  EXPECT_EQ(m["format"], "decomposed unpack manifest");
  EXPECT_TRUE(m["archive"].is_null());
  ASSERT_EQ(m["files"].size(), 4u);
  const nlohmann::json& x = m["files"][1];
  EXPECT_EQ(x["name"], "value_input0.npy");
  EXPECT_EQ(x["kind"], "input");
  // examples/make_example.py: parameters named x and y.
  EXPECT_EQ(x["parameter"], "x");
  EXPECT_TRUE(x["tuple_index"].is_null());
  EXPECT_EQ(x["dtype"], "<f4");
  EXPECT_EQ(x["element_type"], "F32");
  EXPECT_EQ(x["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(x["minor_to_major"], nlohmann::json({1, 0}));
  EXPECT_EQ(m["files"][2]["parameter"], "y");
  EXPECT_TRUE(m["files"][3]["parameter"].is_null());  // an output
  // Source offset and length: the bytes of the literal body in the input.
  const std::string input = ReadFile(kExample);
  for (const auto& f : m["files"]) {
    uint64_t off = f["source_offset"], len = f["source_length"];
    ASSERT_LE(off + len, input.size());
  }
  EXPECT_EQ(written[1].source_offset, x["source_offset"].get<uint64_t>());
  EXPECT_EQ(ReadFile(o.output_prefix + "model.hlo"),
            input.substr(m["files"][0]["source_offset"].get<uint64_t>(),
                         m["files"][0]["source_length"].get<uint64_t>()));
}

TEST_F(UnpackNpzTest, ManifestAsAnNpzEntry) {
  UnpackOptions o = Options("x");
  o.output_format = UnpackFormat::kNpz;
  o.npz_path = dir_ + "/out.npz";
  o.manifest = true;
  ASSERT_TRUE(Unpack(kExample, o).ok());
  std::map<std::string, std::string> entries = Entries(o.npz_path);
  ASSERT_EQ(entries.count("manifest.json"), 1u);
  nlohmann::json m = nlohmann::json::parse(entries["manifest.json"]);
  EXPECT_EQ(m["archive"], o.npz_path);
  const std::string npz = ReadFile(o.npz_path);
  for (const auto& f : m["files"]) {
    const std::string name = f["name"];
    EXPECT_EQ(npz.substr(f["archive_offset"].get<uint64_t>(),
                         f["bytes"].get<uint64_t>()),
              entries[name])
        << name;
  }
}

// --- hand encoders (protobuf wire format, from docs/format.md) -------------------

// ShapeProto F32[n]{0}.
std::string F32Shape(size_t n) {
  return VarintField(2, 11) + Len(3, Varint(n)) + Len(5, Len(1, Varint(0)));
}
std::string F32Literal(const std::vector<float>& v) {
  std::string data(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return Len(1, F32Shape(v.size())) + Len(8, data);
}

// A classic snapshot of a program whose one parameter "t" is a tuple
// (F32[2], F32[3]), with one tuple argument: its elements are the inputs
// (classic.h), elements 0 and 1 of parameter "t".
TEST_F(UnpackNpzTest, ATupleParameterNamesItsElements) {
  const std::string tuple_shape =
      VarintField(2, 13) + Len(4, F32Shape(2)) + Len(4, F32Shape(3));
  const std::string program = Len(1, tuple_shape) + Len(3, "t");
  const std::string module = Len(1, "m") + Len(4, program);
  const std::string argument = Len(1, tuple_shape) +
                               Len(10, F32Literal({1, 2})) +
                               Len(10, F32Literal({3, 4, 5}));
  const std::string snapshot = Len(1, Len(1, module)) + Len(2, argument);
  std::string path = dir_ + "/t.pb";
  std::ofstream(path, std::ios::binary) << snapshot;
  UnpackOptions o = Options("t");
  o.snapshot_type = SnapshotType::kClassic;
  o.dump_snapshot_outputs = false;
  o.manifest = true;
  absl::Status s = Unpack(path, o);
  ASSERT_TRUE(s.ok()) << s;
  nlohmann::json m =
      nlohmann::json::parse(ReadFile(o.output_prefix + "manifest.json"));
  ASSERT_EQ(m["files"].size(), 3u);
  EXPECT_EQ(m["files"][1]["parameter"], "t");
  EXPECT_EQ(m["files"][1]["tuple_index"], 0);
  EXPECT_EQ(m["files"][2]["parameter"], "t");
  EXPECT_EQ(m["files"][2]["tuple_index"], 1);
  EXPECT_EQ(m["files"][2]["shape"], nlohmann::json({3}));
  // inspect --json names them the same way.
  absl::StatusOr<InspectReport> r = InspectFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  nlohmann::ordered_json j = InspectReportJson(*r);
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][1]["parameter"], "t");
  EXPECT_EQ(j["inputs"][1]["tuple_index"], 1);
}

TEST(InspectParameterTest, InspectJsonNamesTheInputsLikeTheManifest) {
  absl::StatusOr<InspectReport> r = InspectFile(kExample);
  ASSERT_TRUE(r.ok()) << r.status();
  nlohmann::ordered_json j = InspectReportJson(*r);
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["parameter"], "x");
  EXPECT_EQ(j["inputs"][1]["parameter"], "y");
  EXPECT_TRUE(j["inputs"][1]["tuple_index"].is_null());
  EXPECT_FALSE(j["outputs"][0].contains("parameter"));
}

TEST(InputParameterTest, TheRule) {
  std::vector<std::string> names = {"a", "b"};
  EXPECT_EQ(InputParameterOf(names, false, 1)->name, "b");
  EXPECT_EQ(InputParameterOf(names, false, 1)->tuple_index, -1);
  EXPECT_FALSE(InputParameterOf(names, false, 2));
  EXPECT_EQ(InputParameterOf(names, true, 5)->name, "a");
  EXPECT_EQ(InputParameterOf(names, true, 5)->tuple_index, 5);
  EXPECT_FALSE(InputParameterOf({}, true, 0));
}

}  // namespace
}  // namespace decomposed
