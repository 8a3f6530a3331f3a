// Private to src/eval: the strided elementwise loop (ATen TensorIterator's
// idea). An output of `dims`, contiguous, and N inputs each with its own
// strides (0 for a broadcast dimension): dimensions of size 1 are dropped,
// adjacent dimensions every input walks contiguously are merged, and the
// flat output range is split over the thread pool. Each piece gets runs
// along the innermost (merged) dimension: the body's inner loop sees input
// strides that are mostly 1 or 0, which it specialises so the compiler
// vectorises it.
#ifndef DECOMPOSED_SRC_EVAL_LOOPS_H_
#define DECOMPOSED_SRC_EVAL_LOOPS_H_

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "decomposed/eval/thread_pool.h"
#include "decomposed/eval/value.h"

namespace decomposed::eval::internal {

// Work items (elements) per thread chunk: below this an op runs on one
// thread, where handing out work costs more than it saves.
inline constexpr int64_t kElementwiseGrain = 1 << 15;

template <size_t N>
struct StridedPlan {
  std::vector<int64_t> dims;                     // merged, outermost first
  std::array<std::vector<int64_t>, N> strides;   // per input, per dim
  int64_t total = 1;
};

template <size_t N>
StridedPlan<N> PlanStrided(std::span<const int64_t> dims,
                           const std::array<std::vector<int64_t>, N>& strides) {
  StridedPlan<N> p;
  for (int64_t d : dims) p.total *= d;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!p.dims.empty()) {
      // Merge with the previous kept dim when every input walks it
      // contiguously: stride[prev] == stride[d] * dims[d].
      bool merge = true;
      for (size_t i = 0; i < N && merge; ++i) {
        merge = p.strides[i].back() == strides[i][d] * dims[d];
      }
      if (merge) {
        p.dims.back() *= dims[d];
        for (size_t i = 0; i < N; ++i) p.strides[i].back() = strides[i][d];
        continue;
      }
    }
    p.dims.push_back(dims[d]);
    for (size_t i = 0; i < N; ++i) p.strides[i].push_back(strides[i][d]);
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    for (size_t i = 0; i < N; ++i) p.strides[i].push_back(0);
  }
  return p;
}

// body(out_pos, in_offsets, inner_strides, count): `count` consecutive
// outputs from flat position out_pos; input i's first element is at
// element offset in_offsets[i], then every inner_strides[i] elements.
template <size_t N, class Body>
void ForEachStrided(ThreadPool* pool, const StridedPlan<N>& p, int64_t grain,
                    const Body& body) {
  const int64_t rank = static_cast<int64_t>(p.dims.size());
  const int64_t inner = p.dims.back();
  std::array<int64_t, N> inner_strides;
  for (size_t i = 0; i < N; ++i) inner_strides[i] = p.strides[i].back();
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(rank);
    int64_t rem = begin;
    for (int64_t d = rank - 1; d >= 0; --d) {
      idx[d] = rem % p.dims[d];
      rem /= p.dims[d];
    }
    int64_t pos = begin;
    while (pos < end) {
      std::array<int64_t, N> off{};
      for (int64_t d = 0; d < rank; ++d) {
        for (size_t i = 0; i < N; ++i) off[i] += idx[d] * p.strides[i][d];
      }
      const int64_t count = std::min(inner - idx[rank - 1], end - pos);
      body(pos, off, inner_strides, count);
      pos += count;
      idx[rank - 1] += count;
      for (int64_t d = rank - 1; d > 0 && idx[d] == p.dims[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  };
  if (pool) {
    pool->ParallelFor(p.total, grain, run);
  } else {
    run(0, p.total);
  }
}

}  // namespace decomposed::eval::internal

#endif  // DECOMPOSED_SRC_EVAL_LOOPS_H_
