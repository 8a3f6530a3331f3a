#include "decomposed/analysis/three_way.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/analysis/compare.h"
#include "decomposed/analysis/error_histogram.h"
#include "decomposed/io/chunk_pipe.h"
#include "decomposed/io/spool_source.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"
#include "src/analysis/kernels.h"

namespace decomposed {
namespace {

using json = nlohmann::json;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFloatMax = std::numeric_limits<float>::max();

// Elements read from each side per step.
constexpr uint64_t kChunkElements = uint64_t{1} << 16;
// Pairs of errors per block of the error store (1 MiB).
constexpr size_t kStoreBlockPairs = size_t{1} << 17;

// --- one side of an input, pulled element by element --------------------

// Reads tensor `i` of a set `n` elements at a time: a verbatim run with
// pread on the calling thread, anything else through the set's decoder on
// its own thread (PipedProducer) and a bounded pipe.
class SideStream {
 public:
  absl::Status Open(TensorSet& set, size_t i, const TensorInfo& info) {
    eb_ = Info(info.type).element_bytes;
    label_ = info.label;
    elements_ = info.element_count();
    absl::StatusOr<std::optional<TensorRun>> run = set.Run(i);
    if (!run.ok()) return run.status();
    if (*run) {
      if ((*run)->bytes % eb_ != 0 || (*run)->bytes / eb_ != elements_) {
        return absl::InternalError(absl::StrCat(label_, ": a run of ", (*run)->bytes,
                                                " bytes for ", elements_, " elements"));
      }
      run_ = std::move(*run);
      return absl::OkStatus();
    }
    // A pipe as large as the tensor, up to compare's 4 MiB: small tensors
    // (a snapshot may have hundreds) do not each clear 4 MiB.
    const size_t capacity = static_cast<size_t>(
        std::clamp<uint64_t>(elements_ * eb_, uint64_t{64} << 10, uint64_t{4} << 20));
    producer_ = std::make_unique<PipedProducer>(
        [&set, i](ChunkPipe& pipe) {
          return set.Stream(i, [&](std::string_view c) {
            if (!pipe.Write(c)) return absl::CancelledError("three-way stopped reading");
            return absl::OkStatus();
          });
        },
        capacity);
    return absl::OkStatus();
  }

  // Reads the next `n` elements into `dst`.
  absl::Status Read(char* dst, uint64_t n) {
    const uint64_t bytes = n * eb_;
    if (run_) {
      for (uint64_t done = 0; done < bytes;) {
        const ssize_t r = ::pread(run_->fd.get(), dst + done, bytes - done,
                                  static_cast<off_t>(run_->offset + pos_ + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          return WithFile(ErrnoError(errno, absl::StrCat(
                              "reading tensor data at byte ", run_->offset + pos_ + done)),
                          label_);
        }
        if (r == 0) {
          return WithFile(absl::OutOfRangeError(absl::StrCat(
                              "tensor data: the file ends at byte ", run_->offset + pos_ + done,
                              ", before its ", run_->bytes, " bytes (it shrank while being read)")),
                          label_);
        }
        done += static_cast<uint64_t>(r);
      }
      pos_ += bytes;
      return absl::OkStatus();
    }
    if (!producer_->pipe().Read(dst, static_cast<size_t>(bytes))) {
      producer_->pipe().CloseReader();
      absl::Status s = producer_->Join();
      if (!s.ok()) return s;
      return absl::InternalError(absl::StrCat(label_, " ended before its ", elements_,
                                              " elements"));
    }
    return absl::OkStatus();
  }

  // After the last Read: checks that the decoder produced nothing more and
  // ended cleanly.
  absl::Status Finish() {
    if (run_) return absl::OkStatus();
    char extra;
    const bool more = producer_->pipe().Read(&extra, 1);
    producer_->pipe().CloseReader();
    absl::Status s = producer_->Join();
    if (!s.ok() && !(more && absl::IsCancelled(s))) return s;
    if (more) {
      return absl::InternalError(absl::StrCat(label_, " streamed more than its ",
                                              elements_, " elements"));
    }
    return absl::OkStatus();
  }

 private:
  size_t eb_ = 1;
  std::string label_;
  uint64_t elements_ = 0;
  std::optional<TensorRun> run_;
  uint64_t pos_ = 0;
  std::unique_ptr<PipedProducer> producer_;
};

bool IsComplex(PrimitiveType t) { return KindOf(t) == ElementKind::kComplex; }

// |x - y| with the three-way rule: 0 when equal (equal infinities too) and,
// with equal_nan, when both are NaN.
inline double ErrorOf(double xr, double xi, double yr, double yi, bool complex,
                      bool equal_nan) {
  if (xr == yr && xi == yi) return 0;
  if (equal_nan) {
    const bool xn = std::isnan(xr) || std::isnan(xi), yn = std::isnan(yr) || std::isnan(yi);
    if (xn && yn) return 0;
  }
  return complex ? std::hypot(xr - yr, xi - yi) : std::fabs(xr - yr);
}

// x / y for errors: +inf when y is 0 and x is not, 0 when both are.
double Ratio(double x, double y) {
  if (y > 0) return x / y;
  return x == 0 ? 0 : kInf;
}

// --- the errors, kept for the histograms ----------------------------------

// Pairs (target, reference) of float32 errors, appended as they are
// computed and read back by position: in memory blocks up to a budget, then
// in an unlinked temp file (io/spool_source.h's CreateSpoolFile).
class ErrorStore {
 public:
  explicit ErrorStore(uint64_t memory_bytes)
      : max_blocks_(std::max<uint64_t>(1, memory_bytes / (kStoreBlockPairs * 8))) {}

  uint64_t size() const { return size_; }
  bool spilled() const { return fd_.get() >= 0; }

  absl::Status Append(const float* pairs, size_t n) {
    while (n > 0) {
      if (tail_ == kStoreBlockPairs || blocks_.empty()) {
        if (spilled()) {
          if (absl::Status s = FlushTail(); !s.ok()) return s;
        } else if (blocks_.size() == max_blocks_) {
          if (absl::Status s = Spill(); !s.ok()) return s;
        } else {
          blocks_.emplace_back(new float[2 * kStoreBlockPairs]);
          tail_ = 0;
        }
      }
      float* b = blocks_.back().get();
      const size_t k = std::min(n, kStoreBlockPairs - tail_);
      std::memcpy(b + 2 * tail_, pairs, 8 * k);
      tail_ += k;
      size_ += k;
      pairs += 2 * k;
      n -= k;
    }
    return absl::OkStatus();
  }

  // Copies pairs [first, first + n) into `out` (2n floats).
  absl::Status Read(uint64_t first, size_t n, float* out) {
    if (!spilled()) {
      while (n > 0) {
        const size_t bi = static_cast<size_t>(first / kStoreBlockPairs);
        const size_t off = static_cast<size_t>(first % kStoreBlockPairs);
        const size_t k = std::min(n, kStoreBlockPairs - off);
        std::memcpy(out, blocks_[bi].get() + 2 * off, 8 * k);
        out += 2 * k;
        first += k;
        n -= k;
      }
      return absl::OkStatus();
    }
    if (tail_ > 0) {
      if (absl::Status s = FlushTail(); !s.ok()) return s;
    }
    char* dst = reinterpret_cast<char*>(out);
    const uint64_t bytes = uint64_t{8} * n;
    for (uint64_t done = 0; done < bytes;) {
      const ssize_t r = ::pread(fd_.get(), dst + done, bytes - done,
                                static_cast<off_t>(first * 8 + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        return ErrnoError(r < 0 ? errno : EIO,
                                   "reading back the three-way error temp file");
      }
      done += static_cast<uint64_t>(r);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status WriteAll(const char* p, uint64_t bytes) {
    for (uint64_t done = 0; done < bytes;) {
      const ssize_t w = ::pwrite(fd_.get(), p + done, bytes - done,
                                 static_cast<off_t>(written_ + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        return ErrnoError(w < 0 ? errno : EIO, absl::StrCat(
            "writing the three-way error temp file in ", internal::SpoolDirectory(),
            " (set TMPDIR to a directory with room: 8 bytes per element)"));
      }
      done += static_cast<uint64_t>(w);
    }
    written_ += bytes;
    return absl::OkStatus();
  }
  // Moves the memory blocks to a new temp file; one block stays as the
  // file's write buffer.
  absl::Status Spill() {
    absl::StatusOr<OwnedFd> fd = internal::CreateSpoolFile();
    if (!fd.ok()) return fd.status();
    fd_ = *std::move(fd);
    for (const auto& b : blocks_) {
      if (absl::Status s = WriteAll(reinterpret_cast<const char*>(b.get()),
                                    uint64_t{8} * kStoreBlockPairs);
          !s.ok()) {
        return s;
      }
    }
    blocks_.resize(1);
    tail_ = 0;
    return absl::OkStatus();
  }
  absl::Status FlushTail() {
    absl::Status s = WriteAll(reinterpret_cast<const char*>(blocks_.back().get()),
                              uint64_t{8} * tail_);
    tail_ = 0;
    return s;
  }

  size_t max_blocks_;
  std::vector<std::unique_ptr<float[]>> blocks_;
  size_t tail_ = 0;  // pairs in the last block (not yet written, once spilled)
  uint64_t size_ = 0;
  OwnedFd fd_;
  uint64_t written_ = 0;
};

// --- accumulators ------------------------------------------------------------

// Sums, maxima and counts of the two error sets over some elements.
struct Accumulator {
  uint64_t elements = 0, counted = 0, target_only_nonfinite = 0;
  uint64_t target_nonfinite = 0, reference_nonfinite = 0;
  internal::CompensatedSum t_sq, r_sq;
  double t_max = 0, r_max = 0;
  float lo = 0, hi = 0;  // float32 errors of both sets: the histogram's range

  void Merge(const Accumulator& o) {
    if (o.counted > 0) {
      if (counted == 0 || o.lo < lo) lo = o.lo;
      if (counted == 0 || o.hi > hi) hi = o.hi;
    }
    elements += o.elements;
    counted += o.counted;
    target_only_nonfinite += o.target_only_nonfinite;
    target_nonfinite += o.target_nonfinite;
    reference_nonfinite += o.reference_nonfinite;
    t_sq.Add(o.t_sq.value());
    r_sq.Add(o.r_sq.value());
    t_max = std::max(t_max, o.t_max);
    r_max = std::max(r_max, o.r_max);
  }

  // The metrics this accumulator gives (ratios of its own sums).
  void Fill(ThreeWayMetrics* m) const {
    m->elements = elements;
    m->counted = counted;
    m->target_only_nonfinite = target_only_nonfinite;
    m->target.nonfinite = target_nonfinite;
    m->reference.nonfinite = reference_nonfinite;
    if (counted == 0) return;
    const double n = static_cast<double>(counted);
    const double ts = t_sq.value(), rs = r_sq.value();
    m->target = {std::sqrt(ts / n), t_max, std::sqrt(ts), target_nonfinite};
    m->reference = {std::sqrt(rs / n), r_max, std::sqrt(rs), reference_nonfinite};
    m->zero_reference_error = r_max == 0;
    m->sigma_ratio = Ratio(m->target.rms, m->reference.rms);
  }
};

// A histogram over fixed edges, for one level.
struct LevelHistogram {
  std::vector<double> edges;
  double scale = 0;
  std::vector<uint64_t> t, r;
  void Reset(const Accumulator& a, size_t bins) {
    edges = LinearEdges(a.lo, a.hi, bins);
    scale = BinScale(edges);
    t.assign(bins, 0);
    r.assign(bins, 0);
  }
  // BinOf, inlined for the read-back loop.
  size_t Bin(float xf) const {
    const double x = xf;
    const size_t bins = t.size();
    if (scale == 0) return bins - 1;
    const double* e = edges.data();
    const double g = (x - e[0]) * scale;
    size_t j = g <= 0 ? 0 : std::min(static_cast<size_t>(static_cast<int64_t>(g)), bins - 1);
    while (j > 0 && x < e[j]) --j;
    while (j + 1 < bins && x >= e[j + 1]) ++j;
    return j;
  }
  bool SameBins(const LevelHistogram& o) const { return edges == o.edges; }
  // vLLM-Neuron's BC: 1 when every error is the same value.
  double Bc(const Accumulator& a) const {
    if (a.lo == a.hi) return 1.0;
    return BhattacharyyaCoefficient(t, r);
  }
};

// The verdict bits of a level from its metrics.
void Judge(const ThreeWayOptions& o, ThreeWayMetrics* m) {
  if (m->counted > 0) {
    const bool bc_ok = m->bc && *m->bc >= o.bc_threshold;
    const bool sigma_ok = m->sigma_ratio && *m->sigma_ratio <= o.max_sigma_ratio;
    if (!bc_ok && !sigma_ok) m->failures |= kThreeWayDistribution;
    if (!(m->linf_ratio && *m->linf_ratio < o.max_linf_ratio)) m->failures |= kThreeWayLinf;
    if (!(m->l2_ratio && *m->l2_ratio < o.max_l2_ratio)) m->failures |= kThreeWayL2;
  }
  if (m->target_only_nonfinite > 0) m->failures |= kThreeWayNonFinite;
}

// Worst ratios of a level over its inputs.
void TakeWorst(const std::vector<ThreeWayInput>& inputs, const std::vector<size_t>& which,
               ThreeWayMetrics* m) {
  for (size_t k : which) {
    const ThreeWayMetrics& x = inputs[k].metrics;
    if (x.linf_ratio && (!m->linf_ratio || *x.linf_ratio > *m->linf_ratio)) {
      m->linf_ratio = x.linf_ratio;
      m->worst_linf_input = k;
    }
    if (x.l2_ratio && (!m->l2_ratio || *x.l2_ratio > *m->l2_ratio)) {
      m->l2_ratio = x.l2_ratio;
      m->worst_l2_input = k;
    }
  }
}

// Streams one input's three sides: accumulates `acc`, appends the errors
// to `store`, notes the largest target error in `in`.
absl::Status StreamInput(const ThreeWayRun& run, ThreeWayInput* in, bool equal_nan,
                         const std::function<void(uint64_t)>& on_bytes, Accumulator* acc,
                         ErrorStore* store) {
  const TensorInfo& et = *in->expected;
  const TensorInfo& at = *in->actual;
  const TensorInfo& bt = *in->baseline;
  SideStream es, as, bs;
  if (absl::Status s = es.Open(*run.expected, in->index, et); !s.ok()) return s;
  if (absl::Status s = as.Open(*run.actual, in->index, at); !s.ok()) return s;
  if (absl::Status s = bs.Open(*run.baseline, in->index, bt); !s.ok()) return s;
  const size_t eb = Info(et.type).element_bytes, ab = Info(at.type).element_bytes,
               bb = Info(bt.type).element_bytes;
  const bool complex = IsComplex(et.type) || IsComplex(at.type) || IsComplex(bt.type);
  const uint64_t n = et.element_count();
  const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kChunkElements));
  std::vector<char> eraw(chunk * eb), araw(chunk * ab), braw(chunk * bb);
  std::vector<double> v(6 * chunk, 0.0);
  double* er = v.data();
  double* ei = er + chunk;
  double* ar = ei + chunk;
  double* ai = ar + chunk;
  double* br = ai + chunk;
  double* bi = br + chunk;
  std::vector<float> pairs(2 * chunk);
  constexpr size_t kBlock = 512;
  acc->elements = n;
  for (uint64_t done = 0; done < n;) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(chunk, n - done));
    if (absl::Status s = es.Read(eraw.data(), k); !s.ok()) return s;
    if (absl::Status s = as.Read(araw.data(), k); !s.ok()) return s;
    if (absl::Status s = bs.Read(braw.data(), k); !s.ok()) return s;
    internal::BlockToDoubles(et.type, eraw.data(), k, er, ei);
    internal::BlockToDoubles(at.type, araw.data(), k, ar, ai);
    internal::BlockToDoubles(bt.type, braw.data(), k, br, bi);
    size_t stored = 0;
    for (size_t b0 = 0; b0 < k; b0 += kBlock) {
      const size_t b1 = std::min(k, b0 + kBlock);
      double ts = 0, rs = 0;
      for (size_t j = b0; j < b1; ++j) {
        const double t = ErrorOf(ar[j], ai[j], br[j], bi[j], complex, equal_nan);
        const double r = ErrorOf(er[j], ei[j], br[j], bi[j], complex, equal_nan);
        // Finite in float32 too (NaN fails the test; a double beyond
        // float32's range is never cast, which would be undefined).
        const bool tf = t <= kFloatMax, rf = r <= kFloatMax;
        if (!tf || !rf) {
          acc->target_nonfinite += !tf;
          acc->reference_nonfinite += !rf;
          acc->target_only_nonfinite += !tf && rf;
          continue;
        }
        const float t32 = static_cast<float>(t), r32 = static_cast<float>(r);
        ts += t * t;
        rs += r * r;
        if (acc->counted == 0 || t > acc->t_max) {
          acc->t_max = t;
          in->max_target_error_index = done + j;
          in->expected_value = {er[j], ei[j]};
          in->actual_value = {ar[j], ai[j]};
          in->baseline_value = {br[j], bi[j]};
        }
        acc->r_max = std::max(acc->r_max, r);
        const float lo = std::min(t32, r32), hi = std::max(t32, r32);
        if (acc->counted == 0 || lo < acc->lo) acc->lo = lo;
        if (acc->counted == 0 || hi > acc->hi) acc->hi = hi;
        ++acc->counted;
        pairs[2 * stored] = t32;
        pairs[2 * stored + 1] = r32;
        ++stored;
      }
      acc->t_sq.Add(ts);
      acc->r_sq.Add(rs);
    }
    if (absl::Status s = store->Append(pairs.data(), stored); !s.ok()) return s;
    if (on_bytes) on_bytes(k * (eb + ab + bb));
    done += k;
  }
  if (absl::Status s = es.Finish(); !s.ok()) return s;
  if (absl::Status s = as.Finish(); !s.ok()) return s;
  return bs.Finish();
}

}  // namespace

absl::Status ValidateThreeWayOptions(const ThreeWayOptions& o) {
  auto bad = [](std::string_view what, double v) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), " must be a finite number >= 0, not ", v));
  };
  for (auto [name, v] : {std::pair{"bc_threshold", o.bc_threshold},
                         std::pair{"max_sigma_ratio", o.max_sigma_ratio},
                         std::pair{"max_linf_ratio", o.max_linf_ratio},
                         std::pair{"max_l2_ratio", o.max_l2_ratio}}) {
    if (!std::isfinite(v) || v < 0) return bad(name, v);
  }
  if (o.bc_threshold > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bc_threshold must be at most 1 (a coefficient), not ", o.bc_threshold));
  }
  if (o.bins < 1 || o.bins > kMaxThreeWayBins) {
    return absl::InvalidArgumentError(
        absl::StrCat("bins must be 1 to ", kMaxThreeWayBins, ", not ", o.bins));
  }
  if (o.quantiles < 2 || o.quantiles > kMaxThreeWayQuantiles) {
    return absl::InvalidArgumentError(absl::StrCat(
        "quantiles must be 2 to ", kMaxThreeWayQuantiles, ", not ", o.quantiles));
  }
  return absl::OkStatus();
}

absl::StatusOr<ThreeWayReport> ThreeWayCompare(const std::vector<ThreeWayRun>& runs,
                                               const ThreeWayOptions& options) {
  if (absl::Status s = ValidateThreeWayOptions(options); !s.ok()) return s;
  if (runs.empty()) return absl::InvalidArgumentError("three-way: no run to compare");
  ThreeWayReport rep;
  rep.options = options;
  size_t n_tensors = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    const ThreeWayRun& run = runs[k];
    if (!run.expected || !run.actual || !run.baseline) {
      return absl::InvalidArgumentError(absl::StrCat("three-way: run ", k, " lacks a side"));
    }
    if (run.expected == run.actual || run.expected == run.baseline ||
        run.actual == run.baseline) {
      return absl::InvalidArgumentError(absl::StrCat(
          "three-way: run ", k, " passes one TensorSet as two sides (open it once per side)"));
    }
    rep.run_names.push_back(
        {run.expected->Name(), run.actual->Name(), run.baseline->Name()});
    n_tensors = std::max({n_tensors, run.expected->size(), run.actual->size(),
                          run.baseline->size()});
  }

  // Pass 1: every input, streamed; its errors to the store.
  ErrorStore store(options.error_memory_bytes);
  std::vector<Accumulator> input_acc;
  std::vector<uint64_t> segment;  // first pair of each input in the store
  for (size_t k = 0; k < runs.size(); ++k) {
    const ThreeWayRun& run = runs[k];
    for (size_t i = 0; i < n_tensors; ++i) {
      ThreeWayInput in;
      in.run = k;
      in.index = i;
      auto describe = [&](TensorSet* set, std::optional<TensorInfo>* out) -> absl::Status {
        if (i >= set->size()) return absl::OkStatus();
        absl::StatusOr<TensorInfo> t = set->Describe(i);
        if (!t.ok()) return t.status();
        *out = *std::move(t);
        return absl::OkStatus();
      };
      if (absl::Status s = describe(run.expected, &in.expected); !s.ok()) return s;
      if (absl::Status s = describe(run.actual, &in.actual); !s.ok()) return s;
      if (absl::Status s = describe(run.baseline, &in.baseline); !s.ok()) return s;
      Accumulator acc;
      segment.push_back(store.size());
      if (!in.expected || !in.actual || !in.baseline) {
        in.verdict = TensorVerdict::kMissing;
      } else if (in.expected->dims != in.actual->dims ||
                 in.expected->dims != in.baseline->dims) {
        in.verdict = TensorVerdict::kShapeMismatch;
      } else {
        if (absl::Status s = StreamInput(run, &in, options.equal_nan, options.on_bytes,
                                         &acc, &store);
            !s.ok()) {
          return s;
        }
        acc.Fill(&in.metrics);
        if (in.metrics.counted > 0) {
          in.metrics.linf_ratio = Ratio(in.metrics.target.linf, in.metrics.reference.linf);
          in.metrics.l2_ratio = Ratio(in.metrics.target.l2, in.metrics.reference.l2);
        }
      }
      if (in.verdict != TensorVerdict::kPass) in.metrics.failures |= kThreeWayUnpaired;
      input_acc.push_back(acc);
      rep.inputs.push_back(std::move(in));
    }
  }

  // Pass 2: the stored errors, read back tensor by tensor: each input's,
  // each tensor's and everything's histogram, and the quantile sketches.
  Accumulator all_acc;
  for (const Accumulator& a : input_acc) all_acc.Merge(a);
  LevelHistogram all_h;
  all_h.Reset(all_acc, options.bins);
  ErrorQuantileSketch all_t, all_r, tensor_t, tensor_r;
  const std::vector<double> levels = QuantileLevels(options.quantiles);
  std::vector<float> buf(2 * kStoreBlockPairs);
  for (size_t i = 0; i < n_tensors; ++i) {
    ThreeWayTensor tensor;
    tensor.index = i;
    Accumulator tacc;
    for (size_t k = 0; k < runs.size(); ++k) {
      const size_t x = k * n_tensors + i;
      tensor.inputs.push_back(x);
      tacc.Merge(input_acc[x]);
      if (rep.inputs[x].verdict != TensorVerdict::kPass) tensor.verdict = rep.inputs[x].verdict;
    }
    LevelHistogram th;
    th.Reset(tacc, options.bins);
    tensor_t.Clear();
    tensor_r.Clear();
    for (size_t x : tensor.inputs) {
      const Accumulator& a = input_acc[x];
      if (a.counted == 0) continue;
      LevelHistogram ih;
      ih.Reset(a, options.bins);
      // A level whose edges are those of the level around it (one input in
      // a tensor, one tensor in all) takes that level's bins.
      const bool tensor_as_all = th.SameBins(all_h), input_as_tensor = ih.SameBins(th);
      for (uint64_t done = 0; done < a.counted;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kStoreBlockPairs, a.counted - done));
        if (absl::Status s = store.Read(segment[x] + done, n, buf.data()); !s.ok()) return s;
        for (size_t j = 0; j < n; ++j) {
          const float te = buf[2 * j], re = buf[2 * j + 1];
          const size_t at = all_h.Bin(te), ar = all_h.Bin(re);
          ++all_h.t[at];
          ++all_h.r[ar];
          const size_t tt = tensor_as_all ? at : th.Bin(te);
          const size_t tr = tensor_as_all ? ar : th.Bin(re);
          ++th.t[tt];
          ++th.r[tr];
          ++ih.t[input_as_tensor ? tt : ih.Bin(te)];
          ++ih.r[input_as_tensor ? tr : ih.Bin(re)];
          tensor_t.Add(te);
          tensor_r.Add(re);
        }
        done += n;
      }
      rep.inputs[x].metrics.bc = ih.Bc(a);
      Judge(options, &rep.inputs[x].metrics);
    }
    for (size_t x : tensor.inputs) {
      if (rep.inputs[x].metrics.counted == 0) Judge(options, &rep.inputs[x].metrics);
    }
    all_t.Merge(tensor_t);
    all_r.Merge(tensor_r);
    ThreeWayMetrics& m = tensor.metrics;
    tacc.Fill(&m);
    TakeWorst(rep.inputs, tensor.inputs, &m);
    if (tacc.counted > 0) {
      m.bc = th.Bc(tacc);
      m.edges = th.edges;
      m.target_counts = th.t;
      m.reference_counts = th.r;
      m.levels = levels;
      m.target_quantiles = tensor_t.Quantiles(levels);
      m.reference_quantiles = tensor_r.Quantiles(levels);
    }
    Judge(options, &m);
    if (tensor.verdict != TensorVerdict::kPass) {
      m.failures |= kThreeWayUnpaired;
    } else if (!m.pass()) {
      tensor.verdict = TensorVerdict::kFail;
    }
    for (size_t x : tensor.inputs) {
      ThreeWayInput& in = rep.inputs[x];
      if (in.verdict == TensorVerdict::kPass && !in.metrics.pass()) in.verdict = TensorVerdict::kFail;
    }
    if (tensor.verdict != TensorVerdict::kPass) rep.pass = false;
    rep.tensors.push_back(std::move(tensor));
  }
  ThreeWayMetrics& m = rep.all;
  all_acc.Fill(&m);
  std::vector<size_t> every(rep.inputs.size());
  for (size_t x = 0; x < every.size(); ++x) every[x] = x;
  TakeWorst(rep.inputs, every, &m);
  if (all_acc.counted > 0) {
    m.bc = all_h.Bc(all_acc);
    m.edges = all_h.edges;
    m.target_counts = all_h.t;
    m.reference_counts = all_h.r;
    m.levels = levels;
    m.target_quantiles = all_t.Quantiles(levels);
    m.reference_quantiles = all_r.Quantiles(levels);
  }
  Judge(options, &m);
  for (const ThreeWayInput& in : rep.inputs) {
    if (in.verdict == TensorVerdict::kMissing || in.verdict == TensorVerdict::kShapeMismatch) {
      m.failures |= kThreeWayUnpaired;
    }
  }
  if (!m.pass()) rep.pass = false;
  return rep;
}

// --- reports -------------------------------------------------------------------

namespace {

json Num(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
json Opt(const std::optional<double>& v) { return v ? Num(*v) : json(nullptr); }
json SideJson(const std::optional<TensorInfo>& t) {
  if (!t) return nullptr;
  return json{{"dtype", LowerTypeName(t->type)}, {"shape", t->dims}};
}
json ValueJson(const Complex& z, bool complex) {
  if (complex) return json::array({Num(z.re), Num(z.im)});
  return Num(z.re);
}

std::vector<std::string> FailureNames(uint32_t f) {
  std::vector<std::string> out;
  if (f & kThreeWayUnpaired) out.push_back("unpaired");
  if (f & kThreeWayDistribution) out.push_back("distribution");
  if (f & kThreeWayLinf) out.push_back("linf_ratio");
  if (f & kThreeWayL2) out.push_back("l2_ratio");
  if (f & kThreeWayNonFinite) out.push_back("nonfinite");
  return out;
}

json ErrorSetJson(const ErrorSetSummary& s, bool counted) {
  if (!counted) {
    return json{{"rms", nullptr}, {"linf", nullptr}, {"l2", nullptr},
                {"nonfinite", s.nonfinite}};
  }
  return json{{"rms", Num(s.rms)}, {"linf", Num(s.linf)}, {"l2", Num(s.l2)},
              {"nonfinite", s.nonfinite}};
}

json MetricsJson(const ThreeWayMetrics& m, bool level) {
  json j{{"pass", m.pass()},
         {"failures", FailureNames(m.failures)},
         {"elements", m.elements},
         {"counted", m.counted},
         {"target_only_nonfinite", m.target_only_nonfinite},
         {"target", ErrorSetJson(m.target, m.counted > 0)},
         {"reference", ErrorSetJson(m.reference, m.counted > 0)},
         {"zero_reference_error", m.zero_reference_error},
         {"sigma_ratio", Opt(m.sigma_ratio)},
         {"bc", Opt(m.bc)}};
  if (level) {
    j["worst_linf_ratio"] = Opt(m.linf_ratio);
    j["worst_linf_input"] = m.linf_ratio ? json(m.worst_linf_input) : json(nullptr);
    j["worst_l2_ratio"] = Opt(m.l2_ratio);
    j["worst_l2_input"] = m.l2_ratio ? json(m.worst_l2_input) : json(nullptr);
    json edges = json::array();
    for (double e : m.edges) edges.push_back(Num(e));
    j["histogram"] = {{"edges", std::move(edges)},
                      {"target", m.target_counts},
                      {"reference", m.reference_counts}};
    j["quantiles"] = {{"levels", m.levels},
                      {"target", m.target_quantiles},
                      {"reference", m.reference_quantiles}};
  } else {
    j["linf_ratio"] = Opt(m.linf_ratio);
    j["l2_ratio"] = Opt(m.l2_ratio);
  }
  return j;
}

std::string ShapeText(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}
std::string Fmt(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.4g", v);
}
std::string FmtOpt(const std::optional<double>& v) { return v ? Fmt(*v) : "-"; }
std::string FmtValue(const Complex& z, bool complex) {
  if (complex) return absl::StrCat("(", Fmt(z.re), ",", Fmt(z.im), ")");
  return absl::StrFormat("%.9g", z.re);
}

// Why a level failed, in words.
std::string Why(const ThreeWayOptions& o, const ThreeWayMetrics& m,
                const std::vector<ThreeWayInput>& inputs, bool runs) {
  std::vector<std::string> parts;
  auto where = [&](size_t x) {
    if (!runs) return std::string();
    return absl::StrCat(" (run ", inputs[x].run, ", tensor ", inputs[x].index, ")");
  };
  if (m.failures & kThreeWayDistribution) {
    parts.push_back(absl::StrCat("BC ", FmtOpt(m.bc), " < ", Fmt(o.bc_threshold),
                                 " and sigma-ratio ", FmtOpt(m.sigma_ratio), " > ",
                                 Fmt(o.max_sigma_ratio)));
  }
  if (m.failures & kThreeWayLinf) {
    parts.push_back(absl::StrCat("worst L-inf ratio ", FmtOpt(m.linf_ratio),
                                 " >= ", Fmt(o.max_linf_ratio), where(m.worst_linf_input)));
  }
  if (m.failures & kThreeWayL2) {
    parts.push_back(absl::StrCat("worst L2 ratio ", FmtOpt(m.l2_ratio), " >= ",
                                 Fmt(o.max_l2_ratio), where(m.worst_l2_input)));
  }
  if (m.failures & kThreeWayNonFinite) {
    parts.push_back(absl::StrCat(m.target_only_nonfinite,
                                 " non-finite target errors where the reference error is finite"));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

std::string ThreeWayReportJson(const ThreeWayReport& r) {
  const ThreeWayOptions& o = r.options;
  json runs = json::array();
  for (const auto& names : r.run_names) {
    runs.push_back({{"expected", names[0]}, {"actual", names[1]}, {"baseline", names[2]}});
  }
  json inputs = json::array();
  for (const ThreeWayInput& in : r.inputs) {
    json j{{"run", in.run},
           {"index", in.index},
           {"status", std::string(TensorVerdictName(in.verdict))},
           {"expected", SideJson(in.expected)},
           {"actual", SideJson(in.actual)},
           {"baseline", SideJson(in.baseline)}};
    j.update(MetricsJson(in.metrics, false));
    if (in.metrics.counted > 0) {
      const bool complex = IsComplex(in.expected->type) || IsComplex(in.actual->type) ||
                           IsComplex(in.baseline->type);
      j["max_target_error"] = {
          {"index", UnravelIndex(in.max_target_error_index, in.expected->dims)},
          {"expected", ValueJson(in.expected_value, complex)},
          {"actual", ValueJson(in.actual_value, complex)},
          {"baseline", ValueJson(in.baseline_value, complex)}};
    } else {
      j["max_target_error"] = nullptr;
    }
    inputs.push_back(std::move(j));
  }
  json tensors = json::array();
  for (const ThreeWayTensor& t : r.tensors) {
    json j{{"index", t.index},
           {"status", std::string(TensorVerdictName(t.verdict))},
           {"inputs", t.inputs}};
    j.update(MetricsJson(t.metrics, true));
    tensors.push_back(std::move(j));
  }
  json out{{"three_way", true},
           {"pass", r.pass},
           {"thresholds",
            {{"bc", o.bc_threshold},
             {"sigma_ratio", o.max_sigma_ratio},
             {"linf_ratio", o.max_linf_ratio},
             {"l2_ratio", o.max_l2_ratio}}},
           {"bins", o.bins},
           {"equal_nan", o.equal_nan},
           {"runs", std::move(runs)},
           {"inputs", std::move(inputs)},
           {"tensors", std::move(tensors)},
           {"all", MetricsJson(r.all, true)}};
  return JsonText(out);
}

std::string ThreeWayReportText(const ThreeWayReport& r) {
  const ThreeWayOptions& o = r.options;
  const bool many_runs = r.run_names.size() > 1;
  std::string out;
  absl::StrAppend(&out, "three-way: target error |ACTUAL - BASELINE|, reference error "
                        "|EXPECTED - BASELINE|");
  if (many_runs) absl::StrAppend(&out, ", ", r.run_names.size(), " runs");
  absl::StrAppend(&out, "\n");
  absl::StrAppendFormat(&out, "%-4s %-14s %-16s %-16s %-10s %-10s %-10s %-10s %s\n", "#",
                        "status", "dtype e/a/b", "shape", "sigma", "BC", "Linf", "L2",
                        "target rms / reference rms");
  auto line = [&](std::string name, std::string status, std::string dtype, std::string shape,
                  const ThreeWayMetrics& m) {
    std::string rms = "-";
    if (m.counted > 0) rms = absl::StrCat(Fmt(m.target.rms), " / ", Fmt(m.reference.rms));
    absl::StrAppendFormat(&out, "%-4s %-14s %-16s %-16s %-10s %-10s %-10s %-10s %s\n", name,
                          status, dtype, shape, FmtOpt(m.sigma_ratio),
                          m.bc ? absl::StrFormat("%.4f", *m.bc) : "-", FmtOpt(m.linf_ratio),
                          FmtOpt(m.l2_ratio), rms);
  };
  size_t failed = 0;
  for (const ThreeWayTensor& t : r.tensors) {
    std::string dtype = "-", shape = "-";
    for (size_t x : t.inputs) {
      const ThreeWayInput& in = r.inputs[x];
      if (in.expected && in.actual && in.baseline) {
        dtype = absl::StrCat(LowerTypeName(in.expected->type), "/", LowerTypeName(in.actual->type),
                             "/", LowerTypeName(in.baseline->type));
        shape = ShapeText(in.expected->dims);
        if (in.verdict == TensorVerdict::kShapeMismatch) {
          shape = absl::StrCat(ShapeText(in.expected->dims), "/", ShapeText(in.actual->dims), "/",
                               ShapeText(in.baseline->dims));
        }
        break;
      }
    }
    std::string status(TensorVerdictName(t.verdict));
    if (t.verdict != TensorVerdict::kPass) {
      status = absl::AsciiStrToUpper(status);
      ++failed;
    }
    line(absl::StrCat(t.index), status, dtype, shape, t.metrics);
  }
  line("all", r.all.pass() ? "pass" : "FAIL", "", "", r.all);
  for (const ThreeWayTensor& t : r.tensors) {
    if (t.verdict == TensorVerdict::kPass) continue;
    absl::StrAppend(&out, "\ntensor ", t.index, ": ");
    if (t.verdict == TensorVerdict::kMissing || t.verdict == TensorVerdict::kShapeMismatch) {
      for (size_t x : t.inputs) {
        const ThreeWayInput& in = r.inputs[x];
        if (in.verdict == TensorVerdict::kMissing) {
          std::vector<std::string> lacking;
          if (!in.expected) lacking.push_back("expected");
          if (!in.actual) lacking.push_back("actual");
          if (!in.baseline) lacking.push_back("baseline");
          absl::StrAppend(&out, many_runs ? absl::StrCat("run ", in.run, ": ") : "",
                          "missing on the ", absl::StrJoin(lacking, " and "), " side; ");
        } else if (in.verdict == TensorVerdict::kShapeMismatch) {
          absl::StrAppend(&out, many_runs ? absl::StrCat("run ", in.run, ": ") : "",
                          "shapes differ: expected ", ShapeText(in.expected->dims), ", actual ",
                          ShapeText(in.actual->dims), ", baseline ",
                          ShapeText(in.baseline->dims), "; ");
        }
      }
      out.resize(out.size() - 2);
      absl::StrAppend(&out, "\n");
      continue;
    }
    const ThreeWayMetrics& m = t.metrics;
    absl::StrAppend(&out, Why(o, m, r.inputs, many_runs), "\n");
    absl::StrAppend(&out, "  target error:    rms ", Fmt(m.target.rms), ", max ",
                    Fmt(m.target.linf), "\n");
    absl::StrAppend(&out, "  reference error: rms ", Fmt(m.reference.rms), ", max ",
                    Fmt(m.reference.linf),
                    m.zero_reference_error ? " (every reference error is 0: the ratios "
                                             "of a non-zero target error are inf)"
                                           : "",
                    "\n");
    if (m.target.nonfinite + m.reference.nonfinite > 0) {
      absl::StrAppend(&out, "  non-finite errors: target ", m.target.nonfinite, ", reference ",
                      m.reference.nonfinite, " (left out of the metrics)\n");
    }
    for (size_t x : t.inputs) {
      const ThreeWayInput& in = r.inputs[x];
      if (in.metrics.counted == 0) continue;
      const bool complex = IsComplex(in.expected->type) || IsComplex(in.actual->type) ||
                           IsComplex(in.baseline->type);
      absl::StrAppend(&out, "  ", many_runs ? absl::StrCat("run ", in.run, ": ") : "",
                      "greatest target error ", Fmt(in.metrics.target.linf), " at ",
                      ShapeText(UnravelIndex(in.max_target_error_index, in.expected->dims)),
                      ": actual ", FmtValue(in.actual_value, complex), ", expected ",
                      FmtValue(in.expected_value, complex), ", baseline ",
                      FmtValue(in.baseline_value, complex), "\n");
    }
  }
  if (!r.all.pass() && (r.all.failures & ~kThreeWayUnpaired) != 0) {
    absl::StrAppend(&out, "\nall: ", Why(o, r.all, r.inputs, true), "\n");
  }
  absl::StrAppend(&out, "\n", r.pass ? "PASS" : "FAIL", ": ", r.tensors.size() - failed, " of ",
                  Counted(r.tensors.size(), "tensor"), " pass, all ",
                  r.all.pass() ? "pass" : "fail",
                  absl::StrFormat(" (BC >= %g or sigma-ratio <= %g; worst L-inf ratio < %g; "
                                  "worst L2 ratio < %g)\n",
                                  o.bc_threshold, o.max_sigma_ratio, o.max_linf_ratio,
                                  o.max_l2_ratio));
  return out;
}

}  // namespace decomposed
