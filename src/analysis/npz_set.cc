// A TensorSet over a NumPy .npz archive (tensor_set.h): the .npy entries
// of a stored zip (np.savez, `unpack --to npz`, `run --to npz`), each read
// in place with pread.
#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/analysis/tensor_set.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/capture/zip_reader.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"

namespace decomposed {
namespace {

struct NpzEntry {
  std::string name;
  uint64_t offset = 0;  // of the .npy bytes in the archive
  uint64_t size = 0;
  std::optional<PrimitiveType> dtype;  // --dtype, or the entry's .meta
  bool dtype_void_only = false;        // `--dtype TYPE`: the void entries'
};

// {"ml_dtype": NAME} -> the type.
absl::StatusOr<PrimitiveType> SidecarType(const std::string& text, const std::string& what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ml_dtype") ||
      !j["ml_dtype"].is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a JSON object {\"ml_dtype\": NAME}"));
  }
  const std::string name = j["ml_dtype"].get<std::string>();
  std::optional<PrimitiveType> t = PrimitiveTypeFromMlDtype(name);
  if (!t) t = ParseDtypeName(name);
  if (!t) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected an ml_dtypes name such as \"bfloat16\", found \"", name, "\""));
  }
  return *t;
}

class NpzSet final : public TensorSet {
 public:
  NpzSet(std::string path, std::string name, std::vector<NpzEntry> entries, bool both)
      : path_(std::move(path)), name_(std::move(name)), entries_(std::move(entries)),
        both_(both) {}

  std::string Name() const override { return name_; }
  size_t size() const override { return entries_.size(); }
  bool HasInputsAndOutputs() const override { return both_; }

  absl::StatusOr<TensorInfo> Describe(size_t i) override {
    absl::StatusOr<Opened> o = Open(i);
    if (!o.ok()) return o.status();
    return TensorInfo{o->info.type, o->info.header.shape, Label(i)};
  }
  absl::StatusOr<std::optional<TensorRun>> Run(size_t i) override {
    absl::StatusOr<Opened> o = Open(i);
    if (!o.ok()) return o.status();
    const NpyArrayInfo& info = o->info;
    if (info.swap_unit != 0 || (info.header.fortran_order && info.header.shape.size() >= 2)) {
      return std::optional<TensorRun>();
    }
    const int fd = ::fcntl(o->src->fd(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return WithFile(ErrnoError(errno, "duplicating"), path_);
    return std::optional<TensorRun>(
        TensorRun{OwnedFd(fd), o->src->backend().origin() + info.data_offset, info.data_bytes});
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    absl::StatusOr<Opened> o = Open(i);
    if (!o.ok()) return o.status();
    if (o->info.header.fortran_order && o->info.header.shape.size() >= 2) {
      return absl::UnimplementedError(absl::StrCat(
          Label(i), ": a Fortran-order array in an .npz is not read; save it C-ordered"));
    }
    LimitedSource<FdSource> view(*o->src, entries_[i].offset + entries_[i].size);
    return WithFile(ForEachNpyDataChunk(view, o->info, emit), path_);
  }

 private:
  struct Opened {
    std::unique_ptr<FdSource> src;
    NpyArrayInfo info;
  };

  std::string Label(size_t i) const { return absl::StrCat(path_, "[", entries_[i].name, "]"); }

  absl::StatusOr<Opened> Open(size_t i) {
    const NpzEntry& e = entries_[i];
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path_, &fd); !s.ok()) return s;
    Opened o{std::make_unique<FdSource>(std::move(fd)), {}};
    if (!o.src->Seek(e.offset)) return WithFile(o.src->status(), path_);
    LimitedSource<FdSource> view(*o.src, e.offset + e.size);
    NpyReadOptions ro;
    ro.dtype = e.dtype;
    ro.dtype_void_only = e.dtype_void_only;
    absl::StatusOr<NpyArrayInfo> info = ReadNpyArrayHeader(view, ro);
    if (!info.ok()) return WithFile(Prefix(info.status(), absl::StrCat("entry ", e.name)), path_);
    o.info = *std::move(info);
    return o;
  }

  std::string path_;
  std::string name_;
  std::vector<NpzEntry> entries_;
  bool both_;
};

// "value_input12.npy" -> 12 for stem "value_input".
std::optional<size_t> IndexOf(absl::string_view name, absl::string_view stem) {
  if (!absl::StartsWith(name, stem) || !absl::EndsWith(name, ".npy")) return std::nullopt;
  absl::string_view digits = name.substr(stem.size(), name.size() - stem.size() - 4);
  size_t k;
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0') ||
      !absl::SimpleAtoi(digits, &k)) {
    return std::nullopt;
  }
  return k;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorSet>> OpenNpzSet(const std::string& path,
                                                      const TensorSetOptions& options) {
  absl::StatusOr<capture::RegularFile> f = capture::RegularFile::Open(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<capture::ZipDirectory> dir = capture::ReadZipDirectory(*f);
  if (!dir.ok()) return WithFile(dir.status(), path);
  // An archive of unpack's names holds both lists: the one asked for.
  bool both = false;
  for (const auto& [name, e] : *dir) {
    both |= IndexOf(name, "value_input").has_value() || IndexOf(name, "snapshot_output").has_value();
  }
  std::vector<std::pair<std::string, const capture::ZipEntry*>> chosen;
  if (both) {
    const std::string stem = options.inputs ? "value_input" : "snapshot_output";
    std::vector<std::pair<size_t, std::string>> found;
    for (const auto& [name, e] : *dir) {
      if (std::optional<size_t> k = IndexOf(name, stem)) found.push_back({*k, name});
    }
    std::sort(found.begin(), found.end());
    for (size_t k = 0; k < found.size(); ++k) {
      if (found[k].first != k) {
        return absl::InvalidArgumentError(absl::StrCat(
            ".npz archive: expected an entry ", stem, k, ".npy, found ",
            k == 0 ? "none" : absl::StrCat(found[k].second, " next"), " (", path, ")"));
      }
      chosen.push_back({found[k].second, &dir->at(found[k].second)});
    }
  } else {
    // Any other archive: its .npy entries in the order they were written.
    for (const auto& [name, e] : *dir) {
      if (absl::EndsWith(name, ".npy")) chosen.push_back({name, &e});
    }
    std::sort(chosen.begin(), chosen.end(), [](const auto& a, const auto& b) {
      return a.second->local_offset < b.second->local_offset;
    });
  }
  std::vector<NpzEntry> entries;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const auto& [name, e] = chosen[i];
    absl::StatusOr<uint64_t> at = capture::ZipEntryDataOffset(*f, name, *e);
    if (!at.ok()) {
      if (at.status().code() == absl::StatusCode::kUnimplemented) {
        return WithFile(absl::UnimplementedError(absl::StrCat(
                            "entry ", name, ": expected a stored entry (np.savez), found a "
                            "compressed one (np.savez_compressed), which is not read")),
                        path);
      }
      return WithFile(at.status(), path);
    }
    NpzEntry n{name, *at, e->size, std::nullopt};
    auto d = options.dtypes.find(i);
    if (d != options.dtypes.end()) {
      n.dtype = d->second;
    } else if (options.dtype) {
      n.dtype = options.dtype;
      n.dtype_void_only = true;
    } else if (auto m = dir->find(name + ".meta"); m != dir->end()) {
      if (m->second.size > limits::kMaxSidecarBytes) {
        return WithFile(absl::ResourceExhaustedError(absl::StrCat(
                            "entry ", name, ".meta: a sidecar over 1 MiB is not a dtype note")),
                        path);
      }
      absl::StatusOr<uint64_t> mat = capture::ZipEntryDataOffset(*f, m->first, m->second);
      if (!mat.ok()) return WithFile(mat.status(), path);
      std::string text;
      if (absl::Status s = f->ReadAt(*mat, static_cast<size_t>(m->second.size), &text); !s.ok()) {
        return WithFile(s, path);
      }
      absl::StatusOr<PrimitiveType> t = SidecarType(text, absl::StrCat("entry ", m->first));
      if (!t.ok()) return WithFile(t.status(), path);
      n.dtype = *t;
    }
    entries.push_back(std::move(n));
  }
  std::string name = absl::StrCat(".npz archive ", path);
  if (both) absl::StrAppend(&name, options.inputs ? " (inputs)" : " (outputs)");
  return std::unique_ptr<TensorSet>(
      std::make_unique<NpzSet>(path, std::move(name), std::move(entries), both));
}

}  // namespace decomposed
