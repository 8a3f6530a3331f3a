// The HLO printer: the module header, the order of computations and
// instructions, and each instruction's line (XLA's hlo_module.cc,
// hlo_computation.cc, hlo_instruction.cc PrintWithCanonicalNameMap and
// PrintExtraAttributes, hlo_instructions.cc PrintExtraAttributesImpl).
// Values (shapes, literals, sharding, ...) are written by print_text.cc.
#include "decomposed/hlo/print.h"

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/status.h"
#include "print_internal.h"

namespace decomposed::hlo {
namespace print_internal {
namespace {

// What each style prints (XLA's HloPrintOptions fields).
struct Style {
  bool percent = true;
  bool operand_shapes = true;
  bool metadata = true;
  bool program_shape = true;
  bool control_predecessors = true;
  int index_interval = 5;
  bool large_constants = false;
};

Style StyleOf(const HloPrintOptions& o, const HloModuleTextExtras* extras) {
  Style s;
  switch (o.style) {
    case HloTextStyle::kLong:
      break;
    case HloTextStyle::kModern:
      s.operand_shapes = false;
      break;
    case HloTextStyle::kShort:
      s.percent = false;
      s.operand_shapes = false;
      s.metadata = false;
      s.program_shape = false;
      s.control_predecessors = false;
      s.index_interval = 0;
      s.large_constants = true;
      break;
  }
  s.large_constants = s.large_constants || o.print_large_constants;
  if (o.print_metadata.has_value()) s.metadata = *o.print_metadata;
  if (o.print_operand_index_annotation_interval.has_value()) {
    // XLA's `i % interval == 0`: a negative interval annotates as its
    // absolute value does.
    const int64_t n = *o.print_operand_index_annotation_interval;
    s.index_interval = static_cast<int>(
        std::min<int64_t>(n < 0 ? (n == INT64_MIN ? INT64_MAX : -n) : n, 1 << 30));
  } else if (o.style == HloTextStyle::kShort && extras != nullptr &&
             extras->operand_index_annotations) {
    s.index_interval = 5;
  }
  return s;
}

std::string Lower(std::string s) {
  absl::AsciiStrToLower(&s);
  return s;
}

// The direction of the comparison opcodes XLA upgrades to compare.
std::string_view LegacyCompareDirection(std::string_view opcode) {
  if (opcode == "equal-to") return "EQ";
  if (opcode == "not-equal-to") return "NE";
  if (opcode == "greater-than-or-equal-to") return "GE";
  if (opcode == "greater-than") return "GT";
  if (opcode == "less-than-or-equal-to") return "LE";
  if (opcode == "less-than") return "LT";
  return {};
}

bool IsAsync(HloOpcode op) {
  return op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
         op == HloOpcode::kAsyncDone;
}

// HloComputation::CanExpandIntoSingleInstruction.
bool SingleInstruction(const HloComputation& c) {
  for (const HloInstruction* in : c.instructions()) {
    if (in != c.root() && in->opcode() != HloOpcode::kParameter) return false;
  }
  return c.root() != nullptr;
}

// The element count of `shape`'s dimensions, saturated past `cap`.
uint64_t CountUpTo(const xla::ShapeProto& shape, uint64_t cap) {
  uint64_t n = 1;
  for (int64_t d : shape.dimensions()) {
    if (d <= 0) return 0;
    n = static_cast<uint64_t>(d) > cap || n > cap / static_cast<uint64_t>(d)
            ? cap + 1
            : n * static_cast<uint64_t>(d);
  }
  return n;
}

bool IdLess(const HloInstruction* a, const HloInstruction* b) {
  return a->id() < b->id();
}

// The instructions of `c` that `keep` accepts, in id order (XLA's order of a
// computation's instruction list after loading a proto). Only the few that
// matter are sorted, not the whole list.
template <class Keep>
std::vector<const HloInstruction*> SortedById(const HloComputation& c, Keep keep) {
  std::vector<const HloInstruction*> v;
  for (const HloInstruction* in : c.instructions()) {
    if (keep(*in)) v.push_back(in);
  }
  if (!std::is_sorted(v.begin(), v.end(), IdLess)) {
    std::stable_sort(v.begin(), v.end(), IdLess);
  }
  return v;
}

bool IsChannelCollective(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

class ModulePrinter {
 public:
  ModulePrinter(const HloModule& module, const HloPrintOptions& options,
                const HloModuleTextExtras* extras, TextBuffer& out)
      : module_(module),
        style_(StyleOf(options, extras)),
        extras_(extras),
        name_after_brace_(options.print_name_after_closing_brace.value_or(
            extras != nullptr && extras->name_after_closing_brace)),
        out_(out) {}

  absl::Status Print() {
    FindAsyncComputations();
    if (absl::Status s = Header(); !s.ok()) return s;
    if (!out_.MaybeFlush()) return absl::OkStatus();
    for (const HloComputation* c : ComputationOrder()) {
      if (skipped_async_.contains(c)) continue;
      if (absl::Status s = PrintComputation(*c); !s.ok()) return s;
      out_.Append("\n\n");
      if (!out_.MaybeFlush()) return absl::OkStatus();
    }
    return absl::OkStatus();
  }

 private:
  // --- Names and shapes -----------------------------------------------------

  void Name(std::string_view name) {
    if (style_.percent) out_.Append('%');
    out_.Append(name);
  }

  absl::Status BadShape(const HloInstruction& in, std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeInstruction(in), ": ", Sv(what),
        ": an element type XLA does not know"));
  }

  // Appends the instruction's shape with its layout. In the long style the
  // text is kept (in one arena per computation) for the operand lists of
  // its users. False for an element type XLA does not know.
  bool AppendInstructionShape(const HloInstruction& in) {
    if (!style_.operand_shapes) {
      return AppendShape(out_, in.shape(), /*print_layout=*/true);
    }
    ShapeSpan& span = shape_spans_[static_cast<size_t>(in.index())];
    if (span.size == 0) {
      TextBuffer& arena = shape_arena_;
      const size_t at = arena.str().size();
      if (!AppendShape(arena, in.shape(), /*print_layout=*/true)) return false;
      span = {at, arena.str().size() - at};
    }
    out_.Append(std::string_view(shape_arena_.str()).substr(span.offset, span.size));
    return true;
  }

  // --- The header -------------------------------------------------------------

  absl::Status Header() {
    const xla::HloModuleProto& p = module_.proto();
    out_.Append("HloModule ");
    out_.Append(p.name());
    if (p.has_schedule()) out_.Append(", is_scheduled=true");
    AppendAliases(p.input_output_alias());
    AppendBufferDonors(p.buffer_donor());
    AppendConfigAttribute("alias_passthrough_params");
    if (extras_ == nullptr || extras_->has_entry_computation_layout) {
      out_.Append(", entry_computation_layout={");
      if (absl::Status s = EntryComputationLayout(); !s.ok()) return s;
      out_.Append('}');
    }
    static constexpr std::string_view kAfterLayout[] = {
        "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output", "replica_count",
        "num_partitions"};
    for (std::string_view name : kAfterLayout) AppendConfigAttribute(name);
    if (!p.frontend_attributes().map().empty()) {
      out_.Append(", frontend_attributes=");
      AppendFrontendAttributes(out_, p.frontend_attributes());
    }
    // XLA prints its origin recovery table after the frontend attributes.
    AppendConfigAttribute("origin_recovery_table");
    if (extras_ != nullptr) {
      // Attributes XLA's printer does not know keep the text's order, after
      // those it knows, as XLA prints its custom fields.
      for (const auto& [name, value] : extras_->config_attributes) {
        if (IsKnownHeaderAttribute(name) || name == "origin_recovery_table") continue;
        out_.Append(", ");
        out_.Append(name);
        out_.Append('=');
        out_.Append(value);
      }
    }
    if (style_.metadata) StackFrameIndex(p.stack_frame_index());
    out_.Append("\n\n");
    return absl::OkStatus();
  }

  // XLA's PrintStackFrameIndex: the module's stack frame index after the
  // header, with metadata and only when it names a file. Each entry is
  // numbered from 1; a frame's parent prints as its proto value + 1 (the
  // parser takes the 1 off again).
  void StackFrameIndex(const xla::StackFrameIndexProto& index) {
    if (index.file_names_size() == 0) return;
    auto names = [&](std::string_view title,
                     const google::protobuf::RepeatedPtrField<std::string>& list) {
      out_.Append(title);
      for (int i = 0; i < list.size(); ++i) {
        out_.AppendInt(i + 1);
        out_.Append(" \"");
        AppendCEscaped(out_, list[i]);
        out_.Append("\"\n");
      }
    };
    names("\n\nFileNames\n", index.file_names());
    names("\nFunctionNames\n", index.function_names());
    out_.Append("\nFileLocations\n");
    for (int i = 0; i < index.file_locations_size(); ++i) {
      const auto& l = index.file_locations(i);
      out_.AppendInt(i + 1);
      out_.Append(" {file_name_id=");
      out_.AppendInt(l.file_name_id());
      out_.Append(" function_name_id=");
      out_.AppendInt(l.function_name_id());
      out_.Append(" line=");
      out_.AppendInt(l.line());
      out_.Append(" end_line=");
      out_.AppendInt(l.end_line());
      out_.Append(" column=");
      out_.AppendInt(l.column());
      out_.Append(" end_column=");
      out_.AppendInt(l.end_column());
      out_.Append("}\n");
    }
    out_.Append("\nStackFrames\n");
    for (int i = 0; i < index.stack_frames_size(); ++i) {
      const auto& f = index.stack_frames(i);
      out_.AppendInt(i + 1);
      out_.Append(" {file_location_id=");
      out_.AppendInt(f.file_location_id());
      out_.Append(" parent_frame_id=");
      out_.AppendInt(static_cast<int64_t>(f.parent_frame_id()) + 1);
      out_.Append("}\n");
    }
  }

  static bool IsKnownHeaderAttribute(std::string_view name) {
    static constexpr std::string_view kKnown[] = {
        "is_scheduled",
        "input_output_alias",
        "buffer_donor",
        "alias_passthrough_params",
        "entry_computation_layout",
        "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output",
        "replica_count",
        "num_partitions",
        "frontend_attributes"};
    return std::find(std::begin(kKnown), std::end(kKnown), name) !=
           std::end(kKnown);
  }

  void AppendConfigAttribute(std::string_view name) {
    if (extras_ == nullptr) return;
    for (const auto& [n, value] : extras_->config_attributes) {
      if (n != name) continue;
      out_.Append(", ");
      out_.Append(n);
      out_.Append('=');
      out_.Append(value);
      return;
    }
  }

  // HloInputOutputAliasConfig::ToShortString: by output index (the shape
  // tree's pre-order), the last entry for an index winning.
  void AppendAliases(const xla::HloInputOutputAliasProto& aliases) {
    if (aliases.entries_size() == 0) return;
    using Entry = const xla::HloInputOutputAliasProto::AliasEntryProto*;
    std::vector<Entry> entries;
    for (const auto& e : aliases.entries()) entries.push_back(&e);
    auto index_less = [](Entry a, Entry b) {
      return std::lexicographical_compare(
          a->output_shape_index().begin(), a->output_shape_index().end(),
          b->output_shape_index().begin(), b->output_shape_index().end());
    };
    std::stable_sort(entries.begin(), entries.end(), index_less);
    out_.Append(", input_output_alias={ ");
    bool first = true;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i + 1 < entries.size() && !index_less(entries[i], entries[i + 1])) {
        continue;  // a later entry for the same index replaces this one
      }
      const auto& e = *entries[i];
      if (!first) out_.Append(", ");
      first = false;
      AppendShapeIndex(out_, e.output_shape_index());
      out_.Append(": (");
      out_.AppendInt(e.parameter_number());
      out_.Append(", ");
      AppendShapeIndex(out_, e.parameter_shape_index());
      out_.Append(e.kind() == xla::MAY_ALIAS ? ", may-alias)" : ", must-alias)");
    }
    out_.Append(" }");
  }

  // HloBufferDonorConfig::ToShortString: a set ordered by (parameter,
  // index).
  void AppendBufferDonors(const xla::HloBufferDonorProto& donors) {
    if (donors.entries_size() == 0) return;
    std::vector<std::pair<int64_t, std::vector<int64_t>>> v;
    for (const auto& e : donors.entries()) {
      v.emplace_back(e.parameter_number(),
                     std::vector<int64_t>(e.parameter_shape_index().begin(),
                                          e.parameter_shape_index().end()));
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    out_.Append(", buffer_donor={ ");
    for (size_t i = 0; i < v.size(); ++i) {
      if (i != 0) out_.Append(", ");
      out_.Append('(');
      out_.AppendInt(v[i].first);
      out_.Append(", ");
      AppendShapeIndex(out_, v[i].second);
      out_.Append(')');
    }
    out_.Append(" }");
  }

  // ComputationLayout::Print: the host program shape (or, without one, the
  // entry's parameters and root with default layouts, as XLA derives it).
  absl::Status EntryComputationLayout() {
    const xla::HloModuleProto& p = module_.proto();
    const bool compact = extras_ != nullptr && extras_->compact_entry_layout_parameters;
    auto param = [&](int i, const xla::ShapeProto& s) {
      if (i != 0 && compact) {
        out_.Append(',');
      } else if (i != 0) {
        if (i % 5 == 0) {
          out_.Append(", /*index=");
          out_.AppendInt(i);
          out_.Append("*/");
        } else {
          out_.Append(", ");
        }
      }
      return AppendShape(out_, s, /*print_layout=*/true);
    };
    bool ok = true;
    out_.Append('(');
    if (p.has_host_program_shape()) {
      const xla::ProgramShapeProto& ps = p.host_program_shape();
      for (int i = 0; i < ps.parameters_size(); ++i) ok &= param(i, ps.parameters(i));
      out_.Append(")->");
      ok &= AppendShape(out_, ps.result(), /*print_layout=*/true);
    } else {
      const HloComputation* entry = module_.entry();
      int i = 0;
      for (const HloInstruction* in : entry->parameters()) {
        if (in == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              DescribeComputation(*entry), ": parameter ", i, " is missing"));
        }
        ok &= param(i++, WithDefaultLayout(in->shape()));
      }
      out_.Append(")->");
      ok &= AppendShape(out_, WithDefaultLayout(entry->root()->shape()),
                        /*print_layout=*/true);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "module \"", p.name(),
          "\": entry computation layout: an element type XLA does not know"));
    }
    return absl::OkStatus();
  }

  static xla::ShapeProto WithDefaultLayout(xla::ShapeProto s) {
    if (s.element_type() == xla::TUPLE) {
      for (xla::ShapeProto& e : *s.mutable_tuple_shapes()) {
        e = WithDefaultLayout(std::move(e));
      }
      return s;
    }
    if (LowercaseTypeName(s.element_type()).empty() ||
        s.element_type() == xla::TOKEN || s.element_type() == xla::OPAQUE_TYPE) {
      return s;
    }
    xla::LayoutProto* layout = s.mutable_layout();
    layout->Clear();
    for (int i = s.dimensions_size(); i-- > 0;) layout->add_minor_to_major(i);
    return s;
  }

  // --- Orders -------------------------------------------------------------------

  void FindAsyncComputations() {
    for (const HloComputation* c : module_.computations()) {
      for (const HloInstruction* in : c->instructions()) {
        if (in->opcode() == HloOpcode::kAsyncStart) {
          for (const HloComputation* callee : in->called_computations()) {
            if (SingleInstruction(*callee)) skipped_async_.insert(callee);
          }
        }
      }
    }
  }

  // HloModule::MakeComputationPostOrder(dfs_postorder=true) over the
  // computations sorted by id: each computation no instruction calls,
  // after the computations it calls (depth first, in instruction order).
  std::vector<const HloComputation*> ComputationOrder() {
    std::vector<const HloComputation*> sorted(module_.computations().begin(),
                                              module_.computations().end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const HloComputation* a, const HloComputation* b) {
                       return a->id() < b->id();
                     });
    absl::flat_hash_set<const HloComputation*> called;
    for (const HloComputation* c : sorted) {
      for (const HloInstruction* in : c->instructions()) {
        for (const HloComputation* callee : in->called_computations()) {
          called.insert(callee);
        }
      }
    }
    absl::flat_hash_map<const HloComputation*, std::vector<const HloInstruction*>>
        instructions_by_id;
    auto instructions_of = [&](const HloComputation* c)
        -> const std::vector<const HloInstruction*>& {
      auto it = instructions_by_id.find(c);
      if (it == instructions_by_id.end()) {
        it = instructions_by_id
                 .emplace(c, SortedById(*c,
                                        [](const HloInstruction& in) {
                                          return !in.called_computations().empty();
                                        }))
                 .first;
      }
      return it->second;
    };
    std::vector<const HloComputation*> order;
    absl::flat_hash_set<const HloComputation*> added;
    struct Frame {
      const HloComputation* computation;
      size_t instruction = 0;
      size_t callee = 0;
    };
    for (const HloComputation* root : sorted) {
      if (called.contains(root)) continue;
      // MakeEmbeddedComputationsList: a depth-first post-order of what
      // `root` calls.
      absl::flat_hash_set<const HloComputation*> visited;
      std::vector<Frame> stack{{root}};
      while (!stack.empty()) {
        Frame& f = stack.back();
        const std::vector<const HloInstruction*>& list = instructions_of(f.computation);
        if (f.instruction == list.size()) {
          const HloComputation* done = f.computation;
          stack.pop_back();
          if (done != root && added.insert(done).second) order.push_back(done);
          continue;
        }
        auto callees = list[f.instruction]->called_computations();
        if (f.callee == callees.size()) {
          ++f.instruction;
          f.callee = 0;
          continue;
        }
        const HloComputation* next = callees[f.callee++];
        if (visited.insert(next).second) stack.push_back({next});
      }
      if (added.insert(root).second) order.push_back(root);
    }
    // Computations only reachable through a cycle of calls (which XLA
    // refuses to load) still print, in id order.
    for (const HloComputation* c : sorted) {
      if (added.insert(c).second) order.push_back(c);
    }
    return order;
  }

  // HloComputation::ComputeChannelDependencies: each collective with a
  // channel id waits for the earlier ones (in id order) of its channel.
  // None when the module's device assignment has one computation.
  absl::flat_hash_map<const HloInstruction*, std::vector<const HloInstruction*>>
  ChannelDependencies(const HloComputation& c) {
    absl::flat_hash_map<const HloInstruction*, std::vector<const HloInstruction*>> deps;
    const xla::HloModuleProto& p = module_.proto();
    if (p.has_device_assignment() &&
        p.device_assignment().computation_count() == 1) {
      return deps;
    }
    const std::vector<const HloInstruction*> collectives =
        SortedById(c, [](const HloInstruction& in) {
          return IsChannelCollective(in.opcode()) && in.channel_id().has_value();
        });
    absl::flat_hash_map<int64_t, std::vector<const HloInstruction*>> groups;
    for (const HloInstruction* in : collectives) {
      std::vector<const HloInstruction*>& group = groups[*in->channel_id()];
      if (!group.empty()) deps[in] = group;
      group.push_back(in);
    }
    return deps;
  }

  // HloComputation::ForEachInstructionPostOrder: from each instruction
  // without users (in id order), depth first: control predecessors (the
  // last first), then operands (the first first), then the instruction.
  std::vector<const HloInstruction*> PostOrder(const HloComputation& c) {
    const std::vector<const HloInstruction*> roots = SortedById(
        c, [](const HloInstruction& in) { return in.users().empty(); });
    const auto deps = ChannelDependencies(c);
    enum : uint8_t { kNew, kVisiting, kVisited };
    std::vector<uint8_t> state(static_cast<size_t>(c.instruction_count()), kNew);
    auto st = [&](const HloInstruction* in) -> uint8_t& {
      return state[static_cast<size_t>(in->index())];
    };
    std::vector<const HloInstruction*> order;
    order.reserve(static_cast<size_t>(c.instruction_count()));
    std::vector<const HloInstruction*> stack;
    for (const HloInstruction* root : roots) {
      if (st(root) == kVisited) continue;
      stack.push_back(root);
      while (!stack.empty()) {
        const HloInstruction* cur = stack.back();
        if (st(cur) != kNew) {
          stack.pop_back();
          if (st(cur) != kVisited) {
            st(cur) = kVisited;
            order.push_back(cur);
          }
          continue;
        }
        st(cur) = kVisiting;
        auto push = [&](const HloInstruction* in) {
          if (st(in) != kVisited) stack.push_back(in);
        };
        if (cur != root && !deps.empty()) {
          if (auto it = deps.find(cur); it != deps.end()) {
            for (const HloInstruction* d : it->second) push(d);
          }
        }
        auto operands = cur->operands();
        for (size_t i = operands.size(); i-- > 0;) push(operands[i]);
        for (const HloInstruction* p : cur->control_predecessors()) push(p);
      }
    }
    return order;
  }

  // The schedule's sequence for `c`, when the module has one; errors for a
  // sequence that is not a permutation of the computation's instructions.
  absl::StatusOr<std::vector<const HloInstruction*>> InstructionOrder(
      const HloComputation& c) {
    const xla::HloModuleProto& p = module_.proto();
    if (p.has_schedule()) {
      auto it = p.schedule().sequences().find(c.id());
      if (it != p.schedule().sequences().end()) {
        std::vector<const HloInstruction*> order;
        std::vector<bool> seen(static_cast<size_t>(c.instruction_count()), false);
        for (int64_t id : it->second.instruction_ids()) {
          const HloInstruction* in = c.FindInstruction(id);
          if (in == nullptr) {
            return absl::InvalidArgumentError(absl::StrCat(
                DescribeComputation(c), ": schedule: id ", id,
                " is not an instruction of this computation"));
          }
          if (seen[static_cast<size_t>(in->index())]) {
            return absl::InvalidArgumentError(absl::StrCat(
                DescribeComputation(c), ": schedule: instruction \"", in->name(),
                "\" is scheduled twice"));
          }
          seen[static_cast<size_t>(in->index())] = true;
          order.push_back(in);
        }
        if (static_cast<int64_t>(order.size()) != c.instruction_count()) {
          for (const HloInstruction* in : c.instructions()) {
            if (!seen[static_cast<size_t>(in->index())]) {
              return absl::InvalidArgumentError(absl::StrCat(
                  DescribeComputation(c), ": schedule: instruction \"",
                  in->name(), "\" is not scheduled"));
            }
          }
        }
        return order;
      }
    }
    return PostOrder(c);
  }

  // --- Computations ------------------------------------------------------------

  absl::Status PrintComputation(const HloComputation& c) {
    absl::StatusOr<std::vector<const HloInstruction*>> order = InstructionOrder(c);
    if (!order.ok()) return order.status();
    if (style_.operand_shapes) {
      shape_spans_.assign(static_cast<size_t>(c.instruction_count()), ShapeSpan{});
      shape_arena_.str().clear();
    }
    if (c.IsEntry()) out_.Append("ENTRY ");
    Name(c.name());
    out_.Append(' ');
    if (style_.program_shape) {
      out_.Append('(');
      int64_t number = 0;
      for (const HloInstruction* in : c.parameters()) {
        if (in == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              DescribeComputation(c), ": parameter ", number, " is missing"));
        }
        if (number++ != 0) out_.Append(", ");
        out_.Append(in->name());
        out_.Append(": ");
        if (!AppendShape(out_, in->shape(), /*print_layout=*/false)) {
          return BadShape(*in, "shape");
        }
      }
      out_.Append(") -> ");
      if (!AppendShape(out_, c.root()->shape(), /*print_layout=*/false)) {
        return BadShape(*c.root(), "shape");
      }
      out_.Append(' ');
    }
    out_.Append("{\n");
    for (const HloInstruction* in : *order) {
      out_.Append("  ");
      if (in == c.root()) out_.Append("ROOT ");
      if (absl::Status s = PrintInstruction(*in); !s.ok()) return s;
      out_.Append('\n');
      if (!out_.MaybeFlush()) return absl::OkStatus();
    }
    out_.Append('}');
    const std::string& thread = c.proto().execution_thread();
    if (!thread.empty() && thread != "main") {
      out_.Append(", execution_thread=\"");
      out_.Append(thread);
      out_.Append('"');
    }
    if (name_after_brace_ && c.instruction_count() > 5) {
      out_.Append(" // ");
      out_.Append(c.name());
    }
    return absl::OkStatus();
  }

  // --- Instructions --------------------------------------------------------------

  // The computation an async op wraps: its own called computation, else
  // that of the async-start its chain begins with.
  static const HloComputation* AsyncWrapped(const HloInstruction& in) {
    const HloInstruction* cur = &in;
    for (int guard = 0; cur != nullptr && guard < 1 << 20; ++guard) {
      if (!cur->called_computations().empty()) return cur->called_computations()[0];
      if (cur->operand_count() == 0 || !IsAsync(cur->operand(0)->opcode())) break;
      cur = cur->operand(0);
    }
    return nullptr;
  }

  // The wrapped computation when the async syntax sugar applies.
  const HloComputation* SugaredAsync(const HloInstruction& in) {
    if (!IsAsync(in.opcode())) return nullptr;
    const HloComputation* w = AsyncWrapped(in);
    return w != nullptr && SingleInstruction(*w) ? w : nullptr;
  }

  absl::Status PrintInstruction(const HloInstruction& in) {
    Name(in.name());
    out_.Append(" = ");
    if (!AppendInstructionShape(in)) return BadShape(in, "shape");
    out_.Append(' ');
    const HloComputation* sugared = SugaredAsync(in);
    std::string_view legacy_direction;
    if (sugared != nullptr) {
      out_.Append(sugared->root()->opcode_string());
      out_.Append(in.opcode() == HloOpcode::kAsyncStart    ? "-start"
                  : in.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                           : "-done");
    } else if (in.opcode() == HloOpcode::kUnknown &&
               !(legacy_direction = LegacyCompareDirection(in.opcode_string()))
                    .empty()) {
      out_.Append("compare");
    } else {
      out_.Append(in.opcode_string());
    }
    out_.Append('(');
    if (absl::Status s = Operands(in); !s.ok()) return s;
    out_.Append(')');
    if (!legacy_direction.empty()) {
      out_.Append(", direction=");
      out_.Append(legacy_direction);
    }
    if (absl::Status s = ExtraAttributes(in); !s.ok()) return s;
    const xla::HloInstructionProto& p = in.proto();
    if (p.has_original_value()) Origin(p);
    if (style_.metadata && p.has_metadata() &&
        HasPrintableMetadata(p.metadata())) {
      out_.Append(", metadata={");
      AppendOpMetadata(out_, p.metadata());
      out_.Append('}');
    }
    if (!p.backend_config().empty()) {
      out_.Append(", backend_config=");
      if (LexesAsJsonDict(p.backend_config())) {
        out_.Append(p.backend_config());
      } else {
        out_.Append('"');
        AppendCEscaped(out_, p.backend_config());
        out_.Append('"');
      }
    }
    return absl::OkStatus();
  }

  absl::Status Operands(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    if (in.opcode() == HloOpcode::kParameter) {
      out_.AppendInt(p.parameter_number());
      return absl::OkStatus();
    }
    if (in.opcode() == HloOpcode::kConstant) return Constant(in);
    auto operands = in.operands();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i != 0) {
        if (style_.index_interval != 0 && i % style_.index_interval == 0) {
          out_.Append(", /*index=");
          out_.AppendInt(static_cast<int64_t>(i));
          out_.Append("*/");
        } else {
          out_.Append(", ");
        }
      }
      if (style_.operand_shapes) {
        if (!AppendInstructionShape(*operands[i])) {
          return BadShape(*operands[i], "shape");
        }
        out_.Append(' ');
      }
      Name(operands[i]->name());
    }
    return absl::OkStatus();
  }

  // HloConstantInstruction::PrintOperandsWithCanonicalNameMap.
  absl::Status Constant(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    if (!p.has_literal() || IsElidedLiteral(p.literal())) {
      out_.Append("{...}");
      return absl::OkStatus();
    }
    const int type = in.shape().element_type();
    const bool small = type != xla::TUPLE && type != xla::TOKEN &&
                       type != xla::OPAQUE_TYPE &&
                       CountUpTo(in.shape(), 10) <= 10;
    if (!small && !style_.large_constants) {
      out_.Append("{...}");
      return absl::OkStatus();
    }
    absl::Status s = AppendLiteral(out_, p.literal(), /*with_shape=*/false);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeInstruction(in), ": literal: ", s.message()));
    }
    return absl::OkStatus();
  }

  void Next() { out_.Append(", "); }

  // XLA's CreateFromProto resizes operand_precision to `operands` entries
  // (padding with DEFAULT, dropping extras) before anything prints it.
  void PrecisionConfig(const xla::PrecisionConfig& pc, int64_t operands) {
    const int given = pc.operand_precision_size();
    const int n = static_cast<int>(std::clamp<int64_t>(operands, 0, 1 << 20));
    bool any = false;
    for (int i = 0; i < std::min(given, n); ++i) {
      if (pc.operand_precision(i) != xla::PrecisionConfig::DEFAULT) any = true;
    }
    if (any) {
      Next();
      out_.Append("operand_precision={");
      for (int i = 0; i < n; ++i) {
        if (i != 0) out_.Append(',');
        const int v = i < given ? pc.operand_precision(i)
                                : static_cast<int>(xla::PrecisionConfig::DEFAULT);
        out_.Append(Lower(xla::PrecisionConfig::Precision_Name(
            static_cast<xla::PrecisionConfig::Precision>(v))));
      }
      out_.Append('}');
    }
    if (pc.algorithm() != xla::PrecisionConfig::ALG_UNSET) {
      Next();
      out_.Append("algorithm=");
      std::string name = xla::PrecisionConfig::Algorithm_Name(pc.algorithm());
      if (name.rfind("ALG_", 0) == 0) name = name.substr(4);
      out_.Append(Lower(std::move(name)));
    }
  }

  // `origin={...}`, in every style, before metadata: what the value was
  // before XLA's passes, `[synthetic_call]`, or the instruction's shape
  // walked, tuples as `(a, b)` and each leaf `{"name"}`, `{"name" {1,0}}`
  // or `{}` when the value has no element there.
  void Origin(const xla::HloInstructionProto& p) {
    const xla::OriginalValueProto& v = p.original_value();
    out_.Append(", origin={");
    if (v.is_synthetic_call()) {
      out_.Append("[synthetic_call]");
    } else {
      std::vector<int64_t> index;
      OriginLeaves(v, p.shape(), index);
    }
    out_.Append('}');
  }
  void OriginLeaves(const xla::OriginalValueProto& v, const xla::ShapeProto& shape,
                    std::vector<int64_t>& index) {
    if (shape.element_type() == xla::TUPLE) {
      out_.Append('(');
      for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
        if (i != 0) out_.Append(", ");
        index.push_back(i);
        OriginLeaves(v, shape.tuple_shapes(i), index);
        index.pop_back();
      }
      out_.Append(')');
      return;
    }
    for (const xla::OriginalValueElementProto& e : v.elements()) {
      // XLA writes an element for every node, an empty leaf without an
      // array: `{}`, as no element at all.
      if (!e.has_original_array() ||
          !std::equal(e.shape_index().begin(), e.shape_index().end(), index.begin(),
                      index.end())) {
        continue;
      }
      out_.Append("{\"");
      out_.Append(e.original_array().instruction_name());  // as XLA: not escaped
      out_.Append('"');
      if (e.original_array().shape_index_size() != 0) {
        out_.Append(' ');
        AppendShapeIndex(out_, e.original_array().shape_index());
      }
      out_.Append('}');
      return;
    }
    out_.Append("{}");
  }

  // The in-place collective-permute (input, output, input and output start
  // indices): `slice_sizes={{..},{..}}`, one list per slice, which the
  // proto flattens into dynamic_slice_sizes. XLA's reading back: a list of
  // the input's rank per start-index tuple (or one, when the start indices
  // are one tuple of scalars); for a tuple input, per element, as many
  // lists as its start indices hold, each of that element's rank. Sizes
  // that do not divide so print as one list.
  void CollectivePermuteSliceSizes(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    if (p.dynamic_slice_sizes_size() == 0) return;
    std::vector<int64_t> ranks;  // of each list, in order
    if (in.operands().size() == 4) {
      const xla::ShapeProto& input = in.operand(0)->shape();
      const xla::ShapeProto& starts = in.operand(2)->shape();
      auto count = [](const xla::ShapeProto& s) -> int64_t {
        return s.element_type() == xla::TUPLE ? s.tuple_shapes_size() : 1;
      };
      auto nested = [](const xla::ShapeProto& s) {
        return s.element_type() == xla::TUPLE && s.tuple_shapes_size() > 0 &&
               s.tuple_shapes(0).element_type() == xla::TUPLE;
      };
      if (input.element_type() == xla::TUPLE) {
        const bool per_element = nested(starts) && starts.tuple_shapes(0).tuple_shapes_size() > 0 &&
                                 starts.tuple_shapes(0).tuple_shapes(0).element_type() != xla::TUPLE;
        for (int i = 0; i < input.tuple_shapes_size(); ++i) {
          const int64_t lists = per_element ? 1
                                : i < starts.tuple_shapes_size() ? count(starts.tuple_shapes(i))
                                                                 : 0;
          for (int64_t k = 0; k < lists; ++k) ranks.push_back(input.tuple_shapes(i).dimensions_size());
        }
      } else {
        const int64_t lists = nested(starts) ? count(starts) : 1;
        for (int64_t k = 0; k < lists; ++k) ranks.push_back(input.dimensions_size());
      }
    }
    int64_t total = 0;
    for (int64_t r : ranks) total += r;
    if (ranks.empty() || total != p.dynamic_slice_sizes_size()) {
      ranks = {p.dynamic_slice_sizes_size()};
    }
    Next();
    out_.Append("slice_sizes={");
    int at = 0;
    for (size_t l = 0; l < ranks.size(); ++l) {
      if (l != 0) out_.Append(',');
      out_.Append('{');
      for (int64_t k = 0; k < ranks[l]; ++k, ++at) {
        if (k != 0) out_.Append(',');
        out_.AppendInt(p.dynamic_slice_sizes(at));
      }
      out_.Append('}');
    }
    out_.Append('}');
  }

  void OutputOperandAliasing(const xla::HloInstructionProto& p) {
    if (p.output_operand_aliasing_size() == 0) return;
    Next();
    out_.Append("output_to_operand_aliasing={");
    for (int i = 0; i < p.output_operand_aliasing_size(); ++i) {
      const auto& a = p.output_operand_aliasing(i);
      if (i != 0) out_.Append(", ");
      AppendShapeIndex(out_, a.output_shape_index());
      out_.Append(": (");
      out_.AppendInt(a.operand_index());
      out_.Append(", ");
      AppendShapeIndex(out_, a.operand_shape_index());
      out_.Append(')');
    }
    out_.Append('}');
  }

  void Dimensions(const xla::HloInstructionProto& p) {
    Next();
    out_.Append("dimensions=");
    AppendIntList(out_, p.dimensions());
  }

  void Window(const xla::HloInstructionProto& p) {
    if (p.window().dimensions_size() == 0) return;
    Next();
    out_.Append("window={");
    AppendWindow(out_, p.window());
    out_.Append('}');
  }

  void ChannelId(const HloInstruction& in) {
    if (std::optional<int64_t> c = in.channel_id()) {
      Next();
      out_.Append("channel_id=");
      out_.AppendInt(*c);
    }
  }

  // HloCollectiveInstruction::PrintExtraAttributesImpl.
  void Collective(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    ChannelId(in);
    Next();
    out_.Append("replica_groups=");
    AppendReplicaGroups(out_, p);
    if (p.constrain_layout()) {
      Next();
      out_.Append("constrain_layout=true");
    }
  }

  void UseGlobalDeviceIds(const xla::HloInstructionProto& p) {
    if (p.use_global_device_ids()) {
      Next();
      out_.Append("use_global_device_ids=true");
    }
  }

  void NamedComputation(std::string_view attribute, const HloComputation* c) {
    if (c == nullptr) return;
    Next();
    out_.Append(attribute);
    out_.Append('=');
    Name(c->name());
  }

  void ComputationList(std::string_view attribute,
                       std::span<const HloComputation* const> list,
                       bool braces) {
    Next();
    out_.Append(attribute);
    out_.Append(braces ? "={" : "=");
    for (size_t i = 0; i < list.size(); ++i) {
      if (i != 0) out_.Append(", ");
      Name(list[i]->name());
    }
    if (braces) out_.Append('}');
  }

  // The opcode's own attributes (PrintExtraAttributesImpl), then the
  // called computations, sharding, frontend attributes, control
  // predecessors, statistics and result accuracy
  // (HloInstruction::PrintExtraAttributes).
  absl::Status ExtraAttributes(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    const HloOpcode op = in.opcode();
    switch (op) {
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormGrad:
        Next();
        out_.Append("epsilon=");
        AppendSixDigits(out_, p.epsilon());
        Next();
        out_.Append("feature_index=");
        out_.AppendInt(p.feature_index());
        break;
      case HloOpcode::kFft:
        Next();
        out_.Append("fft_type=");
        out_.Append(xla::FftType_Name(p.fft_type()));
        Next();
        out_.Append("fft_length=");
        AppendIntList(out_, p.fft_length());
        break;
      case HloOpcode::kAsyncStart: {
        const std::string& thread = p.async_execution_thread();
        if (!thread.empty() && thread != "main") {
          Next();
          out_.Append("async_execution_thread=\"");
          out_.Append(thread);
          out_.Append('"');
        }
        // The aliasing of an async-start's outputs to its operands (XLA's
        // callable instructions hold it as fusion does).
        OutputOperandAliasing(p);
        // The wrapped instruction's attributes (an async op wrapping an
        // async op is followed kMaxAsyncNesting deep, enough for any
        // module XLA loads; a cycle of them is not).
        const HloComputation* w = SugaredAsync(in);
        if (w != nullptr && async_depth_ < kMaxAsyncNesting) {
          ++async_depth_;
          absl::Status s = ExtraAttributes(*w->root());
          --async_depth_;
          if (!s.ok()) return s;
        }
        break;
      }
      case HloOpcode::kCopyStart:
        if (p.has_cross_program_prefetch_index()) {
          Next();
          out_.Append("cross_program_prefetch_index=");
          out_.AppendInt(p.cross_program_prefetch_index());
        } else if (p.is_cross_program_prefetch()) {
          Next();
          out_.Append("is_cross_program_prefetch=true");
        }
        break;
      case HloOpcode::kCompare: {
        Next();
        out_.Append("direction=");
        out_.Append(p.comparison_direction());
        if (!p.comparison_type().empty() && in.operand_count() > 0) {
          std::optional<ComparisonType> t = ComparisonTypeFromString(p.comparison_type());
          if (!t.has_value() ||
              *t != DefaultComparisonType(in.operand(0)->shape().element_type())) {
            Next();
            out_.Append("type=");
            out_.Append(p.comparison_type());
          }
        }
        break;
      }
      case HloOpcode::kTriangularSolve: {
        const xla::TriangularSolveOptions& o = p.triangular_solve_options();
        if (o.left_side()) { Next(); out_.Append("left_side=true"); }
        if (o.lower()) { Next(); out_.Append("lower=true"); }
        if (o.unit_diagonal()) { Next(); out_.Append("unit_diagonal=true"); }
        if (o.transpose_a() != 0) {
          Next();
          out_.Append("transpose_a=");
          out_.Append(xla::TriangularSolveOptions::Transpose_Name(o.transpose_a()));
        }
        break;
      }
      case HloOpcode::kCholesky:
        if (p.cholesky_options().lower()) {
          Next();
          out_.Append("lower=true");
        }
        break;
      case HloOpcode::kSend:
      case HloOpcode::kRecv:
      case HloOpcode::kSendDone:
      case HloOpcode::kRecvDone: {
        // XLA builds send-done and recv-done from their send or recv: the
        // channel is that op's.
        const HloInstruction* channel = &in;
        if ((op == HloOpcode::kSendDone || op == HloOpcode::kRecvDone) &&
            in.operand_count() > 0 &&
            (in.operand(0)->opcode() == HloOpcode::kSend ||
             in.operand(0)->opcode() == HloOpcode::kRecv)) {
          channel = in.operand(0);
        }
        ChannelId(*channel);
        if (p.is_host_transfer()) {
          Next();
          out_.Append("is_host_transfer=true");
        }
        break;
      }
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
        Collective(in);
        Dimensions(p);
        UseGlobalDeviceIds(p);
        break;
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
        Collective(in);
        UseGlobalDeviceIds(p);
        break;
      case HloOpcode::kReduceScatter:
        Collective(in);
        UseGlobalDeviceIds(p);
        Dimensions(p);
        break;
      case HloOpcode::kAllToAll:
        Collective(in);
        if (p.dimensions_size() > 0) {
          Next();
          out_.Append("dimensions={");
          out_.AppendInt(p.dimensions(0));
          out_.Append('}');
        }
        break;
      case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kRaggedAllToAll:
        Collective(in);
        break;
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteStart:
        ChannelId(in);
        Next();
        out_.Append("source_target_pairs={");
        for (int i = 0; i < p.source_target_pairs_size(); ++i) {
          if (i != 0) out_.Append(',');
          out_.Append('{');
          out_.AppendInt(p.source_target_pairs(i).source());
          out_.Append(',');
          out_.AppendInt(p.source_target_pairs(i).target());
          out_.Append('}');
        }
        out_.Append('}');
        CollectivePermuteSliceSizes(in);
        break;
      case HloOpcode::kReverse:
      case HloOpcode::kConcatenate:
      case HloOpcode::kReduce:
      case HloOpcode::kTranspose:
      case HloOpcode::kBroadcast:
        Dimensions(p);
        break;
      case HloOpcode::kSort:
        Dimensions(p);
        if (p.is_stable()) {
          Next();
          out_.Append("is_stable=true");
        }
        break;
      case HloOpcode::kReshape:
        if (p.dimensions_size() > 0) {
          Next();
          out_.Append("inferred_dimension=");
          out_.AppendInt(p.dimensions(0));
        }
        break;
      case HloOpcode::kMap: {
        // XLA maps over every dimension, whatever the proto says.
        Next();
        out_.Append("dimensions={");
        const int rank = in.shape().element_type() == xla::TUPLE
                             ? 0
                             : in.shape().dimensions_size();
        for (int i = 0; i < rank; ++i) {
          if (i != 0) out_.Append(',');
          out_.AppendInt(i);
        }
        out_.Append('}');
        break;
      }
      case HloOpcode::kSlice: {
        Next();
        const bool strides = std::any_of(
            p.slice_dimensions().begin(), p.slice_dimensions().end(),
            [](const auto& d) { return d.stride() != 1; });
        out_.Append("slice={");
        for (int i = 0; i < p.slice_dimensions_size(); ++i) {
          const auto& d = p.slice_dimensions(i);
          if (i != 0) out_.Append(", ");
          out_.Append('[');
          out_.AppendInt(d.start());
          out_.Append(':');
          out_.AppendInt(d.limit());
          if (strides) {
            out_.Append(':');
            out_.AppendInt(d.stride());
          }
          out_.Append(']');
        }
        out_.Append('}');
        break;
      }
      case HloOpcode::kFusion:
        Next();
        out_.Append("kind=");
        out_.Append(p.fusion_kind());
        OutputOperandAliasing(p);
        break;
      case HloOpcode::kRng:
        Next();
        out_.Append("distribution=");
        out_.Append(Lower(xla::RandomDistribution_Name(p.distribution())));
        break;
      case HloOpcode::kParameter:
        if (p.has_parameter_replication()) {
          Next();
          out_.Append("parameter_replication={");
          const auto& r = p.parameter_replication().replicated_at_leaf_buffers();
          for (int i = 0; i < r.size(); ++i) {
            if (i != 0) out_.Append(',');
            out_.Append(r.Get(i) ? "true" : "false");
          }
          out_.Append('}');
        }
        break;
      case HloOpcode::kGetTupleElement:
        Next();
        out_.Append("index=");
        out_.AppendInt(p.tuple_index());
        break;
      case HloOpcode::kReducePrecision:
        Next();
        out_.Append("exponent_bits=");
        out_.AppendInt(p.exponent_bits());
        Next();
        out_.Append("mantissa_bits=");
        out_.AppendInt(p.mantissa_bits());
        break;
      case HloOpcode::kInfeed:
        if (!p.infeed_config().empty()) {
          Next();
          out_.Append("infeed_config=\"");
          AppendCEscaped(out_, p.infeed_config());
          out_.Append('"');
        }
        break;
      case HloOpcode::kOutfeed:
        Next();
        out_.Append("outfeed_shape=");
        if (!AppendShape(out_, p.outfeed_shape(), /*print_layout=*/true)) {
          return BadShape(in, "outfeed_shape");
        }
        if (!p.outfeed_config().empty()) {
          Next();
          out_.Append("outfeed_config=\"");
          AppendCEscaped(out_, p.outfeed_config());
          out_.Append('"');
        }
        break;
      case HloOpcode::kConvolution:
        Window(p);
        Next();
        out_.Append("dim_labels=");
        AppendConvolutionDimensionNumbers(out_, p.convolution_dimension_numbers());
        if (in.feature_group_count() != 1) {
          Next();
          out_.Append("feature_group_count=");
          out_.AppendInt(in.feature_group_count());
        }
        if (in.batch_group_count() != 1) {
          Next();
          out_.Append("batch_group_count=");
          out_.AppendInt(in.batch_group_count());
        }
        PrecisionConfig(p.precision_config(), in.operand_count());
        break;
      case HloOpcode::kReduceWindow:
      case HloOpcode::kSelectAndScatter:
        Window(p);
        break;
      case HloOpcode::kCustomCall:
        if (absl::Status s = CustomCall(in); !s.ok()) return s;
        break;
      case HloOpcode::kPad:
        Next();
        out_.Append("padding=");
        AppendPaddingConfig(out_, p.padding_config());
        break;
      case HloOpcode::kDynamicSlice:
        Next();
        out_.Append("dynamic_slice_sizes=");
        AppendIntList(out_, p.dynamic_slice_sizes());
        break;
      case HloOpcode::kGather: {
        const xla::GatherDimensionNumbers& d = p.gather_dimension_numbers();
        Next();
        out_.Append("offset_dims=");
        AppendIntList(out_, d.offset_dims());
        out_.Append(", collapsed_slice_dims=");
        AppendIntList(out_, d.collapsed_slice_dims());
        out_.Append(", start_index_map=");
        AppendIntList(out_, d.start_index_map());
        if (d.operand_batching_dims_size() > 0) {
          out_.Append(", operand_batching_dims=");
          AppendIntList(out_, d.operand_batching_dims());
        }
        if (d.start_indices_batching_dims_size() > 0) {
          out_.Append(", start_indices_batching_dims=");
          AppendIntList(out_, d.start_indices_batching_dims());
        }
        out_.Append(", index_vector_dim=");
        out_.AppendInt(d.index_vector_dim());
        Next();
        out_.Append("slice_sizes=");
        AppendIntList(out_, p.gather_slice_sizes());
        if (p.indices_are_sorted()) {
          Next();
          out_.Append("indices_are_sorted=true");
        }
        break;
      }
      case HloOpcode::kScatter: {
        const xla::ScatterDimensionNumbers& d = p.scatter_dimension_numbers();
        Next();
        out_.Append("update_window_dims=");
        AppendIntList(out_, d.update_window_dims());
        out_.Append(", inserted_window_dims=");
        AppendIntList(out_, d.inserted_window_dims());
        out_.Append(", scatter_dims_to_operand_dims=");
        AppendIntList(out_, d.scatter_dims_to_operand_dims());
        if (d.input_batching_dims_size() > 0) {
          out_.Append(", input_batching_dims=");
          AppendIntList(out_, d.input_batching_dims());
        }
        if (d.scatter_indices_batching_dims_size() > 0) {
          out_.Append(", scatter_indices_batching_dims=");
          AppendIntList(out_, d.scatter_indices_batching_dims());
        }
        out_.Append(", index_vector_dim=");
        out_.AppendInt(d.index_vector_dim());
        if (p.indices_are_sorted()) {
          Next();
          out_.Append("indices_are_sorted=true");
        }
        if (p.unique_indices()) {
          Next();
          out_.Append("unique_indices=true");
        }
        break;
      }
      case HloOpcode::kIota:
        Next();
        out_.Append("iota_dimension=");
        out_.AppendInt(in.iota_dimension());
        break;
      case HloOpcode::kDot:
        Next();
        AppendDotDimensionNumbers(out_, p.dot_dimension_numbers());
        PrecisionConfig(p.precision_config(), in.operand_count());
        if (p.dot_sparsity_size() > 0) {
          Next();
          out_.Append("sparsity=");
          for (int i = 0; i < p.dot_sparsity_size(); ++i) {
            const xla::SparsityDescriptor& d = p.dot_sparsity(i);
            if (i != 0) out_.Append('_');
            out_.Append(d.index() == 0 ? "L." : "R.");
            out_.AppendInt(d.dimension());
            out_.Append('@');
            out_.AppendInt(d.n());
            out_.Append(':');
            out_.AppendInt(d.m());
          }
        }
        break;
      case HloOpcode::kScaledDot:
        // lhs, rhs, lhs_scale, rhs_scale: only lhs and rhs carry precisions.
        Next();
        AppendDotDimensionNumbers(out_, p.dot_dimension_numbers());
        PrecisionConfig(p.precision_config(), 2);
        break;
      case HloOpcode::kRaggedDot: {
        const xla::RaggedDotDimensionNumbers& r = p.ragged_dot_dimension_numbers();
        Next();
        AppendDotDimensionNumbers(out_, r.dot_dimension_numbers());
        if (r.lhs_ragged_dimensions_size() > 0) {
          out_.Append(", lhs_ragged_dims=");
          AppendIntList(out_, r.lhs_ragged_dimensions());
        }
        if (r.rhs_group_dimensions_size() > 0) {
          out_.Append(", rhs_group_dims=");
          AppendIntList(out_, r.rhs_group_dimensions());
        }
        PrecisionConfig(p.precision_config(), 2);
        break;
      }
      case HloOpcode::kDomain:
        // The user side (the exit sharding) prints as entry, the operand
        // side (the entry sharding) as exit: XLA's ShardingMetadata order.
        Next();
        out_.Append("domain={kind=\"sharding\", entry=");
        if (p.has_domain_exit_sharding()) {
          AppendSharding(out_, p.domain_exit_sharding(), false);
        } else {
          out_.Append("{}");
        }
        out_.Append(", exit=");
        if (p.has_domain_entry_sharding()) {
          AppendSharding(out_, p.domain_entry_sharding(), false);
        } else {
          out_.Append("{}");
        }
        out_.Append('}');
        break;
      case HloOpcode::kGetDimensionSize:
      case HloOpcode::kSetDimensionSize:
        Next();
        out_.Append("dimensions={");
        out_.AppendInt(p.dimensions_size() > 0 ? p.dimensions(0) : 0);
        out_.Append('}');
        break;
      case HloOpcode::kRngGetAndUpdateState:
        Next();
        out_.Append("delta=");
        out_.AppendInt(p.delta());
        break;
      case HloOpcode::kRngBitGenerator:
        Next();
        out_.Append("algorithm=");
        out_.Append(Lower(xla::RandomAlgorithm_Name(p.rng_algorithm())));
        break;
      case HloOpcode::kTopK:
        Next();
        out_.Append("k=");
        out_.AppendInt(p.k());
        Next();
        out_.Append(p.largest() ? "largest=true" : "largest=false");
        break;
      default:
        break;
    }
    CalledComputations(in);
    if (p.has_sharding()) {
      Next();
      out_.Append("sharding=");
      AppendSharding(out_, p.sharding(), style_.metadata);
    }
    if (!p.frontend_attributes().map().empty()) {
      Next();
      out_.Append("frontend_attributes=");
      AppendFrontendAttributes(out_, p.frontend_attributes());
    }
    if (style_.control_predecessors && !in.control_predecessors().empty()) {
      Next();
      out_.Append("control-predecessors={");
      bool first = true;
      for (const HloInstruction* pre : in.control_predecessors()) {
        if (!first) out_.Append(", ");
        first = false;
        Name(pre->name());
      }
      out_.Append('}');
    }
    if (p.statistics_viz().statistics_size() > 0) {
      Next();
      out_.Append("statistics={visualizing_index=");
      out_.AppendInt(p.statistics_viz().stat_index_to_visualize());
      for (const xla::Statistic& s : p.statistics_viz().statistics()) {
        out_.Append(',');
        out_.Append(s.stat_name());
        out_.Append('=');
        AppendSixDigits(out_, s.stat_val());
      }
      out_.Append('}');
    }
    if (p.has_result_accuracy()) {
      const xla::ResultAccuracy& r = p.result_accuracy();
      if (r.has_mode() && r.mode() != xla::ResultAccuracy::DEFAULT) {
        Next();
        out_.Append("result_accuracy={mode=");
        out_.Append(Lower(xla::ResultAccuracy::Mode_Name(r.mode())));
        out_.Append('}');
      } else if (r.has_tolerance()) {
        Next();
        out_.Append("result_accuracy={tolerance={atol=");
        AppendSixDigits(out_, r.tolerance().atol());
        out_.Append(",rtol=");
        AppendSixDigits(out_, r.tolerance().rtol());
        out_.Append(",ulps=");
        out_.AppendInt(r.tolerance().ulps());
        out_.Append("}}");
      }
    }
    return absl::OkStatus();
  }

  // The called computations, as PrintSubcomputationMode::kNameOnly names
  // them.
  void CalledComputations(const HloInstruction& in) {
    auto called = in.called_computations();
    switch (in.opcode()) {
      case HloOpcode::kWhile:
        if (called.size() == 2) {
          NamedComputation("condition", in.while_condition());
          NamedComputation("body", in.while_body());
          return;
        }
        break;
      case HloOpcode::kSelectAndScatter:
        if (called.size() == 2) {
          NamedComputation("select", called[0]);
          NamedComputation("scatter", called[1]);
          return;
        }
        break;
      case HloOpcode::kConditional:
        if (in.operand_count() > 0 &&
            in.operand(0)->shape().element_type() == xla::PRED &&
            called.size() == 2) {
          NamedComputation("true_computation", called[0]);
          NamedComputation("false_computation", called[1]);
        } else {
          ComputationList("branch_computations", called, /*braces=*/true);
        }
        return;
      case HloOpcode::kCall:
      case HloOpcode::kMap:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kReduce:
      case HloOpcode::kAllReduce:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kScatter:
      case HloOpcode::kSort:
      case HloOpcode::kScan:
        if (!called.empty()) NamedComputation("to_apply", called[0]);
        if (in.opcode() == HloOpcode::kCall && in.proto().is_composite()) {
          Next();
          out_.Append("is_composite=true");
        }
        return;
      case HloOpcode::kCustomCall:
        if (!called.empty()) {
          ComputationList("called_computations", called, /*braces=*/true);
        }
        return;
      case HloOpcode::kAsyncStart:
        if (SugaredAsync(in) == nullptr && !called.empty()) {
          NamedComputation("calls", called[0]);
        }
        return;
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kAsyncDone:
        return;
      default:
        break;
    }
    if (!called.empty()) ComputationList("calls", called, /*braces=*/false);
  }

  // HloCustomCallInstruction::PrintExtraAttributesImpl.
  absl::Status CustomCall(const HloInstruction& in) {
    const xla::HloInstructionProto& p = in.proto();
    if (p.has_window()) {
      Next();
      out_.Append("window={");
      AppendWindow(out_, p.window());
      out_.Append('}');
    }
    if (p.has_convolution_dimension_numbers()) {
      Next();
      out_.Append("dim_labels=");
      AppendConvolutionDimensionNumbers(out_, p.convolution_dimension_numbers());
    }
    if (in.feature_group_count() != 1) {
      Next();
      out_.Append("feature_group_count=");
      out_.AppendInt(in.feature_group_count());
    }
    if (in.batch_group_count() != 1) {
      Next();
      out_.Append("batch_group_count=");
      out_.AppendInt(in.batch_group_count());
    }
    PrecisionConfig(p.precision_config(), in.operand_count());
    if (p.padding_type() != xla::PADDING_INVALID) {
      Next();
      out_.Append("padding_type=");
      out_.Append(xla::PaddingType_Name(p.padding_type()));
    }
    Next();
    out_.Append("custom_call_target=\"");
    AppendCEscaped(out_, p.custom_call_target());
    out_.Append('"');
    if (p.constrain_layout()) {
      Next();
      out_.Append("operand_layout_constraints={");
      for (int i = 0; i < p.operand_shapes_with_layout_size(); ++i) {
        if (i != 0) out_.Append(", ");
        if (!AppendShape(out_, p.operand_shapes_with_layout(i), true)) {
          return BadShape(in, "operand_layout_constraints");
        }
      }
      out_.Append('}');
    }
    if (p.custom_call_has_side_effect()) {
      Next();
      out_.Append("custom_call_has_side_effect=true");
    }
    if (p.has_literal()) {
      Next();
      out_.Append("literal=");
      absl::Status s = AppendLiteral(out_, p.literal(), /*with_shape=*/true);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeInstruction(in), ": literal: ", s.message()));
      }
    }
    OutputOperandAliasing(p);
    if (p.custom_call_schedule() != xla::SCHEDULE_NONE) {
      Next();
      out_.Append("schedule=");
      out_.Append(xla::CustomCallSchedule_Name(p.custom_call_schedule()));
    }
    if (p.custom_call_api_version() != xla::API_VERSION_ORIGINAL) {
      Next();
      out_.Append("api_version=");
      out_.Append(xla::CustomCallApiVersion_Name(p.custom_call_api_version()));
    }
    return absl::OkStatus();
  }

  const HloModule& module_;
  const Style style_;
  const HloModuleTextExtras* extras_;
  const bool name_after_brace_;
  TextBuffer& out_;
  absl::flat_hash_set<const HloComputation*> skipped_async_;
  struct ShapeSpan {
    size_t offset = 0;
    size_t size = 0;
  };
  static constexpr int kMaxAsyncNesting = 16;
  int async_depth_ = 0;
  std::vector<ShapeSpan> shape_spans_;
  TextBuffer shape_arena_;
};

}  // namespace

absl::Status PrintHloModule(const HloModule& module,
                            const HloPrintOptions& options,
                            const HloModuleTextExtras* extras,
                            ChunkWriter write, void* sink) {
  TextBuffer out(write, sink);
  ModulePrinter printer(module, options, extras, out);
  absl::Status s = printer.Print();
  if (!s.ok()) return s;
  out.Flush();
  return absl::OkStatus();
}

}  // namespace print_internal

std::string PrintHloModuleToString(const HloModule& module,
                                   const HloPrintOptions& options,
                                   const HloModuleTextExtras* extras) {
  std::string text;
  StringSink sink(&text);
  if (!PrintHloModule(module, options, sink, extras).ok()) return std::string();
  return text;
}

std::string ShapeToText(const xla::ShapeProto& shape, bool print_layout) {
  print_internal::TextBuffer out;
  print_internal::AppendShape(out, shape, print_layout);
  return std::move(out.str());
}

std::string LiteralToText(const xla::LiteralProto& literal,
                          bool print_large_constants) {
  print_internal::TextBuffer out;
  if (IsElidedLiteral(literal)) return "{...}";
  const xla::ShapeProto& s = literal.shape();
  if (!print_large_constants &&
      (s.element_type() == xla::TUPLE || s.element_type() == xla::TOKEN ||
       print_internal::CountUpTo(s, 10) > 10)) {
    return "{...}";
  }
  absl::Status st = print_internal::AppendLiteral(out, literal, false);
  if (!st.ok()) {
    return absl::StrCat("/*malformed literal: ", st.message(), "*/{...}");
  }
  return std::move(out.str());
}

}  // namespace decomposed::hlo
