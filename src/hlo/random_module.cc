// RandomModule (hlo/random_module.h): a seed-driven walk over the builder's
// methods, each step valid by construction.
#include "decomposed/hlo/random_module.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/status.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

constexpr int kFloatTypes[] = {xla::F32, xla::BF16, xla::F16, xla::F64};
constexpr int kIntTypes[] = {xla::S8, xla::S16, xla::S32, xla::S64,
                             xla::U8, xla::U16, xla::U32, xla::U64};
constexpr int kConvertTypes[] = {
    xla::PRED, xla::S4,  xla::U4,  xla::S8,  xla::U8,   xla::S16,
    xla::U16,  xla::S32, xla::U32, xla::S64, xla::U64,  xla::F16,
    xla::BF16, xla::F32, xla::F64, xla::C64, xla::C128, xla::F8E4M3FN,
    xla::F8E5M2, xla::F8E4M3FNUZ, xla::F8E5M2FNUZ, xla::F8E4M3B11FNUZ,
    xla::F8E4M3, xla::F8E3M4, xla::F4E2M1FN, xla::F8E8M0FNU};

// splitmix64: the same numbers everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In [0, n), n > 0.
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
  // In [lo, hi]; lo when the range is empty.
  int64_t Range(int64_t lo, int64_t hi) {
    return hi < lo ? lo : lo + Below(hi - lo + 1);
  }
  bool Chance(int percent) { return Below(100) < percent; }
  template <class T, size_t N>
  T Pick(const T (&a)[N]) { return a[Below(N)]; }
  template <class T>
  const T& Pick(const std::vector<T>& v) { return v[Below(static_cast<int64_t>(v.size()))]; }

 private:
  uint64_t s_;
};

std::vector<int64_t> DimsOf(const ShapeProto& s) {
  return std::vector<int64_t>(s.dimensions().begin(), s.dimensions().end());
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomModuleOptions& o)
      : r_(seed), o_(o), mb_(absl::StrCat("random_", seed)) {}

  absl::StatusOr<xla::HloModuleProto> Run() {
    main_ = &mb_.AddEntryComputation("main");
    std::vector<std::function<void()>> steps = Steps();
    std::vector<size_t> order(steps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[r_.Below(static_cast<int64_t>(i))]);
    }
    for (int s = 0; s < o_.steps && mb_.status().ok(); ++s) {
      const size_t before = static_cast<size_t>(main_->instruction_count());
      steps[order[static_cast<size_t>(s) % order.size()]]();
      if (o_.attributes) Decorate(before);
    }
    // The root: a tuple of a few values (the last ones and some others).
    std::vector<HloOp> out;
    for (size_t i = pool_.size(); i-- > 0 && out.size() < 3;) out.push_back(pool_[i]);
    while (out.size() < 5 && !pool_.empty() && r_.Chance(60)) {
      out.push_back(r_.Pick(pool_));
    }
    if (out.empty()) out.push_back(Fresh(MakeScalarShape(xla::F32)));
    main_->Tuple(out);
    absl::StatusOr<xla::HloModuleProto> built = mb_.Build();
    if (built.ok() && o_.attributes && r_.Chance(30)) {
      // A stack frame index for the metadata's stack_frame_id (1 or 2).
      xla::StackFrameIndexProto* index = built->mutable_stack_frame_index();
      index->add_file_names("model \"a\".py");
      index->add_file_names("lib/ops.py");
      index->add_function_names("forward");
      for (int i = 0; i < 2; ++i) {
        auto* l = index->add_file_locations();
        l->set_file_name_id(i + 1);
        l->set_function_name_id(1);
        l->set_line(static_cast<int32_t>(r_.Range(1, 500)));
        if (r_.Chance(50)) l->set_end_line(l->line() + 1);
        l->set_column(static_cast<int32_t>(r_.Range(0, 80)));
        if (r_.Chance(50)) l->set_end_column(l->column() + 4);
        auto* f = index->add_stack_frames();
        f->set_file_location_id(i + 1);
        f->set_parent_frame_id(i);
      }
    }
    return built;
  }

 private:
  // --- Shapes and values ---

  std::vector<int64_t> RandomDims(int max_rank = -1) {
    const int64_t rank = r_.Range(0, max_rank < 0 ? o_.max_rank : max_rank);
    std::vector<int64_t> d;
    for (int64_t i = 0; i < rank; ++i) d.push_back(r_.Range(1, o_.max_dim));
    return d;
  }
  std::vector<int64_t> RandomDimsRank(int64_t rank) {
    std::vector<int64_t> d;
    for (int64_t i = 0; i < rank; ++i) d.push_back(r_.Range(1, o_.max_dim));
    return d;
  }
  int FloatType() { return r_.Pick(kFloatTypes); }
  int IntType() { return r_.Pick(kIntTypes); }

  // A new value of `shape`: a parameter, or a constant when small.
  HloOp Fresh(const ShapeProto& shape) {
    absl::StatusOr<int64_t> n = ElementCount(shape);
    if (n.ok() && *n <= 8 && r_.Chance(50)) return Constant(shape);
    return main_->Parameter(next_param_++, shape);
  }

  HloOp Constant(const ShapeProto& shape) {
    const int t = shape.element_type();
    const int64_t n = *ElementCount(shape);
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) {
      if (t == xla::PRED) {
        v.push_back(static_cast<double>(r_.Below(2)));
      } else if (IsIntegralType(t)) {
        v.push_back(static_cast<double>(r_.Range(0, 7)));
      } else {
        v.push_back(static_cast<double>(r_.Range(-8, 8)) / 2);
      }
    }
    if (IsComplexType(t)) {
      std::vector<std::complex<double>> c;
      for (double x : v) c.emplace_back(x, static_cast<double>(r_.Range(-4, 4)));
      absl::StatusOr<xla::LiteralProto> l = MakeComplexLiteral(t, DimsOf(shape), c);
      return l.ok() ? main_->Constant(*l) : HloOp();
    }
    return main_->ConstantArray(t, DimsOf(shape), v);
  }

  // A pool value of `shape` (element type and dimensions), else a fresh one.
  HloOp Get(const ShapeProto& shape) {
    std::vector<HloOp> matches;
    for (const HloOp& v : pool_) {
      if (ShapesCompatible(v.shape(), shape)) matches.push_back(v);
    }
    if (!matches.empty() && r_.Chance(70)) return r_.Pick(matches);
    return Fresh(shape);
  }

  // A pool array whose element type satisfies `want`, else a fresh one of
  // `fallback_type`.
  HloOp GetArray(const std::function<bool(int)>& want, int fallback_type,
                 int max_rank = -1) {
    std::vector<HloOp> matches;
    for (const HloOp& v : pool_) {
      if (IsArrayShape(v.shape()) && want(v.shape().element_type()) &&
          (max_rank < 0 || v.shape().dimensions_size() <= max_rank)) {
        matches.push_back(v);
      }
    }
    if (!matches.empty() && r_.Chance(60)) return r_.Pick(matches);
    return Fresh(MakeArrayShape(fallback_type, RandomDims(max_rank)));
  }
  HloOp GetFloat(int max_rank = -1) {
    return GetArray([](int t) { return IsFloatingType(t) && t != xla::F8E4M3FN; },
                    FloatType(), max_rank);
  }

  void Keep(HloOp op) {
    if (op.valid() && pool_.size() < 200) pool_.push_back(op);
  }

  // --- Called computations (each built whole, then called) ---

  // (T, T) -> T with `op` (add, maximum, ...), cached per type and opcode.
  const HloComputationBuilder& Reducer(int type, HloOpcode op) {
    const std::string key = absl::StrCat(ElementTypeName(type), "_",
                                         Sv(HloOpcodeString(op)));
    auto it = reducers_.find(key);
    if (it != reducers_.end()) return *it->second;
    HloComputationBuilder& c = mb_.AddComputation(absl::StrCat("reduce_", key));
    const ShapeProto s = MakeScalarShape(type);
    c.Binary(op, c.Parameter(0, s), c.Parameter(1, s));
    reducers_[key] = &c;
    return c;
  }
  HloOpcode ReduceOp(int type) {
    if (type == xla::PRED) return r_.Chance(50) ? HloOpcode::kAnd : HloOpcode::kOr;
    static constexpr HloOpcode kOps[] = {HloOpcode::kAdd, HloOpcode::kMaximum,
                                         HloOpcode::kMinimum,
                                         HloOpcode::kMultiply};
    return r_.Pick(kOps);
  }

  // Compares the first pair of parameters of 2N scalars.
  const HloComputationBuilder& Comparator(const std::vector<int>& types) {
    HloComputationBuilder& c =
        mb_.AddComputation(absl::StrCat("compare.", mb_counter_++));
    std::vector<HloOp> p;
    for (size_t i = 0; i < 2 * types.size(); ++i) {
      p.push_back(c.Parameter(static_cast<int64_t>(i),
                              MakeScalarShape(types[i / 2])));
    }
    c.Compare(p[0], p[1],
              r_.Chance(50) ? ComparisonDirection::kLt : ComparisonDirection::kGt,
              IsFloatingType(types[0]) && r_.Chance(50)
                  ? std::optional<ComparisonType>(ComparisonType::kTotalOrder)
                  : std::nullopt);
    return c;
  }

  // A computation of `params` returning an elementwise function of its
  // first parameter (of `params[0]`'s shape).
  HloComputationBuilder& Unit(std::string_view prefix,
                              const std::vector<ShapeProto>& params) {
    HloComputationBuilder& c =
        mb_.AddComputation(absl::StrCat(Sv(prefix), ".", mb_counter_++));
    std::vector<HloOp> p;
    for (size_t i = 0; i < params.size(); ++i) {
      p.push_back(c.Parameter(static_cast<int64_t>(i), params[i]));
    }
    HloOp x = p[0];
    for (size_t i = 1; i < p.size(); ++i) {
      if (ShapesCompatible(p[i].shape(), x.shape()) && IsArrayShape(x.shape()) &&
          x.shape().element_type() != xla::PRED) {
        x = c.Add(x, p[i]);
      }
    }
    if (IsArrayShape(x.shape()) && IsFloatingType(x.shape().element_type())) {
      x = r_.Chance(50) ? c.Negate(x) : c.Exp(x);
    } else {
      x = c.Copy(x);
    }
    return c;
  }

  // --- Steps ---

  std::vector<std::function<void()>> Steps() {
    std::vector<std::function<void()>> s;
    s.push_back([this] { UnaryFloat(); });
    s.push_back([this] { UnaryInt(); });
    s.push_back([this] { ComplexOps(); });
    s.push_back([this] { BinaryFloat(); });
    s.push_back([this] { BinaryInt(); });
    s.push_back([this] { CompareSelect(); });
    s.push_back([this] { ClampOp(); });
    s.push_back([this] { Converts(); });
    s.push_back([this] { BitcastConverts(); });
    s.push_back([this] { Shapes1(); });
    s.push_back([this] { Slices(); });
    s.push_back([this] { ConcatPad(); });
    s.push_back([this] { GatherOp(); });
    s.push_back([this] { ScatterOp(); });
    s.push_back([this] { DotOp(); });
    s.push_back([this] { ConvolutionOp(); });
    s.push_back([this] { ReduceOp(); });
    s.push_back([this] { WindowOps(); });
    s.push_back([this] { SortOps(); });
    s.push_back([this] { MapOp(); });
    s.push_back([this] { CallOps(); });
    s.push_back([this] { WhileOp(); });
    s.push_back([this] { ConditionalOp(); });
    s.push_back([this] { FusionOp(); });
    s.push_back([this] { BatchNorms(); });
    s.push_back([this] { Collectives(); });
    s.push_back([this] { AsyncCollectives(); });
    s.push_back([this] { CustomCallOp(); });
    s.push_back([this] { RngOps(); });
    s.push_back([this] { Tokens(); });
    s.push_back([this] { LinearAlgebra(); });
    s.push_back([this] { FftOp(); });
    s.push_back([this] { Copies(); });
    s.push_back([this] { SendRecv(); });
    s.push_back([this] { AsyncOp(); });
    s.push_back([this] { DimensionSizes(); });
    return s;
  }

  void UnaryFloat() {
    static constexpr HloOpcode kOps[] = {
        HloOpcode::kAbs, HloOpcode::kCeil, HloOpcode::kFloor,
        HloOpcode::kRoundNearestAfz, HloOpcode::kRoundNearestEven,
        HloOpcode::kCos, HloOpcode::kSin, HloOpcode::kTan, HloOpcode::kExp,
        HloOpcode::kExpm1, HloOpcode::kLog, HloOpcode::kLog1p,
        HloOpcode::kLogistic, HloOpcode::kRsqrt, HloOpcode::kSqrt,
        HloOpcode::kCbrt, HloOpcode::kTanh, HloOpcode::kErf,
        HloOpcode::kNegate, HloOpcode::kSign, HloOpcode::kIsFinite,
        HloOpcode::kCopy};
    HloOp x = GetFloat();
    Keep(main_->Unary(r_.Pick(kOps), x));
    Keep(main_->ReducePrecision(x, static_cast<int>(r_.Range(2, 8)),
                                static_cast<int>(r_.Range(0, 10))));
  }

  void UnaryInt() {
    HloOp x = GetArray([](int t) { return IsSignedIntegralType(t); }, xla::S32);
    static constexpr HloOpcode kOps[] = {
        HloOpcode::kNot, HloOpcode::kPopulationCount, HloOpcode::kClz,
        HloOpcode::kNegate, HloOpcode::kAbs, HloOpcode::kSign};
    Keep(main_->Unary(r_.Pick(kOps), x));
    HloOp p = GetArray([](int t) { return t == xla::PRED; }, xla::PRED);
    Keep(main_->Not(p));
  }

  void ComplexOps() {
    const ShapeProto s = MakeArrayShape(xla::F32, RandomDims());
    HloOp c = main_->Complex(Get(s), Get(s));
    Keep(c);
    static constexpr HloOpcode kOps[] = {HloOpcode::kReal, HloOpcode::kImag,
                                         HloOpcode::kAbs, HloOpcode::kExp,
                                         HloOpcode::kSqrt, HloOpcode::kNegate};
    Keep(main_->Unary(r_.Pick(kOps), c));
  }

  void BinaryFloat() {
    static constexpr HloOpcode kOps[] = {
        HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kMultiply,
        HloOpcode::kDivide, HloOpcode::kRemainder, HloOpcode::kMaximum,
        HloOpcode::kMinimum, HloOpcode::kPower, HloOpcode::kAtan2};
    HloOp a = GetFloat();
    Keep(main_->Binary(r_.Pick(kOps), a, Get(a.shape())));
  }

  void BinaryInt() {
    static constexpr HloOpcode kOps[] = {
        HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kMultiply,
        HloOpcode::kDivide, HloOpcode::kRemainder, HloOpcode::kMaximum,
        HloOpcode::kMinimum, HloOpcode::kAnd, HloOpcode::kOr, HloOpcode::kXor,
        HloOpcode::kShiftLeft, HloOpcode::kShiftRightArithmetic,
        HloOpcode::kShiftRightLogical};
    HloOp a = GetArray([](int t) { return IsIntegralType(t); }, IntType());
    Keep(main_->Binary(r_.Pick(kOps), a, Get(a.shape())));
  }

  void CompareSelect() {
    static constexpr ComparisonDirection kDirs[] = {
        ComparisonDirection::kEq, ComparisonDirection::kNe,
        ComparisonDirection::kGe, ComparisonDirection::kGt,
        ComparisonDirection::kLe, ComparisonDirection::kLt};
    const bool fl = r_.Chance(50);
    HloOp a = fl ? GetFloat()
                 : GetArray([](int t) { return IsIntegralType(t); }, IntType());
    std::optional<ComparisonType> type;
    if (fl && r_.Chance(40)) type = ComparisonType::kTotalOrder;
    if (!fl && r_.Chance(30)) {
      type = IsSignedIntegralType(a.shape().element_type())
                 ? ComparisonType::kSigned
                 : ComparisonType::kUnsigned;
    }
    HloOp p = main_->Compare(a, Get(a.shape()), r_.Pick(kDirs), type);
    Keep(p);
    Keep(main_->Select(p, a, Get(a.shape())));
  }

  void ClampOp() {
    HloOp x = GetFloat();
    const int t = x.shape().element_type();
    if (r_.Chance(50)) {
      Keep(main_->Clamp(Get(MakeScalarShape(t)), x, Get(MakeScalarShape(t))));
    } else {
      Keep(main_->Clamp(Get(x.shape()), x, Get(x.shape())));
    }
  }

  void Converts() {
    HloOp x = GetArray([](int t) { return !IsComplexType(t); }, FloatType());
    const int to = r_.Pick(kConvertTypes);
    Keep(main_->Convert(x, to));
    if (IsFloatingType(x.shape().element_type()) && r_.Chance(50)) {
      const int bits = ElementBitWidth(x.shape().element_type());
      const int random = bits == 16 ? xla::U16 : bits == 32 ? xla::U32
                         : bits == 64 ? xla::U64 : xla::U8;
      if (bits == 8 || bits == 16 || bits == 32 || bits == 64) {
        ShapeProto rs = MakeArrayShape(random, DimsOf(x.shape()));
        Keep(main_->StochasticConvert(x, Get(rs), xla::BF16));
      }
    }
  }

  void BitcastConverts() {
    switch (r_.Below(3)) {
      case 0: {  // equal widths
        HloOp x = GetArray([](int t) { return t == xla::F32; }, xla::F32);
        Keep(main_->BitcastConvert(x, r_.Chance(50) ? xla::S32 : xla::U32));
        break;
      }
      case 1: {  // narrower: a minor dimension appears
        HloOp x = GetArray([](int t) { return t == xla::F32 || t == xla::S32; },
                           xla::F32, 2);
        Keep(main_->BitcastConvert(x, r_.Chance(50) ? xla::U8 : xla::BF16));
        break;
      }
      default: {  // wider: the minor dimension of the ratio goes
        std::vector<int64_t> d = RandomDims(2);
        d.push_back(2);
        HloOp x = Get(MakeArrayShape(xla::U16, d));
        Keep(main_->BitcastConvert(x, xla::F32));
        break;
      }
    }
  }

  void Shapes1() {
    HloOp x = GetArray([](int) { return true; }, FloatType(), 2);
    const std::vector<int64_t> d = DimsOf(x.shape());
    // broadcast: operand dimensions to increasing output positions, or a
    // transposing map for rank 2.
    {
      std::vector<int64_t> out;
      std::vector<int64_t> dims;
      const int64_t extra = r_.Range(1, 2);
      const int64_t rank = static_cast<int64_t>(d.size()) + extra;
      std::vector<int64_t> slots(static_cast<size_t>(rank));
      for (int64_t i = 0; i < rank; ++i) slots[i] = i;
      for (int64_t i = rank; i > 1; --i) std::swap(slots[i - 1], slots[r_.Below(i)]);
      slots.resize(d.size());
      if (r_.Chance(70)) std::sort(slots.begin(), slots.end());
      out.assign(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < rank; ++i) out[i] = r_.Range(1, o_.max_dim);
      for (size_t i = 0; i < d.size(); ++i) out[slots[i]] = d[i];
      Keep(main_->Broadcast(x, out, slots));
    }
    // reshape: flatten, or back to a split.
    {
      int64_t n = 1;
      for (int64_t v : d) n *= v;
      std::vector<int64_t> to = {n};
      if (n % 2 == 0 && r_.Chance(50)) to = {2, n / 2};
      Keep(main_->Reshape(x, to));
    }
    // transpose and reverse.
    if (!d.empty()) {
      std::vector<int64_t> perm(d.size());
      for (size_t i = 0; i < d.size(); ++i) perm[i] = static_cast<int64_t>(i);
      for (size_t i = perm.size(); i > 1; --i) {
        std::swap(perm[i - 1], perm[r_.Below(static_cast<int64_t>(i))]);
      }
      Keep(main_->Transpose(x, perm));
      Keep(main_->Reverse(x, {r_.Below(static_cast<int64_t>(d.size()))}));
    }
    Keep(main_->Iota(MakeArrayShape(r_.Chance(50) ? xla::S32 : xla::F32,
                                    RandomDimsRank(r_.Range(1, 3))),
                     0));
    if (d.size() > 0 && IsArrayShape(x.shape())) {
      // A bitcast to the same elements in one dimension.
      int64_t n = 1;
      for (int64_t v : d) n *= v;
      Keep(main_->Bitcast(x, MakeArrayShape(x.shape().element_type(), {n})));
    }
  }

  void Slices() {
    HloOp x = GetArray([](int t) { return t != xla::PRED; }, FloatType());
    const std::vector<int64_t> d = DimsOf(x.shape());
    std::vector<int64_t> start, limit, stride;
    for (int64_t v : d) {
      const int64_t s = r_.Range(0, v);
      start.push_back(s);
      limit.push_back(r_.Range(s, v));
      stride.push_back(r_.Range(1, 3));
    }
    Keep(main_->Slice(x, start, limit, stride));
    // dynamic-slice and dynamic-update-slice with scalar indices.
    std::vector<HloOp> idx;
    std::vector<int64_t> sizes;
    const int it = r_.Chance(50) ? xla::S32 : xla::S64;
    for (int64_t v : d) {
      idx.push_back(Get(MakeScalarShape(it)));
      sizes.push_back(r_.Range(std::min<int64_t>(v, 1), v));
    }
    HloOp ds = main_->DynamicSlice(x, idx, sizes);
    Keep(ds);
    Keep(main_->DynamicUpdateSlice(x, ds, idx));
  }

  void ConcatPad() {
    HloOp x = GetArray([](int) { return true; }, FloatType());
    std::vector<int64_t> d = DimsOf(x.shape());
    if (d.empty()) {
      x = Fresh(MakeArrayShape(x.shape().element_type(), {r_.Range(1, 3)}));
      d = DimsOf(x.shape());
    }
    const int64_t dim = r_.Below(static_cast<int64_t>(d.size()));
    std::vector<HloOp> parts = {x};
    for (int64_t k = r_.Range(1, 2); k > 0; --k) {
      std::vector<int64_t> e = d;
      e[dim] = r_.Range(1, o_.max_dim);
      parts.push_back(Get(MakeArrayShape(x.shape().element_type(), e)));
    }
    Keep(main_->Concatenate(parts, dim));
    std::vector<PaddingDim> pads;
    for (int64_t v : d) {
      PaddingDim p;
      p.interior = r_.Range(0, 2);
      const int64_t size = v == 0 ? 0 : v + (v - 1) * p.interior;
      p.low = r_.Range(-std::min<int64_t>(size, 2), 2);
      p.high = r_.Range(-std::min<int64_t>(size + p.low, 2), 2);
      pads.push_back(p);
    }
    Keep(main_->Pad(x, Get(MakeScalarShape(x.shape().element_type())),
                    MakePaddingConfig(pads)));
  }

  void GatherOp() {
    const int t = FloatType();
    if (r_.Chance(70)) {
      // Rows of [N, M] picked by K indices.
      const int64_t n = r_.Range(2, 5), m = r_.Range(1, 4), k = r_.Range(1, 4);
      HloOp x = Get(MakeArrayShape(t, {n, m}));
      HloOp idx = Get(MakeArrayShape(xla::S32, {k}));
      Keep(main_->Gather(x, idx, MakeGatherDimensionNumbers({1}, {0}, {0}, 1),
                         {1, m}, r_.Chance(30)));
    } else {
      // Batching dimensions: operand [B, N, M], indices [B, K, 1].
      const int64_t b = r_.Range(1, 3), n = r_.Range(2, 4), m = r_.Range(1, 3),
                    k = r_.Range(1, 3);
      HloOp x = Get(MakeArrayShape(t, {b, n, m}));
      HloOp idx = Get(MakeArrayShape(xla::S32, {b, k, 1}));
      Keep(main_->Gather(
          x, idx, MakeGatherDimensionNumbers({2}, {1}, {1}, 2, {0}, {0}),
          {1, 1, m}));
    }
  }

  void ScatterOp() {
    const int t = FloatType();
    const int64_t n = r_.Range(2, 5), m = r_.Range(1, 4), k = r_.Range(1, 4);
    HloOp x = Get(MakeArrayShape(t, {n, m}));
    HloOp idx = Get(MakeArrayShape(xla::S32, {k}));
    HloOp upd = Get(MakeArrayShape(t, {k, m}));
    const HloComputationBuilder& red = Reducer(t, ReduceOp(t));
    if (r_.Chance(70)) {
      Keep(main_->Scatter({x}, idx, {upd}, red,
                          MakeScatterDimensionNumbers({1}, {0}, {0}, 1),
                          r_.Chance(30), r_.Chance(30)));
    } else {
      // Two operands and a computation of four parameters.
      HloOp y = Get(MakeArrayShape(xla::S32, {n, m}));
      HloOp upd2 = Get(MakeArrayShape(xla::S32, {k, m}));
      HloComputationBuilder& c =
          mb_.AddComputation(absl::StrCat("scatter2.", mb_counter_++));
      HloOp a = c.Parameter(0, MakeScalarShape(t));
      HloOp b = c.Parameter(1, MakeScalarShape(xla::S32));
      HloOp u = c.Parameter(2, MakeScalarShape(t));
      HloOp v = c.Parameter(3, MakeScalarShape(xla::S32));
      c.Tuple({c.Add(a, u), c.Maximum(b, v)});
      Keep(main_->Scatter({x, y}, idx, {upd, upd2}, c,
                          MakeScatterDimensionNumbers({1}, {0}, {0}, 1)));
    }
  }

  void DotOp() {
    const int64_t m = r_.Range(1, 4), k = r_.Range(1, 4), n = r_.Range(1, 4);
    const bool bf = r_.Chance(30);
    const int t = bf ? xla::BF16 : xla::F32;
    xla::PrecisionConfig precision;
    if (r_.Chance(30)) {
      precision.add_operand_precision(xla::PrecisionConfig::HIGHEST);
      precision.add_operand_precision(xla::PrecisionConfig::DEFAULT);
    }
    std::optional<int> result;
    if (bf) result = xla::F32;
    if (r_.Chance(50)) {
      Keep(main_->Dot(Get(MakeArrayShape(t, {m, k})), Get(MakeArrayShape(t, {k, n})),
                      MakeDotDimensionNumbers({1}, {0}), result, precision));
    } else {
      const int64_t b = r_.Range(1, 3);
      Keep(main_->Dot(Get(MakeArrayShape(t, {b, m, k})),
                      Get(MakeArrayShape(t, {b, n, k})),
                      MakeDotDimensionNumbers({2}, {2}, {0}, {0}), result,
                      precision));
    }
    if (r_.Chance(30)) {
      Keep(main_->Dot(Get(MakeArrayShape(xla::S8, {m, k})),
                      Get(MakeArrayShape(xla::S8, {k, n})),
                      MakeDotDimensionNumbers({1}, {0}), xla::S32));
    }
  }

  void ConvolutionOp() {
    const int64_t spatial = r_.Range(1, 2);
    const int64_t rank = spatial + 2;
    // Random positions for batch, feature and spatial dimensions of each
    // of input, kernel and output.
    auto labels = [&](char a, char b) {
      std::string s;
      s.push_back(a);
      s.push_back(b);
      for (int64_t i = 0; i < spatial; ++i) s.push_back(static_cast<char>('0' + i));
      for (size_t i = s.size(); i > 1; --i) {
        std::swap(s[i - 1], s[r_.Below(static_cast<int64_t>(i))]);
      }
      return s;
    };
    const std::string in = labels('b', 'f'), ker = labels('i', 'o'),
                      out = labels('b', 'f');
    absl::StatusOr<xla::ConvolutionDimensionNumbers> dn =
        ConvolutionDimensionNumbersFromLabels(absl::StrCat(in, "_", ker, "->", out));
    if (!dn.ok()) return;
    int64_t fg = 1, bg = 1;
    if (r_.Chance(25)) fg = 2;
    else if (r_.Chance(25)) bg = 2;
    const int64_t batch = r_.Range(1, 2) * bg;
    const int64_t kin = r_.Range(1, 2);
    const int64_t features = kin * fg;
    const int64_t kout = r_.Range(1, 2) * fg * bg;
    std::vector<int64_t> in_dims(static_cast<size_t>(rank)),
        k_dims(static_cast<size_t>(rank));
    in_dims[dn->input_batch_dimension()] = batch;
    in_dims[dn->input_feature_dimension()] = features;
    k_dims[dn->kernel_input_feature_dimension()] = kin;
    k_dims[dn->kernel_output_feature_dimension()] = kout;
    std::vector<int64_t> sizes, strides, lhs_dil, rhs_dil;
    std::vector<std::pair<int64_t, int64_t>> pads;
    for (int64_t i = 0; i < spatial; ++i) {
      const int64_t base = r_.Range(2, 5);
      const int64_t size = r_.Range(1, 3);
      in_dims[dn->input_spatial_dimensions(i)] = base;
      k_dims[dn->kernel_spatial_dimensions(i)] = size;
      sizes.push_back(size);
      strides.push_back(r_.Range(1, 2));
      pads.emplace_back(r_.Range(0, 1), r_.Range(-1, 1));
      lhs_dil.push_back(r_.Range(1, 2));
      rhs_dil.push_back(r_.Range(1, 2));
    }
    const int t = r_.Chance(70) ? xla::F32 : xla::BF16;
    Keep(main_->Convolution(Get(MakeArrayShape(t, in_dims)),
                            Get(MakeArrayShape(t, k_dims)),
                            MakeWindow(sizes, strides, pads, lhs_dil, rhs_dil),
                            *dn, fg, bg));
  }

  void ReduceOp() {
    HloOp x = GetArray([](int t) { return !IsComplexType(t); }, FloatType());
    const int t = x.shape().element_type();
    const int64_t rank = x.shape().dimensions_size();
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i) {
      if (r_.Chance(50)) dims.push_back(i);
    }
    Keep(main_->Reduce({x}, {Get(MakeScalarShape(t))}, dims,
                       Reducer(t, ReduceOp(t))));
    if (r_.Chance(40) && rank > 0) {
      // Variadic: (value, index) pairs with a tuple-returning reducer.
      HloOp v = Get(MakeArrayShape(xla::F32, DimsOf(x.shape())));
      HloOp i = Get(MakeArrayShape(xla::S32, DimsOf(x.shape())));
      HloComputationBuilder& c =
          mb_.AddComputation(absl::StrCat("argmax.", mb_counter_++));
      const ShapeProto f = MakeScalarShape(xla::F32), s = MakeScalarShape(xla::S32);
      HloOp a = c.Parameter(0, f), ai = c.Parameter(1, s), b = c.Parameter(2, f),
            bi = c.Parameter(3, s);
      HloOp ge = c.Compare(a, b, ComparisonDirection::kGe);
      c.Tuple({c.Select(ge, a, b), c.Select(ge, ai, bi)});
      Keep(main_->Reduce({v, i}, {Get(f), Get(s)}, {0}, c));
    }
  }

  void WindowOps() {
    HloOp x = GetFloat();
    const int t = x.shape().element_type();
    const std::vector<int64_t> d = DimsOf(x.shape());
    std::vector<int64_t> sizes, strides, base_dil, win_dil;
    std::vector<std::pair<int64_t, int64_t>> pads;
    for (int64_t v : d) {
      sizes.push_back(r_.Range(1, std::max<int64_t>(v, 1)));
      strides.push_back(r_.Range(1, 2));
      pads.emplace_back(r_.Range(0, 1), r_.Range(0, 1));
      base_dil.push_back(r_.Range(1, 2));
      win_dil.push_back(1);
    }
    Keep(main_->ReduceWindow({x}, {Get(MakeScalarShape(t))},
                             MakeWindow(sizes, strides, pads, base_dil, win_dil),
                             Reducer(t, ReduceOp(t))));
    // select-and-scatter over windows without padding or dilation.
    const xla::Window w = MakeWindow(sizes, strides);
    absl::StatusOr<std::vector<int64_t>> out = InferWindowDimensions(d, w);
    if (!out.ok()) return;
    HloComputationBuilder& sel =
        mb_.AddComputation(absl::StrCat("select.", mb_counter_++));
    sel.Compare(sel.Parameter(0, MakeScalarShape(t)),
                sel.Parameter(1, MakeScalarShape(t)), ComparisonDirection::kGe);
    Keep(main_->SelectAndScatter(x, sel, w, Get(MakeArrayShape(t, *out)),
                                 Get(MakeScalarShape(t)),
                                 Reducer(t, HloOpcode::kAdd)));
  }

  void SortOps() {
    HloOp k = GetArray([](int t) { return IsFloatingType(t) || IsIntegralType(t); },
                       xla::F32);
    std::vector<int64_t> d = DimsOf(k.shape());
    if (d.empty()) {
      k = Fresh(MakeArrayShape(xla::F32, {r_.Range(1, 4)}));
      d = DimsOf(k.shape());
    }
    const int64_t dim = r_.Below(static_cast<int64_t>(d.size()));
    std::vector<HloOp> ops = {k};
    std::vector<int> types = {k.shape().element_type()};
    if (r_.Chance(50)) {
      ops.push_back(Get(MakeArrayShape(xla::S32, d)));
      types.push_back(xla::S32);
    }
    Keep(main_->Sort(ops, dim, Comparator(types), r_.Chance(50)));
    HloOp t = Get(MakeArrayShape(xla::F32, d));
    Keep(main_->TopK(t, r_.Range(0, d.back()), r_.Chance(70)));
  }

  void MapOp() {
    HloOp a = GetFloat();
    const int t = a.shape().element_type();
    Keep(main_->Map({a, Get(a.shape())}, Reducer(t, ReduceOp(t))));
  }

  void CallOps() {
    HloOp a = GetArray([](int) { return true; }, FloatType());
    HloOp b = GetArray([](int) { return true; }, xla::S32);
    HloComputationBuilder& c = Unit("callee", {a.shape(), b.shape()});
    HloOp call = main_->Call(c, {a, b});
    Keep(call);
    HloOp t = main_->Tuple({a, b, call});
    Keep(main_->GetTupleElement(t, r_.Below(3)));
  }

  void WhileOp() {
    HloOp x = GetFloat();
    const ShapeProto counter = MakeScalarShape(xla::S32);
    const ShapeProto state = MakeTupleShape(std::vector<ShapeProto>{counter, x.shape()});
    HloComputationBuilder& cond =
        mb_.AddComputation(absl::StrCat("cond.", mb_counter_++));
    {
      HloOp p = cond.Parameter(0, state);
      cond.Compare(cond.GetTupleElement(p, 0), cond.ConstantR0Int(xla::S32, 3),
                   ComparisonDirection::kLt);
    }
    HloComputationBuilder& body =
        mb_.AddComputation(absl::StrCat("body.", mb_counter_++));
    {
      HloOp p = body.Parameter(0, state);
      HloOp i = body.GetTupleElement(p, 0);
      HloOp v = body.GetTupleElement(p, 1);
      body.Tuple({body.Add(i, body.ConstantR0Int(xla::S32, 1)), body.Negate(v)});
    }
    HloOp init = main_->Tuple({main_->ConstantR0Int(xla::S32, 0), x});
    HloOp w = main_->While(cond, body, init);
    Keep(main_->GetTupleElement(w, 1));
  }

  void ConditionalOp() {
    HloOp a = GetFloat();
    const ShapeProto out = a.shape();
    if (r_.Chance(50)) {
      HloOp b = Get(out);
      HloComputationBuilder& t = Unit("on_true", {out});
      HloComputationBuilder& f = Unit("on_false", {out});
      HloOp p = Get(MakeScalarShape(xla::PRED));
      const HloComputationBuilder* branches[] = {&t, &f};
      Keep(main_->Conditional(p, {a, b}, branches));
    } else {
      const int64_t n = r_.Range(1, 3);
      std::vector<const HloComputationBuilder*> branches;
      std::vector<HloOp> ops;
      for (int64_t i = 0; i < n; ++i) {
        branches.push_back(&Unit("branch", {out}));
        ops.push_back(Get(out));
      }
      Keep(main_->Conditional(Get(MakeScalarShape(xla::S32)), ops, branches));
    }
  }

  void FusionOp() {
    HloOp a = GetFloat();
    HloOp b = Get(a.shape());
    HloComputationBuilder& f =
        mb_.AddComputation(absl::StrCat("fused.", mb_counter_++));
    HloOp x = f.Parameter(0, a.shape());
    HloOp y = f.Parameter(1, a.shape());
    f.Multiply(f.Add(x, y), x);
    static constexpr std::string_view kKinds[] = {"kLoop", "kInput", "kOutput",
                                                  "kCustom"};
    Keep(main_->Fusion(kKinds[r_.Below(4)], {a, b}, f));
  }

  void BatchNorms() {
    const std::vector<int64_t> d = RandomDimsRank(r_.Range(1, 3));
    const int64_t fi = r_.Below(static_cast<int64_t>(d.size()));
    const ShapeProto xs = MakeArrayShape(xla::F32, d);
    const ShapeProto fs = MakeArrayShape(xla::F32, {d[fi]});
    HloOp x = Get(xs);
    HloOp scale = Get(fs), offset = Get(fs);
    const float eps = 0.001f * static_cast<float>(r_.Range(1, 5));
    switch (r_.Below(3)) {
      case 0: {
        HloOp t = main_->BatchNormTraining(x, scale, offset, eps, fi);
        Keep(main_->GetTupleElement(t, 0));
        break;
      }
      case 1:
        Keep(main_->BatchNormInference(x, scale, offset, Get(fs), Get(fs), eps, fi));
        break;
      default: {
        HloOp g = main_->BatchNormGrad(x, scale, Get(fs), Get(fs), Get(xs), eps, fi);
        Keep(main_->GetTupleElement(g, 1));
        break;
      }
    }
  }

  CollectiveOptions Groups(int64_t size) {
    CollectiveOptions o;
    if (size > 1 || r_.Chance(50)) {
      const int64_t groups = r_.Range(1, 2);
      for (int64_t g = 0; g < groups; ++g) {
        std::vector<int64_t> ids;
        for (int64_t i = 0; i < size; ++i) ids.push_back(g * size + i);
        o.replica_groups.push_back(ids);
      }
    }
    if (r_.Chance(40)) {
      o.channel_id = next_channel_++;
      o.use_global_device_ids = !o.replica_groups.empty() && r_.Chance(50);
    }
    return o;
  }

  void Collectives() {
    HloOp x = GetFloat();
    const int t = x.shape().element_type();
    const int64_t g = r_.Range(1, 2);
    switch (r_.Below(5)) {
      case 0: {
        std::vector<HloOp> ops = {x};
        if (r_.Chance(30)) ops.push_back(Get(x.shape()));
        HloOp ar = main_->AllReduce(ops, Reducer(t, ReduceOp(t)), Groups(g));
        Keep(ops.size() == 1 ? ar : main_->GetTupleElement(ar, 0));
        break;
      }
      case 1: {
        HloOp a = GetArray([](int) { return true; }, t, 2);
        if (a.shape().dimensions_size() == 0) {
          a = Fresh(MakeArrayShape(t, {r_.Range(1, 3)}));
        }
        Keep(main_->AllGather({a}, r_.Below(a.shape().dimensions_size()),
                              Groups(g)));
        break;
      }
      case 2: {
        std::vector<int64_t> d = RandomDimsRank(r_.Range(1, 2));
        d[0] *= g;
        Keep(main_->ReduceScatter({Get(MakeArrayShape(t, d))},
                                  Reducer(t, HloOpcode::kAdd), 0, Groups(g)));
        break;
      }
      case 3: {
        CollectiveOptions o = Groups(g);
        o.use_global_device_ids = false;
        if (r_.Chance(50)) {
          std::vector<int64_t> d = RandomDimsRank(r_.Range(1, 2));
          d[0] *= g;
          Keep(main_->AllToAll({Get(MakeArrayShape(t, d))}, 0, o));
        } else {
          const int64_t members = o.replica_groups.empty()
                                      ? 1
                                      : static_cast<int64_t>(o.replica_groups[0].size());
          std::vector<HloOp> ops;
          for (int64_t i = 0; i < members; ++i) ops.push_back(Get(x.shape()));
          HloOp a2a = main_->AllToAll(ops, std::nullopt, o);
          Keep(main_->GetTupleElement(a2a, 0));
        }
        break;
      }
      default: {
        std::vector<std::pair<int64_t, int64_t>> pairs = {{0, 1}, {1, 0}};
        if (r_.Chance(50)) pairs = {{0, 0}};
        std::optional<int64_t> ch;
        if (r_.Chance(50)) ch = next_channel_++;
        Keep(main_->CollectivePermute(x, pairs, ch));
        break;
      }
    }
  }

  void AsyncCollectives() {
    HloOp x = GetFloat();
    const int t = x.shape().element_type();
    switch (r_.Below(3)) {
      case 0:
        Keep(main_->AllReduceDone(
            main_->AllReduceStart({x}, Reducer(t, HloOpcode::kAdd), Groups(1))));
        break;
      case 1: {
        if (x.shape().dimensions_size() == 0) {
          x = Fresh(MakeArrayShape(t, {r_.Range(1, 3)}));
        }
        Keep(main_->AllGatherDone(main_->AllGatherStart({x}, 0, Groups(2))));
        break;
      }
      default:
        Keep(main_->CollectivePermuteDone(
            main_->CollectivePermuteStart(x, {{0, 1}, {1, 0}})));
        break;
    }
  }

  void CustomCallOp() {
    HloOp x = GetFloat();
    static constexpr std::string_view kTargets[] = {
        "AwsNeuronSoftmax", "AwsNeuronGelu", "AwsNeuronTransferWithStaticRing",
        "my\"target"};
    const std::string_view target = kTargets[r_.Below(4)];
    std::string config;
    if (r_.Chance(50)) config = absl::StrCat(r_.Below(4));
    if (r_.Chance(20)) config = "{\"k\": [1, 2]}";
    if (r_.Chance(10)) config = std::string("\x01\xff\"\\", 4);
    HloOp c = main_->CustomCall(target, {x}, x.shape(), config);
    if (r_.Chance(30)) {
      xla::OutputOperandAliasing* a =
          main_->mutable_proto(c)->add_output_operand_aliasing();
      a->set_operand_index(0);
    }
    if (r_.Chance(20)) {
      main_->mutable_proto(c)->set_custom_call_has_side_effect(true);
    }
    Keep(c);
    // A tuple-shaped custom call, as Neuron's top-k is.
    if (r_.Chance(30)) {
      const ShapeProto tup = MakeTupleShape(std::vector<ShapeProto>{
          x.shape(), MakeArrayShape(xla::U32, DimsOf(x.shape()))});
      Keep(main_->GetTupleElement(main_->CustomCall("AwsNeuronTopK", {x}, tup, "1"),
                                  0));
    }
  }

  void RngOps() {
    const int t = FloatType();
    Keep(main_->Rng(Get(MakeScalarShape(t)), Get(MakeScalarShape(t)),
                    r_.Chance(50) ? xla::RNG_UNIFORM : xla::RNG_NORMAL,
                    RandomDims()));
    static constexpr int kAlgos[] = {xla::RNG_DEFAULT, xla::RNG_THREE_FRY,
                                     xla::RNG_PHILOX};
    HloOp st = Get(MakeArrayShape(xla::U64, {2}));
    HloOp g = main_->RngBitGenerator(
        st, r_.Pick(kAlgos),
        MakeArrayShape(r_.Chance(50) ? xla::U32 : xla::U64, RandomDims()));
    Keep(main_->GetTupleElement(g, 1));
    Keep(main_->RngGetAndUpdateState(r_.Range(1, 100)));
  }

  HloOp Token() {
    if (!tokens_.empty() && r_.Chance(50)) return r_.Pick(tokens_);
    std::vector<HloOp> ins;
    if (!tokens_.empty() && r_.Chance(50)) ins.push_back(r_.Pick(tokens_));
    HloOp t = main_->AfterAll(ins);
    if (t.valid()) tokens_.push_back(t);
    return t;
  }

  void Tokens() {
    HloOp x = GetArray([](int) { return true; }, FloatType());
    Keep(main_->AddDependency(x, Token()));
    Keep(main_->OptimizationBarrier(x));
    Keep(main_->Domain(x));
    Keep(r_.Chance(50) ? main_->ReplicaId() : main_->PartitionId());
  }

  void LinearAlgebra() {
    const int64_t n = r_.Range(1, 3);
    std::vector<int64_t> batch;
    if (r_.Chance(40)) batch.push_back(r_.Range(1, 2));
    std::vector<int64_t> a = batch;
    a.push_back(n);
    a.push_back(n);
    const int t = r_.Chance(70) ? xla::F32 : xla::F64;
    HloOp m = Get(MakeArrayShape(t, a));
    Keep(main_->Cholesky(m, r_.Chance(50)));
    xla::TriangularSolveOptions o;
    o.set_left_side(r_.Chance(50));
    o.set_lower(r_.Chance(50));
    o.set_unit_diagonal(r_.Chance(50));
    static constexpr xla::TriangularSolveOptions::Transpose kT[] = {
        xla::TriangularSolveOptions::NO_TRANSPOSE,
        xla::TriangularSolveOptions::TRANSPOSE,
        xla::TriangularSolveOptions::ADJOINT};
    o.set_transpose_a(kT[r_.Below(3)]);
    std::vector<int64_t> b = batch;
    const int64_t k = r_.Range(1, 3);
    if (o.left_side()) {
      b.push_back(n);
      b.push_back(k);
    } else {
      b.push_back(k);
      b.push_back(n);
    }
    Keep(main_->TriangularSolve(m, Get(MakeArrayShape(t, b)), o));
  }

  void FftOp() {
    const int64_t len = r_.Range(1, 4) * 2;
    std::vector<int64_t> d = RandomDims(1);
    switch (r_.Below(4)) {
      case 0:
      case 1: {
        d.push_back(len);
        Keep(main_->Fft(Get(MakeArrayShape(xla::C64, d)),
                        r_.Chance(50) ? xla::FFT : xla::IFFT, {len}));
        break;
      }
      case 2: {
        d.push_back(len);
        Keep(main_->Fft(Get(MakeArrayShape(xla::F32, d)), xla::RFFT, {len}));
        break;
      }
      default: {
        d.push_back(len / 2 + 1);
        Keep(main_->Fft(Get(MakeArrayShape(xla::C64, d)), xla::IRFFT, {len}));
        break;
      }
    }
  }

  void Copies() {
    HloOp x = GetArray([](int) { return true; }, FloatType());
    Keep(main_->CopyDone(main_->CopyStart(x)));
  }

  void SendRecv() {
    HloOp x = GetArray([](int) { return true; }, FloatType());
    const int64_t ch = next_channel_++;
    HloOp s = main_->Send(x, Token(), ch, r_.Chance(30));
    tokens_.push_back(main_->SendDone(s));
    HloOp r = main_->Recv(Token(), x.shape(), next_channel_++, r_.Chance(30));
    HloOp rd = main_->RecvDone(r);
    Keep(main_->GetTupleElement(rd, 0));
    if (r_.Chance(50)) {
      HloOp in = main_->Infeed(Token(), x.shape(), r_.Chance(50) ? "" : "cfg");
      Keep(main_->GetTupleElement(in, 0));
      tokens_.push_back(main_->Outfeed(x, Token(), r_.Chance(50) ? "" : "out"));
    }
  }

  void AsyncOp() {
    HloOp x = GetFloat();
    HloComputationBuilder& w = Unit("wrapped", {x.shape()});
    HloOp start = main_->AsyncStart(w, {x});
    if (r_.Chance(40)) start = main_->AsyncUpdate(start);
    Keep(main_->AsyncDone(start));
  }

  void DimensionSizes() {
    HloOp x = GetArray([](int) { return true; }, FloatType());
    if (x.shape().dimensions_size() == 0) {
      x = Fresh(MakeArrayShape(xla::F32, {r_.Range(1, 4)}));
    }
    const int64_t d = r_.Below(x.shape().dimensions_size());
    HloOp size = main_->GetDimensionSize(x, d);
    Keep(size);
    if (r_.Chance(50)) Keep(main_->SetDimensionSize(x, size, d));
  }

  // Attributes on some of the instructions from `first` on.
  void Decorate(size_t first) {
    const int64_t count = main_->instruction_count();
    for (int64_t k = static_cast<int64_t>(first); k < count; ++k) {
      HloOp op = main_->InstructionAt(k);
      xla::HloInstructionProto* p = main_->mutable_proto(op);
      if (p == nullptr) continue;
      if (r_.Chance(15)) {
        xla::OpMetadata m;
        m.set_op_type(r_.Chance(50) ? "aten__add" : "xla::Mul");
        m.set_op_name(absl::StrCat("model/layer_", r_.Below(4), "/op"));
        if (r_.Chance(60)) {
          m.set_source_file("model \"a\".py");
          m.set_source_line(static_cast<int32_t>(r_.Range(1, 500)));
          if (r_.Chance(30)) {
            m.set_source_end_line(m.source_line() + 2);
            m.set_source_column(static_cast<int32_t>(r_.Range(1, 80)));
            m.set_source_end_column(m.source_column() + 3);
          }
        }
        if (r_.Chance(30)) m.set_stack_frame_id(static_cast<int32_t>(r_.Range(1, 2)));
        main_->SetMetadata(op, m);
      }
      if (r_.Chance(10)) {
        main_->SetFrontendAttribute(op, "neff_input_names",
                                    absl::StrCat("input", r_.Below(8)));
        if (r_.Chance(50)) main_->SetFrontendAttribute(op, "a_key", "v \"1\"");
      }
      if (r_.Chance(8) && IsArrayShape(p->shape())) {
        xla::OpSharding s;
        if (r_.Chance(50)) {
          s.set_type(xla::OpSharding::REPLICATED);
        } else {
          s.set_type(xla::OpSharding::MAXIMAL);
          s.add_tile_assignment_devices(0);
        }
        main_->SetSharding(op, s);
      }
      if (r_.Chance(5) && p->opcode() != "custom-call") {
        main_->SetBackendConfig(op, "{\"operation_queue_id\":\"0\"}");
      }
      if (r_.Chance(6) && k > 0) {
        main_->AddControlDependency(main_->InstructionAt(r_.Below(k)), op);
      }
    }
  }

  Rng r_;
  RandomModuleOptions o_;
  HloModuleBuilder mb_;
  HloComputationBuilder* main_ = nullptr;
  std::vector<HloOp> pool_;
  std::vector<HloOp> tokens_;
  std::map<std::string, const HloComputationBuilder*> reducers_;
  int64_t next_param_ = 0;
  int64_t next_channel_ = 1;
  int mb_counter_ = 1;
};

}  // namespace

absl::StatusOr<xla::HloModuleProto> RandomModule(uint64_t seed,
                                                 const RandomModuleOptions& options) {
  return Generator(seed, options).Run();
}

std::vector<HloOpcode> RandomModuleOpcodes() {
  return {
      HloOpcode::kAbs, HloOpcode::kAdd, HloOpcode::kAddDependency,
      HloOpcode::kAfterAll, HloOpcode::kAllGather, HloOpcode::kAllGatherDone,
      HloOpcode::kAllGatherStart, HloOpcode::kAllReduce,
      HloOpcode::kAllReduceDone, HloOpcode::kAllReduceStart,
      HloOpcode::kAllToAll, HloOpcode::kAnd, HloOpcode::kAsyncDone,
      HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate, HloOpcode::kAtan2,
      HloOpcode::kBatchNormGrad, HloOpcode::kBatchNormInference,
      HloOpcode::kBatchNormTraining, HloOpcode::kBitcast,
      HloOpcode::kBitcastConvert, HloOpcode::kBroadcast, HloOpcode::kCall,
      HloOpcode::kCbrt, HloOpcode::kCeil, HloOpcode::kCholesky,
      HloOpcode::kClamp, HloOpcode::kClz, HloOpcode::kCollectivePermute,
      HloOpcode::kCollectivePermuteDone, HloOpcode::kCollectivePermuteStart,
      HloOpcode::kCompare, HloOpcode::kComplex, HloOpcode::kConcatenate,
      HloOpcode::kConditional, HloOpcode::kConstant, HloOpcode::kConvert,
      HloOpcode::kConvolution, HloOpcode::kCopy, HloOpcode::kCopyDone,
      HloOpcode::kCopyStart, HloOpcode::kCos, HloOpcode::kCustomCall,
      HloOpcode::kDivide, HloOpcode::kDomain, HloOpcode::kDot,
      HloOpcode::kDynamicSlice, HloOpcode::kDynamicUpdateSlice,
      HloOpcode::kErf, HloOpcode::kExp, HloOpcode::kExpm1, HloOpcode::kFft,
      HloOpcode::kFloor, HloOpcode::kFusion, HloOpcode::kGather,
      HloOpcode::kGetDimensionSize, HloOpcode::kGetTupleElement,
      HloOpcode::kImag, HloOpcode::kInfeed, HloOpcode::kIota,
      HloOpcode::kIsFinite, HloOpcode::kLog, HloOpcode::kLog1p,
      HloOpcode::kLogistic, HloOpcode::kMap, HloOpcode::kMaximum,
      HloOpcode::kMinimum, HloOpcode::kMultiply, HloOpcode::kNegate,
      HloOpcode::kNot, HloOpcode::kOptimizationBarrier, HloOpcode::kOr,
      HloOpcode::kOutfeed, HloOpcode::kPad, HloOpcode::kParameter,
      HloOpcode::kPartitionId, HloOpcode::kPopulationCount, HloOpcode::kPower,
      HloOpcode::kReal, HloOpcode::kRecv, HloOpcode::kRecvDone,
      HloOpcode::kReduce, HloOpcode::kReducePrecision,
      HloOpcode::kReduceScatter, HloOpcode::kReduceWindow,
      HloOpcode::kRemainder, HloOpcode::kReplicaId, HloOpcode::kReshape,
      HloOpcode::kReverse, HloOpcode::kRng, HloOpcode::kRngBitGenerator,
      HloOpcode::kRngGetAndUpdateState, HloOpcode::kRoundNearestAfz,
      HloOpcode::kRoundNearestEven, HloOpcode::kRsqrt, HloOpcode::kScatter,
      HloOpcode::kSelect, HloOpcode::kSelectAndScatter, HloOpcode::kSend,
      HloOpcode::kSendDone, HloOpcode::kSetDimensionSize,
      HloOpcode::kShiftLeft, HloOpcode::kShiftRightArithmetic,
      HloOpcode::kShiftRightLogical, HloOpcode::kSign, HloOpcode::kSin,
      HloOpcode::kSlice, HloOpcode::kSort, HloOpcode::kSqrt,
      HloOpcode::kStochasticConvert, HloOpcode::kSubtract, HloOpcode::kTan,
      HloOpcode::kTanh, HloOpcode::kTopK, HloOpcode::kTranspose,
      HloOpcode::kTriangularSolve, HloOpcode::kTuple, HloOpcode::kWhile,
      HloOpcode::kXor};
}

}  // namespace decomposed::hlo
