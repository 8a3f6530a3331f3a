// A module's facts at a glance: what `decomposed hlo FILE --json`,
// `inspect`'s module line and Python's `Module.summary()` show.
//
// Contract:
//   * SummarizeModule walks the view once (time and memory proportional to
//     the module's instruction count; no literal is copied or decoded).
//   * Shapes are spelled as XLA's text spells them without layouts
//     (`f32[2,3]`, `(f32[2], s32[])`); counts are exact.
//   * FLOPs are the dense multiply-add count, two per multiply-add, of every
//     dot and convolution in every computation (inner computations counted
//     once each, not once per call or loop iteration; a fusion's are in its
//     fused computation): dot = 2 x result elements x the product of the
//     lhs contracting dimensions; convolution = 2 x result elements x the
//     kernel's spatial elements x its input-feature dimension (padding and
//     dilation holes included, as a dense count). An instruction whose
//     shapes do not allow the count (a malformed module) adds nothing and
//     is counted in `flops_unknown`.
//
// Example:
//   decomposed::xla::HloModuleProto proto;  // a module, read from a file
//   auto m = *decomposed::hlo::HloModule::Create(proto);
//   decomposed::hlo::ModuleSummary s = decomposed::hlo::SummarizeModule(*m);
//   std::cout << s.OneLine() << "\n";
//   // module jit_f: 3 computations, 41 instructions, entry main.12
//   //   (2 parameters) -> f32[8,16]; 2 dot, 1 custom-call; 1.05 MFLOP
#ifndef DECOMPOSED_HLO_SUMMARY_H_
#define DECOMPOSED_HLO_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "decomposed/hlo/module.h"
#include "nlohmann/json.hpp"

namespace decomposed::hlo {

struct ModuleSummary {
  struct Parameter {
    int64_t number = 0;
    std::string name;       // the instruction's name
    std::string neff_name;  // Neuron's neff_input_names entry, or ""
    std::string shape;      // `f32[2,3]`
  };
  struct Collective {
    std::string name;    // instruction name
    std::string opcode;  // `all-reduce`, ...
    std::string computation;
    // The groups as given (field 49 or 87, iota form expanded); empty: one
    // group of every replica.
    std::vector<std::vector<int64_t>> replica_groups;
    // collective-permute's (source, target) pairs.
    std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
    int64_t channel_id = 0;  // 0: none
    bool use_global_device_ids = false;
  };

  std::string name;
  std::string entry;  // the entry computation's name
  std::vector<Parameter> parameters;
  std::string result;  // the entry root's shape
  int64_t computation_count = 0;
  int64_t instruction_count = 0;
  // Opcode string -> count over every computation.
  std::map<std::string, int64_t> opcodes;
  // custom_call_target -> count.
  std::map<std::string, int64_t> custom_call_targets;
  std::vector<Collective> collectives;
  int64_t constant_count = 0;
  // Bytes of the constants' data as the literals hold it.
  uint64_t constant_bytes = 0;
  // Constants whose data a text dump left out (`constant({...})`).
  int64_t elided_constant_count = 0;
  double dot_flops = 0;
  double convolution_flops = 0;
  // dot/convolution instructions whose FLOPs could not be counted.
  int64_t flops_unknown = 0;

  // `module NAME: C computations, I instructions, entry E (P parameters)
  // -> RESULT` and, when present, the most frequent compute opcodes and
  // the FLOPs.
  std::string OneLine() const;

  // The summary as `decomposed hlo --json` writes it: name, entry,
  // parameters [{number, name, neff_name (null when none), shape}], result,
  // computations, instructions, opcodes {opcode: count}, custom_call_targets
  // {target: count}, collectives [{name, opcode, computation,
  // replica_groups, source_target_pairs, channel_id (null when none),
  // use_global_device_ids}], constants {count, bytes, elided}, flops {dot,
  // convolution, total, uncounted}.
  nlohmann::ordered_json ToJson() const;
};

ModuleSummary SummarizeModule(const HloModule& module);

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_SUMMARY_H_
