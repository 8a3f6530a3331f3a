// Replays beyond one run, for `decomposed run --bisect` and `decomposed run
// RANK0 RANK1 ...` (and Python's decomposed.run): the library calls the
// command and the package are shells over (docs/eval.md §9, §10, §12).
//
//   BisectSnapshot  the program (LoadProgram) evaluated in lockstep under
//                   the asked numerics against another numerics mode, or
//                   once against a directory of per-instruction values (a
//                   `--dump`, a device's), and its divergence origins
//                   (analysis/divergence.h).
//   RunRanks        the ranks of one tensor-parallel step (snapshots, one
//                   execution's device<D> files, or with a module the
//                   rank<G>/call<N> bundles of one forward), put in rank
//                   order (capture/ranks.h), replayed together
//                   (eval/replicas.h), each rank's outputs written under
//                   P/rank<i>/ and compared with its recorded outputs.
//
// Errors: LoadProgram's for any rank (naming its file), the replay's
// ("rank R: ..."), a rank without recorded outputs to compare with, an
// unreadable substitute; OrderRankFiles' for files of two steps.
//
// Example:
//   decomposed::run::BisectRequest b;
//   b.source.snapshot = "x.decomposed_hlo_snapshot";
//   b.against = "f32";
//   absl::StatusOr<decomposed::BisectReport> r = decomposed::run::BisectSnapshot(b);
//
//   decomposed::run::RanksRequest q;
//   q.ranks = {"d/m-process000000-executable000003-device000001-execution000007.inputs.decomposed_hlo_snapshot",
//              "d/m-process000000-executable000003-device000000-execution000007.inputs.decomposed_hlo_snapshot"};
//   q.output.format = decomposed::run::OutputFormat::kNpyFiles;
//   q.output.prefix = "out/";   // out/rank0/snapshot_output0.npy, ...
//   absl::StatusOr<decomposed::run::RanksReport> t = decomposed::run::RunRanks(q);
#ifndef DECOMPOSED_RUN_REPLAY_H_
#define DECOMPOSED_RUN_REPLAY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/divergence.h"
#include "decomposed/run/run.h"

namespace decomposed::run {

// --- Divergence origins ------------------------------------------------------------

struct BisectRequest {
  RunSource source;
  LoadOptions load;
  // The run under test: its numerics, threads and limits; substitutes and
  // custom calls apply to both sides (an op neither can run needs its value
  // on both). Dumps and progress are not used.
  RunOptions run;
  std::vector<std::pair<std::string, std::string>> substitute_files;
  // "xla", "f32" or "neuron": the reference run's numerics; anything else:
  // a directory of per-instruction values (OpenValueDirectory).
  std::string against = "f32";
  // The rule and tolerances (BisectOptions' defaults: torch, NaN equal to
  // NaN).
  CompareOptions compare = BisectOptions().compare;
};

absl::StatusOr<BisectReport> BisectSnapshot(const BisectRequest& request);

// --- The ranks of one step -----------------------------------------------------------

struct RanksRequest {
  // Each rank's snapshot, or with `module` each rank's inputs (any side
  // compare reads: a bundle call directory, ...), in any order: they are
  // put in rank order by name (OrderRankFiles).
  std::vector<std::string> ranks;
  std::string module;
  LoadOptions load;
  // Every rank's numerics, threads (per rank; 0: the cores divided among
  // them), limits, substitutes and custom calls. Dumps are not used.
  RunOptions run;
  std::vector<std::pair<std::string, std::string>> substitute_files;
  // 0 and 0: flat (replica-id and partition-id are the rank).
  int64_t replica_count = 0;
  int64_t partition_count = 0;
  // kNpyFiles: rank i's outputs as <prefix>rank<i>/snapshot_output<j>.npy
  // (all or nothing per rank). kNpz is refused.
  OutputOptions output;
  // kCompare: each rank's outputs against its snapshot's recorded outputs.
  RunCheck check = RunCheck::kNone;
  CompareOptions compare;
  std::function<void(const WrittenFile&)> on_file;
};

struct RanksReport {
  // The rank of paths[0] / ranks[0]: 0 for RunRanks; this process's first
  // rank for RunRanksOverMpi, whose report holds this process's ranks.
  int64_t first_rank = 0;
  // RunRanksOverMpi: the job's rank count, and this process's place in
  // the job (MPI_COMM_WORLD's rank and size).
  bool over_mpi = false;
  int64_t rank_count = 0;
  int64_t process = 0;
  int64_t processes = 1;
  std::vector<std::string> paths;  // in rank order
  std::vector<int64_t> ids;        // the device or global rank of each
  std::vector<RunReport> ranks;    // per rank: outputs, stats, files, compare
  double seconds = 0;              // the replay's wall time
  bool pass() const {
    for (const RunReport& r : ranks) {
      if (!r.pass()) return false;
    }
    return true;
  }
};

absl::StatusOr<RanksReport> RunRanks(const RanksRequest& request);

// The same replay with the ranks spread over the processes of an MPI job
// (`mpirun -np P decomposed run --mpi RANK0 ... RANKN-1`, P <= N,
// docs/eval.md §10.5): every process of the job calls it with the same
// request; the process of MPI_COMM_WORLD rank p loads its share of the
// ranks alone (eval::MpiRankShare of the files in rank order as RunRanks
// puts them), evaluates them with eval::EvaluateRanksOverMpi, writes
// <prefix>rank<r>/ and compares each, and returns a report of those ranks
// (first_rank the share's first). Initialises MPI when nothing has
// (eval::StartMpi); the caller calls eval::FinishMpi at the end. Errors:
// kInvalidArgument when the job has more processes than ranks; a process
// that cannot load its ranks fails and the others fail with "another
// process could not start its ranks" before any evaluates; kUnimplemented
// without MPI in the build.
absl::StatusOr<RanksReport> RunRanksOverMpi(const RanksRequest& request);

// {"ranks": [{"rank", "id", "path", "report": <RunReportJson>}],
// "rank_count", "over_mpi", "seconds", "pass"}, and over MPI "process"
// and "processes".
std::string RanksReportJson(const RanksReport& report);
// "rank 0 (PATH):" and that rank's RunReportText, for each rank; then the
// verdict when compared.
std::string RanksReportText(const RanksReport& report);

}  // namespace decomposed::run

#endif  // DECOMPOSED_RUN_REPLAY_H_
