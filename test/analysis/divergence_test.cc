// Divergence origins (analysis/divergence.h): graphs with a planted fault
// (one value perturbed through substitutes, a wrong epsilon in an RmsNorm
// found against a dump of the right run, a bf16 cast in the wrong place),
// the precision-aware tolerance on a bf16 graph, the reports, memory
// within twice a single run, and random modules with random planted
// faults.
#include "decomposed/analysis/divergence.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "decomposed/eval/evaluate.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/random_module.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/io/dirs.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/run/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "planted_fault.h"
#include "tp_test_models.h"

namespace decomposed {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using eval::Array;
using eval::Value;
using hlo::HloComputationBuilder;
using hlo::HloModuleBuilder;
using hlo::HloOp;
using hlo::MakeArrayShape;
using tp_test::BuildModule;
using internal::TempDirectory;

std::vector<std::string> OriginNames(const BisectReport& r) {
  std::vector<std::string> n;
  for (const DivergenceOrigin& o : r.origins) n.push_back(o.name);
  return n;
}

// The value of entry instruction `name` in a plain run.
Value ValueOf(const hlo::HloModule& m, std::span<const Value> in, const std::string& name,
              eval::Numerics numerics = eval::Numerics::kXla) {
  Value out;
  eval::EvalOptions o;
  o.numerics = numerics;
  o.on_instruction = [&](const eval::InstructionEvent& e) {
    if (e.depth == 0 && e.instruction.name() == name) out = e.value;
    return absl::OkStatus();
  };
  EXPECT_TRUE(eval::Evaluate(m, in, o).ok());
  return out;
}

// --- A dump, as `decomposed run --dump` writes it (run::Execute) -------------------

absl::Status WriteNpy(const std::string& path, const Array& in) {
  absl::StatusOr<Array> a = in.Contiguous();
  if (!a.ok()) return a.status();
  NpyHeader h;
  h.descr = std::string(a->type_info().npy_descr);
  h.shape = a->dims();
  std::ofstream f(path, std::ios::binary);
  f << FormatNpyHeader(h);
  f.write(a->data(), static_cast<std::streamsize>(a->byte_size()));
  if (!f) return absl::InternalError("writing " + path);
  if (!a->type_info().ml_dtype.empty()) return WriteNpyMetaSidecar(path, a->type_info().ml_dtype);
  return absl::OkStatus();
}

// Every instruction's value of a run of `m`: DIR/<computation>/<name>.npy
// and DIR/index.json.
void Dump(const hlo::HloModule& m, std::span<const Value> in, const std::string& dir,
          eval::Numerics numerics = eval::Numerics::kXla) {
  run::RunProgram program;
  program.module = std::shared_ptr<const hlo::HloModule>(&m, [](const hlo::HloModule*) {});
  program.inputs.assign(in.begin(), in.end());
  run::RunOptions o;
  o.numerics = numerics;
  o.dump_dir = dir;
  absl::StatusOr<run::RunResult> r = run::Execute(program, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GT(r->dumped_files, 0);
}

// --- Planted faults ------------------------------------------------------------------

TEST(Divergence, APerturbedValueIsTheOrigin) {
  tp_test::Mlp mlp;
  auto m = mlp.Build(0);
  ASSERT_NE(m, nullptr);
  const std::vector<Value> in = mlp.DenseInputs(mlp.Random(1));
  // main: x, w1, w2, dot (h), tanh, dot (y), tuple.
  const hlo::HloInstruction* root = m->entry()->root();
  const hlo::HloInstruction* y = root->operand(0);
  const hlo::HloInstruction* tanh = y->operand(0);
  ASSERT_EQ(tanh->opcode(), hlo::HloOpcode::kTanh);
  std::optional<Value> bad = planted::Perturbed(ValueOf(*m, in, tanh->name()), 37);
  ASSERT_TRUE(bad);
  for (bool on_reference : {false, true}) {
    for (eval::Numerics ref : {eval::Numerics::kXla, eval::Numerics::kF32}) {
      BisectOptions o;
      o.reference.numerics = ref;
      (on_reference ? o.reference : o.actual).substitutes[tanh->name()] = *bad;
      absl::StatusOr<BisectReport> r = Bisect(*m, in, o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_THAT(OriginNames(*r), ElementsAre(tanh->name()));
      const DivergenceOrigin& origin = r->origins[0];
      EXPECT_EQ(origin.opcode, "tanh");
      EXPECT_EQ(origin.shape, "f32[4,64]");
      EXPECT_EQ(origin.metrics.mismatches, 1u);
      EXPECT_EQ(origin.metrics.max_abs_error_index, 37u);
      ASSERT_EQ(r->outputs.size(), 1u);
      EXPECT_TRUE(r->outputs[0].differs);
      ASSERT_EQ(origin.paths.size(), 1u);
      EXPECT_THAT(origin.paths[0].instructions, ElementsAre(tanh->name(), y->name()));
      EXPECT_EQ(r->differ, 3);  // tanh, the dot after it, the root tuple
    }
  }
}

// RmsNorm: y = x * rsqrt(mean(x^2) + eps) * w, then a projection.
struct RmsNormModel {
  double eps = 1e-6;
  bool custom_call = false;
  std::unique_ptr<hlo::HloModule> Build() const {
    HloModuleBuilder mb("rmsnorm");
    HloComputationBuilder& add = tp_test::ScalarBinary(mb, "add", hlo::HloOpcode::kAdd);
    HloComputationBuilder& c = mb.AddEntryComputation("main");
    HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {4, 16}), "x");
    HloOp w = c.Parameter(1, MakeArrayShape(xla::F32, {16}), "w");
    HloOp proj = c.Parameter(2, MakeArrayShape(xla::F32, {16, 8}), "proj");
    HloOp e = c.ConstantR0(xla::F32, eps);
    HloOp y;
    if (custom_call) {
      y = c.CustomCall("AwsNeuronRmsNorm", {x, w, e}, MakeArrayShape(xla::F32, {4, 16}), "1");
    } else {
      HloOp sq = c.Multiply(x, x);
      HloOp sum = c.Reduce({sq}, {c.ConstantR0(xla::F32, 0)}, {1}, add);
      HloOp mean = c.Divide(sum, c.Broadcast(c.ConstantR0(xla::F32, 16), {4}, {}));
      HloOp r = c.Rsqrt(c.Add(mean, c.Broadcast(e, {4}, {})));
      y = c.Multiply(c.Multiply(x, c.Broadcast(r, {4, 16}, {0})), c.Broadcast(w, {4, 16}, {1}));
    }
    c.Tuple({c.Dot(y, proj, hlo::MakeDotDimensionNumbers({1}, {0}))});
    return BuildModule(mb);
  }
  std::vector<Value> Inputs() const {
    // Small values: the epsilon matters.
    return {tp_test::F32Array({4, 16}, tp_test::RandomValues(64, 3, 0.05f)),
            tp_test::F32Array({16}, tp_test::RandomValues(16, 4)),
            tp_test::F32Array({16, 8}, tp_test::RandomValues(128, 5))};
  }
};

TEST(Divergence, AWrongEpsilonInAnRmsNormIsFoundAgainstADump) {
  for (bool custom_call : {false, true}) {
    RmsNormModel right{1e-6, custom_call}, wrong{1e-2, custom_call};
    auto good = right.Build(), bad = wrong.Build();
    ASSERT_NE(good, nullptr);
    ASSERT_NE(bad, nullptr);
    TempDirectory dir;
    ASSERT_TRUE(dir.Create(::testing::TempDir() + "/dump").ok());
    Dump(*good, right.Inputs(), dir.path());
    absl::StatusOr<std::unique_ptr<InstructionValues>> values = OpenValueDirectory(dir.path());
    ASSERT_TRUE(values.ok()) << values.status();
    absl::StatusOr<BisectReport> r = BisectAgainst(*bad, right.Inputs(), **values, {});
    ASSERT_TRUE(r.ok()) << r.status();
    // The constant holding epsilon: the one instruction that differs with
    // every operand agreeing.
    ASSERT_EQ(r->origins.size(), 1u) << BisectReportText(*r);
    EXPECT_EQ(r->origins[0].opcode, "constant");
    EXPECT_EQ(r->origins[0].metrics.max_abs_error_index, 0u);
    EXPECT_NEAR(*r->origins[0].metrics.max_abs_error, 1e-2 - 1e-6, 1e-9);
    EXPECT_TRUE(r->outputs[0].differs);
    EXPECT_EQ(r->reference, dir.path());
    EXPECT_EQ(r->inferred, 0);  // a dump is always compared
    // The right module against its own dump: nothing differs.
    r = BisectAgainst(*good, right.Inputs(), **values, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->origins.empty()) << BisectReportText(*r);
    EXPECT_EQ(r->differ, 0);
  }
}

TEST(Divergence, ValuesMissingFromADumpAreJudgedByTheirOperands) {
  RmsNormModel right{1e-6}, wrong{1e-2};
  auto good = right.Build(), bad = wrong.Build();
  const hlo::HloInstruction* eps = nullptr;
  for (const hlo::HloInstruction* i : bad->entry()->instructions()) {
    if (i->opcode() == hlo::HloOpcode::kConstant && i->users().size() == 1 &&
        i->users()[0]->opcode() == hlo::HloOpcode::kBroadcast &&
        i->users()[0]->users()[0]->opcode() == hlo::HloOpcode::kAdd) {
      eps = i;
    }
  }
  ASSERT_NE(eps, nullptr);
  const hlo::HloInstruction* bcast = eps->users()[0];
  for (bool with_index : {true, false}) {
    TempDirectory dir;
    ASSERT_TRUE(dir.Create(::testing::TempDir() + "/dump").ok());
    Dump(*good, right.Inputs(), dir.path());
    const fs::path index = fs::path(dir.path()) / "index.json";
    if (with_index) {
      // The constant and its broadcast left out of the index (a dump
      // filtered with --dump-filter): not compared.
      nlohmann::json j = nlohmann::json::parse(std::ifstream(index));
      nlohmann::json kept = nlohmann::json::array();
      for (const nlohmann::json& e : j["instructions"]) {
        if (e["name"] != eps->name() && e["name"] != bcast->name()) kept.push_back(e);
      }
      j["instructions"] = kept;
      std::ofstream(index) << j.dump();
    } else {
      // Without index.json, values are found by name: remove the files.
      fs::remove(index);
      fs::remove(fs::path(dir.path()) / "main" / (eps->name() + ".npy"));
      fs::remove(fs::path(dir.path()) / "main" / (bcast->name() + ".npy"));
    }
    auto values = OpenValueDirectory(dir.path());
    ASSERT_TRUE(values.ok()) << values.status();
    absl::StatusOr<BisectReport> r = BisectAgainst(*bad, right.Inputs(), **values, {});
    ASSERT_TRUE(r.ok()) << r.status();
    // The first instruction that uses them is the origin: the add of the
    // mean and epsilon.
    EXPECT_THAT(OriginNames(*r), ElementsAre(bcast->users()[0]->name())) << with_index;
    EXPECT_EQ(r->compared, r->instructions - 2);
  }
}

TEST(Divergence, ADumpsIndexIsCheckedAndFollowed) {
  RmsNormModel model;
  auto m = model.Build();
  TempDirectory dir;
  ASSERT_TRUE(dir.Create(::testing::TempDir() + "/dump").ok());
  Dump(*m, model.Inputs(), dir.path());
  const fs::path index = fs::path(dir.path()) / "index.json";
  const std::string good = [&] {
    std::ifstream f(index);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  }();
  auto open_with = [&](const std::string& text) {
    std::ofstream(index, std::ios::trunc) << text;
    return OpenValueDirectory(dir.path());
  };
  EXPECT_THAT(std::string(open_with("[1]").status().message()), HasSubstr("a JSON object"));
  EXPECT_THAT(std::string(open_with("{\"instructions\": [{\"name\": \"x\"}]}").status().message()),
              HasSubstr("instruction 0 to have a computation, a name and files"));
  EXPECT_THAT(std::string(open_with("{\"instructions\": [{\"computation\": \"main\", \"name\": "
                                    "\"x\", \"files\": [\"../../etc/passwd\"]}]}")
                              .status()
                              .message()),
              HasSubstr("files inside the directory"));
  // A file the index names that is not there.
  nlohmann::json j = nlohmann::json::parse(good);
  for (nlohmann::json& e : j["instructions"]) {
    if (e["name"] == "x") e["files"] = {"main/gone.npy"};
  }
  absl::StatusOr<std::unique_ptr<InstructionValues>> values = open_with(j.dump());
  ASSERT_TRUE(values.ok()) << values.status();
  absl::StatusOr<BisectReport> r = BisectAgainst(*m, model.Inputs(), **values, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("gone.npy: listed in"));
  // The index followed: x's entry pointing at w's file is read as x's value
  // (and its dims do not fit).
  for (nlohmann::json& e : j["instructions"]) {
    if (e["name"] == "x") e["files"] = {"main/w.npy"};
  }
  values = open_with(j.dump());
  ASSERT_TRUE(values.ok());
  r = BisectAgainst(*m, model.Inputs(), **values, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("w.npy: expected the dims of"));
}

TEST(Divergence, TupleValuesOfADump) {
  // A while loop's tuple is dumped as <name>.0.npy, <name>.1.npy.
  HloModuleBuilder mb("loop");
  const xla::ShapeProto state = hlo::MakeTupleShape(
      std::vector<xla::ShapeProto>{hlo::MakeScalarShape(xla::S32), MakeArrayShape(xla::F32, {3})});
  HloComputationBuilder& cond = mb.AddComputation("cond");
  cond.Compare(cond.GetTupleElement(cond.Parameter(0, state, "cs"), 0),
               cond.ConstantR0Int(xla::S32, 4), hlo::ComparisonDirection::kLt);
  HloComputationBuilder& body = mb.AddComputation("body");
  {
    HloOp st = body.Parameter(0, state, "bs");
    HloOp v = body.GetTupleElement(st, 1);
    body.Tuple({body.Add(body.GetTupleElement(st, 0), body.ConstantR0Int(xla::S32, 1)),
                body.Multiply(v, v)});
  }
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {3}), "x");
  HloOp w = c.While(cond, body, c.Tuple({c.ConstantR0Int(xla::S32, 0), x}));
  c.Tuple({c.GetTupleElement(w, 1)});
  auto m = BuildModule(mb);
  ASSERT_NE(m, nullptr);
  const std::vector<Value> in = {tp_test::F32Array({3}, {1.0f, 1.0001f, 0.9f})};
  TempDirectory dir;
  ASSERT_TRUE(dir.Create(::testing::TempDir() + "/dump").ok());
  Dump(*m, in, dir.path());
  EXPECT_TRUE(fs::exists(fs::path(dir.path()) / "main" / (w.name() + ".1.npy")));
  for (bool with_index : {true, false}) {
    if (!with_index) fs::remove(fs::path(dir.path()) / "index.json");
    auto values = OpenValueDirectory(dir.path());
    ASSERT_TRUE(values.ok());
    absl::StatusOr<BisectReport> r = BisectAgainst(*m, in, **values, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->compared, r->instructions);  // the while's tuple included
    EXPECT_EQ(r->differ, 0);
    // Perturbed input: the loop is the origin.
    std::vector<Value> other = {tp_test::F32Array({3}, {1.0f, 1.1f, 0.9f})};
    r = BisectAgainst(*m, other, **values, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(OriginNames(*r), ElementsAre("x")) << with_index;
  }
}

TEST(Divergence, ABf16CastInTheWrongPlace) {
  // An f32 graph with a round trip through bf16 in the middle: xla numerics
  // round there, f32 numerics keep f32. The narrowing convert is held to
  // f32's tolerance (its operand's), and everything after it to bf16's.
  HloModuleBuilder mb("cast");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {8, 16}), "x");
  HloOp w1 = c.Parameter(1, MakeArrayShape(xla::F32, {16, 16}), "w1");
  HloOp w2 = c.Parameter(2, MakeArrayShape(xla::F32, {16, 4}), "w2");
  HloOp h = c.Dot(x, w1, hlo::MakeDotDimensionNumbers({1}, {0}));
  HloOp cast = c.Convert(h, xla::BF16);
  HloOp back = c.Convert(cast, xla::F32);
  HloOp y = c.Dot(c.Tanh(back), w2, hlo::MakeDotDimensionNumbers({1}, {0}));
  c.Tuple({y, h});
  auto m = BuildModule(mb);
  ASSERT_NE(m, nullptr);
  const std::vector<Value> in = {tp_test::F32Array({8, 16}, tp_test::RandomValues(128, 1)),
                                 tp_test::F32Array({16, 16}, tp_test::RandomValues(256, 2)),
                                 tp_test::F32Array({16, 4}, tp_test::RandomValues(64, 3))};
  absl::StatusOr<BisectReport> r = Bisect(*m, in, {});
  ASSERT_TRUE(r.ok()) << r.status();
  // The cast is the origin that adds the most. (The last dot may be one
  // too: an output element near zero, where its bf16-sized error is
  // outside bf16's tolerance relative to the element.)
  ASSERT_FALSE(r->origins.empty());
  EXPECT_EQ(r->origins[RankOrigins(*r)[0]].name, cast.name()) << BisectReportText(*r);
  EXPECT_EQ(r->origins[0].name, cast.name());
  for (const DivergenceOrigin& o : r->origins) {
    EXPECT_TRUE(o.name == cast.name() || o.name == y.name()) << o.name;
  }
  EXPECT_EQ(r->origins[0].tolerance.rtol, 1.3e-6);  // f32's, not bf16's
  // Output 0 (f32) differs from the f32 run as compare would judge it;
  // output 1 (before the cast) does not.
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_TRUE(r->outputs[0].differs);
  EXPECT_FALSE(r->outputs[1].differs);
  ASSERT_EQ(r->origins[0].paths.size(), 1u);
  EXPECT_EQ(r->origins[0].paths[0].output, 0);
  EXPECT_EQ(r->origins[0].paths[0].instructions.front(), cast.name());
  EXPECT_EQ(r->origins[0].paths[0].instructions.back(), y.name());
  // Without the cast (the same graph in f32 throughout) nothing differs.
  HloModuleBuilder mb2("nocast");
  HloComputationBuilder& c2 = mb2.AddEntryComputation("main");
  HloOp x2 = c2.Parameter(0, MakeArrayShape(xla::F32, {8, 16}), "x");
  HloOp w12 = c2.Parameter(1, MakeArrayShape(xla::F32, {16, 16}), "w1");
  HloOp w22 = c2.Parameter(2, MakeArrayShape(xla::F32, {16, 4}), "w2");
  HloOp h2 = c2.Dot(x2, w12, hlo::MakeDotDimensionNumbers({1}, {0}));
  c2.Tuple({c2.Dot(c2.Tanh(h2), w22, hlo::MakeDotDimensionNumbers({1}, {0})), h2});
  auto m2 = BuildModule(mb2);
  r = Bisect(*m2, in, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->origins.empty());
  EXPECT_EQ(r->differ, 0);
}

TEST(Divergence, ABf16GraphHasOriginsOnlyWhereItsErrorGrowsBeyondBf16) {
  // b = a + 0.5 rounds the 0.5 away in bf16 (a near 256, spacing 2): within
  // bf16's tolerance. b - a is 0 against 0.5: the cancellation is the
  // origin. The f32 work on upcast values stays within bf16's tolerance.
  HloModuleBuilder mb("bf16");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp a = c.Parameter(0, MakeArrayShape(xla::BF16, {8}), "a");
  HloOp b = c.Add(a, c.Broadcast(c.ConstantR0(xla::BF16, 0.5), {8}, {}));
  HloOp up = c.Convert(b, xla::F32);
  HloOp sq = c.Multiply(up, up);
  HloOp diff = c.Subtract(b, a);
  c.Tuple({sq, diff});
  auto m = BuildModule(mb);
  ASSERT_NE(m, nullptr);
  Array in = *Array::Allocate(PrimitiveType::kBF16, {8});
  for (int i = 0; i < 8; ++i) {
    const float f = 256.0f + 2.0f * i;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    in.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);
  }
  const std::vector<Value> inputs = {in};
  absl::StatusOr<BisectReport> r = Bisect(*m, inputs, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(OriginNames(*r), ElementsAre(diff.name())) << BisectReportText(*r);
  // 0 against 0.5 everywhere: an RMS error the size of the values.
  EXPECT_DOUBLE_EQ(r->origins[0].error, 1.0);
  EXPECT_EQ(r->differ, 2);  // the subtract and the root tuple holding it
  // As compare would judge them, both outputs differ from the f32 run.
  EXPECT_TRUE(r->outputs[0].differs);
  EXPECT_TRUE(r->outputs[1].differs);
}

TEST(Divergence, WhatBothSidesComputeAlikeIsKnownWithoutComparing) {
  tp_test::Mlp mlp;
  auto m = mlp.Build(0);
  const std::vector<Value> in = mlp.DenseInputs(mlp.Random(4));
  // xla against f32 on an f32 graph: the same bytes at every step.
  absl::StatusOr<BisectReport> r = Bisect(*m, in, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->compared, 0);
  EXPECT_EQ(r->inferred, r->instructions);
  EXPECT_TRUE(r->origins.empty());
  // xla against neuron: the dots round their f32 operands to bf16 in
  // neuron, so they are compared, and the first one is where the runs part.
  BisectOptions o;
  o.reference.numerics = eval::Numerics::kNeuron;
  r = Bisect(*m, in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const hlo::HloInstruction* y = m->entry()->root()->operand(0);
  const hlo::HloInstruction* h = y->operand(0)->operand(0);
  ASSERT_EQ(h->opcode(), hlo::HloOpcode::kDot);
  EXPECT_GE(r->compared, 2);
  EXPECT_THAT(OriginNames(*r), ::testing::Contains(h->name())) << BisectReportText(*r);
  // Different thread counts on the two sides: nothing is assumed.
  o = BisectOptions();
  o.actual.threads = 1;
  o.reference.threads = 2;
  r = Bisect(*m, in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->compared + r->inferred, r->instructions);
  EXPECT_GT(r->compared, 0);
}

// --- Reports ---------------------------------------------------------------------------

TEST(Divergence, ReportsRankByAddedErrorAndListInScheduleOrder) {
  tp_test::Mlp mlp;
  auto m = mlp.Build(0);
  const std::vector<Value> in = mlp.DenseInputs(mlp.Random(2));
  const hlo::HloInstruction* y = m->entry()->root()->operand(0);
  const hlo::HloInstruction* tanh = y->operand(0);
  const hlo::HloInstruction* h = tanh->operand(0);
  // Two faults: one element of h (the first dot) and one of the weight w2.
  BisectOptions o;
  o.reference.numerics = eval::Numerics::kXla;
  o.actual.substitutes[h->name()] = *planted::Perturbed(ValueOf(*m, in, h->name()), 0);
  Value w2 = in[2];
  o.actual.substitutes["w2"] = *planted::Perturbed(w2, 5);
  absl::StatusOr<BisectReport> r = Bisect(*m, in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  // Schedule order: w2 (parameter 2) comes before the dot that makes h.
  ASSERT_THAT(OriginNames(*r), ElementsAre("w2", h->name()));
  const std::vector<size_t> ranked = RankOrigins(*r);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_GE(r->origins[ranked[0]].added_error, r->origins[ranked[1]].added_error);
  const std::string text = BisectReportText(*r, 1);
  EXPECT_THAT(text, HasSubstr("bisect: xla against xla (torch rule)"));
  EXPECT_THAT(text, HasSubstr("2 origins"));
  EXPECT_THAT(text, HasSubstr("1. " + r->origins[ranked[0]].name));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("2. ")));  // --top 1
  EXPECT_THAT(text, HasSubstr("to output 0 (differs): "));
  nlohmann::json j = nlohmann::json::parse(BisectReportJson(*r));
  EXPECT_EQ(j["actual"], "xla");
  EXPECT_EQ(j["mode"], "torch");
  ASSERT_EQ(j["origins"].size(), 2u);
  EXPECT_EQ(j["origins"][0]["name"], "w2");
  EXPECT_EQ(j["origins"][1]["name"], h->name());
  for (const char* key : {"name", "opcode", "shape", "error", "added_error", "op_name", "source",
                          "rtol", "atol", "mismatches", "max_abs_error", "paths", "operands"}) {
    EXPECT_TRUE(j["origins"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["origins"][1]["opcode"], "dot");
  EXPECT_EQ(j["outputs"][0]["differs"], true);
  nlohmann::json top = nlohmann::json::parse(BisectReportJson(*r, 1));
  ASSERT_EQ(top["origins"].size(), 1u);
  EXPECT_EQ(top["origins"][0]["name"], r->origins[ranked[0]].name);
}

TEST(Divergence, MetadataGivesOpNameAndSource) {
  HloModuleBuilder mb("meta");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {4}), "x");
  HloOp e = c.Exp(x);
  xla::OpMetadata md;
  md.set_op_name("model/layer.3/exp");
  md.set_source_file("model.py");
  md.set_source_line(42);
  c.SetMetadata(e, md);
  c.Tuple({c.Negate(e)});
  auto m = BuildModule(mb);
  const std::vector<Value> in = {tp_test::F32Array({4}, {1, 2, 3, 4})};
  BisectOptions o;
  o.actual.substitutes[e.name()] = *planted::Perturbed(ValueOf(*m, in, e.name()), 2);
  absl::StatusOr<BisectReport> r = Bisect(*m, in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->origins.size(), 1u);
  EXPECT_EQ(r->origins[0].op_name, "model/layer.3/exp");
  EXPECT_EQ(r->origins[0].source, "model.py:42");
  const std::string text = BisectReportText(*r);
  EXPECT_THAT(text, HasSubstr("op_name: model/layer.3/exp"));
  EXPECT_THAT(text, HasSubstr("source: model.py:42"));
}

// --- Errors ------------------------------------------------------------------------------

TEST(Divergence, ErrorsNameWhereAndWhat) {
  EXPECT_EQ(OpenValueDirectory("/nonexistent/dump").status().code(), absl::StatusCode::kNotFound);
  RmsNormModel model;
  auto m = model.Build();
  TempDirectory dir;
  ASSERT_TRUE(dir.Create(::testing::TempDir() + "/dump").ok());
  auto values = OpenValueDirectory(dir.path());
  ASSERT_TRUE(values.ok());
  absl::StatusOr<BisectReport> r = BisectAgainst(*m, model.Inputs(), **values, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("expected a value of at least one instruction"));
  // A value of other dims than the instruction's: the file is named.
  fs::create_directories(fs::path(dir.path()) / "main");
  const std::string x = (fs::path(dir.path()) / "main" / "x.npy").string();
  ASSERT_TRUE(WriteNpy(x, tp_test::F32Array({2, 2}, {1, 2, 3, 4})).ok());
  r = BisectAgainst(*m, model.Inputs(), **values, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(x));
  EXPECT_THAT(r.status().message(), HasSubstr("f32[4,16], found [2,2]"));
  // A truncated .npy.
  std::ofstream(x, std::ios::trunc) << FormatNpyHeader({"<f4", false, {4, 16}}) << "abc";
  r = BisectAgainst(*m, model.Inputs(), **values, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(x));
  // An evaluation error names the side.
  BisectOptions o;
  o.actual.max_array_bytes = 16;
  r = Bisect(*m, model.Inputs(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("the xla run under test: "));
  o = BisectOptions();
  o.reference.max_array_bytes = 16;
  r = Bisect(*m, model.Inputs(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("the f32 reference run: "));
}

// --- Memory ---------------------------------------------------------------------------------

// Peak RSS growth (bytes) of `fn` run in a child process.
int64_t PeakGrowth(const std::function<void()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    eval::TrimBufferCache();
    long pages = 0, resident = 0;
    {
      std::ifstream statm("/proc/self/statm");
      statm >> pages >> resident;
    }
    fn();
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    const int64_t growth = static_cast<int64_t>(u.ru_maxrss) * 1024 - resident * sysconf(_SC_PAGESIZE);
    (void)!write(fds[1], &growth, sizeof growth);
    _exit(0);
  }
  close(fds[1]);
  int64_t growth = -1;
  (void)!read(fds[0], &growth, sizeof growth);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return growth;
}

TEST(Divergence, MemoryStaysWithinTwiceASingleRun) {
  // A chain of elementwise ops on 8 MiB arrays, with two values live at
  // once: a single run holds a few arrays; the lockstep holds both runs'.
  HloModuleBuilder mb("chain");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  const int64_t n = int64_t{1} << 21;
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {n}), "x");
  HloOp v = x;
  for (int i = 0; i < 6; ++i) v = c.Add(c.Tanh(v), x);
  c.Tuple({v});
  auto m = BuildModule(mb);
  const std::vector<Value> in = {tp_test::F32Array({n}, tp_test::RandomValues(n, 9))};
  // One thread: the children of fork() start no pools.
  eval::EvalOptions one;
  one.threads = 1;
  const int64_t single = PeakGrowth([&] { (void)eval::Evaluate(*m, in, one); });
  const int64_t bisect = PeakGrowth([&] {
    BisectOptions o;
    o.actual = one;
    o.reference = one;
    (void)Bisect(*m, in, o);
  });
  ASSERT_GT(single, 0);
  ASSERT_GT(bisect, 0);
  // 4 MiB of slack for the comparator's and the second pool's own memory.
  EXPECT_LE(bisect, 2 * single + (int64_t{4} << 20)) << "single " << single << " bisect " << bisect;
  std::printf("peak growth: single run %lld KiB, bisect %lld KiB\n",
              static_cast<long long>(single >> 10), static_cast<long long>(bisect >> 10));
}

// --- Random modules with random planted faults ---------------------------------------------

// What reaches what, by users.
std::set<const hlo::HloInstruction*> Downstream(const hlo::HloInstruction* from) {
  std::set<const hlo::HloInstruction*> seen = {from};
  std::vector<const hlo::HloInstruction*> stack = {from};
  while (!stack.empty()) {
    const hlo::HloInstruction* i = stack.back();
    stack.pop_back();
    for (const hlo::HloInstruction* u : i->users()) {
      if (seen.insert(u).second) stack.push_back(u);
    }
  }
  return seen;
}

TEST(Divergence, RandomModulesWithAPlantedFault) {
  int checked = 0, with_difference = 0;
  for (uint64_t seed = 0; seed < 600; ++seed) {
    hlo::RandomModuleOptions ro;
    ro.steps = 16;
    ro.attributes = false;
    absl::StatusOr<xla::HloModuleProto> proto = hlo::RandomModule(seed, ro);
    ASSERT_TRUE(proto.ok()) << proto.status();
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::HloModule::Create(*proto);
    ASSERT_TRUE(m.ok()) << m.status();
    std::mt19937 g(static_cast<uint32_t>(seed));
    std::vector<Value> in;
    bool usable = true;
    for (const hlo::HloInstruction* p : (*m)->entry()->parameters()) {
      std::optional<Value> v = planted::RandomValue(p->shape(), g);
      if (!v) usable = false;
      if (v) in.push_back(*v);
    }
    if (!usable) continue;
    eval::EvalOptions eo;
    eo.threads = 1;
    eo.max_array_bytes = 1 << 22;
    eo.max_loop_iterations = 64;
    absl::StatusOr<std::unique_ptr<eval::Evaluation>> ev = eval::Evaluation::Start(**m, in, eo);
    if (!ev.ok()) continue;
    const auto schedule = (*ev)->schedule();
    const hlo::HloInstruction* x = schedule[g() % schedule.size()];
    std::optional<Value> value;
    bool ran = true;
    while (!(*ev)->done()) {
      absl::StatusOr<const hlo::HloInstruction*> i = (*ev)->Step();
      if (!i.ok()) {
        ran = false;
        break;
      }
      if (*i == x) value = (*ev)->value();
    }
    if (!ran || !value) continue;
    std::optional<Value> bad = planted::Perturbed(*value, g());
    if (!bad) continue;
    BisectOptions o;
    o.actual = eo;
    o.reference = eo;
    o.actual.substitutes[x->name()] = *bad;
    absl::StatusOr<BisectReport> r = Bisect(**m, in, o);
    if (!r.ok()) continue;  // the fault may break the run (a loop bound...)
    ++checked;
    const auto below = Downstream(x);
    // The planted instruction is an origin, every origin is downstream of
    // it, and every output that differs is downstream of an origin.
    EXPECT_THAT(OriginNames(*r), ::testing::Contains(x->name())) << "seed " << seed;
    for (const DivergenceOrigin& origin : r->origins) {
      EXPECT_TRUE(below.contains(origin.instruction)) << "seed " << seed << " " << origin.name;
    }
    for (const OutputVerdict& out : r->outputs) {
      if (!out.differs) continue;
      ++with_difference;
      const hlo::HloInstruction* oi = (*m)->entry()->FindInstruction(out.instruction);
      bool reached = false;
      for (const DivergenceOrigin& origin : r->origins) reached |= Downstream(origin.instruction).contains(oi);
      EXPECT_TRUE(reached) << "seed " << seed << " output " << out.index;
    }
  }
  // Enough of the seeds ran to mean something (many random modules hold an
  // op the evaluator cannot run: rng, fft, send, an unknown custom call).
  std::printf("%d of 600 random modules checked, %d differing outputs\n", checked, with_difference);
  EXPECT_GT(checked, 150);
  EXPECT_GT(with_difference, 50);
}

}  // namespace
}  // namespace decomposed
