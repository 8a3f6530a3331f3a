// wire::FieldReader<S>: the one reader of protobuf fields in this library.
// It walks the fields of one message held in any ByteSource S (MemorySource
// for small messages in memory, FdSource / MmapSource for multi-GB literal
// bodies), from the source's current position up to an absolute end
// position, with protobuf's rules (wire/format.h): tags, varints, sizes and
// their byte limits, every wire type skipped, groups refused. Every
// hand-written decoder (box, shape, layout, literal, HloSnapshot) is built
// on it, so they all accept and refuse the same bytes as protobuf.
//
// Contract:
//   * Next(field) reads one field record (wire::Field) and returns true, or
//     returns false at the message end (status() OK) or on an error
//     (status() not OK; sticky: every later call returns false).
//   * For a varint or fixed field, `field.value` holds the value and the
//     source is past it. For a length-delimited field the source is at the
//     payload; the caller may read it (Submessage, Payload, ReadPayload,
//     ForEachVarint, ForEachFixed, or the source directly, within
//     field.end()) or not: the next Next() moves to field.end() (skipping
//     by seeking where the source can).
//   * Fields are never read past `end`: a size, fixed value or varint
//     running past it is an error, and so is a source that holds fewer
//     bytes than the message declares (checked at construction when the
//     source knows its size: kOutOfRange, "declared N bytes but M remain").
//   * Known field numbers with an unexpected wire type are the caller's to
//     judge: protobuf keeps them as unknown fields, so decoders that mirror
//     protobuf skip them.
//
// Errors (absl::Status, status.h conventions; <M> is the message name
// given to the reader, e.g. "ShapeProto"):
//   kInvalidArgument  "expected a <M> field tag, found a malformed or
//                     truncated varint"; BadTagError (field 0, over 32
//                     bits, more than 5 bytes); "expected a <M> field of
//                     wire type 0, 1, 2 or 5, found field F wire type W";
//                     a malformed value or size varint; a size of more than
//                     5 bytes or over limits::kMaxLenSize; "expected field F
//                     length within the N bytes left of the <M>, found L
//                     bytes"; a fixed value past the end; a malformed
//                     packed list.
//   kOutOfRange       the source ends before the message does.
//   others            the source's I/O error, prefixed with the frame.
// Offsets in messages are the tag's (or the varint's, inside a packed
// list).
//
// Options: FieldReaderOptions::large_len_fields lifts protobuf's size
// limits, for literal bodies only (see there).
//
// Example (ShapeProto {element_type dimensions} from bytes in memory):
//   decomposed::MemorySource src(bytes, base_offset);
//   decomposed::wire::FieldReader<decomposed::MemorySource> r(
//       src, src.position() + bytes.size(), {"input 0 shape"}, "ShapeProto");
//   decomposed::wire::Field f;
//   while (r.Next(f)) {
//     if (f.Is(2, wire::kVarint)) type = static_cast<int32_t>(f.value);
//     if (f.number == 3 && !r.ForEachVarint(f, [&](uint64_t d) {
//           dims.push_back(d);
//         })) {
//       break;
//     }
//     if (f.Is(5, wire::kLen)) {
//       auto layout = r.Submessage(f, "LayoutProto");
//       while (layout.Next(f)) { /* ... the layout's fields ... */ }
//       if (!layout.ok()) return layout.status();
//     }
//   }
//   if (!r.ok()) return r.status();
#ifndef DECOMPOSED_WIRE_READER_H_
#define DECOMPOSED_WIRE_READER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/bounded.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/limited_source.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"

namespace decomposed::wire {

struct FieldReaderOptions {
  // Reads the size of a length-delimited field as any varint (up to 10
  // bytes, any 64-bit value within the message) instead of protobuf's at
  // most limits::kMaxLenSizeBytes bytes and limits::kMaxLenSize. The
  // decomposed format exists because literal bodies outgrow protobuf's
  // 2 GiB: a LiteralProto body's data field may hold more than 2^31 bytes,
  // a size protobuf cannot read (docs/format.md §3.3). Set it
  // for the top level of a literal body only; every other message keeps
  // protobuf's limits, and Submessage() readers never inherit it.
  bool large_len_fields = false;
};

// The bounded view FieldReader<S>::Payload hands out: a sub-span for a
// MemorySource (cheapest), a LimitedSource over the same source otherwise.
template <ByteSource S>
using SubSource = std::conditional_t<std::is_same_v<S, MemorySource>,
                                     MemorySource, LimitedSource<S>>;

template <ByteSource S>
class FieldReader {
 public:
  // Reads the fields of one message, named `message` in errors (e.g.
  // "ShapeProto"), from src's current position up to absolute position
  // `end` (>= src.position()). `src` must outlive the reader and must not be
  // read directly between Next() calls except inside the current
  // length-delimited field.
  FieldReader(S& src, uint64_t end, const Frame& frame,
              std::string_view message, FieldReaderOptions options = {})
      : src_(src),
        frame_(frame),
        message_(message),
        options_(options),
        resume_(src.position()),
        end_(std::max(end, resume_)) {
    HoldAhead(src_, end_ - resume_);
    std::optional<uint64_t> rem = Remaining(src_);
    if (rem && end_ - resume_ > *rem) {
      status_ = TruncatedError(frame_, resume_, end_ - resume_, *rem);
    }
  }

  // Reads the next field into `field`. True: a field was read. False: the
  // message ended (ok()) or an error occurred (status()).
  bool Next(Field& field) {
    if (!status_.ok()) [[unlikely]] {
      return false;
    }
    uint64_t pos = src_.position();
    if (pos != resume_) [[unlikely]] {
      if (!MoveTo(pos)) return false;
      pos = resume_;
    }
    if (pos >= end_) return false;
    field.tag_offset = pos;
    uint64_t tag;
    size_t n;
    if (!ReadVarintAt(end_, &tag, &n)) [[unlikely]] {
      return Fail(
          Malformed(pos, absl::StrCat("a ", Sv(message_), " field tag")));
    }
    if (!IsValidTag(tag, n)) [[unlikely]] {
      return Fail(BadTagError(frame_, pos, absl::StrCat("a ", Sv(message_)),
                              tag, n));
    }
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire_type = static_cast<WireType>(tag & 7);
    field.offset = pos + n;
    switch (field.wire_type) {
      case kVarint:
        if (!ReadVarintAt(end_, &field.value, &n)) [[unlikely]] {
          return Fail(Malformed(
              pos, absl::StrCat("a varint value of ", Sv(message_),
                                         " field ", field.number)));
        }
        field.length = n;
        break;
      case kFixed32:
      case kFixed64:
        field.length = field.wire_type == kFixed32 ? 4 : 8;
        if (!ReadFixed(field)) return false;
        break;
      case kLen:
        if (!ReadSize(field)) return false;
        break;
      default:
        return Fail(FrameError(
            absl::StatusCode::kInvalidArgument, frame_, pos,
            absl::StrCat("a ", Sv(message_),
                         " field of wire type 0, 1, 2 or 5"),
            absl::StrCat("field ", field.number, " wire type ",
                         static_cast<uint32_t>(field.wire_type))));
    }
    resume_ = field.end();
    return true;
  }

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  S& source() { return src_; }
  uint64_t end() const { return end_; }
  const Frame& frame() const { return frame_; }
  std::string_view message() const { return message_; }

  // A reader of the message held by length-delimited `field` (the field
  // Next() just returned), named `message`. It reads the same source, up to
  // field.end(); run it to its end (or stop on its error) before calling
  // this reader's Next() again. It uses protobuf's size limits whatever
  // this reader's options.
  FieldReader Submessage(const Field& field, std::string_view message) {
    return FieldReader(src_, field.end(), frame_, message);
  }

  // The payload of length-delimited `field` (the field Next() just
  // returned, not yet read) as a bounded source, for decoders that take a
  // ByteSource. Positions stay absolute. For a MemorySource this is a
  // sub-span and leaves this reader's source where it is; otherwise the
  // view reads this reader's source, which the next Next() moves on.
  SubSource<S> Payload(const Field& field) {
    if constexpr (std::is_same_v<S, MemorySource>) {
      const uint64_t skip = field.offset - src_.position();  // 0 normally
      return MemorySource(
          std::string_view(src_.cursor() + skip,
                           static_cast<size_t>(field.length)),
          field.offset);
    } else {
      return LimitedSource<S>(src_, field.end());
    }
  }

  // Copies the payload of length-delimited `field` (just returned, not yet
  // read) into `out`, growing it only as bytes arrive. For small messages
  // only: check the length against a limit first.
  bool ReadPayload(const Field& field, std::string* out) {
    return Check(ReadToString(src_, field.length, frame_, out));
  }

  // Calls fn(uint64_t) for each value of an occurrence of a repeated varint
  // field (int32/int64/uint64/bool/enum): the value of an unpacked one
  // (wire type 0) or each varint of a packed one (wire type 2, the field
  // just returned, not yet read). `fn` returns void or absl::Status; a
  // non-OK status stops the walk and becomes this reader's status. `name`
  // (e.g. "u64s") names the values in errors: "expected a u64s varint,
  // found a malformed varint"; by default "a varint of <M> field F".
  // Another wire type is an error (protobuf would keep it as an unknown
  // field: callers that mirror protobuf check the wire type first).
  template <class Fn>
  bool ForEachVarint(const Field& field, Fn&& fn, std::string_view name = {}) {
    if (field.wire_type == kVarint) return Call(fn, field.value);
    if (field.wire_type != kLen) return WrongWireType(field, "a varint");
    const uint64_t end = field.end();
    uint64_t pos = src_.position();
    while (pos < end) {
      uint64_t v;
      size_t n;
      if (!ReadVarintAt(end, &v, &n)) {
        std::string what = name.empty()
                               ? absl::StrCat("a varint of ", Sv(message_),
                                              " field ", field.number)
                               : absl::StrCat("a ", Sv(name), " varint");
        if (!src_.status().ok()) return Fail(Prefix(src_.status(), frame_));
        return Fail(FrameError(absl::StatusCode::kInvalidArgument, frame_,
                               pos, what, "a malformed varint"));
      }
      pos += n;
      if (!Call(fn, v)) return false;
    }
    return true;
  }

  // Calls fn(T) for each value of an occurrence of a repeated fixed-width
  // field, T = uint32_t (fixed32, sfixed32, float) or uint64_t (fixed64,
  // sfixed64, double): the value of an unpacked one (wire type 5 or 1) or
  // each value of a packed one (wire type 2, whose size must be a multiple
  // of sizeof(T), as protobuf requires). `fn` as for ForEachVarint.
  template <class T, class Fn>
  bool ForEachFixed(const Field& field, Fn&& fn) {
    static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>);
    constexpr WireType kUnpacked = sizeof(T) == 4 ? kFixed32 : kFixed64;
    if (field.wire_type == kUnpacked) {
      return Call(fn, static_cast<T>(field.value));
    }
    if (field.wire_type != kLen) {
      return WrongWireType(field, sizeof(T) == 4 ? "a fixed32" : "a fixed64");
    }
    if (field.length % sizeof(T) != 0) {
      return Fail(FrameError(
          absl::StatusCode::kInvalidArgument, frame_, field.tag_offset,
          absl::StrCat("packed ", Sv(message_), " field ", field.number,
                       " of whole ", sizeof(T), "-byte values"),
          absl::StrCat(field.length, " bytes")));
    }
    for (uint64_t left = field.length; left > 0; left -= sizeof(T)) {
      if (!src_.Pull(sizeof(T))) {
        return Fail(Ended(src_.position(), "a fixed-width value"));
      }
      T v;
      std::memcpy(&v, src_.cursor(), sizeof(T));
      src_.Advance(sizeof(T));
      if (!Call(fn, v)) return false;
    }
    return true;
  }

  // An error located at `field`'s tag, for the caller's own rules:
  // "<frame>: expected <expected>, found <found> (at byte <tag offset>)".
  absl::Status FieldError(const Field& field, std::string_view expected,
                          std::string_view found) const {
    return FrameError(absl::StatusCode::kInvalidArgument, frame_,
                      field.tag_offset, expected, found);
  }

 private:
  bool Fail(absl::Status s) {
    status_ = std::move(s);
    return false;
  }
  bool Check(absl::Status s) {
    if (!s.ok()) return Fail(std::move(s));
    return true;
  }
  template <class Fn, class T>
  bool Call(Fn& fn, T v) {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, T>>) {
      fn(v);
      return true;
    } else {
      return Check(fn(v));
    }
  }

  // The source left kOk-able data short: its I/O error, or the bytes ended.
  absl::Status Malformed(uint64_t offset, std::string_view expected) const {
    if (!src_.status().ok()) return Prefix(src_.status(), frame_);
    return FrameError(absl::StatusCode::kInvalidArgument, frame_, offset,
                      expected, "a malformed or truncated varint");
  }
  absl::Status Ended(uint64_t offset, std::string_view what) const {
    if (!src_.status().ok()) return Prefix(src_.status(), frame_);
    return FrameError(absl::StatusCode::kOutOfRange, frame_, offset, what,
                      "the end of the data");
  }
  bool WrongWireType(const Field& field, std::string_view what) {
    return Fail(FrameError(
        absl::StatusCode::kInvalidArgument, frame_, field.tag_offset,
        absl::StrCat(Sv(message_), " field ", field.number, " as ", Sv(what),
                     " or a packed list"),
        absl::StrCat("wire type ", static_cast<uint32_t>(field.wire_type))));
  }

  // Moves from `pos` to resume_ (the end of the last field): the caller did
  // not read a length-delimited payload, or read part of it.
  bool MoveTo(uint64_t pos) {
    if (pos > resume_) {
      return Fail(FrameError(absl::StatusCode::kFailedPrecondition, frame_,
                             resume_,
                             absl::StrCat("the ", Sv(message_),
                                          " reader's source at its field end"),
                             absl::StrCat("it moved on to byte ", pos)));
    }
    if (src_.available() >= resume_ - pos) {
      src_.Advance(static_cast<size_t>(resume_ - pos));
      return true;
    }
    return Check(SkipBytes(src_, resume_ - pos, frame_));
  }

  // Reads a varint at the cursor, not past absolute `end`. False when it is
  // malformed or the bytes end first (the caller reports it).
  bool ReadVarintAt(uint64_t end, uint64_t* v, size_t* n) {
    const char* p = src_.cursor();
    if (src_.available() > 0 && static_cast<uint8_t>(*p) < 0x80 &&
        end > src_.position()) [[likely]] {
      *v = static_cast<uint8_t>(*p);
      *n = 1;
      src_.Advance(1);
      return true;
    }
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(end - src_.position(), kMaxVarintBytes));
    if (want == 0) return false;
    if (src_.available() < want) src_.Pull(want);
    p = src_.cursor();
    const char* limit = p + std::min(want, src_.available());
    if (ReadVarint(&p, limit, v) != VarintResult::kOk) return false;
    *n = static_cast<size_t>(p - src_.cursor());
    src_.Advance(*n);
    return true;
  }

  bool ReadFixed(Field& field) {
    const size_t w = static_cast<size_t>(field.length);
    if (end_ - field.offset < w) {
      return Fail(FrameError(
          absl::StatusCode::kInvalidArgument, frame_, field.tag_offset,
          absl::StrCat(Sv(message_), " field ", field.number, " of ", w,
                       " bytes within the ",
                       Counted(end_ - field.offset, "byte"), " left"),
          "a field running past the end"));
    }
    if (!src_.Pull(w)) {
      return Fail(Ended(field.offset, "a fixed-width value"));
    }
    field.value = w == 4 ? LoadLE32(src_.cursor()) : LoadLE64(src_.cursor());
    src_.Advance(w);
    return true;
  }

  bool ReadSize(Field& field) {
    const uint64_t at = field.offset;
    uint64_t len;
    size_t n;
    if (!ReadVarintAt(end_, &len, &n)) {
      return Fail(Malformed(field.tag_offset,
                            absl::StrCat("a ", Sv(message_), " field ",
                                         field.number, " length")));
    }
    if (!options_.large_len_fields &&
        (n > limits::kMaxLenSizeBytes || len > limits::kMaxLenSize))
        [[unlikely]] {
      return Fail(FrameError(
          absl::StatusCode::kInvalidArgument, frame_, field.tag_offset,
          absl::StrCat("a ", Sv(message_), " field ", field.number,
                       " length of at most ", limits::kMaxLenSizeBytes,
                       " bytes and ", limits::kMaxLenSize,
                       " (protobuf's limits)"),
          absl::StrCat(len, " in ", n, " bytes")));
    }
    field.offset = at + n;
    field.length = len;
    field.value = 0;
    if (len > end_ - field.offset) [[unlikely]] {
      return Fail(FrameError(
          absl::StatusCode::kInvalidArgument, frame_, field.tag_offset,
          absl::StrCat("field ", field.number, " length within the ",
                       Counted(end_ - field.offset, "byte"), " left of the ",
                       Sv(message_)),
          Counted(len, "byte")));
    }
    return true;
  }

  S& src_;
  Frame frame_;
  std::string_view message_;
  FieldReaderOptions options_;
  uint64_t resume_;  // where the next field starts (the last one's end)
  uint64_t end_;
  absl::Status status_;
};

}  // namespace decomposed::wire

#endif  // DECOMPOSED_WIRE_READER_H_
