// libFuzzer target: `decomposed stats` as a library call (OpenTensorSet +
// AppendTensorStats + both reports) on a file written from the input in
// any form the CLI reads.
//
// Input: byte 0 = the form (bits 0-1: snapshot, .npy, .pt, unpack
// directory; analysis_sides.h); byte 1 = a true dtype for void .npy
// descrs (0 none, else one of bf16, f8e4m3fn, f8e5m2, s4, u8 by value % 6);
// then the file's bytes.
//
// Beyond "no crash, no leak, no allocation of a declared size":
//   * every error is well-formed (fuzz_util.h);
//   * each tensor's counts fit its element count, the first NaN index is
//     within it, min <= max;
//   * where a tensor is a verbatim run of its file (TensorSet::Run), the
//     run's bytes are exactly what Stream() emits, and the statistics of
//     AppendTensorStats (which reads runs itself) equal a StatsAccumulator
//     fed by Stream(): the two read paths agree.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis_sides.h"
#include "decomposed/analysis/report.h"
#include "fuzz_util.h"
#include "nlohmann/json.hpp"

using namespace decomposed;

namespace {

void CheckSet(TensorSet& set, const std::string& path, const char* name) {
  std::vector<TensorStatsEntry> entries;
  absl::Status s = AppendTensorStats(set, path, name, &entries);
  fuzz::CheckErrorShape(s);
  if (!s.ok()) return;
  FUZZ_CHECK(entries.size() == set.size());
  const nlohmann::json j = nlohmann::json::parse(StatsReportJson(entries));
  FUZZ_CHECK(j["tensors"].size() == entries.size());
  FUZZ_CHECK(!StatsReportText(entries).empty());
  for (size_t i = 0; i < entries.size(); ++i) {
    const TensorStats& t = entries[i].stats;
    FUZZ_CHECK(t.elements == entries[i].info.element_count());
    FUZZ_CHECK(t.nan + t.pos_inf + t.neg_inf + t.zeros <= t.elements);
    FUZZ_CHECK(t.first_nan_index.has_value() == (t.nan > 0));
    if (t.first_nan_index) FUZZ_CHECK(*t.first_nan_index < t.elements);
    if (t.min && t.max) FUZZ_CHECK(*t.min <= *t.max);
    FUZZ_CHECK(!(t.std && *t.std < 0));

    // The two read paths: the run (when there is one) and Stream().
    std::string streamed;
    StatsAccumulator acc(entries[i].info.type);
    const size_t eb = Info(entries[i].info.type).element_bytes;
    absl::Status st = set.Stream(i, [&](std::string_view c) {
      streamed.append(c);
      return absl::OkStatus();
    });
    FUZZ_CHECK(st.ok());  // AppendTensorStats streamed or read it fine
    FUZZ_CHECK(streamed.size() == t.elements * eb);
    acc.Add(streamed.data(), t.elements);
    std::vector<TensorStatsEntry> again = {entries[i]};
    again[0].stats = acc.Finish();
    std::vector<TensorStatsEntry> first = {entries[i]};
    FUZZ_CHECK(StatsReportJson(again) == StatsReportJson(first));
    absl::StatusOr<std::optional<TensorRun>> run = set.Run(i);
    FUZZ_CHECK(run.ok());
    if (*run) {
      std::string bytes((*run)->bytes, '\0');
      FUZZ_CHECK(::pread((*run)->fd.get(), bytes.data(), bytes.size(),
                         static_cast<off_t>((*run)->offset)) ==
                 static_cast<ssize_t>(bytes.size()));
      FUZZ_CHECK(bytes == streamed);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string& dir = fuzz::ScratchDir("stats-fuzz");
  const std::string p = fuzz::WriteSide(dir, "x", data[0] & 3, in.substr(2));
  TensorSetOptions o;
  static const PrimitiveType kVoid[] = {PrimitiveType::kBF16, PrimitiveType::kF8E4M3FN,
                                        PrimitiveType::kF8E5M2, PrimitiveType::kS4,
                                        PrimitiveType::kU8, PrimitiveType::kF16};
  if (data[1] != 0) o.dtype = kVoid[data[1] % 6];
  absl::StatusOr<std::unique_ptr<TensorSet>> set = OpenTensorSet(p, o);
  fuzz::CheckErrorShape(set.status());
  if (!set.ok()) return 0;
  if ((*set)->HasInputsAndOutputs()) {
    TensorSetOptions in_o = o;
    in_o.inputs = true;
    absl::StatusOr<std::unique_ptr<TensorSet>> ins = OpenTensorSet(p, in_o);
    fuzz::CheckErrorShape(ins.status());
    if (ins.ok()) CheckSet(**ins, p, "inputs");
    CheckSet(**set, p, "outputs");
  } else {
    CheckSet(**set, p, "tensors");
  }
  return 0;
}
