// Input-snapshot configuration: the seven VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_*
// environment variables resolved once, with vLLM-Neuron's parsing rules
// (docs/format.md §16.1).
//
//   ENABLE           integer (whitespace allowed); unset or 0: off, other
//                    integer: on, anything else: error. While off nothing
//                    else is parsed or validated.
//   CAPTURE_AT_CALL  unset/blank: no call rule. Comma-separated integers,
//                    each trimmed; -1 = every call (-1,-1 too); other
//                    negatives, non-integers, empty tokens ("1,,2") and -1
//                    mixed with indices are errors.
//   CAPTURE_TOKEN    as CAPTURE_AT_CALL, but -1 (any negative) is an error.
//   CAPTURE_REQUEST  comma-separated strings, trimmed, empties dropped.
//   MAX_CAPTURES     unset: 4. Trimmed integer; empty, non-integer or <= 0
//                    is an error.
//   RANKS            unset/blank: all tp-ranks. Comma-separated non-negative
//                    integers; any malformed or negative token degrades to
//                    all ranks with a warning (never an error).
//   FORMAT           unset: pt. Trimmed, lower-cased, must be pt or npy (the
//                    empty string is an error).
//
// Integers follow Python's int(): surrounding whitespace, an optional sign
// ("+3", "-0" == 0), ASCII digits, single '_' between digits ("1_0" == 10).
// Trimming is Python's str.strip() over ASCII whitespace.
//
// Errors are kInvalidArgument and name the variable, the offending token and
// the whole value, e.g.
//   VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_CAPTURE_AT_CALL: token 'x' is not an
//   integer (value '1,x')
//
// Example:
//   absl::StatusOr<SnapshotConfig> c = ResolveSnapshotConfigFromEnvironment();
//   if (!c.ok()) { /* fail start-up */ }
//   for (auto& w : c->warnings) std::cerr << "warning: " << w << "\n";
#ifndef DECOMPOSED_CAPTURE_CONFIG_H_
#define DECOMPOSED_CAPTURE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/names.h"
#include "nlohmann/json.hpp"

namespace decomposed::capture {

inline constexpr std::string_view kEnvPrefix =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_";
inline constexpr std::string_view kEnvEnable =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_ENABLE";
inline constexpr std::string_view kEnvCaptureAtCall =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_CAPTURE_AT_CALL";
inline constexpr std::string_view kEnvCaptureToken =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_CAPTURE_TOKEN";
inline constexpr std::string_view kEnvCaptureRequest =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_CAPTURE_REQUEST";
inline constexpr std::string_view kEnvMaxCaptures =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_MAX_CAPTURES";
inline constexpr std::string_view kEnvRanks =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_RANKS";
inline constexpr std::string_view kEnvFormat =
    "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_FORMAT";

// Default process-global budget when MAX_CAPTURES is unset.
inline constexpr int64_t kDefaultMaxCaptures = 4;

enum class BundleFormat { kPt, kNpy };
// "pt", "npy": the tensor files' extension and meta.json's `format`
// value, both directions (names.h).
inline constexpr EnumName<BundleFormat> kBundleFormatNames[] = {
    {"pt", BundleFormat::kPt},
    {"npy", BundleFormat::kNpy},
};
std::string_view BundleFormatName(BundleFormat f);

// The resolved settings. Default-constructed: capture off.
struct SnapshotConfig {
  bool enabled = false;
  // CAPTURE_AT_CALL was set to something non-blank.
  bool call_rule_configured = false;
  // CAPTURE_AT_CALL was -1: every call fires.
  bool every_call = false;
  std::vector<int64_t> call_indices;     // sorted, unique
  std::vector<int64_t> token_positions;  // sorted, unique
  std::vector<std::string> request_ids;  // in the order given
  int64_t max_captures = kDefaultMaxCaptures;
  std::optional<std::vector<int64_t>> ranks;  // nullopt: every tp-rank
  BundleFormat format = BundleFormat::kPt;
  // Human-readable warnings (malformed RANKS). Empty when none.
  std::vector<std::string> warnings;

  // True when a forward on this tp-rank may be captured at all.
  bool RankSelected(int64_t tp_rank) const;
  // True when any rule (call, token or request) was configured.
  bool AnyRuleConfigured() const {
    return call_rule_configured || !token_positions.empty() ||
           !request_ids.empty();
  }
};

// Looks a variable up: nullopt when unset.
using EnvLookup =
    std::function<std::optional<std::string>(std::string_view name)>;

// Resolves the configuration through `lookup`. Errors: kInvalidArgument,
// naming the variable and the bad token.
absl::StatusOr<SnapshotConfig> ResolveSnapshotConfig(const EnvLookup& lookup);
// From a map (tests, bindings): keys absent from `env` are unset.
absl::StatusOr<SnapshotConfig> ResolveSnapshotConfig(
    const std::map<std::string, std::string>& env);
// From the process environment (getenv).
absl::StatusOr<SnapshotConfig> ResolveSnapshotConfigFromEnvironment();

// An EnvLookup over getenv().
EnvLookup ProcessEnvironment();

// {"enabled", "call_rule_configured", "every_call", "call_indices",
//  "token_positions", "request_ids", "max_captures", "ranks" (null = all),
//  "format"}.
nlohmann::json SnapshotConfigJson(const SnapshotConfig& c);

namespace internal {
// Python str.strip() over ASCII whitespace.
std::string_view PyStrip(std::string_view s);
// Python int(s) for base 10; nullopt when int() would raise or the value does
// not fit int64.
std::optional<int64_t> PyInt(std::string_view s);
}  // namespace internal

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_CONFIG_H_
