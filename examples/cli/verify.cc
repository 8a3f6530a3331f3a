// decomposed verify FILE... [--json] [--snapshot-type auto|decomposed|snapshot]
//                           [--lenient-length-byte]
// Exit 0 only when every file is valid; 1 when any is not.
#include <iostream>
#include <memory>

#include "command.h"
#include "decomposed/snapshot/verify.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> files;
  bool json = false;
  VerifyOptions options;
  std::string snapshot_type = "auto";
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();

  app.add_option("FILE", st->files, "classic or decomposed snapshots")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  app.add_option("--snapshot-type", st->snapshot_type,
                 "the files' form")
      ->check(CLI::IsMember({"auto", "decomposed", "snapshot"}))
      ->capture_default_str();
  app.add_flag("--lenient-length-byte", st->options.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  return [st] {
    st->options.snapshot_type = *SnapshotTypeFromName(st->snapshot_type);
    bool all_valid = true;
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const std::string& path : st->files) {
      absl::StatusOr<VerifyReport> r = VerifyFile(path, st->options);
      if (!r.ok()) {
        VerifyReport failed;
        failed.path = path;
        failed.problems.push_back(ProblemFromStatus(r.status()));
        r = failed;
      }
      all_valid = all_valid && r->valid();
      if (st->json) {
        json.push_back(VerifyReportJson(*r));
        continue;
      }
      for (const VerifyProblem& p : r->problems) {
        std::cout << path << ": " << p.message << "\n";
      }
      if (r->valid()) {
        std::cout << path << ": ok (" << SnapshotTypeName(*r->type) << ", " << r->inputs
                  << " inputs, "
                  << (r->outputs ? std::to_string(*r->outputs) + " outputs"
                                 : std::string("no outputs block"))
                  << ")\n";
      }
    }
    if (st->json) std::cout << DumpJson(json) << "\n";
    return all_valid ? kExitOk : kExitFailure;
  };
}

const Registrar kRegistrar({"verify",
                            "check every frame and literal as unpack would, "
                            "writing nothing",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
