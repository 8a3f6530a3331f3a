// WriteOutputs, the .npy writer of arrays, and ValueTensorSet (run/run.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/dirs.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/npy/npz_writer.h"
#include "decomposed/run/run.h"
#include "decomposed/status.h"
#include "run_internal.h"

namespace decomposed::run {
namespace {

// Payload chunks handed to a sink or a TensorSet's reader.
constexpr uint64_t kChunkBytes = 4 << 20;

std::string NpyHeaderText(const eval::Array& a) {
  return FormatNpyHeader(NpyHeaderFor(a.type_info(), a.dims()));
}

// One output file staged under a temp name.
struct Staged {
  std::unique_ptr<AtomicFileSink> sink;
  WrittenFile info;
};

class ValueSet final : public TensorSet {
 public:
  ValueSet(std::vector<eval::Value> values, std::string name, std::string label)
      : values_(std::move(values)), name_(std::move(name)), label_(std::move(label)) {}

  std::string Name() const override { return name_; }
  size_t size() const override { return values_.size(); }
  absl::StatusOr<TensorInfo> Describe(size_t i) override {
    if (!values_[i].is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, " ", i, ": expected an array, found the tuple ", values_[i].ShapeString()));
    }
    const eval::Array& a = values_[i].array();
    return TensorInfo{a.type(), a.dims(), absl::StrCat(label_, " ", i, " of ", name_)};
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    absl::StatusOr<TensorInfo> info = Describe(i);
    if (!info.ok()) return info.status();
    absl::StatusOr<eval::Array> c = values_[i].array().Contiguous();
    if (!c.ok()) return c.status();
    const std::string_view bytes = c->bytes();
    // Chunks of whole elements.
    const uint64_t width = std::max<uint64_t>(1, c->element_bytes());
    const uint64_t step = std::max<uint64_t>(width, kChunkBytes / width * width);
    for (uint64_t at = 0; at < bytes.size(); at += step) {
      if (absl::Status s = emit(bytes.substr(at, step)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<eval::Value> values_;
  std::string name_;
  std::string label_;
};

}  // namespace

absl::Status EnsureParentDir(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (slash == std::string::npos || slash == 0) return absl::OkStatus();
  return internal::MakeDirectories(prefix.substr(0, slash));
}

absl::Status WriteArrayNpy(AtomicFileSink& sink, const eval::Array& array,
                           uint64_t* file_bytes) {
  absl::StatusOr<eval::Array> c = array.Contiguous();
  if (!c.ok()) return c.status();
  NpySink<AtomicFileSink> npy(sink);
  if (absl::Status s = npy.Begin(NpyHeaderFor(c->type_info(), c->dims()), c->byte_size());
      !s.ok()) {
    return s;
  }
  const std::string_view bytes = c->bytes();
  for (uint64_t at = 0; at < bytes.size(); at += kChunkBytes) {
    if (!npy.Write(bytes.substr(at, kChunkBytes))) return npy.status();
  }
  if (absl::Status s = npy.Finish(); !s.ok()) return s;
  if (file_bytes) *file_bytes = npy.file_bytes();
  return absl::OkStatus();
}

absl::Status WriteNpyFile(const std::string& path, const eval::Array& array, uint64_t* bytes) {
  AtomicFileSink f;
  if (absl::Status s = f.Open(path); !s.ok()) return s;
  uint64_t n = 0;
  if (absl::Status s = WriteArrayNpy(f, array, &n); !s.ok()) return s;
  if (absl::Status s = f.Commit(); !s.ok()) return s;
  const std::string_view ml = array.type_info().ml_dtype;
  if (!ml.empty()) {
    if (absl::Status s = WriteNpyMetaSidecar(path, ml); !s.ok()) return s;
    n += NpyMetaSidecarText(ml).size();
  }
  if (bytes) *bytes = n;
  return absl::OkStatus();
}

absl::Status WriteOutputs(std::span<const eval::Value> outputs, const OutputOptions& options,
                          std::vector<WrittenFile>* written) {
  if (options.format == OutputFormat::kNone) return absl::OkStatus();
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", j, ": expected an array to write, found the tuple ",
          outputs[j].ShapeString(), " (a nested tuple root)"));
    }
  }
  std::vector<WrittenFile> local;
  std::vector<WrittenFile>& out = written ? *written : local;
  if (options.format == OutputFormat::kNpz) {
    if (options.npz_path.empty()) {
      return absl::InvalidArgumentError("an .npz output without a path");
    }
    if (options.create_dirs) {
      if (absl::Status s = EnsureParentDir(options.npz_path); !s.ok()) return s;
    }
    AtomicFileSink file;
    if (absl::Status s = file.Open(options.npz_path); !s.ok()) return s;
    NpzWriter<AtomicFileSink> npz(file);
    std::vector<WrittenFile> entries;
    for (size_t j = 0; j < outputs.size(); ++j) {
      absl::StatusOr<eval::Array> c = outputs[j].array().Contiguous();
      if (!c.ok()) return c.status();
      const std::string name = absl::StrCat("snapshot_output", j, ".npy");
      const std::string header = NpyHeaderText(*c);
      if (absl::Status s = npz.BeginEntry(name, header.size() + c->byte_size()); !s.ok()) {
        return s;
      }
      bool ok = npz.Append(header);
      const std::string_view bytes = c->bytes();
      for (uint64_t at = 0; ok && at < bytes.size(); at += kChunkBytes) {
        ok = npz.Append(bytes.substr(at, kChunkBytes));
      }
      if (!ok) return Prefix(npz.status(), absl::StrCat("npz entry ", name));
      if (absl::Status s = npz.EndEntry(); !s.ok()) return s;
      WrittenFile w{options.npz_path, name, static_cast<int64_t>(j), false, c->ShapeString(),
                    std::string(c->type_info().npy_descr), header.size() + c->byte_size()};
      entries.push_back(w);
      const std::string_view ml = c->type_info().ml_dtype;
      if (!ml.empty()) {
        const std::string text = NpyMetaSidecarText(ml);
        if (absl::Status s = npz.AddEntry(name + ".meta", text); !s.ok()) return s;
        entries.push_back({options.npz_path, name + ".meta", static_cast<int64_t>(j), true,
                           c->ShapeString(), "", text.size()});
      }
    }
    if (absl::Status s = npz.Finish(); !s.ok()) return s;
    const uint64_t size = file.position();
    if (absl::Status s = file.Commit(); !s.ok()) return s;
    out.insert(out.end(), entries.begin(), entries.end());
    out.push_back({options.npz_path, "", -1, false, "", "", size});
    return absl::OkStatus();
  }
  // One file per output (and sidecar), each staged under a temp name; all
  // renamed once every one is complete.
  if (options.create_dirs) {
    if (absl::Status s = EnsureParentDir(options.prefix); !s.ok()) return s;
  }
  std::vector<Staged> staged;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const eval::Array& a = outputs[j].array();
    const std::string path = absl::StrCat(options.prefix, "snapshot_output", j, ".npy");
    Staged st;
    st.sink = std::make_unique<AtomicFileSink>();
    if (absl::Status s = st.sink->Open(path); !s.ok()) return s;
    uint64_t n = 0;
    if (absl::Status s = WriteArrayNpy(*st.sink, a, &n); !s.ok()) return s;
    st.info = {path, "", static_cast<int64_t>(j), false, a.ShapeString(),
               std::string(a.type_info().npy_descr), n};
    staged.push_back(std::move(st));
    const std::string_view ml = a.type_info().ml_dtype;
    if (!ml.empty()) {
      Staged meta;
      meta.sink = std::make_unique<AtomicFileSink>();
      if (absl::Status s = meta.sink->Open(path + ".meta"); !s.ok()) return s;
      const std::string text = NpyMetaSidecarText(ml);
      if (!meta.sink->Write(text)) return meta.sink->status();
      meta.info = {path + ".meta", "", static_cast<int64_t>(j), true, a.ShapeString(), "",
                   text.size()};
      staged.push_back(std::move(meta));
    }
  }
  // Every temp file is complete: flush them all, check that no final name
  // is taken by a directory (the one way a rename would fail here), then
  // rename them all. Should a rename still fail, the files renamed before
  // it are removed again.
  for (Staged& st : staged) {
    if (!st.sink->Flush()) return st.sink->status();
    struct stat sb;
    if (::stat(st.info.path.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "writing ", st.info.path, ": expected a file name, found a directory there"));
    }
  }
  std::vector<std::string> renamed;
  for (Staged& st : staged) {
    if (absl::Status s = st.sink->Commit(); !s.ok()) {
      for (const std::string& p : renamed) ::unlink(p.c_str());
      return s;
    }
    renamed.push_back(st.info.path);
  }
  for (Staged& st : staged) out.push_back(st.info);
  return absl::OkStatus();
}

std::unique_ptr<TensorSet> ValueTensorSet(std::vector<eval::Value> values, std::string name,
                                          std::string label) {
  return std::make_unique<ValueSet>(std::move(values), std::move(name), std::move(label));
}

}  // namespace decomposed::run
