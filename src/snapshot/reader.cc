#include "decomposed/snapshot/reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/input.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/xla/shape.h"

namespace decomposed {

std::string_view LiteralRoleName(LiteralRole role) {
  return role == LiteralRole::kOutput ? "output" : "input";
}

namespace {

std::string ShapeText(const xla::ShapeProto& s) {
  absl::StatusOr<Shape> parsed =
      ParseShape(s.SerializeAsString(), Frame{"program shape"});
  return parsed.ok() ? parsed->ToString() : "<malformed>";
}

}  // namespace

std::vector<std::string> ModuleFacts::parameter_names() const {
  if (!program_shape) return {};
  return {program_shape->parameter_names().begin(),
          program_shape->parameter_names().end()};
}

std::vector<std::string> ModuleFacts::parameter_shapes() const {
  std::vector<std::string> out;
  if (!program_shape) return out;
  for (const xla::ShapeProto& p : program_shape->parameters()) {
    out.push_back(ShapeText(p));
  }
  return out;
}

std::string ModuleFacts::result_shape() const {
  if (!program_shape || !program_shape->has_result()) return "";
  return ShapeText(program_shape->result());
}

std::string ModuleFacts::program_shape_text() const {
  if (!program_shape) return "";
  return absl::StrCat("(", absl::StrJoin(parameter_shapes(), ", "), ") -> ",
                      program_shape->has_result() ? result_shape() : "()");
}

bool ModuleFacts::single_tuple_parameter() const {
  return program_shape && internal::SingleTupleParameter(*program_shape);
}

ModuleFacts FactsOf(const xla::HloModuleProto& module) {
  ModuleFacts f;
  f.name = module.name();
  f.entry_computation_name = module.entry_computation_name();
  if (module.has_host_program_shape()) {
    f.program_shape = module.host_program_shape();
  }
  return f;
}

// --- SnapshotFile -------------------------------------------------------------

SnapshotFile::~SnapshotFile() = default;

absl::StatusOr<std::unique_ptr<SnapshotFile>> SnapshotFile::Open(
    const std::string& path, const SnapshotOpenOptions& options) {
  absl::StatusOr<InputFile> in = OpenInput(path);
  if (!in.ok()) return in.status();
  std::unique_ptr<SnapshotFile> f(new SnapshotFile());
  f->path_ = path;
  f->requested_ = options.type;
  if (in->regular) {
    if (absl::Status s = f->Adopt(std::move(in->fd), options); !s.ok()) {
      return s;
    }
    absl::StatusOr<SnapshotTypeEvidence> e =
        f->buffered_ ? DescribeSnapshotSource(*f->buffered_, options.box)
                     : DescribeSnapshotSource(*f->mapped_, options.box);
    if (!e.ok()) return WithFile(e.status(), path);
    f->evidence_ = *std::move(e);
    f->type_ =
        options.type == SnapshotType::kAuto ? f->evidence_.type : options.type;
    return f;
  }
  // A stream: detected on the bytes it gives (which the spool keeps), then
  // read in one pass, or first copied whole to a temp file.
  f->from_stream_ = true;
  f->stream_ = std::make_unique<SpoolSource<OwnedFd>>(std::move(in->fd));
  SpoolSource<OwnedFd>& src = *f->stream_;
  if (!src.Pull(1)) {
    if (!src.status().ok()) return WithFile(src.status(), path);
    return EmptySnapshotError(path);
  }
  absl::StatusOr<SnapshotTypeEvidence> e =
      DescribeSnapshotSource(src, options.box);
  if (!e.ok()) return WithFile(e.status(), path);
  f->evidence_ = *std::move(e);
  f->type_ =
      options.type == SnapshotType::kAuto ? f->evidence_.type : options.type;
  if (!src.Seek(0)) {
    return absl::InternalError("the spool cannot seek back to byte 0");
  }
  if (f->type_ == SnapshotType::kClassic || options.spill_streams) {
    // A classic stream is one protobuf message, under its 2 GiB limit: the
    // copy stops soon past it (within a read). One whose first byte starts
    // no record (field 0, wire type 6 or 7) fails at byte 0 whatever
    // follows: only what detection read is kept (a /dev/zero ends at once,
    // with the error a file of its bytes gets). A module file's stream (HLO
    // text, whose first byte may be any letter) is held to the parser's
    // 4 GiB, and refused early only for a first byte below 8, which starts
    // neither text nor a protobuf record.
    uint64_t max_bytes = UINT64_MAX, limit = 0;
    if (f->type_ == SnapshotType::kClassic) {
      limit = options.snapshot_only ? limits::kMaxMessageBytes : uint64_t{1} << 32;
      max_bytes = limit;
      if (src.Pull(1)) {
        const uint8_t b0 = static_cast<uint8_t>(*src.cursor());
        if (b0 < 8 || (options.snapshot_only && (b0 & 7) >= 6)) {
          max_bytes = std::max<uint64_t>(src.held_end(), 1) - 1;
        }
      }
    }
    absl::StatusOr<OwnedFd> spilled = src.SpillAll(max_bytes);
    if (!spilled.ok()) return WithFile(spilled.status(), path);
    if (limit != 0 && max_bytes == limit && src.held_end() > max_bytes) {
      return WithFile(
          options.snapshot_only
              ? FrameError(absl::StatusCode::kResourceExhausted, Frame{"HloSnapshot"}, 0,
                           "an HloSnapshot under protobuf's 2 GiB message limit "
                           "(a decomposed file streams larger literals)",
                           absl::StrCat("a stream of more than ", max_bytes, " bytes"))
              : FrameError(absl::StatusCode::kResourceExhausted, Frame{"file"}, 0,
                           "a module (HLO text, a module proto) of at most 4 GiB",
                           absl::StrCat("a stream of more than ", max_bytes, " bytes")),
          path);
    }
    f->stream_.reset();
    if (absl::Status s = f->Adopt(*std::move(spilled), options); !s.ok()) {
      return s;
    }
  }
  return f;
}

absl::Status SnapshotFile::Adopt(OwnedFd fd, const SnapshotOpenOptions& options) {
  if (options.access == SnapshotAccess::kBuffered) {
    buffered_ = std::make_unique<FdSource>(std::move(fd));
    if (!buffered_->size()) {
      return WithFile(absl::InternalError("a regular file of unknown size"),
                      path_);
    }
    if (*buffered_->size() == 0) return EmptySnapshotError(path_);
    return absl::OkStatus();
  }
  mapped_ = std::make_unique<MmapSource>(fd, path_);
  fd_ = std::move(fd);
  if (!mapped_->status().ok()) return WithFile(mapped_->status(), path_);
  if (mapped_->size().value_or(0) == 0) return EmptySnapshotError(path_);
  return absl::OkStatus();
}

std::optional<uint64_t> SnapshotFile::size() const {
  if (buffered_) return buffered_->size();
  if (mapped_) return mapped_->size();
  return stream_->size();
}

absl::Status SnapshotFile::Annotate(const absl::Status& failure) const {
  if (failure.ok()) return failure;
  absl::Status s =
      PathOf(failure) == path_ ? failure : WithFile(failure, path_);
  if (requested_ != SnapshotType::kAuto) {
    s = WithSnapshotTypeHint(s, evidence_, type_);
  }
  return s;
}

absl::Status SnapshotFile::Drain() {
  if (!stream_) return absl::OkStatus();
  SpoolSource<OwnedFd>& src = *stream_;
  while (src.Pull(1)) {
    src.Release(src.position());
    src.Advance(src.available());
  }
  return WithFile(src.status(), path_);
}

absl::StatusOr<std::unique_ptr<FdSource>> SnapshotFile::NewFdSource() const {
  const int from = buffered_ ? buffered_->backend().fd() : fd_.get();
  if (stream_ || from < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": a stream read in one pass has no file to "
                            "read again"));
  }
  const int fd = ::fcntl(from, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return WithFile(ErrnoError(errno, "duplicating"), path_);
  return std::make_unique<FdSource>(OwnedFd(fd));
}

}  // namespace decomposed
