// Composite C, the block: a count and that many elements (docs/format.md
// §6). The input block is region [1], the output block region [2].
//
//   box(N)        Primitive A (box.h): the element count
//   N elements    Primitive B (element.h) each: box(L) + L body bytes
//
// There is no terminator: the count delimits the block.
//
// BlockReader is lazy: one element at a time, never a vector of bodies.
// A count that cannot fit in the bytes the source holds (each element takes
// at least kMinBoxBytes) is rejected at the count box, before any element
// is read. Each body is handed out as a bounded view (body()); Next() moves
// past whatever the consumer left of the previous body.
//
// `name` names the elements in error frames: "input" gives "input count
// box", "input 3 body length box" and "input 3 body".
//
// Example (sum the body lengths of a block):
//   decomposed::BlockReader<decomposed::MemorySource> r(src, "input");
//   absl::StatusOr<uint64_t> n = r.Start();
//   if (!n.ok()) return n.status();
//   decomposed::ElementInfo e;
//   for (;;) {
//     absl::StatusOr<bool> more = r.Next(&e);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     total += e.length;                 // r.body() views the body
//   }
//
// BlockWriter writes the count, then exactly that many elements.
//   decomposed::BlockWriter<decomposed::StringSink> w(sink);
//   absl::Status s = w.Write(std::vector<std::string>{"a", "bc"});
#ifndef DECOMPOSED_CONTAINER_BLOCK_H_
#define DECOMPOSED_CONTAINER_BLOCK_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/container/box.h"
#include "decomposed/container/element.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/status.h"

namespace decomposed {

template <ByteSource S>
class BlockReader {
 public:
  BlockReader(S& src, std::string_view name, BoxReadOptions options = {})
      : src_(src), name_(name), box_(src, options), element_(src, options) {}

  // Reads the count box. Errors: those of ReadBox under "<name> count box";
  // kOutOfRange when the count cannot fit in the bytes that remain.
  absl::StatusOr<uint64_t> Start() {
    count_offset_ = src_.position();
    absl::StatusOr<uint64_t> n = box_.Read(CountFrame());
    if (!n.ok()) return n.status();
    count_ = *n;
    index_ = 0;
    started_ = true;
    // A pipe (SpoolSource) reads ahead the bytes the count needs at least,
    // so that a count it cannot hold fails as it does in a file.
    HoldAhead(src_, count_ > ~uint64_t{0} / kMinBoxBytes
                        ? ~uint64_t{0}
                        : count_ * kMinBoxBytes);
    std::optional<uint64_t> rem = Remaining(src_);
    if (rem && count_ > *rem / kMinBoxBytes) {
      return FrameError(
          absl::StatusCode::kOutOfRange, CountFrame(), count_offset_,
          absl::StrCat("at most ", Counted(*rem / kMinBoxBytes, "element"),
                       " in the ", Counted(*rem, "byte"), " left"),
          absl::StrCat("a count of ", count_));
    }
    return count_;
  }

  // Moves past the current element's body, then reads the next element's
  // length box. Returns false after the last element. Errors: those of
  // ElementReader::Read and ::Finish; kFailedPrecondition before Start().
  absl::StatusOr<bool> Next(ElementInfo* e) {
    if (!started_) return absl::FailedPreconditionError("Start() not called");
    if (index_ >= count_) {
      if (absl::Status s = element_.Finish(); !s.ok()) return s;
      return false;
    }
    const int64_t i = static_cast<int64_t>(index_);
    absl::StatusOr<ElementInfo> next = element_.Read(
        Frame{name_, i, "body length box"}, Frame{name_, i, "body"});
    if (!next.ok()) return next.status();
    ++index_;
    *e = *next;
    return true;
  }

  // The body of the element Next() returned last (a bounded view, valid
  // until the next Next()). Precondition: Next() returned true.
  LimitedSource<S>& body() { return element_.body(); }

  uint64_t count() const { return count_; }
  uint64_t count_offset() const { return count_offset_; }
  // Index of the element Next() returned last (or -1).
  int64_t current_index() const { return static_cast<int64_t>(index_) - 1; }
  // The frame of the current element's body, for error messages.
  Frame BodyFrame() const { return Frame{name_, current_index(), "body"}; }
  Frame CountFrame() const { return Frame{name_, -1, "count box"}; }
  // True once Next() has returned false.
  bool done() const {
    return started_ && !element_.in_body() && index_ >= count_;
  }

 private:
  S& src_;
  std::string_view name_;
  BoxReader<S> box_;
  ElementReader<S> element_;
  bool started_ = false;
  uint64_t count_ = 0;
  uint64_t count_offset_ = 0;
  uint64_t index_ = 0;
};

// Writes Composite C lists: Begin(N), then N elements (WriteElement, or
// BeginElement + Append), then Finish() to check the count was met. One
// writer may write several lists in turn.
template <ByteSink K>
class BlockWriter {
 public:
  explicit BlockWriter(K& sink, BoxWriteOptions options = {})
      : sink_(sink), box_(sink, options), element_(sink, options) {}

  // Writes the count box of a list of `count` elements.
  absl::Status Begin(uint64_t count) {
    declared_ = count;
    written_ = 0;
    box_.Write(count);
    return sink_.status();
  }
  // Starts the next element, of `length` body bytes. Errors
  // (kFailedPrecondition): the previous body is incomplete; more elements
  // than declared.
  absl::Status BeginElement(uint64_t length) {
    if (absl::Status s = element_.CheckDone(); !s.ok()) return s;
    if (written_ >= declared_) {
      return absl::FailedPreconditionError(
          absl::StrCat("more elements than the ", declared_, " declared"));
    }
    ++written_;
    return element_.Begin(length);
  }
  absl::Status Append(std::string_view bytes) { return element_.Append(bytes); }
  // See ElementWriter::AppendedExternally.
  absl::Status AppendedExternally(uint64_t n) {
    return element_.AppendedExternally(n);
  }
  absl::Status WriteElement(std::string_view body) {
    if (absl::Status s = BeginElement(body.size()); !s.ok()) return s;
    return element_.Append(body);
  }
  // OK when the last body is complete and `count` elements were written.
  absl::Status Finish() const {
    if (absl::Status s = element_.CheckDone(); !s.ok()) return s;
    if (written_ != declared_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "declared ", declared_, " elements but wrote ", written_));
    }
    return absl::OkStatus();
  }
  // A whole list of already-serialized bodies (any range of values
  // convertible to std::string_view).
  template <class Range>
  absl::Status Write(const Range& bodies) {
    uint64_t n = 0;
    for (const auto& b : bodies) {
      (void)b;
      ++n;
    }
    if (absl::Status s = Begin(n); !s.ok()) return s;
    for (const auto& b : bodies) {
      if (absl::Status s = WriteElement(std::string_view(b)); !s.ok()) {
        return s;
      }
    }
    return Finish();
  }
  K& sink() { return sink_; }

 private:
  K& sink_;
  BoxWriter<K> box_;
  ElementWriter<K> element_;
  uint64_t declared_ = 0;
  uint64_t written_ = 0;
};

}  // namespace decomposed

#endif  // DECOMPOSED_CONTAINER_BLOCK_H_
