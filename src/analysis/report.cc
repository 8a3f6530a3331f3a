// The reports' rendering (report.h): JSON and text of a compare report and
// of stats entries. The engines are compare_sets.cc and stats_sets.cc.
#include "decomposed/analysis/report.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/status.h"
#include "decomposed/xla/transpose.h"
#include "nlohmann/json.hpp"

namespace decomposed {
namespace {

using json = nlohmann::json;

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
