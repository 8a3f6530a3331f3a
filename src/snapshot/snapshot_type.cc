#include "decomposed/snapshot/snapshot_type.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/status.h"

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

absl::StatusOr<SnapshotType> DetectSnapshotType(const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Could not open: ", path));
  }
  FdSource src(std::move(fd));
  if (!src.size()) return SnapshotType::kClassic;
  DecomposedReader<FdSource> reader(src);
  absl::StatusOr<ElementInfo> snapshot = reader.ReadHeader(nullptr);
  SnapshotType type = SnapshotType::kClassic;
  if (snapshot.ok()) {
    absl::StatusOr<uint64_t> n = reader.StartInputs();
    ElementInfo e;
    if (n.ok() && (*n == 0 || reader.NextInput(&e).ok())) {
      type = SnapshotType::kDecomposed;
    }
  } else if (snapshot.status().code() == absl::StatusCode::kResourceExhausted) {
    // A held region [0] of 2 GiB or more: decomposed, and the decomposed
    // reader then says precisely what is wrong.
    type = SnapshotType::kDecomposed;
  }
  if (!src.status().ok()) return WithFile(src.status(), path);
  return type;
}

absl::StatusOr<SnapshotType> ResolveSnapshotType(SnapshotType requested,
                                                 const std::string& path) {
  if (requested != SnapshotType::kAuto) return requested;
  return DetectSnapshotType(path);
}

}  // namespace decomposed
