// The whole decomposed file (docs/format.md §7), for reading and
// writing, built on Primitive B (element.h) and Composite C (block.h).
//
//   region [0]   box(Lm) then Lm bytes of HloSnapshot    "header"
//   region [1]   the input block (Composite C)           "input"
//   region [2]   the output block (Composite C)          "output" (optional)
//
// Region [0], the header, has the shape of a Primitive B element whose
// bytes are a serialized HloSnapshot (not a LiteralProto); it must be under
// protobuf's 2 GiB message limit. There is no magic and no terminator.
// Region [2] is present when any byte follows region [1]: a clean end of
// data right after region [1] means it is absent. Bytes after region [2]
// are a trailing-data error. DecomposedReader is the one place this grammar
// is written; unpack, verify, inspect, convert and type detection all read
// files through it.
//
// Readers are lazy: one element at a time, never a vector of bodies. A
// declared length or count is checked against the bytes the source holds
// (when its size is known) before anything is allocated, and nothing is ever
// allocated from a declared size alone. Bodies are handed out as bounded
// views (LimitedSource): a consumer cannot read past one, and the reader
// moves past whatever the consumer left.
//
// Example (list the inputs of a file):
//   decomposed::MmapSource src(path);
//   decomposed::DecomposedReader reader(src);
//   auto header = reader.ReadHeader(nullptr);          // skip region [0]
//   if (!header.ok()) return header.status();
//   auto n = reader.StartInputs();                      // *n inputs
//   if (!n.ok()) return n.status();
//   decomposed::ElementInfo e;
//   for (;;) {
//     absl::StatusOr<bool> more = reader.NextInput(&e);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     // ... e.offset, e.length, reader.body() ...
//   }
//   auto m = reader.StartOutputs();                     // nullopt: absent
//   // ... the outputs, as the inputs ...
//   absl::Status s = reader.Finish();                   // nothing trails
#ifndef DECOMPOSED_CONTAINER_FRAMING_H_
#define DECOMPOSED_CONTAINER_FRAMING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/container/element.h"
#include "decomposed/container/block.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

struct DecomposedReadOptions {
  BoxReadOptions box;
  // Names of the elements of regions [1] and [2] in error frames: "input 3
  // body", "output count box" (docs/format.md §2.1: input i, output j).
  std::string_view input_name = "input";
  std::string_view output_name = "output";
};

// --- Reading -----------------------------------------------------------------

// Reads a decomposed stream in order: ReadHeader (or OpenHeader), then
// StartInputs + NextInput, then optionally StartOutputs (or
// StartRequiredOutputs) + NextOutput, then Finish. A consumer may stop
// early (unpack without dump-snapshot-outputs stops after region [1]); then
// nothing after the last region read is checked. Elements not visited are
// skipped by the next Start or Finish. Calls out of order give
// kFailedPrecondition.
template <ByteSource S>
class DecomposedReader {
 public:
  explicit DecomposedReader(S& src, DecomposedReadOptions options = {})
      : src_(src),
        options_(options),
        header_(src, options.box),
        inputs_(src, options.input_name, options.box),
        outputs_(src, options.output_name, options.box) {}

  // Reads region [0]'s length box and checks that the header bytes are
  // held and under protobuf's 2 GiB limit (limits::kMaxMessageBytes). The
  // bytes are then readable through header() until StartInputs(), which
  // skips whatever is left of them. Returns the length box and header
  // bytes' place. Errors: those of ElementReader::Read under "header length
  // box" / "header"; kResourceExhausted for a header of 2 GiB or more.
  absl::StatusOr<ElementInfo> OpenHeader() {
    if (state_ != kStart) return Order("OpenHeader");
    absl::StatusOr<ElementInfo> e =
        header_.Read(Frame{"header length box"}, Frame{"header"});
    if (!e.ok()) return e.status();
    if (e->length > limits::kMaxMessageBytes) {
      return FrameError(absl::StatusCode::kResourceExhausted,
                        Frame{"header length box"}, e->box_offset,
                        "a header under protobuf's 2 GiB message limit",
                        absl::StrCat(e->length, " bytes"));
    }
    header_info_ = *e;
    state_ = kHeader;
    return e;
  }
  // The header bytes (region [0]: a serialized HloSnapshot) as a bounded
  // view, after OpenHeader() and until StartInputs().
  LimitedSource<S>& header() { return header_.body(); }

  // OpenHeader(), then copies the header bytes into `*bytes` when it is
  // non-null, or skips them (seekable sources do not read them). On success
  // the source is at region [1].
  absl::StatusOr<ElementInfo> ReadHeader(std::string* bytes) {
    absl::StatusOr<ElementInfo> e = OpenHeader();
    if (!e.ok()) return e.status();
    absl::Status s =
        bytes ? ReadToString(header_.body(), e->length, Frame{"header"}, bytes)
              : header_.Finish();
    if (!s.ok()) return s;
    return e;
  }

  // Finishes region [0] and reads region [1]'s count (BlockReader::Start).
  absl::StatusOr<uint64_t> StartInputs() {
    if (state_ != kHeader) return Order("StartInputs");
    if (absl::Status s = header_.Finish(); !s.ok()) return s;
    state_ = kInputs;
    return inputs_.Start();
  }
  absl::StatusOr<bool> NextInput(ElementInfo* e) { return inputs_.Next(e); }

  // Finishes region [1] (skipping any inputs not visited) and reads region
  // [2]'s count. Returns nullopt when the data ends right after region [1]:
  // region [2] is absent.
  absl::StatusOr<std::optional<uint64_t>> StartOutputs() {
    absl::StatusOr<bool> present = FinishInputs();
    if (!present.ok()) return present.status();
    if (!*present) {
      outputs_absent_ = true;
      state_ = kOutputs;
      return std::optional<uint64_t>();
    }
    state_ = kOutputs;
    absl::StatusOr<uint64_t> n = outputs_.Start();
    if (!n.ok()) return n.status();
    return std::optional<uint64_t>(*n);
  }
  // As StartOutputs(), for a consumer that needs region [2]: its absence is
  // kOutOfRange under "<output name> count box", saying "expected region
  // [2] (<why>), found the end of the file: this file holds no outputs".
  absl::StatusOr<uint64_t> StartRequiredOutputs(std::string_view why) {
    absl::StatusOr<bool> present = FinishInputs();
    if (!present.ok()) return present.status();
    state_ = kOutputs;
    if (!*present) {
      outputs_absent_ = true;
      return FrameError(absl::StatusCode::kOutOfRange, outputs_.CountFrame(),
                        src_.position(),
                        absl::StrCat("region [2] (", Sv(why), ")"),
                        "the end of the file: this file holds no outputs");
    }
    return outputs_.Start();
  }
  absl::StatusOr<bool> NextOutput(ElementInfo* e) { return outputs_.Next(e); }

  // Checks that nothing follows region [2] (after skipping any outputs not
  // visited). Call after StartOutputs(). Errors: kInvalidArgument "trailing
  // data" naming how many bytes follow (when known); the source's errors.
  absl::Status Finish() {
    if (state_ != kOutputs) return Order("Finish");
    state_ = kDone;
    if (outputs_absent_) return absl::OkStatus();
    ElementInfo skip;
    for (;;) {
      absl::StatusOr<bool> more = outputs_.Next(&skip);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (src_.Pull(1)) {
      HoldAhead(src_, ~uint64_t{0});  // a pipe: count what follows
      std::optional<uint64_t> rem = Remaining(src_);
      return FrameError(absl::StatusCode::kInvalidArgument,
                        Frame{"trailing data"}, src_.position(),
                        "the end of the file after region [2]",
                        rem ? absl::StrCat(*rem, " more bytes")
                            : std::string("more bytes"));
    }
    if (!src_.status().ok()) {
      return Prefix(src_.status(), "end of data after region [2]");
    }
    return absl::OkStatus();
  }

  BlockReader<S>& inputs() { return inputs_; }
  BlockReader<S>& outputs() { return outputs_; }
  // Region [0]'s place, after OpenHeader().
  const ElementInfo& header_info() const { return header_info_; }
  S& source() { return src_; }

 private:
  enum State { kStart, kHeader, kInputs, kOutputs, kDone };

  // Skips what is left of region [1]; says whether region [2] is present.
  absl::StatusOr<bool> FinishInputs() {
    if (state_ != kInputs) return Order("StartOutputs");
    ElementInfo skip;
    for (;;) {
      absl::StatusOr<bool> more = inputs_.Next(&skip);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (src_.Pull(1)) return true;
    if (!src_.status().ok()) {
      return Prefix(src_.status(), outputs_.CountFrame());
    }
    return false;
  }
  absl::Status Order(std::string_view what) const {
    return absl::FailedPreconditionError(
        absl::StrCat("DecomposedReader: ", Sv(what), " called out of order"));
  }

  S& src_;
  DecomposedReadOptions options_;
  ElementReader<S> header_;
  BlockReader<S> inputs_;
  BlockReader<S> outputs_;
  ElementInfo header_info_;
  State state_ = kStart;
  bool outputs_absent_ = false;
};

// --- Writing -----------------------------------------------------------------

// Streaming writer of a decomposed file. Counts precede elements on the
// wire, so each list's count is declared up front:
//   DecomposedWriter w(sink);
//   w.WriteHeader(header_bytes);
//   w.BeginInputs(2);  w.WriteElement(a);  w.WriteElement(b);
//   w.BeginOutputs(0);
//   absl::Status s = w.Finish();
// An element body can also be streamed: BeginElement(length), then exactly
// `length` bytes through Append(), checked by the next call.
// Unless `write_output_count` is false, Finish() writes an output count of 0
// when BeginOutputs() was never called, because AWS's Python reader always
// reads region [2].
struct DecomposedWriteOptions {
  BoxWriteOptions box;
  bool write_output_count = true;
};

template <ByteSink K>
class DecomposedWriter {
 public:
  explicit DecomposedWriter(K& sink, DecomposedWriteOptions options = {})
      : sink_(sink),
        options_(options),
        header_(sink, options.box),
        block_(sink, options.box) {}

  // Region [0]: the header, a serialized literal-empty HloSnapshot.
  // kResourceExhausted (nothing written) for 2 GiB or more.
  absl::Status WriteHeader(std::string_view header_bytes) {
    if (state_ != kStart) return Order("WriteHeader");
    if (header_bytes.size() > limits::kMaxMessageBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "header: ", header_bytes.size(),
          " bytes is over protobuf's 2 GiB message limit"));
    }
    state_ = kHeader;
    return header_.Write(header_bytes);
  }
  // Region [1]'s count.
  absl::Status BeginInputs(uint64_t count) {
    if (state_ != kHeader) return Order("BeginInputs");
    state_ = kInputs;
    return block_.Begin(count);
  }
  // Region [2]'s count, after every input.
  absl::Status BeginOutputs(uint64_t count) {
    if (state_ != kInputs) return Order("BeginOutputs");
    if (absl::Status s = block_.Finish(); !s.ok()) return s;
    state_ = kOutputs;
    return block_.Begin(count);
  }
  // Writes a whole element of the current region.
  absl::Status WriteElement(std::string_view body) {
    if (state_ != kInputs && state_ != kOutputs) return Order("WriteElement");
    return block_.WriteElement(body);
  }
  // Starts an element of `length` body bytes, to be given through Append().
  absl::Status BeginElement(uint64_t length) {
    if (state_ != kInputs && state_ != kOutputs) return Order("BeginElement");
    return block_.BeginElement(length);
  }
  absl::Status Append(std::string_view bytes) {
    return block_.Append(bytes);
  }
  // See ElementWriter::AppendedExternally.
  absl::Status AppendedExternally(uint64_t n) {
    return block_.AppendedExternally(n);
  }
  // Checks the last list is complete, writes region [2]'s count 0 when
  // BeginOutputs() was never called (unless write_output_count is false),
  // and flushes.
  absl::Status Finish() {
    if (state_ == kStart || state_ == kHeader) {
      return absl::FailedPreconditionError(
          state_ == kStart ? "Finish: no header written"
                           : "Finish: region [1] (inputs) not begun");
    }
    if (state_ == kDone) return Order("Finish");
    if (absl::Status s = block_.Finish(); !s.ok()) return s;
    if (state_ == kInputs && options_.write_output_count) {
      if (absl::Status s = block_.Begin(0); !s.ok()) return s;
    }
    state_ = kDone;
    sink_.Flush();
    return sink_.status();
  }
  K& sink() { return sink_; }

 private:
  enum State { kStart, kHeader, kInputs, kOutputs, kDone };

  absl::Status Order(std::string_view what) const {
    return absl::FailedPreconditionError(
        absl::StrCat(Sv(what), " called out of order"));
  }

  K& sink_;
  DecomposedWriteOptions options_;
  ElementWriter<K> header_;
  BlockWriter<K> block_;
  State state_ = kStart;
};

}  // namespace decomposed

#endif  // DECOMPOSED_CONTAINER_FRAMING_H_
