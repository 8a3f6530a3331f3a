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
// An empty file is an error (see ResolveSnapshotType); this function
// alone still answers kClassic for it, as protobuf would parse it.
absl::StatusOr<SnapshotType> DetectSnapshotType(const std::string& path);

// What DetectSnapshotType saw, for messages: the type and the evidence, e.g.
// {kDecomposed, "region [0] box of 84 bytes at byte 0"} or {kClassic,
// "HloSnapshot field 1 (hlo) of 1200 bytes at byte 0"}. `evidence` is empty
// when the bytes look like neither form (detection then says kClassic).
struct SnapshotTypeEvidence {
  SnapshotType type = SnapshotType::kClassic;
  std::string evidence;
};
absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotType(
    const std::string& path);

// The type a command reads `path` as: `requested`, or the detected type
// when `requested` is kAuto (docs/format.md §7.8 gives the rule).
// Errors: the file cannot be opened; the file is empty
// (kInvalidArgument "file: expected a snapshot, found an empty file (an
// interrupted capture leaves one) (at byte 0 of <path>)") -- of either
// type: an empty
// file is never a valid empty snapshot, even though protobuf would parse
// one as an empty HloSnapshot.
absl::StatusOr<SnapshotType> ResolveSnapshotType(const std::string& path,
                                                 SnapshotType requested);

// `failure` (reading `path` as `used`, never kAuto) with a hint appended
// when the file looks like the other type:
//   "...; this looks like a decomposed snapshot (region [0] box of 84 bytes
//    at byte 0); use --snapshot-type=decomposed"
// Returns `failure` unchanged when it is OK, or when detection finds
// nothing better to say.
absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const std::string& path, SnapshotType used);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
