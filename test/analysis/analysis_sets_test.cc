// compare and stats over TensorSets read from .npy files, unpack
// directories, classic and decomposed snapshots (report.h, tensor_set.h,
// snapshot_set.h).
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "decomposed/analysis/report.h"
#include "decomposed/analysis/snapshot_set.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/convert.h"
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

// A tolerance the user set is a finite number >= 0: NaN would make every
// comparison silently false (or, as `d <= atol + ...`, pass nothing).
TEST(AnalysisSetsTest, AToleranceThatIsNotAFiniteNonNegativeNumberIsRefused) {
  TempDir d;
  std::string f = d.Write("a.npy", NpyF32("(2,)", {1, 2}));
  auto a = OpenTensorSet(f, {});
  auto b = OpenTensorSet(f, {});
  ASSERT_TRUE(a.ok() && b.ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [rtol, atol, want] :
       {std::tuple<std::optional<double>, std::optional<double>, std::string>{
            nan, std::nullopt, "rtol must be a finite number >= 0, not nan"},
        {std::nullopt, -1e-3, "atol must be a finite number >= 0, not -0.001"},
        {0.0, inf, "atol must be a finite number >= 0, not inf"}}) {
    CompareOptions o;
    o.rtol = rtol;
    o.atol = atol;
    EXPECT_EQ(ValidateCompareOptions(o).message(), want);
    absl::StatusOr<CompareReport> r = CompareTensorSets(**a, **b, o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), want);
  }
  CompareOptions zero;
  zero.rtol = 0.0;
  zero.atol = 0.0;
  EXPECT_TRUE(ValidateCompareOptions(zero).ok());
  absl::StatusOr<CompareReport> r = CompareTensorSets(**a, **b, zero);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass);
}

// `--dtype TYPE` is the type of every void tensor: a typed <f4 beside it
// keeps f32 (an unpack directory of f32 and bf16 inputs without sidecars);
// `--dtype I=TYPE` is tensor I's whatever its descr.
TEST(AnalysisSetsTest, ADtypeForAllTypesTheVoidTensorsOnly) {
  TempDir d;
  d.Write("value_input0.npy", NpyF32("(2,)", {1, 2}));
  d.Write("value_input1.npy",
          HandNpyHeader("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }") +
              std::string("\x80\x3f\x00\x40", 4));  // bf16 1, 2
  TensorSetOptions o;
  o.inputs = true;
  o.dtype = PrimitiveType::kBF16;
  auto set = OpenTensorSet(d.path(), o);
  ASSERT_TRUE(set.ok()) << set.status();
  absl::StatusOr<TensorInfo> t0 = (*set)->Describe(0);
  absl::StatusOr<TensorInfo> t1 = (*set)->Describe(1);
  ASSERT_TRUE(t0.ok()) << t0.status();
  ASSERT_TRUE(t1.ok()) << t1.status();
  EXPECT_EQ(t0->type, PrimitiveType::kF32);
  EXPECT_EQ(t1->type, PrimitiveType::kBF16);
  // By index, the type is that tensor's even for a typed descr: <f4 as
  // bf16 is a size mismatch, named.
  TensorSetOptions i0;
  i0.inputs = true;
  i0.dtypes[0] = PrimitiveType::kBF16;
  i0.dtypes[1] = PrimitiveType::kBF16;
  set = OpenTensorSet(d.path(), i0);
  absl::Status s = set.ok() ? (*set)->Describe(0).status() : set.status();
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("expected a dtype of 4 bytes for descr '<f4'"));
  // A single .npy side: TYPE is its type, as 0=TYPE (bf16 saved as <u2).
  const std::string u2 = d.Write(
      "u2.npy", HandNpyHeader("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }") +
                    std::string("\x80\x3f\x00\x40", 4));
  TensorSetOptions all;
  all.dtype = PrimitiveType::kBF16;
  set = OpenTensorSet(u2, all);
  ASSERT_TRUE(set.ok()) << set.status();
  absl::StatusOr<TensorInfo> t = (*set)->Describe(0);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->type, PrimitiveType::kBF16);
}

// A directory with nothing of unpack's or a bundle's is an error, not an
// empty list that passes (a mistyped path in a CI gate); one of unpack's
// with no tensor in the list asked (a module without parameters) is empty.
TEST(AnalysisSetsTest, ADirectoryOfNeitherKindIsAnError) {
  TempDir d;
  const std::string expected =
      d.path() + ": expected an unpack directory (model.hlo, value_input<i>.npy, "
                 "snapshot_output<j>.npy) or a bundle call directory (meta.json), found ";
  absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(d.path(), {});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), expected + "an empty directory");
  d.Write("a.npy", NpyF32("(2,)", {1, 2}));
  set = OpenTensorSet(d.path(), {});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), expected + ".npy files of other names");
  d.Write("snapshot_output0.npy", NpyF32("(2,)", {1, 2}));
  TensorSetOptions in;
  in.inputs = true;
  set = OpenTensorSet(d.path(), in);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ((*set)->size(), 0u);
  // unpack --module m.pb of a snapshot with no inputs and no outputs.
  TempDir renamed;
  renamed.Write("m.pb", "");
  set = OpenTensorSet(renamed.path(), in);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ((*set)->size(), 0u);
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

// --- .pt files and Fortran-order .npy -----------------------------------------

std::vector<float> StreamF32(TensorSet& set, size_t i) {
  std::string bytes;
  absl::Status s = set.Stream(i, [&](std::string_view c) {
    bytes.append(c);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

std::string WritePt(const TempDir& d, const std::string& name, capture::TorchType type,
                    std::vector<int64_t> shape, const void* data) {
  capture::HostTensor t;
  t.data = data;
  t.dtype = type;
  t.shape = std::move(shape);
  std::string p = d.File(name);
  AtomicFileSink sink;
  EXPECT_TRUE(sink.Open(p).ok());
  EXPECT_TRUE(capture::WritePtTensor(t, sink).ok());
  EXPECT_TRUE(sink.Commit().ok());
  return p;
}

TEST(AnalysisSetsTest, ASinglePtFileIsOneTensorWithItsOwnDtype) {
  TempDir d;
  const uint16_t bf16[4] = {0x3f80, 0x4000, 0x7fc0, 0xc040};  // 1, 2, NaN, -3
  std::string p = WritePt(d, "t.pt", capture::TorchType::kBFloat16, {2, 2}, bf16);
  absl::StatusOr<std::unique_ptr<TensorSet>> s = OpenTensorSet(p, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE((*s)->HasInputsAndOutputs());
  ASSERT_EQ((*s)->size(), 1u);
  absl::StatusOr<TensorInfo> t = (*s)->Describe(0);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->type, PrimitiveType::kBF16);
  EXPECT_EQ(t->dims, (std::vector<int64_t>{2, 2}));
  std::vector<TensorStatsEntry> stats;
  ASSERT_TRUE(AppendTensorStats(**s, p, "tensors", &stats).ok());
  EXPECT_EQ(stats[0].stats.nan, 1u);
  EXPECT_EQ(*stats[0].stats.first_nan_index, 2u);
  EXPECT_EQ(*stats[0].stats.min, -3.0);
  // Against an .npy of the same bf16 values (true dtype by option).
  std::string npy = d.Write("t.npy", HandNpyHeader("{'descr': '|V2', 'fortran_order': False, 'shape': (2, 2), }") +
                                         std::string(reinterpret_cast<const char*>(bf16), 8));
  TensorSetOptions o;
  o.dtype = PrimitiveType::kBF16;
  auto n = OpenTensorSet(npy, o);
  CompareOptions co;
  co.equal_nan = true;
  absl::StatusOr<CompareReport> r = CompareTensorSets(**s, **n, co);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass) << CompareReportText(*r);
}

TEST(AnalysisSetsTest, AnUnreadablePtFileIsAnErrorNamingTheFile) {
  TempDir d;
  const float v[2] = {1, 2};
  std::string p = WritePt(d, "t.pt", capture::TorchType::kFloat32, {2}, v);
  std::string data = test::ReadFile(p);
  std::string bad = d.Write("bad.pt", data.substr(0, data.size() - 30));
  auto s = OpenTensorSet(bad, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("bad.pt"), std::string::npos) << s.status();
  std::string garbage = d.Write("g.pt", "not a zip at all");
  s = OpenTensorSet(garbage, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("g.pt"), std::string::npos) << s.status();
}

TEST(AnalysisSetsTest, AFortranOrderNpyStreamsInLogicalRowMajorOrder) {
  // A (2, 3, 2) array a[i][j][k] = 100 i + 10 j + k, stored as NumPy's
  // np.asfortranarray does: i fastest, then j, then k.
  std::vector<float> logical, fortran;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) logical.push_back(100 * i + 10 * j + k);
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) fortran.push_back(100 * i + 10 * j + k);
  TempDir d;
  std::string f = d.Write("f.npy", HandNpyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }") +
                                       std::string(reinterpret_cast<const char*>(fortran.data()), 48));
  auto s = OpenTensorSet(f, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(StreamF32(**s, 0), logical);
  // Big endian: swapped after the gather.
  std::string be;
  for (float x : fortran) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u = __builtin_bswap32(u);
    be.append(reinterpret_cast<const char*>(&u), 4);
  }
  std::string fb = d.Write("fb.npy", HandNpyHeader("{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3, 2), }") + be);
  s = OpenTensorSet(fb, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(StreamF32(**s, 0), logical);
  // Against the C-order file of the same array: equal, element for element.
  std::string c = d.Write("c.npy", NpyF32("(2, 3, 2)", logical));
  auto cs = OpenTensorSet(c, {});
  auto fs = OpenTensorSet(f, {});
  absl::StatusOr<CompareReport> r = CompareTensorSets(**cs, **fs, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass);
  EXPECT_EQ(*r->tensors[0].metrics.max_abs_error, 0.0);
}

TEST(AnalysisSetsTest, ATruncatedFortranOrderNpyIsAnError) {
  TempDir d;
  std::string f = d.Write("f.npy", HandNpyHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }") +
                                       std::string(40, '\0'));
  auto s = OpenTensorSet(f, {});
  ASSERT_TRUE(s.ok());
  absl::StatusOr<TensorInfo> t = (*s)->Describe(0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kOutOfRange) << t.status();
  EXPECT_NE(t.status().message().find("f.npy"), std::string::npos) << t.status();
}

// --- classic snapshots ------------------------------------------------------

// An F32 literal with layout `m2m` (minor_to_major); `values` in row-major
// order, stored in the layout's physical order.
xla::LiteralProto F32Literal(std::vector<int64_t> dims, std::vector<float> values,
                             std::vector<int64_t> m2m = {}) {
  xla::LiteralProto l;
  auto* s = l.mutable_shape();
  s->set_element_type(xla::F32);
  for (int64_t d : dims) s->add_dimensions(d);
  if (m2m.empty()) {
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) m2m.push_back(i);
  }
  for (int64_t d : m2m) s->mutable_layout()->add_minor_to_major(d);
  // Physical order: walk the multi-index with m2m[0] fastest.
  const size_t r = dims.size();
  std::vector<int64_t> idx(r, 0);
  for (size_t n = 0; n < values.size(); ++n) {
    size_t lin = 0;
    for (size_t k = 0; k < r; ++k) lin = lin * dims[k] + idx[k];
    l.add_f32s(values[lin]);
    for (size_t j = 0; j < r; ++j) {
      size_t d = static_cast<size_t>(m2m[j]);
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return l;
}

xla::LiteralProto TupleOf(const std::vector<xla::LiteralProto>& elems) {
  xla::LiteralProto t;
  t.mutable_shape()->set_element_type(xla::TUPLE);
  for (const auto& e : elems) {
    *t.mutable_shape()->add_tuple_shapes() = e.shape();
    *t.add_tuple_literals() = e;
  }
  return t;
}

// A classic snapshot: two arguments (the second column-major) and a TUPLE
// result of two outputs; the same values written as .npy files.
struct ClassicFixture {
  TempDir d;
  std::string classic, decomposed;
  ClassicFixture() {
    xla::HloSnapshot snap;
    snap.mutable_hlo()->mutable_hlo_module()->set_name("m");
    *snap.add_arguments() = F32Literal({2, 3}, {1, 2, 3, 4, 5, 6});
    *snap.add_arguments() = F32Literal({3, 2}, {-1, -2, -3, -4, -5, -6}, {0, 1});
    *snap.mutable_result() =
        TupleOf({F32Literal({2}, {7, std::nanf("")}), F32Literal({2, 2}, {0, 1, 2, 3}, {0, 1})});
    classic = d.Write("x.hlo_snapshot.pb", snap.SerializeAsString());
    decomposed = d.File("x.decomposed");
    EXPECT_TRUE(ConvertClassicToDecomposed(classic, decomposed).ok());
  }
};

TEST(AnalysisSetsTest, AClassicSnapshotGivesItsInputsAndTheElementsOfItsTupleResult) {
  ClassicFixture f;
  absl::StatusOr<std::unique_ptr<TensorSet>> outs = OpenTensorSet(f.classic, {});
  ASSERT_TRUE(outs.ok()) << outs.status();
  EXPECT_TRUE((*outs)->HasInputsAndOutputs());
  EXPECT_NE((*outs)->Name().find("classic snapshot"), std::string::npos);
  ASSERT_EQ((*outs)->size(), 2u);
  TensorSetOptions in;
  in.inputs = true;
  absl::StatusOr<std::unique_ptr<TensorSet>> ins = OpenTensorSet(f.classic, in);
  ASSERT_TRUE(ins.ok()) << ins.status();
  ASSERT_EQ((*ins)->size(), 2u);
  absl::StatusOr<TensorInfo> t = (*ins)->Describe(1);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->type, PrimitiveType::kF32);
  EXPECT_EQ(t->dims, (std::vector<int64_t>{3, 2}));
  // The column-major argument streams in row-major order.
  std::string bytes;
  ASSERT_TRUE((*ins)->Stream(1, [&](std::string_view c) {
                  bytes.append(c);
                  return absl::OkStatus();
                }).ok());
  std::vector<float> got(6);
  ASSERT_EQ(bytes.size(), 24u);
  std::memcpy(got.data(), bytes.data(), 24);
  EXPECT_EQ(got, (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  std::vector<TensorStatsEntry> stats;
  ASSERT_TRUE(AppendTensorStats(**outs, f.classic, "outputs", &stats).ok());
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].stats.nan, 1u);
  EXPECT_EQ(*stats[0].stats.first_nan_index, 1u);
  EXPECT_EQ(*stats[1].stats.max, 3.0);
}

// stats --inputs / --outputs: AppendPathStats reads the list named, from
// the one open of the file.
TEST(AnalysisSetsTest, PathStatsReadTheListsAsked) {
  ClassicFixture f;
  for (auto [lists, want] :
       {std::pair{StatsLists::kBoth, std::vector<std::string>{"inputs", "inputs",
                                                               "outputs", "outputs"}},
        std::pair{StatsLists::kInputs, std::vector<std::string>{"inputs", "inputs"}},
        std::pair{StatsLists::kOutputs, std::vector<std::string>{"outputs", "outputs"}}}) {
    std::vector<TensorStatsEntry> stats;
    ASSERT_TRUE(AppendPathStats(f.classic, {}, &stats, nullptr, lists).ok());
    std::vector<std::string> got;
    for (const TensorStatsEntry& e : stats) got.push_back(e.set);
    EXPECT_EQ(got, want);
  }
}

// The text table keeps its columns whatever a cell holds (a NaN's first
// index, "inf"), has a zeros column, and --fail-on-nonfinite's line says
// which tensor holds what.
TEST(AnalysisSetsTest, StatsTextStaysAlignedAndCountsZeros) {
  TempDir d;
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::string p1 = d.Write("a.npy", NpyF32("(2, 3)", {0, 0, nan, 1, nan, -inf}));
  std::string p2 = d.Write("b.npy", NpyF32("(2,)", {0, 1}));
  std::vector<TensorStatsEntry> stats;
  ASSERT_TRUE(AppendPathStats(p1, {}, &stats).ok());
  ASSERT_TRUE(AppendPathStats(p2, {}, &stats).ok());
  const std::string text = StatsReportText(stats);
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    lines.push_back(text.substr(at, nl - at));
  }
  // header, "a.npy:", row, "b.npy:", row
  ASSERT_EQ(lines.size(), 5u) << text;
  const std::string& header = lines[0];
  EXPECT_NE(header.find("zeros"), std::string::npos) << text;
  EXPECT_NE(header.find("first_nan"), std::string::npos) << text;
  // Every column starts at the same offset in the header and in each row.
  for (const std::string& row : {lines[2], lines[4]}) {
    for (const char* column : {"dtype", "nan", "zeros", "min", "mean"}) {
      const size_t at = header.find(std::string(" ") + column + " ") + 1;
      ASSERT_NE(at, 0u) << column;
      EXPECT_EQ(row[at - 1], ' ') << column << "\n" << text;
      EXPECT_NE(row[at], ' ') << column << "\n" << text;
    }
  }
  EXPECT_NE(lines[2].find("[0,2]"), std::string::npos) << text;  // first NaN
  EXPECT_EQ(stats[0].stats.zeros, 2u);
  EXPECT_TRUE(AnyNonFinite(stats));
  EXPECT_EQ(NonFiniteSummary(stats),
            "1 of 2 tensors hold a NaN or an Inf; the first: " + p1 +
                " tensors 0 (2 NaN, first at [0,2]; 0 +Inf; 1 -Inf)");
  stats.erase(stats.begin());
  EXPECT_EQ(NonFiniteSummary(stats), "");
}

TEST(AnalysisSetsTest, AClassicSnapshotEqualsItsDecomposedConversion) {
  ClassicFixture f;
  for (bool inputs : {false, true}) {
    TensorSetOptions o;
    o.inputs = inputs;
    auto c = OpenTensorSet(f.classic, o);
    auto d = OpenTensorSet(f.decomposed, o);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE(d.ok()) << d.status();
    CompareOptions co;
    co.equal_nan = true;
    absl::StatusOr<CompareReport> r = CompareTensorSets(**c, **d, co);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->pass) << CompareReportText(*r);
    EXPECT_EQ(r->tensors.size(), 2u);
    // Without --equal-nan the NaN output mismatches, as it should.
    if (!inputs) {
      r = CompareTensorSets(**c, **d, {});
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->tensors[0].metrics.mismatches, 1u);
    }
  }
}

TEST(AnalysisSetsTest, ProgressCountsEveryTensorByteOnce) {
  // Runs (row-major literals) and streams (column-major ones) alike: the
  // bytes reported add up to the tensors' bytes, both sides for compare.
  ClassicFixture f;
  for (bool inputs : {false, true}) {
    TensorSetOptions o;
    o.inputs = inputs;
    auto c = OpenTensorSet(f.classic, o);
    auto d = OpenTensorSet(f.decomposed, o);
    ASSERT_TRUE(c.ok() && d.ok());
    uint64_t want = 0;
    for (size_t i = 0; i < (*c)->size(); ++i) {
      absl::StatusOr<TensorInfo> t = (*c)->Describe(i);
      ASSERT_TRUE(t.ok());
      want += t->element_count() * Info(t->type).element_bytes;
    }
    ASSERT_GT(want, 0u);
    CompareOptions co;
    uint64_t compared = 0, calls = 0;
    co.on_bytes = [&](uint64_t n) {
      compared += n;
      ++calls;
    };
    ASSERT_TRUE(CompareTensorSets(**c, **d, co).ok());
    EXPECT_EQ(compared, 2 * want) << inputs;
    EXPECT_GE(calls, (*c)->size());
    std::vector<TensorStatsEntry> stats;
    uint64_t read = 0;
    ASSERT_TRUE(AppendTensorStats(**d, f.decomposed, "x", &stats,
                                  [&](uint64_t n) { read += n; })
                    .ok());
    EXPECT_EQ(read, want) << inputs;
  }
}

TEST(AnalysisSetsTest, AMergedClassicResultIsOneResult) {
  // Two `result` records merge (protobuf's rule, classic.h): the tuple's
  // elements are those of both occurrences.
  xla::HloSnapshot a, b;
  a.mutable_hlo()->mutable_hlo_module()->set_name("m");
  *a.mutable_result() = TupleOf({F32Literal({1}, {1})});
  *b.mutable_result() = TupleOf({F32Literal({1}, {2})});
  TempDir d;
  std::string p = d.Write("merged.pb", a.SerializeAsString() + b.SerializeAsString());
  auto s = OpenTensorSet(p, {});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->size(), 2u);
  std::vector<TensorStatsEntry> stats;
  ASSERT_TRUE(AppendTensorStats(**s, p, "outputs", &stats).ok());
  EXPECT_EQ(*stats[0].stats.max, 1.0);
  EXPECT_EQ(*stats[1].stats.max, 2.0);
}

TEST(AnalysisSetsTest, ATruncatedClassicSnapshotNamesTheFrameAndOffset) {
  ClassicFixture f;
  std::string data = test::ReadFile(f.classic);
  std::string p = f.d.Write("trunc.pb", data.substr(0, data.size() - 7));
  auto s = OpenTensorSet(p, {});
  absl::Status st = s.ok() ? absl::OkStatus() : s.status();
  if (s.ok()) {
    std::vector<TensorStatsEntry> stats;
    st = AppendTensorStats(**s, p, "outputs", &stats);
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("at byte"), std::string::npos) << st;
  EXPECT_NE(st.message().find("trunc.pb"), std::string::npos) << st;
}

TEST(AnalysisSetsTest, APermutedLiteralStreamsRowMajorFromAFile) {
  // A literal over the transposing store's in-memory threshold: tiles read
  // with pread (GatherTiled), checked element by element.
  const int64_t rows = 1500, cols = 1700;  // ~10 MiB of F32
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  xla::HloSnapshot snap;
  snap.mutable_hlo()->mutable_hlo_module()->set_name("m");
  *snap.mutable_result() = F32Literal({rows, cols}, v, {0, 1});
  TempDir d;
  std::string p = d.Write("big.pb", snap.SerializeAsString());
  auto s = OpenClassicSet(p, /*inputs=*/false);
  ASSERT_TRUE(s.ok()) << s.status();
  uint64_t n = 0;
  bool in_order = true;
  ASSERT_TRUE((*s)->Stream(0, [&](std::string_view c) {
                  for (size_t i = 0; i + 4 <= c.size(); i += 4) {
                    float f;
                    std::memcpy(&f, c.data() + i, 4);
                    in_order &= f == static_cast<float>(n++);
                  }
                  return absl::OkStatus();
                }).ok());
  EXPECT_EQ(n, v.size());
  EXPECT_TRUE(in_order);
}

// --- verbatim runs ------------------------------------------------------------

std::string Streamed(TensorSet& set, size_t i) {
  std::string out;
  EXPECT_TRUE(set.Stream(i, [&](std::string_view c) {
                   out.append(c);
                   return absl::OkStatus();
                 }).ok());
  return out;
}

std::string ReadRun(const TensorRun& r) {
  std::string out(r.bytes, '\0');
  EXPECT_EQ(::pread(r.fd.get(), out.data(), out.size(), static_cast<off_t>(r.offset)),
            static_cast<ssize_t>(out.size()));
  return out;
}

TEST(AnalysisSetsTest, ARunHoldsExactlyWhatStreamEmits) {
  ClassicFixture f;
  TempDir d;
  const float v[6] = {1, 2, 3, 4, 5, 6};
  std::vector<std::string> paths = {
      f.classic, f.decomposed, d.Write("c.npy", NpyF32("(2, 3)", {1, 2, 3, 4, 5, 6})),
      WritePt(d, "t.pt", capture::TorchType::kFloat32, {2, 3}, v)};
  int runs = 0, streamed_only = 0;
  for (const std::string& p : paths) {
    for (bool inputs : {false, true}) {
      TensorSetOptions o;
      o.inputs = inputs;
      auto s = OpenTensorSet(p, o);
      ASSERT_TRUE(s.ok()) << s.status();
      for (size_t i = 0; i < (*s)->size(); ++i) {
        absl::StatusOr<std::optional<TensorRun>> r = (*s)->Run(i);
        ASSERT_TRUE(r.ok()) << r.status();
        if (!*r) {
          ++streamed_only;
          continue;
        }
        ++runs;
        EXPECT_EQ(ReadRun(**r), Streamed(**s, i)) << p << " " << i;
      }
    }
  }
  // Row-major literals, the C-order .npy and the .pt are runs; the
  // column-major literals of the fixture are not.
  EXPECT_GE(runs, 6);
  EXPECT_GE(streamed_only, 4);
  // Big-endian and Fortran-order .npy files are never runs.
  std::string be = d.Write("be.npy", HandNpyHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
                                         std::string("\x3f\x80\x00\x00", 4));
  auto s = OpenTensorSet(be, {});
  absl::StatusOr<std::optional<TensorRun>> r = (*s)->Run(0);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(AnalysisSetsTest, ComparingRunsMatchesComparingStreams) {
  // A tensor of several windows, read as a run on both sides against the
  // same tensor streamed through the decoder (a column-major copy).
  const int64_t rows = 1024, cols = 1100;  // 4.3 MiB of F32: two windows
  std::vector<float> e(rows * cols), a(rows * cols);
  for (size_t i = 0; i < e.size(); ++i) {
    e[i] = static_cast<float>(std::sin(static_cast<double>(i)));
    a[i] = e[i] * (i % 1000 == 7 ? 1.001f : 1.0f);
  }
  xla::HloSnapshot se, sa, sc;
  *se.mutable_result() = F32Literal({rows, cols}, e);
  *sa.mutable_result() = F32Literal({rows, cols}, a);
  *sc.mutable_result() = F32Literal({rows, cols}, a, {0, 1});
  TempDir d;
  std::string pe = d.Write("e.pb", se.SerializeAsString());
  std::string pa = d.Write("a.pb", sa.SerializeAsString());
  std::string pc = d.Write("c.pb", sc.SerializeAsString());
  auto es = OpenTensorSet(pe, {});
  auto as = OpenTensorSet(pa, {});
  auto cs = OpenTensorSet(pc, {});
  ASSERT_TRUE((*as)->Run(0)->has_value());
  ASSERT_FALSE((*cs)->Run(0)->has_value());
  absl::StatusOr<CompareReport> by_run = CompareTensorSets(**es, **as, {});
  absl::StatusOr<CompareReport> by_stream = CompareTensorSets(**es, **cs, {});
  ASSERT_TRUE(by_run.ok()) << by_run.status();
  ASSERT_TRUE(by_stream.ok()) << by_stream.status();
  EXPECT_EQ(CompareReportJson(*by_run), CompareReportJson(*by_stream));
  uint64_t want = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    want += !(std::fabs(static_cast<double>(a[i]) - e[i]) <= 1e-5 + std::fabs(1.3e-6 * e[i]));
  }
  EXPECT_GT(want, 1000u);
  EXPECT_EQ(by_run->tensors[0].metrics.mismatches, want);
  std::vector<TensorStatsEntry> s1, s2;
  ASSERT_TRUE(AppendTensorStats(**as, "x", "outputs", &s1).ok());
  ASSERT_TRUE(AppendTensorStats(**cs, "x", "outputs", &s2).ok());
  EXPECT_EQ(StatsReportJson(s1), StatsReportJson(s2));
}

TEST(AnalysisSetsTest, AFileThatShrinksUnderARunIsAnErrorNotACrash) {
  std::vector<float> v(3 << 20);  // 12 MiB: several windows
  xla::HloSnapshot snap;
  *snap.mutable_result() = F32Literal({static_cast<int64_t>(v.size())}, v);
  TempDir d;
  std::string p = d.Write("s.pb", snap.SerializeAsString());
  auto s = OpenTensorSet(p, {});
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::optional<TensorRun>> r = (*s)->Run(0);
  ASSERT_TRUE(r.ok() && r->has_value());
  ASSERT_EQ(::truncate(p.c_str(), 1 << 20), 0);
  std::vector<TensorStatsEntry> stats;
  absl::Status st = AppendTensorStats(**s, p, "outputs", &stats);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace decomposed
