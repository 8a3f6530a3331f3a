// Divergence origins: where two runs of one module part ways. The module
// is evaluated twice in lockstep, one entry instruction at a time
// (eval::Evaluation), by default in `xla` numerics against `f32`, or once
// against values from elsewhere (a directory of per-instruction .npy
// files: a device dump or an earlier evaluation's), and every
// instruction's value is compared with compare's metrics (compare.h). An
// origin is an instruction whose value is outside its tolerance while
// every operand's value is within its own: the place an error enters the
// graph, rather than the places it flows through. docs/eval.md §9 has the
// rules in full.
//
// Contract:
//   * Both sides run the same schedule (the entry instructions the root
//     needs, in order); each step compares the two values of one
//     instruction and then lets both go, so memory stays within the two
//     single runs' (twice one run), whatever the module's size.
//   * Tolerance: compare's rule (options.compare.mode, torch by default)
//     and its default tolerance for the instruction's type, refined by
//     precision: a value computed from less precise values is held to
//     their tolerance (a float result's tolerance is the loosest of its own
//     type's and its operands'), and a convert to a narrower float type is
//     held to its operand's tolerance (rounding is where its error
//     enters). Integer and PRED results are exact. options.compare.rtol /
//     atol, when set, apply to every instruction instead. NaN equals NaN
//     unless options.compare.equal_nan is false.
//   * Instructions with no reference value (a directory without that
//     file) are not compared: they differ when an operand differs.
//   * What two evaluations must agree on is not compared (exactly; never
//     for an instruction a substitute replaced on either side;
//     docs/eval.md §9.2): an instruction whose operands hold the same bytes
//     on both sides and which both compute the same way (no bf16/f16
//     against an f32 run, no dot, convolution or custom call against a
//     neuron run, the same threads and custom calls) holds the same bytes;
//     a pure data movement (broadcast, reshape, transpose, slice,
//     concatenate, pad, gather, select, tuple, ...) whose operands all
//     agree agrees; parameters and constants agree. A directory's values
//     are always compared.
//   * The report: outputs (the root tuple's operands, or the root) with
//     their verdicts; origins in schedule (topological) order, each with
//     its metrics, its error (RMS error relative to the expected values'
//     RMS; +inf when the NaNs differ or the expected values are all zero),
//     the error it adds (its error minus its operands' largest), op_name
//     and source line from the metadata, and for each output it reaches a
//     path from it to that output through differing instructions where
//     there is one.
//   * Errors: an evaluation's error (as Evaluate's, naming the side), a
//     reference value of other dims than the instruction's, an unreadable
//     .npy (its path named), a directory with no value for any entry
//     instruction.
//
// Example:
//   decomposed::BisectOptions options;              // xla against f32
//   absl::StatusOr<decomposed::BisectReport> r =
//       decomposed::Bisect(*module, inputs, options);
//   std::cout << decomposed::BisectReportText(*r, /*top=*/5);
//   // or against a dump:
//   auto dir = decomposed::OpenValueDirectory("dump/");
//   r = decomposed::BisectAgainst(*module, inputs, **dir, options);
#ifndef DECOMPOSED_ANALYSIS_DIVERGENCE_H_
#define DECOMPOSED_ANALYSIS_DIVERGENCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/compare.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"

namespace decomposed {

// The reference values of a module's instructions when they come from
// somewhere other than a second evaluation.
class InstructionValues {
 public:
  virtual ~InstructionValues() = default;
  // The value of `instr`, or nullopt when there is none. Errors: the value
  // exists but cannot be read, or has other dims than the instruction.
  virtual absl::StatusOr<std::optional<eval::Value>> ValueOf(
      const hlo::HloInstruction& instr) = 0;
  // What the report calls this side ("dump/").
  virtual std::string Describe() const = 0;
};

// Per-instruction values in a directory, as `decomposed run --dump` writes
// them (run/run.h): DIR/index.json lists each instruction's computation,
// name and files (relative to DIR; a tuple's leaves one file each, depth
// first), and the reader follows it: an instruction it does not list has
// no value. Without index.json values are found by name:
// DIR/<computation>/<instruction>.npy, a tuple's leaves
// DIR/<computation>/<instruction>.<k>.npy (nested: .<k>.<j>), names with
// characters other than [A-Za-z0-9_.-] written with '_' as the dump does.
// A `.npy.meta` sidecar gives a void dtype's true type. Errors: DIR is not
// a directory (kNotFound); index.json malformed, larger than 1 GiB, or
// naming a file outside DIR; later, from ValueOf, a file the index lists
// that is missing, an unreadable or malformed .npy (its path named), a
// Fortran-order array (kUnimplemented), dims other than the
// instruction's, a file count other than its array leaves'.
absl::StatusOr<std::unique_ptr<InstructionValues>> OpenValueDirectory(
    const std::string& dir);

struct BisectOptions {
  BisectOptions() {
    actual.numerics = eval::Numerics::kXla;
    reference.numerics = eval::Numerics::kF32;
    compare.equal_nan = true;
    compare.show = 0;
  }
  // The run under test and the reference run (the reference is unused
  // against a directory).
  eval::EvalOptions actual;
  eval::EvalOptions reference;
  // The rule (mode), tolerance overrides, equal_nan.
  CompareOptions compare;
};

// Where a path ends: an output of the module.
struct DivergencePath {
  int64_t output = 0;
  bool output_differs = false;
  // From the origin to the output's instruction, inclusive.
  std::vector<std::string> instructions;
};

struct DivergenceOrigin {
  // Valid while the bisected module lives (null in run::BisectSnapshot's
  // report, whose module is freed on return); the fields below are the
  // report's own.
  const hlo::HloInstruction* instruction = nullptr;
  std::string name;
  std::string opcode;
  std::string shape;            // "f32[2,3]"
  std::vector<int64_t> dims;    // the array's dimensions (empty: a tuple)
  std::string op_name;  // metadata op_name, or ""
  std::string source;   // "file.py:12" from the metadata, or ""
  Tolerance tolerance;
  CompareMetrics metrics;
  double error = 0;        // relative RMS error
  double added_error = 0;  // error minus the largest operand error
  // The operands' errors (each within its tolerance): name, error.
  std::vector<std::pair<std::string, double>> operand_errors;
  std::vector<DivergencePath> paths;  // one per output reached
};

struct OutputVerdict {
  int64_t index = 0;
  std::string instruction;
  bool compared = false;  // false: no reference value (directory)
  bool differs = false;
  double error = 0;
};

struct BisectReport {
  std::string actual;     // "xla"
  std::string reference;  // "f32", or the directory
  CompareMode mode = CompareMode::kTorch;
  int64_t instructions = 0;  // entry instructions evaluated
  int64_t compared = 0;      // compared element by element
  int64_t inferred = 0;      // agreed by construction (see the contract)
  int64_t differ = 0;        // outside their tolerance
  std::vector<OutputVerdict> outputs;
  std::vector<DivergenceOrigin> origins;  // schedule order
};

// Lockstep: `module` under options.actual against options.reference.
absl::StatusOr<BisectReport> Bisect(const hlo::HloModule& module,
                                    std::span<const eval::Value> inputs,
                                    const BisectOptions& options = {});
// One evaluation under options.actual against `reference`.
absl::StatusOr<BisectReport> BisectAgainst(const hlo::HloModule& module,
                                           std::span<const eval::Value> inputs,
                                           InstructionValues& reference,
                                           const BisectOptions& options = {});

// Indices into report.origins, largest added error first (ties: schedule
// order); at most `top` (0: all).
std::vector<size_t> RankOrigins(const BisectReport& report, size_t top = 0);

// JSON: {"actual", "reference", "mode", "instructions", "compared",
// "inferred", "differ", "outputs": [{"index", "instruction", "compared",
// "differs", "error"}], "origins": [{"name", "opcode", "shape", "error",
// "added_error", "op_name", "source", "rtol", "atol", "elements",
// "mismatches", "max_abs_error", "max_abs_error_index", "max_rel_error",
// "rms_error", "cosine", "operands": [{"name", "error"}], "paths":
// [{"output", "output_differs", "instructions": [...]}]}]}; origins in
// schedule order (the `top` largest when top > 0); "inf" for an infinite
// number, null for an absent metric.
std::string BisectReportJson(const BisectReport& report, size_t top = 0);
// The text: a summary line, the outputs that differ, then the origins
// ranked by added error, each with its opcode, shape, metrics, op_name,
// source line, operand errors and path to each output.
std::string BisectReportText(const BisectReport& report, size_t top = 0);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_DIVERGENCE_H_
