// Bundle writer throughput, reported against a memcpy of the same bytes in
// the same process (the baseline: what any writer must at least do).
//   build/bin/capture_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "decomposed/io/byte_sink.h"
#include "decomposed/capture/bundle_writer.h"

namespace {

using namespace decomposed;
using namespace decomposed::capture;

constexpr int64_t kRows = 2048, kCols = 2048;  // 16 MiB of float32

std::vector<float>& Data() {
  static auto* v = [] {
    auto* v = new std::vector<float>(kRows * kCols);
    for (size_t i = 0; i < v->size(); ++i) (*v)[i] = static_cast<float>(i);
    return v;
  }();
  return *v;
}

// Copies into a reused buffer: the baseline.
void BM_Memcpy(benchmark::State& state) {
  std::vector<char> dst(Data().size() * 4);
  for (auto _ : state) {
    std::memcpy(dst.data(), Data().data(), dst.size());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * dst.size());
}
BENCHMARK(BM_Memcpy);

// Sink that copies into a reused buffer, like BM_Memcpy's destination.
class CopySink {
 public:
  explicit CopySink(size_t n) : buf_(n + (1 << 16)) {}
  bool Write(std::string_view d) {
    if (pos_ + d.size() > buf_.size()) pos_ = 0;
    std::memcpy(buf_.data() + pos_, d.data(), d.size());
    pos_ += d.size();
    total_ += d.size();
    return true;
  }
  bool Flush() { return true; }
  uint64_t position() const { return total_; }
  const absl::Status& status() const { return status_; }
  void Reset() { pos_ = 0; total_ = 0; }

 private:
  std::vector<char> buf_;
  size_t pos_ = 0;
  uint64_t total_ = 0;
  absl::Status status_;
};

void BM_WriteNpy(benchmark::State& state) {
  HostTensor t{Data().data(), TorchType::kFloat32, {kRows, kCols}, {}};
  CopySink sink(Data().size() * 4);
  for (auto _ : state) {
    sink.Reset();
    benchmark::DoNotOptimize(WriteNpyTensor(t, sink));
  }
  state.SetBytesProcessed(state.iterations() * Data().size() * 4);
}
BENCHMARK(BM_WriteNpy);

// pt reads the data twice: once for the CRC-32, once to write it.
void BM_WritePt(benchmark::State& state) {
  HostTensor t{Data().data(), TorchType::kFloat32, {kRows, kCols}, {}};
  CopySink sink(Data().size() * 4);
  for (auto _ : state) {
    sink.Reset();
    benchmark::DoNotOptimize(WritePtTensor(t, sink));
  }
  state.SetBytesProcessed(state.iterations() * Data().size() * 4);
}
BENCHMARK(BM_WritePt);

// A transposed view: the strided gather into C order.
void BM_WriteNpyTransposed(benchmark::State& state) {
  HostTensor t{Data().data(), TorchType::kFloat32, {kCols, kRows}, {1, kCols}};
  CopySink sink(Data().size() * 4);
  for (auto _ : state) {
    sink.Reset();
    benchmark::DoNotOptimize(WriteNpyTensor(t, sink));
  }
  state.SetBytesProcessed(state.iterations() * Data().size() * 4);
}
BENCHMARK(BM_WriteNpyTransposed);

// A row-sliced view (inner stride 1): rows copied element by element today.
void BM_WriteNpyRowSlice(benchmark::State& state) {
  HostTensor t{Data().data(), TorchType::kFloat32, {kRows, kCols / 2}, {kCols, 1}};
  CopySink sink(Data().size() * 4);
  for (auto _ : state) {
    sink.Reset();
    benchmark::DoNotOptimize(WriteNpyTensor(t, sink));
  }
  state.SetBytesProcessed(state.iterations() * Data().size() * 2);
}
BENCHMARK(BM_WriteNpyRowSlice);

}  // namespace

BENCHMARK_MAIN();
