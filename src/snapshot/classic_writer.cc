#include "decomposed/snapshot/classic_writer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/wire/reader.h"
#include "decomposed/wire/writer.h"

namespace decomposed {

namespace internal {

absl::Status SplitLiteralEmptySnapshot(std::string_view snapshot,
                                       std::string* before,
                                       std::string* after) {
  before->clear();
  after->clear();
  MemorySource src(snapshot);
  absl::StatusOr<wire::FieldReader<MemorySource>> r =
      HloSnapshotFields(src, ByteRange{0, snapshot.size()}, Frame{"header"});
  if (!r.ok()) return r.status();
  wire::Field f;
  while (r->Next(f)) {
    if (f.number == 2 || f.number == 3) {
      return r->FieldError(
          f, "a literal-empty HloSnapshot header",
          absl::StrCat("field ", f.number,
                       f.number == 2 ? " (arguments)" : " (result)"));
    }
    (f.number < 2 ? before : after)
        ->append(snapshot.substr(static_cast<size_t>(f.tag_offset),
                                 static_cast<size_t>(f.end() - f.tag_offset)));
  }
  return r->status();
}

}  // namespace internal

absl::StatusOr<uint64_t> ClassicSnapshotSize(
    std::string_view snapshot, std::span<LiteralSource* const> arguments,
    LiteralSource* result) {
  std::string before, after;
  if (absl::Status s =
          internal::SplitLiteralEmptySnapshot(snapshot, &before, &after);
      !s.ok()) {
    return s;
  }
  uint64_t total = before.size() + after.size();
  auto add = [&](uint32_t field, LiteralSource* b) -> absl::Status {
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    total += wire::LenFieldSize(field, *n);
    return absl::OkStatus();
  };
  for (LiteralSource* a : arguments) {
    if (absl::Status s = add(2, a); !s.ok()) return s;
  }
  if (result) {
    if (absl::Status s = add(3, result); !s.ok()) return s;
  }
  return total;
}

}  // namespace decomposed
