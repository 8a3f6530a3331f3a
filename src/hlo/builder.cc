// HloModuleBuilder and HloComputationBuilder (hlo/builder.h).
#include "decomposed/hlo/builder.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/status.h"

namespace decomposed::hlo {
namespace {

using xla::ShapeProto;

std::string OpName(HloOpcode op) { return std::string(HloOpcodeString(op)); }

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

template <class R>
void Assign(R* field, absl::Span<const int64_t> values) {
  field->Clear();
  for (int64_t v : values) field->Add(v);
}

}  // namespace

// --- Attribute helpers ---------------------------------------------------------

xla::PaddingConfig MakePaddingConfig(absl::Span<const PaddingDim> dims) {
  xla::PaddingConfig c;
  for (const PaddingDim& d : dims) {
    auto* p = c.add_dimensions();
    p->set_edge_padding_low(d.low);
    p->set_edge_padding_high(d.high);
    p->set_interior_padding(d.interior);
  }
  return c;
}

xla::Window MakeWindow(absl::Span<const int64_t> sizes,
                       absl::Span<const int64_t> strides,
                       absl::Span<const std::pair<int64_t, int64_t>> padding,
                       absl::Span<const int64_t> base_dilation,
                       absl::Span<const int64_t> window_dilation) {
  xla::Window w;
  for (size_t i = 0; i < sizes.size(); ++i) {
    xla::WindowDimension* d = w.add_dimensions();
    d->set_size(sizes[i]);
    d->set_stride(i < strides.size() ? strides[i] : 1);
    if (i < padding.size()) {
      d->set_padding_low(padding[i].first);
      d->set_padding_high(padding[i].second);
    }
    d->set_base_dilation(i < base_dilation.size() ? base_dilation[i] : 1);
    d->set_window_dilation(i < window_dilation.size() ? window_dilation[i] : 1);
  }
  return w;
}

xla::DotDimensionNumbers MakeDotDimensionNumbers(
    absl::Span<const int64_t> lhs_contracting,
    absl::Span<const int64_t> rhs_contracting,
    absl::Span<const int64_t> lhs_batch, absl::Span<const int64_t> rhs_batch) {
  xla::DotDimensionNumbers d;
  Assign(d.mutable_lhs_contracting_dimensions(), lhs_contracting);
  Assign(d.mutable_rhs_contracting_dimensions(), rhs_contracting);
  Assign(d.mutable_lhs_batch_dimensions(), lhs_batch);
  Assign(d.mutable_rhs_batch_dimensions(), rhs_batch);
  return d;
}

absl::StatusOr<xla::ConvolutionDimensionNumbers>
ConvolutionDimensionNumbersFromLabels(std::string_view labels) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim_labels \"", Sv(labels), "\": ", Sv(why)));
  };
  const size_t us = labels.find('_');
  const size_t arrow = labels.find("->");
  if (us == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < us) {
    return bad("expected <input>_<kernel>-><output>");
  }
  const std::string_view in = labels.substr(0, us);
  const std::string_view kernel = labels.substr(us + 1, arrow - us - 1);
  const std::string_view out = labels.substr(arrow + 2);
  if (in.size() < 2 || in.size() != kernel.size() || in.size() != out.size()) {
    return bad("expected three labels of one length, at least 2");
  }
  const size_t spatial = in.size() - 2;
  // Finds each of `letters` (and the digits 0..spatial-1) once in `s`.
  auto parse = [&](std::string_view s, char a, char b, int64_t* pa, int64_t* pb,
                   std::vector<int64_t>* sp) -> bool {
    *pa = *pb = -1;
    sp->assign(spatial, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const int64_t at = static_cast<int64_t>(i);
      if (c == a && *pa < 0) {
        *pa = at;
      } else if (c == b && *pb < 0) {
        *pb = at;
      } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial &&
                 (*sp)[c - '0'] < 0) {
        (*sp)[c - '0'] = at;
      } else {
        return false;
      }
    }
    return *pa >= 0 && *pb >= 0 &&
           std::find(sp->begin(), sp->end(), -1) == sp->end();
  };
  xla::ConvolutionDimensionNumbers d;
  int64_t x = 0, y = 0;
  std::vector<int64_t> sp;
  if (!parse(in, 'b', 'f', &x, &y, &sp)) {
    return bad("expected an input label of b, f and spatial digits");
  }
  d.set_input_batch_dimension(x);
  d.set_input_feature_dimension(y);
  Assign(d.mutable_input_spatial_dimensions(), sp);
  if (!parse(kernel, 'i', 'o', &x, &y, &sp)) {
    return bad("expected a kernel label of i, o and spatial digits");
  }
  d.set_kernel_input_feature_dimension(x);
  d.set_kernel_output_feature_dimension(y);
  Assign(d.mutable_kernel_spatial_dimensions(), sp);
  if (!parse(out, 'b', 'f', &x, &y, &sp)) {
    return bad("expected an output label of b, f and spatial digits");
  }
  d.set_output_batch_dimension(x);
  d.set_output_feature_dimension(y);
  Assign(d.mutable_output_spatial_dimensions(), sp);
  return d;
}

xla::GatherDimensionNumbers MakeGatherDimensionNumbers(
    absl::Span<const int64_t> offset_dims,
    absl::Span<const int64_t> collapsed_slice_dims,
    absl::Span<const int64_t> start_index_map, int64_t index_vector_dim,
    absl::Span<const int64_t> operand_batching_dims,
    absl::Span<const int64_t> start_indices_batching_dims) {
  xla::GatherDimensionNumbers d;
  Assign(d.mutable_offset_dims(), offset_dims);
  Assign(d.mutable_collapsed_slice_dims(), collapsed_slice_dims);
  Assign(d.mutable_start_index_map(), start_index_map);
  d.set_index_vector_dim(index_vector_dim);
  Assign(d.mutable_operand_batching_dims(), operand_batching_dims);
  Assign(d.mutable_start_indices_batching_dims(), start_indices_batching_dims);
  return d;
}

xla::ScatterDimensionNumbers MakeScatterDimensionNumbers(
    absl::Span<const int64_t> update_window_dims,
    absl::Span<const int64_t> inserted_window_dims,
    absl::Span<const int64_t> scatter_dims_to_operand_dims,
    int64_t index_vector_dim, absl::Span<const int64_t> input_batching_dims,
    absl::Span<const int64_t> scatter_indices_batching_dims) {
  xla::ScatterDimensionNumbers d;
  Assign(d.mutable_update_window_dims(), update_window_dims);
  Assign(d.mutable_inserted_window_dims(), inserted_window_dims);
  Assign(d.mutable_scatter_dims_to_operand_dims(), scatter_dims_to_operand_dims);
  d.set_index_vector_dim(index_vector_dim);
  Assign(d.mutable_input_batching_dims(), input_batching_dims);
  Assign(d.mutable_scatter_indices_batching_dims(), scatter_indices_batching_dims);
  return d;
}

// --- HloOp ---------------------------------------------------------------------------

const ShapeProto& HloOp::shape() const {
  return builder_->proto_.instructions(index_).shape();
}
const std::string& HloOp::name() const {
  return builder_->proto_.instructions(index_).name();
}

// --- HloComputationBuilder -----------------------------------------------------------

HloComputationBuilder::HloComputationBuilder(HloModuleBuilder* module,
                                             std::string name, int64_t id)
    : module_(module) {
  proto_.set_name(std::move(name));
  proto_.set_id(id);
}

absl::Status HloComputationBuilder::status() const { return module_->status(); }

bool HloComputationBuilder::Usable() const { return module_->status_.ok(); }

void HloComputationBuilder::Fail(std::string_view instruction,
                                 const absl::Status& status) {
  std::string where = DescribeComputationName();
  if (!instruction.empty()) {
    absl::StrAppend(&where, ", instruction \"", Sv(instruction), "\"");
  }
  module_->Fail(absl::Status(status.code(),
                             absl::StrCat(where, ": ", status.message())));
}

std::string HloComputationBuilder::DescribeComputationName() const {
  return absl::StrCat("computation \"", proto_.name(), "\"");
}

std::string HloComputationBuilder::NextName(HloOpcode opcode) const {
  return absl::StrCat(OpName(opcode), ".", module_->next_id_);
}

bool HloComputationBuilder::Ready(HloOpcode opcode,
                                  absl::Span<const HloOp> operands) {
  if (!Usable()) return false;
  if (sealed_) {
    Fail(NextName(opcode),
         absl::FailedPreconditionError(
             "expected instructions added before the computation is called, "
             "found it called already"));
    return false;
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const HloOp& o = operands[i];
    if (!o.valid()) {
      Fail(NextName(opcode),
           absl::InvalidArgumentError(
               absl::StrCat("expected operand ", i, " to be an instruction, "
                            "found an invalid HloOp")));
      return false;
    }
    if (o.builder_ != this) {
      Fail(NextName(opcode),
           absl::InvalidArgumentError(absl::StrCat(
               "expected operands of this computation, found operand ", i,
               " \"", o.name(), "\" of ", o.builder_->DescribeComputationName())));
      return false;
    }
  }
  return true;
}

std::vector<const ShapeProto*> HloComputationBuilder::Shapes(
    absl::Span<const HloOp> ops) const {
  std::vector<const ShapeProto*> out;
  for (const HloOp& o : ops) out.push_back(&o.shape());
  return out;
}

xla::HloInstructionProto* HloComputationBuilder::At(HloOp op) {
  if (!op.valid() || op.builder_ != this) return nullptr;
  return proto_.mutable_instructions(op.index_);
}

absl::StatusOr<xla::ProgramShapeProto> HloComputationBuilder::ProgramShape()
    const {
  std::vector<const xla::HloInstructionProto*> params;
  for (const xla::HloInstructionProto& i : proto_.instructions()) {
    if (i.opcode() == "parameter") params.push_back(&i);
  }
  std::vector<const xla::HloInstructionProto*> by_number(params.size(), nullptr);
  for (const xla::HloInstructionProto* p : params) {
    const int64_t n = p->parameter_number();
    if (n < 0 || n >= static_cast<int64_t>(params.size()) ||
        by_number[n] != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          DescribeComputationName(), ": expected parameters numbered 0 to ",
          static_cast<int64_t>(params.size()) - 1, ", found ", n, " (\"",
          p->name(), "\")"));
    }
    by_number[n] = p;
  }
  if (proto_.instructions_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeComputationName(), ": expected instructions, found none"));
  }
  xla::ProgramShapeProto ps;
  for (const xla::HloInstructionProto* p : by_number) {
    *ps.add_parameters() = p->shape();
    ps.add_parameter_names(p->name());
  }
  const int64_t root = RootId();
  for (const xla::HloInstructionProto& i : proto_.instructions()) {
    if (i.id() == root) *ps.mutable_result() = i.shape();
  }
  return ps;
}

int64_t HloComputationBuilder::RootId() const {
  if (root_id_ >= 0) return root_id_;
  if (proto_.instructions_size() == 0) return -1;
  return proto_.instructions(proto_.instructions_size() - 1).id();
}

absl::StatusOr<xla::ProgramShapeProto> HloComputationBuilder::Signature(
    const HloComputationBuilder& c, HloOpcode opcode) {
  if (c.module_ != module_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a computation of this module, found ",
        c.DescribeComputationName(), " of module \"", c.module_->name(), "\""));
  }
  if (&c == this) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a computation other than the caller, found ",
        DescribeComputationName(), " calling itself"));
  }
  absl::StatusOr<xla::ProgramShapeProto> ps = c.ProgramShape();
  if (!ps.ok()) return ps.status();
  c.sealed_ = true;
  (void)opcode;
  return ps;
}

HloOp HloComputationBuilder::Add(
    HloOpcode opcode, absl::StatusOr<ShapeProto> shape,
    absl::Span<const HloOp> operands,
    absl::Span<const HloComputationBuilder* const> called, std::string name) {
  if (!Usable()) return {};
  if (name.empty()) name = NextName(opcode);
  if (!shape.ok()) {
    Fail(name, shape.status());
    return {};
  }
  if (module_->instruction_names_.contains(name)) {
    Fail(name, absl::InvalidArgumentError(
                   "expected a name unique in the module, found it used "
                   "before"));
    return {};
  }
  module_->instruction_names_.insert(name);
  const int64_t id = module_->NextId();
  xla::HloInstructionProto* p = proto_.add_instructions();
  p->set_name(std::move(name));
  p->set_opcode(OpName(opcode));
  *p->mutable_shape() = *std::move(shape);
  p->set_id(id);
  for (const HloOp& o : operands) p->add_operand_ids(o.id());
  for (const HloComputationBuilder* c : called) {
    p->add_called_computation_ids(c->id());
    if (std::find(callees_.begin(), callees_.end(), c) == callees_.end()) {
      callees_.push_back(c);
    }
  }
  HloOp op;
  op.builder_ = this;
  op.id_ = id;
  op.index_ = proto_.instructions_size() - 1;
  return op;
}

// Each method: check the operands, compute the shape with the rule, add,
// then fill the opcode's fields.

HloOp HloComputationBuilder::Parameter(int64_t number, const ShapeProto& shape,
                                       std::string name) {
  if (!Ready(HloOpcode::kParameter, {})) return {};
  absl::StatusOr<ShapeProto> s = shape;
  if (absl::Status c = CheckShapeWellFormed(shape); !c.ok()) {
    s = absl::InvalidArgumentError(absl::StrCat("parameter: shape: ", c.message()));
  }
  HloOp op = Add(HloOpcode::kParameter, s, {}, {}, std::move(name));
  if (auto* p = At(op)) p->set_parameter_number(number);
  return op;
}

HloOp HloComputationBuilder::Constant(const xla::LiteralProto& literal,
                                      std::string name) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  HloOp op = Add(HloOpcode::kConstant, InferConstantShape(literal), {}, {},
                 std::move(name));
  if (auto* p = At(op)) *p->mutable_literal() = literal;
  return op;
}

HloOp HloComputationBuilder::ConstantR0(int type, double value) {
  return ConstantArray(type, {}, {value});
}

HloOp HloComputationBuilder::ConstantR1(int type,
                                        absl::Span<const double> values) {
  return ConstantArray(type, {static_cast<int64_t>(values.size())}, values);
}

HloOp HloComputationBuilder::ConstantR2(
    int type, std::initializer_list<std::initializer_list<double>> rows) {
  std::vector<double> flat;
  const int64_t cols = rows.size() == 0 ? 0 : static_cast<int64_t>(rows.begin()->size());
  for (const auto& r : rows) {
    if (static_cast<int64_t>(r.size()) != cols) {
      if (Ready(HloOpcode::kConstant, {})) {
        Fail(NextName(HloOpcode::kConstant),
             absl::InvalidArgumentError("literal: expected rows of one length"));
      }
      return {};
    }
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return ConstantArray(type, {static_cast<int64_t>(rows.size()), cols}, flat);
}

HloOp HloComputationBuilder::ConstantArray(int type,
                                           absl::Span<const int64_t> dims,
                                           absl::Span<const double> values) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  absl::StatusOr<xla::LiteralProto> l = MakeLiteral(type, dims, values);
  if (!l.ok()) {
    Fail(NextName(HloOpcode::kConstant), l.status());
    return {};
  }
  return Constant(*l);
}

HloOp HloComputationBuilder::ConstantR0Int(int type, int64_t value) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  const int64_t v[] = {value};
  absl::StatusOr<xla::LiteralProto> l = MakeIntLiteral(type, {}, v);
  if (!l.ok()) {
    Fail(NextName(HloOpcode::kConstant), l.status());
    return {};
  }
  return Constant(*l);
}

HloOp HloComputationBuilder::ConstantR1Int(int type,
                                           absl::Span<const int64_t> values) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  absl::StatusOr<xla::LiteralProto> l =
      MakeIntLiteral(type, {static_cast<int64_t>(values.size())}, values);
  if (!l.ok()) {
    Fail(NextName(HloOpcode::kConstant), l.status());
    return {};
  }
  return Constant(*l);
}

HloOp HloComputationBuilder::ConstantR2Int(
    int type, std::initializer_list<std::initializer_list<int64_t>> rows) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  std::vector<int64_t> flat;
  const int64_t cols = rows.size() == 0 ? 0 : static_cast<int64_t>(rows.begin()->size());
  for (const auto& r : rows) {
    if (static_cast<int64_t>(r.size()) != cols) {
      Fail(NextName(HloOpcode::kConstant),
           absl::InvalidArgumentError("literal: expected rows of one length"));
      return {};
    }
    flat.insert(flat.end(), r.begin(), r.end());
  }
  absl::StatusOr<xla::LiteralProto> l =
      MakeIntLiteral(type, {static_cast<int64_t>(rows.size()), cols}, flat);
  if (!l.ok()) {
    Fail(NextName(HloOpcode::kConstant), l.status());
    return {};
  }
  return Constant(*l);
}

HloOp HloComputationBuilder::ConstantR1Complex(
    int type, absl::Span<const std::complex<double>> values) {
  if (!Ready(HloOpcode::kConstant, {})) return {};
  absl::StatusOr<xla::LiteralProto> l =
      MakeComplexLiteral(type, {static_cast<int64_t>(values.size())}, values);
  if (!l.ok()) {
    Fail(NextName(HloOpcode::kConstant), l.status());
    return {};
  }
  return Constant(*l);
}

HloOp HloComputationBuilder::Iota(const ShapeProto& shape,
                                  int64_t iota_dimension) {
  if (!Ready(HloOpcode::kIota, {})) return {};
  absl::StatusOr<ShapeProto> s = InferIotaShape(shape, iota_dimension);
  if (absl::Status c = CheckShapeWellFormed(shape); !c.ok()) {
    s = absl::InvalidArgumentError(absl::StrCat("iota: shape: ", c.message()));
  }
  HloOp op = Add(HloOpcode::kIota, s, {});
  if (auto* p = At(op)) p->add_dimensions(iota_dimension);
  return op;
}

HloOp HloComputationBuilder::ReplicaId() {
  if (!Ready(HloOpcode::kReplicaId, {})) return {};
  return Add(HloOpcode::kReplicaId, InferReplicaIdShape(), {});
}

HloOp HloComputationBuilder::PartitionId() {
  if (!Ready(HloOpcode::kPartitionId, {})) return {};
  return Add(HloOpcode::kPartitionId, InferReplicaIdShape(), {});
}

HloOp HloComputationBuilder::RngGetAndUpdateState(int64_t delta) {
  if (!Ready(HloOpcode::kRngGetAndUpdateState, {})) return {};
  HloOp op = Add(HloOpcode::kRngGetAndUpdateState,
                 InferRngGetAndUpdateStateShape(), {});
  if (auto* p = At(op)) p->set_delta(delta);
  return op;
}

HloOp HloComputationBuilder::AfterAll(absl::Span<const HloOp> tokens) {
  if (!Ready(HloOpcode::kAfterAll, tokens)) return {};
  for (const HloOp& t : tokens) {
    if (!IsTokenShape(t.shape())) {
      Fail(NextName(HloOpcode::kAfterAll),
           absl::InvalidArgumentError(absl::StrCat(
               "after-all: expected token operands, found ",
               DescribeShape(t.shape()))));
      return {};
    }
  }
  return Add(HloOpcode::kAfterAll, MakeTokenShape(), tokens);
}

HloOp HloComputationBuilder::Unary(HloOpcode opcode, HloOp x) {
  const HloOp ops[] = {x};
  if (!Ready(opcode, ops)) return {};
  if (!IsElementwiseUnary(opcode) || opcode == HloOpcode::kConvert ||
      opcode == HloOpcode::kBitcastConvert ||
      opcode == HloOpcode::kReducePrecision) {
    Fail(NextName(opcode), absl::InvalidArgumentError(absl::StrCat(
                               OpName(opcode),
                               ": expected a unary elementwise opcode without "
                               "attributes")));
    return {};
  }
  return Add(opcode, InferUnaryShape(opcode, x.shape()), ops);
}

HloOp HloComputationBuilder::Binary(HloOpcode opcode, HloOp a, HloOp b) {
  const HloOp ops[] = {a, b};
  if (!Ready(opcode, ops)) return {};
  if (!IsElementwiseBinary(opcode) || opcode == HloOpcode::kCompare ||
      opcode == HloOpcode::kStochasticConvert) {
    Fail(NextName(opcode), absl::InvalidArgumentError(absl::StrCat(
                               OpName(opcode),
                               ": expected a binary elementwise opcode without "
                               "attributes")));
    return {};
  }
  return Add(opcode, InferBinaryShape(opcode, a.shape(), b.shape()), ops);
}

#define DECOMPOSED_HLO_BUILDER_DEFINE_UNARY(name, op) \
  HloOp HloComputationBuilder::name(HloOp x) { return Unary(HloOpcode::op, x); }
#define DECOMPOSED_HLO_BUILDER_DEFINE_BINARY(name, op) \
  HloOp HloComputationBuilder::name(HloOp a, HloOp b) {  \
    return Binary(HloOpcode::op, a, b);                  \
  }
DECOMPOSED_HLO_BUILDER_UNARY(DECOMPOSED_HLO_BUILDER_DEFINE_UNARY)
DECOMPOSED_HLO_BUILDER_BINARY(DECOMPOSED_HLO_BUILDER_DEFINE_BINARY)
#undef DECOMPOSED_HLO_BUILDER_DEFINE_UNARY
#undef DECOMPOSED_HLO_BUILDER_DEFINE_BINARY

HloOp HloComputationBuilder::Compare(HloOp a, HloOp b,
                                     ComparisonDirection direction,
                                     std::optional<ComparisonType> type) {
  const HloOp ops[] = {a, b};
  if (!Ready(HloOpcode::kCompare, ops)) return {};
  HloOp op = Add(HloOpcode::kCompare,
                 InferBinaryShape(HloOpcode::kCompare, a.shape(), b.shape()), ops);
  if (auto* p = At(op)) {
    p->set_comparison_direction(std::string(ComparisonDirectionString(direction)));
    if (type.has_value()) {
      p->set_comparison_type(std::string(ComparisonTypeString(*type)));
    }
  }
  return op;
}

HloOp HloComputationBuilder::Select(HloOp pred, HloOp on_true, HloOp on_false) {
  const HloOp ops[] = {pred, on_true, on_false};
  if (!Ready(HloOpcode::kSelect, ops)) return {};
  return Add(HloOpcode::kSelect,
             InferSelectShape(pred.shape(), on_true.shape(), on_false.shape()),
             ops);
}

HloOp HloComputationBuilder::Clamp(HloOp min, HloOp x, HloOp max) {
  const HloOp ops[] = {min, x, max};
  if (!Ready(HloOpcode::kClamp, ops)) return {};
  return Add(HloOpcode::kClamp,
             InferClampShape(min.shape(), x.shape(), max.shape()), ops);
}

HloOp HloComputationBuilder::Convert(HloOp x, int type) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kConvert, ops)) return {};
  return Add(HloOpcode::kConvert, InferConvertShape(x.shape(), type), ops);
}

HloOp HloComputationBuilder::BitcastConvert(HloOp x, int type) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kBitcastConvert, ops)) return {};
  return Add(HloOpcode::kBitcastConvert, InferBitcastConvertShape(x.shape(), type),
             ops);
}

HloOp HloComputationBuilder::StochasticConvert(HloOp x, HloOp random, int type) {
  const HloOp ops[] = {x, random};
  if (!Ready(HloOpcode::kStochasticConvert, ops)) return {};
  return Add(HloOpcode::kStochasticConvert,
             InferStochasticConvertShape(x.shape(), random.shape(), type), ops);
}

HloOp HloComputationBuilder::ReducePrecision(HloOp x, int exponent_bits,
                                             int mantissa_bits) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kReducePrecision, ops)) return {};
  HloOp op = Add(HloOpcode::kReducePrecision,
                 InferReducePrecisionShape(x.shape(), exponent_bits, mantissa_bits),
                 ops);
  if (auto* p = At(op)) {
    p->set_exponent_bits(exponent_bits);
    p->set_mantissa_bits(mantissa_bits);
  }
  return op;
}

HloOp HloComputationBuilder::Broadcast(HloOp x,
                                       absl::Span<const int64_t> output_dims,
                                       absl::Span<const int64_t> dimensions) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kBroadcast, ops)) return {};
  HloOp op = Add(HloOpcode::kBroadcast,
                 InferBroadcastShape(x.shape(), output_dims, dimensions), ops);
  if (auto* p = At(op)) Assign(p->mutable_dimensions(), dimensions);
  return op;
}

HloOp HloComputationBuilder::Reshape(HloOp x, absl::Span<const int64_t> dims) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kReshape, ops)) return {};
  return Add(HloOpcode::kReshape, InferReshapeShape(x.shape(), dims), ops);
}

HloOp HloComputationBuilder::Transpose(HloOp x,
                                       absl::Span<const int64_t> permutation) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kTranspose, ops)) return {};
  HloOp op = Add(HloOpcode::kTranspose, InferTransposeShape(x.shape(), permutation),
                 ops);
  if (auto* p = At(op)) Assign(p->mutable_dimensions(), permutation);
  return op;
}

HloOp HloComputationBuilder::Slice(HloOp x, absl::Span<const int64_t> starts,
                                   absl::Span<const int64_t> limits,
                                   absl::Span<const int64_t> strides) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kSlice, ops)) return {};
  std::vector<int64_t> st(strides.begin(), strides.end());
  if (st.empty()) st.assign(starts.size(), 1);
  HloOp op = Add(HloOpcode::kSlice,
                 InferSliceShape(x.shape(), starts, limits, st), ops);
  if (auto* p = At(op)) {
    for (size_t i = 0; i < starts.size(); ++i) {
      auto* d = p->add_slice_dimensions();
      d->set_start(starts[i]);
      d->set_limit(limits[i]);
      d->set_stride(st[i]);
    }
  }
  return op;
}

HloOp HloComputationBuilder::DynamicSlice(HloOp x,
                                          absl::Span<const HloOp> starts,
                                          absl::Span<const int64_t> sizes) {
  std::vector<HloOp> ops = {x};
  ops.insert(ops.end(), starts.begin(), starts.end());
  if (!Ready(HloOpcode::kDynamicSlice, ops)) return {};
  HloOp op = Add(HloOpcode::kDynamicSlice,
                 InferDynamicSliceShape(x.shape(), Shapes(starts), sizes), ops);
  if (auto* p = At(op)) Assign(p->mutable_dynamic_slice_sizes(), sizes);
  return op;
}

HloOp HloComputationBuilder::DynamicUpdateSlice(HloOp x, HloOp update,
                                                absl::Span<const HloOp> starts) {
  std::vector<HloOp> ops = {x, update};
  ops.insert(ops.end(), starts.begin(), starts.end());
  if (!Ready(HloOpcode::kDynamicUpdateSlice, ops)) return {};
  return Add(HloOpcode::kDynamicUpdateSlice,
             InferDynamicUpdateSliceShape(x.shape(), update.shape(),
                                          Shapes(starts)),
             ops);
}

HloOp HloComputationBuilder::Concatenate(absl::Span<const HloOp> operands,
                                         int64_t dimension) {
  if (!Ready(HloOpcode::kConcatenate, operands)) return {};
  HloOp op = Add(HloOpcode::kConcatenate,
                 InferConcatenateShape(Shapes(operands), dimension), operands);
  if (auto* p = At(op)) p->add_dimensions(dimension);
  return op;
}

HloOp HloComputationBuilder::Pad(HloOp x, HloOp value,
                                 const xla::PaddingConfig& config) {
  const HloOp ops[] = {x, value};
  if (!Ready(HloOpcode::kPad, ops)) return {};
  HloOp op = Add(HloOpcode::kPad, InferPadShape(x.shape(), value.shape(), config),
                 ops);
  if (auto* p = At(op)) *p->mutable_padding_config() = config;
  return op;
}

HloOp HloComputationBuilder::Reverse(HloOp x,
                                     absl::Span<const int64_t> dimensions) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kReverse, ops)) return {};
  HloOp op = Add(HloOpcode::kReverse, InferReverseShape(x.shape(), dimensions),
                 ops);
  if (auto* p = At(op)) Assign(p->mutable_dimensions(), dimensions);
  return op;
}

HloOp HloComputationBuilder::Gather(HloOp x, HloOp indices,
                                    const xla::GatherDimensionNumbers& dnums,
                                    absl::Span<const int64_t> slice_sizes,
                                    bool indices_are_sorted) {
  const HloOp ops[] = {x, indices};
  if (!Ready(HloOpcode::kGather, ops)) return {};
  HloOp op = Add(HloOpcode::kGather,
                 InferGatherShape(x.shape(), indices.shape(), dnums, slice_sizes),
                 ops);
  if (auto* p = At(op)) {
    *p->mutable_gather_dimension_numbers() = dnums;
    Assign(p->mutable_gather_slice_sizes(), slice_sizes);
    p->set_indices_are_sorted(indices_are_sorted);
  }
  return op;
}

HloOp HloComputationBuilder::Scatter(
    absl::Span<const HloOp> operands, HloOp indices,
    absl::Span<const HloOp> updates, const HloComputationBuilder& computation,
    const xla::ScatterDimensionNumbers& dnums, bool indices_are_sorted,
    bool unique_indices) {
  std::vector<HloOp> ops(operands.begin(), operands.end());
  ops.push_back(indices);
  ops.insert(ops.end(), updates.begin(), updates.end());
  if (!Ready(HloOpcode::kScatter, ops)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(computation, HloOpcode::kScatter);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferScatterShape(Shapes(ops), *sig, dnums)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&computation};
  HloOp op = Add(HloOpcode::kScatter, s, ops, called);
  if (auto* p = At(op)) {
    *p->mutable_scatter_dimension_numbers() = dnums;
    p->set_indices_are_sorted(indices_are_sorted);
    p->set_unique_indices(unique_indices);
  }
  return op;
}

HloOp HloComputationBuilder::GetDimensionSize(HloOp x, int64_t dimension) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kGetDimensionSize, ops)) return {};
  HloOp op = Add(HloOpcode::kGetDimensionSize,
                 InferGetDimensionSizeShape(x.shape(), dimension), ops);
  if (auto* p = At(op)) p->add_dimensions(dimension);
  return op;
}

HloOp HloComputationBuilder::SetDimensionSize(HloOp x, HloOp size,
                                              int64_t dimension) {
  const HloOp ops[] = {x, size};
  if (!Ready(HloOpcode::kSetDimensionSize, ops)) return {};
  HloOp op = Add(HloOpcode::kSetDimensionSize,
                 InferSetDimensionSizeShape(x.shape(), size.shape(), dimension),
                 ops);
  if (auto* p = At(op)) p->add_dimensions(dimension);
  return op;
}

HloOp HloComputationBuilder::Bitcast(HloOp x, const ShapeProto& shape) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kBitcast, ops)) return {};
  absl::StatusOr<ShapeProto> s = shape;
  if (absl::Status c = CheckShapeWellFormed(shape); !c.ok()) {
    s = absl::InvalidArgumentError(absl::StrCat("bitcast: shape: ", c.message()));
  }
  return Add(HloOpcode::kBitcast, s, ops);
}

namespace {
xla::PrecisionConfig Precision(const xla::PrecisionConfig& given, int operands) {
  xla::PrecisionConfig p = given;
  while (p.operand_precision_size() < operands) {
    p.add_operand_precision(xla::PrecisionConfig::DEFAULT);
  }
  return p;
}
}  // namespace

HloOp HloComputationBuilder::Dot(HloOp a, HloOp b,
                                 const xla::DotDimensionNumbers& dnums,
                                 std::optional<int> result_type,
                                 const xla::PrecisionConfig& precision) {
  const HloOp ops[] = {a, b};
  if (!Ready(HloOpcode::kDot, ops)) return {};
  HloOp op = Add(HloOpcode::kDot,
                 InferDotShape(a.shape(), b.shape(), dnums, result_type), ops);
  if (auto* p = At(op)) {
    *p->mutable_dot_dimension_numbers() = dnums;
    *p->mutable_precision_config() = Precision(precision, 2);
  }
  return op;
}

HloOp HloComputationBuilder::Convolution(
    HloOp lhs, HloOp rhs, const xla::Window& window,
    const xla::ConvolutionDimensionNumbers& dnums, int64_t feature_group_count,
    int64_t batch_group_count, std::optional<int> result_type,
    const xla::PrecisionConfig& precision) {
  const HloOp ops[] = {lhs, rhs};
  if (!Ready(HloOpcode::kConvolution, ops)) return {};
  HloOp op = Add(HloOpcode::kConvolution,
                 InferConvolutionShape(lhs.shape(), rhs.shape(),
                                       feature_group_count, batch_group_count,
                                       window, dnums, result_type),
                 ops);
  if (auto* p = At(op)) {
    *p->mutable_window() = window;
    *p->mutable_convolution_dimension_numbers() = dnums;
    p->set_feature_group_count(feature_group_count);
    p->set_batch_group_count(batch_group_count);
    *p->mutable_precision_config() = Precision(precision, 2);
  }
  return op;
}

HloOp HloComputationBuilder::Reduce(absl::Span<const HloOp> inputs,
                                    absl::Span<const HloOp> inits,
                                    absl::Span<const int64_t> dimensions,
                                    const HloComputationBuilder& reducer) {
  std::vector<HloOp> ops(inputs.begin(), inputs.end());
  ops.insert(ops.end(), inits.begin(), inits.end());
  if (!Ready(HloOpcode::kReduce, ops)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig = Signature(reducer, HloOpcode::kReduce);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferReduceShape(Shapes(ops), dimensions, *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&reducer};
  HloOp op = Add(HloOpcode::kReduce, s, ops, called);
  if (auto* p = At(op)) Assign(p->mutable_dimensions(), dimensions);
  return op;
}

HloOp HloComputationBuilder::ReduceWindow(absl::Span<const HloOp> inputs,
                                          absl::Span<const HloOp> inits,
                                          const xla::Window& window,
                                          const HloComputationBuilder& reducer) {
  std::vector<HloOp> ops(inputs.begin(), inputs.end());
  ops.insert(ops.end(), inits.begin(), inits.end());
  if (!Ready(HloOpcode::kReduceWindow, ops)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(reducer, HloOpcode::kReduceWindow);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferReduceWindowShape(Shapes(ops), window, *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&reducer};
  HloOp op = Add(HloOpcode::kReduceWindow, s, ops, called);
  if (auto* p = At(op)) *p->mutable_window() = window;
  return op;
}

HloOp HloComputationBuilder::SelectAndScatter(
    HloOp x, const HloComputationBuilder& select, const xla::Window& window,
    HloOp source, HloOp init, const HloComputationBuilder& scatter) {
  const HloOp ops[] = {x, source, init};
  if (!Ready(HloOpcode::kSelectAndScatter, ops)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sel =
      Signature(select, HloOpcode::kSelectAndScatter);
  absl::StatusOr<xla::ProgramShapeProto> sca =
      sel.ok() ? Signature(scatter, HloOpcode::kSelectAndScatter) : sel;
  absl::StatusOr<ShapeProto> s =
      sca.ok() ? InferSelectAndScatterShape(x.shape(), *sel, window,
                                            source.shape(), init.shape(), *sca)
               : absl::StatusOr<ShapeProto>(sca.status());
  const HloComputationBuilder* called[] = {&select, &scatter};
  HloOp op = Add(HloOpcode::kSelectAndScatter, s, ops, called);
  if (auto* p = At(op)) *p->mutable_window() = window;
  return op;
}

HloOp HloComputationBuilder::Sort(absl::Span<const HloOp> operands,
                                  int64_t dimension,
                                  const HloComputationBuilder& comparator,
                                  bool is_stable) {
  if (!Ready(HloOpcode::kSort, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(comparator, HloOpcode::kSort);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferSortShape(Shapes(operands), dimension, *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&comparator};
  HloOp op = Add(HloOpcode::kSort, s, operands, called);
  if (auto* p = At(op)) {
    p->add_dimensions(dimension);
    p->set_is_stable(is_stable);
  }
  return op;
}

HloOp HloComputationBuilder::TopK(HloOp x, int64_t k, bool largest) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kTopK, ops)) return {};
  HloOp op = Add(HloOpcode::kTopK, InferTopKShape(x.shape(), k), ops);
  if (auto* p = At(op)) {
    p->set_k(k);
    p->set_largest(largest);
  }
  return op;
}

HloOp HloComputationBuilder::Map(absl::Span<const HloOp> operands,
                                 const HloComputationBuilder& computation) {
  if (!Ready(HloOpcode::kMap, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig = Signature(computation, HloOpcode::kMap);
  int64_t rank = 0;
  for (const HloOp& o : operands) rank = std::max<int64_t>(rank, o.shape().dimensions_size());
  const std::vector<int64_t> dims = hlo::Iota(rank);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferMapShape(Shapes(operands), *sig, dims)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&computation};
  HloOp op = Add(HloOpcode::kMap, s, operands, called);
  if (auto* p = At(op)) Assign(p->mutable_dimensions(), dims);
  return op;
}

HloOp HloComputationBuilder::Tuple(absl::Span<const HloOp> elements) {
  if (!Ready(HloOpcode::kTuple, elements)) return {};
  return Add(HloOpcode::kTuple, InferTupleShape(Shapes(elements)), elements);
}

HloOp HloComputationBuilder::GetTupleElement(HloOp tuple, int64_t index) {
  const HloOp ops[] = {tuple};
  if (!Ready(HloOpcode::kGetTupleElement, ops)) return {};
  HloOp op = Add(HloOpcode::kGetTupleElement,
                 InferGetTupleElementShape(tuple.shape(), index), ops);
  if (auto* p = At(op)) p->set_tuple_index(index);
  return op;
}

HloOp HloComputationBuilder::Call(const HloComputationBuilder& computation,
                                  absl::Span<const HloOp> operands) {
  if (!Ready(HloOpcode::kCall, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig = Signature(computation, HloOpcode::kCall);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferCallShape(Shapes(operands), *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&computation};
  return Add(HloOpcode::kCall, s, operands, called);
}

HloOp HloComputationBuilder::While(const HloComputationBuilder& condition,
                                   const HloComputationBuilder& body,
                                   HloOp init) {
  const HloOp ops[] = {init};
  if (!Ready(HloOpcode::kWhile, ops)) return {};
  absl::StatusOr<xla::ProgramShapeProto> cond = Signature(condition, HloOpcode::kWhile);
  absl::StatusOr<xla::ProgramShapeProto> b =
      cond.ok() ? Signature(body, HloOpcode::kWhile) : cond;
  absl::StatusOr<ShapeProto> s =
      b.ok() ? InferWhileShape(*cond, *b, init.shape())
             : absl::StatusOr<ShapeProto>(b.status());
  // XLA keeps the body first.
  const HloComputationBuilder* called[] = {&body, &condition};
  return Add(HloOpcode::kWhile, s, ops, called);
}

HloOp HloComputationBuilder::Conditional(
    HloOp index, absl::Span<const HloOp> branch_operands,
    absl::Span<const HloComputationBuilder* const> branches) {
  std::vector<HloOp> ops = {index};
  ops.insert(ops.end(), branch_operands.begin(), branch_operands.end());
  if (!Ready(HloOpcode::kConditional, ops)) return {};
  std::vector<xla::ProgramShapeProto> sigs;
  absl::Status st;
  for (const HloComputationBuilder* b : branches) {
    absl::StatusOr<xla::ProgramShapeProto> sig = Signature(*b, HloOpcode::kConditional);
    if (!sig.ok()) {
      st = sig.status();
      break;
    }
    sigs.push_back(*std::move(sig));
  }
  absl::StatusOr<ShapeProto> s =
      st.ok() ? InferConditionalShape(index.shape(), sigs, Shapes(branch_operands))
              : absl::StatusOr<ShapeProto>(st);
  return Add(HloOpcode::kConditional, s, ops, branches);
}

HloOp HloComputationBuilder::Fusion(std::string_view kind,
                                    absl::Span<const HloOp> operands,
                                    const HloComputationBuilder& fused) {
  if (!Ready(HloOpcode::kFusion, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig = Signature(fused, HloOpcode::kFusion);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferFusionShape(Shapes(operands), *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  if (s.ok() && kind != "kLoop" && kind != "kInput" && kind != "kOutput" &&
      kind != "kCustom") {
    s = absl::InvalidArgumentError(absl::StrCat(
        "fusion: expected kind kLoop, kInput, kOutput or kCustom, found \"",
        Sv(kind), "\""));
  }
  const HloComputationBuilder* called[] = {&fused};
  HloOp op = Add(HloOpcode::kFusion, s, operands, called);
  if (auto* p = At(op)) {
    p->set_fusion_kind(std::string(kind));
    fused.fusion_ = true;
  }
  return op;
}

HloOp HloComputationBuilder::CustomCall(std::string_view target,
                                        absl::Span<const HloOp> operands,
                                        const ShapeProto& shape,
                                        std::string_view backend_config) {
  if (!Ready(HloOpcode::kCustomCall, operands)) return {};
  absl::StatusOr<ShapeProto> s = shape;
  if (absl::Status c = CheckShapeWellFormed(shape); !c.ok()) {
    s = absl::InvalidArgumentError(absl::StrCat("custom-call: shape: ", c.message()));
  }
  HloOp op = Add(HloOpcode::kCustomCall, s, operands);
  if (auto* p = At(op)) {
    p->set_custom_call_target(std::string(target));
    p->set_backend_config(std::string(backend_config));
    p->set_custom_call_api_version(xla::API_VERSION_ORIGINAL);
  }
  return op;
}

HloOp HloComputationBuilder::BatchNormTraining(HloOp x, HloOp scale,
                                               HloOp offset, float epsilon,
                                               int64_t feature_index) {
  const HloOp ops[] = {x, scale, offset};
  if (!Ready(HloOpcode::kBatchNormTraining, ops)) return {};
  HloOp op = Add(HloOpcode::kBatchNormTraining,
                 InferBatchNormTrainingShape(x.shape(), scale.shape(),
                                             offset.shape(), feature_index),
                 ops);
  if (auto* p = At(op)) {
    p->set_epsilon(epsilon);
    p->set_feature_index(feature_index);
  }
  return op;
}

HloOp HloComputationBuilder::BatchNormInference(HloOp x, HloOp scale,
                                                HloOp offset, HloOp mean,
                                                HloOp variance, float epsilon,
                                                int64_t feature_index) {
  const HloOp ops[] = {x, scale, offset, mean, variance};
  if (!Ready(HloOpcode::kBatchNormInference, ops)) return {};
  HloOp op = Add(HloOpcode::kBatchNormInference,
                 InferBatchNormInferenceShape(x.shape(), scale.shape(),
                                              offset.shape(), mean.shape(),
                                              variance.shape(), feature_index),
                 ops);
  if (auto* p = At(op)) {
    p->set_epsilon(epsilon);
    p->set_feature_index(feature_index);
  }
  return op;
}

HloOp HloComputationBuilder::BatchNormGrad(HloOp x, HloOp scale, HloOp mean,
                                           HloOp variance, HloOp grad_output,
                                           float epsilon,
                                           int64_t feature_index) {
  const HloOp ops[] = {x, scale, mean, variance, grad_output};
  if (!Ready(HloOpcode::kBatchNormGrad, ops)) return {};
  HloOp op = Add(HloOpcode::kBatchNormGrad,
                 InferBatchNormGradShape(x.shape(), scale.shape(), mean.shape(),
                                         variance.shape(), grad_output.shape(),
                                         feature_index),
                 ops);
  if (auto* p = At(op)) {
    p->set_epsilon(epsilon);
    p->set_feature_index(feature_index);
  }
  return op;
}

void HloComputationBuilder::SetCollective(xla::HloInstructionProto* p,
                                          const CollectiveOptions& o) {
  for (const auto& g : o.replica_groups) {
    xla::ReplicaGroup* r = p->add_replica_groups();
    for (int64_t id : g) r->add_replica_ids(id);
  }
  if (o.channel_id.has_value()) p->set_channel_id(*o.channel_id);
  p->set_use_global_device_ids(o.use_global_device_ids);
  p->set_constrain_layout(o.constrain_layout);
}

namespace {
int64_t GroupSize(const CollectiveOptions& o, std::optional<int64_t> given) {
  if (given.has_value()) return *given;
  return o.replica_groups.empty()
             ? 1
             : static_cast<int64_t>(o.replica_groups[0].size());
}
}  // namespace

HloOp HloComputationBuilder::AllReduce(absl::Span<const HloOp> operands,
                                       const HloComputationBuilder& reducer,
                                       const CollectiveOptions& options) {
  if (!Ready(HloOpcode::kAllReduce, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(reducer, HloOpcode::kAllReduce);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferAllReduceShape(Shapes(operands))
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&reducer};
  HloOp op = Add(HloOpcode::kAllReduce, s, operands, called);
  if (auto* p = At(op)) SetCollective(p, options);
  return op;
}

HloOp HloComputationBuilder::AllReduceStart(absl::Span<const HloOp> operands,
                                            const HloComputationBuilder& reducer,
                                            const CollectiveOptions& options) {
  if (!Ready(HloOpcode::kAllReduceStart, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(reducer, HloOpcode::kAllReduceStart);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferAllReduceShape(Shapes(operands))
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&reducer};
  HloOp op = Add(HloOpcode::kAllReduceStart, s, operands, called);
  if (auto* p = At(op)) SetCollective(p, options);
  return op;
}

HloOp HloComputationBuilder::AllReduceDone(HloOp start) {
  const HloOp ops[] = {start};
  if (!Ready(HloOpcode::kAllReduceDone, ops)) return {};
  return Add(HloOpcode::kAllReduceDone, start.shape(), ops);
}

HloOp HloComputationBuilder::AllGather(absl::Span<const HloOp> operands,
                                       int64_t dimension,
                                       const CollectiveOptions& options,
                                       std::optional<int64_t> shard_count) {
  if (!Ready(HloOpcode::kAllGather, operands)) return {};
  HloOp op = Add(HloOpcode::kAllGather,
                 InferAllGatherShape(Shapes(operands), dimension,
                                     GroupSize(options, shard_count)),
                 operands);
  if (auto* p = At(op)) {
    SetCollective(p, options);
    p->add_dimensions(dimension);
  }
  return op;
}

HloOp HloComputationBuilder::AllGatherStart(absl::Span<const HloOp> operands,
                                            int64_t dimension,
                                            const CollectiveOptions& options,
                                            std::optional<int64_t> shard_count) {
  if (!Ready(HloOpcode::kAllGatherStart, operands)) return {};
  HloOp op = Add(HloOpcode::kAllGatherStart,
                 InferAllGatherStartShape(Shapes(operands), dimension,
                                          GroupSize(options, shard_count)),
                 operands);
  if (auto* p = At(op)) {
    SetCollective(p, options);
    p->add_dimensions(dimension);
  }
  return op;
}

HloOp HloComputationBuilder::AllGatherDone(HloOp start) {
  const HloOp ops[] = {start};
  if (!Ready(HloOpcode::kAllGatherDone, ops)) return {};
  return Add(HloOpcode::kAllGatherDone,
             InferAsyncCollectiveDoneShape(HloOpcode::kAllGatherDone,
                                           start.shape()),
             ops);
}

HloOp HloComputationBuilder::ReduceScatter(absl::Span<const HloOp> operands,
                                           const HloComputationBuilder& reducer,
                                           int64_t dimension,
                                           const CollectiveOptions& options,
                                           std::optional<int64_t> shard_count) {
  if (!Ready(HloOpcode::kReduceScatter, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(reducer, HloOpcode::kReduceScatter);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferReduceScatterShape(Shapes(operands), dimension,
                                         GroupSize(options, shard_count))
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&reducer};
  HloOp op = Add(HloOpcode::kReduceScatter, s, operands, called);
  if (auto* p = At(op)) {
    SetCollective(p, options);
    p->add_dimensions(dimension);
  }
  return op;
}

HloOp HloComputationBuilder::AllToAll(absl::Span<const HloOp> operands,
                                      std::optional<int64_t> split_dimension,
                                      const CollectiveOptions& options) {
  if (!Ready(HloOpcode::kAllToAll, operands)) return {};
  absl::StatusOr<ShapeProto> s;
  if (split_dimension.has_value()) {
    if (operands.size() != 1) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "all-to-all: expected 1 operand with a split dimension, found ",
          operands.size()));
    } else {
      s = InferAllToAllShape(operands[0].shape(), *split_dimension,
                             *split_dimension, GroupSize(options, std::nullopt));
    }
  } else {
    s = InferAllToAllTupleShape(Shapes(operands));
  }
  HloOp op = Add(HloOpcode::kAllToAll, s, operands);
  if (auto* p = At(op)) {
    SetCollective(p, options);
    p->clear_use_global_device_ids();
    if (split_dimension.has_value()) p->add_dimensions(*split_dimension);
  }
  return op;
}

HloOp HloComputationBuilder::CollectivePermute(
    HloOp x, absl::Span<const std::pair<int64_t, int64_t>> pairs,
    std::optional<int64_t> channel_id) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kCollectivePermute, ops)) return {};
  HloOp op = Add(HloOpcode::kCollectivePermute,
                 InferCollectivePermuteShape(Shapes(ops)), ops);
  if (auto* p = At(op)) {
    for (const auto& [s, t] : pairs) {
      xla::SourceTarget* st = p->add_source_target_pairs();
      st->set_source(s);
      st->set_target(t);
    }
    if (channel_id.has_value()) p->set_channel_id(*channel_id);
  }
  return op;
}

HloOp HloComputationBuilder::CollectivePermuteStart(
    HloOp x, absl::Span<const std::pair<int64_t, int64_t>> pairs,
    std::optional<int64_t> channel_id) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kCollectivePermuteStart, ops)) return {};
  HloOp op = Add(HloOpcode::kCollectivePermuteStart,
                 InferCollectivePermuteStartShape(Shapes(ops)), ops);
  if (auto* p = At(op)) {
    for (const auto& [s, t] : pairs) {
      xla::SourceTarget* st = p->add_source_target_pairs();
      st->set_source(s);
      st->set_target(t);
    }
    if (channel_id.has_value()) p->set_channel_id(*channel_id);
  }
  return op;
}

HloOp HloComputationBuilder::CollectivePermuteDone(HloOp start) {
  const HloOp ops[] = {start};
  if (!Ready(HloOpcode::kCollectivePermuteDone, ops)) return {};
  return Add(HloOpcode::kCollectivePermuteDone,
             InferAsyncCollectiveDoneShape(HloOpcode::kCollectivePermuteDone,
                                           start.shape()),
             ops);
}

HloOp HloComputationBuilder::Rng(HloOp a, HloOp b, int distribution,
                                 absl::Span<const int64_t> dims) {
  const HloOp ops[] = {a, b};
  if (!Ready(HloOpcode::kRng, ops)) return {};
  HloOp op = Add(HloOpcode::kRng,
                 InferRngShape(a.shape(), b.shape(), distribution,
                               MakeArrayShape(a.shape().element_type(), dims)),
                 ops);
  if (auto* p = At(op)) {
    p->set_distribution(static_cast<xla::RandomDistribution>(distribution));
  }
  return op;
}

HloOp HloComputationBuilder::RngBitGenerator(HloOp state, int algorithm,
                                             const ShapeProto& output) {
  const HloOp ops[] = {state};
  if (!Ready(HloOpcode::kRngBitGenerator, ops)) return {};
  HloOp op = Add(HloOpcode::kRngBitGenerator,
                 InferRngBitGeneratorShape(state.shape(), output), ops);
  if (auto* p = At(op)) {
    p->set_rng_algorithm(static_cast<xla::RandomAlgorithm>(algorithm));
  }
  return op;
}

HloOp HloComputationBuilder::AddDependency(HloOp x, HloOp token) {
  const HloOp ops[] = {x, token};
  if (!Ready(HloOpcode::kAddDependency, ops)) return {};
  return Add(HloOpcode::kAddDependency,
             InferAddDependencyShape(x.shape(), token.shape()), ops);
}

HloOp HloComputationBuilder::OptimizationBarrier(HloOp x) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kOptimizationBarrier, ops)) return {};
  return Add(HloOpcode::kOptimizationBarrier, x.shape(), ops);
}

HloOp HloComputationBuilder::Domain(HloOp x) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kDomain, ops)) return {};
  return Add(HloOpcode::kDomain, x.shape(), ops);
}

HloOp HloComputationBuilder::Cholesky(HloOp a, bool lower) {
  const HloOp ops[] = {a};
  if (!Ready(HloOpcode::kCholesky, ops)) return {};
  HloOp op = Add(HloOpcode::kCholesky, InferCholeskyShape(a.shape()), ops);
  if (auto* p = At(op)) p->mutable_cholesky_options()->set_lower(lower);
  return op;
}

HloOp HloComputationBuilder::TriangularSolve(
    HloOp a, HloOp b, const xla::TriangularSolveOptions& options) {
  const HloOp ops[] = {a, b};
  if (!Ready(HloOpcode::kTriangularSolve, ops)) return {};
  HloOp op = Add(HloOpcode::kTriangularSolve,
                 InferTriangularSolveShape(a.shape(), b.shape(), options), ops);
  if (auto* p = At(op)) *p->mutable_triangular_solve_options() = options;
  return op;
}

HloOp HloComputationBuilder::Fft(HloOp x, int fft_type,
                                 absl::Span<const int64_t> fft_length) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kFft, ops)) return {};
  HloOp op = Add(HloOpcode::kFft, InferFftShape(x.shape(), fft_type, fft_length),
                 ops);
  if (auto* p = At(op)) {
    p->set_fft_type(static_cast<xla::FftType>(fft_type));
    Assign(p->mutable_fft_length(), fft_length);
  }
  return op;
}

HloOp HloComputationBuilder::CopyStart(HloOp x) {
  const HloOp ops[] = {x};
  if (!Ready(HloOpcode::kCopyStart, ops)) return {};
  return Add(HloOpcode::kCopyStart, InferCopyStartShape(x.shape()), ops);
}

HloOp HloComputationBuilder::CopyDone(HloOp start) {
  const HloOp ops[] = {start};
  if (!Ready(HloOpcode::kCopyDone, ops)) return {};
  return Add(HloOpcode::kCopyDone, InferCopyDoneShape(start.shape()), ops);
}

HloOp HloComputationBuilder::Send(HloOp data, HloOp token, int64_t channel_id,
                                  bool is_host_transfer) {
  const HloOp ops[] = {data, token};
  if (!Ready(HloOpcode::kSend, ops)) return {};
  HloOp op = Add(HloOpcode::kSend, InferSendShape(data.shape(), token.shape()),
                 ops);
  if (auto* p = At(op)) {
    p->set_channel_id(channel_id);
    p->set_is_host_transfer(is_host_transfer);
  }
  return op;
}

HloOp HloComputationBuilder::SendDone(HloOp send) {
  const HloOp ops[] = {send};
  if (!Ready(HloOpcode::kSendDone, ops)) return {};
  HloOp op = Add(HloOpcode::kSendDone, MakeTokenShape(), ops);
  if (auto* p = At(op)) {
    const xla::HloInstructionProto* s = At(send);
    p->set_channel_id(s->channel_id());
    p->set_is_host_transfer(s->is_host_transfer());
  }
  return op;
}

HloOp HloComputationBuilder::Recv(HloOp token, const ShapeProto& data,
                                  int64_t channel_id, bool is_host_transfer) {
  const HloOp ops[] = {token};
  if (!Ready(HloOpcode::kRecv, ops)) return {};
  HloOp op = Add(HloOpcode::kRecv, InferRecvShape(data, token.shape()), ops);
  if (auto* p = At(op)) {
    p->set_channel_id(channel_id);
    p->set_is_host_transfer(is_host_transfer);
  }
  return op;
}

HloOp HloComputationBuilder::RecvDone(HloOp recv) {
  const HloOp ops[] = {recv};
  if (!Ready(HloOpcode::kRecvDone, ops)) return {};
  HloOp op = Add(HloOpcode::kRecvDone, InferRecvDoneShape(recv.shape()), ops);
  if (auto* p = At(op)) {
    const xla::HloInstructionProto* r = At(recv);
    p->set_channel_id(r->channel_id());
    p->set_is_host_transfer(r->is_host_transfer());
  }
  return op;
}

HloOp HloComputationBuilder::Infeed(HloOp token, const ShapeProto& data,
                                    std::string_view config) {
  const HloOp ops[] = {token};
  if (!Ready(HloOpcode::kInfeed, ops)) return {};
  HloOp op = Add(HloOpcode::kInfeed, InferInfeedShape(data, token.shape()), ops);
  if (auto* p = At(op)) p->set_infeed_config(std::string(config));
  return op;
}

HloOp HloComputationBuilder::Outfeed(HloOp data, HloOp token,
                                     std::string_view config) {
  const HloOp ops[] = {data, token};
  if (!Ready(HloOpcode::kOutfeed, ops)) return {};
  HloOp op = Add(HloOpcode::kOutfeed,
                 InferOutfeedShape(data.shape(), token.shape(), data.shape()), ops);
  if (auto* p = At(op)) {
    p->set_outfeed_config(std::string(config));
    *p->mutable_outfeed_shape() = data.shape();
  }
  return op;
}

HloOp HloComputationBuilder::AsyncStart(const HloComputationBuilder& wrapped,
                                        absl::Span<const HloOp> operands) {
  if (!Ready(HloOpcode::kAsyncStart, operands)) return {};
  absl::StatusOr<xla::ProgramShapeProto> sig =
      Signature(wrapped, HloOpcode::kAsyncStart);
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferAsyncStartShape(Shapes(operands), *sig, {})
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {&wrapped};
  return Add(HloOpcode::kAsyncStart, s, operands, called);
}

HloOp HloComputationBuilder::AsyncUpdate(HloOp start) {
  const HloOp ops[] = {start};
  if (!Ready(HloOpcode::kAsyncUpdate, ops)) return {};
  const HloComputationBuilder* wrapped = WrappedBy(start);
  if (wrapped == nullptr) {
    Fail(NextName(HloOpcode::kAsyncUpdate),
         absl::InvalidArgumentError(
             "async-update: expected an async-start or async-update operand"));
    return {};
  }
  const HloComputationBuilder* called[] = {wrapped};
  return Add(HloOpcode::kAsyncUpdate, start.shape(), ops, called);
}

HloOp HloComputationBuilder::AsyncDone(HloOp start_or_update) {
  const HloOp ops[] = {start_or_update};
  if (!Ready(HloOpcode::kAsyncDone, ops)) return {};
  const HloComputationBuilder* wrapped = WrappedBy(start_or_update);
  if (wrapped == nullptr) {
    Fail(NextName(HloOpcode::kAsyncDone),
         absl::InvalidArgumentError(
             "async-done: expected an async-start or async-update operand"));
    return {};
  }
  absl::StatusOr<xla::ProgramShapeProto> sig = wrapped->ProgramShape();
  absl::StatusOr<ShapeProto> s =
      sig.ok() ? InferAsyncDoneShape(start_or_update.shape(), *sig)
               : absl::StatusOr<ShapeProto>(sig.status());
  const HloComputationBuilder* called[] = {wrapped};
  return Add(HloOpcode::kAsyncDone, s, ops, called);
}

const HloComputationBuilder* HloComputationBuilder::WrappedBy(HloOp op) {
  const xla::HloInstructionProto* p = At(op);
  if (p == nullptr || (p->opcode() != "async-start" && p->opcode() != "async-update") ||
      p->called_computation_ids_size() != 1) {
    return nullptr;
  }
  for (const auto& c : module_->computations_) {
    if (c->id() == p->called_computation_ids(0)) return c.get();
  }
  return nullptr;
}

HloOp HloComputationBuilder::AddInstruction(
    xla::HloInstructionProto proto, absl::Span<const HloOp> operands,
    absl::Span<const HloComputationBuilder* const> called) {
  const HloOpcode opcode =
      HloOpcodeFromString(proto.opcode()).value_or(HloOpcode::kUnknown);
  if (!Ready(opcode, operands)) return {};
  for (const HloComputationBuilder* c : called) {
    if (c->module_ != module_) {
      Fail(proto.name().empty() ? NextName(opcode) : proto.name(),
           absl::InvalidArgumentError(
               "expected called computations of this module"));
      return {};
    }
    c->sealed_ = true;
  }
  std::string name = proto.name();
  if (name.empty()) {
    name = absl::StrCat(proto.opcode(), ".", module_->next_id_);
  }
  const std::string opcode_string = proto.opcode();
  HloOp op = Add(opcode, proto.shape(), operands, called, name);
  if (auto* p = At(op)) {
    xla::HloInstructionProto filled = std::move(proto);
    filled.set_id(p->id());
    filled.set_name(p->name());
    filled.set_opcode(opcode_string);
    filled.clear_operand_ids();
    for (const HloOp& o : operands) filled.add_operand_ids(o.id());
    filled.clear_called_computation_ids();
    for (const HloComputationBuilder* c : called) {
      filled.add_called_computation_ids(c->id());
    }
    *p = std::move(filled);
  }
  return op;
}

void HloComputationBuilder::SetShape(HloOp op, const ShapeProto& shape) {
  if (auto* p = At(op)) *p->mutable_shape() = shape;
}
void HloComputationBuilder::SetMetadata(HloOp op, const xla::OpMetadata& m) {
  if (auto* p = At(op)) *p->mutable_metadata() = m;
}
void HloComputationBuilder::SetFrontendAttribute(HloOp op, std::string_view key,
                                                 std::string_view value) {
  if (auto* p = At(op)) {
    (*p->mutable_frontend_attributes()->mutable_map())[std::string(key)] =
        std::string(value);
  }
}
void HloComputationBuilder::SetSharding(HloOp op, const xla::OpSharding& s) {
  if (auto* p = At(op)) *p->mutable_sharding() = s;
}
void HloComputationBuilder::SetBackendConfig(HloOp op, std::string_view config) {
  if (auto* p = At(op)) p->set_backend_config(std::string(config));
}
void HloComputationBuilder::AddControlDependency(HloOp predecessor,
                                                 HloOp successor) {
  if (!Usable()) return;
  xla::HloInstructionProto* s = At(successor);
  if (At(predecessor) == nullptr || s == nullptr) {
    Fail("", absl::InvalidArgumentError(
                 "control dependency: expected two instructions of this "
                 "computation"));
    return;
  }
  s->add_control_predecessor_ids(predecessor.id());
}
void HloComputationBuilder::SetRoot(HloOp op) {
  if (!Usable()) return;
  if (At(op) == nullptr) {
    Fail("", absl::InvalidArgumentError(
                 "root: expected an instruction of this computation"));
    return;
  }
  if (sealed_) {
    Fail("", absl::FailedPreconditionError(
                 "root: expected it set before the computation is called, "
                 "found it called already"));
    return;
  }
  root_id_ = op.id();
}
HloOp HloComputationBuilder::InstructionAt(int64_t index) {
  HloOp op;
  if (index < 0 || index >= proto_.instructions_size()) return op;
  op.builder_ = this;
  op.index_ = static_cast<int>(index);
  op.id_ = proto_.instructions(op.index_).id();
  return op;
}

xla::HloInstructionProto* HloComputationBuilder::mutable_proto(HloOp op) {
  return At(op);
}

// --- HloModuleBuilder -----------------------------------------------------------------

HloModuleBuilder::HloModuleBuilder(std::string name) : name_(std::move(name)) {}

HloComputationBuilder& HloModuleBuilder::AddComputation(std::string name) {
  const int64_t id = NextId();
  if (name.empty()) name = absl::StrCat("computation.", id);
  if (!computation_names_.insert(name).second) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "computation \"", name,
        "\": expected a computation name unique in the module, found it used "
        "before")));
  }
  computations_.push_back(std::unique_ptr<HloComputationBuilder>(
      new HloComputationBuilder(this, std::move(name), id)));
  return *computations_.back();
}

HloComputationBuilder& HloModuleBuilder::AddEntryComputation(std::string name) {
  HloComputationBuilder& c = AddComputation(std::move(name));
  if (entry_ != nullptr) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "module \"", name_, "\": expected one entry computation, found ",
        entry_->DescribeComputationName(), " and ",
        c.DescribeComputationName())));
  }
  entry_ = &c;
  return c;
}

absl::StatusOr<xla::HloModuleProto> HloModuleBuilder::Build() const {
  if (!status_.ok()) return status_;
  if (entry_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "module \"", name_, "\": expected an entry computation, found none"));
  }
  // Signatures first: every computation has instructions and dense
  // parameter numbers.
  absl::flat_hash_map<const HloComputationBuilder*, xla::ProgramShapeProto> sigs;
  for (const auto& c : computations_) {
    absl::StatusOr<xla::ProgramShapeProto> s = c->ProgramShape();
    if (!s.ok()) return s.status();
    sigs.emplace(c.get(), *std::move(s));
  }
  // Post-order of the call graph from each computation, the entry last.
  std::vector<const HloComputationBuilder*> order;
  absl::flat_hash_set<const HloComputationBuilder*> done;
  std::function<void(const HloComputationBuilder*)> visit =
      [&](const HloComputationBuilder* c) {
        if (!done.insert(c).second) return;
        for (const HloComputationBuilder* callee : c->callees_) visit(callee);
        order.push_back(c);
      };
  for (const auto& c : computations_) {
    if (c.get() != entry_) visit(c.get());
  }
  visit(entry_);
  xla::HloModuleProto m;
  m.set_name(name_);
  m.set_entry_computation_name(entry_->name());
  m.set_entry_computation_id(entry_->id());
  m.set_id(entry_->id());
  for (const HloComputationBuilder* c : order) {
    xla::HloComputationProto* cp = m.add_computations();
    *cp = c->proto_;
    cp->set_root_id(c->RootId());
    *cp->mutable_program_shape() = sigs.at(c);
    if (c->fusion_) cp->set_is_fusion_computation(true);
  }
  xla::ProgramShapeProto host = sigs.at(entry_);
  host.clear_parameter_names();
  *m.mutable_host_program_shape() = host;
  return m;
}

}  // namespace decomposed::hlo
