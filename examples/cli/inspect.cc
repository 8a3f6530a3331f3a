// decomposed inspect FILE [--json] [--lenient-length-byte]
#include <iostream>

#include "command.h"
#include "decomposed/snapshot/inspect.h"

namespace decomposed::cli {
namespace {

int Run(const std::vector<std::string>& argv) {
  Args args(argv, {}, {"json", "lenient-length-byte"});
  if (!args.ok() || args.positional().size() != 1) {
    std::cerr << "decomposed inspect: "
              << (args.ok() ? "expected one FILE" : args.error())
              << "\nusage: decomposed inspect FILE [--json] "
                 "[--lenient-length-byte]\n";
    return 2;
  }
  InspectOptions options;
  options.read.box.lenient_length_byte = args.Has("lenient-length-byte");
  absl::StatusOr<InspectReport> r =
      InspectFile(args.positional()[0], options);
  if (!r.ok()) {
    std::cerr << "decomposed inspect: " << r.status().message() << "\n";
    return 1;
  }
  if (args.Has("json")) {
    std::cout << DumpJson(InspectReportJson(*r)) << "\n";
  } else {
    std::cout << InspectReportText(*r);
  }
  return 0;
}

const Registrar kRegistrar({"inspect",
                            "inspect FILE [--json]   list every frame of a "
                            "decomposed file",
                            &Run});

}  // namespace
}  // namespace decomposed::cli
