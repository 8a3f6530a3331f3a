// Collectives of a snapshot's one rank (docs/eval.md §4.8): with every
// replica group of one member (or no groups and a replica_count of 1)
// all-reduce, all-gather, reduce-scatter, all-to-all and
// collective-broadcast are the identity; collective-permute is the
// identity when the rank sends to itself and zeros when no pair targets
// it. Groups of several ranks need the other ranks' data: kUnimplemented,
// unless the run is one rank of a replay of all of them (replicas.cc).
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {

using hlo::HloOpcode;

absl::StatusOr<Value> EvalCollective(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kAllGatherDone || op == HloOpcode::kCollectivePermuteDone) {
    if (ops.size() != 1) return Expected("1 operand", absl::StrCat(ops.size()));
    if (ops[0]->is_tuple() && ops[0]->element_count() >= 2) return ops[0]->element(1);
    return *ops[0];
  }
  if (op == HloOpcode::kAllReduceDone) {
    if (ops.size() != 1) return Expected("1 operand", absl::StrCat(ops.size()));
    return *ops[0];
  }
  // A replay of several ranks exchanges values (replicas.cc).
  if (ctx.rank) return EvalReplicatedCollective(ctx, instr, ops);
  if (ops.empty()) return Expected("at least 1 operand", "none");
  const bool permute = op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart;
  Value result;
  if (permute) {
    bool to_self = false, to_me = false;
    for (const auto& p : instr.proto().source_target_pairs()) {
      if (p.target() == 0) {
        to_me = true;
        to_self |= p.source() == 0;
      }
    }
    if (to_me && !to_self) {
      return Unsupported("a collective-permute into this rank from another rank (its data is not in the snapshot)");
    }
    if (to_self) {
      result = *ops[0];
    } else {
      if (!ops[0]->is_array()) return Unsupported("a collective-permute of a tuple");
      absl::StatusOr<Array> z = Array::Zeros(ops[0]->array().type(), ops[0]->array().dims(), ctx.max_bytes);
      if (!z.ok()) return z.status();
      result = *z;
    }
  } else {
    const std::vector<std::vector<int64_t>> groups = instr.ReplicaGroups();
    bool single = true;
    for (const auto& g : groups) single &= g.size() <= 1;
    if (groups.empty() && ctx.replica_count != 1) {
      return Unsupported(absl::StrCat("a collective over all ", ctx.replica_count,
                                      " replicas (the other ranks' data is not in the snapshot)"));
    }
    if (!single) {
      size_t largest = 0;
      for (const auto& g : groups) largest = std::max(largest, g.size());
      return Unsupported(absl::StrCat("a collective over replica groups of ", largest,
                                      " ranks (the other ranks' data is not in the snapshot)"));
    }
    if (ops.size() == 1) {
      result = *ops[0];
    } else {
      std::vector<Value> e;
      for (const Value* v : ops) e.push_back(*v);
      result = Value::Tuple(std::move(e));
    }
  }
  if (op == HloOpcode::kAllGatherStart || op == HloOpcode::kCollectivePermuteStart) {
    return StartTuple(ctx, instr, ops, std::move(result));
  }
  return result;
}

}  // namespace decomposed::eval::internal
