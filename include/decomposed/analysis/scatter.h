// A bounded sample of (expected, actual) element pairs, for the scatter
// picture of a two-sided compare (analysis/plots.h, `compare --plot`).
//
// ScatterTap wraps the two TensorSets given to CompareTensorSets; each
// wrapped set forwards every call to the set it wraps and, as a tensor's
// elements stream by, keeps the `points` elements whose index has the
// smallest hash (a fixed seed mixed with the tensor and element indices):
// bottom-k sampling, a reservoir that gives a uniform sample without
// replacement in O(points) memory per tensor and side, whatever the size.
// The choice depends on the index only, so both sides keep the same
// elements though each is read on its own thread; Take() pairs them. The
// comparison itself is unchanged, but it reads the wrapped sets through
// their decoders (TensorSet::Stream), not as verbatim runs.
//
// Values are the elements' real parts, as f64 (complex: the real part).
// Thread safety: each wrapped set is used by one thread at a time, as any
// TensorSet; Take() after the comparison has returned.
//
// Example:
//   decomposed::ScatterTap tap(2000);
//   std::unique_ptr<decomposed::TensorSet> e = tap.WrapExpected(**expected);
//   std::unique_ptr<decomposed::TensorSet> a = tap.WrapActual(**actual);
//   auto report = decomposed::CompareTensorSets(*e, *a, options);
//   std::vector<decomposed::ScatterTensor> points = tap.Take();
#ifndef DECOMPOSED_ANALYSIS_SCATTER_H_
#define DECOMPOSED_ANALYSIS_SCATTER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "decomposed/analysis/tensor_set.h"

namespace decomposed {

// Points per tensor kept by default: enough for a picture, 3 x 8 bytes
// each per side.
inline constexpr size_t kDefaultScatterPoints = 2000;
// At most this many per tensor (memory: 24 bytes per point per side).
inline constexpr size_t kMaxScatterPoints = size_t{1} << 20;

struct ScatterPoint {
  uint64_t index = 0;  // linear (row-major) element index
  double expected = 0, actual = 0;
};

struct ScatterTensor {
  size_t index = 0;            // tensor index
  uint64_t elements = 0;       // of the tensor
  std::vector<ScatterPoint> points;  // ascending element index
};

class ScatterTap {
 public:
  explicit ScatterTap(size_t points = kDefaultScatterPoints, uint64_t seed = 0);
  ~ScatterTap();
  ScatterTap(const ScatterTap&) = delete;
  ScatterTap& operator=(const ScatterTap&) = delete;

  // The wrappers; `set` must outlive them, and they must not outlive the tap.
  std::unique_ptr<TensorSet> WrapExpected(TensorSet& set);
  std::unique_ptr<TensorSet> WrapActual(TensorSet& set);

  // The sampled tensors (those both sides streamed), ascending by index.
  std::vector<ScatterTensor> Take();

  struct Side;  // one side's samples (scatter.cc)

 private:
  size_t points_;
  uint64_t seed_;
  std::unique_ptr<Side> expected_, actual_;
};

}  // namespace decomposed

#endif  // DECOMPOSED_ANALYSIS_SCATTER_H_
