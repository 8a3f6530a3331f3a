// compare and stats over whole TensorSets: the library calls behind
// `decomposed compare` and `decomposed stats`, with their text and JSON
// reports. docs/compare.md documents the rules and the JSON schema.
//
// CompareTensorSets pairs tensors by index. A tensor present on one side
// only is `missing`; differing dims are `shape_mismatch`; differing element
// types are `dtype_mismatch` unless options.allow_dtype_mismatch, which
// compares the values in f64. Each pair is streamed: the expected side's
// decoder runs on a second thread and feeds a bounded pipe
// (io/chunk_pipe.h), the actual side's runs on the calling thread, and the
// comparator takes equal element counts from both. Memory stays bounded by
// the pipe and the decoders' own buffers, whatever the tensor sizes.
//
// Errors: an unreadable tensor on either side ends the comparison with its
// status (the frame, offset and file are in the message); the CLI exits 2.
//
// JSON: CompareReportJson gives
//   {"mode", "pass", "tensors": [{"index", "status", "expected": {"dtype",
//    "shape"}, "actual": {...}, "rtol", "atol", "equal_nan", "elements",
//    "mismatches", "max_abs_error", "max_abs_error_index", "max_rel_error",
//    "max_rel_error_index", "mean_abs_error", "rms_error", "cosine",
//    "expected_nan", "actual_nan", "expected_inf", "actual_inf",
//    "first_mismatches": [{"index", "expected", "actual"}]}]}
// dtypes are XLA's lower-case names; a metric with no value is null; an
// infinite one is the string "inf"; complex values are [re, im].
// StatsReportJson gives {"tensors": [{"source", "set", "index", "dtype",
//   "shape", "elements", "nan", "first_nan_index", "pos_inf", "neg_inf",
//   "zeros", "min", "max", "mean", "std"}]}.
//
// Example:
//   auto e = decomposed::OpenTensorSet("cpu_run/", {});
//   auto a = decomposed::OpenTensorSet("neuron.decomposed", {});
//   absl::StatusOr<decomposed::CompareReport> r =
//       decomposed::CompareTensorSets(**e, **a, {});
//   std::cout << decomposed::CompareReportText(*r);
//   return r->pass ? 0 : 1;
#ifndef DECOMPOSED_ANALYSIS_REPORT_H_
#define DECOMPOSED_ANALYSIS_REPORT_H_

#include <cstddef>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/compare.h"
#include "decomposed/analysis/stats.h"
#include "decomposed/analysis/tensor_set.h"

namespace decomposed {

enum class TensorVerdict : uint8_t {
  kPass, kFail, kMissing, kShapeMismatch, kDtypeMismatch,
};
std::string_view TensorVerdictName(TensorVerdict v);  // "pass", "shape_mismatch", ...

struct TensorComparison {
  size_t index = 0;
  TensorVerdict verdict = TensorVerdict::kPass;
  std::optional<TensorInfo> expected, actual;  // absent: missing on that side
  Tolerance tolerance;
  CompareMetrics metrics;  // only for pass / fail
};

struct CompareReport {
  CompareOptions options;
  bool pass = true;
  std::vector<TensorComparison> tensors;
};

// Checks what the user asked for: rtol and atol, when set, finite numbers
// >= 0 (a NaN tolerance would pass or fail everything silently).
absl::Status ValidateCompareOptions(const CompareOptions& options);

// Checks `options` (ValidateCompareOptions), then compares the tensors.
absl::StatusOr<CompareReport> CompareTensorSets(TensorSet& expected,
                                                TensorSet& actual,
                                                const CompareOptions& options);
std::string CompareReportJson(const CompareReport& r);
std::string CompareReportText(const CompareReport& r);

struct TensorStatsEntry {
  std::string source;  // the path given
  std::string set;     // "inputs", "outputs", "tensors"
  size_t index = 0;
  TensorInfo info;
  TensorStats stats;
};

// Called with the number of tensor bytes just read (per window or chunk),
// for progress displays.
using BytesFn = std::function<void(uint64_t)>;

// Stats of every tensor of `set`, appended to `out`. `on_bytes`, when set,
// is called as the tensors' bytes are read.
absl::Status AppendTensorStats(TensorSet& set, const std::string& source,
                               const std::string& set_name,
                               std::vector<TensorStatsEntry>* out,
                               const BytesFn& on_bytes = nullptr);
// Which lists of a file that holds inputs and outputs (a snapshot, an
// unpack directory) AppendPathStats reads: both (inputs first), or one, as
// `stats --inputs` / `--outputs` ask (compare's --inputs picks the list to
// compare the same way). The other forms hold one list, always read.
enum class StatsLists : uint8_t { kBoth, kInputs, kOutputs };

// Stats of every tensor at `path` (any form OpenTensorSet reads), appended
// to `out`: a snapshot's or unpack directory's inputs ("inputs") then
// outputs ("outputs"), or the one of them `lists` names; the other forms'
// tensors ("tensors"). `options` gives the dtypes and the snapshot form;
// its `inputs` is ignored. What `decomposed stats` runs for each path.
absl::Status AppendPathStats(const std::string& path, const TensorSetOptions& options,
                             std::vector<TensorStatsEntry>* out,
                             const BytesFn& on_bytes = nullptr,
                             StatsLists lists = StatsLists::kBoth);
// True when any entry holds a NaN or an infinity.
bool AnyNonFinite(const std::vector<TensorStatsEntry>& entries);
// Why `stats --fail-on-nonfinite` fails: "3 of 5 tensors hold a NaN or an
// Inf; the first: x.dhs outputs 0 (2 NaN, first at [1,0]; 1 +Inf; 0 -Inf)";
// empty when AnyNonFinite is false.
std::string NonFiniteSummary(const std::vector<TensorStatsEntry>& entries);
std::string StatsReportJson(const std::vector<TensorStatsEntry>& entries);
std::string StatsReportText(const std::vector<TensorStatsEntry>& entries);

// XLA's lower-case name of a type: "f32", "bf16", "pred", ...
std::string LowerTypeName(PrimitiveType t);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_REPORT_H_
