// libFuzzer target: ShapeProto bytes through ParseShape, ValidateShape,
// ElementCount and ToString. Differential check against protobuf: bytes
// ParseShape accepts, protobuf must accept too, and they must agree on
// element type, dimensions, tuple arity and minor_to_major.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/xla/shape.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

void Compare(const Shape& ours, const xla::ShapeProto& theirs, int depth) {
  // An enum is an int32: both keep the low 32 bits of a longer varint.
  FUZZ_CHECK(ours.element_type ==
             static_cast<int64_t>(theirs.element_type()));
  FUZZ_CHECK(ours.dimensions.size() ==
             static_cast<size_t>(theirs.dimensions_size()));
  for (size_t i = 0; i < ours.dimensions.size(); ++i) {
    FUZZ_CHECK(ours.dimensions[i] == theirs.dimensions(static_cast<int>(i)));
  }
  FUZZ_CHECK(ours.has_layout == theirs.has_layout());
  const auto& m2m = theirs.layout().minor_to_major();
  FUZZ_CHECK(ours.layout.minor_to_major.size() ==
             static_cast<size_t>(m2m.size()));
  for (int i = 0; i < m2m.size(); ++i) {
    FUZZ_CHECK(ours.layout.minor_to_major[static_cast<size_t>(i)] == m2m[i]);
  }
  FUZZ_CHECK(ours.tuple_shapes.size() ==
             static_cast<size_t>(theirs.tuple_shapes_size()));
  for (size_t i = 0; i < ours.tuple_shapes.size(); ++i) {
    Compare(ours.tuple_shapes[i], theirs.tuple_shapes(static_cast<int>(i)),
            depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Shape> s = ParseShape(in, Frame{"input 0 shape"}, 100);
  fuzz::CheckErrorShape(s.status());
  if (!s.ok()) return 0;
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
  Compare(*s, proto, 0);
  return 0;
}
