// decomposed: a multi-command CLI over the library.
#include <iostream>
#include <string>
#include <vector>

#include "command.h"

namespace decomposed::cli {

std::map<std::string, Command>& Registry() {
  static auto* r = new std::map<std::string, Command>();
  return *r;
}

Args::Args(const std::vector<std::string>& argv,
           std::vector<std::string> value_options,
           std::vector<std::string> flag_options) {
  auto known = [](const std::vector<std::string>& v, const std::string& n) {
    for (const auto& x : v)
      if (x == n) return true;
    return false;
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      for (++i; i < argv.size(); ++i) positional_.push_back(argv[i]);
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (known(flag_options, name)) {
      if (has_value && value != "true" && value != "false") {
        error_ = "option --" + name + " takes no value";
        return;
      }
      if (!has_value || value == "true") values_.push_back({name, "true"});
      continue;
    }
    if (!known(value_options, name)) {
      error_ = "unknown option " + a;
      return;
    }
    if (!has_value) {
      if (i + 1 >= argv.size()) {
        error_ = "option " + a + " needs a value";
        return;
      }
      value = argv[++i];
    }
    values_.push_back({name, value});
  }
}

bool Args::Has(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return true;
  return false;
}
std::string Args::Get(std::string_view name, std::string def) const {
  for (auto it = values_.rbegin(); it != values_.rend(); ++it)
    if (it->first == name) return it->second;
  return def;
}
std::vector<std::string> Args::GetAll(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : values_)
    if (n == name) out.push_back(v);
  return out;
}

}  // namespace decomposed::cli

namespace {

void Usage(std::ostream& out) {
  out << "usage: decomposed <command> [options]\n\ncommands:\n";
  for (const auto& [name, c] : decomposed::cli::Registry()) {
    out << "  " << c.usage << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" ||
      args[0] == "help") {
    Usage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  auto& reg = decomposed::cli::Registry();
  // Two-word commands ("bundle ls") first, then one-word ones.
  if (args.size() >= 2) {
    auto it = reg.find(args[0] + " " + args[1]);
    if (it != reg.end()) {
      return it->second.run(std::vector<std::string>(args.begin() + 2,
                                                     args.end()));
    }
  }
  auto it = reg.find(args[0]);
  if (it == reg.end()) {
    std::cerr << "decomposed: unknown command '" << args[0] << "'\n";
    Usage(std::cerr);
    return 2;
  }
  return it->second.run(std::vector<std::string>(args.begin() + 1, args.end()));
}
