// Replay conversion between input-snapshot bundles and decomposed files.
//
// BundleToDecomposed: the bundle's tensors (in meta.json order) become the
// inputs (region [1]) of a decomposed file whose region [0] wraps the given
// serialized HloModuleProto (e.g. snapshot-unpack's model.hlo); region [2]
// holds count 0. Element types come from the PyTorch dtypes in meta.json
// (TorchDtype::xla_type: torch.bfloat16 -> BF16, torch.bool -> PRED, ...);
// a dtype with no XLA type (torch.complex32) is kUnimplemented. Tensors are
// streamed from the bundle files, never held in memory. The output is
// written atomically (AtomicFileSink). The result is ready for
// `snapshot-unpack --snapshot-type=decomposed`.
//
// DecomposedToBundle: the inputs of a decomposed file become a bundle in
// `call_dir` (written atomically by BundleWriter, so never over an existing
// one) with a meta.json whose dtypes are the PyTorch dtypes of the XLA
// types (TorchDtypeForXla). Each literal is decoded (xla/literal_decoder.h,
// XLA's loading rules) straight into the bundle's tensor file: no temporary
// copy; column-major and permuted layouts come out in C order (transposes
// of big literals spill to an unlinked file in the bundle's temporary
// directory). The rest of the file (region [2], trailing bytes) is checked
// as `verify` checks it; the module is not parsed. XLA types with no
// PyTorch dtype (S4, U4, F8E4M3B11FNUZ, F4E2M1FN, ...) are kUnimplemented.
//
// Example:
//   BundleToDecomposed("/snap/abc/rank0/call3", "model.hlo", "x.decomposed");
//   DecomposedToBundle("x.decomposed", "/tmp/b/abc/rank0/call0", {});
#ifndef DECOMPOSED_CAPTURE_REPLAY_H_
#define DECOMPOSED_CAPTURE_REPLAY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "decomposed/capture/config.h"

namespace decomposed::capture {

absl::Status BundleToDecomposed(const std::string& call_dir,
                                const std::string& module_path,
                                const std::string& out_path);

struct DecomposedToBundleOptions {
  BundleFormat format = BundleFormat::kPt;
  // meta.json identity. Empty hash: the decomposed file's base name.
  // call_index < 0: taken from a "call<N>" directory name, else 0.
  std::string hash;
  int64_t global_rank = 0;
  int64_t tp_rank = 0;
  int64_t dp_rank = 0;
  int64_t call_index = -1;
  // Length boxes read with the unsigned-length-byte rule.
  bool lenient_length_byte = false;
};

absl::Status DecomposedToBundle(const std::string& decomposed_path,
                                const std::string& call_dir,
                                const DecomposedToBundleOptions& options = {});

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_REPLAY_H_
