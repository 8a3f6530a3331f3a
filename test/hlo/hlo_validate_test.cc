// Module validation (hlo/validate.h): the malformed-module corpus
// (test/hlo/corpus/, one defect per file, the exact message in MANIFEST),
// the options, bounded work on large call graphs, and the real modules of
// /work/shared/real (when present), which must validate.
#include "decomposed/hlo/validate.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "absl/strings/match.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace decomposed::hlo {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const fs::path kCorpus = fs::path(DECOMPOSED_SOURCE_DIR) / "test/hlo/corpus";

// HloModule::Create's message, else ValidateModule's, else "OK".
std::string Verdict(const xla::HloModuleProto& proto) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(proto);
  if (!m.ok()) return std::string(m.status().message());
  absl::Status s = ValidateModule(**m);
  if (s.ok()) return "OK";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // ValidateModuleAll finds the same problem first.
  std::vector<absl::Status> all = ValidateModuleAll(**m);
  EXPECT_FALSE(all.empty());
  if (!all.empty()) {
    EXPECT_EQ(all.front(), s);
  }
  return std::string(s.message());
}

TEST(HloValidateCorpusTest, EveryFileGivesItsMessage) {
  std::ifstream manifest(kCorpus / "MANIFEST");
  ASSERT_TRUE(manifest.good()) << kCorpus;
  std::string line;
  int files = 0;
  std::vector<std::string> listed;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string file = line.substr(0, tab);
    const std::string want = line.substr(tab + 1);
    listed.push_back(file);
    xla::HloModuleProto proto;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        ReadFile(kCorpus / file), &proto))
        << file;
    EXPECT_EQ(Verdict(proto), want) << file;
    ++files;
  }
  EXPECT_GE(files, 40);
  // Every corpus file is in the manifest.
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (e.path().extension() != ".textproto") continue;
    EXPECT_NE(std::find(listed.begin(), listed.end(), e.path().filename().string()),
              listed.end())
        << e.path() << " is not in MANIFEST";
  }
}

xla::HloModuleProto CorpusModule(const std::string& name) {
  xla::HloModuleProto proto;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      ReadFile(kCorpus / (name + ".textproto")), &proto))
      << name;
  return proto;
}

TEST(HloValidateTest, AllReportsEveryProblem) {
  // A parameter number twice, an add of f32 and bf16 with a wrong shape, and
  // the tuple of it, whose shape no longer matches.
  HloModuleBuilder mb("m");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  HloOp p = main.Parameter(0, MakeArrayShape(xla::F32, {2}), "p");
  HloOp q = main.Parameter(1, MakeArrayShape(xla::F32, {2}), "q");
  HloOp a = main.Add(p, q);
  HloOp h = main.Convert(p, xla::BF16);
  HloOp b = main.Tuple({a, h});
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  ASSERT_TRUE(proto.ok());
  xla::HloComputationProto* c = proto->mutable_computations(0);
  c->mutable_instructions(1)->set_parameter_number(0);              // q
  *c->mutable_instructions(2)->mutable_shape() = MakeArrayShape(xla::F32, {3});
  c->mutable_instructions(2)->set_operand_ids(1, h.id());           // add(p, h)
  // The add now uses h, which comes later: move h before it.
  std::swap(*c->mutable_instructions(2), *c->mutable_instructions(3));
  c->clear_program_shape();
  proto->clear_host_program_shape();
  (void)b;
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<absl::Status> all = ValidateModuleAll(**m);
  std::vector<std::string> got;
  for (const absl::Status& s : all) got.emplace_back(s.message());
  const std::string tuple =
      "computation \"main\", instruction \"tuple.6\" (id 6): expected shape "
      "(f32[3], bf16[2]), found (f32[2], bf16[2])";
  const std::vector<std::string> want = {
      "computation \"main\", instruction \"q\" (id 3): expected each parameter "
      "number once, found 0 also on \"p\"",
      "computation \"main\", instruction \"add.4\" (id 4): add: expected "
      "floating-point operands of one precision, found f32 and bf16",
      tuple,
  };
  EXPECT_EQ(got, want);
  // With mixed precision allowed, the add's wrong dimensions show.
  ValidateOptions mixed;
  mixed.allow_mixed_precision = true;
  all = ValidateModuleAll(**m, mixed);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].message(),
            "computation \"main\", instruction \"add.4\" (id 4): expected shape "
            "f32[2], found f32[3]");
  EXPECT_EQ(all[2].message(), tuple);
  // Without shape checks only the numbering is left.
  ValidateOptions structure;
  structure.check_shapes = false;
  structure.allow_mixed_precision = true;
  all = ValidateModuleAll(**m, structure);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].message(), want[0]);
  ValidateOptions one;
  one.max_problems = 1;
  EXPECT_EQ(ValidateModuleAll(**m, one).size(), 1u);
}

TEST(HloValidateTest, OptionsForUnknownOpcodes) {
  xla::HloModuleProto proto = CorpusModule("unknown_opcode");
  ValidateOptions allow;
  allow.allow_unknown_opcodes = true;
  EXPECT_TRUE(ValidateModuleProto(proto, allow).ok())
      << ValidateModuleProto(proto, allow);
  EXPECT_FALSE(ValidateModuleProto(proto).ok());
}

TEST(HloValidateTest, ShapeChecksCanBeTurnedOff) {
  for (const char* name : {"shape_add", "shape_dot", "shape_tuple",
                           "shape_concatenate"}) {
    xla::HloModuleProto proto = CorpusModule(name);
    ValidateOptions off;
    off.check_shapes = false;
    EXPECT_TRUE(ValidateModuleProto(proto, off).ok()) << name;
    EXPECT_FALSE(ValidateModuleProto(proto).ok()) << name;
  }
}

// A chain of computations, each calling the next (and a chain of control
// edges): walked without recursion.
TEST(HloValidateTest, LongChainsAreWalkedIteratively) {
  constexpr int kDepth = 20000;
  xla::HloModuleProto proto;
  proto.set_name("chain");
  const xla::ShapeProto f = MakeScalarShape(xla::F32);
  for (int c = 0; c < kDepth; ++c) {
    xla::HloComputationProto* comp = proto.add_computations();
    comp->set_name(absl::StrCat("c", c));
    comp->set_id(c + 1);
    xla::HloInstructionProto* p = comp->add_instructions();
    p->set_name(absl::StrCat("p", c));
    p->set_opcode("parameter");
    p->set_id(1);
    *p->mutable_shape() = f;
    comp->set_root_id(1);
    if (c > 0) {
      xla::HloInstructionProto* call = comp->add_instructions();
      call->set_name(absl::StrCat("call", c));
      call->set_opcode("call");
      call->set_id(2);
      call->add_operand_ids(1);
      call->add_called_computation_ids(c);  // the previous computation
      *call->mutable_shape() = f;
      comp->set_root_id(2);
    }
  }
  proto.set_entry_computation_id(kDepth);
  EXPECT_TRUE(ValidateModuleProto(proto).ok()) << ValidateModuleProto(proto);
  // Close the loop: the first calls the last.
  xla::HloComputationProto* first = proto.mutable_computations(0);
  xla::HloInstructionProto* call = first->add_instructions();
  call->set_name("back");
  call->set_opcode("call");
  call->set_id(2);
  call->add_operand_ids(1);
  call->add_called_computation_ids(kDepth);
  *call->mutable_shape() = f;
  absl::Status s = ValidateModuleProto(proto);
  // The cycle closes at c1's call; its middle is elided.
  EXPECT_EQ(s.message(),
            "computation \"c1\", instruction \"call1\" (id 2): expected no "
            "recursion, found computation \"c0\" calling itself: \"c0\" -> "
            "\"c19999\" -> \"c19998\" -> \"c19997\" -> \"c19996\" -> \"c19995\" -> "
            "\"c19994\" -> \"c19993\" -> ... (19985 more) -> \"c7\" -> \"c6\" -> "
            "\"c5\" -> \"c4\" -> \"c3\" -> \"c2\" -> \"c1\" -> \"c0\"");

  // Control edges: instruction k runs after k + 1, and the first after the
  // last: one long cycle.
  HloModuleBuilder mb("control");
  HloComputationBuilder& main = mb.AddEntryComputation("main");
  std::vector<HloOp> ops = {main.Parameter(0, f, "p")};
  for (int k = 0; k < kDepth; ++k) ops.push_back(main.Negate(ops.back()));
  absl::StatusOr<xla::HloModuleProto> m = mb.Build();
  ASSERT_TRUE(m.ok());
  m->mutable_computations(0)->mutable_instructions(0)->add_control_predecessor_ids(
      ops.back().id());
  s = ValidateModuleProto(*m);
  EXPECT_TRUE(absl::StartsWith(
      s.message(),
      "computation \"main\": expected no cycle through control predecessors, "
      "found \"p\" -> \"negate.3\" -> "))
      << s.message().substr(0, 200);
}

// --- Real modules ------------------------------------------------------------------

const fs::path kReal = "/work/shared/real";

// The module of a binary HloProto or HloModuleProto file, or nullopt.
std::optional<xla::HloModuleProto> LoadModule(const fs::path& p) {
  const std::string bytes = ReadFile(p);
  // A module parsed as the other message logs protobuf's UTF-8 complaint.
  google::protobuf::LogSilencer quiet;
  xla::HloProto hp;
  if (hp.ParseFromString(bytes) && hp.hlo_module().computations_size() > 0) {
    return hp.hlo_module();
  }
  xla::HloModuleProto m;
  if (m.ParseFromString(bytes) && m.computations_size() > 0) return m;
  return std::nullopt;
}

TEST(HloValidateRealTest, RealModulesValidate) {
  if (!fs::exists(kReal)) GTEST_SKIP() << kReal << " is absent";
  // neuronx-distributed's unit-test dummy calls a bf16[8,4096,2,448]
  // computation with an f32[] operand inside its all-reduce reducer: XLA's
  // verifier (HandleCall) refuses that too.
  const std::map<std::string, std::string> known = {
      {"dummy_hlo_nki_kernel.txt.hlo",
       "computation \"AddComputation.14\", instruction \"call.0\" (id 6): "
       "call: expected operand 0 of parameter 0's shape bf16[8,4096,2,448], "
       "found f32[]"}};
  int validated = 0;
  for (const auto& e : fs::recursive_directory_iterator(kReal)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const bool binary = absl::EndsWith(name, ".pb") || absl::EndsWith(name, ".txt.hlo");
    if (!binary) continue;
    std::optional<xla::HloModuleProto> proto = LoadModule(e.path());
    if (!proto.has_value()) continue;  // a snapshot or literal without a module
    absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(*proto);
    ASSERT_TRUE(m.ok()) << e.path() << ": " << m.status();
    std::vector<absl::Status> all = ValidateModuleAll(**m);
    auto it = known.find(name);
    if (it != known.end()) {
      ASSERT_EQ(all.size(), 1u) << e.path();
      EXPECT_EQ(all[0].message(), it->second);
      continue;
    }
    EXPECT_TRUE(all.empty()) << e.path() << ": " << all.size()
                             << " problems, first: " << all.front().message();
    ++validated;
  }
  // The spu, xla-rs, TraceLens, iree, ROCm and derived modules.
  EXPECT_GE(validated, 20);
}

}  // namespace
}  // namespace decomposed::hlo
