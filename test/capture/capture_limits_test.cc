// The capture limits of include/decomposed/limits.h (bundles and .pt
// files), and kMaxSidecarBytes, each at the limit (not refused for it) and
// just past it (kResourceExhausted). Pickles are hand-written opcodes; zips
// come from StoredZipWriter (their layout is not what is under test).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/pt_reader.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/npy/stored_zip.h"
#include "decomposed/capture/unpickler.h"
#include "decomposed/capture/zip_reader.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::capture {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string t = ::testing::TempDir() + "/capture_limits_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

void Spit(const std::string& path, const std::string& s) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << s;
}

// A sparse file of `size` bytes whose last bytes are `tail`.
void SparseFile(const std::string& path, uint64_t size,
                const std::string& tail = "") {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.seekp(static_cast<std::streamoff>(size - tail.size()));
  out << tail;
}

// --- kMaxPickleValues ----------------------------------------------------

// MARK, n NONEs, TUPLE, STOP: n + 1 values.
std::string TupleOfNones(size_t n) {
  std::string s = "(";
  s.append(n, 'N');
  return s + "t.";
}

TEST(CaptureLimits, PickleValuesAtAndPastLimit) {
  absl::StatusOr<PicklePtr> at =
      Unpickle(TupleOfNones(limits::kMaxPickleValues - 1), "at");
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ((*at)->items.size(), limits::kMaxPickleValues - 1);
  absl::StatusOr<PicklePtr> past =
      Unpickle(TupleOfNones(limits::kMaxPickleValues), "past");
  EXPECT_EQ(past.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(past.status().message(), HasSubstr("values"));
}

TEST(CaptureLimits, PickleStackIsBoundedWithoutNewValues) {
  // NONE, BINPUT 0, then BINGETs: each pushes the memo's value again
  // without creating one; the stack is bounded all the same.
  std::string p("Nq\0", 3);
  for (size_t i = 0; i < limits::kMaxPickleValues; ++i) p += std::string("h\0", 2);
  p += ".";
  absl::StatusOr<PicklePtr> r = Unpickle(p, "gets");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

// --- kMaxPickleDepth -----------------------------------------------------------

TEST(CaptureLimits, PickleDepthAtAndPastLimit) {
  // NONE is depth 1; each TUPLE1 adds one.
  const size_t ok = limits::kMaxPickleDepth - 1;
  absl::StatusOr<PicklePtr> at =
      Unpickle(absl::StrCat("N", std::string(ok, '\x85'), "."), "at");
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ((*at)->depth, limits::kMaxPickleDepth);
  absl::StatusOr<PicklePtr> past =
      Unpickle(absl::StrCat("N", std::string(ok + 1, '\x85'), "."), "past");
  EXPECT_EQ(past.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(past.status().message(), HasSubstr("nested deeper"));
}

// --- kMaxZipEntries --------------------------------------------------------------

std::string ZipOfEmptyEntries(size_t n) {
  std::string bytes;
  StringSink sink(&bytes);
  StoredZipOptions o;
  o.alignment = 1;
  StoredZipWriter<StringSink> zip(sink, o);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(zip.AddEntry(absl::StrCat("e", i), "").ok());
  }
  EXPECT_TRUE(zip.Finish().ok());
  return bytes;
}

TEST(CaptureLimits, ZipEntriesAtAndPastLimit) {
  // More than 65535 entries: the writer writes a ZIP64 end record.
  const std::string dir = TempDir();
  const std::string p = dir + "/t.pt";
  Spit(p, ZipOfEmptyEntries(limits::kMaxZipEntries));
  absl::StatusOr<RegularFile> f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<ZipDirectory> at = ReadZipDirectory(*f);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->size(), limits::kMaxZipEntries);
  Spit(p, ZipOfEmptyEntries(limits::kMaxZipEntries + 1));
  f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<ZipDirectory> past = ReadZipDirectory(*f);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(past.status().message(), HasSubstr("zip entries"));
}

// --- kMaxPickleBytes --------------------------------------------------------------

// A .pt whose data.pkl is `size` bytes: a string of the rest, then STOP.
std::string PtWithPickleOf(uint64_t size) {
  std::string pkl = "X";
  const uint32_t n = static_cast<uint32_t>(size - 6);
  for (int i = 0; i < 4; ++i) pkl.push_back(static_cast<char>(n >> (8 * i)));
  pkl += std::string(n, 'a') + ".";
  EXPECT_EQ(pkl.size(), size);
  std::string bytes;
  StringSink sink(&bytes);
  StoredZipWriter<StringSink> zip(sink);
  EXPECT_TRUE(zip.AddEntry("t/data.pkl", pkl).ok());
  EXPECT_TRUE(zip.Finish().ok());
  return bytes;
}

TEST(CaptureLimits, PickleBytesAtAndPastLimit) {
  const std::string p = TempDir() + "/t.pt";
  Spit(p, PtWithPickleOf(limits::kMaxPickleBytes));
  absl::StatusOr<RegularFile> f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok());
  // Read and unpickled: a string is not a tensor.
  absl::Status at = ReadPtTensor(*f).status();
  EXPECT_EQ(at.code(), absl::StatusCode::kInvalidArgument) << at;
  EXPECT_THAT(at.message(), HasSubstr("rebuild call"));
  Spit(p, PtWithPickleOf(limits::kMaxPickleBytes + 1));
  f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok());
  absl::Status past = ReadPtTensor(*f).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kResourceExhausted) << past;
  EXPECT_THAT(past.message(), HasSubstr("data.pkl"));
}

// --- kMaxZipDirectoryBytes ------------------------------------------------------

// A sparse zip whose end record declares one entry in a central directory of
// `cd_size` bytes at byte 0 (the directory itself is zeros).
void ZipWithDirectoryOf(const std::string& path, uint32_t cd_size) {
  std::string eocd("PK\x05\x06", 4);
  eocd += std::string(6, '\0');
  eocd += std::string("\x01\x00", 2);
  for (int i = 0; i < 4; ++i) eocd.push_back(static_cast<char>(cd_size >> (8 * i)));
  eocd += std::string(6, '\0');  // at byte 0; no comment
  SparseFile(path, uint64_t{cd_size} + eocd.size(), eocd);
}

TEST(CaptureLimits, ZipDirectoryBytesAtAndPastLimit) {
  const std::string p = TempDir() + "/t.pt";
  ZipWithDirectoryOf(p, limits::kMaxZipDirectoryBytes);
  absl::StatusOr<RegularFile> f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok());
  absl::Status at = ReadZipDirectory(*f).status();
  EXPECT_EQ(at.code(), absl::StatusCode::kInvalidArgument) << at;
  EXPECT_THAT(at.message(), HasSubstr("entry 0 malformed"));
  ZipWithDirectoryOf(p, limits::kMaxZipDirectoryBytes + 1);
  f = RegularFile::Open(p);
  ASSERT_TRUE(f.ok());
  absl::Status past = ReadZipDirectory(*f).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kResourceExhausted) << past;
}

// --- kMaxMetaJsonBytes, kMaxInputs ------------------------------------------------

TEST(CaptureLimits, MetaJsonBytesAtAndPastLimit) {
  const std::string dir = TempDir();
  // Spaces, then "{}": valid JSON of exactly the limit, refused for its
  // content (no schema), not its size.
  SparseFile(dir + "/meta.json", limits::kMaxMetaJsonBytes, "{}");
  {
    std::string spaces(1 << 20, ' ');
    std::fstream out(dir + "/meta.json",
                     std::ios::binary | std::ios::in | std::ios::out);
    for (uint64_t at = 0; at + 2 < limits::kMaxMetaJsonBytes;
         at += spaces.size()) {
      out.seekp(static_cast<std::streamoff>(at));
      out.write(spaces.data(), static_cast<std::streamsize>(std::min<uint64_t>(
                                   spaces.size(), limits::kMaxMetaJsonBytes - 2 - at)));
    }
  }
  absl::Status at = OpenBundle(dir).status();
  EXPECT_EQ(at.code(), absl::StatusCode::kInvalidArgument) << at;
  EXPECT_THAT(at.message(), HasSubstr("schema"));
  SparseFile(dir + "/meta.json", limits::kMaxMetaJsonBytes + 1, "{}");
  absl::Status past = OpenBundle(dir).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kResourceExhausted) << past;
}

std::string MetaWithInputs(size_t n) {
  std::string inputs;
  inputs.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) inputs += i ? ",0" : "0";
  return R"({"schema": 1, "format": "npy", "inputs": [)" + inputs + "]}";
}

TEST(CaptureLimits, InputsAtAndPastLimit) {
  const std::string dir = TempDir();
  Spit(dir + "/meta.json", MetaWithInputs(limits::kMaxInputs));
  absl::Status at = OpenBundle(dir).status();
  EXPECT_EQ(at.code(), absl::StatusCode::kInvalidArgument) << at;
  EXPECT_THAT(at.message(), HasSubstr("inputs[0]"));
  Spit(dir + "/meta.json", MetaWithInputs(limits::kMaxInputs + 1));
  absl::Status past = OpenBundle(dir).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kResourceExhausted) << past;
}

// --- kMaxSidecarBytes ------------------------------------------------------------

TEST(CaptureLimits, SidecarBytesAtAndPastLimit) {
  const std::string npy = TempDir() + "/a.npy";
  const std::string json = R"({"ml_dtype": "bfloat16"})";
  Spit(npy + ".meta",
       std::string(limits::kMaxSidecarBytes - json.size(), ' ') + json);
  absl::StatusOr<std::optional<PrimitiveType>> at = ReadNpyMetaSidecar(npy);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(*at, PrimitiveType::kBF16);
  Spit(npy + ".meta",
       std::string(limits::kMaxSidecarBytes + 1 - json.size(), ' ') + json);
  EXPECT_EQ(ReadNpyMetaSidecar(npy).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace decomposed::capture
