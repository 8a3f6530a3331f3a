// Streaming .npy reader over a ByteSource: header, dtype mapping to an XLA
// PrimitiveType, and the raw element bytes in chunks, never the whole array.
//
// What it accepts (docs/format.md §13):
//   * versions 1.0, 2.0 and 3.0 (header length u16 / u32; 3.0 is UTF-8),
//     any padding, keys in any order (ParseNpyHeader in npy.h);
//   * descrs |b1, |i1 <i2 <i4 <i8, |u1 <u2 <u4 <u8, <f2 <f4 <f8, <c8 <c16,
//     with byte order '<', '=', '|' (little endian: data used as is) or '>'
//     (big endian: byte-swapped while streaming, per element, per component
//     for complex; or refused when NpyReadOptions::allow_big_endian is off);
//   * void |V2 / |V1 (bf16, fp8, fp4, int4, ... as ml_dtypes and neuronx-cc
//     store them) only with a true dtype: NpyReadOptions::dtype, given by the
//     caller, by a `<file>.npy.meta` sidecar ({"ml_dtype": "bfloat16"}, see
//     ReadNpyMetaSidecar), or by a bundle's meta.json (read by its owner and
//     passed here as NpyReadOptions::dtype);
//   * fortran_order True: the bytes stay as they are and NpyArrayInfo says
//     so; the literal encoder gives them the column-major layout
//     {0, 1, ..., rank-1}, which describes exactly that byte order, so no
//     transpose is ever needed.
// NpyReadOptions::dtype on a non-void descr reinterprets the bytes (for
// example bf16 saved as '<u2'); its element size must equal the descr's.
//
// Errors (status.h conventions, frame "npy header" / "npy data"): bad magic,
// an unknown version, a header longer than limits::kMaxNpyHeaderBytes or
// longer than the file, an unparseable dict, an unsupported descr
// (kUnimplemented), a void descr with no true dtype (kInvalidArgument), a
// shape whose data the file does not hold (kOutOfRange), and bytes after the
// data (kInvalidArgument: the file is not what its header says).
//
// Example:
//   decomposed::FdSourceRef src{decomposed::UnownedFd(fd)};
//   absl::StatusOr<decomposed::NpyArrayInfo> info =
//       decomposed::ReadNpyArrayHeader(src, {});
//   if (!info.ok()) return info.status();
//   absl::Status s = decomposed::ForEachNpyDataChunk(
//       src, *info, [&](std::string_view chunk) {
//         // ... whole elements of info->type, in file order ...
//         return absl::OkStatus();
//       });
#ifndef DECOMPOSED_NPY_NPY_READER_H_
#define DECOMPOSED_NPY_NPY_READER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/bounded.h"
#include "decomposed/limits.h"
#include "decomposed/npy/npy.h"
#include "decomposed/xla/primitive_type.h"
#include "decomposed/status.h"

namespace decomposed {

struct NpyReadOptions {
  // The true element type. Required for void descrs (|V1, |V2); on other
  // descrs it reinterprets the bytes and must have the descr's item size.
  std::optional<PrimitiveType> dtype;
  // `dtype` is for void descrs only (a `--dtype TYPE` meant for every void
  // tensor of a set that mixes them with typed ones): other descrs keep
  // their own type.
  bool dtype_void_only = false;
  // Convert big-endian descrs ('>f4', ...) by swapping bytes while
  // streaming; when false they are refused with kUnimplemented.
  bool allow_big_endian = true;
  // Reject bytes after the array data (NumPy ignores them).
  bool reject_trailing_data = true;
};

// What a .npy header says, resolved to an XLA element type.
struct NpyArrayInfo {
  NpyHeader header;           // descr, fortran_order, shape, header_bytes
  PrimitiveType type = PrimitiveType::kInvalid;
  uint32_t item_bytes = 0;    // bytes per element in the file
  // Swap this many bytes per unit while streaming (0: no swap). For complex
  // descrs this is the component size (4 or 8).
  uint32_t swap_unit = 0;
  uint64_t element_count = 0;
  uint64_t data_bytes = 0;    // element_count * item_bytes
  uint64_t data_offset = 0;   // stream position of the first data byte
  std::vector<int64_t> dims() const { return header.shape; }
};

// The element type a plain (non-void) descr denotes, its item size and
// whether it is big endian. Void descrs return kInvalid with the item size.
struct NpyDescrInfo {
  PrimitiveType type = PrimitiveType::kInvalid;
  uint32_t item_bytes = 0;
  bool big_endian = false;
  bool is_void = false;
};

// Parses a descr string ("<f4", "|V2", ">i8", "=u2", "|b1"). kUnimplemented
// for dtypes with no XLA type (strings, objects, datetimes, structured).
inline absl::StatusOr<NpyDescrInfo> ParseNpyDescr(std::string_view descr) {
  auto unsupported = [&] {
    return FrameError(absl::StatusCode::kUnimplemented, Frame{"npy header"},
                      0, "a numeric, bool or void descr (<f4, |b1, |V2, ...)",
                      absl::StrCat("'", Sv(descr), "'"));
  };
  if (descr.size() < 3) return unsupported();
  char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return unsupported();
  }
  char kind = descr[1];
  uint32_t size = 0;
  for (char c : descr.substr(2)) {
    if (c < '0' || c > '9' || size > 1000) return unsupported();
    size = size * 10 + static_cast<uint32_t>(c - '0');
  }
  NpyDescrInfo d;
  d.item_bytes = size;
  d.big_endian = order == '>' && size > 1;
  using P = PrimitiveType;
  switch (kind) {
    case 'b':
      if (size != 1) return unsupported();
      d.type = P::kPred;
      break;
    case 'i':
      d.type = size == 1 ? P::kS8 : size == 2 ? P::kS16 : size == 4 ? P::kS32
               : size == 8 ? P::kS64 : P::kInvalid;
      break;
    case 'u':
      d.type = size == 1 ? P::kU8 : size == 2 ? P::kU16 : size == 4 ? P::kU32
               : size == 8 ? P::kU64 : P::kInvalid;
      break;
    case 'f':
      d.type = size == 2 ? P::kF16 : size == 4 ? P::kF32 : size == 8 ? P::kF64
                                                                      : P::kInvalid;
      break;
    case 'c':
      d.type = size == 8 ? P::kC64 : size == 16 ? P::kC128 : P::kInvalid;
      break;
    case 'V':
      if (size != 1 && size != 2) return unsupported();
      d.is_void = true;
      d.big_endian = false;  // void bytes have no byte order
      return d;
    default:
      return unsupported();
  }
  if (d.type == P::kInvalid) return unsupported();
  return d;
}

// Resolves a parsed header to the element type and sizes (no I/O).
inline absl::StatusOr<NpyArrayInfo> ResolveNpyHeader(
    const NpyHeader& h, const NpyReadOptions& options) {
  const Frame f{"npy header"};
  absl::StatusOr<NpyDescrInfo> d = ParseNpyDescr(h.descr);
  if (!d.ok()) return d.status();
  NpyArrayInfo info;
  info.header = h;
  info.item_bytes = d->item_bytes;
  if (d->is_void) {
    if (!options.dtype) {
      return FrameError(
          absl::StatusCode::kInvalidArgument, f, 0,
          absl::StrCat("a true dtype for the void descr '", Sv(h.descr),
                       "' (a <file>.npy.meta sidecar {\"ml_dtype\": ...}, or "
                       "--dtype INDEX=TYPE such as ",
                       d->item_bytes == 2 ? "bf16" : "f8e4m3fn", ")"),
          "none");
    }
    info.type = *options.dtype;
  } else {
    info.type = options.dtype && !options.dtype_void_only ? *options.dtype : d->type;
  }
  const PrimitiveTypeInfo& ti = Info(info.type);
  if (ti.encoding == DataEncoding::kNone) {
    return FrameError(absl::StatusCode::kInvalidArgument, f, 0,
                      "an array element type", std::string(ti.name));
  }
  if (ti.element_bytes != d->item_bytes) {
    return FrameError(
        absl::StatusCode::kInvalidArgument, f, 0,
        absl::StrCat("a dtype of ", d->item_bytes, " bytes for descr '",
                     Sv(h.descr), "'"),
        absl::StrCat(Sv(ti.name), " (", ti.element_bytes, " bytes)"));
  }
  if (d->big_endian) {
    if (!options.allow_big_endian) {
      return FrameError(absl::StatusCode::kUnimplemented,
                        Frame{"npy header"}, 0, "a little-endian descr",
                        absl::StrCat("'", Sv(h.descr),
                                     "' (big endian; enable byte swapping to "
                                     "convert it)"));
    }
    bool complex = info.type == PrimitiveType::kC64 ||
                   info.type == PrimitiveType::kC128;
    info.swap_unit = complex ? d->item_bytes / 2 : d->item_bytes;
  }
  uint64_t n = 1;
  for (int64_t dim : h.shape) {
    if (dim < 0) {
      return FrameError(absl::StatusCode::kInvalidArgument, f, 0,
                        "non-negative dimensions",
                        absl::StrCat("dimension ", dim));
    }
    if (dim != 0 && n > limits::kMaxElementCount / static_cast<uint64_t>(dim)) {
      return FrameError(absl::StatusCode::kResourceExhausted, f, 0,
                        absl::StrCat("at most ", limits::kMaxElementCount,
                                     " elements"),
                        absl::StrCat("shape ", NpyShapeRepr(h.shape)));
    }
    n *= static_cast<uint64_t>(dim);
  }
  info.element_count = n;
  info.data_bytes = n * d->item_bytes;
  info.data_offset = h.header_bytes;
  return info;
}

// Reads and resolves the header at the start of `src` (position 0 of the
// file). On success the source sits at the first data byte, and when its
// size is known the data is checked to be all there (and, with
// reject_trailing_data, nothing more).
template <ByteSource S>
absl::StatusOr<NpyArrayInfo> ReadNpyArrayHeader(S& src,
                                                const NpyReadOptions& options) {
  const Frame f{"npy header"};
  const uint64_t start = src.position();
  char fixed[12];
  size_t have = 0;
  // The fixed part is 10 bytes (v1) or 12 (v2/v3); read 10 first.
  if (!src.Read(fixed, 10)) {
    if (!src.status().ok()) return Prefix(src.status(), f);
    std::optional<uint64_t> rem = Remaining(src);
    return FrameError(absl::StatusCode::kOutOfRange, f, start,
                      "a 10-byte .npy preamble (magic, version, length)",
                      rem ? absl::StrCat("a file of ", src.position() - start,
                                         " bytes")
                          : std::string("the end of the data"));
  }
  have = 10;
  if (std::string_view(fixed, 6) != kNpyMagic) {
    return FrameError(absl::StatusCode::kInvalidArgument, f, start,
                      "the magic \\x93NUMPY", "other bytes (not a .npy file)");
  }
  if (static_cast<uint8_t>(fixed[6]) >= 2) {
    if (!src.Read(fixed + 10, 2)) {
      if (!src.status().ok()) return Prefix(src.status(), f);
      return FrameError(absl::StatusCode::kOutOfRange, f, start + 10,
                        "a 4-byte header length", "the end of the data");
    }
    have = 12;
  }
  absl::StatusOr<uint64_t> total = NpyHeaderSize(std::string_view(fixed, have));
  if (!total.ok()) return total.status();
  std::optional<uint64_t> rem = Remaining(src);
  if (rem && *total - have > *rem) {
    return TruncatedError(f, start + have, *total - have, *rem);
  }
  std::string text(fixed, have);
  text.resize(static_cast<size_t>(*total));
  if (!src.Read(text.data() + have, static_cast<size_t>(*total - have))) {
    if (!src.status().ok()) return Prefix(src.status(), f);
    return TruncatedError(f, start + have, *total - have,
                          src.position() - start - have);
  }
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(text);
  if (!h.ok()) return h.status();
  absl::StatusOr<NpyArrayInfo> info = ResolveNpyHeader(*h, options);
  if (!info.ok()) return info.status();
  info->data_offset = start + *total;
  rem = Remaining(src);
  if (rem) {
    if (info->data_bytes > *rem) {
      return FrameError(
          absl::StatusCode::kOutOfRange, Frame{"npy data"}, info->data_offset,
          absl::StrCat(info->data_bytes, " bytes for shape ",
                       NpyShapeRepr(info->header.shape), " of '",
                       info->header.descr, "'"),
          absl::StrCat(*rem, " bytes in the file"));
    }
    if (options.reject_trailing_data && info->data_bytes < *rem) {
      return FrameError(
          absl::StatusCode::kInvalidArgument, Frame{"npy data"},
          info->data_offset + info->data_bytes,
          absl::StrCat("the file to end after the ", info->data_bytes,
                       " data bytes of shape ",
                       NpyShapeRepr(info->header.shape)),
          absl::StrCat(*rem - info->data_bytes, " more bytes"));
    }
  }
  return *info;
}

namespace internal {

inline void SwapUnits(char* p, size_t n, uint32_t unit) {
  switch (unit) {
    case 2:
      for (size_t i = 0; i + 2 <= n; i += 2) std::swap(p[i], p[i + 1]);
      break;
    case 4:
      for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t v;
        std::memcpy(&v, p + i, 4);
        v = __builtin_bswap32(v);
        std::memcpy(p + i, &v, 4);
      }
      break;
    case 8:
      for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t v;
        std::memcpy(&v, p + i, 8);
        v = __builtin_bswap64(v);
        std::memcpy(p + i, &v, 8);
      }
      break;
    default:
      break;
  }
}

}  // namespace internal

// Streams the `info.data_bytes` data bytes from `src` (which must sit at the
// first data byte) to `fn(std::string_view) -> absl::Status`, in file order,
// little endian (swapped when the descr was big endian). Chunks are views
// into the source window when no swap is needed, else into a bounded
// scratch buffer; with a swap every chunk holds whole elements. A source
// that ends early gives kOutOfRange naming "npy data".
template <ByteSource S, class Fn>
absl::Status ForEachNpyDataChunk(S& src, const NpyArrayInfo& info, Fn&& fn) {
  const Frame f{"npy data"};
  if (info.swap_unit == 0) {
    return ForEachChunk(src, info.data_bytes, f, fn);
  }
  constexpr size_t kScratch = 256 << 10;  // multiple of every unit
  std::unique_ptr<char[]> buf(new char[kScratch]);
  uint64_t left = info.data_bytes;
  uint64_t start = src.position();
  while (left > 0) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(left, kScratch));
    if (!src.Read(buf.get(), k)) {
      return SourceEnded(src, f, info.data_bytes,
                         info.data_bytes - left, start);
    }
    internal::SwapUnits(buf.get(), k, info.swap_unit);
    left -= k;
    absl::Status s = fn(std::string_view(buf.get(), k));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Reads the sidecar `<npy_path>.meta` when it exists: {"ml_dtype": NAME}
// with NAME an ml_dtypes name ("bfloat16", "float8_e4m3fn", ...). Returns
// nullopt when there is no sidecar; an error when it exists but is not
// valid JSON, has no string "ml_dtype", or names an unknown type.
// (Compiled in src/npy/npy_sidecar.cc; uses nlohmann_json.)
absl::StatusOr<std::optional<PrimitiveType>> ReadNpyMetaSidecar(
    const std::string& npy_path);

// The XLA type for an ml_dtypes name ("bfloat16" -> BF16), or nullopt.
inline std::optional<PrimitiveType> PrimitiveTypeFromMlDtype(
    std::string_view name) {
  for (const PrimitiveTypeInfo& i : kPrimitiveTypes) {
    if (!i.ml_dtype.empty() && i.ml_dtype == name) return i.type;
  }
  return std::nullopt;
}

// Parses a user-facing dtype name: an XLA name ("BF16", "f8e4m3fn", case
// insensitive), an ml_dtypes or NumPy name ("bfloat16", "float32", "int8",
// "bool"), or a short alias ("bf16", "f32", "i32", "u8", ...).
inline std::optional<PrimitiveType> ParseDtypeName(std::string_view name) {
  if (auto t = PrimitiveTypeFromName(name)) return t;
  if (auto t = PrimitiveTypeFromMlDtype(name)) return t;
  struct Alias {
    std::string_view name;
    PrimitiveType type;
  };
  static constexpr Alias kAliases[] = {
      {"bool", PrimitiveType::kPred},     {"int8", PrimitiveType::kS8},
      {"int16", PrimitiveType::kS16},     {"int32", PrimitiveType::kS32},
      {"int64", PrimitiveType::kS64},     {"uint8", PrimitiveType::kU8},
      {"uint16", PrimitiveType::kU16},    {"uint32", PrimitiveType::kU32},
      {"uint64", PrimitiveType::kU64},    {"float16", PrimitiveType::kF16},
      {"float32", PrimitiveType::kF32},   {"float64", PrimitiveType::kF64},
      {"complex64", PrimitiveType::kC64}, {"complex128", PrimitiveType::kC128},
      {"i8", PrimitiveType::kS8},         {"i16", PrimitiveType::kS16},
      {"i32", PrimitiveType::kS32},       {"i64", PrimitiveType::kS64},
      {"half", PrimitiveType::kF16},      {"float", PrimitiveType::kF32},
      {"double", PrimitiveType::kF64},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.type;
  }
  return std::nullopt;
}

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_NPY_READER_H_
