// Byte sinks: memory, ostream, fd (buffered and direct writes, write
// errors) and the atomic file sink (temp file + rename on commit).
#include "decomposed/io/byte_sink.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::FileExists;
using ::decomposed::test::ReadFile;
using ::decomposed::test::TempDir;
using ::testing::HasSubstr;

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

uint64_t FileSize(int fd) {
  struct stat st;
  EXPECT_EQ(::fstat(fd, &st), 0);
  return static_cast<uint64_t>(st.st_size);
}

// The same bytes through any sink: a small decomposed file.
template <ByteSink K>
void WriteSample(K& sink) {
  DecomposedWriter<K> w(sink);
  ASSERT_TRUE(w.WriteHeader("snap").ok());
  ASSERT_TRUE(w.BeginInputs(1).ok());
  ASSERT_TRUE(w.WriteElement("body").ok());
  ASSERT_TRUE(w.Finish().ok());
}

std::string Sample() {
  // snapshot box(4) "snap", count box(1), box(4) "body", output count box(0)
  return test::HexBytes(
      "03 3a 01 04 73 6e 61 70 03 3a 01 01 03 3a 01 04 62 6f 64 79 "
      "03 3a 01 00");
}

TEST(MemorySinkTest, StringVectorNull) {
  std::string s = "pre";
  StringSink ss(&s);
  WriteSample(ss);
  EXPECT_EQ(s, "pre" + Sample());
  EXPECT_EQ(ss.position(), s.size());

  std::vector<char> v;
  VectorSink vs(&v);
  WriteSample(vs);
  EXPECT_EQ(std::string(v.begin(), v.end()), Sample());
  EXPECT_EQ(vs.position(), Sample().size());

  NullSink ns;
  WriteSample(ns);
  EXPECT_EQ(ns.position(), Sample().size());
  EXPECT_TRUE(ns.status().ok());
}

TEST(OstreamSinkTest, WritesAndFails) {
  std::ostringstream out;
  OstreamSink sink(out);
  WriteSample(sink);
  EXPECT_TRUE(sink.Flush());
  EXPECT_EQ(out.str(), Sample());
  EXPECT_EQ(sink.position(), Sample().size());

  std::ostringstream bad;
  bad.setstate(std::ios::badbit);
  OstreamSink failing(bad);
  EXPECT_FALSE(failing.Write("x"));
  EXPECT_EQ(failing.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(failing.status().message(), HasSubstr("at byte 0"));
  EXPECT_FALSE(failing.Write("y"));  // sticky
  EXPECT_FALSE(failing.Flush());
}

TEST(FdSinkTest, SmallWritesAreBuffered) {
  TempDir dir;
  int fd = ::open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  {
    FdSink sink{OwnedFd(fd), 64};
    ASSERT_TRUE(sink.Write("abc"));
    ASSERT_TRUE(sink.Write("def"));
    EXPECT_EQ(FileSize(fd), 0u);  // still in the buffer
    EXPECT_EQ(sink.position(), 6u);
    ASSERT_TRUE(sink.Flush());
    EXPECT_EQ(FileSize(fd), 6u);
    // Filling past the buffer flushes it first.
    ASSERT_TRUE(sink.Write(std::string(60, 'x')));
    ASSERT_TRUE(sink.Write(std::string(10, 'y')));
    EXPECT_EQ(FileSize(fd), 66u);
  }  // the destructor flushes the rest
  EXPECT_EQ(ReadFile(dir.File("f")),
            "abcdef" + std::string(60, 'x') + std::string(10, 'y'));
}

TEST(FdSinkTest, LargeWritesGoStraightToTheFd) {
  TempDir dir;
  int fd = ::open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::string big(1 << 20, 'b');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 13);
  {
    FdSink sink{OwnedFd(fd), 4096};
    ASSERT_TRUE(sink.Write("head"));
    ASSERT_TRUE(sink.Write(big));
    // "head" was flushed before the direct write: both are in the file.
    EXPECT_EQ(FileSize(fd), 4 + big.size());
    ASSERT_TRUE(sink.Write("tail"));
    EXPECT_EQ(sink.position(), 8 + big.size());
  }
  EXPECT_EQ(ReadFile(dir.File("f")), "head" + big + "tail");
}

TEST(FdSinkTest, MovedFromSinkWritesNothing) {
  TempDir dir;
  int fd = ::open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  {
    FdSink a{OwnedFd(fd), 64};
    ASSERT_TRUE(a.Write("abc"));
    FdSink b(std::move(a));
    ASSERT_TRUE(b.Write("def"));
  }
  EXPECT_EQ(ReadFile(dir.File("f")), "abcdef");
}

TEST(FdSinkTest, WriteErrorDevFull) {
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  FdSink sink{OwnedFd(fd), 64};
  ASSERT_TRUE(sink.Write("abc"));  // buffered: not yet seen by the kernel
  EXPECT_FALSE(sink.Flush());
  EXPECT_EQ(sink.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(sink.status().message(), HasSubstr("at byte 3"));
  EXPECT_FALSE(sink.Write("d"));  // sticky
  // A large (direct) write fails too.
  int fd2 = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  FdSink direct{OwnedFd(fd2), 64};
  EXPECT_FALSE(direct.Write(std::string(1000, 'z')));
  EXPECT_FALSE(direct.status().ok());
}

TEST(FdSinkTest, WriterReportsTheSinkError) {
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  FdSink sink{OwnedFd(fd), 16};
  DecomposedWriter<FdSink> w(sink);
  // Everything fits the 16-byte buffer until the body; the first flush
  // fails, and every later call reports the same sticky error.
  EXPECT_TRUE(w.WriteHeader("snap").ok());
  EXPECT_TRUE(w.BeginInputs(1).ok());
  absl::Status s = w.WriteElement(std::string(100, 'b'));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);  // ENOSPC
  EXPECT_THAT(s.message(), HasSubstr("No space left on device"));
  EXPECT_EQ(w.Finish().code(), absl::StatusCode::kResourceExhausted);
}

TEST(FdSinkTest, WriteErrorReadOnlyFd) {
  TempDir dir;
  int fd = ::open(dir.Write("f", "x").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  FdSink sink{OwnedFd(fd)};
  ASSERT_TRUE(sink.Write("abc"));
  EXPECT_FALSE(sink.Flush());
  EXPECT_EQ(sink.status().code(), absl::StatusCode::kFailedPrecondition);  // EBADF
  EXPECT_THAT(sink.status().message(), HasSubstr("write"));
}

TEST(FdSinkTest, WriteErrorClosedPipe) {
  ::signal(SIGPIPE, SIG_IGN);
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);
  FdSink sink{OwnedFd(p[1]), 16};
  EXPECT_FALSE(sink.Write(std::string(100, 'q')));
  EXPECT_FALSE(sink.status().ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("Broken pipe"));
}

TEST(FdSinkTest, BorrowedFdStaysOpen) {
  TempDir dir;
  int fd = ::open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  {
    FdSinkRef sink{UnownedFd(fd)};
    WriteSample(sink);
  }
  EXPECT_EQ(::write(fd, "!", 1), 1);  // still open
  ::close(fd);
  EXPECT_EQ(ReadFile(dir.File("f")), Sample() + "!");
}

TEST(AtomicFileSinkTest, CommitRenames) {
  TempDir dir;
  std::string target = dir.File("out.bin");
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(target).ok());
  EXPECT_FALSE(FileExists(target));
  EXPECT_TRUE(FileExists(sink.temp_path()));
  EXPECT_THAT(sink.temp_path(), HasSubstr("/.out.bin.tmp."));
  WriteSample(sink);
  EXPECT_FALSE(FileExists(target));
  std::string temp = sink.temp_path();
  ASSERT_TRUE(sink.Commit().ok());
  EXPECT_EQ(ReadFile(target), Sample());
  EXPECT_FALSE(FileExists(temp));
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.bin"});
  struct stat st;
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// An output in a directory that is not there: named as the output, with
// the directory, not as the temp file; nothing is created.
TEST(AtomicFileSinkTest, AMissingDirectoryIsNamed) {
  TempDir dir;
  const std::string target = dir.path() + "/no/such/out.bin";
  AtomicFileSink sink;
  absl::Status s = sink.Open(target);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "writing " + target + " (no directory " + dir.path() +
                             "/no/such/): No such file or directory");
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(AtomicFileSinkTest, CommitWithSyncAndMode) {
  TempDir dir;
  std::string target = dir.File("out.bin");
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(target, 0600).ok());
  ASSERT_TRUE(sink.Write(std::string(1 << 20, 'z')));
  ASSERT_TRUE(sink.Commit(/*sync=*/true).ok());
  EXPECT_EQ(ReadFile(target).size(), size_t{1} << 20);
  struct stat st;
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AtomicFileSinkTest, DroppedWithoutCommitLeavesNothing) {
  TempDir dir;
  std::string target = dir.File("out.bin");
  {
    AtomicFileSink sink;
    ASSERT_TRUE(sink.Open(target).ok());
    ASSERT_TRUE(sink.Write(std::string(1 << 20, 'z')));  // some on disk
    EXPECT_EQ(ListDir(dir.path()).size(), 1u);           // the temp file
  }
  EXPECT_TRUE(ListDir(dir.path()).empty());
  // Abandon() does the same, explicitly.
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(target).ok());
  WriteSample(sink);
  sink.Abandon();
  EXPECT_TRUE(ListDir(dir.path()).empty());
  EXPECT_EQ(sink.Commit().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(AtomicFileSinkTest, ExistingTargetReplacedOnlyOnCommit) {
  TempDir dir;
  std::string target = dir.Write("out.bin", "old contents");
  {
    AtomicFileSink sink;
    ASSERT_TRUE(sink.Open(target).ok());
    WriteSample(sink);
    ASSERT_TRUE(sink.Flush());
    EXPECT_EQ(ReadFile(target), "old contents");
  }  // dropped: the old file stays
  EXPECT_EQ(ReadFile(target), "old contents");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.bin"});
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(target).ok());
  WriteSample(sink);
  EXPECT_EQ(ReadFile(target), "old contents");
  ASSERT_TRUE(sink.Commit().ok());
  EXPECT_EQ(ReadFile(target), Sample());
}

TEST(AtomicFileSinkTest, CommitReportsACloseErrorAndKeepsNoFile) {
  // close(2) can be the first to report a lost write (NFS, quotas). Make it
  // fail for sure: close the descriptor behind the sink's back, after all
  // data is flushed, so only the sink's own close sees EBADF.
  TempDir dir;
  std::string target = dir.Write("out.bin", "old contents");
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(target).ok());
  WriteSample(sink);
  ASSERT_TRUE(sink.Flush());
  ASSERT_EQ(::close(sink.fd_sink()->fd()), 0);
  absl::Status s = sink.Commit();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;  // EBADF
  EXPECT_THAT(s.message(), HasSubstr("close"));
  EXPECT_THAT(s.message(), HasSubstr(target));
  EXPECT_EQ(ReadFile(target), "old contents");
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileSinkTest, FinalNamesUpToNameMaxCommit) {
  // The temp name adds "." and ".tmp.XXXXXX" (12 bytes); a final name near
  // NAME_MAX still gets a temp name that fits, shortened from its start.
  TempDir dir;
  for (size_t len : {size_t{243}, size_t{244}, size_t{255}}) {
    std::string name(len, 'n');
    std::string target = dir.File(name);
    AtomicFileSink sink;
    absl::Status s = sink.Open(target);
    ASSERT_TRUE(s.ok()) << len << ": " << s;
    std::string temp_base =
        sink.temp_path().substr(sink.temp_path().rfind('/') + 1);
    EXPECT_LE(temp_base.size(), size_t{NAME_MAX});
    const std::string prefix = absl::StrCat(".", name.substr(0, 243), ".tmp.");
    EXPECT_EQ(temp_base.rfind(prefix, 0), 0u);
    ASSERT_TRUE(sink.Write("x"));
    ASSERT_TRUE(sink.Commit().ok()) << len;
    EXPECT_EQ(ReadFile(target), "x");
  }
  EXPECT_EQ(ListDir(dir.path()).size(), 3u);
  // One byte past NAME_MAX is the file system's refusal, reported by rename.
  AtomicFileSink sink;
  ASSERT_TRUE(sink.Open(dir.File(std::string(256, 'n'))).ok());
  EXPECT_EQ(sink.Commit().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ListDir(dir.path()).size(), 3u);
}

TEST(AtomicFileSinkTest, OpenInAMissingOrUnwritableDirFails) {
  TempDir dir;
  AtomicFileSink sink;
  absl::Status s = sink.Open(dir.File("no/such/dir/out.bin"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no/such/dir/out.bin"));
  EXPECT_FALSE(sink.Write("x"));
  EXPECT_EQ(sink.status().code(), absl::StatusCode::kFailedPrecondition);

  // A "directory" that is a regular file.
  std::string file = dir.Write("plain", "x");
  s = sink.Open(file + "/out.bin");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("Not a directory"));
}

TEST(AtomicFileSinkTest, OpenInAReadOnlyDirFails) {
  TempDir dir;
  std::string ro = dir.File("ro");
  ASSERT_EQ(::mkdir(ro.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  // Root ignores directory permissions: as root, the open runs in a child
  // that has dropped to an unprivileged user (nobody, 65534), so the test
  // runs on every machine instead of being skipped.
  auto attempt = [&]() -> int {
    AtomicFileSink sink;
    absl::Status s = sink.Open(ro + "/out.bin");
    return s.code() == absl::StatusCode::kPermissionDenied ? 0 : 1;
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(attempt(), 0);
  } else {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
      ::_exit(attempt());
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "1: the open did not fail with kPermissionDenied; 2: setuid failed";
  }
  EXPECT_TRUE(ListDir(ro).empty());
  ::chmod(ro.c_str(), 0755);
}

TEST(AtomicFileSinkTest, RelativePath) {
  TempDir dir;
  char cwd[4096];
  ASSERT_TRUE(::getcwd(cwd, sizeof cwd));
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  {
    AtomicFileSink sink;
    ASSERT_TRUE(sink.Open("rel.bin").ok());
    EXPECT_EQ(sink.temp_path().rfind(".rel.bin.tmp.", 0), 0u);
    ASSERT_TRUE(sink.Write("r"));
    ASSERT_TRUE(sink.Commit().ok());
  }
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_EQ(ReadFile(dir.File("rel.bin")), "r");
}

}  // namespace
}  // namespace decomposed
