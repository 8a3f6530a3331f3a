// A first pass over a LiteralProto body on the wire: finds its shape and
// where its data fields are, without reading data. Seekable sources skip the
// data without reading it.
//
// Several occurrences of `shape` merge, as protobuf merges repeated
// occurrences of a message field: their payloads are concatenated and parsed
// once, which is exactly protobuf's merge semantics.
//
// Errors: kOutOfRange when the body is longer than the source holds or the
// data ends inside a record; kInvalidArgument for a malformed tag, varint,
// wire type or shape (see ParseShape); kResourceExhausted for a shape over
// limits::kMaxShapeBytes. Messages name `frame` and the byte offset.
//
// Example (the shape of input 0 of a decomposed file, as inspect does):
//   decomposed::MmapSource src(path);
//   decomposed::DecomposedReader reader(src);
//   if (!reader.ReadSnapshot(nullptr).ok() || !reader.StartInputs().ok()) return;
//   decomposed::ElementInfo e;
//   absl::StatusOr<bool> more = reader.NextInput(&e);
//   if (more.ok() && *more) {
//     absl::StatusOr<decomposed::LiteralScan> scan = decomposed::ScanLiteralBody(
//         src, e.length, reader.inputs().BodyFrame());
//     if (scan.ok() && scan->has_shape) std::cout << scan->shape.ToString();
//   }
#ifndef DECOMPOSED_XLA_LITERAL_SCAN_H_
#define DECOMPOSED_XLA_LITERAL_SCAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/bounded.h"
#include "decomposed/wire/wire.h"
#include "decomposed/limits.h"
#include "decomposed/xla/shape.h"
#include "decomposed/status.h"

namespace decomposed {

// One top-level field occurrence of a literal body.
struct LiteralRecord {
  uint32_t field = 0;
  uint32_t wire_type = 0;
  uint64_t offset = 0;  // stream offset of the payload (after tag/length)
  uint64_t length = 0;  // payload bytes (LEN) or value bytes (scalars)
};

struct LiteralScan {
  bool has_shape = false;
  Shape shape;
  uint64_t shape_offset = 0;  // offset of the first shape payload
  // Every field occurrence other than `shape`, in wire order, up to
  // kMaxScanRecords; `records_truncated` says when more were seen.
  std::vector<LiteralRecord> records;
  bool records_truncated = false;
  uint64_t data_bytes = 0;  // payload bytes of all non-shape fields
};

// Bounds the records kept per literal (a hostile body may hold millions of
// one-byte fields; totals are still counted).
inline constexpr size_t kMaxScanRecords = 4096;

namespace internal {

// Reads a varint that starts in the source window, pulling as needed.
template <ByteSource S>
bool PullVarint(S& src, uint64_t end, uint64_t* v) {
  uint64_t left = end - src.position();
  size_t want = static_cast<size_t>(
      std::min<uint64_t>(left, wire::kMaxVarintBytes));
  if (want == 0) return false;
  src.Pull(want);
  size_t have = std::min(want, src.available());
  const char* p = src.cursor();
  if (wire::ReadVarint(&p, src.cursor() + have, v) != wire::VarintResult::kOk) {
    return false;
  }
  src.Advance(static_cast<size_t>(p - src.cursor()));
  return true;
}

}  // namespace internal

// Scans the body [src.position(), src.position() + length). On success the
// source is at the body end.
template <ByteSource S>
absl::StatusOr<LiteralScan> ScanLiteralBody(S& src, uint64_t length,
                                            const Frame& frame) {
  LiteralScan scan;
  const uint64_t start = src.position();
  const uint64_t end = start + length;
  if (absl::Status s = CheckHeld(src, length, frame); !s.ok()) return s;
  std::string shape_bytes;
  std::vector<ShapePart> shape_parts;
  while (src.position() < end) {
    uint64_t off = src.position();
    uint64_t tag;
    if (!internal::PullVarint(src, end, &tag)) {
      if (!src.status().ok()) return Prefix(src.status(), frame.str());
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "a LiteralProto field tag",
                        "a malformed or truncated varint");
    }
    if (uint64_t n = src.position() - off; !wire::IsValidTag(tag, n)) {
      return BadTagError(frame, off, "a LiteralProto", tag, n);
    }
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    uint32_t wt = static_cast<uint32_t>(tag & 7);
    LiteralRecord r{field, wt, 0, 0};
    uint64_t v;
    switch (wt) {
      case wire::kVarint:
        r.offset = src.position();
        if (!internal::PullVarint(src, end, &v)) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame,
                            r.offset, "a varint value", "a malformed varint");
        }
        r.length = src.position() - r.offset;
        break;
      case wire::kFixed32:
      case wire::kFixed64:
        r.offset = src.position();
        r.length = wt == wire::kFixed32 ? 4 : 8;
        if (end - r.offset < r.length) {
          return TruncatedError(frame, r.offset, r.length, end - r.offset);
        }
        if (absl::Status s = SkipBytes(src, r.length, frame); !s.ok()) {
          return s;
        }
        break;
      case wire::kLen: {
        uint64_t loff = src.position();
        if (!internal::PullVarint(src, end, &v)) {
          return FrameError(absl::StatusCode::kInvalidArgument, frame, loff,
                            "a field length varint", "a malformed varint");
        }
        r.offset = src.position();
        r.length = v;
        if (v > end - r.offset) {
          return FrameError(
              absl::StatusCode::kInvalidArgument, frame, loff,
              absl::StrCat("field ", field, " length within the ",
                           end - r.offset, " body bytes left"),
              absl::StrCat(v, " bytes"));
        }
        if (field == 1) {
          if (shape_bytes.size() + v > limits::kMaxShapeBytes) {
            return FrameError(
                absl::StatusCode::kResourceExhausted, frame, loff,
                absl::StrCat("a shape of at most ", limits::kMaxShapeBytes,
                             " bytes"),
                absl::StrCat(shape_bytes.size() + v, " bytes"));
          }
          if (!scan.has_shape) scan.shape_offset = r.offset;
          scan.has_shape = true;
          std::string part;
          if (absl::Status s = ReadToString(src, v, frame, &part); !s.ok()) {
            return s;
          }
          shape_bytes += part;
          shape_parts.push_back({part.size(), r.offset});
          continue;
        }
        if (absl::Status s = SkipBytes(src, v, frame); !s.ok()) return s;
        break;
      }
      default:
        return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                          "a field of wire type 0, 1, 2 or 5",
                          absl::StrCat("field ", field, " wire type ", wt));
    }
    if (field == 1) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                        "shape (field 1) as a length-delimited message",
                        absl::StrCat("wire type ", wt));
    }
    scan.data_bytes += r.length;
    if (scan.records.size() < kMaxScanRecords) {
      scan.records.push_back(r);
    } else {
      scan.records_truncated = true;
    }
  }
  if (src.position() != end) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame,
                      src.position(), "the last field to end at the body end",
                      "a field running past it");
  }
  if (scan.has_shape) {
    absl::StatusOr<Shape> s =
        ParseShapeParts(shape_bytes, shape_parts,
                        Frame{frame.region, frame.index, "shape"});
    if (!s.ok()) return s.status();
    scan.shape = *std::move(s);
  }
  return scan;
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_SCAN_H_
