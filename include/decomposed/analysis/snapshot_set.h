// TensorSets over snapshot files (tensor_set.h): a decomposed stream's or a
// classic HloSnapshot's input or output literals, each decoded on demand by
// the literal codec from the mapped file. OpenTensorSet picks these for any
// path that is not a directory, .npy or .pt file.
#ifndef DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_
#define DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_plan.h"

namespace decomposed {

// One literal: its byte ranges in the file (a classic literal may be given
// in several occurrences that protobuf merges) and its name in messages.
struct LiteralRef {
  std::string_view region;  // "input" or "output" (static strings)
  int64_t index = 0;
  std::vector<ByteRange> ranges;
  Frame frame() const { return Frame{region, index, "body"}; }
};

class LiteralListSet final : public TensorSet {
 public:
  LiteralListSet(std::string name, std::string path, std::unique_ptr<MmapSource> src,
                 std::vector<LiteralRef> literals, bool both);
  std::string Name() const override { return name_; }
  size_t size() const override { return literals_.size(); }
  bool HasInputsAndOutputs() const override { return both_; }
  absl::StatusOr<TensorInfo> Describe(size_t i) override;
  absl::Status Stream(size_t i, const ChunkFn& emit) override;

 private:
  std::string name_, path_;
  std::unique_ptr<MmapSource> src_;
  std::vector<LiteralRef> literals_;
  bool both_;
};

// The inputs (or outputs) of the snapshot at `path`, decomposed or classic
// as DetectSnapshotType tells them apart (docs/format.md §7.7).
absl::StatusOr<std::unique_ptr<TensorSet>> OpenSnapshotSet(const std::string& path,
                                                           bool inputs);

// The inputs (or outputs) of the decomposed file at `path`; the whole file's
// grammar is checked first (docs/format.md §7).
absl::StatusOr<std::unique_ptr<TensorSet>> OpenDecomposedSet(const std::string& path,
                                                             bool inputs);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_SNAPSHOT_SET_H_
