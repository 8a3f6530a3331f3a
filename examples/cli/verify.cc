// decomposed verify FILE... [--json] [--snapshot-type=auto|decomposed|snapshot]
//                           [--lenient-length-byte]
#include <iostream>

#include "command.h"
#include "decomposed/snapshot/verify.h"

namespace decomposed::cli {
namespace {

int Run(const std::vector<std::string>& argv) {
  Args args(argv, {"snapshot-type"}, {"json", "lenient-length-byte"});
  if (!args.ok() || args.positional().empty()) {
    std::cerr << "decomposed verify: "
              << (args.ok() ? "expected at least one FILE" : args.error())
              << "\nusage: decomposed verify FILE... [--json] "
                 "[--snapshot-type=auto|decomposed|snapshot] "
                 "[--lenient-length-byte]\n";
    return 2;
  }
  VerifyOptions options;
  std::optional<SnapshotType> type =
      SnapshotTypeFromName(args.Get("snapshot-type", "auto"));
  if (!type) {
    std::cerr << "decomposed verify: --snapshot-type must be auto, "
                 "decomposed or snapshot\n";
    return 2;
  }
  options.snapshot_type = *type;
  options.box.lenient_length_byte = args.Has("lenient-length-byte");
  bool all_valid = true;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const std::string& path : args.positional()) {
    absl::StatusOr<VerifyReport> r = VerifyFile(path, options);
    if (!r.ok()) {
      all_valid = false;
      VerifyReport failed;
      failed.path = path;
      failed.problems.push_back(ProblemFromStatus(r.status()));
      r = failed;
    }
    all_valid = all_valid && r->valid();
    if (args.Has("json")) {
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
  if (args.Has("json")) std::cout << DumpJson(json) << "\n";
  return all_valid ? 0 : 1;
}

const Registrar kRegistrar({"verify",
                            "verify FILE... [--json]   check every frame and "
                            "literal as unpack would, writing nothing",
                            &Run});

}  // namespace
}  // namespace decomposed::cli
