// XLA's HLO text parsed into an HloModuleProto (docs/hlo.md §3).
//
// ParseHloText reads every spelling XLA's printer writes (the long, modern
// and short styles of hlo/text.h) and what XLA's own parser accepts besides:
// names with or without `%`, operand shapes present or absent and checked
// against the operand when present, attributes in any order, `/* ... */`
// and `//` comments, nested anonymous operands (`add(f32[] sqrt(%x), %y)`),
// no `HloModule` header, no `ENTRY` (the last computation is the entry), no
// `ROOT` (the last instruction is the root), shapes without layouts (the
// default layout), literals in every form XLA prints (`{...}` gives an
// elided literal: IsElidedLiteral, hlo/text.h).
//
// What the proto gets, as XLA's parser and HloModule::ToProto give it:
//   * ids: one counter from 1 over the module, in the order computations
//     end in the text (a computation written inside an attribute ends
//     before the computation that holds it): each computation's
//     instructions in text order (an anonymous operand before its user),
//     then the computation itself. Names are kept; a name used again in
//     another computation is renamed as XLA's NameUniquer renames it
//     (`x` -> `x.1`), a name used twice in one computation is an error.
//   * computations in text order with root_id, program_shape (parameters
//     by number, with their names) and is_fusion_computation for those a
//     fusion calls; the entry's id and name; the module's id (the entry's);
//   * host_program_shape from `entry_computation_layout`, or else from the
//     entry's parameters and root (extras.has_entry_computation_layout is
//     then false); `is_scheduled=true` gives a schedule in text order;
//     `input_output_alias`, `buffer_donor`, `frontend_attributes` and the
//     stack frame index their proto fields; the module config's attributes
//     (`replica_count`, `num_partitions`, ...) go to extras verbatim.
//   * each attribute to its field, only when the text gives it (a compare
//     without `type=` has no comparison_type; a custom-call without
//     `api_version=` gets API_VERSION_ORIGINAL, as XLA's does).
//
// Errors: kInvalidArgument, `line L, column C: expected X, found Y`, naming
// the token found: a syntax error, an unknown opcode or attribute (the
// message names it), an attribute the opcode requires missing, an operand
// or called computation that is not defined before, a duplicate name, a
// declared operand shape that is not the operand's, a literal whose values
// do not fill its shape, a value out of its type's range. The text is read
// once; nothing is allocated in proportion to a size the text declares (a
// literal is checked element by element against what is written), and
// nesting deeper than HloParseOptions::max_depth is an error, not a deep
// recursion.
//
// Example:
//   absl::StatusOr<decomposed::hlo::ParsedHloText> t =
//       decomposed::hlo::ParseHloText(R"(
//     HloModule m
//     ENTRY main {
//       p = f32[2] parameter(0)
//       ROOT n = f32[2] negate(p)
//     })");
//   if (!t.ok()) return t.status();
//   t->module.computations(0).instructions(1).opcode();  // "negate"
//   t->extras.has_entry_computation_layout;              // false
#ifndef DECOMPOSED_HLO_PARSE_H_
#define DECOMPOSED_HLO_PARSE_H_

#include <cstddef>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "decomposed/hlo/text.h"

namespace decomposed::hlo {

struct HloParseOptions {
  // Nesting of anonymous operands, computations written inside attributes,
  // tuple shapes and literals, sharding lists: deeper than any real module
  // (tuples nest at most 64 deep, limits::kMaxTupleDepth), shallow enough
  // that the parser's recursion stays within a thread's stack.
  static constexpr int kDefaultMaxDepth = 128;
  int max_depth = kDefaultMaxDepth;
  // Text larger than this, or than 4 GiB whatever this says, is refused
  // before it is read (kResourceExhausted): the parser keeps byte offsets
  // in 32 bits, and its memory stays a small multiple of the text.
  static constexpr size_t kDefaultMaxTextBytes = size_t{1} << 32;
  size_t max_text_bytes = kDefaultMaxTextBytes;
};

absl::StatusOr<ParsedHloText> ParseHloText(std::string_view text,
                                           const HloParseOptions& options = {});

// The same parse with the module written, not built: the serialized
// HloModuleProto goes through `write` in pieces (a false return stops the
// output, kUnavailable), and the text's extras are returned. Each
// instruction is serialized as it ends, so the parse holds about the
// serialized module's size (protobuf's objects for a module take some ten
// times that): what `decomposed hlo TEXT --to-proto` uses. The bytes are
// protobuf's deterministic serialization of the module ParseHloText gives
// for the same text, and the errors are its errors, but for a module (or
// an instruction) that would serialize past protobuf's 2 GiB limit, which
// only this refuses (kResourceExhausted). An error comes before anything
// is written, but for a write that fails: the pieces written before it
// stay written (write to a temp file, as the CLI does).
//
// Example:
//   std::string bytes;
//   absl::StatusOr<decomposed::hlo::HloModuleTextExtras> extras =
//       decomposed::hlo::ParseHloTextToProto(
//           "ENTRY e { ROOT p = f32[2] parameter(0) }", [&](std::string_view p) {
//             bytes.append(p);
//             return true;
//           });
//   if (!extras.ok()) return extras.status();
absl::StatusOr<HloModuleTextExtras> ParseHloTextToProto(
    std::string_view text, absl::FunctionRef<bool(std::string_view)> write,
    const HloParseOptions& options = {});

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_PARSE_H_
