// Three-way comparison: is an error the device's, or only the dtype's?
// Neuron's module test guidelines (vLLM-Neuron's module test docs) compare
// a device output (ACTUAL) and a CPU output of the same dtype (EXPECTED)
// against a common FP32 output (BASELINE):
//
//   target error    t = |ACTUAL   - BASELINE|   (per element)
//   reference error r = |EXPECTED - BASELINE|
//   sigma-ratio     RMS(t) / RMS(r)
//   BC              the Bhattacharyya coefficient of the distributions of t
//                   and r (analysis/error_histogram.h: `bins` equal bins
//                   between the smallest and largest error of both)
//   L-inf ratio     max t / max r, per input
//   L2 ratio        ||t||_2 / ||r||_2, per input
//   PASS            (BC >= bc_threshold or sigma-ratio <= max_sigma_ratio)
//                   and worst L-inf ratio < max_linf_ratio
//                   and worst L2 ratio < max_l2_ratio
//
// with the guidelines' defaults 0.99, 1, 5 and 3. An "input" is one tensor
// of one run (one EXPECTED / ACTUAL / BASELINE triple of TensorSets); the
// sigma-ratio and BC of a level are over all its inputs' errors together,
// its L-inf and L2 ratios the worst of its inputs', as
// assert_close_three_way aggregates a list of samples. The levels: each
// input; each tensor index over every run ("tensor i": the same output of
// several runs, e.g. ten captured calls); and everything ("all"). The
// report passes when every tensor and "all" pass.
//
// Division by a zero reference error: a ratio x / 0 is +inf when x > 0 (the
// reference is exact and the target is not: a failure by the L-inf and L2
// guards), and 0 when x is 0 too (both exact); `zero_reference_error` says
// when the reference errors were all 0. Non-finite errors (a NaN or an
// infinity on some side, where the two values differ; an error above
// float32's largest value, 3.4e38) are left out of every metric, both errors of the element
// together, and counted; an element whose target error is non-finite while
// its reference error is finite fails the tensor (the device made a NaN or
// an Inf the dtype does not explain). Equal values (equal infinities
// included) have error 0; two NaNs too with `equal_nan`.
//
// Streaming: one pass over the inputs, in bounded memory. The three sides
// of an input are read in step (a verbatim run of a file with pread, any
// other form through its decoder on its own thread and a bounded pipe, as
// compare reads them). Sums, maxima and counts are kept in f64 as the
// elements go by. The bins of a histogram depend on the smallest and
// largest error, known only at the end, so the errors themselves are kept,
// as float32 (8 bytes per element: the precision vLLM-Neuron computes them
// in): in memory up to `error_memory_bytes`, beyond that in an unlinked temp
// file under $TMPDIR (else /tmp), and read back once at the end: the
// histograms and BC are exact, the quantiles those of
// ErrorQuantileSketch (exact extremes, within 2^-11 relative between).
//
// Errors are absl::Status: an unreadable side (the frame, offset and file
// in the message; the CLI exits 2), a temp file that cannot be written, or
// invalid options (kInvalidArgument naming the option).
//
// Example:
//   auto e = decomposed::OpenTensorSet("cpu_bf16/", {});
//   auto a = decomposed::OpenTensorSet("neuron.decomposed_hlo_snapshot", {});
//   auto b = decomposed::OpenTensorSet("cpu_fp32/", {});
//   std::vector<decomposed::ThreeWayRun> runs = {{e->get(), a->get(), b->get()}};
//   absl::StatusOr<decomposed::ThreeWayReport> r =
//       decomposed::ThreeWayCompare(runs, {});
//   std::cout << decomposed::ThreeWayReportText(*r);
//   return r->pass ? 0 : 1;
#ifndef DECOMPOSED_ANALYSIS_THREE_WAY_H_
#define DECOMPOSED_ANALYSIS_THREE_WAY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/xla/element_value.h"

namespace decomposed {

// Errors kept in memory before they go to a temp file: 8 M elements, which
// holds the guidelines' ten samples of a [1, 128, 4096] output several
// times over; beyond it the errors cost 8 bytes of disk per element.
inline constexpr uint64_t kThreeWayErrorMemoryBytes = uint64_t{64} << 20;
// Bins and quantile levels a report may ask for (each is a few numbers per
// tensor in the report).
inline constexpr size_t kMaxThreeWayBins = 100000;
inline constexpr size_t kMaxThreeWayQuantiles = 100000;

struct ThreeWayOptions {
  double bc_threshold = 0.99;    // PASS needs BC >= this ...
  double max_sigma_ratio = 1.0;  // ... or sigma-ratio <= this,
  double max_linf_ratio = 5.0;   // and worst L-inf ratio < this,
  double max_l2_ratio = 3.0;     // and worst L2 ratio < this.
  size_t bins = 100;             // histogram bins of BC (vLLM-Neuron's 100)
  size_t quantiles = 101;        // QQ levels: np.linspace(0, 1, quantiles)
  bool equal_nan = false;        // two NaNs have error 0
  uint64_t error_memory_bytes = kThreeWayErrorMemoryBytes;
  // Optional, for progress displays: tensor bytes just read, the three
  // sides summed (from the calling thread).
  std::function<void(uint64_t)> on_bytes;
};

// Checks the options: thresholds finite and non-negative (bc_threshold at
// most 1), bins in 1..kMaxThreeWayBins, quantiles in 2..kMaxThreeWayQuantiles.
absl::Status ValidateThreeWayOptions(const ThreeWayOptions& o);

// One run: three distinct TensorSets, their tensors paired by index.
struct ThreeWayRun {
  TensorSet* expected = nullptr;
  TensorSet* actual = nullptr;
  TensorSet* baseline = nullptr;
};

// One error set (target or reference) over the elements counted.
struct ErrorSetSummary {
  double rms = 0;   // sqrt(mean of squares)
  double linf = 0;  // largest
  double l2 = 0;    // sqrt(sum of squares)
  uint64_t nonfinite = 0;  // elements whose error is not finite
};

// Which part of the rule failed.
enum ThreeWayFailure : uint32_t {
  kThreeWayDistribution = 1,  // BC < bc_threshold and sigma-ratio > max_sigma_ratio
  kThreeWayLinf = 2,          // worst L-inf ratio >= max_linf_ratio
  kThreeWayL2 = 4,            // worst L2 ratio >= max_l2_ratio
  kThreeWayNonFinite = 8,     // a non-finite target error with a finite reference error
  kThreeWayUnpaired = 16,     // a side is missing or the shapes differ
};

struct ThreeWayMetrics {
  uint64_t elements = 0;  // elements of the inputs compared
  uint64_t counted = 0;   // elements with both errors finite
  uint64_t target_only_nonfinite = 0;
  ErrorSetSummary target, reference;
  bool zero_reference_error = false;  // counted > 0 and every reference error 0
  // Absent when nothing was counted. For an input its own ratios; for a
  // tensor and for "all", the worst over their inputs (worst_*_input: the
  // index into ThreeWayReport::inputs).
  std::optional<double> sigma_ratio, bc, linf_ratio, l2_ratio;
  size_t worst_linf_input = 0, worst_l2_input = 0;
  uint32_t failures = 0;  // ThreeWayFailure bits; 0 is a pass
  bool pass() const { return failures == 0; }
  // Tensors and "all" only: BC's histogram (bins + 1 edges; the counts of
  // t and r, summing to `counted` each) and the QQ quantiles of t and r.
  std::vector<double> edges;
  std::vector<uint64_t> target_counts, reference_counts;
  std::vector<double> levels, target_quantiles, reference_quantiles;
};

struct ThreeWayInput {
  size_t run = 0;
  size_t index = 0;
  TensorVerdict verdict = TensorVerdict::kPass;  // pass, fail, missing, shape_mismatch
  std::optional<TensorInfo> expected, actual, baseline;  // absent: missing there
  ThreeWayMetrics metrics;
  // Where the largest target error is (when counted > 0): its linear index
  // and the three values there.
  uint64_t max_target_error_index = 0;
  Complex expected_value, actual_value, baseline_value;
};

struct ThreeWayTensor {
  size_t index = 0;
  TensorVerdict verdict = TensorVerdict::kPass;
  std::vector<size_t> inputs;  // into ThreeWayReport::inputs, by run
  ThreeWayMetrics metrics;
};

struct ThreeWayReport {
  ThreeWayOptions options;
  // Per run, TensorSet::Name() of its expected, actual and baseline sides.
  std::vector<std::vector<std::string>> run_names;
  bool pass = true;
  std::vector<ThreeWayInput> inputs;  // run-major: run 0's tensors, then run 1's
  std::vector<ThreeWayTensor> tensors;
  ThreeWayMetrics all;
};

// Compares the runs (at least one). Tensor i of a run pairs the three sides'
// tensors i; a run with fewer tensors on a side makes those `missing`,
// different dims `shape_mismatch`; element types may differ (values are
// compared in f64; complex by modulus).
absl::StatusOr<ThreeWayReport> ThreeWayCompare(const std::vector<ThreeWayRun>& runs,
                                               const ThreeWayOptions& options);

// The report as JSON (docs/compare.md, "Three-way comparison"): {"three_way":
// true, "pass", "thresholds", "bins", "runs", "inputs", "tensors", "all"};
// a ratio with no value is null, an infinite one "inf".
std::string ThreeWayReportJson(const ThreeWayReport& r);
// The report as text: a line per tensor and one for all, then what failed.
std::string ThreeWayReportText(const ThreeWayReport& r);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_THREE_WAY_H_
