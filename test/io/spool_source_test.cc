// SpoolSource (io/spool_source.h), OpenInput (io/input.h), the stdin mark
// of WithFile (status.h), and the snapshot commands read from a pipe or a
// FIFO: the same files, bytes and messages as from a regular file.
#include "decomposed/io/spool_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/input.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "decomposed/status.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

namespace fs = std::filesystem;

std::string Pattern(size_t n, uint32_t seed = 1) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A pipe whose write end a thread fills with `data`, then closes.
class Pipe {
 public:
  explicit Pipe(std::string data) : data_(std::move(data)) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_ = fds[0];
    writer_ = std::thread([w = fds[1], this] {
      size_t off = 0;
      while (off < data_.size()) {
        ssize_t n = ::write(w, data_.data() + off,
                            std::min<size_t>(data_.size() - off, 100000));
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::close(w);
    });
  }
  ~Pipe() { writer_.join(); }
  // The read end (ownership passes to the caller).
  OwnedFd Take() { return OwnedFd(std::exchange(read_, -1)); }

 private:
  std::string data_;
  int read_ = -1;
  std::thread writer_;
};

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "spool-test-XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& n) const { return path_ + "/" + n; }

 private:
  std::string path_;
};

TEST(SpoolSource, ReadsEveryByteAndKnowsTheSizeOnlyAtTheEnd) {
  const std::string data = Pattern(3 << 20);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take());
  EXPECT_FALSE(src.size().has_value());
  std::string got(data.size(), '\0');
  ASSERT_TRUE(src.Read(got.data(), got.size()));
  EXPECT_EQ(got, data);
  EXPECT_FALSE(src.Pull(1));
  EXPECT_TRUE(src.status().ok());
  ASSERT_TRUE(src.size().has_value());
  EXPECT_EQ(*src.size(), data.size());
}

// Without Release everything is retained: past the memory limit in the temp
// file, and every position can be sought and read again.
TEST(SpoolSource, SpillsPastTheMemoryLimitAndSeeksAnywhereAfterTheMark) {
  const std::string data = Pattern(5 << 20, 7);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take(), /*memory_limit=*/1 << 20);
  ASSERT_TRUE(src.Skip(data.size()));
  EXPECT_TRUE(src.in_file());
  std::mt19937 rng(3);
  for (int k = 0; k < 200; ++k) {
    uint64_t pos = rng() % data.size();
    size_t n = std::min<size_t>(rng() % 300000, data.size() - pos);
    ASSERT_TRUE(src.Seek(pos));
    std::string got(n, '\0');
    ASSERT_TRUE(src.Read(got.data(), n)) << pos << " " << n;
    ASSERT_EQ(got, data.substr(pos, n)) << pos;
  }
  // Release: nothing before the mark can be sought any more; once what is
  // retained fits in memory the temp file is gone.
  src.Seek(data.size() - 1000);
  src.Release(data.size() - 1000);
  EXPECT_FALSE(src.in_file());
  EXPECT_FALSE(src.Seek(data.size() - 1001));
  ASSERT_TRUE(src.Seek(data.size() - 1000));
  std::string tail(1000, '\0');
  ASSERT_TRUE(src.Read(tail.data(), tail.size()));
  EXPECT_EQ(tail, data.substr(data.size() - 1000));
}

// The consumer pattern of unpack: read an element, seek back inside it,
// release before the next one. Memory and disk stay bounded by an element.
TEST(SpoolSource, ReleasingAtEachElementKeepsOneElement) {
  const size_t kElement = 700 << 10;
  const std::string data = Pattern(12 * kElement, 9);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take(), /*memory_limit=*/1 << 20);
  for (size_t i = 0; i < 12; ++i) {
    const uint64_t start = i * kElement;
    src.Release(start);
    EXPECT_EQ(src.release_mark(), start);
    ASSERT_TRUE(src.Skip(kElement));  // the plan pass
    ASSERT_TRUE(src.Seek(start));     // back to read the data
    std::string got(kElement, '\0');
    ASSERT_TRUE(src.Read(got.data(), kElement));
    ASSERT_EQ(got, data.substr(start, kElement)) << i;
    EXPECT_LE(src.held_end() - src.release_mark(), 2 * kElement);
  }
}

TEST(SpoolSource, HoldReadsAheadWithoutMoving) {
  const std::string data = Pattern(1000);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take());
  ASSERT_TRUE(src.Skip(10));
  ASSERT_TRUE(src.Hold(500));
  EXPECT_GE(src.held_end(), 510u);
  EXPECT_EQ(src.position(), 10u);
  ASSERT_TRUE(src.Hold(~uint64_t{0}));
  ASSERT_TRUE(src.size().has_value());
  EXPECT_EQ(*src.size(), 1000u);
  EXPECT_EQ(src.position(), 10u);
}

// A declared length the data cannot hold fails with the message a regular
// file gives: CheckHeld reads ahead (HoldAhead) until the data ends.
TEST(SpoolSource, CheckHeldFailsAsForARegularFile) {
  const std::string data = Pattern(5000);
  MemorySource mem(data);
  ASSERT_TRUE(mem.Skip(100));
  absl::Status file_error = CheckHeld(mem, 6000, Frame{"input", 0, "body"});
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take());
  ASSERT_TRUE(src.Skip(100));
  absl::Status pipe_error = CheckHeld(src, 6000, Frame{"input", 0, "body"});
  EXPECT_EQ(pipe_error, file_error);
  EXPECT_EQ(pipe_error.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(CheckHeld(src, 4900, Frame{"x"}).ok());
  // A view of the spool past what the data holds knows its size as well.
  LimitedSource<SpoolSource<OwnedFd>> view(src, 300);
  EXPECT_EQ(CheckHeld(view, 250, Frame{"x"}).code(),
            absl::StatusCode::kOutOfRange);
}

// SpillAll(max) stops one byte past `max` (a classic stream's 2 GiB in
// SnapshotFile::Open), whatever the stream holds after it.
TEST(SpoolSource, SpillAllStopsPastItsBound) {
  const std::string data = Pattern(4 << 20, 7);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take());
  ASSERT_TRUE(src.Skip(10));
  absl::StatusOr<OwnedFd> fd = src.SpillAll(100000);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_GT(src.held_end(), 100000u);
  EXPECT_LT(src.held_end(), data.size());  // not the whole stream
  FdSource file(*std::move(fd));
  ASSERT_TRUE(file.size().has_value());
  EXPECT_EQ(*file.size(), src.held_end());
  std::string got(100001, '\0');
  ASSERT_TRUE(file.Read(got.data(), got.size()));
  EXPECT_EQ(got, data.substr(0, got.size()));
  // Within the bound the whole stream is kept.
  Pipe small(data.substr(0, 5000));
  SpoolSource<OwnedFd> s2(small.Take());
  absl::StatusOr<OwnedFd> fd2 = s2.SpillAll(100000);
  ASSERT_TRUE(fd2.ok());
  EXPECT_EQ(s2.held_end(), 5000u);
  ASSERT_TRUE(src.Hold(~uint64_t{0}));  // the writer finishes before the pipe closes
}

TEST(SpoolSource, SpillAllGivesARegularFileOfTheWholeStream) {
  const std::string data = Pattern(2 << 20, 5);
  Pipe pipe(data);
  SpoolSource<OwnedFd> src(pipe.Take());
  ASSERT_TRUE(src.Skip(1000));
  absl::StatusOr<OwnedFd> fd = src.SpillAll();
  ASSERT_TRUE(fd.ok()) << fd.status();
  FdSource file(*std::move(fd));
  ASSERT_TRUE(file.size().has_value());
  EXPECT_EQ(*file.size(), data.size());
  std::string got(data.size(), '\0');
  ASSERT_TRUE(file.Read(got.data(), got.size()));
  EXPECT_EQ(got, data);
  // After a Release the start is gone: refused.
  src.Release(1000);
  EXPECT_FALSE(src.SpillAll().ok());
}

TEST(SpoolSource, ReadErrorsAreSticky) {
  // A write-only descriptor: read(2) fails with EBADF.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  SpoolSource<OwnedFd> src{OwnedFd(fds[1])};
  EXPECT_FALSE(src.Pull(1));
  EXPECT_FALSE(src.status().ok());
  EXPECT_FALSE(src.Hold(10));
}

TEST(WithFile, MarksStandardInput) {
  absl::Status s = absl::InvalidArgumentError("x: bad (at byte 4)");
  EXPECT_EQ(WithFile(s, "a.bin").message(), "x: bad (at byte 4 of a.bin)");
  EXPECT_EQ(WithFile(s, "-").message(), "x: bad (at byte 4, from stdin)");
  EXPECT_EQ(WithFile(absl::InternalError("y"), "-").message(),
            "y (from stdin)");
}

TEST(OpenInput, TellsRegularFilesFromStreams) {
  TempDir dir;
  const std::string file = dir / "f.bin";
  std::ofstream(file) << "abc";
  absl::StatusOr<InputFile> f = OpenInput(file);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->regular);
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << "abc"; });
  absl::StatusOr<InputFile> p = OpenInput(fifo);
  writer.join();
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->regular);
  absl::StatusOr<InputFile> missing = OpenInput(dir / "missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  // The tool's words, then the reason; the errno and path as payloads.
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("Could not open: ", dir / "missing",
                         ": No such file or directory"));
  EXPECT_EQ(ErrnoOf(missing.status()), ENOENT);
  EXPECT_EQ(PathOf(missing.status()), dir / "missing");
  EXPECT_TRUE(IsOpenError(missing.status()));
  EXPECT_EQ(OpenInput(dir / "").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// --- The commands on a FIFO: identical to the regular file ------------------

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `fn(path)` on a FIFO fed with the bytes of `file`.
template <class Fn>
auto OnFifo(const TempDir& dir, const std::string& bytes, Fn fn) {
  const std::string fifo = dir / "in.fifo";
  fs::remove(fifo);
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    int w = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    size_t off = 0;
    while (w >= 0 && off < bytes.size()) {
      ssize_t n = ::write(w, bytes.data() + off, bytes.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    if (w >= 0) ::close(w);
  });
  auto result = fn(fifo);
  writer.join();
  return result;
}

const std::string kExample =
    std::string(DECOMPOSED_SOURCE_DIR) +
    "/examples/example.decomposed_hlo_snapshot";

std::vector<std::pair<std::string, std::string>> Tree(const std::string& d) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::directory_iterator(d)) {
    out.emplace_back(e.path().filename().string(), ReadFile(e.path()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StreamInput, UnpackFromAFifoWritesTheSameFiles) {
  TempDir dir;
  const std::string bytes = ReadFile(kExample);
  ASSERT_FALSE(bytes.empty());
  for (SnapshotType t : {SnapshotType::kAuto, SnapshotType::kDecomposed}) {
    fs::remove_all(dir / "a");
    fs::remove_all(dir / "b");
    UnpackOptions o;
    o.snapshot_type = t;
    o.dump_snapshot_outputs = true;
    o.output_prefix = dir / "a/";
    ASSERT_TRUE(Unpack(kExample, o).ok());
    o.output_prefix = dir / "b/";
    absl::Status s =
        OnFifo(dir, bytes, [&](const std::string& p) { return Unpack(p, o); });
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(Tree(dir / "a"), Tree(dir / "b"));
    EXPECT_EQ(Tree(dir / "a").size(), 4u);
  }
}

TEST(StreamInput, ErrorsAreTheRegularFilesWithThePathNamed) {
  TempDir dir;
  std::string bytes = ReadFile(kExample);
  bytes.resize(bytes.size() - 30);  // truncated inside region [2]
  const std::string file = dir / "t.bin";
  std::ofstream(file, std::ios::binary) << bytes;
  UnpackOptions o;
  o.dump_snapshot_outputs = true;
  o.output_prefix = dir / "a/";
  absl::Status from_file = Unpack(file, o);
  ASSERT_FALSE(from_file.ok());
  o.output_prefix = dir / "b/";
  absl::Status from_fifo =
      OnFifo(dir, bytes, [&](const std::string& p) { return Unpack(p, o); });
  EXPECT_EQ(from_fifo.code(), from_file.code());
  std::string expected(from_file.message());
  expected.replace(expected.find(file), file.size(), dir / "in.fifo");
  EXPECT_EQ(from_fifo.message(), expected);

  absl::StatusOr<VerifyReport> vf = VerifyFile(file);
  absl::StatusOr<VerifyReport> vp = OnFifo(
      dir, bytes, [&](const std::string& p) { return VerifyFile(p); });
  ASSERT_TRUE(vf.ok() && vp.ok());
  ASSERT_EQ(vf->problems.size(), vp->problems.size());
  EXPECT_EQ(vf->problems[0].message, vp->problems[0].message);

  absl::StatusOr<InspectReport> inf = InspectFile(file);
  absl::StatusOr<InspectReport> inp = OnFifo(
      dir, bytes, [&](const std::string& p) { return InspectFile(p); });
  ASSERT_FALSE(inf.ok());
  std::string ie(inf.status().message());
  ie.replace(ie.find(file), file.size(), dir / "in.fifo");
  EXPECT_EQ(inp.status().message(), ie);
}

TEST(StreamInput, DetectionAndTheEmptyFileOnAStream) {
  TempDir dir;
  const std::string bytes = ReadFile(kExample);
  absl::StatusOr<std::unique_ptr<SnapshotFile>> in =
      OnFifo(dir, bytes, [&](const std::string& p) {
        return SnapshotFile::Open(p);
      });
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE((*in)->from_stream());
  ASSERT_NE((*in)->stream(), nullptr);  // decomposed: read in one pass
  EXPECT_EQ((*in)->type(), SnapshotType::kDecomposed);
  EXPECT_EQ((*in)->evidence().evidence, "region [0] box of 403 bytes at byte 0");
  EXPECT_EQ((*in)->stream()->position(), 0u);

  SnapshotOpenOptions classic;
  classic.type = SnapshotType::kClassic;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> empty =
      OnFifo(dir, "", [&](const std::string& p) {
        return SnapshotFile::Open(p, classic);
      });
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(),
            absl::StrCat("file: expected a snapshot, found an empty file (an "
                         "interrupted capture leaves one) (at byte 0 of ",
                         dir / "in.fifo", ")"));
}

}  // namespace
}  // namespace decomposed
