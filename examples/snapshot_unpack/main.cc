// snapshot-unpack: a drop-in for neuronx-cc's tool of the same name
// (docs/format.md §1.1 and §12), over decomposed::Unpack.
//
//   snapshot-unpack [options] <snapshot>
//     --module=<string>         default model.hlo
//     --output-prefix=<string>  default ./ (concatenated as is)
//     --snapshot-type=<string>  snapshot (default) | decomposed | auto
//     --dump-snapshot-outputs   also write snapshot_output<j>.npy
//     --ml-dtype-sidecar        also write <file>.npy.meta for void dtypes
// Options parse as LLVM cl::opt does (one or two dashes, -opt=value or
// -opt value, -flag or -flag=true|false, -help). Silent on success (exit 0);
// errors go to stderr with exit 1, with the tool's texts for an unopenable
// file ("Could not open: <file>", then the system's reason: ": No such file
// or directory") and an unknown type ("ERROR: Unsupported snapshot format").
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "decomposed/io/input.h"
#include "decomposed/status.h"
#include "snapshot_unpack/command_line.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string program = argc > 0 ? argv[0] : "snapshot-unpack";
  absl::StatusOr<decomposed::UnpackCommandLine> cl =
      decomposed::ParseUnpackCommandLine(args, program);
  if (!cl.ok()) {
    std::cerr << cl.status().message() << "\n";
    return 1;
  }
  if (cl->help) {
    std::cout << decomposed::UnpackUsage(program);
    return 0;
  }
  absl::Status s = decomposed::RunUnpackCommandLine(*cl);
  if (!s.ok()) {
    std::cerr << s.message();
    // The tool's line, and why: a script matching the tool's text still
    // matches, and a person is told whether the file is missing or locked.
    if (std::optional<int> e = decomposed::ErrnoOf(s);
        e && decomposed::IsOpenError(s)) {
      std::cerr << ": " << std::strerror(*e);
    }
    std::cerr << "\n";
    return 1;
  }
  return 0;
}
