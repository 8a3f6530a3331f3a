#include "decomposed/snapshot/each.h"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "/each_test_" + name;
  ::mkdir(d.c_str(), 0755);
  return d;
}
void WriteFile(const std::string& path, std::string_view data) {
  std::ofstream(path, std::ios::binary).write(data.data(), data.size());
}
bool Exists(const std::string& path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0;
}

// A decomposed file, worked out by hand from docs/format.md §4.1 and §7.6:
// boxes are `03 3a 01 <v>` (u64s packed, one value < 128); the header is
// `0a 05 0a 03 0a 01 6d` (HloSnapshot{hlo{hlo_module{name "m"}}}); the
// input count box holds n; each input is a 12-byte F32 scalar body
// `0a 04 10 0b 2a 00` (shape{element_type F32, layout{}}) then
// `42 04 00 00 80 3f` (f32s: [1.0]). No region [2].
std::string File(int n) {
  auto box = [](int v) {
    return std::string{0x03, 0x3a, 0x01, static_cast<char>(v)};
  };
  const std::string header = {0x0a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6d};
  const std::string body = {0x0a, 0x04, 0x10, 0x0b, 0x2a, 0x00,
                            0x42, 0x04, 0x00, 0x00, static_cast<char>(0x80),
                            0x3f};
  std::string out = box(7) + header + box(n);
  for (int i = 0; i < n; ++i) out += box(12) + body;
  return out;
}

TEST(EffectiveJobs, ZeroMeansCoresAndNeverMoreThanTasks) {
  EXPECT_GE(EffectiveJobs(0, 1000), 1u);
  EXPECT_EQ(EffectiveJobs(4, 2), 2u);
  EXPECT_EQ(EffectiveJobs(4, 0), 1u);
  EXPECT_EQ(EffectiveJobs(3, 10), 3u);
}

TEST(ForEachInOrder, EmitsInInputOrderWhateverTheFinishingOrder) {
  // Later tasks finish first: task i sleeps (n - i) ms.
  const size_t n = 12;
  std::atomic<int> running{0}, most{0};
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  bool on_caller = true;
  ForEachInOrder<size_t>(
      n, 4,
      [&](size_t i) {
        int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(3 * (n - i)));
        --running;
        return i * 10;
      },
      [&](size_t i, size_t& r) {
        EXPECT_EQ(r, i * 10);
        on_caller = on_caller && std::this_thread::get_id() == caller;
        order.push_back(i);
      });
  std::vector<size_t> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = i;
  EXPECT_EQ(order, want);
  EXPECT_TRUE(on_caller);
  EXPECT_LE(most.load(), 4);
  EXPECT_GE(most.load(), 2);  // it did run in parallel
}

TEST(ForEachInOrder, OneJobRunsOnTheCallingThreadInterleaved) {
  std::vector<std::string> log;
  ForEachInOrder<int>(
      3, 1, [&](size_t i) { log.push_back("w" + std::to_string(i)); return 0; },
      [&](size_t i, int&) { log.push_back("e" + std::to_string(i)); });
  EXPECT_THAT(log, ElementsAre("w0", "e0", "w1", "e1", "w2", "e2"));
}

TEST(VerifyFiles, OneResultPerFileInOrderWithTheSingleFileAnswer) {
  const std::string d = Dir("verify");
  std::vector<std::string> paths;
  for (int i = 0; i < 6; ++i) {
    paths.push_back(d + "/f" + std::to_string(i) + ".bin");
    // f3 is truncated inside its last literal; f5 is empty.
    std::string bytes = i == 5 ? "" : File(i + 1);
    if (i == 3) bytes.resize(bytes.size() - 2);
    WriteFile(paths.back(), bytes);
  }
  for (unsigned jobs : {1u, 3u}) {
    std::vector<size_t> seen;
    uint64_t last_progress = 0;
    VerifyOptions o;
    o.progress = [&](uint64_t done) { last_progress = done; };
    VerifyFiles(paths, o, jobs,
                [&](size_t i, absl::StatusOr<VerifyReport>& r) {
                  seen.push_back(i);
                  absl::StatusOr<VerifyReport> single = VerifyFile(paths[i]);
                  ASSERT_EQ(r.ok(), single.ok()) << i;
                  if (!r.ok()) {
                    EXPECT_EQ(r.status(), single.status());
                    return;
                  }
                  EXPECT_EQ(r->valid(), single->valid()) << i;
                  EXPECT_EQ(r->inputs, single->inputs) << i;
                  EXPECT_EQ(r->valid(), i != 3 && i != 5) << i;
                  if (i < 3) {
                    EXPECT_EQ(r->inputs, i + 1);
                  }
                });
    EXPECT_THAT(seen, ElementsAre(0, 1, 2, 3, 4, 5));
    EXPECT_GT(last_progress, 0u);
  }
}

TEST(InspectFiles, ReportsEveryFileInOrder) {
  const std::string d = Dir("inspect");
  std::vector<std::string> paths = {d + "/a", d + "/missing", d + "/b"};
  WriteFile(paths[0], File(2));
  WriteFile(paths[2], File(4));
  std::vector<std::string> got;
  InspectFiles(paths, {}, 2,
               [&](size_t, absl::StatusOr<InspectReport>& r) {
                 got.push_back(r.ok() ? std::to_string(r->inputs.size())
                                      : std::string(r.status().message()));
               });
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "2");
  EXPECT_THAT(got[1], HasSubstr("Could not open: " + paths[1]));
  EXPECT_EQ(got[2], "4");
}

TEST(EachOutputPrefix, StemUnderDir) {
  EXPECT_EQ(EachOutputPrefix("out", "a/b/x.decomposed_hlo_snapshot"),
            "out/x/");
  EXPECT_EQ(EachOutputPrefix("out/", "x.tar.gz"), "out/x.tar/");
  EXPECT_EQ(EachOutputPrefix("out", "plain"), "out/plain/");
  EXPECT_EQ(EachOutputPrefix("out", ".hidden"), "out/.hidden/");
  EXPECT_EQ(EachOutputPrefix("out", "dir/"), "out/dir/");
}

TEST(UnpackEach, UnpacksEachIntoItsOwnDirectoryAndKeepsGoing) {
  const std::string d = Dir("unpack");
  std::vector<std::string> paths = {d + "/one.bin", d + "/bad.bin",
                                    d + "/three.bin"};
  WriteFile(paths[0], File(1));
  std::string bad = File(2);
  bad.resize(bad.size() - 1);
  WriteFile(paths[1], bad);
  WriteFile(paths[2], File(3));
  const std::string out = d + "/out";
  std::vector<std::string> lines;
  UnpackOptions o;
  o.output_prefix = "ignored/";
  ASSERT_TRUE(UnpackEach(paths, out, o, 2, [&](size_t i, UnpackEachResult& r) {
                EXPECT_EQ(r.path, paths[i]);
                lines.push_back(r.output_prefix + " " +
                                std::to_string(r.files.size()) + " " +
                                (r.status.ok() ? "ok" : "failed"));
              }).ok());
  EXPECT_THAT(lines, ElementsAre(out + "/one/ 2 ok", out + "/bad/ 2 failed",
                                 out + "/three/ 4 ok"));
  EXPECT_TRUE(Exists(out + "/three/value_input2.npy"));
  EXPECT_TRUE(Exists(out + "/one/model.hlo"));
  EXPECT_FALSE(Exists(out + "/bad/value_input1.npy"));  // the failed one
  EXPECT_FALSE(Exists("ignored"));
}

TEST(UnpackEach, RefusesTwoInputsWithOneOutputDirectoryBeforeWriting) {
  const std::string d = Dir("clash");
  ::mkdir((d + "/a").c_str(), 0755);
  ::mkdir((d + "/b").c_str(), 0755);
  std::vector<std::string> paths = {d + "/a/x.bin", d + "/b/x.snap"};
  WriteFile(paths[0], File(1));
  WriteFile(paths[1], File(1));
  bool called = false;
  absl::Status s = UnpackEach(paths, d + "/out", {}, 2,
                              [&](size_t, UnpackEachResult&) { called = true; });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(paths[0] + " and " + paths[1]));
  EXPECT_FALSE(called);
  EXPECT_FALSE(Exists(d + "/out"));
}

}  // namespace
}  // namespace decomposed
