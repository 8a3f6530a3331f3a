// Run-time samples of a benchmark that compares two tools in alternation
// (pack_bench, unpack_bench): the median and the fastest run of each side.
// On this class of VM one 1 GiB page-cache copy takes 0.5 s or 1.5-2 s
// depending on where the kernel places the pages (perf shows the kernel's
// memcpy itself slowing down), for `cp` as for our tools, so a sum over a
// few runs says more about that draw than about the tool: the benches
// report the ratio of medians and the ratio of the fastest runs beside it.
#ifndef DECOMPOSED_BENCH_SAMPLES_H_
#define DECOMPOSED_BENCH_SAMPLES_H_

#include <algorithm>
#include <vector>

namespace decomposed::bench {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double Fastest(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

}  // namespace decomposed::bench

#endif  // DECOMPOSED_BENCH_SAMPLES_H_
