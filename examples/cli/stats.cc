// decomposed stats FILE|DIR... [--json] [--fail-on-nonfinite] [--dtype ...]
// NaN hunting: per tensor NaN / Inf / zero counts and min, max, mean, std
// over the finite values. Exit 0; 1 with --fail-on-nonfinite when any tensor
// holds a NaN or an Inf; 2 on usage errors or unreadable input.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "command.h"
#include "decomposed/analysis/report.h"
#include "decomposed/npy/npy_reader.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> paths;
  bool json = false;
  bool fail_on_nonfinite = false;
  std::vector<std::string> dtypes;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("FILE", st->paths,
                 "snapshots (inputs and outputs), unpack directories, bundle "
                 "call directories, .npy or .pt files")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  app.add_flag("--fail-on-nonfinite", st->fail_on_nonfinite,
               "exit 1 when any tensor holds a NaN or an Inf");
  app.add_option("--dtype", st->dtypes,
                 "true type of void (|V1, |V2) .npy tensors: TYPE or INDEX=TYPE");
  return [st, &app]() -> int {
    TensorSetOptions base;
    if (absl::Status s = ParseDtypeOptions(st->dtypes, &base); !s.ok()) {
      throw CLI::ValidationError("--dtype", std::string(s.message()));
    }
    std::vector<TensorStatsEntry> entries;
    for (const std::string& path : st->paths) {
      // A snapshot or an unpack directory has inputs and outputs; the
      // other forms one list of tensors.
      absl::StatusOr<std::unique_ptr<TensorSet>> probe = OpenTensorSet(path, base);
      if (!probe.ok()) {
        Fail(app, probe.status());
        return kExitUsage;
      }
      std::vector<std::pair<std::string, TensorSetOptions>> sets;
      if ((*probe)->HasInputsAndOutputs()) {
        TensorSetOptions in = base;
        in.inputs = true;
        sets.push_back({"inputs", in});
        sets.push_back({"outputs", base});
      } else {
        sets.push_back({"tensors", base});
      }
      for (const auto& [name, options] : sets) {
        absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(path, options);
        absl::Status s = set.ok() ? AppendTensorStats(**set, path, name, &entries) : set.status();
        if (!s.ok()) {
          Fail(app, s);
          return kExitUsage;
        }
      }
    }
    std::cout << (st->json ? StatsReportJson(entries) : StatsReportText(entries));
    return st->fail_on_nonfinite && AnyNonFinite(entries) ? kExitFailure : kExitOk;
  };
}

const Registrar kRegistrar({"stats",
                            "NaN / Inf counts and min, max, mean, std of every "
                            "tensor",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
