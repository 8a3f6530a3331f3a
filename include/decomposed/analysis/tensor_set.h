// TensorSet: an ordered list of tensors read from any form this library
// knows, each streamed in logical row-major order (little endian, fixed
// width, one element per byte for the sub-byte types), in chunks and in
// bounded memory. compare and stats stand on it.
//
// OpenTensorSet(path, options) picks the form:
//   * a directory holding meta.json: a bundle call directory
//     (tensor<i>.npy|pt; dtypes from meta.json);
//   * any other directory: what snapshot-unpack writes
//     (value_input<i>.npy with options.inputs, else snapshot_output<j>.npy);
//     the true dtype of a void .npy comes from its .npy.meta sidecar or
//     from options.dtypes; indices must run 0..n-1 (a gap is an error that
//     names the missing file);
//   * a file ending in .npy or .pt: one tensor;
//   * a file ending in .npz: the .npy entries of a stored NumPy archive
//     (np.savez; `unpack --to npz` and `run --to npz` write them): with
//     unpack's entry names (value_input<i>.npy, snapshot_output<j>.npy) the
//     inputs or the outputs, as for an unpack directory; otherwise every
//     .npy entry in the order the archive holds them. A void entry's type
//     comes from options.dtypes or its <entry>.meta sidecar entry. A
//     compressed entry (np.savez_compressed) is refused (kUnimplemented);
//   * any other file: a decomposed or classic snapshot (detected by the
//     rule of docs/format.md §7.8, or as options.snapshot_type says), its
//     outputs, or its inputs with options.inputs.
// Errors are absl::Status in the library's conventions (status.h): the
// frame, the byte offset, what was expected and what was found, with the
// file name.
//
// Thread safety: one TensorSet may be used by one thread at a time.
// compare streams its two sets on two threads.
//
// Example:
//   absl::StatusOr<std::unique_ptr<decomposed::TensorSet>> set =
//       decomposed::OpenTensorSet("out/", {});
//   for (size_t i = 0; i < (*set)->size(); ++i) {
//     absl::StatusOr<decomposed::TensorInfo> t = (*set)->Describe(i);
//     (*set)->Stream(i, [](std::string_view chunk) {
//       // ... t->type elements in chunk ...
//       return absl::OkStatus();
//     });
//   }
#ifndef DECOMPOSED_ANALYSIS_TENSOR_SET_H_
#define DECOMPOSED_ANALYSIS_TENSOR_SET_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/fd.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed {

struct TensorInfo {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::string label;  // where it came from: "output 0", "out/value_input3.npy"
  uint64_t element_count() const {
    uint64_t n = 1;
    for (int64_t d : dims) n *= static_cast<uint64_t>(d);
    return n;
  }
};

using ChunkFn = std::function<absl::Status(std::string_view)>;

// Where a tensor's elements lie verbatim (logical row-major order, little
// endian, fixed width): `bytes` bytes at `offset` of the open file `fd`.
// Reading them with pread gives exactly what Stream() emits, so compare and
// stats read such tensors themselves, in step, without a decoder thread.
struct TensorRun {
  OwnedFd fd;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

class TensorSet {
 public:
  virtual ~TensorSet() = default;
  // What the set is ("decomposed file", "classic snapshot", "unpack
  // directory", "bundle", ".npy file", ".pt file") and where.
  virtual std::string Name() const = 0;
  virtual size_t size() const = 0;
  // True for the forms that hold both inputs and outputs (snapshots, unpack
  // directories): TensorSetOptions::inputs picks one.
  virtual bool HasInputsAndOutputs() const { return false; }
  // Element type and dims of tensor `i` (< size()); may read its header.
  virtual absl::StatusOr<TensorInfo> Describe(size_t i) = 0;
  // Streams tensor `i`'s elements in logical row-major order to `emit`, in
  // chunks of whole elements. A non-OK status from `emit` stops the walk
  // and is returned.
  virtual absl::Status Stream(size_t i, const ChunkFn& emit) = 0;
  // Tensor `i` as a verbatim run of a file, when it is one (a row-major
  // literal in one record, a C-order little-endian .npy, a .pt); nullopt
  // when it must be decoded (varints, other layouts, byte swaps). Checks
  // what Describe(i) checks.
  virtual absl::StatusOr<std::optional<TensorRun>> Run(size_t) {
    return std::optional<TensorRun>();
  }
  // For a set that HasInputsAndOutputs(): the other list of the same input
  // (its outputs for a set of inputs, and back), without opening a snapshot
  // again. kFailedPrecondition for the other forms.
  virtual absl::StatusOr<std::unique_ptr<TensorSet>> OtherList() {
    return absl::FailedPreconditionError(
        absl::StrCat(Name(), ": holds one list of tensors"));
  }
};

enum class TensorSetKind : uint8_t {
  kAuto, kSnapshot, kUnpackDir, kBundle, kNpy, kPt, kNpz,
};

struct TensorSetOptions {
  bool inputs = false;  // a snapshot's (or unpack directory's) inputs
  // A snapshot file's form; kAuto detects it (DetectSnapshotType). The
  // other values read it as that form, as verify and unpack do.
  SnapshotType snapshot_type = SnapshotType::kAuto;
  // True dtypes for void (|V1, |V2) .npy tensors: by index, or for all.
  std::map<size_t, PrimitiveType> dtypes;
  std::optional<PrimitiveType> dtype;
  // `dtype` is for void tensors only, a single .npy's too (run's --inputs,
  // where many single files make one list); otherwise a single .npy side
  // takes it as its type, as 0=TYPE.
  bool dtype_void_only = false;
  TensorSetKind kind = TensorSetKind::kAuto;
};

// Parses --dtype values into `options`: "TYPE" sets the type of every void
// tensor, "INDEX=TYPE" one tensor's; TYPE is any name ParseDtypeName
// accepts (bf16, f8e4m3fn, float32, ...). kInvalidArgument names the value.
absl::Status ParseDtypeOptions(const std::vector<std::string>& values,
                               TensorSetOptions* options);

absl::StatusOr<std::unique_ptr<TensorSet>> OpenTensorSet(
    const std::string& path, const TensorSetOptions& options);

// The .npz form of OpenTensorSet (src/analysis/npz_set.cc).
absl::StatusOr<std::unique_ptr<TensorSet>> OpenNpzSet(
    const std::string& path, const TensorSetOptions& options);

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_TENSOR_SET_H_
