// decomposed inspect FILE... [--json] [--snapshot-type auto|decomposed|snapshot]
//     [--lenient-length-byte] [-j N]
// One file: its report (text, or a JSON object; with --json a failure is
// {"file": FILE, "error": {...}} on stdout too). Several files: inspected
// --jobs at a time (InspectFiles, snapshot/each.h) and printed in input
// order, as text under a "==> FILE <==" line each, or as one JSON array of
// {"file": FILE, "report": {...}} or {"file": FILE, "error": {...}}
// (ProblemJson). Exit 1
// when any file fails (its error also goes to stderr), else 0.
#include <iostream>
#include <memory>

#include "command.h"
#include "decomposed/snapshot/each.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/snapshot/verify.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> files;
  bool json = false;
  SnapshotType snapshot_type = SnapshotType::kAuto;
  InspectOptions options;
  unsigned jobs = 0;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->files, "decomposed or classic snapshots")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddJobsOption(app, &st->jobs);
  app.add_flag("--lenient-length-byte",
               st->options.read.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  return [st, &app] {
    st->options.snapshot_type = st->snapshot_type;
    if (st->files.size() == 1) {
      absl::StatusOr<InspectReport> r =
          InspectFile(st->files[0], st->options);
      if (!r.ok() && st->json) {
        // JSON on stdout whatever happens: the error as an entry of the
        // many-file form has it.
        nlohmann::ordered_json entry;
        entry["file"] = st->files[0];
        entry["error"] = ProblemJson(ProblemFromStatus(r.status()));
        std::cout << JsonText(entry);
      }
      if (!r.ok()) return Fail(app, r.status());
      if (st->json) {
        std::cout << JsonText(InspectReportJson(*r));
      } else {
        std::cout << InspectReportText(*r);
      }
      return kExitOk;
    }
    int exit = kExitOk;
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    InspectFiles(st->files, st->options, st->jobs,
                 [&](size_t i, absl::StatusOr<InspectReport>& r) {
                   const std::string& path = st->files[i];
                   if (!r.ok()) exit = kExitFailure;
                   if (st->json) {
                     nlohmann::ordered_json entry;
                     entry["file"] = path;
                     if (r.ok()) {
                       entry["report"] = InspectReportJson(*r);
                     } else {
                       entry["error"] =
                           ProblemJson(ProblemFromStatus(r.status()));
                       Fail(app, r.status());
                     }
                     json.push_back(std::move(entry));
                     return;
                   }
                   std::cout << (i ? "\n" : "") << "==> " << path << " <==\n";
                   if (r.ok()) {
                     std::cout << InspectReportText(*r);
                   } else {
                     std::cout.flush();
                     Fail(app, r.status());
                   }
                   std::cout.flush();
                 });
    if (st->json) std::cout << JsonText(json);
    return exit;
  };
}

const Registrar kRegistrar({"inspect",
                            "list every frame of snapshot files", &Setup});

}  // namespace
}  // namespace decomposed::cli
