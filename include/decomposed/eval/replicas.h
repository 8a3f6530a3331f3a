// Replaying the ranks of one tensor-parallel step together: one evaluation
// per rank, run side by side, whose collectives exchange values between
// the ranks as XLA defines them (docs/eval.md §10). A snapshot is one
// rank; the ranks of one execution (libneuronxla's `device<D>` files, a
// bundle's `rank<i>/call<N>`) together are the whole step, and replaying
// them together runs what a single-rank replay must refuse: all-reduce,
// all-gather, reduce-scatter, all-to-all, collective-permute and
// collective-broadcast over groups of several ranks.
//
// Contract:
//   * One thread per rank, each running Evaluate (evaluate.h) on its own
//     module and inputs; replica-id and partition-id are the rank's (see
//     ReplicaLayout). At each collective the participants meet: each posts
//     its operands and takes the other participants'. The n-th collective a
//     rank reaches meets the n-th of every other rank (the ranks run one
//     program), and the participants must agree on it: the same opcode,
//     groups or pairs, channel, dimensions and operand shapes, else
//     kInvalidArgument naming the instruction, both ranks and what each
//     has. A rank that ends (or fails) before a collective another rank
//     waits at ends the replay with an error naming both.
//   * Results are computed by every participant from the same inputs in
//     the same order (the group's order), so the replay is reproducible
//     bit for bit, whatever the threads' timing: an all-reduce of real
//     floats with an add reducer sums in f64 in group order and rounds
//     once (as reduce does, docs/eval.md §3); any other reducer is applied
//     in group order, ((x0 op x1) op x2) ..., per step in the value's type.
//   * Group membership follows XLA's GetParticipatingDevices: the mode
//     from channel_id and use_global_device_ids (CollectiveGroupModeOf);
//     empty replica_groups mean all replicas (or partitions); a rank in no
//     group, or in two, or an id past the count, is kInvalidArgument
//     naming the instruction and the groups.
//   * Errors: the first rank's own error (not one caused by another rank's
//     stop), prefixed "rank R: ".
//
// Example:
//   std::vector<const decomposed::hlo::HloModule*> modules = {m0.get(), m1.get()};
//   std::vector<std::vector<decomposed::eval::Value>> inputs = {{x0}, {x1}};
//   decomposed::eval::ReplicaOptions options;
//   options.eval.numerics = decomposed::eval::Numerics::kXla;
//   absl::StatusOr<std::vector<decomposed::eval::Value>> out =
//       decomposed::eval::EvaluateReplicas(modules, inputs, options);
//   // (*out)[r]: rank r's root value.
#ifndef DECOMPOSED_EVAL_REPLICAS_H_
#define DECOMPOSED_EVAL_REPLICAS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"

namespace decomposed::eval {

// How ranks are numbered against XLA's replicas and partitions.
struct ReplicaLayout {
  int64_t ranks = 1;
  // Both 0 (the default): flat. The ranks are one axis of `ranks` devices;
  // replica-id and partition-id are both the rank, and every collective's
  // groups (and collective-permute's pairs) name ranks, whatever its mode:
  // XLA's rules give exactly that when one of the two counts is 1, which
  // is how Neuron's ranks are laid out (torch-neuronx: replicas;
  // SPMD-partitioned JAX: partitions). Otherwise replica_count *
  // partition_count == ranks, and rank = replica * partition_count +
  // partition (XLA's default device assignment).
  int64_t replica_count = 0;
  int64_t partition_count = 0;
};

// XLA's CollectiveOpGroupMode (collective_ops_utils): what the ids in
// replica_groups are.
enum class CollectiveGroupMode : uint8_t {
  kCrossReplica,              // no channel_id: replica ids, per partition
  kCrossPartition,            // channel_id, no use_global_device_ids
                              // attribute (all-to-all, collective-permute,
                              // collective-broadcast): partition ids, per
                              // replica
  kCrossReplicaAndPartition,  // channel_id, use_global_device_ids false
                              // (all-reduce, all-gather, reduce-scatter):
                              // replica ids, each with all its partitions
  kFlattenedId,               // channel_id and use_global_device_ids:
                              // replica * partition_count + partition
};
std::string_view CollectiveGroupModeName(CollectiveGroupMode m);

// The mode of a collective instruction. Errors: kInvalidArgument for
// use_global_device_ids without a channel_id, or an instruction that is
// not a collective.
absl::StatusOr<CollectiveGroupMode> CollectiveGroupModeOf(
    const hlo::HloInstruction& instr);

// The ranks that take part in `instr` with `rank`, in the order of the
// group (the order results are gathered and reduced in). For
// collective-permute and collective-permute-start: the rank whose value
// this rank receives (empty when no pair targets it). Errors:
// kInvalidArgument naming the instruction, the groups and the rank (a
// rank in no group, in two, an id out of range, a layout that does not
// multiply out, two sources for one target).
absl::StatusOr<std::vector<int64_t>> ParticipatingRanks(
    const hlo::HloInstruction& instr, int64_t rank, const ReplicaLayout& layout);

struct ReplicaOptions {
  // Every rank's evaluation options. `eval.threads` is per rank (0: the
  // machine's cores divided among the ranks, at least 1); `eval.on_instruction`
  // is not used (see on_instruction below).
  EvalOptions eval;
  // Both 0: flat (ReplicaLayout).
  int64_t replica_count = 0;
  int64_t partition_count = 0;
  // Called after each instruction of each rank, one call at a time (the
  // calls of different ranks are serialised, so the hook need not be
  // thread-safe); a non-OK status stops the replay.
  std::function<absl::Status(int64_t rank, const InstructionEvent&)> on_instruction;
  // Per-rank substitutes (empty, or one map per rank), used in addition
  // to eval.substitutes (a rank's own entry wins).
  std::vector<std::map<std::string, Value, std::less<>>> rank_substitutes;
};

// Runs rank r's module (`modules[r]`, or `modules[0]` for every rank when
// one module is given) on `inputs[r]`, all ranks together. Returns each
// rank's root value. Errors: kInvalidArgument for no ranks, a module count
// other than 1 or the rank count, a layout that does not multiply out;
// otherwise as described above.
absl::StatusOr<std::vector<Value>> EvaluateReplicas(
    std::span<const hlo::HloModule* const> modules,
    std::span<const std::vector<Value>> inputs,
    const ReplicaOptions& options = {});

// The ranks of a replay spread over the processes of an MPI job
// (`mpirun -np P`, docs/eval.md §10.5). Process p of P evaluates ranks
// [first, end) of MpiRankShare(p, P, ranks) (contiguous blocks, the first
// ranks % P processes one rank more), one thread per rank, on `modules`
// (1, or one per rank of this process) and `inputs` (one per rank of this
// process); every rank's collectives exchange values with the others,
// through MPI between processes (one MPI_Alltoallv over a communicator of
// the processes the collective's groups join). The results, this process's
// ranks' in rank order, are the same bytes EvaluateReplicas gives those
// ranks (the same exchange rules, the same reduction order). Every process
// of the job must call it, from the thread that initialised MPI with at
// least MPI_THREAD_FUNNELED (MPI_Init_thread; StartMpi does): that thread
// alone calls MPI. The caller finalises MPI after. `rank_substitutes`:
// empty or one per rank of the job. Stricter than EvaluateReplicas: every
// rank of the job meets every other at each collective, so all ranks must
// reach the same collectives in the same order with the same signature
// (in one process, only a collective's participants must agree). Errors:
// the same status on every process (a rank that fails or ends early ends
// the replay on all of them, none is left waiting): the first rank's own
// failure, "rank R: " and its message, else ranks that ended while others
// wait, else ranks that disagree, naming both; kInvalidArgument on every
// process when one's arguments are wrong (fewer ranks than processes, an
// input count other than its share) — that process's reason, the others
// "another process could not start its ranks"; kFailedPrecondition when MPI
// is not initialised so; kUnimplemented when the library was built without
// MPI (ReplicasOverMpiAvailable() false; CMake option DECOMPOSED_WITH_MPI).
absl::StatusOr<std::vector<Value>> EvaluateRanksOverMpi(
    std::span<const hlo::HloModule* const> modules,
    std::span<const std::vector<Value>> inputs, int64_t ranks,
    const ReplicaOptions& options = {});

// The ranks process p of an MPI job of P processes evaluates: [first, end).
// Empty for a process out of range.
struct RankShare {
  int64_t first = 0;
  int64_t end = 0;
};
RankShare MpiRankShare(int64_t process, int64_t processes, int64_t ranks);

// EvaluateRanksOverMpi with one rank per process: this process evaluates
// rank MPI_COMM_WORLD-rank of a job of as many ranks as processes, on its
// module and inputs, and returns its root value.
absl::StatusOr<Value> EvaluateRankOverMpi(const hlo::HloModule& module,
                                          std::span<const Value> inputs,
                                          const ReplicaOptions& options = {});
bool ReplicasOverMpiAvailable();

// This process's place in its MPI job, for a program that replays ranks
// over MPI (decomposed run --mpi): StartMpi initialises MPI when nothing
// has (MPI_Init_thread with MPI_THREAD_FUNNELED; a program that
// initialised it itself keeps it) and gives MPI_COMM_WORLD's rank and size; FinishMpi finalises it when StartMpi
// initialised it, so that mpirun sees every process end cleanly. Both are
// safe to call more than once. kUnimplemented without MPI in the build.
struct MpiProcess {
  int rank = 0;
  int size = 1;
};
absl::StatusOr<MpiProcess> StartMpi();
void FinishMpi();
// Whether every process of the job is ready: each passes its own status;
// `mine` when it is an error, else kFailedPrecondition "another process
// could not start its ranks" when any other process's is, else OK. Every
// process must call it (one all-reduce over MPI_COMM_WORLD).
absl::Status AllProcessesOk(const absl::Status& mine);

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_REPLICAS_H_
