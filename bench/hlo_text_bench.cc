// HLO text throughput: printing (hlo/print.h) a generated module of about
// 50 MB of long-style text, the size of a large torch-neuronx dump, in each
// style. Rates are MB of text per second (bytes_per_second). The parse
// benchmarks (BM_Parse*) sit beside these, on the same module.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/print.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/io/byte_sink.h"

namespace decomposed::hlo {
namespace {

// Transformer-like layers until the long text passes `target_bytes`: each
// layer is a linear (dot, bias broadcast and add), a softmax-style block
// (reduce, broadcast, subtract, exponential, divide), a gelu-style block of
// elementwise ops with small constants, reshapes and transposes, every
// instruction with torch-xla-style metadata.
xla::HloModuleProto MakeModule(size_t target_bytes) {
  HloModuleBuilder mb("SyncTensorsGraph.bench");
  HloComputationBuilder& max = mb.AddComputation("MaxComputation");
  max.Maximum(max.Parameter(0, MakeScalarShape(xla::F32), "x"),
              max.Parameter(1, MakeScalarShape(xla::F32), "y"));
  HloComputationBuilder& add = mb.AddComputation("AddComputation");
  add.Add(add.Parameter(0, MakeScalarShape(xla::F32), "a"),
          add.Parameter(1, MakeScalarShape(xla::F32), "b"));
  HloComputationBuilder& c = mb.AddEntryComputation("SyncTensorsGraph");
  const int64_t kTokens = 128, kHidden = 768;
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {kTokens, kHidden}), "p0");
  HloOp w = c.Parameter(1, MakeArrayShape(xla::F32, {kHidden, kHidden}), "p1");
  HloOp bias = c.Parameter(2, MakeArrayShape(xla::F32, {kHidden}), "p2");
  int64_t op = 0;
  size_t bytes = 0;
  auto meta = [&](HloOp h, const std::string& type) {
    xla::OpMetadata m;
    m.set_op_type(absl::StrCat("aten__", type));
    m.set_op_name(absl::StrCat("aten__", type, ".", ++op));
    m.set_source_file(
        "/usr/local/lib/python3.10/site-packages/torch/nn/modules/linear.py");
    m.set_source_line(static_cast<int32_t>(100 + op % 50));
    c.SetMetadata(h, m);
    // About what the long style prints for such an instruction.
    bytes += 190 + 2 * h.name().size() + 2 * type.size();
    return h;
  };
  while (bytes < target_bytes) {
    HloOp h = meta(c.Dot(x, w, MakeDotDimensionNumbers({1}, {0})), "mm");
    HloOp b = meta(c.Broadcast(bias, {kTokens, kHidden}, {1}), "expand");
    h = meta(c.Add(h, b), "add");
    HloOp zero = meta(c.ConstantR0(xla::F32, 0), "constant");
    HloOp m = meta(c.Reduce({h}, {zero}, {1}, max), "amax");
    HloOp mb2 = meta(c.Broadcast(m, {kTokens, kHidden}, {0}), "expand");
    HloOp e = meta(c.Exp(meta(c.Subtract(h, mb2), "sub")), "exp");
    HloOp s = meta(c.Reduce({e}, {zero}, {1}, add), "sum");
    h = meta(c.Divide(e, meta(c.Broadcast(s, {kTokens, kHidden}, {0}), "expand")),
             "div");
    HloOp half = meta(c.ConstantR0(xla::F32, 0.5), "constant");
    HloOp hb = meta(c.Broadcast(half, {kTokens, kHidden}, {}), "expand");
    h = meta(c.Multiply(h, meta(c.Tanh(meta(c.Multiply(h, hb), "mul")), "tanh")),
             "mul");
    h = meta(c.Reshape(h, {kTokens, 12, 64}), "view");
    h = meta(c.Transpose(h, {1, 0, 2}), "permute");
    h = meta(c.Transpose(h, {1, 0, 2}), "permute");
    x = meta(c.Reshape(h, {kTokens, kHidden}), "view");
  }
  c.Tuple({x});
  absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
  if (!proto.ok()) std::abort();
  return *std::move(proto);
}

const HloModule& BenchModule() {
  static const HloModule* module = [] {
    absl::StatusOr<std::unique_ptr<HloModule>> m =
        HloModule::Create(MakeModule(size_t{44} << 20));
    if (!m.ok()) std::abort();
    return m->release();
  }();
  return *module;
}

void PrintInStyle(benchmark::State& state, HloTextStyle style) {
  const HloModule& module = BenchModule();
  HloPrintOptions options;
  options.style = style;
  uint64_t bytes = 0;
  for (auto _ : state) {
    NullSink sink;
    if (!PrintHloModule(module, options, sink).ok()) {
      state.SkipWithError("print failed");
      return;
    }
    bytes += sink.position();
    benchmark::DoNotOptimize(sink.position());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["text_MB"] =
      static_cast<double>(bytes) / static_cast<double>(state.iterations()) / 1e6;
  state.counters["instructions"] = static_cast<double>(module.instruction_count());
}

void BM_PrintLong(benchmark::State& state) { PrintInStyle(state, HloTextStyle::kLong); }
void BM_PrintModern(benchmark::State& state) {
  PrintInStyle(state, HloTextStyle::kModern);
}
void BM_PrintShort(benchmark::State& state) { PrintInStyle(state, HloTextStyle::kShort); }

BENCHMARK(BM_PrintLong)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_PrintModern)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_PrintShort)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// --- BM_Parse*: the parser (hlo/parse.h) on the same module's text ------------------

// The module's text in a style, printed once.
const std::string& BenchText(HloTextStyle style) {
  static std::string texts[3];
  std::string& t = texts[static_cast<int>(style)];
  if (t.empty()) {
    HloPrintOptions options;
    options.style = style;
    t = PrintHloModuleToString(BenchModule(), options);
  }
  return t;
}

// Resident memory from /proc/self/status ("VmRSS:" or "VmHWM:"), in bytes.
int64_t ProcStatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::atoll(line.c_str() + n) * 1024;
  }
  return -1;
}

// Resets the peak resident size (VmHWM) to the current one (Linux >= 4.0).
bool ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out);
}

// Peak resident memory added while `f` runs (the text not counted: it was
// resident before), with what was freed before it handed back first.
template <class F>
int64_t PeakAdded(benchmark::State& state, F f) {
  state.PauseTiming();
  malloc_trim(0);
  const int64_t before = ProcStatusBytes("VmRSS:");
  const bool reset = ResetPeakRss();
  state.ResumeTiming();
  f();
  state.PauseTiming();
  const int64_t peak = reset ? ProcStatusBytes("VmHWM:") - before : 0;
  state.ResumeTiming();
  return peak;
}

// Text to the serialized HloModuleProto (ParseHloTextToProto), its bytes
// held as the pieces written (as a file or a rope holds them, without a
// growing string's spare capacity): peak resident memory against the
// serialized proto's size.
void ParseInStyle(benchmark::State& state, HloTextStyle style) {
  const std::string& text = BenchText(style);
  uint64_t bytes = 0;
  int64_t peak = 0;
  size_t proto_bytes = 0;
  for (auto _ : state) {
    std::vector<std::string> out;
    size_t out_bytes = 0;
    bool ok = true;
    peak = std::max(peak, PeakAdded(state, [&] {
      absl::StatusOr<HloModuleTextExtras> extras =
          ParseHloTextToProto(text, [&](std::string_view piece) {
            out.emplace_back(piece);
            out_bytes += piece.size();
            return true;
          });
      ok = extras.ok();
    }));
    if (!ok) {
      state.SkipWithError("parse failed");
      return;
    }
    proto_bytes = out_bytes;
    bytes += text.size();
    state.PauseTiming();
    out = {};
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["text_MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["proto_MB"] = static_cast<double>(proto_bytes) / 1e6;
  state.counters["peak_rss_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["peak_rss_per_proto"] =
      proto_bytes == 0 ? 0 : static_cast<double>(peak) / static_cast<double>(proto_bytes);
}

void BM_ParseLong(benchmark::State& state) { ParseInStyle(state, HloTextStyle::kLong); }
void BM_ParseModern(benchmark::State& state) {
  ParseInStyle(state, HloTextStyle::kModern);
}
void BM_ParseShort(benchmark::State& state) { ParseInStyle(state, HloTextStyle::kShort); }

BENCHMARK(BM_ParseLong)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ParseModern)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ParseShort)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Text to an HloModuleProto in memory (ParseHloText), as `decomposed hlo`
// and the evaluator need it: protobuf's objects take about ten times the
// serialized size, so the peak is against those (SpaceUsedLong) too.
void ParseToModuleInStyle(benchmark::State& state, HloTextStyle style) {
  const std::string& text = BenchText(style);
  uint64_t bytes = 0;
  int64_t peak = 0;
  size_t proto_bytes = 0, proto_space = 0;
  for (auto _ : state) {
    absl::StatusOr<ParsedHloText> parsed = absl::UnknownError("not parsed");
    peak = std::max(peak, PeakAdded(state, [&] { parsed = ParseHloText(text); }));
    state.PauseTiming();
    if (!parsed.ok()) {
      state.SkipWithError(std::string(parsed.status().message()).c_str());
      return;
    }
    proto_bytes = parsed->module.ByteSizeLong();
    proto_space = parsed->module.SpaceUsedLong();
    bytes += text.size();
    // Freeing the module is its holder's cost, not the parse's: outside
    // the timing (it takes about a third of the parse's time again).
    parsed = absl::UnknownError("freed");
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["proto_MB"] = static_cast<double>(proto_bytes) / 1e6;
  state.counters["proto_in_memory_MB"] = static_cast<double>(proto_space) / 1e6;
  state.counters["peak_rss_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["peak_rss_per_proto_in_memory"] =
      proto_space == 0 ? 0 : static_cast<double>(peak) / static_cast<double>(proto_space);
}

void BM_ParseToModuleLong(benchmark::State& state) {
  ParseToModuleInStyle(state, HloTextStyle::kLong);
}
void BM_ParseToModuleShort(benchmark::State& state) {
  ParseToModuleInStyle(state, HloTextStyle::kShort);
}

BENCHMARK(BM_ParseToModuleLong)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ParseToModuleShort)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace decomposed::hlo

BENCHMARK_MAIN();
