// Random valid HLO modules, for print -> parse round trips, fuzzers and
// property tests: RandomModule(seed) builds, with HloModuleBuilder
// (hlo/builder.h), an entry computation of random instructions over random
// shapes, drawing from every opcode the builder has (RandomModuleOpcodes)
// and their attribute variants (compare directions and types, slice
// strides, negative and interior padding, gather and scatter with and
// without batching dimensions, dot batch dimensions and result types,
// convolution windows with padding, strides, dilations, feature and batch
// groups and permuted dim_labels, variadic reduce and sort, both forms of
// conditional and all-to-all, replica groups and channels, every fft type,
// custom-call backend configs and aliasing, ...) and, with
// options.attributes, metadata, frontend attributes, sharding,
// backend_config and control dependencies on some instructions. The
// computations they call (reducers, comparators, loop bodies, branches,
// fused and wrapped computations) are built alongside.
//
// Every module validates (ValidateModule, hlo/validate.h); the same seed
// and options give the same module on every platform (the generator uses
// its own integer arithmetic, not <random>'s distributions), and so the
// same bytes when serialized deterministically (frontend attributes are a
// protobuf map).
//
// Example:
//   for (uint64_t seed = 0; seed < 100; ++seed) {
//     absl::StatusOr<xla::HloModuleProto> m =
//         decomposed::hlo::RandomModule(seed);
//     // print, parse, compare ...
//   }
#ifndef DECOMPOSED_HLO_RANDOM_MODULE_H_
#define DECOMPOSED_HLO_RANDOM_MODULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

struct RandomModuleOptions {
  // About how many instructions the entry computation gets (each step adds
  // one to a few).
  int steps = 40;
  // Arrays of rank 0 to max_rank with dimensions 1 to max_dim.
  int max_rank = 3;
  int max_dim = 4;
  // Metadata, frontend attributes, sharding, backend_config and control
  // dependencies on some instructions.
  bool attributes = true;
};

// A random valid module. Errors: only a bug of the generator (an
// instruction the builder refused), reported as the builder's status.
absl::StatusOr<xla::HloModuleProto> RandomModule(
    uint64_t seed, const RandomModuleOptions& options = {});

// The opcodes RandomModule's steps can add (every opcode the builder has a
// method for). The steps cycle through a seed-shuffled list of step kinds
// (each kind one family: unary float ops, gather, while, ...), so a module
// of enough steps has every kind, and a few hundred seeds together every
// opcode.
std::vector<HloOpcode> RandomModuleOpcodes();

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_RANDOM_MODULE_H_
