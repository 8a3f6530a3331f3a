#include "decomposed/snapshot/classic_writer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/wire/wire.h"
#include "decomposed/xla/literal_decoder.h"

namespace decomposed {

namespace internal {

absl::Status SplitHeader(std::string_view header, std::string* before,
                         std::string* after) {
  before->clear();
  after->clear();
  MemorySource src(header);
  const Frame frame{"snapshot"};
  ByteRange all{0, header.size()};
  return WalkRecords(
      src, std::span<const ByteRange>(&all, 1), frame,
      [&](WireRecord& r) -> absl::Status {
        if (r.field == 2 || r.field == 3) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame,
                            r.tag_offset, "a literal-empty HloSnapshot header",
                            absl::StrCat("field ", r.field,
                                         r.field == 2 ? " (arguments)"
                                                      : " (result)"));
        }
        const uint64_t end = r.offset + r.length;
        (r.field < 2 ? before : after)
            ->append(header.substr(static_cast<size_t>(r.tag_offset),
                                   static_cast<size_t>(end - r.tag_offset)));
        return absl::OkStatus();
      });
}

}  // namespace internal

absl::StatusOr<uint64_t> ClassicSnapshotSize(
    std::string_view header, std::span<LiteralBody* const> arguments,
    LiteralBody* result) {
  std::string before, after;
  if (absl::Status s = internal::SplitHeader(header, &before, &after);
      !s.ok()) {
    return s;
  }
  uint64_t total = before.size() + after.size();
  auto add = [&](LiteralBody* b) -> absl::Status {
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    total += 1 + wire::VarintSize(*n) + *n;
    return absl::OkStatus();
  };
  for (LiteralBody* a : arguments) {
    if (absl::Status s = add(a); !s.ok()) return s;
  }
  if (result) {
    if (absl::Status s = add(result); !s.ok()) return s;
  }
  return total;
}

}  // namespace decomposed
