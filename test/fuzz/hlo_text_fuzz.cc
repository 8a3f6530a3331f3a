// libFuzzer target: bytes -> ParseHloText (hlo/parse.h). Never a crash, a
// hang, a deep recursion or an allocation the text only declares (a shape
// `f32[99999999999]` or a literal claiming that many elements); every error
// is kInvalidArgument `line L, column C: expected X, found Y` (or
// kResourceExhausted for a text over the size limit).
//
// A text that parses gives a module HloModule::Create accepts. When that
// module also validates (hlo/validate.h), each of the three styles prints
// it, the printed text parses again and prints the same text again: print
// and parse agree on everything the printer writes.
//
// The text parsed to bytes (ParseHloTextToProto) gives the same error, or
// the built module's deterministic serialization.
//
// The same bytes as a torch-xla graph dump (hlo/tensors_dump.h): the split
// either fails with `line N: expected X, found Y` or gives pieces that are
// the text again, in order, and printing the dump ends in success or an
// error naming the graph.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/serialize.h"
#include "decomposed/hlo/tensors_dump.h"
#include "decomposed/hlo/validate.h"
#include "decomposed/io/byte_sink.h"
#include "fuzz_util.h"
#include "google/protobuf/stubs/logging.h"

using namespace decomposed;

namespace {

void CheckError(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  absl::string_view m = s.message();
  FUZZ_CHECK(absl::StartsWith(m, "line "));
  FUZZ_CHECK(absl::StrContains(m, ", column "));
  FUZZ_CHECK(absl::StrContains(m, ": expected "));
  FUZZ_CHECK(absl::StrContains(m, ", found "));
}

void CheckDump(std::string_view text) {
  (void)hlo::LooksLikeTensorsDump(text);
  absl::StatusOr<hlo::TensorsDump> d = hlo::SplitTensorsDump(text);
  if (!d.ok()) {
    FUZZ_CHECK(d.status().code() == absl::StatusCode::kInvalidArgument);
    absl::string_view m = d.status().message();
    FUZZ_CHECK(absl::StartsWith(m, "line "));
    FUZZ_CHECK(absl::StrContains(m, ": expected "));
    FUZZ_CHECK(absl::StrContains(m, ", found "));
    return;
  }
  FUZZ_CHECK(!d->graphs.empty());
  std::string joined;
  for (const hlo::TensorsDumpGraph& g : d->graphs) {
    FUZZ_CHECK(!g.text.empty());
    FUZZ_CHECK(g.line >= 2);
    joined.append(g.before);
    joined.append(g.text);
  }
  joined.append(d->after);
  FUZZ_CHECK(joined == text);
  std::string out;
  StringSink sink(&out);
  absl::Status s = hlo::PrintTensorsDump(*d, hlo::HloPrintOptions(), sink);
  FUZZ_CHECK(s.ok() || absl::StartsWith(s.message(), "graph "));
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
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckDump(text);
  // A small depth too, so that the bound itself is exercised.
  hlo::HloParseOptions shallow;
  shallow.max_depth = 4;
  absl::StatusOr<hlo::ParsedHloText> small = hlo::ParseHloText(text, shallow);
  if (!small.ok()) CheckError(small.status());

  absl::StatusOr<hlo::ParsedHloText> parsed = hlo::ParseHloText(text);
  std::string bytes;
  absl::StatusOr<hlo::HloModuleTextExtras> written =
      hlo::ParseHloTextToProto(text, [&](std::string_view p) {
        bytes.append(p);
        return true;
      });
  FUZZ_CHECK(written.status() == parsed.status());
  if (!parsed.ok()) {
    CheckError(parsed.status());
    return 0;
  }
  FUZZ_CHECK(hlo::DeterministicSerialization(parsed->module) == bytes);
  FUZZ_CHECK(written->config_attributes == parsed->extras.config_attributes);
  FUZZ_CHECK(written->has_entry_computation_layout ==
             parsed->extras.has_entry_computation_layout);
  FUZZ_CHECK(written->compact_entry_layout_parameters ==
             parsed->extras.compact_entry_layout_parameters);
  FUZZ_CHECK(written->name_after_closing_brace == parsed->extras.name_after_closing_brace);
  FUZZ_CHECK(written->operand_index_annotations ==
             parsed->extras.operand_index_annotations);
  // What parses within the small bound parses within the default one.
  FUZZ_CHECK(!small.ok() || parsed.ok());
  hlo::HloModuleTextExtras extras = parsed->extras;
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m =
      hlo::HloModule::Create(std::move(parsed->module));
  FUZZ_CHECK(m.ok());
  bool valid = hlo::ValidateModule(**m).ok();
  for (hlo::HloTextStyle style :
       {hlo::HloTextStyle::kLong, hlo::HloTextStyle::kModern,
        hlo::HloTextStyle::kShort}) {
    hlo::HloPrintOptions options;
    options.style = style;
    std::string printed = hlo::PrintHloModuleToString(**m, options, &extras);
    if (!valid) continue;
    FUZZ_CHECK(!printed.empty());
    absl::StatusOr<hlo::ParsedHloText> again = hlo::ParseHloText(printed);
    if (!again.ok()) {
      std::fprintf(stderr, "%s\n---\n%s\n", std::string(again.status().message()).c_str(),
                   printed.c_str());
    }
    FUZZ_CHECK(again.ok());
    hlo::HloModuleTextExtras extras2 = again->extras;
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> m2 =
        hlo::HloModule::Create(std::move(again->module));
    FUZZ_CHECK(m2.ok());
    std::string reprinted = hlo::PrintHloModuleToString(**m2, options, &extras2);
    if (reprinted != printed) {
      std::fprintf(stderr, "%s\n---\n%s\n", printed.c_str(), reprinted.c_str());
    }
    FUZZ_CHECK(reprinted == printed);
  }
  return 0;
}
