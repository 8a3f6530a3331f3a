// Custom-call targets the evaluator can run: a registry of target name ->
// C++ function, with Neuron's targets of known semantics built in
// (docs/eval.md §5: AwsNeuronSoftmax, AwsNeuronRmsNorm, AwsNeuronGelu,
// AwsNeuronTopK, AwsNeuronArgMax, ResizeNearest, the markers, ...).
//
// A function gets the instruction (its result shape, backend_config,
// attributes), its operand values and the run's numerics policy, and
// returns the instruction's value, whose type and dims must be the
// declared result's (the evaluator checks). Errors it returns are reported
// with the instruction and computation prepended.
//
// Example (a target that doubles its operand, F32 only):
//   decomposed::eval::CustomCallRegistry reg = decomposed::eval::BuiltinCustomCalls();
//   reg.Register("MyDouble", [](const decomposed::eval::CustomCallContext& c,
//                               std::span<const decomposed::eval::Value> ops)
//                    -> absl::StatusOr<decomposed::eval::Value> {
//     const decomposed::eval::Array& x = ops[0].array();
//     auto out = decomposed::eval::Array::Allocate(x.type(), x.dims());
//     if (!out.ok()) return out.status();
//     auto cx = x.Contiguous();
//     for (int64_t i = 0; i < x.element_count(); ++i)
//       out->mutable_data<float>()[i] = 2 * cx->data<float>()[i];
//     return decomposed::eval::Value(*out);
//   });
//   options.custom_calls = &reg;
#ifndef DECOMPOSED_EVAL_CUSTOM_CALL_H_
#define DECOMPOSED_EVAL_CUSTOM_CALL_H_

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"

namespace decomposed::eval {

struct CustomCallContext {
  const hlo::HloInstruction& instruction;
  const NumericsPolicy& numerics;
  // Refuse results larger than this (EvalOptions::max_array_bytes).
  uint64_t max_array_bytes = Array::kNoLimit;
  // The evaluator's own state, for the built-in targets (opaque).
  const void* evaluator_state = nullptr;
};

using CustomCallFunction = std::function<absl::StatusOr<Value>(
    const CustomCallContext&, std::span<const Value>)>;

class CustomCallRegistry {
 public:
  // Adds or replaces `target`.
  void Register(std::string target, CustomCallFunction fn) {
    targets_[std::move(target)] = std::move(fn);
  }
  // The function for `target`, or nullptr.
  const CustomCallFunction* Find(std::string_view target) const {
    auto it = targets_.find(target);
    return it == targets_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, CustomCallFunction, std::less<>>& targets() const {
    return targets_;
  }

 private:
  std::map<std::string, CustomCallFunction, std::less<>> targets_;
};

// Neuron's targets of known semantics (hlo-facts §4), as a registry the
// caller may copy and extend.
const CustomCallRegistry& BuiltinCustomCalls();

// Targets that cannot run off the device, with the reason
// ("an NKI kernel compiled for the NeuronCore"), or nullptr. They are
// errors unless the registry has a function for them (a CPU implementation
// of the kernel the caller registered), which is then called.
const char* UnreplayableCustomCallReason(std::string_view target);

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_CUSTOM_CALL_H_
