// SpliceCopy (io/splice_copy.h): the bytes arrive whole and in order at any
// offsets, the source's file offset stays, a short source is reported as
// such, and an output that refuses splice (O_APPEND) gets the bytes the
// pipe already held before the caller is told to go on another way; a
// source that cannot seek is refused before any byte moves.
#include "decomposed/io/splice_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

// Bytes that differ at every position within any 251-byte window, so a
// shifted or reordered copy cannot match.
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  return s;
}

int OpenOut(const std::string& path, int extra_flags = 0) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags,
                0644);
}

TEST(SpliceCopy, CopiesAnUnalignedRangeAfterWhatTheOutputHolds) {
  test::TempDir dir;
  // 3 MiB + 5 bytes: several pipe loads and a partial one.
  const std::string data = Pattern((3 << 20) + 5 + 77);
  const std::string in_path = dir.Write("in.bin", data);
  OwnedFd in;
  ASSERT_TRUE(OpenForReading(in_path, &in).ok());
  int out = OpenOut(dir.File("out.bin"));
  ASSERT_GE(out, 0);
  ASSERT_EQ(::write(out, "head!", 5), 5);  // the output starts at byte 5
  uint64_t reported = 0;
  std::function<void(uint64_t)> progress = [&](uint64_t k) {
    EXPECT_LE(k, static_cast<uint64_t>(kSplicePipeBytes));
    reported += k;
  };
  bool unsupported = true;
  const uint64_t n = (3 << 20) + 5;
  absl::StatusOr<uint64_t> got =
      SpliceCopy(in.get(), 77, out, n, &progress, &unsupported);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, n);
  EXPECT_FALSE(unsupported);
  EXPECT_EQ(reported, n);
  EXPECT_EQ(::lseek(in.get(), 0, SEEK_CUR), 0);  // the source's offset stays
  EXPECT_EQ(::lseek(out, 0, SEEK_CUR), static_cast<off_t>(5 + n));
  ::close(out);
  EXPECT_EQ(test::ReadFile(dir.File("out.bin")), "head!" + data.substr(77, n));
}

TEST(SpliceCopy, ReportsASourceThatEndsEarly) {
  test::TempDir dir;
  const std::string data = Pattern(1000);
  OwnedFd in;
  ASSERT_TRUE(OpenForReading(dir.Write("in.bin", data), &in).ok());
  int out = OpenOut(dir.File("out.bin"));
  bool unsupported = true;
  absl::StatusOr<uint64_t> got =
      SpliceCopy(in.get(), 900, out, 500, nullptr, &unsupported);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 100u);  // what the file held from byte 900
  EXPECT_FALSE(unsupported);
  ::close(out);
  EXPECT_EQ(test::ReadFile(dir.File("out.bin")), data.substr(900));
}

TEST(SpliceCopy, AnAppendOnlyOutputGetsWhatThePipeHeldThenFallsBack) {
  // splice(2) refuses an O_APPEND output (EINVAL) after the first load
  // is already in the pipe: those bytes are written with write(2), and the
  // caller is told to copy the rest.
  test::TempDir dir;
  const std::string data = Pattern((2 << 20) + 3);
  OwnedFd in;
  ASSERT_TRUE(OpenForReading(dir.Write("in.bin", data), &in).ok());
  int out = OpenOut(dir.File("out.bin"), O_APPEND);
  bool unsupported = false;
  uint64_t reported = 0;
  std::function<void(uint64_t)> progress = [&](uint64_t k) { reported += k; };
  absl::StatusOr<uint64_t> got =
      SpliceCopy(in.get(), 3, out, 2 << 20, &progress, &unsupported);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(unsupported);
  EXPECT_LT(*got, uint64_t{2} << 20);
  EXPECT_EQ(reported, *got);
  ::close(out);
  EXPECT_EQ(test::ReadFile(dir.File("out.bin")), data.substr(3, *got));
}

TEST(SpliceCopy, IntoAPipe) {
  test::TempDir dir;
  const std::string data = Pattern(300000);
  OwnedFd in;
  ASSERT_TRUE(OpenForReading(dir.Write("in.bin", data), &in).ok());
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::string read_back;
  std::thread reader([&] {
    char buf[4096];
    ssize_t k;
    while ((k = ::read(p[0], buf, sizeof buf)) > 0) read_back.append(buf, k);
  });
  bool unsupported = true;
  absl::StatusOr<uint64_t> got =
      SpliceCopy(in.get(), 11, p[1], data.size() - 11, nullptr, &unsupported);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, data.size() - 11);
  EXPECT_FALSE(unsupported);
  EXPECT_EQ(read_back, data.substr(11));
}

TEST(SpliceCopy, ASourceThatCannotSeekIsLeftToTheCaller) {
  // `in` must be a file read at an offset; a pipe (ESPIPE) is refused
  // before any byte moves, and nothing is read from it.
  test::TempDir dir;
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(::write(p[1], "abc", 3), 3);
  int out = OpenOut(dir.File("out.bin"));
  bool unsupported = false;
  absl::StatusOr<uint64_t> got =
      SpliceCopy(p[0], 0, out, 3, nullptr, &unsupported);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 0u);
  EXPECT_TRUE(unsupported);
  char buf[3];
  EXPECT_EQ(::read(p[0], buf, 3), 3);  // still in the pipe
  ::close(p[0]);
  ::close(p[1]);
  ::close(out);
}

TEST(SpliceCopy, AnOutputOpenForReadingIsAnError) {
  test::TempDir dir;
  const std::string path = dir.Write("in.bin", Pattern(5000));
  OwnedFd in, out;
  ASSERT_TRUE(OpenForReading(path, &in).ok());
  ASSERT_TRUE(OpenForReading(path, &out).ok());
  bool unsupported = false;
  absl::StatusOr<uint64_t> got =
      SpliceCopy(in.get(), 0, out.get(), 5000, nullptr, &unsupported);
  // The pipe's bytes cannot be written by write(2) either: an error that
  // names the side, never a silent short copy.
  ASSERT_FALSE(got.ok());
  EXPECT_NE(std::string(got.status().message()).find("writing the output"),
            std::string::npos)
      << got.status();
}

}  // namespace
}  // namespace decomposed
