// RunSnapshot and its reports (run/run.h).
#include "decomposed/npy/json_text.h"
#include "decomposed/run/run.h"

#include <sys/resource.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/analysis/report.h"
#include "decomposed/analysis/three_way.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"
#include "run_internal.h"

namespace decomposed::run {
namespace {

using json = nlohmann::ordered_json;

std::string RunName(const RunResult& r) {
  return absl::StrCat("run (", Sv(eval::NumericsName(r.numerics)), " numerics)");
}

std::string Dims(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

std::string Num(double v) { return absl::StrFormat("%.6g", v); }

std::string Seconds(double s) {
  if (s < 1e-3) return absl::StrFormat("%.0f us", s * 1e6);
  if (s < 1) return absl::StrFormat("%.1f ms", s * 1e3);
  return absl::StrFormat("%.2f s", s);
}

bool HoldsBf16OrF16(const xla::ShapeProto& s) {
  if (s.element_type() == xla::BF16 || s.element_type() == xla::F16) return true;
  for (const xla::ShapeProto& e : s.tuple_shapes()) {
    if (HoldsBf16OrF16(e)) return true;
  }
  return false;
}

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return absl::StrFormat("%.1f GiB", b / double(1 << 30));
  if (b >= (uint64_t{1} << 20)) return absl::StrFormat("%.1f MiB", b / double(1 << 20));
  if (b >= 1024) return absl::StrFormat("%.1f KiB", b / 1024.0);
  return absl::StrCat(b, " bytes");
}

}  // namespace

bool F32RunIsTheRun(const hlo::HloModule& module, const RunOptions& options) {
  if (options.numerics == eval::Numerics::kNeuron || options.custom_calls != nullptr) return false;
  for (const hlo::HloComputation* c : module.computations()) {
    for (const hlo::HloInstruction* i : c->instructions()) {
      if (HoldsBf16OrF16(i->shape())) return false;
    }
  }
  return true;
}

uint64_t PeakRssBytes() {
  struct rusage ru;
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // KiB on Linux
}

absl::StatusOr<RunReport> RunSnapshot(const RunRequest& request) {
  if (absl::Status s = ValidateCompareOptions(request.compare); !s.ok()) return s;
  absl::StatusOr<RunProgram> program = LoadProgram(request.source, request.load);
  if (!program.ok()) return program.status();
  RunOptions options = request.run;
  for (const auto& [name, file] : request.substitute_files) {
    absl::StatusOr<eval::Array> a = ReadNpyArray(file);
    if (!a.ok()) return Prefix(a.status(), absl::StrCat("--substitute ", name));
    options.substitutes[name] = eval::Value(*std::move(a));
  }
  // The side to check against, opened before the run: an unreadable one
  // fails before the work.
  std::unique_ptr<TensorSet> actual;
  if (request.check != RunCheck::kNone) {
    if (!request.check_side.empty()) {
      TensorSetOptions so = request.check_set;
      so.inputs = false;
      absl::StatusOr<std::unique_ptr<TensorSet>> s = OpenTensorSet(request.check_side, so);
      if (!s.ok()) return s.status();
      actual = *std::move(s);
    } else if (!program->recorded_outputs) {
      return absl::FailedPreconditionError(absl::StrCat(
          request.source.snapshot.empty()
              ? "no recorded outputs to check against: the program is not from a snapshot"
              : absl::StrCat(request.source.snapshot,
                             ": no recorded outputs to check against (the snapshot has "
                             "no region [2] or result)"),
          "; name a side to compare with"));
    } else {
      absl::StatusOr<std::unique_ptr<TensorSet>> s = program->recorded_outputs();
      if (!s.ok()) return s.status();
      actual = *std::move(s);
    }
  }
  RunReport report;
  report.module_name = program->module->proto().name();
  report.module_source = program->module_source;
  report.inputs = program->inputs.size();
  report.borrowed_inputs = program->borrowed_inputs;
  const bool baseline_is_run =
      request.check == RunCheck::kThreeWay && F32RunIsTheRun(*program->module, options);
  if (request.check == RunCheck::kThreeWay && !baseline_is_run) {
    RunOptions base = options;
    base.numerics = eval::Numerics::kF32;
    base.dump_dir.clear();
    base.dump_filter.clear();
    base.on_progress = nullptr;
    absl::StatusOr<RunResult> b = Execute(*program, base);
    if (!b.ok()) return Prefix(b.status(), "the f32 baseline run");
    report.baseline = *std::move(b);
  }
  // The last evaluation takes the inputs: each is let go after its last use.
  absl::StatusOr<RunResult> r = Execute(std::move(*program), options);
  if (!r.ok()) return r.status();
  report.result = *std::move(r);
  if (baseline_is_run) {
    // The same outputs (their arrays shared, not copied), as f32 numerics
    // would have computed them.
    RunResult b;
    b.numerics = eval::Numerics::kF32;
    b.outputs = report.result.outputs;
    report.baseline = std::move(b);
    report.baseline_is_run = true;
  }
  if (absl::Status s = WriteOutputs(report.result.outputs, request.output, &report.files);
      !s.ok()) {
    return s;
  }
  if (request.on_file) {
    for (const WrittenFile& f : report.files) request.on_file(f);
  }
  std::unique_ptr<TensorSet> ran =
      ValueTensorSet(report.result.outputs, RunName(report.result));
  std::vector<TensorStatsEntry> stats;
  if (absl::Status s = AppendTensorStats(*ran, "run", "outputs", &stats); !s.ok()) return s;
  for (const TensorStatsEntry& e : stats) {
    report.outputs.push_back({e.index, e.info.type, e.info.dims, e.stats});
  }
  if (request.check == RunCheck::kCompare) {
    std::unique_ptr<TensorSet> e_tap, a_tap;
    TensorSet* e = ran.get();
    TensorSet* a = actual.get();
    if (request.scatter) {
      e_tap = request.scatter->WrapExpected(*e);
      a_tap = request.scatter->WrapActual(*a);
      e = e_tap.get();
      a = a_tap.get();
    }
    absl::StatusOr<CompareReport> c = CompareTensorSets(*e, *a, request.compare);
    if (!c.ok()) return c.status();
    report.compare = *std::move(c);
  } else if (request.check == RunCheck::kThreeWay) {
    std::unique_ptr<TensorSet> baseline =
        ValueTensorSet(report.baseline->outputs, RunName(*report.baseline));
    std::vector<ThreeWayRun> runs = {{ran.get(), actual.get(), baseline.get()}};
    absl::StatusOr<ThreeWayReport> t = ThreeWayCompare(runs, request.three_way);
    if (!t.ok()) return t.status();
    report.three_way = *std::move(t);
  }
  report.peak_rss_bytes = PeakRssBytes();
  return report;
}

std::string RunReportJson(const RunReport& r) {
  json j;
  j["module"] = r.module_name;
  j["source"] = r.module_source;
  j["numerics"] = std::string(eval::NumericsName(r.result.numerics));
  j["inputs"] = r.inputs;
  j["borrowed_inputs"] = r.borrowed_inputs;
  j["instructions"] = r.result.instructions;
  j["seconds"] = r.result.seconds;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  // Per output: the stats report's entries, without what is said above.
  std::vector<TensorStatsEntry> entries;
  for (const RunOutputInfo& o : r.outputs) {
    entries.push_back({"run", "outputs", o.index, TensorInfo{o.type, o.dims, ""}, o.stats});
  }
  json stats = json::parse(StatsReportJson(entries));
  json outs = json::array();
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    json s = stats["tensors"][i];
    json o;
    o["index"] = r.outputs[i].index;
    o["dtype"] = s["dtype"];
    o["shape"] = s["shape"];
    for (const char* k : {"source", "set", "index", "dtype", "shape"}) s.erase(k);
    o["stats"] = std::move(s);
    outs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outs);
  json ops = json::array();
  for (const OpcodeTime& t : r.result.opcodes) {
    ops.push_back({{"opcode", t.opcode}, {"count", t.count}, {"seconds", t.seconds}});
  }
  j["opcodes"] = std::move(ops);
  if (r.baseline) {
    j["baseline"] = {{"numerics", std::string(eval::NumericsName(r.baseline->numerics))},
                     {"instructions", r.baseline->instructions},
                     {"seconds", r.baseline->seconds},
                     {"is_run", r.baseline_is_run}};
  }
  if (r.result.dumped_files > 0) j["dumped_files"] = r.result.dumped_files;
  json files = json::array();
  for (const WrittenFile& f : r.files) {
    json e = {{"path", f.path}};
    if (!f.entry.empty()) e["entry"] = f.entry;
    if (f.index >= 0) e["index"] = f.index;
    if (f.sidecar) e["sidecar"] = true;
    if (!f.shape.empty()) e["shape"] = f.shape;
    if (!f.descr.empty()) e["descr"] = f.descr;
    e["bytes"] = f.bytes;
    files.push_back(std::move(e));
  }
  j["files"] = std::move(files);
  if (r.compare) j["compare"] = json::parse(CompareReportJson(*r.compare));
  if (r.three_way) j["three_way"] = json::parse(ThreeWayReportJson(*r.three_way));
  j["pass"] = r.pass();
  return JsonText(j);
}

std::string RunReportText(const RunReport& r) {
  std::string out;
  const RunResult& res = r.result;
  absl::StrAppend(&out, "ran ", r.module_name.empty() ? "the module" : r.module_name, " (",
                  r.module_source, "): ", res.instructions, " instructions, ",
                  Sv(eval::NumericsName(res.numerics)), " numerics, ", r.inputs,
                  r.inputs == 1 ? " input" : " inputs");
  if (r.borrowed_inputs > 0) absl::StrAppend(&out, " (", r.borrowed_inputs, " not copied)");
  absl::StrAppend(&out, "\ntime ", Seconds(res.seconds), ", peak RSS ", Bytes(r.peak_rss_bytes),
                  "\n");
  if (r.baseline && r.baseline_is_run) {
    absl::StrAppend(&out,
                    "baseline: the run itself (the module holds no bf16 or f16, so f32 "
                    "numerics compute what ", Sv(eval::NumericsName(r.result.numerics)),
                    " numerics do)\n");
  } else if (r.baseline) {
    absl::StrAppend(&out, "baseline: ", r.baseline->instructions, " instructions in ",
                    Seconds(r.baseline->seconds), ", f32 numerics\n");
  }
  for (const RunOutputInfo& o : r.outputs) {
    absl::StrAppend(&out, "output ", o.index, ": ", LowerTypeName(o.type), Dims(o.dims));
    const TensorStats& s = o.stats;
    if (s.min && s.max) absl::StrAppend(&out, " min ", Num(*s.min), " max ", Num(*s.max));
    if (s.mean && s.mean_im) {
      absl::StrAppend(&out, " mean (", Num(*s.mean), ",", Num(*s.mean_im), ")");  // as stats
    } else if (s.mean) {
      absl::StrAppend(&out, " mean ", Num(*s.mean));
    }
    if (s.nan) absl::StrAppend(&out, " NaN ", s.nan);
    if (s.pos_inf + s.neg_inf) absl::StrAppend(&out, " Inf ", s.pos_inf + s.neg_inf);
    absl::StrAppend(&out, "\n");
  }
  for (const WrittenFile& f : r.files) {
    if (f.index < 0 || f.sidecar) continue;
    absl::StrAppend(&out, "wrote ", f.path, f.entry.empty() ? "" : absl::StrCat(" [", f.entry, "]"),
                    " ", f.shape, " ", f.descr, " (", f.bytes, " bytes)\n");
  }
  if (res.dumped_files > 0) {
    absl::StrAppend(&out, "dumped ", res.dumped_files, res.dumped_files == 1 ? " value" : " values",
                    "\n");
  }
  if (r.compare) absl::StrAppend(&out, "\n", CompareReportText(*r.compare));
  if (r.three_way) absl::StrAppend(&out, "\n", ThreeWayReportText(*r.three_way));
  return out;
}

}  // namespace decomposed::run
