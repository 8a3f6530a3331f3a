#include "decomposed/capture/selector.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/status.h"

namespace decomposed::capture {

namespace {

absl::Status FieldError(std::string_view field, std::string_view expected,
                        const nlohmann::json& found) {
  std::string text =
      JsonText(found, {.indent = -1, .ensure_ascii = true, .final_newline = false});
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return absl::InvalidArgumentError(
      absl::StrCat(field.empty() ? "" : absl::StrCat("\"", Sv(field), "\": "),
                   "expected ", Sv(expected), ", found ", found.type_name(), " ",
                   text));
}

// An integer that fits int64_t (not 1.5, not true, not 2^63).
bool ToInt64(const nlohmann::json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > uint64_t{INT64_MAX}) return false;
  } else if (!v.is_number_integer()) {
    return false;
  }
  *out = v.get<int64_t>();
  return true;
}

}  // namespace

absl::StatusOr<ForwardInfo> ForwardInfoFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return FieldError("", "a forward object", j);
  // A field that is there and not null.
  auto field = [&](const char* key) -> const nlohmann::json* {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  ForwardInfo f;
  const nlohmann::json* ids = field("req_ids");
  if (!ids) return absl::InvalidArgumentError("no \"req_ids\" list");
  if (!ids->is_array()) return FieldError("req_ids", "a list of strings", *ids);
  for (const nlohmann::json& v : *ids) {
    if (!v.is_string()) return FieldError("req_ids", "a list of strings", v);
    f.req_ids.push_back(v.get<std::string>());
  }
  if (const nlohmann::json* p = field("positions")) {
    if (!p->is_array()) return FieldError("positions", "a list of integers", *p);
    for (const nlohmann::json& v : *p) {
      int64_t pos;
      if (!ToInt64(v, &pos)) return FieldError("positions", "a list of integers", v);
      f.positions.push_back(pos);
    }
  }
  if (const nlohmann::json* p = field("is_prompt")) {
    if (!p->is_boolean()) return FieldError("is_prompt", "true or false", *p);
    f.is_prompt = p->get<bool>();
  }
  if (const nlohmann::json* p = field("max_generated")) {
    if (!ToInt64(*p, &f.max_generated)) {
      return FieldError("max_generated", "an integer", *p);
    }
  }
  if (const nlohmann::json* p = field("global_step")) {
    int64_t step;
    if (!ToInt64(*p, &step)) return FieldError("global_step", "an integer or null", *p);
    f.global_step = step;
  }
  return f;
}

namespace {
bool RequestMatches(std::string_view id, std::string_view target) {
  if (id == target) return true;
  return id.size() > target.size() && id.substr(0, target.size()) == target &&
         id[target.size()] == '-';
}
}  // namespace

ForwardVerdict CaptureSelector::EvaluateForward(
    const ForwardInfo& f) const {
  ForwardVerdict v;
  if (!config_.request_ids.empty()) {
    for (size_t b = 0; b < f.req_ids.size(); ++b) {
      for (const std::string& t : config_.request_ids) {
        if (RequestMatches(f.req_ids[b], t)) {
          int64_t pos = (!f.is_prompt && b < f.positions.size())
                            ? f.positions[b]
                            : -1;
          v.matches.push_back(
              {static_cast<int64_t>(b), f.req_ids[b], pos, kReasonRequest});
          v.request_fired = true;
          break;
        }
      }
    }
  }
  if (!config_.token_positions.empty() && !f.is_prompt) {
    const auto& targets = config_.token_positions;  // sorted
    size_t rows = std::min(f.req_ids.size(), f.positions.size());
    for (size_t b = 0; b < rows; ++b) {
      // The first offset in 1..max_generated with p + offset targeted is
      // the smallest target above p, if it is at most max_generated away.
      // (O(log targets) whatever max_generated is; no overflow at the
      // int64 extremes.)
      const int64_t p = f.positions[b];
      if (f.max_generated < 1 || p == INT64_MAX) continue;
      auto it = std::upper_bound(targets.begin(), targets.end(), p);
      if (it == targets.end()) continue;
      const uint64_t offset =
          static_cast<uint64_t>(*it) - static_cast<uint64_t>(p);
      if (offset > static_cast<uint64_t>(f.max_generated)) continue;
      v.matches.push_back(
          {static_cast<int64_t>(b), f.req_ids[b], *it, kReasonToken});
      v.token_fired = true;
    }
  }
  return v;
}

bool CaptureSelector::CallRuleFires(int64_t call_index) const {
  if (!config_.AnyRuleConfigured()) return call_index == 0;
  if (!config_.call_rule_configured) return false;
  if (config_.every_call) return true;
  return std::binary_search(config_.call_indices.begin(),
                            config_.call_indices.end(), call_index);
}

Verdict CaptureSelector::Decide(const ForwardVerdict& f,
                                int64_t call_index) const {
  Verdict v;
  if (CallRuleFires(call_index)) v.selected_by.push_back(kReasonCallIndex);
  if (f.request_fired) v.selected_by.push_back(kReasonRequest);
  if (f.token_fired) v.selected_by.push_back(kReasonToken);
  std::sort(v.selected_by.begin(), v.selected_by.end());
  v.selected = !v.selected_by.empty();
  if (v.selected) v.matches = f.matches;
  return v;
}

nlohmann::json MatchJson(const Match& m) {
  return nlohmann::json{{"batch_index", m.batch_index},
                        {"request_id", m.request_id},
                        {"position", m.position},
                        {"reason", m.reason}};
}

}  // namespace decomposed::capture
