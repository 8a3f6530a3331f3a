// libFuzzer target: bytes -> HloModuleProto (ParseFromArray) ->
// HloModule::Create -> ValidateModuleAll, with default and with permissive
// options. Never a crash, a hang or an allocation the input only declares;
// every problem is kInvalidArgument and names its place (a module, a
// computation or an instruction).
#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/validate.h"
#include "decomposed/proto/hlo.pb.h"
#include "fuzz_util.h"
#include "google/protobuf/stubs/logging.h"

using namespace decomposed;

namespace {

void CheckProblems(const std::vector<absl::Status>& all, size_t limit) {
  FUZZ_CHECK(limit == 0 || all.size() <= limit);
  for (const absl::Status& s : all) {
    FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    absl::string_view m = s.message();
    FUZZ_CHECK(absl::StartsWith(m, "module ") ||
               absl::StartsWith(m, "computation "));
  }
}

}  // namespace

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
  if (!m.ok()) {
    FUZZ_CHECK(m.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  hlo::ValidateOptions strict;
  std::vector<absl::Status> all = hlo::ValidateModuleAll(**m, strict);
  CheckProblems(all, strict.max_problems);
  // The first problem is ValidateModule's.
  absl::Status first = hlo::ValidateModule(**m, strict);
  FUZZ_CHECK(all.empty() == first.ok());
  if (!all.empty()) FUZZ_CHECK(all.front() == first);
  hlo::ValidateOptions lax;
  lax.allow_mixed_precision = true;
  lax.allow_unknown_opcodes = true;
  lax.max_problems = 0;
  CheckProblems(hlo::ValidateModuleAll(**m, lax), 0);
  return 0;
}
