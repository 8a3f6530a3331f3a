// Divergence origins (analysis/divergence.h, docs/eval.md §9): two
// evaluations stepped together, or one against a directory of values,
// each instruction's values compared as they are made and let go.
#include "decomposed/analysis/divergence.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/analysis/report.h"
#include "decomposed/eval/numerics.h"
#include "decomposed/eval/thread_pool.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/status.h"
#include "decomposed/xla/element_value.h"
#include "nlohmann/json.hpp"
#include "src/analysis/kernels.h"

namespace decomposed {
namespace {

namespace fs = std::filesystem;
using eval::Array;
using eval::Value;
using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Elements of a strided array gathered per comparison chunk (a broadcast
// is compared in place, never materialised).
constexpr size_t kGatherElements = size_t{1} << 14;
// Values of more elements are compared in pieces on the evaluator's
// threads (a piece is at least this many elements).
constexpr uint64_t kParallelElements = uint64_t{1} << 18;
// index.json is read whole: a dump's index of a very large module stays far
// below this.
constexpr uintmax_t kMaxIndexBytes = uintmax_t{1} << 30;
// Origins that get paths to the outputs (the highest ranked): each path
// search walks the graph once.
constexpr size_t kMaxPathOrigins = 1000;

// --- Types and tolerances ----------------------------------------------------

bool IsTuple(const xla::ShapeProto& s) {
  return s.element_type() == static_cast<int>(PrimitiveType::kTuple);
}

void LeafTypes(const xla::ShapeProto& s, std::vector<PrimitiveType>* out) {
  if (IsTuple(s)) {
    for (const xla::ShapeProto& e : s.tuple_shapes()) LeafTypes(e, out);
    return;
  }
  const PrimitiveTypeInfo* i = FindPrimitiveType(s.element_type());
  if (i && i->type != PrimitiveType::kToken) out->push_back(i->type);
}

bool IsFloatType(PrimitiveType t) {
  const ElementKind k = KindOf(t);
  return k == ElementKind::kReal || k == ElementKind::kComplex;
}

Tolerance Loosest(Tolerance a, const Tolerance& b) {
  a.rtol = std::max(a.rtol, b.rtol);
  a.atol = std::max(a.atol, b.atol);
  return a;
}

std::string ShapeText(const xla::ShapeProto& s) {
  if (IsTuple(s)) {
    std::vector<std::string> parts;
    for (const xla::ShapeProto& e : s.tuple_shapes()) parts.push_back(ShapeText(e));
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  const PrimitiveTypeInfo* i = FindPrimitiveType(s.element_type());
  std::string name = i ? std::string(i->name) : "?";
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (i && i->type == PrimitiveType::kToken) return name;
  return absl::StrCat(name, "[", absl::StrJoin(s.dimensions(), ","), "]");
}

// Instructions that only move elements: when both sides run the same
// program and every operand agrees, the result agrees.
bool MovesElementsOnly(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kBitcast:
    case HloOpcode::kTranspose: case HloOpcode::kCopy: case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kReverse: case HloOpcode::kConcatenate: case HloOpcode::kPad:
    case HloOpcode::kGather: case HloOpcode::kSelect: case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement: case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain: case HloOpcode::kAddDependency:
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone:
    case HloOpcode::kParameter: case HloOpcode::kConstant:
      return true;
    default:
      return false;
  }
}

// --- Comparing two values ---------------------------------------------------

// Elements [start, start + n) of `a` in logical row-major order, contiguous
// at the returned pointer (a view for a contiguous array, else gathered
// into `scratch`).
const char* ElementsAt(const Array& a, uint64_t start, size_t n, std::vector<char>& scratch) {
  const size_t w = a.element_bytes();
  if (a.is_contiguous()) return a.data() + start * w;
  scratch.resize(n * w);
  const std::vector<int64_t>& dims = a.dims();
  const std::vector<int64_t>& strides = a.strides();
  std::vector<int64_t> idx = UnravelIndex(start, dims);
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * strides[d];
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(scratch.data() + i * w, a.data() + off * static_cast<int64_t>(w), w);
    for (size_t d = dims.size(); d-- > 0;) {
      off += strides[d];
      if (++idx[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
  return scratch.data();
}

double RelativeError(const CompareMetrics& m) {
  if (m.expected_nan != m.actual_nan) return kInf;
  double r = 0;
  if (m.rms_error && *m.rms_error > 0) {
    r = m.expected_rms && *m.expected_rms > 0 ? *m.rms_error / *m.expected_rms : kInf;
    if (!std::isfinite(r)) r = kInf;
  }
  // NaNs in different places, with every finite pair equal.
  if (m.mismatches > 0 && r == 0) r = kInf;
  return r;
}

struct Comparison {
  bool differs = false;
  double error = 0;
  CompareMetrics metrics;
};

absl::Status DimsError(std::string_view where, const Array& e, const Array& a) {
  return absl::InvalidArgumentError(absl::StrCat(
      Sv(where), ": expected a value of ", e.ShapeString(), ", found ", a.ShapeString()));
}

// Adds one leaf's metrics into a tuple's.
void Merge(CompareMetrics& into, const CompareMetrics& m, bool first) {
  if (first) {
    into = m;
    return;
  }
  const double n0 = static_cast<double>(into.elements), n1 = static_cast<double>(m.elements);
  auto wmean = [&](const std::optional<double>& a, const std::optional<double>& b, bool sq)
      -> std::optional<double> {
    if (!a) return b;
    if (!b) return a;
    if (n0 + n1 == 0) return a;
    if (sq) return std::sqrt((n0 * *a * *a + n1 * *b * *b) / (n0 + n1));
    return (n0 * *a + n1 * *b) / (n0 + n1);
  };
  into.mean_abs_error = wmean(into.mean_abs_error, m.mean_abs_error, false);
  into.rms_error = wmean(into.rms_error, m.rms_error, true);
  into.expected_rms = wmean(into.expected_rms, m.expected_rms, true);
  into.cosine.reset();
  if (m.max_abs_error && (!into.max_abs_error || *m.max_abs_error > *into.max_abs_error)) {
    into.max_abs_error = m.max_abs_error;
    into.max_abs_error_index = m.max_abs_error_index;
  }
  if (m.max_rel_error && (!into.max_rel_error || *m.max_rel_error > *into.max_rel_error)) {
    into.max_rel_error = m.max_rel_error;
    into.max_rel_error_index = m.max_rel_error_index;
  }
  into.elements += m.elements;
  into.mismatches += m.mismatches;
  into.expected_nan += m.expected_nan;
  into.actual_nan += m.actual_nan;
  into.expected_inf += m.expected_inf;
  into.actual_inf += m.actual_inf;
}

bool WidensToF32(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

// `n` elements of `t` (bf16, f16 or f32) as f32, exactly: `p` itself for
// f32, else converted into `scratch`.
const char* WidenToF32(PrimitiveType t, const char* p, size_t n, std::vector<float>& scratch) {
  if (t == PrimitiveType::kF32) return p;
  scratch.resize(n);
  if (t == PrimitiveType::kBF16) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(&scratch[i], &bits, 4);
    }
  } else {
    for (size_t i = 0; i < n; ++i) scratch[i] = static_cast<float>(RealValue(t, p + 2 * i));
  }
  return reinterpret_cast<const char*>(scratch.data());
}

// One piece's quick pass (CompareLeaves): cleared when every element was
// finite and within its tolerance.
struct QuickSums {
  bool cleared = false;
  double max_abs = 0;
  internal::CompensatedSum abs, sq, e_sq;
};

// The tolerance of one leaf: `tol` for floats; an integer or PRED leaf (of
// a tuple that also holds floats) by its own type's rule, exact by
// default, with the user's overrides.
Tolerance LeafTolerance(const Array& e, const Array& a, const Tolerance& tol,
                        const CompareOptions& o) {
  if (IsFloatType(e.type()) || IsFloatType(a.type())) return tol;
  Tolerance t = ResolveTolerance(o, e.type(), a.type());
  return t;
}

absl::Status CompareLeaves(const Value& e, const Value& a, const Tolerance& tol,
                           const CompareOptions& options, std::string_view where,
                           eval::ThreadPool& pool, Comparison& out, bool& first) {
  const CompareMode mode = options.mode;
  if (e.is_tuple() || a.is_tuple()) {
    if (!e.is_tuple() || !a.is_tuple() || e.element_count() != a.element_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Sv(where), ": expected a value of ", e.ShapeString(), ", found ", a.ShapeString()));
    }
    for (size_t i = 0; i < e.element_count(); ++i) {
      if (absl::Status s = CompareLeaves(e.element(i), a.element(i), tol, options, where, pool, out,
                                         first);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  const Array& ea = e.array();
  const Array& aa = a.array();
  if (ea.dims() != aa.dims()) return DimsError(where, ea, aa);
  const Tolerance leaf_tol = LeafTolerance(ea, aa, tol, options);
  const uint64_t n = static_cast<uint64_t>(ea.element_count());
  // Pieces compared on the pool's threads, each with its own comparator,
  // merged in order (indices offset by the piece's start).
  const uint64_t piece = std::max<uint64_t>(
      kParallelElements, (n + 4 * pool.threads() - 1) / (4 * pool.threads()));
  const int64_t pieces = static_cast<int64_t>(std::max<uint64_t>(1, (n + piece - 1) / piece));
  std::vector<CompareMetrics> parts(static_cast<size_t>(pieces));
  // bf16 or f16 against f32 (a narrow run against the f32 one): the narrow
  // side widened to f32, exactly, so that the comparator's f32 kernel runs
  // (the torch and xla rules compute in f64 either way, the same metrics).
  const bool widen = ea.type() != aa.type() && mode != CompareMode::kNumpy &&
                     WidensToF32(ea.type()) && WidensToF32(aa.type());
  const PrimitiveType et = widen ? PrimitiveType::kF32 : ea.type();
  const PrimitiveType at_type = widen ? PrimitiveType::kF32 : aa.type();
  auto compare_piece = [&](int64_t k) {
    const uint64_t begin = static_cast<uint64_t>(k) * piece;
    const uint64_t end = std::min(n, begin + piece);
    ElementComparator c(mode, et, at_type, leaf_tol, 0);
    std::vector<char> es, as;
    std::vector<float> ew, aw;
    const bool whole = ea.is_contiguous() && aa.is_contiguous() && !widen;
    for (uint64_t at = begin; at < end;) {
      const size_t len = static_cast<size_t>(whole ? end - at : std::min<uint64_t>(kGatherElements, end - at));
      const char* e = ElementsAt(ea, at, len, es);
      const char* a = ElementsAt(aa, at, len, as);
      if (widen) {
        e = WidenToF32(ea.type(), e, len, ew);
        a = WidenToF32(aa.type(), a, len, aw);
      }
      c.Add(e, a, len);
      at += len;
    }
    parts[k] = c.Finish();
    parts[k].max_abs_error_index += begin;
    parts[k].max_rel_error_index += begin;
  };
  // First the quick pass: compare's vectorized kernel alone, which tells a
  // value that is all finite and within its tolerance (the common case)
  // without the comparator's bookkeeping of where the largest errors are.
  // A value it cannot clear (a mismatch, a NaN, an infinity) is compared
  // again in full, for its metrics.
  const std::optional<internal::KernelType> kt = internal::KernelTypeOf(et);
  const bool quick = kt && kt == internal::KernelTypeOf(at_type) && mode != CompareMode::kNumpy;
  std::vector<QuickSums> sums(static_cast<size_t>(pieces));
  auto quick_piece = [&](int64_t k) {
    const uint64_t begin = static_cast<uint64_t>(k) * piece;
    const uint64_t end = std::min(n, begin + piece);
    internal::FastRealParams fp;
    fp.rule = mode == CompareMode::kXla ? internal::FastRule::kXla : internal::FastRule::kTorch;
    fp.rtol = leaf_tol.rtol;
    fp.atol = leaf_tol.atol;
    fp.rel_threshold = kInf;  // no candidates for the largest relative error
    std::vector<char> es, as;
    std::vector<float> ew, aw;
    QuickSums& q = sums[k];
    for (uint64_t at = begin; at < end;) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(kGatherElements, end - at));
      const char* e = ElementsAt(ea, at, len, es);
      const char* a = ElementsAt(aa, at, len, as);
      if (widen) {
        e = WidenToF32(ea.type(), e, len, ew);
        a = WidenToF32(aa.type(), a, len, aw);
      }
      const internal::FastRealResult r = internal::FastRealBlock(*kt, e, a, len, fp);
      if (!r.finite || r.mismatches > 0) return;
      q.max_abs = std::max(q.max_abs, r.max_abs);
      q.abs.Add(r.abs_sum);
      q.sq.Add(r.sq_sum);
      q.e_sq.Add(r.e_sq);
      at += len;
    }
    q.cleared = true;
  };
  auto run = [&](const auto& fn) {
    if (pieces == 1) {
      fn(0);
    } else {
      pool.ParallelFor(pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) fn(k);
      });
    }
  };
  bool cleared = false;
  if (quick) {
    run(quick_piece);
    cleared = std::all_of(sums.begin(), sums.end(), [](const QuickSums& q) { return q.cleared; });
  }
  CompareMetrics m;
  if (cleared) {
    internal::CompensatedSum abs, sq, e_sq;
    double max_abs = 0;
    for (const QuickSums& q : sums) {
      abs.Add(q.abs.value());
      sq.Add(q.sq.value());
      e_sq.Add(q.e_sq.value());
      max_abs = std::max(max_abs, q.max_abs);
    }
    m.elements = n;
    if (n > 0) {
      const double count = static_cast<double>(n);
      m.max_abs_error = max_abs;
      m.mean_abs_error = abs.value() / count;
      m.rms_error = std::sqrt(sq.value() / count);
      m.expected_rms = std::sqrt(e_sq.value() / count);
    }
  } else {
    run(compare_piece);
    m = parts[0];
    for (size_t k = 1; k < parts.size(); ++k) Merge(m, parts[k], false);
    if (pieces > 1) m.cosine.reset();
  }
  out.differs |= m.mismatches > 0;
  out.error = std::max(out.error, RelativeError(m));
  Merge(out.metrics, m, first);
  first = false;
  return absl::OkStatus();
}

absl::StatusOr<Comparison> CompareValues(const Value& expected, const Value& actual,
                                         const Tolerance& tol, const CompareOptions& options,
                                         std::string_view where, eval::ThreadPool& pool) {
  Comparison out;
  bool first = true;
  if (absl::Status s = CompareLeaves(expected, actual, tol, options, where, pool, out, first);
      !s.ok()) {
    return s;
  }
  return out;
}

// --- The walk ----------------------------------------------------------------

struct Verdict {
  bool scheduled = false;
  bool compared = false;
  bool inferred = false;
  bool differs = false;
  // Both sides hold the same bytes (known without comparing them).
  bool identical = false;
  // An output's verdict by its own type's tolerance, as compare judges it.
  bool output_differs = false;
  double error = 0;
  Tolerance own;     // its type's tolerance (with the user's overrides)
  Tolerance judged;  // what the value was compared with
  Tolerance carried; // what values computed from it are held to
};

class Tracker {
 public:
  Tracker(const hlo::HloComputation& entry, const BisectOptions& options)
      : entry_(entry), options_(options), pool_(options.actual.threads),
        verdicts_(static_cast<size_t>(entry.instruction_count())),
        is_output_(static_cast<size_t>(entry.instruction_count()), 0) {
    const eval::Numerics a = options.actual.numerics, r = options.reference.numerics;
    auto stores_narrow_wide = [](eval::Numerics n) { return n == eval::Numerics::kF32; };
    auto rounds_dots = [](eval::Numerics n) { return n == eval::Numerics::kNeuron; };
    narrow_differs_ = stores_narrow_wide(a) != stores_narrow_wide(r);
    dots_differ_ = rounds_dots(a) != rounds_dots(r);
    sides_alike_ = options.actual.threads == options.reference.threads &&
                   options.actual.custom_calls == options.reference.custom_calls;
    const HloInstruction* root = entry.root();
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* o : root->operands()) is_output_[o->index()] = 1;
    } else {
      is_output_[root->index()] = 1;
    }
  }

  // The tolerances of `instr` from its type and its operands' verdicts.
  void Plan(const HloInstruction& instr, Verdict& v) const {
    std::vector<PrimitiveType> own_types;
    LeafTypes(instr.shape(), &own_types);
    bool float_result = false;
    Tolerance own{0, 0, options_.compare.equal_nan};
    for (PrimitiveType t : own_types) {
      if (IsFloatType(t)) {
        float_result = true;
        own = Loosest(own, DefaultTolerance(options_.compare.mode, t));
      }
    }
    if (!float_result) {
      for (PrimitiveType t : own_types) own = Loosest(own, DefaultTolerance(options_.compare.mode, t));
    }
    Tolerance inherited{0, 0, options_.compare.equal_nan};
    for (const HloInstruction* o : instr.operands()) {
      inherited = Loosest(inherited, verdicts_[o->index()].carried);
    }
    if (!float_result) {
      v.judged = own;
      v.carried = Tolerance{0, 0, options_.compare.equal_nan};
    } else {
      v.carried = Loosest(own, inherited);
      v.judged = v.carried;
      // A convert to a less precise float type: held to what its operand
      // carried, as rounding is where its error enters.
      if (instr.opcode() == HloOpcode::kConvert && instr.operand_count() == 1 &&
          (own.rtol > inherited.rtol || own.atol > inherited.atol) &&
          (inherited.rtol > 0 || inherited.atol > 0)) {
        v.judged = inherited;
      }
    }
    v.own = own;
    for (Tolerance* t : {&v.judged, &v.own}) {
      if (options_.compare.rtol) t->rtol = *options_.compare.rtol;
      if (options_.compare.atol) t->atol = *options_.compare.atol;
      t->equal_nan = options_.compare.equal_nan;
    }
  }

  // True when both sides compute `instr` (and everything it calls) the
  // same way: the same numerics decisions (numerics.h: kF32 stores bf16 and
  // f16 as f32; kNeuron rounds f32 dot and convolution operands to bf16),
  // the same threads and custom-call targets.
  bool SameOnBothSides(const HloInstruction& instr) {
    if (!sides_alike_) return false;
    if (!InstructionSame(instr)) return false;
    for (const hlo::HloComputation* c : instr.called_computations()) {
      if (!ComputationSame(*c, 0)) return false;
    }
    return true;
  }

  bool OperandDiffers(const HloInstruction& instr) const {
    for (const HloInstruction* o : instr.operands()) {
      if (verdicts_[o->index()].differs) return true;
    }
    return false;
  }
  double OperandError(const HloInstruction& instr) const {
    double e = 0;
    for (const HloInstruction* o : instr.operands()) e = std::max(e, verdicts_[o->index()].error);
    return e;
  }

  // One step. `expected` null: no reference value. `may_infer`: both sides
  // are evaluations of this program and neither substituted `instr`.
  absl::Status Record(const HloInstruction& instr, const Value* expected, const Value& actual,
                      bool may_infer) {
    Verdict& v = verdicts_[instr.index()];
    v.scheduled = true;
    order_.push_back(&instr);
    Plan(instr, v);
    const bool operand_differs = OperandDiffers(instr);
    if (!expected) {
      v.differs = operand_differs;
      v.output_differs = v.differs;
      v.error = OperandError(instr);
      return absl::OkStatus();
    }
    if (may_infer && !operand_differs) {
      bool operands_identical = true;
      for (const HloInstruction* o : instr.operands()) {
        operands_identical &= verdicts_[o->index()].identical;
      }
      // The same bytes in, the same computation on both sides: the same
      // bytes out (the evaluator is deterministic).
      if (operands_identical && SameOnBothSides(instr)) {
        v.inferred = true;
        v.identical = true;
        ++inferred_;
        return absl::OkStatus();
      }
      if (MovesElementsOnly(instr.opcode())) {
        v.inferred = true;
        v.error = OperandError(instr);
        ++inferred_;
        return absl::OkStatus();
      }
    }
    const std::string where = hlo::DescribeInstruction(instr);
    absl::StatusOr<Comparison> c =
        CompareValues(*expected, actual, v.judged, options_.compare, where, pool_);
    if (!c.ok()) return c.status();
    v.compared = true;
    ++compared_;
    v.differs = c->differs;
    v.output_differs = c->differs;
    v.error = c->error;
    if (is_output_[instr.index()] &&
        (v.own.rtol != v.judged.rtol || v.own.atol != v.judged.atol)) {
      absl::StatusOr<Comparison> own =
          CompareValues(*expected, actual, v.own, options_.compare, where, pool_);
      if (!own.ok()) return own.status();
      v.output_differs = own->differs;
    }
    if (v.differs) {
      ++differ_;
      metrics_.emplace(instr.index(), c->metrics);
      if (!operand_differs) origins_.push_back(&instr);
    }
    return absl::OkStatus();
  }

  BisectReport Finish(std::string actual, std::string reference) const;

 private:
  static bool HasNarrowFloat(const xla::ShapeProto& s) {
    std::vector<PrimitiveType> types;
    LeafTypes(s, &types);
    for (PrimitiveType t : types) {
      if (eval::IsNarrowFloat(t)) return true;
    }
    return false;
  }
  bool InstructionSame(const HloInstruction& i) const {
    if (narrow_differs_ && HasNarrowFloat(i.shape())) return false;
    const HloOpcode op = i.opcode();
    if (dots_differ_ && (op == HloOpcode::kDot || op == HloOpcode::kConvolution ||
                         op == HloOpcode::kCustomCall)) {
      return false;
    }
    // A registry's own targets may be anything.
    if (op == HloOpcode::kCustomCall && options_.actual.custom_calls) return false;
    return true;
  }
  bool ComputationSame(const hlo::HloComputation& c, int depth) {
    if (depth > eval::kMaxCallDepth) return false;
    auto it = computation_same_.find(&c);
    if (it != computation_same_.end()) return it->second;
    computation_same_[&c] = false;  // a call cycle is not the same
    bool same = true;
    for (const HloInstruction* i : c.instructions()) {
      same &= InstructionSame(*i);
      for (const hlo::HloComputation* called : i->called_computations()) {
        same = same && ComputationSame(*called, depth + 1);
      }
      if (!same) break;
    }
    computation_same_[&c] = same;
    return same;
  }

  std::vector<DivergencePath> Paths(const HloInstruction& origin,
                                    const std::vector<const HloInstruction*>& outputs) const;

  const hlo::HloComputation& entry_;
  const BisectOptions& options_;
  eval::ThreadPool pool_;  // for comparing large values
  std::vector<Verdict> verdicts_;
  std::vector<char> is_output_;
  bool narrow_differs_ = false, dots_differ_ = false, sides_alike_ = false;
  absl::flat_hash_map<const hlo::HloComputation*, bool> computation_same_;
  std::vector<const HloInstruction*> order_;
  std::vector<const HloInstruction*> origins_;
  absl::flat_hash_map<int64_t, CompareMetrics> metrics_;
  int64_t compared_ = 0, inferred_ = 0, differ_ = 0;
};

std::vector<DivergencePath> Tracker::Paths(const HloInstruction& origin,
                                           const std::vector<const HloInstruction*>& outputs) const {
  const size_t n = verdicts_.size();
  // Breadth-first over users: first through differing instructions only,
  // then through any.
  auto search = [&](bool differing_only) {
    std::vector<int64_t> parent(n, -2);
    std::deque<const HloInstruction*> q;
    parent[origin.index()] = -1;
    q.push_back(&origin);
    while (!q.empty()) {
      const HloInstruction* i = q.front();
      q.pop_front();
      for (const HloInstruction* u : i->users()) {
        const Verdict& v = verdicts_[u->index()];
        if (!v.scheduled || parent[u->index()] != -2) continue;
        if (differing_only && !v.differs) continue;
        parent[u->index()] = i->index();
        q.push_back(u);
      }
    }
    return parent;
  };
  const std::vector<int64_t> through_differing = search(true);
  const std::vector<int64_t> through_any = search(false);
  const auto instrs = entry_.instructions();
  std::vector<DivergencePath> paths;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const HloInstruction* o = outputs[j];
    const std::vector<int64_t>* parent = nullptr;
    if (through_differing[o->index()] != -2) {
      parent = &through_differing;
    } else if (through_any[o->index()] != -2) {
      parent = &through_any;
    } else {
      continue;
    }
    DivergencePath p;
    p.output = static_cast<int64_t>(j);
    p.output_differs = verdicts_[o->index()].output_differs;
    for (int64_t at = o->index(); at != -1; at = (*parent)[at]) {
      p.instructions.push_back(instrs[at]->name());
    }
    std::reverse(p.instructions.begin(), p.instructions.end());
    paths.push_back(std::move(p));
  }
  return paths;
}

std::string MetadataSource(const xla::OpMetadata& m) {
  if (m.source_file().empty()) return "";
  if (m.source_line() > 0) return absl::StrCat(m.source_file(), ":", m.source_line());
  return m.source_file();
}

BisectReport Tracker::Finish(std::string actual, std::string reference) const {
  BisectReport r;
  r.actual = std::move(actual);
  r.reference = std::move(reference);
  r.mode = options_.compare.mode;
  r.instructions = static_cast<int64_t>(order_.size());
  r.compared = compared_;
  r.inferred = inferred_;
  r.differ = differ_;
  std::vector<const HloInstruction*> outputs;
  const HloInstruction* root = entry_.root();
  if (root->opcode() == HloOpcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    outputs.push_back(root);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Verdict& v = verdicts_[outputs[j]->index()];
    r.outputs.push_back({static_cast<int64_t>(j), outputs[j]->name(), v.compared || v.inferred,
                         v.output_differs, v.error});
  }
  for (const HloInstruction* i : origins_) {
    const Verdict& v = verdicts_[i->index()];
    DivergenceOrigin o;
    o.instruction = i;
    o.name = i->name();
    o.opcode = i->opcode_string();
    o.shape = ShapeText(i->shape());
    if (!IsTuple(i->shape())) o.dims.assign(i->shape().dimensions().begin(), i->shape().dimensions().end());
    o.op_name = i->proto().metadata().op_name();
    o.source = MetadataSource(i->proto().metadata());
    o.tolerance = v.judged;
    o.metrics = metrics_.at(i->index());
    o.error = v.error;
    double operand_error = 0;
    for (const HloInstruction* op : i->operands()) {
      const double e = verdicts_[op->index()].error;
      operand_error = std::max(operand_error, e);
      if (std::none_of(o.operand_errors.begin(), o.operand_errors.end(),
                       [&](const auto& p) { return p.first == op->name(); })) {
        o.operand_errors.emplace_back(op->name(), e);
      }
    }
    o.added_error = o.error == kInf ? kInf : o.error - operand_error;
    r.origins.push_back(std::move(o));
  }
  const std::vector<size_t> ranked = RankOrigins(r, kMaxPathOrigins);
  for (size_t k : ranked) r.origins[k].paths = Paths(*r.origins[k].instruction, outputs);
  return r;
}

bool Substituted(const BisectOptions& o, const HloInstruction& i) {
  return o.actual.substitutes.contains(i.name()) || o.reference.substitutes.contains(i.name());
}

// "the xla run under test: ..." / "the f32 reference run: ...".
absl::Status SideError(const eval::EvalOptions& o, bool reference, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("the ", Sv(eval::NumericsName(o.numerics)),
                                             reference ? " reference run: " : " run under test: ",
                                             s.message()));
}

// --- A directory of values -------------------------------------------------

// A name as `decomposed run --dump` writes it into a path (run/execute.cc):
// characters other than [A-Za-z0-9_.-] become '_'.
std::string DumpName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out == "." || out == "..") out.insert(out.begin(), '_');
  if (out.size() > 200) out.resize(200);
  return out;
}

// The leaves of `shape` that hold arrays, depth first (what a dump writes
// one file each); tokens are none.
void ArrayLeaves(const xla::ShapeProto& shape, std::vector<const xla::ShapeProto*>* out) {
  if (IsTuple(shape)) {
    for (const xla::ShapeProto& e : shape.tuple_shapes()) ArrayLeaves(e, out);
    return;
  }
  const PrimitiveTypeInfo* info = FindPrimitiveType(shape.element_type());
  if (info && info->type == PrimitiveType::kToken) return;
  out->push_back(&shape);
}

// The leaf files of `shape` without an index: <stem>.npy for an array,
// <stem>.<k>.npy for tuple element k (nested: <stem>.<k>.<j>.npy).
void LeafStems(const xla::ShapeProto& shape, const std::string& stem,
               std::vector<std::string>* out) {
  if (IsTuple(shape)) {
    for (int k = 0; k < shape.tuple_shapes_size(); ++k) {
      LeafStems(shape.tuple_shapes(k), absl::StrCat(stem, ".", k), out);
    }
    return;
  }
  const PrimitiveTypeInfo* info = FindPrimitiveType(shape.element_type());
  if (info && info->type == PrimitiveType::kToken) return;
  out->push_back(stem + ".npy");
}

class DirectoryValues : public InstructionValues {
 public:
  // `index`: (computation, instruction) -> its files relative to `dir`, from
  // index.json; empty without one.
  DirectoryValues(std::string dir,
                  std::map<std::pair<std::string, std::string>, std::vector<std::string>> index,
                  bool indexed)
      : dir_(std::move(dir)), index_(std::move(index)), indexed_(indexed) {}

  absl::StatusOr<std::optional<Value>> ValueOf(const HloInstruction& instr) override {
    const hlo::HloComputation* comp = instr.parent();
    if (!comp) return std::optional<Value>();
    std::vector<std::string> files;
    if (indexed_) {
      auto it = index_.find({comp->name(), instr.name()});
      if (it == index_.end()) return std::optional<Value>();
      files = it->second;
    } else {
      LeafStems(instr.shape(), absl::StrCat(DumpName(comp->name()), "/", DumpName(instr.name())),
                &files);
    }
    std::vector<const xla::ShapeProto*> leaves;
    ArrayLeaves(instr.shape(), &leaves);
    if (files.size() != leaves.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir_, "/index.json: expected ", leaves.size(), " files for ",
          hlo::DescribeInstruction(instr), " (", ShapeText(instr.shape()), "), found ",
          files.size()));
    }
    std::vector<Array> arrays;
    for (size_t k = 0; k < files.size(); ++k) {
      const std::string path = (fs::path(dir_) / files[k]).string();
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) {
        if (indexed_) {
          return absl::NotFoundError(absl::StrCat(path, ": listed in ", dir_,
                                                  "/index.json, but not there"));
        }
        return std::optional<Value>();
      }
      absl::StatusOr<Array> a = ReadArray(path, *leaves[k], instr);
      if (!a.ok()) return a.status();
      arrays.push_back(*std::move(a));
    }
    size_t next = 0;
    return std::optional<Value>(Assemble(instr.shape(), arrays, next));
  }
  std::string Describe() const override { return dir_; }

 private:
  static Value Assemble(const xla::ShapeProto& shape, std::vector<Array>& arrays, size_t& next) {
    if (IsTuple(shape)) {
      std::vector<Value> e;
      for (const xla::ShapeProto& s : shape.tuple_shapes()) e.push_back(Assemble(s, arrays, next));
      return Value::Tuple(std::move(e));
    }
    const PrimitiveTypeInfo* info = FindPrimitiveType(shape.element_type());
    if (info && info->type == PrimitiveType::kToken) return Value::Tuple({});
    return Value(std::move(arrays[next++]));
  }

  absl::StatusOr<Array> ReadArray(const std::string& path, const xla::ShapeProto& shape,
                                  const HloInstruction& instr) {
    OwnedFd fd;
    if (absl::Status s = OpenForReading(path, &fd); !s.ok()) return s;
    FdSource src(std::move(fd));
    NpyReadOptions o;
    absl::StatusOr<std::optional<PrimitiveType>> side = ReadNpyMetaSidecar(path);
    if (!side.ok()) return WithFile(side.status(), path + ".meta");
    o.dtype = *side;
    absl::StatusOr<NpyArrayInfo> header = ReadNpyArrayHeader(src, o);
    if (!header.ok()) return WithFile(header.status(), path);
    if (header->header.fortran_order && header->header.shape.size() > 1) {
      return absl::UnimplementedError(absl::StrCat(
          path, ": a Fortran-order array; per-instruction values are read in C order"));
    }
    const std::vector<int64_t> want(shape.dimensions().begin(), shape.dimensions().end());
    if (header->dims() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": expected the dims of ", hlo::DescribeInstruction(instr), ", ",
          ShapeText(shape), ", found [", absl::StrJoin(header->dims(), ","), "]"));
    }
    absl::StatusOr<Array> a = Array::Allocate(header->type, header->dims());
    if (!a.ok()) return WithFile(a.status(), path);
    char* dst = a->mutable_data();
    absl::Status s = ForEachNpyDataChunk(src, *header, [&](std::string_view chunk) {
      std::memcpy(dst, chunk.data(), chunk.size());
      dst += chunk.size();
      return absl::OkStatus();
    });
    if (!s.ok()) return WithFile(s, path);
    Array out = *std::move(a);
    // PRED and the sub-byte integers: normalised as the evaluator keeps them.
    const PrimitiveType t = out.type();
    if (t == PrimitiveType::kPred || t == PrimitiveType::kS4 || t == PrimitiveType::kU4 ||
        t == PrimitiveType::kS2 || t == PrimitiveType::kU2) {
      absl::StatusOr<Array> n = Array::Copy(out.type(), out.dims(), out.bytes());
      if (!n.ok()) return WithFile(n.status(), path);
      out = *std::move(n);
    }
    return out;
  }

  std::string dir_;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> index_;
  bool indexed_ = false;
};

// --- Numbers in reports ------------------------------------------------------

nlohmann::json Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
nlohmann::json Num(const std::optional<double>& v) {
  if (!v) return nullptr;
  return Num(*v);
}
std::string Fmt(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrFormat("%.3g", v);
}

}  // namespace

absl::StatusOr<std::unique_ptr<InstructionValues>> OpenValueDirectory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": expected a directory of per-instruction values"));
  }
  // index.json, as `decomposed run --dump` writes it: {"instructions":
  // [{"computation", "name", "files": [...]}, ...]}.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> index;
  const std::string index_path = (fs::path(dir) / "index.json").string();
  const bool indexed = fs::is_regular_file(index_path, ec);
  if (indexed) {
    const uintmax_t size = fs::file_size(index_path, ec);
    if (ec || size > kMaxIndexBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          index_path, ": expected at most ", kMaxIndexBytes, " bytes (kMaxIndexBytes), found ",
          ec ? std::string("an unreadable size") : std::to_string(size)));
    }
    std::ifstream f(index_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), {});
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(index_path, ": expected ", Sv(what)));
    };
    if (j.is_discarded() || !j.is_object()) return bad("a JSON object");
    if (!j.contains("instructions") || !j["instructions"].is_array()) {
      return bad("an \"instructions\" array");
    }
    size_t k = 0;
    for (const nlohmann::json& e : j["instructions"]) {
      if (!e.is_object() || !e.contains("computation") || !e["computation"].is_string() ||
          !e.contains("name") || !e["name"].is_string() || !e.contains("files") ||
          !e["files"].is_array()) {
        return bad(absl::StrCat("instruction ", k, " to have a computation, a name and files"));
      }
      std::vector<std::string> files;
      for (const nlohmann::json& f2 : e["files"]) {
        if (!f2.is_string()) return bad(absl::StrCat("instruction ", k, "'s files to be strings"));
        const std::string file = f2.get<std::string>();
        // Within the directory: no absolute path, no "..".
        const fs::path rel(file);
        bool inside = !file.empty() && rel.is_relative();
        for (const fs::path& part : rel) inside &= part != "..";
        if (!inside) {
          return bad(absl::StrCat("instruction ", k, "'s files inside the directory, found \"",
                                  file, "\""));
        }
        files.push_back(file);
      }
      index[{e["computation"].get<std::string>(), e["name"].get<std::string>()}] = std::move(files);
      ++k;
    }
  }
  return std::unique_ptr<InstructionValues>(new DirectoryValues(dir, std::move(index), indexed));
}

absl::StatusOr<BisectReport> Bisect(const hlo::HloModule& module,
                                    std::span<const eval::Value> inputs,
                                    const BisectOptions& options) {
  if (absl::Status s = ValidateCompareOptions(options.compare); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<eval::Evaluation>> actual =
      eval::Evaluation::Start(module, inputs, options.actual);
  if (!actual.ok()) return SideError(options.actual, false, actual.status());
  absl::StatusOr<std::unique_ptr<eval::Evaluation>> reference =
      eval::Evaluation::Start(module, inputs, options.reference);
  if (!reference.ok()) {
    return SideError(options.reference, true, reference.status());
  }
  Tracker tracker(*module.entry(), options);
  while (!(*actual)->done()) {
    absl::StatusOr<const HloInstruction*> a = (*actual)->Step();
    if (!a.ok()) return SideError(options.actual, false, a.status());
    absl::StatusOr<const HloInstruction*> r = (*reference)->Step();
    if (!r.ok()) return SideError(options.reference, true, r.status());
    if (*a != *r) return absl::InternalError("the two evaluations' schedules differ");
    const Value& expected = (*reference)->value();
    if (absl::Status s = tracker.Record(**a, &expected, (*actual)->value(), !Substituted(options, **a));
        !s.ok()) {
      return s;
    }
  }
  return tracker.Finish(std::string(eval::NumericsName(options.actual.numerics)),
                        std::string(eval::NumericsName(options.reference.numerics)));
}

absl::StatusOr<BisectReport> BisectAgainst(const hlo::HloModule& module,
                                           std::span<const eval::Value> inputs,
                                           InstructionValues& reference,
                                           const BisectOptions& options) {
  if (absl::Status s = ValidateCompareOptions(options.compare); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<eval::Evaluation>> actual =
      eval::Evaluation::Start(module, inputs, options.actual);
  if (!actual.ok()) return SideError(options.actual, false, actual.status());
  Tracker tracker(*module.entry(), options);
  int64_t found = 0;
  while (!(*actual)->done()) {
    absl::StatusOr<const HloInstruction*> a = (*actual)->Step();
    if (!a.ok()) return SideError(options.actual, false, a.status());
    absl::StatusOr<std::optional<Value>> expected = reference.ValueOf(**a);
    if (!expected.ok()) return expected.status();
    found += expected->has_value();
    if (absl::Status s = tracker.Record(**a, expected->has_value() ? &**expected : nullptr,
                                        (*actual)->value(), false);
        !s.ok()) {
      return s;
    }
  }
  if (found == 0) {
    return absl::NotFoundError(absl::StrCat(
        reference.Describe(), ": expected a value of at least one instruction of ",
        hlo::DescribeComputation(*module.entry()), ", found none"));
  }
  return tracker.Finish(std::string(eval::NumericsName(options.actual.numerics)),
                        reference.Describe());
}

std::vector<size_t> RankOrigins(const BisectReport& report, size_t top) {
  std::vector<size_t> idx(report.origins.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return report.origins[a].added_error > report.origins[b].added_error;
  });
  if (top > 0 && idx.size() > top) idx.resize(top);
  return idx;
}

std::string BisectReportJson(const BisectReport& r, size_t top) {
  nlohmann::json j;
  j["actual"] = r.actual;
  j["reference"] = r.reference;
  j["mode"] = std::string(CompareModeName(r.mode));
  j["instructions"] = r.instructions;
  j["compared"] = r.compared;
  j["inferred"] = r.inferred;
  j["differ"] = r.differ;
  nlohmann::json outs = nlohmann::json::array();
  for (const OutputVerdict& o : r.outputs) {
    outs.push_back({{"index", o.index}, {"instruction", o.instruction}, {"compared", o.compared},
                    {"differs", o.differs}, {"error", Num(o.error)}});
  }
  j["outputs"] = std::move(outs);
  std::vector<size_t> chosen = RankOrigins(r, top);
  std::sort(chosen.begin(), chosen.end());
  nlohmann::json origins = nlohmann::json::array();
  for (size_t k : chosen) {
    const DivergenceOrigin& o = r.origins[k];
    nlohmann::json e;
    e["name"] = o.name;
    e["opcode"] = o.opcode;
    e["shape"] = o.shape;
    e["error"] = Num(o.error);
    e["added_error"] = Num(o.added_error);
    e["op_name"] = o.op_name;
    e["source"] = o.source;
    e["rtol"] = Num(o.tolerance.rtol);
    e["atol"] = Num(o.tolerance.atol);
    e["elements"] = o.metrics.elements;
    e["mismatches"] = o.metrics.mismatches;
    e["max_abs_error"] = Num(o.metrics.max_abs_error);
    e["max_abs_error_index"] = o.metrics.max_abs_error_index;
    e["max_rel_error"] = Num(o.metrics.max_rel_error);
    e["rms_error"] = Num(o.metrics.rms_error);
    e["cosine"] = Num(o.metrics.cosine);
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& [name, err] : o.operand_errors) ops.push_back({{"name", name}, {"error", Num(err)}});
    e["operands"] = std::move(ops);
    nlohmann::json paths = nlohmann::json::array();
    for (const DivergencePath& p : o.paths) {
      paths.push_back({{"output", p.output}, {"output_differs", p.output_differs},
                       {"instructions", p.instructions}});
    }
    e["paths"] = std::move(paths);
    origins.push_back(std::move(e));
  }
  j["origins"] = std::move(origins);
  return JsonText(j);
}

std::string BisectReportText(const BisectReport& r, size_t top) {
  std::ostringstream out;
  int64_t outputs_differ = 0;
  for (const OutputVerdict& o : r.outputs) outputs_differ += o.differs;
  out << "bisect: " << r.actual << " against " << r.reference << " (" << CompareModeName(r.mode)
      << " rule): " << r.instructions << " instructions, " << r.compared << " compared, "
      << r.inferred << " agree by construction, " << r.differ << " differ; " << outputs_differ
      << " of " << r.outputs.size() << " outputs differ; " << r.origins.size()
      << (r.origins.size() == 1 ? " origin" : " origins") << "\n";
  for (const OutputVerdict& o : r.outputs) {
    if (!o.differs) continue;
    out << "  output " << o.index << " (" << o.instruction << ") differs, error "
        << Fmt(o.error) << "\n";
  }
  const std::vector<size_t> ranked = RankOrigins(r, top);
  if (!ranked.empty()) out << "origins, by the error each adds:\n";
  int rank = 0;
  for (size_t k : ranked) {
    const DivergenceOrigin& o = r.origins[k];
    out << ++rank << ". " << o.name << "  " << o.opcode << "  " << o.shape << "  adds "
        << Fmt(o.added_error) << " (error " << Fmt(o.error) << ", " << o.metrics.mismatches
        << " of " << o.metrics.elements << " elements outside rtol " << Fmt(o.tolerance.rtol)
        << " atol " << Fmt(o.tolerance.atol);
    if (o.metrics.max_abs_error) {
      out << "; max abs error " << Fmt(*o.metrics.max_abs_error) << " at element "
          << o.metrics.max_abs_error_index;
      // From the report alone: its module may be gone (BisectSnapshot
      // returns after freeing the program it loaded).
      if (o.dims.size() > 1) {
        out << " [" << absl::StrJoin(UnravelIndex(o.metrics.max_abs_error_index, o.dims), ",")
            << "]";
      }
    }
    out << ")\n";
    if (!o.op_name.empty()) out << "   op_name: " << o.op_name << "\n";
    if (!o.source.empty()) out << "   source: " << o.source << "\n";
    if (!o.operand_errors.empty()) {
      out << "   operands:";
      for (const auto& [name, err] : o.operand_errors) out << " " << name << " (error " << Fmt(err) << ")";
      out << "\n";
    }
    for (const DivergencePath& p : o.paths) {
      out << "   to output " << p.output << (p.output_differs ? " (differs)" : " (agrees)") << ": "
          << absl::StrJoin(p.instructions, " -> ") << "\n";
    }
  }
  return out.str();
}

}  // namespace decomposed
