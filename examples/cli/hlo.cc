// decomposed hlo FILE [--style long|modern|short] [--large-constants]
//                     [--metadata | --no-metadata]
//                     [--graph N] [-o OUT] [--to-proto] [--json]
//
// The module of FILE (a decomposed or classic snapshot, an HloModuleProto,
// an HloProto, an HloUnoptimizedSnapshot, HLO text or a torch-xla graph
// dump, told apart by content; `-` reads stdin) as XLA's text (docs/hlo.md
// §2), as a serialized HloModuleProto, or as a JSON summary. Of a graph
// dump, --graph N reads graph N; without it the text is the whole dump
// again with each module printed in the style asked, and --json a summary
// per graph. OUT is written through a temp file and a rename; without -o
// the output goes to stdout (--to-proto refuses a terminal).
#include <unistd.h>

#include <memory>
#include <string>

#include "command.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/serialize.h"
#include "decomposed/hlo/summary.h"
#include "decomposed/hlo/tensors_dump.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/fd.h"
#include "decomposed/limits.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/status.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string file, out;
  hlo::HloTextStyle style = hlo::HloTextStyle::kLong;
  bool large_constants = false, to_proto = false, json = false;
  bool metadata = false, no_metadata = false;
  int64_t graph = -1;
};

// Writes `emit`'s bytes to OUT atomically, or to stdout.
template <class Emit>
absl::Status WriteOutput(const std::string& out, Emit&& emit) {
  if (out.empty() || out == "-") {
    FdSinkRef sink{UnownedFd(STDOUT_FILENO)};
    absl::Status s = emit(sink);
    if (s.ok() && !sink.Flush()) s = sink.status();
    return s;
  }
  AtomicFileSink sink;
  if (absl::Status s = sink.Open(out); !s.ok()) return s;
  if (absl::Status s = emit(sink); !s.ok()) return s;
  return sink.Commit();
}

hlo::HloPrintOptions PrintOptionsOf(const State& st) {
  hlo::HloPrintOptions options;
  options.style = st.style;
  options.print_large_constants = st.large_constants;
  if (st.metadata) options.print_metadata = true;
  if (st.no_metadata) options.print_metadata = false;
  return options;
}

// A graph dump read whole: the dump printed again, or a summary per graph.
absl::Status DumpOutput(const State& st, const ModuleFile& file) {
  absl::StatusOr<hlo::TensorsDump> dump = hlo::SplitTensorsDump(file.dump_text);
  if (!dump.ok()) return dump.status();
  if (!st.json) {
    hlo::HloPrintOptions options = PrintOptionsOf(st);
    return WriteOutput(st.out, [&](auto& sink) {
      return hlo::PrintTensorsDump(*dump, options, sink);
    });
  }
  nlohmann::ordered_json j;
  j["form"] = std::string(ModuleFileFormName(file.form));
  nlohmann::ordered_json& graphs = j["graphs"];
  graphs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < dump->graphs.size(); ++i) {
    const hlo::TensorsDumpGraph& g = dump->graphs[i];
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::ParseTensorsDumpGraph(*dump, i);
    if (!m.ok()) return m.status();
    nlohmann::ordered_json one;
    one["graph"] = i;
    one["line"] = g.line;
    const std::string_view report = g.report;
    one["report_title"] = std::string(report.substr(0, report.find('\n')));
    one.update(hlo::SummarizeModule(**m).ToJson());
    graphs.push_back(std::move(one));
  }
  return WriteOutput(st.out, [&](auto& sink) {
    sink.Write(JsonText(j));
    return sink.status();
  });
}

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->file,
                 "a decomposed or classic snapshot, an HloModuleProto, an "
                 "HloProto, an HloUnoptimizedSnapshot, HLO text or a "
                 "torch-xla graph dump (by content); - reads stdin")
      ->required();
  AddEnumOption(app, "--style", &st->style, hlo::kHloTextStyleNames,
                "long: XLA's text of 2022-2025 (torch-neuronx dumps); "
                "modern: without operand shapes; short: ShortParsable");
  app.add_flag("--large-constants", st->large_constants,
               "print every constant in full (not {...} past 10 elements)");
  CLI::Option* with = app.add_flag(
      "--metadata", st->metadata,
      "print metadata and the stack frame index whatever the style (XLA's own dumps are "
      "--style short --metadata)");
  app.add_flag("--no-metadata", st->no_metadata, "print no metadata whatever the style")
      ->excludes(with);
  app.add_option("--graph", st->graph,
                 "of a torch-xla graph dump (XLA_SAVE_TENSORS_FILE): the "
                 "graph to read, from 0; without it, every graph")
      ->check(kNonNegative);
  app.add_option("-o,--output", st->out, "write here instead of stdout");
  auto* proto = app.add_flag("--to-proto", st->to_proto,
                             "write the serialized HloModuleProto");
  app.add_flag("--json", st->json,
               "a summary: parameters, result, counts, opcodes, custom "
               "calls, collectives, constants, FLOPs")
      ->excludes(proto);
  return [st, &app] {
    ModuleFileOptions read;
    read.graph = st->graph >= 0 ? st->graph : ModuleFileOptions::kEveryGraph;
    read.keep_hlo_text = st->to_proto;
    absl::StatusOr<ModuleFile> file = ReadModuleFile(st->file, read);
    if (!file.ok()) return Fail(app, file.status());
    if (file->form == ModuleFileForm::kTensorsDump && file->graph < 0) {
      if (!st->to_proto) {
        absl::Status s = DumpOutput(*st, *file);
        return s.ok() ? kExitOk : Fail(app, s);
      }
      // One proto: the dump's one graph, or the one --graph names.
      if (file->graphs != 1) {
        throw CLI::ValidationError(
            "--to-proto", absl::StrCat("the file is a torch-xla graph dump of ",
                                       Counted(file->graphs, "graph"),
                                       ": name one with --graph N"));
      }
      const std::string text = std::move(file->dump_text);
      file = ParseModuleBytes(text, st->file);  // its one graph
      if (!file.ok()) return Fail(app, file.status());
    }
    if (st->to_proto) {
      if ((st->out.empty() || st->out == "-") && ::isatty(STDOUT_FILENO)) {
        return Fail(app, absl::InvalidArgumentError(
                             "--to-proto writes binary: give -o OUT or "
                             "redirect stdout"));
      }
      // The module as read: fields this library does not declare (a newer
      // XLA's) were kept by protobuf and are written back unchanged.
      absl::Status s = WriteOutput(st->out, [&](auto& sink) {
        if (file->form == ModuleFileForm::kHloText) {
          // Parsed straight to bytes: memory about the proto's size.
          absl::StatusOr<hlo::HloModuleTextExtras> extras = hlo::ParseHloTextToProto(
              file->dump_text, [&](std::string_view d) { return sink.Write(d); });
          if (!extras.ok() && sink.status().ok()) {
            return WithFile(extras.status(), st->file);
          }
          return sink.status();
        }
        if (file->module.ByteSizeLong() > limits::kMaxMessageBytes) {
          return absl::ResourceExhaustedError(
              "the module serializes past protobuf's 2 GiB limit");
        }
        sink.Write(hlo::DeterministicSerialization(file->module));
        return sink.status();
      });
      return s.ok() ? kExitOk : Fail(app, s);
    }
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> module =
        hlo::HloModule::Create(file->module);
    if (!module.ok()) return Fail(app, module.status());
    absl::Status s;
    if (st->json) {
      nlohmann::ordered_json j = hlo::SummarizeModule(**module).ToJson();
      j["form"] = std::string(ModuleFileFormName(file->form));
      if (file->graph >= 0) {
        j["graph"] = file->graph;
        j["graphs"] = file->graphs;
      }
      s = WriteOutput(st->out, [&](auto& sink) {
        sink.Write(JsonText(j));
        return sink.status();
      });
    } else {
      hlo::HloPrintOptions options = PrintOptionsOf(*st);
      s = WriteOutput(st->out, [&](auto& sink) {
        return hlo::PrintHloModule(**module, options, sink,
                                   file->has_extras ? &file->extras : nullptr);
      });
    }
    return s.ok() ? kExitOk : Fail(app, s);
  };
}

const Registrar kRegistrar({"hlo",
                            "print a module (of a snapshot, a proto or HLO "
                            "text) as XLA's text, a proto or a JSON summary",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
