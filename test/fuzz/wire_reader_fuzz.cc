// libFuzzer target: wire::FieldReader, the one reader of protobuf fields,
// with protobuf as the oracle. The input is one message. Protobuf parses it
// into google.protobuf.Empty, which keeps every field as an unknown field:
// it accepts exactly the well-formed wire messages, and lists their
// fields. FieldReader must read the same fields (number, wire type, value
// or payload) in the same order, or refuse for a rule wire/format.h
// documents as stricter (oracle::StricterRule). It reads from a
// MemorySource and from a TrickleSource (split reads, no size), which must
// agree; every length-delimited payload is read through Payload() or
// ReadPayload() or skipped, by turns, so all three ways are exercised.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../protobuf_oracle.h"
#include "decomposed/wire/reader.h"
#include "fuzz_util.h"
#include "google/protobuf/empty.pb.h"
#include "google/protobuf/unknown_field_set.h"

using namespace decomposed;

namespace {

struct Seen {
  uint32_t number;
  uint32_t type;
  uint64_t value;
  std::string payload;
  bool operator==(const Seen&) const = default;
};

template <class S>
absl::Status ReadAll(S& src, uint64_t size, std::vector<Seen>* out) {
  wire::FieldReader<S> r(src, size, Frame{"message"}, "Message");
  wire::Field f;
  int turn = 0;
  while (r.Next(f)) {
    Seen s{f.number, f.wire_type, f.value, ""};
    if (f.wire_type == wire::kLen) {
      switch (turn++ % 3) {
        case 0: {
          wire::SubSource<S> view = r.Payload(f);
          FUZZ_CHECK(view.position() == f.offset);
          absl::Status st = ReadToString(view, f.length, Frame{"payload"},
                                         &s.payload);
          FUZZ_CHECK(st.ok());
          break;
        }
        case 1:
          FUZZ_CHECK(r.ReadPayload(f, &s.payload));
          break;
        default:
          s.payload = "(skipped)";
      }
    }
    out->push_back(std::move(s));
  }
  return r.status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  MemorySource mem(in);
  std::vector<Seen> ours;
  absl::Status a = ReadAll(mem, in.size(), &ours);
  fuzz::CheckErrorShape(a);
  fuzz::TrickleSource tri(in, size % 7);
  std::vector<Seen> again;
  absl::Status b = ReadAll(tri, in.size(), &again);
  fuzz::CheckErrorShape(b);
  FUZZ_CHECK(a.code() == b.code());
  FUZZ_CHECK(ours.size() == again.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    FUZZ_CHECK(ours[i].number == again[i].number);
    FUZZ_CHECK(ours[i].type == again[i].type);
    FUZZ_CHECK(ours[i].value == again[i].value);
    FUZZ_CHECK(ours[i].payload == again[i].payload);
  }

  google::protobuf::Empty empty;
  const bool theirs = empty.ParseFromArray(data, static_cast<int>(size));
  if (!a.ok()) {
    if (theirs) FUZZ_CHECK(oracle::StricterRule(a, in, false) != nullptr);
    return 0;
  }
  FUZZ_CHECK(theirs);
  const google::protobuf::UnknownFieldSet& u =
      empty.GetReflection()->GetUnknownFields(empty);
  FUZZ_CHECK(static_cast<size_t>(u.field_count()) == ours.size());
  for (int i = 0; i < u.field_count(); ++i) {
    const google::protobuf::UnknownField& f = u.field(i);
    const Seen& s = ours[static_cast<size_t>(i)];
    FUZZ_CHECK(static_cast<uint32_t>(f.number()) == s.number);
    switch (f.type()) {
      case google::protobuf::UnknownField::TYPE_VARINT:
        FUZZ_CHECK(s.type == wire::kVarint && s.value == f.varint());
        break;
      case google::protobuf::UnknownField::TYPE_FIXED32:
        FUZZ_CHECK(s.type == wire::kFixed32 && s.value == f.fixed32());
        break;
      case google::protobuf::UnknownField::TYPE_FIXED64:
        FUZZ_CHECK(s.type == wire::kFixed64 && s.value == f.fixed64());
        break;
      case google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED:
        FUZZ_CHECK(s.type == wire::kLen);
        FUZZ_CHECK(s.payload == "(skipped)" ||
                   s.payload == f.length_delimited());
        break;
      default:  // TYPE_GROUP: we refuse groups, so we cannot get here
        FUZZ_CHECK(false);
    }
  }
  return 0;
}
