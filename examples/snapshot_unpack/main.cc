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
// file ("Could not open: <file>") and an unknown type
// ("ERROR: Unsupported snapshot format").
#include <iostream>
#include <string>
#include <vector>

#include "decomposed/snapshot/unpack.h"

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
    std::cerr << s.message() << "\n";
    return 1;
  }
  return 0;
}
