// decomposed: a multi-command CLI over the library. One CLI11 app: each
// registered command (command.h) is a subcommand; two-word commands
// ("bundle ls") are subcommands of a group ("bundle").
#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "command.h"
#include "decomposed/version.h"

namespace decomposed::cli {

std::vector<Command>& Registry() {
  static auto* r = new std::vector<Command>();
  return *r;
}

std::string CommandName(const CLI::App& app) {
  std::string name = app.get_name();
  for (const CLI::App* p = app.get_parent(); p; p = p->get_parent()) {
    name = p->get_name() + " " + name;
  }
  return name;
}

int Fail(const CLI::App& app, const absl::Status& s) {
  const std::string name = CommandName(app);
  std::cerr << name << ": " << s.message() << "\n";
  ExitStyle style = ExitStyle::kTool;
  for (const Command& c : Registry()) {
    if ("decomposed " + c.path == name) style = c.exit_style;
  }
  return ExitCode(style, Outcome::kUnreadable);
}

void AddRankOptions(CLI::App& app, int64_t* global_rank, int64_t* tp_rank,
                    int64_t* dp_rank) {
  for (auto [name, field] : {std::pair{"--global-rank", global_rank},
                             std::pair{"--tp-rank", tp_rank},
                             std::pair{"--dp-rank", dp_rank}}) {
    app.add_option(name, *field, "a non-negative rank")
        ->check(kNonNegative)
        ->capture_default_str();
  }
}

void AddProgressOptions(CLI::App& app, bool* progress, bool* quiet) {
  CLI::Option* on = app.add_flag(
      "--progress", *progress,
      "show a progress line on stderr even when it is not a terminal");
  app.add_flag("--quiet", *quiet, "no progress line")->excludes(on);
}

void AddJobsOption(CLI::App& app, unsigned* jobs) {
  app.add_option("-j,--jobs", *jobs,
                 "files handled at once (0, the default: one per core); "
                 "results are printed in input order")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
}

void AddSnapshotTypeOption(CLI::App& app, SnapshotType* value) {
  AddEnumOption(app, "--snapshot-type", value, kSnapshotTypeNames,
                "the input's form (auto: detect it, docs/format.md 7.8)");
}

}  // namespace decomposed::cli

namespace {

using decomposed::cli::Action;

// The command groups: the first word of a two-word command.
const std::map<std::string, std::string>& GroupDescriptions() {
  static const auto* g = new std::map<std::string, std::string>{
      {"bundle", "input-snapshot bundles: list, verify, convert"},
      {"capture", "the vLLM-Neuron input-snapshot capture policy"},
  };
  return *g;
}

// snapshot-unpack's LLVM syntax spells long options with one dash
// (-output-prefix=out/), and so do people's fingers (-json); CLI11 would
// read "-o" plus "utput-prefix=out/", or "-j" plus "son". In every command,
// a one-dash word whose name is one of that command's long options gets its
// second dash, so a snapshot-unpack command line works as
// `decomposed unpack ...` and `inspect -json` as `inspect --json`.
// One-letter names with their values (-j4, -oout), numbers (-1e-3),
// command names and words after "--" are left alone.
std::vector<std::string> AcceptOneDashLongOptions(CLI::App& app, int argc,
                                                  char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App* cur = &app;
  bool value_next = false;  // the word after an option that takes one
  for (std::string& a : args) {
    if (a == "--") break;
    if (value_next) {  // `-o -json` writes a file named -json
      value_next = false;
      continue;
    }
    if (a.size() >= 2 && a[0] == '-' && a.find('=') == std::string::npos) {
      const CLI::Option* opt = cur->get_option_no_throw(a);
      if (opt == nullptr && a[1] != '-' && a.size() >= 3) {
        opt = cur->get_option_no_throw("-" + a);
      }
      // A one-letter option with its value attached (-j4) takes no other.
      const bool attached = a[1] != '-' && a.size() > 2 && opt != nullptr &&
                            cur->get_option_no_throw(a.substr(0, 2)) == opt;
      value_next = opt != nullptr && opt->get_type_size() > 0 && !attached;
    }
    if (a.size() >= 3 && a[0] == '-' && a[1] != '-' &&
        std::isalpha(static_cast<unsigned char>(a[1]))) {
      const std::string name = a.substr(1, a.find('=') - 1);
      if (name.size() >= 2 && cur->get_option_no_throw("--" + name) != nullptr) {
        a.insert(0, "-");
      }
      continue;
    }
    if (a.empty() || a[0] == '-') continue;
    for (CLI::App* sub : cur->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == a) {
        cur = sub;
        break;
      }
    }
  }
  return args;
}

// The deepest subcommand selected so far (also after a failed parse).
const CLI::App* Selected(const CLI::App& app) {
  const CLI::App* a = &app;
  while (!a->get_subcommands().empty()) a = a->get_subcommands().front();
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace decomposed::cli;
  CLI::App app("Reads, checks, converts and writes decomposed HLO snapshot "
               "streams, classic HloSnapshot files and input-snapshot "
               "bundles.",
               "decomposed");
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       "decomposed " + std::string(decomposed::kVersion),
                       "print the version and exit");
  std::vector<Command> commands = Registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.path < b.path; });
  std::map<std::string, CLI::App*> groups;
  std::map<const CLI::App*, Action> actions;
  for (const Command& c : commands) {
    std::vector<std::string> words = absl::StrSplit(c.path, ' ');
    CLI::App* parent = &app;
    if (words.size() == 2) {
      CLI::App*& g = groups[words[0]];
      if (!g) {
        g = app.add_subcommand(words[0], GroupDescriptions().at(words[0]));
        g->require_subcommand(1);
      }
      parent = g;
    }
    CLI::App* sub = parent->add_subcommand(words.back(), c.description);
    actions[sub] = c.setup(*sub);
  }
  try {
    std::vector<std::string> args = AcceptOneDashLongOptions(app, argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    return actions.at(Selected(app))();
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << CommandName(*Selected(app)) << ": " << e.what() << "\n\n"
              << app.help();
    return kExitUsage;
  }
}
