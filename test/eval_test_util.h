// A small HloModuleProto builder for the evaluator's tests: shapes from
// strings ("f32[2,3]", "(f32[2], s32[])"), one method to add any
// instruction, constants from numbers, and arrays to and from vectors.
#ifndef DECOMPOSED_TEST_EVAL_TEST_UTIL_H_
#define DECOMPOSED_TEST_EVAL_TEST_UTIL_H_

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/literal.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"
#include "decomposed/xla/element_value.h"
#include "gtest/gtest.h"

namespace decomposed::eval::testing {

inline xla::ShapeProto ParseTestShape(std::string_view s) {
  xla::ShapeProto out;
  if (!s.empty() && s.front() == '(') {
    out.set_element_type(static_cast<xla::PrimitiveType>(PrimitiveType::kTuple));
    std::string_view inner = s.substr(1, s.size() - 2);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || (inner[i] == ',' && depth == 0)) {
        std::string_view part = inner.substr(start, i - start);
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        if (!part.empty()) *out.add_tuple_shapes() = ParseTestShape(part);
        start = i + 1;
      } else if (inner[i] == '(' || inner[i] == '[') {
        ++depth;
      } else if (inner[i] == ')' || inner[i] == ']') {
        --depth;
      }
    }
    return out;
  }
  const size_t b = s.find('[');
  std::string type(s.substr(0, b));
  if (type == "token") {
    out.set_element_type(static_cast<xla::PrimitiveType>(PrimitiveType::kToken));
    return out;
  }
  out.set_element_type(static_cast<xla::PrimitiveType>(*PrimitiveTypeFromName(type)));
  std::string_view dims = s.substr(b + 1, s.find(']') - b - 1);
  int64_t rank = 0;
  if (!dims.empty()) {
    for (absl::string_view d : absl::StrSplit(absl::string_view(dims.data(), dims.size()), ',')) {
      int64_t v = 0;
      EXPECT_TRUE(absl::SimpleAtoi(d, &v)) << s;
      out.add_dimensions(v);
      ++rank;
    }
  }
  for (int64_t d = rank - 1; d >= 0; --d) out.mutable_layout()->add_minor_to_major(d);
  return out;
}

inline int64_t NextTestId() {
  static int64_t id = 0;
  return ++id;
}

// One computation.
class CompBuilder {
 public:
  explicit CompBuilder(std::string name) {
    proto_.set_name(std::move(name));
    proto_.set_id(NextTestId());
  }
  int64_t id() const { return proto_.id(); }

  using Attrs = std::function<void(xla::HloInstructionProto&)>;
  int64_t Op(std::string_view opcode, std::string_view shape,
             std::vector<int64_t> operands = {}, const Attrs& attrs = {}) {
    xla::HloInstructionProto* i = proto_.add_instructions();
    i->set_id(NextTestId());
    i->set_name(absl::StrCat(std::string(opcode), ".", i->id()));
    i->set_opcode(std::string(opcode));
    *i->mutable_shape() = ParseTestShape(shape);
    for (int64_t o : operands) i->add_operand_ids(o);
    if (attrs) attrs(*i);
    proto_.set_root_id(i->id());
    return i->id();
  }
  int64_t Param(int64_t n, std::string_view shape) {
    return Op("parameter", shape, {}, [n](xla::HloInstructionProto& i) {
      i.set_parameter_number(n);
      i.set_name(absl::StrCat("p", n));
    });
  }
  // A constant of `shape` from numbers (converted to the element type).
  int64_t Constant(std::string_view shape, std::vector<double> values) {
    xla::ShapeProto s = ParseTestShape(shape);
    return Op("constant", shape, {}, [&](xla::HloInstructionProto& i) {
      xla::LiteralProto* l = i.mutable_literal();
      *l->mutable_shape() = s;
      for (double v : values) {
        switch (static_cast<PrimitiveType>(s.element_type())) {
          case PrimitiveType::kF32: l->add_f32s(static_cast<float>(v)); break;
          case PrimitiveType::kF64: l->add_f64s(v); break;
          case PrimitiveType::kS32: l->add_s32s(static_cast<int32_t>(v)); break;
          case PrimitiveType::kS64: l->add_s64s(static_cast<int64_t>(v)); break;
          case PrimitiveType::kU32: l->add_u32s(static_cast<uint32_t>(v)); break;
          case PrimitiveType::kU64: l->add_u64s(static_cast<uint64_t>(v)); break;
          case PrimitiveType::kPred: l->add_preds(v != 0); break;
          case PrimitiveType::kS8: l->mutable_s8s()->push_back(static_cast<char>(static_cast<int8_t>(v))); break;
          case PrimitiveType::kU8: l->mutable_u8s()->push_back(static_cast<char>(static_cast<uint8_t>(v))); break;
          default: ADD_FAILURE() << "Constant: unsupported type in " << shape;
        }
      }
    });
  }
  void SetRoot(int64_t id) { proto_.set_root_id(id); }
  xla::HloInstructionProto* Last() {
    return proto_.mutable_instructions(proto_.instructions_size() - 1);
  }
  const xla::HloComputationProto& proto() const { return proto_; }

 private:
  xla::HloComputationProto proto_;
};

// Computations in order; the last added is the entry unless named.
class ModuleBuilder {
 public:
  void Add(const CompBuilder& c) { *proto_.add_computations() = c.proto(); }
  std::unique_ptr<hlo::HloModule> Build() {
    proto_.set_name("test_module");
    auto m = hlo::HloModule::Create(proto_);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *std::move(m) : nullptr;
  }
  xla::HloModuleProto& proto() { return proto_; }

 private:
  xla::HloModuleProto proto_;
};

// A scalar add (or other binary op) computation of `type`.
inline CompBuilder BinaryComputation(std::string_view opcode, std::string_view type) {
  CompBuilder c(absl::StrCat(std::string(opcode), "_", std::string(type), "_", NextTestId()));
  std::string s = absl::StrCat(std::string(type), "[]");
  int64_t a = c.Param(0, s), b = c.Param(1, s);
  c.Op(opcode, s, {a, b});
  return c;
}

template <class T>
Array MakeArray(PrimitiveType t, std::vector<int64_t> dims, const std::vector<T>& values) {
  absl::StatusOr<Array> a = Array::Allocate(t, std::move(dims));
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a->byte_size(), values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a->mutable_data(), values.data(), values.size() * sizeof(T));
  return *a;
}

template <class T>
std::vector<T> ToVector(const Array& a) {
  absl::StatusOr<Array> c = a.Contiguous();
  EXPECT_EQ(c->element_bytes(), sizeof(T));
  std::vector<T> v(c->element_count());
  if (!v.empty()) std::memcpy(v.data(), c->data(), v.size() * sizeof(T));
  return v;
}

// Every element as a double (any real type).
inline std::vector<double> AsDoubles(const Array& a) {
  absl::StatusOr<Array> c = a.Contiguous();
  std::vector<double> v;
  for (int64_t i = 0; i < c->element_count(); ++i) {
    v.push_back(RealValue(c->type(), c->data() + i * c->element_bytes()));
  }
  return v;
}

inline absl::StatusOr<Value> Run(const hlo::HloModule& m, std::vector<Value> inputs,
                                 EvalOptions options = {}) {
  if (options.threads == 0) options.threads = 2;
  return Evaluate(m, inputs, options);
}

}  // namespace decomposed::eval::testing

#endif  // DECOMPOSED_TEST_EVAL_TEST_UTIL_H_
