// Execute: one evaluation, its time per opcode and the dump (run/run.h).
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/dirs.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/run/run.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"
#include "run_internal.h"

namespace decomposed::run {

eval::EvalOptions EvalOptionsOf(const RunOptions& r) {
  eval::EvalOptions o;
  o.numerics = r.numerics;
  o.threads = r.threads;
  o.max_array_bytes = r.max_array_bytes;
  o.max_loop_iterations = r.max_loop_iterations;
  o.replica_count = r.replica_count;
  o.substitutes = r.substitutes;
  o.custom_calls = r.custom_calls;
  return o;
}

namespace {

// A file or directory name from an HLO name: letters, digits, '_', '-' and
// '.' kept, anything else '_'; never "", "." or "..".
std::string SafeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out == "." || out == "..") out.insert(out.begin(), '_');
  if (out.size() > 200) out.resize(200);
  return out;
}

std::string DeclaredShape(const xla::ShapeProto& s) {
  if (s.element_type() == static_cast<int>(PrimitiveType::kTuple)) {
    std::vector<std::string> parts;
    for (const xla::ShapeProto& e : s.tuple_shapes()) parts.push_back(DeclaredShape(e));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  const PrimitiveTypeInfo* t = FindPrimitiveType(s.element_type());
  return absl::StrCat(t ? std::string(t->name) : "?", "[",
                      absl::StrJoin(s.dimensions(), ","), "]");
}

// Writes the values of the instructions the filter keeps, each once.
class Dumper {
 public:
  static absl::StatusOr<std::unique_ptr<Dumper>> Create(const std::string& dir,
                                                        const std::string& filter) {
    auto d = std::unique_ptr<Dumper>(new Dumper());
    d->dir_ = dir;
    while (d->dir_.size() > 1 && d->dir_.back() == '/') d->dir_.pop_back();
    if (!filter.empty()) {
      try {
        d->filter_.emplace(filter, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dump-filter: expected a regular expression, found '", filter,
                         "' (", e.what(), ")"));
      }
    }
    if (absl::Status s = internal::MakeDirectories(d->dir_); !s.ok()) return s;
    return d;
  }

  absl::Status On(const eval::InstructionEvent& e) {
    const hlo::HloInstruction& instr = e.instruction;
    auto it = index_.find(&instr);
    if (it != index_.end()) {
      ++entries_[it->second].evaluations;
      return absl::OkStatus();
    }
    const std::string& op_name = instr.proto().metadata().op_name();
    if (filter_ && !std::regex_search(instr.name(), *filter_) &&
        !(op_name.size() > 0 && std::regex_search(op_name, *filter_))) {
      return absl::OkStatus();
    }
    index_[&instr] = entries_.size();
    Entry& en = entries_.emplace_back();
    en.instr = &instr;
    const std::string comp_dir = ComputationDir(*instr.parent());
    const std::string stem = Unique(absl::StrCat(comp_dir, "/", SafeName(instr.name())));
    return WriteValue(e.value, stem, &en);
  }

  // DIR/index.json.
  absl::Status Finish() {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Entry& en : entries_) {
      const hlo::HloInstruction& i = *en.instr;
      const xla::OpMetadata& md = i.proto().metadata();
      nlohmann::ordered_json j;
      j["computation"] = i.parent()->name();
      j["name"] = i.name();
      j["opcode"] = i.opcode_string();
      j["shape"] = DeclaredShape(i.shape());
      j["op_name"] = md.op_name();
      j["source_file"] = md.source_file();
      j["source_line"] = md.source_line();
      j["files"] = en.files;
      j["evaluations"] = en.evaluations;
      list.push_back(std::move(j));
    }
    nlohmann::ordered_json doc;
    doc["dir"] = dir_;
    doc["instructions"] = std::move(list);
    const std::string text = JsonText(doc);
    AtomicFileSink f;
    const std::string path = absl::StrCat(dir_, "/index.json");
    if (absl::Status s = f.Open(path); !s.ok()) return s;
    if (!f.Write(text)) return f.status();
    return f.Commit();
  }

  int64_t files() const { return files_; }

 private:
  struct Entry {
    const hlo::HloInstruction* instr = nullptr;
    std::vector<std::string> files;  // relative to the dump directory
    int64_t evaluations = 1;
  };

  Dumper() = default;

  // The computation's directory (relative), created once.
  std::string ComputationDir(const hlo::HloComputation& c) {
    auto it = comp_dirs_.find(&c);
    if (it != comp_dirs_.end()) return it->second;
    std::string name = SafeName(c.name());
    std::string d = name;
    for (int k = 1; used_dirs_.count(d); ++k) d = absl::StrCat(name, "_", k);
    used_dirs_.insert(d);
    comp_dirs_[&c] = d;
    pending_dir_ = d;
    return d;
  }

  // `stem` made unique among the files written (sanitised names may meet).
  std::string Unique(const std::string& stem) {
    std::string s = stem;
    for (int k = 1; used_stems_.count(s); ++k) s = absl::StrCat(stem, "_", k);
    used_stems_.insert(s);
    return s;
  }

  absl::Status WriteValue(const eval::Value& v, const std::string& stem, Entry* en) {
    if (v.is_tuple()) {
      for (size_t k = 0; k < v.element_count(); ++k) {
        if (absl::Status s = WriteValue(v.element(k), absl::StrCat(stem, ".", k), en); !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    if (!pending_dir_.empty()) {
      if (absl::Status s = internal::MakeDirectories(absl::StrCat(dir_, "/", pending_dir_));
          !s.ok()) {
        return s;
      }
      pending_dir_.clear();
    }
    const std::string rel = absl::StrCat(stem, ".npy");
    if (absl::Status s = WriteNpyFile(absl::StrCat(dir_, "/", rel), v.array()); !s.ok()) {
      return s;
    }
    en->files.push_back(rel);
    ++files_;
    return absl::OkStatus();
  }

  std::string dir_;
  std::optional<std::regex> filter_;
  std::map<const hlo::HloInstruction*, size_t> index_;
  std::vector<Entry> entries_;
  std::map<const hlo::HloComputation*, std::string> comp_dirs_;
  std::set<std::string> used_dirs_, used_stems_;
  std::string pending_dir_;
  int64_t files_ = 0;
};

}  // namespace

namespace {

// `owned`: the inputs to hand over to the evaluator (program.inputs is
// then not read).
absl::StatusOr<RunResult> ExecuteImpl(const RunProgram& program, const RunOptions& options,
                                      std::vector<eval::Value>* owned) {
  if (!program.module) return absl::InvalidArgumentError("no module to run");
  std::unique_ptr<Dumper> dumper;
  if (!options.dump_dir.empty()) {
    absl::StatusOr<std::unique_ptr<Dumper>> d = Dumper::Create(options.dump_dir, options.dump_filter);
    if (!d.ok()) return d.status();
    dumper = *std::move(d);
  } else if (!options.dump_filter.empty()) {
    return absl::InvalidArgumentError("a dump filter without a dump directory");
  }
  RunResult r;
  r.numerics = options.numerics;
  eval::EvalOptions eo = EvalOptionsOf(options);
  eo.on_progress = options.on_progress;
  // Self time: the time of the instructions one level down is taken off
  // their caller's (their events come first).
  std::vector<double> inner(eval::kMaxCallDepth + 3, 0.0);
  std::map<std::string, OpcodeTime> by_opcode;
  eo.on_instruction = [&](const eval::InstructionEvent& e) -> absl::Status {
    const size_t d = std::min<size_t>(static_cast<size_t>(std::max(e.depth, 0)),
                                      inner.size() - 2);
    const double self = std::max(0.0, e.seconds - inner[d + 1]);
    inner[d + 1] = 0;
    inner[d] += e.seconds;
    OpcodeTime& t = by_opcode[e.instruction.opcode_string()];
    ++t.count;
    t.seconds += self;
    ++r.instructions;
    if (dumper) return dumper->On(e);
    return absl::OkStatus();
  };
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<eval::Value> root =
      owned ? eval::Evaluate(*program.module, std::move(*owned), eo)
            : eval::Evaluate(*program.module, program.inputs, eo);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (dumper) {
    absl::Status s = dumper->Finish();
    r.dumped_files = dumper->files();
    if (root.ok() && !s.ok()) return s;
  }
  if (!root.ok()) return root.status();
  r.outputs = eval::FlattenOutputs(*root);
  for (auto& [name, t] : by_opcode) {
    t.opcode = name;
    r.opcodes.push_back(t);
  }
  std::stable_sort(r.opcodes.begin(), r.opcodes.end(),
                   [](const OpcodeTime& a, const OpcodeTime& b) { return a.seconds > b.seconds; });
  return r;
}

}  // namespace

absl::StatusOr<RunResult> Execute(const RunProgram& program, const RunOptions& options) {
  return ExecuteImpl(program, options, nullptr);
}

absl::StatusOr<RunResult> Execute(RunProgram&& program, const RunOptions& options) {
  std::vector<eval::Value> inputs = std::move(program.inputs);
  program.inputs.clear();
  return ExecuteImpl(program, options, &inputs);
}

}  // namespace decomposed::run
