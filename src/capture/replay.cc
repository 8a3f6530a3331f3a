#include "decomposed/capture/replay.h"

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/capture/torch_dtype.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/snapshot/producer.h"
#include "decomposed/snapshot/reader.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_source.h"
#include "decomposed/xla/literal_decoder.h"
#include "decomposed/xla/primitive_type.h"

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
    req.inputs.push_back(std::make_unique<EncodedLiteral>(
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
  std::string leaf = slash == std::string::npos ? call_dir : call_dir.substr(slash + 1);
  absl::StatusOr<std::unique_ptr<BundleWriter>> w =
      BundleWriter::Create(call_dir, options.format);
  if (!w.ok()) return w.status();

  SnapshotOpenOptions open;
  open.type = SnapshotType::kDecomposed;
  open.box.lenient_length_byte = options.lenient_length_byte;
  open.access = SnapshotAccess::kMapped;
  absl::StatusOr<std::unique_ptr<SnapshotFile>> file =
      SnapshotFile::Open(decomposed_path, open);
  if (!file.ok()) return file.status();
  LiteralDecodeOptions decode;
  decode.temp_dir = (*w)->temp_path();  // transposes spill beside the bundle
  SnapshotReadOptions read;
  read.box = open.box;
  // The inputs become tensors; the rest of the file (region [2], the end)
  // must still be well formed.
  absl::Status s = (*file)->Read(read, [&](auto& reader) -> absl::Status {
    absl::StatusOr<const SnapshotHeader*> h = reader.ReadHeader();
    if (!h.ok()) return h.status();
    SnapshotLiteral lit;
    for (;;) {
      absl::StatusOr<bool> more = reader.Next(&lit);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (lit.role != LiteralRole::kInput) continue;
      absl::Status d = DecodeLiteral(
          reader.body(), lit.ranges, lit.frame(),
          (*w)->NextTensor(absl::StrCat("input ", lit.index)), decode);
      if (!d.ok()) return d;
    }
    return reader.Finish();
  });
  if (!s.ok()) return (*file)->Annotate(s);

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
  return (*w)->Commit(meta);
}

}  // namespace decomposed::capture
