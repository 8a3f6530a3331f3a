// The `decomposed` CLI: each command lives in its own file and registers
// itself here; main.cc builds one CLI11 app from the registry, parses the
// command line and runs the chosen command. The CLI is thin: argument
// parsing and printing over library calls.
//
// One exit-code rule for every command:
//   0  success;
//   1  bad input or I/O: the library's error, printed to stderr as
//      "decomposed <command>: <message>" (verify: some file is invalid);
//   2  usage: an unknown option, a missing or extra argument, a bad option
//      value. The reason and the command's help go to stderr.
// `--help` (or -h) after any command prints its help to stdout and exits 0.
#ifndef DECOMPOSED_EXAMPLES_CLI_COMMAND_H_
#define DECOMPOSED_EXAMPLES_CLI_COMMAND_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "decomposed/status.h"

namespace decomposed::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Runs a parsed command and returns kExitOk or kExitFailure. A usage error
// that CLI11 cannot express (two options of which exactly one is needed, a
// malformed INDEX=TYPE) is thrown as a CLI::ParseError (CLI::ValidationError,
// CLI::RequiredError) before any work is done; main turns it into exit 2.
using Action = std::function<int()>;

struct Command {
  std::string path;         // "inspect", "bundle ls"
  std::string description;  // one line, shown by --help
  // Adds the command's options and positionals to `app` (its own CLI11
  // subcommand), bound to state the returned action owns.
  Action (*setup)(CLI::App& app);
};

std::vector<Command>& Registry();

struct Registrar {
  explicit Registrar(Command c) { Registry().push_back(std::move(c)); }
};

// "decomposed bundle ls": the command's words from the root app down.
std::string CommandName(const CLI::App& app);

// Prints "<CommandName(app)>: <s.message()>" to stderr; returns kExitFailure.
int Fail(const CLI::App& app, const absl::Status& s);

// A check for int64 options: 0 .. INT64_MAX.
inline const CLI::Range kNonNegative(int64_t{0},
                                     std::numeric_limits<int64_t>::max());

// Adds --global-rank, --tp-rank and --dp-rank (non-negative integers) bound
// to the given fields, whose values are the defaults.
void AddRankOptions(CLI::App& app, int64_t* global_rank, int64_t* tp_rank,
                    int64_t* dp_rank);

// Adds --snapshot-type auto|decomposed|snapshot (the input's form), bound
// to `*value`, whose value is the default ("auto" everywhere in this CLI:
// docs/format.md §7.8). SnapshotTypeFromName parses it.
void AddSnapshotTypeOption(CLI::App& app, std::string* value);

// Adds -j/--jobs N (files handled at once; 0: one per core), bound to
// `*jobs` (EffectiveJobs in decomposed/snapshot/each.h reads it).
void AddJobsOption(CLI::App& app, unsigned* jobs);

// Adds --progress (force the progress line on stderr) and --quiet (no
// progress line), bound to `*progress` and `*quiet`.
void AddProgressOptions(CLI::App& app, bool* progress, bool* quiet);

// Serialises a nlohmann::json (or ordered_json) for printing. Strings from
// outside the program (paths, environment values) may hold bytes that are not
// UTF-8, on which the default dump() throws; here they become U+FFFD.
template <class Json>
std::string DumpJson(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                Json::error_handler_t::replace);
}

}  // namespace decomposed::cli

#endif  // DECOMPOSED_EXAMPLES_CLI_COMMAND_H_
