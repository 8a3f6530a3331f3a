#include "decomposed/capture/config.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/status.h"

namespace decomposed::capture {

std::string_view BundleFormatName(BundleFormat f) {
  return NameOf(kBundleFormatNames, f);
}

bool SnapshotConfig::RankSelected(int64_t tp_rank) const {
  if (!ranks) return true;
  return std::find(ranks->begin(), ranks->end(), tp_rank) != ranks->end();
}

namespace internal {

namespace {
bool IsPySpace(char c) {
  // str.strip() with no argument removes Unicode whitespace; the ASCII
  // members are these (\x1c-\x1f are the "information separators").
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f' || (c >= '\x1c' && c <= '\x1f');
}
}  // namespace

std::string_view PyStrip(std::string_view s) {
  while (!s.empty() && IsPySpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsPySpace(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> PyInt(std::string_view s) {
  s = PyStrip(s);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() == '_' || s.back() == '_') return std::nullopt;
  // Accumulate as a negative number so INT64_MIN parses.
  int64_t v = 0;
  char prev = 0;
  for (char c : s) {
    if (c == '_') {
      if (prev == '_') return std::nullopt;
      prev = c;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    int d = c - '0';
    if (v < (std::numeric_limits<int64_t>::min() + d) / 10) return std::nullopt;
    v = v * 10 - d;
    prev = c;
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
    v = -v;
  }
  return v;
}

}  // namespace internal

namespace {

using internal::PyInt;
using internal::PyStrip;

std::vector<std::string_view> SplitComma(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
}

absl::Status BadToken(std::string_view var, std::string_view token,
                      std::string_view why, std::string_view value) {
  return absl::InvalidArgumentError(absl::StrCat(
      Sv(var), ": token '", Sv(token), "' ", Sv(why), " (value '", Sv(value),
      "')"));
}

// CAPTURE_AT_CALL (allow_all) and CAPTURE_TOKEN: returns the sorted unique
// indices; `*every` set when the list is all -1.
absl::Status ParseIndexList(std::string_view var, std::string_view value,
                            bool allow_all, std::vector<int64_t>* out,
                            bool* every) {
  bool saw_all = false;
  bool saw_index = false;
  std::vector<int64_t> v;
  for (std::string_view raw : SplitComma(value)) {
    std::string_view tok = PyStrip(raw);
    std::optional<int64_t> n = PyInt(tok);
    if (!n) return BadToken(var, tok, "is not an integer", value);
    if (*n == -1 && allow_all) {
      saw_all = true;
    } else if (*n < 0) {
      return BadToken(var, tok,
                      allow_all ? "is negative (only -1, alone, means every "
                                  "call)"
                                : "is negative (token positions are >= 0; -1 "
                                  "is not allowed)",
                      value);
    } else {
      saw_index = true;
      v.push_back(*n);
    }
    if (saw_all && saw_index) {
      return BadToken(var, tok,
                      "mixes -1 (every call) with explicit call indices",
                      value);
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  *out = std::move(v);
  if (every) *every = saw_all;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SnapshotConfig> ResolveSnapshotConfig(const EnvLookup& lookup) {
  SnapshotConfig c;
  std::optional<std::string> enable = lookup(kEnvEnable);
  if (!enable) return c;
  std::optional<int64_t> on = PyInt(*enable);
  if (!on) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(kEnvEnable), ": value '", *enable, "' is not an integer"));
  }
  if (*on == 0) return c;
  c.enabled = true;

  if (std::optional<std::string> v = lookup(kEnvCaptureAtCall);
      v && !PyStrip(*v).empty()) {
    c.call_rule_configured = true;
    absl::Status s = ParseIndexList(kEnvCaptureAtCall, *v, /*allow_all=*/true,
                                    &c.call_indices, &c.every_call);
    if (!s.ok()) return s;
  }
  if (std::optional<std::string> v = lookup(kEnvCaptureToken);
      v && !PyStrip(*v).empty()) {
    absl::Status s = ParseIndexList(kEnvCaptureToken, *v, /*allow_all=*/false,
                                    &c.token_positions, nullptr);
    if (!s.ok()) return s;
  }
  if (std::optional<std::string> v = lookup(kEnvCaptureRequest)) {
    for (std::string_view raw : SplitComma(*v)) {
      std::string_view tok = PyStrip(raw);
      if (!tok.empty()) c.request_ids.emplace_back(tok);
    }
  }
  if (std::optional<std::string> v = lookup(kEnvMaxCaptures)) {
    std::optional<int64_t> n = PyInt(*v);
    if (!n) {
      return absl::InvalidArgumentError(absl::StrCat(
          Sv(kEnvMaxCaptures), ": value '", *v, "' is not an integer"));
    }
    if (*n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          Sv(kEnvMaxCaptures), ": value '", *v, "' must be > 0"));
    }
    c.max_captures = *n;
  }
  if (std::optional<std::string> v = lookup(kEnvRanks);
      v && !PyStrip(*v).empty()) {
    std::vector<int64_t> ranks;
    for (std::string_view raw : SplitComma(*v)) {
      std::string_view tok = PyStrip(raw);
      std::optional<int64_t> n = PyInt(tok);
      if (!n || *n < 0) {
        c.warnings.push_back(absl::StrCat(
            Sv(kEnvRanks), ": token '", Sv(tok),
            n ? "' is negative" : "' is not an integer", " (value '", *v,
            "'); capturing on all ranks"));
        ranks.clear();
        break;
      }
      ranks.push_back(*n);
    }
    if (c.warnings.empty()) {
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      c.ranks = std::move(ranks);
    }
  }
  if (std::optional<std::string> v = lookup(kEnvFormat)) {
    std::string f = absl::AsciiStrToLower(Sv(PyStrip(*v)));
    if (std::optional<BundleFormat> format = ValueOf(kBundleFormatNames, f)) {
      c.format = *format;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(kEnvFormat), ": value '", *v,
                       "' is not a supported format (expected pt or npy)"));
    }
  }
  return c;
}

absl::StatusOr<SnapshotConfig> ResolveSnapshotConfig(
    const std::map<std::string, std::string>& env) {
  return ResolveSnapshotConfig(
      [&env](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(std::string(name));
        if (it == env.end()) return std::nullopt;
        return it->second;
      });
}

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<SnapshotConfig> ResolveSnapshotConfigFromEnvironment() {
  return ResolveSnapshotConfig(ProcessEnvironment());
}

nlohmann::json SnapshotConfigJson(const SnapshotConfig& c) {
  nlohmann::json j;
  j["enabled"] = c.enabled;
  j["call_rule_configured"] = c.call_rule_configured;
  j["every_call"] = c.every_call;
  j["call_indices"] = c.call_indices;
  j["token_positions"] = c.token_positions;
  j["request_ids"] = c.request_ids;
  j["max_captures"] = c.max_captures;
  j["ranks"] = c.ranks ? nlohmann::json(*c.ranks) : nlohmann::json(nullptr);
  j["format"] = std::string(BundleFormatName(c.format));
  return j;
}

}  // namespace decomposed::capture
