// The two forms of a snapshot file, and telling them apart.
//
//   classic     one serialized HloSnapshot message (snapshot-unpack's
//               --snapshot-type=snapshot)
//   decomposed  the decomposed stream (container/framing.h)
// Reading a file of either form is SnapshotReader's (snapshot/reader.h),
// which detects the form with the rule below when asked to (kAuto).
//
// Example:
//   absl::StatusOr<decomposed::SnapshotType> t =
//       decomposed::DetectSnapshotType("x.decomposed_hlo_snapshot");
//   if (t.ok() && *t == decomposed::SnapshotType::kDecomposed) {
//     // ... read it as a decomposed stream ...
//   }
#ifndef DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
#define DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/framing.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"
#include "decomposed/names.h"

namespace decomposed {

enum class SnapshotType {
  kClassic,     // one HloSnapshot message
  kDecomposed,  // the decomposed stream
  kAuto,        // an option value only: detect (docs/format.md §7.8)
};

// The command-line name of a type: "snapshot" (classic, the name
// snapshot-unpack gives it), "decomposed", "auto".
std::string_view SnapshotTypeName(SnapshotType type);

// The command line's names, both directions (names.h): "snapshot" (the
// classic form), "decomposed", "auto"; and the two a writer takes.
inline constexpr EnumName<SnapshotType> kSnapshotTypeNames[] = {
    {"auto", SnapshotType::kAuto},
    {"decomposed", SnapshotType::kDecomposed},
    {"snapshot", SnapshotType::kClassic},
};
inline constexpr EnumName<SnapshotType> kOutputSnapshotTypeNames[] = {
    {"decomposed", SnapshotType::kDecomposed},
    {"snapshot", SnapshotType::kClassic},
};

// The type a command-line name names (exactly, case-sensitive, as
// snapshot-unpack compares it), or nullopt.
std::optional<SnapshotType> SnapshotTypeFromName(std::string_view name);

// The form's name in messages and documents: "decomposed snapshot",
// "classic snapshot" (docs/format.md §2.3: the one spelling of each; the
// command line keeps SnapshotTypeName's "snapshot" for the classic form).
std::string_view SnapshotFormName(SnapshotType type);

// What detection saw, for messages: the type and the evidence, e.g.
// {kDecomposed, "region [0] box of 84 bytes at byte 0"}, {kDecomposed,
// "region [0] box of 84 bytes at byte 0, cut short after it"} (a truncated
// file: docs/format.md §7.8) or {kClassic,
// "HloSnapshot field 1 (hlo) of 1200 bytes at byte 0"}. `evidence` is empty
// when the bytes look like neither form (detection then says kClassic);
// `decomposed_error` is then why the decomposed rules refused the bytes
// (the decomposed reader's first error: "header length box: expected a
// length byte 1..127, found 0x89 ..."), which SnapshotReader quotes when
// the classic reading fails too ("not a decomposed or classic snapshot").
struct SnapshotTypeEvidence {
  SnapshotType type = SnapshotType::kClassic;
  std::string evidence;
  absl::Status decomposed_error;
};

// Detects the type of the file at `path` (never kAuto), opening it once:
// DescribeSnapshotType(path).type.
// The rule (docs/format.md §7.8): a file is decomposed when
// DecomposedReader (container/framing.h) accepts its first frames: a valid
// region [0] length box whose snapshot fits the file, then a valid input
// count box whose count could fit in what remains, and, when that count is
// non-zero, a valid first element length box whose body fits; or when
// those frames are valid but the file ends inside them (cut short).
// Otherwise it is classic. A source of unknown size opened by name (a FIFO)
// is not read, and is classic.
// When it can be wrong: a classic HloSnapshot that happens to begin with
// such bytes. Protobuf writes HloSnapshot field 1 first (tag 0x0a), so that
// file's next bytes would have to form a valid box and the lengths would all
// have to fit: possible for a hand-made or tiny file, implausible for a
// real capture. A damaged decomposed file whose first boxes are broken is
// detected as classic and then fails as one, with a classic-mode error.
// Errors: the file cannot be opened (OpenError, io/input.h) or read.
// An empty file is an error of every reader (SnapshotFile::Open); this
// function alone still answers kClassic for it, as protobuf would parse it.
absl::StatusOr<SnapshotType> DetectSnapshotType(
    const std::string& path, const BoxReadOptions& box = {});
absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotType(
    const std::string& path, const BoxReadOptions& box = {});

// --- The rule, on an open source --------------------------------------------

// DescribeSnapshotType on the bytes of `src` from its current position
// (byte 0 of the snapshot); the source is left anywhere: Seek back. A
// SpoolSource reads ahead region [0] and the first element (what the rule
// looks at), which stay retained for the run that follows. `box` are the
// length-box rules of the reading that follows (lenient_length_byte: a
// file written with unsigned length bytes is then detected as decomposed).
// Errors: the source's (without the path).
template <RewindableSource S>
absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotSource(
    S& src, const BoxReadOptions& box = {}) {
  SnapshotTypeEvidence out;
  const uint64_t start = src.position();
  if (!src.Pull(1)) return src.status();  // empty: no evidence
  DecomposedReadOptions options;
  options.box = box;
  DecomposedReader<S> reader(src, options);
  absl::StatusOr<ElementInfo> snapshot = reader.ReadHeader(nullptr);
  if (snapshot.ok()) {
    const std::string region0 =
        absl::StrCat("region [0] box of ", snapshot->length, " bytes at byte ",
                     snapshot->box_offset);
    absl::StatusOr<uint64_t> n = reader.StartInputs();
    absl::Status next;
    if (n.ok() && *n > 0) {
      ElementInfo e;
      next = reader.NextInput(&e).status();
    }
    const absl::Status& failed = n.ok() ? next : n.status();
    if (failed.ok()) {
      out.type = SnapshotType::kDecomposed;
      out.evidence = region0;
    } else if (failed.code() == absl::StatusCode::kOutOfRange) {
      // Region [0] whole, then the file ends inside the count box or the
      // first element (rules 3 and 4 fail only for want of bytes): a
      // decomposed file cut short, as an interrupted capture leaves it.
      out.type = SnapshotType::kDecomposed;
      out.evidence = absl::StrCat(region0, ", cut short after it");
    } else {
      out.decomposed_error = failed;
    }
  } else if (snapshot.status().code() == absl::StatusCode::kResourceExhausted) {
    // A held region [0] of 2 GiB or more: decomposed, and the decomposed
    // reader then says precisely what is wrong.
    out.type = SnapshotType::kDecomposed;
    out.evidence = "a region [0] box declaring 2 GiB or more at byte 0";
  } else if (snapshot.status().code() == absl::StatusCode::kOutOfRange &&
             FrameOf(snapshot.status()) == Frame{"header"}.str()) {
    // A valid region [0] length box (rule 1) declaring more bytes than the
    // file holds (rule 2 fails for want of bytes): cut short inside
    // region [0].
    out.type = SnapshotType::kDecomposed;
    out.evidence = "a region [0] box at byte 0, cut short inside region [0]";
  } else {
    out.decomposed_error = snapshot.status();
  }
  if (!src.status().ok()) return src.status();
  if (out.type == SnapshotType::kClassic) {
    // Protobuf writes HloSnapshot's fields in number order: the first
    // record is hlo (1), arguments (2, a snapshot with no module, as XLA
    // writes some) or result (3), length-delimited (tag 0x0a, 0x12, 0x1a),
    // with a length that fits in the file. An hlo record holds an HloProto,
    // whose own records are length-delimited fields 1 to 3 (0x0a, 0x12,
    // 0x1a): an HloModuleProto, whose field 1 is its name (text), fails
    // that.
    constexpr std::string_view kFields[] = {"hlo", "arguments", "result"};
    if (src.Seek(start)) {
      src.Pull(11);  // fewer at the end of a tiny file
      const char* p = src.cursor();
      const char* end = src.limit();
      uint64_t len = 0;
      const uint8_t tag = p < end ? static_cast<uint8_t>(*p) : 0;
      const uint8_t field = tag >> 3;
      if ((tag & 7) == 2 && field >= 1 && field <= 3) {
        const char* q = p + 1;
        if (wire::ReadVarint(&q, end, &len) == wire::VarintResult::kOk) {
          const uint64_t head = static_cast<uint64_t>(q - p);
          HoldAhead(src, len > ~uint64_t{0} - head ? ~uint64_t{0} : head + len);
          // The window held `head` bytes, so the rest is at least that.
          std::optional<uint64_t> rem = Remaining(src);
          bool fits = !rem || (*rem >= head && len <= *rem - head);
          if (fits && field == 1 && len > 0 && src.Pull(head + 1)) {
            const uint8_t inner = static_cast<uint8_t>(src.cursor()[head]);
            fits = inner == 0x0a || inner == 0x12 || inner == 0x1a;
          }
          if (fits) {
            out.evidence = absl::StrCat("HloSnapshot field ", field, " (",
                                        Sv(kFields[field - 1]), ") of ", len,
                                        " bytes at byte 0");
          }
        }
      }
    }
    if (!src.status().ok()) return src.status();
  }
  return out;
}

// `failure` (reading the input as `used`, never kAuto, because the
// command named that type) with a hint appended when the evidence says the
// bytes look like the other type:
//   "...; this looks like a decomposed snapshot (region [0] box of 84 bytes
//    at byte 0); use --snapshot-type=decomposed"
// Returns `failure` unchanged when it is OK, or when the evidence has
// nothing better to say. Keeps the code and the payloads.
absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const SnapshotTypeEvidence& evidence,
                                  SnapshotType used);

// The empty-file error of every reader, for `path` (WithFile):
// kInvalidArgument "file: expected a snapshot, found an empty file (an
// interrupted capture leaves one) (at byte 0 of <path>)": an empty file is
// never a valid empty snapshot, even though protobuf would parse one as an
// empty HloSnapshot.
absl::Status EmptySnapshotError(const std::string& path);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
