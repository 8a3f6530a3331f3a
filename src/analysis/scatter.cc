#include "decomposed/analysis/scatter.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "decomposed/xla/element_value.h"

namespace decomposed {

namespace {

// SplitMix64's finaliser: a good 64-bit mix of the index.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Kept {
  uint64_t hash;
  uint64_t index;
  double value;
  bool operator<(const Kept& o) const { return hash < o.hash; }  // max-heap top: largest hash
};

}  // namespace

struct ScatterTap::Side {
  size_t points;
  uint64_t seed;
  std::map<size_t, std::vector<Kept>> kept;  // by tensor: a max-heap on hash
  std::map<size_t, uint64_t> elements;

  // Elements [first, first + n) of tensor `i` (type `t`) at `p`.
  void Add(size_t i, PrimitiveType t, uint64_t first, const char* p, uint64_t n) {
    std::vector<Kept>& heap = kept[i];
    const size_t w = Info(t).element_bytes;
    const bool complex = KindOf(t) == ElementKind::kComplex;
    const uint64_t base = Mix(seed ^ Mix(i));
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t h = Mix(base ^ (first + j));
      if (heap.size() == points && !(h < heap.front().hash)) continue;
      const char* e = p + j * w;
      const double v = complex ? ComplexValue(t, e).re : RealValue(t, e);
      if (heap.size() == points) {
        std::pop_heap(heap.begin(), heap.end());
        heap.back() = {h, first + j, v};
      } else {
        heap.push_back({h, first + j, v});
      }
      std::push_heap(heap.begin(), heap.end());
    }
  }
};

namespace {

class TappedSet : public TensorSet {
 public:
  TappedSet(TensorSet& set, ScatterTap::Side* side) : set_(set), side_(side) {}
  std::string Name() const override { return set_.Name(); }
  size_t size() const override { return set_.size(); }
  bool HasInputsAndOutputs() const override { return set_.HasInputsAndOutputs(); }
  absl::StatusOr<TensorInfo> Describe(size_t i) override { return set_.Describe(i); }
  // Runs are read by compare itself, past the tap: every tensor is streamed.
  absl::StatusOr<std::optional<TensorRun>> Run(size_t) override {
    return std::optional<TensorRun>();
  }
  absl::Status Stream(size_t i, const ChunkFn& emit) override {
    absl::StatusOr<TensorInfo> t = set_.Describe(i);
    if (!t.ok()) return t.status();
    const PrimitiveType type = t->type;
    const size_t w = Info(type).element_bytes;
    side_->kept[i].clear();
    side_->elements[i] = t->element_count();
    uint64_t done = 0;
    std::string carry;  // a partial element split across chunks
    return set_.Stream(i, [&](std::string_view chunk) -> absl::Status {
      std::string_view c = chunk;
      if (!carry.empty()) {
        const size_t k = std::min(w - carry.size(), c.size());
        carry.append(c.data(), k);
        c.remove_prefix(k);
        if (carry.size() == w) {
          side_->Add(i, type, done, carry.data(), 1);
          ++done;
          carry.clear();
        }
      }
      const uint64_t whole = c.size() / w;
      side_->Add(i, type, done, c.data(), whole);
      done += whole;
      carry.append(c.data() + whole * w, c.size() - whole * w);
      return emit(chunk);
    });
  }

 private:
  TensorSet& set_;
  ScatterTap::Side* side_;
};

}  // namespace

ScatterTap::ScatterTap(size_t points, uint64_t seed)
    : points_(std::clamp<size_t>(points, 1, kMaxScatterPoints)),
      seed_(seed),
      expected_(new Side{points_, seed_, {}, {}}),
      actual_(new Side{points_, seed_, {}, {}}) {}

ScatterTap::~ScatterTap() = default;

std::unique_ptr<TensorSet> ScatterTap::WrapExpected(TensorSet& set) {
  return std::make_unique<TappedSet>(set, expected_.get());
}
std::unique_ptr<TensorSet> ScatterTap::WrapActual(TensorSet& set) {
  return std::make_unique<TappedSet>(set, actual_.get());
}

std::vector<ScatterTensor> ScatterTap::Take() {
  std::vector<ScatterTensor> out;
  for (auto& [i, ek] : expected_->kept) {
    auto ak = actual_->kept.find(i);
    if (ak == actual_->kept.end()) continue;
    if (expected_->elements[i] != actual_->elements[i]) continue;
    auto by_index = [](const Kept& a, const Kept& b) { return a.index < b.index; };
    std::sort(ek.begin(), ek.end(), by_index);
    std::sort(ak->second.begin(), ak->second.end(), by_index);
    ScatterTensor t;
    t.index = i;
    t.elements = expected_->elements[i];
    // The same hash picks the same elements on both sides; walk both in
    // step and keep the indices they share (all of them, for sides of one
    // shape read in full).
    size_t a = 0;
    for (const Kept& e : ek) {
      while (a < ak->second.size() && ak->second[a].index < e.index) ++a;
      if (a < ak->second.size() && ak->second[a].index == e.index) {
        t.points.push_back({e.index, e.value, ak->second[a].value});
      }
    }
    out.push_back(std::move(t));
  }
  expected_->kept.clear();
  actual_->kept.clear();
  return out;
}

}  // namespace decomposed
