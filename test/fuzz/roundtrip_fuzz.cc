// libFuzzer target: anything DecomposedWriter produces reads back equal.
// The fuzz input drives a writer (snapshot bytes, input and output bodies,
// box options, whole or streamed element bodies, with or without region
// [2]); the bytes it writes are read back over a MemorySource and a
// TrickleSource and must give the same snapshot, the same bodies and the
// same region [2] presence. Literal bodies built with protobuf from fuzzed
// shapes must scan back to the same shape.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decomposed/io/byte_sink.h"
#include "decomposed/container/framing.h"
#include "decomposed/xla/literal_plan.h"
#include "decomposed/proto/xla_data.pb.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

struct Plan {
  std::string snapshot;
  std::vector<std::string> inputs;
  bool has_outputs = false;
  std::vector<std::string> outputs;
};

std::string LiteralSource(FuzzedDataProvider& fdp) {
  xla::LiteralProto lit;
  xla::ShapeProto* shape = lit.mutable_shape();
  shape->set_element_type(static_cast<xla::PrimitiveType>(
      fdp.ConsumeIntegralInRange<int>(0, 40)));
  int rank = fdp.ConsumeIntegralInRange<int>(0, 5);
  for (int i = 0; i < rank; ++i) {
    shape->add_dimensions(fdp.ConsumeIntegralInRange<int64_t>(-2, 1 << 20));
  }
  if (fdp.ConsumeBool()) {
    auto* layout = shape->mutable_layout();
    for (int i = rank - 1; i >= 0; --i) layout->add_minor_to_major(i);
  }
  int n = fdp.ConsumeIntegralInRange<int>(0, 16);
  for (int i = 0; i < n; ++i) lit.add_f32s(fdp.ConsumeFloatingPoint<float>());
  return lit.SerializeAsString();
}

std::string Body(FuzzedDataProvider& fdp) {
  if (fdp.ConsumeBool()) return LiteralSource(fdp);
  return fdp.ConsumeRandomLengthString(300);
}

template <ByteSource S>
void ReadBack(S& src, const Plan& plan, bool absent_expected) {
  DecomposedReader<S> r(src);
  std::string snap;
  absl::StatusOr<ElementInfo> h = r.ReadHeader(&snap);
  FUZZ_CHECK(h.ok() && snap == plan.snapshot);
  absl::StatusOr<uint64_t> n = r.StartInputs();
  FUZZ_CHECK(n.ok() && *n == plan.inputs.size());
  auto check_list = [&](auto next, BlockReader<S>& list,
                        const std::vector<std::string>& want) {
    ElementInfo e;
    for (size_t i = 0;; ++i) {
      absl::StatusOr<bool> more = (r.*next)(&e);
      FUZZ_CHECK(more.ok());
      if (!*more) {
        FUZZ_CHECK(i == want.size());
        break;
      }
      FUZZ_CHECK(i < want.size() && e.length == want[i].size());
      std::string body;
      if (i % 2 == 0) {
        FUZZ_CHECK(
            ReadToString(list.body(), e.length, list.BodyFrame(), &body).ok());
        FUZZ_CHECK(body == want[i]);
      } else {
        // Scan instead of copying: a protobuf-built literal scans back to
        // the shape protobuf serialized.
        xla::LiteralProto lit;
        absl::StatusOr<LiteralPlan> scan =
            PlanLiteral(list.body(), e.length, list.BodyFrame(),
                        {.shape_must_be_message = true});
        if (lit.ParseFromString(want[i]) && lit.has_shape() && scan.ok()) {
          FUZZ_CHECK(scan->has_shape);
          absl::StatusOr<Shape> direct =
              ParseShape(lit.shape().SerializeAsString(), Frame{"x"});
          FUZZ_CHECK(direct.ok() &&
                     direct->ToString() == scan->shape.ToString());
        }
      }
    }
  };
  check_list(&DecomposedReader<S>::NextInput, r.inputs(), plan.inputs);
  absl::StatusOr<std::optional<uint64_t>> m = r.StartOutputs();
  FUZZ_CHECK(m.ok());
  if (absent_expected) {
    FUZZ_CHECK(!m->has_value());
  } else {
    FUZZ_CHECK(m->has_value() && **m == plan.outputs.size());
    check_list(&DecomposedReader<S>::NextOutput, r.outputs(), plan.outputs);
  }
  FUZZ_CHECK(r.Finish().ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  DecomposedWriteOptions wo;
  wo.box.with_shape = fdp.ConsumeBool();
  wo.write_output_count = fdp.ConsumeBool();
  bool stream_bodies = fdp.ConsumeBool();
  Plan plan;
  plan.snapshot = fdp.ConsumeRandomLengthString(400);
  int n_in = fdp.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < n_in; ++i) plan.inputs.push_back(Body(fdp));
  plan.has_outputs = fdp.ConsumeBool();
  if (plan.has_outputs) {
    int n_out = fdp.ConsumeIntegralInRange<int>(0, 8);
    for (int i = 0; i < n_out; ++i) plan.outputs.push_back(Body(fdp));
  }

  std::string file;
  StringSink sink(&file);
  DecomposedWriter<StringSink> w(sink, wo);
  auto write_block = [&](const std::vector<std::string>& bodies) {
    for (const std::string& b : bodies) {
      if (!stream_bodies) {
        FUZZ_CHECK(w.WriteElement(b).ok());
        continue;
      }
      FUZZ_CHECK(w.BeginElement(b.size()).ok());
      for (size_t at = 0; at < b.size(); at += 7) {
        FUZZ_CHECK(w.Append(std::string_view(b).substr(at, 7)).ok());
      }
    }
  };
  FUZZ_CHECK(w.WriteHeader(plan.snapshot).ok());
  FUZZ_CHECK(w.BeginInputs(plan.inputs.size()).ok());
  write_block(plan.inputs);
  if (plan.has_outputs) {
    FUZZ_CHECK(w.BeginOutputs(plan.outputs.size()).ok());
    write_block(plan.outputs);
  }
  FUZZ_CHECK(w.Finish().ok());

  // Without BeginOutputs, region [2] is an empty block unless the writer
  // was told not to write the count.
  bool absent = !plan.has_outputs && !wo.write_output_count;
  Plan expect = plan;
  MemorySource mem(file);
  ReadBack(mem, expect, absent);
  fuzz::TrickleSource tri(file, size % 7 + 1);
  ReadBack(tri, expect, absent);
  return 0;
}
