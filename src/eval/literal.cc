#include "decomposed/eval/literal.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/xla/array_buffer.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/literal_decoder.h"

namespace decomposed::eval {
namespace {

absl::StatusOr<Value> FromLiteral(const xla::LiteralProto& literal,
                                  uint64_t max_bytes, int depth) {
  if (depth > limits::kMaxTupleDepth) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "literal: expected tuples nested at most ", limits::kMaxTupleDepth,
        " deep (kMaxTupleDepth), found deeper"));
  }
  if (literal.shape().element_type() == static_cast<int>(PrimitiveType::kTuple)) {
    std::vector<Value> elements;
    for (const xla::LiteralProto& e : literal.tuple_literals()) {
      absl::StatusOr<Value> v = FromLiteral(e, max_bytes, depth + 1);
      if (!v.ok()) return v.status();
      elements.push_back(*std::move(v));
    }
    return Value::Tuple(std::move(elements));
  }
  if (literal.shape().element_type() == static_cast<int>(PrimitiveType::kToken)) {
    return Value::Tuple({});
  }
  const std::string bytes = literal.SerializeAsString();
  MemorySource src(bytes);
  ArrayBuffer buffer;
  buffer.set_max_bytes(max_bytes);
  // A constant read from HLO text may have no layout: row-major then.
  LiteralDecodeOptions options;
  options.lenient_layout = true;
  if (absl::Status s = DecodeLiteral(src, bytes.size(), Frame{"literal"}, buffer, options);
      !s.ok()) {
    return s;
  }
  std::vector<char> data = buffer.TakeBytes();
  absl::StatusOr<Array> a = Array::Copy(buffer.type(), buffer.dims(),
                                        std::string_view(data.data(), data.size()));
  if (!a.ok()) return a.status();
  return Value(*std::move(a));
}

}  // namespace

absl::StatusOr<Value> ValueFromLiteral(const xla::LiteralProto& literal,
                                       uint64_t max_bytes) {
  return FromLiteral(literal, max_bytes, 0);
}

absl::StatusOr<xla::LiteralProto> LiteralFromArray(const Array& in) {
  absl::StatusOr<Array> c = in.Contiguous();
  if (!c.ok()) return c.status();
  const Array& a = *c;
  xla::LiteralProto lit;
  xla::ShapeProto* shape = lit.mutable_shape();
  shape->set_element_type(static_cast<xla::PrimitiveType>(a.type()));
  for (int64_t d : a.dims()) shape->add_dimensions(d);
  for (int64_t d = a.rank() - 1; d >= 0; --d) shape->mutable_layout()->add_minor_to_major(d);
  const int64_t n = a.element_count();
  const PrimitiveTypeInfo& info = a.type_info();
  switch (info.encoding) {
    case DataEncoding::kBool:
      for (int64_t i = 0; i < n; ++i) lit.add_preds(a.data()[i] != 0);
      break;
    case DataEncoding::kVarint32:
      for (int64_t i = 0; i < n; ++i) lit.add_s32s(a.data<int32_t>()[i]);
      break;
    case DataEncoding::kVarint64:
      for (int64_t i = 0; i < n; ++i) lit.add_s64s(a.data<int64_t>()[i]);
      break;
    case DataEncoding::kVarintU32:
      for (int64_t i = 0; i < n; ++i) lit.add_u32s(a.data<uint32_t>()[i]);
      break;
    case DataEncoding::kVarintU64:
      for (int64_t i = 0; i < n; ++i) lit.add_u64s(a.data<uint64_t>()[i]);
      break;
    case DataEncoding::kFixed32:
      if (a.type() == PrimitiveType::kC64) {
        for (int64_t i = 0; i < 2 * n; ++i) lit.add_c64s(a.data<float>()[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) lit.add_f32s(a.data<float>()[i]);
      }
      break;
    case DataEncoding::kFixed64:
      if (a.type() == PrimitiveType::kC128) {
        for (int64_t i = 0; i < 2 * n; ++i) lit.add_c128s(a.data<double>()[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) lit.add_f64s(a.data<double>()[i]);
      }
      break;
    case DataEncoding::kBytes: {
      const google::protobuf::FieldDescriptor* f =
          xla::LiteralProto::descriptor()->FindFieldByNumber(info.proto_field);
      if (!f) break;
      std::string bytes(a.bytes());
      if (const int bits = SubByteBits(a.type()); bits) {
        for (char& ch : bytes) ch = static_cast<char>(ch & ((1 << bits) - 1));
      }
      xla::LiteralProto::GetReflection()->SetString(&lit, f, std::move(bytes));
      return lit;
    }
    case DataEncoding::kNone:
      return absl::UnimplementedError(absl::StrCat(
          "expected an array element type with literal data, found ",
          Sv(PrimitiveTypeName(a.type()))));
  }
  return lit;
}

}  // namespace decomposed::eval
