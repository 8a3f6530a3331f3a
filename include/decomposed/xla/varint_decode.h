// Chunked decoding of packed varints (PRED, S32, S64, U32, U64 data) into
// fixed-width little-endian elements, as XLA's CopyFromProto stores them:
// PRED -> one byte 0/1 (any non-zero varint is 1), S32/U32 -> the low 32
// bits (protobuf truncates), S64/U64 -> 8 bytes (docs/format.md
// §8.3). The hot loop is unrolled while 10 bytes are in the source
// window and bounds-checked near its end; the output goes through a reused
// buffer to `out`, which is any type with
//   uint64_t remaining() const;            bytes it still takes
//   absl::Status Put(std::string_view);    appends
// (the decoder's PayloadWriter, or a transpose's PhysicalStore).
//
// Errors: kInvalidArgument for a malformed varint or one ending outside its
// field, and for more values than `out` takes ("more varint values than the
// shape holds"); kOutOfRange when the source ends inside the field.
//
// Example (the 3 varints 01 7f 80 01 of an S32 field into 12 bytes):
//   decomposed::MemorySource src(std::string_view("\x01\x7f\x80\x01", 4));
//   Out out(12);  // remaining() == 12
//   char buf[64];
//   absl::Status s = decomposed::internal::DecodePackedVarintsFor(
//       decomposed::DataEncoding::kVarint32, src, 4, frame, out, buf,
//       sizeof(buf), 3);   // out gets 01 00 00 00 7f 00 00 00 80 00 00 00
#ifndef DECOMPOSED_XLA_VARINT_DECODE_H_
#define DECOMPOSED_XLA_VARINT_DECODE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/status.h"
#include "decomposed/wire/wire.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::internal {

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
        if (!src.status().ok()) return Prefix(src.status(), frame);
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

}  // namespace decomposed::internal

#endif  // DECOMPOSED_XLA_VARINT_DECODE_H_
