#include "decomposed/npy/npy_literal.h"

#include <utility>

#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/status.h"

namespace decomposed {
namespace {

// The .npy file, its header, and the element source the encoder reads.
class NpyFileLiteral final : public EncodedLiteral, private ElementSource {
 public:
  NpyFileLiteral(std::string path, std::optional<PrimitiveType> dtype,
                 LiteralEncodeOptions options)
      : EncodedLiteral(std::move(options)), path_(std::move(path)),
        dtype_(dtype) {}

  std::optional<FileSpan> AsFileSpan() const override {
    const LiteralEncoder* e = encoder();
    if (!e || !info_ || info_->swap_unit != 0 || !e->PayloadIsVerbatim() ||
        e->element_count() == 0) {
      return std::nullopt;
    }
    return FileSpan{e->Head(), path_, info_->data_offset, info_->data_bytes};
  }

 private:
  absl::StatusOr<ArraySpec> PrepareSpec() override {
    NpyReadOptions read;
    read.dtype = dtype_;
    if (!read.dtype) {
      absl::StatusOr<std::optional<PrimitiveType>> side =
          ReadNpyMetaSidecar(path_);
      if (!side.ok()) return Prefix(side.status(), options().name);
      read.dtype = *side;
    }
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path_, &fd); !s.ok()) return s;
    src_.emplace(std::move(fd));
    absl::StatusOr<NpyArrayInfo> info = ReadNpyArrayHeader(*src_, read);
    if (!info.ok()) return Prefix(WithFile(info.status(), path_), options().name);
    info_ = *std::move(info);
    ArraySpec spec;
    spec.type = info_->type;
    spec.dims = info_->header.shape;
    if (info_->header.fortran_order) {
      std::vector<int64_t> m;
      for (size_t i = 0; i < spec.dims.size(); ++i) {
        m.push_back(static_cast<int64_t>(i));
      }
      spec.minor_to_major = std::move(m);
    }
    return spec;
  }

  ElementSource* source() override { return this; }

  // ElementSource: the data bytes, from the open file, on every pass.
  absl::Status ForEachChunk(const ChunkFn& fn) override {
    if (!src_ || !info_) {
      return absl::FailedPreconditionError("Prepare() not called");
    }
    if (!src_->Seek(info_->data_offset)) {
      if (!src_->status().ok()) return WithFile(src_->status(), path_);
      return WithFile(TruncatedError(Frame{"npy data"}, 0, info_->data_offset,
                                     src_->position()),
                      path_);
    }
    return WithFile(ForEachNpyDataChunk(*src_, *info_, fn), path_);
  }

  std::string path_;
  std::optional<PrimitiveType> dtype_;
  std::optional<FdSource> src_;
  std::optional<NpyArrayInfo> info_;
};

}  // namespace

std::unique_ptr<LiteralSource> NpyLiteral(std::string path,
                                          std::optional<PrimitiveType> dtype,
                                          LiteralEncodeOptions options) {
  return std::make_unique<NpyFileLiteral>(std::move(path), dtype,
                                          std::move(options));
}

}  // namespace decomposed
