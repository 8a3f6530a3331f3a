// SvgWriter: a small SVG 1.1 document builder, enough for the analysis
// layer's pictures (analysis/plots.h): rectangles, lines, polylines,
// circles, text and groups, written as one standalone document that a
// browser, rsvg-convert or an XML parser reads. No dependency: coordinates
// are printed with two decimals, colours and dash patterns are strings the
// caller gives ("#d62728", "4,3"), and text is escaped for XML (invalid
// UTF-8 bytes and control characters become '?').
//
// Attributes a test or a script may read back are the caller's: Attr()
// adds `name="value"` to the next element (e.g. data-count="12").
//
// Example:
//   decomposed::SvgWriter svg(400, 300);
//   svg.Rect(10, 10, 50, 80, "#1f77b4", 0.6);
//   svg.Line(0, 0, 400, 300, "#d62728", 1.5, "4,3");
//   svg.Text(200, 20, "title", 14, "middle");
//   std::string doc = svg.Finish();
#ifndef DECOMPOSED_ANALYSIS_SVG_H_
#define DECOMPOSED_ANALYSIS_SVG_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "decomposed/status.h"

namespace decomposed {

// `s` escaped for XML text and attribute values; bytes that are not valid
// UTF-8, and control characters other than tab and newline, become '?'.
inline std::string SvgEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? '?' : static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A well-formed multi-byte sequence (no overlongs, no surrogates, at
    // most U+10FFFF) is copied; anything else is one '?' per byte.
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    bool ok = n > 0 && c <= 0xf4 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    }
    if (ok && n == 3) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    }
    if (ok && n == 4) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      out += '?';
      ++i;
      continue;
    }
    out.append(s.data() + i, n);
    i += n;
  }
  return out;
}

class SvgWriter {
 public:
  SvgWriter(double width, double height) {
    absl::StrAppend(&out_, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
                    N(width), "\" height=\"", N(height), "\" viewBox=\"0 0 ", N(width), " ",
                    N(height), "\" font-family=\"sans-serif\">\n");
    Rect(0, 0, width, height, "#ffffff");
  }

  // Adds name="value" (value escaped) to the next element written.
  SvgWriter& Attr(std::string_view name, std::string_view value) {
    absl::StrAppend(&pending_, " ", Sv(name), "=\"", SvgEscape(value), "\"");
    return *this;
  }

  void BeginGroup() { absl::StrAppend(&out_, "<g", Take(), ">\n"); }
  void EndGroup() { out_ += "</g>\n"; }

  void Rect(double x, double y, double w, double h, std::string_view fill,
            double opacity = 1, std::string_view stroke = "") {
    absl::StrAppend(&out_, "<rect x=\"", N(x), "\" y=\"", N(y), "\" width=\"", N(w),
                    "\" height=\"", N(h), "\" fill=\"", SvgEscape(fill), "\"");
    if (opacity < 1) absl::StrAppend(&out_, " fill-opacity=\"", N(opacity), "\"");
    if (!stroke.empty()) absl::StrAppend(&out_, " stroke=\"", SvgEscape(stroke), "\"");
    absl::StrAppend(&out_, Take(), "/>\n");
  }

  void Line(double x1, double y1, double x2, double y2, std::string_view stroke,
            double width = 1, std::string_view dash = "") {
    absl::StrAppend(&out_, "<line x1=\"", N(x1), "\" y1=\"", N(y1), "\" x2=\"", N(x2),
                    "\" y2=\"", N(y2), "\" stroke=\"", SvgEscape(stroke), "\" stroke-width=\"",
                    N(width), "\"");
    if (!dash.empty()) absl::StrAppend(&out_, " stroke-dasharray=\"", SvgEscape(dash), "\"");
    absl::StrAppend(&out_, Take(), "/>\n");
  }

  void Polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double width = 1, std::string_view dash = "") {
    absl::StrAppend(&out_, "<polyline fill=\"none\" stroke=\"", SvgEscape(stroke),
                    "\" stroke-width=\"", N(width), "\"");
    if (!dash.empty()) absl::StrAppend(&out_, " stroke-dasharray=\"", SvgEscape(dash), "\"");
    out_ += " points=\"";
    for (size_t i = 0; i < points.size(); ++i) {
      absl::StrAppend(&out_, i ? " " : "", N(points[i].first), ",", N(points[i].second));
    }
    absl::StrAppend(&out_, "\"", Take(), "/>\n");
  }

  void Circle(double cx, double cy, double r, std::string_view fill, double opacity = 1) {
    absl::StrAppend(&out_, "<circle cx=\"", N(cx), "\" cy=\"", N(cy), "\" r=\"", N(r),
                    "\" fill=\"", SvgEscape(fill), "\"");
    if (opacity < 1) absl::StrAppend(&out_, " fill-opacity=\"", N(opacity), "\"");
    absl::StrAppend(&out_, Take(), "/>\n");
  }

  // anchor: "start", "middle" or "end"; `rotate` degrees about (x, y).
  void Text(double x, double y, std::string_view text, double size = 11,
            std::string_view anchor = "start", std::string_view fill = "#222222",
            double rotate = 0) {
    absl::StrAppend(&out_, "<text x=\"", N(x), "\" y=\"", N(y), "\" font-size=\"", N(size),
                    "\" text-anchor=\"", SvgEscape(anchor), "\" fill=\"", SvgEscape(fill), "\"");
    if (rotate != 0) {
      absl::StrAppend(&out_, " transform=\"rotate(", N(rotate), " ", N(x), " ", N(y), ")\"");
    }
    absl::StrAppend(&out_, Take(), ">", SvgEscape(text), "</text>\n");
  }

  // The document; the writer is then empty.
  std::string Finish() {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  // A coordinate: two decimals, no "-0.00", 0 for a non-finite value.
  static std::string N(double v) {
    if (!std::isfinite(v)) v = 0;
    std::string s = absl::StrFormat("%.2f", v);
    if (s == "-0.00") s = "0.00";
    return s;
  }
  std::string Take() { return std::exchange(pending_, std::string()); }

  std::string out_;
  std::string pending_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_SVG_H_
