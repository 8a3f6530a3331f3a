// The .pt reader: which tensor a torch.save file of one tensor holds, and
// where its element bytes sit in the file, with every size checked against
// the file. Nothing is executed and no tensor data is read.
//
// The file is a stored zip (zip_reader.h) with one "<archive>/data.pkl"
// (at most limits::kMaxPickleBytes, read whole and unpickled by
// unpickler.h) that must be torch.save's rebuild call:
//   torch._utils._rebuild_tensor_v2(pid, offset, size, stride, ...)
//       over a legacy typed storage (pid[1] = torch.FloatStorage, ...;
//       pid[4] = the storage's element count), or
//   torch._utils._rebuild_tensor_v3(pid, offset, size, stride, _, _, dtype)
//       over torch.UntypedStorage (pid[4] = the storage's byte count),
// with pid = ("storage", storage class, key, location, count). Then:
//   * the dtype is one of kTorchDtypes (torch_dtype.h);
//   * size holds at most limits::kMaxRank non-negative dims whose product
//     is at most limits::kMaxElementCount;
//   * the tensor is C-contiguous (the stride of a dim of size 1 is free);
//   * the storage record "<archive>/data/<key>" holds exactly the storage's
//     bytes, and the tensor's bytes, from its storage offset, fit in it.
//
// Errors: kInvalidArgument (a malformed zip or pickle, a pickle that is not
// one tensor, a storage that does not hold the tensor), kUnimplemented (a
// compressed entry, a non-contiguous tensor), kResourceExhausted (a limit),
// kOutOfRange and OS errors from reading the file. Messages name the file.
//
// Example:
//   absl::StatusOr<RegularFile> f = RegularFile::Open("call0/tensor0.pt");
//   absl::StatusOr<PtTensor> t = ReadPtTensor(*f);
//   // t->dtype->name == "torch.float32", t->shape == {2, 3},
//   // t->byte_size == 24 bytes at file offset t->data_offset.
#ifndef DECOMPOSED_CAPTURE_PT_READER_H_
#define DECOMPOSED_CAPTURE_PT_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/capture/torch_dtype.h"

namespace decomposed::capture {

struct PtTensor {
  const TorchDtype* dtype = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;  // in elements, as pickled
  uint64_t element_count = 0;
  uint64_t byte_size = 0;    // element_count * dtype->element_bytes
  uint64_t data_offset = 0;  // file offset of the first element
};

absl::StatusOr<PtTensor> ReadPtTensor(const RegularFile& file);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_PT_READER_H_
