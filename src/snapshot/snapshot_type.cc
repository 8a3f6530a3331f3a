#include "decomposed/snapshot/snapshot_type.h"

#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/input.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"

namespace decomposed {

namespace {

// The one table of command-line names; both directions read it.
struct TypeName {
  SnapshotType type;
  std::string_view name;
};
constexpr TypeName kTypeNames[] = {
    {SnapshotType::kClassic, "snapshot"},
    {SnapshotType::kDecomposed, "decomposed"},
    {SnapshotType::kAuto, "auto"},
};

}  // namespace

std::string_view SnapshotTypeName(SnapshotType type) {
  for (const TypeName& t : kTypeNames) {
    if (t.type == type) return t.name;
  }
  return "auto";
}

std::optional<SnapshotType> SnapshotTypeFromName(std::string_view name) {
  for (const TypeName& t : kTypeNames) {
    if (t.name == name) return t.type;
  }
  return std::nullopt;
}

absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotType(
    const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  FdSource src(std::move(fd));
  // A source of unknown size opened by name (a FIFO) is not read here: it
  // could not be read again. Streams are described on their SpoolSource
  // (OpenSnapshotInput).
  if (!src.size() || *src.size() == 0) return SnapshotTypeEvidence();
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotSource(src);
  if (!e.ok()) return WithFile(e.status(), path);
  return e;
}

absl::StatusOr<SnapshotType> DetectSnapshotType(const std::string& path) {
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(path);
  if (!e.ok()) return e.status();
  return e->type;
}

absl::StatusOr<SnapshotType> ResolveSnapshotType(const std::string& path,
                                                 SnapshotType requested) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  FdSource src(std::move(fd));
  if (src.size() && *src.size() == 0) {
    return EmptySnapshotError(path);
  }
  if (requested != SnapshotType::kAuto) return requested;
  return DetectSnapshotType(path);
}

absl::Status EmptySnapshotError(const std::string& path) {
  return WithFile(
      FrameError(absl::StatusCode::kInvalidArgument, Frame{"file"}, 0,
                 "a snapshot",
                 "an empty file (an interrupted capture leaves one)"),
      path);
}

absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const std::string& path, SnapshotType used) {
  if (failure.ok() || used == SnapshotType::kAuto) return failure;
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(path);
  if (!e.ok()) return failure;
  return WithSnapshotTypeHint(failure, *e, used);
}

absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const SnapshotTypeEvidence& evidence,
                                  SnapshotType used) {
  const SnapshotTypeEvidence* e = &evidence;
  if (failure.ok() || used == SnapshotType::kAuto || e->type == used ||
      e->evidence.empty()) {
    return failure;
  }
  const bool decomposed = e->type == SnapshotType::kDecomposed;
  return absl::Status(
      failure.code(),
      absl::StrCat(failure.message(), "; this looks like a ",
                   decomposed ? "decomposed snapshot" : "classic HloSnapshot",
                   " (", e->evidence, "); use --snapshot-type=",
                   Sv(SnapshotTypeName(e->type))));
}

absl::StatusOr<SnapshotInput> OpenSnapshotInput(const std::string& path,
                                                SnapshotType requested) {
  absl::StatusOr<InputFile> file = OpenInput(path);
  if (!file.ok()) return file.status();
  return OpenSnapshotInput(path, *std::move(file), requested);
}

absl::StatusOr<SnapshotInput> OpenSnapshotInput(const std::string& path,
                                                InputFile opened,
                                                SnapshotType requested) {
  InputFile* file = &opened;
  SnapshotInput in;
  in.path = path;
  if (file->regular && !IsStdin(path)) {
    file->fd.Reset();  // read by path, by the regular-file code
    absl::StatusOr<SnapshotType> t = ResolveSnapshotType(path, requested);
    if (!t.ok()) return t.status();
    in.type = *t;
    in.open_path = path;
    return in;
  }
  OwnedFd reopened;
  const std::string self = ReopenPath(file->fd.get());
  if (file->regular && OpenForReading(self, &reopened).ok()) {
    // Standard input redirected from a regular file: the regular-file code
    // reads it by the name of this descriptor (a new open file description
    // each time, so no reader moves another's offset). Without /proc it is
    // read as a stream, below.
    in.open_path = self;
    in.held = std::move(file->fd);
    struct stat st;
    if (::fstat(in.held.get(), &st) != 0) {
      return absl::ErrnoToStatus(errno, "Could not open: standard input");
    }
    if (st.st_size == 0) return EmptySnapshotError(path);
    FdSource src(std::move(reopened));
    absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotSource(src);
    if (!e.ok()) return WithFile(e.status(), path);
    in.evidence = *e;
    in.type = requested == SnapshotType::kAuto ? e->type : requested;
    return in;
  }
  in.stream = std::make_unique<SpoolSource<OwnedFd>>(std::move(file->fd));
  SpoolSource<OwnedFd>& src = *in.stream;
  if (!src.Pull(1)) {
    if (!src.status().ok()) return WithFile(src.status(), path);
    return EmptySnapshotError(path);
  }
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotSource(src);
  if (!e.ok()) return WithFile(e.status(), path);
  in.evidence = *e;
  in.type = requested == SnapshotType::kAuto ? e->type : requested;
  if (!src.Seek(0)) {
    return absl::InternalError("the spool cannot seek back to byte 0");
  }
  return in;
}

absl::StatusOr<OwnedFd> SpillSnapshotInput(SnapshotInput& in) {
  if (!in.is_stream()) {
    return absl::FailedPreconditionError("SpillSnapshotInput: not a stream");
  }
  absl::StatusOr<OwnedFd> fd = in.stream->SpillAll();
  if (!fd.ok()) return WithFile(fd.status(), in.path);
  return fd;
}

}  // namespace decomposed
