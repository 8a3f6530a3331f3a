// The library half of `capture plan` and `bundle ls`, which the CLI and the
// Python package both call: ForwardInfoFromJson (one set of defaults),
// PlanCaptures and ListBundlesJson. Plans are worked out by hand from the
// rules in selector.h and capturer.h.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/bundle_writer.h"
#include "decomposed/capture/plan.h"
#include "decomposed/capture/selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

SnapshotConfig Config(std::map<std::string, std::string> env) {
  absl::StatusOr<SnapshotConfig> c = ResolveSnapshotConfig(env);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

constexpr char P[] = "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_";

TEST(ForwardInfoFromJson, DefaultsAreTheStructs) {
  absl::StatusOr<ForwardInfo> f = ForwardInfoFromJson(json{{"req_ids", {"a"}}});
  ASSERT_TRUE(f.ok()) << f.status();
  const ForwardInfo d;
  EXPECT_EQ(f->req_ids, std::vector<std::string>{"a"});
  EXPECT_EQ(f->positions, d.positions);
  EXPECT_EQ(f->is_prompt, d.is_prompt);
  EXPECT_EQ(f->max_generated, d.max_generated);
  EXPECT_EQ(f->global_step, d.global_step);
  // null is the same as absent.
  f = ForwardInfoFromJson(json::parse(
      R"({"req_ids": [], "positions": null, "is_prompt": null,
          "max_generated": null, "global_step": null, "neffs": ["x"]})"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->max_generated, 1);
  EXPECT_FALSE(f->global_step.has_value());
}

TEST(ForwardInfoFromJson, EveryField) {
  absl::StatusOr<ForwardInfo> f = ForwardInfoFromJson(json::parse(
      R"({"req_ids": ["a", "b-2"], "positions": [5, -1], "is_prompt": true,
          "max_generated": 3, "global_step": 9000000000})"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->req_ids, (std::vector<std::string>{"a", "b-2"}));
  EXPECT_EQ(f->positions, (std::vector<int64_t>{5, -1}));
  EXPECT_TRUE(f->is_prompt);
  EXPECT_EQ(f->max_generated, 3);
  EXPECT_EQ(f->global_step, 9000000000);
}

TEST(ForwardInfoFromJson, WrongTypesNameTheField) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"([1])", "expected a forward object, found array [1]"},
      {R"({})", "no \"req_ids\" list"},
      {R"({"req_ids": "a"})", "\"req_ids\": expected a list of strings, found string \"a\""},
      {R"({"req_ids": [1]})", "\"req_ids\": expected a list of strings, found number 1"},
      {R"({"req_ids": [], "positions": ["7"]})",
       "\"positions\": expected a list of integers, found string \"7\""},
      {R"({"req_ids": [], "positions": [1.5]})",
       "\"positions\": expected a list of integers, found number 1.5"},
      {R"({"req_ids": [], "positions": [9223372036854775808]})",
       "\"positions\": expected a list of integers, found number 9223372036854775808"},
      {R"({"req_ids": [], "is_prompt": 1})",
       "\"is_prompt\": expected true or false, found number 1"},
      {R"({"req_ids": [], "max_generated": true})",
       "\"max_generated\": expected an integer, found boolean true"},
      {R"({"req_ids": [], "global_step": "3"})",
       "\"global_step\": expected an integer or null, found string \"3\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ForwardInfo> f = ForwardInfoFromJson(json::parse(c.json));
    ASSERT_FALSE(f.ok()) << c.json;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(f.status().message(), c.message) << c.json;
  }
}

TEST(PlanCaptures, HandWorkedPlan) {
  // Every call, budget 2, token rule at 11. Forward 0 is warmup (no
  // context): no counter moves. Forward 1: NEFF A call 0 and B call 0, both
  // selected by the call rule; the budget is then spent. Forward 2: B call 1
  // selected (call and token: 9 + 2 = 11 with max_generated 2) but refused.
  SnapshotConfig c = Config({{std::string(P) + "ENABLE", "1"},
                             {std::string(P) + "CAPTURE_AT_CALL", "-1"},
                             {std::string(P) + "CAPTURE_TOKEN", "11"},
                             {std::string(P) + "MAX_CAPTURES", "2"}});
  json forwards = json::parse(R"([
    {"neffs": ["A"]},
    {"req_ids": ["r"], "positions": [3], "neffs": ["A", "B"]},
    {"req_ids": ["r"], "positions": [9], "max_generated": 2, "neffs": ["B"]}
  ])");
  absl::StatusOr<json> plan =
      PlanCaptures(c, forwards, RankInfo{7, 1, 0}, "/root");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ((*plan)["root"], "/root");
  EXPECT_EQ((*plan)["rank"], json::parse(R"({"global_rank": 7, "tp_rank": 1, "dp_rank": 0})"));
  EXPECT_EQ((*plan)["rank_selected"], true);
  EXPECT_EQ((*plan)["budget_log"].size(), 1u);
  const json& caps = (*plan)["captures"];
  ASSERT_EQ(caps.size(), 2u);
  EXPECT_EQ(caps[0]["forward"], 1);
  EXPECT_EQ(caps[0]["neff"], "A");
  EXPECT_EQ(caps[0]["call_index"], 0);
  EXPECT_EQ(caps[0]["dir"], "A/rank7/call0");
  EXPECT_EQ(caps[0]["selected_by"], json::parse(R"(["call_index"])"));
  EXPECT_EQ(caps[1]["neff"], "B");
  EXPECT_EQ(caps[1]["dir"], "B/rank7/call0");
}

TEST(PlanCaptures, TokenRuleUsesTheDefaultMaxGenerated) {
  // No max_generated: 1 token per row, so position 10 reaches 11 and
  // position 9 does not.
  SnapshotConfig c = Config({{std::string(P) + "ENABLE", "1"},
                             {std::string(P) + "CAPTURE_TOKEN", "11"}});
  json forwards = json::parse(R"([
    {"req_ids": ["a"], "positions": [9], "neffs": ["N"]},
    {"req_ids": ["a"], "positions": [10], "neffs": ["N"]}
  ])");
  absl::StatusOr<json> plan = PlanCaptures(c, forwards, RankInfo{}, "/r");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ((*plan)["captures"].size(), 1u);
  EXPECT_EQ((*plan)["captures"][0]["forward"], 1);
  EXPECT_EQ((*plan)["captures"][0]["matches"][0]["position"], 11);
}

TEST(PlanCaptures, MalformedForwardsSayWhich) {
  SnapshotConfig c = Config({{std::string(P) + "ENABLE", "1"}});
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({})", "expected a JSON list of forwards, found object"},
      {R"([{"neffs": []}, 3])", "forward 1: not an object"},
      {R"([{"req_ids": ["a"]}])", "forward 0: no \"neffs\" list"},
      {R"([{"neffs": [1]}])", "forward 0: a NEFF hash that is not a string"},
      {R"([{"req_ids": ["a"], "is_prompt": "no", "neffs": []}])",
       "forward 0: \"is_prompt\": expected true or false, found string \"no\""},
  };
  for (const Case& k : cases) {
    absl::StatusOr<json> plan =
        PlanCaptures(c, json::parse(k.json), RankInfo{}, "/r");
    ASSERT_FALSE(plan.ok()) << k.json;
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(plan.status().message(), k.message);
  }
}

std::string TempRoot() {
  std::string t = ::testing::TempDir() + "/capture_plan_XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

TEST(ListBundlesJson, CompleteIncompleteAndInvalid) {
  const std::string root = TempRoot();
  float v[6] = {0, 1, 2, 3, 4, 5};
  HostTensor t{v, TorchType::kFloat32, {2, 3}, {}};
  CallMeta m;
  m.hash = "h";
  m.format = BundleFormat::kNpy;
  m.call_index = 0;
  m.selected_by = {"call_index", "token"};
  ASSERT_TRUE(WriteBundle(root + "/h/rank1/call0", {&t, 1}, m).ok());
  // call2: no meta.json (incomplete); call10: meta.json that is not JSON.
  ASSERT_EQ(::mkdir((root + "/h/rank1/call2").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/h/rank1/call10").c_str(), 0755), 0);
  std::ofstream(root + "/h/rank1/call10/meta.json") << "{";
  absl::StatusOr<json> l = ListBundlesJson(root);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0], (json{{"path", root + "/h/rank1/call0"},
                           {"hash", "h"},
                           {"global_rank", 1},
                           {"call_index", 0},
                           {"complete", true},
                           {"format", "npy"},
                           {"inputs", 1},
                           {"selected_by", {"call_index", "token"}}}));
  EXPECT_EQ((*l)[1], (json{{"path", root + "/h/rank1/call2"},
                           {"hash", "h"},
                           {"global_rank", 1},
                           {"call_index", 2},
                           {"complete", false}}));
  EXPECT_EQ((*l)[2]["call_index"], 10);
  EXPECT_EQ((*l)[2]["complete"], true);
  EXPECT_FALSE((*l)[2].contains("format"));
  EXPECT_THAT((*l)[2]["error"].get<std::string>(), HasSubstr("meta.json"));
  EXPECT_FALSE(ListBundlesJson(root + "/nope").ok());
}

}  // namespace
}  // namespace decomposed::capture
