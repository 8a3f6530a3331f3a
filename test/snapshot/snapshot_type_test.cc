// Telling the two forms apart (docs/format.md §7.8), the empty-file rule,
// and the hint a command gives when the form the user named fails in a way
// the other form explains. Golden bytes are written by hand from
// docs/format.md (§4 boxes, §7 the decomposed file, §11 the classic form).
#include "decomposed/snapshot/snapshot_type.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot_unpack/command_line.h"
#include "test_util.h"

namespace decomposed {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kExample =
    std::string(DECOMPOSED_SOURCE_DIR) +
    "/examples/example.decomposed_hlo_snapshot";

// A classic HloSnapshot: field 1 (hlo) of 11 bytes = HloProto field 1
// (hlo_module) of 9 bytes = HloModuleProto {name "m" (field 1: 3 bytes),
// entry_computation_name "main" (field 2: 6 bytes)}. Nothing else.
//   0a 0b | 0a 09 | 0a 01 'm' | 12 04 'main'
std::string ClassicBytes() {
  return test::HexBytes("0a0b" "0a09" "0a016d" "12046d61696e");
}

TEST(SnapshotTypeTest, EvidenceOfEachForm) {
  test::TempDir dir;
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(kExample);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, SnapshotType::kDecomposed);
  // The example opens with the box 04 3a 02 93 03: u64s varint 93 03 =
  // 0x13 + (3 << 7) = 403.
  EXPECT_EQ(e->evidence, "region [0] box of 403 bytes at byte 0");

  e = DescribeSnapshotType(dir.Write("c.pb", ClassicBytes()));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, SnapshotType::kClassic);
  EXPECT_EQ(e->evidence, "HloSnapshot field 1 (hlo) of 11 bytes at byte 0");

  // Field 1 declaring more than the file holds: classic, with no evidence.
  e = DescribeSnapshotType(dir.Write("short.pb", test::HexBytes("0a200a")));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, SnapshotType::kClassic);
  EXPECT_EQ(e->evidence, "");
}

TEST(SnapshotTypeTest, EmptyFileIsAnErrorOfEveryCommandAndType) {
  test::TempDir dir;
  const std::string empty = dir.Write("empty.bin", "");
  const std::string want =
      "file: expected a snapshot, found an empty file (an interrupted "
      "capture leaves one) (at byte 0 of " + empty + ")";
  for (SnapshotType t : {SnapshotType::kAuto, SnapshotType::kClassic,
                         SnapshotType::kDecomposed}) {
    SCOPED_TRACE(SnapshotTypeName(t));
    SnapshotOpenOptions oo;
    oo.type = t;
    absl::StatusOr<std::unique_ptr<SnapshotFile>> r =
        SnapshotFile::Open(empty, oo);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), want);
    EXPECT_EQ(FrameOf(r.status()), "file");
    EXPECT_EQ(OffsetOf(r.status()), 0u);
    EXPECT_EQ(PathOf(r.status()), empty);

    UnpackOptions uo;
    uo.snapshot_type = t;
    uo.output_prefix = dir.path() + "/out_";
    absl::Status s = Unpack(empty, uo);
    EXPECT_EQ(s.message(), want);
    EXPECT_FALSE(test::FileExists(dir.path() + "/out_model.hlo"));

    VerifyOptions vo;
    vo.snapshot_type = t;
    absl::StatusOr<VerifyReport> vr = VerifyFile(empty, vo);
    ASSERT_TRUE(vr.ok()) << vr.status();  // a problem of the file
    EXPECT_FALSE(vr->valid());
    EXPECT_FALSE(vr->type.has_value());
    ASSERT_EQ(vr->problems.size(), 1u);
    EXPECT_EQ(vr->problems[0].message, want);
    EXPECT_EQ(vr->problems[0].frame, "file");
    EXPECT_EQ(vr->problems[0].offset, 0u);

    InspectOptions io;
    io.snapshot_type = t;
    EXPECT_EQ(InspectFile(empty, io).status().message(), want);

    if (t != SnapshotType::kAuto) {
      const SnapshotType to = t == SnapshotType::kClassic
                                  ? SnapshotType::kDecomposed
                                  : SnapshotType::kClassic;
      s = ConvertSnapshot(empty, dir.File("out.bin"), to, t);
      EXPECT_EQ(s.message(), want);
      EXPECT_FALSE(test::FileExists(dir.File("out.bin")));
    }
  }
}

TEST(SnapshotTypeTest, DefaultsDetect) {
  // The library's and the CLI's default is auto; snapshot-unpack's
  // command line keeps Neuron's "snapshot".
  EXPECT_EQ(UnpackOptions{}.snapshot_type, SnapshotType::kAuto);
  EXPECT_EQ(InspectOptions{}.snapshot_type, SnapshotType::kAuto);
  EXPECT_EQ(VerifyOptions{}.snapshot_type, SnapshotType::kAuto);
  absl::StatusOr<UnpackCommandLine> cl = ParseUnpackCommandLine({"x"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->options.snapshot_type, SnapshotType::kClassic);

  test::TempDir dir;
  UnpackOptions uo;
  uo.output_prefix = dir.path() + "/";
  ASSERT_TRUE(Unpack(kExample, uo).ok());
  EXPECT_TRUE(test::FileExists(dir.File("model.hlo")));
  EXPECT_TRUE(test::FileExists(dir.File("value_input0.npy")));
}

// Standard input replaced by `path` opened at byte `at`, for one scope
// (as `cmd - < path` does, or a shell that read `at` bytes first).
class StdinFrom {
 public:
  StdinFrom(const std::string& path, off_t at) {
    saved_ = ::dup(0);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    ::lseek(fd, at, SEEK_SET);
    ::dup2(fd, 0);
    ::close(fd);
  }
  ~StdinFrom() {
    ::dup2(saved_, 0);
    ::close(saved_);
  }

 private:
  int saved_;
};

TEST(SnapshotTypeTest, StdinRedirectedFromARegularFileIsReadAsThatFile) {
  {
    StdinFrom redirect(kExample, 0);
    absl::StatusOr<std::unique_ptr<SnapshotFile>> in = SnapshotFile::Open("-");
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_FALSE((*in)->from_stream());  // no spool, no temp file
    EXPECT_NE((*in)->buffered(), nullptr);
    EXPECT_EQ((*in)->type(), SnapshotType::kDecomposed);
    EXPECT_EQ((*in)->evidence().evidence,
              "region [0] box of 403 bytes at byte 0");
    // The file is read with pread: fd 0's own offset stays where it was.
    absl::Status s = (*in)->Read({}, [](auto& reader) -> absl::Status {
      if (auto h = reader.ReadHeader(); !h.ok()) return h.status();
      return reader.Finish();
    });
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(::lseek(0, 0, SEEK_CUR), 0);
  }
  {
    // Not at byte 0: the rest is a stream (the regular-file code reads
    // from byte 0).
    StdinFrom redirect(kExample, 4);
    SnapshotOpenOptions oo;
    oo.type = SnapshotType::kDecomposed;
    absl::StatusOr<std::unique_ptr<SnapshotFile>> in =
        SnapshotFile::Open("-", oo);
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_TRUE((*in)->from_stream());
  }
  // The same files and bytes as by name, and the same messages with "-".
  test::TempDir by_name, by_stdin;
  UnpackOptions uo;
  uo.output_prefix = by_name.path() + "/";
  ASSERT_TRUE(Unpack(kExample, uo).ok());
  {
    StdinFrom redirect(kExample, 0);
    uo.output_prefix = by_stdin.path() + "/";
    ASSERT_TRUE(Unpack("-", uo).ok());
    absl::StatusOr<VerifyReport> v = VerifyFile("-", VerifyOptions{});
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->problems.empty());
    absl::StatusOr<InspectReport> r = InspectFile("-", InspectOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->file_size, test::ReadFile(kExample).size());
  }
  ASSERT_EQ(test::ListDir(by_name.path()), test::ListDir(by_stdin.path()));
  for (const std::string& f : test::ListDir(by_name.path())) {
    EXPECT_EQ(test::ReadFile(by_name.File(f)), test::ReadFile(by_stdin.File(f)))
        << f;
  }
  // An empty file on stdin: the empty-file error, naming standard input.
  test::TempDir dir;
  {
    StdinFrom redirect(dir.Write("empty.bin", ""), 0);
    absl::Status s = Unpack("-", uo);
    EXPECT_THAT(std::string(s.message()), HasSubstr("an empty file"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("from stdin"));
  }
  // Read as the wrong type: the message still carries the hint.
  {
    StdinFrom redirect(kExample, 0);
    uo.snapshot_type = SnapshotType::kClassic;
    absl::Status s = Unpack("-", uo);
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("use --snapshot-type=decomposed"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("from stdin"));
  }
}

TEST(SnapshotTypeTest, ADecomposedFileCutShortIsStillDecomposed) {
  // docs/format.md §7.8: once the region [0] length box is whole (the
  // example's 5 bytes 04 3a 02 93 03), a file that ends anywhere after it is
  // decomposed, and unpack names the frame that ran out, not an
  // HloSnapshot tag.
  const std::string whole = test::ReadFile(kExample);
  ASSERT_EQ(whole.size(), 555u);
  test::TempDir dir;
  for (size_t k = 5; k < whole.size(); ++k) {
    const std::string cut = dir.Write("cut.bin", whole.substr(0, k));
    absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(cut);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->type, SnapshotType::kDecomposed) << k;
    // Bytes 0-407 are region [0] (test/snapshot/inspect_test.cc has the layout);
    // input 0's body ends at byte 460, the inputs at byte 503.
    if (k < 408) {
      EXPECT_EQ(e->evidence,
                "a region [0] box at byte 0, cut short inside region [0]")
          << k;
    } else if (k < 460) {
      EXPECT_EQ(e->evidence,
                "region [0] box of 403 bytes at byte 0, cut short after it")
          << k;
    }
    if (k < 503) {
      UnpackOptions uo;
      uo.output_prefix = dir.path() + "/";
      absl::Status s = Unpack(cut, uo);
      EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << k << " " << s;
      EXPECT_THAT(std::string(s.message()), Not(HasSubstr("HloSnapshot")))
          << k;
    }
  }
  // Named as classic, the cut file says what it looks like.
  const std::string cut = dir.Write("cut.bin", whole.substr(0, 420));
  UnpackOptions uo;
  uo.snapshot_type = SnapshotType::kClassic;
  uo.output_prefix = dir.path() + "/";
  EXPECT_THAT(std::string(Unpack(cut, uo).message()),
              EndsWith("; this looks like a decomposed snapshot (region [0] "
                       "box of 403 bytes at byte 0, cut short after it); use "
                       "--snapshot-type=decomposed"));
  // Shorter than the length box: nothing to go on, so classic (rule 1).
  absl::StatusOr<SnapshotTypeEvidence> e =
      DescribeSnapshotType(dir.Write("tiny.bin", whole.substr(0, 3)));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, SnapshotType::kClassic);
}

TEST(SnapshotTypeTest, DecomposedReadAsClassicSaysSo) {
  const std::string hint =
      "; this looks like a decomposed snapshot (region [0] box of 403 bytes "
      "at byte 0); use --snapshot-type=decomposed";
  test::TempDir dir;
  UnpackOptions uo;
  uo.snapshot_type = SnapshotType::kClassic;
  uo.output_prefix = dir.path() + "/";
  absl::Status s = Unpack(kExample, uo);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The message names the message being parsed, then the hint.
  EXPECT_THAT(std::string(s.message()), HasSubstr("HloSnapshot field tag"));
  EXPECT_THAT(std::string(s.message()), EndsWith(hint));
  EXPECT_FALSE(test::FileExists(dir.File("model.hlo")));

  VerifyOptions vo;
  vo.snapshot_type = SnapshotType::kClassic;
  absl::StatusOr<VerifyReport> r = VerifyFile(kExample, vo);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->problems.empty());
  EXPECT_THAT(r->problems.front().message, EndsWith(hint));

  InspectOptions io;
  io.snapshot_type = SnapshotType::kClassic;
  EXPECT_THAT(std::string(InspectFile(kExample, io).status().message()),
              EndsWith(hint));
}

TEST(SnapshotTypeTest, ClassicReadAsDecomposedSaysSo) {
  test::TempDir dir;
  const std::string classic = dir.Write("c.pb", ClassicBytes());
  UnpackOptions uo;
  uo.snapshot_type = SnapshotType::kDecomposed;
  uo.output_prefix = dir.path() + "/";
  absl::Status s = Unpack(classic, uo);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              EndsWith("; this looks like a classic snapshot (HloSnapshot "
                       "field 1 (hlo) of 11 bytes at byte 0); use "
                       "--snapshot-type=snapshot"));
  // Read as what it is, the same file unpacks.
  uo.snapshot_type = SnapshotType::kAuto;
  EXPECT_TRUE(Unpack(classic, uo).ok());
  EXPECT_EQ(test::ReadFile(dir.File("model.hlo")),
            test::HexBytes("0a016d" "12046d61696e"));
}

TEST(SnapshotTypeTest, NoHintWhenTheOtherFormDoesNotExplainIt) {
  test::TempDir dir;
  // Neither form: a truncated classic record.
  const std::string junk = dir.Write("j.bin", test::HexBytes("0a200a"));
  UnpackOptions uo;
  uo.snapshot_type = SnapshotType::kDecomposed;
  uo.output_prefix = dir.path() + "/";
  absl::Status s = Unpack(junk, uo);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("this looks like")));
}

TEST(SnapshotTypeTest, ConvertDetectsItsInputAndRefusesANoOp) {
  test::TempDir dir;
  const std::string out = dir.File("x.pb");
  ASSERT_TRUE(ConvertSnapshot(kExample, out, SnapshotType::kClassic).ok());
  // Detected as classic now: converting it to classic again is refused.
  absl::Status s = ConvertSnapshot(out, dir.File("y.pb"), SnapshotType::kClassic);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("already a classic snapshot"));
  EXPECT_FALSE(test::FileExists(dir.File("y.pb")));
  s = ConvertSnapshot(kExample, dir.File("z"), SnapshotType::kDecomposed);
  EXPECT_EQ(s.message(),
            kExample + ": already a decomposed snapshot (region [0] box of 403 "
                       "bytes at byte 0); nothing to convert (--snapshot-type "
                       "names the input's form)");
}

// A file of neither form is not "already a classic snapshot" (classic is
// only detection's answer for what is not decomposed): converting it to
// classic gives the error every reader gives it.
TEST(SnapshotTypeTest, ConvertOfNeitherFormSaysSo) {
  test::TempDir dir;
  const std::string readme = dir.Write("README.md", "# decomposed\n\nNot a snapshot.\n");
  for (SnapshotType to : {SnapshotType::kClassic, SnapshotType::kDecomposed}) {
    absl::Status s = ConvertSnapshot(readme, dir.File("y"), to);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()),
                StartsWith("file: not a decomposed or classic snapshot; "))
        << SnapshotFormName(to);
    EXPECT_FALSE(test::FileExists(dir.File("y")));
  }
}

}  // namespace
}  // namespace decomposed
