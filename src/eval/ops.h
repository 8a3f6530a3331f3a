// Private to src/eval: what every op family shares (the context an op runs
// in, allocation against the byte limit, conversions, errors) and each
// family's entry point. One .cc per family: elementwise.cc, shape_ops.cc,
// indexing.cc, reductions.cc, sort.cc, dot_conv.cc, control_flow.cc,
// batch_norm.cc, collectives.cc, neuron_custom_calls.cc.
#ifndef DECOMPOSED_SRC_EVAL_OPS_H_
#define DECOMPOSED_SRC_EVAL_OPS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/eval/custom_call.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/eval/thread_pool.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"
#include "decomposed/status.h"

namespace decomposed::eval::internal {

class Evaluator;
class ReplicaHub;
struct Ctx;

// A rank's place in a replay of several ranks (eval/replicas.h,
// replicas.cc); absent (nullptr) in a single run.
struct RankState {
  ReplicaHub* hub = nullptr;
  int64_t rank = 0;
  // Collectives this rank has reached: the n-th of every rank meet.
  int64_t collectives = 0;
};
// replica-id and partition-id of the rank (replicas.cc).
int64_t RankReplicaId(const RankState& r);
int64_t RankPartitionId(const RankState& r);
// Collectives over several ranks: exchange with the other ranks
// (replicas.cc). Precondition: ctx.rank.
absl::StatusOr<Value> EvalReplicatedCollective(Ctx& ctx, const hlo::HloInstruction& i,
                                               std::span<const Value* const> ops);

// What an op runs with.
struct Ctx {
  const NumericsPolicy* policy = nullptr;
  ThreadPool* pool = nullptr;
  uint64_t max_bytes = Array::kNoLimit;
  Evaluator* evaluator = nullptr;
  int depth = 0;
  // Evaluating a computation of scalars on arrays (a reducer applied to
  // many elements at once): elementwise ops take their dims from their
  // operands, rank-0 operands broadcast.
  bool lifted = false;
  int64_t replica_count = 1;
  int64_t max_loop_iterations = 1'000'000;
  const CustomCallRegistry* custom_calls = nullptr;
  RankState* rank = nullptr;
};

// Evaluate, as one rank of a replay (rank non-null) or alone.
absl::StatusOr<Value> EvaluateOnRank(const hlo::HloModule& module,
                                     std::span<const Value> inputs,
                                     const EvalOptions& options, RankState* rank);

using Operands = std::span<const Value* const>;

// --- Shapes -----------------------------------------------------------
std::vector<int64_t> DimsOf(const xla::ShapeProto& s);
PrimitiveType TypeOf(const xla::ShapeProto& s);
bool IsTupleShape(const xla::ShapeProto& s);
std::string DimsString(std::span<const int64_t> dims);
std::string ShapeProtoString(const xla::ShapeProto& s);
int64_t Product(std::span<const int64_t> dims);
// Row-major strides of `dims`, in elements.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

// The storage type of the instruction's declared (array) result.
PrimitiveType ResultType(const Ctx& ctx, const hlo::HloInstruction& instr);

// --- Errors (the driver prefixes the instruction and computation) ----
absl::Status Invalid(std::string_view what);
absl::Status Unsupported(std::string_view what);
// "expected <expected>, found <found>"
absl::Status Expected(std::string_view expected, std::string_view found);

// --- Arrays -----------------------------------------------------------
absl::StatusOr<Array> Alloc(const Ctx& ctx, PrimitiveType t,
                            std::vector<int64_t> dims);
// `a` contiguous (a copy of a strided view, threaded).
absl::StatusOr<Array> Materialize(const Ctx& ctx, const Array& a);
// Elementwise conversion of any array type to any array type (XLA's
// convert: float -> int saturates, NaN -> 0; to narrow floats round to
// nearest even). Strided inputs are read in place.
absl::StatusOr<Array> ConvertArray(const Ctx& ctx, const Array& a,
                                   PrimitiveType to);
// Narrow floats to f32 (a strided view of a small base keeps its strides);
// other types as they are.
absl::StatusOr<Array> ToCompute(const Ctx& ctx, const Array& a);
// Copies `src` (any strides) into the contiguous `dst` of the same dims
// and element size, threaded.
void CopyStrided(const Ctx& ctx, const Array& src, char* dst);
// Normalises sub-byte integer containers in place (after integer ops that
// computed in the 8-bit container).
void WrapSubByte(Array& a);

// The value of operand `i` as an array, or an error naming it.
absl::StatusOr<const Array*> ArrayOperand(Operands ops, int64_t i);

// --- Computations -----------------------------------------------------
// Runs a called computation (call, while, conditional, fusion, a reducer
// or comparator on scalars).
absl::StatusOr<Value> CallComputation(Ctx& ctx, const hlo::HloComputation& c,
                                      std::span<const Value> args);
// True when every instruction of `c` is elementwise on scalars (or a
// parameter, constant, tuple, get-tuple-element): it may then run lifted
// (Ctx::lifted) on arrays of any one shape.
bool IsLiftable(const hlo::HloComputation& c);
// Runs a liftable computation on arrays (all of one dims, or rank 0).
absl::StatusOr<Value> CallLifted(Ctx& ctx, const hlo::HloComputation& c,
                                 std::span<const Value> args);

// A computation that is one binary op on its two parameters, in order or
// swapped (add, multiply, maximum, minimum, and, or, xor): the op, else
// kUnknown. `param1_only`: the computation returns parameter 1 (scatter's
// overwrite).
hlo::HloOpcode SimpleBinaryReducer(const hlo::HloComputation& c,
                                   bool* param1_only = nullptr);

// --- Families -----------------------------------------------------------
absl::StatusOr<Value> EvalElementwise(Ctx& ctx, const hlo::HloInstruction& i,
                                      Operands ops);
// Binary elementwise op `op` on two arrays (lifted broadcasting rules), for
// reducers and custom calls: result type per the op.
absl::StatusOr<Array> ApplyBinary(Ctx& ctx, hlo::HloOpcode op, const Array& a,
                                  const Array& b);
absl::StatusOr<Array> ApplyUnary(Ctx& ctx, hlo::HloOpcode op, const Array& a);

absl::StatusOr<Value> EvalShapeOp(Ctx& ctx, const hlo::HloInstruction& i,
                                  Operands ops);
// The array of a constant instruction (cached by the evaluator).
absl::StatusOr<Value> EvalConstant(Ctx& ctx, const hlo::HloInstruction& i);
absl::StatusOr<Value> EvalIndexing(Ctx& ctx, const hlo::HloInstruction& i,
                                   Operands ops);
absl::StatusOr<Value> EvalReduction(Ctx& ctx, const hlo::HloInstruction& i,
                                    Operands ops);
absl::StatusOr<Value> EvalSort(Ctx& ctx, const hlo::HloInstruction& i,
                               Operands ops);
absl::StatusOr<Value> EvalDotConv(Ctx& ctx, const hlo::HloInstruction& i,
                                  Operands ops);
absl::StatusOr<Value> EvalControlFlow(Ctx& ctx, const hlo::HloInstruction& i,
                                      Operands ops);
absl::StatusOr<Value> EvalBatchNorm(Ctx& ctx, const hlo::HloInstruction& i,
                                    Operands ops);
absl::StatusOr<Value> EvalCollective(Ctx& ctx, const hlo::HloInstruction& i,
                                     Operands ops);
// An async collective start's value: (the operand, or a tuple of the
// operands; `result`; then each further element of the declared tuple, a
// context, as zeros).
absl::StatusOr<Value> StartTuple(const Ctx& ctx, const hlo::HloInstruction& i,
                                 Operands ops, Value result);
absl::StatusOr<Value> EvalCustomCall(Ctx& ctx, const hlo::HloInstruction& i,
                                     Operands ops);

// Top k along the last dimension: tuple(values, indices of `index_type`),
// largest (or smallest) first, ties by lower index, NaN largest.
absl::StatusOr<Value> TopKOf(Ctx& ctx, const Array& x, int64_t k, bool largest,
                             PrimitiveType index_type);

// Dot of two contiguous arrays as a batched matrix product, for custom
// calls and the attention-style paths: [B, M, K] x [B, K, N] -> [B, M, N]
// in the policy's dot compute type.
absl::StatusOr<Array> BatchedMatmul(Ctx& ctx, const Array& lhs,
                                    const Array& rhs, int64_t batch, int64_t m,
                                    int64_t k, int64_t n,
                                    PrimitiveType result_type);

}  // namespace decomposed::eval::internal

#endif  // DECOMPOSED_SRC_EVAL_OPS_H_
