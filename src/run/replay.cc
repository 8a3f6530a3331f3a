// Bisect and the ranks of one step over the run layer (run/replay.h).
#include "decomposed/npy/json_text.h"
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
#include "run_internal.h"

namespace decomposed::run {
namespace {

using json = nlohmann::ordered_json;

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
  if (absl::Status s = ValidateCompareOptions(request.compare); !s.ok()) return s;
  absl::StatusOr<RunProgram> program = LoadProgram(request.source, request.load);
  if (!program.ok()) return program.status();
  RunOptions run = request.run;
  if (absl::Status s = ReadSubstitutes(request.substitute_files, &run); !s.ok()) return s;
  BisectOptions options;
  options.actual = EvalOptionsOf(run);
  options.reference = options.actual;
  options.compare = request.compare;
  absl::StatusOr<BisectReport> report;
  if (std::optional<eval::Numerics> mode = eval::NumericsFromName(request.against)) {
    options.reference.numerics = *mode;
    report = Bisect(*program->module, program->inputs, options);
  } else {
    absl::StatusOr<std::unique_ptr<InstructionValues>> values =
        OpenValueDirectory(request.against);
    if (!values.ok()) return values.status();
    report = BisectAgainst(*program->module, program->inputs, **values, options);
  }
  // The module is freed on return: no pointer into it leaves.
  if (report.ok()) {
    for (DivergenceOrigin& o : report->origins) o.instruction = nullptr;
  }
  return report;
}

namespace {

// The ranks' programs in rank order (OrderRankFiles), with their paths and
// ids; the programs of ranks [first, end) only are loaded (the others'
// entries stay empty: an MPI process needs its own share).
struct LoadedRanks {
  std::vector<RunProgram> programs;
  std::vector<std::string> paths;
  std::vector<int64_t> ids;
};

absl::StatusOr<LoadedRanks> LoadRanks(const RanksRequest& request, int64_t first = 0,
                                      int64_t end = -1) {
  if (request.output.format == OutputFormat::kNpz) {
    return absl::InvalidArgumentError(
        "the ranks' outputs are written as .npy files under rank<i>/, not as one .npz");
  }
  absl::StatusOr<std::vector<capture::RankFile>> order = capture::OrderRankFiles(request.ranks);
  if (!order.ok()) return order.status();
  LoadedRanks loaded;
  for (size_t r = 0; r < order->size(); ++r) {
    const capture::RankFile& f = (*order)[r];
    loaded.paths.push_back(f.path);
    loaded.ids.push_back(f.id);
    loaded.programs.emplace_back();
    if (static_cast<int64_t>(r) < first || (end >= 0 && static_cast<int64_t>(r) >= end)) continue;
    RunSource src;
    if (request.module.empty()) {
      src.snapshot = f.path;
    } else {
      src.module = request.module;
      src.input_sides = {f.path};
    }
    absl::StatusOr<RunProgram> p = LoadProgram(src, request.load);
    if (!p.ok()) return Prefix(p.status(), absl::StrCat("rank ", f.rank));
    loaded.programs.back() = *std::move(p);
  }
  return loaded;
}

// Rank r's recorded outputs (kCompare), opened before the work: a rank
// without them fails first.
absl::StatusOr<std::unique_ptr<TensorSet>> RecordedOutputs(const RanksRequest& request,
                                                           RunProgram& program, int64_t r,
                                                           const std::string& path) {
  if (request.check != RunCheck::kCompare) return std::unique_ptr<TensorSet>();
  if (!program.recorded_outputs) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", r, " (", path, "): no recorded outputs to compare with"));
  }
  absl::StatusOr<std::unique_ptr<TensorSet>> s = program.recorded_outputs();
  if (!s.ok()) return Prefix(s.status(), absl::StrCat("rank ", r));
  return s;
}

eval::ReplicaOptions ReplicaOptionsOf(const RanksRequest& request, const RunOptions& run) {
  eval::ReplicaOptions options;
  options.eval = EvalOptionsOf(run);
  options.replica_count = request.replica_count;
  options.partition_count = request.partition_count;
  return options;
}

// Rank r's report from its result: outputs written under <prefix>rank<r>/,
// their stats, the comparison with `recorded` (when not null).
absl::StatusOr<RunReport> FinishRank(const RanksRequest& request, const RunOptions& run,
                                     const RunProgram& program, const eval::Value& out,
                                     int64_t r, int64_t instructions, double seconds,
                                     TensorSet* recorded) {
  RunReport rep;
  rep.module_name = program.module->proto().name();
  rep.module_source = program.module_source;
  rep.inputs = program.inputs.size();
  rep.borrowed_inputs = program.borrowed_inputs;
  rep.result.numerics = run.numerics;
  rep.result.outputs = eval::FlattenOutputs(out);
  rep.result.instructions = instructions;
  rep.result.seconds = seconds;
  OutputOptions o = request.output;
  if (o.format == OutputFormat::kNpyFiles) o.prefix = absl::StrCat(o.prefix, "rank", r, "/");
  if (absl::Status s = WriteOutputs(rep.result.outputs, o, &rep.files); !s.ok()) {
    return Prefix(s, absl::StrCat("rank ", r));
  }
  if (request.on_file) {
    for (const WrittenFile& f : rep.files) request.on_file(f);
  }
  std::unique_ptr<TensorSet> ran = ValueTensorSet(
      rep.result.outputs,
      absl::StrCat("rank ", r, " (", Sv(eval::NumericsName(run.numerics)), " numerics)"));
  std::vector<TensorStatsEntry> stats;
  if (absl::Status s = AppendTensorStats(*ran, "run", "outputs", &stats); !s.ok()) return s;
  for (const TensorStatsEntry& e : stats) {
    rep.outputs.push_back({e.index, e.info.type, e.info.dims, e.stats});
  }
  if (recorded != nullptr) {
    absl::StatusOr<CompareReport> c = CompareTensorSets(*ran, *recorded, request.compare);
    if (!c.ok()) return Prefix(c.status(), absl::StrCat("rank ", r));
    rep.compare = *std::move(c);
  }
  rep.peak_rss_bytes = PeakRssBytes();
  return rep;
}

}  // namespace

absl::StatusOr<RanksReport> RunRanks(const RanksRequest& request) {
  if (absl::Status s = ValidateCompareOptions(request.compare); !s.ok()) return s;
  absl::StatusOr<LoadedRanks> loaded = LoadRanks(request);
  if (!loaded.ok()) return loaded.status();
  std::vector<RunProgram>& programs = loaded->programs;
  RanksReport report;
  report.paths = loaded->paths;
  report.ids = loaded->ids;
  const size_t n = programs.size();
  std::vector<std::unique_ptr<TensorSet>> recorded(n);
  for (size_t r = 0; r < n; ++r) {
    absl::StatusOr<std::unique_ptr<TensorSet>> s =
        RecordedOutputs(request, programs[r], static_cast<int64_t>(r), report.paths[r]);
    if (!s.ok()) return s.status();
    recorded[r] = *std::move(s);
  }
  RunOptions run = request.run;
  if (absl::Status s = ReadSubstitutes(request.substitute_files, &run); !s.ok()) return s;
  eval::ReplicaOptions options = ReplicaOptionsOf(request, run);
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
    absl::StatusOr<RunReport> rep =
        FinishRank(request, run, programs[r], (*out)[r], static_cast<int64_t>(r), evaluations[r],
                   report.seconds, recorded[r].get());
    if (!rep.ok()) return rep.status();
    report.ranks.push_back(*std::move(rep));
  }
  return report;
}

absl::StatusOr<RanksReport> RunRanksOverMpi(const RanksRequest& request) {
  if (absl::Status s = ValidateCompareOptions(request.compare); !s.ok()) return s;
  absl::StatusOr<eval::MpiProcess> mpi = eval::StartMpi();
  if (!mpi.ok()) return mpi.status();
  const int64_t ranks = static_cast<int64_t>(request.ranks.size());
  const eval::RankShare share = eval::MpiRankShare(mpi->rank, mpi->size, ranks);
  // Each process loads its own share only. Every step's error is agreed on
  // below, the job's size too (processes started with different
  // arguments may disagree on it), so none waits for one that stopped.
  absl::Status ready;
  absl::StatusOr<LoadedRanks> loaded = absl::UnknownError("not loaded");
  std::vector<std::unique_ptr<TensorSet>> recorded;
  RunOptions run = request.run;
  if (ranks < mpi->size) {
    ready = absl::InvalidArgumentError(absl::StrCat(
        "expected at least one rank per MPI process: the job has ", mpi->size,
        " processes (mpirun -np ", mpi->size, ") and ", ranks,
        ranks == 1 ? " rank was given" : " ranks were given"));
  } else {
    loaded = LoadRanks(request, share.first, share.end);
    ready = loaded.status();
    for (int64_t r = share.first; ready.ok() && r < share.end; ++r) {
      absl::StatusOr<std::unique_ptr<TensorSet>> s =
          RecordedOutputs(request, loaded->programs[r], r, loaded->paths[r]);
      if (!s.ok()) {
        ready = s.status();
      } else {
        recorded.push_back(*std::move(s));
      }
    }
    if (ready.ok()) ready = ReadSubstitutes(request.substitute_files, &run);
  }
  // Every process learns whether all are ready before any evaluates, so
  // none waits in a collective for a process that could not start.
  if (absl::Status all = eval::AllProcessesOk(ready); !all.ok()) return all;
  RanksReport report;
  report.first_rank = share.first;
  report.rank_count = ranks;
  report.over_mpi = true;
  report.process = mpi->rank;
  report.processes = mpi->size;
  eval::ReplicaOptions options = ReplicaOptionsOf(request, run);
  std::vector<int64_t> evaluations(static_cast<size_t>(share.end - share.first), 0);
  options.on_instruction = [&](int64_t rank, const eval::InstructionEvent&) {
    ++evaluations[rank - share.first];
    return absl::OkStatus();
  };
  std::vector<const hlo::HloModule*> modules;
  std::vector<std::vector<eval::Value>> inputs;
  for (int64_t r = share.first; r < share.end; ++r) {
    report.paths.push_back(loaded->paths[r]);
    report.ids.push_back(loaded->ids[r]);
    modules.push_back(loaded->programs[r].module.get());
    inputs.push_back(loaded->programs[r].inputs);
  }
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<eval::Value>> out =
      eval::EvaluateRanksOverMpi(modules, inputs, ranks, options);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.ok()) return out.status();
  inputs.clear();
  for (int64_t r = share.first; r < share.end; ++r) {
    const size_t i = static_cast<size_t>(r - share.first);
    absl::StatusOr<RunReport> rep =
        FinishRank(request, run, loaded->programs[r], (*out)[i], r, evaluations[i],
                   report.seconds, recorded[i].get());
    if (!rep.ok()) return rep.status();
    report.ranks.push_back(*std::move(rep));
  }
  return report;
}

std::string RanksReportJson(const RanksReport& r) {
  json j;
  json ranks = json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    ranks.push_back({{"rank", r.first_rank + static_cast<int64_t>(i)},
                     {"id", r.ids[i]},
                     {"path", r.paths[i]},
                     {"report", json::parse(RunReportJson(r.ranks[i]))}});
  }
  j["ranks"] = std::move(ranks);
  j["rank_count"] = r.over_mpi ? r.rank_count : static_cast<int64_t>(r.ranks.size());
  j["over_mpi"] = r.over_mpi;
  if (r.over_mpi) {
    j["process"] = r.process;
    j["processes"] = r.processes;
  }
  j["seconds"] = r.seconds;
  j["pass"] = r.pass();
  return JsonText(j);
}

std::string RanksReportText(const RanksReport& r) {
  std::string out;
  if (r.over_mpi) {
    const int64_t last = r.first_rank + static_cast<int64_t>(r.ranks.size()) - 1;
    if (last == r.first_rank) {
      absl::StrAppend(&out, "replayed rank ", r.first_rank);
    } else {
      absl::StrAppend(&out, "replayed ranks ", r.first_rank, " to ", last);
    }
    absl::StrAppend(&out, " of ", r.rank_count, " as process ", r.process, " of ", r.processes,
                    " of an MPI job\n");
  } else {
    absl::StrAppend(&out, "replayed ", r.ranks.size(), r.ranks.size() == 1 ? " rank" : " ranks",
                    " together\n");
  }
  bool compared = false;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    absl::StrAppend(&out, "\nrank ", r.first_rank + static_cast<int64_t>(i), " (", r.paths[i],
                    "):\n", RunReportText(r.ranks[i]));
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
