// Streaming decoder of a LiteralProto body on the wire into a .npy file,
// with XLA's CreateFromProto(prohibit_empty_literal=true) rules
// (xla-wire-facts.md sections 2, 5 and 6). No protobuf message is built:
// memory stays bounded whatever the literal's size, including literals over
// protobuf's 2 GiB limit.
//
// Sources must be RewindableSource (byte_source.h: a ByteSource with
// Seek()); sinks any ByteSink (the .npy goes through an NpySink over it).
// A literal is given as one or more byte ranges of a RewindableSource whose
// concatenation is the LiteralProto (protobuf merges repeated occurrences of
// a message field, and parsing concatenated serializations is exactly that
// merge). Decoding takes two passes over the ranges:
//
//   1. PlanLiteral walks every field record without reading data (seekable
//      sources skip it): it merges the `shape` records, notes each data
//      field's records (count, bytes, first and last occurrence) and the
//      `tuple_literals` occurrences.
//   2. DecodeLiteralToNpy checks the plan against XLA's rules
//      (ResolveArrayPlan), writes the .npy header, seeks back to the data and
//      streams it:
//        * fixed-width data in one packed/bytes record, default layout: the
//          bytes go straight from the source to the sink: a zero-copy view
//          (MemorySource/MmapSource); else the bytes already in the source's
//          window, then Read() into one reused buffer (the default, measured
//          faster here: docs/unpack.md) or, with CopyMethod::kKernel,
//          copy_file_range(2) from an FdSource to an fd-backed sink (FdSink,
//          AtomicFileSink);
//        * varint types (PRED, S32, S64, U32, U64) are decoded in chunks
//          into a reused buffer (an unrolled loop while 10 bytes are
//          buffered, a bounds-checked one near the end of the window);
//        * any other legal encoding (data before the shape, unpacked repeated
//          fields, a field split over several records, a `bytes` field given
//          twice: the last one wins) is handled by re-walking the records.
//   Layouts: the proto holds elements in minor_to_major (physical) order.
//   Ignoring dimensions of size 1, a default layout gives a C-order payload
//   and the column-major layout {0,1,...} is written as is with
//   `fortran_order: True`. Any other permutation is transposed: the physical
//   data is gathered in logical order straight from a zero-copy source, or
//   first collected in memory (up to `max_in_memory_transpose` bytes) or in
//   an unlinked temp file that is then mapped (file-backed, reclaimable
//   pages, so anonymous memory stays bounded).
//
// Errors (absl::Status, naming the frame given by the caller, the byte
// offset, what was expected and what was found):
//   kInvalidArgument  malformed records; no shape ("LiteralProto has no
//                     shape"); a shape XLA rejects (no layout, bad
//                     minor_to_major, element_size_in_bits != 0, negative
//                     dimensions, OPAQUE_TYPE); a TUPLE or TOKEN where an
//                     array is needed; S1/U1/F6E3M2FN/F6E2M3FN (XLA has no
//                     CopyFromProto case); element counts that do not match
//                     the shape exactly (a non-empty shape without data
//                     included); a record running past its range.
//   kOutOfRange       the source ends inside a declared range.
//   kResourceExhausted  a limit of limits.h.
//   kFailedPrecondition the source cannot seek back.
//   others            I/O errors of the source or sink.
// On error the sink holds a partial file: write through AtomicFileSink and
// drop it (Unpack does).
//
// Example:
//   decomposed::MemorySource src(body);
//   decomposed::AtomicFileSink out;
//   if (auto s = out.Open("x.npy"); !s.ok()) return s;
//   absl::Status s = decomposed::DecodeLiteralToNpy(
//       src, body.size(), decomposed::Frame{"value_input", 0, "body"}, out);
//   if (!s.ok()) return s;   // `out` removes its temp file when dropped
//   return out.Commit();
#ifndef DECOMPOSED_XLA_LITERAL_DECODER_H_
#define DECOMPOSED_XLA_LITERAL_DECODER_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/bounded.h"
#include "decomposed/wire/wire.h"
#include "decomposed/limits.h"
#include "decomposed/xla/literal_scan.h"
#include "decomposed/npy/npy.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/xla/shape.h"
#include "decomposed/status.h"

namespace decomposed {

// A range of stream positions [offset, offset + length).
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// How fixed-width data moves from an FdSource to an fd-backed sink.
enum class CopyMethod {
  kAuto,    // the measured faster one here (docs/unpack.md): kBuffer
  kKernel,  // copy_file_range(2), falling back to kBuffer where unsupported
  kBuffer,  // read(2) into one reused buffer, then write(2)
};

struct LiteralDecodeOptions {
  CopyMethod copy = CopyMethod::kAuto;
  // Reused buffer for copies and decoded varints.
  size_t buffer_bytes = 1 << 20;
  // Transposes of up to this many payload bytes are collected in memory;
  // larger ones in an unlinked temp file under `temp_dir`.
  uint64_t max_in_memory_transpose = 32 << 20;
  // Directory for transpose temp files; empty: $TMPDIR, else /tmp.
  std::string temp_dir;
};

// Records of one LiteralProto field, accumulated over all its occurrences.
struct LiteralFieldStats {
  uint64_t records = 0;      // occurrences with an accepted wire type
  uint64_t len_records = 0;  // of which packed / bytes (LEN)
  uint64_t bytes = 0;        // payload bytes of all occurrences
  uint64_t values = 0;       // fixed-width values, all occurrences
  uint64_t unpacked = 0;     // single-value (unpacked) occurrences
  bool misaligned = false;   // a packed fixed record of a ragged length
  ByteRange first;           // payload of the first occurrence
  ByteRange last;            // payload of the last occurrence
  uint32_t first_wire_type = 0;
};

// Where a literal's data goes in the .npy.
enum class NpyOrder { kC, kFortran, kTranspose };

// What pass 1 found, and (after ResolveArrayPlan) how the array is written.
struct LiteralPlan {
  bool has_shape = false;
  uint64_t shape_offset = 0;  // stream offset of the first shape payload
  Shape shape;
  // `tuple_literals` occurrences, in order (each is one tuple element).
  std::vector<ByteRange> tuple_literals;
  // Indexed by LiteralProto field number (2..36 are data fields).
  LiteralFieldStats fields[kNumPrimitiveTypes];
  uint64_t records = 0;  // all records seen

  // Set by ResolveArrayPlan.
  const PrimitiveTypeInfo* type = nullptr;
  uint64_t element_count = 0;
  uint64_t payload_bytes = 0;
  NpyOrder order = NpyOrder::kC;
  NpyHeader header;
};

// Which decode path DecodeLiteralToNpy took (for tests and benchmarks).
enum class LiteralPath {
  kEmpty,       // no payload
  kView,        // zero-copy view of the source
  kKernelCopy,  // copy_file_range
  kBufferCopy,  // Read into a reused buffer
  kVarint,      // chunked varint decode of one packed record
  kGeneral,     // re-walk of several / unpacked records
  kTranspose,   // gathered in logical order
};

namespace internal {

// LiteralProto data field number -> how it is stored (kNone: not data).
inline DataEncoding FieldEncoding(uint32_t field) {
  if (field == 10) return DataEncoding::kNone;  // tuple_literals
  for (const PrimitiveTypeInfo& i : kPrimitiveTypes) {
    if (i.proto_field == field && i.encoding != DataEncoding::kNone) {
      return i.encoding;
    }
  }
  return DataEncoding::kNone;
}

// Wire types protobuf accepts for a field of `e` (packed and unpacked).
inline bool AcceptsWireType(DataEncoding e, uint32_t wt) {
  switch (e) {
    case DataEncoding::kBytes:
      return wt == wire::kLen;
    case DataEncoding::kBool:
    case DataEncoding::kVarint32:
    case DataEncoding::kVarint64:
    case DataEncoding::kVarintU32:
    case DataEncoding::kVarintU64:
      return wt == wire::kLen || wt == wire::kVarint;
    case DataEncoding::kFixed32:
      return wt == wire::kLen || wt == wire::kFixed32;
    case DataEncoding::kFixed64:
      return wt == wire::kLen || wt == wire::kFixed64;
    default:
      return false;
  }
}

inline size_t FixedWidth(DataEncoding e) {
  return e == DataEncoding::kFixed32 ? 4 : e == DataEncoding::kFixed64 ? 8 : 0;
}

inline bool IsVarint(DataEncoding e) {
  return e == DataEncoding::kBool || e == DataEncoding::kVarint32 ||
         e == DataEncoding::kVarint64 || e == DataEncoding::kVarintU32 ||
         e == DataEncoding::kVarintU64;
}

// One field record, as the walker hands it to its callback. For LEN records
// the source is at the payload; for the others `value` holds the value.
struct WireRecord {
  uint32_t field = 0;
  uint32_t wire_type = 0;
  uint64_t tag_offset = 0;
  uint64_t offset = 0;  // payload / value offset
  uint64_t length = 0;  // payload bytes (LEN), value bytes otherwise
  uint64_t value = 0;   // varint / fixed value
};

template <ByteSource S>
absl::Status Ended(const S& src, const Frame& frame, uint64_t offset,
                   std::string_view what) {
  if (!src.status().ok()) return Prefix(src.status(), frame.str());
  return FrameError(absl::StatusCode::kOutOfRange, frame, offset, what,
                    "the end of the data");
}

// Calls fn(WireRecord&) for every record of every range, in order. After fn
// returns, the walker moves to the end of the record wherever fn left the
// source (inside the record).
template <RewindableSource S, class Fn>
absl::Status WalkRecords(S& src, std::span<const ByteRange> ranges,
                         const Frame& frame, Fn&& fn) {
  for (const ByteRange& range : ranges) {
    if (!src.Seek(range.offset)) {
      if (!src.status().ok()) return Prefix(src.status(), frame.str());
      return FrameError(absl::StatusCode::kFailedPrecondition, frame,
                        range.offset, "a source that can seek to the literal",
                        "a source that cannot go back");
    }
    if (absl::Status s = CheckHeld(src, range.length, frame); !s.ok()) {
      return s;
    }
    const uint64_t end = range.offset + range.length;
    while (src.position() < end) {
      WireRecord r;
      r.tag_offset = src.position();
      uint64_t tag;
      if (!PullVarint(src, end, &tag)) {
        if (!src.status().ok()) return Prefix(src.status(), frame.str());
        return FrameError(absl::StatusCode::kInvalidArgument, frame,
                          r.tag_offset, "a LiteralProto field tag",
                          "a malformed or truncated varint");
      }
      if (uint64_t n = src.position() - r.tag_offset;
          !wire::IsValidTag(tag, n)) {
        return BadTagError(frame, r.tag_offset, "a LiteralProto", tag, n);
      }
      r.field = static_cast<uint32_t>(tag >> 3);
      r.wire_type = static_cast<uint32_t>(tag & 7);
      r.offset = src.position();
      switch (r.wire_type) {
        case wire::kVarint:
          if (!PullVarint(src, end, &r.value)) {
            if (!src.status().ok()) return Prefix(src.status(), frame.str());
            return FrameError(absl::StatusCode::kInvalidArgument, frame,
                              r.offset, "a varint value",
                              "a malformed or truncated varint");
          }
          r.length = src.position() - r.offset;
          break;
        case wire::kFixed32:
        case wire::kFixed64: {
          r.length = r.wire_type == wire::kFixed32 ? 4 : 8;
          if (end - r.offset < r.length) {
            return TruncatedError(frame, r.offset, r.length, end - r.offset);
          }
          char buf[8] = {};
          if (!src.Read(buf, r.length)) {
            return Ended(src, frame, r.offset, "a fixed-width value");
          }
          r.value = r.length == 4 ? wire::LoadLE32(buf) : wire::LoadLE64(buf);
          break;
        }
        case wire::kLen: {
          uint64_t len;
          if (!PullVarint(src, end, &len)) {
            if (!src.status().ok()) return Prefix(src.status(), frame.str());
            return FrameError(absl::StatusCode::kInvalidArgument, frame,
                              r.offset, "a field length varint",
                              "a malformed or truncated varint");
          }
          r.offset = src.position();
          r.length = len;
          if (len > end - r.offset) {
            return FrameError(
                absl::StatusCode::kInvalidArgument, frame, r.tag_offset,
                absl::StrCat("field ", r.field, " length within the ",
                             end - r.offset, " bytes left"),
                absl::StrCat(len, " bytes"));
          }
          break;
        }
        default:
          return FrameError(absl::StatusCode::kInvalidArgument, frame,
                            r.tag_offset, "a field of wire type 0, 1, 2 or 5",
                            absl::StrCat("field ", r.field, " wire type ",
                                         r.wire_type));
      }
      if (absl::Status s = fn(r); !s.ok()) return s;
      if (r.wire_type == wire::kLen) {
        uint64_t rec_end = r.offset + r.length;
        if (src.position() != rec_end && !src.Seek(rec_end)) {
          if (!src.status().ok()) return Prefix(src.status(), frame.str());
          return TruncatedError(frame, r.offset, r.length,
                                src.position() - r.offset);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace internal

// Pass 1: walks the records of the literal made of `ranges` (concatenated).
// Reads only the shape and unpacked varints. Errors: malformed records,
// truncation, a shape over limits::kMaxShapeBytes or malformed (see
// ParseShape), over limits::kMaxTupleLiterals tuple elements.
template <RewindableSource S>
absl::StatusOr<LiteralPlan> PlanLiteral(S& src,
                                        std::span<const ByteRange> ranges,
                                        const Frame& frame) {
  LiteralPlan plan;
  std::string shape_bytes;
  std::vector<ShapePart> shape_parts;
  absl::Status st = internal::WalkRecords(
      src, ranges, frame, [&](internal::WireRecord& r) -> absl::Status {
        ++plan.records;
        if (r.field == 1 && r.wire_type == wire::kLen) {
          if (shape_bytes.size() + r.length > limits::kMaxShapeBytes) {
            return FrameError(
                absl::StatusCode::kResourceExhausted, frame, r.offset,
                absl::StrCat("a shape of at most ", limits::kMaxShapeBytes,
                             " bytes"),
                absl::StrCat(shape_bytes.size() + r.length, " bytes"));
          }
          if (!plan.has_shape) plan.shape_offset = r.offset;
          plan.has_shape = true;
          std::string part;
          if (absl::Status s = ReadToString(src, r.length, frame, &part);
              !s.ok()) {
            return s;
          }
          shape_bytes += part;
          shape_parts.push_back({part.size(), r.offset});
          return absl::OkStatus();
        }
        if (r.field == 10 && r.wire_type == wire::kLen) {
          if (plan.tuple_literals.size() >= limits::kMaxTupleLiterals) {
            return FrameError(absl::StatusCode::kResourceExhausted, frame,
                              r.tag_offset,
                              absl::StrCat("at most ", limits::kMaxTupleLiterals,
                                           " tuple_literals"),
                              "more");
          }
          plan.tuple_literals.push_back({r.offset, r.length});
          return absl::OkStatus();
        }
        if (r.field >= kNumPrimitiveTypes) return absl::OkStatus();
        DataEncoding e = internal::FieldEncoding(r.field);
        if (!internal::AcceptsWireType(e, r.wire_type)) {
          // Protobuf keeps a known field with a foreign wire type as an
          // unknown field; XLA never looks at it.
          return absl::OkStatus();
        }
        LiteralFieldStats& f = plan.fields[r.field];
        if (f.records == 0) {
          f.first = {r.offset, r.length};
          f.first_wire_type = r.wire_type;
        }
        f.last = {r.offset, r.length};
        ++f.records;
        f.bytes += r.length;
        if (r.wire_type == wire::kLen) {
          ++f.len_records;
          size_t w = internal::FixedWidth(e);
          if (w) {
            if (r.length % w) f.misaligned = true;
            f.values += r.length / w;
          }
        } else {
          ++f.unpacked;
          if (internal::FixedWidth(e)) ++f.values;
        }
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (plan.has_shape) {
    absl::StatusOr<Shape> s =
        ParseShapeParts(shape_bytes, shape_parts,
                        Frame{frame.region, frame.index, "shape"});
    if (!s.ok()) return s.status();
    plan.shape = *std::move(s);
  }
  return plan;
}

// Physical order -> .npy order for `shape` (ignoring dimensions of size 1).
inline NpyOrder NpyOrderFor(const Shape& shape) {
  std::vector<int64_t> eff;
  for (int64_t d : shape.layout.minor_to_major) {
    if (shape.dimensions[static_cast<size_t>(d)] != 1) eff.push_back(d);
  }
  bool dec = true, inc = true;
  for (size_t i = 1; i < eff.size(); ++i) {
    if (eff[i] > eff[i - 1]) dec = false;
    if (eff[i] < eff[i - 1]) inc = false;
  }
  if (dec) return NpyOrder::kC;
  if (inc) return NpyOrder::kFortran;
  return NpyOrder::kTranspose;
}

// XLA's CreateFromProto checks on a planned array literal; fills the plan's
// type, counts, order and npy header. Varint element counts are checked
// while decoding.
inline absl::Status ResolveArrayPlan(LiteralPlan& plan, const Frame& frame,
                                     uint64_t body_offset) {
  const Frame shape_frame{frame.region, frame.index, "shape"};
  if (!plan.has_shape) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, body_offset,
                      "a shape field (XLA: \"LiteralProto has no shape\")",
                      "none");
  }
  const Shape& shape = plan.shape;
  if (absl::Status s = ValidateShape(shape, shape_frame, plan.shape_offset);
      !s.ok()) {
    return s;
  }
  const PrimitiveTypeInfo* info = FindPrimitiveType(shape.element_type);
  if (shape.is_tuple() || shape.element_type == 17) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, shape_frame, plan.shape_offset,
        "an array literal (one .npy holds one array)",
        absl::StrCat("a ", Sv(info->name), " literal ", shape.ToString()));
  }
  if (!info->loadable) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, shape_frame, plan.shape_offset,
        "an element type XLA can load from a LiteralProto",
        absl::StrCat(Sv(info->name),
                     " (XLA's CopyFromProto has no case for it)"));
  }
  absl::StatusOr<uint64_t> n =
      ElementCount(shape, shape_frame, plan.shape_offset, info->element_bytes);
  if (!n.ok()) return n.status();
  plan.type = info;
  plan.element_count = *n;
  plan.payload_bytes = *n * info->element_bytes;
  const LiteralFieldStats& f = plan.fields[info->proto_field];
  const std::string field_name = absl::StrCat(
      Sv(info->name), " data (LiteralProto field ", info->proto_field, ")");
  const uint64_t where = f.records ? f.first.offset : body_offset;
  switch (info->encoding) {
    case DataEncoding::kBytes: {
      uint64_t have = f.records ? f.last.length : 0;
      if (have != plan.payload_bytes) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame,
            f.records ? f.last.offset : body_offset,
            absl::StrCat(plan.payload_bytes, " bytes of ", field_name, " (",
                         *n, " elements of ", shape.ToString(), ")"),
            f.records ? absl::StrCat(have, " bytes") : std::string("no data"));
      }
      break;
    }
    case DataEncoding::kFixed32:
    case DataEncoding::kFixed64: {
      uint64_t per = info->element_bytes / internal::FixedWidth(info->encoding);
      if (f.misaligned) {
        return FrameError(absl::StatusCode::kInvalidArgument, frame, where,
                          absl::StrCat("packed ", field_name, " of whole ",
                                       internal::FixedWidth(info->encoding),
                                       "-byte values"),
                          "a ragged length");
      }
      if (f.values != *n * per) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame, where,
            absl::StrCat(*n * per, " values of ", field_name, " (", *n,
                         " elements of ", shape.ToString(), ")"),
            f.records ? absl::StrCat(f.values, " values")
                      : std::string("no data"));
      }
      break;
    }
    default:  // varints: counted while decoding
      if (f.records == 0 && *n > 0) {
        return FrameError(
            absl::StatusCode::kInvalidArgument, frame, body_offset,
            absl::StrCat(*n, " elements of ", field_name, " for ",
                         shape.ToString(),
                         " (XLA: prohibit_empty_literal)"),
            "no data");
      }
  }
  plan.order = NpyOrderFor(shape);
  plan.header = NpyHeaderFor(*info, shape.dimensions,
                             plan.order == NpyOrder::kFortran);
  return absl::OkStatus();
}

namespace internal {

inline absl::Status Errno(std::string_view what) {
  return absl::ErrnoToStatus(errno, std::string(what));
}

template <class K>
auto* FdSinkOf(K& k) {
  if constexpr (requires { k.fd_sink(); }) {
    return k.fd_sink();
  } else if constexpr (requires { k.fd(); k.Wrote(uint64_t{}); k.Flush(); }) {
    return &k;
  } else {
    return static_cast<FdSink*>(nullptr);
  }
}

template <class S>
concept FdBackedSource = requires(S& s) {
  { s.fd() } -> std::convertible_to<int>;
  { s.backend().origin() } -> std::convertible_to<uint64_t>;
};

// Receives payload bytes in physical order and writes them to the .npy.
template <ByteSink K>
class DirectPayload {
 public:
  DirectPayload(NpySink<K>& npy, const LiteralDecodeOptions& options,
                char* buf, size_t cap)
      : npy_(npy), options_(options), buf_(buf), cap_(cap) {}

  uint64_t remaining() const { return npy_.remaining(); }

  absl::Status Put(std::string_view d) {
    if (!npy_.Write(d)) return npy_.status();
    return absl::OkStatus();
  }

  // Copies `n` raw payload bytes from `src`.
  template <ByteSource S>
  absl::Status Raw(S& src, uint64_t n, const Frame& frame) {
    const uint64_t start = src.position();
    if constexpr (ZeroCopySource<S>) {
      std::optional<std::string_view> v = src.ReadView(static_cast<size_t>(n));
      if (!v) return TruncatedError(frame, start, n, src.available());
      path_ = LiteralPath::kView;
      return Put(*v);
    } else {
      size_t w = static_cast<size_t>(std::min<uint64_t>(n, src.available()));
      if (w) {
        if (absl::Status s = Put(std::string_view(src.cursor(), w)); !s.ok()) {
          return s;
        }
        src.Advance(w);
      }
      uint64_t left = n - w;
      path_ = LiteralPath::kBufferCopy;
      if constexpr (FdBackedSource<S>) {
        auto* fs = FdSinkOf(npy_.sink());
        if (fs && options_.copy == CopyMethod::kKernel && left > 0) {
          bool handled = false;
          absl::Status s = KernelCopy(src, *fs, left, frame, &handled);
          if (!s.ok()) return s;
          if (handled) {
            path_ = LiteralPath::kKernelCopy;
            return absl::OkStatus();
          }
        }
      }
      while (left > 0) {
        size_t k = static_cast<size_t>(std::min<uint64_t>(left, cap_));
        if (!src.Read(buf_, k)) {
          if (!src.status().ok()) return Prefix(src.status(), frame.str());
          return TruncatedError(frame, start, n, src.position() - start);
        }
        if (absl::Status s = Put(std::string_view(buf_, k)); !s.ok()) return s;
        left -= k;
      }
      return absl::OkStatus();
    }
  }

  LiteralPath path() const { return path_; }

 private:
  template <class S, class F>
  absl::Status KernelCopy(S& src, F& fs, uint64_t n, const Frame& frame,
                          bool* handled) {
    if (n > npy_.remaining()) {
      return absl::FailedPreconditionError("npy payload: more than declared");
    }
    if (!fs.Flush()) return fs.status();
    loff_t off = static_cast<loff_t>(src.backend().origin() + src.position());
    const uint64_t start = src.position();
    uint64_t done = 0;
    while (done < n) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(n - done, 1 << 30));
      ssize_t r = ::copy_file_range(src.fd(), &off, fs.fd(), nullptr, chunk, 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (done == 0 && (errno == EXDEV || errno == EINVAL ||
                          errno == ENOSYS || errno == EOPNOTSUPP ||
                          errno == EBADF)) {
          return absl::OkStatus();  // not handled: use the buffer
        }
        return Prefix(Errno("copy_file_range"), frame.str());
      }
      if (r == 0) {
        fs.Wrote(done);
        npy_.Wrote(done);
        return TruncatedError(frame, start, n, done);
      }
      done += static_cast<uint64_t>(r);
    }
    fs.Wrote(done);
    npy_.Wrote(done);
    *handled = true;
    if (!src.Skip(done)) {
      return TruncatedError(frame, start, n, src.position() - start);
    }
    return absl::OkStatus();
  }

  NpySink<K>& npy_;
  const LiteralDecodeOptions& options_;
  char* buf_;
  size_t cap_;
  LiteralPath path_ = LiteralPath::kGeneral;
};

// Collects physical-order payload for a transpose: in memory, or in an
// unlinked temp file that is mapped when complete.
class PhysicalStore {
 public:
  PhysicalStore() = default;
  PhysicalStore(const PhysicalStore&) = delete;
  PhysicalStore& operator=(const PhysicalStore&) = delete;
  ~PhysicalStore() {
    if (map_) ::munmap(map_, size_);
  }

  absl::Status Init(uint64_t bytes, const LiteralDecodeOptions& options) {
    size_ = bytes;
    if (bytes <= options.max_in_memory_transpose) {
      // No reserve: memory grows with the data that arrives, never with
      // the declared size alone (varint counts are only checked at the end).
      return absl::OkStatus();
    }
    std::string dir = options.temp_dir;
    if (dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      dir = t && *t ? t : "/tmp";
    }
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::string tmpl = dir + "/.decomposed-transpose.XXXXXX";
      fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
      if (fd < 0) {
        return Errno(absl::StrCat("creating a transpose temp file in ", dir));
      }
      ::unlink(tmpl.c_str());
    }
    file_ = std::make_unique<FdSink>(OwnedFd(fd));
    return absl::OkStatus();
  }

  uint64_t remaining() const { return size_ - written_; }

  absl::Status Put(std::string_view d) {
    if (d.size() > size_ - written_) {
      return absl::FailedPreconditionError("transpose: more than declared");
    }
    written_ += d.size();
    if (file_) {
      if (!file_->Write(d)) return file_->status();
    } else {
      mem_.append(d);
    }
    return absl::OkStatus();
  }

  template <ByteSource S>
  absl::Status Raw(S& src, uint64_t n, const Frame& frame) {
    return ForEachChunk(src, n, frame,
                        [&](std::string_view c) { return Put(c); });
  }

  // The complete physical data.
  absl::StatusOr<std::string_view> View() {
    if (!file_) return std::string_view(mem_);
    if (!file_->Flush()) return file_->status();
    if (size_ == 0) return std::string_view();
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, file_->fd(), 0);
    if (p == MAP_FAILED) return Errno("mapping the transpose temp file");
    map_ = p;
    return std::string_view(static_cast<const char*>(p), size_);
  }

 private:
  uint64_t size_ = 0;
  uint64_t written_ = 0;
  std::string mem_;
  std::unique_ptr<FdSink> file_;
  void* map_ = nullptr;
};

// Writes `phys` (elements of `eb` bytes in `shape`'s physical order) to
// `out` in logical C order, through `buf`.
template <class Out>
absl::Status Gather(std::string_view phys, const Shape& shape, size_t eb,
                    Out& out, char* buf, size_t cap) {
  const size_t r = shape.dimensions.size();
  const std::vector<int64_t>& dims = shape.dimensions;
  std::vector<uint64_t> stride(r, 0);
  uint64_t acc = 1;
  for (int64_t d : shape.layout.minor_to_major) {
    stride[static_cast<size_t>(d)] = acc;
    acc *= static_cast<uint64_t>(dims[static_cast<size_t>(d)]);
  }
  uint64_t total = acc;
  if (total == 0 || r == 0) return out.Put(phys);
  const uint64_t inner = static_cast<uint64_t>(dims[r - 1]);
  const uint64_t s_in = stride[r - 1] * eb;
  std::vector<uint64_t> idx(r, 0);
  uint64_t base = 0;  // byte offset of idx with idx[r-1] = 0
  size_t ob = 0;
  const size_t cap_e = cap / eb * eb;
  const char* p = phys.data();
  for (uint64_t row = 0; row < total / inner; ++row) {
    const char* q = p + base;
    for (uint64_t j = 0; j < inner; ++j, q += s_in) {
      if (ob + eb > cap_e) {
        if (absl::Status s = out.Put(std::string_view(buf, ob)); !s.ok()) {
          return s;
        }
        ob = 0;
      }
      switch (eb) {
        case 1: buf[ob] = *q; break;
        case 2: std::memcpy(buf + ob, q, 2); break;
        case 4: std::memcpy(buf + ob, q, 4); break;
        case 8: std::memcpy(buf + ob, q, 8); break;
        default: std::memcpy(buf + ob, q, eb);
      }
      ob += eb;
    }
    for (size_t d = r - 1; d-- > 0;) {
      base += stride[d] * eb;
      if (++idx[d] < static_cast<uint64_t>(dims[d])) break;
      base -= stride[d] * eb * static_cast<uint64_t>(dims[d]);
      idx[d] = 0;
    }
  }
  if (ob) return out.Put(std::string_view(buf, ob));
  return absl::OkStatus();
}

// Stores one decoded varint as an element of encoding E.
template <DataEncoding E>
inline void StoreVarint(uint64_t v, char* p) {
  if constexpr (E == DataEncoding::kBool) {
    *p = v != 0 ? 1 : 0;
  } else if constexpr (E == DataEncoding::kVarint32 ||
                       E == DataEncoding::kVarintU32) {
    uint32_t x = static_cast<uint32_t>(v);  // protobuf truncates to 32 bits
    std::memcpy(p, &x, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

template <DataEncoding E>
constexpr size_t VarintElementBytes() {
  if constexpr (E == DataEncoding::kBool) return 1;
  if constexpr (E == DataEncoding::kVarint32 || E == DataEncoding::kVarintU32)
    return 4;
  return 8;
}

// Decodes the packed varints of the next `len` bytes of `src` into `out`.
template <DataEncoding E, ByteSource S, class Out>
absl::Status DecodePackedVarints(S& src, uint64_t len, const Frame& frame,
                                 Out& out, char* buf, size_t cap,
                                 uint64_t element_count) {
  constexpr size_t W = VarintElementBytes<E>();
  const size_t cap_e = cap / W * W;
  uint64_t left = len;
  size_t ob = 0;
  auto flush = [&]() -> absl::Status {
    if (ob == 0) return absl::OkStatus();
    if (ob > out.remaining()) {
      return FrameError(absl::StatusCode::kInvalidArgument, frame,
                        src.position(),
                        absl::StrCat(element_count, " elements"),
                        "more varint values than the shape holds");
    }
    absl::Status s = out.Put(std::string_view(buf, ob));
    ob = 0;
    return s;
  };
  auto bad = [&](uint64_t off) {
    return FrameError(absl::StatusCode::kInvalidArgument, frame, off,
                      "a packed varint ending inside its field",
                      "a malformed or truncated varint");
  };
  while (left > 0) {
    size_t avail = static_cast<size_t>(std::min<uint64_t>(src.available(), left));
    if (avail < wire::kMaxVarintBytes && avail < left) {
      if (!src.Pull(static_cast<size_t>(
              std::min<uint64_t>(left, wire::kMaxVarintBytes)))) {
        if (!src.status().ok()) return Prefix(src.status(), frame.str());
        if (src.available() < std::min<uint64_t>(left, wire::kMaxVarintBytes)) {
          return TruncatedError(frame, src.position(), left, src.available());
        }
      }
      continue;
    }
    const uint8_t* const begin = reinterpret_cast<const uint8_t*>(src.cursor());
    const uint8_t* p = begin;
    const uint8_t* const e = p + avail;
    // At any p < safe, a whole 10-byte varint is inside the window.
    const uint8_t* const safe = avail >= wire::kMaxVarintBytes ? e - 9 : p;
    while (p < safe) {
      if (ob + W > cap_e) {
        if (absl::Status s = flush(); !s.ok()) return s;
      }
      // Hot loop on locals: output pointer and end, no per-element flush.
      char* o = buf + ob;
      char* const oe = buf + cap_e;
      for (; p < safe && o + W <= oe; o += W) {
      // Unrolled: each step adds 7 bits; most values end in 1 to 3 bytes.
      uint64_t v = p[0];
      if (v < 0x80) [[likely]] {
        p += 1;
      } else {
        uint64_t b = p[1];
        v += (b - 1) << 7;
        if (b < 0x80) {
          p += 2;
        } else {
          b = p[2];
          v += (b - 1) << 14;
          if (b < 0x80) {
            p += 3;
          } else {
            b = p[3];
            v += (b - 1) << 21;
            if (b < 0x80) {
              p += 4;
            } else {
              b = p[4];
              v += (b - 1) << 28;
              if (b < 0x80) {
                p += 5;
              } else {
                size_t i = 5;
                for (; i < 10; ++i) {
                  b = p[i];
                  v += (b - 1) << (7 * i);
                  if (b < 0x80) break;
                }
                if (i == 10 || (i == 9 && p[9] > 1)) {
                  return bad(src.position() +
                             static_cast<uint64_t>(p - begin));
                }
                p += i + 1;
              }
            }
          }
        }
      }
      StoreVarint<E>(v, o);
      }
      ob = static_cast<size_t>(o - buf);
    }
    if (avail == left) {  // the field ends inside the window
      const char* q = reinterpret_cast<const char*>(p);
      const char* qe = reinterpret_cast<const char*>(e);
      while (q < qe) {
        if (ob + W > cap_e) {
          if (absl::Status s = flush(); !s.ok()) return s;
        }
        uint64_t v;
        const char* at = q;
        if (wire::ReadVarint(&q, qe, &v) != wire::VarintResult::kOk) {
          return bad(src.position() +
                     static_cast<uint64_t>(at - src.cursor()));
        }
        StoreVarint<E>(v, buf + ob);
        ob += W;
      }
      p = e;
    }
    size_t used = static_cast<size_t>(p - begin);
    src.Advance(used);
    left -= used;
  }
  return flush();
}

template <ByteSource S, class Out>
absl::Status DecodePackedVarintsFor(DataEncoding e, S& src, uint64_t len,
                                    const Frame& frame, Out& out, char* buf,
                                    size_t cap, uint64_t n) {
  switch (e) {
    case DataEncoding::kBool:
      return DecodePackedVarints<DataEncoding::kBool>(src, len, frame, out,
                                                      buf, cap, n);
    case DataEncoding::kVarint32:
      return DecodePackedVarints<DataEncoding::kVarint32>(src, len, frame,
                                                          out, buf, cap, n);
    case DataEncoding::kVarintU32:
      return DecodePackedVarints<DataEncoding::kVarintU32>(src, len, frame,
                                                           out, buf, cap, n);
    case DataEncoding::kVarint64:
      return DecodePackedVarints<DataEncoding::kVarint64>(src, len, frame,
                                                          out, buf, cap, n);
    default:
      return DecodePackedVarints<DataEncoding::kVarintU64>(src, len, frame,
                                                           out, buf, cap, n);
  }
}

inline void StoreVarintFor(DataEncoding e, uint64_t v, char* p, size_t* n) {
  switch (e) {
    case DataEncoding::kBool: StoreVarint<DataEncoding::kBool>(v, p); *n = 1; break;
    case DataEncoding::kVarint32:
    case DataEncoding::kVarintU32:
      StoreVarint<DataEncoding::kVarint32>(v, p); *n = 4; break;
    default: StoreVarint<DataEncoding::kVarint64>(v, p); *n = 8;
  }
}

// Pass 2: streams the planned array data into `out`.
template <RewindableSource S, class Out>
absl::Status EmitData(S& src, std::span<const ByteRange> ranges,
                      const LiteralPlan& plan, const Frame& frame, Out& out,
                      char* buf, size_t cap, LiteralPath* path) {
  const PrimitiveTypeInfo& t = *plan.type;
  const uint32_t field = t.proto_field;
  const LiteralFieldStats& f = plan.fields[field];
  const DataEncoding enc = t.encoding;
  auto seek = [&](uint64_t pos) -> absl::Status {
    if (src.Seek(pos)) return absl::OkStatus();
    if (!src.status().ok()) return Prefix(src.status(), frame.str());
    return FrameError(absl::StatusCode::kFailedPrecondition, frame, pos,
                      "a source that can seek back to the data",
                      "a source that cannot");
  };
  if (plan.payload_bytes == 0 && !IsVarint(enc)) {
    *path = LiteralPath::kEmpty;
    return absl::OkStatus();
  }
  // One record (or, for bytes fields, the last one wins): direct.
  if (enc == DataEncoding::kBytes ||
      (f.records == 1 && f.len_records == 1 && !IsVarint(enc))) {
    const ByteRange& r = enc == DataEncoding::kBytes ? f.last : f.first;
    if (absl::Status s = seek(r.offset); !s.ok()) return s;
    *path = LiteralPath::kBufferCopy;
    return out.Raw(src, r.length, frame);
  }
  if (IsVarint(enc) && f.records == 1 && f.len_records == 1) {
    if (absl::Status s = seek(f.first.offset); !s.ok()) return s;
    *path = LiteralPath::kVarint;
    absl::Status s = DecodePackedVarintsFor(enc, src, f.first.length, frame,
                                            out, buf, cap, plan.element_count);
    if (!s.ok()) return s;
  } else {
    *path = LiteralPath::kGeneral;
    absl::Status s = WalkRecords(
        src, ranges, frame, [&](WireRecord& r) -> absl::Status {
          if (r.field != field || !AcceptsWireType(enc, r.wire_type)) {
            return absl::OkStatus();
          }
          if (r.wire_type == wire::kLen) {
            if (IsVarint(enc)) {
              return DecodePackedVarintsFor(enc, src, r.length, frame, out,
                                            buf, cap, plan.element_count);
            }
            return out.Raw(src, r.length, frame);
          }
          char v[8];
          size_t n = r.length;
          if (IsVarint(enc)) {
            StoreVarintFor(enc, r.value, v, &n);
          } else {
            std::memcpy(v, &r.value, n);
          }
          if (n > out.remaining()) {
            return FrameError(absl::StatusCode::kInvalidArgument, frame,
                              r.offset,
                              absl::StrCat(plan.element_count, " elements"),
                              "more values than the shape holds");
          }
          return out.Put(std::string_view(v, n));
        });
    if (!s.ok()) return s;
  }
  if (out.remaining() != 0) {
    uint64_t eb = t.element_bytes;
    return FrameError(
        absl::StatusCode::kInvalidArgument, frame,
        f.records ? f.first.offset : (ranges.empty() ? 0 : ranges[0].offset),
        absl::StrCat(plan.element_count, " elements of ", Sv(t.name), " for ",
                     plan.shape.ToString()),
        absl::StrCat((plan.payload_bytes - out.remaining()) / eb,
                     " elements"));
  }
  return absl::OkStatus();
}

}  // namespace internal

// Decodes the literal made of `ranges` of `src` and writes it as a .npy
// (header and payload) to `sink`. See the file comment for the rules and
// errors. `plan_out` / `path_out`, when given, receive the plan and the path
// taken. On return the source position is unspecified (inside the ranges).
template <RewindableSource S, ByteSink K>
absl::Status DecodeLiteralToNpy(S& src, std::span<const ByteRange> ranges,
                                const Frame& frame, K& sink,
                                const LiteralDecodeOptions& options = {},
                                LiteralPlan* plan_out = nullptr,
                                LiteralPath* path_out = nullptr) {
  const uint64_t body_offset = ranges.empty() ? src.position()
                                              : ranges[0].offset;
  absl::StatusOr<LiteralPlan> planned = PlanLiteral(src, ranges, frame);
  if (!planned.ok()) return planned.status();
  LiteralPlan& plan = *planned;
  if (absl::Status s = ResolveArrayPlan(plan, frame, body_offset); !s.ok()) {
    return s;
  }
  NpySink<K> npy(sink);
  if (absl::Status s = npy.Begin(plan.header, plan.payload_bytes); !s.ok()) {
    return s;
  }
  const size_t cap = std::max<size_t>(options.buffer_bytes, 64);
  std::unique_ptr<char[]> buf(new char[cap]);
  LiteralPath path = LiteralPath::kGeneral;
  if (plan.order != NpyOrder::kTranspose || plan.payload_bytes == 0) {
    internal::DirectPayload<K> out(npy, options, buf.get(), cap);
    absl::Status s = internal::EmitData(src, ranges, plan, frame, out,
                                        buf.get(), cap, &path);
    if (!s.ok()) return s;
    if (path == LiteralPath::kBufferCopy) path = out.path();
  } else {
    const LiteralFieldStats& f = plan.fields[plan.type->proto_field];
    const size_t eb = plan.type->element_bytes;
    path = LiteralPath::kTranspose;
    bool direct_view = false;
    if constexpr (ZeroCopySource<S>) {
      if (!internal::IsVarint(plan.type->encoding) &&
          (plan.type->encoding == DataEncoding::kBytes ||
           (f.records == 1 && f.len_records == 1))) {
        const ByteRange& r =
            plan.type->encoding == DataEncoding::kBytes ? f.last : f.first;
        if (!src.Seek(r.offset)) {
          return FrameError(absl::StatusCode::kFailedPrecondition, frame,
                            r.offset, "a seekable source", "none");
        }
        std::optional<std::string_view> v =
            src.ReadView(static_cast<size_t>(r.length));
        if (!v) return TruncatedError(frame, r.offset, r.length, 0);
        direct_view = true;
        internal::DirectPayload<K> out(npy, options, nullptr, 0);
        absl::Status s =
            internal::Gather(*v, plan.shape, eb, out, buf.get(), cap);
        if (!s.ok()) return s;
      }
    }
    if (!direct_view) {
      internal::PhysicalStore store;
      if (absl::Status s = store.Init(plan.payload_bytes, options); !s.ok()) {
        return s;
      }
      LiteralPath inner;
      absl::Status s = internal::EmitData(src, ranges, plan, frame, store,
                                          buf.get(), cap, &inner);
      if (!s.ok()) return s;
      absl::StatusOr<std::string_view> v = store.View();
      if (!v.ok()) return v.status();
      internal::DirectPayload<K> out(npy, options, nullptr, 0);
      s = internal::Gather(*v, plan.shape, eb, out, buf.get(), cap);
      if (!s.ok()) return s;
    }
  }
  if (absl::Status s = npy.Finish(); !s.ok()) return s;
  if (plan_out) *plan_out = std::move(plan);
  if (path_out) *path_out = path;
  return absl::OkStatus();
}

// One contiguous body [src.position(), + length).
template <RewindableSource S, ByteSink K>
absl::Status DecodeLiteralToNpy(S& src, uint64_t length, const Frame& frame,
                                K& sink,
                                const LiteralDecodeOptions& options = {},
                                LiteralPlan* plan_out = nullptr,
                                LiteralPath* path_out = nullptr) {
  ByteRange r{src.position(), length};
  return DecodeLiteralToNpy(src, std::span<const ByteRange>(&r, 1), frame,
                            sink, options, plan_out, path_out);
}

}  // namespace decomposed

#endif  // DECOMPOSED_XLA_LITERAL_DECODER_H_
