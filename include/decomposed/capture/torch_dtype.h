// PyTorch dtypes as input-snapshot bundles name them ("torch.bfloat16", as
// str(tensor.dtype) prints), with what each needs on disk:
//   * element size,
//   * the .npy descr (bf16 "|V2", fp8 "|V1": raw bytes, reinterpreted from
//     meta.json on load; empty: no NumPy representation, npy refuses it),
//   * how torch.save pickles it: a legacy typed storage class
//     ("torch.BFloat16Storage", loadable by every PyTorch since 1.x through
//     _rebuild_tensor_v2) or, for dtypes newer than the legacy classes,
//     torch.UntypedStorage + _rebuild_tensor_v3 with the dtype (loadable
//     only by the PyTorch release in `min_torch`; torch 1.13 cannot load
//     them),
//   * the XLA element type the tensor becomes in a decomposed file.
//
// The dtype itself is an enum, TorchType; its row of kTorchDtypes is
// Torch(type).
//
// Example:
//   const TorchDtype* d = FindTorchDtype("torch.float");  // -> torch.float32
//   // d->type == TorchType::kFloat32, Torch(TorchType::kBFloat16).name ==
//   // "torch.bfloat16"
#ifndef DECOMPOSED_CAPTURE_TORCH_DTYPE_H_
#define DECOMPOSED_CAPTURE_TORCH_DTYPE_H_

#include <cstdint>
#include <string_view>

#include "decomposed/xla/primitive_type.h"

namespace decomposed::capture {

// One enumerator per row of kTorchDtypes, in its order.
enum class TorchType : uint8_t {
  kFloat64, kFloat32, kFloat16, kBFloat16, kComplex128, kComplex64, kInt64,
  kInt32, kInt16, kInt8, kUInt8, kBool, kUInt16, kUInt32, kUInt64,
  kFloat8E4M3FN, kFloat8E5M2, kFloat8E4M3FNUZ, kFloat8E5M2FNUZ,
  kFloat8E8M0FNU, kComplex32,
};
inline constexpr int kNumTorchTypes = 21;

struct TorchDtype {
  TorchType type;
  std::string_view name;            // canonical: "torch.float32"
  std::string_view attr;            // torch attribute: "float32"
  uint8_t element_bytes;
  std::string_view npy_descr;       // empty: not representable as .npy
  std::string_view legacy_storage;  // "FloatStorage"; empty: v3 format
  std::string_view min_torch;       // first PyTorch that loads the .pt
  PrimitiveType xla_type;           // kInvalid: no XLA equivalent
};

inline constexpr TorchDtype kTorchDtypes[] = {
    {TorchType::kFloat64, "torch.float64", "float64", 8, "<f8", "DoubleStorage", "1.0", PrimitiveType::kF64},
    {TorchType::kFloat32, "torch.float32", "float32", 4, "<f4", "FloatStorage", "1.0", PrimitiveType::kF32},
    {TorchType::kFloat16, "torch.float16", "float16", 2, "<f2", "HalfStorage", "1.0", PrimitiveType::kF16},
    {TorchType::kBFloat16, "torch.bfloat16", "bfloat16", 2, "|V2", "BFloat16Storage", "1.3", PrimitiveType::kBF16},
    {TorchType::kComplex128, "torch.complex128", "complex128", 16, "<c16", "ComplexDoubleStorage", "1.6", PrimitiveType::kC128},
    {TorchType::kComplex64, "torch.complex64", "complex64", 8, "<c8", "ComplexFloatStorage", "1.6", PrimitiveType::kC64},
    {TorchType::kInt64, "torch.int64", "int64", 8, "<i8", "LongStorage", "1.0", PrimitiveType::kS64},
    {TorchType::kInt32, "torch.int32", "int32", 4, "<i4", "IntStorage", "1.0", PrimitiveType::kS32},
    {TorchType::kInt16, "torch.int16", "int16", 2, "<i2", "ShortStorage", "1.0", PrimitiveType::kS16},
    {TorchType::kInt8, "torch.int8", "int8", 1, "|i1", "CharStorage", "1.0", PrimitiveType::kS8},
    {TorchType::kUInt8, "torch.uint8", "uint8", 1, "|u1", "ByteStorage", "1.0", PrimitiveType::kU8},
    {TorchType::kBool, "torch.bool", "bool", 1, "|b1", "BoolStorage", "1.2", PrimitiveType::kPred},
    {TorchType::kUInt16, "torch.uint16", "uint16", 2, "<u2", "", "2.3", PrimitiveType::kU16},
    {TorchType::kUInt32, "torch.uint32", "uint32", 4, "<u4", "", "2.3", PrimitiveType::kU32},
    {TorchType::kUInt64, "torch.uint64", "uint64", 8, "<u8", "", "2.3", PrimitiveType::kU64},
    {TorchType::kFloat8E4M3FN, "torch.float8_e4m3fn", "float8_e4m3fn", 1, "|V1", "", "2.1", PrimitiveType::kF8E4M3FN},
    {TorchType::kFloat8E5M2, "torch.float8_e5m2", "float8_e5m2", 1, "|V1", "", "2.1", PrimitiveType::kF8E5M2},
    {TorchType::kFloat8E4M3FNUZ, "torch.float8_e4m3fnuz", "float8_e4m3fnuz", 1, "|V1", "", "2.2", PrimitiveType::kF8E4M3FNUZ},
    {TorchType::kFloat8E5M2FNUZ, "torch.float8_e5m2fnuz", "float8_e5m2fnuz", 1, "|V1", "", "2.2", PrimitiveType::kF8E5M2FNUZ},
    {TorchType::kFloat8E8M0FNU, "torch.float8_e8m0fnu", "float8_e8m0fnu", 1, "|V1", "", "2.7", PrimitiveType::kF8E8M0FNU},
    {TorchType::kComplex32, "torch.complex32", "complex32", 4, "", "", "2.1", PrimitiveType::kInvalid},
};

static_assert(sizeof(kTorchDtypes) / sizeof(kTorchDtypes[0]) == kNumTorchTypes);
constexpr bool TorchRowsInEnumOrder() {
  for (int i = 0; i < kNumTorchTypes; ++i) {
    if (static_cast<int>(kTorchDtypes[i].type) != i) return false;
  }
  return true;
}
static_assert(TorchRowsInEnumOrder());

// The row of a dtype. Precondition: `t` is one of the enumerators.
inline const TorchDtype& Torch(TorchType t) {
  return kTorchDtypes[static_cast<int>(t)];
}
// The row of a raw value; nullptr when it is no enumerator.
inline const TorchDtype* FindTorchDtype(TorchType t) {
  int i = static_cast<int>(t);
  return i >= 0 && i < kNumTorchTypes ? &kTorchDtypes[i] : nullptr;
}

// Looks a dtype up by canonical name ("torch.float32"), by attribute
// ("float32"), or by PyTorch alias with or without "torch." ("torch.float",
// "half", "torch.long", "torch.cfloat", ...). nullptr when unknown.
const TorchDtype* FindTorchDtype(std::string_view name);
// The torch dtype an XLA element type maps to (for decomposed -> bundle);
// nullptr when none.
const TorchDtype* TorchDtypeForXla(PrimitiveType t);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_TORCH_DTYPE_H_
