#include "decomposed/hlo/tensors_dump.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/status.h"

namespace decomposed::hlo {
namespace {

constexpr std::string_view kBegin = "## BEGIN_GRAPH";
constexpr std::string_view kEnd = "## END_GRAPH";
const absl::string_view kBeginA = "## BEGIN_GRAPH";
const absl::string_view kEndA = "## END_GRAPH";

// A line without its newline, a carriage return or trailing blanks.
std::string_view Trimmed(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' ||
                           line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  return line;
}

bool Blank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f') return false;
  }
  return true;
}

// The line starting at `pos`, with its newline (none at the end of text).
std::string_view LineAt(std::string_view text, size_t pos) {
  const size_t nl = text.find('\n', pos);
  return text.substr(pos, nl == std::string_view::npos ? std::string_view::npos
                                                       : nl + 1 - pos);
}

absl::Status LineError(int64_t line, std::string_view expected,
                       std::string_view found) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", line, ": expected ", Sv(expected), ", found ", Sv(found)));
}

}  // namespace

bool LooksLikeTensorsDump(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view line = LineAt(text, pos);
    pos += line.size();
    if (Blank(line)) continue;
    const std::string_view t = Trimmed(line);
    if (t == kBegin) return true;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
      return text.find(absl::StrCat("\n", kBeginA), pos - 1) != std::string_view::npos;
    }
    return false;
  }
  return false;
}

absl::StatusOr<TensorsDump> SplitTensorsDump(std::string_view text) {
  TensorsDump dump;
  size_t piece_start = 0;  // where the next graph's `before` starts
  bool inside = false;
  size_t text_start = 0, last_nonblank_end = std::string_view::npos;
  size_t report_start = std::string_view::npos, report_end = 0;
  int64_t text_line = 0, begin_line = 0, line_no = 0;
  std::string_view report;
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view line = LineAt(text, pos);
    const size_t start = pos;
    pos += line.size();
    ++line_no;
    const std::string_view t = Trimmed(line);
    if (!inside) {
      if (t == kBegin) {
        inside = true;
        begin_line = line_no;
        text_start = pos;
        text_line = line_no + 1;
        last_nonblank_end = std::string_view::npos;
        report = report_start == std::string_view::npos
                     ? std::string_view()
                     : text.substr(report_start, report_end - report_start);
      } else if (t == kEnd) {
        return LineError(line_no, absl::StrCat("`", kBeginA, "` before `", kEndA, "`"),
                         absl::StrCat("`", kEndA, "` outside a graph"));
      } else if (!Blank(line)) {
        if (report_start == std::string_view::npos) report_start = start;
        report_end = start + t.size();
      }
      continue;
    }
    if (t == kEnd) {
      if (last_nonblank_end == std::string_view::npos) {
        return LineError(line_no,
                         absl::StrCat("the module's HLO text after `", kBeginA,
                                      "` of line ", begin_line),
                         absl::StrCat("`", kEndA, "` first"));
      }
      // XLA's printer ends a module with a blank line: it is the text's.
      size_t end = last_nonblank_end;
      if (end < start && text[end] == '\n') ++end;
      TensorsDumpGraph g;
      g.before = text.substr(piece_start, text_start - piece_start);
      g.report = report;
      g.text = text.substr(text_start, end - text_start);
      g.line = text_line;
      dump.graphs.push_back(g);
      piece_start = end;
      inside = false;
      report_start = std::string_view::npos;
    } else if (t == kBegin) {
      return LineError(line_no,
                       absl::StrCat("`", kEndA, "` for the `", kBeginA, "` of line ",
                                    begin_line),
                       absl::StrCat("another `", kBeginA, "`"));
    } else if (!Blank(line)) {
      last_nonblank_end = pos;
    }
  }
  if (inside) {
    return LineError(line_no,
                     absl::StrCat("`", kEndA, "` for the `", kBeginA, "` of line ",
                                  begin_line),
                     "the end of the file");
  }
  if (dump.graphs.empty()) {
    return LineError(line_no, absl::StrCat("a `", kBeginA, "` line"),
                     "none in the file");
  }
  dump.after = text.substr(piece_start);
  return dump;
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseTensorsDumpGraph(
    const TensorsDump& dump, size_t i, HloModuleTextExtras* extras) {
  const TensorsDumpGraph& g = dump.graphs.at(i);
  auto where = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("graph ", i, ", whose text starts at line ",
                                               g.line, ": ", s.message()));
  };
  absl::StatusOr<ParsedHloText> t = ParseHloText(g.text);
  if (!t.ok()) return where(t.status());
  if (extras != nullptr) *extras = std::move(t->extras);
  absl::StatusOr<std::unique_ptr<HloModule>> m = HloModule::Create(std::move(t->module));
  if (!m.ok()) return where(m.status());
  return m;
}

}  // namespace decomposed::hlo
