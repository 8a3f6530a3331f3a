// compare and stats over TensorSets read from .npy files and unpack
// directories (report.h, tensor_set.h).
#include <cstring>
#include <string>
#include <vector>

#include "decomposed/analysis/report.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace decomposed {
namespace {

using test::HandNpyHeader;
using test::TempDir;

std::string NpyF32(const std::string& shape, std::vector<float> v) {
  return HandNpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }") +
         std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(AnalysisSetsTest, ComparesUnpackDirectoriesByIndexAndReportsMissing) {
  TempDir e, a;
  e.Write("snapshot_output0.npy", NpyF32("(2, 2)", {1, 2, 3, 4}));
  e.Write("snapshot_output1.npy", NpyF32("(3,)", {1, 2, 3}));
  a.Write("snapshot_output0.npy", NpyF32("(2, 2)", {1, 2, 3.5f, 4}));
  auto es = OpenTensorSet(e.path(), {});
  auto as = OpenTensorSet(a.path(), {});
  ASSERT_TRUE(es.ok()) << es.status();
  ASSERT_TRUE(as.ok()) << as.status();
  absl::StatusOr<CompareReport> r = CompareTensorSets(**es, **as, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pass);
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kFail);
  EXPECT_EQ(r->tensors[0].metrics.mismatches, 1u);
  EXPECT_EQ(r->tensors[1].verdict, TensorVerdict::kMissing);
  nlohmann::json j = nlohmann::json::parse(CompareReportJson(*r));
  EXPECT_EQ(j["mode"], "torch");
  EXPECT_EQ(j["pass"], false);
  EXPECT_EQ(j["tensors"][0]["status"], "fail");
  EXPECT_EQ(j["tensors"][0]["expected"]["dtype"], "f32");
  EXPECT_EQ(j["tensors"][0]["expected"]["shape"], nlohmann::json::array({2, 2}));
  EXPECT_EQ(j["tensors"][0]["max_abs_error"], 0.5);
  EXPECT_EQ(j["tensors"][0]["max_abs_error_index"], nlohmann::json::array({1, 0}));
  EXPECT_EQ(j["tensors"][0]["first_mismatches"][0]["index"], nlohmann::json::array({1, 0}));
  EXPECT_EQ(j["tensors"][0]["first_mismatches"][0]["expected"], 3.0);
  EXPECT_EQ(j["tensors"][0]["first_mismatches"][0]["actual"], 3.5);
  EXPECT_EQ(j["tensors"][1]["status"], "missing");
  EXPECT_TRUE(j["tensors"][1]["actual"].is_null());
  std::string text = CompareReportText(*r);
  EXPECT_NE(text.find("greatest absolute difference 0.5 at [1,0]"), std::string::npos) << text;
  EXPECT_NE(text.find("missing on the actual side"), std::string::npos) << text;
}

TEST(AnalysisSetsTest, ShapeAndDtypeMismatchesAreReportedNotCompared) {
  TempDir d;
  std::string f32 = d.Write("a.npy", NpyF32("(4,)", {1, 2, 3, 4}));
  std::string f32b = d.Write("b.npy", NpyF32("(2, 2)", {1, 2, 3, 4}));
  std::string s32 = d.Write("c.npy", HandNpyHeader("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }") +
                                         std::string("\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0", 16));
  auto a = OpenTensorSet(f32, {});
  auto b = OpenTensorSet(f32b, {});
  auto c = OpenTensorSet(s32, {});
  auto r = CompareTensorSets(**a, **b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kShapeMismatch);
  r = CompareTensorSets(**a, **c, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kDtypeMismatch);
  CompareOptions o;
  o.allow_dtype_mismatch = true;
  r = CompareTensorSets(**a, **c, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tensors[0].verdict, TensorVerdict::kPass);
  EXPECT_TRUE(r->pass);
}

TEST(AnalysisSetsTest, AVoidNpyWithoutATrueDtypeNamesTheOption) {
  TempDir d;
  std::string p = d.Write("x.npy", HandNpyHeader("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }") +
                                       std::string("\x80\x3f\x00\x40", 4));
  auto s = OpenTensorSet(p, {});
  ASSERT_TRUE(s.ok());
  absl::StatusOr<TensorInfo> t = (*s)->Describe(0);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("--dtype"), std::string::npos) << t.status();
  TensorSetOptions o;
  o.dtype = PrimitiveType::kBF16;
  s = OpenTensorSet(p, o);
  std::vector<TensorStatsEntry> stats;
  ASSERT_TRUE(AppendTensorStats(**s, p, "tensors", &stats).ok());
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(*stats[0].stats.min, 1.0);
  EXPECT_EQ(*stats[0].stats.max, 2.0);
  nlohmann::json j = nlohmann::json::parse(StatsReportJson(stats));
  EXPECT_EQ(j["tensors"][0]["dtype"], "bf16");
  EXPECT_EQ(j["tensors"][0]["mean"], 1.5);
  EXPECT_EQ(j["tensors"][0]["std"], 0.5);
}

TEST(AnalysisSetsTest, AGapInAnUnpackDirectoryNamesTheMissingFile) {
  TempDir d;
  d.Write("value_input0.npy", NpyF32("(1,)", {1}));
  d.Write("value_input2.npy", NpyF32("(1,)", {1}));
  TensorSetOptions o;
  o.inputs = true;
  auto s = OpenTensorSet(d.path(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("value_input1.npy"), std::string::npos) << s.status();
}

TEST(AnalysisSetsTest, StreamsAThreeMegabyteTensorInStep) {
  std::vector<float> v(3 << 18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  std::vector<float> w = v;
  w[700001] += 1;
  TempDir d;
  std::string pe = d.Write("e.npy", NpyF32("(786432,)", v));
  std::string pa = d.Write("a.npy", NpyF32("(786432,)", w));
  auto e = OpenTensorSet(pe, {});
  auto a = OpenTensorSet(pa, {});
  auto r = CompareTensorSets(**e, **a, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tensors[0].metrics.mismatches, 1u);
  EXPECT_EQ(r->tensors[0].metrics.max_abs_error_index, 700001u);
  EXPECT_EQ(r->tensors[0].metrics.elements, v.size());
}

}  // namespace
}  // namespace decomposed
