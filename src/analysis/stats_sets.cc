// The stats engine (report.h, AppendTensorStats, AppendPathStats): each
// tensor fed to a StatsAccumulator, from a verbatim run read ahead or from
// its stream.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "decomposed/analysis/report.h"
#include "decomposed/status.h"
#include "src/analysis/run_prefetcher.h"

namespace decomposed {

using internal::CheckRun;
using internal::kRunWindowBytes;
using internal::RunPrefetcher;

absl::Status AppendTensorStats(TensorSet& set, const std::string& source,
                               const std::string& set_name,
                               std::vector<TensorStatsEntry>* out,
                               const BytesFn& on_bytes) {
  for (size_t i = 0; i < set.size(); ++i) {
    absl::StatusOr<TensorInfo> t = set.Describe(i);
    if (!t.ok()) return t.status();
    StatsAccumulator acc(t->type);
    const size_t eb = Info(t->type).element_bytes;
    absl::StatusOr<std::optional<TensorRun>> run = set.Run(i);
    if (!run.ok()) return run.status();
    if (*run) {
      if (absl::Status s = CheckRun(**run, t->element_count(), eb, t->label); !s.ok()) {
        return s;
      }
      RunPrefetcher pf({{&**run, eb}}, t->element_count(), kRunWindowBytes / eb);
      std::vector<const char*> v;
      for (;;) {
        absl::StatusOr<uint64_t> k = pf.Next(&v);
        if (!k.ok()) return WithFile(k.status(), t->label);
        if (*k == 0) break;
        acc.Add(v[0], *k);
        if (on_bytes) on_bytes(*k * eb);
      }
      out->push_back({source, set_name, i, *std::move(t), acc.Finish()});
      continue;
    }
    std::string carry;
    absl::Status s = set.Stream(i, [&](std::string_view chunk) {
      if (!carry.empty()) {
        size_t k = std::min(eb - carry.size(), chunk.size());
        carry.append(chunk.data(), k);
        chunk.remove_prefix(k);
        if (carry.size() < eb) return absl::OkStatus();
        acc.Add(carry.data(), 1);
        carry.clear();
      }
      uint64_t whole = chunk.size() / eb;
      acc.Add(chunk.data(), whole);
      carry.assign(chunk.data() + whole * eb, chunk.size() - whole * eb);
      if (on_bytes) on_bytes(chunk.size());
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    out->push_back({source, set_name, i, *std::move(t), acc.Finish()});
  }
  return absl::OkStatus();
}

absl::Status AppendPathStats(const std::string& path, const TensorSetOptions& options,
                             std::vector<TensorStatsEntry>* out,
                             const BytesFn& on_bytes, StatsLists lists) {
  TensorSetOptions base = options;
  base.inputs = false;
  absl::StatusOr<std::unique_ptr<TensorSet>> outputs = OpenTensorSet(path, base);
  if (!outputs.ok()) return outputs.status();
  if (!(*outputs)->HasInputsAndOutputs()) {
    return AppendTensorStats(**outputs, path, "tensors", out, on_bytes);
  }
  if (lists == StatsLists::kOutputs) {
    return AppendTensorStats(**outputs, path, "outputs", out, on_bytes);
  }
  // The inputs from the same open (a snapshot is opened once).
  absl::StatusOr<std::unique_ptr<TensorSet>> inputs = (*outputs)->OtherList();
  if (!inputs.ok()) return inputs.status();
  if (absl::Status s = AppendTensorStats(**inputs, path, "inputs", out, on_bytes);
      !s.ok() || lists == StatsLists::kInputs) {
    return s;
  }
  return AppendTensorStats(**outputs, path, "outputs", out, on_bytes);
}

bool AnyNonFinite(const std::vector<TensorStatsEntry>& entries) {
  for (const TensorStatsEntry& e : entries) {
    if (e.stats.nan + e.stats.pos_inf + e.stats.neg_inf > 0) return true;
  }
  return false;
}

}  // namespace decomposed
