// decomposed verify FILE... [--json] [--snapshot-type auto|decomposed|snapshot]
//                           [--lenient-length-byte] [--strict] [-j N]
// Exit 0 only when every file is valid; 1 when any is not. Warnings
// (docs/format.md §7.2) are printed as "<file>: warning: ..." and do not
// fail the run unless --strict makes them problems. Files are checked
// --jobs at a time (VerifyFiles, snapshot/each.h) and reported in input
// order; the exit code is the worst of them.
#include <iostream>
#include <memory>

#include "command.h"
#include "progress.h"
#include "decomposed/snapshot/each.h"
#include "decomposed/snapshot/verify.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> files;
  bool json = false;
  VerifyOptions options;
  SnapshotType snapshot_type = SnapshotType::kAuto;
  bool progress = false, quiet = false;
  unsigned jobs = 0;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();

  app.add_option("FILE", st->files, "classic or decomposed snapshots")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddProgressOptions(app, &st->progress, &st->quiet);
  app.add_flag("--strict", st->options.strict,
               "warnings (a header carrying literals) are problems");
  app.add_flag("--lenient-layout", st->options.lenient_layout,
               "read an array literal with no layout as major-to-minor");
  app.add_flag("--lenient-length-byte", st->options.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  AddJobsOption(app, &st->jobs);
  return [st] {
    st->options.snapshot_type = st->snapshot_type;
    bool all_valid = true;
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    ProgressLine progress("verify", TotalFileBytes(st->files),
                          ProgressModeOf(st->progress, st->quiet));
    st->options.progress = [&progress](uint64_t done) {
      progress.Update(done);
    };
    VerifyFiles(
        st->files, st->options, st->jobs,
        [&](size_t i, absl::StatusOr<VerifyReport>& r) {
          const std::string& path = st->files[i];
          if (!r.ok()) {
            VerifyReport failed;
            failed.path = path;
            failed.problems.push_back(ProblemFromStatus(r.status()));
            r = failed;
          }
          all_valid = all_valid && r->valid();
          if (st->json) {
            json.push_back(VerifyReportJson(*r));
            return;
          }
          progress.Clear();
          for (const VerifyProblem& p : r->problems) {
            // "Could not open: <file>: ..." names the file itself.
            if (p.message.rfind("Could not open: ", 0) == 0) {
              std::cout << p.message << "\n";
              continue;
            }
            std::cout << path << ": " << p.message << "\n";
          }
          for (const VerifyProblem& p : r->warnings) {
            std::cout << path << ": warning: " << p.message << "\n";
          }
          if (r->valid()) {
            std::cout << path << ": ok (" << SnapshotFormName(*r->type)
                      << ", " << Counted(r->inputs, "input") << ", "
                      << (r->outputs ? Counted(*r->outputs, "output")
                                     : std::string("no outputs block"))
                      << ")\n";
          }
          std::cout.flush();
        });
    progress.Done();
    if (st->json) std::cout << JsonText(json);
    return ExitCode(ExitStyle::kTool,
                    all_valid ? Outcome::kSuccess : Outcome::kNo);
  };
}

const Registrar kRegistrar({"verify",
                            "check every frame and literal as unpack would, "
                            "writing nothing",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
