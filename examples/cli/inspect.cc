// decomposed inspect FILE [--json] [--snapshot-type auto|decomposed|snapshot]
//     [--lenient-length-byte]
#include <iostream>
#include <memory>

#include "command.h"
#include "decomposed/snapshot/inspect.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string file;
  bool json = false;
  std::string snapshot_type = "auto";
  InspectOptions options;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->file, "a decomposed or classic snapshot")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  AddSnapshotTypeOption(app, &st->snapshot_type);
  app.add_flag("--lenient-length-byte",
               st->options.read.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  return [st, &app] {
    st->options.snapshot_type = *SnapshotTypeFromName(st->snapshot_type);
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
                            "list every frame of a snapshot file", &Setup});

}  // namespace
}  // namespace decomposed::cli
