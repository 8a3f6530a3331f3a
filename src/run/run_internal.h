// Pieces the run layer's sources share (not API).
#ifndef DECOMPOSED_SRC_RUN_RUN_INTERNAL_H_
#define DECOMPOSED_SRC_RUN_RUN_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/value.h"
#include "decomposed/run/run.h"
#include "decomposed/io/byte_sink.h"

namespace decomposed::run {

// The evaluator's options of a run (all but on_progress and on_instruction,
// which each caller sets itself).
eval::EvalOptions EvalOptionsOf(const RunOptions& r);

// The machine's physical memory (kNoLimit when unknown).
uint64_t PhysicalMemoryBytes();

// Writes `array` as a .npy (header, then its row-major elements) to
// `sink`; `file_bytes` (optional) receives the size written.
absl::Status WriteArrayNpy(AtomicFileSink& sink, const eval::Array& array,
                           uint64_t* file_bytes = nullptr);

// Writes `array` to `path` as a .npy, atomically, and for a type NumPy lacks
// its <path>.meta sidecar; returns the files' sizes summed in `bytes`.
absl::Status WriteNpyFile(const std::string& path, const eval::Array& array,
                          uint64_t* bytes = nullptr);

// The directory part of `prefix` ("out/a_" -> "out"), created when missing.
absl::Status EnsureParentDir(const std::string& prefix);

}  // namespace decomposed::run

#endif  // DECOMPOSED_SRC_RUN_RUN_INTERNAL_H_
