// The classic writer: streams one HloSnapshot message { hlo = 1,
// arguments = 2, result = 3, execution_platform = 4 } from a literal-empty
// snapshot (a decomposed file's header: every field but the literals)
// and literal bodies, without holding any literal in memory.
// Protobuf cannot parse a message of 2 GiB or more, so WriteClassicSnapshot
// computes the total first and refuses (kResourceExhausted, nothing
// written) past limits::kMaxMessageBytes, telling the user to write the
// decomposed form. Which literals become `arguments` and `result` is the
// classic mapping's business (classic.h, PlanClassic).
//
// Example:
//   decomposed::AtomicFileSink out;
//   out.Open("x.hlo_snapshot.pb");
//   absl::Status s = decomposed::WriteClassicSnapshot(out, snapshot, args,
//                                                     result);
//   if (s.ok()) s = out.Commit();
#ifndef DECOMPOSED_SNAPSHOT_CLASSIC_WRITER_H_
#define DECOMPOSED_SNAPSHOT_CLASSIC_WRITER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/limits.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/wire/writer.h"
#include "decomposed/xla/literal_encoder.h"

namespace decomposed {

// Reports bytes written to the output so far (for a progress display).
using ProgressFn = std::function<void(uint64_t bytes_written)>;

// Exact size of the classic HloSnapshot that WriteClassicSnapshot writes
// (prepares every body).
absl::StatusOr<uint64_t> ClassicSnapshotSize(
    std::string_view snapshot, std::span<LiteralSource* const> arguments,
    LiteralSource* result);

namespace internal {
// Splits literal-empty snapshot bytes into the records of fields < 2 and
// those of fields > 3, so the classic message comes out in field order.
// kInvalidArgument when `snapshot` holds an `arguments` or `result` record.
absl::Status SplitLiteralEmptySnapshot(std::string_view snapshot,
                                       std::string* before, std::string* after);
}  // namespace internal

// Streams a classic HloSnapshot: the records of `snapshot` (a literal-empty
// HloSnapshot, e.g. from SnapshotFromModule or LiteralEmptySnapshot), one
// `arguments` record per argument, and `result` when non-null, in field
// order. Fails with kResourceExhausted before writing anything when the
// message would reach protobuf's 2 GiB limit.
template <ByteSink K>
absl::Status WriteClassicSnapshot(K& sink, std::string_view snapshot,
                                  std::span<LiteralSource* const> arguments,
                                  LiteralSource* result,
                                  const ProgressFn& progress = nullptr) {
  std::string before, after;
  if (absl::Status s =
          internal::SplitLiteralEmptySnapshot(snapshot, &before, &after);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<uint64_t> total =
      ClassicSnapshotSize(snapshot, arguments, result);
  if (!total.ok()) return total.status();
  if (*total > limits::kMaxMessageBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "classic HloSnapshot: the message would be ", *total,
        " bytes, over protobuf's 2 GiB limit (", limits::kMaxMessageBytes,
        " bytes), so no protobuf reader could parse it; write the decomposed "
        "form instead (--format decomposed / convert --to decomposed), which "
        "streams each literal separately"));
  }
  ChunkFn fn = [&](std::string_view c) -> absl::Status {
    if (!sink.Write(c)) return sink.status();
    if (progress) progress(sink.position());
    return absl::OkStatus();
  };
  if (absl::Status s = fn(before); !s.ok()) return s;
  auto write_record = [&](uint32_t field, LiteralSource* b) -> absl::Status {
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    std::string head;
    wire::AppendLenHeader(&head, field, *n);
    if (absl::Status s = fn(head); !s.ok()) return s;
    return b->Write(fn);
  };
  for (LiteralSource* a : arguments) {
    if (absl::Status s = write_record(2, a); !s.ok()) return s;
  }
  if (result) {
    if (absl::Status s = write_record(3, result); !s.ok()) return s;
  }
  if (absl::Status s = fn(after); !s.ok()) return s;
  if (!sink.Flush()) return sink.status();
  return absl::OkStatus();
}

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_CLASSIC_WRITER_H_
