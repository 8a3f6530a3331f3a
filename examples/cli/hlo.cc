// decomposed hlo FILE [--style long|modern|short] [--large-constants]
//                     [-o OUT] [--to-proto] [--json]
//
// The module of FILE (a decomposed or classic snapshot, an HloModuleProto,
// an HloProto or HLO text, told apart by content; `-` reads stdin) as
// XLA's text (docs/hlo.md §2), as a serialized HloModuleProto, or as a
// JSON summary. OUT is written through a temp file and a rename; without
// -o the output goes to stdout (--to-proto refuses a terminal).
#include <unistd.h>

#include <memory>
#include <string>

#include "command.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/summary.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/fd.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/snapshot/module_file.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string file, out, style = "long";
  bool large_constants = false, to_proto = false, json = false;
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

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->file,
                 "a decomposed or classic snapshot, an HloModuleProto, an "
                 "HloProto or HLO text (by content); - reads stdin")
      ->required();
  app.add_option("--style", st->style,
                 "long: XLA's text of 2022-2025 (torch-neuronx dumps); "
                 "modern: without operand shapes; short: ShortParsable")
      ->check(CLI::IsMember({"long", "modern", "short"}));
  app.add_flag("--large-constants", st->large_constants,
               "print every constant in full (not {...} past 10 elements)");
  app.add_option("-o,--output", st->out, "write here instead of stdout");
  auto* proto = app.add_flag("--to-proto", st->to_proto,
                             "write the serialized HloModuleProto");
  app.add_flag("--json", st->json,
               "a summary: parameters, result, counts, opcodes, custom "
               "calls, collectives, constants, FLOPs")
      ->excludes(proto);
  return [st, &app] {
    absl::StatusOr<ModuleFile> file = ReadModuleFile(st->file);
    if (!file.ok()) return Fail(app, file.status());
    if (st->to_proto) {
      if ((st->out.empty() || st->out == "-") && ::isatty(STDOUT_FILENO)) {
        return Fail(app, absl::InvalidArgumentError(
                             "--to-proto writes binary: give -o OUT or "
                             "redirect stdout"));
      }
      // The module as read: fields this library does not declare (a newer
      // XLA's) were kept by protobuf and are written back unchanged.
      absl::Status s = WriteOutput(st->out, [&](auto& sink) {
        std::string bytes;
        if (!file->module.SerializeToString(&bytes)) {
          return absl::InternalError("the module could not be serialized");
        }
        sink.Write(bytes);
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
      s = WriteOutput(st->out, [&](auto& sink) {
        sink.Write(JsonText(j));
        return sink.status();
      });
    } else {
      hlo::HloPrintOptions options;
      options.style = st->style == "modern" ? hlo::HloTextStyle::kModern
                      : st->style == "short" ? hlo::HloTextStyle::kShort
                                             : hlo::HloTextStyle::kLong;
      options.print_large_constants = st->large_constants;
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
