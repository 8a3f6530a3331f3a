// libFuzzer target: the evaluator (eval/evaluate.h) on modules built from
// the fuzzer's bytes. The bytes drive a small generator: two parameters of
// small shapes, then up to 24 instructions, each an opcode from a list of
// the evaluator's families with operands chosen among the earlier
// instructions, a declared shape that is usually the consistent one and
// sometimes not, and attributes (dimensions, slices, padding, dot and
// gather numbers, a reducer) taken from the bytes, valid or not. The
// evaluator must never crash, hang or allocate past its limit: it returns
// a value or a status, with max_array_bytes 1 MiB and max_loop_iterations
// 64.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "decomposed/eval/evaluate.h"
#include "decomposed/hlo/module.h"

namespace {

using namespace decomposed;

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t Next() { return i_ < n_ ? d_[i_++] : 0; }
  int64_t Small(int64_t m) { return static_cast<int64_t>(Next() % (m + 1)); }
  bool empty() const { return i_ >= n_; }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

xla::ShapeProto Shape(PrimitiveType t, const std::vector<int64_t>& dims) {
  xla::ShapeProto s;
  s.set_element_type(static_cast<xla::PrimitiveType>(t));
  for (int64_t d : dims) s.add_dimensions(d);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) s.mutable_layout()->add_minor_to_major(d);
  return s;
}

const char* const kOps[] = {
    "add", "multiply", "divide", "maximum", "compare", "select", "exponential", "negate", "convert",
    "broadcast", "reshape", "transpose", "slice", "reverse", "concatenate", "pad", "iota", "reduce",
    "dot", "dynamic-slice", "dynamic-update-slice", "gather", "sort", "tuple", "get-tuple-element",
    "shift-left", "remainder", "clamp", "reduce-window", "bitcast", "constant", "while"};
const PrimitiveType kTypes[] = {PrimitiveType::kF32, PrimitiveType::kS32, PrimitiveType::kBF16,
                                PrimitiveType::kPred, PrimitiveType::kU8, PrimitiveType::kS4};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes b(data, size);
  int64_t id = 1;
  xla::HloModuleProto m;
  m.set_name("fuzz");
  // A scalar add reducer used by reduce, reduce-window and sort.
  xla::HloComputationProto* red = m.add_computations();
  red->set_name("red");
  red->set_id(id++);
  for (int p = 0; p < 2; ++p) {
    auto* i = red->add_instructions();
    i->set_id(id++);
    i->set_name("r" + std::to_string(p));
    i->set_opcode("parameter");
    i->set_parameter_number(p);
    *i->mutable_shape() = Shape(PrimitiveType::kF32, {});
  }
  auto* ra = red->add_instructions();
  ra->set_id(id++);
  ra->set_name("radd");
  ra->set_opcode(b.Next() % 2 ? "add" : "compare");
  ra->set_comparison_direction("LT");
  *ra->mutable_shape() = Shape(ra->opcode() == "add" ? PrimitiveType::kF32 : PrimitiveType::kPred, {});
  ra->add_operand_ids(red->instructions(0).id());
  ra->add_operand_ids(red->instructions(1).id());
  red->set_root_id(ra->id());

  xla::HloComputationProto* c = m.add_computations();
  c->set_name("main");
  c->set_id(id++);
  std::vector<const xla::HloInstructionProto*> made;
  std::vector<eval::Value> inputs;
  for (int p = 0; p < 2; ++p) {
    const PrimitiveType t = kTypes[b.Small(5)];
    std::vector<int64_t> dims;
    for (int64_t r = b.Small(3); r > 0; --r) dims.push_back(b.Small(4));
    auto* i = c->add_instructions();
    i->set_id(id++);
    i->set_name("p" + std::to_string(p));
    i->set_opcode("parameter");
    i->set_parameter_number(p);
    *i->mutable_shape() = Shape(t, dims);
    absl::StatusOr<eval::Array> a = eval::Array::Zeros(t, dims);
    if (!a.ok()) return 0;
    for (uint64_t k = 0; k < a->byte_size(); ++k) a->mutable_data()[k] = static_cast<char>(b.Next());
    absl::StatusOr<eval::Array> n = eval::Array::Copy(t, dims, a->bytes());  // normalised PRED/S4
    if (!n.ok()) return 0;
    inputs.push_back(*n);
    made.push_back(i);
  }
  for (int k = 0; k < 24 && !b.empty(); ++k) {
    auto* i = c->add_instructions();
    i->set_id(id++);
    i->set_name("i" + std::to_string(k));
    i->set_opcode(kOps[b.Small(sizeof(kOps) / sizeof(kOps[0]) - 1)]);
    const int64_t nops = b.Small(3);
    for (int64_t o = 0; o < nops; ++o) i->add_operand_ids(made[b.Small(static_cast<int64_t>(made.size()) - 1)]->id());
    // Declared shape: the first operand's (often right for elementwise
    // ops), or a random small one.
    if (b.Next() % 4 != 0 && i->operand_ids_size() > 0) {
      for (const auto* p : made) {
        if (p->id() == i->operand_ids(0)) *i->mutable_shape() = p->shape();
      }
    } else {
      std::vector<int64_t> dims;
      for (int64_t r = b.Small(3); r > 0; --r) dims.push_back(b.Small(5));
      *i->mutable_shape() = Shape(kTypes[b.Small(5)], dims);
    }
    for (int64_t r = b.Small(3); r > 0; --r) i->add_dimensions(b.Small(3));
    i->set_comparison_direction(b.Next() % 2 ? "GT" : "EQ");
    for (int64_t r = b.Small(2); r > 0; --r) {
      auto* s = i->add_slice_dimensions();
      s->set_start(b.Small(3));
      s->set_limit(b.Small(4));
      s->set_stride(b.Small(2));
      auto* p = i->mutable_padding_config()->add_dimensions();
      p->set_edge_padding_low(b.Small(4) - 2);
      p->set_edge_padding_high(b.Small(4) - 2);
      p->set_interior_padding(b.Small(2));
      auto* w = i->mutable_window()->add_dimensions();
      w->set_size(b.Small(3));
      w->set_stride(b.Small(2));
      i->add_dynamic_slice_sizes(b.Small(3));
      i->add_gather_slice_sizes(b.Small(2));
    }
    auto* dn = i->mutable_dot_dimension_numbers();
    if (b.Next() % 2) dn->add_lhs_contracting_dimensions(b.Small(2));
    if (b.Next() % 2) dn->add_rhs_contracting_dimensions(b.Small(2));
    auto* g = i->mutable_gather_dimension_numbers();
    g->add_offset_dims(b.Small(2));
    g->add_start_index_map(b.Small(2));
    g->set_index_vector_dim(b.Small(2));
    i->set_tuple_index(b.Small(2));
    if (i->opcode() == "reduce" || i->opcode() == "sort" || i->opcode() == "reduce-window" ||
        i->opcode() == "while") {
      i->add_called_computation_ids(red->id());
      if (i->opcode() == "while") i->add_called_computation_ids(red->id());
    }
    if (i->opcode() == "constant") {
      *i->mutable_literal()->mutable_shape() = i->shape();
      i->mutable_literal()->add_f32s(1.0f);
    }
    made.push_back(i);
  }
  c->set_root_id(made.back()->id());
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> mod = hlo::HloModule::Create(m);
  if (!mod.ok()) return 0;
  eval::EvalOptions o;
  o.threads = 1;
  o.max_array_bytes = 1 << 20;
  o.max_loop_iterations = 64;
  absl::StatusOr<eval::Value> r = eval::Evaluate(**mod, inputs, o);
  if (!r.ok() && r.status().message().empty()) __builtin_trap();  // errors say something
  return 0;
}
