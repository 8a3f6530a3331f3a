// torch-xla's graph dump: the file XLA_SAVE_TENSORS_FILE names, written with
// XLA_SAVE_TENSORS_FMT=hlo. Each graph torch-xla executes appends a report
// (a `[ScheduleSyncTensorsGraph]`-style title line, `TensorsGraphInfo:`,
// the Python frames of the call, `Hashes: (...)`), then the module's HLO
// text between a line `## BEGIN_GRAPH` and a line `## END_GRAPH`.
//
// SplitTensorsDump cuts such a file into the pieces around each module's
// text, so that the modules can be parsed (hlo/parse.h) and printed
// (hlo/print.h) one by one, and the file printed again with every byte that
// is not a module kept: `before` of each graph, the module texts reprinted,
// then `after`.
//
// Example:
//   std::string_view text =
//       "[ScheduleSyncTensorsGraph]\n## BEGIN_GRAPH\nHloModule m\n\n"
//       "ENTRY e {\n  ROOT c = f32[] constant(1)\n}\n\n## END_GRAPH\n";
//   absl::StatusOr<decomposed::hlo::TensorsDump> d =
//       decomposed::hlo::SplitTensorsDump(text);
//   if (!d.ok()) return d.status();
//   for (const decomposed::hlo::TensorsDumpGraph& g : d->graphs) {
//     absl::StatusOr<decomposed::hlo::ParsedHloText> m =
//         decomposed::hlo::ParseHloText(g.text);
//     if (!m.ok()) return m.status();  // its line N is line g.line + N - 1
//   }
#ifndef DECOMPOSED_HLO_TENSORS_DUMP_H_
#define DECOMPOSED_HLO_TENSORS_DUMP_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/print.h"
#include "decomposed/io/byte_sink.h"

namespace decomposed::hlo {

struct TensorsDumpGraph {
  // Every byte since the previous graph's text (the file's start for the
  // first): the previous `## END_GRAPH` line, blank lines, this graph's
  // report and its `## BEGIN_GRAPH` line.
  std::string_view before;
  // The report alone: the lines before `## BEGIN_GRAPH`, without the blank
  // lines around them (its first line is the title, e.g.
  // `[ScheduleSyncTensorsGraph]`).
  std::string_view report;
  // The module's text, up to and including the newline after its last
  // non-blank line and the empty line after it (XLA's printer ends a module
  // with one), when there is one; further blank lines before
  // `## END_GRAPH` belong to the next `before` (or to `after`).
  std::string_view text;
  // The 1-based line of the file where `text` starts.
  int64_t line = 0;
};

struct TensorsDump {
  std::vector<TensorsDumpGraph> graphs;
  // The bytes after the last graph's text.
  std::string_view after;
};

// True when `text` reads as such a dump: its first line that is not blank
// is `## BEGIN_GRAPH`, or a `[Title]` line that a `## BEGIN_GRAPH` line
// follows later in the file. (HLO text never starts with `[`; a `#` line
// is a comment to the HLO text detector, so this is asked first.)
bool LooksLikeTensorsDump(std::string_view text);

// The graphs of a dump, in file order. Errors ("line N: expected ...,
// found ...") for a `## BEGIN_GRAPH` without its `## END_GRAPH` before the
// next `## BEGIN_GRAPH` or the end, an `## END_GRAPH` without a
// `## BEGIN_GRAPH`, an empty module text, and a file with no graph.
absl::StatusOr<TensorsDump> SplitTensorsDump(std::string_view text);

// Graph `i` of `dump` parsed (hlo/parse.h) into a module view; `*extras`,
// when given, receives its header's config attributes. Errors are the
// parser's and the view's, prefixed "graph <i>, whose text starts at line
// <line>: ".
absl::StatusOr<std::unique_ptr<HloModule>> ParseTensorsDumpGraph(
    const TensorsDump& dump, size_t i, HloModuleTextExtras* extras = nullptr);

// The dump printed again into `sink`: each graph's `before` as it was, its
// module parsed and printed in `options`' style (its header's config
// attributes kept), then `after`. For a dump whose modules are in that
// style as XLA prints them, the same bytes again. Errors name the graph and
// the line its text starts at.
template <ByteSink S>
absl::Status PrintTensorsDump(const TensorsDump& dump,
                              const HloPrintOptions& options, S& sink) {
  for (size_t i = 0; i < dump.graphs.size(); ++i) {
    HloModuleTextExtras extras;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseTensorsDumpGraph(dump, i, &extras);
    if (!m.ok()) return m.status();
    if (!sink.Write(dump.graphs[i].before)) return sink.status();
    if (absl::Status s = PrintHloModule(**m, options, sink, &extras); !s.ok()) {
      if (!sink.status().ok()) return s;
      return absl::Status(s.code(), absl::StrCat("graph ", i, ", whose text starts at line ",
                                                 dump.graphs[i].line, ": ", s.message()));
    }
  }
  if (!sink.Write(dump.after)) return sink.status();
  return sink.status();
}

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_TENSORS_DUMP_H_
