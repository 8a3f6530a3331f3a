// libFuzzer target: ShapeProto bytes through ParseShape, ValidateShape,
// ElementCount and ToString. Protobuf is the oracle, both ways: bytes
// ParseShape accepts, protobuf must accept too, and they must agree on
// every field our Shape keeps (oracle::CompareShape); bytes protobuf
// accepts, ParseShape must accept too, unless a documented stricter rule
// or limit refuses them (oracle::StricterRule).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../protobuf_oracle.h"
#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/xla/shape.h"
#include "fuzz_util.h"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Shape> s = ParseShape(in, Frame{"input 0 shape"}, 100);
  fuzz::CheckErrorShape(s.status());
  if (!s.ok()) {
    // Whatever protobuf accepts, ParseShape accepts too, or a documented
    // stricter rule says why not.
    xla::ShapeProto proto;
    if (proto.ParseFromArray(data, static_cast<int>(size))) {
      FUZZ_CHECK(oracle::StricterRule(s.status(), in, false) != nullptr);
    }
    return 0;
  }
  std::string text = s->ToString();
  FUZZ_CHECK(!text.empty());
  absl::Status v = ValidateShape(*s, Frame{"input 0 shape"}, 100);
  fuzz::CheckErrorShape(v);
  if (!s->is_tuple()) {
    const PrimitiveTypeInfo* info = FindPrimitiveType(s->element_type);
    absl::StatusOr<uint64_t> n = ElementCount(
        *s, Frame{"input 0 shape"}, 100, info ? info->element_bytes : 1);
    fuzz::CheckErrorShape(n.status());
    if (n.ok()) {
      FUZZ_CHECK(*n <= limits::kMaxElementCount);
      for (int64_t d : s->dimensions) FUZZ_CHECK(d >= 0);
    }
    // A valid array shape's element count is computable.
    if (v.ok() && s->element_type != 17) FUZZ_CHECK(n.ok());
  }
  // Whatever ParseShape accepts, protobuf (and so XLA) accepts too, and
  // they agree on what it says.
  xla::ShapeProto proto;
  FUZZ_CHECK(proto.ParseFromArray(data, static_cast<int>(size)));
  FUZZ_CHECK(oracle::CompareShape(*s, proto).empty());
  return 0;
}
