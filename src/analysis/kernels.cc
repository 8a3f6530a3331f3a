// The block kernels of compare.h and stats.h: straight-line loops over a
// block of doubles, written so that the compiler vectorizes them (lane
// accumulators instead of one serial sum), and compiled twice on x86-64 (a
// baseline and an AVX2 clone picked at load time by the CPU's features).
// FMA is deliberately not enabled: a fused multiply-add rounds differently,
// and the rules must give the same answer as the scalar code that finds the
// mismatches' indices (compare.h).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "src/analysis/kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(DECOMPOSED_NO_TARGET_CLONES)
#define DECOMPOSED_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DECOMPOSED_CLONES
#endif

#if defined(__GNUC__) && !defined(__clang__)
// The vector helpers are always inlined: no vector crosses a call, so the
// AVX argument-passing ABI note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace decomposed::internal {
namespace {

// Inlined into each clone, so that the clone's instruction set applies.
#define DECOMPOSED_INLINE [[gnu::always_inline]] inline

// Four doubles (GCC / Clang vector extensions: two SSE2 registers on the
// baseline, one AVX register in the AVX2 clone). Comparisons give masks of
// int64 lanes, -1 for true.
typedef double V __attribute__((vector_size(32)));
typedef int64_t M __attribute__((vector_size(32)));
typedef float VF __attribute__((vector_size(16)));
typedef int32_t MF __attribute__((vector_size(16)));
constexpr size_t kW = 4;
constexpr double kMax = std::numeric_limits<double>::max();

DECOMPOSED_INLINE V Splat(double x) { return V{x, x, x, x}; }

// Four elements of a kernel type as doubles (exact).
template <KernelType T>
DECOMPOSED_INLINE V Load4(const char* p) {
  if constexpr (T == KernelType::kF64) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else if constexpr (T == KernelType::kF32) {
    // Built lane by lane: GCC turns this into one vcvtps2pd in the AVX2
    // clone, where __builtin_convertvector goes through two halves.
    typedef float VFu __attribute__((vector_size(16), aligned(1)));
    const VF f = *reinterpret_cast<const VFu*>(p);
    return V{f[0], f[1], f[2], f[3]};
  } else {
    typedef uint16_t H __attribute__((vector_size(8)));
    H h;
    std::memcpy(&h, p, sizeof h);
    const VF f = reinterpret_cast<VF>(__builtin_convertvector(h, MF) << 16);
    return V{f[0], f[1], f[2], f[3]};
  }
}
template <KernelType T>
DECOMPOSED_INLINE double Load1(const char* p) {
  return KernelValue(T, p);
}
template <KernelType T>
constexpr size_t kBytes = T == KernelType::kF64 ? 8 : T == KernelType::kF32 ? 4 : 2;
DECOMPOSED_INLINE V Abs(V x) {
  const M mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  return reinterpret_cast<V>(reinterpret_cast<M>(x) & mask);
}
DECOMPOSED_INLINE VF Absf(VF x) {
  const MF mask = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
  return reinterpret_cast<VF>(reinterpret_cast<MF>(x) & mask);
}
DECOMPOSED_INLINE double Sum(V v) { return (v[0] + v[1]) + (v[2] + v[3]); }
DECOMPOSED_INLINE int64_t SumM(M v) { return (v[0] + v[1]) + (v[2] + v[3]); }
DECOMPOSED_INLINE double Max(V v) {
  double m = v[0];
  for (size_t j = 1; j < kW; ++j) m = v[j] > m ? v[j] : m;
  return m;
}
DECOMPOSED_INLINE double Min(V v) {
  double m = v[0];
  for (size_t j = 1; j < kW; ++j) m = v[j] < m ? v[j] : m;
  return m;
}

// FastClose (compare.h) on four lanes: the same operations, lane by lane.
template <FastRule R>
DECOMPOSED_INLINE M CloseV(V e, V a, V d, const FastRealParams& p) {
  if constexpr (R == FastRule::kTorch) {
    return d <= Splat(p.atol) + Abs(Splat(p.rtol) * e);
  } else if constexpr (R == FastRule::kNumpyDouble) {
    return d <= Splat(p.atol) + Splat(p.rtol) * Abs(e);
  } else if constexpr (R == FastRule::kNumpyFloat) {
    const VF ef = __builtin_convertvector(e, VF), af = __builtin_convertvector(a, VF);
    const VF rt = {p.rtol_f, p.rtol_f, p.rtol_f, p.rtol_f};
    const VF at = {p.atol_f, p.atol_f, p.atol_f, p.atol_f};
    const MF c = Absf(af - ef) <= at + rt * Absf(ef);
    return __builtin_convertvector(c, M);
  } else {
    return ~((d > Splat(p.atol)) & (d / Abs(e) > Splat(p.rtol)));
  }
}

template <FastRule R, KernelType T>
DECOMPOSED_INLINE FastRealResult RealBlock(const char* e, const char* a, size_t k,
                                           const FastRealParams& p) {
  constexpr size_t b = kBytes<T>;
  FastRealResult r;
  const size_t kv = k / kW * kW;
  // One pass: the rule, every metric, and whether every value and every
  // difference is finite (if not, the results are dropped).
  M ok = {-1, -1, -1, -1};
  const V vmax = Splat(kMax);
  V s_abs = {}, s_sq = {}, s_dot = {}, s_ee = {}, s_aa = {}, mx = {};
  M mism = {}, cand = {};
  const V thr = Splat(p.rel_threshold);
  for (size_t i = 0; i < kv; i += kW) {
    const V ev = Load4<T>(e + i * b), av = Load4<T>(a + i * b);
    const V d = Abs(av - ev);
    const V ae = Abs(ev);
    ok &= (ae <= vmax) & (Abs(av) <= vmax) & (d <= vmax);  // false for NaN
    mism -= ~CloseV<R>(ev, av, d, p);
    cand -= d > thr * ae;
    mx = d > mx ? d : mx;
    s_abs += d;
    s_sq += d * d;
    s_dot += av * ev;
    s_ee += ev * ev;
    s_aa += av * av;
  }
  bool finite = (ok[0] & ok[1] & ok[2] & ok[3]) == -1;
  for (size_t i = kv; i < k; ++i) {
    const double ev = Load1<T>(e + i * b), av = Load1<T>(a + i * b);
    finite &= std::fabs(ev) <= kMax && std::fabs(av) <= kMax && std::fabs(av - ev) <= kMax;
  }
  if (!finite) return r;
  r.finite = true;
  r.mismatches = static_cast<uint64_t>(SumM(mism));
  r.rel_candidates = static_cast<uint64_t>(SumM(cand));
  r.max_abs = Max(mx);
  r.abs_sum = Sum(s_abs);
  r.sq_sum = Sum(s_sq);
  r.dot = Sum(s_dot);
  r.e_sq = Sum(s_ee);
  r.a_sq = Sum(s_aa);
  for (size_t i = kv; i < k; ++i) {
    const double ev = Load1<T>(e + i * b), av = Load1<T>(a + i * b);
    const double d = std::fabs(av - ev);
    r.mismatches += !FastClose<R>(ev, av, d, p);
    r.rel_candidates += d > p.rel_threshold * std::fabs(ev);
    r.max_abs = d > r.max_abs ? d : r.max_abs;
    r.abs_sum += d;
    r.sq_sum += d * d;
    r.dot += av * ev;
    r.e_sq += ev * ev;
    r.a_sq += av * av;
  }
  return r;
}

template <KernelType T>
DECOMPOSED_INLINE FastRealResult RealBlockFor(const char* e, const char* a, size_t k,
                                              const FastRealParams& p) {
  switch (p.rule) {
    case FastRule::kTorch: return RealBlock<FastRule::kTorch, T>(e, a, k, p);
    case FastRule::kNumpyDouble: return RealBlock<FastRule::kNumpyDouble, T>(e, a, k, p);
    case FastRule::kNumpyFloat: return RealBlock<FastRule::kNumpyFloat, T>(e, a, k, p);
    case FastRule::kXla: return RealBlock<FastRule::kXla, T>(e, a, k, p);
  }
  return {};
}

template <KernelType T>
DECOMPOSED_INLINE BlockSums SumsBlock(const char* p, size_t k, double shift) {
  constexpr size_t b = kBytes<T>;
  BlockSums r;
  if (k == 0) {
    r.all_finite = true;
    return r;
  }
  // Two vectors per step, each with its own accumulators (the sums are
  // chains of dependent adds).
  const size_t kv = k / (2 * kW) * (2 * kW);
  const V vmax = Splat(kMax), K = Splat(shift), zero = Splat(0);
  const double first = Load1<T>(p);
  M ok = {-1, -1, -1, -1}, zeros = {};
  V lo0 = Splat(first), hi0 = lo0, lo1 = lo0, hi1 = lo0, s0 = {}, s1 = {}, q0 = {}, q1 = {};
  for (size_t i = 0; i < kv; i += 2 * kW) {
    const V x0 = Load4<T>(p + i * b), x1 = Load4<T>(p + (i + kW) * b);
    ok &= (Abs(x0) <= vmax) & (Abs(x1) <= vmax);  // false for NaN
    lo0 = x0 < lo0 ? x0 : lo0;
    lo1 = x1 < lo1 ? x1 : lo1;
    hi0 = x0 > hi0 ? x0 : hi0;
    hi1 = x1 > hi1 ? x1 : hi1;
    zeros -= (x0 == zero) + (x1 == zero);
    const V d0 = x0 - K, d1 = x1 - K;
    s0 += d0;
    s1 += d1;
    q0 += d0 * d0;
    q1 += d1 * d1;
  }
  bool finite = (ok[0] & ok[1] & ok[2] & ok[3]) == -1;
  r.min = std::min(Min(lo0), Min(lo1));
  r.max = std::max(Max(hi0), Max(hi1));
  r.s = Sum(s0) + Sum(s1);
  r.q = Sum(q0) + Sum(q1);
  r.zeros = static_cast<uint64_t>(SumM(zeros));
  for (size_t i = kv; i < k; ++i) {
    const double x = Load1<T>(p + i * b);
    finite &= std::fabs(x) <= kMax;
    r.min = x < r.min ? x : r.min;
    r.max = x > r.max ? x : r.max;
    r.zeros += x == 0;
    const double d = x - shift;
    r.s += d;
    r.q += d * d;
  }
  if (!finite) return BlockSums{};  // all_finite false
  r.all_finite = true;
  return r;
}

}  // namespace

DECOMPOSED_CLONES
FastRealResult FastRealBlock(KernelType type, const char* e, const char* a, size_t k,
                             const FastRealParams& p) {
  switch (type) {
    case KernelType::kF32: return RealBlockFor<KernelType::kF32>(e, a, k, p);
    case KernelType::kF64: return RealBlockFor<KernelType::kF64>(e, a, k, p);
    case KernelType::kBF16: return RealBlockFor<KernelType::kBF16>(e, a, k, p);
  }
  return {};
}

DECOMPOSED_CLONES
BlockSums SumsBlock(KernelType type, const char* p, size_t k, double shift) {
  switch (type) {
    case KernelType::kF32: return SumsBlock<KernelType::kF32>(p, k, shift);
    case KernelType::kF64: return SumsBlock<KernelType::kF64>(p, k, shift);
    case KernelType::kBF16: return SumsBlock<KernelType::kBF16>(p, k, shift);
  }
  return {};
}

}  // namespace decomposed::internal
