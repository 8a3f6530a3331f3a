// XLA's shape rules: the shape each HLO opcode gives, from its operands'
// shapes and its attributes, or the reason the operands are wrong for it.
// The rules are those of XLA's ShapeInference and HloVerifier (openxla/xla
// `xla/service/shape_inference.cc`, `hlo_verifier.cc`) and of
// its operation semantics document, restated in this library's own code and
// words (docs/hlo.md §1.2 lists them).
//
// Conventions shared by every rule:
//   * Shapes are xla::ShapeProto values (proto/xla_data.proto). A result
//     computed afresh has the default layout (major-to-minor); one that is
//     an operand's shape (copy, reshape-free unary ops, ...) keeps the
//     operand's layout, as XLA does. Layouts never decide a rule.
//   * HLO operands of elementwise ops have equal dimensions: there is no
//     implicit broadcast in HLO (the broadcast opcode does that).
//   * Floating-point operands of different precisions pass where XLA's
//     shape inference lets them (f32 with bf16: the result is the more
//     precise type); whether a module may mix them is validation's choice
//     (ValidateOptions::allow_mixed_precision, hlo/validate.h), decided by
//     CheckMixedPrecision below.
//   * Every failure is kInvalidArgument, its message starting with the
//     opcode and saying what was expected and what was found:
//       add: expected operands of the same dimensions, found f32[2] and f32[3]
//     Validation prefixes the instruction (DescribeInstruction). No rule
//     reads array data, allocates memory in proportion to a dimension, or
//     overflows: attribute arithmetic is checked.
//
// Example:
//   using namespace decomposed::hlo;
//   xla::ShapeProto a = MakeArrayShape(xla::F32, {2, 3});
//   absl::StatusOr<xla::ShapeProto> t = InferTransposeShape(a, {1, 0});
//   DescribeShape(*t);                            // "f32[3,2]"
//   xla::DotDimensionNumbers d;
//   d.add_lhs_contracting_dimensions(1);
//   d.add_rhs_contracting_dimensions(0);
//   DescribeShape(*InferDotShape(a, *t, d));      // "f32[2,2]"
//   InferBinaryShape(HloOpcode::kAdd, a, *t).status().message();
//   // "add: expected operands of the same dimensions, found f32[2,3] and
//   //  f32[3,2]"
#ifndef DECOMPOSED_HLO_SHAPE_INFERENCE_H_
#define DECOMPOSED_HLO_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

using ShapeList = absl::Span<const xla::ShapeProto* const>;

// --- Element types (xla::PrimitiveType numbers) ------------------------------

bool IsArrayElementType(int type);   // PRED, integers, floats, complex
bool IsFloatingType(int type);       // f16, bf16, f32, f64, the f8/f6/f4 types
bool IsComplexType(int type);        // c64, c128
bool IsIntegralType(int type);       // signed and unsigned integers (not PRED)
bool IsSignedIntegralType(int type);
bool IsUnsignedIntegralType(int type);
// Bits per element (PRED: 8, S4: 4, C64: 64); 0 for a non-array type.
int ElementBitWidth(int type);
// The type's name as HLO text spells it: "f32", "pred", "token"; "<type N>"
// for a number this library does not know.
std::string ElementTypeName(int type);

// --- Shapes -------------------------------------------------------------------

// An array shape with the default (major-to-minor) layout, as XLA's
// ShapeUtil::MakeShape gives (a scalar gets an empty layout).
xla::ShapeProto MakeArrayShape(int element_type, absl::Span<const int64_t> dims);
xla::ShapeProto MakeScalarShape(int element_type);
xla::ShapeProto MakeTupleShape(absl::Span<const xla::ShapeProto> elements);
xla::ShapeProto MakeTupleShape(ShapeList elements);
xla::ShapeProto MakeTokenShape();

bool IsTupleShape(const xla::ShapeProto& s);
bool IsTokenShape(const xla::ShapeProto& s);
bool IsArrayShape(const xla::ShapeProto& s);  // element type an array type
bool IsScalarShape(const xla::ShapeProto& s);  // an array of rank 0

// HLO text's spelling without layouts: "f32[2,<=3]", "(f32[2], s32[])",
// "token[]". With `with_layout`, array layouts too: "f32[2,3]{1,0}". Safe on
// any proto (unknown types, deep or malformed tuples).
std::string DescribeShape(const xla::ShapeProto& s, bool with_layout = false);
// "(f32[2], s32[]) -> f32[2]".
std::string DescribeProgramShape(const xla::ProgramShapeProto& p);

// What XLA's ShapeUtil::ValidateShapeWithOptionalLayout requires of a shape:
// a known element type; an array has no tuple elements, non-negative
// dimensions, at most limits::kMaxRank of them, an element count that fits
// in 64 bits, is_dynamic_dimension empty or one per dimension, and a layout,
// when it has one, whose minor_to_major is a permutation of its dimensions;
// a tuple has no dimensions and well-formed elements (nesting at most
// limits::kMaxTupleDepth); a token has no dimensions. An empty layout on a
// tuple or token (older producers write one) is accepted.
// Message: "expected <what>, found <what>" (for example "expected a layout
// that is a permutation of 2 dimensions, found minor_to_major {0,0}").
absl::Status CheckShapeWellFormed(const xla::ShapeProto& s);

// XLA's ShapeUtil::Compatible: the same element types and dimensions,
// recursively for tuples; layouts and dynamic-dimension flags ignored.
bool ShapesCompatible(const xla::ShapeProto& a, const xla::ShapeProto& b);
// As ShapesCompatible, but any two floating-point types match.
bool ShapesCompatibleIgnoringFpPrecision(const xla::ShapeProto& a,
                                         const xla::ShapeProto& b);
// As ShapesCompatible, but array element types are not compared.
bool ShapesCompatibleIgnoringElementType(const xla::ShapeProto& a,
                                         const xla::ShapeProto& b);
// Array dimensions equal (element types not compared).
bool SameDimensions(const xla::ShapeProto& a, const xla::ShapeProto& b);
// True unless both shapes have a layout and their minor_to_major differ
// (recursively for tuples): layouts are compared only when both sides have
// one.
bool LayoutsAgree(const xla::ShapeProto& a, const xla::ShapeProto& b);

// The number of elements of an array shape; an error when a dimension is
// negative or the product overflows 64 bits.
absl::StatusOr<int64_t> ElementCount(const xla::ShapeProto& s);

// A computation's signature: its parameters' shapes by number and its
// root's shape; parameter_names are the parameter instructions' names.
// Error when a parameter number is missing.
absl::StatusOr<xla::ProgramShapeProto> ComputationProgramShape(
    const HloComputation& computation);

// Floating-point operands of more than one precision where XLA's verifier
// refuses them (CheckMixedPrecisionOperands): every opcode except those that
// pass data through or group it (tuple, get-tuple-element, call, while,
// conditional, fusion, custom-call, dot, convolution, the collectives,
// sort, reduce-window, reduce-precision, copy-start/done, send/recv,
// infeed/outfeed, opt-barrier, domain, async ops, constant, parameter).
// Message: "<opcode>: expected floating-point operands of one precision,
// found f32 and bf16".
absl::Status CheckMixedPrecision(HloOpcode opcode, ShapeList operands);

// --- Elementwise --------------------------------------------------------------

// Unary elementwise opcodes: abs, ceil, floor, round-*, cos, sin, tan, exp,
// expm1, log, log1p, logistic, rsqrt, sqrt, cbrt, tanh, erf, the inverse
// trig/hyperbolic ones, negate, sign, not, is-finite (pred result), real and
// imag (the complex component type), popcnt, clz, copy (any shape).
absl::StatusOr<xla::ShapeProto> InferUnaryShape(HloOpcode opcode,
                                                const xla::ShapeProto& operand);
// Binary elementwise opcodes, compare (pred result) and complex (c64 from
// f32, c128 from f64). Operands: arrays of equal dimensions and one element
// type (up to floating-point precision).
absl::StatusOr<xla::ShapeProto> InferBinaryShape(HloOpcode opcode,
                                                 const xla::ShapeProto& lhs,
                                                 const xla::ShapeProto& rhs);
// select(pred, on_true, on_false): pred has PRED elements and on_true's
// dimensions; on_true and on_false agree.
absl::StatusOr<xla::ShapeProto> InferSelectShape(const xla::ShapeProto& pred,
                                                 const xla::ShapeProto& on_true,
                                                 const xla::ShapeProto& on_false);
// clamp(min, operand, max): min and max are scalars or operand-shaped.
absl::StatusOr<xla::ShapeProto> InferClampShape(const xla::ShapeProto& min,
                                                const xla::ShapeProto& operand,
                                                const xla::ShapeProto& max);
absl::StatusOr<xla::ShapeProto> InferConvertShape(
    const xla::ShapeProto& operand, int new_element_type);
// A narrower target type adds a minor dimension of the width ratio; a wider
// one removes the minor dimension, which must be the ratio.
absl::StatusOr<xla::ShapeProto> InferBitcastConvertShape(
    const xla::ShapeProto& operand, int new_element_type);
absl::StatusOr<xla::ShapeProto> InferStochasticConvertShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& random,
    int new_element_type);
absl::StatusOr<xla::ShapeProto> InferReducePrecisionShape(
    const xla::ShapeProto& operand, int64_t exponent_bits,
    int64_t mantissa_bits);

// --- Shape-changing ops ---------------------------------------------------------

// iota: an array of integral, floating or complex type, rank >= 1, the
// dimension in range. Returns `shape`.
absl::StatusOr<xla::ShapeProto> InferIotaShape(const xla::ShapeProto& shape,
                                               int64_t iota_dimension);
// broadcast: operand dimension i becomes output dimension dimensions[i]
// (sizes equal; dimensions increasing and in range, one per operand
// dimension). Returns an array of the operand's type and `output_dims`.
absl::StatusOr<xla::ShapeProto> InferBroadcastShape(
    const xla::ShapeProto& operand, absl::Span<const int64_t> output_dims,
    absl::Span<const int64_t> dimensions);
// reshape: the same element count.
absl::StatusOr<xla::ShapeProto> InferReshapeShape(
    const xla::ShapeProto& operand, absl::Span<const int64_t> new_dims);
// transpose: result dimension i is operand dimension permutation[i].
absl::StatusOr<xla::ShapeProto> InferTransposeShape(
    const xla::ShapeProto& operand, absl::Span<const int64_t> permutation);
absl::StatusOr<xla::ShapeProto> InferSliceShape(
    const xla::ShapeProto& operand, absl::Span<const int64_t> starts,
    absl::Span<const int64_t> limits, absl::Span<const int64_t> strides);
// dynamic-slice: one scalar integral index per operand dimension (all of one
// shape), or the older form of one rank-1 index array.
absl::StatusOr<xla::ShapeProto> InferDynamicSliceShape(
    const xla::ShapeProto& operand, ShapeList indices,
    absl::Span<const int64_t> slice_sizes);
absl::StatusOr<xla::ShapeProto> InferDynamicUpdateSliceShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& update,
    ShapeList indices);
absl::StatusOr<xla::ShapeProto> InferConcatenateShape(ShapeList operands,
                                                      int64_t dimension);
// pad: per dimension low + high + size + (size - 1) * interior, each
// possibly negative except interior, the result never negative.
absl::StatusOr<xla::ShapeProto> InferPadShape(const xla::ShapeProto& operand,
                                              const xla::ShapeProto& value,
                                              const xla::PaddingConfig& config);
absl::StatusOr<xla::ShapeProto> InferReverseShape(
    const xla::ShapeProto& operand, absl::Span<const int64_t> dimensions);
// gather, with the batching dimensions of current XLA.
absl::StatusOr<xla::ShapeProto> InferGatherShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& start_indices,
    const xla::GatherDimensionNumbers& dnums,
    absl::Span<const int64_t> slice_sizes);
// scatter(operands..., indices, updates...) with its update computation.
absl::StatusOr<xla::ShapeProto> InferScatterShape(
    ShapeList operands, const xla::ProgramShapeProto& update_computation,
    const xla::ScatterDimensionNumbers& dnums);
absl::StatusOr<xla::ShapeProto> InferGetDimensionSizeShape(
    const xla::ShapeProto& operand, int64_t dimension);
absl::StatusOr<xla::ShapeProto> InferSetDimensionSizeShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& size,
    int64_t dimension);

// --- Contractions -----------------------------------------------------------------

// dot with general dimension numbers: batch dimensions, then lhs free
// dimensions, then rhs free dimensions. `result_type` is the instruction's
// element type (XLA's preferred_element_type): it may differ from the
// operands' (s8 x s8 -> s32, bf16 x bf16 -> f32), but an integral result
// may not be narrower than integral operands.
absl::StatusOr<xla::ShapeProto> InferDotShape(
    const xla::ShapeProto& lhs, const xla::ShapeProto& rhs,
    const xla::DotDimensionNumbers& dnums,
    std::optional<int> result_type = std::nullopt);
// convolution: windows (size, stride, padding, dilations), feature and
// batch group counts (1 when given as 0), dimension numbers (dim_labels).
absl::StatusOr<xla::ShapeProto> InferConvolutionShape(
    const xla::ShapeProto& lhs, const xla::ShapeProto& rhs,
    int64_t feature_group_count, int64_t batch_group_count,
    const xla::Window& window, const xla::ConvolutionDimensionNumbers& dnums,
    std::optional<int> result_type = std::nullopt);
// The output dimensions of a window over `base` (reduce-window,
// select-and-scatter, convolution).
absl::StatusOr<std::vector<int64_t>> InferWindowDimensions(
    absl::Span<const int64_t> base, const xla::Window& window);

// --- Reductions and called computations ----------------------------------------

// reduce(inputs..., inits...) over `dimensions` with a reducer that takes
// 2N scalars (accumulators, then elements) and returns N (a tuple when
// N > 1).
absl::StatusOr<xla::ShapeProto> InferReduceShape(
    ShapeList operands, absl::Span<const int64_t> dimensions,
    const xla::ProgramShapeProto& reducer);
absl::StatusOr<xla::ShapeProto> InferReduceWindowShape(
    ShapeList operands, const xla::Window& window,
    const xla::ProgramShapeProto& reducer);
// select-and-scatter(operand, source, init) with select (T, T) -> pred[]
// and scatter (T, T) -> T.
absl::StatusOr<xla::ShapeProto> InferSelectAndScatterShape(
    const xla::ShapeProto& operand, const xla::ProgramShapeProto& select,
    const xla::Window& window, const xla::ShapeProto& source,
    const xla::ShapeProto& init, const xla::ProgramShapeProto& scatter);
// sort: operands of equal dimensions, the comparator takes 2N scalars and
// returns pred[]; one operand gives its shape, several a tuple.
absl::StatusOr<xla::ShapeProto> InferSortShape(
    ShapeList operands, int64_t dimension,
    const xla::ProgramShapeProto& comparator);
// topk: (values, s32 indices), the last dimension k.
absl::StatusOr<xla::ShapeProto> InferTopKShape(const xla::ShapeProto& operand,
                                               int64_t k);
// map: operands of equal dimensions, a scalar computation with one
// parameter per operand.
absl::StatusOr<xla::ShapeProto> InferMapShape(
    ShapeList operands, const xla::ProgramShapeProto& computation,
    absl::Span<const int64_t> dimensions);
absl::StatusOr<xla::ShapeProto> InferTupleShape(ShapeList operands);
absl::StatusOr<xla::ShapeProto> InferGetTupleElementShape(
    const xla::ShapeProto& operand, int64_t index);
absl::StatusOr<xla::ShapeProto> InferCallShape(
    ShapeList operands, const xla::ProgramShapeProto& computation);
// while: condition (T) -> pred[], body (T) -> T, init T.
absl::StatusOr<xla::ShapeProto> InferWhileShape(
    const xla::ProgramShapeProto& condition, const xla::ProgramShapeProto& body,
    const xla::ShapeProto& init);
// conditional(index, operands...): a pred[] index with two branches, or an
// s32[] index with at least one; branch i takes operand i.
absl::StatusOr<xla::ShapeProto> InferConditionalShape(
    const xla::ShapeProto& branch_index,
    absl::Span<const xla::ProgramShapeProto> branches, ShapeList operands);
// fusion: the fused computation's parameters match the operands they
// number; the result is the fused root's shape.
absl::StatusOr<xla::ShapeProto> InferFusionShape(
    ShapeList operands, const xla::ProgramShapeProto& fused);

// --- Batch norm ------------------------------------------------------------------

absl::StatusOr<xla::ShapeProto> InferBatchNormTrainingShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& scale,
    const xla::ShapeProto& offset, int64_t feature_index);
absl::StatusOr<xla::ShapeProto> InferBatchNormInferenceShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& scale,
    const xla::ShapeProto& offset, const xla::ShapeProto& mean,
    const xla::ShapeProto& variance, int64_t feature_index);
absl::StatusOr<xla::ShapeProto> InferBatchNormGradShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& scale,
    const xla::ShapeProto& mean, const xla::ShapeProto& variance,
    const xla::ShapeProto& grad_output, int64_t feature_index);

// --- Collectives ------------------------------------------------------------------

// all-reduce (and all-reduce-start, all-reduce-done): each operand's shape,
// a tuple for several.
absl::StatusOr<xla::ShapeProto> InferAllReduceShape(ShapeList operands);
// all-gather: dimension `dimension` multiplied by `shard_count`.
absl::StatusOr<xla::ShapeProto> InferAllGatherShape(ShapeList operands,
                                                    int64_t dimension,
                                                    int64_t shard_count);
// all-gather-start: (operands, all-gather result).
absl::StatusOr<xla::ShapeProto> InferAllGatherStartShape(ShapeList operands,
                                                         int64_t dimension,
                                                         int64_t shard_count);
// reduce-scatter: dimension `dimension` divided by `shard_count`.
absl::StatusOr<xla::ShapeProto> InferReduceScatterShape(ShapeList operands,
                                                        int64_t dimension,
                                                        int64_t shard_count);
// all-to-all with a split dimension (one array operand), or the tuple form
// (one operand per peer, all of one shape).
absl::StatusOr<xla::ShapeProto> InferAllToAllShape(
    const xla::ShapeProto& operand, int64_t split_dimension,
    int64_t concat_dimension, int64_t split_count);
absl::StatusOr<xla::ShapeProto> InferAllToAllTupleShape(ShapeList operands);
// collective-permute: the operand's shape (one operand), or operand 1's (the
// in-place form of four).
absl::StatusOr<xla::ShapeProto> InferCollectivePermuteShape(ShapeList operands);
// collective-permute-start: (input, output, context...), the context
// elements u32[], u32[] unless `context` gives them (the instruction's own
// elements from index 2 on, which current XLA lets a backend choose).
absl::StatusOr<xla::ShapeProto> InferCollectivePermuteStartShape(
    ShapeList operands, absl::Span<const xla::ShapeProto> context = {});
// all-gather-done, collective-permute-done: element 1 of the start's tuple.
absl::StatusOr<xla::ShapeProto> InferAsyncCollectiveDoneShape(
    HloOpcode opcode, const xla::ShapeProto& start);

// --- Everything else ----------------------------------------------------------------

// rng(a, b): two scalars of one element type (uniform: numeric or pred;
// normal: floating); the result an array of that type, of any dimensions.
absl::StatusOr<xla::ShapeProto> InferRngShape(
    const xla::ShapeProto& a, const xla::ShapeProto& b, int distribution,
    const xla::ShapeProto& result);
// rng-bit-generator(state): (state, output) with output an array of
// `output`'s shape.
absl::StatusOr<xla::ShapeProto> InferRngBitGeneratorShape(
    const xla::ShapeProto& state, const xla::ShapeProto& output);
xla::ShapeProto InferRngGetAndUpdateStateShape();  // u64[2]
xla::ShapeProto InferReplicaIdShape();              // u32[] (partition-id too)
absl::StatusOr<xla::ShapeProto> InferAddDependencyShape(
    const xla::ShapeProto& operand, const xla::ShapeProto& token);
absl::StatusOr<xla::ShapeProto> InferCholeskyShape(const xla::ShapeProto& a);
absl::StatusOr<xla::ShapeProto> InferTriangularSolveShape(
    const xla::ShapeProto& a, const xla::ShapeProto& b,
    const xla::TriangularSolveOptions& options);
absl::StatusOr<xla::ShapeProto> InferFftShape(const xla::ShapeProto& operand,
                                              int fft_type,
                                              absl::Span<const int64_t> length);
// copy-start: (operand, operand, u32[]); copy-done: element 0 of that.
xla::ShapeProto InferCopyStartShape(const xla::ShapeProto& operand);
absl::StatusOr<xla::ShapeProto> InferCopyDoneShape(const xla::ShapeProto& start);
// send(data, token): (data, u32[], token); send-done: token.
absl::StatusOr<xla::ShapeProto> InferSendShape(const xla::ShapeProto& data,
                                               const xla::ShapeProto& token);
// recv(token): (data, u32[], token); recv-done: (data, token).
absl::StatusOr<xla::ShapeProto> InferRecvShape(const xla::ShapeProto& data,
                                               const xla::ShapeProto& token);
absl::StatusOr<xla::ShapeProto> InferRecvDoneShape(const xla::ShapeProto& recv);
// infeed(token): (data, token); outfeed(data, token) with its outfeed_shape:
// token.
absl::StatusOr<xla::ShapeProto> InferInfeedShape(const xla::ShapeProto& data,
                                                 const xla::ShapeProto& token);
absl::StatusOr<xla::ShapeProto> InferOutfeedShape(
    const xla::ShapeProto& data, const xla::ShapeProto& token,
    const xla::ShapeProto& outfeed_shape);
// async-start(operands...) wrapping `wrapped`: ((operand shapes...), wrapped
// result, context...); `context` are the instruction's own elements from
// index 2 on. async-update: its operand's shape; async-done: element 1 of
// its operand.
absl::StatusOr<xla::ShapeProto> InferAsyncStartShape(
    ShapeList operands, const xla::ProgramShapeProto& wrapped,
    absl::Span<const xla::ShapeProto> context);
absl::StatusOr<xla::ShapeProto> InferAsyncDoneShape(
    const xla::ShapeProto& start, const xla::ProgramShapeProto& wrapped);
// constant: the literal's shape; the literal's data, when it has any,
// holds exactly the elements the shape says (XLA's literal load rules,
// docs/format.md §10). A literal whose data a text dump elided
// (IsElidedLiteral, hlo/text.h) passes.
absl::StatusOr<xla::ShapeProto> InferConstantShape(
    const xla::LiteralProto& literal);

// The shape XLA's rules give `instr` in its module: operand shapes,
// attributes, called computations' signatures, and where the opcode takes
// a part of its result from its own shape (convert's and bitcast-convert's
// target type, dot's and convolution's result type, broadcast's and
// reshape's dimensions, iota, rng, recv, infeed, rng-bit-generator's
// output, all-gather's and reduce-scatter's shard count) that part. nullopt
// for opcodes with no rule: custom-call, parameter, bitcast, the opcodes
// hlo/opcode.h knows but this file has no rule for (validate.h lists
// them), kUnknown.
absl::StatusOr<std::optional<xla::ShapeProto>> InferInstructionShape(
    const HloInstruction& instr);

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_SHAPE_INFERENCE_H_
