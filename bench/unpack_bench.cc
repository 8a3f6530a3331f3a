// Unpack throughput and memory, against `cp` of the same file and against a
// reference that materialises the literal the way neuronx-cc's
// snapshot-unpack does (docs/format.md §10: read the body into a buffer,
// LiteralProto::ParseFromString, copy into an array, write the .npy).
//
// Inputs (generated once into $UNPACK_BENCH_DIR, default /tmp/unpack_bench,
// and removed at exit): decomposed files each holding one literal of
// $UNPACK_BENCH_MIB MiB of payload (default 1024): F32, BF16, and S32
// varints (values in [0, 2^18): 1 to 3 bytes each).
//
// Benchmarks (each iteration writes the outputs again):
//   BM_DecodeS32Memory/<dist> the varint decoder alone, memory to NullSink
//   BM_Unpack/<type>/<copy>  decomposed::Unpack, copy 0 = buffer,
//                            1 = copy_file_range, 2 = splice (the default)
//   BM_Cp/<type>             /bin/cp of the input file
//   BM_Reference/<type>      protobuf materialisation
// Counters: bytes_per_second (payload bytes), peak_rss_MiB (this process's
// ru_maxrss so far, or the children's for cp). ru_maxrss only grows, so it
// reflects every benchmark run before in the same process (BM_DecodeS32Memory
// holds a 64 MiB body): read peak RSS from one process per tool, as
// scripts/bench-unpack.sh does with /usr/bin/time -v.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/splice_copy.h"
#include "decomposed/container/framing.h"
#include "decomposed/wire/wire.h"
#include "decomposed/npy/npy.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/unpack.h"
#include "progress_cost.h"
#include "samples.h"

namespace {

using decomposed::wire::VarintSize;
using decomposed::wire::WriteVarint;

std::string BenchDir() {
  const char* d = std::getenv("UNPACK_BENCH_DIR");
  return d && *d ? d : "/tmp/unpack_bench";
}
uint64_t PayloadBytes() {
  const char* m = std::getenv("UNPACK_BENCH_MIB");
  return (m && *m ? std::strtoull(m, nullptr, 10) : 1024) << 20;
}

enum Kind { kF32 = 0, kBF16 = 1, kS32 = 2 };
const char* kNames[] = {"F32", "BF16", "S32"};

std::string Varint(uint64_t v) {
  char b[10];
  return std::string(b, WriteVarint(v, b) - b);
}

// Writes the decomposed file for `kind` once; returns its path.
std::string InputFor(Kind kind) {
  std::string path = BenchDir() + "/" + kNames[kind] + ".decomposed_hlo_snapshot";
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return path;
  ::mkdir(BenchDir().c_str(), 0755);
  const uint64_t bytes = PayloadBytes();
  const int type = kind == kF32 ? 11 : kind == kBF16 ? 16 : 4;
  const uint64_t n = bytes / (kind == kBF16 ? 2 : 4);
  const int field = kind == kF32 ? 8 : kind == kBF16 ? 13 : 4;
  // S32 data: varints of i % 2^18 (1..3 bytes).
  uint64_t data_len = 0;
  if (kind == kS32) {
    for (uint64_t v = 0; v < (1u << 18); ++v) data_len += VarintSize(v);
    data_len *= n >> 18;
  } else {
    data_len = bytes;
  }
  std::string shape = Varint(2 << 3) + Varint(type) + Varint((3 << 3) | 2) +
                      Varint(VarintSize(n)) + Varint(n) +
                      Varint((5 << 3) | 2) + Varint(3) + Varint((1 << 3) | 2) +
                      Varint(1) + Varint(0);
  std::string head = Varint((1 << 3) | 2) + Varint(shape.size()) + shape +
                     Varint((field << 3) | 2) + Varint(data_len);
  std::string module = "\x0a\x05" "bench";
  std::string snap = "\x0a" + Varint(module.size() + 2) + "\x0a" +
                     Varint(module.size()) + module;
  decomposed::AtomicFileSink out;
  if (!out.Open(path).ok()) std::abort();
  decomposed::DecomposedWriter<decomposed::AtomicFileSink> w(out);
  (void)w.WriteHeader(snap);
  (void)w.BeginInputs(1);
  (void)w.BeginElement(head.size() + data_len);
  (void)w.Append(head);
  std::vector<char> chunk(1 << 20);
  uint64_t left = data_len;
  uint64_t counter = 0;
  while (left > 0) {
    size_t k = 0;
    if (kind == kS32) {
      while (k + 3 <= chunk.size() && left - k >= 3) {
        char* e = WriteVarint(counter++ & ((1u << 18) - 1), chunk.data() + k);
        k = static_cast<size_t>(e - chunk.data());
      }
      if (k == 0) {  // tail shorter than 3 bytes: exact by construction
        char* e = WriteVarint(counter++ & ((1u << 18) - 1), chunk.data());
        k = static_cast<size_t>(e - chunk.data());
      }
    } else {
      k = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
      for (size_t i = 0; i < k; ++i) chunk[i] = static_cast<char>(i * 7);
    }
    (void)w.Append(std::string_view(chunk.data(), k));
    left -= k;
  }
  if (!w.Finish().ok() || !out.Commit().ok()) std::abort();
  return path;
}

double PeakRssMiB(int who) {
  struct rusage ru;
  ::getrusage(who, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB -> MiB
}

void BM_Unpack(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  std::string in = InputFor(kind);
  decomposed::UnpackOptions o;
  o.snapshot_type = decomposed::SnapshotType::kDecomposed;
  o.output_prefix = BenchDir() + "/out_";
  const decomposed::CopyMethod methods[] = {
      decomposed::CopyMethod::kBuffer, decomposed::CopyMethod::kKernel,
      decomposed::CopyMethod::kSplice};
  o.decode.copy = methods[state.range(1)];
  o.decode.buffer_bytes = static_cast<size_t>(state.range(2)) << 20;
  for (auto _ : state) {
    absl::Status s = decomposed::Unpack(in, o);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(PayloadBytes()));
  state.counters["peak_rss_MiB"] = PeakRssMiB(RUSAGE_SELF);
}

// The CLI's progress line must cost nothing measurable: unpack of the F32
// file with the default copy method, the line off and on (ProgressLine of
// examples/cli/progress.h, forced on and drawn to stderr), alternating in
// one process, in turn first (the order flips each iteration) and into
// fresh output names (each run's files are removed before the next).
// ratio_on_vs_off is the summed time on / off.
void BM_UnpackProgress(benchmark::State& state) {
  std::string in = InputFor(kF32);
  decomposed::UnpackOptions o;
  o.snapshot_type = decomposed::SnapshotType::kDecomposed;
  o.output_prefix = BenchDir() + "/out_";
  struct stat sb;
  const uint64_t total = ::stat(in.c_str(), &sb) == 0 ? sb.st_size : 0;
  decomposed::bench::TimeProgressOnOff(
      state, "unpack", total,
      [&] {
        std::remove((o.output_prefix + "model.hlo").c_str());
        std::remove((o.output_prefix + "value_input0.npy").c_str());
      },
      [&](std::function<void(uint64_t)> progress) {
        decomposed::UnpackOptions run = o;
        run.progress = std::move(progress);
        return decomposed::Unpack(in, run);
      });
}

// docs/unpack.md, "Performance": the cost of replacing existing outputs.
// Unpack writes a temp file and renames it over the old one (atomic: a
// failed run leaves the old file); `cp` truncates the old file in place.
// On ext4, a rename over an existing file starts the new file's writeback
// inside the rename (auto_da_alloc). Each iteration times four runs of the
// F32 or BF16 file (the argument), in an order that rotates: unpack and cp,
// each into fresh names and over the files of the previous run; a sync
// precedes each run.
void BM_Overwrite(benchmark::State& state) {
  std::string in = InputFor(static_cast<Kind>(state.range(0)));
  decomposed::UnpackOptions o;
  o.snapshot_type = decomposed::SnapshotType::kDecomposed;
  o.output_prefix = BenchDir() + "/ow_";
  const std::string npy = o.output_prefix + "value_input0.npy";
  const std::string cp_out = BenchDir() + "/ow_cp_copy";
  const std::string cp = "/bin/cp '" + in + "' '" + cp_out + "'";
  double t[4] = {0, 0, 0, 0};  // unpack fresh, unpack over, cp fresh, cp over
  std::vector<double> runs[4];
  int turn = 0;
  for (auto _ : state) {
    double iteration = 0;
    for (int k = 0; k < 4; ++k) {
      const int which = (k + turn) % 4;
      const bool over = which % 2 == 1;
      const bool is_cp = which >= 2;
      const std::string& target = is_cp ? cp_out : npy;
      if (over) {  // make sure the old file is there
        if (is_cp ? std::system(cp.c_str()) != 0
                  : !decomposed::Unpack(in, o).ok()) {
          state.SkipWithError("setup run failed");
          return;
        }
      } else {
        std::remove(target.c_str());
      }
      ::sync();
      auto t0 = std::chrono::steady_clock::now();
      bool ok = is_cp ? std::system(cp.c_str()) == 0
                      : decomposed::Unpack(in, o).ok();
      double d = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0).count();
      if (!ok) {
        state.SkipWithError("run failed");
        return;
      }
      t[which] += d;
      runs[which].push_back(d);
      iteration += d;
    }
    ++turn;
    state.SetIterationTime(iteration);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["unpack_fresh_s"] = t[0] / n;
  state.counters["unpack_over_s"] = t[1] / n;
  state.counters["cp_fresh_s"] = t[2] / n;
  state.counters["cp_over_s"] = t[3] / n;
  state.counters["fresh_vs_cp"] = t[2] > 0 ? t[0] / t[2] : 0;
  state.counters["over_vs_cp"] = t[3] > 0 ? t[1] / t[3] : 0;
  // bench/samples.h: medians and fastest runs, beside the sums above.
  for (int fresh_or_over : {0, 1}) {
    const double cp_median = decomposed::bench::Median(runs[2 + fresh_or_over]);
    const double cp_best = decomposed::bench::Fastest(runs[2 + fresh_or_over]);
    const std::string key = fresh_or_over == 0 ? "fresh" : "over";
    state.counters[key + "_median_ratio"] =
        cp_median > 0
            ? decomposed::bench::Median(runs[fresh_or_over]) / cp_median
            : 0;
    state.counters[key + "_best_ratio"] =
        cp_best > 0
            ? decomposed::bench::Fastest(runs[fresh_or_over]) / cp_best
            : 0;
  }
}

// docs/unpack.md, "Closer to cp": the raw copy primitives unpack could use
// for a verbatim payload, each copying the F32 file's bytes into a fresh
// file: read/write through a 1 MiB buffer (what unpack does), one
// copy_file_range loop (what cp does), and SpliceCopy (io/splice_copy.h:
// splice(2) through a 256 KiB pipe, what unpack and pack do). The order
// rotates; a sync precedes each run.
void BM_CopyPrimitives(benchmark::State& state) {
  const std::string in = InputFor(kF32);
  const std::string out = BenchDir() + "/prim_copy";
  struct stat sb;
  if (::stat(in.c_str(), &sb) != 0) {
    state.SkipWithError("no input");
    return;
  }
  const size_t n = static_cast<size_t>(sb.st_size);
  auto copy = [&](int how) -> bool {
    int src = ::open(in.c_str(), O_RDONLY | O_CLOEXEC);
    int dst = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = src >= 0 && dst >= 0;
    size_t left = n;
    if (ok && how == 0) {
      std::vector<char> buf(1 << 20);
      while (ok && left > 0) {
        ssize_t r = ::read(src, buf.data(), std::min(left, buf.size()));
        ok = r > 0 && ::write(dst, buf.data(), r) == r;
        if (ok) left -= static_cast<size_t>(r);
      }
    } else if (ok && how == 1) {
      while (ok && left > 0) {
        ssize_t r = ::copy_file_range(src, nullptr, dst, nullptr, left, 0);
        ok = r > 0;
        if (ok) left -= static_cast<size_t>(r);
      }
    } else if (ok && how == 2) {
      bool unsupported = false;
      absl::StatusOr<uint64_t> r =
          decomposed::SpliceCopy(src, 0, dst, n, nullptr, &unsupported);
      ok = r.ok() && *r == n;
    }
    if (src >= 0) ::close(src);
    if (dst >= 0) ::close(dst);
    return ok;
  };
  double t[3] = {0, 0, 0};  // buffer, copy_file_range, splice
  int turn = 0;
  for (auto _ : state) {
    double iteration = 0;
    for (int k = 0; k < 3; ++k) {
      const int how = (k + turn) % 3;
      std::remove(out.c_str());
      ::sync();
      auto t0 = std::chrono::steady_clock::now();
      if (!copy(how)) {
        state.SkipWithError("copy failed");
        return;
      }
      double d = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0).count();
      t[how] += d;
      iteration += d;
    }
    ++turn;
    state.SetIterationTime(iteration);
  }
  std::remove(out.c_str());
  const double iters = static_cast<double>(state.iterations());
  state.counters["buffer_s"] = t[0] / iters;
  state.counters["copy_file_range_s"] = t[1] / iters;
  state.counters["splice_s"] = t[2] / iters;
}

void BM_Cp(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  std::string in = InputFor(kind);
  std::string cmd = "/bin/cp '" + in + "' '" + BenchDir() + "/cp_copy'";
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) {
      state.SkipWithError("cp failed");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(PayloadBytes()));
  state.counters["peak_rss_MiB"] = PeakRssMiB(RUSAGE_CHILDREN);
}

// snapshot-unpack's path: read_uint64 boxes, new char[L] + read, ParseFromString,
// CreateFromProto (a copy into the literal's array), literal2npy (write).
void BM_Reference(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  std::string in = InputFor(kind);
  std::string out_path = BenchDir() + "/ref_value_input0.npy";
  for (auto _ : state) {
    std::ifstream f(in, std::ios::binary);
    auto read_box = [&f]() -> uint64_t {
      char l;
      f.read(&l, 1);
      std::string b(static_cast<size_t>(static_cast<uint8_t>(l)), '\0');
      f.read(b.data(), static_cast<std::streamsize>(b.size()));
      decomposed::xla::LiteralProto lp;
      lp.ParseFromString(b);
      return lp.u64s(0);
    };
    uint64_t lm = read_box();
    std::unique_ptr<char[]> sbuf(new char[lm]);
    f.read(sbuf.get(), static_cast<std::streamsize>(lm));
    decomposed::xla::HloSnapshot snap;
    snap.ParseFromArray(sbuf.get(), static_cast<int>(lm));
    uint64_t count = read_box();
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t len = read_box();
      std::unique_ptr<char[]> body(new char[len]);
      f.read(body.get(), static_cast<std::streamsize>(len));
      decomposed::xla::LiteralProto lit;
      if (!lit.ParseFromArray(body.get(), static_cast<int>(len))) {
        state.SkipWithError("parse failed");
        return;
      }
      body.reset();  // the tool frees the buffer after parsing
      std::vector<char> array;  // CreateFromProto's copy
      std::string descr;
      if (kind == kF32) {
        array.resize(lit.f32s_size() * 4);
        std::memcpy(array.data(), lit.f32s().data(), array.size());
        descr = "<f4";
      } else if (kind == kBF16) {
        array.assign(lit.bf16s().begin(), lit.bf16s().end());
        descr = "|V2";
      } else {
        array.resize(lit.s32s_size() * 4);
        std::memcpy(array.data(), lit.s32s().data(), array.size());
        descr = "<i4";
      }
      std::ofstream o(out_path, std::ios::binary);
      std::string h = decomposed::FormatNpyHeader(
          {descr, false, {static_cast<int64_t>(array.size() / (kind == kBF16 ? 2 : 4))}});
      o.write(h.data(), static_cast<std::streamsize>(h.size()));
      o.write(array.data(), static_cast<std::streamsize>(array.size()));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(PayloadBytes()));
  state.counters["peak_rss_MiB"] = PeakRssMiB(RUSAGE_SELF);
}

// Decode only: S32 varints from memory into a NullSink (no I/O), to see the
// decoder's own speed. Arg: 0 = i % 2^18 (1..3 bytes), 1 = uniform random
// int32 (half are negative: 10-byte varints), 2 = random in [0, 128).
void BM_DecodeS32Memory(benchmark::State& state) {
  const uint64_t n = 16 << 20;
  std::string data;
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t v = state.range(0) == 0   ? static_cast<int64_t>(i & ((1u << 18) - 1))
                : state.range(0) == 1 ? static_cast<int32_t>(x)
                                      : static_cast<int64_t>(x & 127);
    data += Varint(static_cast<uint64_t>(v));
  }
  std::string shape = Varint(2 << 3) + Varint(4) + Varint((3 << 3) | 2) +
                      Varint(VarintSize(n)) + Varint(n) +
                      Varint((5 << 3) | 2) + Varint(3) + Varint((1 << 3) | 2) +
                      Varint(1) + Varint(0);
  std::string body = Varint((1 << 3) | 2) + Varint(shape.size()) + shape +
                     Varint((4 << 3) | 2) + Varint(data.size()) + data;
  data.clear();
  for (auto _ : state) {
    decomposed::MemorySource src(body);
    decomposed::NullSink sink;
    absl::Status s = decomposed::DecodeLiteralToNpy(
        src, body.size(), decomposed::Frame{"x"}, sink);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 4));
}
BENCHMARK(BM_DecodeS32Memory)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_Unpack)
    ->ArgNames({"type", "copy", "buf_mib"})
    ->Args({kF32, 0, 1})
    ->Args({kF32, 1, 1})
    ->Args({kF32, 2, 1})
    ->Args({kBF16, 0, 1})
    ->Args({kBF16, 1, 1})
    ->Args({kBF16, 2, 1})
    ->Args({kS32, 0, 1})
    // docs/unpack.md, "Performance": larger copy buffers.
    ->Args({kF32, 0, 4})
    ->Args({kF32, 0, 16})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UnpackProgress)->Iterations(6)->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CopyPrimitives)->Iterations(6)->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Overwrite)->ArgName("type")->Arg(kF32)->Arg(kBF16)
    ->Iterations(8)->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cp)->ArgName("type")->Arg(kF32)->Arg(kBF16)->Arg(kS32)
    ->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reference)->ArgName("type")->Arg(kF32)->Arg(kBF16)->Arg(kS32)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!std::getenv("UNPACK_BENCH_KEEP")) {
    std::string cmd = "rm -rf '" + BenchDir() + "'";
    if (std::system(cmd.c_str()) != 0) return 1;
  }
  return 0;
}
