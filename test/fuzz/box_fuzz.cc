// libFuzzer target: Primitive A (ReadBox). Byte 0 picks strict or lenient
// length-byte mode; the rest is the stream. The box is read from a
// MemorySource (fast path) and a TrickleSource (slow path, split reads):
// both must agree on value, end position and error code. A value read is
// re-encoded and must read back equal.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "decomposed/container/box.h"
#include "fuzz_util.h"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  BoxReadOptions options;
  options.lenient_length_byte = data[0] & 1;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);

  MemorySource mem(in);
  absl::StatusOr<uint64_t> a = ReadBox(mem, Frame{"count box"}, options);
  fuzz::CheckErrorShape(a.status());
  fuzz::TrickleSource tri(in, data[0] >> 1);
  absl::StatusOr<uint64_t> b = ReadBox(tri, Frame{"count box"}, options);
  fuzz::CheckErrorShape(b.status());

  FUZZ_CHECK(a.ok() == b.ok());
  FUZZ_CHECK(a.status().code() == b.status().code());
  if (!a.ok()) return 0;
  FUZZ_CHECK(*a == *b);
  FUZZ_CHECK(mem.position() == tri.position());
  // A box is at least 3 bytes, and at most 1 + 127 (255 lenient).
  FUZZ_CHECK(mem.position() >= kMinBoxBytes);
  FUZZ_CHECK(mem.position() <= 1 + (options.lenient_length_byte
                                        ? limits::kMaxLenientBoxPayload
                                        : limits::kMaxBoxPayload));
  for (bool with_shape : {false, true}) {
    char buf[limits::kMaxBoxBytes];
    size_t n = EncodeBox(*a, buf, BoxWriteOptions{with_shape});
    FUZZ_CHECK(n == BoxSize(*a, BoxWriteOptions{with_shape}));
    MemorySource back(std::string_view(buf, n));
    absl::StatusOr<uint64_t> c = ReadBox(back, Frame{"re-encoded box"});
    FUZZ_CHECK(c.ok() && *c == *a && back.position() == n);
  }
  return 0;
}
