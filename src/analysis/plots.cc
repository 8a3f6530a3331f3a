#include "decomposed/analysis/plots.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decomposed/analysis/svg.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/status.h"

namespace decomposed {
namespace {

constexpr const char* kTargetColour = "#d62728";     // red, as the guidelines draw it
constexpr const char* kReferenceColour = "#1f77b4";  // blue
constexpr const char* kPointColour = "#2ca02c";
constexpr const char* kScatterColour = "#4682b4";
constexpr const char* kAxisColour = "#444444";
constexpr const char* kGridColour = "#e5e5e5";

std::string G(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.3g", v);
}
std::string G(const std::optional<double>& v) { return v ? G(*v) : "-"; }

// A plot area: data ranges mapped to a pixel box (y grows downwards).
struct Axes {
  double px, py, pw, ph;        // pixel box
  double x0, x1, y0, y1;        // data ranges (y in log10 units when log_y)
  bool log_y = false;
  double X(double x) const { return px + (x - x0) / (x1 - x0) * pw; }
  double Y(double y) const { return py + ph - (y - y0) / (y1 - y0) * ph; }
};

// A range widened when empty, so that a constant set still has an axis.
void Widen(double* lo, double* hi) {
  if (*hi > *lo) return;
  const double d = *lo != 0 ? std::fabs(*lo) * 0.5 : 1.0;
  *lo -= d;
  *hi += d;
}

// "Nice" tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of 10.
std::vector<double> Ticks(double lo, double hi, int target = 5) {
  std::vector<double> out;
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return out;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (span / step <= target + 1) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (out.size() > 20) break;
  }
  return out;
}

void DrawFrame(SvgWriter& svg, const Axes& a, const std::string& xlabel, const std::string& ylabel) {
  for (double t : Ticks(a.x0, a.x1)) {
    const double x = a.X(t);
    svg.Line(x, a.py, x, a.py + a.ph, kGridColour, 1);
    svg.Line(x, a.py + a.ph, x, a.py + a.ph + 4, kAxisColour, 1);
    svg.Text(x, a.py + a.ph + 16, G(t), 10, "middle");
  }
  if (a.log_y) {
    for (int d = static_cast<int>(std::ceil(a.y0)); d <= static_cast<int>(std::floor(a.y1)); ++d) {
      const double y = a.Y(d);
      svg.Line(a.px, y, a.px + a.pw, y, kGridColour, 1);
      svg.Line(a.px - 4, y, a.px, y, kAxisColour, 1);
      svg.Text(a.px - 6, y + 3.5, d <= 6 ? absl::StrCat(static_cast<int64_t>(std::pow(10, d)))
                                         : absl::StrCat("1e", d),
               10, "end");
    }
  } else {
    for (double t : Ticks(a.y0, a.y1)) {
      const double y = a.Y(t);
      svg.Line(a.px, y, a.px + a.pw, y, kGridColour, 1);
      svg.Line(a.px - 4, y, a.px, y, kAxisColour, 1);
      svg.Text(a.px - 6, y + 3.5, G(t), 10, "end");
    }
  }
  svg.Rect(a.px, a.py, a.pw, a.ph, "none", 1, kAxisColour);
  svg.Text(a.px + a.pw / 2, a.py + a.ph + 32, xlabel, 11, "middle");
  svg.Text(a.px - 46, a.py + a.ph / 2, ylabel, 11, "middle", "#222222", -90);
}

std::string Verdict(const ThreeWayMetrics& m) { return m.pass() ? "PASS" : "FAIL"; }

// One row of the three-way picture at height `top`.
void ThreeWayRow(SvgWriter& svg, double top, const std::string& name, const ThreeWayMetrics& m) {
  svg.Text(20, top + 20,
           absl::StrCat(name, ": ", Verdict(m), "   BC ",
                        m.bc ? absl::StrFormat("%.4f", *m.bc) : "-", "   sigma-ratio ",
                        G(m.sigma_ratio), "   worst L-inf ratio ", G(m.linf_ratio),
                        "   worst L2 ratio ", G(m.l2_ratio), "   (",
                        Counted(m.counted, "element"), ")"),
           13, "start", m.pass() ? "#1a7f37" : "#b00020");
  if (m.counted == 0 || m.edges.size() < 2) {
    svg.Text(80, top + 60, "no finite errors to draw", 11);
    return;
  }
  // The histograms, on BC's bins.
  double x0 = m.edges.front(), x1 = m.edges.back();
  Widen(&x0, &x1);
  uint64_t peak = 1;
  for (uint64_t c : m.target_counts) peak = std::max(peak, c);
  for (uint64_t c : m.reference_counts) peak = std::max(peak, c);
  Axes h{80, top + 40, 560, 220, x0, x1, std::log10(0.5), std::log10(static_cast<double>(peak)) * 1.08 + 0.1,
         true};
  DrawFrame(svg, h, "|error|: target |ACTUAL - BASELINE|, reference |EXPECTED - BASELINE|",
        "count");
  const bool flat = !(m.edges.back() > m.edges.front());
  for (int set = 0; set < 2; ++set) {
    const bool target = set == 1;  // reference first, target drawn over it
    const std::vector<uint64_t>& counts = target ? m.target_counts : m.reference_counts;
    svg.Attr("class", "histogram").Attr("data-set", target ? "target" : "reference")
        .Attr("data-counted", absl::StrCat(m.counted));
    svg.BeginGroup();
    for (size_t j = 0; j < counts.size(); ++j) {
      if (counts[j] == 0) continue;
      double l = m.edges[j], r = m.edges[j + 1];
      if (flat) {
        l = h.x0 + (h.x1 - h.x0) * 0.48;
        r = h.x0 + (h.x1 - h.x0) * 0.52;
      }
      const double yt = h.Y(std::log10(static_cast<double>(counts[j])));
      const double yb = h.Y(h.y0);
      svg.Attr("class", target ? "bin target" : "bin reference")
          .Attr("data-count", absl::StrCat(counts[j]));
      svg.Rect(h.X(l), yt, std::max(h.X(r) - h.X(l), 0.5), yb - yt,
               target ? kTargetColour : kReferenceColour, 0.55);
    }
    svg.EndGroup();
  }
  // sigma (RMS) of each set, dashed.
  for (int set = 0; set < 2; ++set) {
    const bool target = set == 1;
    const double s = target ? m.target.rms : m.reference.rms;
    if (!(s >= h.x0 && s <= h.x1)) continue;
    svg.Attr("class", target ? "sigma target" : "sigma reference");
    svg.Line(h.X(s), h.py, h.X(s), h.py + h.ph, target ? kTargetColour : kReferenceColour, 1.5,
             "5,4");
  }
  // Legend.
  const double lx = h.px + h.pw - 250, ly = h.py + 8;
  svg.Rect(lx, ly, 244, 40, "#ffffff", 0.85, "#cccccc");
  svg.Rect(lx + 8, ly + 7, 12, 10, kReferenceColour, 0.55);
  svg.Text(lx + 26, ly + 16,
           absl::StrCat("reference (EXPECTED) sigma ", G(m.reference.rms)), 10);
  svg.Rect(lx + 8, ly + 23, 12, 10, kTargetColour, 0.55);
  svg.Text(lx + 26, ly + 32, absl::StrCat("target (ACTUAL) sigma ", G(m.target.rms)), 10);

  // The QQ-plot.
  double q0 = std::numeric_limits<double>::infinity(), q1 = -q0;
  for (const std::vector<double>* v : {&m.target_quantiles, &m.reference_quantiles}) {
    for (double q : *v) {
      q0 = std::min(q0, q);
      q1 = std::max(q1, q);
    }
  }
  if (!(q1 >= q0)) return;
  Widen(&q0, &q1);
  Axes q{760, top + 40, 300, 220, q0, q1, q0, q1, false};
  DrawFrame(svg, q, "reference error quantiles", "target error quantiles");
  svg.Attr("class", "diagonal");
  svg.Line(q.X(q0), q.Y(q0), q.X(q1), q.Y(q1), kTargetColour, 1, "5,4");
  svg.Attr("class", "qqplot").Attr("data-points", absl::StrCat(m.target_quantiles.size()));
  svg.BeginGroup();
  const size_t n = std::min(m.target_quantiles.size(), m.reference_quantiles.size());
  for (size_t k = 0; k < n; ++k) {
    svg.Attr("class", "qq");
    svg.Circle(q.X(m.reference_quantiles[k]), q.Y(m.target_quantiles[k]), 2.2, kPointColour,
               0.75);
  }
  svg.EndGroup();
}

}  // namespace

std::string ThreeWaySvg(const ThreeWayReport& report) {
  // Rows: all (when there are several tensors), then the failing tensors,
  // then the others, each group in index order.
  std::vector<const ThreeWayTensor*> order;
  for (const ThreeWayTensor& t : report.tensors) {
    if (t.verdict != TensorVerdict::kPass) order.push_back(&t);
  }
  for (const ThreeWayTensor& t : report.tensors) {
    if (t.verdict == TensorVerdict::kPass) order.push_back(&t);
  }
  const size_t shown = std::min(order.size(), kMaxPlotTensors);
  const bool with_all = report.tensors.size() != 1;
  const size_t rows = shown + (with_all ? 1 : 0);
  constexpr double kRow = 320;
  const double height = 60 + kRow * static_cast<double>(std::max<size_t>(rows, 1)) + 30;
  SvgWriter svg(1100, height);
  svg.Text(20, 28,
           absl::StrCat("three-way comparison: ", report.pass ? "PASS" : "FAIL",
                        "  (BC >= ", G(report.options.bc_threshold), " or sigma-ratio <= ",
                        G(report.options.max_sigma_ratio), "; worst L-inf ratio < ",
                        G(report.options.max_linf_ratio), "; worst L2 ratio < ",
                        G(report.options.max_l2_ratio), ")"),
           15, "start", report.pass ? "#1a7f37" : "#b00020");
  if (!report.run_names.empty()) {
    const auto& n = report.run_names.front();
    svg.Text(20, 46,
             absl::StrCat("ACTUAL ", n[1], "   EXPECTED ", n[0], "   BASELINE ", n[2],
                          report.run_names.size() > 1
                              ? absl::StrCat("   (+", report.run_names.size() - 1, " runs)")
                              : ""),
             10, "start", "#555555");
  }
  double top = 60;
  if (with_all) {
    svg.Attr("class", "row").Attr("data-tensor", "all");
    svg.BeginGroup();
    ThreeWayRow(svg, top, "all tensors", report.all);
    svg.EndGroup();
    top += kRow;
  }
  for (size_t k = 0; k < shown; ++k) {
    const ThreeWayTensor& t = *order[k];
    svg.Attr("class", "row").Attr("data-tensor", absl::StrCat(t.index));
    svg.BeginGroup();
    std::string name = absl::StrCat("tensor ", t.index);
    if (t.verdict == TensorVerdict::kMissing || t.verdict == TensorVerdict::kShapeMismatch) {
      svg.Text(20, top + 20,
               absl::StrCat(name, ": ", std::string(TensorVerdictName(t.verdict))), 13, "start",
               "#b00020");
    } else {
      ThreeWayRow(svg, top, name, t.metrics);
    }
    svg.EndGroup();
    top += kRow;
  }
  if (order.size() > shown) {
    svg.Text(20, top + 16,
             absl::StrCat(order.size() - shown, " more tensors not drawn (the report has them)"),
             11);
  }
  return svg.Finish();
}

std::string ScatterSvg(const CompareReport& report, const std::vector<ScatterTensor>& points) {
  std::vector<const ScatterTensor*> drawn;
  for (const ScatterTensor& t : points) {
    if (!t.points.empty() && drawn.size() < kMaxPlotTensors) drawn.push_back(&t);
  }
  constexpr double kPanel = 520, kRowH = 560;
  const size_t columns = drawn.size() > 1 ? 2 : 1;
  const size_t rows = (drawn.size() + columns - 1) / columns;
  const double height = 50 + kRowH * static_cast<double>(std::max<size_t>(rows, 1));
  SvgWriter svg(static_cast<double>(columns) * (kPanel + 10) + 30, height);
  svg.Text(20, 28,
           absl::StrCat("compare: actual against expected (", report.pass ? "PASS" : "FAIL",
                        ", mode ", std::string(CompareModeName(report.options.mode)), ")"),
           15, "start", report.pass ? "#1a7f37" : "#b00020");
  if (drawn.empty()) svg.Text(20, 70, "no tensor to draw", 12);
  for (size_t k = 0; k < drawn.size(); ++k) {
    const ScatterTensor& t = *drawn[k];
    const TensorComparison* c = nullptr;
    for (const TensorComparison& x : report.tensors) {
      if (x.index == t.index) c = &x;
    }
    const double left = 20 + static_cast<double>(k % 2) * (kPanel + 10);
    const double top = 50 + static_cast<double>(k / 2) * kRowH;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const ScatterPoint& p : t.points) {
      for (double v : {p.expected, p.actual}) {
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
    svg.Attr("class", "scatter").Attr("data-tensor", absl::StrCat(t.index))
        .Attr("data-points", absl::StrCat(t.points.size()));
    svg.BeginGroup();
    std::string title = absl::StrCat("tensor ", t.index);
    if (c) {
      absl::StrAppend(&title, ": ", std::string(TensorVerdictName(c->verdict)));
      if (c->metrics.max_abs_error) {
        absl::StrAppend(&title, "   max |diff| ", G(*c->metrics.max_abs_error));
      }
      if (c->metrics.max_rel_error) {
        absl::StrAppend(&title, "   max rel ", G(*c->metrics.max_rel_error));
      }
    }
    absl::StrAppend(&title, "   ", t.points.size(), " of ", Counted(t.elements, "element"));
    svg.Text(left, top + 18, title, 12, "start",
             c && c->verdict != TensorVerdict::kPass ? "#b00020" : "#222222");
    if (!(hi >= lo)) {
      svg.Text(left + 60, top + 60, "no finite values to draw", 11);
      svg.EndGroup();
      continue;
    }
    Widen(&lo, &hi);
    const double pad = (hi - lo) * 0.03;
    Axes a{left + 60, top + 36, 440, 440, lo - pad, hi + pad, lo - pad, hi + pad, false};
    DrawFrame(svg, a, "expected", "actual");
    svg.Attr("class", "diagonal");
    svg.Line(a.X(lo), a.Y(lo), a.X(hi), a.Y(hi), kTargetColour, 1, "5,4");
    for (const ScatterPoint& p : t.points) {
      if (!std::isfinite(p.expected) || !std::isfinite(p.actual)) continue;
      svg.Attr("class", "point");
      svg.Circle(a.X(p.expected), a.Y(p.actual), 1.6, kScatterColour, 0.5);
    }
    svg.EndGroup();
  }
  return svg.Finish();
}

absl::Status WriteSvgFile(const std::string& path, std::string_view svg) {
  // AtomicFileSink's errors name the path.
  AtomicFileSink out;
  if (absl::Status s = out.Open(path); !s.ok()) return s;
  out.Write(svg);
  return out.Commit();
}

}  // namespace decomposed
