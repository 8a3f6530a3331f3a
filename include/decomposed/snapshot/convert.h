// Conversion between the two forms of a snapshot file, streamed from an
// mmap of the input (no literal is copied into memory; a stream, "-", is
// first copied to an unlinked temp file), read through SnapshotReader
// (reader.h) and the classic mapping (classic.h):
//   decomposed -> classic   region [0] without its baked-in literals is the
//                           header; region [1] and [2] are the input and
//                           output lists, mapped onto `arguments` and
//                           `result` by PlanClassic; written by
//                           WriteClassicSnapshot (< 2 GiB).
//   classic -> decomposed   the literal-empty header becomes region [0];
//                           ForEachClassicInput and ClassicOutputs give
//                           regions [1] and [2] (a repeated `result` is
//                           merged, as protobuf merges it).
// Outputs go through AtomicFileSink: on any error no file appears under the
// output path. Errors name the frame, the byte offset and the input file.
//
// Example:
//   absl::Status s = decomposed::ConvertClassicToDecomposed(
//       "x.hlo_snapshot.pb", "x.decomposed_hlo_snapshot");
#ifndef DECOMPOSED_SNAPSHOT_CONVERT_H_
#define DECOMPOSED_SNAPSHOT_CONVERT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "decomposed/container/framing.h"
#include "decomposed/snapshot/classic_writer.h"
#include "decomposed/snapshot/snapshot_type.h"

namespace decomposed {

struct ConvertOptions {
  DecomposedReadOptions read;
  DecomposedWriteOptions write;
  // Check every literal body's wire format and shape before writing.
  bool validate = true;
  ProgressFn progress;  // optional
};

// What a conversion wrote, for the caller to report.
struct ConvertReport {
  SnapshotType from = SnapshotType::kAuto;  // the input's form (detected)
  SnapshotType to = SnapshotType::kAuto;
  size_t inputs = 0, outputs = 0;  // literals written
  uint64_t bytes = 0;              // the output file's size
};

// Converts `in`, of form `from` (kAuto: detected, docs/format.md §7.8), to
// form `to` (kDecomposed or kClassic); fills `*report` (optional) on
// success.
// Errors: the input is empty ("empty file"), or already of form `to`
// (kInvalidArgument, "already a decomposed snapshot ...; nothing to
// convert"); a read error that the other form explains carries the hint
// of WithSnapshotTypeHint (snapshot_type.h); every read and write error.
absl::Status ConvertSnapshot(const std::string& in, const std::string& out,
                             SnapshotType to,
                             SnapshotType from = SnapshotType::kAuto,
                             const ConvertOptions& options = {},
                             ConvertReport* report = nullptr);

// Decomposed -> classic HloSnapshot (ConvertSnapshot with both forms named).
absl::Status ConvertDecomposedToClassic(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options = {});
// Classic HloSnapshot -> decomposed.
absl::Status ConvertClassicToDecomposed(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options = {});

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_CONVERT_H_
