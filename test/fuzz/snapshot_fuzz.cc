// libFuzzer target: a classic HloSnapshot file. protobuf parses it; then our
// own walk runs over what it holds: every argument and the result are
// re-serialized and scanned with PlanLiteral (whose shape must match
// ParseShape of protobuf's own ShapeProto), each shape is validated, and
// the module's program shapes are parsed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "decomposed/xla/literal_plan.h"
#include "google/protobuf/stubs/logging.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/xla/shape.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

void CheckLiteral(const xla::LiteralProto& parsed, const Frame& frame) {
  // protobuf keeps fields it could not place (a `shape` sent as a varint,
  // say) as unknown fields and writes them back; PlanLiteral with
  // shape_must_be_message (inspect's rule) rejects those, so plan them
  // without expectations first...
  {
    std::string raw = parsed.SerializeAsString();
    MemorySource src(raw);
    fuzz::CheckErrorShape(
        PlanLiteral(src, raw.size(), frame, {.shape_must_be_message = true})
            .status());
  }
  // ...then require that the well-formed remainder scans.
  xla::LiteralProto lit = parsed;
  lit.DiscardUnknownFields();
  std::string body = lit.SerializeAsString();
  MemorySource src(body);
  absl::StatusOr<LiteralPlan> scan = PlanLiteral(src, body.size(), frame);
  fuzz::CheckErrorShape(scan.status());
  absl::StatusOr<Shape> direct =
      ParseShape(lit.shape().SerializeAsString(), frame);
  fuzz::CheckErrorShape(direct.status());
  if (!scan.ok()) {
    // protobuf wrote this body itself; the only reasons to refuse it are
    // our limits (rank, tuple depth, shape size) in the shape.
    FUZZ_CHECK(!direct.ok() || scan.status().code() ==
                                   absl::StatusCode::kResourceExhausted);
    return;
  }
  FUZZ_CHECK(src.position() == body.size());
  FUZZ_CHECK(scan->has_shape == lit.has_shape());
  if (scan->has_shape) {
    FUZZ_CHECK(direct.ok());
    FUZZ_CHECK(scan->shape.ToString() == direct->ToString());
    fuzz::CheckErrorShape(ValidateShape(scan->shape, frame, 0));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 warnings
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xla::HloSnapshot snap;
  if (!snap.ParseFromArray(data, static_cast<int>(size))) return 0;
  for (int i = 0; i < snap.arguments_size(); ++i) {
    CheckLiteral(snap.arguments(i), Frame{"argument", i, "literal"});
  }
  if (snap.has_result()) CheckLiteral(snap.result(), Frame{"result"});
  const auto& ps = snap.hlo().hlo_module().host_program_shape();
  for (const auto& p : ps.parameters()) {
    absl::StatusOr<Shape> s =
        ParseShape(p.SerializeAsString(), Frame{"program shape"});
    fuzz::CheckErrorShape(s.status());
    if (s.ok()) fuzz::CheckErrorShape(ValidateShape(*s, Frame{"p"}, 0));
  }
  return 0;
}
