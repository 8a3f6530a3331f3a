// gather and scatter with XLA's general dimension numbers (docs/eval.md
// §4.3). Gather clamps each start index so the slice fits the operand
// (as dynamic-slice does); scatter skips an update whose window does not
// fit (XLA's CPU and GPU rule) and applies updates in order, so repeated
// indices combine deterministically. The batching dimensions of newer
// XLA (operand_batching_dims, input_batching_dims) are not implemented.
#include <algorithm>
#include <cstring>

#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

// The indices as int64 (any integer type), contiguous.
absl::StatusOr<std::vector<int64_t>> IndexValues(const Ctx& ctx, const Array& idx) {
  const ElementKind k = KindOf(idx.type());
  if (k != ElementKind::kSigned && k != ElementKind::kUnsigned) {
    return Expected("integer indices", PrimitiveTypeName(idx.type()));
  }
  absl::StatusOr<Array> c = ConvertArray(ctx, idx, PrimitiveType::kS64);
  if (!c.ok()) return c.status();
  absl::StatusOr<Array> m = Materialize(ctx, *c);
  if (!m.ok()) return m.status();
  return std::vector<int64_t>(m->data<int64_t>(), m->data<int64_t>() + m->element_count());
}

bool Contains(std::span<const int64_t> s, int64_t v) {
  return std::find(s.begin(), s.end(), v) != s.end();
}

// Copies a block of `dims` from src (strides ss) to dst (strides ds),
// element size w; the innermost dimension contiguous in both is copied
// with memcpy.
void CopyBlock(const char* src, const std::vector<int64_t>& ss, char* dst,
               const std::vector<int64_t>& ds, const std::vector<int64_t>& dims, size_t w) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    std::memcpy(dst, src, w);
    return;
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  const int64_t inner = dims[rank - 1];
  const bool contiguous = ss[rank - 1] == 1 && ds[rank - 1] == 1;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t done = 0; done < total; done += inner) {
    int64_t so = 0, dO = 0;
    for (int64_t d = 0; d < rank - 1; ++d) {
      so += idx[d] * ss[d];
      dO += idx[d] * ds[d];
    }
    if (contiguous) {
      std::memcpy(dst + dO * w, src + so * w, inner * w);
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        std::memcpy(dst + (dO + i * ds[rank - 1]) * w, src + (so + i * ss[rank - 1]) * w, w);
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

absl::StatusOr<Value> Gather(Ctx& ctx, const hlo::HloInstruction& instr, const Array& operand_in,
                             const Array& indices) {
  const auto& dn = instr.proto().gather_dimension_numbers();
  if (dn.operand_batching_dims_size() > 0 || dn.start_indices_batching_dims_size() > 0) {
    return Unsupported("gather with operand_batching_dims");
  }
  absl::StatusOr<Array> opm = Materialize(ctx, operand_in);
  if (!opm.ok()) return opm.status();
  const Array& operand = *opm;
  const int64_t rank = operand.rank();
  const std::span<const int64_t> offset_dims(dn.offset_dims().data(), dn.offset_dims_size());
  const std::span<const int64_t> collapsed(dn.collapsed_slice_dims().data(), dn.collapsed_slice_dims_size());
  const std::span<const int64_t> start_map(dn.start_index_map().data(), dn.start_index_map_size());
  const auto& slice_sizes = instr.proto().gather_slice_sizes();
  const int64_t ivd = dn.index_vector_dim();
  std::vector<int64_t> idims = indices.dims();
  if (ivd < 0 || ivd > static_cast<int64_t>(idims.size())) {
    return Expected(absl::StrCat("index_vector_dim <= ", idims.size()), absl::StrCat(ivd));
  }
  if (ivd == static_cast<int64_t>(idims.size())) idims.push_back(1);
  if (slice_sizes.size() != rank || idims[ivd] != static_cast<int64_t>(start_map.size())) {
    return Expected(absl::StrCat(rank, " slice sizes and ", start_map.size(), " index components"),
                    absl::StrCat(slice_sizes.size(), " and ", idims[ivd]));
  }
  for (int64_t d : start_map) {
    if (d < 0 || d >= rank) return Expected(absl::StrCat("start_index_map below ", rank), DimsString(start_map));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dims()[d] ||
        (Contains(collapsed, d) && slice_sizes[d] > 1)) {
      return Expected(absl::StrCat("slice size within ", operand.dims()[d], " (1 at most for a collapsed dimension) in dimension ", d),
                      absl::StrCat(slice_sizes[d]));
    }
  }
  std::vector<int64_t> window_dims, window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(collapsed, d)) {
      window_dims.push_back(slice_sizes[d]);
      window_operand_dims.push_back(d);
    }
  }
  std::vector<int64_t> batch_dims;  // index dims other than ivd
  for (int64_t d = 0; d < static_cast<int64_t>(idims.size()); ++d) {
    if (d != ivd) batch_dims.push_back(idims[d]);
  }
  const std::vector<int64_t> out_dims = DimsOf(instr.shape());
  if (out_dims.size() != batch_dims.size() + window_dims.size() || offset_dims.size() != window_dims.size()) {
    return Expected(absl::StrCat("a result of rank ", batch_dims.size() + window_dims.size()),
                    ShapeProtoString(instr.shape()));
  }
  std::vector<int64_t> batch_out_dims;
  {
    size_t j = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(out_dims.size()); ++d) {
      if (Contains(offset_dims, d)) {
        if (out_dims[d] != window_dims[j++]) {
          return Expected(absl::StrCat("offset dimension ", d, " of the slice size"), ShapeProtoString(instr.shape()));
        }
      } else {
        batch_out_dims.push_back(d);
      }
    }
    for (size_t b = 0; b < batch_out_dims.size(); ++b) {
      if (batch_out_dims.size() != batch_dims.size() || out_dims[batch_out_dims[b]] != batch_dims[b]) {
        return Expected(absl::StrCat("batch dimensions ", DimsString(batch_dims)), ShapeProtoString(instr.shape()));
      }
    }
  }
  absl::StatusOr<std::vector<int64_t>> iv = IndexValues(ctx, indices);
  if (!iv.ok()) return iv.status();
  absl::StatusOr<Array> out = Alloc(ctx, operand.type(), out_dims);
  if (!out.ok()) return out.status();
  const std::vector<int64_t> ost = RowMajorStrides(out_dims);
  const std::vector<int64_t> xst = RowMajorStrides(operand.dims());
  const std::vector<int64_t> ist = RowMajorStrides(idims);
  std::vector<int64_t> src_st, dst_st;
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    src_st.push_back(xst[window_operand_dims[j]]);
    dst_st.push_back(ost[offset_dims[j]]);
  }
  const int64_t batches = Product(batch_dims);
  const size_t w = operand.element_bytes();
  ctx.pool->ParallelFor(batches, 64, [&](int64_t b0, int64_t b1) {
    std::vector<int64_t> bidx(batch_dims.size());
    for (int64_t b = b0; b < b1; ++b) {
      int64_t rem = b;
      for (int64_t d = static_cast<int64_t>(batch_dims.size()) - 1; d >= 0; --d) {
        bidx[d] = rem % batch_dims[d];
        rem /= batch_dims[d];
      }
      // Position of this batch in the indices (ivd component 0).
      int64_t ipos = 0;
      int64_t dst = 0;
      for (size_t d = 0, j = 0; d < idims.size(); ++d) {
        if (static_cast<int64_t>(d) == ivd) continue;
        ipos += bidx[j] * ist[d];
        dst += bidx[j] * ost[batch_out_dims[j]];
        ++j;
      }
      int64_t src = 0;
      for (size_t k = 0; k < start_map.size(); ++k) {
        const int64_t d = start_map[k];
        const int64_t start = std::clamp<int64_t>((*iv)[ipos + static_cast<int64_t>(k) * ist[ivd]], 0,
                                                  operand.dims()[d] - slice_sizes[d]);
        src += start * xst[d];
      }
      CopyBlock(operand.data() + src * w, src_st, out->mutable_data() + dst * w, dst_st, window_dims, w);
    }
  });
  return Value(*out);
}

template <class T>
T ScatterCombine(HloOpcode op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case HloOpcode::kAnd: case HloOpcode::kMultiply: case HloOpcode::kMinimum: return a && b;
      case HloOpcode::kXor: return a != b;
      default: return a || b;
    }
  } else if constexpr (kIsComplex<T>) {
    return op == HloOpcode::kMultiply ? a * b : a + b;
  } else {
    switch (op) {
      case HloOpcode::kAdd:
        if constexpr (kIsInt<T>) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
        else return a + b;
      case HloOpcode::kMultiply:
        if constexpr (kIsInt<T>) {
          using P = decltype(static_cast<std::make_unsigned_t<T>>(a) * 1u);
          return static_cast<T>(static_cast<P>(static_cast<std::make_unsigned_t<T>>(a)) *
                                static_cast<P>(static_cast<std::make_unsigned_t<T>>(b)));
        } else {
          return a * b;
        }
      case HloOpcode::kMaximum:
        if constexpr (kIsFloat<T>) { if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b; }
        return a > b ? a : b;
      case HloOpcode::kMinimum:
        if constexpr (kIsFloat<T>) { if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b; }
        return a < b ? a : b;
      default:
        if constexpr (kIsInt<T>) {
          if (op == HloOpcode::kAnd) return static_cast<T>(a & b);
          if (op == HloOpcode::kOr) return static_cast<T>(a | b);
          if (op == HloOpcode::kXor) return static_cast<T>(a ^ b);
        }
        return b;
    }
  }
}

absl::StatusOr<Value> Scatter(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const auto& dn = instr.proto().scatter_dimension_numbers();
  if (dn.input_batching_dims_size() > 0 || dn.scatter_indices_batching_dims_size() > 0) {
    return Unsupported("scatter with input_batching_dims");
  }
  if (ops.size() < 3 || ops.size() % 2 != 1) {
    return Expected("operands, indices and as many updates as operands", absl::StrCat(ops.size(), " operands"));
  }
  const size_t n = (ops.size() - 1) / 2;
  if (n != 1) return Unsupported("variadic scatter");
  const hlo::HloComputation* fn = instr.to_apply();
  if (!fn) return Expected("a to_apply computation", "none");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i)); !a.ok()) return a.status();
  }
  const Array& operand = ops[0]->array();
  const Array& indices = ops[1]->array();
  const Array& updates = ops[2]->array();
  if (updates.type() != operand.type()) {
    return Expected(absl::StrCat("updates of ", Sv(PrimitiveTypeName(operand.type()))), PrimitiveTypeName(updates.type()));
  }
  bool assign = false;
  const HloOpcode op = SimpleBinaryReducer(*fn, &assign);
  if (op == HloOpcode::kUnknown && !assign) {
    return Unsupported("a scatter whose combiner is not one add/multiply/maximum/minimum/and/or/xor or an overwrite");
  }
  const int64_t rank = operand.rank();
  const std::span<const int64_t> uwd(dn.update_window_dims().data(), dn.update_window_dims_size());
  const std::span<const int64_t> iwd(dn.inserted_window_dims().data(), dn.inserted_window_dims_size());
  const std::span<const int64_t> sdod(dn.scatter_dims_to_operand_dims().data(), dn.scatter_dims_to_operand_dims_size());
  const int64_t ivd = dn.index_vector_dim();
  std::vector<int64_t> idims = indices.dims();
  if (ivd < 0 || ivd > static_cast<int64_t>(idims.size())) {
    return Expected(absl::StrCat("index_vector_dim <= ", idims.size()), absl::StrCat(ivd));
  }
  if (ivd == static_cast<int64_t>(idims.size())) idims.push_back(1);
  if (idims[ivd] != static_cast<int64_t>(sdod.size()) || uwd.size() + iwd.size() != static_cast<size_t>(rank)) {
    return Expected("index components for each scatter_dims_to_operand_dims and window dims covering the operand",
                    absl::StrCat(idims[ivd], " components, ", uwd.size(), "+", iwd.size(), " window dims"));
  }
  for (int64_t d : sdod) {
    if (d < 0 || d >= rank) return Expected(absl::StrCat("scatter_dims_to_operand_dims below ", rank), DimsString(sdod));
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(iwd, d)) window_operand_dims.push_back(d);
  }
  std::vector<int64_t> scatter_dims_u, window_sizes;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (Contains(uwd, d)) window_sizes.push_back(updates.dims()[d]);
    else scatter_dims_u.push_back(d);
  }
  if (window_sizes.size() != window_operand_dims.size()) {
    return Expected(absl::StrCat(window_operand_dims.size(), " update window dims"), absl::StrCat(window_sizes.size()));
  }
  for (size_t j = 0; j < window_sizes.size(); ++j) {
    if (window_sizes[j] > operand.dims()[window_operand_dims[j]]) {
      return Expected(absl::StrCat("an update window within ", operand.ShapeString()), updates.ShapeString());
    }
  }
  // Update scatter dims = the indices' dims but ivd.
  {
    std::vector<int64_t> ib;
    for (int64_t d = 0; d < static_cast<int64_t>(idims.size()); ++d) {
      if (d != ivd) ib.push_back(idims[d]);
    }
    std::vector<int64_t> ub;
    for (int64_t d : scatter_dims_u) ub.push_back(updates.dims()[d]);
    if (ib != ub) return Expected(absl::StrCat("update scatter dims ", DimsString(ib)), updates.ShapeString());
  }
  absl::StatusOr<std::vector<int64_t>> iv = IndexValues(ctx, indices);
  if (!iv.ok()) return iv.status();
  // Work in the compute type (narrow floats in f32, rounded once at the end).
  absl::StatusOr<Array> xo = ToCompute(ctx, operand);
  if (!xo.ok()) return xo.status();
  absl::StatusOr<Array> uo = ToCompute(ctx, updates);
  if (!uo.ok()) return uo.status();
  absl::StatusOr<Array> uc = Materialize(ctx, *uo);
  if (!uc.ok()) return uc.status();
  Array out;
  if (xo->is_contiguous() && xo->storage_unique() && xo->type() == operand.type()) {
    out = *xo;  // the operand at its last use: updated in place
  } else {
    absl::StatusOr<Array> o = Alloc(ctx, xo->type(), xo->dims());
    if (!o.ok()) return o.status();
    CopyStrided(ctx, *xo, o->mutable_data());
    out = *o;
  }
  const std::vector<int64_t> xst = RowMajorStrides(operand.dims());
  const std::vector<int64_t> ust = RowMajorStrides(updates.dims());
  const std::vector<int64_t> ist = RowMajorStrides(idims);
  std::vector<int64_t> scatter_sizes;
  for (int64_t d : scatter_dims_u) scatter_sizes.push_back(updates.dims()[d]);
  const int64_t count = Product(scatter_sizes);
  const int64_t window_count = Product(window_sizes);
  bool ok = DispatchCType(CTypeOf(out.type()), [&]<class T>() {
    T* po = out.mutable_data<T>();
    const T* pu = uc->data<T>();
    std::vector<int64_t> sidx(scatter_sizes.size()), start(rank), widx(window_sizes.size());
    for (int64_t s = 0; s < count; ++s) {
      int64_t rem = s;
      for (int64_t d = static_cast<int64_t>(scatter_sizes.size()) - 1; d >= 0; --d) {
        sidx[d] = rem % scatter_sizes[d];
        rem /= scatter_sizes[d];
      }
      int64_t ipos = 0, ubase = 0;
      for (size_t d = 0, j = 0; d < idims.size(); ++d) {
        if (static_cast<int64_t>(d) == ivd) continue;
        ipos += sidx[j] * ist[d];
        ubase += sidx[j] * ust[scatter_dims_u[j]];
        ++j;
      }
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < sdod.size(); ++k) start[sdod[k]] = (*iv)[ipos + static_cast<int64_t>(k) * ist[ivd]];
      // The whole window must fit, else the update is skipped.
      bool fits = true;
      for (int64_t d = 0; d < rank && fits; ++d) {
        int64_t size = 1;
        for (size_t j = 0; j < window_operand_dims.size(); ++j) {
          if (window_operand_dims[j] == d) size = window_sizes[j];
        }
        fits = start[d] >= 0 && start[d] <= operand.dims()[d] - size;
      }
      if (!fits) continue;
      int64_t xbase = 0;
      for (int64_t d = 0; d < rank; ++d) xbase += start[d] * xst[d];
      std::fill(widx.begin(), widx.end(), 0);
      for (int64_t e = 0; e < window_count; ++e) {
        int64_t xo_ = xbase, uo_ = ubase;
        for (size_t j = 0; j < widx.size(); ++j) {
          xo_ += widx[j] * xst[window_operand_dims[j]];
          uo_ += widx[j] * ust[uwd[j]];
        }
        po[xo_] = assign ? pu[uo_] : ScatterCombine(op, po[xo_], pu[uo_]);
        for (int64_t d = static_cast<int64_t>(widx.size()) - 1; d >= 0; --d) {
          if (++widx[d] < window_sizes[d]) break;
          widx[d] = 0;
        }
      }
    }
  });
  if (!ok) return Unsupported("scatter of this element type");
  absl::StatusOr<Array> r = ConvertArray(ctx, out, operand.type());
  if (!r.ok()) return r.status();
  WrapSubByte(*r);
  return Value(*r);
}

}  // namespace

absl::StatusOr<Value> EvalIndexing(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  if (instr.opcode() == HloOpcode::kGather) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, 0);
    if (!a.ok()) return a.status();
    absl::StatusOr<const Array*> i = ArrayOperand(ops, 1);
    if (!i.ok()) return i.status();
    return Gather(ctx, instr, **a, **i);
  }
  return Scatter(ctx, instr, ops);
}

}  // namespace decomposed::eval::internal
