// Elementwise ops: unary and binary arithmetic, compare, select, clamp,
// convert, bitcast-convert, reduce-precision, is-finite (docs/eval.md §4.1).
//
// Every kernel runs on the C++ type of its compute type (types.h): narrow
// floats are converted to f32 first (ToCompute) and the result rounded to
// the declared type once; sub-byte integers compute in their 8-bit
// container and wrap at their width afterwards. Operands are read with
// their strides (a broadcast is not materialised) through ForEachStrided.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "src/eval/loops.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

// Strides of operand `a` read against output dims `out`: a rank-0 operand
// broadcasts.
std::vector<int64_t> StridesAgainst(const Array& a, std::span<const int64_t> out) {
  if (a.rank() == 0) return std::vector<int64_t>(out.size(), 0);
  return a.EffectiveStrides();
}

template <class R, class T, class F>
void Map1(const Ctx& ctx, const Array& a, Array& out, const F& f) {
  std::array<std::vector<int64_t>, 1> st = {StridesAgainst(a, out.dims())};
  StridedPlan<1> plan = PlanStrided<1>(out.dims(), st);
  const T* pa = a.data<T>();
  R* po = out.mutable_data<R>();
  ForEachStrided<1>(ctx.pool, plan, kElementwiseGrain,
                    [&](int64_t pos, const std::array<int64_t, 1>& off,
                        const std::array<int64_t, 1>& s, int64_t n) {
                      const T* x = pa + off[0];
                      R* o = po + pos;
                      if (s[0] == 1) {
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
                      } else if (s[0] == 0) {
                        const R v = f(*x);
                        for (int64_t i = 0; i < n; ++i) o[i] = v;
                      } else {
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i * s[0]]);
                      }
                    });
}

template <class R, class T0, class T1, class F>
void Map2(const Ctx& ctx, const Array& a, const Array& b, Array& out, const F& f) {
  std::array<std::vector<int64_t>, 2> st = {StridesAgainst(a, out.dims()),
                                            StridesAgainst(b, out.dims())};
  StridedPlan<2> plan = PlanStrided<2>(out.dims(), st);
  const T0* pa = a.data<T0>();
  const T1* pb = b.data<T1>();
  R* po = out.mutable_data<R>();
  ForEachStrided<2>(ctx.pool, plan, kElementwiseGrain,
                    [&](int64_t pos, const std::array<int64_t, 2>& off,
                        const std::array<int64_t, 2>& s, int64_t n) {
                      const T0* x = pa + off[0];
                      const T1* y = pb + off[1];
                      R* o = po + pos;
                      if (s[0] == 1 && s[1] == 1) {
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
                      } else if (s[0] == 1 && s[1] == 0) {
                        const T1 yv = *y;
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
                      } else if (s[0] == 0 && s[1] == 1) {
                        const T0 xv = *x;
                        for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
                      } else {
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i * s[0]], y[i * s[1]]);
                      }
                    });
}

template <class R, class T0, class T1, class T2, class F>
void Map3(const Ctx& ctx, const Array& a, const Array& b, const Array& c,
          Array& out, const F& f) {
  std::array<std::vector<int64_t>, 3> st = {StridesAgainst(a, out.dims()),
                                            StridesAgainst(b, out.dims()),
                                            StridesAgainst(c, out.dims())};
  StridedPlan<3> plan = PlanStrided<3>(out.dims(), st);
  const T0* pa = a.data<T0>();
  const T1* pb = b.data<T1>();
  const T2* pc = c.data<T2>();
  R* po = out.mutable_data<R>();
  ForEachStrided<3>(ctx.pool, plan, kElementwiseGrain,
                    [&](int64_t pos, const std::array<int64_t, 3>& off,
                        const std::array<int64_t, 3>& s, int64_t n) {
                      const T0* x = pa + off[0];
                      const T1* y = pb + off[1];
                      const T2* z = pc + off[2];
                      R* o = po + pos;
                      if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                        for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z[i]);
                      } else {
                        for (int64_t i = 0; i < n; ++i) {
                          o[i] = f(x[i * s[0]], y[i * s[1]], z[i * s[2]]);
                        }
                      }
                    });
}

// --- Scalar rules ------------------------------------------------------

template <class T>
using U = std::make_unsigned_t<T>;

template <class T>
T NanMax(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a > b ? a : b;
}
template <class T>
T NanMin(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? a : b;
}

template <class T>
T IntDiv(T a, T b) {
  if (b == 0) {
    if constexpr (std::is_signed_v<T>) return T(-1);
    else return std::numeric_limits<T>::max();
  }
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  }
  return static_cast<T>(a / b);
}
template <class T>
T IntRem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return 0;
  }
  return static_cast<T>(a % b);
}
template <class T>
T IntPow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  U<T> result = 1, b = static_cast<U<T>>(base);
  U<T> e = static_cast<U<T>>(exp);
  while (e) {
    if (e & 1) result = static_cast<U<T>>(result * b);
    b = static_cast<U<T>>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// Total order key of a float: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
template <class T>
auto TotalOrderKey(T v) {
  using UI = typename UintOfSize<sizeof(T)>::type;
  using SI = std::make_signed_t<UI>;
  SI s = std::bit_cast<SI>(v);
  if (s < 0) s = static_cast<SI>(s ^ std::numeric_limits<SI>::max());
  return s;
}

template <class T>
bool CompareScalars(hlo::ComparisonDirection d, hlo::ComparisonType ty, T a, T b) {
  if constexpr (kIsComplex<T>) {
    return d == hlo::ComparisonDirection::kEq ? a == b : a != b;
  } else {
    if constexpr (kIsFloat<T>) {
      if (ty == hlo::ComparisonType::kTotalOrder) {
        auto ka = TotalOrderKey(a), kb = TotalOrderKey(b);
        return CompareScalars<decltype(ka)>(d, hlo::ComparisonType::kSigned, ka, kb);
      }
    }
    switch (d) {
      case hlo::ComparisonDirection::kEq: return a == b;
      case hlo::ComparisonDirection::kNe: return a != b;
      case hlo::ComparisonDirection::kGe: return a >= b;
      case hlo::ComparisonDirection::kGt: return a > b;
      case hlo::ComparisonDirection::kLe: return a <= b;
      case hlo::ComparisonDirection::kLt: return a < b;
    }
    return false;
  }
}

int BitWidth(PrimitiveType t) {
  const int sub = SubByteBits(t);
  return sub ? sub : static_cast<int>(Info(t).element_bytes) * 8;
}

// The C++ type of the real part of a complex type.
template <class T> struct RealOf { using type = T; };
template <> struct RealOf<c64> { using type = float; };
template <> struct RealOf<c128> { using type = double; };

PrimitiveType RealTypeOf(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

absl::Status TypeError(HloOpcode op, PrimitiveType t) {
  return Expected(absl::StrCat("an element type ", Sv(hlo::HloOpcodeString(op)),
                               " takes"),
                  PrimitiveTypeName(t));
}

// --- Unary ---------------------------------------------------------------

template <class T>
absl::Status Unary(const Ctx& ctx, HloOpcode op, const Array& a, Array& out,
                   PrimitiveType t) {
  const int width = BitWidth(t);
  [[maybe_unused]] const uint64_t mask =
      width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
#define FLOATING(OPC, EXPR)                                          \
  case HloOpcode::OPC:                                               \
    if constexpr (kIsFloat<T> || kIsComplex<T>) {                    \
      Map1<T, T>(ctx, a, out, [](T x) -> T { return EXPR; });        \
      return absl::OkStatus();                                       \
    }                                                                \
    break;
#define REAL_ONLY(OPC, EXPR)                                         \
  case HloOpcode::OPC:                                               \
    if constexpr (kIsFloat<T>) {                                     \
      Map1<T, T>(ctx, a, out, [](T x) -> T { return EXPR; });        \
      return absl::OkStatus();                                       \
    }                                                                \
    break;
  switch (op) {
    FLOATING(kExp, std::exp(x))
    FLOATING(kLog, std::log(x))
    FLOATING(kSqrt, std::sqrt(x))
    FLOATING(kRsqrt, T(1) / std::sqrt(x))
    FLOATING(kSin, std::sin(x))
    FLOATING(kCos, std::cos(x))
    FLOATING(kTan, std::tan(x))
    FLOATING(kTanh, std::tanh(x))
    FLOATING(kSinh, std::sinh(x))
    FLOATING(kCosh, std::cosh(x))
    FLOATING(kAsin, std::asin(x))
    FLOATING(kAcos, std::acos(x))
    FLOATING(kAtan, std::atan(x))
    FLOATING(kAsinh, std::asinh(x))
    FLOATING(kAcosh, std::acosh(x))
    FLOATING(kAtanh, std::atanh(x))
    FLOATING(kLogistic, T(1) / (T(1) + std::exp(-x)))
    REAL_ONLY(kExpm1, std::expm1(x))
    REAL_ONLY(kLog1p, std::log1p(x))
    REAL_ONLY(kCbrt, std::cbrt(x))
    REAL_ONLY(kErf, std::erf(x))
    REAL_ONLY(kFloor, std::floor(x))
    REAL_ONLY(kCeil, std::ceil(x))
    REAL_ONLY(kRoundNearestAfz, std::round(x))
    REAL_ONLY(kRoundNearestEven, std::nearbyint(x))
#undef FLOATING
#undef REAL_ONLY
    case HloOpcode::kNegate:
      if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [](T x) { return static_cast<T>(U<T>(0) - static_cast<U<T>>(x)); });
        return absl::OkStatus();
      } else if constexpr (!std::is_same_v<T, bool>) {
        Map1<T, T>(ctx, a, out, [](T x) { return -x; });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kAbs:
      if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [](T x) {
          if constexpr (std::is_signed_v<T>) {
            return x < 0 ? static_cast<T>(U<T>(0) - static_cast<U<T>>(x)) : x;
          } else {
            return x;
          }
        });
        return absl::OkStatus();
      } else if constexpr (kIsFloat<T>) {
        Map1<T, T>(ctx, a, out, [](T x) { return std::fabs(x); });
        return absl::OkStatus();
      } else if constexpr (kIsComplex<T>) {
        using R = typename RealOf<T>::type;
        Map1<R, T>(ctx, a, out, [](T x) { return std::abs(x); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kSign:
      if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [](T x) { return static_cast<T>((x > 0) - (x < 0)); });
        return absl::OkStatus();
      } else if constexpr (kIsFloat<T>) {
        Map1<T, T>(ctx, a, out, [](T x) {
          return (std::isnan(x) || x == 0) ? x : std::copysign(T(1), x);
        });
        return absl::OkStatus();
      } else if constexpr (kIsComplex<T>) {
        Map1<T, T>(ctx, a, out, [](T x) { return x == T(0) ? x : x / std::abs(x); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kNot:
      if constexpr (std::is_same_v<T, bool>) {
        Map1<T, T>(ctx, a, out, [](T x) { return !x; });
        return absl::OkStatus();
      } else if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [](T x) { return static_cast<T>(~x); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kPopulationCount:
      if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [mask](T x) {
          return static_cast<T>(std::popcount(static_cast<uint64_t>(static_cast<U<T>>(x)) & mask));
        });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kClz:
      if constexpr (kIsInt<T>) {
        Map1<T, T>(ctx, a, out, [mask, width](T x) {
          uint64_t v = static_cast<uint64_t>(static_cast<U<T>>(x)) & mask;
          return static_cast<T>(std::countl_zero(v) - (64 - width));
        });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kIsFinite:
      if constexpr (kIsFloat<T>) {
        Map1<bool, T>(ctx, a, out, [](T x) { return static_cast<bool>(std::isfinite(x)); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if constexpr (kIsComplex<T>) {
        using R = typename RealOf<T>::type;
        if (op == HloOpcode::kReal) {
          Map1<R, T>(ctx, a, out, [](T x) { return x.real(); });
        } else {
          Map1<R, T>(ctx, a, out, [](T x) { return x.imag(); });
        }
        return absl::OkStatus();
      } else if constexpr (kIsFloat<T>) {
        if (op == HloOpcode::kReal) {
          Map1<T, T>(ctx, a, out, [](T x) { return x; });
        } else {
          Map1<T, T>(ctx, a, out, [](T) { return T(0); });
        }
        return absl::OkStatus();
      }
      break;
    default:
      return Unsupported(absl::StrCat("opcode ", Sv(hlo::HloOpcodeString(op)),
                                      " is not an elementwise unary op"));
  }
  return TypeError(op, t);
}

// --- Binary --------------------------------------------------------------

template <class T>
absl::Status Binary(const Ctx& ctx, HloOpcode op, const Array& a, const Array& b,
                    Array& out, PrimitiveType t, hlo::ComparisonDirection dir,
                    hlo::ComparisonType cmp_type) {
  const int width = BitWidth(t);
  [[maybe_unused]] const uint64_t mask =
      width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  constexpr bool kArith = !std::is_same_v<T, bool>;
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
      if constexpr (kIsInt<T>) {
        if (op == HloOpcode::kAdd) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return static_cast<T>(static_cast<U<T>>(x) + static_cast<U<T>>(y)); });
        } else if (op == HloOpcode::kSubtract) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return static_cast<T>(static_cast<U<T>>(x) - static_cast<U<T>>(y)); });
        } else {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) {
            // Promote to at least unsigned int: no signed overflow.
            using P = decltype(static_cast<U<T>>(x) * 1u);
            return static_cast<T>(static_cast<P>(static_cast<U<T>>(x)) * static_cast<P>(static_cast<U<T>>(y)));
          });
        }
        return absl::OkStatus();
      } else if constexpr (kArith) {
        if (op == HloOpcode::kAdd) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x + y; });
        } else if (op == HloOpcode::kSubtract) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x - y; });
        } else {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x * y; });
        }
        return absl::OkStatus();
      } else {
        // PRED: add is or, multiply is and (XLA's evaluator does the same).
        if (op == HloOpcode::kAdd) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x || y; });
          return absl::OkStatus();
        }
        if (op == HloOpcode::kMultiply) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x && y; });
          return absl::OkStatus();
        }
      }
      break;
    case HloOpcode::kDivide:
      if constexpr (kIsInt<T>) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return IntDiv(x, y); });
        return absl::OkStatus();
      } else if constexpr (kArith) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x / y; });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kRemainder:
      if constexpr (kIsInt<T>) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return IntRem(x, y); });
        return absl::OkStatus();
      } else if constexpr (kIsFloat<T>) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return std::fmod(x, y); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      if constexpr (!kIsComplex<T>) {
        if (op == HloOpcode::kMaximum) {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return NanMax(x, y); });
        } else {
          Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return NanMin(x, y); });
        }
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kPower:
      if constexpr (kIsInt<T>) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return IntPow(x, y); });
        return absl::OkStatus();
      } else if constexpr (kArith) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return std::pow(x, y); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kAtan2:
      if constexpr (kIsFloat<T>) {
        Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return std::atan2(x, y); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      if constexpr (std::is_same_v<T, bool>) {
        if (op == HloOpcode::kAnd) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x && y; });
        if (op == HloOpcode::kOr) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x || y; });
        if (op == HloOpcode::kXor) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return x != y; });
        return absl::OkStatus();
      } else if constexpr (kIsInt<T>) {
        if (op == HloOpcode::kAnd) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return static_cast<T>(x & y); });
        if (op == HloOpcode::kOr) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return static_cast<T>(x | y); });
        if (op == HloOpcode::kXor) Map2<T, T, T>(ctx, a, b, out, [](T x, T y) { return static_cast<T>(x ^ y); });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic:
      if constexpr (kIsInt<T>) {
        auto shift = [op, mask, width](T x, T y) -> T {
          const uint64_t ux = static_cast<uint64_t>(static_cast<U<T>>(x)) & mask;
          const uint64_t uy = static_cast<uint64_t>(static_cast<U<T>>(y)) & mask;
          const int64_t sx = width == 64 ? static_cast<int64_t>(ux)
                                         : static_cast<int64_t>(ux << (64 - width)) >> (64 - width);
          if (op == HloOpcode::kShiftLeft) {
            return uy >= static_cast<uint64_t>(width) ? T(0) : static_cast<T>(ux << uy);
          }
          if (op == HloOpcode::kShiftRightLogical) {
            return uy >= static_cast<uint64_t>(width) ? T(0) : static_cast<T>(ux >> uy);
          }
          if (uy >= static_cast<uint64_t>(width)) return sx < 0 ? static_cast<T>(-1) : T(0);
          return static_cast<T>(sx >> uy);
        };
        Map2<T, T, T>(ctx, a, b, out, shift);
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kMulhi:
      if constexpr (kIsInt<T>) {
        Map2<T, T, T>(ctx, a, b, out, [width](T x, T y) -> T {
          if constexpr (sizeof(T) == 8) {
            (void)width;  // the high half of a 128-bit product: always 64
            using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
            return static_cast<T>((static_cast<W>(x) * static_cast<W>(y)) >> 64);
          } else {
            int64_t p = static_cast<int64_t>(x) * static_cast<int64_t>(y);
            return static_cast<T>(p >> width);
          }
        });
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kCompare:
      Map2<bool, T, T>(ctx, a, b, out, [dir, cmp_type](T x, T y) {
        return CompareScalars<T>(dir, cmp_type, x, y);
      });
      return absl::OkStatus();
    case HloOpcode::kComplex:
      if constexpr (std::is_same_v<T, float>) {
        Map2<c64, T, T>(ctx, a, b, out, [](T x, T y) { return c64(x, y); });
        return absl::OkStatus();
      } else if constexpr (std::is_same_v<T, double>) {
        Map2<c128, T, T>(ctx, a, b, out, [](T x, T y) { return c128(x, y); });
        return absl::OkStatus();
      }
      break;
    default:
      return Unsupported(absl::StrCat("opcode ", Sv(hlo::HloOpcodeString(op)),
                                      " is not an elementwise binary op"));
  }
  return TypeError(op, t);
}

// The dims of an elementwise result: every non-scalar operand's (they must
// agree); rank-0 operands broadcast.
absl::StatusOr<std::vector<int64_t>> CommonDims(std::span<const Array* const> arrays) {
  const std::vector<int64_t>* dims = nullptr;
  for (const Array* a : arrays) {
    if (a->rank() == 0) continue;
    if (!dims) {
      dims = &a->dims();
    } else if (*dims != a->dims()) {
      return Expected(absl::StrCat("operands of one shape ", DimsString(*dims)),
                      DimsString(a->dims()));
    }
  }
  return dims ? *dims : std::vector<int64_t>{};
}

// Converts `computed` (compute type) to `storage` where they differ (a
// narrow float result), and wraps sub-byte integer results.
absl::StatusOr<Array> Finish(const Ctx& ctx, Array computed, PrimitiveType storage) {
  if (computed.type() != storage) return ConvertArray(ctx, computed, storage);
  WrapSubByte(computed);
  return computed;
}

}  // namespace

absl::StatusOr<Array> ApplyUnary(Ctx& ctx, HloOpcode op, const Array& a_in) {
  absl::StatusOr<Array> a = ToCompute(ctx, a_in);
  if (!a.ok()) return a.status();
  PrimitiveType out_type = a->type();
  if (op == HloOpcode::kIsFinite) out_type = PrimitiveType::kPred;
  if (op == HloOpcode::kAbs || op == HloOpcode::kReal || op == HloOpcode::kImag) {
    out_type = RealTypeOf(a->type());
  }
  absl::StatusOr<Array> out = Alloc(ctx, out_type, a->dims());
  if (!out.ok()) return out.status();
  absl::Status st;
  DispatchCType(CTypeOf(a->type()), [&]<class T>() {
    st = Unary<T>(ctx, op, *a, *out, a_in.type());
  });
  if (CTypeOf(a->type()) == CType::kNone) st = TypeError(op, a_in.type());
  if (!st.ok()) return st;
  PrimitiveType storage = out_type;
  if (IsNarrowFloat(a_in.type()) && out_type == PrimitiveType::kF32) storage = a_in.type();
  if (SubByteBits(a_in.type()) && out_type == a->type()) storage = a_in.type();
  return Finish(ctx, *std::move(out), storage);
}

namespace {
absl::StatusOr<Array> BinaryArrays(Ctx& ctx, HloOpcode op, const Array& a_in,
                                   const Array& b_in, hlo::ComparisonDirection dir,
                                   hlo::ComparisonType cmp_type) {
  if (a_in.type() != b_in.type()) {
    return Expected(absl::StrCat("operands of one element type (",
                                 Sv(PrimitiveTypeName(a_in.type())), ")"),
                    PrimitiveTypeName(b_in.type()));
  }
  const Array* both[] = {&a_in, &b_in};
  absl::StatusOr<std::vector<int64_t>> dims = CommonDims(both);
  if (!dims.ok()) return dims.status();
  absl::StatusOr<Array> a = ToCompute(ctx, a_in);
  if (!a.ok()) return a.status();
  absl::StatusOr<Array> b = ToCompute(ctx, b_in);
  if (!b.ok()) return b.status();
  PrimitiveType out_type = a->type();
  if (op == HloOpcode::kCompare) out_type = PrimitiveType::kPred;
  if (op == HloOpcode::kComplex) {
    out_type = a->type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
  }
  absl::StatusOr<Array> out = Alloc(ctx, out_type, *dims);
  if (!out.ok()) return out.status();
  absl::Status st = TypeError(op, a_in.type());
  DispatchCType(CTypeOf(a->type()), [&]<class T>() {
    st = Binary<T>(ctx, op, *a, *b, *out, a_in.type(), dir, cmp_type);
  });
  if (!st.ok()) return st;
  PrimitiveType storage = out_type;
  if (out_type == a->type()) storage = a_in.type();  // narrow or sub-byte
  return Finish(ctx, *std::move(out), storage);
}
}  // namespace

absl::StatusOr<Array> ApplyBinary(Ctx& ctx, HloOpcode op, const Array& a,
                                  const Array& b) {
  return BinaryArrays(ctx, op, a, b, hlo::ComparisonDirection::kEq,
                      hlo::ComparisonType::kFloat);
}

// --- Convert -------------------------------------------------------------

namespace {

template <class To, class From>
To ConvertScalar(From v, int to_bits) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsComplex<From>) return v.real() != 0 || v.imag() != 0;
    else return v != From(0);
  } else if constexpr (kIsComplex<To>) {
    using R = typename RealOf<To>::type;
    if constexpr (kIsComplex<From>) return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else return To(static_cast<R>(v), R(0));
  } else if constexpr (kIsComplex<From>) {
    return ConvertScalar<To>(v.real(), to_bits);
  } else if constexpr (kIsInt<To> && kIsFloat<From>) {
    if (to_bits) {
      // A sub-byte integer saturates at its own range.
      From lo, hi;
      if constexpr (std::is_signed_v<To>) {
        lo = From(-(int64_t{1} << (to_bits - 1)));
        hi = From((int64_t{1} << (to_bits - 1)) - 1);
      } else {
        lo = From(0);
        hi = From((int64_t{1} << to_bits) - 1);
      }
      if (std::isnan(v)) return To(0);
      return static_cast<To>(std::clamp(std::trunc(v), lo, hi));
    }
    return SaturateToInt<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

absl::StatusOr<Array> ConvertArray(const Ctx& ctx, const Array& in, PrimitiveType to) {
  if (KindOf(to) == ElementKind::kNone) {
    return Expected("an array element type to convert to", PrimitiveTypeName(to));
  }
  if (in.type() == to) return in;
  // Same container, only the sub-byte width differs (S8 <-> S4 ...): wrap.
  absl::StatusOr<Array> src = ToCompute(ctx, in);
  if (!src.ok()) return src.status();
  if (IsNarrowFloat(to)) {
    // Through f32 (exact for f32 sources) or f64 (for f64 sources, so a
    // value is rounded once), then rounded to nearest even.
    const PrimitiveType via = src->type() == PrimitiveType::kF64 ? PrimitiveType::kF64
                                                                 : PrimitiveType::kF32;
    absl::StatusOr<Array> mid = ConvertArray(ctx, *src, via);
    if (!mid.ok()) return mid.status();
    absl::StatusOr<Array> c = Materialize(ctx, *mid);
    if (!c.ok()) return c.status();
    absl::StatusOr<Array> out = Alloc(ctx, to, c->dims());
    if (!out.ok()) return out.status();
    const size_t w = Info(to).element_bytes;
    if (via == PrimitiveType::kF32) {
      ctx.pool->ParallelFor(c->element_count(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        F32ToNarrow(to, c->data<float>() + b, out->mutable_data() + b * w, e - b);
      });
    } else {
      ctx.pool->ParallelFor(c->element_count(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) StoreNarrow(to, c->data<double>()[i], out->mutable_data() + i * w);
      });
    }
    return out;
  }
  absl::StatusOr<Array> out = Alloc(ctx, to, src->dims());
  if (!out.ok()) return out.status();
  const int to_bits = SubByteBits(to);
  const CType from_c = CTypeOf(src->type());
  const CType to_c = CTypeOf(to);
  DispatchCType(from_c, [&]<class From>() {
    DispatchCType(to_c, [&]<class To>() {
      Map1<To, From>(ctx, *src, *out, [to_bits](From v) { return ConvertScalar<To>(v, to_bits); });
    });
  });
  WrapSubByte(*out);
  return out;
}

// --- Reduce precision -------------------------------------------------------

namespace {
template <class F>
F ReducePrecisionScalar(F v, int exponent_bits, int mantissa_bits) {
  using UI = typename UintOfSize<sizeof(F)>::type;
  constexpr int kW = sizeof(F) * 8;
  constexpr int kM = std::numeric_limits<F>::digits - 1;
  constexpr int kE = kW - 1 - kM;
  UI x = std::bit_cast<UI>(v);
  if (mantissa_bits < kM) {
    const UI last = UI(1) << (kM - mantissa_bits);
    const UI bias = (last >> 1) - 1;
    const UI x_last = (x & last) >> (kM - mantissa_bits);
    x = (x + x_last + bias) & ~(last - 1);
  }
  if (exponent_bits < kE) {
    const UI sign_mask = UI(1) << (kW - 1);
    const UI exp_mask = ((UI(1) << kE) - 1) << kM;
    const UI exp_bias = (UI(1) << (kE - 1)) - 1;
    const UI reduced_bias = (UI(1) << (exponent_bits - 1)) - 1;
    const UI max_exp = exp_bias + reduced_bias;
    const UI min_exp = exp_bias - reduced_bias;
    const UI x_exp = x & exp_mask;
    const UI signed_zero = x & sign_mask;
    if (x_exp > (max_exp << kM)) {
      x = signed_zero | exp_mask;
    } else if (x_exp <= (min_exp << kM)) {
      x = signed_zero;
    }
  }
  F out = std::bit_cast<F>(x);
  if (std::isnan(v)) return mantissa_bits > 0 ? v : std::numeric_limits<F>::infinity();
  return out;
}
}  // namespace

// --- The family's entry point ------------------------------------------------

absl::StatusOr<Value> EvalElementwise(Ctx& ctx, const hlo::HloInstruction& instr,
                                      Operands ops) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType declared = TypeOf(instr.shape());
  const PrimitiveType storage = ctx.policy->StorageType(declared);
  std::vector<const Array*> arrays;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i));
    if (!a.ok()) return a.status();
    arrays.push_back(*a);
  }
  if (auto arity = hlo::HloOpcodeArity(op); arity && *arity != static_cast<int>(arrays.size())) {
    return Expected(absl::StrCat(*arity, " operands"), absl::StrCat(arrays.size()));
  }
  absl::StatusOr<std::vector<int64_t>> dims = CommonDims(arrays);
  if (!dims.ok()) return dims.status();
  if (!ctx.lifted && DimsOf(instr.shape()) != *dims) {
    return Expected(absl::StrCat("operand dimensions ", DimsString(*dims),
                                 " to be the result's"),
                    ShapeProtoString(instr.shape()));
  }
  absl::StatusOr<Array> result;
  switch (op) {
    case HloOpcode::kConvert:
      result = ConvertArray(ctx, *arrays[0], storage);
      break;
    case HloOpcode::kBitcastConvert: {
      // Bits of the declared operand type (kF32 stores bf16 as f32: round
      // it back first), reinterpreted, then stored as the policy says.
      const PrimitiveType from = TypeOf(instr.operand(0)->shape());
      absl::StatusOr<Array> a = ConvertArray(ctx, *arrays[0], from);
      if (!a.ok()) return a.status();
      if (Info(from).element_bytes != Info(declared).element_bytes ||
          SubByteBits(from) || SubByteBits(declared) || KindOf(declared) == ElementKind::kNone) {
        return Unsupported(absl::StrCat(
            "bitcast-convert between ", Sv(PrimitiveTypeName(from)), " and ",
            Sv(PrimitiveTypeName(declared)),
            " (only element types of one byte width are supported)"));
      }
      absl::StatusOr<Array> c = Materialize(ctx, *a);
      if (!c.ok()) return c.status();
      Array r = c->Retyped(declared);
      if (declared == PrimitiveType::kPred) {
        absl::StatusOr<Array> n = Array::Copy(declared, r.dims(), r.bytes());
        if (!n.ok()) return n.status();
        r = *n;
      }
      result = ConvertArray(ctx, r, storage);
      break;
    }
    case HloOpcode::kReducePrecision: {
      const int e = instr.proto().exponent_bits();
      const int m = instr.proto().mantissa_bits();
      if (e < 1 || m < 0) {
        return Expected("exponent_bits >= 1 and mantissa_bits >= 0",
                        absl::StrCat(e, " and ", m));
      }
      absl::StatusOr<Array> a = ToCompute(ctx, *arrays[0]);
      if (!a.ok()) return a.status();
      absl::StatusOr<Array> out = Alloc(ctx, a->type(), *dims);
      if (!out.ok()) return out.status();
      if (a->type() == PrimitiveType::kF32) {
        Map1<float, float>(ctx, *a, *out, [e, m](float v) { return ReducePrecisionScalar(v, e, m); });
      } else if (a->type() == PrimitiveType::kF64) {
        Map1<double, double>(ctx, *a, *out, [e, m](double v) { return ReducePrecisionScalar(v, e, m); });
      } else {
        return TypeError(op, arrays[0]->type());
      }
      result = ConvertArray(ctx, *out, storage);
      break;
    }
    case HloOpcode::kCopy:
      return *ops[0];
    case HloOpcode::kSelect: {
      const Array& pred = *arrays[0];
      if (pred.type() != PrimitiveType::kPred) {
        return Expected("a PRED selector", PrimitiveTypeName(pred.type()));
      }
      if (arrays[1]->type() != arrays[2]->type()) {
        return Expected(absl::StrCat("on_true and on_false of one type (",
                                     Sv(PrimitiveTypeName(arrays[1]->type())), ")"),
                        PrimitiveTypeName(arrays[2]->type()));
      }
      absl::StatusOr<Array> out = Alloc(ctx, arrays[1]->type(), *dims);
      if (!out.ok()) return out.status();
      auto sel = [&]<class T>() {
        Map3<T, bool, T, T>(ctx, pred, *arrays[1], *arrays[2], *out,
                            [](bool p, T x, T y) { return p ? x : y; });
      };
      switch (arrays[1]->element_bytes()) {
        case 1: sel.operator()<uint8_t>(); break;
        case 2: sel.operator()<uint16_t>(); break;
        case 4: sel.operator()<uint32_t>(); break;
        case 8: sel.operator()<uint64_t>(); break;
        default: sel.operator()<c128>(); break;
      }
      result = *std::move(out);
      break;
    }
    case HloOpcode::kClamp: {
      // clamp(lo, x, hi) = min(max(x, lo), hi), NaN-propagating as maximum
      // and minimum are.
      absl::StatusOr<Array> lo_x = BinaryArrays(ctx, HloOpcode::kMaximum, *arrays[1], *arrays[0],
                                                hlo::ComparisonDirection::kEq, hlo::ComparisonType::kFloat);
      if (!lo_x.ok()) return lo_x.status();
      result = BinaryArrays(ctx, HloOpcode::kMinimum, *lo_x, *arrays[2],
                            hlo::ComparisonDirection::kEq, hlo::ComparisonType::kFloat);
      break;
    }
    case HloOpcode::kCompare: {
      std::optional<hlo::ComparisonDirection> d = instr.comparison_direction();
      if (!d) {
        return Expected("a comparison_direction (EQ, NE, GE, GT, LE, LT)",
                        absl::StrCat("\"", instr.proto().comparison_direction(), "\""));
      }
      std::optional<hlo::ComparisonType> ct = instr.comparison_type();
      hlo::ComparisonType cmp = ct ? *ct : hlo::DefaultComparisonType(static_cast<int>(arrays[0]->type()));
      result = BinaryArrays(ctx, op, *arrays[0], *arrays[1], *d, cmp);
      break;
    }
    default:
      if (hlo::IsElementwiseUnary(op)) {
        result = ApplyUnary(ctx, op, *arrays[0]);
      } else if (hlo::IsElementwiseBinary(op) && op != HloOpcode::kStochasticConvert) {
        result = BinaryArrays(ctx, op, *arrays[0], *arrays[1],
                              hlo::ComparisonDirection::kEq, hlo::ComparisonType::kFloat);
      } else {
        return Unsupported(absl::StrCat("opcode ", Sv(instr.opcode_string()),
                                        " is not implemented"));
      }
  }
  if (!result.ok()) return result.status();
  if (result->type() != storage) {
    return Expected(absl::StrCat("a result of element type ",
                                 Sv(PrimitiveTypeName(result->type())),
                                 " from these operands"),
                    ShapeProtoString(instr.shape()));
  }
  return Value(*std::move(result));
}

}  // namespace decomposed::eval::internal
