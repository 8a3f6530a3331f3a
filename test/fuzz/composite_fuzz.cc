// libFuzzer target: Composite C (BlockReader): a count box, then that
// many length-prefixed literal bodies, each planned with PlanLiteral and
// its shape validated. Run over a sized MemorySource and an unsized
// TrickleSource: a success on one must be a success on the other with the
// same elements.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "decomposed/container/framing.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

template <ByteSource S>
absl::Status Walk(S& src, const BoxReadOptions& options,
                  std::vector<fuzz::BodySummary>* out) {
  BlockReader<S> r(src, "input", options);
  absl::StatusOr<uint64_t> n = r.Start();
  fuzz::CheckErrorShape(n.status());
  if (!n.ok()) return n.status();
  ElementInfo e;
  for (;;) {
    absl::StatusOr<bool> more = r.Next(&e);
    fuzz::CheckErrorShape(more.status());
    if (!more.ok()) return more.status();
    if (!*more) break;
    // Leave every third body unscanned: Next() must skip it.
    if (r.current_index() % 3 == 2) {
      fuzz::BodySummary b;
      b.frame = e;
      out->push_back(b);
      continue;
    }
    out->emplace_back();
    if (absl::Status s = fuzz::ScanBody(r, e, &out->back());
        !s.ok()) {
      return s;
    }
  }
  FUZZ_CHECK(r.done());
  FUZZ_CHECK(out->size() == *n);
  return absl::OkStatus();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  BoxReadOptions options;
  options.lenient_length_byte = data[0] & 1;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<fuzz::BodySummary> a, b;
  MemorySource mem(in);
  absl::Status sa = Walk(mem, options, &a);
  fuzz::TrickleSource tri(in, data[0] >> 1);
  absl::Status sb = Walk(tri, options, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (sa.ok()) {
    FUZZ_CHECK(a == b);
    FUZZ_CHECK(mem.position() == tri.position());
  }
  return 0;
}
