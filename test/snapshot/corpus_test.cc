// The malformed-input corpus at the library level: every `inspect`, `verify`,
// `unpack` and `stats` row of test/corpus/manifest.tsv goes through
// InspectFile / VerifyFile / Unpack / AppendPathStats, which must give exactly the
// manifest's absl::StatusCode with the frame and fragment in the message
// (the CLI prints only the message, so the code is checked here). Also checks the corpus is what the issue asks: at least 40
// distinct malformed inputs, each file present.
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "decomposed/analysis/report.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/snapshot/verify.h"
#include "decomposed/status.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

struct Row {
  std::string file, command, exit, code, frame, fragment, state, what;
};

std::string CorpusDir() {
  return std::string(DECOMPOSED_SOURCE_DIR) + "/test/corpus";
}

std::vector<Row> LoadManifest() {
  std::ifstream in(CorpusDir() + "/manifest.tsv");
  EXPECT_TRUE(in.good());
  std::vector<Row> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    EXPECT_EQ(f.size(), 8u) << line;
    if (f.size() != 8) continue;
    rows.push_back({f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
  }
  return rows;
}

std::string CodeName(absl::StatusCode c) {
  return absl::StatusCodeToString(c);
}

// As run_corpus.py runs the CLI: decomposed, except the files ending in .pb
// (classic) or .auto, read with auto-detection.
SnapshotType TypeFor(const std::string& file) {
  return file.ends_with(".pb") || file.ends_with(".auto")
             ? SnapshotType::kAuto
             : SnapshotType::kDecomposed;
}

// The frame travels as a payload too, the manifest's frame (or, where the
// manifest names a frame's start, "input 0", a frame it starts).
void ExpectFramePayload(const absl::Status& s, const Row& r) {
  std::optional<std::string> f = FrameOf(s);
  ASSERT_TRUE(f.has_value()) << s;
  EXPECT_EQ(f->substr(0, r.frame.size()), r.frame) << s;
}

TEST(CorpusTest, AtLeastFortyDistinctInputsAllPresent) {
  std::set<std::string> files;
  for (const Row& r : LoadManifest()) {
    files.insert(r.file);
    EXPECT_TRUE(std::filesystem::exists(CorpusDir() + "/files/" + r.file))
        << r.file;
  }
  EXPECT_GE(files.size(), 40u);
}

TEST(CorpusTest, InspectRowsGiveTheManifestCodeFrameAndFragment) {
  int n = 0;
  for (const Row& r : LoadManifest()) {
    if (r.command != "inspect") continue;
    ++n;
    SCOPED_TRACE(r.file + ": " + r.what);
    InspectOptions o;
    o.snapshot_type = TypeFor(r.file);
    absl::StatusOr<InspectReport> rep =
        InspectFile(CorpusDir() + "/files/" + r.file, o);
    ASSERT_FALSE(rep.ok());
    EXPECT_EQ(CodeName(rep.status().code()), r.code) << rep.status();
    EXPECT_NE(rep.status().message().find(r.frame), absl::string_view::npos)
        << rep.status();
    EXPECT_NE(rep.status().message().find(r.fragment),
              absl::string_view::npos)
        << rep.status();
    // The frame leads the message: "<frame>: ...".
    EXPECT_EQ(rep.status().message().substr(0, r.frame.size() + 1),
              r.frame + ":")
        << rep.status();
    ExpectFramePayload(rep.status(), r);
    EXPECT_TRUE(OffsetOf(rep.status()).has_value()) << rep.status();
  }
  EXPECT_GE(n, 40);
}

TEST(CorpusTest, VerifyRowsGiveTheManifestCodeFrameAndFragment) {
  int n = 0;
  for (const Row& r : LoadManifest()) {
    if (r.command != "verify") continue;
    ++n;
    SCOPED_TRACE(r.file + ": " + r.what);
    VerifyOptions o;
    o.snapshot_type = TypeFor(r.file);
    absl::StatusOr<VerifyReport> rep =
        VerifyFile(CorpusDir() + "/files/" + r.file, o);
    ASSERT_TRUE(rep.ok()) << rep.status();
    // Exit 0 rows are read with a warning (docs/format.md §7.2).
    ASSERT_EQ(rep->valid(), r.exit == "0");
    const VerifyProblem& p =
        r.exit == "0" ? rep->warnings.at(0) : rep->problems.front();
    EXPECT_EQ(CodeName(p.code), r.code) << p.message;
    EXPECT_NE(p.message.find(r.frame), std::string::npos) << p.message;
    EXPECT_NE(p.message.find(r.fragment), std::string::npos) << p.message;
    // The problem's frame and offset come from the payloads.
    EXPECT_EQ(p.frame.substr(0, r.frame.size()), r.frame) << p.message;
    EXPECT_TRUE(p.offset.has_value()) << p.message;
  }
  EXPECT_GE(n, 40);
}

TEST(CorpusTest, UnpackRowsGiveTheManifestCodeFrameAndFragment) {
  int n = 0;
  const std::string out =
      ::testing::TempDir() + "/corpus_test_unpack_" + std::to_string(getpid());
  for (const Row& r : LoadManifest()) {
    if (r.command != "unpack") continue;
    ++n;
    SCOPED_TRACE(r.file + ": " + r.what);
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
    UnpackOptions o;
    o.snapshot_type = TypeFor(r.file);
    o.dump_snapshot_outputs = true;
    o.output_prefix = out + "/";
    absl::Status warning;
    o.on_warning = [&](const absl::Status& w) { warning = w; };
    absl::Status s = Unpack(CorpusDir() + "/files/" + r.file, o);
    if (r.exit == "0") {  // read, with a warning
      ASSERT_TRUE(s.ok()) << s;
      s = warning;
    }
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(CodeName(s.code()), r.code) << s;
    EXPECT_NE(s.message().find(r.frame), absl::string_view::npos) << s;
    EXPECT_NE(s.message().find(r.fragment), absl::string_view::npos) << s;
    ExpectFramePayload(s, r);
  }
  std::filesystem::remove_all(out);
  EXPECT_GE(n, 40);
}

TEST(CorpusTest, StatsRowsGiveTheManifestCodeFrameAndFragment) {
  int n = 0;
  for (const Row& r : LoadManifest()) {
    if (r.command != "stats") continue;
    ++n;
    SCOPED_TRACE(r.file + ": " + r.what);
    TensorSetOptions o;
    // As run_corpus.py runs the CLI: decomposed, except the classic .pb.
    o.snapshot_type = TypeFor(r.file);
    std::vector<TensorStatsEntry> entries;
    absl::Status s = AppendPathStats(CorpusDir() + "/files/" + r.file, o, &entries);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(CodeName(s.code()), r.code) << s;
    EXPECT_NE(s.message().find(r.frame), absl::string_view::npos) << s;
    EXPECT_NE(s.message().find(r.fragment), absl::string_view::npos) << s;
  }
  EXPECT_GE(n, 40);
}

}  // namespace
}  // namespace decomposed
