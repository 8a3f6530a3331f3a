// libFuzzer target: Primitive A (ReadBox), with protobuf as the oracle.
// Byte 0 picks strict or lenient length-byte mode and the trickle step; the
// rest is the stream. The box is read from a MemorySource (fast path) and a
// TrickleSource (slow path, split reads): both must agree on value, end
// position and error code. Whenever the whole box is in the data and its
// length byte is legal, the payload is also parsed by
// xla::LiteralProto::ParseFromString: ReadBox must succeed exactly when
// protobuf parses it and the box rules hold on protobuf's reading
// (oracle::BoxRulesHold), with the same value, or refuse it for a rule
// wire/format.h or box.h documents as stricter (oracle::StricterRule). A
// value read is re-encoded and must read back equal.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../protobuf_oracle.h"
#include "decomposed/container/box.h"
#include "decomposed/proto/xla_data.pb.h"
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

  // Protobuf's verdict on the payload, when the framing lets one be read.
  const size_t len = in.empty() ? 0 : static_cast<uint8_t>(in[0]);
  const bool framed = len >= 1 && len < in.size() &&
                      (len < 0x80 || options.lenient_length_byte);
  if (framed) {
    std::string_view payload = in.substr(1, len);
    xla::LiteralProto proto;
    const bool theirs =
        proto.ParseFromArray(payload.data(), static_cast<int>(payload.size())) &&
        oracle::BoxRulesHold(proto);
    if (a.ok()) {
      FUZZ_CHECK(theirs);
      FUZZ_CHECK(*a == proto.u64s(0));
    } else if (theirs) {
      FUZZ_CHECK(oracle::StricterRule(a.status(), payload, true) != nullptr);
    }
  } else {
    FUZZ_CHECK(!a.ok());
  }

  if (!a.ok()) return 0;
  FUZZ_CHECK(*a == *b);
  FUZZ_CHECK(mem.position() == tri.position());
  // A box is at least 3 bytes, and at most 1 + 127 (255 lenient).
  FUZZ_CHECK(mem.position() >= kMinBoxBytes);
  FUZZ_CHECK(mem.position() == 1 + len);
  FUZZ_CHECK(mem.position() <= 1 + (options.lenient_length_byte
                                        ? limits::kMaxLenientBoxPayload
                                        : limits::kMaxBoxPayload));
  for (bool with_shape : {false, true}) {
    char buf[kMaxBoxBytes];
    size_t n = EncodeBox(*a, buf, BoxWriteOptions{with_shape});
    FUZZ_CHECK(n == BoxSize(*a, BoxWriteOptions{with_shape}));
    MemorySource back(std::string_view(buf, n));
    absl::StatusOr<uint64_t> c = ReadBox(back, Frame{"re-encoded box"});
    FUZZ_CHECK(c.ok() && *c == *a && back.position() == n);
  }
  return 0;
}
