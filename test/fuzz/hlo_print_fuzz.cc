// libFuzzer target: bytes -> HloModuleProto (ParseFromArray) ->
// HloModule::Create -> PrintHloModule in the three styles, with and without
// large constants. Never a crash, a hang or an allocation the input only
// declares; the text starts with "HloModule "; every error is
// kInvalidArgument and names its place (a module or a computation).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/print.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/proto/hlo.pb.h"
#include "fuzz_util.h"
#include "google/protobuf/stubs/logging.h"

using namespace decomposed;

// Protobuf logs every string field that is not UTF-8; quiet, the fuzzer
// runs several times faster.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xla::HloModuleProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m =
      hlo::HloModule::Create(std::move(proto));
  if (!m.ok()) return 0;
  for (hlo::HloTextStyle style : {hlo::HloTextStyle::kLong,
                                  hlo::HloTextStyle::kModern,
                                  hlo::HloTextStyle::kShort}) {
    for (bool large : {false, true}) {
      hlo::HloPrintOptions options;
      options.style = style;
      options.print_large_constants = large;
      std::string text;
      StringSink sink(&text);
      absl::Status s = hlo::PrintHloModule(**m, options, sink);
      if (s.ok()) {
        FUZZ_CHECK(absl::StartsWith(text, "HloModule "));
        continue;
      }
      FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument);
      absl::string_view message = s.message();
      FUZZ_CHECK(absl::StartsWith(message, "module ") ||
                 absl::StartsWith(message, "computation "));
    }
  }
  return 0;
}
