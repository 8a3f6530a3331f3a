// decomposed run SNAPSHOT [--output-prefix P | --to npz OUT.npz]
//     [--numerics xla|f32|neuron] [--compare [SIDE]] [--three-way]
//     [compare's options] [--dump DIR [--dump-filter REGEX]]
//     [--substitute NAME=FILE.npy]... [--threads N] [--json]
//     [--progress|--quiet]
// decomposed run --module MODULE --inputs SIDE [--inputs SIDE ...] [...]
// decomposed run SNAPSHOT --bisect [--against xla|f32|neuron|DIR] [--top N]
//     [--numerics ...] [compare's --mode, --rtol, --atol] [--json]
// decomposed run RANK0 RANK1 ... | --module MODULE --ranks SIDE...
//     [--replicas R --partitions P] [--output-prefix P] [--compare]
//     [compare's options] [--numerics ...] [--json]
// mpirun -np P decomposed run --mpi RANK0 ... RANKN-1 [the same options]  (P <= N)
//
// --bisect: divergence origins (run/replay.h, BisectSnapshot; docs/eval.md
// §9): exit 0 when no output differs and no origin is found, 1 otherwise,
// 2 usage or any error. Several snapshots (or --ranks): the ranks of one
// tensor-parallel step replayed together (RunRanks; docs/eval.md §10),
// each rank's outputs under P/rank<i>/, --compare per rank. With --mpi,
// each process of the MPI job replays its share of the ranks
// (RunRanksOverMpi: contiguous blocks, eval::MpiRankShare), writes their
// P/rank<i>/ and prints their reports.
//
// Replays a snapshot on the CPU (run/run.h; docs/eval.md, "decomposed
// run"): the module evaluated on the inputs, the outputs written as unpack
// writes them, and with --compare checked against the snapshot's recorded
// outputs (or SIDE) by compare's rules, or with --three-way by the
// three-way comparison (BASELINE: the f32 run, EXPECTED: this run, ACTUAL:
// the recorded outputs or SIDE).
// Exit codes (the table in command.h): 0 done; 1 bad input, an I/O error,
// an input that does not fit its parameter, an op that cannot run; 2
// usage. With --compare or --three-way, compare's: 0 pass, 1 a tensor
// fails or is missing, 2 usage or any error.
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "decomposed/analysis/plots.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/run/replay.h"
#include "decomposed/run/run.h"
#include "progress.h"

namespace decomposed::cli {
namespace {

struct State {
  std::vector<std::string> snapshots;  // one, or the ranks of one step
  std::string snapshot;
  std::string module;
  std::vector<std::string> inputs;
  std::string output_prefix;
  std::vector<std::string> to;  // {"npz", "OUT.npz"}
  eval::Numerics numerics = eval::Numerics::kXla;
  std::vector<std::string> compare;  // --compare [SIDE]: none or the side
  bool three_way = false;
  CompareMode mode = CompareMode::kTorch;
  std::optional<double> rtol, atol;
  bool equal_nan = false;
  int64_t show = 5;
  bool allow_dtype_mismatch = false;
  std::vector<std::string> dtypes;
  SnapshotType snapshot_type = SnapshotType::kAuto;
  ThreeWayOptions tw;
  std::string plot;
  size_t plot_points = kDefaultScatterPoints;
  std::string dump, dump_filter;
  std::vector<std::string> substitutes;
  int threads = 0;
  bool json = false;
  bool progress = false, quiet = false;
  bool mpi = false;  // the ranks as the processes of an MPI job
  // --bisect
  bool bisect = false;
  std::string against = "f32";
  int64_t top = 0;
  // the ranks of one step
  std::vector<std::string> ranks;
  int64_t replicas = 0, partitions = 0;
};

bool Given(const CLI::App& app, const char* name) {
  const CLI::Option* o = app.get_option_no_throw(name);
  return o != nullptr && o->count() > 0;
}

// --bisect: the divergence origins of the snapshot's module.
// --substitute NAME=FILE.npy, each parsed (usage error when malformed).
std::vector<std::pair<std::string, std::string>> SubstituteFiles(const State& st) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& spec : st.substitutes) {
    absl::StatusOr<std::pair<std::string, std::string>> p = run::ParseSubstitute(spec);
    if (!p.ok()) throw CLI::ValidationError("--substitute", std::string(p.status().message()));
    files.push_back(*p);
  }
  return files;
}

int RunBisectCommand(CLI::App& app, State& st) {
  for (const char* n : {"--compare", "--three-way", "--output-prefix", "--to", "--dump",
                        "--plot", "--show", "--allow-dtype-mismatch", "--inputs"}) {
    if (Given(app, n)) throw CLI::ValidationError(n, "does not apply with --bisect");
  }
  if (st.snapshot.empty() && st.module.empty()) {
    throw CLI::ValidationError("SNAPSHOT", "a snapshot to bisect");
  }
  run::BisectRequest req;
  req.source.snapshot = st.snapshot;
  req.source.module = st.module;
  req.load.snapshot_type = st.snapshot_type;
  req.substitute_files = SubstituteFiles(st);
  req.run.numerics = st.numerics;
  req.run.threads = st.threads;
  req.against = st.against;
  req.compare.mode = st.mode;
  req.compare.rtol = st.rtol;
  req.compare.atol = st.atol;
  absl::StatusOr<BisectReport> r = run::BisectSnapshot(req);
  if (!r.ok()) {
    std::cerr << CommandName(app) << ": " << r.status().message() << "\n";
    return ExitCode(ExitStyle::kQuestion, Outcome::kUnreadable);
  }
  const size_t top = static_cast<size_t>(st.top);
  std::cout << (st.json ? BisectReportJson(*r, top) : BisectReportText(*r, top));
  bool differs = !r->origins.empty();
  for (const OutputVerdict& o : r->outputs) differs |= o.differs;
  return ExitCode(ExitStyle::kQuestion, differs ? Outcome::kNo : Outcome::kSuccess);
}

// Several snapshots, or --ranks: the ranks of one step, replayed together.
int RunRanksCommand(CLI::App& app, State& st) {
  for (const char* n : {"--three-way", "--to", "--dump", "--plot", "--bisect", "--inputs"}) {
    if (Given(app, n)) throw CLI::ValidationError(n, "does not apply to the ranks of one step");
  }
  if (!st.compare.empty() && !st.compare[0].empty()) {
    throw CLI::ValidationError("--compare", "with ranks, each is compared with its own "
                                            "recorded outputs (no SIDE)");
  }
  if (!st.ranks.empty() && !st.snapshots.empty()) {
    throw CLI::ValidationError("--ranks", "either snapshots or --ranks, not both");
  }
  if (Given(app, "--replicas") != Given(app, "--partitions")) {
    throw CLI::ValidationError("--replicas", "--replicas and --partitions go together");
  }
  const bool compare_given = Given(app, "--compare");
  if (!compare_given) {
    for (const char* n : {"--mode", "--rtol", "--atol", "--equal-nan", "--show",
                          "--allow-dtype-mismatch"}) {
      if (Given(app, n)) throw CLI::ValidationError(n, "applies with --compare");
    }
  }
  run::RanksRequest req;
  req.ranks = st.ranks.empty() ? st.snapshots : st.ranks;
  req.module = st.module;  // empty: each rank is a snapshot
  req.load.snapshot_type = st.snapshot_type;
  TensorSetOptions so;
  if (absl::Status s = ParseDtypeOptions(st.dtypes, &so); !s.ok()) {
    throw CLI::ValidationError("--dtype", std::string(s.message()));
  }
  req.load.dtypes = so.dtypes;
  req.load.dtype = so.dtype;
  req.substitute_files = SubstituteFiles(st);
  req.run.numerics = st.numerics;
  req.run.threads = st.threads;
  req.replica_count = st.replicas;
  req.partition_count = st.partitions;
  if (Given(app, "--output-prefix")) {
    req.output.format = run::OutputFormat::kNpyFiles;
    req.output.prefix = st.output_prefix;
  }
  if (compare_given) {
    req.check = run::RunCheck::kCompare;
    req.compare.mode = st.mode;
    req.compare.rtol = st.rtol;
    req.compare.atol = st.atol;
    req.compare.equal_nan = st.equal_nan;
    req.compare.show = static_cast<size_t>(st.show);
    req.compare.allow_dtype_mismatch = st.allow_dtype_mismatch;
  }
  const ExitStyle style = compare_given ? ExitStyle::kQuestion : ExitStyle::kTool;
  absl::StatusOr<run::RanksReport> r = st.mpi ? run::RunRanksOverMpi(req) : run::RunRanks(req);
  int code = 0;
  if (!r.ok()) {
    std::cerr << CommandName(app) << ": " << r.status().message() << std::endl;
    code = ExitCode(style, Outcome::kUnreadable);
  } else {
    std::cout << (st.json ? run::RanksReportJson(*r) : run::RanksReportText(*r)) << std::flush;
    code = ExitCode(style, r->pass() ? Outcome::kSuccess : Outcome::kNo);
  }
  // Every process of an MPI job ends MPI before it exits, failed or not
  // (mpirun reports a process that does not as aborted), and after it has
  // written its report: MPI_Finalize waits for the others, so none is
  // stopped by mpirun, for another's failure, before it has said its own.
  if (st.mpi) eval::FinishMpi();
  return code;
}

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("SNAPSHOT", st->snapshots,
                 "a decomposed or classic snapshot: its module, inputs and recorded outputs "
                 "(several: the ranks of one tensor-parallel step, replayed together)");
  app.add_option("--module", st->module,
                 "the module to run instead of the snapshot's: an HloModuleProto, an "
                 "HloProto, a snapshot or HLO text (detected by content)");
  app.add_option("--inputs", st->inputs,
                 "the inputs instead of the snapshot's: a snapshot, an unpack directory, a "
                 "bundle call directory, an .npz or .npy files (repeat: their tensors in order)")
      ->allow_extra_args(false);
  CLI::Option* prefix = app.add_option(
      "--output-prefix", st->output_prefix,
      "write the outputs as P + snapshot_output<j>.npy (plain concatenation: out/ writes "
      "out/snapshot_output0.npy)");
  app.add_option("--to", st->to, "npz OUT.npz: write the outputs as one stored .npz")
      ->expected(2)
      ->allow_extra_args(false)
      ->type_name("npz OUT.npz")
      ->excludes(prefix);
  AddEnumOption(app, "--numerics", &st->numerics, eval::kNumericsNames,
                "the evaluator's numerics (docs/eval.md §3)");
  app.add_option("--compare", st->compare,
                 "compare the outputs with the snapshot's recorded outputs, or with SIDE "
                 "(any form compare reads)")
      ->expected(0, 1)
      ->allow_extra_args(false)
      ->type_name("[SIDE]");
  app.add_flag("--three-way", st->three_way,
               "three-way comparison: BASELINE the f32 run, EXPECTED this run, ACTUAL the "
               "recorded outputs (or --compare SIDE)");
  AddEnumOption(app, "--mode", &st->mode, kCompareModeNames, "compare's closeness rule");
  app.add_option("--rtol", st->rtol, "relative tolerance (overrides the mode's default)")
      ->check(kNonNegativeReal);
  app.add_option("--atol", st->atol, "absolute tolerance (overrides the mode's default)")
      ->check(kNonNegativeReal);
  app.add_flag("--equal-nan", st->equal_nan, "two NaNs match");
  app.add_option("--show", st->show, "mismatches to list per tensor")
      ->check(kNonNegative)
      ->capture_default_str();
  app.add_flag("--allow-dtype-mismatch", st->allow_dtype_mismatch,
               "compare tensors of different types in f64");
  app.add_option("--dtype", st->dtypes,
                 "true type of void (|V1, |V2) .npy tensors of --inputs and SIDE: TYPE for "
                 "all, or INDEX=TYPE (INDEX counts the inputs across --inputs; bf16, "
                 "f8e4m3fn, ...)")
      ->allow_extra_args(false);
  AddSnapshotTypeOption(app, &st->snapshot_type);
  ThreeWayOptions& o = st->tw;
  app.add_option("--bc-threshold", o.bc_threshold, "three-way: the Bhattacharyya threshold")
      ->check(kUnitInterval)
      ->capture_default_str();
  app.add_option("--max-sigma-ratio", o.max_sigma_ratio, "three-way: ... or the sigma-ratio")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--max-linf-ratio", o.max_linf_ratio, "three-way: the worst L-inf ratio")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--max-l2-ratio", o.max_l2_ratio, "three-way: the worst L2 ratio")
      ->check(kNonNegativeReal)
      ->capture_default_str();
  app.add_option("--bins", o.bins, "three-way: histogram bins of the coefficient")
      ->check(CLI::Range(size_t{1}, kMaxThreeWayBins))
      ->capture_default_str();
  app.add_option("--quantiles", o.quantiles, "three-way: QQ-plot quantile levels")
      ->check(CLI::Range(size_t{2}, kMaxThreeWayQuantiles))
      ->capture_default_str();
  app.add_option("--plot", st->plot,
                 "write an SVG picture of the check: the error histograms and QQ-plot "
                 "(--three-way), else the scatter of the recorded against the run's outputs");
  app.add_option("--plot-points", st->plot_points, "scatter points sampled per tensor")
      ->check(CLI::Range(size_t{1}, kMaxScatterPoints))
      ->capture_default_str();
  CLI::Option* dump = app.add_option(
      "--dump", st->dump,
      "write every evaluated instruction's value as DIR/<computation>/<instruction>.npy "
      "and DIR/index.json");
  app.add_option("--dump-filter", st->dump_filter,
                 "dump only the instructions whose name or op_name matches this regex")
      ->needs(dump);
  app.add_option("--substitute", st->substitutes,
                 "NAME=FILE.npy: use that value for instruction NAME instead of evaluating it")
      ->allow_extra_args(false);
  app.add_option("--threads", st->threads, "worker threads (0: one per core)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_flag("--json", st->json, "print the report as JSON");
  AddProgressOptions(app, &st->progress, &st->quiet);
  CLI::Option* bisect = app.add_flag(
      "--bisect", st->bisect,
      "find the divergence origins: evaluate in lockstep with --against and report the "
      "instructions where the runs part (docs/eval.md §9)");
  app.add_option("--against", st->against,
                 "with --bisect: the reference, a numerics mode (xla, f32, neuron) or a "
                 "directory of per-instruction values (a --dump)")
      ->needs(bisect)
      ->capture_default_str();
  app.add_option("--top", st->top, "with --bisect: the N origins that add the most (0: all)")
      ->check(kNonNegative)
      ->needs(bisect);
  app.add_option("--ranks", st->ranks,
                 "the ranks of one tensor-parallel step, each rank's inputs (with --module: "
                 "bundle call directories, ...) or snapshot, replayed together")
      ->allow_extra_args(false);
  app.add_option("--replicas", st->replicas,
                 "with ranks: the replica count (with --partitions; default: replica-id and "
                 "partition-id are both the rank)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--partitions", st->partitions, "with ranks: the partition count")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_flag("--mpi", st->mpi,
               "with ranks, under mpirun -np P (P at most the rank count): each process replays "
               "its share of the ranks, the collectives over MPI (a build with "
               "DECOMPOSED_WITH_MPI)");

  return [st, &app]() -> int {
    // --- usage --------------------------------------------------------------
    if (st->snapshots.size() == 1) st->snapshot = st->snapshots[0];
    if (st->snapshots.size() > 1 || !st->ranks.empty() || st->mpi) {
      return RunRanksCommand(app, *st);
    }
    if (st->bisect) return RunBisectCommand(app, *st);
    for (const char* n : {"--replicas", "--partitions"}) {
      if (Given(app, n)) throw CLI::ValidationError(n, "applies to the ranks of one step");
    }
    const bool compare_given = Given(app, "--compare");
    // `run --compare X.dhs`: the one path is the snapshot (a side needs a
    // snapshot or --module to run).
    if (st->snapshot.empty() && st->module.empty() && st->compare.size() == 1) {
      st->snapshot = st->compare[0];
      st->compare.clear();
    }
    if (st->snapshot.empty() && st->module.empty()) {
      throw CLI::ValidationError("SNAPSHOT", "a snapshot, or --module MODULE --inputs SIDE");
    }
    if (st->snapshot.empty() && st->inputs.empty()) {
      throw CLI::ValidationError("--inputs", "--module without a SNAPSHOT needs --inputs SIDE");
    }
    const bool checking = compare_given || st->three_way;
    if (!checking) {
      for (const char* n : {"--mode", "--rtol", "--atol", "--equal-nan", "--show",
                            "--allow-dtype-mismatch", "--plot", "--plot-points"}) {
        if (Given(app, n)) throw CLI::ValidationError(n, "applies with --compare or --three-way");
      }
    }
    if (!st->three_way) {
      for (const char* n : {"--bc-threshold", "--max-sigma-ratio", "--max-linf-ratio",
                            "--max-l2-ratio", "--bins", "--quantiles"}) {
        if (Given(app, n)) throw CLI::ValidationError(n, "applies only with --three-way");
      }
    } else {
      for (const char* n : {"--mode", "--rtol", "--atol", "--show", "--allow-dtype-mismatch",
                            "--plot-points"}) {
        if (Given(app, n)) {
          throw CLI::ValidationError(n, "is a two-sided compare option: it has no meaning with "
                                        "--three-way");
        }
      }
      if (st->numerics == eval::Numerics::kF32) {
        throw CLI::ValidationError("--numerics", "--three-way measures this run against the "
                                                 "f32 run: use xla or neuron");
      }
    }
    run::RunRequest req;
    req.source.snapshot = st->snapshot;
    req.source.module = st->module;
    req.source.input_sides = st->inputs;
    TensorSetOptions so;
    if (absl::Status s = ParseDtypeOptions(st->dtypes, &so); !s.ok()) {
      throw CLI::ValidationError("--dtype", std::string(s.message()));
    }
    so.snapshot_type = st->snapshot_type;
    req.load.snapshot_type = so.snapshot_type;
    req.load.dtypes = so.dtypes;
    req.load.dtype = so.dtype;
    req.check_set = so;
    req.substitute_files = SubstituteFiles(*st);
    if (!st->to.empty()) {
      if (st->to[0] != "npz") {
        throw CLI::ValidationError(
            "--to", absl::StrCat("unknown format '", st->to[0], "' (npz is the one format)"));
      }
      req.output.format = run::OutputFormat::kNpz;
      req.output.npz_path = st->to[1];
    } else if (Given(app, "--output-prefix")) {
      req.output.format = run::OutputFormat::kNpyFiles;
      req.output.prefix = st->output_prefix;
    }
    req.run.numerics = st->numerics;
    req.run.threads = st->threads;
    req.run.dump_dir = st->dump;
    req.run.dump_filter = st->dump_filter;
    if (!st->dump_filter.empty()) {
      try {
        std::regex check(st->dump_filter, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw CLI::ValidationError("--dump-filter",
                                   absl::StrCat("not a regular expression: ", e.what()));
      }
    }
    if (st->three_way) {
      req.check = run::RunCheck::kThreeWay;
      req.three_way = st->tw;
      req.three_way.equal_nan = st->equal_nan;
    } else if (compare_given) {
      req.check = run::RunCheck::kCompare;
      req.compare.mode = st->mode;
      req.compare.rtol = st->rtol;
      req.compare.atol = st->atol;
      req.compare.equal_nan = st->equal_nan;
      req.compare.show = static_cast<size_t>(st->show);
      req.compare.allow_dtype_mismatch = st->allow_dtype_mismatch;
    }
    req.check_side = st->compare.empty() ? "" : st->compare[0];
    std::unique_ptr<ScatterTap> tap;
    if (req.check == run::RunCheck::kCompare && !st->plot.empty()) {
      tap = std::make_unique<ScatterTap>(st->plot_points);
      req.scatter = tap.get();
    }
    // Progress: instructions of the entry done, shown by default on a
    // terminal for inputs of 64 MiB or more, as the other commands do.
    ProgressMode mode = ProgressModeOf(st->progress, st->quiet);
    if (mode == ProgressMode::kAuto) {
      std::vector<std::string> paths = st->inputs;
      if (!st->snapshot.empty()) paths.push_back(st->snapshot);
      if (TotalFileBytes(paths) < (uint64_t{64} << 20)) mode = ProgressMode::kOff;
    }
    ProgressLine progress("run", 0, mode, 0, ProgressUnit{"instructions"});
    req.run.on_progress = [&](int64_t done, int64_t total) {
      progress.SetTotal(static_cast<uint64_t>(total));
      progress.Update(static_cast<uint64_t>(done));
    };
    // Exit codes: a check answers with compare's.
    const ExitStyle style = checking ? ExitStyle::kQuestion : ExitStyle::kTool;
    auto fail = [&](const absl::Status& s) {
      progress.Done();
      std::cerr << CommandName(app) << ": " << s.message() << "\n";
      return ExitCode(style, Outcome::kUnreadable);
    };
    absl::StatusOr<run::RunReport> r = run::RunSnapshot(req);
    if (!r.ok()) return fail(r.status());
    progress.Done();
    std::cout << (st->json ? run::RunReportJson(*r) : run::RunReportText(*r));
    if (!st->plot.empty()) {
      absl::Status s = r->three_way ? WriteSvgFile(st->plot, ThreeWaySvg(*r->three_way))
                                    : WriteSvgFile(st->plot, ScatterSvg(*r->compare, tap->Take()));
      if (!s.ok()) return fail(s);
    }
    return ExitCode(style, r->pass() ? Outcome::kSuccess : Outcome::kNo);
  };
}

const Registrar kRegistrar({"run",
                            "replay a snapshot on the CPU: evaluate its module on its inputs, "
                            "write the outputs, compare them with the recorded ones; "
                            "--bisect finds where two runs part; several snapshots are the "
                            "ranks of one step, replayed together",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
