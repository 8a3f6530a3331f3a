// Producing files: the decomposed producer (literal bodies streamed into a
// DecomposedWriter, container/framing.h) and PackToFile, which writes a
// whole decomposed or classic file. The region [0] helpers
// (SnapshotFromModule, LiteralEmptySnapshot, LiteralEmptySnapshotOfFile) and
// the lists -> classic mapping live in classic.h, the classic writer in
// classic_writer.h, conversion in convert.h.
//
// Decomposed (docs/format.md §7.7):
//   region [0]  box(Lm) + Lm bytes of a literal-empty HloSnapshot
//   region [1]  box(N) + N x (box(L) + L bytes of LiteralProto)   inputs
//   region [2]  box(M) + M x (box(L) + body)                       outputs
// Region [2] is written by default even with no outputs (count 0), because
// AWS's Python reader always reads it; Neuron's snapshot-unpack reads it
// only with --dump-snapshot-outputs and ignores it otherwise.
// DecomposedWriteOptions::write_output_count = false omits it.
//
// Counts are declared up front, not reserved and patched: the writer is
// given the whole list of literals (WriteInputs/WriteOutputs), so it knows
// N before the first element. This keeps every box minimal (`03 3a 01 NN`
// for small counts, which every reader accepts), works on sinks that cannot
// seek (pipes, sockets, stdout), and costs nothing: a producer holds its
// execution's argument list before writing it. Patching would need a
// seekable sink and a padded 10-byte varint in a 13-byte box (legal, but
// unlike anything a real producer writes). Each literal's body length is
// likewise computed exactly before its box is written
// (LiteralSource::Prepare), one literal at a time, so memory stays bounded by
// one literal's metadata, never its data.
//
// Example:
//   decomposed::AtomicFileSink out;
//   out.Open("x.decomposed_hlo_snapshot");
//   decomposed::DecomposedProducer<decomposed::AtomicFileSink> w(out);
//   w.WriteModule(module_bytes);
//   auto a = decomposed::NpyLiteral("a.npy", std::nullopt,
//                                   {.name = "input 0"});
//   std::vector<decomposed::LiteralSource*> in = {a.get()};
//   w.WriteInputs(in);
//   w.WriteOutputs({});
//   w.Finish();
//   out.Commit();
#ifndef DECOMPOSED_SNAPSHOT_PRODUCER_H_
#define DECOMPOSED_SNAPSHOT_PRODUCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/container/framing.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy_literal.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/xla/literal_source.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/snapshot/classic.h"
#include "decomposed/snapshot/classic_writer.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/status.h"
#include "decomposed/xla/literal_encoder.h"

namespace decomposed {

// ---------------------------------------------------------------------------
// Inputs

// Reads a whole file that must be one protobuf message (< 2 GiB).
absl::StatusOr<std::string> ReadMessageFile(const std::string& path);

// "INDEX=TYPE" specs (pack's --dtype, --output-dtype) -> one optional type
// per file of `count` (`what` names them: "input"). TYPE is any name
// ParseDtypeName takes (bf16, f8e4m3fn, float32, ...). Errors,
// kInvalidArgument: "expected INDEX=TYPE, found 'x'", "'5=f32': there are
// only 2 inputs (numbered from 0)", "'0=foo': unknown type (...)".
absl::StatusOr<std::vector<std::optional<PrimitiveType>>> ParseIndexedDtypes(
    const std::vector<std::string>& specs, size_t count, std::string_view what);

// The literals of files as `decomposed pack` takes them, in order: a file
// named *.npy is streamed (NpyLiteral, its type from `types[i]` when set:
// a void or narrow-float descr needs one); any other file holds one
// serialized LiteralProto, validated (a type given for it is an error).
// Each is named "<role> <i> (<file>)". `types` is empty or one per file.
absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> LiteralsOfFiles(
    const std::vector<std::string>& files,
    const std::vector<std::optional<PrimitiveType>>& types, std::string_view role,
    const ShapeEncodeOptions& shape = {});

// ---------------------------------------------------------------------------
// More literal bodies (see xla/literal_source.h for arrays and bytes,
// npy/npy_literal.h for NpyLiteral, a .npy file).

// A literal from a protobuf message (serialized once, then written as is).
std::unique_ptr<LiteralSource> ProtoLiteral(const xla::LiteralProto& literal,
                                            std::string name = "literal");


// ---------------------------------------------------------------------------
// Decomposed writer

// Writes a decomposed file to a ByteSink, in order: WriteHeader or
// WriteModule, WriteInputs, then optionally WriteOutputs, then Finish. Any
// error leaves the sink with a partial stream: write files through
// AtomicFileSink and Commit() only on success.
// Copies `length` bytes of the file `path` from `offset` to the current
// position of `out_fd`: splice(2) through a pipe (io/splice_copy.h: the
// kernel moves the bytes, page cache to page cache, measured faster here
// than copy_file_range for the unaligned offsets of pack), else
// copy_file_range(2), else a pread/write loop, whichever the kernel and
// file system allow. kOutOfRange when the file holds fewer bytes.
// `progress`, when set, is called with the bytes copied so far after each
// step (at most 256 KiB apart when splicing, else 64 MiB).
absl::Status CopyFileRangeTo(
    const std::string& path, uint64_t offset, uint64_t length, int out_fd,
    const std::function<void(uint64_t)>& progress = nullptr);

template <ByteSink K>
class DecomposedProducer {
 public:
  // With `kernel_copy` and an AtomicFileSink or FdSink, literal data that
  // is a verbatim range of an input file (.npy of a fixed-size or bytes
  // type, little endian) is copied by the kernel (LiteralSource::AsFileSpan).
  explicit DecomposedProducer(K& sink, DecomposedWriteOptions options = {},
                              bool kernel_copy = true)
      : w_(sink, options), kernel_copy_(kernel_copy) {}

  // Called with the sink position as data is written (after each chunk).
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

  // Region [0], the header, from serialized HloSnapshot bytes, written as
  // given (use LiteralEmptySnapshot first to drop baked-in literals).
  absl::Status WriteHeader(std::string_view header_bytes) {
    return w_.WriteHeader(header_bytes);
  }
  // Region [0] from serialized HloModuleProto bytes (SnapshotFromModule).
  absl::Status WriteModule(std::string_view module_bytes) {
    absl::StatusOr<std::string> s = SnapshotFromModule(module_bytes);
    if (!s.ok()) return s.status();
    return w_.WriteHeader(*s);
  }
  // Region [1]: the count, then each literal (prepared one at a time).
  absl::Status WriteInputs(std::span<LiteralSource* const> inputs) {
    if (absl::Status s = w_.BeginInputs(inputs.size()); !s.ok()) return s;
    return WriteList(inputs);
  }
  // Region [2].
  absl::Status WriteOutputs(std::span<LiteralSource* const> outputs) {
    if (absl::Status s = w_.BeginOutputs(outputs.size()); !s.ok()) return s;
    return WriteList(outputs);
  }
  // Writes region [2]'s count 0 if WriteOutputs was not called (unless
  // disabled in the options) and flushes.
  absl::Status Finish() { return w_.Finish(); }

 private:
  absl::Status WriteList(std::span<LiteralSource* const> bodies) {
    for (LiteralSource* b : bodies) {
      absl::StatusOr<uint64_t> n = b->Prepare();
      if (!n.ok()) return n.status();
      if (absl::Status s = w_.BeginElement(*n); !s.ok()) return s;
      if (kernel_copy_) {
        if (FdSink* fd_sink = FdSinkOf(w_.sink())) {
          if (std::optional<LiteralSource::FileSpan> span = b->AsFileSpan()) {
            absl::Status s = CopySpan(*span, fd_sink);
            if (!s.ok()) return Prefix(s, b->name());
            continue;
          }
        }
      }
      absl::Status s = b->Write([this](std::string_view c) {
        absl::Status a = w_.Append(c);
        if (progress_) progress_(w_.sink().position());
        return a;
      });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  static FdSink* FdSinkOf(K& sink) {
    if constexpr (std::is_same_v<K, AtomicFileSink>) {
      return sink.fd_sink();
    } else if constexpr (std::is_same_v<K, FdSink>) {
      return &sink;
    } else {
      return nullptr;
    }
  }

  absl::Status CopySpan(const LiteralSource::FileSpan& span, FdSink* fd_sink) {
    if (absl::Status s = w_.Append(span.head); !s.ok()) return s;
    if (!fd_sink->Flush()) return fd_sink->status();
    const uint64_t base = fd_sink->position();
    std::function<void(uint64_t)> report;
    if (progress_) {
      report = [this, base](uint64_t done) { progress_(base + done); };
    }
    absl::Status s = CopyFileRangeTo(span.path, span.offset, span.length,
                                     fd_sink->fd(), report);
    if (!s.ok()) {
      fd_sink->Fail(s);
      return s;
    }
    fd_sink->Wrote(span.length);
    return w_.AppendedExternally(span.length);
  }

  DecomposedWriter<K> w_;
  bool kernel_copy_;
  ProgressFn progress_;
};

// ---------------------------------------------------------------------------
// Files

// Everything `decomposed pack` needs.
struct PackRequest {
  // Region [0]: a literal-empty HloSnapshot (SnapshotFromModule or
  // LiteralEmptySnapshot of a file).
  std::string snapshot;
  std::vector<std::unique_ptr<LiteralSource>> inputs;
  std::vector<std::unique_ptr<LiteralSource>> outputs;
  // kDecomposed or kClassic (kAuto is kInvalidArgument).
  SnapshotType format = SnapshotType::kDecomposed;
  DecomposedWriteOptions write;  // write.write_output_count: region [2]
  ProgressFn progress;           // optional
};

// One literal PackToFile wrote.
struct PackedLiteral {
  std::string name;   // the body's name(): "input 0 (a.npy)"
  std::string shape;  // "F32[2,3]{1,0}" (Shape::ToString)
  uint64_t bytes = 0; // the serialized LiteralProto
};

// What PackToFile wrote, for listing (`decomposed pack` prints it).
struct PackReport {
  std::string path;
  SnapshotType format = SnapshotType::kDecomposed;
  uint64_t file_bytes = 0;
  uint64_t header_bytes = 0;  // region [0] / the literal-empty snapshot
  std::vector<PackedLiteral> inputs;
  std::vector<PackedLiteral> outputs;
};

// Writes `request` to `path` through an AtomicFileSink: on any error no
// file appears under `path` (an existing one is left untouched). On
// success fills `*report` when given.
absl::Status PackToFile(PackRequest& request, const std::string& path,
                        PackReport* report = nullptr);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_PRODUCER_H_
