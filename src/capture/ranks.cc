// The ranks of one step from file names (capture/ranks.h).
#include "decomposed/capture/ranks.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace decomposed::capture {
namespace {

// The digits at s[at..], as a number (at most 18 of them); the end in *end.
std::optional<int64_t> Digits(std::string_view s, size_t at, size_t* end) {
  size_t i = at;
  int64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - at < 18) {
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == at) return std::nullopt;
  *end = i;
  return v;
}

std::string_view Basename(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

std::string_view Dirname(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : p.substr(0, slash);
}

// libneuronxla: ...-process<P>-executable<E>-device<D>-execution<N>.<rest>
std::optional<RankName> DeviceName(std::string_view path) {
  const std::string_view base = Basename(path);
  constexpr std::string_view kDevice = "-device";
  for (size_t at = base.find(kDevice); at != std::string_view::npos;
       at = base.find(kDevice, at + 1)) {
    size_t end = 0;
    std::optional<int64_t> d = Digits(base, at + kDevice.size(), &end);
    if (!d || base.substr(end).rfind("-execution", 0) != 0) continue;
    if (base.substr(0, at).find("-executable") == std::string_view::npos) continue;
    RankName r;
    r.naming = RankNaming::kDevice;
    r.id = d;
    r.shared = absl::StrCat(std::string(Dirname(path)), "/", std::string(base.substr(0, at)),
                            "-device*", std::string(base.substr(end)));
    return r;
  }
  return std::nullopt;
}

// vLLM-Neuron: <root>/<hash>/rank<G>/call<N>
std::optional<RankName> BundleName(std::string_view path) {
  const std::string_view call = Basename(path);
  const std::string_view parent = Dirname(path);
  const std::string_view rank = Basename(parent);
  size_t end = 0;
  if (call.rfind("call", 0) != 0 || !Digits(call, 4, &end) || end != call.size()) return std::nullopt;
  if (rank.rfind("rank", 0) != 0) return std::nullopt;
  std::optional<int64_t> g = Digits(rank, 4, &end);
  if (!g || end != rank.size()) return std::nullopt;
  RankName r;
  r.naming = RankNaming::kBundleRank;
  r.id = g;
  r.shared = absl::StrCat(std::string(Dirname(parent)), "/rank*/", std::string(call));
  return r;
}

}  // namespace

RankName ParseRankName(std::string_view path) {
  if (std::optional<RankName> d = DeviceName(path)) return *d;
  if (std::optional<RankName> b = BundleName(path)) return *b;
  return {};
}

absl::StatusOr<std::vector<RankFile>> OrderRankFiles(std::span<const std::string> paths) {
  if (paths.empty()) return absl::InvalidArgumentError("expected the files of at least one rank, found none");
  std::vector<RankName> names;
  for (size_t i = 0; i < paths.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (paths[k] == paths[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("expected one file per rank; found ", paths[i], " twice"));
      }
    }
    names.push_back(ParseRankName(paths[i]));
  }
  std::vector<RankFile> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (names[i].naming != names[0].naming) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected the files of one step, named alike; found ", paths[0], " and ", paths[i]));
    }
    if (names[i].naming != RankNaming::kNone && names[i].shared != names[0].shared) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected the files of one step, differing only in their ",
          names[0].naming == RankNaming::kDevice ? "device" : "rank", "; found ", paths[0],
          " and ", paths[i]));
    }
    out.push_back({0, names[i].id.value_or(static_cast<int64_t>(i)), paths[i]});
  }
  std::stable_sort(out.begin(), out.end(), [](const RankFile& a, const RankFile& b) { return a.id < b.id; });
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].rank = static_cast<int64_t>(i);
    if (i > 0 && out[i].id == out[i - 1].id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected one file per rank; found ", out[i - 1].path, " and ", out[i].path, " for ",
          names[0].naming == RankNaming::kDevice ? "device " : "rank ", out[i].id));
    }
  }
  return out;
}

}  // namespace decomposed::capture
