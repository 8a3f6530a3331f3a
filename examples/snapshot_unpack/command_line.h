// snapshot-unpack's command line (examples/snapshot_unpack/main.cc): LLVM
// cl::opt's parsing of the tool's options, over the library's Unpack. Part
// of the drop-in tool, not of the library: the tests and the
// unpack_cmdline fuzz target link it from here.
//
// Example:
//   absl::StatusOr<decomposed::UnpackCommandLine> cl =
//       decomposed::ParseUnpackCommandLine({"-output-prefix=out/", "a.snap"});
//   if (cl.ok() && !cl->help) absl::Status s = decomposed::RunUnpackCommandLine(*cl);
#ifndef DECOMPOSED_EXAMPLES_SNAPSHOT_UNPACK_COMMAND_LINE_H_
#define DECOMPOSED_EXAMPLES_SNAPSHOT_UNPACK_COMMAND_LINE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed {

struct UnpackCommandLine {
  UnpackOptions options = ClassicByDefault();
  std::string snapshot;  // the positional input file
  bool help = false;     // -help / --help / -help-list given
  // --snapshot-type named no type (SnapshotTypeFromName): the run fails
  // with "ERROR: Unsupported snapshot format" once the input opens, as
  // snapshot-unpack checks the type after opening the file.
  bool unsupported_snapshot_type = false;

  // snapshot-unpack's default input type is "snapshot" (classic), unlike
  // UnpackOptions' kAuto: a drop-in keeps it.
  static UnpackOptions ClassicByDefault() {
    UnpackOptions o;
    o.snapshot_type = SnapshotType::kClassic;
    return o;
  }
};

// Parses arguments (without argv[0]) as LLVM's cl::ParseCommandLineOptions
// does for snapshot-unpack's options: one or two dashes; `-opt=value` and
// `-opt value` for strings (module, output-prefix, snapshot-type); bools
// (dump-snapshot-outputs, and our extensions ml-dtype-sidecar and
// lenient-length-byte) as `-flag` or
// `-flag=true|false` (also 1/0, TRUE/FALSE, True/False), never
// `-flag false`; an option given twice is an error, as with cl::opt; `--`
// ends options; exactly one positional <snapshot>; `-help`/`-help-list`
// set `help` (no positional needed). Errors (kInvalidArgument) carry LLVM's
// message texts, prefixed by `program`.
absl::StatusOr<UnpackCommandLine> ParseUnpackCommandLine(
    const std::vector<std::string>& args,
    std::string_view program = "snapshot-unpack");

// Runs a parsed command line: Unpack(cl.snapshot, cl.options, written),
// except that an unsupported snapshot type fails (kInvalidArgument, "ERROR:
// Unsupported snapshot format") after the open check, in the tool's order.
// An input that cannot be opened gives the tool's text, "Could not open:
// <file>", without the reason (the code and payloads stay).
absl::Status RunUnpackCommandLine(const UnpackCommandLine& cl,
                                  std::vector<UnpackedFile>* written = nullptr);

// The -help text.
std::string UnpackUsage(std::string_view program = "snapshot-unpack");

}  // namespace decomposed

#endif  // DECOMPOSED_EXAMPLES_SNAPSHOT_UNPACK_COMMAND_LINE_H_
