// The bundle reader: finds input-snapshot bundles under a root, checks each
// meta.json against its tensor files, and streams tensors out with the
// dtype meta.json names (so "|V2" bytes come back as torch.bfloat16 and
// "|V1" as the float8 type recorded).
//
//   <root>/<hash>/rank<G>/call<N>/{tensor<i>.npy|.pt, meta.json}
//
// A call directory without meta.json is *incomplete* (the reference writer
// puts meta.json last; a crash or failure leaves tensors without it): it is
// listed with complete=false and OpenBundle refuses it. Hidden entries
// (".call<N>.tmp.XXXXXX", the atomic writer's temporaries) are skipped.
//
// .npy files are read with this library's header parser (npy/npy.h); .pt
// files with the .pt reader (pt_reader.h: a stored-zip reader and a pickle
// reader for exactly what torch.save writes for one tensor). Nothing is
// executed, and every size is checked against the file.
//
// Errors: kFailedPrecondition (incomplete bundle, a tensor path that is not
// a regular file), kInvalidArgument (malformed meta.json, zip, pickle or npy
// header; a mismatch between meta.json and a file: count, dtype, shape, byte
// size), kUnimplemented (well-formed but unsupported: compressed zip
// entries, Fortran order, non-contiguous .pt tensors, big-endian .npy),
// kResourceExhausted (the capture limits of limits.h), OS errors.
//
// Example:
//   absl::StatusOr<Bundle> b = OpenBundle("/root/abc/rank0/call3");
//   absl::Status ok = VerifyBundle(*b);
//   StreamTensor(*b, 0, [](std::string_view bytes) {
//     // ... the tensor's bytes, in C order ...
//     return true;
//   });
#ifndef DECOMPOSED_CAPTURE_BUNDLE_READER_H_
#define DECOMPOSED_CAPTURE_BUNDLE_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/torch_dtype.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

struct BundleRef {
  std::string path;  // <root>/<hash>/rank<G>/call<N>
  std::string hash;
  int64_t global_rank = 0;
  int64_t call_index = 0;
  bool complete = false;  // meta.json present
};

// Every call directory under `root`, sorted by (hash, rank, call). `root`
// is the capture root (<root>/<hash>/rank<G>/call<N>), or one level of it:
// a hash directory (rank<G>/call<N> below it), a rank<G> directory, or a
// call directory itself (one that holds meta.json, whatever its name, as
// `bundle from-decomposed -o DIR` writes it: hash, rank and call index then
// come from its meta.json when they are there). Directories that do not
// match rank<G>/call<N> are ignored; an empty list means none was found.
absl::StatusOr<std::vector<BundleRef>> ListBundles(const std::string& root);

// ListBundles with what each bundle's meta.json says: `decomposed bundle
// ls --json` and decomposed.bundle.ls() in Python. One object per call
// directory, in ListBundles' order:
//   {"path", "hash", "global_rank", "call_index", "complete"}, and for a
//   complete bundle either {"format": "npy"|"pt", "inputs": count,
//   "selected_by": [...] (when meta.json has it)} or {"error": OpenBundle's
//   message} (an invalid bundle is listed, not an error of the listing).
// Errors: ListBundles'.
//
// Example:
//   absl::StatusOr<nlohmann::json> l = ListBundlesJson("/root/snapshots");
//   for (const nlohmann::json& b : *l) std::cout << b["path"] << "\n";
absl::StatusOr<nlohmann::json> ListBundlesJson(const std::string& root);

struct BundleInput {
  int64_t index = 0;
  const TorchDtype* dtype = nullptr;  // from meta.json
  std::vector<int64_t> shape;
  uint64_t element_count = 0;
  uint64_t byte_size = 0;
  std::string path;  // tensor<i>.<format>
};

struct Bundle {
  std::string path;
  nlohmann::json meta;
  BundleFormat format = BundleFormat::kPt;
  std::vector<BundleInput> inputs;
};

// Reads and checks meta.json (schema 1, format, inputs with known dtypes,
// indices 0..n-1 in order, non-negative dims). Does not open the tensors.
absl::StatusOr<Bundle> OpenBundle(const std::string& call_dir);

// Where input `i`'s element bytes sit in its file, after checking the file
// header against meta.json (dtype, shape, byte size, file size).
struct TensorData {
  uint64_t offset = 0;
  uint64_t size = 0;
};
absl::StatusOr<TensorData> LocateTensor(const Bundle& b, size_t i);

// OpenBundle's checks plus LocateTensor for every input, and no tensor
// files beyond the inputs meta.json lists.
absl::Status VerifyBundle(const Bundle& b);

// Streams input `i`'s bytes in C order, in chunks of at most 1 MiB, to
// `emit` (false stops, returning kCancelled).
absl::Status StreamTensor(const Bundle& b, size_t i,
                          const std::function<bool(std::string_view)>& emit);

// Convenience for small tensors: the whole payload in memory.
struct LoadedTensor {
  const TorchDtype* dtype = nullptr;
  std::vector<int64_t> shape;
  std::string bytes;
};
absl::StatusOr<LoadedTensor> LoadTensor(const Bundle& b, size_t i);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_BUNDLE_READER_H_
