// The CPU evaluator: runs an HloModule (hlo/module.h) on input values and
// returns the entry's result, with XLA's semantics for every op it knows
// (docs/eval.md lists them, with the numerics modes and what cannot be
// replayed).
//
// Contract:
//   * `inputs[i]` is entry parameter i: its element type and dims must be
//     the parameter's (a value stored as f32 is accepted for a bf16/f16
//     parameter in Numerics::kF32); a mismatch is kInvalidArgument naming
//     the parameter, the expected and the found shape. Inputs are used
//     without a copy (Array::Borrow a snapshot's mapped bytes).
//   * The result is the root's value: a tuple for a tuple root. In kF32,
//     arrays declared bf16/f16 come back as f32.
//   * Each instruction is evaluated once, in the order of its computation
//     (operands first); each value is released after its last use, so that
//     memory holds the live set (plus the evaluator's scratch). Inputs
//     given by span stay with the caller; inputs given by value
//     (std::vector<Value>&&) are released after their last use too.
//   * Errors name the opcode or custom-call target, the instruction and its
//     computation, what was expected and what was found; an instruction the
//     evaluator cannot run (kUnimplemented: an NKI kernel, a GPSIMD custom
//     op, rng-bit-generator, a collective over groups of several ranks, an
//     unknown opcode, a constant whose data a text dump left out) says the
//     way out: EvalOptions::substitutes (`--substitute NAME=FILE.npy`).
//   * Bad modules never crash and never allocate what they merely declare:
//     every array is checked against `max_array_bytes` before allocation,
//     while loops against `max_loop_iterations`, call nesting against
//     kMaxCallDepth.
//
// Example:
//   auto module = *decomposed::hlo::HloModule::Create(proto);
//   decomposed::eval::Array x = *decomposed::eval::Array::Allocate(
//       decomposed::PrimitiveType::kF32, {2, 3});
//   for (int i = 0; i < 6; ++i) x.mutable_data<float>()[i] = i;
//   decomposed::eval::EvalOptions options;
//   options.numerics = decomposed::eval::Numerics::kNeuron;
//   options.on_instruction = [](const decomposed::eval::InstructionEvent& e) {
//     std::cout << e.instruction.name() << " " << e.value.ShapeString() << "\n";
//     return absl::OkStatus();
//   };
//   std::vector<decomposed::eval::Value> inputs = {x};
//   absl::StatusOr<decomposed::eval::Value> out =
//       decomposed::eval::Evaluate(*module, inputs, options);
#ifndef DECOMPOSED_EVAL_EVALUATE_H_
#define DECOMPOSED_EVAL_EVALUATE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/eval/custom_call.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"

namespace decomposed::eval {

// Nesting of call, while, conditional, fusion, map and reducer
// computations: valid HLO does not recurse, so this only stops a hostile
// module's call cycle before the stack does.
inline constexpr int kMaxCallDepth = 64;

// What the per-instruction hook sees: after each instruction of any
// computation (inner computations included, once per evaluation: a while
// body's instructions once per iteration).
struct InstructionEvent {
  const hlo::HloInstruction& instruction;
  const Value& value;
  // Nesting depth (0: the entry computation).
  int depth = 0;
  // Wall time of this instruction alone (its called computations included).
  double seconds = 0;
};

struct EvalOptions {
  Numerics numerics = Numerics::kXla;
  // Worker threads for elementwise ops, reductions and copies, and the
  // BLAS's threads; 0: one per core.
  int threads = 0;
  // A while loop that runs more iterations is an error (kResourceExhausted).
  int64_t max_loop_iterations = 1'000'000;
  // An array larger than this is refused before allocation
  // (kResourceExhausted); 0: the machine's physical memory.
  uint64_t max_array_bytes = 0;
  // The number of replicas of the run the module comes from, for
  // collectives with no replica groups (one group of every replica): with 1
  // they are the identity.
  int64_t replica_count = 1;
  // Instruction name -> the value to use instead of evaluating it (its type
  // and dims must be the instruction's; a device capture, for instance).
  std::map<std::string, Value, std::less<>> substitutes;
  // Called after each instruction; a non-OK status stops the run and is
  // returned.
  std::function<absl::Status(const InstructionEvent&)> on_instruction;
  // Custom-call targets; nullptr: BuiltinCustomCalls() (Neuron's).
  const CustomCallRegistry* custom_calls = nullptr;
  // Called after each entry instruction: (done, total).
  std::function<void(int64_t, int64_t)> on_progress;
};

// Runs `module`'s entry computation on `inputs`. The caller keeps the
// inputs, so they stay in memory until it lets them go.
absl::StatusOr<Value> Evaluate(const hlo::HloModule& module,
                               std::span<const Value> inputs,
                               const EvalOptions& options = {});

// The same, taking the inputs (pass std::move(inputs), or a temporary):
// each input is released after its parameter's last use, as every other
// value is, so memory holds the live set from the first instruction on (an
// input is then the parameter's only holder: an update at its last use may
// write it in place, unless it is a snapshot's mapped bytes).
absl::StatusOr<Value> Evaluate(const hlo::HloModule& module,
                               std::vector<Value>&& inputs,
                               const EvalOptions& options = {});
// A braced list ({} for a module without parameters, {x, y}): by value.
inline absl::StatusOr<Value> Evaluate(const hlo::HloModule& module,
                                      std::initializer_list<Value> inputs,
                                      const EvalOptions& options = {}) {
  return Evaluate(module, std::vector<Value>(inputs), options);
}

// An evaluation of the entry computation driven one instruction at a time:
// the base of lockstep tools (analysis/divergence.h runs two of them side by
// side, comparing each instruction's values). Each Step() evaluates the next
// instruction of schedule() exactly as Evaluate would (the same options,
// hook, substitutes and numerics), and releases each value after its last
// use, so memory is the single run's. The instructions of called
// computations (a fusion's, a loop body's) run inside their caller's step.
//
// Contract:
//   * schedule(): the entry instructions the root needs, in the order of
//     the computation (operands first): the order Step() follows.
//   * Step(): evaluates schedule()[steps_done()] and returns it; value()
//     is its value until the next Step() or Finish(). Errors as Evaluate's;
//     after an error, or past the end, Step() is kFailedPrecondition.
//   * Finish(): runs the remaining steps and returns the root's value
//     (once).
//   * The module must outlive the Evaluation; `inputs` are copied (their
//     storage is shared, not duplicated).
//
// Example:
//   auto ev = *decomposed::eval::Evaluation::Start(*module, inputs, options);
//   while (!ev->done()) {
//     absl::StatusOr<const decomposed::hlo::HloInstruction*> i = ev->Step();
//     if (!i.ok()) return i.status();
//     std::cout << (*i)->name() << " " << ev->value().ShapeString() << "\n";
//   }
//   decomposed::eval::Value root = *ev->Finish();
class Evaluation {
 public:
  static absl::StatusOr<std::unique_ptr<Evaluation>> Start(
      const hlo::HloModule& module, std::span<const Value> inputs,
      const EvalOptions& options = {});
  ~Evaluation();
  Evaluation(const Evaluation&) = delete;
  Evaluation& operator=(const Evaluation&) = delete;

  std::span<const hlo::HloInstruction* const> schedule() const;
  int64_t steps_done() const;
  bool done() const;
  absl::StatusOr<const hlo::HloInstruction*> Step();
  // The value of the instruction the last Step() returned (an empty tuple
  // before the first step).
  const Value& value() const;
  absl::StatusOr<Value> Finish();

 private:
  struct Impl;
  explicit Evaluation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The outputs as unpack writes them: one per element of a tuple root,
// else the root itself.
std::vector<Value> FlattenOutputs(const Value& root);

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_EVALUATE_H_
