// sort (multi-operand, any comparator, always stable) and topk
// (docs/eval.md §4.4). A comparator that is one compare of a pair of
// parameters (p[2k] vs p[2k+1], either way round, FLOAT or TOTALORDER)
// sorts by that key directly; any other comparator is evaluated on scalars
// per comparison.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

template <class T>
auto OrderKey(T v, bool total) {
  if constexpr (kIsFloat<T>) {
    using UI = typename UintOfSize<sizeof(T)>::type;
    using SI = std::make_signed_t<UI>;
    if (total) {
      SI s = std::bit_cast<SI>(v);
      if (s < 0) s = static_cast<SI>(s ^ std::numeric_limits<SI>::max());
      return static_cast<double>(s);  // only compared, never used as a value
    }
    return static_cast<double>(v);
  } else {
    return v;
  }
}

struct KeyCompare {
  int64_t operand = 0;
  bool swapped = false;  // compare(p[2k+1], p[2k])
  hlo::ComparisonDirection dir = hlo::ComparisonDirection::kLt;
  bool total = false;
};

std::optional<KeyCompare> SimpleComparator(const hlo::HloComputation& c) {
  const hlo::HloInstruction* root = c.root();
  if (!root || root->opcode() != HloOpcode::kCompare || root->operand_count() != 2) return std::nullopt;
  const hlo::HloInstruction* a = root->operand(0);
  const hlo::HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter) return std::nullopt;
  const int64_t pa = a->parameter_number(), pb = b->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb) return std::nullopt;
  std::optional<hlo::ComparisonDirection> d = root->comparison_direction();
  if (!d || (*d != hlo::ComparisonDirection::kLt && *d != hlo::ComparisonDirection::kGt)) return std::nullopt;
  KeyCompare k;
  k.operand = pa / 2;
  k.swapped = pa > pb;
  k.dir = *d;
  std::optional<hlo::ComparisonType> t = root->comparison_type();
  k.total = t && *t == hlo::ComparisonType::kTotalOrder;
  return k;
}

// Gathers `a` along `dim` by `perm` per row: out[.., i, ..] = a[.., perm[row][i], ..].
absl::StatusOr<Array> GatherAlong(const Ctx& ctx, const Array& a, int64_t dim,
                                  const std::vector<int64_t>& perm, int64_t outer, int64_t n,
                                  int64_t inner, int64_t k) {
  std::vector<int64_t> dims = a.dims();
  dims[dim] = k;
  absl::StatusOr<Array> out = Alloc(ctx, a.type(), dims);
  if (!out.ok()) return out.status();
  const size_t w = a.element_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t row = o * inner + in;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t src = (o * n + perm[row * n + i]) * inner + in;
        const int64_t dst = (o * k + i) * inner + in;
        std::memcpy(out->mutable_data() + dst * w, a.data() + src * w, w);
      }
    }
  }
  return out;
}

absl::StatusOr<Value> Sort(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  const hlo::HloComputation* cmp = instr.to_apply();
  if (!cmp || ops.empty() || instr.dimensions().size() != 1) {
    return Expected("operands, one sort dimension and a comparator",
                    absl::StrCat(ops.size(), " operands, ", instr.dimensions().size(), " dimensions"));
  }
  std::vector<Array> xs;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<const Array*> a = ArrayOperand(ops, static_cast<int64_t>(i));
    if (!a.ok()) return a.status();
    absl::StatusOr<Array> m = Materialize(ctx, **a);
    if (!m.ok()) return m.status();
    if (m->dims() != ops[0]->array().dims()) return Expected("operands of one shape", m->ShapeString());
    xs.push_back(*m);
  }
  const int64_t dim = instr.dimensions()[0];
  if (dim < 0 || dim >= xs[0].rank()) {
    return Expected(absl::StrCat("a sort dimension below ", xs[0].rank()), absl::StrCat(dim));
  }
  int64_t outer = 1, inner = 1;
  const int64_t n = xs[0].dims()[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= xs[0].dims()[d];
  for (int64_t d = dim + 1; d < xs[0].rank(); ++d) inner *= xs[0].dims()[d];
  std::vector<int64_t> perm(outer * inner * n);
  std::optional<KeyCompare> simple = SimpleComparator(*cmp);
  if (simple && simple->operand >= static_cast<int64_t>(xs.size())) simple.reset();
  absl::Status status;
  if (simple) {
    absl::StatusOr<Array> key = ToCompute(ctx, xs[simple->operand]);
    if (!key.ok()) return key.status();
    absl::StatusOr<Array> kc = Materialize(ctx, *key);
    if (!kc.ok()) return kc.status();
    const bool less = (simple->dir == hlo::ComparisonDirection::kLt) != simple->swapped;
    const bool total = simple->total;
    bool ok = DispatchCType(CTypeOf(kc->type()), [&]<class T>() {
      if constexpr (kIsComplex<T>) {
        status = Unsupported("sorting complex keys");
      } else {
        const T* kv = kc->data<T>();
        ctx.pool->ParallelFor(outer * inner, 1, [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            const int64_t o = row / inner, in = row % inner;
            int64_t* p = perm.data() + row * n;
            std::iota(p, p + n, 0);
            auto at = [&](int64_t i) { return OrderKey(kv[(o * n + i) * inner + in], total); };
            if (less) {
              std::stable_sort(p, p + n, [&](int64_t x, int64_t y) { return at(x) < at(y); });
            } else {
              std::stable_sort(p, p + n, [&](int64_t x, int64_t y) { return at(y) < at(x); });
            }
          }
        });
      }
    });
    if (!ok) status = Unsupported("sorting keys of this type");
  } else {
    // The comparator on scalars, per comparison.
    for (int64_t row = 0; row < outer * inner && status.ok(); ++row) {
      const int64_t o = row / inner, in = row % inner;
      int64_t* p = perm.data() + row * n;
      std::iota(p, p + n, 0);
      std::stable_sort(p, p + n, [&](int64_t x, int64_t y) {
        if (!status.ok()) return false;
        std::vector<Value> args;
        for (const Array& a : xs) {
          const size_t w = a.element_bytes();
          for (int64_t i : {x, y}) {
            absl::StatusOr<Array> e = Array::Copy(a.type(), {}, std::string_view(a.data() + ((o * n + i) * inner + in) * w, w));
            if (!e.ok()) { status = e.status(); return false; }
            args.push_back(*e);
          }
        }
        absl::StatusOr<Value> r = CallComputation(ctx, *cmp, args);
        if (!r.ok()) { status = r.status(); return false; }
        if (!r->is_array() || r->array().type() != PrimitiveType::kPred || r->array().rank() != 0) {
          status = Expected("a comparator returning pred[]", r->ShapeString());
          return false;
        }
        return r->array().data()[0] != 0;
      });
    }
  }
  if (!status.ok()) return status;
  std::vector<Value> outs;
  for (const Array& a : xs) {
    absl::StatusOr<Array> g = GatherAlong(ctx, a, dim, perm, outer, n, inner, n);
    if (!g.ok()) return g.status();
    outs.push_back(*g);
  }
  if (outs.size() == 1 && !IsTupleShape(instr.shape())) return outs[0];
  return Value::Tuple(std::move(outs));
}

}  // namespace

absl::StatusOr<Value> TopKOf(Ctx& ctx, const Array& in, int64_t k, bool largest,
                             PrimitiveType itype) {
  absl::StatusOr<Array> x = Materialize(ctx, in);
  if (!x.ok()) return x.status();
  if (x->rank() < 1 || k < 0 || k > x->dims().back()) {
    return Expected(absl::StrCat("k between 0 and the last dimension of ", x->ShapeString()), absl::StrCat(k));
  }
  const int64_t n = x->dims().back();
  const int64_t rows = n == 0 ? 0 : x->element_count() / n;
  absl::StatusOr<Array> key = ToCompute(ctx, *x);
  if (!key.ok()) return key.status();
  std::vector<int64_t> perm(rows * n);
  absl::Status status;
  DispatchCType(CTypeOf(key->type()), [&]<class T>() {
    if constexpr (kIsComplex<T>) {
      status = Unsupported("topk of complex values");
    } else {
      const T* kv = key->data<T>();
      ctx.pool->ParallelFor(rows, 1, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t* p = perm.data() + r * n;
          std::iota(p, p + n, 0);
          // NaN is the largest value (total order); ties: lower index first.
          auto v = [&](int64_t i) { return OrderKey(kv[r * n + i], true); };
          std::partial_sort(p, p + k, p + n, [&](int64_t a, int64_t c) {
            if (v(a) != v(c)) return largest ? v(a) > v(c) : v(a) < v(c);
            return a < c;
          });
        }
      });
    }
  });
  if (!status.ok()) return status;
  absl::StatusOr<Array> values = GatherAlong(ctx, *x, x->rank() - 1, perm, rows, n, 1, k);
  if (!values.ok()) return values.status();
  std::vector<int64_t> idims = x->dims();
  idims.back() = k;
  absl::StatusOr<Array> idx64 = Alloc(ctx, PrimitiveType::kS64, idims);
  if (!idx64.ok()) return idx64.status();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < k; ++i) idx64->mutable_data<int64_t>()[r * k + i] = perm[r * n + i];
  }
  absl::StatusOr<Array> idx = ConvertArray(ctx, *idx64, itype);
  if (!idx.ok()) return idx.status();
  return Value::Tuple({*values, *idx});
}

namespace {
absl::StatusOr<Value> TopK(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  absl::StatusOr<const Array*> in = ArrayOperand(ops, 0);
  if (!in.ok()) return in.status();
  const PrimitiveType itype = IsTupleShape(instr.shape()) && instr.shape().tuple_shapes_size() == 2
                                  ? TypeOf(instr.shape().tuple_shapes(1))
                                  : PrimitiveType::kS32;
  return TopKOf(ctx, **in, instr.proto().k(), instr.proto().largest(), itype);
}
}  // namespace

absl::StatusOr<Value> EvalSort(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  if (instr.opcode() == HloOpcode::kTopK) return TopK(ctx, instr, ops);
  return Sort(ctx, instr, ops);
}

}  // namespace decomposed::eval::internal
