// Bisect and the ranks of one step over the run layer (run/replay.h).
#include "decomposed/run/replay.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/analysis/report.h"
#include "decomposed/capture/ranks.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"

namespace decomposed::run {
namespace {

using json = nlohmann::ordered_json;

eval::EvalOptions EvalOptionsOf(const RunOptions& r) {
  eval::EvalOptions o;
  o.numerics = r.numerics;
  o.threads = r.threads;
  o.max_array_bytes = r.max_array_bytes;
  o.max_loop_iterations = r.max_loop_iterations;
  o.replica_count = r.replica_count;
  o.substitutes = r.substitutes;
  o.custom_calls = r.custom_calls;
  return o;
}

absl::Status ReadSubstitutes(const std::vector<std::pair<std::string, std::string>>& files,
                             RunOptions* options) {
  for (const auto& [name, file] : files) {
    absl::StatusOr<eval::Array> a = ReadNpyArray(file);
    if (!a.ok()) return Prefix(a.status(), absl::StrCat("--substitute ", name));
    options->substitutes[name] = eval::Value(*std::move(a));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BisectReport> BisectSnapshot(const BisectRequest& request) {
  absl::StatusOr<RunProgram> program = LoadProgram(request.source, request.load);
  if (!program.ok()) return program.status();
  RunOptions run = request.run;
  if (absl::Status s = ReadSubstitutes(request.substitute_files, &run); !s.ok()) return s;
  BisectOptions options;
  options.actual = EvalOptionsOf(run);
  options.reference = options.actual;
  options.compare = request.compare;
  if (std::optional<eval::Numerics> mode = eval::NumericsFromName(request.against)) {
    options.reference.numerics = *mode;
    return Bisect(*program->module, program->inputs, options);
  }
  absl::StatusOr<std::unique_ptr<InstructionValues>> values = OpenValueDirectory(request.against);
  if (!values.ok()) return values.status();
  return BisectAgainst(*program->module, program->inputs, **values, options);
}

absl::StatusOr<RanksReport> RunRanks(const RanksRequest& request) {
  if (request.output.format == OutputFormat::kNpz) {
    return absl::InvalidArgumentError(
        "the ranks' outputs are written as .npy files under rank<i>/, not as one .npz");
  }
  absl::StatusOr<std::vector<capture::RankFile>> order = capture::OrderRankFiles(request.ranks);
  if (!order.ok()) return order.status();
  RanksReport report;
  std::vector<RunProgram> programs;
  for (const capture::RankFile& f : *order) {
    RunSource src;
    if (request.module.empty()) {
      src.snapshot = f.path;
    } else {
      src.module = request.module;
      src.input_sides = {f.path};
    }
    absl::StatusOr<RunProgram> p = LoadProgram(src, request.load);
    if (!p.ok()) return Prefix(p.status(), absl::StrCat("rank ", f.rank));
    programs.push_back(*std::move(p));
    report.paths.push_back(f.path);
    report.ids.push_back(f.id);
  }
  const size_t n = programs.size();
  // The recorded outputs, opened before the work: a rank without them
  // fails first.
  std::vector<std::unique_ptr<TensorSet>> recorded(n);
  if (request.check == RunCheck::kCompare) {
    for (size_t r = 0; r < n; ++r) {
      if (!programs[r].recorded_outputs) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank ", r, " (", report.paths[r], "): no recorded outputs to compare with"));
      }
      absl::StatusOr<std::unique_ptr<TensorSet>> s = programs[r].recorded_outputs();
      if (!s.ok()) return Prefix(s.status(), absl::StrCat("rank ", r));
      recorded[r] = *std::move(s);
    }
  }
  RunOptions run = request.run;
  if (absl::Status s = ReadSubstitutes(request.substitute_files, &run); !s.ok()) return s;
  eval::ReplicaOptions options;
  options.eval = EvalOptionsOf(run);
  options.replica_count = request.replica_count;
  options.partition_count = request.partition_count;
  std::vector<int64_t> evaluations(n, 0);
  options.on_instruction = [&](int64_t rank, const eval::InstructionEvent&) {
    ++evaluations[rank];
    return absl::OkStatus();
  };
  std::vector<const hlo::HloModule*> modules;
  std::vector<std::vector<eval::Value>> inputs;
  for (RunProgram& p : programs) {
    modules.push_back(p.module.get());
    inputs.push_back(p.inputs);
  }
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<eval::Value>> out = eval::EvaluateReplicas(modules, inputs, options);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.ok()) return out.status();
  inputs.clear();
  for (size_t r = 0; r < n; ++r) {
    RunReport rep;
    rep.module_name = programs[r].module->proto().name();
    rep.module_source = programs[r].module_source;
    rep.inputs = programs[r].inputs.size();
    rep.borrowed_inputs = programs[r].borrowed_inputs;
    rep.result.numerics = run.numerics;
    rep.result.outputs = eval::FlattenOutputs((*out)[r]);
    rep.result.instructions = evaluations[r];
    rep.result.seconds = report.seconds;
    OutputOptions o = request.output;
    if (o.format == OutputFormat::kNpyFiles) o.prefix = absl::StrCat(o.prefix, "rank", r, "/");
    if (absl::Status s = WriteOutputs(rep.result.outputs, o, &rep.files); !s.ok()) {
      return Prefix(s, absl::StrCat("rank ", r));
    }
    if (request.on_file) {
      for (const WrittenFile& f : rep.files) request.on_file(f);
    }
    std::unique_ptr<TensorSet> ran = ValueTensorSet(
        rep.result.outputs, absl::StrCat("rank ", r, " (", Sv(eval::NumericsName(run.numerics)),
                                         " numerics)"));
    std::vector<TensorStatsEntry> stats;
    if (absl::Status s = AppendTensorStats(*ran, "run", "outputs", &stats); !s.ok()) return s;
    for (const TensorStatsEntry& e : stats) {
      rep.outputs.push_back({e.index, e.info.type, e.info.dims, e.stats});
    }
    if (request.check == RunCheck::kCompare) {
      absl::StatusOr<CompareReport> c = CompareTensorSets(*ran, *recorded[r], request.compare);
      if (!c.ok()) return Prefix(c.status(), absl::StrCat("rank ", r));
      rep.compare = *std::move(c);
    }
    rep.peak_rss_bytes = PeakRssBytes();
    report.ranks.push_back(std::move(rep));
  }
  return report;
}

std::string RanksReportJson(const RanksReport& r) {
  json j;
  json ranks = json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    ranks.push_back({{"rank", i},
                     {"id", r.ids[i]},
                     {"path", r.paths[i]},
                     {"report", json::parse(RunReportJson(r.ranks[i]))}});
  }
  j["ranks"] = std::move(ranks);
  j["seconds"] = r.seconds;
  j["pass"] = r.pass();
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string RanksReportText(const RanksReport& r) {
  std::string out;
  absl::StrAppend(&out, "replayed ", r.ranks.size(), r.ranks.size() == 1 ? " rank" : " ranks",
                  " together\n");
  bool compared = false;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    absl::StrAppend(&out, "\nrank ", i, " (", r.paths[i], "):\n", RunReportText(r.ranks[i]));
    compared |= r.ranks[i].compare.has_value();
  }
  if (compared) {
    size_t passed = 0;
    for (const RunReport& k : r.ranks) passed += k.pass();
    absl::StrAppend(&out, "\n", r.pass() ? "PASS" : "FAIL", ": ", passed, " of ", r.ranks.size(),
                    r.ranks.size() == 1 ? " rank passes" : " ranks pass", "\n");
  }
  return out;
}

}  // namespace decomposed::run
