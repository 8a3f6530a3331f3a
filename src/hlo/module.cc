#include "decomposed/hlo/module.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decomposed/status.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::hlo {
namespace {

constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::string_view kTypes[] = {"FLOAT", "TOTALORDER", "SIGNED",
                                       "UNSIGNED"};

absl::Status Bad(std::string where, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", Sv(what)));
}

}  // namespace

std::string_view ComparisonDirectionString(ComparisonDirection d) {
  return kDirections[static_cast<int>(d)];
}
std::optional<ComparisonDirection> ComparisonDirectionFromString(
    std::string_view s) {
  for (int i = 0; i < 6; ++i) {
    if (kDirections[i] == s) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}
std::string_view ComparisonTypeString(ComparisonType t) {
  return kTypes[static_cast<int>(t)];
}
std::optional<ComparisonType> ComparisonTypeFromString(std::string_view s) {
  for (int i = 0; i < 4; ++i) {
    if (kTypes[i] == s) return static_cast<ComparisonType>(i);
  }
  return std::nullopt;
}

ComparisonType DefaultComparisonType(int element_type) {
  switch (static_cast<PrimitiveType>(element_type)) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4:
    case PrimitiveType::kU8: case PrimitiveType::kU16:
    case PrimitiveType::kU32: case PrimitiveType::kU64:
      return ComparisonType::kUnsigned;
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64:
      return ComparisonType::kSigned;
    default:
      return ComparisonType::kFloat;
  }
}

// --- HloInstruction ----------------------------------------------------------

bool HloInstruction::IsRoot() const { return parent_->root() == this; }

int64_t HloInstruction::iota_dimension() const {
  return proto_->dimensions().empty() ? 0 : proto_->dimensions(0);
}
int64_t HloInstruction::feature_group_count() const {
  return proto_->feature_group_count() == 0 ? 1 : proto_->feature_group_count();
}
int64_t HloInstruction::batch_group_count() const {
  return proto_->batch_group_count() == 0 ? 1 : proto_->batch_group_count();
}
std::optional<int64_t> HloInstruction::channel_id() const {
  if (proto_->channel_id() > 0) return proto_->channel_id();
  return std::nullopt;
}

std::optional<ComparisonDirection> HloInstruction::comparison_direction() const {
  return ComparisonDirectionFromString(proto_->comparison_direction());
}

std::optional<ComparisonType> HloInstruction::comparison_type() const {
  if (!proto_->comparison_type().empty()) {
    return ComparisonTypeFromString(proto_->comparison_type());
  }
  if (operands_.empty()) return std::nullopt;
  return DefaultComparisonType(operands_[0]->shape().element_type());
}

const std::string* HloInstruction::frontend_attribute(
    std::string_view key) const {
  const auto& m = proto_->frontend_attributes().map();
  auto it = m.find(std::string(key));
  return it == m.end() ? nullptr : &it->second;
}

std::vector<std::vector<int64_t>> HloInstruction::ReplicaGroups() const {
  std::vector<std::vector<int64_t>> out;
  auto from = [&](const auto& groups) {
    for (const xla::ReplicaGroup& g : groups) {
      out.emplace_back(g.replica_ids().begin(), g.replica_ids().end());
    }
  };
  if (!proto_->replica_groups().empty()) {
    from(proto_->replica_groups());
    return out;
  }
  const xla::CollectiveDeviceListProto& list = proto_->collective_device_list();
  if (!list.replica_groups().empty()) {
    from(list.replica_groups());
    return out;
  }
  if (list.has_iota_replica_group_list()) {
    const xla::IotaReplicaGroupListProto& iota = list.iota_replica_group_list();
    const int64_t groups = iota.num_replica_groups();
    const int64_t per = iota.num_devices_per_group();
    // Refuse what cannot be a device list rather than allocating it.
    constexpr int64_t kMaxDevices = int64_t{1} << 20;
    if (groups <= 0 || per <= 0 || groups > kMaxDevices ||
        per > kMaxDevices / groups) {
      return out;
    }
    const int64_t n = groups * per;
    std::vector<int64_t> dims(iota.iota_reshape_dims().begin(),
                              iota.iota_reshape_dims().end());
    std::vector<int64_t> perm(iota.iota_transpose_perm().begin(),
                              iota.iota_transpose_perm().end());
    if (dims.empty()) dims = {n};
    if (perm.empty()) {
      perm.resize(dims.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    }
    int64_t product = 1;
    for (int64_t d : dims) {
      if (d <= 0 || product > n / d) return out;
      product *= d;
    }
    if (product != n || perm.size() != dims.size()) return out;
    std::vector<bool> seen(perm.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return out;
      seen[p] = true;
    }
    // Row-major strides of the reshaped iota, then walk the transposed
    // array in row-major order.
    const size_t rank = dims.size();
    std::vector<int64_t> stride(rank, 1);
    for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * dims[i];
    std::vector<int64_t> tdims(rank), tstride(rank);
    for (size_t i = 0; i < rank; ++i) {
      tdims[i] = dims[perm[i]];
      tstride[i] = stride[perm[i]];
    }
    std::vector<int64_t> idx(rank, 0);
    std::vector<int64_t> flat;
    flat.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      int64_t v = 0;
      for (size_t i = 0; i < rank; ++i) v += idx[i] * tstride[i];
      flat.push_back(v);
      for (size_t i = rank; i-- > 0;) {
        if (++idx[i] < tdims[i]) break;
        idx[i] = 0;
      }
    }
    out.resize(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      out[g].assign(flat.begin() + g * per, flat.begin() + (g + 1) * per);
    }
  }
  return out;
}

const HloComputation* HloInstruction::to_apply() const {
  switch (opcode_) {
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kFusion:
      return nullptr;
    default:
      return called_.size() == 1 ? called_[0] : nullptr;
  }
}
const HloComputation* HloInstruction::while_condition() const {
  return opcode_ == HloOpcode::kWhile && called_.size() == 2 ? called_[1]
                                                              : nullptr;
}
const HloComputation* HloInstruction::while_body() const {
  return opcode_ == HloOpcode::kWhile && called_.size() == 2 ? called_[0]
                                                              : nullptr;
}
const HloComputation* HloInstruction::fused_computation() const {
  return opcode_ == HloOpcode::kFusion && called_.size() == 1 ? called_[0]
                                                               : nullptr;
}
std::span<const HloComputation* const> HloInstruction::branch_computations()
    const {
  if (opcode_ != HloOpcode::kConditional) return {};
  return called_;
}

// --- HloComputation ----------------------------------------------------------

bool HloComputation::IsEntry() const { return module_->entry() == this; }

const HloInstruction* HloComputation::FindInstruction(int64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const HloInstruction* HloComputation::FindInstruction(
    std::string_view name) const {
  const HloInstruction* i = module_->FindInstruction(name);
  return i != nullptr && i->parent() == this ? i : nullptr;
}

// --- HloModule ---------------------------------------------------------------

std::string DescribeComputation(const HloComputation& comp) {
  return absl::StrCat("computation \"", comp.name(), "\"");
}

std::string DescribeInstruction(const HloInstruction& instr) {
  return absl::StrCat(DescribeComputation(*instr.parent()), ", instruction \"",
                      instr.name(), "\" (id ", instr.id(), ")");
}

absl::StatusOr<std::unique_ptr<HloModule>> HloModule::Create(
    xla::HloModuleProto proto) {
  std::unique_ptr<HloModule> m(new HloModule(std::move(proto)));
  if (absl::Status s = m->Build(); !s.ok()) return s;
  return m;
}

absl::Status HloModule::Build() {
  const int ncomp = proto_.computations_size();
  if (ncomp == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("module \"", proto_.name(), "\": has no computations"));
  }
  computations_.resize(ncomp);
  computation_ptrs_.reserve(ncomp);
  for (int c = 0; c < ncomp; ++c) {
    HloComputation& comp = computations_[c];
    comp.proto_ = &proto_.computations(c);
    comp.module_ = this;
    comp.index_ = c;
    computation_ptrs_.push_back(&comp);
    if (!computation_by_id_.emplace(comp.id(), &comp).second) {
      return Bad(DescribeComputation(comp),
                 absl::StrCat("id ", comp.id(),
                              " is also the id of computation \"",
                              computation_by_id_[comp.id()]->name(), "\""));
    }
    computation_by_name_.emplace(comp.proto_->name(), &comp);
  }

  // Instructions: ids first (so that a reference to a later instruction is
  // told from one to nothing), then operands in order.
  for (HloComputation& comp : computations_) {
    const auto& instrs = comp.proto_->instructions();
    comp.instructions_.resize(instrs.size());
    comp.instruction_ptrs_.reserve(instrs.size());
    comp.by_id_.reserve(instrs.size());
    int64_t parameter_count = 0;
    for (int i = 0; i < instrs.size(); ++i) {
      HloInstruction& ins = comp.instructions_[i];
      ins.proto_ = &instrs[i];
      ins.parent_ = &comp;
      ins.index_ = i;
      ins.opcode_ =
          HloOpcodeFromString(instrs[i].opcode()).value_or(HloOpcode::kUnknown);
      comp.instruction_ptrs_.push_back(&ins);
      auto [it, fresh] = comp.by_id_.emplace(ins.id(), &ins);
      if (!fresh) {
        return Bad(DescribeInstruction(ins),
                   absl::StrCat("id ", ins.id(), " is also the id of \"",
                                it->second->name(), "\""));
      }
      instruction_by_name_.emplace(ins.proto_->name(), &ins);
      if (ins.opcode_ == HloOpcode::kParameter) ++parameter_count;
    }
    instruction_count_ += instrs.size();
    for (HloInstruction& ins : comp.instructions_) {
      const auto& p = *ins.proto_;
      ins.operands_.reserve(p.operand_ids_size());
      for (int k = 0; k < p.operand_ids_size(); ++k) {
        const int64_t id = p.operand_ids(k);
        const HloInstruction* op = comp.FindInstruction(id);
        if (op == nullptr) {
          return Bad(DescribeInstruction(ins),
                     absl::StrCat("operand ", k, " refers to id ", id,
                                  ", which is not an instruction of this "
                                  "computation"));
        }
        if (op->index() >= ins.index()) {
          return Bad(DescribeInstruction(ins),
                     absl::StrCat("operand ", k, " (\"", op->name(), "\", id ",
                                  id, ") comes ",
                                  op == &ins ? "at" : "after",
                                  " its user in the instruction list; "
                                  "operands must come first"));
        }
        ins.operands_.push_back(op);
        HloInstruction* mop = const_cast<HloInstruction*>(op);
        if (mop->users_.empty() || mop->users_.back() != &ins) {
          mop->users_.push_back(&ins);
        }
      }
      for (int k = 0; k < p.control_predecessor_ids_size(); ++k) {
        const int64_t id = p.control_predecessor_ids(k);
        const HloInstruction* op = comp.FindInstruction(id);
        if (op == nullptr) {
          return Bad(DescribeInstruction(ins),
                     absl::StrCat("control predecessor ", k, " refers to id ",
                                  id,
                                  ", which is not an instruction of this "
                                  "computation"));
        }
        ins.control_predecessors_.push_back(op);
        const_cast<HloInstruction*>(op)->control_successors_.push_back(&ins);
      }
      for (int k = 0; k < p.called_computation_ids_size(); ++k) {
        const int64_t id = p.called_computation_ids(k);
        const HloComputation* callee = FindComputation(id);
        if (callee == nullptr) {
          return Bad(DescribeInstruction(ins),
                     absl::StrCat("called computation ", k, " refers to id ",
                                  id, ", which is not a computation of the "
                                  "module"));
        }
        ins.called_.push_back(callee);
        const_cast<HloComputation*>(callee)->callers_.push_back(&ins);
      }
    }
    // An instruction may use one operand several times; users_ above drops
    // only adjacent repeats, so drop the rest (keeping first-use order).
    for (HloInstruction& ins : comp.instructions_) {
      if (ins.users_.size() > 1) {
        std::vector<const HloInstruction*> unique;
        unique.reserve(ins.users_.size());
        for (const HloInstruction* u : ins.users_) {
          if (std::find(unique.begin(), unique.end(), u) == unique.end()) {
            unique.push_back(u);
          }
        }
        ins.users_ = std::move(unique);
      }
    }
    // Root.
    if (instrs.empty()) {
      return Bad(DescribeComputation(comp), "has no instructions");
    }
    comp.root_ = comp.FindInstruction(comp.proto_->root_id());
    if (comp.root_ == nullptr) {
      return Bad(DescribeComputation(comp),
                 absl::StrCat("root_id ", comp.proto_->root_id(),
                              " is not an instruction of this computation"));
    }
    // Parameters by number; numbers out of range are left for validation.
    comp.parameters_.assign(static_cast<size_t>(parameter_count), nullptr);
    for (const HloInstruction& ins : comp.instructions_) {
      if (ins.opcode_ != HloOpcode::kParameter) continue;
      const int64_t n = ins.parameter_number();
      if (n >= 0 && n < parameter_count && comp.parameters_[n] == nullptr) {
        comp.parameters_[n] = &ins;
      }
    }
  }

  // The entry: by id as XLA does, else by name, else the last computation.
  for (const HloComputation& comp : computations_) {
    if (comp.id() == proto_.entry_computation_id() &&
        (proto_.entry_computation_name().empty() ||
         comp.name() == proto_.entry_computation_name())) {
      entry_ = &comp;
      break;
    }
  }
  if (entry_ == nullptr && proto_.entry_computation_id() != 0) {
    entry_ = FindComputation(proto_.entry_computation_id());
  }
  if (entry_ == nullptr && !proto_.entry_computation_name().empty()) {
    entry_ = FindComputation(proto_.entry_computation_name());
    if (entry_ == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "module \"", proto_.name(), "\": entry computation \"",
          proto_.entry_computation_name(), "\" (id ",
          proto_.entry_computation_id(), ") is not a computation of the module"));
    }
  }
  if (entry_ == nullptr) entry_ = &computations_.back();
  return absl::OkStatus();
}

const HloComputation* HloModule::FindComputation(int64_t id) const {
  auto it = computation_by_id_.find(id);
  return it == computation_by_id_.end() ? nullptr : it->second;
}

const HloComputation* HloModule::FindComputation(std::string_view name) const {
  auto it = computation_by_name_.find(name);
  return it == computation_by_name_.end() ? nullptr : it->second;
}

const HloInstruction* HloModule::FindInstruction(std::string_view name) const {
  auto it = instruction_by_name_.find(name);
  return it == instruction_by_name_.end() ? nullptr : it->second;
}

std::vector<EntryParameter> HloModule::EntryParameters() const {
  std::vector<EntryParameter> out;
  for (const HloInstruction* p : entry_->parameters()) {
    if (p == nullptr) continue;
    EntryParameter e;
    e.number = p->parameter_number();
    e.name = p->name();
    if (const std::string* n = p->frontend_attribute("neff_input_names")) {
      e.neff_name = *n;
    }
    e.shape = &p->shape();
    e.instruction = p;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace decomposed::hlo
