// Verify: full structural and literal validation of a decomposed or classic
// snapshot file, everything Unpack (unpack.h) would check, without writing
// anything, read through SnapshotReader (reader.h; the file opened once and
// mapped).
//
// Checked, in file order:
//   decomposed  region [0]: its length box, that the bytes are held, that
//               they parse as an HloSnapshot (protobuf, as snapshot-unpack
//               does) whose hlo.hlo_module parses; region [1] and, when
//               present, region [2]: every count and length box, and every
//               literal body decoded with DecodeLiteralToNpy (the unpack
//               decoder) into a NullSink: XLA's CreateFromProto rules
//               (shape, layout, exact element counts, loadable types);
//               then that nothing follows region [2].
//   classic     the top-level HloSnapshot records; the non-literal fields
//               parse as an HloSnapshot; then every input and output
//               literal of the classic mapping (classic.h), as unpack
//               writes them: "input i body" and "output j body".
// The module (when the snapshot has one): validated as docs/hlo.md §1.1
// says (ValidateModuleAll, at most 20 findings), and each input literal's
// element type and dims against the entry parameter it binds to (input i
// is parameter i; an entry whose only parameter is a tuple takes the
// inputs as its elements), and the input count against the parameter
// count. These are warnings framed "module", "input i body" and "input
// count box" ("arguments" in a classic file): the file reads whatever its
// module says; `--strict` makes them problems. Layouts may differ (a
// replay converts them).
//
// A broken literal is one problem and checking goes on with the next one
// (the framing around it is intact); a framing error (a bad box, a length
// past the end, trailing data) ends the walk, since nothing after it can be
// located.
//
// Every problem carries the status message (frame, expected, found, "at
// byte N"), its code, and the frame name and byte offset split out.
//
// Example:
//   absl::StatusOr<decomposed::VerifyReport> r =
//       decomposed::VerifyFile("x.decomposed_hlo_snapshot", {});
//   for (const auto& p : r->problems) std::cerr << p.message << "\n";
#ifndef DECOMPOSED_SNAPSHOT_VERIFY_H_
#define DECOMPOSED_SNAPSHOT_VERIFY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/container/box.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "nlohmann/json.hpp"

namespace decomposed {

struct VerifyProblem {
  absl::StatusCode code = absl::StatusCode::kUnknown;
  std::string frame;       // "input 3 body", "header length box", ...
  std::optional<uint64_t> offset;  // byte offset in the file, when known
  std::string message;     // the full status message
};

struct VerifyReport {
  std::string path;
  // kDecomposed or kClassic; nullopt in a report made for a file that
  // could not be verified (the CLI's).
  std::optional<SnapshotType> type;
  uint64_t inputs = 0;     // literals checked in region [1] / arguments
  std::optional<uint64_t> outputs;  // region [2] / result elements
  std::vector<VerifyProblem> problems;
  // What reads but deserves a look (a header carrying literals,
  // docs/format.md §7.2). Not problems: valid() ignores them, unless
  // VerifyOptions::strict made them problems.
  std::vector<VerifyProblem> warnings;
  bool valid() const { return problems.empty(); }
};

struct VerifyOptions {
  // kAuto (DetectSnapshotType), kDecomposed or kClassic.
  SnapshotType snapshot_type = SnapshotType::kAuto;
  BoxReadOptions box;
  // Warnings are problems (`verify --strict`).
  bool strict = false;
  // Array literals with no layout read as major-to-minor
  // (`--lenient-layout`, LiteralDecodeOptions::lenient_layout).
  bool lenient_layout = false;
  // Optional, for progress displays: how far into the file the checking
  // is, in bytes (as UnpackOptions::progress).
  std::function<void(uint64_t)> progress;
};

// Verifies one file. The StatusOr is an error only when the file cannot be
// opened or mapped; problems in the file are in the report.
absl::StatusOr<VerifyReport> VerifyFile(const std::string& path,
                                        const VerifyOptions& options = {});

// {"file", "type" ("decomposed", "snapshot" or null), "valid", "inputs",
// "outputs", "problems": [{"frame", "offset", "code", "message"}],
// "warnings": [the same]}.
nlohmann::ordered_json VerifyReportJson(const VerifyReport& report);

// A status as a problem: its code and message, and its frame and offset
// from the status's payloads (status.h: FrameOf, OffsetOf); empty and
// nullopt when it carries none. The text is never parsed.
VerifyProblem ProblemFromStatus(const absl::Status& s);

// {"frame", "offset" (null when unknown), "code", "message"}: one entry of
// VerifyReportJson's "problems" and "warnings", and the "error" of a file
// that `inspect --json FILE...` could not read.
nlohmann::ordered_json ProblemJson(const VerifyProblem& p);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_VERIFY_H_
