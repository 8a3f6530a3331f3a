// Module validation: what XLA's HloModule::CreateFromProto and HloVerifier
// check of an HloModuleProto, on the HloModule view (hlo/module.h), with
// every problem an absl::Status (kInvalidArgument) that names where it is
// (the module, the computation, the instruction: DescribeInstruction) and
// says what was expected and what was found:
//
//   computation "main.5", instruction "add.3" (id 3): expected shape
//   f32[2], found f32[3]
//   computation "main.5", instruction "reduce.7" (id 7): reduce: expected a
//   computation of 2 parameters, found (f32[], f32[], f32[]) -> f32[]
//
// HloModule::Create has already checked what the view needs (ids per
// computation, operands and called computations that exist, operands
// before users, a root). ValidateModule checks the rest, in this order
// (docs/hlo.md §1.1 has each rule and its message):
//   1. the module: a name; computation names unique; instruction names
//      unique across the module and not empty; ids not negative;
//   2. the call graph: no computation calls itself, directly or through
//      others; callees come before their callers in the computation list;
//      the entry is not a fusion computation;
//   3. each computation: parameter numbers 0..n-1, each once; no cycle
//      through control predecessors;
//   4. each instruction: a well-formed shape (CheckShapeWellFormed); an
//      opcode this library knows (unless allow_unknown_opcodes); the
//      operand count its opcode takes; the called computations it takes,
//      with the arity each needs (a reducer of 2N parameters, a while
//      condition and body of one, one parameter per conditional branch,
//      ...); its attributes (comparison direction and type, fusion kind,
//      tuple index, replica groups, source-target pairs, custom-call
//      aliasing and layout constraints, async pairs); floating-point
//      operands of one precision (unless allow_mixed_precision); and,
//      unless check_shapes is off, its shape equal to what its opcode's
//      rule gives (InferInstructionShape, hlo/shape_inference.h), element
//      types and dimensions compared, layouts not (a constant's literal
//      layout is compared with the instruction's when both have one, as
//      XLA's loader does);
//   5. the entry's program shape (host_program_shape, and the entry
//      computation's program_shape when present) equal to its parameters
//      and root, layouts compared only when both sides have one; the
//      input/output alias entries in range; the schedule, when the module
//      has one, a valid order of each computation it lists.
// An instruction that fails a check of step 4 is not also checked against
// its shape rule, and one whose operand's shape is malformed is not
// checked against its rule at all (the operand is reported), so one defect
// gives one message.
//
// Nothing here reads array data beyond a constant's value count, allocates
// in proportion to a dimension, or recurses in proportion to the module's
// size (the call graph and control edges are walked iteratively).
//
// Example:
//   absl::StatusOr<std::unique_ptr<decomposed::hlo::HloModule>> m =
//       decomposed::hlo::HloModule::Create(std::move(proto));
//   if (!m.ok()) return m.status();
//   if (absl::Status s = decomposed::hlo::ValidateModule(**m); !s.ok())
//     return s;                               // the first problem
//   for (const absl::Status& p : decomposed::hlo::ValidateModuleAll(**m))
//     std::cerr << p.message() << "\n";       // every problem
#ifndef DECOMPOSED_HLO_VALIDATE_H_
#define DECOMPOSED_HLO_VALIDATE_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "decomposed/hlo/module.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

struct ValidateOptions {
  // Check each instruction's shape against its opcode's rule. Off: the
  // structure, names, numbering, operand counts, called computations and
  // attributes only.
  bool check_shapes = true;
  // Let floating-point operands of different precisions meet where XLA's
  // verifier refuses them by default (its allow_mixed_precision), and
  // compare result shapes ignoring floating-point precision.
  bool allow_mixed_precision = false;
  // Accept opcodes this library does not know (HloOpcode::kUnknown, a
  // newer XLA's), checking only their structure.
  bool allow_unknown_opcodes = false;
  // ValidateModuleAll stops after this many problems (0: no limit).
  size_t max_problems = 1000;
};

// The first problem, or OkStatus for a valid module.
absl::Status ValidateModule(const HloModule& module,
                            const ValidateOptions& options = {});

// Every problem (at most options.max_problems), in the order of the steps
// above and, within a step, of the module's computations and instructions;
// empty for a valid module.
std::vector<absl::Status> ValidateModuleAll(const HloModule& module,
                                            const ValidateOptions& options = {});

// HloModule::Create and then ValidateModule: the view's problem or the
// first validation problem.
absl::Status ValidateModuleProto(xla::HloModuleProto proto,
                                 const ValidateOptions& options = {});

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_VALIDATE_H_
