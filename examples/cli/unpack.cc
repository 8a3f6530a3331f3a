// decomposed unpack [--module F] [--output-prefix P]
//                   [--snapshot-type snapshot|decomposed|auto]
//                   [--dump-snapshot-outputs] [--ml-dtype-sidecar]
//                   [--lenient-length-byte] [--to npz OUT.npz]
//                   [--manifest] SNAPSHOT
// decomposed unpack --each DIR [-j N] [options] SNAPSHOT...
// snapshot-unpack's options and behaviour (include/decomposed/snapshot/
// unpack.h) in this CLI's syntax (two dashes; the LLVM cl::opt syntax is
// snapshot-unpack's), printing every file it writes. `--to npz OUT.npz`
// writes one .npz instead (UnpackFormat::kNpz); `--manifest` also writes
// manifest.json (UnpackOptions::manifest). With --each, every SNAPSHOT is
// unpacked into DIR/<stem>/ (UnpackEach, snapshot/each.h), --jobs at a
// time, printed in input order; a failed snapshot is reported and the
// others still run; the exit code is the worst of them. --each excludes
// --output-prefix and --to.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "command.h"
#include "progress.h"
#include "decomposed/snapshot/each.h"
#include "decomposed/snapshot/unpack.h"

namespace decomposed::cli {
namespace {

struct State {
  UnpackOptions options;
  std::vector<std::string> snapshots;
  std::string each;  // --each DIR
  unsigned jobs = 0;
  // auto, unlike snapshot-unpack (whose drop-in keeps Neuron's "snapshot").
  SnapshotType snapshot_type = SnapshotType::kAuto;
  bool progress = false, quiet = false;
  // --to FORMAT OUT: {"npz", "OUT.npz"}.
  std::vector<std::string> to;
};

Action Setup(CLI::App& app) {
  auto st = std::make_shared<State>();
  UnpackOptions& o = st->options;
  app.add_option("SNAPSHOT", st->snapshots,
                 "a classic or decomposed snapshot (several with --each)")
      ->required();
  CLI::Option* each = app.add_option(
      "--each", st->each,
      "unpack every SNAPSHOT into DIR/<its name without extension>/");
  app.add_option("--output-prefix", o.output_prefix,
                 "joined to each file name as is (out/ writes out/model.hlo)")
      ->capture_default_str()
      ->excludes(each);
  AddJobsOption(app, &st->jobs);
  app.add_option("--module", o.module, "module file name")
      ->capture_default_str();
  AddSnapshotTypeOption(app, &st->snapshot_type);
  AddProgressOptions(app, &st->progress, &st->quiet);
  app.add_flag("--dump-snapshot-outputs", o.dump_snapshot_outputs,
               "also write snapshot_output<j>.npy");
  app.add_flag("--ml-dtype-sidecar", o.ml_dtype_sidecar,
               "also write <file>.npy.meta for void dtypes (bf16, fp8, ...)");
  app.add_flag("--lenient-layout", o.decode.lenient_layout,
               "read an array literal with no layout as major-to-minor "
               "(AWS's reader; XLA refuses it)");
  app.add_flag("--lenient-length-byte", o.box.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  app.add_option("--to", st->to,
                 "npz OUT.npz: write one stored .npz (entries model.hlo, "
                 "value_input<i>.npy, snapshot_output<j>.npy) instead of "
                 "one file each")
      ->expected(2)
      ->type_name("npz OUT.npz")
      ->excludes(each);
  app.add_flag("--manifest", o.manifest,
               "also write manifest.json: each file's parameter name, dtype, "
               "shape, layout, source offset and length (an npz entry with "
               "--to npz)");
  return [st, &app] {
    st->options.snapshot_type = st->snapshot_type;
    if (st->each.empty() && st->snapshots.size() != 1) {
      throw CLI::ValidationError(
          "SNAPSHOT", "one snapshot, or several with --each DIR");
    }
    if (!st->to.empty()) {
      if (st->to[0] != "npz") {
        throw CLI::ValidationError(
            "--to", absl::StrCat("unknown format '", st->to[0],
                                 "' (npz is the one format)"));
      }
      if (app.count("--output-prefix") > 0) {
        throw CLI::ValidationError(
            "--to", "npz writes one file: --output-prefix does not apply");
      }
      st->options.output_format = UnpackFormat::kNpz;
      st->options.npz_path = st->to[1];
    }
    auto print = [](const UnpackedFile& f) {
      if (f.kind == UnpackedKind::kArchive) {
        std::cout << absl::StrFormat("wrote %s (%d bytes)\n", f.path, f.bytes);
        return;
      }
      const std::string name =
          f.entry.empty() ? f.path : absl::StrCat(f.path, ":", f.entry);
      if (f.kind == UnpackedKind::kInput || f.kind == UnpackedKind::kOutput) {
        std::cout << absl::StrFormat("wrote %s %s %s%s (%d bytes)\n", name,
                                     f.shape, f.descr,
                                     f.fortran_order ? " fortran_order" : "",
                                     f.bytes);
      } else if (f.kind == UnpackedKind::kModule && f.bytes == 0) {
        // An arguments-only snapshot (XLA writes some): model.hlo is
        // written, as snapshot-unpack writes it, but empty.
        std::cout << absl::StrFormat(
            "wrote %s (0 bytes: the snapshot has no module)\n", name);
      } else {
        std::cout << absl::StrFormat("wrote %s (%d bytes)\n", name, f.bytes);
      }
    };
    auto warn = [&app](const absl::Status& w) {
      std::cerr << CommandName(app) << ": warning: " << w.message() << "\n";
    };
    ProgressLine progress("unpack", TotalFileBytes(st->snapshots),
                          ProgressModeOf(st->progress, st->quiet));
    st->options.progress = [&progress](uint64_t done) {
      progress.Update(done);
    };
    if (!st->each.empty()) {
      size_t files = 0, failed = 0;
      absl::Status s = UnpackEach(
          st->snapshots, st->each, st->options, st->jobs,
          [&](size_t, UnpackEachResult& r) {
            progress.Clear();
            for (const UnpackedFile& f : r.files) {
              print(f);
              // A failed snapshot's finished files are kept, not counted
              // as unpacked: its error says how many were kept.
              if (f.kind != UnpackedKind::kArchive && r.status.ok()) ++files;
            }
            std::cout.flush();
            for (const absl::Status& w : r.warnings) warn(w);
            if (!r.status.ok()) {
              ++failed;
              Fail(app, r.status);
            }
          });
      progress.Done();
      if (!s.ok()) return Fail(app, s);
      std::cout << "unpacked " << Counted(files, "file") << " from "
                << Counted(st->snapshots.size() - failed, "snapshot");
      if (failed) std::cout << "; " << failed << " failed";
      std::cout << "\n";
      return failed ? kExitFailure : kExitOk;
    }
    size_t n = 0;
    st->options.on_file = [&](const UnpackedFile& f) {
      if (f.kind != UnpackedKind::kArchive) ++n;
      print(f);
    };
    st->options.on_warning = warn;
    absl::Status s = Unpack(st->snapshots[0], st->options);
    progress.Done();
    if (!s.ok()) return Fail(app, s);
    if (st->options.output_format == UnpackFormat::kNpz) {
      std::cout << "unpacked " << Counted(n, "file") << " into "
                << st->options.npz_path << "\n";
    } else {
      std::cout << "unpacked " << Counted(n, "file") << "\n";
    }
    return kExitOk;
  };
}

const Registrar kRegistrar({"unpack",
                            "write the module and every literal as .npy "
                            "(snapshot-unpack's options)",
                            &Setup});

}  // namespace
}  // namespace decomposed::cli
