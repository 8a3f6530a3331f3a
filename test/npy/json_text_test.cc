// JsonText (npy/json_text.h): the one JSON writer never throws on bytes that
// are not UTF-8, and has the project's one spelling.
#include "decomposed/npy/json_text.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace decomposed {
namespace {

TEST(JsonTextTest, IndentedUtf8WithAFinalNewline) {
  nlohmann::ordered_json j{{"b", 1}, {"a", "é"}};
  EXPECT_EQ(JsonText(j), "{\n  \"b\": 1,\n  \"a\": \"\xc3\xa9\"\n}\n");
}

TEST(JsonTextTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  // nlohmann's own dump() throws type_error 316 here: what aborted the CLI.
  nlohmann::json j{{"file", std::string("x-\xff.bin")}};
  EXPECT_THROW(j.dump(), nlohmann::json::type_error);
  std::string text;
  EXPECT_NO_THROW(text = JsonText(j));
  EXPECT_EQ(text, "{\n  \"file\": \"x-\xef\xbf\xbd.bin\"\n}\n");
  EXPECT_EQ(nlohmann::json::parse(text)["file"], "x-\xef\xbf\xbd.bin");
  // A key too.
  nlohmann::ordered_json k;
  k[std::string("\xfe")] = 1;
  EXPECT_EQ(JsonText(k, kJsonLine), "{\"\xef\xbf\xbd\":1}");
}

TEST(JsonTextTest, StylesForOneLineAndAsciiEscapes) {
  nlohmann::json j{{"a", std::string("\xc3\xa9\xff")}};
  EXPECT_EQ(JsonText(j, kJsonLine), "{\"a\":\"\xc3\xa9\xef\xbf\xbd\"}");
  EXPECT_EQ(JsonText(j, {.indent = 2, .ensure_ascii = true,
                         .final_newline = false}),
            "{\n  \"a\": \"\\u00e9\\ufffd\"\n}");
}

}  // namespace
}  // namespace decomposed
