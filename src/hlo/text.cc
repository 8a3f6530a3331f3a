#include "decomposed/hlo/text.h"

#include <cstdint>

namespace decomposed::hlo {

bool IsElidedLiteral(const xla::LiteralProto& literal) {
  const xla::ShapeProto& shape = literal.shape();
  if (!literal.has_shape() || shape.element_type() == xla::TUPLE ||
      shape.element_type() == xla::TOKEN ||
      shape.element_type() == xla::PRIMITIVE_TYPE_INVALID) {
    return false;
  }
  for (int64_t d : shape.dimensions()) {
    if (d == 0) return false;  // an empty array has no data to elide
  }
  // Nothing but the shape: the serialized literal is exactly its shape
  // record (tag 0x0a, the length varint, the shape's bytes).
  const size_t shape_bytes = shape.ByteSizeLong();
  size_t varint = 1;
  for (size_t v = shape_bytes; v >= 0x80; v >>= 7) ++varint;
  return literal.ByteSizeLong() == 1 + varint + shape_bytes;
}

}  // namespace decomposed::hlo
