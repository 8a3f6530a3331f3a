// The two UnpackDestinations (unpack.h): a tree of files, one per piece,
// and one npz archive with an entry per piece.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/dirs.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npz_writer.h"
#include "decomposed/snapshot/unpack.h"
#include "decomposed/status.h"

namespace decomposed {
namespace {

// mkdir -p of the directory part of `prefix` ("out/", "a/b/pre_", "x.npz").
absl::Status EnsureOutputDir(const std::string& prefix) {
  size_t slash = prefix.rfind('/');
  if (slash == std::string::npos || slash == 0) return absl::OkStatus();
  return internal::MakeDirectories(prefix.substr(0, slash));
}

// kNpyFiles: each piece its own file, committed (renamed into place) at
// End. One piece is open at a time; the directory part of output_prefix is
// made at the first (create_output_dir).
class FileTreeDestination final : public UnpackDestination {
 public:
  explicit FileTreeDestination(const UnpackOptions& options)
      : options_(options) {}

  absl::Status Begin(const std::string& path, uint64_t /*size*/) override {
    if (!dir_made_ && options_.create_output_dir) {
      if (absl::Status s = EnsureOutputDir(options_.output_prefix); !s.ok()) {
        return s;
      }
    }
    dir_made_ = true;
    path_ = path;
    return out_.emplace().Open(path);
  }
  absl::Status Append(std::string_view chunk) override {
    return out_->Write(chunk) ? absl::OkStatus() : out_->status();
  }
  absl::Status End(UnpackedFile* f) override {
    array_.reset();
    if (!out_->status().ok()) return out_->status();
    f->bytes = out_->position();
    f->path = path_;
    absl::Status s = out_->Commit();
    out_.reset();
    return s;
  }
  absl::Status Write(const std::string& path, std::string_view data,
                     UnpackedFile* f) override {
    if (absl::Status s = Begin(path, data.size()); !s.ok()) return s;
    if (absl::Status s = Append(data); !s.ok()) return s;
    return End(f);
  }
  absl::StatusOr<ArraySink*> BeginArray(const std::string& path) override {
    if (absl::Status s = Begin(path, 0); !s.ok()) return s;
    return &array_.emplace(*out_);
  }
  absl::Status EndArray(UnpackedFile* f) override { return End(f); }
  absl::StatusOr<std::optional<UnpackedFile>> Finish() override {
    return std::optional<UnpackedFile>();
  }

 private:
  const UnpackOptions& options_;
  bool dir_made_ = false;
  std::string path_;
  std::optional<AtomicFileSink> out_;
  std::optional<NpyArraySink<AtomicFileSink>> array_;
};

// kNpz: one archive, opened at the first piece (or at Finish when there is
// none), each piece an entry named by its path after output_prefix.
class NpzDestination final : public UnpackDestination {
 public:
  explicit NpzDestination(const UnpackOptions& options) : options_(options) {}

  absl::Status Begin(const std::string& path, uint64_t size) override {
    if (absl::Status s = Open(); !s.ok()) return s;
    entry_ = EntryName(path);
    return npz_->BeginEntry(entry_, size);
  }
  absl::Status Append(std::string_view chunk) override {
    return npz_->Append(chunk) ? absl::OkStatus() : ArchiveError();
  }
  absl::Status End(UnpackedFile* f) override {
    if (absl::Status s = npz_->EndEntry(); !s.ok()) return s;
    Fill(f);
    return absl::OkStatus();
  }
  absl::Status Write(const std::string& path, std::string_view data,
                     UnpackedFile* f) override {
    if (absl::Status s = Open(); !s.ok()) return s;
    entry_ = EntryName(path);
    if (absl::Status s = npz_->AddEntry(entry_, data); !s.ok()) return s;
    Fill(f);
    return absl::OkStatus();
  }
  absl::StatusOr<ArraySink*> BeginArray(const std::string& path) override {
    if (absl::Status s = Open(); !s.ok()) return s;
    entry_ = EntryName(path);
    return &array_.emplace(*npz_, entry_);
  }
  // The array sink's Finish (DecodeLiteral calls it) ended the entry.
  absl::Status EndArray(UnpackedFile* f) override {
    array_.reset();
    Fill(f);
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<UnpackedFile>> Finish() override {
    if (absl::Status s = Open(); !s.ok()) return s;
    if (absl::Status s = npz_->Finish(); !s.ok()) {
      return Prefix(s, absl::StrCat("writing ", options_.npz_path));
    }
    UnpackedFile f;
    f.path = options_.npz_path;
    f.kind = UnpackedKind::kArchive;
    f.bytes = file_.position();
    if (absl::Status s = file_.Commit(); !s.ok()) return s;
    npz_.reset();
    return std::optional<UnpackedFile>(std::move(f));
  }

 private:
  absl::Status Open() {
    if (npz_) return absl::OkStatus();
    if (options_.npz_path.empty()) {
      return absl::InvalidArgumentError(
          "unpack to npz: no archive path (UnpackOptions::npz_path)");
    }
    if (options_.create_output_dir) {
      if (absl::Status s = EnsureOutputDir(options_.npz_path);
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = file_.Open(options_.npz_path); !s.ok()) return s;
    npz_.emplace(file_);
    return absl::OkStatus();
  }
  absl::Status ArchiveError() const {
    absl::Status s = file_.status();
    if (s.ok()) s = absl::DataLossError("write failed");
    return Prefix(s, absl::StrCat("writing ", options_.npz_path));
  }
  std::string EntryName(const std::string& path) const {
    const std::string& prefix = options_.output_prefix;
    if (path.compare(0, prefix.size(), prefix) == 0) {
      return path.substr(prefix.size());
    }
    return path;
  }
  // The entry just ended: its data runs from data_offset() to the end.
  void Fill(UnpackedFile* f) const {
    f->path = options_.npz_path;
    f->entry = entry_;
    f->archive_offset = npz_->data_offset();
    f->bytes = file_.position() - npz_->data_offset();
  }

  const UnpackOptions& options_;
  AtomicFileSink file_;
  std::optional<NpzWriter<AtomicFileSink>> npz_;
  std::optional<NpzArraySink<AtomicFileSink>> array_;
  std::string entry_;
};

}  // namespace

std::unique_ptr<UnpackDestination> MakeUnpackDestination(
    const UnpackOptions& options) {
  if (options.output_format == UnpackFormat::kNpz) {
    return std::make_unique<NpzDestination>(options);
  }
  return std::make_unique<FileTreeDestination>(options);
}

}  // namespace decomposed
