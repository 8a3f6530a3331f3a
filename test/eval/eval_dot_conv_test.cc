// Dot and convolution against direct-sum references written out here
// (double loops over the definition in operation_semantics), with batch
// dims, transposed operands, padding, strides, dilations, window reversal,
// feature and batch groups; and the kNeuron rounding of f32 operands.
#include <cmath>
#include <random>

#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::eval {
namespace {

using testing::CompBuilder;
using testing::MakeArray;
using testing::ModuleBuilder;
using testing::ToVector;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

TEST(EvalDot, BatchDimsAndContractingFirstMatchTheDefinition) {
  // lhs [B=2, K=3, M=4] (contracting before free), rhs [B=2, N=5, K=3].
  CompBuilder c("main");
  int64_t a = c.Param(0, "f32[2,3,4]"), b = c.Param(1, "f32[2,5,3]");
  c.Op("dot", "f32[2,4,5]", {a, b}, [](xla::HloInstructionProto& i) {
    auto* d = i.mutable_dot_dimension_numbers();
    d->add_lhs_batch_dimensions(0); d->add_rhs_batch_dimensions(0);
    d->add_lhs_contracting_dimensions(1); d->add_rhs_contracting_dimensions(2);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  std::vector<float> x = Random(24, 1), y = Random(30, 2);
  auto r = testing::Run(*mod, {MakeArray(PrimitiveType::kF32, {2, 3, 4}, x), MakeArray(PrimitiveType::kF32, {2, 5, 3}, y)});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> got = ToVector<float>(r->array());
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k) s += double(x[bb * 12 + k * 4 + i]) * y[bb * 15 + j * 3 + k];
        EXPECT_NEAR(got[bb * 20 + i * 5 + j], s, 1e-5);
      }
}

TEST(EvalDot, IntegerDotWrapsAtTheResultWidth) {
  CompBuilder c("main");
  int64_t a = c.Param(0, "s8[1,2]"), b = c.Param(1, "s8[2,1]");
  c.Op("dot", "s8[1,1]", {a, b}, [](auto& i) {
    i.mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
    i.mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray<int8_t>(PrimitiveType::kS8, {1, 2}, {100, 100}),
                               MakeArray<int8_t>(PrimitiveType::kS8, {2, 1}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToVector<int8_t>(r->array())[0], static_cast<int8_t>(300));
}

TEST(EvalDot, NeuronModeRoundsF32OperandsToBf16) {
  CompBuilder c("main");
  int64_t a = c.Param(0, "f32[1,1]"), b = c.Param(1, "f32[1,1]");
  c.Op("dot", "f32[1,1]", {a, b}, [](auto& i) {
    i.mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
    i.mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
  });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  const float x = 1.0f + 0x1p-10f;  // not a bf16 value: rounds to 1.0
  std::vector<Value> in = {MakeArray<float>(PrimitiveType::kF32, {1, 1}, {x}),
                           MakeArray<float>(PrimitiveType::kF32, {1, 1}, {3.0f})};
  auto xla_mode = testing::Run(*mod, in);
  EvalOptions o;
  o.numerics = Numerics::kNeuron;
  auto neuron = testing::Run(*mod, in, o);
  ASSERT_TRUE(xla_mode.ok() && neuron.ok());
  EXPECT_EQ(ToVector<float>(xla_mode->array())[0], x * 3.0f);
  EXPECT_EQ(ToVector<float>(neuron->array())[0], 3.0f);
}

// Reference convolution, NCHW input, OIHW kernel, one spatial config.
struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, stride, pad_lo, pad_hi, lhs_dil, rhs_dil, groups, batch_groups;
  bool reverse;
};

std::vector<double> ReferenceConv(const ConvCase& p, const std::vector<float>& x, const std::vector<float>& k,
                                  int64_t* oh, int64_t* ow) {
  auto out_size = [&](int64_t in, int64_t kk) {
    const int64_t padded = (in - 1) * p.lhs_dil + 1 + p.pad_lo + p.pad_hi;
    const int64_t dk = (kk - 1) * p.rhs_dil + 1;
    return (padded - dk) / p.stride + 1;
  };
  *oh = out_size(p.h, p.kh);
  *ow = out_size(p.w, p.kw);
  const int64_t ci = p.c / p.groups, nout = p.n / p.batch_groups;
  std::vector<double> y(nout * p.o * *oh * *ow, 0);
  for (int64_t n = 0; n < nout; ++n)
    for (int64_t o = 0; o < p.o; ++o) {
      const int64_t g = p.groups > 1 ? o / (p.o / p.groups) : 0;
      const int64_t bg = p.batch_groups > 1 ? o / (p.o / p.batch_groups) : 0;
      for (int64_t i = 0; i < *oh; ++i)
        for (int64_t j = 0; j < *ow; ++j) {
          double s = 0;
          for (int64_t c = 0; c < ci; ++c)
            for (int64_t a = 0; a < p.kh; ++a)
              for (int64_t b = 0; b < p.kw; ++b) {
                const int64_t ka = p.reverse ? p.kh - 1 - a : a, kb = p.reverse ? p.kw - 1 - b : b;
                const int64_t y0 = i * p.stride + ka * p.rhs_dil - p.pad_lo;
                const int64_t x0 = j * p.stride + kb * p.rhs_dil - p.pad_lo;
                if (y0 < 0 || x0 < 0 || y0 % p.lhs_dil || x0 % p.lhs_dil) continue;
                const int64_t yy = y0 / p.lhs_dil, xx = x0 / p.lhs_dil;
                if (yy >= p.h || xx >= p.w) continue;
                const int64_t nin = n + bg * nout;
                s += double(x[((nin * p.c + g * ci + c) * p.h + yy) * p.w + xx]) *
                     k[((o * ci + c) * p.kh + a) * p.kw + b];
              }
          y[((n * p.o + o) * *oh + i) * *ow + j] = s;
        }
    }
  return y;
}

void CheckConv(const ConvCase& p) {
  int64_t oh, ow;
  std::vector<float> x = Random(p.n * p.c * p.h * p.w, 3), k = Random(p.o * (p.c / p.groups) * p.kh * p.kw, 4);
  std::vector<double> want = ReferenceConv(p, x, k, &oh, &ow);
  CompBuilder c("main");
  int64_t a = c.Param(0, absl::StrCat("f32[", p.n, ",", p.c, ",", p.h, ",", p.w, "]"));
  int64_t b = c.Param(1, absl::StrCat("f32[", p.o, ",", p.c / p.groups, ",", p.kh, ",", p.kw, "]"));
  c.Op("convolution", absl::StrCat("f32[", p.n / p.batch_groups, ",", p.o, ",", oh, ",", ow, "]"), {a, b},
       [&](xla::HloInstructionProto& i) {
         auto* d = i.mutable_convolution_dimension_numbers();
         d->set_input_batch_dimension(0); d->set_input_feature_dimension(1);
         d->add_input_spatial_dimensions(2); d->add_input_spatial_dimensions(3);
         d->set_kernel_output_feature_dimension(0); d->set_kernel_input_feature_dimension(1);
         d->add_kernel_spatial_dimensions(2); d->add_kernel_spatial_dimensions(3);
         d->set_output_batch_dimension(0); d->set_output_feature_dimension(1);
         d->add_output_spatial_dimensions(2); d->add_output_spatial_dimensions(3);
         for (int64_t kk : {p.kh, p.kw}) {
           auto* w = i.mutable_window()->add_dimensions();
           w->set_size(kk); w->set_stride(p.stride); w->set_padding_low(p.pad_lo); w->set_padding_high(p.pad_hi);
           w->set_base_dilation(p.lhs_dil); w->set_window_dilation(p.rhs_dil); w->set_window_reversal(p.reverse);
         }
         i.set_feature_group_count(p.groups);
         i.set_batch_group_count(p.batch_groups);
       });
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {MakeArray(PrimitiveType::kF32, {p.n, p.c, p.h, p.w}, x),
                               MakeArray(PrimitiveType::kF32, {p.o, p.c / p.groups, p.kh, p.kw}, k)});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> got = ToVector<float>(r->array());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(EvalConvolution, PlainPaddedStrided) { CheckConv({2, 3, 6, 5, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1, false}); }
TEST(EvalConvolution, OneByOne) { CheckConv({2, 3, 4, 4, 5, 1, 1, 1, 0, 0, 1, 1, 1, 1, false}); }
TEST(EvalConvolution, DilationsAndReversal) { CheckConv({1, 2, 5, 5, 3, 2, 2, 1, 2, 1, 2, 2, 1, 1, true}); }
TEST(EvalConvolution, FeatureGroups) { CheckConv({2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 2, 1, false}); }
TEST(EvalConvolution, BatchGroups) { CheckConv({4, 2, 5, 5, 4, 2, 2, 1, 0, 0, 1, 1, 1, 2, false}); }

}  // namespace
}  // namespace decomposed::eval
