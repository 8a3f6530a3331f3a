// ParseHloText over the HLO text dumps of other projects' tools (Llama 3,
// Mixtral, Gemma, DeepSeek-V2, T5, ResNet, torch-neuronx, torch-xla, ...),
// each result validated with ValidateModuleProto. The files live outside
// the repository, in shared/real/ beside the checkout (SOURCES.json lists
// them and their kinds); the test is skipped when they are absent. They are
// read, never copied.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "hlo_parse_both.h"
#include "decomposed/hlo/tensors_dump.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/text.h"
#include "decomposed/hlo/validate.h"
#include "hlo_compare_util.h"

namespace decomposed::hlo {
namespace {

namespace fs = std::filesystem;

// shared/real beside the checkout: <source>/../shared/real for the main
// tree, <source>/../../shared/real for a worktree under wt/.
fs::path RealDir() {
  if (const char* env = std::getenv("DECOMPOSED_REAL_DIR")) return env;
  const fs::path source = DECOMPOSED_SOURCE_DIR;
  for (const fs::path& p : {source / ".." / "shared" / "real",
                            source / ".." / ".." / "shared" / "real"}) {
    if (fs::exists(p / "SOURCES.json")) return p;
  }
  return source / ".." / "shared" / "real";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The HLO text files SOURCES.json lists, by path under the real directory.
std::vector<std::string> HloTextFiles(const fs::path& dir) {
  std::vector<std::string> out;
  nlohmann::json sources = nlohmann::json::parse(ReadFile(dir / "SOURCES.json"));
  for (const auto& s : sources) {
    const std::string kind = s.value("kind", "");
    if (!absl::StartsWith(kind, "HLO text")) continue;
    std::string stored = s.value("stored_at", "");
    const std::string prefix = "shared/real/";
    if (absl::StartsWith(stored, prefix)) stored = stored.substr(prefix.size());
    out.push_back(stored);
  }
  return out;
}

// torch-xla's XLA_SAVE_TENSORS_FILE dump holds many modules
// (hlo/tensors_dump.h); any other text is one.
std::vector<std::string> ModuleTexts(const std::string& text) {
  if (!LooksLikeTensorsDump(text)) return {text};
  absl::StatusOr<TensorsDump> d = SplitTensorsDump(text);
  EXPECT_TRUE(d.ok()) << d.status();
  std::vector<std::string> out;
  if (d.ok()) {
    for (const TensorsDumpGraph& g : d->graphs) out.emplace_back(g.text);
  }
  return out;
}

TEST(HloParseRealTest, EveryRealHloTextParsesAndValidates) {
  const fs::path dir = RealDir();
  if (!fs::exists(dir / "SOURCES.json")) {
    GTEST_SKIP() << "no shared/real/SOURCES.json beside the checkout (looked "
                 << "at " << dir << "; DECOMPOSED_REAL_DIR overrides)";
  }
  // Modules XLA's own verifier rejects too (docs/hlo.md §3 says why): the
  // neuronx-distributed unit-test dummy calls a bf16[8,4096,2,448]
  // computation with an f32[] operand (HandleCall); the GraphHelper Llama 2
  // dump, from a modified torch-xla, gives a reduce-scatter a scalar
  // operand to scatter along dimension 0 (InferReduceScatterShape).
  const std::map<std::string, std::string> known_invalid = {
      {"aws-neuron+neuronx-distributed/test/unit_test/test_data/"
       "dummy_hlo_nki_kernel.txt",
       "computation \"AddComputation.14\", instruction \"call.1\" (id 9): "
       "call: expected operand 0 of parameter 0's shape bf16[8,4096,2,448], "
       "found f32[]"},
      {"kahfizulkifli+GraphHelper/src/HLO/pbtxt/llama2/"
       "llama2_dp=1_tp=4_pp=2.js.hlo",
       "computation \"SyncTensorsGraph.1470\", instruction "
       "\"reduce-scatter.286\" (id 167): reduce-scatter: expected a dimension "
       "in [0, 0) for bf16[], found 0"}};
  int files = 0, modules = 0;
  for (const std::string& rel : HloTextFiles(dir)) {
    const std::string text = ReadFile(dir / rel);
    const std::vector<std::string> parts = ModuleTexts(text);
    if (LooksLikeTensorsDump(text)) {
      EXPECT_EQ(parts.size(), 82u) << rel;
    }
    ++files;
    for (size_t i = 0; i < parts.size(); ++i) {
      absl::StatusOr<ParsedHloText> t = ParseBothWays(parts[i]);
      ASSERT_TRUE(t.ok()) << rel << " (module " << i << "): "
                          << t.status().message().substr(0, 300);
      ValidateOptions options;
      absl::Status v = ValidateModuleProto(t->module, options);
      auto known = known_invalid.find(rel);
      if (known != known_invalid.end()) {
        EXPECT_EQ(v.message(), known->second) << rel;
      } else {
        EXPECT_TRUE(v.ok()) << rel << " (module " << i << "): "
                            << v.message().substr(0, 300);
      }
      ++modules;
    }
  }
  EXPECT_EQ(files, 63);
  EXPECT_GE(modules, 62 + 82);  // 62 files of one module, a dump of 82
}

}  // namespace
}  // namespace decomposed::hlo

namespace decomposed::hlo {
namespace {

// What XLA's builders write that the text does not carry: all-false
// is_dynamic_dimension lists, a tail padding alignment of 1, parameter
// names in program shapes (XlaBuilder's, before names are made unique),
// group counts of 1 and DEFAULT precisions on custom calls.
void Normalize(google::protobuf::Message* m) {
  const auto* d = m->GetDescriptor();
  const auto* r = m->GetReflection();
  if (d == xla::ShapeProto::descriptor()) {
    auto* s = static_cast<xla::ShapeProto*>(m);
    bool any = false;
    for (bool b : s->is_dynamic_dimension()) any = any || b;
    if (!any) s->clear_is_dynamic_dimension();
    if (s->has_layout() && s->layout().tail_padding_alignment_in_elements() == 1) {
      s->mutable_layout()->clear_tail_padding_alignment_in_elements();
    }
    // An array without a layout gets the default one, as XLA's loader
    // and parser give it.
    if (s->element_type() != xla::TUPLE && s->element_type() != xla::TOKEN &&
        s->layout().minor_to_major_size() == 0) {
      for (int k = s->dimensions_size(); k-- > 0;) {
        s->mutable_layout()->add_minor_to_major(k);
      }
    }
  }
  if (d == xla::ProgramShapeProto::descriptor()) {
    static_cast<xla::ProgramShapeProto*>(m)->clear_parameter_names();
  }
  if (d == xla::HloInstructionProto::descriptor()) {
    auto* i = static_cast<xla::HloInstructionProto*>(m);
    // torch-xla writes explicit replica groups in collective_device_list,
    // this library (as XLA's loader reads them) in replica_groups.
    if (i->collective_device_list().replica_groups_size() > 0) {
      *i->mutable_replica_groups() =
          i->collective_device_list().replica_groups();
      i->clear_collective_device_list();
    }
    if (i->opcode() == "custom-call") {
      if (i->feature_group_count() == 1) i->clear_feature_group_count();
      if (i->batch_group_count() == 1) i->clear_batch_group_count();
      bool all_default = i->precision_config().algorithm() == 0;
      for (int p : i->precision_config().operand_precision()) {
        all_default = all_default && p == 0;
      }
      if (all_default) i->clear_precision_config();
    }
  }
  for (int k = 0; k < d->field_count(); ++k) {
    const auto* f = d->field(k);
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int j = 0; j < r->FieldSize(*m, f); ++j) {
        Normalize(r->MutableRepeatedMessage(m, f, j));
      }
    } else if (r->HasField(*m, f)) {
      Normalize(r->MutableMessage(m, f));
    }
  }
}

// Text dumps whose HloModuleProto the same tool wrote beside them: the
// parsed text must be that proto, but for what the text does not print.
TEST(HloParseRealTest, TextTwinsOfBinaryProtosAgree) {
  const fs::path dir = RealDir();
  if (!fs::exists(dir / "SOURCES.json")) GTEST_SKIP() << "no " << dir;
  // fn_hlo.txt was printed without metadata.
  const std::pair<std::string, std::string> twins[] = {
      {"LaurentMazare+xla-rs/xla-nn/examples/fn_hlo.txt",
       "LaurentMazare+xla-rs/xla-nn/examples/fn_hlo.pb"},
      {"iree-org+iree/compiler/bindings/python/test/tools/testdata/xla_sample.hlo",
       "iree-org+iree/compiler/bindings/python/test/tools/testdata/xla_sample.pb"},
      {"aws-neuron+neuronx-distributed/test/unit_test/test_data/dummy_hlo_nki_kernel.txt",
       "aws-neuron+neuronx-distributed/test/unit_test/test_data/dummy_hlo_nki_kernel.txt.hlo"},
      {"aws-neuron+neuronx-distributed/test/unit_test/test_data/dummy_hlo_no_kernel_calls.txt",
       "aws-neuron+neuronx-distributed/test/unit_test/test_data/dummy_hlo_no_kernel_calls.txt.hlo"},
  };
  for (const auto& [text_path, proto_path] : twins) {
    absl::StatusOr<ParsedHloText> t = ParseBothWays(ReadFile(dir / text_path));
    ASSERT_TRUE(t.ok()) << text_path << ": " << t.status();
    xla::HloModuleProto proto;
    ASSERT_TRUE(proto.ParseFromString(ReadFile(dir / proto_path))) << proto_path;
    Normalize(&t->module);
    Normalize(&proto);
    testing::DiffOptions o;
    o.equivalent = true;
    if (absl::EndsWith(text_path, "fn_hlo.txt")) {
      o.ignored_instruction_fields = {"metadata"};
    }
    // The NKI dummy's proto names two instructions call.606 (in two
    // computations); its text does too, and the parser renames the second
    // as XLA's does.
    const std::string expected =
        absl::StrContains(text_path, "nki_kernel")
            ? "computation AddComputation.14, instruction call.1 missing from "
              "the second"
            : "";
    EXPECT_EQ(testing::DiffModules(t->module, proto, o), expected) << text_path;
  }
}

}  // namespace
}  // namespace decomposed::hlo

namespace decomposed::hlo {
namespace {

// print(parse(t)) == t for the real texts XLA printed: each single-module
// text against the three styles, with and without large constants, one of
// which must give it back byte for byte (trailing newlines aside). The
// rest are texts people wrote or tools other than XLA's printer touched
// (comments, no header, hand-made spacing, a `} // name` comment after a
// computation XLA's rule would not give one), and modules whose names do
// not carry their ids. The count may only grow.
TEST(HloParseRealTest, XlasTextsPrintBackByteForByte) {
  const fs::path dir = RealDir();
  if (!fs::exists(dir / "SOURCES.json")) GTEST_SKIP() << "no " << dir;
  int texts = 0, same = 0;
  std::vector<std::string> differ;
  for (const std::string& rel : HloTextFiles(dir)) {
    const std::string text = ReadFile(dir / rel);
    if (LooksLikeTensorsDump(text)) continue;
    ++texts;
    absl::StatusOr<ParsedHloText> t = ParseBothWays(text);
    ASSERT_TRUE(t.ok()) << rel;
    absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
    ASSERT_TRUE(m.ok()) << rel << ": " << m.status();
    auto trimmed = [](std::string_view s) {
      while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
      return s;
    };
    bool found = false;
    for (HloTextStyle style : {HloTextStyle::kLong, HloTextStyle::kModern, HloTextStyle::kShort}) {
      for (bool large : {false, true}) {
        HloPrintOptions options;
        options.style = style;
        options.print_large_constants = large;
        // XLA's own dumps: the short style with metadata.
        if (style == HloTextStyle::kShort && absl::StrContains(text, "metadata={")) {
          options.print_metadata = true;
        }
        const std::string printed = PrintHloModuleToString(**m, options, &t->extras);
        found = found || trimmed(printed) == trimmed(text);
      }
    }
    if (found) {
      ++same;
    } else {
      differ.push_back(rel);
    }
  }
  EXPECT_EQ(texts, 62);
  std::cout << same << " of " << texts << " print back byte for byte\n";
  EXPECT_GE(same, 38) << "differ: " << absl::StrJoin(differ, "\n");
}

// Every real text parsed, printed in each style and parsed again: the same
// module (the short style drops metadata, the stack frame index with it,
// and control predecessors). JAX's texts here carry stack frame indexes
// and stack_frame_ids, which survive in long and modern.
TEST(HloParseRealTest, RealTextsSurvivePrintAndParse) {
  const fs::path dir = RealDir();
  if (!fs::exists(dir / "SOURCES.json")) GTEST_SKIP() << "no " << dir;
  int modules = 0;
  for (const std::string& rel : HloTextFiles(dir)) {
    const std::string text = ReadFile(dir / rel);
    const std::vector<std::string> parts = ModuleTexts(text);
    for (size_t k = 0; k < parts.size(); ++k) {
      absl::StatusOr<ParsedHloText> t = ParseBothWays(parts[k]);
      ASSERT_TRUE(t.ok()) << rel;
      absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(t->module);
      ASSERT_TRUE(m.ok()) << rel << ": " << m.status();
      for (HloTextStyle style : {HloTextStyle::kLong, HloTextStyle::kModern,
                                 HloTextStyle::kShort}) {
        HloPrintOptions options;
        options.style = style;
        options.print_large_constants = true;
        const std::string printed = PrintHloModuleToString(**m, options, &t->extras);
        ASSERT_FALSE(printed.empty()) << rel;
        absl::StatusOr<ParsedHloText> back = ParseBothWays(printed);
        ASSERT_TRUE(back.ok()) << rel << " (style " << static_cast<int>(style)
                               << "): " << back.status().message().substr(0, 300);
        testing::DiffOptions diff;
        if (style == HloTextStyle::kShort) {
          diff.ignored_instruction_fields = {"metadata"};
          diff.ignore_control_predecessors = true;
        }
        xla::HloModuleProto want = t->module;
        if (style == HloTextStyle::kShort) want.clear_stack_frame_index();
        const std::string d = testing::DiffModules(want, back->module, diff);
        EXPECT_EQ(d.substr(0, 2000), "") << rel << " (style " << static_cast<int>(style) << ")";
        EXPECT_EQ(back->extras.config_attributes, t->extras.config_attributes) << rel;
        EXPECT_EQ(back->extras.has_entry_computation_layout,
                  t->extras.has_entry_computation_layout)
            << rel;
      }
      ++modules;
    }
  }
  EXPECT_GE(modules, 62 + 82);  // 62 files of one module, a dump of 82
}

}  // namespace
}  // namespace decomposed::hlo
