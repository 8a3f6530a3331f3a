// libFuzzer target: the snapshot-unpack option parser
// (ParseUnpackCommandLine). The input is split at NUL bytes into at most 16
// arguments. A success names exactly one input file (unless -help) and a
// snapshot type; an error is kInvalidArgument with a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decomposed/snapshot/unpack.h"
#include "fuzz_util.h"
#include "snapshot_unpack/command_line.h"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size && args.size() <= 16; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  absl::StatusOr<UnpackCommandLine> cl = ParseUnpackCommandLine(args);
  fuzz::CheckErrorShape(cl.status());
  if (!cl.ok()) {
    FUZZ_CHECK(cl.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  if (!cl->help) FUZZ_CHECK(!cl->snapshot.empty() || args.size() >= 1);
  return 0;
}
