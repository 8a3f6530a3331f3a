// TensorSets over snapshot files (tensor_set.h): a decomposed stream's or a
// classic HloSnapshot's input or output literals, each decoded on demand by
// the literal codec. OpenTensorSet picks these for any path that is not a
// directory, .npy or .pt file.
//
// The file is opened once (SnapshotFile) and read with pread (FdSource), not
// mapped: a mapping would count
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
#include "decomposed/snapshot/reader.h"
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

// What one walk of a snapshot found: both lists, so that a snapshot opened
// once gives its inputs and its outputs (stats reads both).
struct SnapshotLists {
  std::string path;
  std::string form;  // "decomposed file", "classic snapshot"
  std::vector<LiteralRef> inputs, outputs;
  std::shared_ptr<SnapshotFile> file;  // opened once; sets dup its descriptor
};

// The inputs or the outputs of a snapshot, each literal planned and decoded
// when it is described or streamed, from a source of the set's own.
class LiteralListSet final : public TensorSet {
 public:
  LiteralListSet(std::shared_ptr<const SnapshotLists> lists, bool inputs,
                 std::unique_ptr<FdSource> src);
  std::string Name() const override;
  size_t size() const override { return literals().size(); }
  bool HasInputsAndOutputs() const override { return true; }
  absl::StatusOr<TensorInfo> Describe(size_t i) override;
  absl::Status Stream(size_t i, const ChunkFn& emit) override;
  absl::StatusOr<std::optional<TensorRun>> Run(size_t i) override;
  // The other list of the same snapshot, from the same open.
  absl::StatusOr<std::unique_ptr<TensorSet>> OtherList() override;

 private:
  const std::vector<LiteralRef>& literals() const {
    return inputs_ ? lists_->inputs : lists_->outputs;
  }
  // Literal i's plan, resolved (the one first pass Describe and Run share).
  absl::StatusOr<LiteralPlan> Plan(size_t i);

  std::shared_ptr<const SnapshotLists> lists_;
  bool inputs_;
  std::unique_ptr<FdSource> src_;
};

// The inputs (or outputs) of the snapshot at `path`, decomposed or classic
// as `type` says, or as detected (kAuto, docs/format.md §7.8), read through
// SnapshotReader (snapshot/reader.h): the file is opened once and its whole
// grammar checked before the set is returned; a stream (a pipe, "-") is
// copied whole to an unlinked temp file first, and a stream named twice in
// one process (compare - -) is read once. For a classic file: one input per
// `arguments` record (or the elements of a single tuple argument of a
// single-tuple-parameter program), the outputs the top-level elements of a
// TUPLE result, else the result; none without a result; a merged
// (repeated) `result` is read as one literal from its occurrences' byte
// ranges. Errors: the reader's, with the file name and the hint of a named
// type that the bytes contradict.
absl::StatusOr<std::unique_ptr<TensorSet>> OpenSnapshotSet(
    const std::string& path, bool inputs, SnapshotType type = SnapshotType::kAuto);

// OpenSnapshotSet with the form named.
absl::StatusOr<std::unique_ptr<TensorSet>> OpenDecomposedSet(const std::string& path,
                                                             bool inputs);
absl::StatusOr<std::unique_ptr<TensorSet>> OpenClassicSet(const std::string& path,
                                                          bool inputs);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_
