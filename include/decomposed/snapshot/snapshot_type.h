// The two forms of a snapshot file, and telling them apart.
//
//   classic     one serialized HloSnapshot message (snapshot-unpack's
//               --snapshot-type=snapshot)
//   decomposed  the decomposed stream (container/framing.h)
//
// Example:
//   absl::StatusOr<decomposed::SnapshotType> t =
//       decomposed::DetectSnapshotType("x.decomposed_hlo_snapshot");
//   if (t.ok() && *t == decomposed::SnapshotType::kDecomposed) ...
#ifndef DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
#define DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace decomposed {

enum class SnapshotType {
  kClassic,     // one HloSnapshot message
  kDecomposed,  // the decomposed stream
  kAuto,        // an option value only: detect with DetectSnapshotType
};

// The command-line name of a type: "snapshot" (classic, the name
// snapshot-unpack gives it), "decomposed", "auto".
std::string_view SnapshotTypeName(SnapshotType type);

// The type a command-line name names (exactly, case-sensitive, as
// snapshot-unpack compares it), or nullopt.
std::optional<SnapshotType> SnapshotTypeFromName(std::string_view name);

// Detects the type of the file at `path` (never kAuto). A file is
// decomposed when DecomposedReader (container/framing.h) accepts its first
// frames: a valid region [0] length box whose snapshot fits the file, then
// a valid input count box whose count could fit in what remains, and, when
// that count is non-zero, a valid first element length box whose body
// fits. Otherwise it is classic. A source of unknown size (a pipe) is
// classic.
// When it can be wrong: a classic HloSnapshot that happens to begin with
// such bytes. Protobuf writes HloSnapshot field 1 first (tag 0x0a), so that
// file's next bytes would have to form a valid box and the lengths would all
// have to fit: possible for a hand-made or tiny file, implausible for a
// real capture. A damaged decomposed file whose first boxes are broken is
// detected as classic and then fails as one, with a classic-mode error.
// Errors: the file cannot be opened ("Could not open: <path>", code from
// errno) or read.
absl::StatusOr<SnapshotType> DetectSnapshotType(const std::string& path);

// The type an option asks for: `requested` itself, or, for kAuto, what
// DetectSnapshotType(path) finds (never kAuto). Errors: DetectSnapshotType's.
absl::StatusOr<SnapshotType> ResolveSnapshotType(SnapshotType requested,
                                                 const std::string& path);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
