// decomposed unpack [snapshot-unpack options] <snapshot>
// The same options and behaviour as build/bin/snapshot-unpack (see
// include/decomposed/unpack.h), but it prints every file it writes.
#include <iostream>

#include "absl/strings/str_format.h"
#include "command.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed::cli {
namespace {

int Run(const std::vector<std::string>& argv) {
  absl::StatusOr<UnpackCommandLine> cl =
      ParseUnpackCommandLine(argv, "decomposed unpack");
  if (!cl.ok()) {
    std::cerr << cl.status().message() << "\n";
    return 1;
  }
  if (cl->help) {
    std::cout << UnpackUsage("decomposed unpack");
    return 0;
  }
  size_t n = 0;
  cl->options.on_file = [&n](const UnpackedFile& f) {
    ++n;
    if (f.kind == UnpackedKind::kModule || f.kind == UnpackedKind::kMeta) {
      std::cout << absl::StrFormat("wrote %s (%d bytes)\n", f.path, f.bytes);
    } else {
      std::cout << absl::StrFormat("wrote %s %s %s%s (%d bytes)\n", f.path,
                                   f.shape, f.descr,
                                   f.fortran_order ? " fortran_order" : "",
                                   f.bytes);
    }
  };
  absl::Status s = RunUnpackCommandLine(*cl);
  if (!s.ok()) {
    std::cerr << "decomposed unpack: " << s.message() << "\n";
    return 1;
  }
  std::cout << "unpacked " << n << " files\n";
  return 0;
}

const Registrar kRegistrar(
    {"unpack",
     "unpack [--snapshot-type=snapshot|decomposed|auto] "
     "[--dump-snapshot-outputs] [--output-prefix=P] [--module=F] FILE   "
     "write the module and every literal as .npy (snapshot-unpack)",
     &Run});

}  // namespace
}  // namespace decomposed::cli
