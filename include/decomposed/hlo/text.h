// What an HLO text carries besides its HloModuleProto, shared by the
// printer (hlo/print.h) and the parser (hlo/parse.h).
//
// XLA keeps some module header attributes in its HloModuleConfig, not in
// HloModuleProto: `replica_count=2`, `num_partitions=8`,
// `allow_spmd_sharding_propagation_to_parameters={...}`, ... A module read
// from a proto cannot know them, so the printer prints none; a module read
// from text keeps them here, so that text -> text keeps them too.
//
// Example (hlo/parse.h and hlo/print.h carry these through):
//   decomposed::xla::LiteralProto literal;
//   literal.mutable_shape()->set_element_type(decomposed::xla::F32);
//   literal.mutable_shape()->add_dimensions(16);
//   // A shape and no data: what `constant({...})` of a text dump gives.
//   bool elided = decomposed::hlo::IsElidedLiteral(literal);  // true
//   decomposed::hlo::HloModuleTextExtras extras;
//   extras.config_attributes.emplace_back("replica_count", "2");
#ifndef DECOMPOSED_HLO_TEXT_H_
#define DECOMPOSED_HLO_TEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "decomposed/names.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

struct HloModuleTextExtras {
  // Header attributes of the module config, in the order the text gives
  // them, each name once: the name and the exact text of its value (what
  // follows `=`, up to the `,` or end of line that ends it).
  std::vector<std::pair<std::string, std::string>> config_attributes;
  // False when the text's header had no `entry_computation_layout=`; the
  // parser then infers host_program_shape from the entry's parameters and
  // root, and the printer leaves the attribute out again.
  bool has_entry_computation_layout = true;
  // True when the text's entry_computation_layout joined its parameters
  // with "," alone, as XLA did until 2023 (later: ", " and an
  // `/*index=N*/` comment before every 5th); the printer then does too.
  bool compact_entry_layout_parameters = false;
  // True when the text closed a computation with `} // <name>`, as XLA does
  // with HloPrintOptions::print_name_after_closing_brace (its dumps for
  // some years, its GPU profiler annotations): the printer then does too.
  bool name_after_closing_brace = false;
  // True when the text wrote `/*index=5*/` before the 6th operand of an
  // operand list in the short style's spelling (no `%`, no operand shape),
  // as XLA's dumps did whose options kept the operand index annotations
  // (print_operand_index_annotation_interval 5) in the short style: the
  // short style then prints them too.
  bool operand_index_annotations = false;
};

// A module parsed from text: the proto and what the proto cannot hold.
struct ParsedHloText {
  xla::HloModuleProto module;
  HloModuleTextExtras extras;
};

// The three spellings of HLO text (docs/hlo.md §2):
//   kLong    XLA's HloPrintOptions() of 2022-2025, which torch-neuronx and
//            torch-xla dumps use: `%` names, operand shapes, metadata,
//            program shapes in computation headers, constants of more than
//            10 elements as `{...}`.
//   kModern  XLA's default since 2025: as kLong without operand shapes.
//   kShort   XLA's ShortParsable(): no `%`, no operand shapes, no metadata,
//            no program shapes in computation headers, every constant in
//            full.
enum class HloTextStyle { kLong, kModern, kShort };

// "long", "modern", "short" (names.h).
inline constexpr EnumName<HloTextStyle> kHloTextStyleNames[] = {
    {"long", HloTextStyle::kLong},
    {"modern", HloTextStyle::kModern},
    {"short", HloTextStyle::kShort},
};

// A constant whose data the text did not give (`constant({...})`, as the
// long and modern styles print constants of more than 10 elements) is kept
// as an HloInstructionProto whose literal has its shape and no data field
// at all. IsElidedLiteral tells such a literal; the printer prints it as
// `{...}` again in every style, and whoever needs its values (the
// evaluator, pack) reports the constant by name.
bool IsElidedLiteral(const xla::LiteralProto& literal);

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_TEXT_H_
