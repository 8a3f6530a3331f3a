// decomposed convert IN OUT --to snapshot|decomposed
//     [--snapshot-type auto|decomposed|snapshot] [--lenient-length-byte]
//     [--no-output-block] [--no-validate]
#include <sys/stat.h>

#include <iostream>
#include <memory>

#include "absl/strings/str_format.h"
#include "command.h"
#include "decomposed/snapshot/convert.h"
#include "decomposed/snapshot/producer.h"
#include "progress.h"

namespace decomposed::cli {
namespace {

struct State {
  std::string in, out;
  SnapshotType to = SnapshotType::kAuto;  // required: one of the two
  SnapshotType snapshot_type = SnapshotType::kAuto;  // IN's form
  bool lenient = false, no_output_block = false, no_validate = false;
  bool progress = false, quiet = false;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  app.add_option("IN", st->in, "the file to convert")->required();
  app.add_option("OUT", st->out, "the file to write")->required();
  AddEnumOption(app, "--to", &st->to, kOutputSnapshotTypeNames,
                "snapshot: decomposed IN -> one classic HloSnapshot "
                "(< 2 GiB), inputs -> arguments, outputs -> a TUPLE result; "
                "decomposed: classic IN -> decomposed, arguments -> inputs, "
                "the result's tuple elements -> outputs")
      ->required();
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddProgressOptions(app, &st->progress, &st->quiet);
  app.add_flag("--lenient-length-byte", st->lenient,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  app.add_flag("--no-output-block", st->no_output_block,
               "omit region [2] when there are no outputs");
  app.add_flag("--no-validate", st->no_validate,
               "skip checking each literal body's wire format and shape");
  return [st, &app] {
    ConvertOptions options;
    options.read.box.lenient_length_byte = st->lenient;
    options.write.write_output_count = !st->no_output_block;
    options.validate = !st->no_validate;
    struct stat sb;
    ProgressLine progress("convert",
                          ::stat(st->in.c_str(), &sb) == 0 ? sb.st_size : 0,
                          ProgressModeOf(st->progress, st->quiet));
    options.progress = [&progress](uint64_t done) { progress.Update(done); };
    ConvertReport report;
    absl::Status s = ConvertSnapshot(
        st->in, st->out, st->to, st->snapshot_type, options, &report);
    progress.Done();
    if (!s.ok()) return Fail(app, s);
    // As pack and unpack list what they wrote.
    std::cout << absl::StrFormat(
        "wrote %s (%s, %d bytes): %s, %s, from %s (%s)\n", st->out,
        SnapshotFormName(report.to), report.bytes,
        Counted(report.inputs, "input"), Counted(report.outputs, "output"),
        st->in, SnapshotFormName(report.from));
    return kExitOk;
  };
}

const Registrar kRegistrar({"convert",
                            "between the decomposed and classic HloSnapshot "
                            "forms",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
