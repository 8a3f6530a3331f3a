#include "decomposed/eval/numerics.h"

#include "decomposed/xla/element_value.h"

namespace decomposed::eval {

std::string_view NumericsName(Numerics n) { return NameOf(kNumericsNames, n); }

std::optional<Numerics> NumericsFromName(std::string_view name) {
  return ValueOf(kNumericsNames, name);
}

bool IsNarrowFloat(PrimitiveType t) {
  return KindOf(t) == ElementKind::kReal && t != PrimitiveType::kF32 &&
         t != PrimitiveType::kF64;
}

PrimitiveType NumericsPolicy::StorageType(PrimitiveType declared) const {
  if (mode_ == Numerics::kF32 &&
      (declared == PrimitiveType::kBF16 || declared == PrimitiveType::kF16)) {
    return PrimitiveType::kF32;
  }
  return declared;
}

PrimitiveType NumericsPolicy::ElementwiseComputeType(PrimitiveType t) const {
  return IsNarrowFloat(t) ? PrimitiveType::kF32 : t;
}

PrimitiveType NumericsPolicy::DotComputeType(PrimitiveType result) const {
  if (IsNarrowFloat(result)) return PrimitiveType::kF32;
  return result;
}

PrimitiveType NumericsPolicy::DotOperandRounding(PrimitiveType operand_storage) const {
  if (mode_ == Numerics::kNeuron && operand_storage == PrimitiveType::kF32) {
    return PrimitiveType::kBF16;
  }
  return IsNarrowFloat(operand_storage) ? PrimitiveType::kF32 : operand_storage;
}

PrimitiveType NumericsPolicy::ReduceAccumulationType(PrimitiveType t) const {
  switch (KindOf(t)) {
    case ElementKind::kReal: return PrimitiveType::kF64;
    case ElementKind::kComplex: return PrimitiveType::kC128;
    default: return t;
  }
}

PrimitiveType NumericsPolicy::NormComputeType(PrimitiveType t) const {
  return t == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

}  // namespace decomposed::eval
