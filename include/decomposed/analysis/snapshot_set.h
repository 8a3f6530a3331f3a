// TensorSets over snapshot files (tensor_set.h): a decomposed stream's or a
// classic HloSnapshot's input or output literals, each decoded on demand by
// the literal codec. OpenTensorSet picks these for any path that is not a
// directory, .npy or .pt file.
//
// The file is read with pread (FdSource), not mapped: a mapping would count
// every page of a 1 GiB literal in the process's RSS as it is read, and the
// analysis commands promise a bounded peak RSS (docs/compare.md). A literal
// in a non-default layout is gathered in row-major order by the codec's
// transposing store in tiles of at most kAnalysisTransposeBytes
// (xla/transpose.h, GatherTiled), never whole.
#ifndef DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_
#define DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {

// Memory for one side's transpose (two sides may transpose at once, beside
// the 4 MiB pipe between them: 2 x 16 MiB keeps a compare under 64 MiB).
inline constexpr uint64_t kAnalysisTransposeBytes = 16 << 20;

// The literal decoder's options for the analysis layer.
LiteralDecodeOptions AnalysisDecodeOptions();

// One literal: its byte ranges in the file (a classic literal may be given
// in several occurrences that protobuf merges) and its name in messages.
struct LiteralRef {
  std::string_view role;  // "input" or "output" (static strings)
  int64_t index = 0;
  std::vector<ByteRange> ranges;
  Frame frame() const { return Frame{role, index, "body"}; }
};

class LiteralListSet final : public TensorSet {
 public:
  LiteralListSet(std::string name, std::string path, std::unique_ptr<FdSource> src,
                 std::vector<LiteralRef> literals, bool both);
  std::string Name() const override { return name_; }
  size_t size() const override { return literals_.size(); }
  bool HasInputsAndOutputs() const override { return both_; }
  absl::StatusOr<TensorInfo> Describe(size_t i) override;
  absl::Status Stream(size_t i, const ChunkFn& emit) override;
  absl::StatusOr<std::optional<TensorRun>> Run(size_t i) override;

 private:
  // Literal i's plan, resolved (the one first pass Describe and Run share).
  absl::StatusOr<LiteralPlan> Plan(size_t i);

  std::string name_, path_;
  std::unique_ptr<FdSource> src_;
  std::vector<LiteralRef> literals_;
  bool both_;
};

// The inputs (or outputs) of the snapshot at `path`, decomposed or classic
// as `type` says, or as DetectSnapshotType tells them apart (kAuto,
// docs/format.md §7.7). Errors: those of OpenDecomposedSet or
// OpenClassicSet.
absl::StatusOr<std::unique_ptr<TensorSet>> OpenSnapshotSet(
    const std::string& path, bool inputs, SnapshotType type = SnapshotType::kAuto);

// The inputs (or outputs) of the decomposed file at `path`; the whole file's
// grammar is checked first (docs/format.md §7).
absl::StatusOr<std::unique_ptr<TensorSet>> OpenDecomposedSet(const std::string& path,
                                                             bool inputs);

// The inputs (or outputs) of the classic HloSnapshot at `path`, by the one
// classic mapping (snapshot/classic.h, docs/format.md §11): one input per
// `arguments` record (or the elements of a single tuple argument of a
// single-tuple-parameter program), the outputs the top-level elements of a
// TUPLE result, else the result; none without a result. A merged (repeated)
// `result` is read as one literal from its occurrences' byte ranges. Only
// the records on the path to the literals are read here; each literal is
// planned and decoded when it is described or streamed.
// Errors: those of IndexClassicSnapshot, ForEachClassicInput and
// ClassicOutputs (malformed records, a file of 2 GiB or more), with the
// file name.
absl::StatusOr<std::unique_ptr<TensorSet>> OpenClassicSet(const std::string& path,
                                                          bool inputs);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_
