// Shape ops: broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, iota, constant
// (docs/eval.md §4.2). Broadcast is a strided view; reshape and a
// layout-preserving bitcast share their operand's storage; the others
// copy with the threaded strided copy.
#include <algorithm>
#include <cstring>

#include "decomposed/eval/literal.h"
#include "decomposed/hlo/text.h"
#include "src/eval/loops.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

// Copies `src` (any strides) to `dst` + offsets by `dst_strides` (in
// elements), element for element.
void StridedAssign(const Ctx& ctx, const Array& src, char* dst,
                   const std::vector<int64_t>& dst_strides) {
  std::array<std::vector<int64_t>, 2> st = {src.EffectiveStrides(), dst_strides};
  StridedPlan<2> plan = PlanStrided<2>(src.dims(), st);
  auto go = [&]<class T>() {
    const T* in = reinterpret_cast<const T*>(src.data());
    T* out = reinterpret_cast<T*>(dst);
    ForEachStrided<2>(ctx.pool, plan, kElementwiseGrain,
                      [&](int64_t, const std::array<int64_t, 2>& off,
                          const std::array<int64_t, 2>& s, int64_t n) {
                        const T* a = in + off[0];
                        T* o = out + off[1];
                        if (s[0] == 1 && s[1] == 1) {
                          std::memcpy(o, a, n * sizeof(T));
                        } else {
                          for (int64_t i = 0; i < n; ++i) o[i * s[1]] = a[i * s[0]];
                        }
                      });
  };
  switch (src.element_bytes()) {
    case 1: go.operator()<uint8_t>(); break;
    case 2: go.operator()<uint16_t>(); break;
    case 4: go.operator()<uint32_t>(); break;
    case 8: go.operator()<uint64_t>(); break;
    default: go.operator()<c128>(); break;
  }
}

// Fills contiguous `a` with the scalar `v` (same type).
void Fill(const Ctx& ctx, Array& a, const Array& scalar) {
  Array view = Array::View(scalar, a.dims(), std::vector<int64_t>(a.dims().size(), 0));
  if (a.element_count() == 0) return;
  if (a.rank() == 0) {
    std::memcpy(a.mutable_data(), scalar.data(), a.element_bytes());
    return;
  }
  CopyStrided(ctx, view, a.mutable_data());
}

absl::StatusOr<int64_t> ScalarIndex(const Value& v, int64_t which) {
  if (!v.is_array() || v.array().rank() != 0) {
    return Expected(absl::StrCat("a scalar index as operand ", which), v.ShapeString());
  }
  const Array& a = v.array();
  switch (KindOf(a.type())) {
    case ElementKind::kSigned: return SignedValue(a.type(), a.data());
    case ElementKind::kUnsigned: {
      uint64_t u = UnsignedValue(a.type(), a.data());
      return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
    }
    default:
      return Expected(absl::StrCat("an integer index as operand ", which),
                      PrimitiveTypeName(a.type()));
  }
}

std::vector<int64_t> LayoutMinorToMajor(const xla::ShapeProto& s) {
  std::vector<int64_t> m(s.layout().minor_to_major().begin(), s.layout().minor_to_major().end());
  if (m.size() != static_cast<size_t>(s.dimensions_size())) {
    m.clear();
    for (int64_t d = s.dimensions_size() - 1; d >= 0; --d) m.push_back(d);
  }
  return m;
}

// The array `a` permuted so that result dim k is a's dim perm[k]
// (contiguous).
absl::StatusOr<Array> Permute(const Ctx& ctx, const Array& a, std::span<const int64_t> perm) {
  std::vector<int64_t> strides = a.EffectiveStrides();
  std::vector<int64_t> dims(perm.size()), st(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    dims[k] = a.dims()[perm[k]];
    st[k] = strides[perm[k]];
  }
  return Materialize(ctx, Array::View(a, dims, st));
}

absl::Status CheckPermutation(std::span<const int64_t> perm, int64_t rank) {
  std::vector<char> seen(rank, 0);
  if (static_cast<int64_t>(perm.size()) != rank) {
    return Expected(absl::StrCat("a permutation of ", rank, " dimensions"), DimsString(perm));
  }
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return Expected(absl::StrCat("a permutation of ", rank, " dimensions"), DimsString(perm));
    }
    seen[p] = 1;
  }
  return absl::OkStatus();
}

absl::StatusOr<Array> Bitcast(Ctx& ctx, const hlo::HloInstruction& instr, const Array& a) {
  const xla::ShapeProto& rs = instr.shape();
  const xla::ShapeProto& os = instr.operand(0)->shape();
  const std::vector<int64_t> rdims = DimsOf(rs);
  const PrimitiveType rtype = ResultType(ctx, instr);
  if (Product(rdims) * static_cast<int64_t>(Info(rtype).element_bytes) !=
      a.element_count() * static_cast<int64_t>(a.element_bytes())) {
    return Expected(absl::StrCat("a result of ", a.byte_size(), " bytes (", a.ShapeString(), ")"),
                    ShapeProtoString(rs));
  }
  // Physical order: the operand's elements in its layout's major-to-minor
  // order are the result's in its own.
  std::vector<int64_t> om = LayoutMinorToMajor(os), rm = LayoutMinorToMajor(rs);
  std::vector<int64_t> operand_perm(om.rbegin(), om.rend());
  std::vector<int64_t> result_phys(rm.rbegin(), rm.rend());
  if (CheckPermutation(operand_perm, a.rank()).ok() == false ||
      CheckPermutation(result_phys, static_cast<int64_t>(rdims.size())).ok() == false) {
    return Invalid("bitcast: a layout is not a permutation of its dimensions");
  }
  absl::StatusOr<Array> phys = Permute(ctx, a, operand_perm);
  if (!phys.ok()) return phys.status();
  std::vector<int64_t> pdims;
  for (int64_t d : result_phys) pdims.push_back(rdims[d]);
  Array p = phys->Retyped(rtype);
  absl::StatusOr<Array> shaped = p.Reshaped(pdims);
  if (!shaped.ok()) return shaped.status();
  // Back to logical order: logical dim d is physical position pos[d].
  std::vector<int64_t> inverse(result_phys.size());
  for (size_t k = 0; k < result_phys.size(); ++k) inverse[result_phys[k]] = static_cast<int64_t>(k);
  absl::StatusOr<Array> r = Permute(ctx, *shaped, inverse);
  if (!r.ok() || rtype == a.type() || (rtype != PrimitiveType::kPred && SubByteBits(rtype) == 0)) return r;
  // Bytes of another type read as PRED or a sub-byte integer: every
  // element is brought to the form the kernels rely on (PRED 0 or 1, S4
  // sign-extended), as XLA's bitcast of such bytes reads them.
  absl::StatusOr<Array> m = Materialize(ctx, *r);
  if (!m.ok()) return m.status();
  return Array::Copy(rtype, m->dims(), m->bytes());
}

absl::StatusOr<Value> Iota(Ctx& ctx, const hlo::HloInstruction& instr) {
  const std::vector<int64_t> dims = DimsOf(instr.shape());
  const int64_t dim = instr.iota_dimension();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) {
    return Expected(absl::StrCat("an iota_dimension below ", dims.size()), absl::StrCat(dim));
  }
  const PrimitiveType t = ResultType(ctx, instr);
  const bool floating = KindOf(t) == ElementKind::kReal || KindOf(t) == ElementKind::kComplex;
  const PrimitiveType via = floating ? PrimitiveType::kF64 : PrimitiveType::kS64;
  // One row of values [0, dims[dim]), broadcast to the result, converted.
  absl::StatusOr<Array> row = Alloc(ctx, via, {dims[dim]});
  if (!row.ok()) return row.status();
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (floating) row->mutable_data<double>()[i] = static_cast<double>(i);
    else row->mutable_data<int64_t>()[i] = i;
  }
  std::vector<int64_t> st(dims.size(), 0);
  st[dim] = 1;
  Array view = Array::View(*row, dims, st);
  absl::StatusOr<Array> conv = ConvertArray(ctx, view, t);
  if (!conv.ok()) return conv.status();
  absl::StatusOr<Array> out = Materialize(ctx, *conv);
  if (!out.ok()) return out.status();
  return Value(*out);
}

absl::StatusOr<Value> Pad(Ctx& ctx, const hlo::HloInstruction& instr, const Array& a,
                          const Array& pad_value) {
  const auto& cfg = instr.proto().padding_config();
  if (cfg.dimensions_size() != a.rank() || pad_value.rank() != 0 ||
      pad_value.type() != a.type()) {
    return Expected(absl::StrCat("a padding_config of ", a.rank(),
                                 " dimensions and a scalar padding value of ",
                                 Sv(PrimitiveTypeName(a.type()))),
                    absl::StrCat(cfg.dimensions_size(), " dimensions, ", pad_value.ShapeString()));
  }
  std::vector<int64_t> out_dims(a.rank());
  for (int64_t d = 0; d < a.rank(); ++d) {
    const auto& p = cfg.dimensions(d);
    if (p.interior_padding() < 0) {
      return Expected("interior_padding >= 0", absl::StrCat(p.interior_padding()));
    }
    const int64_t n = a.dims()[d];
    out_dims[d] = p.edge_padding_low() + p.edge_padding_high() + n +
                  (n > 0 ? (n - 1) * p.interior_padding() : 0);
    if (out_dims[d] < 0) {
      return Expected("a padded dimension >= 0", absl::StrCat(out_dims[d]));
    }
  }
  if (out_dims != DimsOf(instr.shape())) {
    return Expected(absl::StrCat("result dims ", DimsString(out_dims)), ShapeProtoString(instr.shape()));
  }
  absl::StatusOr<Array> out = Alloc(ctx, a.type(), out_dims);
  if (!out.ok()) return out.status();
  Fill(ctx, *out, pad_value);
  // The operand elements that land inside the result.
  std::vector<int64_t> src_dims(a.rank()), src_off(a.rank()), dst_st(a.rank());
  const std::vector<int64_t> ost = RowMajorStrides(out_dims);
  const std::vector<int64_t> ast = a.EffectiveStrides();
  int64_t src_offset = 0, dst_offset = 0;
  for (int64_t d = 0; d < a.rank(); ++d) {
    const auto& p = cfg.dimensions(d);
    const int64_t s = p.interior_padding() + 1;
    const int64_t lo = p.edge_padding_low();
    const int64_t n = a.dims()[d];
    int64_t first = lo >= 0 ? 0 : (-lo + s - 1) / s;
    int64_t last = n;  // exclusive
    // Position lo + i*s must be < out_dims[d].
    if (n > 0) {
      const int64_t max_i = lo < out_dims[d] ? (out_dims[d] - 1 - lo) / s + 1 : 0;
      last = std::min(n, std::max<int64_t>(max_i, 0));
    }
    if (first >= last) return Value(*out);  // nothing of the operand shows
    src_dims[d] = last - first;
    src_offset += first * ast[d];
    dst_offset += (lo + first * s) * ost[d];
    dst_st[d] = s * ost[d];
  }
  Array src = Array::View(a, src_dims, ast, src_offset);
  StridedAssign(ctx, src, out->mutable_data() + dst_offset * static_cast<int64_t>(a.element_bytes()),
                dst_st);
  return Value(*out);
}

}  // namespace

absl::StatusOr<Value> EvalConstant(Ctx& ctx, const hlo::HloInstruction& instr) {
  if (hlo::IsElidedLiteral(instr.proto().literal())) {
    return Unsupported(absl::StrCat(
        "the constant's data was left out of the HLO text it was read from (",
        ShapeProtoString(instr.shape()), " printed as {...})"));
  }
  absl::StatusOr<Value> v = ValueFromLiteral(instr.proto().literal(), ctx.max_bytes);
  if (!v.ok()) return v.status();
  if (v->is_array()) {
    absl::StatusOr<Array> c = ConvertArray(ctx, v->array(), ctx.policy->StorageType(v->array().type()));
    if (!c.ok()) return c.status();
    return Value(*c);
  }
  return v;
}

absl::StatusOr<Value> EvalShapeOp(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kIota) return Iota(ctx, instr);
  absl::StatusOr<const Array*> first = ArrayOperand(ops, 0);
  if (!first.ok()) return first.status();
  const Array& a = **first;
  const std::vector<int64_t> rdims = DimsOf(instr.shape());
  switch (op) {
    case HloOpcode::kBroadcast: {
      const auto bd = instr.dimensions();
      if (static_cast<int64_t>(bd.size()) != a.rank()) {
        return Expected(absl::StrCat(a.rank(), " broadcast dimensions (the operand's rank)"),
                        DimsString(bd));
      }
      std::vector<int64_t> st(rdims.size(), 0);
      const std::vector<int64_t> ast = a.EffectiveStrides();
      for (size_t i = 0; i < bd.size(); ++i) {
        if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(rdims.size()) ||
            rdims[bd[i]] != a.dims()[i] || (i > 0 && bd[i] <= bd[i - 1])) {
          return Expected(absl::StrCat("increasing dimensions mapping ", a.ShapeString(),
                                       " into ", ShapeProtoString(instr.shape())),
                          DimsString(bd));
        }
        st[bd[i]] = ast[i];
      }
      return Value(Array::View(a, rdims, st));
    }
    case HloOpcode::kReshape: {
      absl::StatusOr<Array> m = Materialize(ctx, a);
      if (!m.ok()) return m.status();
      absl::StatusOr<Array> r = m->Reshaped(rdims);
      if (!r.ok()) return r.status();
      return Value(*r);
    }
    case HloOpcode::kBitcast: {
      absl::StatusOr<Array> r = Bitcast(ctx, instr, a);
      if (!r.ok()) return r.status();
      return Value(*r);
    }
    case HloOpcode::kTranspose: {
      const auto perm = instr.dimensions();
      if (absl::Status s = CheckPermutation(perm, a.rank()); !s.ok()) return s;
      absl::StatusOr<Array> r = Permute(ctx, a, perm);
      if (!r.ok()) return r.status();
      return Value(*r);
    }
    case HloOpcode::kSlice: {
      const auto& sd = instr.proto().slice_dimensions();
      if (sd.size() != a.rank()) {
        return Expected(absl::StrCat(a.rank(), " slice dimensions"), absl::StrCat(sd.size()));
      }
      std::vector<int64_t> dims(a.rank()), st(a.rank());
      const std::vector<int64_t> ast = a.EffectiveStrides();
      int64_t offset = 0;
      for (int64_t d = 0; d < a.rank(); ++d) {
        const int64_t lo = sd[d].start(), hi = sd[d].limit();
        const int64_t stride = sd[d].stride() == 0 ? 1 : sd[d].stride();
        if (lo < 0 || hi < lo || hi > a.dims()[d] || stride < 1) {
          return Expected(absl::StrCat("0 <= start <= limit <= ", a.dims()[d],
                                       " and stride >= 1 in dimension ", d),
                          absl::StrCat("[", lo, ":", hi, ":", stride, "]"));
        }
        dims[d] = (hi - lo + stride - 1) / stride;
        st[d] = ast[d] * stride;
        offset += lo * ast[d];
      }
      absl::StatusOr<Array> r = Materialize(ctx, Array::View(a, dims, st, offset));
      if (!r.ok()) return r.status();
      return Value(*r);
    }
    case HloOpcode::kDynamicSlice: {
      const auto sizes = instr.proto().dynamic_slice_sizes();
      if (sizes.size() != a.rank() || static_cast<int64_t>(ops.size()) != a.rank() + 1) {
        return Expected(absl::StrCat(a.rank(), " slice sizes and ", a.rank(), " start indices"),
                        absl::StrCat(sizes.size(), " and ", ops.size() - 1));
      }
      std::vector<int64_t> dims(a.rank());
      const std::vector<int64_t> ast = a.EffectiveStrides();
      int64_t offset = 0;
      for (int64_t d = 0; d < a.rank(); ++d) {
        if (sizes[d] < 0 || sizes[d] > a.dims()[d]) {
          return Expected(absl::StrCat("a slice size within ", a.dims()[d], " in dimension ", d),
                          absl::StrCat(sizes[d]));
        }
        absl::StatusOr<int64_t> start = ScalarIndex(*ops[d + 1], d + 1);
        if (!start.ok()) return start.status();
        // XLA clamps the start so that the slice fits.
        const int64_t s = std::clamp<int64_t>(*start, 0, a.dims()[d] - sizes[d]);
        dims[d] = sizes[d];
        offset += s * ast[d];
      }
      absl::StatusOr<Array> r = Materialize(ctx, Array::View(a, dims, ast, offset));
      if (!r.ok()) return r.status();
      return Value(*r);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      absl::StatusOr<const Array*> upd = ArrayOperand(ops, 1);
      if (!upd.ok()) return upd.status();
      const Array& u = **upd;
      if (u.rank() != a.rank() || u.type() != a.type() ||
          static_cast<int64_t>(ops.size()) != a.rank() + 2) {
        return Expected(absl::StrCat("an update of rank ", a.rank(), " and type ",
                                     Sv(PrimitiveTypeName(a.type())), " and ", a.rank(),
                                     " start indices"),
                        absl::StrCat(u.ShapeString(), " and ", ops.size() - 2, " indices"));
      }
      // In place when this instruction holds the operand's only reference
      // (the driver released it at its last use: the KV-cache update).
      Array out;
      if (a.is_contiguous() && a.storage_unique()) {
        out = a;
      } else {
        absl::StatusOr<Array> o = Alloc(ctx, a.type(), a.dims());
        if (!o.ok()) return o.status();
        CopyStrided(ctx, a, o->mutable_data());
        out = *o;
      }
      const std::vector<int64_t> ost = RowMajorStrides(a.dims());
      int64_t offset = 0;
      for (int64_t d = 0; d < a.rank(); ++d) {
        if (u.dims()[d] > a.dims()[d]) {
          return Expected(absl::StrCat("an update within ", a.ShapeString()), u.ShapeString());
        }
        absl::StatusOr<int64_t> start = ScalarIndex(*ops[d + 2], d + 2);
        if (!start.ok()) return start.status();
        const int64_t s = std::clamp<int64_t>(*start, 0, a.dims()[d] - u.dims()[d]);
        offset += s * ost[d];
      }
      if (u.element_count() > 0) {
        StridedAssign(ctx, u, out.mutable_data() + offset * static_cast<int64_t>(a.element_bytes()), ost);
      }
      return Value(out);
    }
    case HloOpcode::kConcatenate: {
      const auto cd = instr.dimensions();
      if (cd.size() != 1 || cd[0] < 0 || cd[0] >= a.rank()) {
        return Expected(absl::StrCat("one concatenate dimension below ", a.rank()), DimsString(cd));
      }
      const int64_t dim = cd[0];
      std::vector<int64_t> out_dims = a.dims();
      out_dims[dim] = 0;
      for (size_t i = 0; i < ops.size(); ++i) {
        absl::StatusOr<const Array*> o = ArrayOperand(ops, static_cast<int64_t>(i));
        if (!o.ok()) return o.status();
        std::vector<int64_t> dd = (*o)->dims();
        if ((*o)->type() != a.type() || (*o)->rank() != a.rank()) {
          return Expected(absl::StrCat("operands like ", a.ShapeString()), (*o)->ShapeString());
        }
        out_dims[dim] += dd[dim];
        dd[dim] = a.dims()[dim];
        if (dd != a.dims()) {
          return Expected(absl::StrCat("operands like ", a.ShapeString(), " but in dimension ", dim),
                          (*o)->ShapeString());
        }
      }
      if (out_dims != rdims) {
        return Expected(absl::StrCat("result dims ", DimsString(out_dims)), ShapeProtoString(instr.shape()));
      }
      absl::StatusOr<Array> out = Alloc(ctx, a.type(), out_dims);
      if (!out.ok()) return out.status();
      const std::vector<int64_t> ost = RowMajorStrides(out_dims);
      int64_t at = 0;
      for (const Value* v : ops) {
        const Array& o = v->array();
        if (o.element_count() > 0) {
          StridedAssign(ctx, o, out->mutable_data() + at * ost[dim] * static_cast<int64_t>(a.element_bytes()), ost);
        }
        at += o.dims()[dim];
      }
      return Value(*out);
    }
    case HloOpcode::kPad: {
      absl::StatusOr<const Array*> pv = ArrayOperand(ops, 1);
      if (!pv.ok()) return pv.status();
      return Pad(ctx, instr, a, **pv);
    }
    case HloOpcode::kReverse: {
      std::vector<int64_t> st = a.EffectiveStrides();
      int64_t offset = 0;
      for (int64_t d : instr.dimensions()) {
        if (d < 0 || d >= a.rank()) {
          return Expected(absl::StrCat("reverse dimensions below ", a.rank()), DimsString(instr.dimensions()));
        }
        if (a.dims()[d] > 0 && st[d] != 0) {
          offset += (a.dims()[d] - 1) * st[d];
          st[d] = -st[d];
        }
      }
      absl::StatusOr<Array> r = Materialize(ctx, Array::View(a, a.dims(), st, offset));
      if (!r.ok()) return r.status();
      if (r->SharesStorageWith(a) && !a.is_contiguous()) {
        // A reversed broadcast is the broadcast itself.
      }
      return Value(*r);
    }
    case HloOpcode::kGetDimensionSize: {
      const auto d = instr.dimensions();
      if (d.size() != 1 || d[0] < 0 || d[0] >= a.rank()) {
        return Expected(absl::StrCat("one dimension below ", a.rank()), DimsString(d));
      }
      absl::StatusOr<Array> r = Alloc(ctx, PrimitiveType::kS32, {});
      if (!r.ok()) return r.status();
      r->mutable_data<int32_t>()[0] = static_cast<int32_t>(a.dims()[d[0]]);
      return Value(*r);
    }
    default:
      return Unsupported(absl::StrCat("shape op ", Sv(instr.opcode_string())));
  }
}

}  // namespace decomposed::eval::internal
