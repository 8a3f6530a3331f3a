#include "decomposed/snapshot/snapshot_type.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
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
  SnapshotTypeEvidence out;
  if (!src.size() || *src.size() == 0) return out;
  DecomposedReader<FdSource> reader(src);
  absl::StatusOr<ElementInfo> snapshot = reader.ReadHeader(nullptr);
  if (snapshot.ok()) {
    absl::StatusOr<uint64_t> n = reader.StartInputs();
    ElementInfo e;
    if (n.ok() && (*n == 0 || reader.NextInput(&e).ok())) {
      out.type = SnapshotType::kDecomposed;
      out.evidence = absl::StrCat("region [0] box of ", snapshot->length,
                                  " bytes at byte ", snapshot->box_offset);
    }
  } else if (snapshot.status().code() == absl::StatusCode::kResourceExhausted) {
    // A held region [0] of 2 GiB or more: decomposed, and the decomposed
    // reader then says precisely what is wrong.
    out.type = SnapshotType::kDecomposed;
    out.evidence = "a region [0] box declaring 2 GiB or more at byte 0";
  }
  if (!src.status().ok()) return WithFile(src.status(), path);
  if (out.type == SnapshotType::kClassic) {
    // Protobuf writes HloSnapshot field 1 (hlo, length-delimited) first:
    // tag 0x0a, then a length that must fit in the file.
    if (src.Seek(0)) {
      src.Pull(11);  // fewer at the end of a tiny file
      const char* p = src.cursor();
      const char* end = src.limit();
      uint64_t len = 0;
      if (p < end && static_cast<uint8_t>(*p) == 0x0a) {
        const char* q = p + 1;
        if (wire::ReadVarint(&q, end, &len) == wire::VarintResult::kOk &&
            len <= *src.size() - static_cast<uint64_t>(q - p)) {
          out.evidence = absl::StrCat("HloSnapshot field 1 (hlo) of ", len,
                                      " bytes at byte 0");
        }
      }
    }
    if (!src.status().ok()) return WithFile(src.status(), path);
  }
  return out;
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
    return WithFile(
        FrameError(absl::StatusCode::kInvalidArgument, Frame{"file"}, 0,
                   "a snapshot",
                   "an empty file (an interrupted capture leaves one)"),
        path);
  }
  if (requested != SnapshotType::kAuto) return requested;
  return DetectSnapshotType(path);
}

absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const std::string& path, SnapshotType used) {
  if (failure.ok() || used == SnapshotType::kAuto) return failure;
  absl::StatusOr<SnapshotTypeEvidence> e = DescribeSnapshotType(path);
  if (!e.ok() || e->type == used || e->evidence.empty()) return failure;
  const bool decomposed = e->type == SnapshotType::kDecomposed;
  return absl::Status(
      failure.code(),
      absl::StrCat(failure.message(), "; this looks like a ",
                   decomposed ? "decomposed snapshot" : "classic HloSnapshot",
                   " (", e->evidence, "); use --snapshot-type=",
                   Sv(SnapshotTypeName(e->type))));
}

}  // namespace decomposed
