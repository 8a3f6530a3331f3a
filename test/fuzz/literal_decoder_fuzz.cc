// libFuzzer target: the streaming LiteralProto -> .npy decoder
// (DecodeLiteralToNpy) into a memory sink. Byte 0 chooses a split point:
// the body is decoded once as one range and once as two ranges whose
// concatenation is the body (protobuf's merge of repeated occurrences);
// both must agree byte for byte. A success must be a well-formed .npy whose
// size is its header plus element_count x element bytes, and the in-memory
// ArrayBuffer sink (taking column-major as the .npy sink does) must hold
// exactly its payload, in the order its header says.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy.h"
#include "decomposed/xla/array_buffer.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

absl::Status Decode(std::string_view body, std::span<const ByteRange> ranges,
                    size_t buffer, std::string* out, LiteralPlan* plan) {
  MemorySource src(body);
  StringSink sink(out);
  LiteralDecodeOptions o;
  o.buffer_bytes = buffer;
  o.max_in_memory_transpose = 1 << 20;
  return DecodeLiteralToNpy(src, ranges, Frame{"value_input", 0, "body"},
                            sink, o, plan);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t buffer = 64 << (data[0] & 7);
  std::string one;
  LiteralPlan plan;
  ByteRange whole[1] = {{0, body.size()}};
  absl::Status s1 = Decode(body, whole, buffer, &one, &plan);
  fuzz::CheckErrorShape(s1);

  size_t cut = body.empty() ? 0 : (data[0] * 131u) % (body.size() + 1);
  ByteRange split[2] = {{0, cut}, {cut, body.size() - cut}};
  std::string two;
  LiteralPlan plan2;
  absl::Status s2 = Decode(body, split, buffer, &two, &plan2);
  fuzz::CheckErrorShape(s2);
  // Splitting at a record boundary changes nothing; inside a record the
  // split literal is malformed. So: a success of the split decode implies
  // the same success, and the same bytes, for the whole.
  if (s2.ok()) {
    FUZZ_CHECK(s1.ok());
    FUZZ_CHECK(one == two);
  }
  if (!s1.ok()) return 0;
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(one);
  FUZZ_CHECK(h.ok());
  FUZZ_CHECK(plan.type != nullptr);
  FUZZ_CHECK(one.size() == h->header_bytes + plan.data_bytes);
  FUZZ_CHECK(plan.data_bytes ==
             plan.element_count * plan.type->element_bytes);
  FUZZ_CHECK(plan.data_bytes <= body.size() * 8);

  MemorySource src(body);
  ArrayBuffer array;
  array.accept_column_major(true);
  LiteralDecodeOptions o;
  o.buffer_bytes = buffer;
  o.max_in_memory_transpose = 1 << 20;
  absl::Status s3 = DecodeLiteral(src, std::span<const ByteRange>(whole),
                                  Frame{"value_input", 0, "body"}, array, o);
  FUZZ_CHECK(s3.ok());
  FUZZ_CHECK(array.complete());
  FUZZ_CHECK(array.bytes() == std::string_view(one).substr(h->header_bytes));
  FUZZ_CHECK((array.order() == ElementOrder::kColumnMajor) ==
             h->fortran_order);
  FUZZ_CHECK(array.dims() == h->shape);
  return 0;
}
