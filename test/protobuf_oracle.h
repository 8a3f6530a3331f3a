// Protobuf as the oracle for our hand-written decoders, shared by
// test/wire/wire_agreement_test.cc and the fuzz targets (box_fuzz, shape_fuzz).
//
//   * BoxRulesHold: the box rules of container/box.h, stated on the
//     LiteralProto protobuf parsed (so on protobuf's reading of the bytes,
//     merges included).
//   * CompareShape: every field of ShapeProto / LayoutProto our Shape
//     keeps, compared with protobuf's; returns "" or the first difference.
//   * StricterRule: names the documented rule (wire/format.h, box.h,
//     limits.h) behind an error of ours on bytes protobuf reads, or returns
//     nullptr when no documented rule explains the refusal.
#ifndef DECOMPOSED_TEST_PROTOBUF_ORACLE_H_
#define DECOMPOSED_TEST_PROTOBUF_ORACLE_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/proto/xla_data.pb.h"
#include "decomposed/xla/shape.h"

namespace decomposed::oracle {

// True when `m` has no unknown fields and sets no field outside `allowed`
// (proto3 scalars count as set when non-zero, repeated fields when
// non-empty, messages when present: protobuf's own notion).
inline bool OnlyFields(const google::protobuf::Message& m,
                       const std::set<std::string>& allowed) {
  const google::protobuf::Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) return false;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (!allowed.count(f->name())) return false;
  }
  return true;
}

// The box rules (container/box.h) on protobuf's parse of a box payload:
// exactly one u64s value and nothing else but an optional shape, which is
// a U64 scalar with at most a layout of memory_space and
// tail_padding_alignment_in_elements.
inline bool BoxRulesHold(const xla::LiteralProto& lp) {
  if (!OnlyFields(lp, {"shape", "u64s"}) || lp.u64s_size() != 1) return false;
  if (!lp.has_shape()) return true;
  const xla::ShapeProto& s = lp.shape();
  if (!OnlyFields(s, {"element_type", "layout"}) ||
      s.element_type() != xla::U64) {
    return false;
  }
  return !s.has_layout() ||
         OnlyFields(s.layout(),
                    {"memory_space", "tail_padding_alignment_in_elements"});
}

inline std::string CompareLayout(const Layout& ours,
                                 const xla::LayoutProto& theirs) {
  const auto& m2m = theirs.minor_to_major();
  if (ours.minor_to_major !=
      std::vector<int64_t>(m2m.begin(), m2m.end())) {
    return "minor_to_major";
  }
  if (ours.element_size_in_bits != theirs.element_size_in_bits()) {
    return "element_size_in_bits";
  }
  if (ours.memory_space != theirs.memory_space()) return "memory_space";
  if (ours.tail_padding_alignment_in_elements !=
      theirs.tail_padding_alignment_in_elements()) {
    return "tail_padding_alignment_in_elements";
  }
  if (ours.tiles != static_cast<size_t>(theirs.tiles_size())) return "tiles";
  return "";
}

inline std::string CompareShape(const Shape& ours,
                                const xla::ShapeProto& theirs) {
  // An enum is an int32: both keep the low 32 bits of a longer varint.
  if (ours.element_type != static_cast<int64_t>(theirs.element_type())) {
    return absl::StrCat("element_type ", ours.element_type, " vs ",
                        static_cast<int64_t>(theirs.element_type()));
  }
  const auto& dims = theirs.dimensions();
  if (ours.dimensions != std::vector<int64_t>(dims.begin(), dims.end())) {
    return "dimensions";
  }
  const auto& dyn = theirs.is_dynamic_dimension();
  if (ours.is_dynamic_dimension != std::vector<bool>(dyn.begin(), dyn.end())) {
    return "is_dynamic_dimension";
  }
  if (ours.has_layout != theirs.has_layout()) return "has_layout";
  if (std::string d = CompareLayout(ours.layout, theirs.layout());
      !d.empty()) {
    return absl::StrCat("layout ", d);
  }
  if (ours.tuple_shapes.size() !=
      static_cast<size_t>(theirs.tuple_shapes_size())) {
    return "tuple_shapes size";
  }
  for (size_t i = 0; i < ours.tuple_shapes.size(); ++i) {
    std::string d = CompareShape(ours.tuple_shapes[i],
                                 theirs.tuple_shapes(static_cast<int>(i)));
    if (!d.empty()) return absl::StrCat("tuple_shapes ", i, " ", d);
  }
  return "";
}

// True when `bytes` holds a 10-byte varint whose last byte carries bits
// past 64 (2..127): nine bytes with the continuation bit, then one
// without. Only such bytes can make wire::ReadVarint's stricter 10th-byte
// rule refuse what protobuf reads.
inline bool HasOverlongTenthByte(std::string_view bytes) {
  size_t run = 0;
  for (unsigned char c : bytes) {
    if (c >= 0x80) {
      ++run;
    } else {
      if (run >= 9 && c >= 2) return true;
      run = 0;
    }
  }
  return false;
}

// The documented rule that explains our error `s` on bytes protobuf reads
// (and, for boxes, on which BoxRulesHold), or nullptr.
inline const char* StricterRule(const absl::Status& s, std::string_view bytes,
                                bool box) {
  std::string_view m(s.message().data(), s.message().size());
  auto has = [&](std::string_view x) { return m.find(x) != m.npos; };
  if (s.code() == absl::StatusCode::kResourceExhausted) {
    return "a limit of limits.h (kMaxRank, kMaxTupleDepth, kMaxShapeNodes)";
  }
  if (has("(over 32 bits)")) {
    return "a tag over 32 bits (protobuf cuts a 5-byte tag to 32 bits)";
  }
  if (has(" wire type 3 (at") || has(" wire type 4 (at")) {
    return "a group wire type (protobuf skips an unknown group)";
  }
  if (has("malformed") && HasOverlongTenthByte(bytes)) {
    return "a varint's 10th byte above 1 (protobuf drops bits past 64)";
  }
  if (box && (has("only u64s (field 7)") || has("a U64 scalar shape") ||
              has("a scalar layout (only"))) {
    return "a field outside the box's list, present on the wire though "
           "empty or of a wire type protobuf keeps as unknown";
  }
  return nullptr;
}

}  // namespace decomposed::oracle

#endif  // DECOMPOSED_TEST_PROTOBUF_ORACLE_H_
