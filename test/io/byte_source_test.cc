// Byte sources: every source type reads the same files to the same result,
// through the whole-file reader, with truncation and injected faults.
#include "decomposed/io/byte_source.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/testing/fault_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "read_whole.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::decomposed::test::ReadWhole;
using ::decomposed::test::TempDir;
using ::decomposed::test::WholeFile;
using ::testing::HasSubstr;

// A file with every kind of frame, bodies larger than every buffer used
// here (FaultSource: 4 KiB; FdSource/IstreamSource: 256 KiB), and region
// [2] present. Built with the writer, whose bytes framing_test.cc checks
// against hand-assembled golden bytes.
std::string BigFile() {
  std::string data;
  StringSink sink(&data);
  DecomposedWriter<StringSink> w(sink);
  std::string snapshot(5000, 's');
  EXPECT_TRUE(w.WriteHeader(snapshot).ok());
  std::vector<size_t> sizes = {0, 1, 127, 128, 4095, 4096, 4097, 300000, 3};
  EXPECT_TRUE(w.BeginInputs(sizes.size()).ok());
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string body(sizes[i], '\0');
    for (size_t k = 0; k < body.size(); ++k) {
      body[k] = static_cast<char>(k * 7 + i);
    }
    EXPECT_TRUE(w.WriteElement(body).ok());
  }
  EXPECT_TRUE(w.BeginOutputs(2).ok());
  EXPECT_TRUE(w.WriteElement(std::string(70000, 'o')).ok());
  EXPECT_TRUE(w.WriteElement("out").ok());
  EXPECT_TRUE(w.Finish().ok());
  return data;
}

// Each factory makes sources of one type over given bytes and keeps
// whatever they borrow (files, streams, writer threads) alive.
struct MemoryFactory {
  using Source = MemorySource;
  std::vector<std::unique_ptr<std::string>> keep;
  std::unique_ptr<Source> Make(const std::string& data) {
    keep.push_back(std::make_unique<std::string>(data));
    return std::make_unique<Source>(*keep.back());
  }
};

struct MmapFactory {
  using Source = MmapSource;
  TempDir dir;
  int n = 0;
  std::unique_ptr<Source> Make(const std::string& data) {
    return std::make_unique<Source>(
        dir.Write(absl::StrCat("f", n++), data));
  }
};

struct FdFileFactory {
  using Source = FdSource;
  TempDir dir;
  int n = 0;
  std::unique_ptr<Source> Make(const std::string& data) {
    OwnedFd fd;
    EXPECT_TRUE(
        OpenForReading(dir.Write("f" + std::to_string(n++), data), &fd).ok());
    return std::make_unique<Source>(std::move(fd));
  }
};

// A borrowed fd positioned after 3 junk bytes: stream offsets count from
// where the fd stood.
struct FdRefAtOffsetFactory {
  using Source = FdSourceRef;
  TempDir dir;
  int n = 0;
  std::vector<OwnedFd> fds;
  std::unique_ptr<Source> Make(const std::string& data) {
    OwnedFd fd;
    EXPECT_TRUE(OpenForReading(dir.Write("f" + std::to_string(n++),
                                         "JNK" + data),
                               &fd)
                    .ok());
    EXPECT_EQ(::lseek(fd.get(), 3, SEEK_SET), 3);
    fds.push_back(std::move(fd));
    return std::make_unique<Source>(UnownedFd(fds.back().get()));
  }
};

// A pipe: not seekable, size unknown, short reads of whatever the writer
// thread has pushed.
struct PipeFactory {
  using Source = FdSource;
  std::vector<std::thread> writers;
  PipeFactory() { ::signal(SIGPIPE, SIG_IGN); }
  ~PipeFactory() {
    for (auto& t : writers) t.join();
  }
  std::unique_ptr<Source> Make(const std::string& data) {
    int p[2];
    EXPECT_EQ(::pipe(p), 0);
    writers.emplace_back([fd = p[1], data] {
      // Write in uneven pieces; stop quietly if the reader went away.
      size_t at = 0, piece = 1;
      while (at < data.size()) {
        size_t k = std::min(piece, data.size() - at);
        if (!WriteFully(fd, data.data() + at, k).ok()) break;
        at += k;
        piece = piece * 3 + 1;
      }
      ::close(fd);
    });
    return std::make_unique<Source>(OwnedFd(p[0]));
  }
};

struct IstreamFactory {
  using Source = IstreamSource;
  std::vector<std::unique_ptr<std::istringstream>> streams;
  std::unique_ptr<Source> Make(const std::string& data) {
    streams.push_back(std::make_unique<std::istringstream>(data));
    return std::make_unique<Source>(*streams.back());
  }
};

// 1-byte reads, EINTR on every other call, no size, no seeking.
struct FaultOneByteFactory {
  using Source = testing::FaultSource;
  std::unique_ptr<Source> Make(const std::string& data) {
    testing::FaultOptions o;
    o.max_read = 1;
    o.eintr_every = 2;
    o.known_size = false;
    o.seekable = false;
    return std::make_unique<Source>(data, o);
  }
};

// Short reads of 7 bytes, EINTR on every third call, size known, seekable.
struct FaultShortFactory {
  using Source = testing::FaultSource;
  std::unique_ptr<Source> Make(const std::string& data) {
    testing::FaultOptions o;
    o.max_read = 7;
    o.eintr_every = 3;
    return std::make_unique<Source>(data, o);
  }
};

template <class F>
class SourceTest : public ::testing::Test {
 protected:
  F factory;
};

using Factories =
    ::testing::Types<MemoryFactory, MmapFactory, FdFileFactory,
                     FdRefAtOffsetFactory, PipeFactory, IstreamFactory,
                     FaultOneByteFactory, FaultShortFactory>;
TYPED_TEST_SUITE(SourceTest, Factories);

TYPED_TEST(SourceTest, SatisfiesTheConcept) {
  static_assert(ByteSource<typename TypeParam::Source>);
}

TYPED_TEST(SourceTest, WholeFileMatchesMemorySource) {
  std::string data = BigFile();
  MemorySource mem(data);
  absl::StatusOr<WholeFile> want = ReadWhole(mem);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(want->inputs.size(), 9u);
  auto src = this->factory.Make(data);
  absl::StatusOr<WholeFile> got = ReadWhole(*src);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == *want);
  EXPECT_EQ(got->input_bodies[7].size(), 300000u);
  EXPECT_TRUE(src->status().ok());
}

TYPED_TEST(SourceTest, SkippingMatchesReading) {
  // Skip the snapshot and every body; only the frame positions remain.
  std::string data = BigFile();
  auto src = this->factory.Make(data);
  DecomposedReader<typename TypeParam::Source> r(*src);
  absl::StatusOr<ElementInfo> h = r.ReadHeader(nullptr);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->length, 5000u);
  ASSERT_EQ(*r.StartInputs(), 9u);
  ElementInfo e;
  uint64_t last_end = 0;
  while (*r.NextInput(&e)) last_end = e.offset + e.length;
  absl::StatusOr<std::optional<uint64_t>> m = r.StartOutputs();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(**m, 2u);
  EXPECT_EQ(r.outputs().count_offset(), last_end);
  ASSERT_TRUE(r.Finish().ok());
  EXPECT_EQ(src->position(), data.size());
}

TYPED_TEST(SourceTest, TruncationMatchesMemorySource) {
  std::string data = BigFile();
  // Cut points around every frame boundary of the first elements and a few
  // inside the large bodies.
  std::vector<size_t> cuts;
  for (size_t t = 0; t < 5100; t += 13) cuts.push_back(t);
  for (size_t t = 5000; t < 5200; ++t) cuts.push_back(t);
  for (size_t t : {size_t{20000}, size_t{300000}, data.size() - 1,
                   data.size() - 4, data.size()}) {
    cuts.push_back(t);
  }
  for (size_t t : cuts) {
    std::string cut = data.substr(0, t);
    MemorySource mem(cut);
    absl::StatusOr<WholeFile> want = ReadWhole(mem);
    auto src = this->factory.Make(cut);
    absl::StatusOr<WholeFile> got = ReadWhole(*src);
    ASSERT_EQ(got.ok(), want.ok()) << "cut at " << t << ": " << got.status();
    if (!want.ok()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange)
          << got.status();
      if (src->size().has_value()) {
        EXPECT_EQ(got.status().message(), want.status().message());
      }
    }
  }
}

TYPED_TEST(SourceTest, Primitives) {
  std::string data = "0123456789abcdef";
  auto src = this->factory.Make(data);
  EXPECT_EQ(src->position(), 0u);
  if (src->size()) {
    EXPECT_EQ(*src->size(), 16u);
  }
  ASSERT_TRUE(src->Pull(3));
  EXPECT_GE(src->available(), 3u);
  EXPECT_EQ(std::string(src->cursor(), 3), "012");
  src->Advance(2);
  EXPECT_EQ(src->position(), 2u);
  char buf[8];
  ASSERT_TRUE(src->Read(buf, 4));
  EXPECT_EQ(std::string(buf, 4), "2345");
  ASSERT_TRUE(src->Skip(4));
  EXPECT_EQ(src->position(), 10u);
  ASSERT_TRUE(src->Read(buf, 2));
  EXPECT_EQ(std::string(buf, 2), "ab");
  if (src->size()) {
    EXPECT_EQ(*Remaining(*src), 4u);
  }
  EXPECT_FALSE(src->Skip(5));  // only 4 remain
  EXPECT_FALSE(src->Pull(1));
  EXPECT_FALSE(src->Read(buf, 1));
  EXPECT_TRUE(src->status().ok());  // a clean end, not an error
}

TEST(FaultSourceTest, EintrIsRetried) {
  std::string data = BigFile();
  testing::FaultOptions o;
  o.max_read = 100;
  o.eintr_every = 2;
  testing::FaultSource src(data, o);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_GT(src.backend().eintrs(), 100u);
}

// An I/O error on the N-th read(2), for every N up to the number of reads a
// whole file needs: each gives a clean status naming the frame, never a
// crash, and never a success.
TEST(FaultSourceTest, ErrorOnEveryNthRead) {
  std::string data = BigFile();
  for (bool known : {true, false}) {
    testing::FaultOptions probe;
    probe.max_read = 997;
    probe.known_size = known;
    probe.seekable = known;
    testing::FaultSource counter(data, probe);
    ASSERT_TRUE(ReadWhole(counter).ok());
    uint64_t calls = counter.backend().calls();
    ASSERT_GT(calls, 300u);
    for (uint64_t n = 1; n <= calls; ++n) {
      testing::FaultOptions o = probe;
      o.fail_on_call = n;
      testing::FaultSource src(data, o);
      absl::StatusOr<WholeFile> f = ReadWhole(src);
      ASSERT_FALSE(f.ok()) << "read " << n;
      // absl::ErrnoToStatus maps EIO to kUnknown.
      EXPECT_EQ(f.status().code(), absl::StatusCode::kUnknown)
          << "read " << n << ": " << f.status();
      // "<frame>: reading at byte N: Input/output error"
      EXPECT_THAT(f.status().message(), HasSubstr(": reading at byte"))
          << "read " << n;
      EXPECT_FALSE(src.status().ok());
    }
  }
}

TEST(FaultSourceTest, ErrorIsNamedByFrame) {
  // The first read fails: the header length box reports it.
  testing::FaultOptions o;
  o.fail_on_call = 1;
  o.fail_errno = EACCES;
  std::string data = BigFile();
  testing::FaultSource src(data, o);
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(f.status().message()),
              ::testing::StartsWith("header length box: reading at byte 0"));
}

TEST(MmapSourceTest, ZeroCopyViews) {
  TempDir dir;
  std::string data = BigFile();
  MmapSource src(dir.Write("f", data));
  ASSERT_TRUE(src.status().ok());
  DecomposedReader<MmapSource> r(src);
  ASSERT_TRUE(r.ReadHeader(nullptr).ok());
  ASSERT_EQ(*r.StartInputs(), 9u);
  ElementInfo e;
  const char* first = nullptr;
  uint64_t first_offset = 0;
  while (*r.NextInput(&e)) {
    std::optional<std::string_view> v = src.ReadView(e.length);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->compare(data.substr(e.offset, e.length)), 0);
    if (!first) {
      first = v->data();
      first_offset = e.offset;
    }
  }
  // Views point into the one mapping, at their stream offsets.
  const char* mapping = src.cursor() - src.position();
  EXPECT_EQ(first, mapping + first_offset);
  EXPECT_FALSE(src.ReadView(data.size()));
}

TEST(MmapSourceTest, EmptyAndMissingFiles) {
  TempDir dir;
  MmapSource empty(dir.Write("empty", ""));
  EXPECT_TRUE(empty.status().ok());
  EXPECT_EQ(*empty.size(), 0u);
  EXPECT_FALSE(empty.Pull(1));
  absl::StatusOr<WholeFile> f = ReadWhole(empty);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kOutOfRange);

  MmapSource missing(dir.File("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope"));
  EXPECT_FALSE(missing.Pull(1));
}

TEST(FdSourceTest, OpenErrorsCarryThePath) {
  OwnedFd fd;
  absl::Status s = OpenForReading("/nonexistent/dir/file", &fd);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/dir/file"));
}

TEST(FdSourceTest, RegularFilesSeekPipesDoNot) {
  TempDir dir;
  std::string data(1 << 20, 'x');
  OwnedFd fd;
  ASSERT_TRUE(OpenForReading(dir.Write("f", data), &fd).ok());
  FdSource file(std::move(fd), 4096);
  EXPECT_EQ(*file.size(), data.size());
  ASSERT_TRUE(file.Skip(data.size() - 1));
  // The skip is the source's own position (it reads with pread): the
  // descriptor's offset, shared with any dup() of it, never moves.
  EXPECT_EQ(file.position(), data.size() - 1);
  EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 0);
  char c;
  ASSERT_TRUE(file.Read(&c, 1));
  EXPECT_FALSE(file.Pull(1));
  EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 0);
  // Two sources over one open file description read independently.
  const int twin = ::dup(file.fd());
  ASSERT_GE(twin, 0);
  FdSource other{OwnedFd(twin), 4096};
  ASSERT_TRUE(file.Seek(10));
  ASSERT_TRUE(other.Seek(20000));
  ASSERT_TRUE(file.Pull(8) && other.Pull(8));
  EXPECT_EQ(file.position(), 10u);
  EXPECT_EQ(other.position(), 20000u);

  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  FdSource pipe_src{OwnedFd(p[0])};
  EXPECT_FALSE(pipe_src.size().has_value());
  ASSERT_TRUE(WriteFully(p[1], "hello", 5).ok());
  ::close(p[1]);
  ASSERT_TRUE(pipe_src.Skip(3));
  ASSERT_TRUE(pipe_src.Read(&c, 1));
  EXPECT_EQ(c, 'l');
  EXPECT_FALSE(pipe_src.Skip(5));
  EXPECT_TRUE(pipe_src.status().ok());
}

TEST(FdSourceTest, ReadErrorIsSticky) {
  // A directory opens read-only but read(2) fails with EISDIR.
  OwnedFd fd;
  ASSERT_TRUE(OpenForReading("/", &fd).ok());
  FdSource src(std::move(fd));
  EXPECT_FALSE(src.Pull(1));
  EXPECT_FALSE(src.status().ok());
  EXPECT_THAT(src.status().message(), HasSubstr("reading at byte 0"));
  EXPECT_FALSE(src.Pull(1));
  absl::StatusOr<WholeFile> f = ReadWhole(src);
  EXPECT_FALSE(f.ok());
}

TEST(IstreamSourceTest, StartsWhereTheStreamStands) {
  std::istringstream in("JUNK0123456789");
  in.seekg(4);
  IstreamSource src(in);
  ASSERT_TRUE(src.size().has_value());
  EXPECT_EQ(*src.size(), 10u);
  ASSERT_TRUE(src.Skip(5));
  char buf[5];
  ASSERT_TRUE(src.Read(buf, 5));
  EXPECT_EQ(std::string(buf, 5), "56789");
  EXPECT_FALSE(src.Pull(1));
}

TEST(IstreamSourceTest, BadStreamIsAnError) {
  std::istringstream in("0123");
  in.setstate(std::ios::badbit);
  IstreamSource src(in);
  EXPECT_FALSE(src.Pull(1));
  EXPECT_FALSE(src.status().ok());
}

}  // namespace
}  // namespace decomposed
