// Producing files: the decomposed writer, the classic HloSnapshot writer,
// and conversion between the two forms.
//
// Decomposed (seed 000 "Producer contract"):
//   region [0]  box(Lm) + Lm bytes of a literal-empty HloSnapshot
//   region [1]  box(N) + N x (box(L) + L bytes of LiteralProto)   inputs
//   region [2]  box(M) + M x (box(L) + body)                       outputs
// Region [2] is written by default even with no outputs (count 0), because
// AWS's Python reader always reads it; Neuron's snapshot-unpack reads it
// only with --dump-snapshot-outputs and ignores it otherwise.
// DecomposedWriteOptions::write_output_count = false omits it.
//
// Counts are declared up front, not reserved and patched: the writer is
// given the whole list of literals of a block (WriteInputs/WriteOutputs),
// so it knows N before the first element. This keeps every box minimal
// (`03 3a 01 NN` for small counts, which every reader accepts), works on
// sinks that cannot seek (pipes, sockets, stdout), and costs nothing: a
// producer holds its execution's argument list before writing it. Patching
// would need a seekable sink and a padded 10-byte varint in a 13-byte box
// (legal, but unlike anything a real producer writes). Each literal's body
// length is likewise computed exactly before its box is written
// (LiteralBody::Prepare), one literal at a time, so memory stays bounded by
// one literal's metadata, never its data.
//
// Classic: one HloSnapshot message { hlo = 1, arguments = 2, result = 3,
// execution_platform = 4 }, streamed the same way. Protobuf cannot parse a
// message of 2 GiB or more; WriteClassicSnapshot computes the total first
// and refuses (kResourceExhausted, nothing written) past
// limits::kMaxSnapshotBytes, telling the user to write the decomposed form.
//
// Decomposed -> classic follows AWS's Python reader (neuron-facts.md
// section 3): inputs become `arguments`, except that a program whose only
// parameter is a TUPLE gets one tuple argument holding all inputs (unless
// the single input already is that tuple); outputs become `result`: a TUPLE
// literal of all outputs when host_program_shape.result is a tuple or
// missing (its tuple shape built from the outputs' own shapes, so it always
// loads; the element count must match the program's), or the one output
// itself when the program result is an array. No outputs: no result.
// Classic -> decomposed is the inverse: `arguments` (a single tuple
// argument of a single-tuple-parameter program is split into its
// elements), then `result` split into its top-level tuple elements as
// snapshot-unpack does (or one output for an array result; none when
// absent). Both directions stream from an mmap of the input: no literal is
// copied into memory.
//
// Example:
//   decomposed::AtomicFileSink out;
//   out.Open("x.decomposed_hlo_snapshot");
//   decomposed::DecomposedProducer<decomposed::AtomicFileSink> w(out);
//   w.WriteModule(module_bytes);
//   auto a = decomposed::NpyInputBody("a.npy", std::nullopt, {.name = "input 0"});
//   std::vector<decomposed::LiteralBody*> in = {a.get()};
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
#include "decomposed/wire/wire.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy_literal.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/xla/literal_body.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/status.h"

namespace decomposed {

// ---------------------------------------------------------------------------
// Region [0]

// Wraps serialized HloModuleProto bytes, verbatim, into a literal-empty
// HloSnapshot: `0a <len> 0a <len> <module>` (hlo.hlo_module). The module is
// parsed once to check it is an HloModuleProto (kInvalidArgument if not)
// but not re-serialized, so a consumer extracts exactly the bytes given.
absl::StatusOr<std::string> SnapshotFromModule(std::string_view module_bytes);

// Removes `arguments` (2) and `result` (3) from serialized HloSnapshot
// bytes, keeping every other field record verbatim and in order. Errors on
// malformed wire bytes, with the byte offset.
absl::StatusOr<std::string> LiteralEmptySnapshot(std::string_view snapshot);

// The literal-empty region [0] snapshot of an existing file, classic or
// decomposed (told apart by DetectSnapshotType, unpack.h): a classic file
// is mapped and its `arguments`/`result` records skipped without reading
// them (so it may be larger than 2 GiB); a decomposed file gives its region
// [0] (with any baked-in literals dropped). The result must parse as an
// HloSnapshot (kInvalidArgument otherwise).
absl::StatusOr<std::string> HeaderFromSnapshotFile(const std::string& path);

// Reads a whole file that must be one protobuf message (< 2 GiB).
absl::StatusOr<std::string> ReadMessageFile(const std::string& path);

// ---------------------------------------------------------------------------
// More literal bodies (see xla/literal_body.h for arrays and bytes,
// npy/npy_literal.h for NpyInputBody, a .npy file).

// A literal from a protobuf message (serialized once, then written as is).
std::unique_ptr<LiteralBody> ProtoBody(const xla::LiteralProto& literal,
                                       std::string name = "literal");

// A TUPLE literal of `elements` (borrowed): shape {TUPLE, tuple_shapes =
// each element's shape}, then one tuple_literals record per element.
std::unique_ptr<LiteralBody> TupleBody(std::vector<LiteralBody*> elements,
                                       std::string name = "tuple");

// ---------------------------------------------------------------------------
// Decomposed writer

namespace internal {
template <ByteSink K>
ChunkFn SinkFn(K& sink) {
  return [&sink](std::string_view c) -> absl::Status {
    if (sink.Write(c)) return absl::OkStatus();
    return sink.status();
  };
}
}  // namespace internal

// Writes a decomposed file to a ByteSink, in order: WriteSnapshot or
// WriteModule, WriteInputs, then optionally WriteOutputs, then Finish. Any
// error leaves the sink with a partial stream: write files through
// AtomicFileSink and Commit() only on success.
// Copies `length` bytes of the file `path` from `offset` to the current
// position of `out_fd`: copy_file_range(2) (the kernel moves the bytes, as
// cp does), falling back to a pread/write loop where the kernel or file
// system cannot. kOutOfRange when the file holds fewer bytes. `progress`,
// when set, is called with the bytes copied so far after each step (at most
// 64 MiB apart).
absl::Status CopyFileRangeTo(
    const std::string& path, uint64_t offset, uint64_t length, int out_fd,
    const std::function<void(uint64_t)>& progress = nullptr);

// Reports bytes written to the output so far (for a progress display).
using ProgressFn = std::function<void(uint64_t bytes_written)>;

template <ByteSink K>
class DecomposedProducer {
 public:
  // With `kernel_copy` and an AtomicFileSink or FdSink, literal data that
  // is a verbatim range of an input file (.npy of a fixed-size or bytes
  // type, little endian) is copied by the kernel (LiteralBody::AsFileSpan).
  explicit DecomposedProducer(K& sink, DecomposedWriteOptions options = {},
                              bool kernel_copy = true)
      : w_(sink, options), kernel_copy_(kernel_copy) {}

  // Called with the sink position as data is written (after each chunk).
  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }

  // Region [0] from serialized HloSnapshot bytes, written as given (use
  // LiteralEmptySnapshot first to drop baked-in literals).
  absl::Status WriteSnapshot(std::string_view snapshot_bytes) {
    return w_.WriteSnapshot(snapshot_bytes);
  }
  // Region [0] from serialized HloModuleProto bytes (SnapshotFromModule).
  absl::Status WriteModule(std::string_view module_bytes) {
    absl::StatusOr<std::string> s = SnapshotFromModule(module_bytes);
    if (!s.ok()) return s.status();
    return w_.WriteSnapshot(*s);
  }
  // Region [1]: the count, then each literal (prepared one at a time).
  absl::Status WriteInputs(std::span<LiteralBody* const> inputs) {
    if (absl::Status s = w_.BeginInputs(inputs.size()); !s.ok()) return s;
    return WriteBlock(inputs);
  }
  // Region [2].
  absl::Status WriteOutputs(std::span<LiteralBody* const> outputs) {
    if (absl::Status s = w_.BeginOutputs(outputs.size()); !s.ok()) return s;
    return WriteBlock(outputs);
  }
  // Writes region [2]'s count 0 if WriteOutputs was not called (unless
  // disabled in the options) and flushes.
  absl::Status Finish() { return w_.Finish(); }

 private:
  absl::Status WriteBlock(std::span<LiteralBody* const> bodies) {
    for (LiteralBody* b : bodies) {
      absl::StatusOr<uint64_t> n = b->Prepare();
      if (!n.ok()) return n.status();
      if (absl::Status s = w_.BeginElement(*n); !s.ok()) return s;
      if (kernel_copy_) {
        if (FdSink* fd_sink = FdSinkOf(w_.sink())) {
          if (std::optional<LiteralBody::FileSpan> span = b->AsFileSpan()) {
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

  absl::Status CopySpan(const LiteralBody::FileSpan& span, FdSink* fd_sink) {
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
// Classic writer

// Exact size of the classic HloSnapshot that WriteClassicSnapshot writes
// (prepares every body).
absl::StatusOr<uint64_t> ClassicSnapshotSize(
    std::string_view header, std::span<LiteralBody* const> arguments,
    LiteralBody* result);

namespace internal {
// Splits literal-empty snapshot bytes into the records of fields < 2 and
// those of fields > 3, so the classic message comes out in field order.
absl::Status SplitHeader(std::string_view header, std::string* before,
                         std::string* after);
std::string LenPrefix(uint32_t field, uint64_t length);
}  // namespace internal

// Streams a classic HloSnapshot: the records of `header` (a literal-empty
// HloSnapshot, e.g. from SnapshotFromModule or LiteralEmptySnapshot), one
// `arguments` record per argument, and `result` when non-null. Fails with
// kResourceExhausted before writing anything when the message would reach
// protobuf's 2 GiB limit.
template <ByteSink K>
absl::Status WriteClassicSnapshot(K& sink, std::string_view header,
                                  std::span<LiteralBody* const> arguments,
                                  LiteralBody* result,
                                  const ProgressFn& progress = nullptr) {
  std::string before, after;
  if (absl::Status s = internal::SplitHeader(header, &before, &after);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<uint64_t> total =
      ClassicSnapshotSize(header, arguments, result);
  if (!total.ok()) return total.status();
  if (*total > limits::kMaxSnapshotBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "classic HloSnapshot: the message would be ", *total,
        " bytes, over protobuf's 2 GiB limit (", limits::kMaxSnapshotBytes,
        " bytes), so no protobuf reader could parse it; write the decomposed "
        "form instead (--format decomposed / convert --to decomposed), which "
        "streams each literal separately"));
  }
  ChunkFn write = internal::SinkFn(sink);
  ChunkFn fn = [&](std::string_view c) {
    absl::Status s = write(c);
    if (progress) progress(sink.position());
    return s;
  };
  if (absl::Status s = fn(before); !s.ok()) return s;
  auto write_record = [&](uint32_t field, LiteralBody* b) -> absl::Status {
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    if (absl::Status s = fn(internal::LenPrefix(field, *n)); !s.ok()) return s;
    return b->Write(fn);
  };
  for (LiteralBody* a : arguments) {
    if (absl::Status s = write_record(2, a); !s.ok()) return s;
  }
  if (result) {
    if (absl::Status s = write_record(3, result); !s.ok()) return s;
  }
  if (absl::Status s = fn(after); !s.ok()) return s;
  if (!sink.Flush()) return sink.status();
  return absl::OkStatus();
}

// How the literals of a decomposed file map onto a classic snapshot for a
// given program (see the file comment). Owns any tuple bodies it creates.
struct ClassicPlan {
  std::vector<LiteralBody*> arguments;
  LiteralBody* result = nullptr;
  std::vector<std::unique_ptr<LiteralBody>> owned;
};
// `header` is HloSnapshot bytes whose module's host_program_shape decides
// the mapping (parsed with protobuf).
absl::StatusOr<ClassicPlan> PlanClassic(std::string_view header,
                                        std::vector<LiteralBody*> inputs,
                                        std::vector<LiteralBody*> outputs);

// ---------------------------------------------------------------------------
// Files

enum class OutputFormat { kDecomposed, kSnapshot };

// Everything `decomposed pack` needs.
struct PackRequest {
  // Region [0]: a literal-empty HloSnapshot (SnapshotFromModule or
  // LiteralEmptySnapshot of a file).
  std::string snapshot;
  std::vector<std::unique_ptr<LiteralBody>> inputs;
  std::vector<std::unique_ptr<LiteralBody>> outputs;
  OutputFormat format = OutputFormat::kDecomposed;
  DecomposedWriteOptions write;  // write.write_output_count: region [2]
  ProgressFn progress;           // optional
};

// Writes `request` to `path` through an AtomicFileSink: on any error no
// file appears under `path` (an existing one is left untouched).
absl::Status PackToFile(PackRequest& request, const std::string& path);

struct ConvertOptions {
  DecomposedReadOptions read;
  DecomposedWriteOptions write;
  // Check every literal body's wire format and shape before writing.
  bool validate = true;
  ProgressFn progress;  // optional
};

// Decomposed -> classic HloSnapshot (see the file comment).
absl::Status ConvertDecomposedToClassic(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options = {});
// Classic HloSnapshot -> decomposed.
absl::Status ConvertClassicToDecomposed(const std::string& in,
                                        const std::string& out,
                                        const ConvertOptions& options = {});

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_PRODUCER_H_
