// Shared helpers for the libFuzzer targets in this directory.
//
// TrickleSource: a BufferedSource over an in-memory span that reports no
// size, cannot seek and returns at most a few bytes per read, so the
// decoders' streaming paths (window refills, unknown remaining size,
// varints split across reads) are exercised as well as the MemorySource
// fast paths. Each target runs its decoder over both and requires that they
// agree wherever the contract says they must.
#ifndef DECOMPOSED_TEST_FUZZ_FUZZ_UTIL_H_
#define DECOMPOSED_TEST_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/limits.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/xla/shape.h"

namespace decomposed::fuzz {

// Aborts (a libFuzzer finding) with a message when `cond` is false.
#define FUZZ_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d)\n", #cond,      \
                   __FILE__, __LINE__);                                   \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

// Every error must carry a message naming a frame and a position.
inline void CheckErrorShape(const absl::Status& s) {
  if (s.ok()) return;
  FUZZ_CHECK(!s.message().empty());
  FUZZ_CHECK(s.code() != absl::StatusCode::kUnknown);
  FUZZ_CHECK(s.code() != absl::StatusCode::kInternal);
}

class TrickleBackend {
 public:
  TrickleBackend(std::string_view data, size_t step)
      : data_(data), step_(step == 0 ? 1 : step) {}
  ssize_t ReadSome(char* dst, size_t n) {
    size_t k = std::min({n, step_, data_.size() - pos_});
    std::memcpy(dst, data_.data() + pos_, k);
    pos_ += k;
    // Vary the chunk size so split points move around.
    step_ = step_ % 13 + 1;
    return static_cast<ssize_t>(k);
  }
  bool Seekable() const { return false; }
  bool SeekTo(uint64_t) { return false; }
  std::optional<uint64_t> Size() const { return std::nullopt; }

 private:
  std::string_view data_;
  size_t step_;
  size_t pos_ = 0;
};

class TrickleSource : public BufferedSource<TrickleBackend> {
 public:
  explicit TrickleSource(std::string_view data, size_t step = 3)
      : BufferedSource<TrickleBackend>(TrickleBackend(data, step),
                                       limits::kMaxPull) {}
};
static_assert(ByteSource<TrickleSource>);

// What a walk over one literal body found.
struct BodySummary {
  ElementInfo frame;
  bool scanned = false;
  bool has_shape = false;
  std::string shape;
  uint64_t data_bytes = 0;
  absl::StatusCode validate = absl::StatusCode::kOk;
  bool operator==(const BodySummary& o) const {
    return frame.box_offset == o.frame.box_offset &&
           frame.box_length == o.frame.box_length &&
           frame.offset == o.frame.offset && frame.length == o.frame.length &&
           scanned == o.scanned && has_shape == o.has_shape &&
           shape == o.shape && data_bytes == o.data_bytes &&
           validate == o.validate;
  }
};

struct FileSummary {
  ElementInfo snapshot;
  std::vector<BodySummary> inputs;
  bool outputs_present = false;
  std::vector<BodySummary> outputs;
  bool operator==(const FileSummary& o) const {
    return snapshot.offset == o.snapshot.offset &&
           snapshot.length == o.snapshot.length && inputs == o.inputs &&
           outputs_present == o.outputs_present && outputs == o.outputs;
  }
};

// Scans the body of the element the reader just returned, parsing and
// validating its shape. A scan error is returned; a validation error is
// recorded (ValidateShape is XLA's loader rule, not a framing error).
template <ByteSource S>
absl::Status ScanBody(BlockReader<S>& list, const ElementInfo& e,
                      BodySummary* b) {
  const Frame frame = list.BodyFrame();
  b->frame = e;
  absl::StatusOr<LiteralPlan> scan =
      PlanLiteral(list.body(), e.length, frame, {.shape_must_be_message = true});
  CheckErrorShape(scan.status());
  if (!scan.ok()) return scan.status();
  FUZZ_CHECK(list.body().position() == e.offset + e.length);
  FUZZ_CHECK(list.body().remaining() == 0);
  b->scanned = true;
  b->has_shape = scan->has_shape;
  b->data_bytes = scan->record_bytes;
  FUZZ_CHECK(scan->record_bytes <= e.length);
  if (scan->has_shape) {
    b->shape = scan->shape.ToString();
    absl::Status v = ValidateShape(scan->shape, frame, scan->shape_offset);
    CheckErrorShape(v);
    b->validate = v.code();
    if (v.ok() && !scan->shape.is_tuple() && scan->shape.element_type != 17) {
      absl::StatusOr<uint64_t> n = ElementCount(scan->shape, frame, 0);
      FUZZ_CHECK(n.ok());
      FUZZ_CHECK(*n <= limits::kMaxElementCount);
    }
  }
  return absl::OkStatus();
}

// Walks a whole decomposed stream, scanning every body.
template <ByteSource S>
absl::Status WalkDecomposed(S& src, const DecomposedReadOptions& options,
                            FileSummary* out) {
  DecomposedReader<S> reader(src, options);
  std::string snapshot;
  absl::StatusOr<ElementInfo> h = reader.ReadHeader(&snapshot);
  CheckErrorShape(h.status());
  if (!h.ok()) return h.status();
  FUZZ_CHECK(snapshot.size() == h->length);
  out->snapshot = *h;
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  CheckErrorShape(n.status());
  if (!n.ok()) return n.status();
  ElementInfo e;
  for (;;) {
    absl::StatusOr<bool> more = reader.NextInput(&e);
    CheckErrorShape(more.status());
    if (!more.ok()) return more.status();
    if (!*more) break;
    out->inputs.emplace_back();
    if (absl::Status s = ScanBody(reader.inputs(), e, &out->inputs.back());
        !s.ok()) {
      return s;
    }
  }
  FUZZ_CHECK(out->inputs.size() == *n);
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  CheckErrorShape(m.status());
  if (!m.ok()) return m.status();
  if (m->has_value()) {
    out->outputs_present = true;
    for (;;) {
      absl::StatusOr<bool> more = reader.NextOutput(&e);
      CheckErrorShape(more.status());
      if (!more.ok()) return more.status();
      if (!*more) break;
      out->outputs.emplace_back();
      if (absl::Status s =
              ScanBody(reader.outputs(), e, &out->outputs.back());
          !s.ok()) {
        return s;
      }
    }
    FUZZ_CHECK(out->outputs.size() == **m);
  }
  absl::Status s = reader.Finish();
  CheckErrorShape(s);
  return s;
}

}  // namespace decomposed::fuzz

#endif  // DECOMPOSED_TEST_FUZZ_FUZZ_UTIL_H_
