// decomposed pack (--module FILE | --snapshot FILE) [--input FILE]...
//                 [--output FILE]... [--dtype I=TYPE]... [--output-dtype J=TYPE]...
//                 [--format decomposed|snapshot] [--no-output-block]
//                 [--tf211-layout] [--box-shape] -o OUT
#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "command.h"
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
// usage error naming `option`.
std::vector<std::optional<PrimitiveType>> ParseDtypes(
    const std::vector<std::string>& specs, size_t count, std::string_view what,
    const std::string& option) {
  absl::StatusOr<std::vector<std::optional<PrimitiveType>>> types =
      ParseIndexedDtypes(specs, count, what);
  if (!types.ok()) throw CLI::ValidationError(option, std::string(types.status().message()));
  return *std::move(types);
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
      absl::StatusOr<std::string> snap = SnapshotFromModuleFile(st->module);
      if (!snap.ok()) return Fail(app, snap.status());
      req.snapshot = *std::move(snap);
    } else {
      absl::StatusOr<std::string> snap = LiteralEmptySnapshotOfFile(st->snapshot);
      if (!snap.ok()) return Fail(app, snap.status());
      req.snapshot = *std::move(snap);
    }
    absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> inputs =
        LiteralsOfFiles(st->inputs, in_types, "input", shape);
    if (!inputs.ok()) return Fail(app, inputs.status());
    req.inputs = *std::move(inputs);
    absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> outputs =
        LiteralsOfFiles(st->outputs, out_types, "output", shape);
    if (!outputs.ok()) return Fail(app, outputs.status());
    req.outputs = *std::move(outputs);
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
