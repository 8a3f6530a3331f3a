// The compare engine (report.h, CompareTensorSets): each pair of tensors
// fed to an ElementComparator, from verbatim runs read ahead or from the
// two sides' streams in step.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/analysis/report.h"
#include "decomposed/io/chunk_pipe.h"
#include "decomposed/status.h"
#include "src/analysis/run_prefetcher.h"

namespace decomposed {
namespace {

using internal::CheckRun;
using internal::kRunWindowBytes;
using internal::RunPrefetcher;

// Pulls at most this many bytes of the expected side per step, so a
// zero-copy chunk of a whole array on the actual side never makes us hold
// as much of the expected side.
constexpr size_t kStepBytes = size_t{1} << 20;

absl::Status CompareRuns(const TensorRun& er, const TensorRun& ar, const TensorInfo& et,
                         const TensorInfo& at, ElementComparator& cmp,
                         const std::function<void(uint64_t)>& on_bytes) {
  const size_t eb = Info(et.type).element_bytes;
  const size_t ab = Info(at.type).element_bytes;
  const uint64_t n = et.element_count();
  if (absl::Status s = CheckRun(er, n, eb, et.label); !s.ok()) return s;
  if (absl::Status s = CheckRun(ar, n, ab, at.label); !s.ok()) return s;
  RunPrefetcher pf({{&er, eb}, {&ar, ab}}, n, kRunWindowBytes / std::max(eb, ab));
  std::vector<const char*> v;
  for (;;) {
    absl::StatusOr<uint64_t> k = pf.Next(&v);
    if (!k.ok()) return WithFile(k.status(), et.label + ", " + at.label);
    if (*k == 0) return absl::OkStatus();
    cmp.Add(v[0], v[1], *k);
    if (on_bytes) on_bytes(*k * (eb + ab));
  }
}

absl::Status CompareOne(TensorSet& expected, TensorSet& actual, size_t i,
                        const TensorInfo& et, const TensorInfo& at,
                        ElementComparator& cmp,
                        const std::function<void(uint64_t)>& on_bytes) {
  {
    absl::StatusOr<std::optional<TensorRun>> er = expected.Run(i);
    if (!er.ok()) return er.status();
    absl::StatusOr<std::optional<TensorRun>> ar = actual.Run(i);
    if (!ar.ok()) return ar.status();
    if (*er && *ar) return CompareRuns(**er, **ar, et, at, cmp, on_bytes);
  }
  const size_t eb = Info(et.type).element_bytes;
  const size_t ab = Info(at.type).element_bytes;
  PipedProducer producer([&](ChunkPipe& pipe) {
    return expected.Stream(i, [&](std::string_view c) {
      if (!pipe.Write(c)) return absl::CancelledError("compare stopped reading");
      return absl::OkStatus();
    });
  });
  std::vector<char> ebuf;
  std::string carry;  // a partial actual element split across chunks
  absl::Status pulled;
  auto feed = [&](const char* a, uint64_t n) -> absl::Status {
    ebuf.resize(n * eb);
    if (!producer.pipe().Read(ebuf.data(), ebuf.size())) {
      producer.pipe().CloseReader();
      absl::Status ps = producer.Join();
      if (!ps.ok()) return ps;
      return absl::InternalError(absl::StrCat(
          "tensor ", i, ": the expected side (", et.label,
          ") ended before the actual side (", at.label, ")"));
    }
    cmp.Add(ebuf.data(), a, n);
    if (on_bytes) on_bytes(n * (eb + ab));
    return absl::OkStatus();
  };
  absl::Status s = actual.Stream(i, [&](std::string_view chunk) -> absl::Status {
    if (!carry.empty()) {
      size_t k = std::min(ab - carry.size(), chunk.size());
      carry.append(chunk.data(), k);
      chunk.remove_prefix(k);
      if (carry.size() < ab) return absl::OkStatus();
      if (absl::Status f = feed(carry.data(), 1); !f.ok()) return f;
      carry.clear();
    }
    const size_t step_elems = std::max<size_t>(1, kStepBytes / std::max(eb, ab));
    uint64_t whole = chunk.size() / ab;
    const char* p = chunk.data();
    while (whole > 0) {
      uint64_t n = std::min<uint64_t>(whole, step_elems);
      if (absl::Status f = feed(p, n); !f.ok()) return f;
      p += n * ab;
      whole -= n;
    }
    carry.assign(p, chunk.data() + chunk.size() - p);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    producer.pipe().CloseReader();
    (void)producer.Join();
    return s;
  }
  // The expected side must end exactly here.
  char extra;
  bool more = producer.pipe().Read(&extra, 1);
  producer.pipe().CloseReader();
  absl::Status ps = producer.Join();
  if (!ps.ok() && !(more && absl::IsCancelled(ps))) return ps;
  if (more || !carry.empty()) {
    return absl::InternalError(absl::StrCat(
        "tensor ", i, ": the two sides streamed different byte counts (",
        et.label, ", ", at.label, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateCompareOptions(const CompareOptions& options) {
  for (auto [name, v] : {std::pair{"rtol", options.rtol}, std::pair{"atol", options.atol}}) {
    if (v && !(std::isfinite(*v) && *v >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be a finite number >= 0, not ", *v));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CompareReport> CompareTensorSets(TensorSet& expected,
                                                TensorSet& actual,
                                                const CompareOptions& options) {
  if (absl::Status s = ValidateCompareOptions(options); !s.ok()) return s;
  CompareReport r;
  r.options = options;
  const size_t n = std::max(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    TensorComparison c;
    c.index = i;
    if (i < expected.size()) {
      absl::StatusOr<TensorInfo> t = expected.Describe(i);
      if (!t.ok()) return t.status();
      c.expected = *std::move(t);
    }
    if (i < actual.size()) {
      absl::StatusOr<TensorInfo> t = actual.Describe(i);
      if (!t.ok()) return t.status();
      c.actual = *std::move(t);
    }
    if (!c.expected || !c.actual) {
      c.verdict = TensorVerdict::kMissing;
    } else if (c.expected->dims != c.actual->dims) {
      c.verdict = TensorVerdict::kShapeMismatch;
    } else if (c.expected->type != c.actual->type && !options.allow_dtype_mismatch) {
      c.verdict = TensorVerdict::kDtypeMismatch;
    } else {
      c.tolerance = ResolveTolerance(options, c.expected->type, c.actual->type);
      ElementComparator cmp(options.mode, c.expected->type, c.actual->type,
                            c.tolerance, options.show);
      absl::Status s = CompareOne(expected, actual, i, *c.expected, *c.actual,
                                  cmp, options.on_bytes);
      if (!s.ok()) return s;
      c.metrics = cmp.Finish();
      c.verdict = c.metrics.mismatches == 0 ? TensorVerdict::kPass : TensorVerdict::kFail;
    }
    if (c.verdict != TensorVerdict::kPass) r.pass = false;
    r.tensors.push_back(std::move(c));
  }
  return r;
}

}  // namespace decomposed
