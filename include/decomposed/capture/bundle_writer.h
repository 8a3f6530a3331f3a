// The bundle writer: what the Neuron runtime's serialize op does for an
// input snapshot, plus meta.json (neuron-facts.md section 5).
//
//   <call_dir>/tensor<i>.npy | tensor<i>.pt   one file per positional input
//   <call_dir>/meta.json                      written last
//
// Host tensors are given as a data pointer, a PyTorch dtype name
// ("torch.bfloat16"), a shape and strides in elements (empty strides: C
// contiguous). Non-contiguous tensors are copied into C order while writing.
//
// npy: NumPy's format with the raw little-endian element bytes; bf16 is
//      "|V2", fp8 "|V1" (meta.json says what they really are). A dtype with
//      no NumPy representation (torch.complex32) is kUnimplemented, asking for
//      the pt format.
// pt:  PyTorch's torch.save zip format, written without libtorch: a stored
//      zip holding <a>/data.pkl (pickle protocol 2 of
//      torch._utils._rebuild_tensor_v2 over a legacy typed storage, or
//      _rebuild_tensor_v3 + torch.UntypedStorage for dtypes newer than the
//      legacy storages), <a>/byteorder ("little"), <a>/data/0 (the elements,
//      64-byte aligned) and <a>/version ("3\n"). torch.load of PyTorch 1.13
//      reads every dtype with a legacy storage (bfloat16 included); the
//      others need the PyTorch named in TorchDtype::min_torch (float8 2.1+,
//      uint16/32/64 2.3+).
//
// WriteBundle is atomic: it writes into `<parent>/.call<N>.tmp.XXXXXX`
// beside the call directory and renames it into place after meta.json
// (renameat2 RENAME_NOREPLACE), so a bundle appears complete or not at all.
// On any failure it removes the temporary directory and returns the error;
// an existing call directory is never replaced (kFailedPrecondition).
//
// Example:
//   HostTensor t{ptr, "torch.bfloat16", {2, 3}, {}};
//   CallMeta meta; meta.hash = "abc"; meta.format = BundleFormat::kNpy;
//   absl::Status s = WriteBundle("/root/abc/rank0/call0", {&t, 1}, meta);
#ifndef DECOMPOSED_CAPTURE_BUNDLE_WRITER_H_
#define DECOMPOSED_CAPTURE_BUNDLE_WRITER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/selector.h"
#include "decomposed/capture/stored_zip.h"
#include "decomposed/capture/torch_dtype.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

// A tensor in host memory. `data` points at element [0, ..., 0]; strides are
// in elements (PyTorch's convention), empty for C-contiguous.
struct HostTensor {
  const void* data = nullptr;
  std::string dtype;             // "torch.float32", aliases accepted
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty or one per dimension
};

// The identity a bundle's meta.json records.
struct CallMeta {
  std::string hash;  // compilation hash
  BundleFormat format = BundleFormat::kPt;
  int64_t global_rank = 0;
  int64_t tp_rank = 0;
  int64_t dp_rank = 0;
  int64_t call_index = 0;
  std::vector<std::string> selected_by;  // sorted on output
  std::vector<Match> matches;
  // The published forward context; nullopt: none (global_step and
  // is_prompt are null, req_ids and positions empty).
  std::optional<ForwardInfo> forward;
};

// A validated tensor: the dtype resolved, sizes computed without overflow.
struct TensorLayout {
  const TorchDtype* dtype = nullptr;
  uint64_t element_count = 0;
  uint64_t byte_size = 0;
  bool contiguous = true;
};

// Checks the dtype, rank (<= limits::kMaxRank), dimensions (>= 0), strides
// (one per dimension) and that the byte size fits 64 bits.
// kInvalidArgument naming `what` ("input 2") on failure.
absl::StatusOr<TensorLayout> ValidateHostTensor(const HostTensor& t,
                                                std::string_view what);

// Calls `emit` with the tensor's bytes in C order, in pieces of at most
// `chunk_bytes` (contiguous tensors are passed through without copying).
// Returns false as soon as `emit` does.
bool ForEachTensorChunk(const HostTensor& t, const TensorLayout& layout,
                        const std::function<bool(std::string_view)>& emit,
                        size_t chunk_bytes = 1 << 20);

// The data.pkl pickle torch.save writes for one tensor whose storage is
// record `key` (C-contiguous, offset 0).
std::string TorchTensorPickle(const TorchDtype& dtype,
                              const std::vector<int64_t>& shape,
                              std::string_view key = "0");

// C-contiguous strides as PyTorch computes them (size-0/1 dims count as 1).
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

// Writes `t` as one .npy file to `sink`.
template <ByteSink S>
absl::Status WriteNpyTensor(const HostTensor& t, S& sink) {
  absl::StatusOr<TensorLayout> l = ValidateHostTensor(t, "tensor");
  if (!l.ok()) return l.status();
  if (l->dtype->npy_descr.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        Sv(l->dtype->name),
        " has no NumPy representation; use the pt format "
        "(VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_FORMAT=pt)"));
  }
  NpyHeader h;
  h.descr = std::string(l->dtype->npy_descr);
  h.shape = t.shape;
  if (!sink.Write(FormatNpyHeader(h)) ||
      !ForEachTensorChunk(t, *l, [&](std::string_view d) {
        return sink.Write(d);
      }) ||
      !sink.Flush()) {
    absl::Status s = sink.status();
    return s.ok() ? absl::DataLossError("npy write failed") : s;
  }
  return absl::OkStatus();
}

struct PtWriteOptions {
  // The zip's top folder; torch.save(path) uses the file name's stem.
  std::string archive_name = "archive";
  StoredZipOptions zip;
};

// Writes `t` in torch.save's zip format to `sink`.
template <ByteSink S>
absl::Status WritePtTensor(const HostTensor& t, S& sink,
                           const PtWriteOptions& options = {}) {
  absl::StatusOr<TensorLayout> l = ValidateHostTensor(t, "tensor");
  if (!l.ok()) return l.status();
  uint32_t crc = 0;
  ForEachTensorChunk(t, *l, [&](std::string_view d) {
    crc = Crc32(crc, d);
    return true;
  });
  StoredZipWriter<S> zip(sink, options.zip);
  const std::string& a = options.archive_name;
  absl::Status s =
      zip.AddEntry(a + "/data.pkl", TorchTensorPickle(*l->dtype, t.shape));
  if (s.ok()) s = zip.AddEntry(a + "/byteorder", "little");
  if (s.ok()) {
    s = zip.AddEntry(
        a + "/data/0", l->byte_size, crc,
        [&](const std::function<bool(std::string_view)>& emit) {
          return ForEachTensorChunk(t, *l, emit);
        });
  }
  if (s.ok()) s = zip.AddEntry(a + "/version", "3\n");
  if (s.ok()) s = zip.Finish();
  if (s.ok() && !sink.Flush()) s = sink.status();
  return s;
}

// meta.json exactly as vLLM-Neuron writes it: json.dumps(meta, indent=2,
// sort_keys=True) (ASCII-escaped, no trailing newline).
std::string FormatMetaJson(const CallMeta& meta,
                           std::span<const HostTensor> inputs);
nlohmann::json MetaJson(const CallMeta& meta,
                        std::span<const HostTensor> inputs);

struct BundleWriteOptions {
  // fsync every file and the directories (crash safety; slower).
  bool sync = false;
};

// Writes a whole bundle atomically into `call_dir` (parents are created).
// Format from meta.format. Errors: kInvalidArgument (bad tensor),
// kUnimplemented (npy of a dtype NumPy lacks), kFailedPrecondition
// (call_dir exists), OS errors. No call_dir is left behind on failure.
absl::Status WriteBundle(const std::string& call_dir,
                         std::span<const HostTensor> inputs,
                         const CallMeta& meta,
                         const BundleWriteOptions& options = {});

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_BUNDLE_WRITER_H_
