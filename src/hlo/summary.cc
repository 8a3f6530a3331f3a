#include "decomposed/hlo/summary.h"

#include <algorithm>
#include <optional>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/hlo/text.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::hlo {
namespace {

// Element count of an array shape, nullopt for tuples and malformed ones.
std::optional<double> Elements(const xla::ShapeProto& s) {
  if (s.element_type() == xla::TUPLE) return std::nullopt;
  absl::StatusOr<int64_t> n = ElementCount(s);
  if (!n.ok()) return std::nullopt;
  return static_cast<double>(*n);
}

std::optional<double> DimensionOf(const xla::ShapeProto& s, int64_t d) {
  if (d < 0 || d >= s.dimensions_size()) return std::nullopt;
  return static_cast<double>(s.dimensions(static_cast<int>(d)));
}

std::optional<double> DotFlops(const HloInstruction& in) {
  if (in.operand_count() < 2 || !in.proto().has_dot_dimension_numbers()) {
    return std::nullopt;
  }
  std::optional<double> out = Elements(in.shape());
  if (!out) return std::nullopt;
  const xla::ShapeProto& lhs = in.operand(0)->shape();
  double k = 1;
  for (int64_t d : in.proto().dot_dimension_numbers().lhs_contracting_dimensions()) {
    std::optional<double> n = DimensionOf(lhs, d);
    if (!n) return std::nullopt;
    k *= *n;
  }
  return 2 * *out * k;
}

std::optional<double> ConvolutionFlops(const HloInstruction& in) {
  if (in.operand_count() < 2 ||
      !in.proto().has_convolution_dimension_numbers()) {
    return std::nullopt;
  }
  std::optional<double> out = Elements(in.shape());
  if (!out) return std::nullopt;
  const xla::ShapeProto& kernel = in.operand(1)->shape();
  const xla::ConvolutionDimensionNumbers& d =
      in.proto().convolution_dimension_numbers();
  std::optional<double> k = DimensionOf(kernel, d.kernel_input_feature_dimension());
  if (!k) return std::nullopt;
  double per_output = *k;
  for (int64_t s : d.kernel_spatial_dimensions()) {
    std::optional<double> n = DimensionOf(kernel, s);
    if (!n) return std::nullopt;
    per_output *= *n;
  }
  return 2 * *out * per_output;
}

uint64_t ConstantDataBytes(const xla::LiteralProto& literal) {
  // Tuples of constants: the elements' data.
  uint64_t total = 0;
  if (literal.shape().element_type() == xla::TUPLE) {
    for (const xla::LiteralProto& e : literal.tuple_literals()) {
      total += ConstantDataBytes(e);
    }
    return total;
  }
  const PrimitiveTypeInfo* info =
      FindPrimitiveType(literal.shape().element_type());
  std::optional<double> n = Elements(literal.shape());
  if (info == nullptr || !n) return 0;
  return static_cast<uint64_t>(*n) * info->element_bytes;
}

std::string FormatFlops(double f) {
  static constexpr const char* kUnits[] = {"", "k", "M", "G", "T", "P", "E"};
  int u = 0;
  while (f >= 1000 && u < 6) {
    f /= 1000;
    ++u;
  }
  if (u == 0) return absl::StrFormat("%.0f FLOP", f);
  return absl::StrFormat("%.3g %sFLOP", f, kUnits[u]);
}

}  // namespace

ModuleSummary SummarizeModule(const HloModule& module) {
  ModuleSummary s;
  s.name = module.name();
  const HloComputation* entry = module.entry();
  if (entry != nullptr) {
    s.entry = entry->name();
    for (const EntryParameter& p : module.EntryParameters()) {
      s.parameters.push_back(
          {p.number, p.name, p.neff_name,
           p.shape != nullptr ? DescribeShape(*p.shape) : std::string()});
    }
    if (entry->root() != nullptr) s.result = DescribeShape(entry->root()->shape());
  }
  s.computation_count = static_cast<int64_t>(module.computations().size());
  s.instruction_count = module.instruction_count();
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* in : c->instructions()) {
      ++s.opcodes[in->opcode_string()];
      const HloOpcode op = in->opcode();
      if (op == HloOpcode::kCustomCall) {
        ++s.custom_call_targets[in->custom_call_target()];
      } else if (op == HloOpcode::kConstant) {
        ++s.constant_count;
        if (IsElidedLiteral(in->proto().literal())) {
          ++s.elided_constant_count;
        } else {
          s.constant_bytes += ConstantDataBytes(in->proto().literal());
        }
      } else if (op == HloOpcode::kDot) {
        if (std::optional<double> f = DotFlops(*in)) {
          s.dot_flops += *f;
        } else {
          ++s.flops_unknown;
        }
      } else if (op == HloOpcode::kConvolution) {
        if (std::optional<double> f = ConvolutionFlops(*in)) {
          s.convolution_flops += *f;
        } else {
          ++s.flops_unknown;
        }
      }
      if (IsCollective(op)) {
        ModuleSummary::Collective col;
        col.name = in->name();
        col.opcode = in->opcode_string();
        col.computation = c->name();
        col.replica_groups = in->ReplicaGroups();
        for (const xla::SourceTarget& st : in->proto().source_target_pairs()) {
          col.source_target_pairs.emplace_back(st.source(), st.target());
        }
        col.channel_id = in->channel_id().value_or(0);
        col.use_global_device_ids = in->proto().use_global_device_ids();
        s.collectives.push_back(std::move(col));
      }
    }
  }
  return s;
}

std::string ModuleSummary::OneLine() const {
  std::string out = absl::StrCat(
      "module ", name, ": ", computation_count,
      computation_count == 1 ? " computation, " : " computations, ",
      instruction_count,
      instruction_count == 1 ? " instruction, entry " : " instructions, entry ",
      entry, " (", parameters.size(),
      parameters.size() == 1 ? " parameter) -> " : " parameters) -> ", result);
  // The compute opcodes a reader looks for first, in a fixed order.
  static constexpr const char* kNotable[] = {
      "dot", "convolution", "custom-call", "while", "conditional", "call",
      "fusion", "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
      "collective-permute", "gather", "scatter", "sort"};
  std::vector<std::string> parts;
  for (const char* op : kNotable) {
    auto it = opcodes.find(op);
    if (it != opcodes.end()) parts.push_back(absl::StrCat(it->second, " ", op));
  }
  if (!parts.empty()) absl::StrAppend(&out, "; ", absl::StrJoin(parts, ", "));
  const double flops = dot_flops + convolution_flops;
  if (flops > 0) absl::StrAppend(&out, "; ", FormatFlops(flops));
  if (elided_constant_count > 0) {
    absl::StrAppend(&out, "; ", elided_constant_count,
                    elided_constant_count == 1 ? " constant" : " constants",
                    " without data");
  }
  return out;
}

nlohmann::ordered_json ModuleSummary::ToJson() const {
  using json = nlohmann::ordered_json;
  json j;
  j["name"] = name;
  j["entry"] = entry;
  j["parameters"] = json::array();
  for (const Parameter& p : parameters) {
    j["parameters"].push_back(
        {{"number", p.number},
         {"name", p.name},
         {"neff_name", p.neff_name.empty() ? json(nullptr) : json(p.neff_name)},
         {"shape", p.shape}});
  }
  j["result"] = result;
  j["computations"] = computation_count;
  j["instructions"] = instruction_count;
  j["opcodes"] = json::object();
  for (const auto& [op, n] : opcodes) j["opcodes"][op] = n;
  j["custom_call_targets"] = json::object();
  for (const auto& [t, n] : custom_call_targets) j["custom_call_targets"][t] = n;
  j["collectives"] = json::array();
  for (const Collective& c : collectives) {
    json pairs = json::array();
    for (const auto& [src, dst] : c.source_target_pairs) {
      pairs.push_back({src, dst});
    }
    j["collectives"].push_back(
        {{"name", c.name},
         {"opcode", c.opcode},
         {"computation", c.computation},
         {"replica_groups", c.replica_groups},
         {"source_target_pairs", pairs},
         {"channel_id", c.channel_id > 0 ? json(c.channel_id) : json(nullptr)},
         {"use_global_device_ids", c.use_global_device_ids}});
  }
  j["constants"] = {{"count", constant_count},
                    {"bytes", constant_bytes},
                    {"elided", elided_constant_count}};
  j["flops"] = {{"dot", dot_flops},
                {"convolution", convolution_flops},
                {"total", dot_flops + convolution_flops},
                {"uncounted", flops_unknown}};
  return j;
}

}  // namespace decomposed::hlo
