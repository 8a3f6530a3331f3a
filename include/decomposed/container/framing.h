// Primitive B (length-delimited element), Composite C (count + elements) and
// the whole decomposed file, for reading and writing.
//
//   Primitive B   box(L) then L bytes of body (a serialized LiteralProto)
//   Composite C   box(N) then N x Primitive B
//   file          box(Lm) then Lm raw bytes of HloSnapshot   region [0]
//                 Composite C of inputs                      region [1]
//                 Composite C of outputs (optional)          region [2]
//
// There is no magic and no terminator. Region [2] is present when any byte
// follows region [1]; a clean end of data right after region [1] means it
// is absent. Bytes after region [2] are a trailing-data error.
//
// Readers are lazy: one element at a time, never a vector of bodies. A
// declared length or count is checked against the bytes the source holds
// (when its size is known) before anything is allocated, and nothing is ever
// allocated from a declared size alone.
//
// Example (list the inputs of a file):
//   decomposed::MmapSource src(path);
//   decomposed::DecomposedReader reader(src);
//   auto header = reader.ReadHeader(nullptr);         // skip the snapshot
//   auto n = reader.StartInputs();
//   decomposed::ElementInfo e;
//   while (*reader.NextInput(&e)) { ... e.offset, e.length ... }
#ifndef DECOMPOSED_CONTAINER_FRAMING_H_
#define DECOMPOSED_CONTAINER_FRAMING_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/bounded.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed {

// Where one framed element sits in the stream.
struct ElementInfo {
  uint64_t box_offset = 0;  // offset of the length box's length byte
  uint64_t box_length = 0;  // bytes of the length box, length byte included
  uint64_t offset = 0;      // offset of the body
  uint64_t length = 0;      // bytes of the body
};

struct DecomposedReadOptions {
  BoxReadOptions box;
};

// Reads one Primitive-B header: the length box. On success `e` describes
// the element and the source sits at the start of the body, whose length is
// already checked against what the source holds.
template <ByteSource S>
absl::Status ReadElementHeader(S& src, const Frame& box_frame,
                               const Frame& body_frame,
                               const BoxReadOptions& options,
                               ElementInfo* e) {
  e->box_offset = src.position();
  absl::StatusOr<uint64_t> len = ReadBox(src, box_frame, options);
  if (!len.ok()) return len.status();
  e->offset = src.position();
  e->box_length = e->offset - e->box_offset;
  e->length = *len;
  return CheckHeld(src, e->length, body_frame);
}

// --- Composite C --------------------------------------------------------------

// Lazy reader of `box(N)` then N elements. `region` names the frames
// ("input" gives "input count box", "input 3 body length box",
// "input 3 body"). After Next() returns an element, the caller may consume
// any prefix of its body; Next() skips whatever is left.
template <ByteSource S>
class RepeatedReader {
 public:
  RepeatedReader(S& src, std::string_view region, BoxReadOptions options = {})
      : src_(src), region_(region), options_(options) {}

  // Reads the count box. A count that cannot fit in the remaining bytes
  // (each element needs at least kMinBoxBytes) is rejected here.
  absl::StatusOr<uint64_t> Start() {
    count_offset_ = src_.position();
    absl::StatusOr<uint64_t> n = ReadBox(src_, CountFrame(), options_);
    if (!n.ok()) return n.status();
    count_ = *n;
    started_ = true;
    std::optional<uint64_t> rem = Remaining(src_);
    if (rem && count_ > *rem / kMinBoxBytes) {
      return FrameError(
          absl::StatusCode::kOutOfRange, CountFrame(), count_offset_,
          absl::StrCat("at most ", *rem / kMinBoxBytes,
                       " elements in the ", *rem, " bytes that remain"),
          absl::StrCat("a count of ", count_));
    }
    return count_;
  }

  // Advances to the next element. Returns false after the last one.
  absl::StatusOr<bool> Next(ElementInfo* e) {
    if (!started_) return absl::FailedPreconditionError("Start() not called");
    if (absl::Status s = FinishBody(); !s.ok()) return s;
    if (index_ >= count_) return false;
    absl::Status s = ReadElementHeader(
        src_, Frame{region_, static_cast<int64_t>(index_), "body length box"},
        Frame{region_, static_cast<int64_t>(index_), "body"}, options_,
        &current_);
    if (!s.ok()) return s;
    body_end_ = current_.offset + current_.length;
    in_body_ = true;
    ++index_;
    *e = current_;
    return true;
  }

  // Skips the rest of the current body, if any. Next() calls it.
  absl::Status FinishBody() {
    if (!in_body_) return absl::OkStatus();
    in_body_ = false;
    uint64_t pos = src_.position();
    if (pos > body_end_) {
      return absl::FailedPreconditionError(absl::StrCat(
          BodyFrame().str(), ": consumer read past the body end (at byte ",
          pos, ")"));
    }
    uint64_t left = body_end_ - pos;
    if (left <= src_.available()) [[likely]] {
      // The rest of the body is in the window (or nothing is left).
      src_.Advance(static_cast<size_t>(left));
      return absl::OkStatus();
    }
    return SkipBytes(src_, left, BodyFrame());
  }

  uint64_t count() const { return count_; }
  uint64_t count_offset() const { return count_offset_; }
  // Index of the element Next() returned last (or -1).
  int64_t current_index() const { return static_cast<int64_t>(index_) - 1; }
  // The frame of the current element's body, for error messages.
  Frame BodyFrame() const { return Frame{region_, current_index(), "body"}; }
  Frame CountFrame() const { return Frame{region_, -1, "count box"}; }
  bool done() const { return started_ && !in_body_ && index_ >= count_; }

 private:
  S& src_;
  std::string_view region_;
  BoxReadOptions options_;
  bool started_ = false;
  bool in_body_ = false;
  uint64_t count_ = 0;
  uint64_t count_offset_ = 0;
  uint64_t index_ = 0;
  uint64_t body_end_ = 0;
  ElementInfo current_;
};

// --- The whole file ---------------------------------------------------------

// Reads a decomposed stream in order: ReadHeader, StartInputs + NextInput,
// then optionally StartOutputs + NextOutput, then Finish.
template <ByteSource S>
class DecomposedReader {
 public:
  explicit DecomposedReader(S& src, DecomposedReadOptions options = {})
      : src_(src),
        options_(options),
        inputs_(src, "input", options.box),
        outputs_(src, "output", options.box) {}

  // Reads region [0]. With `snapshot` non-null, the HloSnapshot bytes are
  // copied into it; otherwise they are skipped. The returned ElementInfo
  // describes the length box and the snapshot bytes.
  absl::StatusOr<ElementInfo> ReadHeader(std::string* snapshot) {
    ElementInfo e;
    if (absl::Status s = ReadElementHeader(src_, Frame{"snapshot length box"},
                                           Frame{"snapshot"}, options_.box,
                                           &e);
        !s.ok()) {
      return s;
    }
    if (e.length > limits::kMaxSnapshotBytes) {
      return FrameError(absl::StatusCode::kResourceExhausted,
                        Frame{"snapshot length box"}, e.box_offset,
                        "a snapshot under protobuf's 2 GiB message limit",
                        absl::StrCat(e.length, " bytes"));
    }
    absl::Status s = snapshot
                         ? ReadToString(src_, e.length, Frame{"snapshot"},
                                        snapshot)
                         : SkipBytes(src_, e.length, Frame{"snapshot"});
    if (!s.ok()) return s;
    header_ = e;
    return e;
  }

  // Reads region [1]'s count.
  absl::StatusOr<uint64_t> StartInputs() { return inputs_.Start(); }
  absl::StatusOr<bool> NextInput(ElementInfo* e) { return inputs_.Next(e); }

  // Finishes region [1] (skipping any inputs not visited) and reads region
  // [2]'s count. Returns nullopt when the data ends right after region [1]:
  // region [2] is absent.
  absl::StatusOr<std::optional<uint64_t>> StartOutputs() {
    ElementInfo skip;
    for (;;) {
      absl::StatusOr<bool> more = inputs_.Next(&skip);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (!src_.Pull(1)) {
      if (!src_.status().ok()) {
        return Prefix(src_.status(), "output count box");
      }
      outputs_absent_ = true;
      return std::optional<uint64_t>();
    }
    absl::StatusOr<uint64_t> n = outputs_.Start();
    if (!n.ok()) return n.status();
    return std::optional<uint64_t>(*n);
  }
  absl::StatusOr<bool> NextOutput(ElementInfo* e) { return outputs_.Next(e); }

  // Checks that nothing follows region [2] (after skipping any outputs not
  // visited). Call after StartOutputs().
  absl::Status Finish() {
    if (outputs_absent_) return absl::OkStatus();
    ElementInfo skip;
    for (;;) {
      absl::StatusOr<bool> more = outputs_.Next(&skip);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (src_.Pull(1)) {
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

  RepeatedReader<S>& inputs() { return inputs_; }
  RepeatedReader<S>& outputs() { return outputs_; }
  const ElementInfo& header() const { return header_; }
  S& source() { return src_; }

 private:
  S& src_;
  DecomposedReadOptions options_;
  RepeatedReader<S> inputs_;
  RepeatedReader<S> outputs_;
  ElementInfo header_;
  bool outputs_absent_ = false;
};

// --- Writers ------------------------------------------------------------------

// Writes one Primitive-B element whose body is `body`.
template <ByteSink K>
bool WriteElement(K& sink, std::string_view body,
                  const BoxWriteOptions& options = {}) {
  return WriteBox(sink, body.size(), options) && sink.Write(body);
}

// Writes a Composite-C block of already-serialized bodies.
template <ByteSink K, class Range>
bool WriteRepeated(K& sink, const Range& bodies,
                   const BoxWriteOptions& options = {}) {
  uint64_t n = 0;
  for (const auto& b : bodies) {
    (void)b;
    ++n;
  }
  if (!WriteBox(sink, n, options)) return false;
  for (const auto& b : bodies) {
    if (!WriteElement(sink, std::string_view(b), options)) return false;
  }
  return true;
}

// Streaming writer of a decomposed file. Counts precede elements on the
// wire, so each block's count is declared up front:
//   DecomposedWriter w(sink);
//   w.WriteSnapshot(snapshot_bytes);
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
      : sink_(sink), options_(options) {}

  absl::Status WriteSnapshot(std::string_view snapshot_bytes) {
    if (state_ != kStart) return Order("WriteSnapshot");
    if (snapshot_bytes.size() > limits::kMaxSnapshotBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "snapshot: ", snapshot_bytes.size(),
          " bytes is over protobuf's 2 GiB message limit"));
    }
    WriteBox(sink_, snapshot_bytes.size(), options_.box);
    sink_.Write(snapshot_bytes);
    state_ = kHeader;
    return SinkStatus();
  }
  absl::Status BeginInputs(uint64_t count) {
    if (state_ != kHeader) return Order("BeginInputs");
    return Begin(count, kInputs);
  }
  absl::Status BeginOutputs(uint64_t count) {
    if (state_ != kInputs) return Order("BeginOutputs");
    if (absl::Status s = CheckBlockDone(); !s.ok()) return s;
    return Begin(count, kOutputs);
  }
  // Writes a whole element.
  absl::Status WriteElement(std::string_view body) {
    if (absl::Status s = BeginElement(body.size()); !s.ok()) return s;
    return Append(body);
  }
  // Starts an element of `length` body bytes, to be given through Append().
  absl::Status BeginElement(uint64_t length) {
    if (state_ != kInputs && state_ != kOutputs) return Order("BeginElement");
    if (absl::Status s = CheckBodyDone(); !s.ok()) return s;
    if (written_ >= declared_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "more elements than the ", declared_, " declared"));
    }
    ++written_;
    body_left_ = length;
    WriteBox(sink_, length, options_.box);
    return SinkStatus();
  }
  absl::Status Append(std::string_view bytes) {
    if (bytes.size() > body_left_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "element body: ", bytes.size(), " more bytes but only ",
          body_left_, " declared bytes left"));
    }
    body_left_ -= bytes.size();
    sink_.Write(bytes);
    return SinkStatus();
  }
  // Counts `n` body bytes the caller wrote to the sink's file descriptor
  // by other means (copy_file_range after FdSink::Flush(), then
  // FdSink::Wrote(n)), keeping the declared-length check.
  absl::Status AppendedExternally(uint64_t n) {
    if (n > body_left_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "element body: ", n, " more bytes but only ", body_left_,
          " declared bytes left"));
    }
    body_left_ -= n;
    return SinkStatus();
  }
  absl::Status Finish() {
    if (state_ == kStart || state_ == kHeader) {
      return absl::FailedPreconditionError(
          state_ == kStart ? "Finish: no snapshot written"
                           : "Finish: no inputs block written");
    }
    if (state_ == kDone) return Order("Finish");
    if (absl::Status s = CheckBlockDone(); !s.ok()) return s;
    if (state_ == kInputs && options_.write_output_count) {
      WriteBox(sink_, 0, options_.box);
    }
    state_ = kDone;
    sink_.Flush();
    return SinkStatus();
  }
  K& sink() { return sink_; }

 private:
  enum State { kStart, kHeader, kInputs, kOutputs, kDone };

  absl::Status Begin(uint64_t count, State next) {
    declared_ = count;
    written_ = 0;
    WriteBox(sink_, count, options_.box);
    state_ = next;
    return SinkStatus();
  }
  absl::Status CheckBodyDone() const {
    if (body_left_ != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "element body: ", body_left_, " declared bytes not written"));
    }
    return absl::OkStatus();
  }
  absl::Status CheckBlockDone() const {
    if (absl::Status s = CheckBodyDone(); !s.ok()) return s;
    if (written_ != declared_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "declared ", declared_, " elements but wrote ", written_));
    }
    return absl::OkStatus();
  }
  absl::Status Order(std::string_view what) const {
    return absl::FailedPreconditionError(
        absl::StrCat(Sv(what), " called out of order"));
  }
  absl::Status SinkStatus() const { return sink_.status(); }

  K& sink_;
  DecomposedWriteOptions options_;
  State state_ = kStart;
  uint64_t declared_ = 0;
  uint64_t written_ = 0;
  uint64_t body_left_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_CONTAINER_FRAMING_H_
