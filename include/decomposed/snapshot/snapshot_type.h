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
#include "decomposed/io/fd.h"
#include "decomposed/io/input.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"

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
// {kDecomposed, "region [0] box of 84 bytes at byte 0"}, {kDecomposed,
// "region [0] box of 84 bytes at byte 0, cut short after it"} (a truncated
// file: docs/format.md §7.8) or {kClassic,
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

// --- The same on an open source (a pipe cannot be opened twice) -------------

// DescribeSnapshotType on the bytes of `src` from its current position
// (byte 0 of the snapshot); the source is left anywhere: Seek back. A
// SpoolSource reads ahead region [0] and the first element (what the rule
// looks at), which stay retained for the run that follows. Errors: the
// source's (without the path).
template <RewindableSource S>
absl::StatusOr<SnapshotTypeEvidence> DescribeSnapshotSource(S& src) {
  SnapshotTypeEvidence out;
  const uint64_t start = src.position();
  if (!src.Pull(1)) return src.status();  // empty: no evidence
  DecomposedReader<S> reader(src);
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
    if (n.ok() && next.ok()) {
      out.type = SnapshotType::kDecomposed;
      out.evidence = region0;
    } else if ((n.ok() ? next : n.status()).code() ==
               absl::StatusCode::kOutOfRange) {
      // Region [0] whole, then the file ends inside the count box or the
      // first element (rules 3 and 4 fail only for want of bytes): a
      // decomposed file cut short, as an interrupted capture leaves it.
      out.type = SnapshotType::kDecomposed;
      out.evidence = absl::StrCat(region0, ", cut short after it");
    }
  } else if (snapshot.status().code() == absl::StatusCode::kResourceExhausted) {
    // A held region [0] of 2 GiB or more: decomposed, and the decomposed
    // reader then says precisely what is wrong.
    out.type = SnapshotType::kDecomposed;
    out.evidence = "a region [0] box declaring 2 GiB or more at byte 0";
  } else if (snapshot.status().code() == absl::StatusCode::kOutOfRange &&
             absl::StartsWith(snapshot.status().message(),
                              absl::StrCat(Frame{"header"}.str(), ":"))) {
    // A valid region [0] length box (rule 1) declaring more bytes than the
    // file holds (rule 2 fails for want of bytes): cut short inside
    // region [0].
    out.type = SnapshotType::kDecomposed;
    out.evidence = "a region [0] box at byte 0, cut short inside region [0]";
  }
  if (!src.status().ok()) return src.status();
  if (out.type == SnapshotType::kClassic) {
    // Protobuf writes HloSnapshot field 1 (hlo, length-delimited) first:
    // tag 0x0a, then a length that must fit in the file.
    if (src.Seek(start)) {
      src.Pull(11);  // fewer at the end of a tiny file
      const char* p = src.cursor();
      const char* end = src.limit();
      uint64_t len = 0;
      if (p < end && static_cast<uint8_t>(*p) == 0x0a) {
        const char* q = p + 1;
        if (wire::ReadVarint(&q, end, &len) == wire::VarintResult::kOk) {
          const uint64_t head = static_cast<uint64_t>(q - p);
          HoldAhead(src, len > ~uint64_t{0} - head ? ~uint64_t{0} : head + len);
          // The window held `head` bytes, so the rest is at least that.
          std::optional<uint64_t> rem = Remaining(src);
          if (!rem || (*rem >= head && len <= *rem - head)) {
            out.evidence = absl::StrCat("HloSnapshot field 1 (hlo) of ", len,
                                        " bytes at byte 0");
          }
        }
      }
    }
    if (!src.status().ok()) return src.status();
  }
  return out;
}

// `failure` with the hint WithSnapshotTypeHint gives, from evidence already
// gathered (DescribeSnapshotSource).
absl::Status WithSnapshotTypeHint(const absl::Status& failure,
                                  const SnapshotTypeEvidence& evidence,
                                  SnapshotType used);

// The empty-file error of ResolveSnapshotType, for `path` (WithFile).
absl::Status EmptySnapshotError(const std::string& path);

// A snapshot input opened once, for a command that reads it in one pass:
// a regular file (read by name, with the fast paths of FdSource and
// MmapSource: pread, mmap, copy_file_range) or a stream (a pipe, a FIFO, a
// character device, or "-" standard input that is not a regular file)
// read through a SpoolSource positioned at byte 0. Standard input
// redirected from a regular file at byte 0 (`unpack - < FILE`) is a regular
// file: it is read by the name /proc/self/fd/N of the descriptor `held`
// keeps open, never copied to a temp file, and messages still name "-"
// (where /proc is not mounted it is read as a stream instead).
struct SnapshotInput {
  std::string path;  // as given; "-" is standard input
  // Regular files only: the name to open (path, or /proc/self/fd/N for
  // standard input). Messages use `path`.
  std::string open_path;
  OwnedFd held;  // keeps /proc/self/fd/N valid for standard input
  SnapshotType type = SnapshotType::kClassic;  // resolved, never kAuto
  // Streams only: the source, and what detection saw (for the hint after a
  // failure: the bytes cannot be read again by name).
  std::unique_ptr<SpoolSource<OwnedFd>> stream;
  SnapshotTypeEvidence evidence;
  bool is_stream() const { return stream != nullptr; }
};

// Opens `path` (OpenInput, io/input.h) and resolves its type as
// ResolveSnapshotType does (the empty-file error, detection for kAuto).
// Errors: those of ResolveSnapshotType, marked "(from stdin)" for "-".
absl::StatusOr<SnapshotInput> OpenSnapshotInput(const std::string& path,
                                                SnapshotType requested);
// The same for an input already opened by OpenInput (io/input.h).
absl::StatusOr<SnapshotInput> OpenSnapshotInput(const std::string& path,
                                                InputFile file,
                                                SnapshotType requested);

// A stream input's whole bytes in an unlinked regular temp file (under
// $TMPDIR, else /tmp), for readers that need a file: the classic mapping
// (a classic snapshot is read twice: indexed, then its literals) and the
// analysis sets. Precondition: in.is_stream() and nothing released.
absl::StatusOr<OwnedFd> SpillSnapshotInput(SnapshotInput& in);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_SNAPSHOT_TYPE_H_
