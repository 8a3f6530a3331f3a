// The numerics modes of the evaluator: for every op, the type it computes
// in, the type it accumulates in and where it rounds, chosen here and
// nowhere else (docs/eval.md §3). Each op family asks NumericsPolicy; no
// kernel decides a precision on its own.
//
//   mode     storage of a value       elementwise, convert      dot, convolution             reduce (add, mul)
//   -------  -----------------------  ------------------------  ---------------------------  -----------------------------
//   kXla     its declared type        bf16/f16/f8 in f32,        operands converted to the    recognised add/multiply
//            (XLA's evaluator)        rounded to nearest even    result type's compute type;  reducers: f32 and narrower
//                                     once per instruction;      16- and 8-bit floats in f32  floats accumulate in f64
//                                     f32 in f32, f64 in f64     accumulation, f64 in f64;    (f64 in f64), rounded once;
//                                                                rounded once to the result   other reducers per step in
//                                                                                             the declared type
//   kF32     bf16 and f16 are kept    as kXla on the storage     as kXla on the storage       as kXla on the storage types
//            as f32 (a convert to     types                      types
//            them is the identity);
//            f8 types stay (they are
//            deliberate quantization)
//   kNeuron  as kXla                  as kXla                    as kXla, but f32 operands    as kXla
//                                                                are first rounded to bf16
//                                                                (neuronx-cc's default
//                                                                auto-cast), accumulating
//                                                                in f32
//
// Integer types compute in their own type with wraparound in every mode
// (sub-byte types wrap at their width). Complex types compute in their own
// precision. Rounding is always to nearest, ties to even, except
// round-nearest-afz and the float -> integer convert (which saturates, NaN
// -> 0).
//
// Example:
//   decomposed::eval::NumericsPolicy p(decomposed::eval::Numerics::kF32);
//   p.StorageType(PrimitiveType::kBF16);       // kF32
//   p.DotOperandRounding(PrimitiveType::kF32); // kF32 (kBF16 in kNeuron)
#ifndef DECOMPOSED_EVAL_NUMERICS_H_
#define DECOMPOSED_EVAL_NUMERICS_H_

#include <optional>
#include <string_view>

#include "decomposed/xla/primitive_type.h"
#include "decomposed/names.h"

namespace decomposed::eval {

enum class Numerics { kXla, kF32, kNeuron };

// "xla", "f32", "neuron": both directions read this table (names.h).
inline constexpr EnumName<Numerics> kNumericsNames[] = {
    {"xla", Numerics::kXla},
    {"f32", Numerics::kF32},
    {"neuron", Numerics::kNeuron},
};
std::string_view NumericsName(Numerics n);
std::optional<Numerics> NumericsFromName(std::string_view name);

// True for BF16, F16 and the 8-, 6- and 4-bit floats: the types computed
// in f32 and rounded back.
bool IsNarrowFloat(PrimitiveType t);

class NumericsPolicy {
 public:
  explicit NumericsPolicy(Numerics mode) : mode_(mode) {}
  Numerics mode() const { return mode_; }

  // The type a value declared `declared` is stored in: the declared type,
  // except bf16 and f16 in kF32 (f32).
  PrimitiveType StorageType(PrimitiveType declared) const;

  // The type an elementwise op on storage type `t` computes in: f32 for the
  // narrow floats, else `t` itself (sub-byte integers compute in their
  // 8-bit container and wrap at their width).
  PrimitiveType ElementwiseComputeType(PrimitiveType t) const;

  // Dot and convolution: the type their GEMM runs in for a result stored
  // as `result`: f32 for f32 and narrower floats, f64, c64, c128; integers
  // in the result type.
  PrimitiveType DotComputeType(PrimitiveType result) const;
  // The type each f32-computed operand is rounded to before the GEMM
  // (after conversion to the compute type): kBF16 in kNeuron for an
  // operand stored as f32, else the compute type (no rounding).
  PrimitiveType DotOperandRounding(PrimitiveType operand_storage) const;

  // A recognised add or multiply reducer over storage type `t`: the type it
  // accumulates in (f64 for every real float, c128 for complex, else `t`);
  // the result is rounded once to `t`.
  PrimitiveType ReduceAccumulationType(PrimitiveType t) const;

  // Batch norm, softmax, rms-norm and the other normalisations: statistics
  // accumulate in f64 and elements compute in f32 (f64 for f64), rounded
  // once to the result type.
  PrimitiveType NormComputeType(PrimitiveType t) const;

 private:
  Numerics mode_;
};

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_NUMERICS_H_
