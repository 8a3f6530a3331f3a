// Module validation (hlo/validate.h).
#include "decomposed/hlo/validate.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/status.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

std::string Quoted(std::string_view s) { return absl::StrCat("\"", Sv(s), "\""); }

// A cycle's names joined by " -> ", the middle elided past 16 of them (a
// message stays short whatever the module's size).
std::string JoinPath(const std::vector<std::string>& path) {
  if (path.size() <= 16) return absl::StrJoin(path, " -> ");
  std::vector<std::string> head(path.begin(), path.begin() + 8);
  std::vector<std::string> tail(path.end() - 8, path.end());
  return absl::StrCat(absl::StrJoin(head, " -> "), " -> ... (",
                      path.size() - 16, " more) -> ", absl::StrJoin(tail, " -> "));
}

std::string Callee(const HloComputation& c) {
  return absl::StrCat("computation ", Quoted(c.name()));
}

// Opcodes whose result XLA's verifier compares exactly (they move data and
// may not change its precision); the others follow allow_mixed_precision.
bool ComparesExactly(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBitcast: case HloOpcode::kCall:
    case HloOpcode::kConditional: case HloOpcode::kConstant:
    case HloOpcode::kCopyDone: case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall: case HloOpcode::kGetTupleElement:
    case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kParameter:
    case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kSend:
    case HloOpcode::kSendDone: case HloOpcode::kTuple: case HloOpcode::kWhile:
      return true;
    default:
      return false;
  }
}

// How many computations an opcode calls: exactly `n`, at least `n`
// (`at_least`), or any number (`any`).
struct CalledCount {
  size_t n = 0;
  bool at_least = false;
  bool any = false;
};

CalledCount CalledCountOf(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCall: case HloOpcode::kMap: case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: case HloOpcode::kScatter:
    case HloOpcode::kSort: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kReduceScatter:
    case HloOpcode::kFusion: case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
      return {1, false, false};
    case HloOpcode::kWhile: case HloOpcode::kSelectAndScatter:
      return {2, false, false};
    case HloOpcode::kConditional:
      return {1, true, false};
    case HloOpcode::kCustomCall: case HloOpcode::kUnknown:
    case HloOpcode::kScan: case HloOpcode::kCollectiveReduce:
      return {0, false, true};
    default:
      return {0, false, false};
  }
}

// XLA's collective group modes (GetCollectiveOpGroupMode).
enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition,
                       kFlattenedId };

class Validator {
 public:
  Validator(const HloModule& m, const ValidateOptions& o, size_t limit)
      : m_(m), o_(o), limit_(limit) {}

  std::vector<absl::Status> Run() {
    CheckNames();
    if (!Full()) CheckCallGraph();
    for (const HloComputation* c : m_.computations()) {
      if (Full()) break;
      CheckParameters(*c);
      CheckControlCycles(*c);
    }
    for (const HloComputation* c : m_.computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (Full()) return std::move(problems_);
        CheckInstruction(*i);
      }
    }
    if (!Full()) CheckEntry();
    if (!Full()) CheckAliases();
    if (!Full()) CheckSchedule();
    return std::move(problems_);
  }

 private:
  bool Full() const { return limit_ != 0 && problems_.size() >= limit_; }

  void Add(std::string_view where, std::string_view what) {
    if (Full()) return;
    problems_.push_back(absl::InvalidArgumentError(
        absl::StrCat(Sv(where), ": ", Sv(what))));
  }
  void Add(const HloInstruction& i, std::string_view what) {
    Add(DescribeInstruction(i), what);
  }
  std::string ModuleWhere() const {
    return absl::StrCat("module ", Quoted(m_.name()));
  }

  // --- 1. Names and ids ------------------------------------------------------

  void CheckNames() {
    if (m_.name().empty()) Add("module \"\"", "expected a name, found none");
    absl::flat_hash_map<std::string_view, const HloComputation*> comps;
    for (const HloComputation* c : m_.computations()) {
      auto [it, fresh] = comps.emplace(c->name(), c);
      if (!fresh) {
        Add(absl::StrCat(DescribeComputation(*c), " (id ", c->id(), ")"),
            absl::StrCat("expected a computation name unique in the module, "
                         "found it also on the computation of id ",
                         it->second->id()));
      }
    }
    absl::flat_hash_map<std::string_view, const HloInstruction*> names;
    for (const HloComputation* c : m_.computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (i->id() < 0) {
          Add(*i, absl::StrCat("expected a non-negative id, found ", i->id()));
        }
        if (i->name().empty()) {
          Add(*i, "expected a name, found none");
          continue;
        }
        auto [it, fresh] = names.emplace(i->name(), i);
        if (!fresh) {
          Add(*i, absl::StrCat("expected an instruction name unique in the "
                               "module, found it also on instruction id ",
                               it->second->id(), " of ",
                               DescribeComputation(*it->second->parent())));
        }
      }
    }
  }

  // --- 2. Call graph ----------------------------------------------------------

  void CheckCallGraph() {
    const auto comps = m_.computations();
    const size_t n = comps.size();
    std::vector<uint8_t> color(n, 0);  // 0 unseen, 1 on the stack, 2 done
    struct Frame {
      const HloComputation* c;
      size_t instr = 0;
      size_t called = 0;
    };
    bool recursion = false;
    for (size_t root = 0; root < n && !Full(); ++root) {
      if (color[root] != 0) continue;
      std::vector<Frame> stack{{comps[root]}};
      color[root] = 1;
      while (!stack.empty() && !Full()) {
        Frame& f = stack.back();
        const auto instrs = f.c->instructions();
        if (f.instr >= instrs.size()) {
          color[f.c->index()] = 2;
          stack.pop_back();
          continue;
        }
        const HloInstruction* caller = instrs[f.instr];
        if (f.called >= caller->called_computations().size()) {
          ++f.instr;
          f.called = 0;
          continue;
        }
        const HloComputation* callee = caller->called_computations()[f.called++];
        const size_t ci = static_cast<size_t>(callee->index());
        if (color[ci] == 1) {
          recursion = true;
          std::vector<std::string> path;
          size_t k = 0;
          while (stack[k].c != callee) ++k;
          for (; k < stack.size(); ++k) path.push_back(Quoted(stack[k].c->name()));
          path.push_back(Quoted(callee->name()));
          Add(*caller, absl::StrCat("expected no recursion, found ",
                                    Callee(*callee), " calling itself: ",
                                    JoinPath(path)));
        } else if (color[ci] == 0) {
          color[ci] = 1;
          stack.push_back(Frame{callee});
        }
      }
    }
    if (!recursion) {
      for (const HloComputation* c : comps) {
        for (const HloInstruction* i : c->instructions()) {
          for (const HloComputation* callee : i->called_computations()) {
            if (callee->index() >= c->index()) {
              Add(*i, absl::StrCat("expected called ", Callee(*callee),
                                   " before its caller in the module's "
                                   "computation list, found it at position ",
                                   callee->index(), " after position ",
                                   c->index()));
            }
          }
        }
      }
    }
    if (m_.entry()->IsFusionComputation()) {
      Add(ModuleWhere(),
          absl::StrCat("expected an entry computation that is not a fusion "
                       "computation, found ",
                       Callee(*m_.entry())));
    }
  }

  // --- 3. Computations ----------------------------------------------------------

  void CheckParameters(const HloComputation& c) {
    int64_t count = 0;
    for (const HloInstruction* i : c.instructions()) {
      if (i->opcode() == HloOpcode::kParameter) ++count;
    }
    absl::flat_hash_map<int64_t, const HloInstruction*> seen;
    for (const HloInstruction* i : c.instructions()) {
      if (i->opcode() != HloOpcode::kParameter) continue;
      const int64_t n = i->parameter_number();
      if (n < 0 || n >= count) {
        Add(*i, absl::StrCat("expected a parameter number in [0, ", count,
                             ") (the computation has ",
                             Counted(static_cast<uint64_t>(count), "parameter"),
                             "), found ", n));
        continue;
      }
      auto [it, fresh] = seen.emplace(n, i);
      if (!fresh) {
        Add(*i, absl::StrCat("expected each parameter number once, found ", n,
                             " also on ", Quoted(it->second->name())));
      }
    }
  }

  // Operand edges go backwards in the list (HloModule::Create checked), so
  // a cycle runs through a control predecessor. Iterative DFS over both.
  void CheckControlCycles(const HloComputation& c) {
    bool any_control = false;
    for (const HloInstruction* i : c.instructions()) {
      if (!i->control_predecessors().empty()) any_control = true;
    }
    if (!any_control) return;
    const auto instrs = c.instructions();
    std::vector<uint8_t> color(instrs.size(), 0);
    struct Frame {
      const HloInstruction* i;
      size_t next = 0;  // operands first, then control predecessors
    };
    for (size_t root = 0; root < instrs.size(); ++root) {
      if (color[root] != 0) continue;
      std::vector<Frame> stack{{instrs[root]}};
      color[root] = 1;
      while (!stack.empty()) {
        Frame& f = stack.back();
        const size_t nops = static_cast<size_t>(f.i->operand_count());
        const size_t total = nops + f.i->control_predecessors().size();
        if (f.next >= total) {
          color[f.i->index()] = 2;
          stack.pop_back();
          continue;
        }
        const HloInstruction* pred =
            f.next < nops ? f.i->operand(static_cast<int64_t>(f.next))
                          : f.i->control_predecessors()[f.next - nops];
        ++f.next;
        const size_t pi = static_cast<size_t>(pred->index());
        if (color[pi] == 1) {
          // In execution order: pred runs before the top of the stack,
          // which runs before the frame below it, ... back to pred.
          size_t k = 0;
          while (stack[k].i != pred) ++k;
          std::vector<std::string> path{Quoted(pred->name())};
          for (size_t j = stack.size(); j-- > k;) {
            path.push_back(Quoted(stack[j].i->name()));
          }
          Add(DescribeComputation(c),
              absl::StrCat("expected no cycle through control predecessors, "
                           "found ",
                           JoinPath(path)));
          return;
        }
        if (color[pi] == 0) {
          color[pi] = 1;
          stack.push_back(Frame{pred});
        }
      }
    }
  }

  // --- 4. Instructions --------------------------------------------------------------

  void CheckInstruction(const HloInstruction& i) {
    const size_t before = problems_.size();
    if (absl::Status s = CheckShapeWellFormed(i.shape()); !s.ok()) {
      Add(i, absl::StrCat("shape: ", Msg(s)));
      return;
    }
    const HloOpcode op = i.opcode();
    if (op == HloOpcode::kUnknown) {
      if (!o_.allow_unknown_opcodes) {
        Add(i, absl::StrCat("expected an opcode this library knows, found ",
                            Quoted(i.opcode_string())));
      }
      return;
    }
    if (!CheckOperandCount(i)) return;
    if (!CheckCalledCount(i)) return;
    CheckCalledSignatures(i);
    CheckAttributes(i);
    if (problems_.size() != before || Full()) return;
    bool operands_ok = true;
    std::vector<const ShapeProto*> shapes;
    for (const HloInstruction* o : i.operands()) {
      if (!CheckShapeWellFormed(o->shape()).ok()) operands_ok = false;
      shapes.push_back(&o->shape());
    }
    if (!operands_ok) return;  // the operand is reported itself
    if (!o_.allow_mixed_precision) {
      if (absl::Status s = CheckMixedPrecision(op, shapes); !s.ok()) {
        Add(i, Msg(s));
        return;
      }
    }
    if (o_.check_shapes) CheckShapeRule(i);
  }

  static std::string Msg(const absl::Status& s) {
    return std::string(s.message().data(), s.message().size());
  }

  bool CheckOperandCount(const HloInstruction& i) {
    const HloOpcode op = i.opcode();
    const int64_t n = i.operand_count();
    auto exactly = [&](int64_t want) {
      if (n == want) return true;
      Add(i, absl::StrCat("expected ", Counted(static_cast<uint64_t>(want),
                                               "operand"),
                          ", found ", n));
      return false;
    };
    auto at_least = [&](int64_t want) {
      if (n >= want) return true;
      Add(i, absl::StrCat("expected at least ",
                          Counted(static_cast<uint64_t>(want), "operand"),
                          ", found ", n));
      return false;
    };
    switch (op) {
      case HloOpcode::kDot:
        return exactly(2 + i.proto().dot_sparsity_size());
      case HloOpcode::kConvolution:
      case HloOpcode::kRng:
        return exactly(2);
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
      case HloOpcode::kConcatenate: case HloOpcode::kMap:
      case HloOpcode::kSort: case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicReshape:
      case HloOpcode::kConditional:
        return at_least(1);
      case HloOpcode::kDynamicUpdateSlice:
        return at_least(2);
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteStart:
        if (n == 1 || n == 4) return true;
        Add(i, absl::StrCat("expected 1 operand (or 4 in place), found ", n));
        return false;
      case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
        if (n >= 2 && n % 2 == 0) return true;
        Add(i, absl::StrCat("expected inputs and as many initial values (an "
                            "even number of operands >= 2), found ",
                            n));
        return false;
      case HloOpcode::kScatter:
        if (n >= 3 && n % 2 == 1) return true;
        Add(i, absl::StrCat("expected operands, indices and as many updates "
                            "as operands (an odd number of operands >= 3), "
                            "found ",
                            n));
        return false;
      case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
        return exactly(1);
      default:
        break;
    }
    if (std::optional<int> arity = HloOpcodeArity(op)) return exactly(*arity);
    return true;
  }

  bool CheckCalledCount(const HloInstruction& i) {
    const CalledCount want = CalledCountOf(i.opcode());
    const size_t have = i.called_computations().size();
    if (want.any) return true;
    if (i.opcode() == HloOpcode::kConditional) {
      const size_t branches = static_cast<size_t>(i.operand_count() - 1);
      const bool pred = IsArrayShape(i.operand(0)->shape()) &&
                        i.operand(0)->shape().element_type() == xla::PRED;
      if (have < 1 || have != branches) {
        Add(i, absl::StrCat("expected one branch computation per operand after "
                            "the branch index (",
                            branches, "), found ", have));
        return false;
      }
      if (pred && have != 2) {
        Add(i, absl::StrCat("expected 2 branch computations for a pred branch "
                            "index, found ",
                            have));
        return false;
      }
      return true;
    }
    if (have == want.n) return true;
    if (want.n == 0) {
      Add(i, absl::StrCat("expected no called computations, found ", have));
    } else {
      Add(i, absl::StrCat("expected ", Counted(want.n, "called computation"),
                          ", found ", have));
    }
    return false;
  }

  // The parameter counts (and the result kinds that do not depend on the
  // operands' shapes) each opcode needs of its called computations.
  void CheckCalledSignatures(const HloInstruction& i) {
    const auto called = i.called_computations();
    const int64_t n = i.operand_count();
    auto params = [&](const HloComputation& c, int64_t want,
                      std::string_view why) {
      const int64_t have = static_cast<int64_t>(c.parameters().size());
      if (have == want) return true;
      Add(i, absl::StrCat("expected ", Callee(c), " to take ",
                          Counted(static_cast<uint64_t>(want), "parameter"), " (",
                          Sv(why), "), found ", have));
      return false;
    };
    auto returns_pred = [&](const HloComputation& c, std::string_view role) {
      if (ShapesCompatible(c.root()->shape(), MakeScalarShape(xla::PRED))) {
        return;
      }
      Add(i, absl::StrCat("expected ", Sv(role), " ", Callee(c),
                          " to return pred[], found ",
                          DescribeShape(c.root()->shape())));
    };
    auto returns_scalars = [&](const HloComputation& c, int64_t count) {
      const ShapeProto& r = c.root()->shape();
      bool ok = count == 1 ? IsScalarShape(r)
                           : IsTupleShape(r) && r.tuple_shapes_size() == count;
      for (int k = 0; ok && count > 1 && k < r.tuple_shapes_size(); ++k) {
        ok = IsScalarShape(r.tuple_shapes(k));
      }
      if (ok) return;
      Add(i, absl::StrCat("expected ", Callee(c), " to return ",
                          count == 1 ? std::string("a scalar")
                                     : absl::StrCat("a tuple of ", count,
                                                    " scalars"),
                          ", found ", DescribeShape(r)));
    };
    switch (i.opcode()) {
      case HloOpcode::kCall:
        params(*called[0], n, "one per operand");
        break;
      case HloOpcode::kMap:
        if (params(*called[0], n, "one per operand")) {
          returns_scalars(*called[0], 1);
        }
        break;
      case HloOpcode::kReduce:
      case HloOpcode::kReduceWindow:
        if (params(*called[0], n, "an accumulator and an element per input")) {
          returns_scalars(*called[0], n / 2);
        }
        break;
      case HloOpcode::kScatter:
        if (params(*called[0], n - 1,
                   "an accumulator and an update per operand")) {
          returns_scalars(*called[0], (n - 1) / 2);
        }
        break;
      case HloOpcode::kSort:
        if (params(*called[0], 2 * n, "two per operand")) {
          returns_pred(*called[0], "comparator");
        }
        break;
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter:
        if (params(*called[0], 2, "the two values it combines")) {
          returns_scalars(*called[0], 1);
        }
        break;
      case HloOpcode::kWhile:
        params(*called[0], 1, "the loop state");
        if (params(*called[1], 1, "the loop state")) {
          returns_pred(*called[1], "condition");
        }
        break;
      case HloOpcode::kConditional:
        for (const HloComputation* b : called) params(*b, 1, "its operand");
        break;
      case HloOpcode::kSelectAndScatter:
        if (params(*called[0], 2, "two elements to choose from")) {
          returns_pred(*called[0], "select");
        }
        if (params(*called[1], 2, "an accumulator and a source element")) {
          returns_scalars(*called[1], 1);
        }
        break;
      case HloOpcode::kFusion: {
        const int64_t have = static_cast<int64_t>(called[0]->parameters().size());
        if (have > n) {
          Add(i, absl::StrCat("expected fused ", Callee(*called[0]),
                              " to take at most ",
                              Counted(static_cast<uint64_t>(n), "parameter"),
                              " (one per operand), found ", have));
        }
        break;
      }
      case HloOpcode::kAsyncStart:
        params(*called[0], n, "one per operand");
        break;
      default:
        break;
    }
  }

  static GroupMode ModeOf(const HloInstruction& i, bool has_global_flag) {
    const bool channel = i.channel_id().has_value();
    if (!channel) return GroupMode::kCrossReplica;
    if (!has_global_flag) return GroupMode::kCrossPartition;
    return i.proto().use_global_device_ids() ? GroupMode::kFlattenedId
                                             : GroupMode::kCrossReplicaAndPartition;
  }

  void CheckAttributes(const HloInstruction& i) {
    const xla::HloInstructionProto& p = i.proto();
    switch (i.opcode()) {
      case HloOpcode::kCompare:
        CheckCompare(i);
        break;
      case HloOpcode::kFusion: {
        static constexpr std::string_view kKinds[] = {"kLoop", "kInput",
                                                      "kOutput", "kCustom"};
        if (std::find(std::begin(kKinds), std::end(kKinds), p.fusion_kind()) ==
            std::end(kKinds)) {
          Add(i, absl::StrCat("expected fusion_kind kLoop, kInput, kOutput or "
                              "kCustom, found ",
                              Quoted(p.fusion_kind())));
        }
        CheckAliasing(i);
        break;
      }
      case HloOpcode::kGetTupleElement: {
        const ShapeProto& t = i.operand(0)->shape();
        if (!IsTupleShape(t)) {
          Add(i, absl::StrCat("expected a tuple operand, found ",
                              DescribeShape(t)));
        } else if (p.tuple_index() < 0 ||
                   p.tuple_index() >= t.tuple_shapes_size()) {
          Add(i, absl::StrCat("expected a tuple index in [0, ",
                              t.tuple_shapes_size(), ") for ", DescribeShape(t),
                              ", found ", p.tuple_index()));
        }
        break;
      }
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
        if (p.channel_id() > 0 && p.all_reduce_id() > 0) {
          Add(i, absl::StrCat("expected channel_id or all_reduce_id, found both (",
                              p.channel_id(), " and ", p.all_reduce_id(), ")"));
        }
        CheckReplicaGroups(i, ModeOf(i, true), /*uniform=*/false);
        break;
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
      case HloOpcode::kReduceScatter:
        CheckReplicaGroups(i, ModeOf(i, true), /*uniform=*/true);
        CheckShardCount(i);
        break;
      case HloOpcode::kAllToAll:
        CheckReplicaGroups(i, ModeOf(i, false), /*uniform=*/true);
        if (p.dimensions_size() == 0) {
          const auto groups = i.ReplicaGroups();
          if (!groups.empty() &&
              static_cast<int64_t>(groups[0].size()) != i.operand_count()) {
            Add(i, absl::StrCat("expected one operand per member of a replica "
                                "group (",
                                groups[0].size(), "), found ",
                                i.operand_count()));
          }
        }
        break;
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteStart:
        if (i.operand_count() == 1) CheckSourceTargetPairs(i);
        break;
      case HloOpcode::kCustomCall:
        CheckCustomCall(i);
        break;
      case HloOpcode::kConstant:
        if (p.has_literal() && !LayoutsAgree(p.literal().shape(), i.shape())) {
          Add(i, absl::StrCat("expected the literal's layout ",
                              DescribeShape(p.literal().shape(), true),
                              ", found ", DescribeShape(i.shape(), true)));
        }
        break;
      default:
        break;
    }
    CheckAsyncPair(i);
  }

  void CheckCompare(const HloInstruction& i) {
    const xla::HloInstructionProto& p = i.proto();
    if (!i.comparison_direction().has_value()) {
      Add(i, absl::StrCat("expected a comparison direction EQ, NE, GE, GT, LE "
                          "or LT, found ",
                          Quoted(p.comparison_direction())));
      return;
    }
    if (!p.comparison_type().empty() &&
        !ComparisonTypeFromString(p.comparison_type()).has_value()) {
      Add(i, absl::StrCat("expected a comparison type FLOAT, TOTALORDER, "
                          "SIGNED or UNSIGNED, found ",
                          Quoted(p.comparison_type())));
      return;
    }
    const int t = i.operand(1)->shape().element_type();
    if (!IsArrayElementType(t)) return;  // the shape rule reports it
    const ComparisonType type = *i.comparison_type();
    if (IsFloatingType(t)) {
      if (type != ComparisonType::kFloat && type != ComparisonType::kTotalOrder) {
        Add(i, absl::StrCat("expected comparison type FLOAT or TOTALORDER for ",
                            ElementTypeName(t), " operands, found ",
                            Sv(ComparisonTypeString(type))));
      }
      return;
    }
    const ComparisonType want = DefaultComparisonType(t);
    if (type != want) {
      Add(i, absl::StrCat("expected comparison type ",
                          Sv(ComparisonTypeString(want)), " for ",
                          ElementTypeName(t), " operands, found ",
                          Sv(ComparisonTypeString(type))));
    }
  }

  // XLA's CheckReplicaGroups: no empty group, no id twice, ids 0..n-1, and
  // (but for all-reduce) groups of one size.
  void CheckReplicaGroups(const HloInstruction& i, GroupMode mode,
                          bool uniform) {
    const auto groups = i.ReplicaGroups();
    if (groups.empty()) {
      if (mode == GroupMode::kFlattenedId) {
        Add(i, "expected replica groups with use_global_device_ids, found "
               "none");
      }
      return;
    }
    absl::flat_hash_set<int64_t> seen;
    for (const auto& g : groups) {
      if (g.empty()) {
        Add(i, "expected non-empty replica groups, found an empty one");
        return;
      }
      for (int64_t id : g) {
        if (!seen.insert(id).second) {
          Add(i, absl::StrCat("expected each replica once in the replica "
                              "groups, found ",
                              id, " twice"));
          return;
        }
      }
    }
    for (int64_t id = 0; id < static_cast<int64_t>(seen.size()); ++id) {
      if (!seen.contains(id)) {
        Add(i, absl::StrCat("expected replica groups naming replicas 0 to ",
                            seen.size() - 1, ", found no ", id));
        return;
      }
    }
    if (uniform) {
      for (const auto& g : groups) {
        if (g.size() != groups[0].size()) {
          Add(i, absl::StrCat("expected replica groups of one size, found ",
                              groups[0].size(), " and ", g.size()));
          return;
        }
      }
    }
  }

  // all-gather and reduce-scatter: the shard count the shapes give equals
  // the group size, where the group size is known without the module's
  // replica and partition counts.
  void CheckShardCount(const HloInstruction& i) {
    const GroupMode mode = ModeOf(i, true);
    if (mode == GroupMode::kCrossReplicaAndPartition) return;
    const auto groups = i.ReplicaGroups();
    if (groups.empty() || groups[0].size() == 1) return;
    if (i.proto().dimensions_size() != 1) return;  // the rule reports it
    const int64_t d = i.proto().dimensions(0);
    const ShapeProto& in = i.operand(0)->shape();
    const ShapeProto* out = &i.shape();
    if (i.opcode() == HloOpcode::kAllGatherStart) {
      if (!IsTupleShape(*out) || out->tuple_shapes_size() < 2) return;
      out = &out->tuple_shapes(1);
    }
    if (i.operand_count() > 1) {
      if (!IsTupleShape(*out) || out->tuple_shapes_size() < 1) return;
      out = &out->tuple_shapes(0);
    }
    if (d < 0 || d >= in.dimensions_size() || d >= out->dimensions_size()) {
      return;
    }
    const bool gather = i.opcode() != HloOpcode::kReduceScatter;
    const int64_t big = gather ? out->dimensions(d) : in.dimensions(d);
    const int64_t small = gather ? in.dimensions(d) : out->dimensions(d);
    if (small <= 0) return;
    const int64_t shards = big / small + (big % small != 0);
    if (shards != static_cast<int64_t>(groups[0].size())) {
      Add(i, absl::StrCat("expected a shard count equal to the replica group "
                          "size ",
                          groups[0].size(), ", found ", shards, " (",
                          DescribeShape(in), " to ", DescribeShape(*out), ")"));
    }
  }

  void CheckSourceTargetPairs(const HloInstruction& i) {
    absl::flat_hash_set<int64_t> sources, targets;
    for (const xla::SourceTarget& st : i.proto().source_target_pairs()) {
      if (st.source() < 0 || st.target() < 0) {
        Add(i, absl::StrCat("expected non-negative source-target pairs, found {",
                            st.source(), ",", st.target(), "}"));
        return;
      }
      if (!sources.insert(st.source()).second) {
        Add(i, absl::StrCat("expected each source once in source_target_pairs, "
                            "found ",
                            st.source(), " twice"));
        return;
      }
      if (!targets.insert(st.target()).second) {
        Add(i, absl::StrCat("expected each target once in source_target_pairs, "
                            "found ",
                            st.target(), " twice"));
        return;
      }
    }
  }

  // The shape at `index` inside `s`, or nullptr when the index leaves it.
  static const ShapeProto* Subshape(const ShapeProto& s,
                                    absl::Span<const int64_t> index) {
    const ShapeProto* cur = &s;
    for (int64_t k : index) {
      if (!IsTupleShape(*cur) || k < 0 || k >= cur->tuple_shapes_size()) {
        return nullptr;
      }
      cur = &cur->tuple_shapes(static_cast<int>(k));
    }
    return cur;
  }

  static std::string IndexString(absl::Span<const int64_t> index) {
    return absl::StrCat("{", absl::StrJoin(index, ","), "}");
  }

  void CheckAliasing(const HloInstruction& i) {
    const auto& aliases = i.proto().output_operand_aliasing();
    for (int k = 0; k < aliases.size(); ++k) {
      const xla::OutputOperandAliasing& a = aliases[k];
      const std::string which = absl::StrCat("output_operand_aliasing ", k);
      if (a.operand_index() < 0 || a.operand_index() >= i.operand_count()) {
        Add(i, absl::StrCat(which, ": expected an operand index in [0, ",
                            i.operand_count(), "), found ", a.operand_index()));
        continue;
      }
      const auto out_index = absl::Span<const int64_t>(
          a.output_shape_index().data(), a.output_shape_index().size());
      const auto in_index = absl::Span<const int64_t>(
          a.operand_shape_index().data(), a.operand_shape_index().size());
      const ShapeProto* out = Subshape(i.shape(), out_index);
      const ShapeProto* in =
          Subshape(i.operand(a.operand_index())->shape(), in_index);
      if (out == nullptr) {
        Add(i, absl::StrCat(which, ": expected an output index within ",
                            DescribeShape(i.shape()), ", found ",
                            IndexString(out_index)));
      } else if (in == nullptr) {
        Add(i, absl::StrCat(which, ": expected an operand index within ",
                            DescribeShape(i.operand(a.operand_index())->shape()),
                            ", found ", IndexString(in_index)));
      } else if (!ShapesCompatible(*out, *in)) {
        Add(i, absl::StrCat(which, ": expected aliased shapes to agree, found ",
                            DescribeShape(*out), " and ", DescribeShape(*in)));
      }
    }
  }

  void CheckCustomCall(const HloInstruction& i) {
    const xla::HloInstructionProto& p = i.proto();
    if (p.constrain_layout() && p.custom_call_target() != "LayoutConstraint") {
      if (!i.shape().has_layout() && IsArrayShape(i.shape())) {
        Add(i, "expected a layout on the result of a layout-constrained "
               "custom-call, found none");
      }
      if (p.operand_shapes_with_layout_size() != i.operand_count()) {
        Add(i, absl::StrCat("expected one operand_shapes_with_layout entry per "
                            "operand (",
                            i.operand_count(), "), found ",
                            p.operand_shapes_with_layout_size()));
      } else {
        for (int64_t k = 0; k < i.operand_count(); ++k) {
          const ShapeProto& want = p.operand_shapes_with_layout(static_cast<int>(k));
          if (!ShapesCompatible(want, i.operand(k)->shape())) {
            Add(i, absl::StrCat("expected operand ", k, " of shape ",
                                DescribeShape(want),
                                " (operand_shapes_with_layout), found ",
                                DescribeShape(i.operand(k)->shape())));
          }
        }
      }
    }
    CheckAliasing(i);
  }

  // XLA's VerifyAsynchronousInstructionPairs for the pairs it names.
  void CheckAsyncPair(const HloInstruction& i) {
    auto single_user = [&](std::initializer_list<HloOpcode> want) {
      const auto users = i.users();
      bool ok = users.size() == 1;
      if (ok) {
        ok = std::find(want.begin(), want.end(), users[0]->opcode()) != want.end();
      }
      if (ok) return;
      std::vector<std::string> names;
      for (HloOpcode w : want) names.emplace_back(Sv(HloOpcodeString(w)));
      Add(i, absl::StrCat("expected one user, a ", absl::StrJoin(names, " or "),
                          ", found ",
                          users.empty()
                              ? std::string("none")
                              : absl::StrCat(users.size(), " (first ",
                                             Quoted(users[0]->name()), ", ",
                                             Sv(HloOpcodeString(users[0]->opcode())),
                                             ")")));
    };
    auto operand_is = [&](std::initializer_list<HloOpcode> want) {
      if (i.operand_count() != 1) return;
      const HloOpcode have = i.operand(0)->opcode();
      if (std::find(want.begin(), want.end(), have) != want.end()) return;
      std::vector<std::string> names;
      for (HloOpcode w : want) names.emplace_back(Sv(HloOpcodeString(w)));
      Add(i, absl::StrCat("expected an operand that is a ",
                          absl::StrJoin(names, " or "), ", found ",
                          Quoted(i.operand(0)->name()), " (",
                          Sv(HloOpcodeString(have)), ")"));
    };
    switch (i.opcode()) {
      case HloOpcode::kCopyStart: single_user({HloOpcode::kCopyDone}); break;
      case HloOpcode::kCopyDone: operand_is({HloOpcode::kCopyStart}); break;
      case HloOpcode::kAllReduceStart:
        single_user({HloOpcode::kAllReduceDone});
        break;
      case HloOpcode::kAllReduceDone:
        operand_is({HloOpcode::kAllReduceStart});
        break;
      case HloOpcode::kCollectivePermuteStart:
        single_user({HloOpcode::kCollectivePermuteDone});
        break;
      case HloOpcode::kCollectivePermuteDone:
        operand_is({HloOpcode::kCollectivePermuteStart});
        break;
      case HloOpcode::kAsyncStart:
        single_user({HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone});
        break;
      case HloOpcode::kAsyncUpdate:
        operand_is({HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate});
        single_user({HloOpcode::kAsyncUpdate, HloOpcode::kAsyncDone});
        break;
      case HloOpcode::kAsyncDone:
        operand_is({HloOpcode::kAsyncStart, HloOpcode::kAsyncUpdate});
        break;
      default:
        break;
    }
  }

  void CheckShapeRule(const HloInstruction& i) {
    absl::StatusOr<std::optional<ShapeProto>> inferred = InferInstructionShape(i);
    if (!inferred.ok()) {
      Add(i, Msg(inferred.status()));
      return;
    }
    if (!inferred->has_value()) return;
    const ShapeProto& want = **inferred;
    const bool same = (ComparesExactly(i.opcode()) || !o_.allow_mixed_precision)
                          ? ShapesCompatible(i.shape(), want)
                          : ShapesCompatibleIgnoringFpPrecision(i.shape(), want);
    if (!same) {
      Add(i, absl::StrCat("expected shape ", DescribeShape(want), ", found ",
                          DescribeShape(i.shape())));
    }
  }

  // --- 5. Entry, aliases, schedule -------------------------------------------------

  // `layouts`: compare minor_to_major too. The computation's own
  // program_shape is derived from its instructions, so they agree; the
  // module's host_program_shape is the layout the entry is to be compiled
  // to, which before layout assignment may differ from the instructions'
  // (JAX's before-optimizations dumps), and XLA's verifier compares it
  // without layouts unless layout-sensitive.
  void CheckProgramShape(std::string_view where,
                         const xla::ProgramShapeProto& p, bool layouts) {
    const HloComputation& e = *m_.entry();
    const auto params = e.parameters();
    if (p.parameters_size() != static_cast<int64_t>(params.size())) {
      Add(where, absl::StrCat("expected ",
                              Counted(params.size(), "parameter"), " (those of ",
                              Callee(e), "), found ", p.parameters_size()));
      return;
    }
    for (size_t k = 0; k < params.size(); ++k) {
      if (params[k] == nullptr) continue;  // reported by CheckParameters
      const ShapeProto& want = params[k]->shape();
      const ShapeProto& have = p.parameters(static_cast<int>(k));
      if (!ShapesCompatible(want, have)) {
        Add(where, absl::StrCat("parameter ", k, ": expected ",
                                DescribeShape(want), " (parameter ",
                                Quoted(params[k]->name()), "), found ",
                                DescribeShape(have)));
      } else if (layouts && !LayoutsAgree(want, have)) {
        Add(where, absl::StrCat("parameter ", k, ": expected layout ",
                                DescribeShape(want, true), " (parameter ",
                                Quoted(params[k]->name()), "), found ",
                                DescribeShape(have, true)));
      }
    }
    const ShapeProto& root = e.root()->shape();
    if (!ShapesCompatible(root, p.result())) {
      Add(where, absl::StrCat("result: expected ", DescribeShape(root),
                              " (root ", Quoted(e.root()->name()), "), found ",
                              DescribeShape(p.result())));
    } else if (layouts && !LayoutsAgree(root, p.result())) {
      Add(where, absl::StrCat("result: expected layout ",
                              DescribeShape(root, true), " (root ",
                              Quoted(e.root()->name()), "), found ",
                              DescribeShape(p.result(), true)));
    }
  }

  void CheckEntry() {
    const xla::HloModuleProto& mp = m_.proto();
    if (mp.has_host_program_shape()) {
      CheckProgramShape(absl::StrCat(ModuleWhere(), ": host_program_shape"),
                        mp.host_program_shape(), /*layouts=*/false);
    }
    const HloComputation& e = *m_.entry();
    if (e.proto().has_program_shape()) {
      CheckProgramShape(absl::StrCat(DescribeComputation(e), ": program_shape"),
                        e.proto().program_shape(), /*layouts=*/true);
    }
  }

  void CheckAliases() {
    const HloComputation& e = *m_.entry();
    const auto params = e.parameters();
    const auto& entries = m_.proto().input_output_alias().entries();
    for (int k = 0; k < entries.size(); ++k) {
      const auto& a = entries[k];
      const std::string where =
          absl::StrCat(ModuleWhere(), ": input_output_alias entry ", k);
      const int64_t n = a.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(params.size()) ||
          params[n] == nullptr) {
        Add(where, absl::StrCat("expected a parameter number in [0, ",
                                params.size(), "), found ", n));
        continue;
      }
      const auto out_index = absl::Span<const int64_t>(
          a.output_shape_index().data(), a.output_shape_index().size());
      const auto in_index = absl::Span<const int64_t>(
          a.parameter_shape_index().data(), a.parameter_shape_index().size());
      if (Subshape(e.root()->shape(), out_index) == nullptr) {
        Add(where, absl::StrCat("expected an output index within ",
                                DescribeShape(e.root()->shape()), ", found ",
                                IndexString(out_index)));
      } else if (Subshape(params[n]->shape(), in_index) == nullptr) {
        Add(where, absl::StrCat("expected a parameter index within ",
                                DescribeShape(params[n]->shape()), ", found ",
                                IndexString(in_index)));
      }
    }
  }

  void CheckSchedule() {
    const xla::HloModuleProto& mp = m_.proto();
    if (!mp.has_schedule()) return;
    std::vector<int64_t> ids;
    for (const auto& [id, seq] : mp.schedule().sequences()) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (int64_t cid : ids) {
      if (Full()) return;
      const HloComputation* c = m_.FindComputation(cid);
      if (c == nullptr) {
        Add(absl::StrCat(ModuleWhere(), ": schedule"),
            absl::StrCat("expected computation ids of the module, found ", cid));
        continue;
      }
      const auto& seq = mp.schedule().sequences().at(cid).instruction_ids();
      const std::string where =
          absl::StrCat(DescribeComputation(*c), ": schedule");
      absl::flat_hash_map<int64_t, size_t> position;
      bool ok = true;
      for (int k = 0; k < seq.size() && ok; ++k) {
        if (c->FindInstruction(seq[k]) == nullptr) {
          Add(where, absl::StrCat("expected instruction ids of the "
                                  "computation, found ",
                                  seq[k]));
          ok = false;
        } else if (!position.emplace(seq[k], k).second) {
          Add(where, absl::StrCat("expected each instruction once, found id ",
                                  seq[k], " twice"));
          ok = false;
        }
      }
      if (!ok) continue;
      if (position.size() != static_cast<size_t>(c->instruction_count())) {
        Add(where, absl::StrCat("expected all ", c->instruction_count(),
                                " instructions, found ", position.size()));
        continue;
      }
      for (const HloInstruction* i : c->instructions()) {
        const size_t at = position.at(i->id());
        auto check = [&](const HloInstruction* before, std::string_view role) {
          if (position.at(before->id()) < at) return true;
          Add(where, absl::StrCat("expected ", Sv(role), " ",
                                  Quoted(before->name()), " before ",
                                  Quoted(i->name()), ", found it after"));
          return false;
        };
        bool good = true;
        for (const HloInstruction* o : i->operands()) {
          if (good) good = check(o, "operand");
        }
        for (const HloInstruction* o : i->control_predecessors()) {
          if (good) good = check(o, "control predecessor");
        }
        if (!good) break;
      }
    }
  }

  const HloModule& m_;
  const ValidateOptions& o_;
  const size_t limit_;
  std::vector<absl::Status> problems_;
};

}  // namespace

absl::Status ValidateModule(const HloModule& module,
                            const ValidateOptions& options) {
  std::vector<absl::Status> p = Validator(module, options, 1).Run();
  return p.empty() ? absl::OkStatus() : p.front();
}

std::vector<absl::Status> ValidateModuleAll(const HloModule& module,
                                            const ValidateOptions& options) {
  return Validator(module, options, options.max_problems).Run();
}

absl::Status ValidateModuleProto(xla::HloModuleProto proto,
                                 const ValidateOptions& options) {
  absl::StatusOr<std::unique_ptr<HloModule>> m =
      HloModule::Create(std::move(proto));
  if (!m.ok()) return m.status();
  return ValidateModule(**m, options);
}

}  // namespace decomposed::hlo
