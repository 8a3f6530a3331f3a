// ParseBothWays: a text through both of hlo/parse.h's parses, ParseHloText
// (the module built) and ParseHloTextToProto (the module written as it is
// parsed), which must agree: the same error, or bytes that are the
// deterministic serialization of the built module and the same extras.
// Returns ParseHloText's result, so a test that parses through it checks
// the written path on every text it has.
#ifndef DECOMPOSED_TEST_HLO_PARSE_BOTH_H_
#define DECOMPOSED_TEST_HLO_PARSE_BOTH_H_

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/serialize.h"
#include "decomposed/hlo/text.h"

namespace decomposed::hlo {

inline absl::StatusOr<ParsedHloText> ParseBothWays(std::string_view text,
                                                   const HloParseOptions& options = {}) {
  absl::StatusOr<ParsedHloText> built = ParseHloText(text, options);
  std::string bytes;
  size_t pieces = 0;
  absl::StatusOr<HloModuleTextExtras> written = ParseHloTextToProto(
      text,
      [&](std::string_view p) {
        ++pieces;
        bytes.append(p);
        return true;
      },
      options);
  EXPECT_EQ(built.status(), written.status()) << "the two parses disagree";
  if (built.ok() && written.ok()) {
    EXPECT_TRUE(bytes == DeterministicSerialization(built->module))
        << "ParseHloTextToProto's bytes (" << bytes.size()
        << ") are not ParseHloText's module serialized";
    EXPECT_EQ(written->config_attributes, built->extras.config_attributes);
    EXPECT_EQ(written->has_entry_computation_layout,
              built->extras.has_entry_computation_layout);
    EXPECT_EQ(written->compact_entry_layout_parameters,
              built->extras.compact_entry_layout_parameters);
    EXPECT_EQ(written->name_after_closing_brace,
              built->extras.name_after_closing_brace);
    EXPECT_EQ(written->operand_index_annotations,
              built->extras.operand_index_annotations);
  } else {
    EXPECT_TRUE(bytes.empty() || !written.ok());
  }
  return built;
}

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_TEST_HLO_PARSE_BOTH_H_
