#include "decomposed/npy/npy_sink.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::HandNpyHeader;
using ::decomposed::test::ReadFile;



bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST(NpySinkTest, GoldenF32File) {
  std::string out;
  StringSink sink(&out);
  NpySink npy(sink);
  ASSERT_TRUE(npy.Begin(NpyHeaderFor(Info(PrimitiveType::kF32), {2, 3}), 8)
                  .ok());
  EXPECT_TRUE(npy.Write(std::string_view("\0\0\x80\x3f", 4)));
  EXPECT_TRUE(npy.Write(std::string_view("\0\0\0\x40", 4)));
  ASSERT_TRUE(npy.Finish().ok());
  std::string want =
      HandNpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  ASSERT_EQ(want.size(), 128u);
  want += std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  EXPECT_EQ(out, want);
  EXPECT_EQ(npy.header_bytes(), 128u);
  EXPECT_EQ(npy.file_bytes(), 136u);
}

TEST(NpySinkTest, DescrPerType) {
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kBF16), {}).descr, "|V2");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kPred), {}).descr, "|b1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kC64), {}).descr, "<c8");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kC128), {}).descr, "<c16");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kF8E4M3FN), {}).descr, "|V1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kS4), {}).descr, "|V1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kU2), {}).descr, "|V1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kF4E2M1FN), {}).descr, "|V1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kS8), {}).descr, "|i1");
  EXPECT_EQ(NpyHeaderFor(Info(PrimitiveType::kU16), {}).descr, "<u2");
}

TEST(NpySinkTest, ScalarAndFortranHeaders) {
  std::string out;
  StringSink sink(&out);
  NpySink npy(sink);
  ASSERT_TRUE(
      npy.Begin(NpyHeaderFor(Info(PrimitiveType::kU8), {}, false), 0).ok());
  ASSERT_TRUE(npy.Finish().ok());
  EXPECT_EQ(out, HandNpyHeader(
                     "{'descr': '|u1', 'fortran_order': False, 'shape': (), }"));
  std::string out2;
  StringSink sink2(&out2);
  NpySink npy2(sink2);
  ASSERT_TRUE(
      npy2.Begin(NpyHeaderFor(Info(PrimitiveType::kU8), {5}, true), 0).ok());
  EXPECT_EQ(out2, HandNpyHeader("{'descr': '|u1', 'fortran_order': True, "
                             "'shape': (5,), }"));
}

TEST(NpySinkTest, PayloadCountIsEnforced) {
  std::string out;
  StringSink sink(&out);
  NpySink npy(sink);
  ASSERT_TRUE(npy.Begin(NpyHeaderFor(Info(PrimitiveType::kU8), {3}), 3).ok());
  EXPECT_TRUE(npy.Write("ab"));
  absl::Status s = npy.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(npy.Write("c"));
  EXPECT_TRUE(npy.Finish().ok());
  EXPECT_FALSE(npy.Write("d"));
  EXPECT_EQ(npy.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(NpySinkTest, OrderErrors) {
  std::string out;
  StringSink sink(&out);
  NpySink npy(sink);
  EXPECT_FALSE(npy.Write("x"));
  EXPECT_EQ(npy.status().code(), absl::StatusCode::kFailedPrecondition);
  NpySink npy2(sink);
  ASSERT_TRUE(npy2.Begin(NpyHeader{"|u1", false, {}}, 0).ok());
  EXPECT_EQ(npy2.Begin(NpyHeader{"|u1", false, {}}, 0).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(NpySinkTest, SidecarText) {
  EXPECT_EQ(NpyMetaSidecarText("bfloat16"), "{\"ml_dtype\": \"bfloat16\"}");
}

TEST(NpySinkTest, AtomicFileAndSidecar) {
  std::string dir = ::testing::TempDir() + "/npy_sink_test";
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/x.npy";
  ::unlink(path.c_str());
  {
    AtomicFileSink file;
    ASSERT_TRUE(file.Open(path).ok());
    NpySink npy(file);
    ASSERT_TRUE(
        npy.Begin(NpyHeaderFor(Info(PrimitiveType::kBF16), {1}), 2).ok());
    npy.Write("\x80\x3f");
    // Dropped without Commit: nothing under the final name.
  }
  EXPECT_FALSE(Exists(path));
  {
    AtomicFileSink file;
    ASSERT_TRUE(file.Open(path).ok());
    NpySink npy(file);
    ASSERT_TRUE(
        npy.Begin(NpyHeaderFor(Info(PrimitiveType::kBF16), {1}), 2).ok());
    npy.Write("\x80\x3f");
    ASSERT_TRUE(npy.Finish().ok());
    ASSERT_TRUE(file.Commit().ok());
  }
  std::string got = ReadFile(path);
  EXPECT_EQ(got.size(), 130u);
  EXPECT_EQ(got.substr(128), "\x80\x3f");
  ASSERT_TRUE(WriteNpyMetaSidecar(path, "bfloat16").ok());
  EXPECT_EQ(ReadFile(path + ".meta"), "{\"ml_dtype\": \"bfloat16\"}");
  ::unlink((path + ".meta").c_str());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace decomposed
