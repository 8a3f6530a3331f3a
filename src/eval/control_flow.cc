// call, while (with the max_loop_iterations guard), conditional (pred or
// index selector), fusion, async-start/-done (docs/eval.md §4.6).
#include "src/eval/ops.h"
#include "src/eval/types.h"

namespace decomposed::eval::internal {
namespace {

using hlo::HloOpcode;

absl::StatusOr<bool> PredValue(const Value& v, std::string_view what) {
  if (!v.is_array() || v.array().type() != PrimitiveType::kPred || v.array().rank() != 0) {
    return Expected(absl::StrCat(Sv(what), " of shape pred[]"), v.ShapeString());
  }
  return v.array().data()[0] != 0;
}

std::vector<Value> Args(Operands ops, size_t from = 0, size_t count = ~size_t{0}) {
  std::vector<Value> args;
  for (size_t i = from; i < ops.size() && args.size() < count; ++i) args.push_back(*ops[i]);
  return args;
}

}  // namespace

absl::StatusOr<Value> EvalControlFlow(Ctx& ctx, const hlo::HloInstruction& instr, Operands ops) {
  switch (instr.opcode()) {
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      const hlo::HloComputation* c = instr.opcode() == HloOpcode::kCall ? instr.to_apply()
                                                                        : instr.fused_computation();
      if (!c) return Expected("a called computation", "none");
      return CallComputation(ctx, *c, Args(ops));
    }
    case HloOpcode::kWhile: {
      const hlo::HloComputation* cond = instr.while_condition();
      const hlo::HloComputation* body = instr.while_body();
      if (!cond || !body || ops.size() != 1) {
        return Expected("a condition, a body and one operand", absl::StrCat(ops.size(), " operands"));
      }
      Value state = *ops[0];
      const int64_t limit = ctx.max_loop_iterations;
      for (int64_t it = 0;; ++it) {
        absl::StatusOr<Value> c = CallComputation(ctx, *cond, std::span<const Value>(&state, 1));
        if (!c.ok()) return c.status();
        absl::StatusOr<bool> go = PredValue(*c, "a condition result");
        if (!go.ok()) return go.status();
        if (!*go) break;
        if (it >= limit) {
          return absl::ResourceExhaustedError(absl::StrCat(
              hlo::DescribeInstruction(instr), " (while): expected at most ", limit,
              " iterations (max_loop_iterations), found more"));
        }
        absl::StatusOr<Value> next = CallComputation(ctx, *body, std::span<const Value>(&state, 1));
        if (!next.ok()) return next.status();
        state = *std::move(next);
      }
      return state;
    }
    case HloOpcode::kConditional: {
      const auto branches = instr.branch_computations();
      if (ops.empty() || branches.empty() || ops.size() != branches.size() + 1) {
        return Expected("a selector and one operand per branch",
                        absl::StrCat(ops.size(), " operands for ", branches.size(), " branches"));
      }
      if (!ops[0]->is_array() || ops[0]->array().rank() != 0) {
        return Expected("a scalar pred or s32 selector", ops[0]->ShapeString());
      }
      const Array& sel = ops[0]->array();
      int64_t b;
      if (sel.type() == PrimitiveType::kPred) {
        if (branches.size() != 2) return Expected("2 branches for a pred selector", absl::StrCat(branches.size()));
        b = sel.data()[0] != 0 ? 0 : 1;
      } else if (sel.type() == PrimitiveType::kS32) {
        // An index out of range runs the last branch (XLA).
        b = *sel.data<int32_t>();
        if (b < 0 || b >= static_cast<int64_t>(branches.size())) b = static_cast<int64_t>(branches.size()) - 1;
      } else {
        return Expected("a pred or s32 selector", sel.ShapeString());
      }
      return CallComputation(ctx, *branches[b], std::span<const Value>(ops[b + 1], 1));
    }
    case HloOpcode::kAsyncStart: {
      if (instr.called_computations().empty()) return Expected("a called computation", "none");
      absl::StatusOr<Value> r = CallComputation(ctx, *instr.called_computations()[0], Args(ops));
      if (!r.ok()) return r.status();
      return Value::Tuple({Value::Tuple(Args(ops)), *r, Value(*Array::Zeros(PrimitiveType::kU32, {}))});
    }
    case HloOpcode::kAsyncUpdate:
      return *ops[0];
    case HloOpcode::kAsyncDone:
      if (ops.size() != 1 || !ops[0]->is_tuple() || ops[0]->element_count() < 2) {
        return Expected("the tuple of an async-start", ops.empty() ? "none" : ops[0]->ShapeString());
      }
      return ops[0]->element(1);
    default:
      return Unsupported("not a control-flow op");
  }
}

}  // namespace decomposed::eval::internal
