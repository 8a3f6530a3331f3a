// The bundle writer: what the Neuron runtime's serialize op does for an
// input snapshot, plus meta.json (docs/format.md §16.3-§16.5).
//
//   <call_dir>/tensor<i>.npy | tensor<i>.pt   one file per positional input
//   <call_dir>/meta.json                      written last
//
// Host tensors are given as a data pointer, a PyTorch dtype (TorchType,
// torch_dtype.h), a shape and strides in elements (empty strides: C
// contiguous). Non-contiguous tensors are copied into C order while writing.
// Decoded literals are streamed in instead: BundleWriter::NextTensor() is
// an ArraySink (xla/array_sink.h) the literal decoder writes to, so
// `bundle from-decomposed` needs no temporary file.
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
// BundleWriter (and WriteBundle, built on it) is atomic: it writes into `<parent>/.call<N>.tmp.XXXXXX`
// beside the call directory and renames it into place after meta.json
// (renameat2 RENAME_NOREPLACE), so a bundle appears complete or not at all.
// On any failure it removes the temporary directory and returns the error;
// an existing call directory is never replaced (kFailedPrecondition).
//
// Example:
//   HostTensor t{ptr, TorchType::kBFloat16, {2, 3}, {}};
//   CallMeta meta; meta.hash = "abc"; meta.format = BundleFormat::kNpy;
//   absl::Status s = WriteBundle("/root/abc/rank0/call0", {&t, 1}, meta);
//
//   // Streaming decoded literals (capture/replay.cc):
//   absl::StatusOr<std::unique_ptr<BundleWriter>> w =
//       BundleWriter::Create("/root/abc/rank0/call1", BundleFormat::kPt);
//   if (!w.ok()) return w.status();
//   s = DecodeLiteral(src, body, frame, (*w)->NextTensor("input 0"));
//   // ... one NextTensor per input, in order ...
//   if (s.ok()) s = (*w)->Commit(meta);
#ifndef DECOMPOSED_CAPTURE_BUNDLE_WRITER_H_
#define DECOMPOSED_CAPTURE_BUNDLE_WRITER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/selector.h"
#include "decomposed/npy/stored_zip.h"
#include "decomposed/capture/torch_dtype.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/dirs.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_sink.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

// A tensor in host memory. `data` points at element [0, ..., 0]; strides are
// in elements (PyTorch's convention), empty for C-contiguous.
struct HostTensor {
  const void* data = nullptr;
  TorchType dtype = TorchType::kFloat32;
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
  NpySink<S> npy(sink);
  NpyHeader h;
  h.descr = std::string(l->dtype->npy_descr);
  h.shape = t.shape;
  if (absl::Status s = npy.Begin(h, l->byte_size); !s.ok()) return s;
  ForEachTensorChunk(t, *l, [&](std::string_view d) { return npy.Write(d); });
  return npy.Finish();
}

struct PtWriteOptions {
  // The zip's top folder; torch.save(path) uses the file name's stem.
  std::string archive_name = "archive";
  StoredZipOptions zip;
};

// Writes one tensor in torch.save's zip format, pushed: Begin() writes
// <a>/data.pkl, <a>/byteorder and the header of <a>/data/0; Write() the
// tensor's bytes in C order; Finish() the rest (<a>/version, the central
// directory) and returns the data's CRC-32. With `crc` given to Begin the
// archive is complete as written; without, the local header of data/0
// holds CRC 0 and the caller must write the returned CRC at
// crc_position() (a file sink can: see BundleWriter).
template <ByteSink S>
class PtTensorWriter {
 public:
  PtTensorWriter(S& sink, PtWriteOptions options = {})
      : sink_(sink), options_(std::move(options)), zip_(sink, options_.zip) {}

  absl::Status Begin(const TorchDtype& dtype,
                     const std::vector<int64_t>& shape, uint64_t byte_size,
                     std::optional<uint32_t> crc) {
    const std::string& a = options_.archive_name;
    absl::Status s = zip_.AddEntry(a + "/data.pkl",
                                   TorchTensorPickle(dtype, shape));
    if (s.ok()) s = zip_.AddEntry(a + "/byteorder", "little");
    if (s.ok()) s = zip_.BeginEntry(a + "/data/0", byte_size, crc.value_or(0));
    crc_position_ = zip_.base() + zip_.crc_offset();
    return s;
  }
  bool Write(std::string_view d) {
    crc_ = Crc32(crc_, d);
    return zip_.Append(d);
  }
  absl::StatusOr<uint32_t> Finish() {
    absl::Status s = zip_.EndEntry(crc_);
    if (s.ok()) s = zip_.AddEntry(options_.archive_name + "/version", "3\n");
    if (s.ok()) s = zip_.Finish();
    if (s.ok() && !sink_.Flush()) s = sink_.status();
    if (!s.ok()) return s;
    return crc_;
  }
  // Sink position of data/0's CRC field in its local header.
  uint64_t crc_position() const { return crc_position_; }

 private:
  S& sink_;
  PtWriteOptions options_;
  StoredZipWriter<S> zip_;
  uint32_t crc_ = 0;
  uint64_t crc_position_ = 0;
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
  PtTensorWriter<S> w(sink, options);
  if (absl::Status s = w.Begin(*l->dtype, t.shape, l->byte_size, crc);
      !s.ok()) {
    return s;
  }
  ForEachTensorChunk(t, *l, [&](std::string_view d) { return w.Write(d); });
  absl::StatusOr<uint32_t> got = w.Finish();
  if (!got.ok()) return got.status();
  if (*got != crc) {
    return absl::DataLossError(
        "pt tensor: the data changed while it was being written");
  }
  return absl::OkStatus();
}

// meta.json exactly as vLLM-Neuron writes it: json.dumps(meta, indent=2,
// sort_keys=True) (ASCII-escaped, no trailing newline).
// What meta.json says of one input.
struct TensorMeta {
  TorchType dtype = TorchType::kFloat32;
  std::vector<int64_t> shape;
};
std::string FormatMetaJson(const CallMeta& meta,
                           std::span<const TensorMeta> inputs);
nlohmann::json MetaJson(const CallMeta& meta,
                        std::span<const TensorMeta> inputs);
// The same, for host tensors.
std::string FormatMetaJson(const CallMeta& meta,
                           std::span<const HostTensor> inputs);

struct BundleWriteOptions {
  // fsync every file and the directories (crash safety; slower).
  bool sync = false;
};

// Writes a bundle tensor by tensor into a temporary directory beside
// `call_dir`, then meta.json, then renames it into place (see the file
// comment). Tensors come from host memory (AddTensor) or are streamed by the
// literal decoder into NextTensor(). Destroyed without a successful
// Commit(), it removes the temporary directory.
// Errors: Create: `call_dir` exists or has no name (kFailedPrecondition /
// kInvalidArgument), OS errors. AddTensor: as WriteBundle. NextTensor's
// sink: an XLA type with no PyTorch dtype, or (npy) one NumPy lacks
// (kUnimplemented, naming `what` and the array), OS errors. Commit: OS
// errors; kFailedPrecondition when `call_dir` appeared meanwhile.
class BundleWriter {
 public:
  static absl::StatusOr<std::unique_ptr<BundleWriter>> Create(
      const std::string& call_dir, BundleFormat format,
      const BundleWriteOptions& options = {});
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Writes tensor<i> from host memory.
  absl::Status AddTensor(const HostTensor& t);
  // tensor<i> as an ArraySink for the literal decoder: row-major order
  // (column-major literals are transposed by the decoder), the dtype the
  // PyTorch one of the literal's XLA type (TorchDtypeForXla). `what` names
  // it in errors ("input 2"). Valid until the next AddTensor,
  // NextTensor or Commit; the tensor counts once its Finish() succeeded.
  ArraySink& NextTensor(std::string what);
  // Writes meta.json (inputs: the tensors written, in order) and renames
  // the directory into place.
  absl::Status Commit(const CallMeta& meta);

  size_t tensor_count() const { return tensors_.size(); }
  const std::string& temp_path() const;

  class TensorSink;  // bundle_writer.cc

 private:
  BundleWriter() = default;
  std::string FilePath(size_t i, std::string* stem) const;

  std::string call_dir_;
  std::string parent_;
  BundleFormat format_ = BundleFormat::kPt;
  BundleWriteOptions options_;
  std::unique_ptr<decomposed::internal::TempDirectory> tmp_;
  std::vector<TensorMeta> tensors_;
  std::unique_ptr<TensorSink> sink_;
  bool committed_ = false;
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
