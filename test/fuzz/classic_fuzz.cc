// libFuzzer target: the classic mapping's walks (snapshot/classic.h) on an
// arbitrary HloSnapshot, with protobuf as the oracle. The walks read the
// HloSnapshot and HloProto records (never literal data), so:
//   * when protobuf accepts the input, the walks accept it too, unless a
//     stricter rule of the wire layer (wire/format.h: group wire types, a
//     10th varint byte above 1, a tag over 32 bits) refuses it;
//   * when both accept, the mapping's module, arguments and merged result
//     are protobuf's, and the literal-empty snapshot parses to protobuf's
//     message without its literals;
//   * every error is well-formed (frame, offset, a known code).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "fuzz_util.h"
#include "google/protobuf/stubs/logging.h"

using namespace decomposed;

namespace {

template <class Message>
bool SameMessage(const std::string& data, std::span<const ByteRange> ranges,
                 const Message& want) {
  std::string cat;
  for (const ByteRange& r : ranges) cat += data.substr(r.offset, r.length);
  Message got;
  return got.ParseFromString(cat) &&
         got.SerializeAsString() == want.SerializeAsString();
}

// The stricter rules of the wire layer, by the message they give.
bool StricterRule(const absl::Status& s) {
  const std::string m(s.message());
  return m.find("wire type 0, 1, 2 or 5") != std::string::npos ||
         m.find("over 32 bits") != std::string::npos ||
         m.find("malformed") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static google::protobuf::LogSilencer* quiet = new google::protobuf::LogSilencer;
  (void)quiet;
  const std::string in(reinterpret_cast<const char*>(data), size);
  xla::HloSnapshot pb;
  const bool pb_ok = pb.ParseFromString(in);
  MemorySource src(in);
  const ByteRange all{0, in.size()};
  const Frame frame{"snapshot"};
  absl::StatusOr<ClassicSnapshot> snap = IndexClassicSnapshot(src, all, frame);
  fuzz::CheckErrorShape(snap.status());
  std::string empty;
  absl::Status h = ReadLiteralEmptySnapshot(src, all, frame, &empty);
  fuzz::CheckErrorShape(h);
  if (pb_ok && !snap.ok()) FUZZ_CHECK(StricterRule(snap.status()));
  if (pb_ok && !h.ok()) FUZZ_CHECK(StricterRule(h));
  if (!snap.ok()) return 0;

  // Inputs and outputs: the walks may fail inside a literal protobuf
  // refused, never on one it accepted.
  std::vector<std::string> args;
  absl::Status s = ForEachClassicInput(
      src, *snap, frame, [](int64_t i) { return Frame{"input", i, "body"}; },
      [&](std::span<const ByteRange> literal, int64_t) {
        std::string cat;
        for (const ByteRange& r : literal) {
          cat += in.substr(r.offset, r.length);
        }
        args.push_back(std::move(cat));
        return absl::OkStatus();
      });
  fuzz::CheckErrorShape(s);
  absl::StatusOr<std::vector<LiteralRanges>> outs =
      ClassicOutputs(src, *snap, Frame{"result"});
  fuzz::CheckErrorShape(outs.status());
  if (!pb_ok) return 0;

  FUZZ_CHECK(SameMessage(in, snap->module, pb.hlo().hlo_module()));
  FUZZ_CHECK(snap->arguments == static_cast<uint64_t>(pb.arguments_size()));
  FUZZ_CHECK(snap->result.empty() == !pb.has_result());
  if (pb.has_result()) FUZZ_CHECK(SameMessage(in, snap->result, pb.result()));
  if (h.ok()) {
    xla::HloSnapshot got;
    FUZZ_CHECK(got.ParseFromString(empty));
    FUZZ_CHECK(got.arguments_size() == 0 && !got.has_result());
    xla::HloSnapshot want = pb;
    want.clear_arguments();
    want.clear_result();
    want.DiscardUnknownFields();
    got.DiscardUnknownFields();
    FUZZ_CHECK(got.SerializeAsString() == want.SerializeAsString());
  }
  // The inputs: protobuf's arguments, or, under the single-tuple-parameter
  // rule (classic.h), the elements of the one tuple argument. Our walk may
  // refuse only by a stricter rule or a limit of limits.h.
  if (!s.ok()) {
    FUZZ_CHECK(StricterRule(s) ||
               s.code() == absl::StatusCode::kResourceExhausted);
    return 0;
  }
  const xla::HloModuleProto& m = pb.hlo().hlo_module();
  const bool split = m.has_host_program_shape() &&
                     m.host_program_shape().parameters_size() == 1 &&
                     m.host_program_shape().parameters(0).element_type() ==
                         xla::TUPLE &&
                     pb.arguments_size() == 1 &&
                     pb.arguments(0).shape().element_type() == xla::TUPLE;
  std::vector<const xla::LiteralProto*> want;
  if (split) {
    for (const auto& t : pb.arguments(0).tuple_literals()) want.push_back(&t);
  } else {
    for (const auto& a : pb.arguments()) want.push_back(&a);
  }
  FUZZ_CHECK(args.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    xla::LiteralProto got;
    FUZZ_CHECK(got.ParseFromString(args[i]));
    FUZZ_CHECK(got.SerializeAsString() == want[i]->SerializeAsString());
  }
  return 0;
}
