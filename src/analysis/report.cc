#include "decomposed/analysis/report.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/chunk_pipe.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/status.h"
#include "decomposed/xla/transpose.h"
#include "nlohmann/json.hpp"

namespace decomposed {
namespace {

using json = nlohmann::json;

// Pulls at most this many bytes of the expected side per step, so a
// zero-copy chunk of a whole array on the actual side never makes us hold
// as much of the expected side.
constexpr size_t kStepBytes = size_t{1} << 20;

// JSON has neither NaN nor infinity: "nan", "inf", "-inf" (docs/compare.md).
json Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
json Opt(const std::optional<double>& v) { return v ? Num(*v) : json(nullptr); }
json Value(const Complex& z, bool complex) {
  if (complex) return json::array({Num(z.re), Num(z.im)});
  return Num(z.re);
}
json Side(const std::optional<TensorInfo>& t) {
  if (!t) return nullptr;
  return json{{"dtype", LowerTypeName(t->type)}, {"shape", t->dims}};
}

std::string ShapeText(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}
std::string Index(uint64_t i, const std::vector<int64_t>& dims) {
  return ShapeText(UnravelIndex(i, dims));
}
std::string Fmt(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.6g", v);
}

// A text table whose columns are as wide as their widest cell (two spaces
// between columns), so that a long cell ("[1,2]", "inf", a big count) never
// shifts the columns after it. Row() adds cells; Line() a heading line (a
// source path), printed as it is and not counted in the widths.
class TextTable {
 public:
  void Row(std::vector<std::string> cells) { rows_.push_back({std::move(cells), false}); }
  void Line(std::string text) { rows_.push_back({{std::move(text)}, true}); }
  std::string Text() const {
    std::vector<size_t> width;
    for (const auto& [cells, line] : rows_) {
      if (line) continue;
      if (width.size() < cells.size()) width.resize(cells.size(), 0);
      for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
    }
    std::string out;
    for (const auto& [cells, line] : rows_) {
      if (line) {
        absl::StrAppend(&out, cells[0], "\n");
        continue;
      }
      std::string row;
      for (size_t i = 0; i < cells.size(); ++i) {
        absl::StrAppend(&row, cells[i]);
        if (i + 1 < cells.size()) row.append(width[i] - cells[i].size() + 2, ' ');
      }
      absl::StrAppend(&out, row, "\n");
    }
    return out;
  }

 private:
  std::vector<std::pair<std::vector<std::string>, bool>> rows_;
};

std::string FmtValue(const Complex& z, bool complex) {
  if (complex) return absl::StrCat("(", Fmt(z.re), ",", Fmt(z.im), ")");
  return Fmt(z.re);
}

// --- verbatim runs, read ahead ------------------------------------------
//
// When a tensor's elements lie verbatim in a file (TensorSet::Run), compare
// and stats read them with pread themselves: a helper thread reads chunk
// c + 1 (and c + 2) of every run while the caller computes on chunk c. This
// keeps the decoders and the pipe out of the common case, and overlaps the
// kernel's copies with the arithmetic.

// Bytes of each run mapped at a time, and windows mapped ahead.
constexpr size_t kRunWindowBytes = size_t{4} << 20;
constexpr size_t kRunWindowsAhead = 2;

// Walks one or two runs in step, window by window. Each window is mapped
// with MAP_POPULATE (the page-cache pages are mapped in one call: no copy,
// no fault per page) by a helper thread that keeps kRunWindowsAhead
// windows ready while the caller computes, and is unmapped as soon as the
// caller moves on: the mapped pages, which count in RSS, stay within
// (1 + kRunWindowsAhead) windows per run.
class RunPrefetcher {
 public:
  struct Spec {
    const TensorRun* run;
    size_t element_bytes;
  };

  RunPrefetcher(std::vector<Spec> specs, uint64_t elements, size_t chunk_elements)
      : specs_(std::move(specs)), elements_(elements), chunk_(chunk_elements) {
    thread_ = std::thread([this] { Produce(); });
  }
  RunPrefetcher(const RunPrefetcher&) = delete;
  RunPrefetcher& operator=(const RunPrefetcher&) = delete;
  ~RunPrefetcher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    Unmap(current_);
    for (Window& w : ready_) Unmap(w);
  }

  // The next chunk: its element count (0 at the end) and, in `views`, the
  // bytes of each run, valid until the next call.
  absl::StatusOr<uint64_t> Next(std::vector<const char*>* views) {
    Unmap(current_);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.notify_all();  // room for one more window
    cv_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) {
      if (!status_.ok()) return status_;
      return uint64_t{0};
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    views->clear();
    for (const Map& m : current_.maps) views->push_back(m.data);
    return current_.elements;
  }

 private:
  struct Map {
    void* base = nullptr;
    size_t len = 0;
    const char* data = nullptr;
  };
  struct Window {
    std::vector<Map> maps;
    uint64_t elements = 0;
  };

  static void Unmap(Window& w) {
    for (Map& m : w.maps) {
      if (m.base) ::munmap(m.base, m.len);
    }
    w.maps.clear();
  }

  absl::Status MapWindow(uint64_t done, uint64_t n, Window* w) {
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    w->elements = n;
    for (const Spec& sp : specs_) {
      const uint64_t start = sp.run->offset + done * sp.element_bytes;
      const uint64_t base = start / page * page;
      const size_t len = static_cast<size_t>(start - base + n * sp.element_bytes);
      // Touching a mapped page past the end of the file raises SIGBUS: a
      // file that shrank since it was checked is an error instead.
      struct stat st;
      if (::fstat(sp.run->fd.get(), &st) != 0) {
        return ErrnoError(errno, "stat of tensor data");
      }
      if (static_cast<uint64_t>(st.st_size) < base + len) {
        return absl::OutOfRangeError(absl::StrCat(
            "tensor data: expected ", base + len, " bytes of file, found ", st.st_size,
            " (it shrank while being read) (at byte ", start, ")"));
      }
      void* m = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                       sp.run->fd.get(), static_cast<off_t>(base));
      if (m == MAP_FAILED) {
        return ErrnoError(errno, absl::StrCat("mapping tensor data at byte ", base));
      }
      w->maps.push_back({m, len, static_cast<const char*>(m) + (start - base)});
    }
    return absl::OkStatus();
  }

  void Produce() {
    absl::Status s;
    for (uint64_t done = 0; done < elements_;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return ready_.size() < kRunWindowsAhead || stop_; });
        if (stop_) break;
      }
      const uint64_t n = std::min<uint64_t>(chunk_, elements_ - done);
      Window w;
      s = MapWindow(done, n, &w);
      if (!s.ok()) {
        Unmap(w);
        break;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.push_back(std::move(w));
      }
      cv_.notify_all();
      done += n;
    }
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }

  std::vector<Spec> specs_;
  uint64_t elements_;
  size_t chunk_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Window> ready_;
  Window current_;  // the caller's (touched by the caller only)
  bool stop_ = false, done_ = false;
  absl::Status status_;
  std::thread thread_;
};

// Checks that a run holds `elements` elements of `eb` bytes.
absl::Status CheckRun(const TensorRun& r, uint64_t elements, size_t eb,
                      const std::string& label) {
  if (r.bytes / eb != elements || r.bytes % eb != 0) {
    return absl::InternalError(absl::StrCat(label, ": a run of ", r.bytes,
                                            " bytes for ", elements, " elements"));
  }
  return absl::OkStatus();
}

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

std::string_view TensorVerdictName(TensorVerdict v) {
  switch (v) {
    case TensorVerdict::kPass: return "pass";
    case TensorVerdict::kFail: return "fail";
    case TensorVerdict::kMissing: return "missing";
    case TensorVerdict::kShapeMismatch: return "shape_mismatch";
    case TensorVerdict::kDtypeMismatch: return "dtype_mismatch";
  }
  return "?";
}

std::string LowerTypeName(PrimitiveType t) {
  if (t == PrimitiveType::kOpaque) return "opaque";
  return absl::AsciiStrToLower(std::string(PrimitiveTypeName(t)));
}

absl::StatusOr<CompareReport> CompareTensorSets(TensorSet& expected,
                                                TensorSet& actual,
                                                const CompareOptions& options) {
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

std::string CompareReportJson(const CompareReport& r) {
  json tensors = json::array();
  for (const TensorComparison& c : r.tensors) {
    json t{{"index", c.index},
           {"status", std::string(TensorVerdictName(c.verdict))},
           {"expected", Side(c.expected)},
           {"actual", Side(c.actual)}};
    if (c.verdict == TensorVerdict::kPass || c.verdict == TensorVerdict::kFail) {
      const std::vector<int64_t>& dims = c.expected->dims;
      const CompareMetrics& m = c.metrics;
      const bool complex = KindOf(c.expected->type) == ElementKind::kComplex ||
                           KindOf(c.actual->type) == ElementKind::kComplex;
      t["rtol"] = c.tolerance.rtol;
      t["atol"] = c.tolerance.atol;
      t["equal_nan"] = c.tolerance.equal_nan;
      t["elements"] = m.elements;
      t["mismatches"] = m.mismatches;
      t["max_abs_error"] = Opt(m.max_abs_error);
      t["max_abs_error_index"] =
          m.max_abs_error ? json(UnravelIndex(m.max_abs_error_index, dims)) : json(nullptr);
      t["max_rel_error"] = Opt(m.max_rel_error);
      t["max_rel_error_index"] =
          m.max_rel_error ? json(UnravelIndex(m.max_rel_error_index, dims)) : json(nullptr);
      t["mean_abs_error"] = Opt(m.mean_abs_error);
      t["rms_error"] = Opt(m.rms_error);
      t["cosine"] = Opt(m.cosine);
      t["expected_nan"] = m.expected_nan;
      t["actual_nan"] = m.actual_nan;
      t["expected_inf"] = m.expected_inf;
      t["actual_inf"] = m.actual_inf;
      json first = json::array();
      for (const ElementMismatch& x : m.first_mismatches) {
        first.push_back({{"index", UnravelIndex(x.index, dims)},
                         {"expected", Value(x.expected, complex)},
                         {"actual", Value(x.actual, complex)}});
      }
      t["first_mismatches"] = std::move(first);
    }
    tensors.push_back(std::move(t));
  }
  json out{{"mode", std::string(CompareModeName(r.options.mode))},
           {"pass", r.pass},
           {"tensors", std::move(tensors)}};
  return JsonText(out);
}

std::string CompareReportText(const CompareReport& r) {
  std::string out;
  TextTable table;
  table.Row({"#", "status", "dtype", "shape", "mismatches", "max_abs", "max_rel", "cosine"});
  size_t failed = 0;
  for (const TensorComparison& c : r.tensors) {
    std::string dtype = "-", shape = "-", mism = "-", mabs = "-", mrel = "-", cos = "-";
    const TensorInfo* t = c.expected ? &*c.expected : &*c.actual;
    dtype = LowerTypeName(t->type);
    shape = ShapeText(t->dims);
    if (c.verdict == TensorVerdict::kDtypeMismatch) {
      dtype = absl::StrCat(LowerTypeName(c.expected->type), "/", LowerTypeName(c.actual->type));
    }
    if (c.verdict == TensorVerdict::kShapeMismatch) {
      shape = absl::StrCat(ShapeText(c.expected->dims), "/", ShapeText(c.actual->dims));
    }
    if (c.verdict == TensorVerdict::kPass || c.verdict == TensorVerdict::kFail) {
      const CompareMetrics& m = c.metrics;
      mism = absl::StrCat(m.mismatches, "/", m.elements);
      if (m.max_abs_error) mabs = Fmt(*m.max_abs_error);
      if (m.max_rel_error) mrel = Fmt(*m.max_rel_error);
      if (m.cosine) cos = absl::StrFormat("%.9g", *m.cosine);
    }
    if (c.verdict != TensorVerdict::kPass) ++failed;
    std::string status(TensorVerdictName(c.verdict));
    if (c.verdict != TensorVerdict::kPass) status = absl::AsciiStrToUpper(status);
    table.Row({absl::StrCat(c.index), status, dtype, shape, mism, mabs, mrel, cos});
  }
  out = table.Text();
  for (const TensorComparison& c : r.tensors) {
    if (c.verdict == TensorVerdict::kPass) continue;
    absl::StrAppend(&out, "\ntensor ", c.index, ": ");
    switch (c.verdict) {
      case TensorVerdict::kMissing:
        absl::StrAppend(&out, "missing on the ", c.expected ? "actual" : "expected",
                        " side (", c.expected ? c.expected->label : c.actual->label,
                        " has no counterpart)\n");
        break;
      case TensorVerdict::kShapeMismatch:
        absl::StrAppend(&out, "shapes differ: expected ", ShapeText(c.expected->dims),
                        ", actual ", ShapeText(c.actual->dims), "\n");
        break;
      case TensorVerdict::kDtypeMismatch:
        absl::StrAppend(&out, "dtypes differ: expected ", LowerTypeName(c.expected->type),
                        ", actual ", LowerTypeName(c.actual->type),
                        " (--allow-dtype-mismatch compares them in f64)\n");
        break;
      default: {
        const CompareMetrics& m = c.metrics;
        const std::vector<int64_t>& dims = c.expected->dims;
        const bool complex = KindOf(c.expected->type) == ElementKind::kComplex;
        absl::StrAppendFormat(&out, "%d / %d elements mismatch (%.1f%%), rtol %g, atol %g%s\n",
                              m.mismatches, m.elements,
                              100.0 * static_cast<double>(m.mismatches) /
                                  static_cast<double>(std::max<uint64_t>(m.elements, 1)),
                              c.tolerance.rtol, c.tolerance.atol,
                              c.tolerance.equal_nan ? ", NaN == NaN" : "");
        if (m.max_abs_error) {
          absl::StrAppend(&out, "  greatest absolute difference ", Fmt(*m.max_abs_error),
                          " at ", Index(m.max_abs_error_index, dims), "\n");
          absl::StrAppend(&out, "  greatest relative difference ", Fmt(*m.max_rel_error),
                          " at ", Index(m.max_rel_error_index, dims), "\n");
        }
        if (m.expected_nan + m.actual_nan + m.expected_inf + m.actual_inf > 0) {
          absl::StrAppend(&out, "  NaN: expected ", m.expected_nan, ", actual ", m.actual_nan,
                          "; Inf: expected ", m.expected_inf, ", actual ", m.actual_inf, "\n");
        }
        for (const ElementMismatch& x : m.first_mismatches) {
          absl::StrAppend(&out, "  at ", Index(x.index, dims), ": expected ",
                          FmtValue(x.expected, complex), ", actual ",
                          FmtValue(x.actual, complex), "\n");
        }
      }
    }
  }
  absl::StrAppend(&out, "\n", r.pass ? "PASS" : "FAIL", ": ", r.tensors.size() - failed,
                  " of ", Counted(r.tensors.size(), "tensor"),
                  " pass (mode ", Sv(CompareModeName(r.options.mode)), ")\n");
  return out;
}

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

std::string NonFiniteSummary(const std::vector<TensorStatsEntry>& entries) {
  size_t count = 0;
  const TensorStatsEntry* first = nullptr;
  for (const TensorStatsEntry& e : entries) {
    if (e.stats.nan + e.stats.pos_inf + e.stats.neg_inf == 0) continue;
    ++count;
    if (first == nullptr) first = &e;
  }
  if (first == nullptr) return "";
  const TensorStats& s = first->stats;
  std::string nan = absl::StrCat(s.nan, " NaN");
  if (s.first_nan_index) {
    absl::StrAppend(&nan, ", first at ", Index(*s.first_nan_index, first->info.dims));
  }
  return absl::StrCat(count, " of ", entries.size(),
                      entries.size() == 1 ? " tensor holds" : " tensors hold",
                      " a NaN or an Inf; the first: ", first->source, " ", first->set, " ",
                      first->index, " (", nan, "; ", s.pos_inf, " +Inf; ", s.neg_inf,
                      " -Inf)");
}

bool AnyNonFinite(const std::vector<TensorStatsEntry>& entries) {
  for (const TensorStatsEntry& e : entries) {
    if (e.stats.nan + e.stats.pos_inf + e.stats.neg_inf > 0) return true;
  }
  return false;
}

namespace {

json MinMax(const TensorStatsEntry& e, bool max) {
  const TensorStats& s = e.stats;
  if (s.elements == 0) return nullptr;
  if (s.integral) {
    if (s.is_signed) return max ? s.max_signed : s.min_signed;
    return max ? s.max_unsigned : s.min_unsigned;
  }
  return Opt(max ? s.max : s.min);
}

}  // namespace

std::string StatsReportJson(const std::vector<TensorStatsEntry>& entries) {
  json tensors = json::array();
  for (const TensorStatsEntry& e : entries) {
    const TensorStats& s = e.stats;
    json mean = Opt(s.mean);
    if (s.mean_im) mean = json::array({Num(*s.mean), Num(*s.mean_im)});
    tensors.push_back(
        {{"source", e.source},
         {"set", e.set},
         {"index", e.index},
         {"dtype", LowerTypeName(e.info.type)},
         {"shape", e.info.dims},
         {"elements", s.elements},
         {"nan", s.nan},
         {"first_nan_index", s.first_nan_index
                                 ? json(UnravelIndex(*s.first_nan_index, e.info.dims))
                                 : json(nullptr)},
         {"pos_inf", s.pos_inf},
         {"neg_inf", s.neg_inf},
         {"zeros", s.zeros},
         {"min", MinMax(e, false)},
         {"max", MinMax(e, true)},
         {"mean", std::move(mean)},
         {"std", Opt(s.std)}});
  }
  return JsonText(json{{"tensors", std::move(tensors)}});
}

std::string StatsReportText(const std::vector<TensorStatsEntry>& entries) {
  TextTable table;
  table.Row({"tensor", "dtype", "shape", "elements", "nan", "first_nan", "+inf", "-inf",
             "zeros", "min", "max", "mean", "std"});
  std::string source;
  bool first = true;
  for (const TensorStatsEntry& e : entries) {
    if (first || e.source != source) {
      first = false;
      source = e.source;
      table.Line(absl::StrCat(source, ":"));
    }
    const TensorStats& s = e.stats;
    auto cell = [](const json& j) {
      if (j.is_null()) return std::string("-");
      if (j.is_number_float()) return Fmt(j.get<double>());
      if (j.is_string()) return j.get<std::string>();
      return JsonText(j, kJsonLine);
    };
    std::string mean = s.mean ? Fmt(*s.mean) : "-";
    if (s.mean_im) mean = absl::StrCat("(", Fmt(*s.mean), ",", Fmt(*s.mean_im), ")");
    const std::string first_nan =
        s.first_nan_index ? Index(*s.first_nan_index, e.info.dims) : "-";
    table.Row({absl::StrCat("  ", e.set, " ", e.index), std::string(LowerTypeName(e.info.type)),
               ShapeText(e.info.dims), absl::StrCat(s.elements), absl::StrCat(s.nan), first_nan,
               absl::StrCat(s.pos_inf), absl::StrCat(s.neg_inf), absl::StrCat(s.zeros),
               cell(MinMax(e, false)), cell(MinMax(e, true)), mean, s.std ? Fmt(*s.std) : "-"});
  }
  return table.Text();
}

}  // namespace decomposed
