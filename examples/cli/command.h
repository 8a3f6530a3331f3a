// The `decomposed` CLI: each command lives in its own file and registers
// itself here; main.cc builds one CLI11 app from the registry, parses the
// command line and runs the chosen command. The CLI is thin: argument
// parsing and printing over library calls.
//
// The one exit-code table (README, "Exit codes"), written here once
// (ExitCode below):
//
//   outcome                                   most commands  compare, stats
//   success                                   0              0
//   the answer is no: a file is invalid       1              1
//     (verify), a tensor mismatches or is
//     missing (compare), a NaN or an Inf
//     (stats --fail-on-nonfinite)
//   unreadable input, an I/O error            1              2
//   usage: an unknown option, a missing or    2              2
//     extra argument, a bad option value
//
// compare and stats keep 2 for unreadable input on purpose: their 1 is an
// answer about the data, so a script must be able to tell "they differ"
// from "they could not be read", as with diff, cmp and XLA's
// compare_literals (0 match, 1 mismatch, 2 error). The error itself is the
// same for every command: the library's status, printed to stderr as
// "decomposed <command>: <message>", with the same frame and message for
// the same bad file whichever command reads it (they all read snapshots
// through SnapshotReader). `--help` (or -h) after any command prints its
// help to stdout and exits 0. snapshot-unpack, the drop-in, keeps
// neuronx-cc's rule: 0 success, 1 for every error.
#ifndef DECOMPOSED_EXAMPLES_CLI_COMMAND_H_
#define DECOMPOSED_EXAMPLES_CLI_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "decomposed/names.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"

namespace decomposed::cli {

enum class Outcome {
  kSuccess,
  kNo,          // the command's answer is no (an invalid file, a mismatch)
  kUnreadable,  // bad input or an I/O error
  kUsage,
};

// Which column of the table a command is in.
enum class ExitStyle {
  kTool,      // unpack, inspect, verify, convert, pack, bundle, capture
  kQuestion,  // compare, stats: 1 is an answer, 2 an error
};

// The table above.
constexpr int ExitCode(ExitStyle style, Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess:
      return 0;
    case Outcome::kNo:
      return 1;
    case Outcome::kUnreadable:
      return style == ExitStyle::kQuestion ? 2 : 1;
    case Outcome::kUsage:
      return 2;
  }
  return 2;
}

inline constexpr int kExitOk = ExitCode(ExitStyle::kTool, Outcome::kSuccess);
inline constexpr int kExitFailure =
    ExitCode(ExitStyle::kTool, Outcome::kUnreadable);
inline constexpr int kExitUsage = ExitCode(ExitStyle::kTool, Outcome::kUsage);

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
  ExitStyle exit_style = ExitStyle::kTool;
};

std::vector<Command>& Registry();

struct Registrar {
  explicit Registrar(Command c) { Registry().push_back(std::move(c)); }
};

// "decomposed bundle ls": the command's words from the root app down.
std::string CommandName(const CLI::App& app);

// Prints "<CommandName(app)>: <s.message()>" to stderr; returns the exit
// code of unreadable input for that command (ExitCode: 1, or 2 for compare
// and stats).
int Fail(const CLI::App& app, const absl::Status& s);

// A check for int64 options: 0 .. INT64_MAX.
inline const CLI::Range kNonNegative(int64_t{0},
                                     std::numeric_limits<int64_t>::max());

// A check for tolerances and ratios: a finite number >= 0 (CLI11's
// NonNegativeNumber names the largest double in its message).
inline const CLI::Validator kNonNegativeReal(
    [](std::string& text) -> std::string {
      double v = 0;
      if (CLI::detail::lexical_cast(text, v) && v >= 0 &&
          v <= std::numeric_limits<double>::max()) {
        return "";
      }
      return "Value " + text + " is not a finite number >= 0";
    },
    "NONNEGATIVE");

// A coefficient in [0, 1] (CLI11's Range lets nan through).
inline const CLI::Validator kUnitInterval(
    [](std::string& text) -> std::string {
      double v = 0;
      if (CLI::detail::lexical_cast(text, v) && v >= 0 && v <= 1) return "";
      return "Value " + text + " is not a number from 0 to 1";
    },
    "[0,1]");

// Adds --global-rank, --tp-rank and --dp-rank (non-negative integers) bound
// to the given fields, whose values are the defaults.
void AddRankOptions(CLI::App& app, int64_t* global_rank, int64_t* tp_rank,
                    int64_t* dp_rank);

// Adds an option whose values are the spellings in `names` (the library's
// table for the enum, decomposed/names.h), bound to `*value`, whose value
// is the default (unless the table has no name for it). A CLI11 transformer turns the spelling into the enum; any
// other word is a usage error that lists the spellings.
template <typename E, size_t N>
CLI::Option* AddEnumOption(CLI::App& app, const std::string& flags, E* value,
                           const EnumName<E> (&names)[N], const std::string& description) {
  std::string choices;
  for (const EnumName<E>& n : names) {
    if (!choices.empty()) choices += ',';
    choices.append(n.name);
  }
  const EnumName<E>* table = names;
  CLI::Validator to_value(
      [table, choices](std::string& in) -> std::string {
        for (size_t i = 0; i < N; ++i) {
          if (table[i].name == in) {
            in = std::to_string(static_cast<int64_t>(table[i].value));
            return std::string();
          }
        }
        std::string why = "expected one of {";
        why.append(choices).append("}, found '").append(in).append("'");
        return why;
      },
      std::string("{").append(choices).append("}"));
  CLI::Option* o = app.add_option(flags, *value, description)
                       ->transform(to_value)
                       ->type_name("TEXT");
  // A value outside the table (a required option's placeholder) is no default.
  const std::string_view default_name = NameOf(names, *value);
  if (default_name != "?") o->default_str(std::string(default_name));
  return o;
}

// Adds --snapshot-type auto|decomposed|snapshot (the input's form), bound
// to `*value`, whose value is the default (kAuto everywhere in this CLI:
// docs/format.md §7.8).
void AddSnapshotTypeOption(CLI::App& app, SnapshotType* value);

// Adds -j/--jobs N (files handled at once; 0: one per core), bound to
// `*jobs` (EffectiveJobs in decomposed/snapshot/each.h reads it).
void AddJobsOption(CLI::App& app, unsigned* jobs);

// Adds --progress (force the progress line on stderr) and --quiet (no
// progress line), bound to `*progress` and `*quiet`.
void AddProgressOptions(CLI::App& app, bool* progress, bool* quiet);

}  // namespace decomposed::cli

#endif  // DECOMPOSED_EXAMPLES_CLI_COMMAND_H_
