// Dot (general: batch and contracting dimensions) and convolution
// (windows, strides, padding, base and window dilation, window reversal,
// feature and batch groups) through OpenBLAS's GEMM (docs/eval.md §4.5).
//
// Dot: operands are converted to the compute type the numerics policy
// names (f32 for f32 and narrower floats, rounded to bf16 first in
// kNeuron), permuted to [batch, M, K] and [batch, K, N] only when their
// layout is not already one a GEMM reads (a transposed operand is passed
// with the BLAS's transpose flag instead), multiplied batch by batch, and
// the result rounded once to the declared type. Convolution lowers to
// im2col + GEMM per group, in row chunks so that the column matrix stays
// under kIm2colBytes; a 1x1 window with unit strides needs no im2col.
#include <algorithm>
#include <complex>
#include <cstring>

#include <cblas.h>

#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

// Column-matrix bytes per chunk of convolution rows.
constexpr uint64_t kIm2colBytes = uint64_t{64} << 20;

template <class T> struct GemmAcc { using type = std::make_unsigned_t<T>; };
template <> struct GemmAcc<bool> { using type = uint8_t; };
template <> struct GemmAcc<float> { using type = float; };
template <> struct GemmAcc<double> { using type = double; };
template <> struct GemmAcc<c64> { using type = c64; };
template <> struct GemmAcc<c128> { using type = c128; };

template <class T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T* c, int64_t ldc, const Ctx& ctx) {
  const CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE trb = tb ? CblasTrans : CblasNoTrans;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, tra, trb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, tra, trb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  } else if constexpr (std::is_same_v<T, c64>) {
    const c64 one(1), zero(0);
    cblas_cgemm(CblasRowMajor, tra, trb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  } else if constexpr (std::is_same_v<T, c128>) {
    const c128 one(1), zero(0);
    cblas_zgemm(CblasRowMajor, tra, trb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  } else {
    // Integers (and PRED): no BLAS; rows in parallel, i-k-j order so the
    // inner loop runs over contiguous rows of B and C, wrapping as the
    // type does.
    using W = typename GemmAcc<T>::type;
    ctx.pool->ParallelFor(m, 16, [&](int64_t i0, int64_t i1) {
      std::vector<W> row(n);
      for (int64_t i = i0; i < i1; ++i) {
        std::fill(row.begin(), row.end(), W(0));
        for (int64_t p = 0; p < k; ++p) {
          const W av = static_cast<W>(ta ? a[p * lda + i] : a[i * lda + p]);
          if (tb) {
            for (int64_t j = 0; j < n; ++j) row[j] = static_cast<W>(row[j] + av * static_cast<W>(b[j * ldb + p]));
          } else {
            const T* brow = b + p * ldb;
            for (int64_t j = 0; j < n; ++j) row[j] = static_cast<W>(row[j] + av * static_cast<W>(brow[j]));
          }
        }
        for (int64_t j = 0; j < n; ++j) {
          if constexpr (std::is_same_v<T, bool>) c[i * ldc + j] = row[j] != 0;
          else c[i * ldc + j] = static_cast<T>(row[j]);
        }
      }
    });
  }
}

// Converts an operand to the compute type, rounding to bf16 first where
// the policy says (kNeuron).
absl::StatusOr<Array> PrepareOperand(const Ctx& ctx, const Array& a, PrimitiveType compute) {
  const PrimitiveType round = ctx.policy->DotOperandRounding(a.type());
  if (round == PrimitiveType::kBF16 && compute == PrimitiveType::kF32) {
    absl::StatusOr<Array> r = ConvertArray(ctx, a, PrimitiveType::kBF16);
    if (!r.ok()) return r.status();
    absl::StatusOr<Array> back = ConvertArray(ctx, *r, PrimitiveType::kF32);
    if (!back.ok()) return back.status();
    return Materialize(ctx, *back);
  }
  absl::StatusOr<Array> c = ConvertArray(ctx, a, compute);
  if (!c.ok()) return c.status();
  return Materialize(ctx, *c);
}

absl::StatusOr<Array> PermuteTo(const Ctx& ctx, const Array& a, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) identity &= perm[k] == static_cast<int64_t>(k);
  if (identity) return a;
  std::vector<int64_t> st = a.EffectiveStrides(), dims(perm.size()), pst(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    dims[k] = a.dims()[perm[k]];
    pst[k] = st[perm[k]];
  }
  return Materialize(ctx, Array::View(a, dims, pst));
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t k = 0; k < p.size(); ++k) {
    if (p[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

absl::Status CheckDims(std::span<const int64_t> dims, int64_t rank, std::string_view what) {
  std::vector<char> seen(rank, 0);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) {
      return Expected(absl::StrCat("distinct ", Sv(what), " below rank ", rank), DimsString(dims));
    }
    seen[d] = 1;
  }
  return absl::OkStatus();
}

std::vector<int64_t> Rest(int64_t rank, std::span<const int64_t> a, std::span<const int64_t> b) {
  std::vector<int64_t> r;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) {
      r.push_back(d);
    }
  }
  return r;
}

std::vector<int64_t> Cat(std::initializer_list<std::span<const int64_t>> parts) {
  std::vector<int64_t> r;
  for (auto p : parts) r.insert(r.end(), p.begin(), p.end());
  return r;
}

absl::StatusOr<Value> Dot(Ctx& ctx, const hlo::HloInstruction& instr, const Array& lhs_in,
                          const Array& rhs_in) {
  const auto& dn = instr.proto().dot_dimension_numbers();
  const std::span<const int64_t> lb(dn.lhs_batch_dimensions().data(), dn.lhs_batch_dimensions_size());
  const std::span<const int64_t> rb(dn.rhs_batch_dimensions().data(), dn.rhs_batch_dimensions_size());
  const std::span<const int64_t> lc(dn.lhs_contracting_dimensions().data(), dn.lhs_contracting_dimensions_size());
  const std::span<const int64_t> rc(dn.rhs_contracting_dimensions().data(), dn.rhs_contracting_dimensions_size());
  for (auto [dims, rank, what] : {std::tuple{Cat({lb, lc}), lhs_in.rank(), "lhs batch and contracting dimensions"},
                                  std::tuple{Cat({rb, rc}), rhs_in.rank(), "rhs batch and contracting dimensions"}}) {
    if (absl::Status s = CheckDims(dims, rank, what); !s.ok()) return s;
  }
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return Expected("as many lhs as rhs batch and contracting dimensions",
                    absl::StrCat(lb.size(), "/", rb.size(), " batch, ", lc.size(), "/", rc.size(), " contracting"));
  }
  int64_t batch = 1, k = 1;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs_in.dims()[lb[i]] != rhs_in.dims()[rb[i]]) {
      return Expected(absl::StrCat("batch dimension ", i, " of equal size"),
                      absl::StrCat(lhs_in.ShapeString(), " and ", rhs_in.ShapeString()));
    }
    batch *= lhs_in.dims()[lb[i]];
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs_in.dims()[lc[i]] != rhs_in.dims()[rc[i]]) {
      return Expected(absl::StrCat("contracting dimension ", i, " of equal size"),
                      absl::StrCat(lhs_in.ShapeString(), " and ", rhs_in.ShapeString()));
    }
    k *= lhs_in.dims()[lc[i]];
  }
  const std::vector<int64_t> lf = Rest(lhs_in.rank(), lb, lc), rf = Rest(rhs_in.rank(), rb, rc);
  std::vector<int64_t> out_dims;
  int64_t m = 1, n = 1;
  for (int64_t d : lb) out_dims.push_back(lhs_in.dims()[d]);
  for (int64_t d : lf) { out_dims.push_back(lhs_in.dims()[d]); m *= lhs_in.dims()[d]; }
  for (int64_t d : rf) { out_dims.push_back(rhs_in.dims()[d]); n *= rhs_in.dims()[d]; }
  if (out_dims != DimsOf(instr.shape())) {
    return Expected(absl::StrCat("a result of dims ", DimsString(out_dims)), ShapeProtoString(instr.shape()));
  }
  const PrimitiveType result = ResultType(ctx, instr);
  const PrimitiveType compute = ctx.policy->DotComputeType(result);
  absl::StatusOr<Array> lhs = PrepareOperand(ctx, lhs_in, compute);
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<Array> rhs = PrepareOperand(ctx, rhs_in, compute);
  if (!rhs.ok()) return rhs.status();
  // lhs as [B, M, K], or [B, K, M] read transposed.
  bool ta = false, tb = false;
  std::vector<int64_t> lperm = Cat({lb, lf, lc});
  if (!IsIdentity(lperm) && IsIdentity(Cat({lb, lc, lf}))) {
    ta = true;
    lperm = Cat({lb, lc, lf});
  }
  std::vector<int64_t> rperm = Cat({rb, rc, rf});
  if (!IsIdentity(rperm) && IsIdentity(Cat({rb, rf, rc}))) {
    tb = true;
    rperm = Cat({rb, rf, rc});
  }
  absl::StatusOr<Array> a = PermuteTo(ctx, *lhs, lperm);
  if (!a.ok()) return a.status();
  absl::StatusOr<Array> b = PermuteTo(ctx, *rhs, rperm);
  if (!b.ok()) return b.status();
  absl::StatusOr<Array> out = Alloc(ctx, compute, out_dims);
  if (!out.ok()) return out.status();
  bool done = DispatchCType(CTypeOf(compute), [&]<class T>() {
    const T* pa = a->data<T>();
    const T* pb = b->data<T>();
    T* pc = out->mutable_data<T>();
    for (int64_t i = 0; i < batch; ++i) {
      Gemm<T>(ta, tb, m, n, k, pa + i * m * k, ta ? m : k, pb + i * k * n, tb ? k : n,
              pc + i * m * n, n, ctx);
    }
  });
  if (!done) return Expected("a dot result type with arithmetic", PrimitiveTypeName(result));
  absl::StatusOr<Array> r = ConvertArray(ctx, *out, result);
  if (!r.ok()) return r.status();
  return Value(*r);
}

// --- Convolution -------------------------------------------------------

struct ConvGeometry {
  int64_t spatial = 0;
  std::vector<int64_t> in_sp, k_sp, out_sp;
  std::vector<int64_t> stride, lo, base_dil, win_dil;
  std::vector<char> reversal;
};

absl::StatusOr<Value> Convolution(Ctx& ctx, const hlo::HloInstruction& instr, const Array& lhs_in,
                                  const Array& rhs_in) {
  const auto& dn = instr.proto().convolution_dimension_numbers();
  const int64_t S = dn.input_spatial_dimensions_size();
  const int64_t rank = lhs_in.rank();
  const auto& win = instr.proto().window();
  if (rank != S + 2 || rhs_in.rank() != S + 2 || dn.kernel_spatial_dimensions_size() != S ||
      dn.output_spatial_dimensions_size() != S || win.dimensions_size() != S ||
      static_cast<int64_t>(DimsOf(instr.shape()).size()) != S + 2) {
    return Expected(absl::StrCat("input, kernel, output and window of ", S, " spatial dimensions"),
                    absl::StrCat(lhs_in.ShapeString(), ", ", rhs_in.ShapeString(), ", ",
                                 ShapeProtoString(instr.shape()), ", window of ", win.dimensions_size()));
  }
  auto order = [&](int64_t first, const google::protobuf::RepeatedField<int64_t>& sp, int64_t last,
                   bool first_then_sp) {
    std::vector<int64_t> r;
    if (first_then_sp) r.push_back(first);
    r.insert(r.end(), sp.begin(), sp.end());
    if (!first_then_sp) r.push_back(first);
    r.push_back(last);
    return r;
  };
  const std::vector<int64_t> in_order =
      order(dn.input_batch_dimension(), dn.input_spatial_dimensions(), dn.input_feature_dimension(), true);
  const std::vector<int64_t> k_order = order(dn.kernel_input_feature_dimension(), dn.kernel_spatial_dimensions(),
                                             dn.kernel_output_feature_dimension(), false);
  const std::vector<int64_t> o_order =
      order(dn.output_batch_dimension(), dn.output_spatial_dimensions(), dn.output_feature_dimension(), true);
  for (auto [dims, what] : {std::pair{in_order, "input dimensions"}, std::pair{k_order, "kernel dimensions"},
                            std::pair{o_order, "output dimensions"}}) {
    if (absl::Status s = CheckDims(dims, rank, what); !s.ok()) return s;
  }
  const int64_t G = instr.feature_group_count(), BG = instr.batch_group_count();
  const int64_t N = lhs_in.dims()[dn.input_batch_dimension()];
  const int64_t C = lhs_in.dims()[dn.input_feature_dimension()];
  const int64_t Ci = rhs_in.dims()[dn.kernel_input_feature_dimension()];
  const int64_t Co = rhs_in.dims()[dn.kernel_output_feature_dimension()];
  if (G < 1 || BG < 1 || C != Ci * G || Co % G != 0 || Co % BG != 0 || N % BG != 0 ||
      (G > 1 && BG > 1)) {
    return Expected("input features = kernel input features * feature_group_count, output features "
                    "divisible by both group counts, batch divisible by batch_group_count",
                    absl::StrCat("input ", lhs_in.ShapeString(), ", kernel ", rhs_in.ShapeString(),
                                 ", feature_group_count ", G, ", batch_group_count ", BG));
  }
  const int64_t N_out = N / BG;
  ConvGeometry g;
  g.spatial = S;
  std::vector<int64_t> out_dims(S + 2);
  out_dims[0] = N_out;
  out_dims[S + 1] = Co;
  for (int64_t s = 0; s < S; ++s) {
    const auto& w = win.dimensions(s);
    const int64_t in = lhs_in.dims()[dn.input_spatial_dimensions(s)];
    const int64_t kk = rhs_in.dims()[dn.kernel_spatial_dimensions(s)];
    const int64_t stride = w.stride() == 0 ? 1 : w.stride();
    const int64_t bd = w.base_dilation() == 0 ? 1 : w.base_dilation();
    const int64_t wd = w.window_dilation() == 0 ? 1 : w.window_dilation();
    if (w.size() != kk || stride < 1 || bd < 1 || wd < 1) {
      return Expected(absl::StrCat("window dimension ", s, " of size ", kk, " with strides and dilations >= 1"),
                      absl::StrCat("size ", w.size(), " stride ", stride, " dilations ", bd, "/", wd));
    }
    const int64_t padded = (in == 0 ? 0 : (in - 1) * bd + 1) + w.padding_low() + w.padding_high();
    const int64_t dk = kk == 0 ? 0 : (kk - 1) * wd + 1;
    const int64_t o = padded < dk ? 0 : (padded - dk) / stride + 1;
    g.in_sp.push_back(in);
    g.k_sp.push_back(kk);
    g.out_sp.push_back(o);
    g.stride.push_back(stride);
    g.lo.push_back(w.padding_low());
    g.base_dil.push_back(bd);
    g.win_dil.push_back(wd);
    g.reversal.push_back(w.window_reversal());
    out_dims[s + 1] = o;
  }
  // The declared output, in its own dimension order.
  const std::vector<int64_t> declared = DimsOf(instr.shape());
  for (int64_t k = 0; k < S + 2; ++k) {
    if (declared[o_order[k]] != out_dims[k]) {
      return Expected(absl::StrCat("output dimension ", o_order[k], " of size ", out_dims[k]),
                      ShapeProtoString(instr.shape()));
    }
  }
  const PrimitiveType result = ResultType(ctx, instr);
  const PrimitiveType compute = ctx.policy->DotComputeType(result);
  absl::StatusOr<Array> lhs = PrepareOperand(ctx, lhs_in, compute);
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<Array> rhs = PrepareOperand(ctx, rhs_in, compute);
  if (!rhs.ok()) return rhs.status();
  absl::StatusOr<Array> x = PermuteTo(ctx, *lhs, in_order);   // [N, sp..., C]
  if (!x.ok()) return x.status();
  absl::StatusOr<Array> kern = PermuteTo(ctx, *rhs, k_order);  // [k_sp..., Ci, Co]
  if (!kern.ok()) return kern.status();
  absl::StatusOr<Array> y = Alloc(ctx, compute, out_dims);     // [N_out, out_sp..., Co]
  if (!y.ok()) return y.status();

  const int64_t out_positions = Product(g.out_sp);
  const int64_t k_positions = Product(g.k_sp);
  const int64_t rows = N_out * out_positions;
  const int64_t cols = k_positions * Ci;
  const int64_t groups = G * BG;
  const int64_t Co_g = Co / groups;
  const std::vector<int64_t> x_st = RowMajorStrides(x->dims());
  bool trivial = k_positions == 1 && G == 1 && BG == 1;
  for (int64_t s = 0; s < S; ++s) {
    trivial &= g.stride[s] == 1 && g.lo[s] == 0 && g.base_dil[s] == 1 && g.out_sp[s] == g.in_sp[s];
  }
  bool ok = compute != PrimitiveType::kPred && DispatchCType(CTypeOf(compute), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else {
    const T* px = x->data<T>();
    const T* pk = kern->data<T>();
    T* py = y->mutable_data<T>();
    if (trivial) {
      Gemm<T>(false, false, rows, Co, C, px, C, pk, Co, py, Co, ctx);
      return;
    }
    const int64_t chunk = std::max<int64_t>(
        1, static_cast<int64_t>(kIm2colBytes / std::max<uint64_t>(1, cols * sizeof(T))));
    std::vector<T> col(static_cast<size_t>(std::min(rows, chunk) * cols));
    for (int64_t grp = 0; grp < groups; ++grp) {
      const int64_t c_base = G > 1 ? grp * Ci : 0;
      const int64_t n_base = BG > 1 ? grp * N_out : 0;
      const int64_t o_base = grp * Co_g;
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        ctx.pool->ParallelFor(r1 - r0, 64, [&](int64_t a0, int64_t a1) {
          std::vector<int64_t> op(S), kp(S);
          for (int64_t r = r0 + a0; r < r0 + a1; ++r) {
            int64_t rem = r % out_positions;
            const int64_t n = r / out_positions + n_base;
            for (int64_t s = S - 1; s >= 0; --s) {
              op[s] = rem % g.out_sp[s];
              rem /= g.out_sp[s];
            }
            T* crow = col.data() + (r - r0) * cols;
            for (int64_t kpos = 0; kpos < k_positions; ++kpos) {
              int64_t krem = kpos;
              int64_t off = n * x_st[0];
              bool inside = true;
              for (int64_t s = S - 1; s >= 0; --s) {
                kp[s] = krem % g.k_sp[s];
                krem /= g.k_sp[s];
              }
              for (int64_t s = 0; s < S && inside; ++s) {
                const int64_t kk = g.reversal[s] ? g.k_sp[s] - 1 - kp[s] : kp[s];
                const int64_t p = op[s] * g.stride[s] + kk * g.win_dil[s] - g.lo[s];
                if (p < 0 || p % g.base_dil[s] != 0 || p / g.base_dil[s] >= g.in_sp[s]) {
                  inside = false;
                } else {
                  off += (p / g.base_dil[s]) * x_st[s + 1];
                }
              }
              T* dst = crow + kpos * Ci;
              if (inside) {
                std::memcpy(dst, px + off + c_base, Ci * sizeof(T));
              } else {
                std::fill(dst, dst + Ci, T(0));
              }
            }
          }
        });
        Gemm<T>(false, false, r1 - r0, Co_g, cols, col.data(), cols, pk + o_base, Co,
                py + r0 * Co + o_base, Co, ctx);
      }
    }
    }
  });
  if (!ok) return Expected("a convolution result type with arithmetic", PrimitiveTypeName(result));
  // [N_out, out_sp..., Co] -> the declared dimension order.
  std::vector<int64_t> inverse(S + 2);
  for (int64_t k = 0; k < S + 2; ++k) inverse[o_order[k]] = k;
  absl::StatusOr<Array> ordered = PermuteTo(ctx, *y, inverse);
  if (!ordered.ok()) return ordered.status();
  absl::StatusOr<Array> r = ConvertArray(ctx, *ordered, result);
  if (!r.ok()) return r.status();
  return Value(*r);
}

}  // namespace

absl::StatusOr<Array> BatchedMatmul(Ctx& ctx, const Array& lhs, const Array& rhs, int64_t batch,
                                    int64_t m, int64_t k, int64_t n, PrimitiveType result_type) {
  const PrimitiveType compute = ctx.policy->DotComputeType(result_type);
  absl::StatusOr<Array> a = PrepareOperand(ctx, lhs, compute);
  if (!a.ok()) return a.status();
  absl::StatusOr<Array> b = PrepareOperand(ctx, rhs, compute);
  if (!b.ok()) return b.status();
  if (a->element_count() != batch * m * k || b->element_count() != batch * k * n) {
    return Expected(absl::StrCat("operands of ", batch * m * k, " and ", batch * k * n, " elements"),
                    absl::StrCat(a->ShapeString(), " and ", b->ShapeString()));
  }
  absl::StatusOr<Array> out = Alloc(ctx, compute, {batch, m, n});
  if (!out.ok()) return out.status();
  DispatchCType(CTypeOf(compute), [&]<class T>() {
    for (int64_t i = 0; i < batch; ++i) {
      Gemm<T>(false, false, m, n, k, a->data<T>() + i * m * k, k, b->data<T>() + i * k * n, n,
              out->mutable_data<T>() + i * m * n, n, ctx);
    }
  });
  return ConvertArray(ctx, *out, result_type);
}

absl::StatusOr<Value> EvalDotConv(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  absl::StatusOr<const Array*> lhs = ArrayOperand(ops, 0);
  if (!lhs.ok()) return lhs.status();
  absl::StatusOr<const Array*> rhs = ArrayOperand(ops, 1);
  if (!rhs.ok()) return rhs.status();
  if (instr.opcode() == HloOpcode::kDot) return Dot(ctx, instr, **lhs, **rhs);
  return Convolution(ctx, instr, **lhs, **rhs);
}

}  // namespace decomposed::eval::internal
