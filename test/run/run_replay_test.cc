// Bisect and the ranks of one step over the run layer (run/replay.h): on
// snapshots packed here (PackToFile) from modules built with hlo/builder.h
// and the tensor-parallel test models, their recorded outputs the dense
// module's.
#include "decomposed/run/replay.h"

#include <filesystem>
#include <fstream>

#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/literal.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/snapshot/producer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"
#include "tp_test_models.h"

namespace decomposed::run {
namespace {

namespace fs = std::filesystem;
using ::decomposed::test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Pack(const std::string& path, const xla::HloModuleProto& module,
                 const std::vector<eval::Value>& inputs, const std::vector<eval::Value>& outputs) {
  PackRequest req;
  req.snapshot = *SnapshotFromModule(module.SerializeAsString());
  for (const eval::Value& v : inputs) {
    req.inputs.push_back(ProtoLiteral(*eval::LiteralFromArray(v.array())));
  }
  for (const eval::Value& v : outputs) {
    req.outputs.push_back(ProtoLiteral(*eval::LiteralFromArray(v.array())));
  }
  absl::Status s = PackToFile(req, path);
  EXPECT_TRUE(s.ok()) << s;
  return path;
}

std::string Device(const TempDir& dir, int d, int execution = 41) {
  char buf[128];
  std::snprintf(buf, sizeof buf,
                "mlp-process000000-executable000002-device%06d-execution%06d.inputs."
                "decomposed_hlo_snapshot",
                d, execution);
  return dir.File(buf);
}

TEST(RunReplay, TheRanksOfOneStepAgainstTheDenseResult) {
  tp_test::Mlp mlp;
  const auto w = mlp.Random(21);
  absl::StatusOr<eval::Value> dense = eval::Evaluate(*mlp.Build(0), mlp.DenseInputs(w), {});
  ASSERT_TRUE(dense.ok()) << dense.status();
  const std::vector<eval::Value> recorded = eval::FlattenOutputs(*dense);
  const xla::HloModuleProto shard = mlp.Build(4)->proto();
  TempDir dir;
  std::vector<std::string> files;
  for (int r = 3; r >= 0; --r) {  // given in reverse
    files.push_back(Pack(Device(dir, r), shard, mlp.RankInputs(w, 4, r), recorded));
  }
  RanksRequest req;
  req.ranks = files;
  req.output.format = OutputFormat::kNpyFiles;
  req.output.prefix = dir.File("out") + "/";
  req.check = RunCheck::kCompare;
  req.compare.rtol = 1e-4;  // the shards sum in another order than the dense GEMM
  req.compare.atol = 1e-5;
  std::vector<std::string> written;
  req.on_file = [&](const WrittenFile& f) { written.push_back(f.path); };
  absl::StatusOr<RanksReport> r = RunRanks(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranks.size(), 4u);
  EXPECT_TRUE(r->pass()) << RanksReportText(*r);
  EXPECT_THAT(r->ids, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(r->paths[0], Device(dir, 0));
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(fs::exists(dir.File("out/rank" + std::to_string(k) + "/snapshot_output0.npy")));
    EXPECT_GT(r->ranks[k].result.instructions, 0);
  }
  EXPECT_EQ(written.size(), 4u);
  const std::string text = RanksReportText(*r);
  EXPECT_THAT(text, HasSubstr("replayed 4 ranks together"));
  EXPECT_THAT(text, HasSubstr("PASS: 4 of 4 ranks pass"));
  nlohmann::json j = nlohmann::json::parse(RanksReportJson(*r));
  EXPECT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][2]["id"], 2);
  EXPECT_EQ(j["ranks"][2]["report"]["compare"]["pass"], true);
  EXPECT_EQ(j["pass"], true);

  // Rank 2's recorded output off in one element: that rank fails.
  std::vector<eval::Value> off = recorded;
  {
    eval::Array a = *off[0].array().Contiguous();
    absl::StatusOr<eval::Array> c = eval::Array::Copy(a.type(), a.dims(), a.bytes());
    c->mutable_data<float>()[3] += 1.0f;
    off[0] = *c;
  }
  Pack(Device(dir, 2), shard, mlp.RankInputs(w, 4, 2), off);
  req.output = OutputOptions();
  r = RunRanks(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pass());
  EXPECT_TRUE(r->ranks[0].pass());
  EXPECT_FALSE(r->ranks[2].pass());
  EXPECT_THAT(RanksReportText(*r), HasSubstr("FAIL: 3 of 4 ranks pass"));
}

TEST(RunReplay, ARanksInputsWithAModuleAndItsErrors) {
  tp_test::Mlp mlp;
  const auto w = mlp.Random(22);
  TempDir dir;
  // Each rank's inputs as an unpack directory named like a bundle's
  // rank<G>/call<N>, and the module given once.
  const std::string module = dir.File("shard.pb");
  {
    std::ofstream f(module, std::ios::binary);
    f << mlp.Build(2)->proto().SerializeAsString();
  }
  std::vector<std::string> sides;
  for (int r : {1, 0}) {
    const std::string side = dir.File("root/abc/rank" + std::to_string(r) + "/call3");
    fs::create_directories(side);
    const std::vector<eval::Value> in = mlp.RankInputs(w, 2, r);
    // The inputs as value_input<i>.npy, by run's own .npy writer.
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string p = side + "/value_input" + std::to_string(i) + ".npy";
      const std::vector<eval::Value> one = {in[i]};
      ASSERT_TRUE(WriteOutputs(one, {OutputFormat::kNpyFiles, side + "/tmp_", "", true}).ok());
      fs::rename(side + "/tmp_snapshot_output0.npy", p);
    }
    sides.push_back(side);
  }
  RanksRequest req;
  req.ranks = sides;
  req.module = module;
  absl::StatusOr<RanksReport> r = RunRanks(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->ids, ElementsAre(0, 1));
  absl::StatusOr<eval::Value> dense = eval::Evaluate(*mlp.Build(0), mlp.DenseInputs(w), {});
  const eval::Array want = *eval::FlattenOutputs(*dense)[0].array().Contiguous();
  const eval::Array got = *r->ranks[1].result.outputs[0].array().Contiguous();
  for (int64_t i = 0; i < want.element_count(); ++i) {
    EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4);
  }
  // No recorded outputs to compare with (a module and inputs only).
  req.check = RunCheck::kCompare;
  r = RunRanks(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no recorded outputs to compare with"));
  // One .npz for all ranks is refused; so are files of two calls.
  req.check = RunCheck::kNone;
  req.output.format = OutputFormat::kNpz;
  EXPECT_EQ(RunRanks(req).status().code(), absl::StatusCode::kInvalidArgument);
  req.output = OutputOptions();
  req.ranks = {sides[0], dir.File("root/abc/rank0/call4")};
  EXPECT_THAT(std::string(RunRanks(req).status().message()), HasSubstr("only in their rank"));
}

TEST(RunReplay, RanksOverMpiNeedMpiInTheBuild) {
  if (eval::ReplicasOverMpiAvailable()) {
    GTEST_SKIP() << "an MPI build: test/replicas_mpi.py runs run --mpi under mpirun";
  }
  RanksRequest req;
  req.ranks = {"a.dhs", "b.dhs"};
  absl::StatusOr<RanksReport> r = RunRanksOverMpi(req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("DECOMPOSED_WITH_MPI"));
  EXPECT_EQ(eval::StartMpi().status().code(), absl::StatusCode::kUnimplemented);
  eval::FinishMpi();  // nothing to finish: no effect
}

TEST(RunReplay, BisectASnapshotAgainstAModeAndADump) {
  // x -> h = dot(x, w) -> convert to bf16 (the planted cast) -> back -> y.
  hlo::HloModuleBuilder mb("cast");
  hlo::HloComputationBuilder& c = mb.AddEntryComputation("main");
  hlo::HloOp x = c.Parameter(0, hlo::MakeArrayShape(xla::F32, {4, 8}), "x");
  hlo::HloOp w = c.Parameter(1, hlo::MakeArrayShape(xla::F32, {8, 8}), "w");
  hlo::HloOp h = c.Dot(x, w, hlo::MakeDotDimensionNumbers({1}, {0}));
  hlo::HloOp cast = c.Convert(h, xla::BF16);
  c.Tuple({c.Tanh(c.Convert(cast, xla::F32))});
  auto m = tp_test::BuildModule(mb);
  ASSERT_NE(m, nullptr);
  const std::vector<eval::Value> in = {tp_test::F32Array({4, 8}, tp_test::RandomValues(32, 1)),
                                       tp_test::F32Array({8, 8}, tp_test::RandomValues(64, 2))};
  TempDir dir;
  const std::string snap = Pack(dir.File("cast.dhs"), m->proto(), in, {});
  BisectRequest req;
  req.source.snapshot = snap;
  absl::StatusOr<BisectReport> r = BisectSnapshot(req);  // xla against f32
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->origins.empty());
  EXPECT_EQ(r->origins[0].name, cast.name());
  // The report outlives the module BisectSnapshot loaded: no pointer into
  // it, and the text (which names the largest error's multi-index in the
  // bf16[4,8] cast) reads the report alone (a use after free, once).
  EXPECT_EQ(r->origins[0].instruction, nullptr);
  EXPECT_THAT(r->origins[0].dims, ::testing::ElementsAre(4, 8));
  EXPECT_THAT(BisectReportText(*r, 0), ::testing::ContainsRegex("at element [0-9]+ \\[[0-3],[0-7]\\]"));
  req.against = "xla";
  r = BisectSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->origins.empty());
  // Against a dump of the f32 run: the cast again.
  RunProgram program = *LoadProgram(req.source);
  RunOptions dump;
  dump.numerics = eval::Numerics::kF32;
  dump.dump_dir = dir.File("dump");
  ASSERT_TRUE(Execute(program, dump).ok());
  req.against = dir.File("dump");
  r = BisectSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->origins.empty());
  EXPECT_EQ(r->origins[0].name, cast.name());
  EXPECT_EQ(r->reference, dir.File("dump"));
  req.against = dir.File("nothing");
  EXPECT_EQ(BisectSnapshot(req).status().code(), absl::StatusCode::kNotFound);
}

TEST(RunReplay, BisectSubstitutesForBothSides) {
  // An NKI kernel neither side can run: its substitute serves both.
  hlo::HloModuleBuilder mb("nki");
  hlo::HloComputationBuilder& c = mb.AddEntryComputation("main");
  hlo::HloOp x = c.Parameter(0, hlo::MakeArrayShape(xla::F32, {3}), "x");
  hlo::HloOp k = c.CustomCall("AwsNeuronCustomNativeKernel", {x}, hlo::MakeArrayShape(xla::F32, {3}));
  c.Tuple({c.Exp(k)});
  auto m = tp_test::BuildModule(mb);
  TempDir dir;
  BisectRequest req;
  req.source.snapshot = Pack(dir.File("nki.dhs"), m->proto(), {tp_test::F32Array({3}, {1, 2, 3})}, {});
  absl::StatusOr<BisectReport> r = BisectSnapshot(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--substitute"));
  const std::vector<eval::Value> value = {eval::Value(tp_test::F32Array({3}, {0, 1, 2}))};
  ASSERT_TRUE(WriteOutputs(value, {OutputFormat::kNpyFiles, dir.File("k_"), "", true}).ok());
  req.substitute_files = {{k.name(), dir.File("k_snapshot_output0.npy")}};
  r = BisectSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->origins.empty());
}

}  // namespace
}  // namespace decomposed::run
