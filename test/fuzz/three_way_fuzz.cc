// libFuzzer target: the three-way comparison (`decomposed compare
// --baseline`) as a library call: OpenTensorSet x 3 + ThreeWayCompare +
// both reports and the SVG, on three sides written from the input in any
// form the CLI reads (analysis_sides.h).
//
// Input: byte 0 = the forms (bits 0-1 expected, 2-3 actual, 4-5 baseline:
// snapshot, .npy, .pt, unpack directory); byte 1 = options (bit 0
// --equal-nan, bit 1 --inputs, bit 2 "actual is expected", bit 3 a one-byte
// error memory budget (the errors go to the temp file), bits 4-7 the bins
// - 1); bytes 2-3 and 4-5 = the expected and actual sides' lengths (little
// endian); then the expected, actual and baseline sides' bytes.
//
// Beyond "no crash, no leak, no allocation of a declared size":
//   * every error is well-formed (fuzz_util.h);
//   * the JSON report parses and agrees with the report;
//   * each level's histogram has `bins` bins summing to its counted
//     elements for both sets, its ratios are non-negative and its
//     quantiles ascend within the errors' range;
//   * ACTUAL equal to EXPECTED passes every paired tensor (the two error
//     sets are the same).
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>

#include "analysis_sides.h"
#include "decomposed/analysis/plots.h"
#include "decomposed/analysis/three_way.h"
#include "fuzz_util.h"
#include "nlohmann/json.hpp"

using namespace decomposed;

namespace {

void CheckLevel(const ThreeWayMetrics& m, size_t bins) {
  for (const std::optional<double>& r : {m.sigma_ratio, m.linf_ratio, m.l2_ratio}) {
    FUZZ_CHECK(!r || *r >= 0);
  }
  FUZZ_CHECK(!m.bc || (*m.bc >= 0 && *m.bc <= 1));
  FUZZ_CHECK(m.counted <= m.elements);
  if (m.counted == 0) return;
  FUZZ_CHECK(m.edges.size() == bins + 1);
  FUZZ_CHECK(m.target_counts.size() == bins && m.reference_counts.size() == bins);
  FUZZ_CHECK(std::accumulate(m.target_counts.begin(), m.target_counts.end(), uint64_t{0}) ==
             m.counted);
  FUZZ_CHECK(std::accumulate(m.reference_counts.begin(), m.reference_counts.end(),
                             uint64_t{0}) == m.counted);
  for (const std::vector<double>* q : {&m.target_quantiles, &m.reference_quantiles}) {
    FUZZ_CHECK(q->size() == m.levels.size());
    for (size_t k = 0; k < q->size(); ++k) {
      FUZZ_CHECK((*q)[k] >= m.edges.front() && (*q)[k] <= m.edges.back());
      if (k > 0) FUZZ_CHECK((*q)[k] >= (*q)[k - 1]);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const int forms = data[0];
  const int opts = data[1];
  const size_t elen = std::min<size_t>(data[2] | (size_t{data[3]} << 8), size - 6);
  const size_t alen = std::min<size_t>(data[4] | (size_t{data[5]} << 8), size - 6 - elen);
  const std::string_view ebytes = in.substr(6, elen);
  const bool same = opts & 0x04;
  const std::string_view abytes = same ? ebytes : in.substr(6 + elen, alen);
  const std::string_view bbytes = in.substr(6 + elen + (same ? 0 : alen));
  const int eform = forms & 3;
  const int aform = same ? eform : (forms >> 2) & 3;
  const int bform = (forms >> 4) & 3;

  const std::string& dir = fuzz::ScratchDir("three-way-fuzz");
  const std::string ep = fuzz::WriteSide(dir, "e", eform, ebytes);
  const std::string ap = fuzz::WriteSide(dir, "a", aform, abytes);
  const std::string bp = fuzz::WriteSide(dir, "b", bform, bbytes);

  TensorSetOptions so;
  so.inputs = opts & 0x02;
  ThreeWayOptions o;
  o.equal_nan = opts & 0x01;
  if (opts & 0x08) o.error_memory_bytes = 1;
  o.bins = static_cast<size_t>(opts >> 4) + 1;

  absl::StatusOr<std::unique_ptr<TensorSet>> e = OpenTensorSet(ep, so);
  fuzz::CheckErrorShape(e.status());
  if (!e.ok()) return 0;
  absl::StatusOr<std::unique_ptr<TensorSet>> a = OpenTensorSet(ap, so);
  fuzz::CheckErrorShape(a.status());
  if (!a.ok()) return 0;
  absl::StatusOr<std::unique_ptr<TensorSet>> b = OpenTensorSet(bp, so);
  fuzz::CheckErrorShape(b.status());
  if (!b.ok()) return 0;
  absl::StatusOr<ThreeWayReport> r = ThreeWayCompare({{e->get(), a->get(), b->get()}}, o);
  fuzz::CheckErrorShape(r.status());
  if (!r.ok()) return 0;

  const nlohmann::json j = nlohmann::json::parse(ThreeWayReportJson(*r));
  FUZZ_CHECK(j["pass"] == r->pass);
  FUZZ_CHECK(j["tensors"].size() == r->tensors.size());
  FUZZ_CHECK(!ThreeWayReportText(*r).empty());
  FUZZ_CHECK(!ThreeWaySvg(*r).empty());
  FUZZ_CHECK(r->tensors.size() ==
             std::max({(*e)->size(), (*a)->size(), (*b)->size()}));
  CheckLevel(r->all, o.bins);
  for (const ThreeWayTensor& t : r->tensors) {
    CheckLevel(t.metrics, o.bins);
    if (same && t.verdict != TensorVerdict::kMissing &&
        t.verdict != TensorVerdict::kShapeMismatch) {
      FUZZ_CHECK(t.verdict == TensorVerdict::kPass);
    }
  }
  return 0;
}
