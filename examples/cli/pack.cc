// decomposed pack (--module FILE | --snapshot FILE) [--input FILE]...
//                 [--output FILE]... [--dtype I=TYPE]... [--output-dtype J=TYPE]...
//                 [--format decomposed|snapshot] [--no-output-block]
//                 [--tf211-layout] [--box-shape] -o OUT
#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "command.h"
#include "decomposed/hlo/text.h"
#include "decomposed/snapshot/module_file.h"
#include "decomposed/snapshot/producer.h"
#include "progress.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string module, snapshot, out;
  SnapshotType format = SnapshotType::kDecomposed;
  std::vector<std::string> inputs, outputs, dtypes, output_dtypes;
  bool no_output_block = false, tf211_layout = false, box_shape = false;
  bool progress = false, quiet = false;
};

// "INDEX=TYPE" specs -> one optional type per file; a malformed spec is a
// usage error (CLI::ValidationError naming `option`).
std::vector<std::optional<PrimitiveType>> ParseDtypes(
    const std::vector<std::string>& specs, size_t count, std::string_view what,
    const std::string& option) {
  std::vector<std::optional<PrimitiveType>> out(count);
  for (const std::string& s : specs) {
    size_t eq = s.find('=');
    size_t index;
    if (eq == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(s.data(), eq), &index)) {
      throw CLI::ValidationError(option,
                                 "expected INDEX=TYPE, found '" + s + "'");
    }
    if (index >= count) {
      throw CLI::ValidationError(
          option, "'" + s + "': there are only " + std::to_string(count) +
                      " " + std::string(what) + "s (numbered from 0)");
    }
    std::optional<PrimitiveType> t = ParseDtypeName(s.substr(eq + 1));
    if (!t) {
      throw CLI::ValidationError(
          option, "'" + s + "': unknown type (use an XLA name such as bf16, "
                  "f8e4m3fn, s4, or a NumPy name such as float32)");
    }
    out[index] = t;
  }
  return out;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::Status AddLiterals(const std::vector<std::string>& files,
                         const std::vector<std::optional<PrimitiveType>>& types,
                         std::string_view region,
                         const ShapeEncodeOptions& shape,
                         std::vector<std::unique_ptr<LiteralSource>>* out) {
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = absl::StrCat(Sv(region), " ", i, " (", files[i], ")");
    if (EndsWith(files[i], ".npy")) {
      LiteralEncodeOptions o;
      o.shape = shape;
      o.name = name;
      out->push_back(NpyLiteral(files[i], types[i], o));
    } else {
      if (types[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": --dtype applies to .npy files only"));
      }
      absl::StatusOr<std::string> body = ReadMessageFile(files[i]);
      if (!body.ok()) return Prefix(body.status(), name);
      out->push_back(SerializedLiteral(*std::move(body), true, name));
    }
  }
  return absl::OkStatus();
}

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  // Each occurrence of a repeated option takes exactly one value, so
  // `--input a.npy b.npy` is an error rather than two inputs.
  auto one_each = [](CLI::Option* o) { return o->allow_extra_args(false); };
  CLI::Option* module = app.add_option(
      "--module", st->module,
      "a serialized HloModuleProto (snapshot-unpack's model.hlo) or HLO "
      "text in any of XLA's styles");
  CLI::Option* snapshot = app.add_option(
      "--snapshot", st->snapshot,
      "take the module from an HloSnapshot file, classic or decomposed (its "
      "literals are dropped)");
  module->excludes(snapshot);
  one_each(app.add_option(
      "--input", st->inputs,
      ".npy files (streamed), or any other file holding one serialized "
      "LiteralProto; in order, numbered from 0"));
  one_each(app.add_option("--output", st->outputs, "as --input, for outputs"));
  one_each(app.add_option(
      "--dtype", st->dtypes,
      "I=TYPE: the true type of input I (void |V2/|V1 descrs need one unless "
      "FILE.npy.meta names it)"));
  one_each(app.add_option("--output-dtype", st->output_dtypes,
                          "J=TYPE: the true type of output J"));
  AddEnumOption(app, "--format", &st->format, kOutputSnapshotTypeNames,
                "snapshot: write one classic HloSnapshot (< 2 GiB) instead");
  app.add_flag("--no-output-block", st->no_output_block,
               "omit region [2] when there are no outputs");
  app.add_flag("--tf211-layout", st->tf211_layout,
               "layouts without tail_padding_alignment (TF 2.11 form)");
  app.add_flag("--box-shape", st->box_shape,
               "length boxes carry a U64 scalar shape");
  app.add_option("-o,--out", st->out, "the file to write")->required();
  AddProgressOptions(app, &st->progress, &st->quiet);
  return [st, &app] {
    if (st->module.empty() == st->snapshot.empty()) {
      throw CLI::RequiredError("exactly one of --module and --snapshot");
    }
    std::vector<std::optional<PrimitiveType>> in_types =
        ParseDtypes(st->dtypes, st->inputs.size(), "input", "--dtype");
    std::vector<std::optional<PrimitiveType>> out_types = ParseDtypes(
        st->output_dtypes, st->outputs.size(), "output", "--output-dtype");
    PackRequest req;
    req.format = st->format;
    req.write.write_output_count = !st->no_output_block;
    req.write.box.with_shape = st->box_shape;
    ShapeEncodeOptions shape;
    shape.tail_padding_alignment = !st->tf211_layout;
    if (!st->module.empty()) {
      absl::StatusOr<std::string> module = ReadMessageFile(st->module);
      if (!module.ok()) return Fail(app, module.status());
      if (LooksLikeHloText(std::string_view(*module).substr(0, 4096))) {
        // HLO text: parsed, then packed as its proto. A constant the text
        // left as {...} has no data to pack.
        absl::StatusOr<ModuleFile> parsed = ParseModuleBytes(*module, st->module);
        if (!parsed.ok()) return Fail(app, parsed.status());
        for (const xla::HloComputationProto& c : parsed->module.computations()) {
          for (const xla::HloInstructionProto& in : c.instructions()) {
            if (in.opcode() == "constant" && hlo::IsElidedLiteral(in.literal())) {
              return Fail(app, absl::InvalidArgumentError(absl::StrCat(
                  st->module, ": constant \"", in.name(), "\" of computation \"",
                  c.name(), "\": expected its values, found {...} (the text "
                  "left them out; print it with --large-constants)")));
            }
          }
        }
        *module = parsed->module.SerializeAsString();
      }
      absl::StatusOr<std::string> snap = SnapshotFromModule(*module);
      if (!snap.ok()) return Fail(app, WithFile(snap.status(), st->module));
      req.snapshot = *std::move(snap);
    } else {
      absl::StatusOr<std::string> snap = LiteralEmptySnapshotOfFile(st->snapshot);
      if (!snap.ok()) return Fail(app, snap.status());
      req.snapshot = *std::move(snap);
    }
    if (absl::Status s =
            AddLiterals(st->inputs, in_types, "input", shape, &req.inputs);
        !s.ok()) {
      return Fail(app, s);
    }
    if (absl::Status s =
            AddLiterals(st->outputs, out_types, "output", shape, &req.outputs);
        !s.ok()) {
      return Fail(app, s);
    }
    // Estimated output size for the progress line: the header plus every
    // input file (close enough: headers are small, varints differ).
    uint64_t estimate = req.snapshot.size();
    for (const auto* list : {&st->inputs, &st->outputs}) {
      for (const std::string& f : *list) {
        struct stat sb;
        if (::stat(f.c_str(), &sb) == 0) estimate += sb.st_size;
      }
    }
    ProgressLine progress("pack", estimate,
                          ProgressModeOf(st->progress, st->quiet));
    req.progress = [&progress](uint64_t done) { progress.Update(done); };
    PackReport report;
    absl::Status s = PackToFile(req, st->out, &report);
    progress.Done();
    if (!s.ok()) return Fail(app, s);
    // Listed as unpack lists what it wrote.
    for (const auto* list : {&report.inputs, &report.outputs}) {
      for (const PackedLiteral& l : *list) {
        std::cout << absl::StrFormat("packed %s %s (%d bytes)\n", l.name,
                                     l.shape, l.bytes);
      }
    }
    std::cout << absl::StrFormat(
        "wrote %s (%s, %d bytes): header %d bytes, %s, %s\n", report.path,
        SnapshotFormName(report.format),
        report.file_bytes, report.header_bytes,
        Counted(report.inputs.size(), "input"),
        Counted(report.outputs.size(), "output"));
    return kExitOk;
  };
}

const Registrar kRegistrar({"pack",
                            "write a decomposed (or --format snapshot) file "
                            "from .npy files",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
