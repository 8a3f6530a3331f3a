#include "decomposed/capture/replay.h"

#include "decomposed/io/dirs.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/capture/torch_dtype.h"
#include "decomposed/xla/literal_encoder.h"
#include "decomposed/npy/npy.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/status.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed::capture {

namespace {

// Streams one bundle tensor, re-reading the file on every pass.
class BundleTensorSource final : public ElementSource {
 public:
  BundleTensorSource(const Bundle* b, size_t i) : b_(b), i_(i) {}
  absl::Status ForEachChunk(const ChunkFn& fn) override {
    absl::Status inner;
    absl::Status s = StreamTensor(*b_, i_, [&](std::string_view d) {
      inner = fn(d);
      return inner.ok();
    });
    return inner.ok() ? s : inner;
  }

 private:
  const Bundle* b_;
  size_t i_;
};

}  // namespace

absl::Status BundleToDecomposed(const std::string& call_dir,
                                const std::string& module_path,
                                const std::string& out_path) {
  absl::StatusOr<Bundle> b = OpenBundle(call_dir);
  if (!b.ok()) return b.status();
  if (absl::Status s = VerifyBundle(*b); !s.ok()) return s;
  absl::StatusOr<std::string> module = ReadMessageFile(module_path);
  if (!module.ok()) return module.status();
  absl::StatusOr<std::string> snapshot = SnapshotFromModule(*module);
  if (!snapshot.ok()) return Prefix(snapshot.status(), module_path);
  PackRequest req;
  req.snapshot = *std::move(snapshot);
  req.format = SnapshotType::kDecomposed;
  for (size_t i = 0; i < b->inputs.size(); ++i) {
    const BundleInput& in = b->inputs[i];
    if (in.dtype->xla_type == PrimitiveType::kInvalid) {
      return absl::UnimplementedError(absl::StrCat(
          in.path, ": ", Sv(in.dtype->name), " has no XLA element type"));
    }
    ArraySpec spec{in.dtype->xla_type, in.shape, std::nullopt};
    LiteralEncodeOptions o;
    o.name = absl::StrCat("input ", i, " (", in.path, ")");
    req.inputs.push_back(std::make_unique<decomposed::internal::EncodedBody>(
        std::make_unique<BundleTensorSource>(&*b, i), std::move(spec),
        std::move(o)));
  }
  return PackToFile(req, out_path);
}

absl::Status DecomposedToBundle(const std::string& decomposed_path,
                                const std::string& call_dir_in,
                                const DecomposedToBundleOptions& options) {
  std::string call_dir = call_dir_in;
  while (call_dir.size() > 1 && call_dir.back() == '/') call_dir.pop_back();
  size_t slash = call_dir.find_last_of('/');
  std::string parent = slash == std::string::npos ? std::string(".")
                       : slash == 0                 ? std::string("/")
                                                    : call_dir.substr(0, slash);
  std::string leaf = slash == std::string::npos ? call_dir : call_dir.substr(slash + 1);
  struct stat st;
  if (::lstat(call_dir.c_str(), &st) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bundle directory ", call_dir, " already exists; not overwriting it"));
  }
  if (absl::Status s = decomposed::internal::MakeDirectories(parent); !s.ok()) return s;
  decomposed::internal::TempDirectory tmp;
  if (absl::Status s = tmp.Create(parent + "/.from-decomposed.tmp."); !s.ok()) {
    return s;
  }

  UnpackOptions u;
  u.snapshot_type = SnapshotType::kDecomposed;
  u.output_prefix = tmp.path() + "/";
  u.module = "model.hlo";
  u.box.lenient_length_byte = options.lenient_length_byte;
  u.decode.temp_dir = tmp.path();
  std::vector<UnpackedFile> files;
  if (absl::Status s = Unpack(decomposed_path, u, &files); !s.ok()) return s;

  std::vector<std::unique_ptr<MmapSource>> maps;
  std::vector<HostTensor> tensors;
  for (const UnpackedFile& f : files) {
    if (f.kind != UnpackedKind::kInput) continue;
    const std::string what = absl::StrCat("value_input ", f.index);
    std::string type_name = f.shape.substr(0, f.shape.find('['));
    std::optional<PrimitiveType> t = PrimitiveTypeFromName(type_name);
    const TorchDtype* d = t ? TorchDtypeForXla(*t) : nullptr;
    if (d == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          Sv(what), " (", f.shape, "): XLA type ", type_name,
          " has no PyTorch dtype"));
    }
    auto m = std::make_unique<MmapSource>(f.path);
    if (!m->status().ok()) return m->status();
    std::string_view all(m->cursor(), m->available());
    absl::StatusOr<NpyHeader> h = ParseNpyHeader(
        all.substr(0, std::min<size_t>(all.size(), limits::kMaxNpyHeaderBytes + 12)));
    if (!h.ok()) return WithFile(h.status(), f.path);
    HostTensor ht;
    ht.dtype = std::string(d->name);
    ht.shape = h->shape;
    ht.data = all.data() + h->header_bytes;
    if (h->fortran_order) {
      int64_t acc = 1;
      for (int64_t dim : ht.shape) {
        ht.strides.push_back(acc);
        acc *= std::max<int64_t>(dim, 1);
      }
    }
    uint64_t n = 1;
    for (int64_t dim : ht.shape) n *= static_cast<uint64_t>(dim);
    if (all.size() - h->header_bytes != n * d->element_bytes) {
      return absl::InternalError(absl::StrCat(
          f.path, ": decoded size does not match ", Sv(d->name)));
    }
    tensors.push_back(std::move(ht));
    maps.push_back(std::move(m));
  }
  CallMeta meta;
  meta.format = options.format;
  meta.hash = options.hash;
  if (meta.hash.empty()) {
    size_t s = decomposed_path.find_last_of('/');
    meta.hash = s == std::string::npos ? decomposed_path
                                       : decomposed_path.substr(s + 1);
  }
  meta.global_rank = options.global_rank;
  meta.tp_rank = options.tp_rank;
  meta.dp_rank = options.dp_rank;
  meta.call_index = options.call_index;
  if (meta.call_index < 0) {
    int64_t n = 0;
    if (!(leaf.rfind("call", 0) == 0 &&
          absl::SimpleAtoi(leaf.substr(4), &n) && n >= 0)) {
      n = 0;
    }
    meta.call_index = n;
  }
  return WriteBundle(call_dir, tensors, meta);
}

}  // namespace decomposed::capture
