// The ranks of one step from libneuronxla's and vLLM-Neuron's file names
// (capture/ranks.h).
#include "decomposed/capture/ranks.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::capture {
namespace {

using ::testing::HasSubstr;

std::string Device(int d, int execution = 496, std::string kind = "inputs") {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "dump/SyncTensorsGraph.27737-process000000-executable000003-device%06d-execution%06d.%s.decomposed_hlo_snapshot",
                d, execution, kind.c_str());
  return buf;
}

std::vector<std::string> Paths(const std::vector<RankFile>& r) {
  std::vector<std::string> p;
  for (const RankFile& f : r) p.push_back(f.path);
  return p;
}

TEST(CaptureRanks, DevicesOfOneExecutionInDeviceOrder) {
  const std::vector<std::string> files = {Device(2), Device(0), Device(3), Device(1)};
  absl::StatusOr<std::vector<RankFile>> r = OrderRankFiles(files);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Paths(*r), ::testing::ElementsAre(Device(0), Device(1), Device(2), Device(3)));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*r)[i].rank, i);
    EXPECT_EQ((*r)[i].id, i);
  }
  // Devices 8..11 (a second group of cores): ranks 0..3 all the same.
  const std::vector<std::string> high = {Device(9), Device(8)};
  r = OrderRankFiles(high);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].id, 8);
  EXPECT_EQ((*r)[0].rank, 0);
  const RankName n = ParseRankName(Device(5));
  EXPECT_EQ(n.naming, RankNaming::kDevice);
  EXPECT_EQ(n.id, 5);
}

TEST(CaptureRanks, BundlesOfOneForwardInRankOrder) {
  const std::vector<std::string> dirs = {"root/abc/rank1/call7", "root/abc/rank0/call7/"};
  absl::StatusOr<std::vector<RankFile>> r = OrderRankFiles(dirs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].path, "root/abc/rank0/call7/");
  EXPECT_EQ((*r)[1].id, 1);
}

TEST(CaptureRanks, OtherNamesKeepTheirOrder) {
  const std::vector<std::string> files = {"b.decomposed_hlo_snapshot", "a.decomposed_hlo_snapshot"};
  absl::StatusOr<std::vector<RankFile>> r = OrderRankFiles(files);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Paths(*r), ::testing::ElementsAre(files[0], files[1]));
  EXPECT_EQ(ParseRankName("x-device1.pb").naming, RankNaming::kNone);
}

TEST(CaptureRanks, FilesOfTwoStepsAreRefused) {
  auto err = [](std::vector<std::string> files) {
    absl::StatusOr<std::vector<RankFile>> r = OrderRankFiles(files);
    EXPECT_FALSE(r.ok());
    return std::string(r.status().message());
  };
  EXPECT_THAT(err({Device(0), Device(1, 497)}), HasSubstr("differing only in their device"));
  EXPECT_THAT(err({Device(0), Device(1, 496, "outputs")}), HasSubstr("differing only in their device"));
  EXPECT_THAT(err({Device(0), Device(0)}), HasSubstr("one file per rank"));
  EXPECT_THAT(err({"root/abc/rank0/call7", "root/abc/rank1/call8"}), HasSubstr("only in their rank"));
  EXPECT_THAT(err({"root/abc/rank0/call7", "root/def/rank1/call7"}), HasSubstr("only in their rank"));
  EXPECT_THAT(err({Device(0), "root/abc/rank1/call7"}), HasSubstr("named alike"));
  EXPECT_THAT(err({}), HasSubstr("at least one rank"));
  EXPECT_THAT(err({"a.dhs", "a.dhs"}), HasSubstr("a.dhs twice"));
}

}  // namespace
}  // namespace decomposed::capture
