// Unpack: what neuronx-cc's `snapshot-unpack` does (seed 000, neuron-facts.md
// section 1), streaming and in bounded memory.
//
//   snapshot mode    the whole file is one HloSnapshot. hlo.hlo_module goes
//                    to <prefix><module>; arguments[i] to
//                    <prefix>value_input<i>.npy; with dump_snapshot_outputs a
//                    TUPLE `result` gives one <prefix>snapshot_output<j>.npy
//                    per top-level tuple_literals element, any other result
//                    <prefix>snapshot_output0.npy.
//   decomposed mode  region [0]'s hlo.hlo_module to <prefix><module>, region
//                    [1] to value_input<i>.npy, and with dump_snapshot_outputs
//                    region [2] to snapshot_output<j>.npy, one file per
//                    element, no tuple splitting. Without the flag region [2]
//                    is not read; with it and no region [2] it is an error.
//                    Bytes after region [2] are an error (framing.h).
//   auto             DetectSnapshotType() picks one of the two.
//
// Paths are plain concatenation: output_prefix "out" writes "outmodel.hlo".
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
// Literals are streamed by DecodeLiteralToNpy (npy/literal_to_npy.h): memory
// stays bounded whatever their size. `literal_pass`, when set, materialises
// each literal as an xla::LiteralProto (so it must be under 2 GiB), runs the
// pass, re-serializes it and decodes that.
//
// Errors: the first error stops the run. Files already finished stay; the
// file being written is dropped (every output goes through AtomicFileSink:
// temp file + rename), so no partial file exists under a final name. The
// message names the literal ("value_input 3 body"), the frame and the byte
// offset, and the input file: e.g.
//   value_input 1 body: expected 5 values of F32 data (LiteralProto field 8)
//   (5 elements of F32[5]{0}), found 4 values (at byte 55 of x.dhs)
// Codes as in status.h; an unopenable input gives "Could not open: <file>"
// (code from errno) and an unknown snapshot type
// "ERROR: Unsupported snapshot format" (kInvalidArgument), the tool's texts.
//
// Example:
//   decomposed::UnpackOptions o;
//   o.snapshot_type = "decomposed";
//   o.dump_snapshot_outputs = true;
//   o.output_prefix = "out/";
//   std::vector<decomposed::UnpackedFile> files;
//   absl::Status s = decomposed::Unpack("x.decomposed_hlo_snapshot", o, &files);
#ifndef DECOMPOSED_SNAPSHOT_UNPACK_H_
#define DECOMPOSED_SNAPSHOT_UNPACK_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"
#include "decomposed/npy/literal_to_npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/status.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed {

// A module pass: rewrites the HloModuleProto before it is written (the
// tool's undocumented `convertProtoForTF2_11` would be one). Return a non-OK
// status to stop the run.
using ModulePass = std::function<absl::Status(xla::HloModuleProto& module)>;

// A literal pass: rewrites each literal before it is written. `stem` is
// "value_input" or "snapshot_output", `index` its number.
using LiteralPass = std::function<absl::Status(
    xla::LiteralProto& literal, std::string_view stem, int64_t index)>;

// One file Unpack wrote.
struct UnpackedFile {
  std::string path;
  std::string kind;     // "module", "value_input", "snapshot_output", "meta"
  int64_t index = -1;   // literal number, -1 for the module
  std::string shape;    // "F32[2,3]{1,0}" for literals
  std::string descr;    // npy descr for literals
  bool fortran_order = false;
  uint64_t bytes = 0;   // file size
};

struct UnpackOptions {
  std::string module = "model.hlo";
  std::string output_prefix = "./";
  // "snapshot" (default), "decomposed" or "auto"; anything else is
  // "ERROR: Unsupported snapshot format".
  std::string snapshot_type = "snapshot";
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
  // Create the directory part of output_prefix ("out/" or "a/b/pre_") when
  // missing, like `mkdir -p` (the tool would fail to write instead).
  bool create_output_dir = true;
  // Length-box options for decomposed files (lenient_length_byte).
  BoxReadOptions box;
  LiteralDecodeOptions decode;
  // Called after each file is committed (the CLI prints it).
  std::function<void(const UnpackedFile&)> on_file;
};

// <prefix><stem><index>.npy, by plain concatenation.
inline std::string NpyOutputPath(const UnpackOptions& o, std::string_view stem,
                                 int64_t index) {
  return absl::StrCat(o.output_prefix, Sv(stem), index, ".npy");
}

// HloSnapshotSink: receives the pieces of a snapshot from either mode (the
// byte ranges of the module and of each literal in `src`) and writes them as
// files under options.output_prefix, each through AtomicFileSink, applying
// the passes, the sidecar option and UnpackOptions::on_file. Unpack() drives
// it; use it directly to unpack from another container.
//   WriteModule(ranges)  <prefix><module>: the bytes of `ranges` as they are
//                        when there is one range and no module pass, else
//                        their concatenation parsed, passed and re-serialized
//                        (kInvalidArgument if protobuf rejects it).
//   WriteLiteral(ranges, stem, index)  <prefix><stem><index>.npy through
//                        DecodeLiteralToNpy; errors name "<stem> <index>".
// Example:
//   decomposed::MemorySource src(bytes);
//   decomposed::HloSnapshotSink sink(src, options, nullptr);
//   decomposed::ByteRange body{offset, length};
//   absl::Status s = sink.WriteLiteral({&body, 1}, "value_input", 0);
template <RewindableSource S>
class HloSnapshotSink {
 public:
  HloSnapshotSink(S& src, const UnpackOptions& options,
                  std::vector<UnpackedFile>* written)
      : src_(src), options_(options), written_(written) {}

  absl::Status WriteModule(std::span<const ByteRange> ranges) {
    const std::string path = options_.output_prefix + options_.module;
    const Frame frame{"hlo_module"};
    uint64_t total = 0;
    for (const ByteRange& r : ranges) total += r.length;
    const bool merge = ranges.size() > 1 || options_.module_pass;
    std::string bytes;
    if (merge || options_.validate_module) {
      if (total > limits::kMaxSnapshotBytes) {
        return FrameError(absl::StatusCode::kResourceExhausted, frame,
                          ranges.empty() ? 0 : ranges[0].offset,
                          "a module under protobuf's 2 GiB limit",
                          absl::StrCat(total, " bytes"));
      }
      if (absl::Status s = AppendRanges(ranges, frame, &bytes); !s.ok()) {
        return s;
      }
      xla::HloModuleProto module;
      if (!module.ParseFromString(bytes)) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame,
                          ranges.empty() ? 0 : ranges[0].offset,
                          "an HloModuleProto protobuf can parse",
                          "bytes it rejects");
      }
      if (merge) {
        if (options_.module_pass) {
          if (absl::Status s = options_.module_pass(module); !s.ok()) {
            return Prefix(s, "module pass");
          }
        }
        bytes.clear();
        if (!module.SerializeToString(&bytes)) {
          return absl::InternalError("hlo_module: serializing failed");
        }
      }
    }
    AtomicFileSink out;
    if (absl::Status s = out.Open(path); !s.ok()) return s;
    if (merge || options_.validate_module) {
      out.Write(bytes);
    } else {
      for (const ByteRange& r : ranges) {
        if (!src_.Seek(r.offset)) return SeekError(frame, r.offset);
        absl::Status s =
            ForEachChunk(src_, r.length, frame, [&](std::string_view c) {
              if (!out.Write(c)) return out.status();
              return absl::OkStatus();
            });
        if (!s.ok()) return s;
      }
    }
    uint64_t size = out.position();
    if (!out.status().ok()) return out.status();
    if (absl::Status s = out.Commit(); !s.ok()) return s;
    UnpackedFile f;
    f.path = path;
    f.kind = "module";
    f.bytes = size;
    Record(f);
    return absl::OkStatus();
  }

  absl::Status WriteLiteral(std::span<const ByteRange> ranges,
                            std::string_view stem, int64_t index) {
    const std::string path = NpyOutputPath(options_, stem, index);
    const Frame frame{stem, index, "body"};
    AtomicFileSink out;
    if (absl::Status s = out.Open(path); !s.ok()) return s;
    LiteralPlan plan;
    absl::Status s;
    if (options_.literal_pass) {
      s = PassLiteral(ranges, stem, index, frame, out, &plan);
    } else {
      s = DecodeLiteralToNpy(src_, ranges, frame, out, options_.decode, &plan);
    }
    if (!s.ok()) return s;
    uint64_t size = out.position();
    if (absl::Status c = out.Commit(); !c.ok()) return c;
    UnpackedFile f;
    f.path = path;
    f.kind = std::string(stem);
    f.index = index;
    f.shape = plan.shape.ToString();
    const NpyHeader header = NpyHeaderFor(plan);
    f.descr = header.descr;
    f.fortran_order = header.fortran_order;
    f.bytes = size;
    Record(f);
    if (options_.ml_dtype_sidecar && !plan.type->ml_dtype.empty()) {
      if (absl::Status m = WriteNpyMetaSidecar(path, plan.type->ml_dtype);
          !m.ok()) {
        return m;
      }
      UnpackedFile meta;
      meta.path = path + ".meta";
      meta.kind = "meta";
      meta.index = index;
      meta.bytes = NpyMetaSidecarText(plan.type->ml_dtype).size();
      Record(meta);
    }
    return absl::OkStatus();
  }

 private:
  // Appends the bytes of `ranges` to `out`, each checked against what the
  // source holds first (callers bound the total).
  absl::Status AppendRanges(std::span<const ByteRange> ranges,
                            const Frame& frame, std::string* out) {
    for (const ByteRange& r : ranges) {
      if (!src_.Seek(r.offset)) return SeekError(frame, r.offset);
      if (absl::Status s = CheckHeld(src_, r.length, frame); !s.ok()) {
        return s;
      }
      absl::Status s =
          ForEachChunk(src_, r.length, frame, [&](std::string_view c) {
            out->append(c.data(), c.size());
            return absl::OkStatus();
          });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status SeekError(const Frame& frame, uint64_t offset) {
    if (!src_.status().ok()) return Prefix(src_.status(), frame.str());
    return FrameError(absl::StatusCode::kFailedPrecondition, frame, offset,
                      "a seekable input", "one that cannot seek");
  }

  absl::Status PassLiteral(std::span<const ByteRange> ranges,
                           std::string_view stem, int64_t index,
                           const Frame& frame, AtomicFileSink& out,
                           LiteralPlan* plan) {
    uint64_t total = 0;
    for (const ByteRange& r : ranges) {
      total += r.length;
      if (total > limits::kMaxSnapshotBytes) {
        return FrameError(absl::StatusCode::kResourceExhausted, frame,
                          r.offset,
                          "a literal under protobuf's 2 GiB limit (a "
                          "literal pass materialises it)",
                          absl::StrCat(total, " bytes"));
      }
    }
    std::string bytes;
    if (absl::Status s = AppendRanges(ranges, frame, &bytes); !s.ok()) {
      return s;
    }
    xla::LiteralProto literal;
    if (!literal.ParseFromString(bytes)) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        ranges.empty() ? 0 : ranges[0].offset,
                        "a LiteralProto protobuf can parse",
                        "bytes it rejects");
    }
    if (absl::Status s = options_.literal_pass(literal, stem, index);
        !s.ok()) {
      return Prefix(s, absl::StrCat(Sv(stem), " ", index, " literal pass"));
    }
    bytes.clear();
    literal.SerializeToString(&bytes);
    MemorySource mem(bytes);
    ByteRange all{0, bytes.size()};
    return DecodeLiteralToNpy(mem, std::span<const ByteRange>(&all, 1), frame,
                              out, options_.decode, plan);
  }

  void Record(const UnpackedFile& f) {
    if (written_) written_->push_back(f);
    if (options_.on_file) options_.on_file(f);
  }

  S& src_;
  const UnpackOptions& options_;
  std::vector<UnpackedFile>* written_;
};

// Unpacks `path`, which must be a regular (seekable) file: literals are
// planned, then read (kFailedPrecondition otherwise). `written`, when given,
// receives every file committed, in order, also when an error stops the run.
absl::Status Unpack(const std::string& path, const UnpackOptions& options,
                    std::vector<UnpackedFile>* written = nullptr);

// snapshot-type=auto. A file is "decomposed" when it starts with a valid
// length box (1..127 byte LiteralProto holding one u64s value) giving a
// region [0] length that fits the file, followed by a valid count box whose
// count could fit in what remains, and, when that count is non-zero, a valid
// first element length box whose body fits; otherwise "snapshot".
// When it can be wrong: a classic HloSnapshot that happens to begin with
// such bytes. Protobuf writes HloSnapshot field 1 first (tag 0x0a), so that
// file's next bytes would have to form a valid box and the lengths would all
// have to fit: possible for a hand-made or tiny file, implausible for a
// real capture. A damaged decomposed file whose first boxes are broken is
// detected as "snapshot" and then fails as one, with a snapshot-mode error.
// Errors: the file cannot be opened or read.
absl::StatusOr<std::string> DetectSnapshotType(const std::string& path);

// --- The snapshot-unpack command line -----------------------------------------

struct UnpackCommandLine {
  UnpackOptions options;
  std::string snapshot;  // the positional input file
  bool help = false;     // -help / --help / -help-list given
};

// Parses arguments (without argv[0]) as LLVM's cl::ParseCommandLineOptions
// does for snapshot-unpack's options: one or two dashes; `-opt=value` and
// `-opt value` for strings (module, output-prefix, snapshot-type); bools
// (dump-snapshot-outputs, and our extensions ml-dtype-sidecar and
// lenient-length-byte) as `-flag` or
// `-flag=true|false` (also 1/0, TRUE/FALSE, True/False), never
// `-flag false`; an option given twice is an error, as with cl::opt; `--`
// ends options; exactly one positional <snapshot>; `-help`/`-help-list`
// set `help` (no positional needed). Errors (kInvalidArgument) carry LLVM's
// message texts, prefixed by `program`.
absl::StatusOr<UnpackCommandLine> ParseUnpackCommandLine(
    const std::vector<std::string>& args,
    std::string_view program = "snapshot-unpack");

// The -help text.
std::string UnpackUsage(std::string_view program = "snapshot-unpack");

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_UNPACK_H_
