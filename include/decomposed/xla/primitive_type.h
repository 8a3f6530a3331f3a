// XLA PrimitiveType facts: names, element sizes, how a LiteralProto stores
// each type, and the NumPy dtype an .npy file uses for it. Source:
// docs/format.md §8.2 and §12.3. Pure tables and lookups: nothing here fails
// or allocates; unknown names and numbers give nullopt / nullptr.
//
// Example:
//   const decomposed::PrimitiveTypeInfo* t = decomposed::FindPrimitiveType(16);
//   // t->name == "BF16", t->element_bytes == 2, t->npy_descr == "|V2",
//   // t->ml_dtype == "bfloat16", t->proto_field == 13 (bf16s)
//   std::optional<decomposed::PrimitiveType> f =
//       decomposed::PrimitiveTypeFromName("f32");  // kF32
#ifndef DECOMPOSED_XLA_PRIMITIVE_TYPE_H_
#define DECOMPOSED_XLA_PRIMITIVE_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace decomposed {

// Numbering is XLA's (xla_data.proto). Values >= kNumPrimitiveTypes are
// unknown to this library.
enum class PrimitiveType : int32_t {
  kInvalid = 0, kPred = 1, kS8 = 2, kS16 = 3, kS32 = 4, kS64 = 5, kU8 = 6,
  kU16 = 7, kU32 = 8, kU64 = 9, kF16 = 10, kF32 = 11, kF64 = 12,
  kTuple = 13, kOpaque = 14, kC64 = 15, kBF16 = 16, kToken = 17, kC128 = 18,
  kF8E5M2 = 19, kF8E4M3FN = 20, kS4 = 21, kU4 = 22, kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24, kF8E4M3FNUZ = 25, kS2 = 26, kU2 = 27, kF8E4M3 = 28,
  kF8E3M4 = 29, kS1 = 30, kU1 = 31, kF4E2M1FN = 32, kF8E8M0FNU = 33,
  kBuffer = 34, kF6E3M2FN = 35, kF6E2M3FN = 36,
};
inline constexpr int kNumPrimitiveTypes = 37;

// How a LiteralProto stores the array data of a type.
enum class DataEncoding : uint8_t {
  kNone,      // no array data (TUPLE, TOKEN, OPAQUE, BUFFER, INVALID)
  kBool,      // packed varint 0/1 (PRED)
  kVarint32,  // packed varint, int32 (S32; negatives are 10 bytes)
  kVarint64,  // packed varint, int64 (S64)
  kVarintU32, // packed varint, uint32 (U32)
  kVarintU64, // packed varint, uint64 (U64)
  kFixed32,   // packed little-endian 4-byte values (F32, C64 pairs)
  kFixed64,   // packed little-endian 8-byte values (F64, C128 pairs)
  kBytes,     // a `bytes` field holding the raw little-endian elements
};

// True for the packed-varint encodings (PRED, S32, S64, U32, U64).
inline constexpr bool IsVarintEncoding(DataEncoding e) {
  return e == DataEncoding::kBool || e == DataEncoding::kVarint32 ||
         e == DataEncoding::kVarint64 || e == DataEncoding::kVarintU32 ||
         e == DataEncoding::kVarintU64;
}
// Bytes per wire value of a packed fixed encoding (4 or 8), else 0.
inline constexpr size_t FixedValueWidth(DataEncoding e) {
  return e == DataEncoding::kFixed32 ? 4 : e == DataEncoding::kFixed64 ? 8 : 0;
}

struct PrimitiveTypeInfo {
  PrimitiveType type;
  std::string_view name;        // XLA's name: "F32", "BF16", ...
  uint8_t element_bytes;        // bytes per element in a Literal (0: none)
  DataEncoding encoding;
  uint16_t proto_field;         // LiteralProto data field number (0: none)
  std::string_view npy_descr;   // .npy descr ("<f4", "|V2"); empty: none
  std::string_view ml_dtype;    // ml_dtypes name for void types, else ""
  // True when XLA's CreateFromProto can load an array of this type.
  bool loadable;
};

inline constexpr PrimitiveTypeInfo kPrimitiveTypes[kNumPrimitiveTypes] = {
    {PrimitiveType::kInvalid, "PRIMITIVE_TYPE_INVALID", 0, DataEncoding::kNone, 0, "", "", false},
    {PrimitiveType::kPred, "PRED", 1, DataEncoding::kBool, 2, "|b1", "", true},
    {PrimitiveType::kS8, "S8", 1, DataEncoding::kBytes, 15, "|i1", "", true},
    {PrimitiveType::kS16, "S16", 2, DataEncoding::kBytes, 17, "<i2", "", true},
    {PrimitiveType::kS32, "S32", 4, DataEncoding::kVarint32, 4, "<i4", "", true},
    {PrimitiveType::kS64, "S64", 8, DataEncoding::kVarint64, 5, "<i8", "", true},
    {PrimitiveType::kU8, "U8", 1, DataEncoding::kBytes, 3, "|u1", "", true},
    {PrimitiveType::kU16, "U16", 2, DataEncoding::kBytes, 16, "<u2", "", true},
    {PrimitiveType::kU32, "U32", 4, DataEncoding::kVarintU32, 6, "<u4", "", true},
    {PrimitiveType::kU64, "U64", 8, DataEncoding::kVarintU64, 7, "<u8", "", true},
    {PrimitiveType::kF16, "F16", 2, DataEncoding::kBytes, 11, "<f2", "", true},
    {PrimitiveType::kF32, "F32", 4, DataEncoding::kFixed32, 8, "<f4", "", true},
    {PrimitiveType::kF64, "F64", 8, DataEncoding::kFixed64, 9, "<f8", "", true},
    {PrimitiveType::kTuple, "TUPLE", 0, DataEncoding::kNone, 10, "", "", false},
    {PrimitiveType::kOpaque, "OPAQUE_TYPE", 0, DataEncoding::kNone, 0, "", "", false},
    {PrimitiveType::kC64, "C64", 8, DataEncoding::kFixed32, 12, "<c8", "", true},
    {PrimitiveType::kBF16, "BF16", 2, DataEncoding::kBytes, 13, "|V2", "bfloat16", true},
    {PrimitiveType::kToken, "TOKEN", 0, DataEncoding::kNone, 0, "", "", false},
    {PrimitiveType::kC128, "C128", 16, DataEncoding::kFixed64, 18, "<c16", "", true},
    {PrimitiveType::kF8E5M2, "F8E5M2", 1, DataEncoding::kBytes, 19, "|V1", "float8_e5m2", true},
    {PrimitiveType::kF8E4M3FN, "F8E4M3FN", 1, DataEncoding::kBytes, 20, "|V1", "float8_e4m3fn", true},
    {PrimitiveType::kS4, "S4", 1, DataEncoding::kBytes, 21, "|V1", "int4", true},
    {PrimitiveType::kU4, "U4", 1, DataEncoding::kBytes, 22, "|V1", "uint4", true},
    {PrimitiveType::kF8E4M3B11FNUZ, "F8E4M3B11FNUZ", 1, DataEncoding::kBytes, 23, "|V1", "float8_e4m3b11fnuz", true},
    {PrimitiveType::kF8E5M2FNUZ, "F8E5M2FNUZ", 1, DataEncoding::kBytes, 24, "|V1", "float8_e5m2fnuz", true},
    {PrimitiveType::kF8E4M3FNUZ, "F8E4M3FNUZ", 1, DataEncoding::kBytes, 25, "|V1", "float8_e4m3fnuz", true},
    {PrimitiveType::kS2, "S2", 1, DataEncoding::kBytes, 26, "|V1", "int2", true},
    {PrimitiveType::kU2, "U2", 1, DataEncoding::kBytes, 27, "|V1", "uint2", true},
    {PrimitiveType::kF8E4M3, "F8E4M3", 1, DataEncoding::kBytes, 28, "|V1", "float8_e4m3", true},
    {PrimitiveType::kF8E3M4, "F8E3M4", 1, DataEncoding::kBytes, 29, "|V1", "float8_e3m4", true},
    {PrimitiveType::kS1, "S1", 1, DataEncoding::kBytes, 30, "|V1", "int1", false},
    {PrimitiveType::kU1, "U1", 1, DataEncoding::kBytes, 31, "|V1", "uint1", false},
    {PrimitiveType::kF4E2M1FN, "F4E2M1FN", 1, DataEncoding::kBytes, 32, "|V1", "float4_e2m1fn", true},
    {PrimitiveType::kF8E8M0FNU, "F8E8M0FNU", 1, DataEncoding::kBytes, 33, "|V1", "float8_e8m0fnu", true},
    {PrimitiveType::kBuffer, "BUFFER", 0, DataEncoding::kNone, 0, "", "", false},
    {PrimitiveType::kF6E3M2FN, "F6E3M2FN", 1, DataEncoding::kBytes, 35, "|V1", "float6_e3m2fn", false},
    {PrimitiveType::kF6E2M3FN, "F6E2M3FN", 1, DataEncoding::kBytes, 36, "|V1", "float6_e2m3fn", false},
};

// Info for a raw enum value; nullptr when unknown.
inline const PrimitiveTypeInfo* FindPrimitiveType(int64_t value) {
  if (value < 0 || value >= kNumPrimitiveTypes) return nullptr;
  return &kPrimitiveTypes[value];
}
// Info for a known enumerator. Precondition: `t` is one of the enumerators
// above (a value cast from an unchecked integer: use FindPrimitiveType).
inline const PrimitiveTypeInfo& Info(PrimitiveType t) {
  return kPrimitiveTypes[static_cast<int>(t)];
}
inline std::string_view PrimitiveTypeName(PrimitiveType t) {
  return Info(t).name;
}
// By XLA name ("F32", "bf16" is accepted case-insensitively too).
inline std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view n) {
  for (const PrimitiveTypeInfo& i : kPrimitiveTypes) {
    if (i.name.size() != n.size()) continue;
    bool eq = true;
    for (size_t k = 0; k < n.size() && eq; ++k) {
      char a = n[k], b = i.name[k];
      if (a >= 'a' && a <= 'z') a = static_cast<char>(a - 'a' + 'A');
      eq = a == b;
    }
    if (eq) return i.type;
  }
  return std::nullopt;
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_PRIMITIVE_TYPE_H_
