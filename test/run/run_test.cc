// decomposed run as a library (run/run.h) and the module file reader
// (snapshot/module_file.h).
//
// The shipped example (examples/make_example.py) runs
//   product = multiply(x, broadcast(2)), root (product)
// on x = [[0.5, 1, 1.5], [2, 2.5, 3]], so its output is [[1, 2, 3], [4, 5,
// 6]] exactly, which is also its recorded output. Its layout, by hand from
// make_example.py (test/snapshot/inspect_test.cc has the derivation): region [0] is
// 403 bytes after a 5-byte box; the input count box at byte 408, input 0's
// box at 412 and body at 416: 18 bytes of shape record (0a 10 <16>), then
// 42 18, so its 24 float bytes start at 436, a multiple of 4: input 0 is
// used without a copy; input 1 (S32, varints) is decoded.
//
// The other modules are built with hlo/builder.h; their results are worked
// out in the comments beside them.
#include "decomposed/analysis/compare.h"
#include "decomposed/capture/config.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/hlo/text.h"
#include "decomposed/names.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/run/run.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "decomposed/analysis/tensor_set.h"
#include "decomposed/eval/custom_call.h"
#include "decomposed/eval/literal.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/npy/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace decomposed::run {
namespace {

using ::decomposed::test::ReadFile;
using ::decomposed::test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kExample =
    std::string(DECOMPOSED_SOURCE_DIR) + "/examples/example.decomposed_hlo_snapshot";

eval::Array F32(std::vector<int64_t> dims, std::vector<float> v) {
  eval::Array a = *eval::Array::Allocate(PrimitiveType::kF32, dims);
  std::copy(v.begin(), v.end(), a.mutable_data<float>());
  return a;
}

eval::Array S32(std::vector<int64_t> dims, std::vector<int32_t> v) {
  eval::Array a = *eval::Array::Allocate(PrimitiveType::kS32, dims);
  std::copy(v.begin(), v.end(), a.mutable_data<int32_t>());
  return a;
}

template <class T>
std::vector<T> Elements(const eval::Value& v) {
  const eval::Array a = *v.array().Contiguous();
  const T* p = a.data<T>();
  return std::vector<T>(p, p + a.element_count());
}

bool Exists(const std::string& p) {
  struct stat sb;
  return ::stat(p.c_str(), &sb) == 0;
}

// A decomposed (or classic) snapshot of `module` with these literals.
std::string Pack(const TempDir& dir, const std::string& name, const xla::HloModuleProto& module,
                 const std::vector<eval::Array>& inputs, const std::vector<eval::Array>& outputs,
                 SnapshotType format = SnapshotType::kDecomposed) {
  PackRequest req;
  req.snapshot = *SnapshotFromModule(module.SerializeAsString());
  for (const eval::Array& a : inputs) {
    req.inputs.push_back(ProtoLiteral(*eval::LiteralFromArray(a)));
  }
  for (const eval::Array& a : outputs) {
    req.outputs.push_back(ProtoLiteral(*eval::LiteralFromArray(a)));
  }
  req.format = format;
  const std::string path = dir.File(name);
  absl::Status s = PackToFile(req, path);
  EXPECT_TRUE(s.ok()) << s;
  return path;
}

// x: f32[2,3], y: s32[4] -> (x * 2, y + 1): the example's parameters with
// a second output, so that a check can name the tensor that fails.
xla::HloModuleProto TwoOutputs() {
  using namespace hlo;
  HloModuleBuilder mb("two_outputs");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {2, 3}), "x");
  HloOp y = c.Parameter(1, MakeArrayShape(xla::S32, {4}), "y");
  HloOp twice = c.Multiply(x, c.Broadcast(c.ConstantR0(xla::F32, 2), {2, 3}, {}));
  HloOp next = c.Add(y, c.Broadcast(c.ConstantR0Int(xla::S32, 1), {4}, {}));
  c.Tuple({twice, next});
  return *mb.Build();
}

const std::vector<float> kX = {0.5f, 1, 1.5f, 2, 2.5f, 3};
const std::vector<float> kTwiceX = {1, 2, 3, 4, 5, 6};
const std::vector<int32_t> kY = {-2, -1, 0, 7};
const std::vector<int32_t> kYPlus1 = {-1, 0, 1, 8};

// --- The spellings of enum options (names.h) -------------------------------------

// Each table names every value once and each name one value, so both
// directions agree (the CLI binds its options to these tables).
template <typename E, size_t N>
void ExpectOneToOne(const EnumName<E> (&names)[N], size_t values) {
  EXPECT_EQ(N, values);
  for (const EnumName<E>& n : names) {
    EXPECT_EQ(ValueOf(names, n.name), n.value) << n.name;
    EXPECT_EQ(NameOf(names, n.value), n.name) << n.name;
  }
  EXPECT_EQ(ValueOf(names, "bogus"), std::nullopt);
}

TEST(EnumNamesTest, EveryTableIsOneToOne) {
  ExpectOneToOne(kSnapshotTypeNames, 3);
  ExpectOneToOne(kOutputSnapshotTypeNames, 2);
  ExpectOneToOne(eval::kNumericsNames, 3);
  ExpectOneToOne(kCompareModeNames, 3);
  ExpectOneToOne(hlo::kHloTextStyleNames, 3);
  ExpectOneToOne(capture::kBundleFormatNames, 2);
  // The names commands print come from the same tables.
  EXPECT_EQ(SnapshotTypeName(SnapshotType::kClassic), "snapshot");
  EXPECT_EQ(SnapshotTypeFromName("decomposed"), SnapshotType::kDecomposed);
  EXPECT_EQ(eval::NumericsName(eval::Numerics::kNeuron), "neuron");
  EXPECT_EQ(CompareModeFromName("numpy"), CompareMode::kNumpy);
  EXPECT_EQ(capture::BundleFormatName(capture::BundleFormat::kNpy), "npy");
  EXPECT_EQ(NameOf(kOutputSnapshotTypeNames, SnapshotType::kAuto), "?");
}

// --- Module files ------------------------------------------------------------------

TEST(ModuleFileTest, EveryFormByContent) {
  TempDir dir;
  absl::StatusOr<ModuleFile> snap = ReadModuleFile(kExample);
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_EQ(snap->form, ModuleFileForm::kDecomposedSnapshot);
  EXPECT_EQ(snap->module.name(), "example");
  ASSERT_EQ(snap->module.computations_size(), 1);
  EXPECT_EQ(snap->module.computations(0).instructions_size(), 6);

  const std::string bytes = snap->module.SerializeAsString();
  absl::StatusOr<ModuleFile> m = ReadModuleFile(dir.Write("model.hlo", bytes));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->form, ModuleFileForm::kHloModuleProto);
  EXPECT_EQ(m->module.SerializeAsString(), bytes);

  xla::HloProto hp;
  *hp.mutable_hlo_module() = snap->module;
  absl::StatusOr<ModuleFile> h = ReadModuleFile(dir.Write("m.hlo.pb", hp.SerializeAsString()));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->form, ModuleFileForm::kHloProto);
  EXPECT_EQ(h->module.SerializeAsString(), bytes);

  // XLA's unoptimized snapshot: the module, then each partition's
  // arguments (field 2, which an HloProto does not have).
  xla::HloUnoptimizedSnapshot u;
  *u.mutable_hlo_module() = snap->module;
  for (int partition = 0; partition < 2; ++partition) {
    xla::HloInputs inputs;
    xla::LiteralProto* arg = inputs.add_arguments();
    arg->mutable_shape()->set_element_type(xla::S32);
    arg->add_s32s(partition);
    u.add_partitions(inputs.SerializeAsString());
  }
  absl::StatusOr<ModuleFile> un = ReadModuleFile(dir.Write("u.pb", u.SerializeAsString()));
  ASSERT_TRUE(un.ok()) << un.status();
  EXPECT_EQ(un->form, ModuleFileForm::kHloUnoptimizedSnapshot);
  EXPECT_EQ(ModuleFileFormName(un->form), "HloUnoptimizedSnapshot");
  EXPECT_EQ(un->module.SerializeAsString(), bytes);
  // Without partitions the bytes are an HloProto's.
  u.clear_partitions();
  absl::StatusOr<ModuleFile> none = ReadModuleFile(dir.Write("u0.pb", u.SerializeAsString()));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->form, ModuleFileForm::kHloProto);

  const std::string classic = dir.File("classic.pb");
  ASSERT_TRUE(ConvertSnapshot(kExample, classic, SnapshotType::kClassic).ok());
  absl::StatusOr<ModuleFile> c = ReadModuleFile(classic);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->form, ModuleFileForm::kClassicSnapshot);
  EXPECT_EQ(c->module.SerializeAsString(), bytes);
}

TEST(ModuleFileTest, TextIsDetected) {
  EXPECT_TRUE(LooksLikeHloText("HloModule m, entry_computation_layout={()->f32[]}\n"));
  EXPECT_TRUE(LooksLikeHloText("// a dump\n/* more */\n  HloModule m\n"));
  EXPECT_FALSE(LooksLikeHloText("HloModules m\n"));
  // Without the HloModule line, as XLA's parser takes it: computations.
  EXPECT_TRUE(LooksLikeHloText("ENTRY main {\n"));
  EXPECT_TRUE(LooksLikeHloText("// data\nbody {\n  p = (s32[]) parameter(0)\n"));
  EXPECT_TRUE(LooksLikeHloText("%fused.1 (p: f32[]) -> f32[] {\n"));
  EXPECT_FALSE(LooksLikeHloText("hello world\n"));
  EXPECT_FALSE(LooksLikeHloText("ENTRY\n"));
  EXPECT_FALSE(LooksLikeHloText("{ \"json\": 1 }\n"));
  EXPECT_FALSE(LooksLikeHloText(std::string("\n\x07" "example\x12\x04main", 15)));
  TempDir dir;
  const std::string text =
      "HloModule m\n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}\n";
  absl::StatusOr<ModuleFile> t = ReadModuleFile(dir.Write("m.hlo", text));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->form, ModuleFileForm::kHloText);
  ASSERT_EQ(t->module.computations_size(), 1);
}

// torch-xla's graph dump: one graph is read, as the options say.
TEST(ModuleFileTest, TensorsDumpGraphs) {
  TempDir dir;
  auto graph = [](const std::string& name) {
    return absl::StrCat("[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (a.py:1)\n\n",
                        "## BEGIN_GRAPH\nHloModule ", name, "\n\nENTRY ", name,
                        " {\n  ROOT c = f32[] constant(1)\n}\n\n\n## END_GRAPH\n\n\n");
  };
  const std::string one = dir.Write("one.hlo.0", graph("g0"));
  absl::StatusOr<ModuleFile> m = ReadModuleFile(one);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->form, ModuleFileForm::kTensorsDump);
  EXPECT_EQ(ModuleFileFormName(m->form), "torch-xla graph dump");
  EXPECT_EQ(m->module.name(), "g0");
  EXPECT_EQ(m->graph, 0);
  EXPECT_EQ(m->graphs, 1);

  const std::string two = dir.Write("two.hlo.0", graph("g0") + graph("g1"));
  absl::StatusOr<ModuleFile> either = ReadModuleFile(two);
  ASSERT_FALSE(either.ok());
  EXPECT_EQ(either.status().message(),
            "file: torch-xla graph dump: expected one graph, found 2; name one, "
            "from 0 to 1, with `decomposed hlo --graph N` or Python's "
            "`decomposed.hlo.load(path, graph=N)` (" +
                two + ")");
  ModuleFileOptions o;
  o.graph = 1;
  absl::StatusOr<ModuleFile> second = ReadModuleFile(two, o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->module.name(), "g1");
  EXPECT_EQ(second->graph, 1);
  EXPECT_EQ(second->graphs, 2);
  o.graph = 2;
  absl::StatusOr<ModuleFile> past = ReadModuleFile(two, o);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(std::string(past.status().message()),
              HasSubstr("expected a graph in [0, 2), found 2"));
  o.graph = ModuleFileOptions::kEveryGraph;
  absl::StatusOr<ModuleFile> every = ReadModuleFile(two, o);
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->module.computations_size(), 0);
  EXPECT_EQ(every->dump_text, graph("g0") + graph("g1"));
  // A graph asked of another form of file; every graph of one is the module.
  o.graph = 0;
  absl::StatusOr<ModuleFile> not_dump = ReadModuleFile(kExample, o);
  ASSERT_FALSE(not_dump.ok());
  EXPECT_THAT(std::string(not_dump.status().message()),
              HasSubstr("the file is not a torch-xla graph dump"));
  o.graph = ModuleFileOptions::kEveryGraph;
  absl::StatusOr<ModuleFile> plain = ReadModuleFile(kExample, o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->module.name(), "example");
}

// The example's module as HLO text (examples/make_example.py's docstring),
// run on the example's inputs and checked against its recorded output.
TEST(ModuleFileTest, HloTextRuns) {
  TempDir dir;
  const std::string text =
      "HloModule example, entry_computation_layout={(f32[2,3]{1,0}, s32[4]{0})->"
      "(f32[2,3]{1,0})}\n\n"
      "ENTRY main {\n"
      "  x = f32[2,3]{1,0} parameter(0)\n"
      "  y = s32[4]{0} parameter(1)\n"
      "  two = f32[] constant(2)\n"
      "  twos = f32[2,3]{1,0} broadcast(two), dimensions={}\n"
      "  product = f32[2,3]{1,0} multiply(x, twos), metadata={op_type=\"mul\" "
      "op_name=\"example/twice\" source_file=\"examples/make_example.py\" "
      "source_line=112}\n"
      "  ROOT result = (f32[2,3]{1,0}) tuple(product)\n"
      "}\n";
  const std::string path = dir.Write("example.hlo", text);
  absl::StatusOr<ModuleFile> m = ReadModuleFile(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->form, ModuleFileForm::kHloText);
  EXPECT_EQ(m->module.name(), "example");
  RunRequest req;
  req.source.snapshot = kExample;
  req.source.module = path;
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->module_source, "HLO text " + path);
  EXPECT_TRUE(r->pass());
  // A text that does not parse: the parser's line:column, and the file.
  absl::StatusOr<ModuleFile> bad = ReadModuleFile(dir.Write("bad.hlo", "HloModule m\n\nENTRY {\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("bad.hlo"));
}

TEST(ModuleFileTest, NeitherFormSaysWhatEachReadingFound) {
  TempDir dir;
  absl::StatusOr<ModuleFile> g = ReadModuleFile(dir.Write("g.bin", std::string("\xff\xfe\x01 junk", 8)));
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_THAT(msg, HasSubstr("not a module file"));
  EXPECT_THAT(msg, HasSubstr("read as HloModuleProto, "));
  EXPECT_THAT(msg, HasSubstr("read as HloUnoptimizedSnapshot, "));
  EXPECT_THAT(msg, HasSubstr("read as HloProto, "));
  EXPECT_THAT(msg, HasSubstr("read as a classic snapshot, "));
  EXPECT_THAT(msg, HasSubstr("g.bin"));
  absl::StatusOr<ModuleFile> e = ReadModuleFile(dir.Write("empty", ""));
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("empty file"));
  // A module without computations is no module to run.
  xla::HloModuleProto bare;
  bare.set_name("bare");
  absl::StatusOr<ModuleFile> b = ReadModuleFile(dir.Write("bare.pb", bare.SerializeAsString()));
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("without computations"));
}

// --- Load and execute -------------------------------------------------------------

TEST(RunTest, ExampleOutputIsTwiceItsInput) {
  RunSource src;
  src.snapshot = kExample;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->inputs.size(), 2u);
  EXPECT_EQ(p->borrowed_inputs, 1u);  // input 0, aligned at byte 436
  EXPECT_FALSE(p->inputs[0].array().owns_storage());
  EXPECT_TRUE(p->inputs[1].array().owns_storage());
  EXPECT_EQ(Elements<float>(p->inputs[0]), kX);
  EXPECT_EQ(Elements<int32_t>(p->inputs[1]), kY);
  EXPECT_EQ(p->module_source, "decomposed snapshot " + kExample);
  absl::StatusOr<RunResult> r = Execute(*p);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].array().type(), PrimitiveType::kF32);
  EXPECT_THAT(r->outputs[0].array().dims(), ElementsAre(2, 3));
  EXPECT_EQ(Elements<float>(r->outputs[0]), kTwiceX);
  // x, the constant, broadcast, multiply and tuple: y is not used, and the
  // evaluator runs only what the root needs.
  EXPECT_EQ(r->instructions, 5);
  std::map<std::string, int64_t> counts;
  for (const OpcodeTime& t : r->opcodes) counts[t.opcode] = t.count;
  EXPECT_EQ(counts["parameter"], 1);
  EXPECT_EQ(counts["multiply"], 1);
  EXPECT_EQ(counts["tuple"], 1);
}

TEST(RunTest, TwoOutputsHandComputed) {
  TempDir dir;
  const std::string path =
      Pack(dir, "two.dhs", TwoOutputs(), {F32({2, 3}, kX), S32({4}, kY)}, {});
  RunSource src;
  src.snapshot = path;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<RunResult> r = Execute(*p);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(Elements<float>(r->outputs[0]), kTwiceX);
  EXPECT_EQ(Elements<int32_t>(r->outputs[1]), kYPlus1);
  // No recorded outputs (region [2] of count 0): nothing to check against.
  EXPECT_EQ(p->recorded_outputs, nullptr);
  RunRequest req;
  req.source.snapshot = path;
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> rep = RunSnapshot(req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rep.status().message()), HasSubstr("no recorded outputs"));
}

TEST(RunTest, InputMismatchNamesTheInputAndTheParameter) {
  TempDir dir;
  // y given as f32[4] instead of s32[4].
  const std::string path =
      Pack(dir, "bad.dhs", TwoOutputs(), {F32({2, 3}, kX), F32({4}, {1, 2, 3, 4})}, {});
  RunSource src;
  src.snapshot = path;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(p.status().message()),
            "input 1 (input 1 of " + path +
                "): expected S32[4] for parameter 1 \"y\" of computation \"main\", found "
                "F32[4]");
  // Dims, in memory.
  src.snapshot.clear();
  src.module_proto = TwoOutputs();
  src.input_values = std::vector<eval::Value>{F32({3, 2}, kX), S32({4}, kY)};
  p = LoadProgram(src);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("input 0 (input 0): expected F32[2,3] for parameter 0 \"x\""));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("found F32[3,2]"));
  // The count.
  src.input_values = std::vector<eval::Value>{F32({2, 3}, kX)};
  p = LoadProgram(src);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(std::string(p.status().message()),
            "expected 2 inputs for computation \"main\" (x, y), found 1");
}

TEST(RunTest, InputsFromEverySide) {
  TempDir dir;
  // model.hlo and value_input<i>.npy of the example, as unpack writes them,
  // and the same as an .npz.
  UnpackOptions uo;
  uo.output_prefix = dir.File("u") + "/";
  ASSERT_TRUE(Unpack(kExample, uo).ok());
  UnpackOptions zo;
  zo.output_format = UnpackFormat::kNpz;
  zo.npz_path = dir.File("u.npz");
  ASSERT_TRUE(Unpack(kExample, zo).ok());
  const std::string module = dir.File("u/model.hlo");
  for (const std::vector<std::string>& sides :
       {std::vector<std::string>{dir.File("u")}, {dir.File("u.npz")},
        {dir.File("u/value_input0.npy"), dir.File("u/value_input1.npy")}, {kExample}}) {
    RunSource src;
    src.module = module;
    src.input_sides = sides;
    absl::StatusOr<RunProgram> p = LoadProgram(src);
    ASSERT_TRUE(p.ok()) << sides[0] << ": " << p.status();
    EXPECT_EQ(p->module_source, "HloModuleProto " + module);
    absl::StatusOr<RunResult> r = Execute(*p);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Elements<float>(r->outputs[0]), kTwiceX) << sides[0];
  }
  // --dtype INDEX counts the inputs across the sides: input 1 (y, s32[4])
  // saved as u32 in a file of its own is read as s32 by dtypes[1] (the
  // same item size: reinterpreted), not by dtypes[0].
  {
    const std::string y = dir.Write(
        "y_u32.npy", test::HandNpyHeader("{'descr': '<u4', 'fortran_order': False, "
                                         "'shape': (4,), }") +
                         std::string("\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0", 16));
    RunSource src;
    src.module = module;
    src.input_sides = {dir.File("u/value_input0.npy"), y};
    LoadOptions lo;
    lo.dtypes[1] = PrimitiveType::kS32;
    absl::StatusOr<RunProgram> p = LoadProgram(src, lo);
    ASSERT_TRUE(p.ok()) << p.status();
    // TYPE for all is for void files: a typed u32 keeps its type.
    LoadOptions all;
    all.dtype = PrimitiveType::kS32;
    p = LoadProgram(src, all);
    ASSERT_FALSE(p.ok());
    EXPECT_THAT(std::string(p.status().message()), HasSubstr("found U32[4]"));
  }
  // A side with too few tensors.
  RunSource one;
  one.module = module;
  one.input_sides = {dir.File("u/value_input0.npy")};
  absl::StatusOr<RunProgram> p = LoadProgram(one);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("expected 2 inputs for computation \"main\" (x, y), found 1"));
  // The classic form of the example, its `result` the recorded output.
  const std::string classic = dir.File("classic.pb");
  ASSERT_TRUE(ConvertSnapshot(kExample, classic, SnapshotType::kClassic).ok());
  RunRequest req;
  req.source.snapshot = classic;
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> rep = RunSnapshot(req);
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->pass());
  EXPECT_EQ(rep->module_source, "classic snapshot " + classic);
}

// --- Compare and three-way ---------------------------------------------------------

TEST(RunTest, CompareWithTheRecordedOutputs) {
  RunRequest req;
  req.source.snapshot = kExample;
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->compare.has_value());
  EXPECT_TRUE(r->pass());
  ASSERT_EQ(r->compare->tensors.size(), 1u);
  EXPECT_EQ(r->compare->tensors[0].verdict, TensorVerdict::kPass);
  EXPECT_EQ(r->compare->tensors[0].metrics.mismatches, 0u);
  EXPECT_EQ(*r->compare->tensors[0].metrics.max_abs_error, 0.0);
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(*r->outputs[0].stats.min, 1.0);
  EXPECT_EQ(*r->outputs[0].stats.max, 6.0);
  EXPECT_EQ(*r->outputs[0].stats.mean, 3.5);
  EXPECT_GT(r->peak_rss_bytes, 0u);
  const std::string text = RunReportText(*r);
  EXPECT_THAT(text, HasSubstr("ran example (decomposed snapshot "));
  EXPECT_THAT(text, HasSubstr("5 instructions"));
  EXPECT_THAT(text, HasSubstr("output 0: f32[2,3] min 1 max 6 mean 3.5"));
  {
    // A complex output's mean is (re,im), as stats prints it.
    RunReport c = *r;
    RunOutputInfo o;
    o.type = PrimitiveType::kC64;
    o.dims = {2};
    o.stats.mean = 0.5;
    o.stats.mean_im = -0.5;
    c.outputs = {o};
    EXPECT_THAT(RunReportText(c), HasSubstr("output 0: c64[2] mean (0.5,-0.5)\n"));
  }
  EXPECT_THAT(text, HasSubstr("PASS: 1 of 1 tensor pass"));
  nlohmann::json j = nlohmann::json::parse(RunReportJson(*r));
  EXPECT_EQ(j["module"], "example");
  EXPECT_EQ(j["numerics"], "xla");
  EXPECT_EQ(j["instructions"], 5);
  EXPECT_EQ(j["outputs"][0]["dtype"], "f32");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(j["outputs"][0]["stats"]["max"], 6.0);
  EXPECT_TRUE(j["compare"]["pass"].get<bool>());
  EXPECT_TRUE(j["pass"].get<bool>());
  bool multiply = false;
  for (const auto& o : j["opcodes"]) multiply |= o["opcode"] == "multiply" && o["count"] == 1;
  EXPECT_TRUE(multiply);
  EXPECT_GT(j["peak_rss_bytes"].get<uint64_t>(), 0u);
}

TEST(RunTest, PerturbedOutputFailsThatTensorOnly) {
  TempDir dir;
  // Output 1 recorded as [-1, 0, 2, 8]: element 2 is off by one.
  const std::string path =
      Pack(dir, "p.dhs", TwoOutputs(), {F32({2, 3}, kX), S32({4}, kY)},
           {F32({2, 3}, kTwiceX), S32({4}, {-1, 0, 2, 8})});
  RunRequest req;
  req.source.snapshot = path;
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pass());
  ASSERT_EQ(r->compare->tensors.size(), 2u);
  EXPECT_EQ(r->compare->tensors[0].verdict, TensorVerdict::kPass);
  EXPECT_EQ(r->compare->tensors[1].verdict, TensorVerdict::kFail);
  EXPECT_EQ(r->compare->tensors[1].metrics.mismatches, 1u);
  ASSERT_EQ(r->compare->tensors[1].metrics.first_mismatches.size(), 1u);
  EXPECT_EQ(r->compare->tensors[1].metrics.first_mismatches[0].index, 2u);
  EXPECT_EQ(r->compare->tensors[1].metrics.first_mismatches[0].expected.re, 1.0);  // the run
  EXPECT_EQ(r->compare->tensors[1].metrics.first_mismatches[0].actual.re, 2.0);    // recorded
  EXPECT_THAT(RunReportText(*r), HasSubstr("FAIL: 1 of 2 tensors pass"));
  // The same against a side: an unpack directory of the good outputs.
  const std::string good =
      Pack(dir, "g.dhs", TwoOutputs(), {F32({2, 3}, kX), S32({4}, kY)},
           {F32({2, 3}, kTwiceX), S32({4}, kYPlus1)});
  UnpackOptions uo;
  uo.output_prefix = dir.File("good") + "/";
  uo.dump_snapshot_outputs = true;
  ASSERT_TRUE(Unpack(good, uo).ok());
  req.check_side = dir.File("good");
  r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass());
  // An unreadable side fails before the run.
  req.check_side = dir.File("missing.npy");
  r = RunSnapshot(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("missing.npy"));
}

// x: bf16[64] -> x * x + x, rounded to bf16 after each op in xla numerics,
// kept in f32 in f32 numerics.
xla::HloModuleProto Bf16Module() {
  using namespace hlo;
  HloModuleBuilder mb("bf16");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::BF16, {64}), "x");
  c.Add(c.Multiply(x, x), x);
  return *mb.Build();
}

// bf16 bits of a float that bf16 holds exactly.
uint16_t Bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

TEST(RunTest, ThreeWay) {
  TempDir dir;
  // x_i = 1 + i/64: 6 fraction bits, exact in bf16 (7); x*x needs up to 12,
  // so the xla run rounds where the f32 baseline does not.
  eval::Array x = *eval::Array::Allocate(PrimitiveType::kBF16, {64});
  for (int i = 0; i < 64; ++i) x.mutable_data<uint16_t>()[i] = Bf16Bits(1.0f + i / 64.0f);
  RunSource src;
  src.module_proto = Bf16Module();
  src.input_values = std::vector<eval::Value>{x};
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  RunOptions xla_numerics;
  absl::StatusOr<RunResult> expected = Execute(*p, xla_numerics);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const eval::Array& e = expected->outputs[0].array();
  ASSERT_EQ(e.type(), PrimitiveType::kBF16);
  // The device's output as the CPU's: target error = reference error.
  const std::string same = Pack(dir, "same.dhs", Bf16Module(), {x}, {e});
  // A device 2 off everywhere: bf16 values 2 larger (exact: below 8 the
  // bf16 spacing is at most 1/32).
  eval::Array off = *eval::Array::Allocate(PrimitiveType::kBF16, {64});
  for (int i = 0; i < 64; ++i) {
    uint32_t u = static_cast<uint32_t>(e.data<uint16_t>()[i]) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    off.mutable_data<uint16_t>()[i] = Bf16Bits(f + 2.0f);
  }
  const std::string bad = Pack(dir, "bad.dhs", Bf16Module(), {x}, {off});
  RunRequest req;
  req.check = RunCheck::kThreeWay;
  req.source.snapshot = same;
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->three_way.has_value());
  ASSERT_TRUE(r->baseline.has_value());
  // The baseline ran in f32 numerics: a bf16 result kept in f32.
  EXPECT_EQ(r->baseline->numerics, eval::Numerics::kF32);
  EXPECT_EQ(r->baseline->outputs[0].array().type(), PrimitiveType::kF32);
  EXPECT_EQ(r->result.outputs[0].array().type(), PrimitiveType::kBF16);
  EXPECT_FALSE(r->baseline_is_run);
  EXPECT_GT(r->baseline->instructions, 0);
  EXPECT_TRUE(r->pass());
  // The rounding is real: the reference error is not all zero.
  EXPECT_FALSE(r->three_way->all.zero_reference_error);
  EXPECT_GT(r->three_way->all.reference.linf, 0.0);
  EXPECT_EQ(*r->three_way->all.sigma_ratio, 1.0);
  req.source.snapshot = bad;
  r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pass());
  EXPECT_TRUE(r->three_way->all.failures & kThreeWayLinf);
  nlohmann::json j = nlohmann::json::parse(RunReportJson(*r));
  EXPECT_EQ(j["three_way"]["pass"], false);
  EXPECT_EQ(j["baseline"]["numerics"], "f32");
}

// x: f32[64] -> (x * x + x) * (x - x * x): no bf16 or f16 anywhere.
xla::HloModuleProto F32Module() {
  using namespace hlo;
  HloModuleBuilder mb("f32");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {64}), "x");
  HloOp xx = c.Multiply(x, x);
  c.Multiply(c.Add(xx, x), c.Subtract(x, xx));
  return *mb.Build();
}

TEST(RunTest, ThreeWayOfAModuleWithoutBf16OrF16RunsItOnce) {
  TempDir dir;
  eval::Array x = *eval::Array::Allocate(PrimitiveType::kF32, {64});
  for (int i = 0; i < 64; ++i) x.mutable_data<float>()[i] = 0.37f * static_cast<float>(i) - 5.0f;
  RunSource src;
  src.module_proto = F32Module();
  src.input_values = std::vector<eval::Value>{x};
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  RunOptions o;
  EXPECT_TRUE(F32RunIsTheRun(*p->module, o));
  RunOptions neuron;
  neuron.numerics = eval::Numerics::kNeuron;
  EXPECT_FALSE(F32RunIsTheRun(*p->module, neuron));
  RunOptions own_calls;
  own_calls.custom_calls = &eval::BuiltinCustomCalls();
  EXPECT_FALSE(F32RunIsTheRun(*p->module, own_calls));
  RunSource bf16;
  bf16.module_proto = Bf16Module();
  bf16.input_values = std::vector<eval::Value>{*eval::Array::Allocate(PrimitiveType::kBF16, {64})};
  absl::StatusOr<RunProgram> b = LoadProgram(bf16);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(F32RunIsTheRun(*b->module, o));
  // A device off by a little everywhere.
  absl::StatusOr<RunResult> e = Execute(*p, o);
  ASSERT_TRUE(e.ok()) << e.status();
  eval::Array off = *eval::Array::Allocate(PrimitiveType::kF32, {64});
  for (int i = 0; i < 64; ++i) {
    off.mutable_data<float>()[i] = e->outputs[0].array().data<float>()[i] * 1.001f;
  }
  RunRequest req;
  req.check = RunCheck::kThreeWay;
  req.source.snapshot = Pack(dir, "off.dhs", F32Module(), {x}, {off});
  absl::StatusOr<RunReport> once = RunSnapshot(req);
  ASSERT_TRUE(once.ok()) << once.status();
  ASSERT_TRUE(once->baseline.has_value());
  EXPECT_TRUE(once->baseline_is_run);
  EXPECT_EQ(once->baseline->instructions, 0);
  EXPECT_EQ(once->baseline->numerics, eval::Numerics::kF32);
  EXPECT_THAT(RunReportText(*once), HasSubstr("baseline: the run itself"));
  EXPECT_EQ(nlohmann::json::parse(RunReportJson(*once))["baseline"]["is_run"], true);
  // The same check with the second evaluation forced (a registry of the
  // caller's, here the built-in one): the same three-way report.
  req.run.custom_calls = &eval::BuiltinCustomCalls();
  absl::StatusOr<RunReport> twice = RunSnapshot(req);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_FALSE(twice->baseline_is_run);
  EXPECT_GT(twice->baseline->instructions, 0);
  EXPECT_TRUE(once->three_way->all.zero_reference_error);
  EXPECT_FALSE(once->pass());
  EXPECT_EQ(ThreeWayReportJson(*once->three_way), ThreeWayReportJson(*twice->three_way));
}

// --- Substitutes, custom calls, dumps ----------------------------------------------

TEST(RunTest, SubstituteSuppliesAValue) {
  TempDir dir;
  RunSource src;
  src.snapshot = kExample;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  RunOptions o;
  o.substitutes["product"] = F32({2, 3}, {10, 20, 30, 40, 50, 60});
  absl::StatusOr<RunResult> r = Execute(*p, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Elements<float>(r->outputs[0]), (std::vector<float>{10, 20, 30, 40, 50, 60}));
  // From a file, through the request: the recorded output then differs.
  const std::string npy = dir.File("sub.npy");
  {
    AtomicFileSink f;
    ASSERT_TRUE(f.Open(npy).ok());
    std::string h = FormatNpyHeader(NpyHeader{"<f4", false, {2, 3}});
    std::vector<float> v = {1, 2, 3, 4, 5, 7};
    ASSERT_TRUE(f.Write(h));
    ASSERT_TRUE(f.Write(std::string_view(reinterpret_cast<const char*>(v.data()), 24)));
    ASSERT_TRUE(f.Commit().ok());
  }
  RunRequest req;
  req.source.snapshot = kExample;
  req.substitute_files = {{"product", npy}};
  req.check = RunCheck::kCompare;
  absl::StatusOr<RunReport> rep = RunSnapshot(req);
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_FALSE(rep->pass());
  EXPECT_EQ(rep->compare->tensors[0].metrics.mismatches, 1u);
  EXPECT_EQ(rep->compare->tensors[0].metrics.first_mismatches[0].index, 5u);
  // A substitute of the wrong shape names the instruction.
  o.substitutes["product"] = F32({6}, kTwiceX);
  r = Execute(*p, o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("product"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("substitute"));
}

// x: f32[4] -> AwsNeuronCustomNativeKernel(x) + 1 (an NKI kernel: cannot run).
xla::HloModuleProto KernelModule() {
  using namespace hlo;
  HloModuleBuilder mb("kernel");
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {4}), "x");
  HloOp k = c.CustomCall("AwsNeuronCustomNativeKernel", {x}, MakeArrayShape(xla::F32, {4}));
  c.Add(k, c.Broadcast(c.ConstantR0(xla::F32, 1), {4}, {}));
  return *mb.Build();
}

TEST(RunTest, AnOpThatCannotRunIsNamedAndNothingIsWritten) {
  TempDir dir;
  const std::string path = Pack(dir, "k.dhs", KernelModule(), {F32({4}, {1, 2, 3, 4})},
                                {F32({4}, {3, 5, 7, 9})});
  RunRequest req;
  req.source.snapshot = path;
  req.output.format = OutputFormat::kNpyFiles;
  req.output.prefix = dir.File("out") + "/";
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("AwsNeuronCustomNativeKernel"));
  EXPECT_FALSE(Exists(dir.File("out/snapshot_output0.npy")));
  // The kernel's value from the device (x * 2): the run goes on, and the
  // recorded x * 2 + 1 matches.
  const std::string name = [&] {
    RunSource s;
    s.snapshot = path;
    absl::StatusOr<RunProgram> p = LoadProgram(s);
    return p->module->entry()->root()->operand(0)->name();
  }();
  req.run.substitutes[name] = F32({4}, {2, 4, 6, 8});
  req.check = RunCheck::kCompare;
  r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass());
  EXPECT_TRUE(Exists(dir.File("out/snapshot_output0.npy")));
  // Or a registered target doing the same.
  req.run.substitutes.clear();
  eval::CustomCallRegistry reg = eval::BuiltinCustomCalls();
  reg.Register("AwsNeuronCustomNativeKernel",
               [](const eval::CustomCallContext&, std::span<const eval::Value> ops)
                   -> absl::StatusOr<eval::Value> {
                 eval::Array in = *ops[0].array().Contiguous();
                 eval::Array out = *eval::Array::Allocate(in.type(), in.dims());
                 for (int64_t i = 0; i < in.element_count(); ++i) {
                   out.mutable_data<float>()[i] = 2 * in.data<float>()[i];
                 }
                 return eval::Value(out);
               });
  req.run.custom_calls = &reg;
  r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->pass());
}

TEST(RunTest, DumpWritesEveryValueAndAnIndex) {
  TempDir dir;
  RunSource src;
  src.snapshot = kExample;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  RunOptions o;
  o.dump_dir = dir.File("dump");
  absl::StatusOr<RunResult> r = Execute(*p, o);
  ASSERT_TRUE(r.ok()) << r.status();
  // The five instructions evaluated (not y, which nothing uses); the
  // tuple's one element as result.0.npy.
  EXPECT_EQ(r->dumped_files, 5);
  for (const char* f : {"x", "two", "twos", "product", "result.0"}) {
    EXPECT_TRUE(Exists(dir.File(std::string("dump/main/") + f + ".npy"))) << f;
  }
  EXPECT_FALSE(Exists(dir.File("dump/main/y.npy")));
  absl::StatusOr<eval::Array> product = ReadNpyArray(dir.File("dump/main/product.npy"));
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ(Elements<float>(*product), kTwiceX);
  absl::StatusOr<eval::Array> twos = ReadNpyArray(dir.File("dump/main/twos.npy"));
  ASSERT_TRUE(twos.ok());
  EXPECT_EQ(Elements<float>(*twos), std::vector<float>(6, 2.0f));
  nlohmann::json index = nlohmann::json::parse(ReadFile(dir.File("dump/index.json")));
  ASSERT_EQ(index["instructions"].size(), 5u);
  nlohmann::json prod;
  for (const auto& e : index["instructions"]) {
    if (e["name"] == "product") prod = e;
  }
  EXPECT_EQ(prod["computation"], "main");
  EXPECT_EQ(prod["opcode"], "multiply");
  EXPECT_EQ(prod["shape"], "F32[2,3]");
  EXPECT_EQ(prod["op_name"], "example/twice");
  EXPECT_EQ(prod["source_file"], "examples/make_example.py");
  EXPECT_EQ(prod["source_line"], 112);
  EXPECT_EQ(prod["files"], nlohmann::json({"main/product.npy"}));
  EXPECT_EQ(prod["evaluations"], 1);

  // A filter on op_name, then on names.
  o.dump_dir = dir.File("dump2");
  o.dump_filter = "twice";
  r = Execute(*p, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dumped_files, 1);
  EXPECT_TRUE(Exists(dir.File("dump2/main/product.npy")));
  EXPECT_FALSE(Exists(dir.File("dump2/main/x.npy")));
  o.dump_dir = dir.File("dump3");
  o.dump_filter = "^tw";
  r = Execute(*p, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dumped_files, 2);
  index = nlohmann::json::parse(ReadFile(dir.File("dump3/index.json")));
  ASSERT_EQ(index["instructions"].size(), 2u);
  EXPECT_EQ(index["instructions"][0]["name"], "two");
  EXPECT_EQ(index["instructions"][1]["name"], "twos");
  o.dump_filter = "(";
  r = Execute(*p, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--dump-filter"));
}

TEST(RunTest, DumpOfALoopBodyKeepsTheFirstValueAndCountsEvaluations) {
  using namespace hlo;
  // while (i < 3) i = i + 1, from i = 0: the body runs 3 times.
  HloModuleBuilder mb("loop");
  HloComputationBuilder& cond = mb.AddComputation("cond");
  cond.Compare(cond.Parameter(0, MakeScalarShape(xla::S32), "ci"),
               cond.ConstantR0Int(xla::S32, 3), ComparisonDirection::kLt);
  HloComputationBuilder& body = mb.AddComputation("body");
  const std::string next_name =
      body.Add(body.Parameter(0, MakeScalarShape(xla::S32), "i"), body.ConstantR0Int(xla::S32, 1))
          .name();
  const std::string body_name = body.name();
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  c.While(cond, body, c.Parameter(0, MakeScalarShape(xla::S32), "start"));
  RunSource src;
  src.module_proto = *mb.Build();
  src.input_values = std::vector<eval::Value>{S32({}, {0})};
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok()) << p.status();
  TempDir dir;
  RunOptions o;
  o.dump_dir = dir.File("d");
  absl::StatusOr<RunResult> r = Execute(*p, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Elements<int32_t>(r->outputs[0]), std::vector<int32_t>{3});
  nlohmann::json index = nlohmann::json::parse(ReadFile(dir.File("d/index.json")));
  nlohmann::json next;
  for (const auto& e : index["instructions"]) {
    if (e["name"] == next_name) next = e;
  }
  EXPECT_EQ(next["computation"], body_name);
  EXPECT_EQ(next["evaluations"], 3);
  absl::StatusOr<eval::Array> first =
      ReadNpyArray(dir.File("d/" + body_name + "/" + next_name + ".npy"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Elements<int32_t>(*first), std::vector<int32_t>{1});
}

// --- Outputs --------------------------------------------------------------------------

TEST(RunTest, OutputsAreWhatUnpackWritesOfTheRecordedOnes) {
  TempDir dir;
  RunRequest req;
  req.source.snapshot = kExample;
  req.output.format = OutputFormat::kNpyFiles;
  req.output.prefix = dir.File("run") + "/";
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_EQ(r->files[0].path, dir.File("run/snapshot_output0.npy"));
  // 128-byte header (padded to 64) + 24 bytes.
  EXPECT_EQ(r->files[0].bytes, 152u);
  UnpackOptions uo;
  uo.output_prefix = dir.File("unpacked") + "/";
  uo.dump_snapshot_outputs = true;
  ASSERT_TRUE(Unpack(kExample, uo).ok());
  EXPECT_EQ(ReadFile(dir.File("run/snapshot_output0.npy")),
            ReadFile(dir.File("unpacked/snapshot_output0.npy")));
  // The .npz: the same entry.
  req.output.format = OutputFormat::kNpz;
  req.output.npz_path = dir.File("run.npz");
  r = RunSnapshot(req);
  ASSERT_TRUE(r.ok()) << r.status();
  TensorSetOptions so;
  absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(dir.File("run.npz"), so);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ((*set)->size(), 1u);
  absl::StatusOr<std::vector<eval::Array>> a = ReadTensorSetArrays(**set);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(Elements<float>((*a)[0]), kTwiceX);
}

TEST(RunTest, Bf16OutputsGetASidecar) {
  TempDir dir;
  eval::Array x = *eval::Array::Allocate(PrimitiveType::kBF16, {64});
  for (int i = 0; i < 64; ++i) x.mutable_data<uint16_t>()[i] = Bf16Bits(1.0f);
  // 1 * 1 + 1 = 2 everywhere.
  std::vector<eval::Value> outs = {x};
  RunSource src;
  src.module_proto = Bf16Module();
  src.input_values = outs;
  absl::StatusOr<RunProgram> p = LoadProgram(src);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<RunResult> r = Execute(*p);
  ASSERT_TRUE(r.ok());
  OutputOptions o;
  o.format = OutputFormat::kNpyFiles;
  o.prefix = dir.File("b_");
  std::vector<WrittenFile> files;
  ASSERT_TRUE(WriteOutputs(r->outputs, o, &files).ok());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(files[1].sidecar);
  EXPECT_EQ(ReadFile(dir.File("b_snapshot_output0.npy.meta")), "{\"ml_dtype\": \"bfloat16\"}");
  absl::StatusOr<eval::Array> back = ReadNpyArray(dir.File("b_snapshot_output0.npy"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->type(), PrimitiveType::kBF16);
  EXPECT_EQ(Elements<uint16_t>(*back), std::vector<uint16_t>(64, Bf16Bits(2.0f)));
}

TEST(RunTest, OutputsAreAllOrNothing) {
  TempDir dir;
  const std::string path =
      Pack(dir, "two.dhs", TwoOutputs(), {F32({2, 3}, kX), S32({4}, kY)}, {});
  // A directory where output 1 would go: output 0 must not appear either.
  ASSERT_EQ(::mkdir(dir.File("out").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(dir.File("out/snapshot_output1.npy").c_str(), 0755), 0);
  RunRequest req;
  req.source.snapshot = path;
  req.output.format = OutputFormat::kNpyFiles;
  req.output.prefix = dir.File("out") + "/";
  absl::StatusOr<RunReport> r = RunSnapshot(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("snapshot_output1.npy"));
  EXPECT_FALSE(Exists(dir.File("out/snapshot_output0.npy")));
  // No temp file is left behind either: the directory is all there is.
  struct stat sb;
  ASSERT_EQ(::stat(dir.File("out/snapshot_output1.npy").c_str(), &sb), 0);
  EXPECT_TRUE(S_ISDIR(sb.st_mode));
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("out"))) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  // An archive in a directory that cannot be made: no archive.
  dir.Write("file", "x");
  req.output.format = OutputFormat::kNpz;
  req.output.npz_path = dir.File("file/o.npz");
  r = RunSnapshot(req);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(Exists(dir.File("file/o.npz")));
}

TEST(RunTest, ValueTensorSetStreamsInWholeElements) {
  std::vector<eval::Value> v = {F32({2, 3}, kTwiceX), eval::Value::Tuple({})};
  std::unique_ptr<TensorSet> s = ValueTensorSet(v, "run");
  ASSERT_EQ(s->size(), 2u);
  absl::StatusOr<TensorInfo> t = s->Describe(0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->label, "output 0 of run");
  std::string bytes;
  ASSERT_TRUE(s->Stream(0, [&](std::string_view c) {
                 bytes.append(c);
                 return absl::OkStatus();
               }).ok());
  EXPECT_EQ(bytes.size(), 24u);
  EXPECT_FALSE(s->Describe(1).ok());
}

TEST(RunTest, ParseSubstitute) {
  auto p = ParseSubstitute("add.3=x.npy");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first, "add.3");
  EXPECT_EQ(p->second, "x.npy");
  EXPECT_FALSE(ParseSubstitute("add.3").ok());
  EXPECT_FALSE(ParseSubstitute("=x.npy").ok());
  EXPECT_FALSE(ParseSubstitute("a=").ok());
}

}  // namespace
}  // namespace decomposed::run
