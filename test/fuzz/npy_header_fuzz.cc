// libFuzzer target: the .npy header parser (NpyHeaderSize + ParseNpyHeader).
// A header that parses is formatted again with FormatNpyHeader and must
// parse back to the same descr, order and shape, with the data 64-aligned.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "decomposed/npy/npy.h"
#include "fuzz_util.h"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<uint64_t> total = NpyHeaderSize(in);
  fuzz::CheckErrorShape(total.status());
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(in);
  fuzz::CheckErrorShape(h.status());
  if (!h.ok()) return 0;
  FUZZ_CHECK(total.ok() && h->header_bytes == *total && *total <= size);
  FUZZ_CHECK(h->shape.size() <= limits::kMaxRank);
  for (int64_t d : h->shape) FUZZ_CHECK(d >= 0);
  // FormatNpyHeader writes descr between single quotes; descrs NumPy writes
  // never hold quotes, backslashes or newlines.
  if (h->descr.find_first_of("'\"\\\n\r") != std::string::npos) return 0;
  std::string again = FormatNpyHeader(*h);
  FUZZ_CHECK(again.size() % kNpyAlignment == 0);
  absl::StatusOr<NpyHeader> h2 = ParseNpyHeader(again);
  FUZZ_CHECK(h2.ok());
  FUZZ_CHECK(h2->descr == h->descr);
  FUZZ_CHECK(h2->fortran_order == h->fortran_order);
  FUZZ_CHECK(h2->shape == h->shape);
  FUZZ_CHECK(h2->header_bytes == again.size());
  return 0;
}
