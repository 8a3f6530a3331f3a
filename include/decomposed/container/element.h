// Primitive B: one length-delimited element (docs/format.md §5).
//
//   box(L)    Primitive A (box.h): the body length, a full 64-bit value
//   L bytes   the body: a serialized LiteralProto in regions [1] and [2],
//             the serialized HloSnapshot in region [0]
//
// ElementReader reads the length box, checks L against the bytes the source
// holds (when its size is known: nothing is allocated or skipped on the
// strength of a declared length alone) and hands the body out as a bounded
// view (LimitedSource, io/limited_source.h). A consumer reads the body
// through the view, so it cannot read past the body, and Finish() moves the
// source to the body's end whatever the consumer left: no cursor arithmetic
// is shared between the framing and the decoder of the body.
//
// ElementWriter writes the length box, then exactly L body bytes (whole, in
// pieces, or written to the sink's file descriptor by the caller and
// counted), and refuses more or fewer.
//
// Example (read one element, decode its body, move on):
//   decomposed::MemorySource src(bytes);
//   decomposed::ElementReader<decomposed::MemorySource> reader(src);
//   absl::StatusOr<decomposed::ElementInfo> e =
//       reader.Read(decomposed::Frame{"input", 0, "body length box"},
//                   decomposed::Frame{"input", 0, "body"});
//   if (!e.ok()) return e.status();
//   decode_something(reader.body());         // sees exactly e->length bytes
//   if (absl::Status s = reader.Finish(); !s.ok()) return s;
//
// Example (write one element):
//   decomposed::ElementWriter<decomposed::StringSink> w(sink);
//   absl::Status s = w.Write(body);          // box(body.size()) + body
#ifndef DECOMPOSED_CONTAINER_ELEMENT_H_
#define DECOMPOSED_CONTAINER_ELEMENT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/status.h"

namespace decomposed {

// Where one element sits in the stream.
struct ElementInfo {
  uint64_t box_offset = 0;  // offset of the length box's length byte
  uint64_t box_length = 0;  // bytes of the length box, length byte included
  uint64_t offset = 0;      // offset of the body
  uint64_t length = 0;      // bytes of the body
};

// Reads Primitive B elements from a ByteSource, one at a time.
template <ByteSource S>
class ElementReader {
 public:
  explicit ElementReader(S& src, BoxReadOptions options = {})
      : src_(src), box_(src, options) {}

  // Finishes the current element, if any (see Finish()), then reads the next
  // element's length box (named `box_frame` in errors) and checks that the
  // source holds the body (`body_frame`). On success the source is at the
  // body's first byte and body() views the body.
  // Errors: those of ReadBox (box.h) under `box_frame`; kOutOfRange naming
  // `body_frame` when the source's known size cannot hold the body.
  absl::StatusOr<ElementInfo> Read(const Frame& box_frame,
                                   const Frame& body_frame) {
    if (absl::Status s = Finish(); !s.ok()) return s;
    ElementInfo e;
    e.box_offset = src_.position();
    absl::StatusOr<uint64_t> length = box_.Read(box_frame);
    if (!length.ok()) return length.status();
    e.offset = src_.position();
    e.box_length = e.offset - e.box_offset;
    e.length = *length;
    if (absl::Status s = CheckHeld(src_, e.length, body_frame); !s.ok()) {
      return s;
    }
    body_frame_ = body_frame;
    // A source of unknown size may declare a body past 2^64: the view then
    // ends at the end of the data, which ends it first.
    const uint64_t end =
        e.length > ~uint64_t{0} - e.offset ? ~uint64_t{0} : e.offset + e.length;
    body_.emplace(src_, end);
    return e;
  }

  // The body of the element Read() returned last, from wherever the consumer
  // has got to up to the body's end. Valid until Finish() or the next Read().
  // Precondition: in_body().
  LimitedSource<S>& body() { return *body_; }
  bool in_body() const { return body_.has_value(); }

  // Moves the source to the end of the current body, skipping (seekable
  // sources: seeking over) what the consumer left of it. OK when no body is
  // open. Errors: kOutOfRange when a source of unknown size ends inside the
  // body; the source's I/O errors.
  absl::Status Finish() {
    if (!body_) return absl::OkStatus();
    LimitedSource<S>& b = *body_;
    const uint64_t left = b.remaining();
    absl::Status s;
    if (left <= b.available()) [[likely]] {
      b.Advance(static_cast<size_t>(left));
    } else {
      s = SkipBytes(b, left, body_frame_);
    }
    body_.reset();
    return s;
  }

 private:
  S& src_;
  BoxReader<S> box_;
  Frame body_frame_;
  std::optional<LimitedSource<S>> body_;
};

// Writes Primitive B elements to a ByteSink: Begin(L) writes the length box,
// then exactly L body bytes follow through Append() / AppendedExternally().
template <ByteSink K>
class ElementWriter {
 public:
  explicit ElementWriter(K& sink, BoxWriteOptions options = {})
      : sink_(sink), box_(sink, options) {}

  // Writes the length box of a body of `length` bytes.
  // Errors: kFailedPrecondition when the previous body is incomplete; the
  // sink's status when writing fails.
  absl::Status Begin(uint64_t length) {
    if (absl::Status s = CheckDone(); !s.ok()) return s;
    body_left_ = length;
    box_.Write(length);
    return sink_.status();
  }
  // Writes the next body bytes. kFailedPrecondition past the declared length.
  absl::Status Append(std::string_view bytes) {
    if (absl::Status s = Take(bytes.size()); !s.ok()) return s;
    sink_.Write(bytes);
    return sink_.status();
  }
  // Counts `n` body bytes the caller wrote to the sink's file descriptor by
  // other means (copy_file_range after FdSink::Flush(), then
  // FdSink::Wrote(n)), keeping the declared-length check.
  absl::Status AppendedExternally(uint64_t n) {
    if (absl::Status s = Take(n); !s.ok()) return s;
    return sink_.status();
  }
  // A whole element: Begin(body.size()), then Append(body).
  absl::Status Write(std::string_view body) {
    if (absl::Status s = Begin(body.size()); !s.ok()) return s;
    return Append(body);
  }
  // OK when every declared body byte has been written.
  absl::Status CheckDone() const {
    if (body_left_ != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "element body: ", body_left_, " declared bytes not written"));
    }
    return absl::OkStatus();
  }
  uint64_t body_left() const { return body_left_; }
  K& sink() { return sink_; }

 private:
  absl::Status Take(uint64_t n) {
    if (n > body_left_) {
      return absl::FailedPreconditionError(
          absl::StrCat("element body: ", n, " more bytes but only ", body_left_,
                       " declared bytes left"));
    }
    body_left_ -= n;
    return absl::OkStatus();
  }

  K& sink_;
  BoxWriter<K> box_;
  uint64_t body_left_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_CONTAINER_ELEMENT_H_
