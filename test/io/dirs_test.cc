// Directory creation shared by the writers (internal/dirs.h), and the
// writers that use it: any path shape gives a status, never a crash.
#include "decomposed/io/dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "decomposed/capture/bundle_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

std::string TempRoot() {
  std::string t = testing::TempDir() + "/dirs_test_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TEST(MakeDirectories, CreatesParentsAndAcceptsExisting) {
  const std::string root = TempRoot();
  EXPECT_TRUE(internal::MakeDirectories(root + "/a//b/c/").ok());
  EXPECT_TRUE(IsDir(root + "/a/b/c"));
  EXPECT_TRUE(internal::MakeDirectories(root + "/a/b").ok());
  EXPECT_TRUE(internal::MakeDirectories("").ok());
  std::ofstream(root + "/file") << "x";
  absl::Status s = internal::MakeDirectories(root + "/file/d");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), testing::HasSubstr("not a directory"));
}

TEST(MakeDirectories, VeryLongPathIsAnErrorNotAStackOverflow) {
  // 200000 slashes: the recursive helpers this replaced recursed once per
  // character of a path whose parents could not be stat'ed.
  const std::string root = TempRoot();
  const std::string call_dir =
      root + "/x" + std::string(200000, '/') + "y/call0";
  float v = 1;
  capture::HostTensor t{&v, capture::TorchType::kFloat32, {1}, {}};
  capture::CallMeta m;
  m.hash = "h";
  m.format = capture::BundleFormat::kNpy;
  m.selected_by = {"call_index"};
  absl::Status s = capture::WriteBundle(call_dir, {&t, 1}, m);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), testing::HasSubstr("creating directory"));
}

TEST(TempDirectory, RemovedWithItsFilesUnlessReleased) {
  const std::string root = TempRoot();
  std::string kept;
  {
    internal::TempDirectory t;
    ASSERT_TRUE(t.Create(root + "/.x.tmp.").ok());
    kept = t.path();
    EXPECT_EQ(kept.rfind(root + "/.x.tmp.", 0), 0u);
    std::ofstream(kept + "/a") << "1";
    std::ofstream(kept + "/b") << "2";
  }
  EXPECT_FALSE(IsDir(kept));
  {
    internal::TempDirectory t;
    ASSERT_TRUE(t.Create(root + "/.y.tmp.").ok());
    kept = t.path();
    t.Release();
  }
  EXPECT_TRUE(IsDir(kept));
  internal::TempDirectory bad;
  absl::Status s = bad.Create(root + "/missing/.z.tmp.");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), testing::HasSubstr("temporary directory"));
}

}  // namespace
}  // namespace decomposed
