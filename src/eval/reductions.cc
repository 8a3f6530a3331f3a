// Reductions: reduce (variadic, any reducer), reduce-window,
// select-and-scatter, map (docs/eval.md §4.4).
//
// A reducer that is one add/multiply/maximum/minimum/and/or/xor of its two
// parameters runs as a kernel, accumulating in the type the numerics
// policy names (f64 for real-float add and multiply). Any other reducer
// whose instructions are all elementwise runs lifted: the computation is
// evaluated on whole arrays, pairing the first half of the reduced
// elements with the second (a tree, log2(n) evaluations). Only reducers
// that are not elementwise fall back to one scalar evaluation per element.
#include <algorithm>
#include <cstring>

#include "src/eval/loops.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

template <class T>
T Combine(HloOpcode op, T a, T b) {
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
        if constexpr (kIsFloat<T>) { if (std::isnan(a)) return a; if (std::isnan(b)) return b; }
        return a > b ? a : b;
      case HloOpcode::kMinimum:
        if constexpr (kIsFloat<T>) { if (std::isnan(a)) return a; if (std::isnan(b)) return b; }
        return a < b ? a : b;
      case HloOpcode::kAnd: if constexpr (kIsInt<T>) return static_cast<T>(a & b); else return a;
      case HloOpcode::kOr: if constexpr (kIsInt<T>) return static_cast<T>(a | b); else return a;
      case HloOpcode::kXor: if constexpr (kIsInt<T>) return static_cast<T>(a ^ b); else return a;
      default: return a;
    }
  }
}

bool Supports(HloOpcode op, CType c) {
  const bool logical = op == HloOpcode::kAnd || op == HloOpcode::kOr || op == HloOpcode::kXor;
  if (c == CType::kF32 || c == CType::kF64) return !logical;
  if (c == CType::kC64 || c == CType::kC128) return op == HloOpcode::kAdd || op == HloOpcode::kMultiply;
  return true;
}

// Permutes `a` so that `kept` dims come first, then `reduced`; contiguous.
absl::StatusOr<Array> KeptThenReduced(const Ctx& ctx, const Array& a, const std::vector<int64_t>& kept,
                                      const std::vector<int64_t>& reduced) {
  std::vector<int64_t> st = a.EffectiveStrides(), dims, pst;
  for (int64_t d : kept) { dims.push_back(a.dims()[d]); pst.push_back(st[d]); }
  for (int64_t d : reduced) { dims.push_back(a.dims()[d]); pst.push_back(st[d]); }
  return Materialize(ctx, Array::View(a, dims, pst));
}

// reduce of one operand with a simple reducer: [O, R] -> [O].
absl::StatusOr<Array> FastReduce(Ctx& ctx, HloOpcode op, const Array& in, const Array& init,
                                 const std::vector<int64_t>& kept, const std::vector<int64_t>& reduced,
                                 const std::vector<int64_t>& out_dims) {
  absl::StatusOr<Array> x = ToCompute(ctx, in);
  if (!x.ok()) return x.status();
  absl::StatusOr<Array> xi = ToCompute(ctx, init);
  if (!xi.ok()) return xi.status();
  const PrimitiveType storage = in.type();
  const PrimitiveType compute = x->type();
  PrimitiveType acc_type = compute;
  if (op == HloOpcode::kAdd || op == HloOpcode::kMultiply) {
    acc_type = ctx.policy->ReduceAccumulationType(storage);
    if (KindOf(compute) != ElementKind::kReal && KindOf(compute) != ElementKind::kComplex) acc_type = compute;
  }
  int64_t O = 1, R = 1;
  for (int64_t d : kept) O *= in.dims()[d];
  for (int64_t d : reduced) R *= in.dims()[d];
  absl::StatusOr<Array> out = Alloc(ctx, acc_type, out_dims);
  if (!out.ok()) return out.status();
  absl::StatusOr<Array> ia = ConvertArray(ctx, *xi, acc_type);
  if (!ia.ok()) return ia.status();
  absl::StatusOr<Array> xc = Materialize(ctx, *x);
  if (!xc.ok()) return xc.status();
  // Reduced dims all before the kept ones (sum over a batch): accumulate
  // rows, vectorised over O, without a transpose.
  bool leading = true;
  for (size_t i = 0; i < reduced.size(); ++i) leading &= reduced[i] == static_cast<int64_t>(i);
  bool ok = Supports(op, CTypeOf(acc_type));
  // The input stays in its compute type; each element is widened to the
  // accumulation type as it is added (no widened copy of the input).
  auto kernel = [&]<class T, class A>() {
    const A init_v = *ia->data<A>();
    A* po = out->mutable_data<A>();
    if (leading && !reduced.empty()) {
      const T* px = xc->data<T>();
      ctx.pool->ParallelFor(O, 1024, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) po[o] = init_v;
        for (int64_t r = 0; r < R; ++r) {
          const T* row = px + r * O;
          for (int64_t o = b; o < e; ++o) po[o] = Combine(op, po[o], static_cast<A>(row[o]));
        }
      });
      return;
    }
    absl::StatusOr<Array> m = KeptThenReduced(ctx, *xc, kept, reduced);
    if (!m.ok()) { ok = false; return; }
    const T* px = m->data<T>();
    ctx.pool->ParallelFor(O, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(R, 1)),
                          [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = px + o * R;
        if (op == HloOpcode::kAdd && !std::is_same_v<A, bool>) {
          // Four partial sums: independent chains the compiler vectorises.
          A s0 = A(0), s1 = A(0), s2 = A(0), s3 = A(0);
          int64_t r = 0;
          for (; r + 4 <= R; r += 4) {
            s0 = Combine(op, s0, static_cast<A>(row[r])); s1 = Combine(op, s1, static_cast<A>(row[r + 1]));
            s2 = Combine(op, s2, static_cast<A>(row[r + 2])); s3 = Combine(op, s3, static_cast<A>(row[r + 3]));
          }
          for (; r < R; ++r) s0 = Combine(op, s0, static_cast<A>(row[r]));
          po[o] = Combine(op, init_v, Combine(op, Combine(op, s0, s1), Combine(op, s2, s3)));
        } else {
          A acc = init_v;
          for (int64_t r = 0; r < R; ++r) acc = Combine(op, acc, static_cast<A>(row[r]));
          po[o] = acc;
        }
      }
    });
  };
  if (ok) {
    ok = DispatchCType(CTypeOf(compute), [&]<class T>() {
      if (acc_type == compute) {
        kernel.template operator()<T, T>();
      } else if constexpr (std::is_same_v<T, float>) {
        kernel.template operator()<float, double>();
      } else if constexpr (std::is_same_v<T, c64>) {
        kernel.template operator()<c64, c128>();
      } else if constexpr (std::is_same_v<T, double>) {
        kernel.template operator()<double, double>();
      } else {
        ok = false;
      }
    }) && ok;
  }
  if (!ok) return Unsupported(absl::StrCat("a ", Sv(hlo::HloOpcodeString(op)), " reducer over ",
                                           Sv(PrimitiveTypeName(storage))));
  return ConvertArray(ctx, *out, storage);
}

// Slices columns [c0, c0 + n) of a contiguous [O, R] array as a view.
Array Columns(const Array& a, int64_t O, int64_t R, int64_t c0, int64_t n) {
  return Array::View(a, {O, n}, {R, 1}, c0);
}

absl::StatusOr<std::vector<Array>> AsArrays(const Value& v, size_t n) {
  std::vector<Array> out;
  if (n == 1) {
    if (!v.is_array()) return Expected("a reducer returning an array", v.ShapeString());
    out.push_back(v.array());
    return out;
  }
  if (!v.is_tuple() || v.element_count() != n) {
    return Expected(absl::StrCat("a reducer returning a tuple of ", n), v.ShapeString());
  }
  for (const Value& e : v.elements()) {
    if (!e.is_array()) return Expected("a tuple of arrays", v.ShapeString());
    out.push_back(e.array());
  }
  return out;
}

// Any reducer: a tree of lifted evaluations ([O, R] halves paired), or
// one scalar evaluation per element where the reducer is not elementwise.
absl::StatusOr<std::vector<Array>> GenericReduce(Ctx& ctx, const hlo::HloComputation& reducer,
                                                 std::vector<Array> xs, const std::vector<Array>& inits,
                                                 int64_t O, int64_t R) {
  const size_t n = xs.size();
  if (IsLiftable(reducer)) {
    while (R > 1) {
      const int64_t half = R / 2;
      std::vector<Value> args;
      for (size_t i = 0; i < n; ++i) args.push_back(Columns(xs[i], O, R, 0, half));
      for (size_t i = 0; i < n; ++i) args.push_back(Columns(xs[i], O, R, half, half));
      absl::StatusOr<Value> r = CallLifted(ctx, reducer, args);
      if (!r.ok()) return r.status();
      absl::StatusOr<std::vector<Array>> parts = AsArrays(*r, n);
      if (!parts.ok()) return parts.status();
      const int64_t next = half + (R % 2);
      for (size_t i = 0; i < n; ++i) {
        Array& p = (*parts)[i];
        if (p.type() != xs[i].type()) {
          return Expected(absl::StrCat("a reducer result of ", Sv(PrimitiveTypeName(xs[i].type()))),
                          PrimitiveTypeName(p.type()));
        }
        absl::StatusOr<Array> merged = Alloc(ctx, p.type(), {O, next});
        if (!merged.ok()) return merged.status();
        const size_t w = p.element_bytes();
        absl::StatusOr<Array> pc = Materialize(ctx, p.rank() == 0 ? Array::View(p, {O, half}, {0, 0}) : p);
        if (!pc.ok()) return pc.status();
        for (int64_t o = 0; o < O; ++o) {
          std::memcpy(merged->mutable_data() + o * next * w, pc->data() + o * half * w, half * w);
          if (R % 2) {
            std::memcpy(merged->mutable_data() + (o * next + half) * w,
                        xs[i].data() + (o * R + R - 1) * w, w);
          }
        }
        xs[i] = *merged;
      }
      R = next;
    }
    std::vector<Value> args;
    for (size_t i = 0; i < n; ++i) args.push_back(inits[i]);
    for (size_t i = 0; i < n; ++i) {
      if (R == 0) {
        args.push_back(inits[i]);
      } else {
        absl::StatusOr<Array> col = xs[i].Reshaped({O});
        if (!col.ok()) return col.status();
        args.push_back(*col);
      }
    }
    absl::StatusOr<Value> r = CallLifted(ctx, reducer, args);
    if (!r.ok()) return r.status();
    absl::StatusOr<std::vector<Array>> res = AsArrays(*r, n);
    if (!res.ok()) return res.status();
    for (Array& a : *res) {
      if (a.rank() == 0 && O != 1) {
        absl::StatusOr<Array> b = Materialize(ctx, Array::View(a, {O}, {0}));
        if (!b.ok()) return b.status();
        a = *b;
      }
      absl::StatusOr<Array> c = Materialize(ctx, a);
      if (!c.ok()) return c.status();
      a = *c;
    }
    return res;
  }
  // Scalar evaluation, element by element, in order.
  std::vector<Array> out;
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<Array> a = Alloc(ctx, xs[i].type(), {O});
    if (!a.ok()) return a.status();
    out.push_back(*a);
  }
  for (int64_t o = 0; o < O; ++o) {
    std::vector<Value> acc(inits.begin(), inits.end());
    for (int64_t r = 0; r < R; ++r) {
      std::vector<Value> args = acc;
      for (size_t i = 0; i < n; ++i) {
        const size_t w = xs[i].element_bytes();
        absl::StatusOr<Array> e = Array::Copy(xs[i].type(), {}, std::string_view(xs[i].data() + (o * R + r) * w, w));
        if (!e.ok()) return e.status();
        args.push_back(*e);
      }
      absl::StatusOr<Value> v = CallComputation(ctx, reducer, args);
      if (!v.ok()) return v.status();
      absl::StatusOr<std::vector<Array>> parts = AsArrays(*v, n);
      if (!parts.ok()) return parts.status();
      for (size_t i = 0; i < n; ++i) acc[i] = (*parts)[i];
    }
    for (size_t i = 0; i < n; ++i) {
      const size_t w = out[i].element_bytes();
      std::memcpy(out[i].mutable_data() + o * w, acc[i].array().data(), w);
    }
  }
  return out;
}

absl::StatusOr<Value> Reduce(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const hlo::HloComputation* reducer = instr.to_apply();
  if (!reducer || ops.size() % 2 != 0 || ops.empty()) {
    return Expected("a reducer and pairs of operands and init values",
                    absl::StrCat(ops.size(), " operands", reducer ? "" : ", no to_apply"));
  }
  const size_t n = ops.size() / 2;
  std::vector<Array> xs, inits;
  for (size_t i = 0; i < 2 * n; ++i) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i));
    if (!a.ok()) return a.status();
    (i < n ? xs : inits).push_back(**a);
  }
  for (size_t i = 0; i < n; ++i) {
    if (xs[i].dims() != xs[0].dims() || inits[i].rank() != 0 || inits[i].type() != xs[i].type()) {
      return Expected(absl::StrCat("operands of dims ", DimsString(xs[0].dims()),
                                   " and scalar init values of their types"),
                      absl::StrCat(xs[i].ShapeString(), " with init ", inits[i].ShapeString()));
    }
  }
  const int64_t rank = xs[0].rank();
  std::vector<char> is_reduced(rank, 0);
  std::vector<int64_t> reduced, kept, out_dims;
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= rank || is_reduced[d]) {
      return Expected(absl::StrCat("distinct dimensions below ", rank), DimsString(instr.dimensions()));
    }
    is_reduced[d] = 1;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (is_reduced[d]) reduced.push_back(d);
    else { kept.push_back(d); out_dims.push_back(xs[0].dims()[d]); }
  }
  if (n == 1) {
    const HloOpcode op = SimpleBinaryReducer(*reducer);
    if (op != HloOpcode::kUnknown &&
        ctx.policy->StorageType(TypeOf(reducer->root()->shape())) == xs[0].type()) {
      absl::StatusOr<Array> r = FastReduce(ctx, op, xs[0], inits[0], kept, reduced, out_dims);
      if (!r.ok()) return r.status();
      return Value(*r);
    }
  }
  int64_t O = Product(out_dims), R = 1;
  for (int64_t d : reduced) R *= xs[0].dims()[d];
  std::vector<Array> flat;
  for (const Array& x : xs) {
    absl::StatusOr<Array> m = KeptThenReduced(ctx, x, kept, reduced);
    if (!m.ok()) return m.status();
    absl::StatusOr<Array> f = m->Reshaped({O, R});
    if (!f.ok()) return f.status();
    flat.push_back(*f);
  }
  absl::StatusOr<std::vector<Array>> res = GenericReduce(ctx, *reducer, std::move(flat), inits, O, R);
  if (!res.ok()) return res.status();
  std::vector<Value> outs;
  for (Array& a : *res) {
    absl::StatusOr<Array> r = a.Reshaped(out_dims);
    if (!r.ok()) return r.status();
    outs.push_back(*r);
  }
  if (n == 1) return outs[0];
  return Value::Tuple(std::move(outs));
}

struct WindowDims {
  std::vector<int64_t> size, stride, lo, base_dil, win_dil, out;
};

absl::StatusOr<WindowDims> ResolveWindow(const xla::Window& w, const std::vector<int64_t>& in) {
  if (w.dimensions_size() != static_cast<int>(in.size())) {
    return Expected(absl::StrCat("a window of ", in.size(), " dimensions"), absl::StrCat(w.dimensions_size()));
  }
  WindowDims r;
  for (size_t d = 0; d < in.size(); ++d) {
    const auto& wd = w.dimensions(static_cast<int>(d));
    const int64_t stride = wd.stride() == 0 ? 1 : wd.stride();
    const int64_t bd = wd.base_dilation() == 0 ? 1 : wd.base_dilation();
    const int64_t dd = wd.window_dilation() == 0 ? 1 : wd.window_dilation();
    if (wd.size() < 1 || stride < 1 || bd < 1 || dd < 1) {
      return Expected("window sizes, strides and dilations >= 1", absl::StrCat("size ", wd.size(), " in dimension ", d));
    }
    const int64_t padded = (in[d] == 0 ? 0 : (in[d] - 1) * bd + 1) + wd.padding_low() + wd.padding_high();
    const int64_t dk = (wd.size() - 1) * dd + 1;
    r.size.push_back(wd.size());
    r.stride.push_back(stride);
    r.lo.push_back(wd.padding_low());
    r.base_dil.push_back(bd);
    r.win_dil.push_back(dd);
    r.out.push_back(padded < dk ? 0 : (padded - dk) / stride + 1);
  }
  return r;
}

// The operand elements window position `k` sees, as an array of the
// window output's dims (padding positions hold `fill`).
absl::StatusOr<Array> WindowSlice(const Ctx& ctx, const Array& x, const Array& fill,
                                  const WindowDims& w, const std::vector<int64_t>& k) {
  absl::StatusOr<Array> out = Alloc(ctx, x.type(), w.out);
  if (!out.ok()) return out.status();
  const int64_t rank = x.rank();
  const size_t bytes = x.element_bytes();
  const std::vector<int64_t> xs = x.EffectiveStrides();
  const int64_t total = out->element_count();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank && inside; ++d) {
      const int64_t p = idx[d] * w.stride[d] + k[d] * w.win_dil[d] - w.lo[d];
      if (p < 0 || p % w.base_dil[d] != 0 || p / w.base_dil[d] >= x.dims()[d]) inside = false;
      else off += (p / w.base_dil[d]) * xs[d];
    }
    std::memcpy(out->mutable_data() + i * bytes, inside ? x.data() + off * static_cast<int64_t>(bytes) : fill.data(), bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < w.out[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

absl::StatusOr<Value> ReduceWindow(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const hlo::HloComputation* reducer = instr.to_apply();
  if (!reducer || ops.size() % 2 != 0 || ops.empty()) {
    return Expected("a reducer and pairs of operands and init values", absl::StrCat(ops.size(), " operands"));
  }
  const size_t n = ops.size() / 2;
  std::vector<Array> xs, inits;
  for (size_t i = 0; i < 2 * n; ++i) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i));
    if (!a.ok()) return a.status();
    (i < n ? xs : inits).push_back(**a);
  }
  for (size_t i = 0; i < n; ++i) {
    if (xs[i].dims() != xs[0].dims() || inits[i].rank() != 0 || inits[i].type() != xs[i].type()) {
      return Expected("operands of one shape and scalar init values of their types", xs[i].ShapeString());
    }
  }
  absl::StatusOr<WindowDims> w = ResolveWindow(instr.proto().window(), xs[0].dims());
  if (!w.ok()) return w.status();
  const HloOpcode simple = n == 1 ? SimpleBinaryReducer(*reducer) : HloOpcode::kUnknown;
  if (simple == HloOpcode::kUnknown && !IsLiftable(*reducer)) {
    return Unsupported("a reduce-window whose reducer is not elementwise");
  }
  std::vector<Array> acc;
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<Array> a = Materialize(ctx, Array::View(inits[i], w->out, std::vector<int64_t>(w->out.size(), 0)));
    if (!a.ok()) return a.status();
    acc.push_back(*a);
  }
  const int64_t positions = Product(w->size);
  std::vector<int64_t> k(w->size.size(), 0);
  for (int64_t p = 0; p < positions; ++p) {
    std::vector<Value> args;
    for (size_t i = 0; i < n; ++i) args.push_back(acc[i]);
    for (size_t i = 0; i < n; ++i) {
      absl::StatusOr<Array> s = WindowSlice(ctx, xs[i], inits[i], *w, k);
      if (!s.ok()) return s.status();
      args.push_back(*s);
    }
    if (simple != HloOpcode::kUnknown) {
      absl::StatusOr<Array> r = ApplyBinary(ctx, simple, args[0].array(), args[1].array());
      if (!r.ok()) return r.status();
      acc[0] = *r;
    } else {
      absl::StatusOr<Value> r = CallLifted(ctx, *reducer, args);
      if (!r.ok()) return r.status();
      absl::StatusOr<std::vector<Array>> parts = AsArrays(*r, n);
      if (!parts.ok()) return parts.status();
      for (size_t i = 0; i < n; ++i) acc[i] = (*parts)[i];
    }
    for (int64_t d = static_cast<int64_t>(k.size()) - 1; d >= 0; --d) {
      if (++k[d] < w->size[d]) break;
      k[d] = 0;
    }
  }
  std::vector<Value> outs;
  for (Array& a : acc) {
    absl::StatusOr<Array> m = Materialize(ctx, a.rank() == 0 && !w->out.empty()
                                                   ? Array::View(a, w->out, std::vector<int64_t>(w->out.size(), 0))
                                                   : a);
    if (!m.ok()) return m.status();
    outs.push_back(*m);
  }
  if (n == 1) return outs[0];
  return Value::Tuple(std::move(outs));
}

// select(a, b) for a select computation that is compare(p0, p1).
std::optional<hlo::ComparisonDirection> SimpleSelect(const hlo::HloComputation& c) {
  const hlo::HloInstruction* root = c.root();
  if (!root || root->opcode() != HloOpcode::kCompare || c.parameters().size() != 2 ||
      root->operand(0) != c.parameters()[0] || root->operand(1) != c.parameters()[1]) {
    return std::nullopt;
  }
  return root->comparison_direction();
}

absl::StatusOr<Value> SelectAndScatter(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  if (ops.size() != 3 || instr.called_computations().size() != 2) {
    return Expected("operand, source, init and the select and scatter computations",
                    absl::StrCat(ops.size(), " operands"));
  }
  for (int i = 0; i < 3; ++i) {
    if (absl::StatusOr<const Array*> a = ArrayOperand(ops, i); !a.ok()) return a.status();
  }
  const Array& x = ops[0]->array();
  const Array& src = ops[1]->array();
  const Array& init = ops[2]->array();
  std::optional<hlo::ComparisonDirection> sel = SimpleSelect(*instr.called_computations()[0]);
  const HloOpcode scat = SimpleBinaryReducer(*instr.called_computations()[1]);
  if (!sel || scat == HloOpcode::kUnknown || KindOf(x.type()) == ElementKind::kComplex ||
      KindOf(x.type()) == ElementKind::kBool) {
    return Unsupported("select-and-scatter other than a compare select and an add/max/min scatter on real numbers");
  }
  absl::StatusOr<WindowDims> w = ResolveWindow(instr.proto().window(), x.dims());
  if (!w.ok()) return w.status();
  if (src.dims() != w->out || init.rank() != 0) {
    return Expected(absl::StrCat("a source of the window output's dims ", DimsString(w->out), " and a scalar init"),
                    absl::StrCat(src.ShapeString(), ", ", init.ShapeString()));
  }
  absl::StatusOr<Array> xd = ConvertArray(ctx, x, PrimitiveType::kF64);
  absl::StatusOr<Array> sd = ConvertArray(ctx, src, PrimitiveType::kF64);
  absl::StatusOr<Array> id = ConvertArray(ctx, init, PrimitiveType::kF64);
  if (!xd.ok() || !sd.ok() || !id.ok()) return Invalid("select-and-scatter: operand conversion failed");
  absl::StatusOr<Array> xc = Materialize(ctx, *xd);
  absl::StatusOr<Array> sc = Materialize(ctx, *sd);
  if (!xc.ok() || !sc.ok()) return Invalid("select-and-scatter: materialise failed");
  absl::StatusOr<Array> out = Alloc(ctx, PrimitiveType::kF64, x.dims());
  if (!out.ok()) return out.status();
  double* po = out->mutable_data<double>();
  std::fill(po, po + out->element_count(), *id->data<double>());
  const int64_t rank = x.rank();
  const std::vector<int64_t> xst = RowMajorStrides(x.dims());
  const int64_t positions = Product(w->size);
  std::vector<int64_t> o(rank, 0), k(rank);
  for (int64_t s = 0; s < sc->element_count(); ++s) {
    int64_t best = -1;
    double best_v = 0;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t off = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank && inside; ++d) {
        const int64_t q = o[d] * w->stride[d] + k[d] * w->win_dil[d] - w->lo[d];
        if (q < 0 || q % w->base_dil[d] != 0 || q / w->base_dil[d] >= x.dims()[d]) inside = false;
        else off += (q / w->base_dil[d]) * xst[d];
      }
      if (inside) {
        const double v = xc->data<double>()[off];
        bool keep = best >= 0;
        if (keep) {
          switch (*sel) {
            case hlo::ComparisonDirection::kGe: keep = best_v >= v; break;
            case hlo::ComparisonDirection::kGt: keep = best_v > v; break;
            case hlo::ComparisonDirection::kLe: keep = best_v <= v; break;
            case hlo::ComparisonDirection::kLt: keep = best_v < v; break;
            case hlo::ComparisonDirection::kEq: keep = best_v == v; break;
            case hlo::ComparisonDirection::kNe: keep = best_v != v; break;
          }
        }
        if (!keep) { best = off; best_v = v; }
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++k[d] < w->size[d]) break;
        k[d] = 0;
      }
    }
    if (best >= 0) po[best] = Combine(scat, po[best], sc->data<double>()[s]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++o[d] < w->out[d]) break;
      o[d] = 0;
    }
  }
  absl::StatusOr<Array> r = ConvertArray(ctx, *out, x.type());
  if (!r.ok()) return r.status();
  return Value(*r);
}

absl::StatusOr<Value> Map(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const hlo::HloComputation* fn = instr.to_apply();
  if (!fn) return Expected("a to_apply computation", "none");
  std::vector<Value> args;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i));
    if (!a.ok()) return a.status();
    if ((*a)->dims() != ops[0]->array().dims()) {
      return Expected("operands of one shape", (*a)->ShapeString());
    }
    args.push_back(**a);
  }
  if (!IsLiftable(*fn)) return Unsupported("a map whose computation is not elementwise");
  absl::StatusOr<Value> r = CallLifted(ctx, *fn, args);
  if (!r.ok()) return r.status();
  if (!r->is_array()) return Expected("a map computation returning an array", r->ShapeString());
  const std::vector<int64_t> dims = DimsOf(instr.shape());
  absl::StatusOr<Array> m = Materialize(ctx, r->array().rank() == 0 && !dims.empty()
                                                 ? Array::View(r->array(), dims, std::vector<int64_t>(dims.size(), 0))
                                                 : r->array());
  if (!m.ok()) return m.status();
  return Value(*m);
}

}  // namespace

absl::StatusOr<Value> EvalReduction(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  switch (instr.opcode()) {
    case HloOpcode::kReduce: return Reduce(ctx, instr, ops);
    case HloOpcode::kReduceWindow: return ReduceWindow(ctx, instr, ops);
    case HloOpcode::kSelectAndScatter: return SelectAndScatter(ctx, instr, ops);
    case HloOpcode::kMap: return Map(ctx, instr, ops);
    default: return Unsupported("not a reduction");
  }
}

}  // namespace decomposed::eval::internal
