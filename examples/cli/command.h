// The `decomposed` CLI: each command lives in its own file and registers
// itself here, so commands stay independent. The CLI is thin: argument
// parsing and printing over library calls.
#ifndef DECOMPOSED_EXAMPLES_CLI_COMMAND_H_
#define DECOMPOSED_EXAMPLES_CLI_COMMAND_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace decomposed::cli {

// Returns the process exit code: 0 ok, 1 error (bad input), 2 usage.
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string name;     // "inspect", "bundle ls", ...
  std::string usage;    // one line
  CommandFn run;
};

std::map<std::string, Command>& Registry();

struct Registrar {
  explicit Registrar(Command c) { Registry()[c.name] = std::move(c); }
};

// Minimal option scanner shared by the commands: "--name=value",
// "--name value", "-o value"; bools "--flag". Unknown options are errors.
class Args {
 public:
  // `value_options` take a value; `flag_options` do not. Names without
  // dashes; one-letter names are used with one dash.
  Args(const std::vector<std::string>& argv,
       std::vector<std::string> value_options,
       std::vector<std::string> flag_options);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool Has(std::string_view name) const;
  std::string Get(std::string_view name, std::string def = "") const;
  std::vector<std::string> GetAll(std::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> positional_;
  std::string error_;
};

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
