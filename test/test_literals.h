// Test helpers shared by the producer tests: decode a LiteralProto body
// with protobuf (an independent decoder) back to raw element bytes.
#ifndef DECOMPOSED_TEST_TEST_LITERALS_H_
#define DECOMPOSED_TEST_TEST_LITERALS_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "decomposed/xla/primitive_type.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::testing {

inline std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// The element bytes a LiteralProto holds for `type`, little endian, as a
// Literal stores them (PRED: one 0/1 byte per element).
inline std::string ElementBytes(const xla::LiteralProto& p, PrimitiveType t) {
  std::string out;
  auto put = [&](const void* v, size_t n) {
    out.append(static_cast<const char*>(v), n);
  };
  switch (t) {
    case PrimitiveType::kPred:
      for (bool b : p.preds()) out.push_back(b ? 1 : 0);
      return out;
    case PrimitiveType::kS32:
      for (int32_t v : p.s32s()) put(&v, 4);
      return out;
    case PrimitiveType::kS64:
      for (int64_t v : p.s64s()) put(&v, 8);
      return out;
    case PrimitiveType::kU32:
      for (uint32_t v : p.u32s()) put(&v, 4);
      return out;
    case PrimitiveType::kU64:
      for (uint64_t v : p.u64s()) put(&v, 8);
      return out;
    case PrimitiveType::kF32:
      for (float v : p.f32s()) put(&v, 4);
      return out;
    case PrimitiveType::kF64:
      for (double v : p.f64s()) put(&v, 8);
      return out;
    case PrimitiveType::kC64:
      for (float v : p.c64s()) put(&v, 4);
      return out;
    case PrimitiveType::kC128:
      for (double v : p.c128s()) put(&v, 8);
      return out;
    default: {
      // bytes fields: find by number through reflection.
      const auto* f = p.GetDescriptor()->FindFieldByNumber(
          decomposed::Info(t).proto_field);
      if (!f) return "<no field>";
      return p.GetReflection()->GetString(p, f);
    }
  }
}

// Random element bytes for `count` elements of `t`; PRED gets 0/1, sub-byte
// types get values in their low bits, floats avoid NaN so that values
// compare equal after a float round trip.
inline std::string RandomElements(PrimitiveType t, uint64_t count,
                                  uint32_t seed) {
  std::mt19937_64 rng(seed);
  const PrimitiveTypeInfo& info = decomposed::Info(t);
  std::string s(count * info.element_bytes, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  if (t == PrimitiveType::kPred) {
    for (auto& c : s) c = static_cast<char>(c & 1);
  }
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kC64) {
    for (size_t i = 0; i < s.size(); i += 4) {
      float f = static_cast<float>(static_cast<int64_t>(rng() % 2000001) -
                                   1000000) / 7.0f;
      std::memcpy(&s[i], &f, 4);
    }
  }
  if (t == PrimitiveType::kF64 || t == PrimitiveType::kC128) {
    for (size_t i = 0; i < s.size(); i += 8) {
      double f = static_cast<double>(static_cast<int64_t>(rng())) / 3.0;
      std::memcpy(&s[i], &f, 8);
    }
  }
  return s;
}

}  // namespace decomposed::testing

#endif  // DECOMPOSED_TEST_TEST_LITERALS_H_
