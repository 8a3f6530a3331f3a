#include "decomposed/analysis/tensor_set.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/analysis/snapshot_set.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/pt_reader.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/status.h"
#include "decomposed/xla/shape.h"
#include "decomposed/xla/transpose.h"

namespace decomposed {
namespace {

namespace fs = std::filesystem;

// --- .npy files ---------------------------------------------------------

// One .npy file, with its true dtype for void descrs (sidecar or option).
struct NpyTensor {
  std::string path;
  std::optional<PrimitiveType> dtype;
  bool dtype_void_only = false;  // `--dtype TYPE`: the void files' type
};

struct OpenedNpy {
  std::unique_ptr<FdSource> src;
  NpyArrayInfo info;
};

absl::StatusOr<OpenedNpy> OpenNpy(const NpyTensor& t) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(t.path, &fd); !s.ok()) return s;
  OpenedNpy out{std::make_unique<FdSource>(std::move(fd)), {}};
  NpyReadOptions o;
  o.dtype = t.dtype;
  o.dtype_void_only = t.dtype_void_only;
  if (!o.dtype) {
    absl::StatusOr<std::optional<PrimitiveType>> side = ReadNpyMetaSidecar(t.path);
    if (!side.ok()) return WithFile(side.status(), t.path + ".meta");
    o.dtype = *side;
  }
  absl::StatusOr<NpyArrayInfo> info = ReadNpyArrayHeader(*out.src, o);
  if (!info.ok()) return WithFile(info.status(), t.path);
  out.info = *std::move(info);
  return out;
}

// Memory for gathering a Fortran-order array (both sides of a compare may
// do so at once, beside the 4 MiB pipe).
constexpr uint64_t kNpyTransposeBytes = 16 << 20;

// Streams a Fortran-order array of rank >= 2 in logical row-major order:
// its data is the column-major layout {0, 1, ..., rank-1}, gathered by the
// transposing store in tiles read with pread (GatherTiled), so memory stays
// within kNpyTransposeBytes whatever the array's size. Big-endian data is
// swapped after the gather (the gather moves whole elements).
absl::Status StreamFortran(OpenedNpy& f, const std::string& path, const ChunkFn& emit) {
  const NpyArrayInfo& info = f.info;
  Shape shape;
  shape.dimensions = info.header.shape;
  for (size_t d = 0; d < shape.dimensions.size(); ++d) {
    shape.layout.minor_to_major.push_back(static_cast<int64_t>(d));
  }
  const int fd = f.src->fd();
  const uint64_t origin = f.src->backend().origin() + info.data_offset;
  std::string swapped;
  struct Out {
    const ChunkFn& emit;
    uint32_t swap_unit;
    std::string& scratch;
    absl::Status Put(std::string_view c) {
      if (swap_unit == 0) return emit(c);
      scratch.assign(c.data(), c.size());
      internal::SwapUnits(scratch.data(), scratch.size(), swap_unit);
      return emit(scratch);
    }
  } out{emit, info.swap_unit, swapped};
  absl::Status s = internal::GatherTiled(
      [&](uint64_t off, char* dst, size_t n) {
        return internal::PreadFully(fd, origin + off, dst, n, "npy data");
      },
      shape, info.item_bytes, out, kNpyTransposeBytes);
  return WithFile(s, path);
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenUnpackDir(
    const std::string& dir, const TensorSetOptions& o);

class NpyFilesSet : public TensorSet {
 public:
  NpyFilesSet(std::string name, std::vector<NpyTensor> files, bool unpack_dir,
              std::string dir = "", TensorSetOptions options = {})
      : name_(std::move(name)),
        files_(std::move(files)),
        unpack_dir_(unpack_dir),
        dir_(std::move(dir)),
        options_(std::move(options)) {}
  absl::StatusOr<std::unique_ptr<TensorSet>> OtherList() override {
    if (!unpack_dir_) return TensorSet::OtherList();
    TensorSetOptions other = options_;
    other.inputs = !other.inputs;
    return OpenUnpackDir(dir_, other);
  }
  std::string Name() const override { return name_; }
  bool HasInputsAndOutputs() const override { return unpack_dir_; }
  size_t size() const override { return files_.size(); }
  absl::StatusOr<TensorInfo> Describe(size_t i) override {
    absl::StatusOr<OpenedNpy> f = OpenNpy(files_[i]);
    if (!f.ok()) return f.status();
    return TensorInfo{f->info.type, f->info.header.shape, files_[i].path};
  }
  absl::StatusOr<std::optional<TensorRun>> Run(size_t i) override {
    absl::StatusOr<OpenedNpy> f = OpenNpy(files_[i]);
    if (!f.ok()) return f.status();
    const NpyArrayInfo& info = f->info;
    if (info.swap_unit != 0 ||
        (info.header.fortran_order && info.header.shape.size() >= 2)) {
      return std::optional<TensorRun>();
    }
    const int fd = ::dup(f->src->fd());
    if (fd < 0) return ErrnoError(errno, absl::StrCat("dup ", files_[i].path));
    return std::optional<TensorRun>(TensorRun{
        OwnedFd(fd), f->src->backend().origin() + info.data_offset, info.data_bytes});
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    absl::StatusOr<OpenedNpy> f = OpenNpy(files_[i]);
    if (!f.ok()) return f.status();
    if (f->info.header.fortran_order && f->info.header.shape.size() >= 2) {
      return StreamFortran(*f, files_[i].path, emit);
    }
    absl::Status s = ForEachNpyDataChunk(*f->src, f->info, emit);
    return WithFile(s, files_[i].path);
  }

 private:
  std::string name_;
  std::vector<NpyTensor> files_;
  bool unpack_dir_;
  std::string dir_;           // an unpack directory's
  TensorSetOptions options_;  // an unpack directory's
};

// Tensor i's file with its --dtype: INDEX=TYPE for that tensor whatever its
// descr, else TYPE for every void one.
NpyTensor TensorFor(std::string path, const TensorSetOptions& o, size_t i) {
  auto it = o.dtypes.find(i);
  if (it != o.dtypes.end()) return {std::move(path), it->second, false};
  return {std::move(path), o.dtype, o.dtype.has_value()};
}

// value_input<i>.npy / snapshot_output<j>.npy, i = 0..n-1.
absl::StatusOr<std::unique_ptr<TensorSet>> OpenUnpackDir(
    const std::string& dir, const TensorSetOptions& o) {
  const std::string stem = o.inputs ? "value_input" : "snapshot_output";
  std::vector<size_t> found;
  bool unpack_like = false;  // model.hlo, or a tensor of either list
  bool other_npy = false, empty = true;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    empty = false;
    other_npy = other_npy || absl::EndsWith(name, ".npy");
    unpack_like = unpack_like || name == "model.hlo" ||
                  ((absl::StartsWith(name, "value_input") ||
                    absl::StartsWith(name, "snapshot_output")) &&
                   absl::EndsWith(name, ".npy"));
    if (!absl::StartsWith(name, stem) || !absl::EndsWith(name, ".npy")) continue;
    std::string_view digits(name);
    digits.remove_prefix(stem.size());
    digits.remove_suffix(4);
    size_t index;
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0') ||
        !absl::SimpleAtoi(Sv(digits), &index)) {
      continue;
    }
    found.push_back(index);
  }
  if (ec) return ErrnoError(ec.value(), absl::StrCat("listing ", dir));
  if (!unpack_like && (empty || other_npy)) {
    // An empty list is an answer only for a directory of unpack's (a
    // module of no parameters, its module perhaps renamed by --module); an
    // empty directory or one of other .npy files is a mistyped or
    // unrelated one: an error.
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": expected an unpack directory (model.hlo, value_input<i>.npy, "
             "snapshot_output<j>.npy) or a bundle call directory (meta.json), "
             "found ", empty ? "an empty directory" : ".npy files of other names"));
  }
  std::sort(found.begin(), found.end());
  std::vector<NpyTensor> files;
  for (size_t k = 0; k < found.size(); ++k) {
    if (found[k] != k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unpack directory: expected ", stem, k, ".npy, found ",
          k == 0 ? "none" : absl::StrCat(stem, found[k], ".npy next"), " (", dir, ")"));
    }
    files.push_back(TensorFor((fs::path(dir) / absl::StrCat(stem, k, ".npy")).string(), o, k));
  }
  return std::unique_ptr<TensorSet>(std::make_unique<NpyFilesSet>(
      absl::StrCat("unpack directory ", dir, " (", stem, "<i>.npy)"), std::move(files),
      /*unpack_dir=*/true, dir, o));
}

// --- single .pt files ---------------------------------------------------

// One torch.save file of one tensor: dtype, shape and data from the file
// itself (capture/pt_reader.h), streamed by pread in 1 MiB chunks.
class PtFileSet : public TensorSet {
 public:
  explicit PtFileSet(std::string path) : path_(std::move(path)) {}
  std::string Name() const override { return absl::StrCat(".pt file ", path_); }
  size_t size() const override { return 1; }
  absl::StatusOr<TensorInfo> Describe(size_t) override {
    absl::StatusOr<capture::PtTensor> t = Read();
    if (!t.ok()) return t.status();
    return TensorInfo{t->dtype->xla_type, t->shape, path_};
  }
  absl::StatusOr<std::optional<TensorRun>> Run(size_t) override {
    absl::StatusOr<capture::PtTensor> t = Read();
    if (!t.ok()) return t.status();
    // (A file changed since it was checked makes the reads fail, never
    // read past its end: pread reports the end.)
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path_, &fd); !s.ok()) return s;
    return std::optional<TensorRun>(TensorRun{std::move(fd), t->data_offset, t->byte_size});
  }
  absl::Status Stream(size_t, const ChunkFn& emit) override {
    absl::StatusOr<capture::RegularFile> f = capture::RegularFile::Open(path_);
    if (!f.ok()) return f.status();
    absl::StatusOr<capture::PtTensor> t = capture::ReadPtTensor(*f);
    if (!t.ok()) return t.status();
    constexpr uint64_t kChunk = 1 << 20;
    std::string buf;
    for (uint64_t done = 0; done < t->byte_size;) {
      const size_t n = static_cast<size_t>(std::min(kChunk, t->byte_size - done));
      if (absl::Status s = f->ReadAt(t->data_offset + done, n, &buf); !s.ok()) {
        return WithFile(s, path_);
      }
      if (absl::Status s = emit(buf); !s.ok()) return s;
      done += n;
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<capture::PtTensor> Read() {
    absl::StatusOr<capture::RegularFile> f = capture::RegularFile::Open(path_);
    if (!f.ok()) return f.status();
    absl::StatusOr<capture::PtTensor> t = capture::ReadPtTensor(*f);
    if (!t.ok()) return t.status();
    if (t->dtype->xla_type == PrimitiveType::kInvalid) {
      return absl::UnimplementedError(absl::StrCat(
          ".pt tensor: expected a dtype with an XLA type, found ",
          Sv(t->dtype->name), " (", path_, ")"));
    }
    return t;
  }

  std::string path_;
};

// --- bundles ------------------------------------------------------------

class BundleSet : public TensorSet {
 public:
  explicit BundleSet(capture::Bundle b) : b_(std::move(b)) {}
  std::string Name() const override { return absl::StrCat("bundle ", b_.path); }
  size_t size() const override { return b_.inputs.size(); }
  absl::StatusOr<TensorInfo> Describe(size_t i) override {
    const capture::BundleInput& in = b_.inputs[i];
    if (in.dtype == nullptr || in.dtype->xla_type == PrimitiveType::kInvalid) {
      return absl::UnimplementedError(absl::StrCat(
          "bundle meta.json: input ", i, " has a dtype with no XLA type (", b_.path, ")"));
    }
    if (absl::StatusOr<capture::TensorData> d = capture::LocateTensor(b_, i); !d.ok()) {
      return d.status();
    }
    return TensorInfo{in.dtype->xla_type, in.shape, in.path};
  }
  absl::StatusOr<std::optional<TensorRun>> Run(size_t i) override {
    if (absl::StatusOr<TensorInfo> t = Describe(i); !t.ok()) return t.status();
    absl::StatusOr<capture::TensorData> d = capture::LocateTensor(b_, i);
    if (!d.ok()) return d.status();
    // StreamTensor emits exactly these bytes.
    OwnedFd fd;
    if (absl::Status s = OpenForReading(b_.inputs[i].path, &fd); !s.ok()) return s;
    return std::optional<TensorRun>(TensorRun{std::move(fd), d->offset, d->size});
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    absl::Status inner;
    absl::Status s = capture::StreamTensor(b_, i, [&](std::string_view c) {
      inner = emit(c);
      return inner.ok();
    });
    if (!inner.ok()) return inner;
    return s;
  }

 private:
  capture::Bundle b_;
};

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

absl::Status ParseDtypeOptions(const std::vector<std::string>& values,
                               TensorSetOptions* options) {
  for (const std::string& d : values) {
    const size_t eq = d.find('=');
    const std::string type = eq == std::string::npos ? d : d.substr(eq + 1);
    std::optional<PrimitiveType> t = ParseDtypeName(type);
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat("--dtype: unknown type '", type, "'"));
    }
    if (eq == std::string::npos) {
      options->dtype = *t;
      continue;
    }
    size_t index;
    if (!absl::SimpleAtoi(d.substr(0, eq), &index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dtype: expected INDEX=TYPE, found '", d, "'"));
    }
    options->dtypes[index] = *t;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TensorSet>> OpenTensorSet(
    const std::string& path, const TensorSetOptions& options) {
  TensorSetKind kind = options.kind;
  if (kind == TensorSetKind::kAuto) {
    if (IsDir(path)) {
      kind = fs::exists(fs::path(path) / "meta.json") ? TensorSetKind::kBundle
                                                      : TensorSetKind::kUnpackDir;
    } else if (absl::EndsWith(path, ".npy")) {
      kind = TensorSetKind::kNpy;
    } else if (absl::EndsWith(path, ".pt")) {
      kind = TensorSetKind::kPt;
    } else if (absl::EndsWith(path, ".npz")) {
      kind = TensorSetKind::kNpz;
    } else {
      kind = TensorSetKind::kSnapshot;
    }
  }
  switch (kind) {
    case TensorSetKind::kUnpackDir:
      return OpenUnpackDir(path, options);
    case TensorSetKind::kBundle: {
      absl::StatusOr<capture::Bundle> b = capture::OpenBundle(path);
      if (!b.ok()) return b.status();
      return std::unique_ptr<TensorSet>(std::make_unique<BundleSet>(*std::move(b)));
    }
    case TensorSetKind::kNpy: {
      // One file: TYPE is its type, as 0=TYPE (a bf16 saved as <u2 reads
      // as bf16); the void-only rule is for sets of many.
      NpyTensor t = TensorFor(path, options, 0);
      t.dtype_void_only = t.dtype_void_only && options.dtype_void_only;
      std::vector<NpyTensor> one = {std::move(t)};
      return std::unique_ptr<TensorSet>(
          std::make_unique<NpyFilesSet>(absl::StrCat(".npy file ", path), std::move(one),
                                        /*unpack_dir=*/false));
    }
    case TensorSetKind::kPt: {
      // Open it now, so that a missing or malformed file fails here.
      auto set = std::make_unique<PtFileSet>(path);
      if (absl::StatusOr<TensorInfo> t = set->Describe(0); !t.ok()) return t.status();
      return std::unique_ptr<TensorSet>(std::move(set));
    }
    case TensorSetKind::kNpz:
      return OpenNpzSet(path, options);
    case TensorSetKind::kSnapshot:
    case TensorSetKind::kAuto:
      break;
  }
  return OpenSnapshotSet(path, options.inputs, options.snapshot_type);
}

}  // namespace decomposed
