#include "src/eval/types.h"

#include <array>
#include <mutex>

#include "decomposed/eval/numerics.h"

namespace decomposed::eval::internal {
namespace {

struct Format {
  int e, m, bias;
  enum Kind { kIeee, kFn, kFnuz, kFinite, kE8M0 } kind;
};

bool FormatOf(PrimitiveType t, Format* f) {
  switch (t) {
    case PrimitiveType::kF16: *f = {5, 10, 15, Format::kIeee}; return true;
    case PrimitiveType::kBF16: *f = {8, 7, 127, Format::kIeee}; return true;
    case PrimitiveType::kF8E5M2: *f = {5, 2, 15, Format::kIeee}; return true;
    case PrimitiveType::kF8E4M3: *f = {4, 3, 7, Format::kIeee}; return true;
    case PrimitiveType::kF8E3M4: *f = {3, 4, 3, Format::kIeee}; return true;
    case PrimitiveType::kF8E4M3FN: *f = {4, 3, 7, Format::kFn}; return true;
    case PrimitiveType::kF8E4M3FNUZ: *f = {4, 3, 8, Format::kFnuz}; return true;
    case PrimitiveType::kF8E5M2FNUZ: *f = {5, 2, 16, Format::kFnuz}; return true;
    case PrimitiveType::kF8E4M3B11FNUZ: *f = {4, 3, 11, Format::kFnuz}; return true;
    case PrimitiveType::kF4E2M1FN: *f = {2, 1, 1, Format::kFinite}; return true;
    case PrimitiveType::kF6E3M2FN: *f = {3, 2, 3, Format::kFinite}; return true;
    case PrimitiveType::kF6E2M3FN: *f = {2, 3, 1, Format::kFinite}; return true;
    case PrimitiveType::kF8E8M0FNU: *f = {8, 0, 127, Format::kE8M0}; return true;
    default: return false;
  }
}

// Encodes `v` (any double) in format `f`, round to nearest even.
uint32_t Encode(const Format& f, double v) {
  const int width = 1 + f.e + f.m;
  const uint32_t emax = (1u << f.e) - 1;
  const uint32_t mmax = (1u << f.m) - 1;
  if (f.kind == Format::kE8M0) {
    if (!(v > 0) || std::isnan(v)) return 0xff;
    int ex;
    double fr = std::frexp(v, &ex);  // v = fr * 2^ex, fr in [0.5, 1)
    // Nearest power of two, ties (fr == 0.75 is not a tie in log space;
    // round on the value): 2^(ex-1) or 2^ex, whichever is nearer, ties to
    // the even exponent encoding.
    int e_lo = ex - 1;
    double lo = std::ldexp(1.0, e_lo), hi = std::ldexp(1.0, ex);
    int e = (v - lo < hi - v) ? e_lo
            : (v - lo > hi - v) ? ex
            : (((e_lo + 127) & 1) == 0 ? e_lo : ex);
    (void)fr;
    int biased = e + 127;
    if (biased < 0) return 0;
    if (biased > 254) return 0xff;
    return static_cast<uint32_t>(biased);
  }
  const uint32_t sign_bit = 1u << (width - 1);
  const bool neg = std::signbit(v);
  const uint32_t sign = neg ? sign_bit : 0;
  if (std::isnan(v)) {
    switch (f.kind) {
      case Format::kIeee: return sign | (emax << f.m) | (1u << (f.m - 1));
      case Format::kFn: return sign | (emax << f.m) | mmax;
      case Format::kFnuz: return sign_bit;
      default: return 0;
    }
  }
  // The largest finite encoding (without sign).
  uint32_t max_bits;
  switch (f.kind) {
    case Format::kIeee: max_bits = ((emax - 1) << f.m) | mmax; break;
    case Format::kFn: max_bits = (emax << f.m) | (mmax - 1); break;
    default: max_bits = (emax << f.m) | mmax; break;
  }
  auto overflow = [&]() -> uint32_t {
    switch (f.kind) {
      case Format::kIeee: return sign | (emax << f.m);
      case Format::kFn: return sign | (emax << f.m) | mmax;
      case Format::kFnuz: return sign_bit;
      default: return sign | max_bits;
    }
  };
  double a = std::fabs(v);
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.kind == Format::kFnuz ? 0 : sign;
  int ex;
  std::frexp(a, &ex);
  int unb = ex - 1;                 // a in [2^unb, 2^(unb+1))
  const int min_normal = 1 - f.bias;
  uint32_t bits;
  if (unb < min_normal) {
    double q = std::nearbyint(std::ldexp(a, f.bias - 1 + f.m));
    bits = static_cast<uint32_t>(q);  // may carry into the smallest normal
  } else {
    double q = std::nearbyint(std::ldexp(a, f.m - unb));  // [2^m, 2^(m+1)]
    uint64_t qi = static_cast<uint64_t>(q);
    if (qi == (uint64_t{1} << (f.m + 1))) {
      ++unb;
      qi >>= 1;
    }
    int64_t biased = static_cast<int64_t>(unb) + f.bias;
    if (biased > static_cast<int64_t>(emax)) return overflow();
    bits = (static_cast<uint32_t>(biased) << f.m) |
           static_cast<uint32_t>(qi - (uint64_t{1} << f.m));
  }
  if (bits > max_bits) return overflow();
  if (bits == 0 && f.kind == Format::kFnuz) return 0;  // no -0
  return sign | bits;
}

struct Table8 {
  std::array<float, 256> values;
};

const Table8& TableFor(PrimitiveType t) {
  static std::array<Table8, kNumPrimitiveTypes> tables;
  static std::array<std::once_flag, kNumPrimitiveTypes> once;
  const int i = static_cast<int>(t);
  std::call_once(once[i], [&] {
    for (int b = 0; b < 256; ++b) {
      char c[8] = {static_cast<char>(b)};
      tables[i].values[b] = static_cast<float>(RealValue(t, c));
    }
  });
  return tables[i];
}

}  // namespace

float NarrowToF32(PrimitiveType t, const char* p) {
  if (t == PrimitiveType::kBF16) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return Bf16ToF32(b);
  }
  return static_cast<float>(RealValue(t, p));
}

void StoreNarrow(PrimitiveType t, double v, char* p) {
  Format f{};
  if (!FormatOf(t, &f)) return;
  if (t == PrimitiveType::kBF16 && static_cast<double>(static_cast<float>(v)) == v) {
    uint16_t b = F32ToBf16(static_cast<float>(v));
    std::memcpy(p, &b, 2);
    return;
  }
  uint32_t bits = Encode(f, v);
  if (Info(t).element_bytes == 2) {
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(p, &b, 2);
  } else {
    *p = static_cast<char>(bits);
  }
}

void NarrowToF32(PrimitiveType t, const char* src, float* dst, int64_t n) {
  if (t == PrimitiveType::kBF16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t b;
      std::memcpy(&b, src + 2 * i, 2);
      dst[i] = Bf16ToF32(b);
    }
    return;
  }
  if (Info(t).element_bytes == 1) {
    const Table8& tab = TableFor(t);
    for (int64_t i = 0; i < n; ++i) dst[i] = tab.values[static_cast<uint8_t>(src[i])];
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = NarrowToF32(t, src + 2 * i);
}

void F32ToNarrow(PrimitiveType t, const float* src, char* dst, int64_t n) {
  if (t == PrimitiveType::kBF16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t b = F32ToBf16(src[i]);
      std::memcpy(dst + 2 * i, &b, 2);
    }
    return;
  }
  const size_t w = Info(t).element_bytes;
  for (int64_t i = 0; i < n; ++i) StoreNarrow(t, src[i], dst + w * i);
}

}  // namespace decomposed::eval::internal
