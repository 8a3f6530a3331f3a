// XLA's HLO text, printed from the module view (hlo/module.h) byte for byte
// as XLA's printer writes it, in the three styles of hlo/text.h
// (docs/hlo.md §2):
//
//   kLong    HloPrintOptions() of 2022-2025 (torch-neuronx, torch-xla dumps):
//            `%` names, operand shapes, metadata, program shapes in the
//            computation headers, control predecessors, `/*index=5*/`
//            before every 5th operand, constants of more than 10 elements
//            as `{...}`.
//   kModern  HloPrintOptions::Default() since 2025: kLong without operand
//            shapes.
//   kShort   HloPrintOptions::ShortParsable(): no `%`, no operand shapes, no
//            metadata, no program shapes, no control predecessors, no index
//            comments, every constant in full.
//
// The module header carries is_scheduled, input_output_alias, buffer_donor,
// entry_computation_layout (from host_program_shape, or the entry's
// parameters and root when the proto has none) and the module's frontend
// attributes; computations come callees first (XLA's DFS post-order of the
// call graph over computations sorted by id), the entry last; instructions
// in XLA's post-order (from each instruction without users, in id order,
// depth first: control predecessors, the last first, then operands, the
// first first, then the instruction) or in the schedule's order when the
// module has one. The rules, with what XLA cannot print: docs/hlo.md §2.
//
// The text is produced in chunks (of about 256 KiB) handed to the sink as
// they fill: a module of any size never has its whole text in memory.
//
// Errors (kInvalidArgument, naming the computation and the instruction):
// what XLA could not load and so never prints -- a shape of an element type
// XLA does not know, a constant whose literal data does not match its shape,
// a parameter number missing from a computation, a schedule that names an
// instruction twice, one not in its computation, or leaves one out. A sink
// that fails stops the printing; its status is returned.
//
// Example:
//   decomposed::AtomicFileSink out;
//   if (auto s = out.Open("/tmp/m.hlo"); !s.ok()) return s;
//   decomposed::hlo::HloPrintOptions options;
//   options.style = decomposed::hlo::HloTextStyle::kShort;
//   if (auto s = decomposed::hlo::PrintHloModule(*module, options, out);
//       !s.ok()) return s;
//   return out.Commit();
#ifndef DECOMPOSED_HLO_PRINT_H_
#define DECOMPOSED_HLO_PRINT_H_

#include <string>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/text.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

struct HloPrintOptions {
  HloTextStyle style = HloTextStyle::kLong;
  // Every constant in full, also in the long and modern styles (the short
  // style always prints them). A constant whose literal was elided
  // (IsElidedLiteral) prints `{...}` whatever this says.
  bool print_large_constants = false;
  // Metadata (instructions' and shardings' `metadata={...}`, the stack
  // frame index) whatever the style says: XLA's dumps are the short style
  // with metadata (HloModule::ToString() sets print_metadata unless
  // xla_dump_disable_metadata). Unset: the style's (long and modern yes,
  // short no).
  std::optional<bool> print_metadata;
  // XLA's option of the same name: a computation of more than 5
  // instructions closes with `} // <name>` (its name as is, no `%`). Unset:
  // on when the extras of a parsed text say it had them, else off.
  std::optional<bool> print_name_after_closing_brace;
  // XLA's print_operand_index_annotation_interval: `/*index=N*/` before
  // every N-th operand of an operand list (0: none; a negative N as its
  // absolute value, as XLA's `i % N` has it). Unset: the style's
  // (5 in long and modern, 0 in short; 5 in short too when the extras of
  // a parsed text say it had them).
  std::optional<int64_t> print_operand_index_annotation_interval;
};

namespace print_internal {
// Receives the text chunk by chunk; false stops the printing.
using ChunkWriter = bool (*)(void* sink, std::string_view chunk);
// The non-template printer behind PrintHloModule.
absl::Status PrintHloModule(const HloModule& module,
                            const HloPrintOptions& options,
                            const HloModuleTextExtras* extras,
                            ChunkWriter write, void* sink);
}  // namespace print_internal

// Streams `module` as XLA's text into `sink`. `extras` (may be null) adds
// the module-config header attributes a parsed text carried, in XLA's
// position, and says whether entry_computation_layout is printed (it is
// when `extras` is null). Returns the first error (see the file comment),
// or the sink's status when it failed.
template <ByteSink S>
absl::Status PrintHloModule(const HloModule& module,
                            const HloPrintOptions& options, S& sink,
                            const HloModuleTextExtras* extras = nullptr) {
  absl::Status status = print_internal::PrintHloModule(
      module, options, extras,
      [](void* s, std::string_view chunk) {
        return static_cast<S*>(s)->Write(chunk);
      },
      &sink);
  if (status.ok() && !sink.status().ok()) return sink.status();
  return status;
}

// The whole text in a string; "" when PrintHloModule fails (call it with a
// StringSink to see why).
std::string PrintHloModuleToString(const HloModule& module,
                                   const HloPrintOptions& options = {},
                                   const HloModuleTextExtras* extras = nullptr);

// A shape as XLA prints it: `f32[2,3]{1,0}`, `f32[]`, `(f32[2]{0}, s32[])`
// (with `/*index=5*/` before every 5th tuple element), `token[]`,
// `f32[<=4]{0}`, `bf16[8,128]{1,0:T(8,128)(2,1)}`; without layouts when
// `print_layout` is false. An element type XLA does not know prints as
// `<type N>` (the module printer reports it as an error instead).
std::string ShapeToText(const xla::ShapeProto& shape, bool print_layout = true);

// A literal as a constant prints it between the parentheses: `42`,
// `true`, `{1, 2, 3}`, `{ { 1, 2 }, { 3, 4 } }`, `nan`, `(1, 2)` for a
// complex scalar, `( 1, {2, 3} )` for a tuple, and `{...}` for an elided
// literal or, unless `print_large_constants`, a literal of more than 10
// elements. A literal whose data does not match its shape prints as
// `/*malformed literal: <why>*/{...}`.
std::string LiteralToText(const xla::LiteralProto& literal,
                          bool print_large_constants = true);

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_PRINT_H_
