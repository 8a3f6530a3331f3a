// LiteralProto <-> evaluator values: a constant's literal or a snapshot
// input decoded with the literal codec (xla/literal_decoder.h) into an
// Array, and an Array back into a LiteralProto (for writing outputs into a
// snapshot). Any layout the codec reads is accepted (a literal without a
// layout, as HLO text gives constants, reads as row-major); arrays are
// always row-major.
//
// Example:
//   absl::StatusOr<decomposed::eval::Value> v =
//       decomposed::eval::ValueFromLiteral(instr.proto().literal());
//   decomposed::xla::LiteralProto back =
//       *decomposed::eval::LiteralFromArray(v->array());
#ifndef DECOMPOSED_EVAL_LITERAL_H_
#define DECOMPOSED_EVAL_LITERAL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "decomposed/eval/value.h"
#include "decomposed/proto/xla_data.pb.h"

namespace decomposed::eval {

// A literal's value: an array, or a tuple of values for a tuple literal.
// Errors: the codec's (naming "literal"), and kResourceExhausted for an
// array over `max_bytes`.
absl::StatusOr<Value> ValueFromLiteral(const xla::LiteralProto& literal,
                                       uint64_t max_bytes = Array::kNoLimit);

// The literal of an array (row-major layout). Errors: kUnimplemented for a
// type without a LiteralProto field.
absl::StatusOr<xla::LiteralProto> LiteralFromArray(const Array& array);

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_LITERAL_H_
