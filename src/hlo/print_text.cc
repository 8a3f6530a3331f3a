// The value writers of the HLO printer: shapes and layouts (XLA's
// shape_util.cc, layout.cc), literals and floating-point numbers
// (literal.cc, util.cc RoundTripFpToString), escaping (absl::CEscape),
// metadata (hlo_op_metadata.cc), sharding (hlo_sharding.cc,
// tile_assignment.cc), replica groups (collective_device_list.cc), windows
// (window_util.cc) and dimension numbers (hlo_instruction.cc).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/text.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"
#include "print_internal.h"

namespace decomposed::hlo::print_internal {
namespace {

using PT = PrimitiveType;

// XLA's lowercase type names, by enum number.
constexpr std::string_view kLowercaseNames[kNumPrimitiveTypes] = {
    "invalid", "pred",  "s8",    "s16",  "s32",   "s64",      "u8",
    "u16",     "u32",   "u64",   "f16",  "f32",   "f64",      "tuple",
    "opaque",  "c64",   "bf16",  "token", "c128", "f8e5m2",   "f8e4m3fn",
    "s4",      "u4",    "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "s2",
    "u2",      "f8e4m3", "f8e3m4", "s1",  "u1",    "f4e2m1fn", "f8e8m0fnu",
    "buffer",  "f6e3m2fn", "f6e2m3fn"};

bool IsArrayType(int type) {
  const PrimitiveTypeInfo* info = FindPrimitiveType(type);
  return info != nullptr && info->element_bytes != 0;
}

void AppendPrintf(TextBuffer& out, const char* format, int precision,
                  double v) {
  char b[64];
  int n = std::snprintf(b, sizeof(b), format, precision, v);
  if (n > 0) out.Append(std::string_view(b, std::min<size_t>(n, sizeof(b) - 1)));
}

void AppendHex(TextBuffer& out, uint64_t v) {
  char b[24];
  int n = std::snprintf(b, sizeof(b), "%llx", static_cast<unsigned long long>(v));
  out.Append(std::string_view(b, static_cast<size_t>(n)));
}

// "nan" or "-nan", then "(0x<payload>)" when the payload is not the plain
// quiet NaN's (types with signaling NaNs only: payload_bits > 0).
void AppendNan(TextBuffer& out, bool negative, uint64_t bits,
               int payload_bits) {
  out.Append(negative ? "-nan" : "nan");
  if (payload_bits > 0) {
    const uint64_t mask = (uint64_t{1} << payload_bits) - 1;
    const uint64_t payload = bits & mask;
    if (payload != (uint64_t{1} << (payload_bits - 1))) {
      out.Append("(0x");
      AppendHex(out, payload);
      out.Append(')');
    }
  }
}

// max_digits10 of each narrow floating type (ml_dtypes / Eigen:
// 2 + digits * 30103 / 100000).
struct NarrowFloat {
  int max_digits10;
  int width_bits;    // the sign bit is the top one
  int payload_bits;  // mantissa bits when the type has signaling NaNs
  bool has_sign;
};

bool NarrowFloatOf(PT t, NarrowFloat* f) {
  switch (t) {
    case PT::kF16: *f = {5, 16, 10, true}; return true;
    case PT::kBF16: *f = {4, 16, 7, true}; return true;
    case PT::kF8E5M2: *f = {2, 8, 2, true}; return true;
    case PT::kF8E4M3: *f = {3, 8, 3, true}; return true;
    case PT::kF8E3M4: *f = {3, 8, 4, true}; return true;
    case PT::kF8E4M3FN: *f = {3, 8, 0, true}; return true;
    case PT::kF8E4M3B11FNUZ: *f = {3, 8, 0, true}; return true;
    case PT::kF8E5M2FNUZ: *f = {2, 8, 0, true}; return true;
    case PT::kF8E4M3FNUZ: *f = {3, 8, 0, true}; return true;
    case PT::kF8E8M0FNU: *f = {2, 8, 0, false}; return true;
    case PT::kF4E2M1FN: *f = {2, 4, 0, true}; return true;
    case PT::kF6E3M2FN: *f = {2, 6, 0, true}; return true;
    case PT::kF6E2M3FN: *f = {3, 6, 0, true}; return true;
    default: return false;
  }
}

// The literal's data for an array type: the field holding it and the
// bytes one element takes there.
struct LiteralData {
  const char* data = nullptr;
  size_t bytes = 0;
  size_t element_bytes = 0;
};

template <class R>
LiteralData FromRepeated(const R& r, size_t element_bytes) {
  return {reinterpret_cast<const char*>(r.data()),
          static_cast<size_t>(r.size()) * sizeof(r.Get(0)), element_bytes};
}
LiteralData FromBytes(const std::string& s, size_t element_bytes) {
  return {s.data(), s.size(), element_bytes};
}

bool DataOf(const xla::LiteralProto& l, PT t, LiteralData* d) {
  switch (t) {
    case PT::kPred: *d = FromRepeated(l.preds(), 1); return true;
    case PT::kS32: *d = FromRepeated(l.s32s(), 4); return true;
    case PT::kS64: *d = FromRepeated(l.s64s(), 8); return true;
    case PT::kU32: *d = FromRepeated(l.u32s(), 4); return true;
    case PT::kU64: *d = FromRepeated(l.u64s(), 8); return true;
    case PT::kF32: *d = FromRepeated(l.f32s(), 4); return true;
    case PT::kF64: *d = FromRepeated(l.f64s(), 8); return true;
    case PT::kC64: *d = FromRepeated(l.c64s(), 8); return true;
    case PT::kC128: *d = FromRepeated(l.c128s(), 16); return true;
    case PT::kS8: *d = FromBytes(l.s8s(), 1); return true;
    case PT::kU8: *d = FromBytes(l.u8s(), 1); return true;
    case PT::kS16: *d = FromBytes(l.s16s(), 2); return true;
    case PT::kU16: *d = FromBytes(l.u16s(), 2); return true;
    case PT::kF16: *d = FromBytes(l.f16s(), 2); return true;
    case PT::kBF16: *d = FromBytes(l.bf16s(), 2); return true;
    case PT::kF8E5M2: *d = FromBytes(l.f8e5m2s(), 1); return true;
    case PT::kF8E4M3FN: *d = FromBytes(l.f8e4m3fns(), 1); return true;
    case PT::kF8E4M3B11FNUZ: *d = FromBytes(l.f8e4m3b11fnuzs(), 1); return true;
    case PT::kF8E5M2FNUZ: *d = FromBytes(l.f8e5m2fnuzs(), 1); return true;
    case PT::kF8E4M3FNUZ: *d = FromBytes(l.f8e4m3fnuzs(), 1); return true;
    case PT::kF8E4M3: *d = FromBytes(l.f8e4m3s(), 1); return true;
    case PT::kF8E3M4: *d = FromBytes(l.f8e3m4s(), 1); return true;
    case PT::kF8E8M0FNU: *d = FromBytes(l.f8e8m0fnus(), 1); return true;
    case PT::kF4E2M1FN: *d = FromBytes(l.f4e2m1fns(), 1); return true;
    case PT::kF6E3M2FN: *d = FromBytes(l.f6e3m2fns(), 1); return true;
    case PT::kF6E2M3FN: *d = FromBytes(l.f6e2m3fns(), 1); return true;
    case PT::kS4: *d = FromBytes(l.s4s(), 1); return true;
    case PT::kU4: *d = FromBytes(l.u4s(), 1); return true;
    case PT::kS2: *d = FromBytes(l.s2s(), 1); return true;
    case PT::kU2: *d = FromBytes(l.u2s(), 1); return true;
    case PT::kS1: *d = FromBytes(l.s1s(), 1); return true;
    case PT::kU1: *d = FromBytes(l.u1s(), 1); return true;
    default: return false;
  }
}

// LiteralBase::GetAsString of one element (PRED inside arrays: 0 / 1).
void AppendElement(TextBuffer& out, PT t, const char* p, bool pred_as_digit) {
  switch (KindOf(t)) {
    case ElementKind::kBool:
      if (pred_as_digit) {
        out.Append(*p != 0 ? '1' : '0');
      } else {
        out.Append(*p != 0 ? "true" : "false");
      }
      return;
    case ElementKind::kSigned:
      out.AppendInt(SignedValue(t, p));
      return;
    case ElementKind::kUnsigned:
      out.AppendUint(UnsignedValue(t, p));
      return;
    case ElementKind::kReal:
      AppendFloatElement(out, static_cast<int>(t), p);
      return;
    case ElementKind::kComplex: {
      out.Append('(');
      if (t == PT::kC64) {
        AppendFloatElement(out, static_cast<int>(PT::kF32), p);
        out.Append(", ");
        AppendFloatElement(out, static_cast<int>(PT::kF32), p + 4);
      } else {
        AppendFloatElement(out, static_cast<int>(PT::kF64), p);
        out.Append(", ");
        AppendFloatElement(out, static_cast<int>(PT::kF64), p + 8);
      }
      out.Append(')');
      return;
    }
    case ElementKind::kNone:
      return;
  }
}

// The element strides of an array in its layout's physical order (the
// order a LiteralProto stores its data): row-major unless the shape's
// layout is a permutation of its dimensions.
std::vector<int64_t> PhysicalStrides(const xla::ShapeProto& s) {
  const int rank = s.dimensions_size();
  std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
  bool permutation = s.has_layout() && s.layout().minor_to_major_size() == rank;
  if (permutation) {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t d : s.layout().minor_to_major()) {
      if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) {
        permutation = false;
        break;
      }
      seen[static_cast<size_t>(d)] = true;
    }
  }
  int64_t acc = 1;
  for (int k = 0; k < rank; ++k) {
    const int64_t d = permutation ? s.layout().minor_to_major(k) : rank - 1 - k;
    stride[static_cast<size_t>(d)] = acc;
    acc *= s.dimensions(static_cast<int>(d));
  }
  return stride;
}

// DenseArrayPrintHelper with oneline = true: braces per dimension, the
// innermost `{ a, b }` (or `{a}` for one element), `/*iN=M*/` comments
// on the inner braces of arrays of rank > 3, elements in logical
// (row-major) order read from their physical positions.
void AppendArrayValues(TextBuffer& out, const xla::ShapeProto& s, PT t,
                       const char* data, size_t element_bytes) {
  const int rank = s.dimensions_size();
  if (rank == 0) {
    AppendElement(out, t, data, /*pred_as_digit=*/false);
    return;
  }
  const std::vector<int64_t> stride = PhysicalStrides(s);
  auto dim = [&](int level) { return s.dimensions(level); };
  auto open = [&](int level) {
    if (rank == 1) {
      out.Append('{');
    } else if (level == rank - 1) {
      out.Append(dim(level) <= 1 ? "{" : "{ ");
    } else {
      out.Append("{ ");
    }
  };
  auto close = [&](int level) {
    if (rank == 1) {
      out.Append('}');
    } else if (level == rank - 1) {
      out.Append(dim(level) <= 1 ? "}" : " }");
    } else {
      out.Append(" }");
    }
  };
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  // Inner braces (not the innermost) of arrays of rank > 3 carry the
  // index of their parent: `{ /*i0=1*/ ...`.
  auto open_at = [&](int level) {
    if (rank > 3 && level > 0 && level < rank - 1) {
      out.Append("{ /*i");
      out.AppendInt(level - 1);
      out.Append('=');
      out.AppendInt(idx[static_cast<size_t>(level - 1)]);
      out.Append("*/");
      if (dim(level) > 0) out.Append(' ');
    } else {
      open(level);
    }
  };
  int level = 0;
  open_at(0);
  int64_t offset = 0;  // physical offset of idx[0..level)
  std::vector<int64_t> base(static_cast<size_t>(rank) + 1, 0);
  while (true) {
    const size_t l = static_cast<size_t>(level);
    if (idx[l] < dim(level)) {
      if (level == rank - 1) {
        const int64_t n = dim(level);
        const int64_t step = stride[l];
        for (int64_t i = 0; i < n; ++i) {
          if (i != 0) out.Append(", ");
          AppendElement(out, t,
                        data + static_cast<size_t>(offset + i * step) *
                                   element_bytes,
                        /*pred_as_digit=*/true);
          // A long row is handed over as it goes; a refused chunk stops it.
          if ((i & 4095) == 4095 && !out.MaybeFlush()) return;
        }
        idx[l] = n;
        if (!out.MaybeFlush()) return;
        continue;
      }
      base[l] = offset;
      offset += idx[l] * stride[l];
      ++level;
      idx[static_cast<size_t>(level)] = 0;
      open_at(level);
      continue;
    }
    close(level);
    if (level == 0) break;
    --level;
    offset = base[static_cast<size_t>(level)];
    ++idx[static_cast<size_t>(level)];
    if (idx[static_cast<size_t>(level)] < dim(level)) out.Append(", ");
  }
}

// `(0x..)`-free CEscape of one byte.
void AppendEscapedByte(std::string& s, unsigned char c) {
  switch (c) {
    case '\n': s += "\\n"; return;
    case '\r': s += "\\r"; return;
    case '\t': s += "\\t"; return;
    case '"': s += "\\\""; return;
    case '\'': s += "\\'"; return;
    case '\\': s += "\\\\"; return;
    default:
      break;
  }
  if (c < 0x20 || c >= 0x7f) {
    s += '\\';
    s += static_cast<char>('0' + ((c >> 6) & 7));
    s += static_cast<char>('0' + ((c >> 3) & 7));
    s += static_cast<char>('0' + (c & 7));
  } else {
    s += static_cast<char>(c);
  }
}

// hlo_lexer: skips blanks and comments from `i`; false on an unterminated
// comment, a lone '/', a NUL.
bool SkipBlanks(std::string_view s, size_t* i) {
  while (*i < s.size()) {
    const char c = s[*i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++*i;
      continue;
    }
    if (c == '/' && *i + 1 < s.size() && s[*i + 1] == '*') {
      size_t end = s.find("*/", *i + 2);
      if (end == std::string_view::npos) return false;
      if (s.substr(*i, end - *i).find('\0') != std::string_view::npos) {
        return false;
      }
      *i = end + 2;
      continue;
    }
    if (c == '/' && *i + 1 < s.size() && s[*i + 1] == '/') {
      while (*i < s.size() && s[*i] != '\n' && s[*i] != '\r') {
        if (s[*i] == '\0') return false;
        ++*i;
      }
      continue;
    }
    return true;
  }
  return true;
}

// XLA's canonical form of an iota's reshape dims and transpose: dims of
// size one dropped, runs of dims kept in order merged
// (tile_assignment.cc CanonicalizeIotaDims).
void CanonicalizeIota(std::vector<int64_t>& dims, std::vector<int>& perm) {
  if (dims.size() <= 1) return;
  while (true) {
    bool changed = false;
    std::vector<int> old_to_new(dims.size(), -1);
    size_t n = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] != 1) old_to_new[i] = static_cast<int>(n++);
    }
    if (n != dims.size()) {
      std::vector<int64_t> nd;
      std::vector<int> np;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (old_to_new[i] >= 0) nd.push_back(dims[i]);
      }
      for (size_t i = 0; i < perm.size(); ++i) {
        const int p = perm[i];
        if (p >= 0 && static_cast<size_t>(p) < old_to_new.size() &&
            old_to_new[static_cast<size_t>(p)] >= 0) {
          np.push_back(old_to_new[static_cast<size_t>(p)]);
        }
      }
      dims = std::move(nd);
      perm = std::move(np);
    }
    for (size_t i = 1, base = 0; i < dims.size(); ++i) {
      const int base_dim = perm[base];
      const int d = perm[i];
      int64_t merged;
      if (base_dim + static_cast<int>(i - base) == d &&
          !__builtin_mul_overflow(dims[static_cast<size_t>(base_dim)],
                                  dims[static_cast<size_t>(d)], &merged)) {
        dims[static_cast<size_t>(base_dim)] = merged;
        dims[static_cast<size_t>(d)] = 1;
        changed = true;
      } else {
        base = i;
      }
    }
    if (!changed) break;
  }
  if (dims.empty()) {
    dims = {1};
    perm = {0};
  }
}

// `[dims]<=[reshape]T(perm)`; false when the iota is not well formed (the
// reshape and transpose of different lengths, the transpose not a
// permutation, a dimension not positive).
bool AppendIota(TextBuffer& out, const std::vector<int64_t>& dims,
                std::vector<int64_t> reshape, std::vector<int> perm) {
  if (reshape.size() != perm.size()) return false;
  std::vector<bool> seen(perm.size(), false);
  for (int p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= perm.size() ||
        seen[static_cast<size_t>(p)]) {
      return false;
    }
    seen[static_cast<size_t>(p)] = true;
  }
  for (int64_t d : reshape) {
    if (d <= 0) return false;
  }
  CanonicalizeIota(reshape, perm);
  out.Append('[');
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) out.Append(',');
    out.AppendInt(dims[i]);
  }
  out.Append("]<=[");
  for (size_t i = 0; i < reshape.size(); ++i) {
    if (i != 0) out.Append(',');
    out.AppendInt(reshape[i]);
  }
  out.Append(']');
  if (reshape.size() > 1) {
    out.Append("T(");
    for (size_t i = 0; i < perm.size(); ++i) {
      if (i != 0) out.Append(',');
      out.AppendInt(perm[i]);
    }
    out.Append(')');
  }
  return true;
}

void AppendShardingMetadata(TextBuffer& out, const xla::OpSharding& s,
                            bool include_metadata) {
  if (include_metadata && s.metadata_size() > 0) {
    out.Append(" metadata={");
    if (s.metadata_size() == 1) {
      AppendOpMetadata(out, s.metadata(0));
    } else {
      for (int i = 0; i < s.metadata_size(); ++i) {
        if (i != 0) out.Append(", ");
        out.Append('{');
        AppendOpMetadata(out, s.metadata(i));
        out.Append('}');
      }
    }
    out.Append('}');
  }
}

void AppendShardGroup(TextBuffer& out, const xla::OpSharding& s) {
  if (!s.is_shard_group()) return;
  out.Append(s.shard_group_type() == xla::OpSharding::LIKE ? " shard_like "
                                                           : " shard_as ");
  out.AppendInt(s.shard_group_id());
}

void AppendTrailer(TextBuffer& out, const xla::OpSharding& s,
                   bool include_metadata) {
  AppendShardGroup(out, s);
  AppendShardingMetadata(out, s, include_metadata);
  out.Append('}');
}

std::string_view SubgroupTypeName(int type) {
  switch (type) {
    case xla::OpSharding::MANUAL: return "manual";
    case xla::OpSharding::MAXIMAL: return "maximul";  // sic, as XLA prints it
    case xla::OpSharding::REPLICATED: return "replicated";
    case xla::OpSharding::UNREDUCED: return "unreduced";  // XLA since 2025
    default: return "error_type.";
  }
}

}  // namespace

std::string_view LowercaseTypeName(int type) {
  if (type < 0 || type >= kNumPrimitiveTypes) return {};
  return kLowercaseNames[type];
}

bool AppendShape(TextBuffer& out, const xla::ShapeProto& shape,
                 bool print_layout) {
  const int type = shape.element_type();
  if (type == static_cast<int>(PT::kTuple)) {
    bool ok = true;
    out.Append('(');
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i != 0) {
        if (i % 5 == 0) {
          out.Append(", /*index=");
          out.AppendInt(i);
          out.Append("*/");
        } else {
          out.Append(", ");
        }
      }
      ok &= AppendShape(out, shape.tuple_shapes(i), print_layout);
    }
    out.Append(')');
    return ok;
  }
  std::string_view name = LowercaseTypeName(type);
  if (name.empty()) {
    out.Append("<type ");
    out.AppendInt(type);
    out.Append('>');
    return false;
  }
  out.Append(name);
  if (!IsArrayType(type) || shape.dimensions_size() == 0) {
    out.Append("[]");
  } else {
    out.Append('[');
    for (int i = 0; i < shape.dimensions_size(); ++i) {
      if (i != 0) out.Append(',');
      const int64_t d = shape.dimensions(i);
      if (i < shape.is_dynamic_dimension_size() && shape.is_dynamic_dimension(i)) {
        if (d == std::numeric_limits<int64_t>::min()) {
          out.Append('?');
        } else {
          out.Append("<=");
          out.AppendInt(d);
        }
      } else {
        out.AppendInt(d);
      }
    }
    out.Append(']');
  }
  if (print_layout && IsArrayType(type) && shape.has_layout()) {
    if (shape.dimensions_size() == 0) {
      // A scalar's layout prints only when it says more than `{}`.
      TextBuffer layout;
      AppendLayout(layout, shape.layout());
      if (layout.str() != "{}") out.Append(layout.str());
    } else {
      AppendLayout(out, shape.layout());
    }
  }
  return true;
}

void AppendLayout(TextBuffer& out, const xla::LayoutProto& layout) {
  out.Append('{');
  for (int i = 0; i < layout.minor_to_major_size(); ++i) {
    if (i != 0) out.Append(',');
    out.AppendInt(layout.minor_to_major(i));
  }
  bool colon = false;
  auto start = [&] {
    if (!colon) out.Append(':');
    colon = true;
  };
  if (layout.dim_level_types_size() > 0) {
    start();
    out.Append("D(");
    for (int i = 0; i < layout.dim_level_types_size(); ++i) {
      if (i != 0) out.Append(',');
      switch (layout.dim_level_types(i)) {
        case 0: out.Append('D'); break;
        case 1: out.Append('C'); break;
        case 2: out.Append('S'); break;
        case 3: out.Append('H'); break;
        default: out.Append('?'); break;
      }
      if (i < layout.dim_unique_size() && !layout.dim_unique(i)) out.Append('+');
      if (i < layout.dim_ordered_size() && !layout.dim_ordered(i)) out.Append('~');
    }
    out.Append(')');
  }
  if (layout.tiles_size() > 0) {
    start();
    out.Append('T');
    for (const xla::TileProto& tile : layout.tiles()) {
      out.Append('(');
      for (int i = 0; i < tile.dimensions_size(); ++i) {
        if (i != 0) out.Append(',');
        const int64_t d = tile.dimensions(i);
        if (d >= 0) {
          out.AppendInt(d);
        } else if (d == std::numeric_limits<int64_t>::min()) {
          out.Append('*');
        } else {
          out.Append("Invalid value ");
          out.AppendInt(d);
        }
      }
      out.Append(')');
    }
  }
  if (layout.tail_padding_alignment_in_elements() != 0 &&
      layout.tail_padding_alignment_in_elements() != 1) {
    start();
    out.Append("L(");
    out.AppendInt(layout.tail_padding_alignment_in_elements());
    out.Append(')');
  }
  auto index_type = [&](char mark, int type) {
    if (type == 0) return;
    start();
    out.Append(mark);
    const ElementKind k = KindOf(static_cast<PT>(type < kNumPrimitiveTypes ? type : 0));
    if (type < kNumPrimitiveTypes &&
        (k == ElementKind::kSigned || k == ElementKind::kUnsigned)) {
      out.Append('(');
      out.Append(LowercaseTypeName(type));
      out.Append(')');
    } else {
      out.Append("(invalid)");
    }
  };
  index_type('#', layout.index_primitive_type());
  index_type('*', layout.pointer_primitive_type());
  if (layout.element_size_in_bits() != 0) {
    start();
    out.Append("E(");
    out.AppendInt(layout.element_size_in_bits());
    out.Append(')');
  }
  if (layout.memory_space() != 0) {
    start();
    out.Append("S(");
    out.AppendInt(layout.memory_space());
    out.Append(')');
  }
  if (layout.split_configs_size() > 0) {
    start();
    out.Append("SC");
    for (const xla::SplitConfigProto& c : layout.split_configs()) {
      out.Append('(');
      out.AppendInt(c.dimension());
      out.Append(':');
      for (int i = 0; i < c.split_indices_size(); ++i) {
        if (i != 0) out.Append(',');
        out.AppendInt(c.split_indices(i));
      }
      out.Append(')');
    }
  }
  if (layout.has_physical_shape()) {
    start();
    out.Append("P(");
    AppendShape(out, layout.physical_shape(), /*print_layout=*/true);
    out.Append(')');
  }
  if (layout.dynamic_shape_metadata_prefix_bytes() > 0) {
    start();
    out.Append("M(");
    out.AppendInt(layout.dynamic_shape_metadata_prefix_bytes());
    out.Append(')');
  }
  out.Append('}');
}

void AppendFloat(TextBuffer& out, float v) {
  if (std::isnan(v)) {
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    AppendNan(out, (bits >> 31) != 0, bits, 23);
    return;
  }
  char b[48];
  int n = std::snprintf(b, sizeof(b), "%.*g", 6, static_cast<double>(v));
  if (n <= 0 || std::strtof(b, nullptr) != v) {
    n = std::snprintf(b, sizeof(b), "%.*g", 9, static_cast<double>(v));
  }
  out.Append(std::string_view(b, static_cast<size_t>(std::max(n, 0))));
}

void AppendDouble(TextBuffer& out, double v) {
  if (std::isnan(v)) {
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    AppendNan(out, (bits >> 63) != 0, bits, 52);
    return;
  }
  char b[48];
  int n = std::snprintf(b, sizeof(b), "%.*g", 15, v);
  if (n <= 0 || std::strtod(b, nullptr) != v) {
    n = std::snprintf(b, sizeof(b), "%.*g", 17, v);
  }
  out.Append(std::string_view(b, static_cast<size_t>(std::max(n, 0))));
}

void AppendSixDigits(TextBuffer& out, double v) {
  AppendPrintf(out, "%.*g", 6, v);
}

void AppendFloatElement(TextBuffer& out, int type, const char* p) {
  const PT t = static_cast<PT>(type);
  if (t == PT::kF32) {
    float v;
    std::memcpy(&v, p, 4);
    AppendFloat(out, v);
    return;
  }
  if (t == PT::kF64) {
    double v;
    std::memcpy(&v, p, 8);
    AppendDouble(out, v);
    return;
  }
  NarrowFloat f{};
  if (!NarrowFloatOf(t, &f)) return;
  const uint64_t bits = f.width_bits == 16
                            ? internal::Load<uint16_t>(p)
                            : (static_cast<uint8_t>(*p) &
                               ((1u << f.width_bits) - 1));
  const double v = RealValue(t, p);
  if (std::isnan(v)) {
    const bool negative = f.has_sign && ((bits >> (f.width_bits - 1)) & 1) != 0;
    AppendNan(out, negative, bits, f.payload_bits);
    return;
  }
  AppendPrintf(out, "%.*g", f.max_digits10, v);
}

absl::Status AppendLiteral(TextBuffer& out, const xla::LiteralProto& literal,
                           bool with_shape) {
  const xla::ShapeProto& s = literal.shape();
  const int type = s.element_type();
  if (type == static_cast<int>(PT::kTuple)) {
    if (literal.tuple_literals_size() != s.tuple_shapes_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a tuple literal of ", s.tuple_shapes_size(), " elements holds ",
          literal.tuple_literals_size()));
    }
    out.Append("( ");
    for (int i = 0; i < literal.tuple_literals_size(); ++i) {
      if (i != 0) out.Append(", ");
      const xla::LiteralProto& element = literal.tuple_literals(i);
      if (IsElidedLiteral(element)) {
        // An element a parsed text elided (a tuple constant read from
        // `{...}`): `{...}` again, as a whole elided constant prints.
        if (with_shape) {
          AppendShape(out, element.shape(), /*print_layout=*/true);
          out.Append(' ');
        }
        out.Append("{...}");
        continue;
      }
      absl::Status st = AppendLiteral(out, element, with_shape);
      if (!st.ok()) return st;
    }
    out.Append(" )");
    return absl::OkStatus();
  }
  if (type == static_cast<int>(PT::kToken)) {
    out.Append("token");
    return absl::OkStatus();
  }
  LiteralData data;
  if (!IsArrayType(type) || !DataOf(literal, static_cast<PT>(type), &data)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a literal of element type ", type,
                     ", which XLA cannot hold in a literal"));
  }
  // The element count, overflow-checked.
  uint64_t count = 1;
  for (int64_t d : s.dimensions()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a literal with a negative dimension (", d, ")"));
    }
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() /
                              static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError("a literal whose element count overflows");
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t expected_bytes = count * data.element_bytes;
  if (count > std::numeric_limits<uint64_t>::max() / 16 ||
      expected_bytes != data.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a literal of ", count, " elements holds ",
        data.bytes / std::max<size_t>(data.element_bytes, 1),
        data.element_bytes > 1 && data.bytes % data.element_bytes != 0
            ? " and a fraction"
            : "",
        " elements of data"));
  }
  if (with_shape) {
    AppendShape(out, s, /*print_layout=*/true);
    out.Append(' ');
  }
  AppendArrayValues(out, s, static_cast<PT>(type), data.data, data.element_bytes);
  return absl::OkStatus();
}

// The bytes absl::CEscape rewrites.
struct EscapeTable {
  bool escaped[256];
  constexpr EscapeTable() : escaped() {
    for (int c = 0; c < 256; ++c) {
      escaped[c] = c < 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\';
    }
  }
};
constexpr EscapeTable kEscape;

void AppendCEscaped(TextBuffer& out, std::string_view s) {
  std::string& b = out.str();
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!kEscape.escaped[c]) continue;
    b.append(s.data() + run, i - run);
    AppendEscapedByte(b, c);
    run = i + 1;
  }
  b.append(s.data() + run, s.size() - run);
}

bool LexesAsJsonDict(std::string_view s) {
  size_t i = 0;
  if (!SkipBlanks(s, &i) || i >= s.size() || s[i] != '{') return false;
  int64_t depth = 1;
  ++i;
  while (i < s.size() && depth > 0) {
    const char c = s[i];
    if (c == '"') {
      size_t j = i + 1;
      while (true) {
        if (j >= s.size()) return false;
        if (s[j] == '"') break;
        if (s[j] == '\\') {
          if (j + 1 >= s.size() || s[j + 1] == '\n') return false;
          j += 2;
          continue;
        }
        ++j;
      }
      i = j + 1;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') --depth;
    ++i;
  }
  if (depth != 0) return false;
  if (!SkipBlanks(s, &i)) return false;
  return i == s.size();
}

bool HasPrintableMetadata(const xla::OpMetadata& m) {
  return !m.op_type().empty() || !m.op_name().empty() ||
         !m.source_file().empty() || !m.scheduling_name().empty() ||
         m.stack_frame_id() != 0;
}

void AppendOpMetadata(TextBuffer& out, const xla::OpMetadata& m) {
  bool first = true;
  auto next = [&] {
    if (!first) out.Append(' ');
    first = false;
  };
  if (!m.op_type().empty()) {
    next();
    out.Append("op_type=\"");
    AppendCEscaped(out, m.op_type());
    out.Append('"');
  }
  if (!m.op_name().empty()) {
    next();
    out.Append("op_name=\"");
    AppendCEscaped(out, m.op_name());
    out.Append('"');
  }
  if (!m.source_file().empty()) {
    next();
    out.Append("source_file=\"");
    AppendCEscaped(out, m.source_file());
    out.Append('"');
  }
  auto number = [&](std::string_view name, int64_t v) {
    if (v == 0) return;
    next();
    out.Append(name);
    out.AppendInt(v);
  };
  number("source_line=", m.source_line());
  number("source_end_line=", m.source_end_line());
  number("source_column=", m.source_column());
  number("source_end_column=", m.source_end_column());
  if (m.profile_type_size() > 0) {
    next();
    out.Append("profile_type=");
    AppendIntList(out, m.profile_type());
  }
  if (!m.deduplicated_name().empty()) {
    next();
    out.Append("deduplicated_name=\"");
    AppendCEscaped(out, m.deduplicated_name());
    out.Append('"');
  }
  if (!m.scheduling_name().empty()) {
    next();
    out.Append("scheduling_name=\"");
    out.Append(m.scheduling_name());
    out.Append('"');
  }
  number("stack_frame_id=", m.stack_frame_id());
}

void AppendFrontendAttributes(TextBuffer& out,
                              const xla::FrontendAttributes& attributes) {
  std::vector<std::pair<std::string_view, std::string_view>> sorted;
  sorted.reserve(attributes.map().size());
  for (const auto& [k, v] : attributes.map()) sorted.emplace_back(k, v);
  std::sort(sorted.begin(), sorted.end());
  out.Append('{');
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i != 0) out.Append(',');
    out.Append(sorted[i].first);
    out.Append('=');
    if (LexesAsJsonDict(sorted[i].second)) {
      out.Append(sorted[i].second);
    } else {
      out.Append('"');
      AppendCEscaped(out, sorted[i].second);
      out.Append('"');
    }
  }
  out.Append('}');
}

void AppendSharding(TextBuffer& out, const xla::OpSharding& s,
                    bool include_metadata) {
  switch (s.type()) {
    case xla::OpSharding::TUPLE: {
      out.Append('{');
      for (int i = 0; i < s.tuple_shardings_size(); ++i) {
        if (i != 0) {
          if (i % 5 == 0) {
            out.Append(", /*index=");
            out.AppendInt(i);
            out.Append("*/");
          } else {
            out.Append(", ");
          }
        }
        AppendSharding(out, s.tuple_shardings(i), include_metadata);
      }
      out.Append('}');
      return;
    }
    case xla::OpSharding::REPLICATED:
      out.Append("{replicated");
      AppendTrailer(out, s, include_metadata);
      return;
    case xla::OpSharding::MANUAL:
      out.Append("{manual");
      AppendTrailer(out, s, include_metadata);
      return;
    case xla::OpSharding::UNKNOWN:
      out.Append("{unknown");
      AppendTrailer(out, s, include_metadata);
      return;
    case xla::OpSharding::UNREDUCED:
      out.Append("{unreduced");
      AppendTrailer(out, s, include_metadata);
      return;
    default:
      break;
  }
  const bool iota = s.iota_reshape_dims_size() > 0;
  if (s.tile_assignment_devices_size() == 1 ||
      (iota && std::all_of(s.iota_reshape_dims().begin(),
                           s.iota_reshape_dims().end(),
                           [](int64_t d) { return d == 1; }))) {
    out.Append("{maximal device=");
    out.AppendInt(s.tile_assignment_devices_size() == 1
                      ? s.tile_assignment_devices(0)
                      : 0);
    AppendTrailer(out, s, include_metadata);
    return;
  }
  std::vector<int64_t> dims(s.tile_assignment_dimensions().begin(),
                            s.tile_assignment_dimensions().end());
  std::vector<int64_t> devices(s.tile_assignment_devices().begin(),
                               s.tile_assignment_devices().end());
  uint64_t elements = 1;
  for (int64_t d : dims) {
    elements *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  }
  bool replicate_last = s.replicate_on_last_tile_dim();
  std::vector<int> subgroups(s.last_tile_dims().begin(), s.last_tile_dims().end());
  // HloSharding::Subgroup: one kind of subgroup over untiled data is that
  // kind; subgroup dimensions of size one go; a lone replicated subgroup is
  // the last_tile_dim_replicate form.
  if (!subgroups.empty() && subgroups.size() <= dims.size()) {
    const size_t data_rank = dims.size() - subgroups.size();
    uint64_t data_tiles = 1;
    for (size_t i = 0; i < data_rank; ++i) {
      data_tiles *= static_cast<uint64_t>(std::max<int64_t>(dims[i], 0));
    }
    const bool one_kind = std::all_of(subgroups.begin(), subgroups.end(),
                                      [&](int t) { return t == subgroups[0]; });
    if (one_kind && data_tiles == 1) {
      if (subgroups[0] == xla::OpSharding::MANUAL) {
        out.Append("{manual");
        AppendTrailer(out, s, include_metadata);
        return;
      }
      if (subgroups[0] == xla::OpSharding::REPLICATED) {
        out.Append("{replicated");
        AppendTrailer(out, s, include_metadata);
        return;
      }
    }
    std::vector<int64_t> kept_dims(dims.begin(), dims.begin() + data_rank);
    std::vector<int> kept_types;
    for (size_t i = 0; i < subgroups.size(); ++i) {
      if (dims[data_rank + i] != 1) {
        kept_dims.push_back(dims[data_rank + i]);
        kept_types.push_back(subgroups[i]);
      }
    }
    dims = std::move(kept_dims);
    subgroups = std::move(kept_types);
    if (subgroups.size() == 1 && subgroups[0] == xla::OpSharding::REPLICATED) {
      subgroups.clear();
      replicate_last = true;
    }
  }
  if (replicate_last && subgroups.empty()) {
    // HloSharding::PartialTile.
    if (dims.size() <= 1 || static_cast<uint64_t>(dims.back()) == elements) {
      out.Append("{replicated");
      AppendTrailer(out, s, include_metadata);
      return;
    }
    if (dims.back() == 1) {
      dims.pop_back();
      replicate_last = false;
    } else if (!iota && dims.back() > 0 && devices.size() == elements) {
      const size_t group = static_cast<size_t>(dims.back());
      for (size_t g = 0; g + group <= devices.size(); g += group) {
        std::sort(devices.begin() + g, devices.begin() + g + group);
      }
    }
  }
  out.Append("{devices=");
  bool printed = false;
  if (iota) {
    std::vector<int64_t> reshape(s.iota_reshape_dims().begin(),
                                 s.iota_reshape_dims().end());
    std::vector<int> perm(s.iota_transpose_perm().begin(),
                          s.iota_transpose_perm().end());
    printed = AppendIota(out, dims, std::move(reshape), std::move(perm));
  }
  if (!printed) {
    out.Append('[');
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i != 0) out.Append(',');
      out.AppendInt(dims[i]);
    }
    out.Append(']');
    for (size_t i = 0; i < devices.size(); ++i) {
      if (i != 0) out.Append(',');
      out.AppendInt(devices[i]);
    }
  }
  if (replicate_last && subgroups.empty()) out.Append(" last_tile_dim_replicate");
  if (!subgroups.empty()) {
    out.Append(" last_tile_dims={");
    for (size_t i = 0; i < subgroups.size(); ++i) {
      if (i != 0) out.Append(", ");
      out.Append(SubgroupTypeName(subgroups[i]));
    }
    out.Append('}');
  }
  AppendTrailer(out, s, include_metadata);
}

void AppendReplicaGroups(TextBuffer& out, const xla::HloInstructionProto& in) {
  auto explicit_groups = [&](const auto& groups) {
    out.Append('{');
    bool first = true;
    for (const xla::ReplicaGroup& g : groups) {
      if (!first) out.Append(',');
      first = false;
      AppendIntList(out, g.replica_ids());
    }
    out.Append('}');
  };
  if (in.replica_groups_size() > 0) {
    explicit_groups(in.replica_groups());
    return;
  }
  const xla::CollectiveDeviceListProto& list = in.collective_device_list();
  if (list.has_iota_replica_group_list()) {
    const xla::IotaReplicaGroupListProto& iota = list.iota_replica_group_list();
    std::vector<int64_t> reshape(iota.iota_reshape_dims().begin(),
                                 iota.iota_reshape_dims().end());
    std::vector<int> perm(iota.iota_transpose_perm().begin(),
                          iota.iota_transpose_perm().end());
    if (reshape.empty()) {
      reshape = {iota.num_replica_groups() * iota.num_devices_per_group()};
      perm = {0};
    }
    if (AppendIota(out, {iota.num_replica_groups(), iota.num_devices_per_group()},
                   std::move(reshape), std::move(perm))) {
      return;
    }
    out.Append("{}");
    return;
  }
  explicit_groups(list.replica_groups());
}

void AppendWindow(TextBuffer& out, const xla::Window& w) {
  auto field = [&](std::string_view heading, auto value) {
    out.Append(heading);
    out.Append('=');
    for (int i = 0; i < w.dimensions_size(); ++i) {
      if (i != 0) out.Append('x');
      value(w.dimensions(i));
    }
  };
  auto any = [&](auto pred) {
    return std::any_of(w.dimensions().begin(), w.dimensions().end(), pred);
  };
  if (w.dimensions_size() > 0) {
    field("size", [&](const xla::WindowDimension& d) { out.AppendInt(d.size()); });
  }
  if (any([](const xla::WindowDimension& d) { return d.stride() != 1; })) {
    field(" stride",
          [&](const xla::WindowDimension& d) { out.AppendInt(d.stride()); });
  }
  if (any([](const xla::WindowDimension& d) {
        return d.padding_low() != 0 || d.padding_high() != 0;
      })) {
    field(" pad", [&](const xla::WindowDimension& d) {
      out.AppendInt(d.padding_low());
      out.Append('_');
      out.AppendInt(d.padding_high());
    });
  }
  if (any([](const xla::WindowDimension& d) { return d.base_dilation() != 1; })) {
    field(" lhs_dilate", [&](const xla::WindowDimension& d) {
      out.AppendInt(d.base_dilation());
    });
  }
  if (any([](const xla::WindowDimension& d) { return d.window_dilation() != 1; })) {
    field(" rhs_dilate", [&](const xla::WindowDimension& d) {
      out.AppendInt(d.window_dilation());
    });
  }
  if (any([](const xla::WindowDimension& d) { return d.window_reversal(); })) {
    field(" rhs_reversal", [&](const xla::WindowDimension& d) {
      out.Append(d.window_reversal() ? '1' : '0');
    });
  }
}

void AppendPaddingConfig(TextBuffer& out, const xla::PaddingConfig& padding) {
  const bool interior = std::any_of(
      padding.dimensions().begin(), padding.dimensions().end(),
      [](const xla::PaddingConfig::PaddingConfigDimension& d) {
        return d.interior_padding() != 0;
      });
  for (int i = 0; i < padding.dimensions_size(); ++i) {
    if (i != 0) out.Append('x');
    const auto& d = padding.dimensions(i);
    out.AppendInt(d.edge_padding_low());
    out.Append('_');
    out.AppendInt(d.edge_padding_high());
    if (interior) {
      out.Append('_');
      out.AppendInt(d.interior_padding());
    }
  }
}

void AppendDotDimensionNumbers(TextBuffer& out,
                               const xla::DotDimensionNumbers& d) {
  if (d.lhs_batch_dimensions_size() > 0) {
    out.Append("lhs_batch_dims=");
    AppendIntList(out, d.lhs_batch_dimensions());
    out.Append(", ");
  }
  out.Append("lhs_contracting_dims=");
  AppendIntList(out, d.lhs_contracting_dimensions());
  if (d.rhs_batch_dimensions_size() > 0) {
    out.Append(", rhs_batch_dims=");
    AppendIntList(out, d.rhs_batch_dimensions());
  }
  out.Append(", rhs_contracting_dims=");
  AppendIntList(out, d.rhs_contracting_dimensions());
}

void AppendConvolutionDimensionNumbers(
    TextBuffer& out, const xla::ConvolutionDimensionNumbers& d) {
  // One label per dimension: the position of each named dimension gets
  // its letter, spatial dimension i its number, the rest `?`. Dimension
  // numbers past kMaxLabels (no real convolution has them) are left out
  // rather than sized for.
  constexpr int64_t kMaxLabels = 1024;
  auto labels = [&](int64_t a, char la, int64_t b, char lb,
                    const auto& spatial) {
    int64_t len = std::max(a, b);
    for (int64_t s : spatial) len = std::max(len, s);
    len = std::min(len, kMaxLabels - 1) + 1;
    std::vector<std::string> v(static_cast<size_t>(std::max<int64_t>(len, 0)),
                               "?");
    auto set = [&](int64_t i, std::string text) {
      if (i >= 0 && i < len) v[static_cast<size_t>(i)] = std::move(text);
    };
    set(a, std::string(1, la));
    set(b, std::string(1, lb));
    for (int i = 0; i < spatial.size(); ++i) set(spatial.Get(i), std::to_string(i));
    for (const std::string& s : v) out.Append(s);
  };
  labels(d.input_batch_dimension(), 'b', d.input_feature_dimension(), 'f',
         d.input_spatial_dimensions());
  out.Append('_');
  labels(d.kernel_input_feature_dimension(), 'i',
         d.kernel_output_feature_dimension(), 'o', d.kernel_spatial_dimensions());
  out.Append("->");
  labels(d.output_batch_dimension(), 'b', d.output_feature_dimension(), 'f',
         d.output_spatial_dimensions());
}

}  // namespace decomposed::hlo::print_internal
