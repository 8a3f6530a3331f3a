// The driver: walks a computation's instructions in order, dispatches each
// to its op family, checks the result against the declared shape, calls
// the hook, and releases every value after its last use.
#include <algorithm>
#include <chrono>
#include <unistd.h>

#include "absl/container/flat_hash_map.h"
#include "decomposed/hlo/text.h"
#include "src/eval/ops.h"
#include "src/eval/types.h"

#if defined(DECOMPOSED_HAVE_OPENBLAS)
extern "C" void openblas_set_num_threads(int);
#endif

namespace decomposed::eval::internal {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// One evaluation of one computation: the live instructions in order, the
// remaining uses of each value and the values still needed. Run steps it to
// the end; Evaluation (evaluate.h) steps the entry's frame one instruction
// at a time.
struct Frame {
  const HloComputation* comp = nullptr;
  std::span<const Value> args;
  // The entry's arguments when the evaluation owns them (Evaluate with
  // std::vector<Value>&&): each is let go once its parameter has been
  // evaluated, so the parameter's value is the last holder.
  std::vector<Value>* owned_args = nullptr;
  std::vector<const HloInstruction*> order;  // the live instructions
  std::vector<int64_t> uses;                 // by instruction index
  std::vector<Value> env;                    // by instruction index
  size_t next = 0;                           // into order
  bool at_end() const { return next >= order.size(); }
};

class Evaluator {
 public:
  Evaluator(const EvalOptions& options) : options_(options) {}

  absl::StatusOr<Value> Run(Ctx& ctx, const HloComputation& comp,
                            std::span<const Value> args);
  // Checks the arguments and plans the frame (liveness, use counts).
  absl::Status Begin(Ctx& ctx, const HloComputation& comp,
                     std::span<const Value> args, Frame& f);
  // Evaluates f.order[f.next], calls the hook, releases operands at their
  // last use, advances.
  absl::Status StepFrame(Ctx& ctx, Frame& f);
  // The root's value (moved out). Precondition: f.at_end().
  static Value TakeResult(Frame& f) { return std::move(f.env[f.comp->root()->index()]); }

  // The constant's value, decoded once per run.
  absl::StatusOr<Value> Constant(Ctx& ctx, const HloInstruction& instr) {
    auto it = constants_.find(&instr);
    if (it != constants_.end()) return it->second;
    absl::StatusOr<Value> v = EvalConstant(ctx, instr);
    if (!v.ok()) return v.status();
    constants_.emplace(&instr, *v);
    return v;
  }

  const EvalOptions& options() const { return options_; }
  uint64_t NextRngState(int64_t delta) {
    const uint64_t s = rng_state_;
    rng_state_ += static_cast<uint64_t>(delta);
    return s;
  }

 private:
  absl::StatusOr<Value> Dispatch(Ctx& ctx, const HloInstruction& instr,
                                 Operands ops, std::span<const Value> args);
  const EvalOptions& options_;
  absl::flat_hash_map<const HloInstruction*, Value> constants_;
  uint64_t rng_state_ = 0;
};

namespace {

// Does `v` have the declared shape (element types as the policy stores
// them)? Empty when it does, else what differs.
std::string ShapeMismatch(const Ctx& ctx, const Value& v, const xla::ShapeProto& s) {
  if (IsTupleShape(s)) {
    if (!v.is_tuple()) return absl::StrCat("an array ", v.ShapeString());
    if (v.element_count() != static_cast<size_t>(s.tuple_shapes_size())) {
      return absl::StrCat("a tuple of ", v.element_count(), " elements ", v.ShapeString());
    }
    for (int i = 0; i < s.tuple_shapes_size(); ++i) {
      std::string m = ShapeMismatch(ctx, v.element(i), s.tuple_shapes(i));
      if (!m.empty()) return absl::StrCat(m, " at tuple index ", i);
    }
    return "";
  }
  if (TypeOf(s) == PrimitiveType::kToken) {
    return v.is_tuple() && v.element_count() == 0 ? "" : v.ShapeString();
  }
  if (!v.is_array()) return absl::StrCat("the tuple ", v.ShapeString());
  const Array& a = v.array();
  if (a.type() != ctx.policy->StorageType(TypeOf(s)) ||
      !std::equal(a.dims().begin(), a.dims().end(), s.dimensions().begin(),
                  s.dimensions().end())) {
    return a.ShapeString();
  }
  return "";
}

absl::Status Prefixed(const HloInstruction& instr, const absl::Status& s) {
  std::string_view msg(s.message().data(), s.message().size());
  if (msg.starts_with("computation \"")) return s;  // an inner instruction's
  std::string what = instr.opcode() == HloOpcode::kCustomCall
                         ? absl::StrCat("custom-call \"", instr.custom_call_target(), "\"")
                         : std::string(instr.opcode_string());
  std::string out = absl::StrCat(hlo::DescribeInstruction(instr), " (", what, "): ", Sv(msg));
  if (s.code() == absl::StatusCode::kUnimplemented) {
    absl::StrAppend(&out, "; to go on, supply this instruction's value: --substitute ",
                    instr.name(), "=FILE.npy (EvalOptions::substitutes)");
  }
  return absl::Status(s.code(), out);
}

bool IsControlFlow(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCall: case HloOpcode::kWhile: case HloOpcode::kConditional:
    case HloOpcode::kFusion: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<Value> Evaluator::Dispatch(Ctx& ctx, const HloInstruction& instr,
                                          Operands ops, std::span<const Value> args) {
  const HloOpcode op = instr.opcode();
  switch (op) {
    case HloOpcode::kParameter: {
      const int64_t n = instr.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return Expected(absl::StrCat("a parameter_number below ", args.size()),
                        absl::StrCat(n));
      }
      return args[n];
    }
    case HloOpcode::kConstant:
      return Constant(ctx, instr);
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
      if (ops.size() != 1) return Expected("1 operand", absl::StrCat(ops.size()));
      if (op == HloOpcode::kCopyStart) {
        // (destination, source, context) as XLA shapes it.
        return Value::Tuple({*ops[0], *ops[0], Value(*Array::Zeros(PrimitiveType::kU32, {}))});
      }
      if (op == HloOpcode::kCopyDone) {
        if (!ops[0]->is_tuple() || ops[0]->element_count() < 1) {
          return Expected("the tuple of a copy-start", ops[0]->ShapeString());
        }
        return ops[0]->element(0);
      }
      return *ops[0];
    case HloOpcode::kAddDependency:
      if (ops.empty()) return Expected("2 operands", "0");
      return *ops[0];
    case HloOpcode::kAfterAll:
      return Value::Tuple({});
    case HloOpcode::kTuple: {
      std::vector<Value> e;
      e.reserve(ops.size());
      for (const Value* v : ops) e.push_back(*v);
      return Value::Tuple(std::move(e));
    }
    case HloOpcode::kGetTupleElement: {
      if (ops.size() != 1 || !ops[0]->is_tuple()) {
        return Expected("one tuple operand", ops.empty() ? "none" : ops[0]->ShapeString());
      }
      const int64_t i = instr.tuple_index();
      if (i < 0 || i >= static_cast<int64_t>(ops[0]->element_count())) {
        return Expected(absl::StrCat("a tuple_index below ", ops[0]->element_count()),
                        absl::StrCat(i));
      }
      return ops[0]->element(i);
    }
    case HloOpcode::kRngGetAndUpdateState: {
      absl::StatusOr<Array> a = Alloc(ctx, PrimitiveType::kU64, {2});
      if (!a.ok()) return a.status();
      a->mutable_data<uint64_t>()[0] = NextRngState(instr.proto().delta());
      a->mutable_data<uint64_t>()[1] = 0;
      return Value(*a);
    }
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: {
      absl::StatusOr<Array> a = Array::Zeros(PrimitiveType::kU32, {});
      if (!a.ok()) return a.status();
      if (ctx.rank) {
        *a->mutable_data<uint32_t>() = static_cast<uint32_t>(
            op == HloOpcode::kReplicaId ? RankReplicaId(*ctx.rank) : RankPartitionId(*ctx.rank));
      }
      return Value(*a);
    }
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kBitcast:
    case HloOpcode::kTranspose: case HloOpcode::kSlice: case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kConcatenate:
    case HloOpcode::kPad: case HloOpcode::kReverse: case HloOpcode::kIota:
    case HloOpcode::kGetDimensionSize:
      return EvalShapeOp(ctx, instr, ops);
    case HloOpcode::kGather: case HloOpcode::kScatter:
      return EvalIndexing(ctx, instr, ops);
    case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter: case HloOpcode::kMap:
      return EvalReduction(ctx, instr, ops);
    case HloOpcode::kSort: case HloOpcode::kTopK:
      return EvalSort(ctx, instr, ops);
    case HloOpcode::kDot: case HloOpcode::kConvolution:
      return EvalDotConv(ctx, instr, ops);
    case HloOpcode::kCall: case HloOpcode::kWhile: case HloOpcode::kConditional:
    case HloOpcode::kFusion: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncUpdate:
      return EvalControlFlow(ctx, instr, ops);
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return EvalBatchNorm(ctx, instr, ops);
    case HloOpcode::kCustomCall:
      return EvalCustomCall(ctx, instr, ops);
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRng:
      return Unsupported(
          "random bits are the device's own (a CPU run cannot reproduce them, "
          "hlo-facts: rng is backend specific)");
    default:
      break;
  }
  if (hlo::IsCollective(op) || op == HloOpcode::kAllReduceDone ||
      op == HloOpcode::kAllGatherDone || op == HloOpcode::kCollectivePermuteDone) {
    return EvalCollective(ctx, instr, ops);
  }
  if (hlo::IsElementwiseUnary(op) || hlo::IsElementwiseBinary(op) ||
      op == HloOpcode::kSelect || op == HloOpcode::kClamp) {
    return EvalElementwise(ctx, instr, ops);
  }
  return Unsupported(absl::StrCat("opcode \"", instr.opcode_string(),
                                  "\" is not implemented by the evaluator"));
}

absl::Status Evaluator::Begin(Ctx& ctx, const HloComputation& comp,
                              std::span<const Value> args, Frame& f) {
  if (ctx.depth > kMaxCallDepth) {
    return absl::ResourceExhaustedError(absl::StrCat(
        hlo::DescribeComputation(comp), ": expected calls nested at most ",
        kMaxCallDepth, " deep (kMaxCallDepth), found deeper (a call cycle?)"));
  }
  const auto params = comp.parameters();
  if (params.size() != args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        hlo::DescribeComputation(comp), ": expected ", Counted(params.size(), "argument"),
        ", found ", args.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          hlo::DescribeComputation(comp), ": expected a parameter numbered ", i,
          ", found none"));
    }
    if (!ctx.lifted) {
      std::string m = ShapeMismatch(ctx, args[i], params[i]->shape());
      if (!m.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            hlo::DescribeInstruction(*params[i]), ": parameter ", i, " expected ",
            ShapeProtoString(params[i]->shape()), ", found ", m));
      }
    }
  }
  const auto instrs = comp.instructions();
  const HloInstruction* root = comp.root();
  f.comp = &comp;
  f.args = args;
  // Liveness: what the root needs (dead instructions are not evaluated);
  // remaining uses per instruction, counting each user once.
  std::vector<char> live(instrs.size(), 0);
  f.uses.assign(instrs.size(), 0);
  live[root->index()] = 1;
  std::vector<const HloInstruction*> unique;
  for (int64_t k = static_cast<int64_t>(instrs.size()) - 1; k >= 0; --k) {
    if (!live[k]) continue;
    const HloInstruction* in = instrs[k];
    const HloInstruction* prev = nullptr;
    unique.assign(in->operands().begin(), in->operands().end());
    std::sort(unique.begin(), unique.end());
    for (const HloInstruction* o : unique) {
      if (o == prev) continue;
      prev = o;
      live[o->index()] = 1;
      ++f.uses[o->index()];
    }
  }
  f.order.clear();
  for (size_t k = 0; k < instrs.size(); ++k) {
    if (live[k]) f.order.push_back(instrs[k]);
  }
  f.env.assign(instrs.size(), Value());
  f.next = 0;
  return absl::OkStatus();
}

absl::Status Evaluator::StepFrame(Ctx& ctx, Frame& f) {
  const HloInstruction& instr = *f.order[f.next];
  const size_t k = static_cast<size_t>(instr.index());
  const HloInstruction* root = f.comp->root();
  std::span<const Value> args = f.args;
  auto& env = f.env;
  auto& uses = f.uses;
  const bool want_time = static_cast<bool>(options_.on_instruction);
  const auto t0 = want_time ? std::chrono::steady_clock::now()
                            : std::chrono::steady_clock::time_point();
  absl::StatusOr<Value> v;
  auto sub = options_.substitutes.find(instr.name());
  if (sub != options_.substitutes.end()) {
    absl::StatusOr<Value> conv = sub->second;
    // A substitute given in the declared type is stored as the policy
    // stores it (bf16 -> f32 in kF32).
    if (conv->is_array() && !IsTupleShape(instr.shape()) &&
        conv->array().type() == TypeOf(instr.shape())) {
      absl::StatusOr<Array> c = ConvertArray(ctx, conv->array(), ResultType(ctx, instr));
      if (!c.ok()) return Prefixed(instr, c.status());
      conv = Value(*c);
    }
    v = std::move(conv);
  } else {
    std::vector<const Value*> ops;
    ops.reserve(instr.operand_count());
    for (const HloInstruction* o : instr.operands()) ops.push_back(&env[o->index()]);
    // An update at its operand's last use may write the operand in place
    // (a KV-cache dynamic-update-slice): hand it over. Otherwise the kernel
    // gets a second reference, so that it sees the storage shared and
    // copies: a value still needed (by a later user) is never written.
    Value handed;
    if ((instr.opcode() == HloOpcode::kDynamicUpdateSlice ||
         instr.opcode() == HloOpcode::kScatter) &&
        instr.operand_count() > 1) {
      const HloInstruction* o0 = instr.operand(0);
      bool again = false;
      for (int64_t j = 1; j < instr.operand_count(); ++j) again |= instr.operand(j) == o0;
      if (!again && o0 != root && uses[o0->index()] == 1) {
        handed = std::move(env[o0->index()]);
        env[o0->index()] = Value();
      } else {
        handed = env[o0->index()];
      }
      ops[0] = &handed;
    }
    v = Dispatch(ctx, instr, ops, args);
    if (!v.ok()) {
      if (IsControlFlow(instr.opcode())) {
        std::string_view msg(v.status().message().data(), v.status().message().size());
        return absl::Status(v.status().code(),
                            absl::StrCat(Sv(msg), "; called from ",
                                         hlo::DescribeInstruction(instr)));
      }
      return Prefixed(instr, v.status());
    }
  }
  if (!ctx.lifted) {
    std::string m = ShapeMismatch(ctx, *v, instr.shape());
    if (!m.empty()) {
      return Prefixed(instr, absl::InvalidArgumentError(absl::StrCat(
                                 sub != options_.substitutes.end() ? "substitute: " : "",
                                 "expected a value of shape ",
                                 ShapeProtoString(instr.shape()), ", found ", m)));
    }
  }
  if (options_.on_instruction && !ctx.lifted) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    InstructionEvent e{instr, *v, ctx.depth, secs};
    if (absl::Status s = options_.on_instruction(e); !s.ok()) return s;
  }
  env[k] = *std::move(v);
  if (f.owned_args && instr.opcode() == HloOpcode::kParameter) {
    const int64_t n = instr.parameter_number();
    if (n >= 0 && n < static_cast<int64_t>(f.owned_args->size())) (*f.owned_args)[n] = Value();
  }
  // Release operands at their last use.
  const HloInstruction* prev = nullptr;
  std::vector<const HloInstruction*> unique(instr.operands().begin(), instr.operands().end());
  std::sort(unique.begin(), unique.end());
  for (const HloInstruction* o : unique) {
    if (o == prev) continue;
    prev = o;
    if (--uses[o->index()] == 0 && o != root) env[o->index()] = Value();
  }
  ++f.next;
  if (ctx.depth == 0 && options_.on_progress) {
    options_.on_progress(static_cast<int64_t>(f.next), static_cast<int64_t>(f.order.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> Evaluator::Run(Ctx& ctx, const HloComputation& comp,
                                     std::span<const Value> args) {
  Frame f;
  if (absl::Status s = Begin(ctx, comp, args, f); !s.ok()) return s;
  while (!f.at_end()) {
    if (absl::Status s = StepFrame(ctx, f); !s.ok()) return s;
  }
  return TakeResult(f);
}

absl::StatusOr<Value> CallComputation(Ctx& ctx, const HloComputation& c,
                                      std::span<const Value> args) {
  Ctx inner = ctx;
  inner.depth = ctx.depth + 1;
  inner.lifted = false;
  return ctx.evaluator->Run(inner, c, args);
}

absl::StatusOr<Value> CallLifted(Ctx& ctx, const HloComputation& c,
                                 std::span<const Value> args) {
  Ctx inner = ctx;
  inner.depth = ctx.depth + 1;
  inner.lifted = true;
  return ctx.evaluator->Run(inner, c, args);
}

uint64_t NextRngState(Ctx& ctx, int64_t delta) { return ctx.evaluator->NextRngState(delta); }

}  // namespace decomposed::eval::internal

namespace decomposed::eval::internal {

// Everything one evaluation of a module owns: its options, policy, thread
// pool, evaluator and the entry's arguments.
struct Session {
  explicit Session(const EvalOptions& o)
      : options(o), policy(o.numerics), lease(o.threads), pool(lease.pool()), ev(options) {}
  EvalOptions options;
  NumericsPolicy policy;
  ThreadPoolLease lease;  // a cached pool: no thread started per evaluation
  ThreadPool& pool;
  Evaluator ev;
  Ctx ctx;
  std::vector<Value> args;
  Frame entry;
};

namespace {

// `owned`: the inputs, taken (inputs is then ignored); each is let go
// after its parameter's last use.
absl::Status StartSession(Session& s, const hlo::HloModule& module,
                          std::span<const Value> inputs, RankState* rank,
                          std::vector<Value>* owned = nullptr) {
  const hlo::HloComputation* entry = module.entry();
  if (!entry || !entry->root()) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
#if defined(DECOMPOSED_HAVE_OPENBLAS)
  // A replay of several ranks sets the BLAS's threads once for all of them
  // (replicas.cc).
  if (!rank) openblas_set_num_threads(s.pool.threads());
#endif
  Ctx& ctx = s.ctx;
  ctx.policy = &s.policy;
  ctx.pool = &s.pool;
  ctx.max_bytes = s.options.max_array_bytes;
  if (ctx.max_bytes == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    ctx.max_bytes = pages > 0 && page > 0
                        ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                        : Array::kNoLimit;
  }
  ctx.evaluator = &s.ev;
  ctx.replica_count = s.options.replica_count;
  ctx.max_loop_iterations = s.options.max_loop_iterations;
  ctx.custom_calls = s.options.custom_calls ? s.options.custom_calls : &BuiltinCustomCalls();
  ctx.rank = rank;
  // Inputs: the declared type, or (kF32) the type the policy stores it as.
  const auto params = entry->parameters();
  const size_t given = owned ? owned->size() : inputs.size();
  if (given != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        hlo::DescribeComputation(*entry), ": expected ", Counted(params.size(), "input"),
        ", found ", given));
  }
  if (owned) {
    s.args = std::move(*owned);
  } else {
    s.args.assign(inputs.begin(), inputs.end());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i] || !s.args[i].is_array() || IsTupleShape(params[i]->shape())) continue;
    const PrimitiveType declared = TypeOf(params[i]->shape());
    const Array& a = s.args[i].array();
    if (a.type() == declared && s.policy.StorageType(declared) != declared) {
      absl::StatusOr<Array> c = ConvertArray(ctx, a, s.policy.StorageType(declared));
      if (!c.ok()) return c.status();
      s.args[i] = Value(*c);
    }
  }
  if (absl::Status st = s.ev.Begin(ctx, *entry, s.args, s.entry); !st.ok()) return st;
  if (owned) {
    s.entry.owned_args = &s.args;
    // A parameter the root does not need is never evaluated: let it go now.
    std::vector<char> needed(s.args.size(), 0);
    for (const hlo::HloInstruction* i : s.entry.order) {
      if (i->opcode() == HloOpcode::kParameter && i->parameter_number() >= 0 &&
          i->parameter_number() < static_cast<int64_t>(needed.size())) {
        needed[static_cast<size_t>(i->parameter_number())] = 1;
      }
    }
    for (size_t i = 0; i < needed.size(); ++i) {
      if (!needed[i]) s.args[i] = Value();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> RunSession(Session& s) {
  while (!s.entry.at_end()) {
    if (absl::Status st = s.ev.StepFrame(s.ctx, s.entry); !st.ok()) return st;
  }
  return Evaluator::TakeResult(s.entry);
}

}  // namespace

absl::StatusOr<Value> EvaluateOnRank(const hlo::HloModule& module,
                                     std::span<const Value> inputs,
                                     const EvalOptions& options, RankState* rank) {
  Session s(options);
  if (absl::Status st = StartSession(s, module, inputs, rank); !st.ok()) return st;
  return RunSession(s);
}

}  // namespace decomposed::eval::internal

namespace decomposed::eval {

absl::StatusOr<Value> Evaluate(const hlo::HloModule& module,
                               std::span<const Value> inputs,
                               const EvalOptions& options) {
  return internal::EvaluateOnRank(module, inputs, options, nullptr);
}

absl::StatusOr<Value> Evaluate(const hlo::HloModule& module, std::vector<Value>&& inputs,
                               const EvalOptions& options) {
  std::vector<Value> owned = std::move(inputs);
  internal::Session s(options);
  if (absl::Status st = internal::StartSession(s, module, {}, nullptr, &owned); !st.ok()) {
    return st;
  }
  return internal::RunSession(s);
}

struct Evaluation::Impl {
  explicit Impl(const EvalOptions& o) : session(o) {}
  internal::Session session;
  const hlo::HloInstruction* last = nullptr;
  bool failed = false;
  bool finished = false;
};

Evaluation::Evaluation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Evaluation::~Evaluation() = default;

absl::StatusOr<std::unique_ptr<Evaluation>> Evaluation::Start(
    const hlo::HloModule& module, std::span<const Value> inputs,
    const EvalOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  if (absl::Status s = internal::StartSession(impl->session, module, inputs, nullptr); !s.ok()) {
    return s;
  }
  return std::unique_ptr<Evaluation>(new Evaluation(std::move(impl)));
}

std::span<const hlo::HloInstruction* const> Evaluation::schedule() const {
  return impl_->session.entry.order;
}

int64_t Evaluation::steps_done() const {
  return static_cast<int64_t>(impl_->session.entry.next);
}

bool Evaluation::done() const { return impl_->session.entry.at_end(); }

absl::StatusOr<const hlo::HloInstruction*> Evaluation::Step() {
  internal::Frame& f = impl_->session.entry;
  if (impl_->failed) {
    return absl::FailedPreconditionError("the evaluation stopped at an earlier error");
  }
  if (f.at_end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "every instruction of ", hlo::DescribeComputation(*f.comp), " has been evaluated"));
  }
  impl_->last = nullptr;
  const hlo::HloInstruction* instr = f.order[f.next];
  if (absl::Status s = impl_->session.ev.StepFrame(impl_->session.ctx, f); !s.ok()) {
    impl_->failed = true;
    return s;
  }
  impl_->last = instr;
  return instr;
}

const Value& Evaluation::value() const {
  static const Value* const kNone = new Value();
  if (!impl_->last) return *kNone;
  return impl_->session.entry.env[impl_->last->index()];
}

absl::StatusOr<Value> Evaluation::Finish() {
  while (!done()) {
    absl::StatusOr<const hlo::HloInstruction*> s = Step();
    if (!s.ok()) return s.status();
  }
  if (impl_->failed || impl_->finished) {
    return absl::FailedPreconditionError(impl_->failed
                                             ? "the evaluation stopped at an earlier error"
                                             : "Finish was called before");
  }
  impl_->last = nullptr;
  impl_->finished = true;
  return internal::Evaluator::TakeResult(impl_->session.entry);
}

std::vector<Value> FlattenOutputs(const Value& root) {
  if (root.is_tuple()) return root.elements();
  return {root};
}

}  // namespace decomposed::eval
