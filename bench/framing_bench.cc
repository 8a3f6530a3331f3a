// Framing benchmarks: box decode/encode, block iteration, and neuronx-cc's
// snapshot-unpack's way of decoding a box as the in-process baseline.
//
//   build/bin/framing_bench --benchmark_min_time=1
//
// Compare items_per_second of BM_BoxDecode with BM_BoxDecodeReference: both
// decode the same bytes (kBoxes boxes whose values have 0..32 significant
// bits, uniformly: varints of 1..5 bytes, like real counts and lengths).
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/proto/xla_data.pb.h"

namespace decomposed {
namespace {

constexpr size_t kBoxes = 1 << 16;

const std::vector<uint64_t>& Values() {
  static const std::vector<uint64_t>* v = [] {
    auto* out = new std::vector<uint64_t>;
    std::mt19937_64 rng(42);
    for (size_t i = 0; i < kBoxes; ++i) {
      int bits = static_cast<int>(rng() % 33);
      out->push_back(bits == 0 ? 0 : rng() >> (64 - bits));
    }
    return out;
  }();
  return *v;
}

const std::string& Boxes(bool with_shape) {
  static std::string cache[2];
  std::string& s = cache[with_shape];
  if (s.empty()) {
    StringSink sink(&s);
    for (uint64_t v : Values()) WriteBox(sink, v, BoxWriteOptions{with_shape});
  }
  return s;
}

void DecodeAll(benchmark::State& state, bool with_shape) {
  const std::string& bytes = Boxes(with_shape);
  uint64_t sum = 0;
  for (auto _ : state) {
    MemorySource src(bytes);
    for (size_t i = 0; i < kBoxes; ++i) {
      absl::StatusOr<uint64_t> v = ReadBox(src, Frame{"box"});
      if (!v.ok()) [[unlikely]] {
        state.SkipWithError(std::string(v.status().message()).c_str());
        return;
      }
      sum += *v;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBoxes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}

void BM_BoxDecode(benchmark::State& state) { DecodeAll(state, false); }
BENCHMARK(BM_BoxDecode);

// Boxes that also carry `shape {element_type: U64 layout {}}` take the
// general (slow) path.
void BM_BoxDecodeWithShape(benchmark::State& state) { DecodeAll(state, true); }
BENCHMARK(BM_BoxDecodeWithShape);

// The same bytes through a buffered source (FdSource's window logic) with
// a 4 KiB buffer: refills interrupt the fast path.
void BM_BoxDecodeBuffered(benchmark::State& state) {
  const std::string& bytes = Boxes(false);
  uint64_t sum = 0;
  for (auto _ : state) {
    std::istringstream in(bytes);
    IstreamSource src(in, 4096);
    for (size_t i = 0; i < kBoxes; ++i) {
      absl::StatusOr<uint64_t> v = ReadBox(src, Frame{"box"});
      if (!v.ok()) [[unlikely]] {
        state.SkipWithError(std::string(v.status().message()).c_str());
        return;
      }
      sum += *v;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBoxes));
}
BENCHMARK(BM_BoxDecodeBuffered);

// Snapshot-unpack's read_uint64 (docs/format.md §4.2): L = (signed char)
// length byte, body = new char[L], read L bytes, a fresh LiteralProto,
// ParseFromString, u64s(0), delete[]. The "read" is a memcpy from memory
// here (the tool reads an ifstream, which would only make the baseline
// slower).
void BM_BoxDecodeReference(benchmark::State& state) {
  const std::string& bytes = Boxes(false);
  uint64_t sum = 0;
  for (auto _ : state) {
    const char* p = bytes.data();
    for (size_t i = 0; i < kBoxes; ++i) {
      long len = static_cast<signed char>(*p++);
      char* body = new char[static_cast<size_t>(len)];
      std::memcpy(body, p, static_cast<size_t>(len));
      p += len;
      xla::LiteralProto lp;
      lp.ParseFromString(std::string(body, static_cast<size_t>(len)));
      sum += lp.u64s(0);
      delete[] body;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBoxes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_BoxDecodeReference);

void BM_BoxEncode(benchmark::State& state) {
  const std::vector<uint64_t>& values = Values();
  std::string out(kBoxes * limits::kMaxBoxBytes, '\0');
  for (auto _ : state) {
    char* p = out.data();
    for (uint64_t v : values) p += EncodeBox(v, p);
    benchmark::DoNotOptimize(p);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBoxes));
}
BENCHMARK(BM_BoxEncode);

// Composite C: box(10^6) then 10^6 elements of a 4-byte body each,
// iterated lazily with BlockReader (bodies skipped, not copied).
constexpr uint64_t kElements = 1000000;

const std::string& Block() {
  static const std::string* s = [] {
    auto* out = new std::string;
    StringSink sink(out);
    BlockWriter<StringSink> w(sink);
    (void)w.Begin(kElements);
    for (uint64_t i = 0; i < kElements; ++i) {
      (void)w.WriteElement(std::string_view("\x10\x09\x2a\x00", 4));
    }
    return out;
  }();
  return *s;
}

void BM_BlockIterate(benchmark::State& state) {
  const std::string& bytes = Block();
  uint64_t total = 0;
  for (auto _ : state) {
    MemorySource src(bytes);
    BlockReader<MemorySource> reader(src, "input");
    absl::StatusOr<uint64_t> n = reader.Start();
    if (!n.ok() || *n != kElements) {
      state.SkipWithError("bad count");
      return;
    }
    ElementInfo e;
    for (;;) {
      absl::StatusOr<bool> more = reader.Next(&e);
      if (!more.ok()) [[unlikely]] {
        state.SkipWithError(std::string(more.status().message()).c_str());
        return;
      }
      if (!*more) break;
      total += e.length;
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kElements));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_BlockIterate);

}  // namespace
}  // namespace decomposed

BENCHMARK_MAIN();
