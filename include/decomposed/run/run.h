// Replaying a snapshot on the CPU: the library behind `decomposed run`
// (docs/eval.md, "decomposed run"). A layer above snapshot, eval and
// analysis: it reads the module and the inputs, runs the evaluator, writes
// the outputs as unpack writes them, dumps intermediate values, and checks
// the outputs with compare's rules or the three-way comparison.
//
//   LoadProgram   the module and one value per entry parameter, from a
//                 snapshot (its module and inputs), a module file of any
//                 form (snapshot/module_file.h) and input sides (anything
//                 compare reads: a snapshot, an unpack directory, a bundle
//                 call directory, an .npz, .npy files), or values in memory.
//                 Each input must have its parameter's element type and
//                 dims (any layout: the readers give logical row-major
//                 order); a mismatch names the input and the parameter.
//                 A snapshot's literal whose payload is the array as it is
//                 (fixed width, little endian, row-major, one record,
//                 aligned to its element size) is mapped and used without a
//                 copy (eval::Array::Borrow); any other is decoded once.
//   Execute       one evaluation (eval/evaluate.h) with the options' numerics,
//                 threads, substitutes, custom calls and progress hook; the
//                 time per opcode (self time: an instruction's called
//                 computations are counted under their own instructions);
//                 with a dump directory, every evaluated instruction's value
//                 (or those whose name or op_name matches a regex) as
//                 DIR/<computation>/<instruction>.npy and DIR/index.json.
//   WriteOutputs  P/snapshot_output<j>.npy (one per element of a tuple root,
//                 with a <file>.meta sidecar {"ml_dtype": ...} for the types
//                 NumPy lacks), or one stored .npz of the same entries; all
//                 or nothing: every file is written to a temp file first and
//                 renamed only when all are complete.
//   RunSnapshot   all of it, as the CLI does: load, run, write, and check
//                 (compare: EXPECTED = the run, ACTUAL = the snapshot's
//                 recorded outputs or a side; three-way: BASELINE = the
//                 module run in f32 numerics, EXPECTED = run in the asked
//                 numerics, ACTUAL = the recorded outputs or the side).
//
// Memory: the evaluator frees each value after its last use; inputs mapped
// from a snapshot cost page cache, not heap; outputs stay in memory until
// written (and compared).
//
// Errors are absl::Status naming what failed: the file (and frame and
// offset) of an unreadable input, the input and parameter of a mismatch,
// the instruction and computation of an op that cannot run (with the way
// out: a substitute), the file that cannot be written.
//
// Example:
//   decomposed::run::RunRequest req;
//   req.source.snapshot = "x.decomposed_hlo_snapshot";
//   req.output.format = decomposed::run::OutputFormat::kNpyFiles;
//   req.output.prefix = "out/";
//   req.check = decomposed::run::RunCheck::kCompare;   // the recorded outputs
//   absl::StatusOr<decomposed::run::RunReport> r = decomposed::run::RunSnapshot(req);
//   if (!r.ok()) return r.status();
//   std::cout << decomposed::run::RunReportText(*r);
//   if (!r->pass()) return absl::FailedPreconditionError("outputs differ");
#ifndef DECOMPOSED_RUN_RUN_H_
#define DECOMPOSED_RUN_RUN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/analysis/compare.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/scatter.h"
#include "decomposed/analysis/stats.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/analysis/three_way.h"
#include "decomposed/eval/custom_call.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/snapshot_type.h"

namespace decomposed::run {

// --- The program -------------------------------------------------------------------

// Where the module and the inputs come from. A module: `module_proto`,
// else `module` (a file), else the snapshot's. Inputs: `input_values`,
// else `input_sides`, else the snapshot's.
struct RunSource {
  std::string snapshot;  // a decomposed or classic snapshot ("-": stdin)
  std::string module;    // a module file (ReadModuleFile)
  std::optional<xla::HloModuleProto> module_proto;
  // Each side's tensors in order, the sides one after another (a side's
  // inputs for a snapshot or an unpack directory).
  std::vector<std::string> input_sides;
  std::optional<std::vector<eval::Value>> input_values;
};

struct LoadOptions {
  // The snapshot's form (kAuto: detected), also for a side that is one.
  SnapshotType snapshot_type = SnapshotType::kAuto;
  // Void .npy input types (--dtype) for the sides: by input number,
  // counted across the sides, or for every void one.
  std::map<size_t, PrimitiveType> dtypes;
  std::optional<PrimitiveType> dtype;
  // Decoded inputs larger than this are refused (0: physical memory).
  uint64_t max_array_bytes = 0;
};

struct RunProgram {
  std::shared_ptr<const hlo::HloModule> module;
  std::vector<eval::Value> inputs;  // one per entry parameter
  // "decomposed snapshot x.dhs", "HloModuleProto model.hlo", ...
  std::string module_source;
  // Per input, where it came from: "input 0 of x.dhs", ".npy file a.npy".
  std::vector<std::string> input_labels;
  // Inputs used without a copy (mapped from the file).
  size_t borrowed_inputs = 0;
  // The snapshot's recorded outputs (region [2], a classic `result`), when
  // the program was loaded from a snapshot that has them; null otherwise.
  std::function<absl::StatusOr<std::unique_ptr<TensorSet>>()> recorded_outputs;
};

// Loads the module and the inputs. Errors: the readers' (with the file),
// "no module" / "no inputs" when the source names neither, and for an input
// that does not fit its parameter:
//   input 1 (".npy file b.npy"): expected s32[4] for parameter 1 "y" of
//   computation "main", found f32[4]
// or a count that differs ("expected 2 inputs for computation "main" (x,
// y), found 3").
absl::StatusOr<RunProgram> LoadProgram(const RunSource& source,
                                       const LoadOptions& options = {});

// Checks `inputs` against `module`'s entry parameters, as LoadProgram does;
// the elements of a single tuple parameter, given one by one, become that
// tuple. `labels` name the inputs in errors (may be empty).
absl::Status FitInputs(const hlo::HloModule& module,
                       std::vector<eval::Value>* inputs,
                       const std::vector<std::string>& labels = {});

// The tensors of any side compare reads (OpenTensorSet), as arrays: a
// verbatim run of a file (an .npy's data, a row-major literal) is mapped
// without a copy when aligned to its element size, any other tensor decoded
// into memory. Arrays over `max_bytes` are refused before allocation.
absl::StatusOr<std::vector<eval::Array>> ReadTensorSetArrays(
    TensorSet& set, uint64_t max_bytes = eval::Array::kNoLimit,
    size_t* borrowed = nullptr);

// One .npy file (its .npy.meta sidecar, or `dtype`, gives a void array's
// type) as an array: a substitute's value.
absl::StatusOr<eval::Array> ReadNpyArray(
    const std::string& path, std::optional<PrimitiveType> dtype = std::nullopt);

// "NAME=FILE.npy" -> {NAME, FILE.npy}. kInvalidArgument when there is no
// '=' or either side is empty.
absl::StatusOr<std::pair<std::string, std::string>> ParseSubstitute(
    std::string_view spec);

// --- One evaluation ----------------------------------------------------------------

struct RunOptions {
  eval::Numerics numerics = eval::Numerics::kXla;
  int threads = 0;                      // 0: one per core
  uint64_t max_array_bytes = 0;         // 0: physical memory
  int64_t max_loop_iterations = 1'000'000;
  int64_t replica_count = 1;
  // Instruction name -> its value (EvalOptions::substitutes).
  std::map<std::string, eval::Value, std::less<>> substitutes;
  // Custom-call targets; nullptr: the built-in ones.
  const eval::CustomCallRegistry* custom_calls = nullptr;
  // Dump every evaluated instruction's value under this directory (empty:
  // no dump), or only those whose name or metadata op_name matches
  // `dump_filter` (an ECMAScript regex, searched; empty: all). An
  // instruction evaluated several times (a loop body) is written once, its
  // first value; index.json counts its evaluations.
  std::string dump_dir;
  std::string dump_filter;
  // Entry instructions done of total (EvalOptions::on_progress).
  std::function<void(int64_t, int64_t)> on_progress;
};

struct OpcodeTime {
  std::string opcode;
  int64_t count = 0;     // evaluations
  double seconds = 0;    // self time
};

struct RunResult {
  eval::Numerics numerics = eval::Numerics::kXla;
  // The root's value as unpack writes it: one per element of a tuple root.
  std::vector<eval::Value> outputs;
  std::vector<OpcodeTime> opcodes;  // by self time, largest first
  int64_t instructions = 0;         // evaluations, inner computations included
  double seconds = 0;               // the evaluation's wall time
  int64_t dumped_files = 0;         // .npy files the dump wrote
};

// Runs `program` once. Errors: the evaluator's (naming the instruction and
// computation), a dump file that cannot be written, an invalid dump_filter
// (kInvalidArgument). With a dump, index.json is written also when the
// evaluation fails (it lists what was evaluated before the failure).
absl::StatusOr<RunResult> Execute(const RunProgram& program,
                                  const RunOptions& options = {});
// The same, taking the program's inputs (program.inputs is left empty):
// each input is released after its parameter's last use, as the evaluator
// releases every value, so a decoded input the module has finished with
// stops counting in memory. `decomposed run` runs its last (or only)
// evaluation this way.
absl::StatusOr<RunResult> Execute(RunProgram&& program,
                                  const RunOptions& options = {});

// --- Outputs -----------------------------------------------------------------------

enum class OutputFormat { kNone, kNpyFiles, kNpz };

struct OutputOptions {
  OutputFormat format = OutputFormat::kNone;
  // kNpyFiles: <prefix>snapshot_output<j>.npy, by plain concatenation as
  // unpack names them ("out/" -> out/snapshot_output0.npy).
  std::string prefix = "./";
  std::string npz_path;  // kNpz
  // Create the prefix's (or the archive's) directory when missing.
  bool create_dirs = true;
};

struct WrittenFile {
  std::string path;    // the file, or with kNpz the archive
  std::string entry;   // kNpz: the entry's name, else ""
  int64_t index = -1;  // the output's index (-1: the archive itself)
  bool sidecar = false;  // a <file>.npy.meta
  std::string shape;   // "F32[2,3]"
  std::string descr;   // the .npy descr
  uint64_t bytes = 0;
};

// Writes `outputs` (arrays; a nested tuple is an error naming the output)
// as `options` says, all or nothing. `written` (optional) receives one
// entry per file (with kNpz: per entry, then the archive).
absl::Status WriteOutputs(std::span<const eval::Value> outputs,
                          const OutputOptions& options,
                          std::vector<WrittenFile>* written = nullptr);

// A TensorSet over values in memory (arrays: a tuple element is refused by
// Describe), tensor i labelled "<label> i". What the run's outputs are
// compared through.
std::unique_ptr<TensorSet> ValueTensorSet(std::vector<eval::Value> values,
                                          std::string name,
                                          std::string label = "output");

// --- The whole run -----------------------------------------------------------------

enum class RunCheck { kNone, kCompare, kThreeWay };

struct RunRequest {
  RunSource source;
  LoadOptions load;
  RunOptions run;
  // Substitutes read from .npy files (NAME, FILE.npy), added to
  // run.substitutes (--substitute NAME=FILE.npy).
  std::vector<std::pair<std::string, std::string>> substitute_files;
  OutputOptions output;
  RunCheck check = RunCheck::kNone;
  // The side to check against; empty: the snapshot's recorded outputs.
  std::string check_side;
  TensorSetOptions check_set;  // its dtypes and snapshot form
  CompareOptions compare;
  ThreeWayOptions three_way;
  // The two-sided compare's sides are streamed through this tap when set
  // (the samples of a scatter picture: analysis/scatter.h).
  ScatterTap* scatter = nullptr;
  // Called after each file is committed (the CLI prints it).
  std::function<void(const WrittenFile&)> on_file;
};

struct RunOutputInfo {
  size_t index = 0;
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  TensorStats stats;
};

struct RunReport {
  std::string module_name;
  std::string module_source;
  size_t inputs = 0;
  size_t borrowed_inputs = 0;
  RunResult result;               // the run (its outputs)
  std::optional<RunResult> baseline;  // the f32 run of a three-way check
  // The baseline is the run's own outputs, not a second evaluation
  // (F32RunIsTheRun): instructions and seconds are 0.
  bool baseline_is_run = false;
  std::vector<RunOutputInfo> outputs;
  std::vector<WrittenFile> files;
  uint64_t peak_rss_bytes = 0;    // the process's peak resident set
  std::optional<CompareReport> compare;
  std::optional<ThreeWayReport> three_way;
  // The check passed (true without a check).
  bool pass() const {
    if (compare) return compare->pass;
    if (three_way) return three_way->pass;
    return true;
  }
};

// Whether f32 numerics compute exactly what options.numerics computes for
// this module, so that a three-way check's f32 baseline is the run itself:
// kF32 differs from kXla only in keeping bf16 and f16 as f32
// (eval/numerics.h), so true for kXla or kF32 when no instruction of any
// computation has a bf16 or f16 shape (tuple elements included) and no
// custom-call registry of the caller's is given (its handlers may read
// the mode). Never for kNeuron (its dots round f32 operands to bf16).
bool F32RunIsTheRun(const hlo::HloModule& module, const RunOptions& options);

// Loads, runs, writes and checks, as `decomposed run` does. With kThreeWay
// the module runs twice, in f32 numerics and in the request's, unless
// F32RunIsTheRun (then once, the baseline_is_run). Outputs are
// written only after a successful evaluation (a failed run leaves no output
// file). Errors: LoadProgram's, Execute's, WriteOutputs', the check side's
// (unreadable), kFailedPrecondition for a check against recorded outputs
// the snapshot does not have (or a program not from a snapshot).
absl::StatusOr<RunReport> RunSnapshot(const RunRequest& request);

// The report as JSON: {"module", "source", "numerics", "inputs",
// "borrowed_inputs", "instructions", "seconds", "peak_rss_bytes",
// "outputs": [{"index", "dtype", "shape", "stats": {...}}],
// "opcodes": [{"opcode", "count", "seconds"}], "files": [...],
// "compare": <compare's JSON> | "three_way": <three-way JSON>, "pass"}.
std::string RunReportJson(const RunReport& report);
// The report as text: what ran, each output, the files, the check's report.
std::string RunReportText(const RunReport& report);

// The process's peak resident set size in bytes (getrusage).
uint64_t PeakRssBytes();

}  // namespace decomposed::run

#endif  // DECOMPOSED_RUN_RUN_H_
