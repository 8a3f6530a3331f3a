// libFuzzer target: a whole decomposed file (DecomposedReader: region [0],
// inputs, optional outputs, trailing-data check) with every body scanned by
// PlanLiteral and every shape validated. Run over a sized MemorySource
// and an unsized TrickleSource; a success on one must be a success on the
// other with the same frames.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "decomposed/container/framing.h"
#include "fuzz_util.h"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  DecomposedReadOptions options;
  options.box.lenient_length_byte = data[0] & 1;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  fuzz::FileSummary a, b;
  MemorySource mem(in);
  absl::Status sa = fuzz::WalkDecomposed(mem, options, &a);
  fuzz::TrickleSource tri(in, data[0] >> 1);
  absl::Status sb = fuzz::WalkDecomposed(tri, options, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (sa.ok()) {
    FUZZ_CHECK(a == b);
    // A valid file is consumed exactly.
    FUZZ_CHECK(mem.position() == in.size());
    FUZZ_CHECK(tri.position() == in.size());
  }
  return 0;
}
