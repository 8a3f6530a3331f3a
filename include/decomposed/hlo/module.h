// The HLO module model: a read-only, indexed view of an HloModuleProto
// (proto/hlo.proto). The proto stays the one representation of the module;
// the view adds what a reader, the printer, validation and the evaluator
// need: computations and instructions by id and by name, operands and
// users as pointers, called computations, the entry and its parameters
// (number, name, shape, Neuron's `neff_input_names`), the root, and typed
// accessors for the attributes each opcode uses (defaults applied as XLA
// applies them: a feature_group_count of 0 reads as 1, ...).
//
// Building the view (HloModule::Create) checks only what the view needs to
// be safe to walk: each computation's instruction ids are unique, every
// operand, control predecessor and called computation exists, operands come
// before their users in the computation's list (so the operand graph has no
// cycle), the root exists. Everything else XLA's verifier would reject --
// shapes, parameter numbering, the entry's program shape, tuple indices --
// is ValidateModule's (hlo/validate.h). Errors name the computation and the
// instruction: `computation "main.5", instruction "add.3" (id 3): operand 1
// refers to id 9, which is not an instruction of this computation`.
//
// Memory: the view holds one small record per instruction and per
// computation and a name index; the proto's literal data is not copied.
//
// Example:
//   absl::StatusOr<std::unique_ptr<decomposed::hlo::HloModule>> m =
//       decomposed::hlo::HloModule::Create(std::move(proto));
//   if (!m.ok()) return m.status();
//   const decomposed::hlo::HloComputation* entry = (*m)->entry();
//   for (const decomposed::hlo::HloInstruction* p : entry->parameters())
//     std::cout << p->parameter_number() << " " << p->name() << "\n";
//   const decomposed::hlo::HloInstruction* root = entry->root();
//   root->opcode();        // HloOpcode::kTuple
//   root->operand(0)->users();
#ifndef DECOMPOSED_HLO_MODULE_H_
#define DECOMPOSED_HLO_MODULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

class HloComputation;
class HloModule;

// XLA's comparison directions, in the order of the text spellings.
enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
// XLA's comparison types.
enum class ComparisonType : uint8_t { kFloat, kTotalOrder, kSigned, kUnsigned };

std::string_view ComparisonDirectionString(ComparisonDirection d);  // "EQ"
std::optional<ComparisonDirection> ComparisonDirectionFromString(
    std::string_view s);
std::string_view ComparisonTypeString(ComparisonType t);  // "TOTALORDER"
std::optional<ComparisonType> ComparisonTypeFromString(std::string_view s);
// The comparison type XLA uses when none is set, for an operand element
// type (xla::PrimitiveType number): FLOAT for floating and complex types,
// SIGNED for signed integers, UNSIGNED for unsigned ones and PRED.
ComparisonType DefaultComparisonType(int element_type);

class HloInstruction {
 public:
  const xla::HloInstructionProto& proto() const { return *proto_; }

  int64_t id() const { return proto_->id(); }
  const std::string& name() const { return proto_->name(); }
  HloOpcode opcode() const { return opcode_; }
  // The proto's opcode string (also for kUnknown).
  const std::string& opcode_string() const { return proto_->opcode(); }
  const xla::ShapeProto& shape() const { return proto_->shape(); }

  const HloComputation* parent() const { return parent_; }
  // Position in the parent's proto instruction list.
  int64_t index() const { return index_; }
  bool IsRoot() const;

  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  // Precondition: 0 <= i < operand_count().
  const HloInstruction* operand(int64_t i) const { return operands_[i]; }
  std::span<const HloInstruction* const> operands() const { return operands_; }
  // Each instruction that uses this one as an operand, once, in the order
  // of the parent's instruction list (XLA's order after loading a proto).
  std::span<const HloInstruction* const> users() const { return users_; }
  std::span<const HloInstruction* const> control_predecessors() const {
    return control_predecessors_;
  }
  std::span<const HloInstruction* const> control_successors() const {
    return control_successors_;
  }
  // called_computation_ids resolved, in proto order.
  std::span<const HloComputation* const> called_computations() const {
    return called_;
  }

  // --- Typed accessors (defaults as XLA reads them) ---------------------
  int64_t parameter_number() const { return proto_->parameter_number(); }
  int64_t tuple_index() const { return proto_->tuple_index(); }
  std::span<const int64_t> dimensions() const {
    return {proto_->dimensions().data(),
            static_cast<size_t>(proto_->dimensions().size())};
  }
  // iota: the iota dimension (dimensions[0], 0 when unset).
  int64_t iota_dimension() const;
  int64_t feature_group_count() const;  // 0 reads as 1
  int64_t batch_group_count() const;    // 0 reads as 1
  // channel_id when > 0.
  std::optional<int64_t> channel_id() const;
  // compare: the direction (nullopt when the string is not one of XLA's)
  // and the type, the operand type's default when unset.
  std::optional<ComparisonDirection> comparison_direction() const;
  std::optional<ComparisonType> comparison_type() const;
  const std::string& custom_call_target() const {
    return proto_->custom_call_target();
  }
  const std::string& backend_config() const { return proto_->backend_config(); }
  float epsilon() const { return proto_->epsilon(); }
  int64_t feature_index() const { return proto_->feature_index(); }
  // A frontend attribute, or nullptr.
  const std::string* frontend_attribute(std::string_view key) const;
  // The replica groups of a collective, from replica_groups (field 49) or
  // collective_device_list (field 87, explicit or iota form, expanded);
  // empty when none are given (XLA: one group of every replica).
  std::vector<std::vector<int64_t>> ReplicaGroups() const;

  // Called computations by role (nullptr when absent).
  const HloComputation* to_apply() const;        // reduce, map, sort, call, all-reduce, scatter, reduce-window, ...
  // while: XLA keeps the body first (called_computation_ids = {body,
  // condition}, HloInstruction's kBodyComputationIndex = 0).
  const HloComputation* while_condition() const; // while: called[1]
  const HloComputation* while_body() const;      // while: called[0]
  const HloComputation* fused_computation() const;  // fusion
  // conditional: the branch computations (true, false for a pred
  // selector).
  std::span<const HloComputation* const> branch_computations() const;

 private:
  friend class HloModule;
  const xla::HloInstructionProto* proto_ = nullptr;
  const HloComputation* parent_ = nullptr;
  int64_t index_ = 0;
  HloOpcode opcode_ = HloOpcode::kUnknown;
  std::vector<const HloInstruction*> operands_;
  std::vector<const HloInstruction*> users_;
  std::vector<const HloInstruction*> control_predecessors_;
  std::vector<const HloInstruction*> control_successors_;
  std::vector<const HloComputation*> called_;
};

class HloComputation {
 public:
  const xla::HloComputationProto& proto() const { return *proto_; }
  int64_t id() const { return proto_->id(); }
  const std::string& name() const { return proto_->name(); }
  const HloModule* module() const { return module_; }
  // Position in the module's proto computation list.
  int64_t index() const { return index_; }
  bool IsEntry() const;
  bool IsFusionComputation() const { return proto_->is_fusion_computation(); }

  // In proto order.
  std::span<const HloInstruction* const> instructions() const {
    return instruction_ptrs_;
  }
  int64_t instruction_count() const {
    return static_cast<int64_t>(instruction_ptrs_.size());
  }
  const HloInstruction* root() const { return root_; }
  // The parameter instructions ordered by parameter_number; an entry is
  // nullptr where a number is missing (ValidateModule rejects that).
  std::span<const HloInstruction* const> parameters() const {
    return parameters_;
  }
  const HloInstruction* FindInstruction(int64_t id) const;
  const HloInstruction* FindInstruction(std::string_view name) const;

  // The instructions that call this one (in module proto order).
  std::span<const HloInstruction* const> callers() const { return callers_; }

 private:
  friend class HloModule;
  const xla::HloComputationProto* proto_ = nullptr;
  const HloModule* module_ = nullptr;
  int64_t index_ = 0;
  std::vector<HloInstruction> instructions_;
  std::vector<const HloInstruction*> instruction_ptrs_;
  std::vector<const HloInstruction*> parameters_;
  std::vector<const HloInstruction*> callers_;
  const HloInstruction* root_ = nullptr;
  absl::flat_hash_map<int64_t, const HloInstruction*> by_id_;
};

// One entry parameter, as a user of a snapshot sees it.
struct EntryParameter {
  int64_t number = 0;
  std::string name;       // the parameter instruction's name
  std::string neff_name;  // frontend attribute neff_input_names, or ""
  const xla::ShapeProto* shape = nullptr;  // the instruction's shape
  const HloInstruction* instruction = nullptr;
};

class HloModule {
 public:
  // Builds the view over `proto`, which it takes. Errors: kInvalidArgument
  // naming the computation and instruction (see the file comment); "the
  // module has no computations"; an entry named or numbered that does not
  // exist. With neither entry_computation_id nor entry_computation_name
  // set, the entry is the last computation (XLA writes it last).
  static absl::StatusOr<std::unique_ptr<HloModule>> Create(
      xla::HloModuleProto proto);

  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const xla::HloModuleProto& proto() const { return proto_; }
  const std::string& name() const { return proto_.name(); }

  // In proto order.
  std::span<const HloComputation* const> computations() const {
    return computation_ptrs_;
  }
  const HloComputation* entry() const { return entry_; }
  const HloComputation* FindComputation(int64_t id) const;
  const HloComputation* FindComputation(std::string_view name) const;
  // An instruction by name anywhere in the module (names are unique in a
  // valid module; with duplicates, the first in proto order).
  const HloInstruction* FindInstruction(std::string_view name) const;

  // The entry's parameters ordered by number (EntryParameter above).
  std::vector<EntryParameter> EntryParameters() const;
  int64_t instruction_count() const { return instruction_count_; }

 private:
  explicit HloModule(xla::HloModuleProto proto) : proto_(std::move(proto)) {}
  absl::Status Build();

  xla::HloModuleProto proto_;
  std::vector<HloComputation> computations_;
  std::vector<const HloComputation*> computation_ptrs_;
  const HloComputation* entry_ = nullptr;
  absl::flat_hash_map<int64_t, const HloComputation*> computation_by_id_;
  absl::flat_hash_map<std::string_view, const HloComputation*>
      computation_by_name_;
  absl::flat_hash_map<std::string_view, const HloInstruction*>
      instruction_by_name_;
  int64_t instruction_count_ = 0;
};

// "computation \"main.5\", instruction \"add.3\" (id 3)": the place an error
// names.
std::string DescribeInstruction(const HloInstruction& instr);
std::string DescribeComputation(const HloComputation& comp);

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_MODULE_H_
