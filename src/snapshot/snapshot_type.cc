#include "decomposed/snapshot/snapshot_type.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/input.h"
#include "decomposed/status.h"

namespace decomposed {

std::string_view SnapshotTypeName(SnapshotType type) {
  return NameOf(kSnapshotTypeNames, type);
}

std::optional<SnapshotType> SnapshotTypeFromName(std::string_view name) {
  return ValueOf(kSnapshotTypeNames, name);
}

std::string_view SnapshotFormName(SnapshotType type) {
  switch (type) {
    case SnapshotType::kClassic:
      return "classic snapshot";
    case SnapshotType::kDecomposed:
      return "decomposed snapshot";
    case SnapshotType::kAuto:
      break;
  }
  return "snapshot";
}

absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotType(
    const std::string& path, const BoxReadOptions& box) {
  absl::StatusOr<InputFile> in = OpenInput(path);
  if (!in.ok()) return in.status();
  // A stream (a FIFO) is not read here: it could not be read again.
  // SnapshotFile (reader.h) describes streams on the one pass it reads.
  if (!in->regular) return SnapshotTypeEvidence();
  FdSource src(std::move(in->fd));
  if (!src.size() || *src.size() == 0) return SnapshotTypeEvidence();
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotSource(src, box);
  if (!e.ok()) return WithFile(e.status(), path);
  return e;
}

absl::StatusOr<SnapshotType> DetectSnapshotType(const std::string& path,
                                                const BoxReadOptions& box) {
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(path, box);
  if (!e.ok()) return e.status();
  return e->type;
}

absl::Status EmptySnapshotError(const std::string& path) {
  return WithFile(
      FrameError(absl::StatusCode::kInvalidArgument, Frame{"file"}, 0,
                 "a snapshot",
                 "an empty file (an interrupted capture leaves one)"),
      path);
}

absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const SnapshotTypeEvidence& evidence,
                                  SnapshotType used) {
  if (failure.ok() || used == SnapshotType::kAuto || evidence.type == used ||
      evidence.evidence.empty()) {
    return failure;
  }
  return WithMessage(
      failure,
      absl::StrCat(failure.message(), "; this looks like a ",
                   Sv(SnapshotFormName(evidence.type)), " (",
                   evidence.evidence, "); use --snapshot-type=",
                   Sv(SnapshotTypeName(evidence.type))));
}

}  // namespace decomposed
