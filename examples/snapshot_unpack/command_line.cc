#include "snapshot_unpack/command_line.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/io/input.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"

namespace decomposed {

absl::Status RunUnpackCommandLine(const UnpackCommandLine& cl,
                                  std::vector<UnpackedFile>* written) {
  absl::Status s;
  if (cl.unsupported_snapshot_type) {
    // The tool opens the file before it looks at the type.
    absl::StatusOr<InputFile> f = OpenInput(cl.snapshot);
    s = f.ok() ? absl::InvalidArgumentError("ERROR: Unsupported snapshot format")
               : f.status();
  } else {
    s = Unpack(cl.snapshot, cl.options, written);
  }
  if (IsOpenError(s)) {
    // snapshot-unpack's own text, without the reason.
    return WithMessage(s, absl::StrCat("Could not open: ", cl.snapshot));
  }
  return s;
}

// --- Command line -------------------------------------------------------------

namespace {

struct OptSpec {
  const char* name;
  bool is_bool;
  const char* help;
};

constexpr OptSpec kOpts[] = {
    {"module", false, "Output HLO module file name (default model.hlo)"},
    {"output-prefix", false,
     "Prefix of every output path, concatenated as is (default ./)"},
    {"snapshot-type", false,
     "Input type: snapshot (default), decomposed, or auto (detect)"},
    {"dump-snapshot-outputs", true,
     "Also write the snapshot's outputs as snapshot_output<j>.npy"},
    {"ml-dtype-sidecar", true,
     "Also write <file>.npy.meta {\"ml_dtype\": ...} for void dtypes "
     "(extension)"},
    {"lenient-length-byte", true,
     "Read a box length byte >= 0x80 as unsigned, as AWS's Python reader "
     "does (extension)"},
};

}  // namespace

std::string UnpackUsage(std::string_view program) {
  std::string out = absl::StrCat(
      "OVERVIEW: snapshot-unpack\n\nUSAGE: ", Sv(program),
      " [options] <snapshot>\n\nOPTIONS:\n\nsnapshot-unpack options:\n\n");
  for (const OptSpec& o : kOpts) {
    std::string left = absl::StrCat("  --", o.name, o.is_bool ? "" : "=<string>");
    left.resize(std::max<size_t>(left.size() + 2, 36), ' ');
    absl::StrAppend(&out, left, "- ", o.help, "\n");
  }
  absl::StrAppend(&out,
                  "\nGeneric Options:\n\n  --help                            "
                  "- Display available options\n");
  return out;
}

absl::StatusOr<UnpackCommandLine> ParseUnpackCommandLine(
    const std::vector<std::string>& args, std::string_view program) {
  UnpackCommandLine cl;
  std::vector<std::string> positional;
  bool seen[std::size(kOpts)] = {};
  auto err = [&](const std::string& m) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(program), ": ", m));
  };
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::string name = body;
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    if (name == "help" || name == "help-list" || name == "help-hidden" ||
        name == "help-list-hidden") {
      cl.help = true;  // LLVM prints the help and exits right here
      return cl;
    }
    size_t k = 0;
    while (k < std::size(kOpts) && name != kOpts[k].name) ++k;
    if (k == std::size(kOpts)) {
      return err(absl::StrCat("Unknown command line argument '", a,
                              "'.  Try: '", Sv(program), " --help'"));
    }
    const OptSpec& o = kOpts[k];
    const std::string dashes = "--";
    if (seen[k]) {
      return err(absl::StrCat("for the ", dashes, o.name,
                              " option: may only occur zero or one times!"));
    }
    seen[k] = true;
    if (o.is_bool) {
      bool v = true;
      if (value) {
        const std::string& x = *value;
        if (x == "true" || x == "TRUE" || x == "True" || x == "1") {
          v = true;
        } else if (x == "false" || x == "FALSE" || x == "False" ||
                   x == "0") {
          v = false;
        } else {
          return err(absl::StrCat("for the ", dashes, o.name, " option: '", x,
                                  "' is invalid value for boolean argument! "
                                  "Try 0 or 1"));
        }
      }
      if (name == "dump-snapshot-outputs") cl.options.dump_snapshot_outputs = v;
      if (name == "ml-dtype-sidecar") cl.options.ml_dtype_sidecar = v;
      if (name == "lenient-length-byte") {
        cl.options.box.lenient_length_byte = v;
      }
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return err(absl::StrCat("for the ", dashes, o.name,
                                " option: requires a value!"));
      }
      value = args[++i];
    }
    if (name == "module") cl.options.module = *value;
    if (name == "output-prefix") cl.options.output_prefix = *value;
    if (name == "snapshot-type") {
      std::optional<SnapshotType> t = SnapshotTypeFromName(*value);
      cl.unsupported_snapshot_type = !t;
      if (t) cl.options.snapshot_type = *t;
    }
  }
  if (cl.help) return cl;
  if (positional.empty()) {
    return err("Not enough positional command line arguments specified!\n"
               "Must specify at least 1 positional argument: See: " +
               std::string(program) + " --help");
  }
  if (positional.size() > 1) {
    return err(absl::StrCat("Too many positional arguments specified!\n"
                            "Can specify at most 1 positional arguments: "
                            "See: ",
                            Sv(program), " --help"));
  }
  cl.snapshot = positional[0];
  return cl;
}

}  // namespace decomposed
