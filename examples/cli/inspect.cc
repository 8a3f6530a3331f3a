// decomposed inspect FILE [--json] [--lenient-length-byte]
#include <iostream>
#include <memory>

#include "command.h"
#include "decomposed/snapshot/inspect.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string file;
  bool json = false;
  InspectOptions options;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->file, "a decomposed file")->required();
  app.add_flag("--json", st->json, "print JSON");
  app.add_flag("--lenient-length-byte",
               st->options.read.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  return [st, &app] {
    absl::StatusOr<InspectReport> r =
        InspectFile(st->file, st->options);
    if (!r.ok()) return Fail(app, r.status());
    if (st->json) {
      std::cout << DumpJson(InspectReportJson(*r)) << "\n";
    } else {
      std::cout << InspectReportText(*r);
    }
    return kExitOk;
  };
}

const Registrar kRegistrar({"inspect",
                            "list every frame of a decomposed file", &Setup});

}  // namespace
}  // namespace decomposed::cli
