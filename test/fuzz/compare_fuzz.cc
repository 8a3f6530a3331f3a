// libFuzzer target: `decomposed compare` as a library call
// (OpenTensorSet x 2 + CompareTensorSets + both reports) on two sides
// written from the input in any form the CLI reads.
//
// Input: byte 0 = the forms (bits 0-1 expected, 2-3 actual: snapshot,
// .npy, .pt, unpack directory; analysis_sides.h); byte 1 = options (bits
// 0-1 mode torch/numpy/xla/torch, bit 2 --equal-nan, bit 3 --inputs, bit 4
// --allow-dtype-mismatch, bit 5 "actual is expected", bits 6-7 --show);
// bytes 2-3 = the expected side's length (little endian); then the
// expected side's bytes and the actual side's.
//
// Beyond "no crash, no leak, no allocation of a declared size":
//   * every error is well-formed (fuzz_util.h: a message, not kInternal,
//     which would mean the two sides streamed different byte counts for
//     tensors described alike);
//   * the JSON report parses and agrees with the report (pass, count);
//   * a side compared with itself (with --equal-nan) passes, tensor by
//     tensor, with no mismatch and no difference.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis_sides.h"
#include "decomposed/analysis/report.h"
#include "fuzz_util.h"
#include "nlohmann/json.hpp"

using namespace decomposed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const int forms = data[0];
  const int opts = data[1];
  const size_t elen = std::min<size_t>(data[2] | (size_t{data[3]} << 8), size - 4);
  const std::string_view ebytes = in.substr(4, elen);
  const bool same = opts & 0x20;
  const std::string_view abytes = same ? ebytes : in.substr(4 + elen);
  const int eform = forms & 3;
  const int aform = same ? eform : (forms >> 2) & 3;

  const std::string& dir = fuzz::ScratchDir("compare-fuzz");
  const std::string ep = fuzz::WriteSide(dir, "e", eform, ebytes);
  const std::string ap = fuzz::WriteSide(dir, "a", aform, abytes);

  TensorSetOptions so;
  so.inputs = opts & 0x08;
  CompareOptions co;
  co.mode = (opts & 3) == 1 ? CompareMode::kNumpy
            : (opts & 3) == 2 ? CompareMode::kXla
                              : CompareMode::kTorch;
  co.equal_nan = opts & 0x04;
  co.allow_dtype_mismatch = opts & 0x10;
  co.show = static_cast<size_t>(opts >> 6);

  absl::StatusOr<std::unique_ptr<TensorSet>> e = OpenTensorSet(ep, so);
  fuzz::CheckErrorShape(e.status());
  if (!e.ok()) return 0;
  absl::StatusOr<std::unique_ptr<TensorSet>> a = OpenTensorSet(ap, so);
  fuzz::CheckErrorShape(a.status());
  if (!a.ok()) return 0;
  absl::StatusOr<CompareReport> r = CompareTensorSets(**e, **a, co);
  fuzz::CheckErrorShape(r.status());
  if (!r.ok()) return 0;

  const nlohmann::json j = nlohmann::json::parse(CompareReportJson(*r));
  FUZZ_CHECK(j["pass"] == r->pass);
  FUZZ_CHECK(j["tensors"].size() == r->tensors.size());
  FUZZ_CHECK(!CompareReportText(*r).empty());
  FUZZ_CHECK(r->tensors.size() == std::max((*e)->size(), (*a)->size()));
  for (const TensorComparison& t : r->tensors) {
    FUZZ_CHECK(t.metrics.first_mismatches.size() <= co.show);
    FUZZ_CHECK(t.metrics.mismatches <= t.metrics.elements);
    if (t.verdict == TensorVerdict::kPass) FUZZ_CHECK(t.metrics.mismatches == 0);
  }
  if (same && co.equal_nan) {
    for (const TensorComparison& t : r->tensors) {
      FUZZ_CHECK(t.verdict == TensorVerdict::kPass);
      FUZZ_CHECK(!t.metrics.max_abs_error || *t.metrics.max_abs_error == 0);
    }
  }
  return 0;
}
