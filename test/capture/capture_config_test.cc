// Table-driven tests of the input-snapshot configuration, selector, budget
// and capturer (docs/format.md §16). Expected values are worked out
// from the rules in docs/format.md, not from this library's output.
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "decomposed/capture/budget.h"
#include "decomposed/capture/capturer.h"
#include "decomposed/capture/config.h"
#include "decomposed/capture/selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::capture {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Env = std::map<std::string, std::string>;
const std::string E = "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_";

Env On(Env extra = {}) {
  extra[E + "ENABLE"] = "1";
  return extra;
}

// ---------------------------------------------------------------- parsing

TEST(PyInt, FollowsPythonInt) {
  struct Case { std::string in; std::optional<int64_t> out; };
  const Case cases[] = {
      {"0", 0}, {"7", 7}, {" 7 ", 7}, {"\t7\n", 7}, {"+3", 3}, {"-0", 0},
      {"-1", -1}, {"007", 7}, {"1_000", 1000}, {"", std::nullopt},
      {" ", std::nullopt}, {"+", std::nullopt}, {"1.0", std::nullopt},
      {"0x10", std::nullopt}, {"1 2", std::nullopt}, {"_1", std::nullopt},
      {"1_", std::nullopt}, {"1__0", std::nullopt}, {"abc", std::nullopt},
      {"--1", std::nullopt}, {"9223372036854775807", INT64_MAX},
      {"9223372036854775808", std::nullopt},
      {"-9223372036854775808", INT64_MIN},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(internal::PyInt(c.in), c.out) << "'" << c.in << "'";
  }
}

TEST(Config, EnableSwitch) {
  struct Case { std::optional<std::string> enable; bool ok; bool enabled; };
  const Case cases[] = {
      {std::nullopt, true, false}, {"0", true, false}, {" 0 ", true, false},
      {"-0", true, false}, {"1", true, true}, {" 2\n", true, true},
      {"-1", true, true}, {"+1", true, true}, {"", false, false},
      {"  ", false, false}, {"true", false, false}, {"yes", false, false},
      {"1.0", false, false},
  };
  for (const Case& c : cases) {
    Env env;
    if (c.enable) env[E + "ENABLE"] = *c.enable;
    auto r = ResolveSnapshotConfig(env);
    ASSERT_EQ(r.ok(), c.ok) << (c.enable ? *c.enable : "<unset>");
    if (r.ok()) {
      EXPECT_EQ(r->enabled, c.enabled);
    } else {
      EXPECT_THAT(r.status().message(), HasSubstr(E + "ENABLE"));
      EXPECT_THAT(r.status().message(), HasSubstr("'" + *c.enable + "'"));
    }
  }
}

TEST(Config, OffParsesNothingElse) {
  Env env{{E + "ENABLE", "0"},
          {E + "CAPTURE_AT_CALL", "x"},
          {E + "CAPTURE_TOKEN", "-1"},
          {E + "MAX_CAPTURES", "0"},
          {E + "FORMAT", "zip"}};
  auto r = ResolveSnapshotConfig(env);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->enabled);
  env.erase(E + "ENABLE");
  EXPECT_TRUE(ResolveSnapshotConfig(env).ok());
}

struct ListCase {
  std::string value;
  bool ok;
  bool every;                  // CAPTURE_AT_CALL only
  std::vector<int64_t> values;
  std::string bad_token;       // on error: must appear quoted
};

TEST(Config, CaptureAtCall) {
  const ListCase cases[] = {
      {"0", true, false, {0}, ""},
      {"3,1,3", true, false, {1, 3}, ""},
      {" 1 , 2 ", true, false, {1, 2}, ""},
      {"+2", true, false, {2}, ""},
      {"-0", true, false, {0}, ""},
      {"-1", true, true, {}, ""},
      {" -1 ", true, true, {}, ""},
      {"-1,-1", true, true, {}, ""},
      {"-1,0", false, false, {}, "0"},
      {"2,-1", false, false, {}, "-1"},
      {"-2", false, false, {}, "-2"},
      {"1,-5", false, false, {}, "-5"},
      {"1,,2", false, false, {}, "''"},
      {"1,", false, false, {}, "''"},
      {"a", false, false, {}, "a"},
      {"1.5", false, false, {}, "1.5"},
      {"1;2", false, false, {}, "1;2"},
  };
  for (const ListCase& c : cases) {
    auto r = ResolveSnapshotConfig(On({{E + "CAPTURE_AT_CALL", c.value}}));
    ASSERT_EQ(r.ok(), c.ok) << c.value << " " << r.status();
    if (r.ok()) {
      EXPECT_TRUE(r->call_rule_configured);
      EXPECT_EQ(r->every_call, c.every) << c.value;
      EXPECT_EQ(r->call_indices, c.values) << c.value;
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(r.status().message(), HasSubstr(E + "CAPTURE_AT_CALL"));
      std::string tok = c.bad_token == "''" ? "token ''" : "'" + c.bad_token + "'";
      EXPECT_THAT(r.status().message(), HasSubstr(tok)) << c.value;
    }
  }
}

TEST(Config, BlankListsAreNoRule) {
  for (std::string blank : {"", " ", "\t\n"}) {
    auto r = ResolveSnapshotConfig(On({{E + "CAPTURE_AT_CALL", blank},
                                       {E + "CAPTURE_TOKEN", blank},
                                       {E + "CAPTURE_REQUEST", blank},
                                       {E + "RANKS", blank}}));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->call_rule_configured);
    EXPECT_TRUE(r->token_positions.empty());
    EXPECT_TRUE(r->request_ids.empty());
    EXPECT_FALSE(r->ranks.has_value());
    EXPECT_TRUE(r->warnings.empty());
    EXPECT_FALSE(r->AnyRuleConfigured());
  }
}

TEST(Config, CaptureToken) {
  const ListCase cases[] = {
      {"10", true, false, {10}, ""},
      {" 12, 10 ,12", true, false, {10, 12}, ""},
      {"0", true, false, {0}, ""},
      {"-0", true, false, {0}, ""},
      {"-1", false, false, {}, "-1"},
      {"5,-1", false, false, {}, "-1"},
      {"-3", false, false, {}, "-3"},
      {"5,,6", false, false, {}, "''"},
      {"x5", false, false, {}, "x5"},
  };
  for (const ListCase& c : cases) {
    auto r = ResolveSnapshotConfig(On({{E + "CAPTURE_TOKEN", c.value}}));
    ASSERT_EQ(r.ok(), c.ok) << c.value;
    if (r.ok()) {
      EXPECT_EQ(r->token_positions, c.values);
      EXPECT_FALSE(r->call_rule_configured);
    } else {
      EXPECT_THAT(r.status().message(), HasSubstr(E + "CAPTURE_TOKEN"));
      std::string tok = c.bad_token == "''" ? "token ''" : "'" + c.bad_token + "'";
      EXPECT_THAT(r.status().message(), HasSubstr(tok)) << c.value;
    }
  }
}

TEST(Config, CaptureRequest) {
  struct Case { std::string value; std::vector<std::string> ids; };
  const Case cases[] = {
      {"abc", {"abc"}},
      {" abc , def ", {"abc", "def"}},
      {"abc,,def,", {"abc", "def"}},
      {",", {}},
      {"a b", {"a b"}},
  };
  for (const Case& c : cases) {
    auto r = ResolveSnapshotConfig(On({{E + "CAPTURE_REQUEST", c.value}}));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->request_ids, c.ids) << c.value;
  }
}

TEST(Config, MaxCaptures) {
  struct Case { std::optional<std::string> v; bool ok; int64_t n; };
  const Case cases[] = {
      {std::nullopt, true, 4}, {"1", true, 1}, {" 10 ", true, 10},
      {"+2", true, 2}, {"0", false, 0}, {"-3", false, 0}, {"", false, 0},
      {" ", false, 0}, {"many", false, 0}, {"2.5", false, 0},
  };
  for (const Case& c : cases) {
    Env env = On();
    if (c.v) env[E + "MAX_CAPTURES"] = *c.v;
    auto r = ResolveSnapshotConfig(env);
    ASSERT_EQ(r.ok(), c.ok) << (c.v ? *c.v : "<unset>");
    if (r.ok()) {
      EXPECT_EQ(r->max_captures, c.n);
    } else {
      EXPECT_THAT(r.status().message(), HasSubstr(E + "MAX_CAPTURES"));
      EXPECT_THAT(r.status().message(), HasSubstr("'" + *c.v + "'"));
    }
  }
}

TEST(Config, RanksDegradeWithWarning) {
  struct Case {
    std::string v;
    std::optional<std::vector<int64_t>> ranks;
    std::string warn_token;  // empty: no warning
  };
  const Case cases[] = {
      {"0", std::vector<int64_t>{0}, ""},
      {" 3, 1 ,1", std::vector<int64_t>{1, 3}, ""},
      {"+2", std::vector<int64_t>{2}, ""},
      {"-1", std::nullopt, "-1"},
      {"0,-2", std::nullopt, "-2"},
      {"a", std::nullopt, "a"},
      {"0,,1", std::nullopt, "''"},
      {"1.5", std::nullopt, "1.5"},
  };
  for (const Case& c : cases) {
    auto r = ResolveSnapshotConfig(On({{E + "RANKS", c.v}}));
    ASSERT_TRUE(r.ok()) << c.v << " must never fail: " << r.status();
    EXPECT_EQ(r->ranks, c.ranks) << c.v;
    if (c.warn_token.empty()) {
      EXPECT_TRUE(r->warnings.empty()) << c.v;
    } else {
      ASSERT_EQ(r->warnings.size(), 1u) << c.v;
      EXPECT_THAT(r->warnings[0], HasSubstr(E + "RANKS"));
      std::string tok = c.warn_token == "''" ? "token ''" : "'" + c.warn_token + "'";
      EXPECT_THAT(r->warnings[0], HasSubstr(tok));
      EXPECT_TRUE(r->RankSelected(0));
      EXPECT_TRUE(r->RankSelected(17));
    }
  }
  auto r = ResolveSnapshotConfig(On({{E + "RANKS", "1,3"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->RankSelected(0));
  EXPECT_TRUE(r->RankSelected(1));
  EXPECT_TRUE(r->RankSelected(3));
}

TEST(Config, Format) {
  struct Case { std::optional<std::string> v; bool ok; BundleFormat f; };
  const Case cases[] = {
      {std::nullopt, true, BundleFormat::kPt}, {"pt", true, BundleFormat::kPt},
      {"npy", true, BundleFormat::kNpy}, {" NPY ", true, BundleFormat::kNpy},
      {"Pt", true, BundleFormat::kPt}, {"", false, {}}, {" ", false, {}},
      {"npz", false, {}}, {"safetensors", false, {}},
  };
  for (const Case& c : cases) {
    Env env = On();
    if (c.v) env[E + "FORMAT"] = *c.v;
    auto r = ResolveSnapshotConfig(env);
    ASSERT_EQ(r.ok(), c.ok) << (c.v ? *c.v : "<unset>");
    if (r.ok()) {
      EXPECT_EQ(r->format, c.f);
    } else {
      EXPECT_THAT(r.status().message(), HasSubstr(E + "FORMAT"));
      EXPECT_THAT(r.status().message(), HasSubstr("'" + *c.v + "'"));
    }
  }
}

// --------------------------------------------------------------- selection

SnapshotConfig Cfg(Env env) {
  auto r = ResolveSnapshotConfig(On(std::move(env)));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : SnapshotConfig{};
}

TEST(Selector, CallRule) {
  struct Case {
    Env env;
    std::vector<bool> fires;  // for call indices 0..3
  };
  const Case cases[] = {
      {{}, {true, false, false, false}},                       // default call 0
      {{{E + "CAPTURE_AT_CALL", "2"}}, {false, false, true, false}},
      {{{E + "CAPTURE_AT_CALL", "0,3"}}, {true, false, false, true}},
      {{{E + "CAPTURE_AT_CALL", "-1"}}, {true, true, true, true}},
      {{{E + "CAPTURE_TOKEN", "5"}}, {false, false, false, false}},
      {{{E + "CAPTURE_REQUEST", "r"}}, {false, false, false, false}},
      {{{E + "CAPTURE_REQUEST", " , "}}, {true, false, false, false}},
      {{{E + "CAPTURE_AT_CALL", "1"}, {E + "CAPTURE_TOKEN", "5"}},
       {false, true, false, false}},
  };
  for (const Case& c : cases) {
    CaptureSelector sel(Cfg(c.env));
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(sel.CallRuleFires(i), c.fires[i]) << "call " << i;
    }
  }
}

TEST(Selector, RequestRule) {
  CaptureSelector sel(Cfg({{E + "CAPTURE_REQUEST", "abc,x-1"}}));
  ForwardInfo decode{{"abc-9a8546d5", "abcd-1", "abc", "zz", "x-1-7", "ab"},
                     {10, 11, 12, 13, 14, 15}, false, 1, 7};
  ForwardVerdict v = sel.EvaluateForward(decode);
  EXPECT_TRUE(v.request_fired);
  EXPECT_FALSE(v.token_fired);
  EXPECT_THAT(v.matches,
              ElementsAre(Match{0, "abc-9a8546d5", 10, "request"},
                          Match{2, "abc", 12, "request"},
                          Match{4, "x-1-7", 14, "request"}));
  ForwardInfo prefill = decode;
  prefill.is_prompt = true;
  v = sel.EvaluateForward(prefill);
  EXPECT_THAT(v.matches, ElementsAre(Match{0, "abc-9a8546d5", -1, "request"},
                                     Match{2, "abc", -1, "request"},
                                     Match{4, "x-1-7", -1, "request"}));
  // A row without a position on decode records -1.
  ForwardInfo short_pos{{"zz", "abc-1"}, {5}, false, 1, 1};
  EXPECT_THAT(sel.EvaluateForward(short_pos).matches,
              ElementsAre(Match{1, "abc-1", -1, "request"}));
}

TEST(Selector, TokenRule) {
  CaptureSelector sel(Cfg({{E + "CAPTURE_TOKEN", "11,13"}}));
  struct Case {
    ForwardInfo f;
    std::vector<Match> matches;
  };
  const Case cases[] = {
      // decode: p + 1 targeted
      {{{"a", "b"}, {10, 20}, false, 1, 0}, {{0, "a", 11, "token"}}},
      // prefill never fires
      {{{"a", "b"}, {10, 20}, true, 1, 0}, {}},
      // speculative: offsets 1..3, first matching offset per row only
      {{{"a", "b"}, {10, 9}, false, 3, 0},
       {{0, "a", 11, "token"}, {1, "b", 11, "token"}}},
      {{{"a"}, {8}, false, 3, 0}, {{0, "a", 11, "token"}}},
      {{{"a"}, {7}, false, 3, 0}, {}},  // 8, 9, 10: none targeted
      // max_generated 1: only p + 1
      {{{"a"}, {9}, false, 1, 0}, {}},
      // padding rows beyond the request list are never matched
      {{{"a"}, {0, 10, 12}, false, 1, 0}, {}},
      // rows past the number of positions are ignored
      {{{"a", "b", "c"}, {5, 10}, false, 1, 0}, {{1, "b", 11, "token"}}},
      {{{"a", "b"}, {12, 10}, false, 1, 0},
       {{0, "a", 13, "token"}, {1, "b", 11, "token"}}},
  };
  for (const Case& c : cases) {
    ForwardVerdict v = sel.EvaluateForward(c.f);
    EXPECT_EQ(v.matches, c.matches);
    EXPECT_EQ(v.token_fired, !c.matches.empty());
    EXPECT_FALSE(v.request_fired);
  }
}

TEST(Selector, TokenRuleExtremes) {
  CaptureSelector sel(Cfg({{E + "CAPTURE_TOKEN", "0,9223372036854775807"}}));
  const int64_t kMax = INT64_MAX;
  struct Case { ForwardInfo f; std::vector<Match> matches; };
  const Case cases[] = {
      // A huge speculative width does not loop over every offset.
      {{{"a"}, {5}, false, kMax, 0}, {{0, "a", kMax, "token"}}},
      {{{"a"}, {kMax}, false, kMax, 0}, {}},
      {{{"a"}, {INT64_MIN}, false, kMax, 0}, {}},  // 0 is 2^63 away
      {{{"a"}, {INT64_MIN + 1}, false, kMax, 0}, {{0, "a", 0, "token"}}},
      {{{"a"}, {INT64_MIN}, false, 1, 0}, {}},
      {{{"a"}, {-1}, false, 1, 0}, {{0, "a", 0, "token"}}},
      {{{"a"}, {-1}, false, 0, 0}, {}},   // no generated tokens
      {{{"a"}, {-1}, false, -3, 0}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(sel.EvaluateForward(c.f).matches, c.matches)
        << "position " << c.f.positions[0] << " max_generated "
        << c.f.max_generated;
  }
}

TEST(Selector, RulesAreOrdAndSorted) {
  CaptureSelector sel(Cfg({{E + "CAPTURE_AT_CALL", "1"},
                           {E + "CAPTURE_TOKEN", "11"},
                           {E + "CAPTURE_REQUEST", "r"}}));
  ForwardInfo f{{"r-1", "q"}, {3, 10}, false, 1, 4};
  ForwardVerdict fv = sel.EvaluateForward(f);
  Verdict v = sel.Decide(fv, 1);
  EXPECT_TRUE(v.selected);
  EXPECT_THAT(v.selected_by, ElementsAre("call_index", "request", "token"));
  EXPECT_THAT(v.matches, ElementsAre(Match{0, "r-1", 3, "request"},
                                     Match{1, "q", 11, "token"}));
  v = sel.Decide(fv, 0);
  EXPECT_THAT(v.selected_by, ElementsAre("request", "token"));
  ForwardInfo none{{"q"}, {3}, false, 1, 4};
  v = sel.Decide(sel.EvaluateForward(none), 1);
  EXPECT_THAT(v.selected_by, ElementsAre("call_index"));
  EXPECT_TRUE(v.matches.empty());
  v = sel.Decide(sel.EvaluateForward(none), 2);
  EXPECT_FALSE(v.selected);
}

// ------------------------------------------------------------------ budget

TEST(Budget, ExhaustsOnceAndLogsOnce) {
  std::vector<std::string> lines;
  CaptureBudget b(2, [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_TRUE(b.TryConsume());
  EXPECT_TRUE(b.TryConsume());
  EXPECT_TRUE(lines.empty());
  EXPECT_FALSE(b.TryConsume());
  EXPECT_FALSE(b.TryConsume());
  EXPECT_TRUE(b.exhausted());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("exhausted"));
}

TEST(Budget, ThreadSafe) {
  std::atomic<int> logs{0};
  CaptureBudget b(1000, [&](std::string_view) { ++logs; });
  std::atomic<int> granted{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 500; ++i) granted += b.TryConsume();
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(granted.load(), 1000);
  EXPECT_EQ(logs.load(), 1);
}

TEST(Budget, GlobalIsSettableForTests) {
  CaptureBudget mine(1, [](std::string_view) {});
  CaptureBudget::SetGlobalForTesting(&mine);
  EXPECT_EQ(&CaptureBudget::Global(99), &mine);
  CaptureBudget::SetGlobalForTesting(nullptr);
  EXPECT_NE(&CaptureBudget::Global(99), &mine);
}

// ---------------------------------------------------------------- capturer

TEST(Capturer, CountsOnlyForwardsWithContext) {
  CaptureBudget budget(100, [](std::string_view) {});
  SnapshotCapturer cap(Cfg({{E + "CAPTURE_AT_CALL", "1"}}), "h", {5, 1, 0},
                       "/r", &budget);
  ForwardInfo f{{"a"}, {0}, true, 1, 0};
  EXPECT_FALSE(cap.OnExecute(nullptr).has_context);  // warmup
  EXPECT_FALSE(cap.OnExecute(nullptr).capture);
  CaptureDecision d0 = cap.OnExecute(&f);
  EXPECT_EQ(d0.call_index, 0);
  EXPECT_FALSE(d0.capture);
  CaptureDecision d1 = cap.OnExecute(&f);  // same forward, NEFF runs twice
  EXPECT_EQ(d1.call_index, 1);
  EXPECT_TRUE(d1.capture);
  EXPECT_EQ(d1.call_dir, "/r/h/rank5/call1");
  EXPECT_THAT(d1.verdict.selected_by, ElementsAre("call_index"));
  EXPECT_EQ(budget.used(), 1);
}

TEST(Capturer, RankFilterOnTpRankDirOnGlobalRank) {
  CaptureBudget budget(100, [](std::string_view) {});
  SnapshotConfig c = Cfg({{E + "RANKS", "1"}, {E + "CAPTURE_AT_CALL", "-1"}});
  SnapshotCapturer tp1(c, "h", {7, 1, 3}, "/r", &budget);
  SnapshotCapturer tp0(c, "h", {1, 0, 0}, "/r", &budget);
  ForwardInfo f{{"a"}, {0}, true, 1, 0};
  CaptureDecision a = tp1.OnExecute(&f);
  EXPECT_TRUE(a.capture);
  EXPECT_EQ(a.call_dir, "/r/h/rank7/call0");
  CaptureDecision b = tp0.OnExecute(&f);
  EXPECT_FALSE(b.rank_selected);
  EXPECT_FALSE(b.capture);
  EXPECT_EQ(budget.used(), 1);  // filtered ranks consume nothing
}

TEST(Capturer, BudgetConsumedOnlyWhenSelectedAndSharedAcrossNeffs) {
  std::vector<std::string> lines;
  CaptureBudget budget(2, [&](std::string_view l) { lines.emplace_back(l); });
  SnapshotConfig c = Cfg({{E + "CAPTURE_REQUEST", "r"}});
  SnapshotCapturer n1(c, "n1", {}, "/r", &budget);
  SnapshotCapturer n2(c, "n2", {}, "/r", &budget);
  ForwardInfo miss{{"q"}, {1}, false, 1, 0};
  ForwardInfo hit{{"r-1"}, {1}, false, 1, 1};
  EXPECT_FALSE(n1.OnExecute(&miss).capture);
  EXPECT_EQ(budget.used(), 0);
  EXPECT_TRUE(n1.OnExecute(&hit).capture);
  CaptureDecision d = n2.OnExecute(&hit);
  EXPECT_TRUE(d.capture);
  EXPECT_EQ(d.call_dir, "/r/n2/rank0/call0");
  CaptureDecision e = n1.OnExecute(&hit);
  EXPECT_FALSE(e.capture);
  EXPECT_TRUE(e.budget_refused);
  EXPECT_TRUE(e.verdict.selected);
  EXPECT_EQ(e.call_index, 2);
  EXPECT_FALSE(n2.OnExecute(&hit).capture);
  EXPECT_EQ(lines.size(), 1u);
}

TEST(Capturer, DisabledNeverCaptures) {
  CaptureBudget budget(100, [](std::string_view) {});
  SnapshotCapturer cap(SnapshotConfig{}, "h", {}, "/r", &budget);
  ForwardInfo f{{"a"}, {0}, true, 1, 0};
  EXPECT_FALSE(cap.OnExecute(&f).capture);
  EXPECT_EQ(budget.used(), 0);
}

TEST(Capturer, SnapshotRoot) {
  auto env = [](Env m) {
    return [m](std::string_view n) -> std::optional<std::string> {
      auto it = m.find(std::string(n));
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  EXPECT_EQ(DefaultSnapshotRoot(env({{"VLLM_CACHE_ROOT", "/c"}, {"HOME", "/h"}})),
            "/c/neuron/snapshots");
  EXPECT_EQ(DefaultSnapshotRoot(env({{"VLLM_CACHE_ROOT", "~/v/"}, {"HOME", "/h"}})),
            "/h/v/neuron/snapshots");
  EXPECT_EQ(DefaultSnapshotRoot(env({{"HOME", "/h"}})),
            "/h/.cache/vllm/neuron/snapshots");
  EXPECT_EQ(DefaultSnapshotRoot(env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})),
            "/x/vllm/neuron/snapshots");
  EXPECT_EQ(CallDirName("abc", 3, 12), "abc/rank3/call12");
}

}  // namespace
}  // namespace decomposed::capture
