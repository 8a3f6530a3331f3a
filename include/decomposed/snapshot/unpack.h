// Unpack: what neuronx-cc's `snapshot-unpack` does (docs/format.md
// §1.1, §7, §11 and §12), streaming and in bounded memory.
//
//   classic mode     (--snapshot-type=snapshot) the whole file is one
//                    HloSnapshot, mapped by the classic mapping (classic.h):
//                    its module goes to <prefix><module>, input i to
//                    <prefix>value_input<i>.npy and, with
//                    dump_snapshot_outputs, output j to
//                    <prefix>snapshot_output<j>.npy: a TUPLE `result` gives
//                    one file per top-level tuple_literals element, any other
//                    result snapshot_output0.npy, as the tool does. Where the
//                    tool would fail on a single tuple argument of a
//                    single-tuple-parameter program, the mapping splits it
//                    into its elements (classic.h).
//   decomposed mode  read through DecomposedReader (container/framing.h):
//                    region [0]'s module to <prefix><module>, region [1] to
//                    value_input<i>.npy, and with dump_snapshot_outputs
//                    region [2] to snapshot_output<j>.npy, one file per
//                    element, no tuple splitting. Without the flag region [2]
//                    is not read; with it, a file without region [2] and
//                    bytes after region [2] are errors.
//   auto             detected (docs/format.md §7.8).
// Both are read through SnapshotReader (reader.h), the input opened once
// (SnapshotFile, buffered: pread and the splice / copy_file_range paths).
//
// Paths are plain concatenation: output_prefix "out" writes "outmodel.hlo".
//
// Output formats (UnpackOptions::output_format):
//   kNpyFiles  one file per piece, as above (snapshot-unpack's output).
//   kNpz       one NumPy .npz at UnpackOptions::npz_path instead (`decomposed
//              unpack --to npz OUT.npz`): a zip, stored (not compressed),
//              whose entries are <module> ("model.hlo"), value_input<i>.npy
//              and snapshot_output<j>.npy (and <entry>.meta, manifest.json
//              when asked), byte-identical to the files kNpyFiles writes;
//              numpy.load opens it lazily. It is streamed through
//              NpzWriter (npy/npz_writer.h): never a whole literal in
//              memory, the CRC-32 computed on the fly (so no kernel copy),
//              ZIP64 when needed. output_prefix is not used.
//   manifest   with either format, `manifest` also writes manifest.json
//              (ManifestJson below): <prefix>manifest.json, or the npz's
//              entry manifest.json; atomic like every output.
//
// The module is written byte-identical to the hlo_module bytes on the wire
// (HloSnapshot field 1 -> HloProto field 1), unless a module pass is set or
// either field occurs more than once: protobuf merges repeated occurrences
// of a message field, so then the occurrences' payloads are concatenated
// (which is the merge), parsed as an HloModuleProto and re-serialized, as the
// tool does. With `validate_module` the module bytes are also parsed once
// (materialised, bounded by protobuf's 2 GiB limit) so that a module the tool
// would fail to parse fails here too.
//
// Both modes feed an HloSnapshotSink (below), which writes each piece.
//
// Literals are streamed by DecodeLiteralToNpy (npy/literal_to_npy.h), each
// handed a bounded view of its element: memory stays bounded whatever their
// size. `literal_pass`, when set, materialises each literal as an
// xla::LiteralProto (so it must be under 2 GiB), runs the pass,
// re-serializes it and decodes that.
//
// Errors: the first error stops the run. Files already finished stay; the
// file being written is dropped (every output goes through AtomicFileSink:
// temp file + rename), so no partial file exists under a final name. With
// kNpz the archive is the one output: a failed run leaves no npz_path. The
// message names the literal ("input 3 body"), the frame and the byte
// offset, and the input file: e.g.
//   input 1 body: expected 5 values of F32 data (LiteralProto field 8)
//   (5 elements of F32[5]{0}), found 4 values (at byte 55 of x.dhs)
// On failure the message also says how many finished files were kept
// ("...; kept 2 complete files before the error"; none with kNpz). Codes
// as in status.h; an unopenable input gives "Could not open: <file>:
// <reason>" (code and errno payload from errno; the snapshot-unpack
// drop-in prints the tool's "Could not open: <file>" first).
//
// Example:
//   decomposed::UnpackOptions o;
//   o.snapshot_type = decomposed::SnapshotType::kDecomposed;
//   o.dump_snapshot_outputs = true;
//   o.output_prefix = "out/";
//   std::vector<decomposed::UnpackedFile> files;
//   absl::Status s = decomposed::Unpack("x.decomposed_hlo_snapshot", o, &files);
#ifndef DECOMPOSED_SNAPSHOT_UNPACK_H_
#define DECOMPOSED_SNAPSHOT_UNPACK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/npy/npz_writer.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_decoder.h"
#include "nlohmann/json.hpp"

namespace decomposed {

// What an unpacked file holds.
enum class UnpackedKind {
  kModule,  // <prefix><module>: the HloModuleProto
  kInput,   // <prefix>value_input<i>.npy
  kOutput,  // <prefix>snapshot_output<j>.npy
  kMeta,    // <file>.npy.meta: the ml_dtype sidecar of an input or output
  kManifest,  // manifest.json (UnpackOptions::manifest)
  kArchive,   // the .npz itself (kNpz), recorded last, once committed
};

// What Unpack writes (UnpackOptions::output_format).
enum class UnpackFormat {
  kNpyFiles,  // one file per piece under output_prefix
  kNpz,       // one .npz at npz_path (see the file comment)
};

// The file stem of a literal kind: "value_input" (kInput), "snapshot_output"
// (kOutput), the names snapshot-unpack gives them; "module" and "meta" for
// the others ("manifest", "npz"). File names only: errors name a literal by
// its role, "input 3 body" or "output 0 body", as every command does
// (UnpackedKindRole).
std::string_view UnpackedKindName(UnpackedKind kind);

// The role of a literal kind in error frames: "input" (kInput), "output"
// (kOutput); "module" and "meta" for the others.
std::string_view UnpackedKindRole(UnpackedKind kind);

// A module pass: rewrites the HloModuleProto before it is written (the
// tool's undocumented `convertProtoForTF2_11` would be one). Return a non-OK
// status to stop the run.
using ModulePass = std::function<absl::Status(xla::HloModuleProto& module)>;

// A literal pass: rewrites each literal before it is written. `kind` is
// kInput or kOutput, `index` its number.
using LiteralPass = std::function<absl::Status(
    xla::LiteralProto& literal, UnpackedKind kind, int64_t index)>;

// One file Unpack wrote (with kNpz: one entry of the archive, then the
// archive itself, kind kArchive).
struct UnpackedFile {
  std::string path;     // the file; with kNpz the archive's path
  std::string entry;    // kNpz: the entry name ("value_input0.npy"), else ""
  UnpackedKind kind = UnpackedKind::kModule;
  int64_t index = -1;   // literal number, -1 for the module
  std::string shape;    // "F32[2,3]{1,0}" for literals
  std::string descr;    // npy descr for literals
  bool fortran_order = false;
  uint64_t bytes = 0;   // file (entry) size
  // Literals: the element type's XLA name, the logical dimensions and the
  // literal's minor_to_major (empty for a scalar or no layout).
  std::string element_type;
  std::vector<int64_t> dims;
  std::vector<int64_t> minor_to_major;
  // Module and literals: where the bytes were in the input: the first
  // byte, and the length (the sum of lengths for merged occurrences, as
  // inspect lists them).
  uint64_t source_offset = 0;
  uint64_t source_length = 0;
  // Inputs, when UnpackOptions::manifest: the program parameter it binds to
  // (InputParameterOf, classic.h); nullopt when the module names none.
  std::optional<InputParameter> parameter;
  // kNpz: where the entry's data starts in the archive.
  uint64_t archive_offset = 0;
};

struct UnpackOptions {
  std::string module = "model.hlo";
  std::string output_prefix = "./";
  // kAuto (detect, docs/format.md §7.8; the default here and in the
  // `decomposed` CLI), kClassic (snapshot-unpack's default, "snapshot",
  // which the snapshot-unpack drop-in keeps) or kDecomposed.
  SnapshotType snapshot_type = SnapshotType::kAuto;
  bool dump_snapshot_outputs = false;
  // Also write <file>.npy.meta = {"ml_dtype": "<name>"} for void-typed
  // arrays (BF16, F8*, F4E2M1FN, S4, U4, S2, U2).
  bool ml_dtype_sidecar = false;
  // Empty: identity (the module bytes are copied from the wire).
  ModulePass module_pass;
  // Empty: identity (literals are streamed).
  LiteralPass literal_pass;
  // Parse the module bytes once to reject what the tool would reject.
  bool validate_module = true;
  // Create the directory part of output_prefix ("out/" or "a/b/pre_"; with
  // kNpz of npz_path) when missing, like `mkdir -p` (the tool would fail to
  // write instead).
  bool create_output_dir = true;
  // kNpyFiles (the default) or kNpz: one archive at npz_path.
  UnpackFormat output_format = UnpackFormat::kNpyFiles;
  std::string npz_path;
  // Also write manifest.json: one entry per file written (ManifestJson).
  // Reads the module's program shape for the inputs' parameter names.
  bool manifest = false;
  // Length-box options for decomposed files (lenient_length_byte).
  BoxReadOptions box;
  LiteralDecodeOptions decode;
  // Called after each file is committed (the CLI prints it); with kNpz,
  // for each entry once the archive is committed, then for the archive, so
  // a failed run announces nothing it did not leave.
  std::function<void(const UnpackedFile&)> on_file;
  // Called with each warning (a decomposed header carrying `arguments` or a
  // `result`, HeaderLiteralsWarning in classic.h: unpack ignores those
  // literals, as snapshot-unpack does). `decomposed unpack` prints them to
  // stderr; the snapshot-unpack drop-in, like Neuron's tool, does not.
  std::function<void(const absl::Status&)> on_warning;
  // Optional, for progress displays: called with how far into the input
  // the work is, in bytes: the end of each file's bytes once it is written,
  // and, inside a literal, its first byte plus the payload bytes written
  // so far (once per chunk: 1 MiB buffers, 64 MiB kernel copies).
  std::function<void(uint64_t)> progress;
};

// <prefix><stem><index>.npy, by plain concatenation (kind kInput or kOutput).
inline std::string NpyOutputPath(const UnpackOptions& o, UnpackedKind kind,
                                 int64_t index) {
  return absl::StrCat(o.output_prefix, Sv(UnpackedKindName(kind)), index,
                      ".npy");
}

// UnpackDestination: where the pieces of an unpack land. HloSnapshotSink
// decides what is written, under which name, in which order, and records
// each file; a destination decides only how the bytes land:
//   MakeUnpackDestination(options)  kNpyFiles: one file per piece under
//                        output_prefix, each through AtomicFileSink (temp
//                        file + rename at End); kNpz: one entry per piece of
//                        the archive npz_path (opened at the first piece,
//                        its directory made with create_output_dir),
//                        committed by Finish.
//   Begin(path, size), Append(chunk)..., End(&file)  a piece streamed, of
//                        exactly `size` bytes.
//   Write(path, data, &file)  a piece held in memory.
//   BeginArray(path), EndArray(&file)  a literal decoded as .npy: the
//                        returned ArraySink is driven by DecodeLiteral.
//   Finish()             after the last piece: the archive's own record
//                        (kArchive) with kNpz; nothing for the file tree.
// End, Write and EndArray fill the record's path, entry (kNpz: the path
// after output_prefix), bytes and archive_offset; the caller sets the rest.
// A destination dropped without Finish leaves no partial file under a final
// name (the archive's temp file and an open piece's are removed).
class UnpackDestination {
 public:
  virtual ~UnpackDestination() = default;
  virtual absl::Status Begin(const std::string& path, uint64_t size) = 0;
  virtual absl::Status Append(std::string_view chunk) = 0;
  virtual absl::Status End(UnpackedFile* file) = 0;
  virtual absl::Status Write(const std::string& path, std::string_view data,
                             UnpackedFile* file) = 0;
  virtual absl::StatusOr<ArraySink*> BeginArray(const std::string& path) = 0;
  virtual absl::Status EndArray(UnpackedFile* file) = 0;
  virtual absl::StatusOr<std::optional<UnpackedFile>> Finish() = 0;
};

std::unique_ptr<UnpackDestination> MakeUnpackDestination(
    const UnpackOptions& options);

// HloSnapshotSink: receives the pieces of a snapshot from either mode (the
// byte ranges of the module and of each literal in a source) and writes
// them through an UnpackDestination (files under options.output_prefix, or
// entries of one npz archive), applying the passes, the sidecar option and
// UnpackOptions::on_file.
// Unpack() drives it; use it directly to unpack from another container,
// and call Finish() at the end: it writes manifest.json (with `manifest`)
// and completes and commits the npz (with kNpz).
//   SetProgramShape(ps)  the module's program shape, for the inputs'
//                        parameter names (manifest).
//   WriteModule(src, ranges)  <prefix><module>: the bytes of `ranges` as
//                        they are when there is one range and no module
//                        pass, else their concatenation parsed, passed and
//                        re-serialized (kInvalidArgument if protobuf rejects
//                        it).
//   WriteLiteral(src, ranges, kind, index)  <prefix><stem><index>.npy
//                        through DecodeLiteral into the destination's
//                        ArraySink; errors name "<role> <index> body".
//                        `src` may be a bounded view of one element
//                        (LimitedSource).
// Example:
//   decomposed::MemorySource src(bytes);
//   decomposed::HloSnapshotSink sink(options, nullptr);
//   decomposed::ByteRange body{offset, length};
//   absl::Status s = sink.WriteLiteral(src, {&body, 1},
//                                      decomposed::UnpackedKind::kInput, 0);
//   if (s.ok()) s = sink.Finish();
class HloSnapshotSink {
 public:
  HloSnapshotSink(const UnpackOptions& options,
                  std::vector<UnpackedFile>* written);
  ~HloSnapshotSink();

  void SetProgramShape(const xla::ProgramShapeProto& program_shape);

  // Writes manifest.json (with `manifest`), then finishes the destination
  // (with kNpz: the central directory, and the archive committed, opened
  // here if no piece was written). Call once, after the last piece, on
  // success only: dropped without it, nothing partial stays.
  absl::Status Finish();

  template <RewindableSource S>
  absl::Status WriteModule(S& src, std::span<const ByteRange> ranges) {
    const std::string path = options_.output_prefix + options_.module;
    const Frame frame{"hlo_module"};
    uint64_t total = 0;
    for (const ByteRange& r : ranges) total += r.length;
    const bool merge = ranges.size() > 1 || options_.module_pass;
    const bool whole = merge || options_.validate_module;
    UnpackedFile f;
    if (whole) {
      if (total > limits::kMaxMessageBytes) {
        return FrameError(absl::StatusCode::kResourceExhausted, frame,
                          ranges.empty() ? 0 : ranges[0].offset,
                          "a module under protobuf's 2 GiB limit",
                          absl::StrCat(total, " bytes"));
      }
      std::string bytes;
      if (absl::Status s = AppendRanges(src, ranges, frame, &bytes); !s.ok()) {
        return s;
      }
      if (absl::Status s = ParseModule(ranges, frame, merge, &bytes);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = dest_->Write(path, bytes, &f); !s.ok()) return s;
    } else {
      if (absl::Status s = dest_->Begin(path, total); !s.ok()) return s;
      for (const ByteRange& r : ranges) {
        if (!src.Seek(r.offset)) return SeekError(src, frame, r.offset);
        absl::Status s = ForEachChunk(
            src, r.length, frame,
            [&](std::string_view c) { return dest_->Append(c); });
        if (!s.ok()) return s;
      }
      if (absl::Status s = dest_->End(&f); !s.ok()) return s;
    }
    RecordModule(std::move(f), ranges);
    if (options_.progress && !ranges.empty()) {
      options_.progress(ranges.back().offset + ranges.back().length);
    }
    return absl::OkStatus();
  }

  template <RewindableSource S>
  absl::Status WriteLiteral(S& src, std::span<const ByteRange> ranges,
                            UnpackedKind kind, int64_t index) {
    const std::string path = NpyOutputPath(options_, kind, index);
    const Frame frame{UnpackedKindRole(kind), index, "body"};
    absl::StatusOr<ArraySink*> array = dest_->BeginArray(path);
    if (!array.ok()) return array.status();
    LiteralPlan plan;
    absl::Status s;
    LiteralDecodeOptions decode = options_.decode;
    uint64_t base = ranges.empty() ? 0 : ranges.front().offset, done = 0;
    if (options_.progress) {
      decode.on_payload = [this, base, &done](uint64_t n) {
        done += n;
        options_.progress(base + done);
      };
    }
    if (options_.literal_pass) {
      s = PassLiteral(src, ranges, kind, index, frame, **array, decode, &plan);
    } else {
      s = DecodeLiteral(src, ranges, frame, **array, decode, &plan);
    }
    if (!s.ok()) return s;
    UnpackedFile f;
    if (s = dest_->EndArray(&f); !s.ok()) return s;
    s = RecordLiteral(std::move(f), path, kind, index, plan, ranges);
    if (s.ok() && options_.progress && !ranges.empty()) {
      options_.progress(ranges.back().offset + ranges.back().length);
    }
    return s;
  }

 private:
  // Appends the bytes of `ranges` to `out`, each checked against what the
  // source holds first (callers bound the total).
  template <RewindableSource S>
  absl::Status AppendRanges(S& src, std::span<const ByteRange> ranges,
                            const Frame& frame, std::string* out) {
    for (const ByteRange& r : ranges) {
      if (!src.Seek(r.offset)) return SeekError(src, frame, r.offset);
      if (absl::Status s = CheckHeld(src, r.length, frame); !s.ok()) {
        return s;
      }
      absl::Status s =
          ForEachChunk(src, r.length, frame, [&](std::string_view c) {
            out->append(c.data(), c.size());
            return absl::OkStatus();
          });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  template <RewindableSource S>
  static absl::Status SeekError(const S& src, const Frame& frame,
                                uint64_t offset) {
    if (!src.status().ok()) return Prefix(src.status(), frame);
    return FrameError(absl::StatusCode::kFailedPrecondition, frame, offset,
                      "a seekable input", "one that cannot seek");
  }

  template <RewindableSource S>
  absl::Status PassLiteral(S& src, std::span<const ByteRange> ranges,
                           UnpackedKind kind, int64_t index,
                           const Frame& frame, ArraySink& out,
                           const LiteralDecodeOptions& decode,
                           LiteralPlan* plan) {
    uint64_t total = 0;
    for (const ByteRange& r : ranges) {
      total += r.length;
      if (total > limits::kMaxMessageBytes) {
        return FrameError(absl::StatusCode::kResourceExhausted, frame,
                          r.offset,
                          "a literal under protobuf's 2 GiB limit (a "
                          "literal pass materialises it)",
                          absl::StrCat(total, " bytes"));
      }
    }
    std::string bytes;
    if (absl::Status s = AppendRanges(src, ranges, frame, &bytes); !s.ok()) {
      return s;
    }
    if (absl::Status s = RunLiteralPass(ranges, kind, index, frame, &bytes);
        !s.ok()) {
      return s;
    }
    MemorySource mem(bytes);
    ByteRange all{0, bytes.size()};
    return DecodeLiteral(mem, std::span<const ByteRange>(&all, 1), frame, out,
                         decode, plan);
  }

  // The non-template steps, in unpack.cc.
  absl::Status ParseModule(std::span<const ByteRange> ranges,
                           const Frame& frame, bool merge, std::string* bytes);
  void RecordModule(UnpackedFile f, std::span<const ByteRange> ranges);
  absl::Status RunLiteralPass(std::span<const ByteRange> ranges,
                              UnpackedKind kind, int64_t index,
                              const Frame& frame, std::string* bytes);
  absl::Status RecordLiteral(UnpackedFile f, const std::string& path,
                             UnpackedKind kind, int64_t index,
                             const LiteralPlan& plan,
                             std::span<const ByteRange> ranges);
  void Record(UnpackedFile f);
  void Announce(UnpackedFile f);  // on_file and `written`

  const UnpackOptions& options_;
  std::vector<UnpackedFile>* written_;
  std::unique_ptr<UnpackDestination> dest_;
  std::vector<std::string> parameter_names_;
  bool single_tuple_parameter_ = false;
  bool has_program_shape_ = false;
  std::vector<UnpackedFile> manifest_;  // every file recorded (`manifest`)
  std::vector<UnpackedFile> unannounced_;  // npz entries, until Finish
};

// The manifest.json of `files` (the UnpackedFile list of a run, in order;
// kArchive and kManifest records are skipped): {"format": "decomposed
// unpack manifest", "version": 1, "archive": <npz path or null>,
// "files": [...]} with one object per file: "name" (the entry name, or the
// path after the prefix), "path", "kind" ("module", "input", "output",
// "meta"), "index", "bytes", "source_offset", "source_length"; literals
// add "parameter" (name or null; inputs only), "tuple_index" (null unless
// the input is an element of a single tuple parameter), "dtype" (npy
// descr), "element_type" (XLA name), "shape" (logical dims),
// "minor_to_major" (the literal's layout), "fortran_order"; npz entries
// add "archive_offset" (where the entry's data starts in the archive).
nlohmann::ordered_json ManifestJson(const UnpackOptions& options,
                                    std::span<const UnpackedFile> files);

// Unpacks `path`: a regular file, or "-" (standard input), a pipe, a FIFO
// (read in one pass through SpoolSource: a decomposed stream holds one
// element at a time, in memory up to limits::kSpoolMemoryBytes and beyond
// it in an unlinked temp file under $TMPDIR, else /tmp; a classic stream is
// copied whole to that temp file first, as it is read twice). The files and
// messages are those of the same bytes in a regular file; "-" is named
// "(at byte N, from stdin)" (WithFile). `written`, when given, receives
// every file committed, in order, also when an error stops the run (with
// kNpz, the entries once the archive is committed, then the archive: a
// failed run reports none).
absl::Status Unpack(const std::string& path, const UnpackOptions& options,
                    std::vector<UnpackedFile>* written = nullptr);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_UNPACK_H_
