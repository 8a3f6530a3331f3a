// The HloModule view (hlo/module.h) and the opcode table (hlo/opcode.h).
#include "decomposed/hlo/module.h"

#include <string>

#include "decomposed/hlo/opcode.h"
#include "decomposed/hlo/text.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace decomposed::hlo {
namespace {

xla::HloModuleProto FromText(const std::string& text) {
  xla::HloModuleProto m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

// add.3 = add(p0, p0); ROOT tuple.4 = (add.3, p1); a reducer computation
// called by a reduce that nobody uses.
constexpr char kModule[] = R"pb(
  name: "m"
  entry_computation_name: "main.5"
  entry_computation_id: 2
  computations {
    name: "sum.1" id: 1 root_id: 12
    instructions { name: "x.10" opcode: "parameter" id: 10 parameter_number: 0
                   shape { element_type: F32 } }
    instructions { name: "y.11" opcode: "parameter" id: 11 parameter_number: 1
                   shape { element_type: F32 } }
    instructions { name: "s.12" opcode: "add" id: 12 operand_ids: [ 10, 11 ]
                   shape { element_type: F32 } }
  }
  computations {
    name: "main.5" id: 2 root_id: 4
    instructions { name: "p1.2" opcode: "parameter" id: 2 parameter_number: 1
                   shape { element_type: S32 }
                   frontend_attributes { map { key: "neff_input_names" value: "input1" } } }
    instructions { name: "p0.1" opcode: "parameter" id: 1 parameter_number: 0
                   shape { element_type: F32 dimensions: 4 layout { minor_to_major: 0 } } }
    instructions { name: "add.3" opcode: "add" id: 3 operand_ids: [ 1, 1 ]
                   shape { element_type: F32 dimensions: 4 } }
    instructions { name: "zero.6" opcode: "constant" id: 6
                   shape { element_type: F32 }
                   literal { shape { element_type: F32 } f32s: 0 } }
    instructions { name: "r.7" opcode: "reduce" id: 7 operand_ids: [ 3, 6 ]
                   dimensions: 0 called_computation_ids: 1
                   shape { element_type: F32 } }
    instructions { name: "c.8" opcode: "compare" id: 8 operand_ids: [ 2, 2 ]
                   comparison_direction: "LT" shape { element_type: PRED } }
    instructions { name: "tuple.4" opcode: "tuple" id: 4 operand_ids: [ 3, 2 ]
                   shape { tuple_shapes { element_type: F32 dimensions: 4 }
                           tuple_shapes { element_type: S32 } element_type: TUPLE } }
  }
)pb";

TEST(HloModuleTest, IndexesComputationsInstructionsAndEdges) {
  auto m = HloModule::Create(FromText(kModule));
  ASSERT_TRUE(m.ok()) << m.status();
  const HloModule& mod = **m;
  EXPECT_EQ(mod.name(), "m");
  ASSERT_EQ(mod.computations().size(), 2u);
  const HloComputation* entry = mod.entry();
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name(), "main.5");
  EXPECT_TRUE(entry->IsEntry());
  EXPECT_FALSE(mod.computations()[0]->IsEntry());
  EXPECT_EQ(mod.instruction_count(), 10);

  const HloInstruction* root = entry->root();
  EXPECT_EQ(root->name(), "tuple.4");
  EXPECT_TRUE(root->IsRoot());
  EXPECT_EQ(root->opcode(), HloOpcode::kTuple);

  const HloInstruction* add = mod.FindInstruction("add.3");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->parent(), entry);
  EXPECT_EQ(add->operand_count(), 2);
  EXPECT_EQ(add->operand(0)->name(), "p0.1");
  // p0 is used twice by add.3: one user, listed once.
  const HloInstruction* p0 = entry->FindInstruction("p0.1");
  ASSERT_EQ(p0->users().size(), 1u);
  EXPECT_EQ(p0->users()[0], add);
  // add.3's users in list order: r.7 then tuple.4.
  ASSERT_EQ(add->users().size(), 2u);
  EXPECT_EQ(add->users()[0]->name(), "r.7");
  EXPECT_EQ(add->users()[1]->name(), "tuple.4");

  // Parameters by number, not list order.
  ASSERT_EQ(entry->parameters().size(), 2u);
  EXPECT_EQ(entry->parameters()[0]->name(), "p0.1");
  EXPECT_EQ(entry->parameters()[1]->name(), "p1.2");
  std::vector<EntryParameter> params = mod.EntryParameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[1].neff_name, "input1");
  EXPECT_EQ(params[0].neff_name, "");
  EXPECT_EQ(params[0].shape->dimensions(0), 4);

  // Called computations both ways, and the reducer's typed role.
  const HloInstruction* reduce = entry->FindInstruction(int64_t{7});
  ASSERT_NE(reduce, nullptr);
  ASSERT_EQ(reduce->called_computations().size(), 1u);
  EXPECT_EQ(reduce->to_apply()->name(), "sum.1");
  EXPECT_EQ(mod.FindComputation("sum.1")->callers().size(), 1u);
  EXPECT_EQ(reduce->while_body(), nullptr);

  // compare: direction from the string, type from the operand (S32: SIGNED).
  const HloInstruction* cmp = entry->FindInstruction("c.8");
  EXPECT_EQ(cmp->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_EQ(cmp->comparison_type(), ComparisonType::kSigned);
  // An instruction of another computation is not found through this one.
  EXPECT_EQ(entry->FindInstruction("s.12"), nullptr);
  EXPECT_EQ(DescribeInstruction(*add),
            "computation \"main.5\", instruction \"add.3\" (id 3)");
}

TEST(HloModuleTest, EntryFallsBackToNameThenLast) {
  xla::HloModuleProto p = FromText(kModule);
  p.set_entry_computation_id(99);  // no such id: the name decides
  auto m = HloModule::Create(p);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->entry()->name(), "main.5");
  p.clear_entry_computation_name();
  p.set_entry_computation_id(0);
  m = HloModule::Create(p);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->entry()->name(), "main.5");  // the last computation
  p.set_entry_computation_name("nope");
  m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "module \"m\": entry computation \"nope\" (id 0) is not a "
            "computation of the module");
}

TEST(HloModuleTest, RejectsDanglingAndForwardReferences) {
  xla::HloModuleProto p = FromText(kModule);
  p.mutable_computations(1)->mutable_instructions(2)->set_operand_ids(1, 42);
  auto m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "computation \"main.5\", instruction \"add.3\" (id 3): operand 1 "
            "refers to id 42, which is not an instruction of this computation");

  p = FromText(kModule);
  // add.3 uses tuple.4, which comes after it.
  p.mutable_computations(1)->mutable_instructions(2)->set_operand_ids(0, 4);
  m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "computation \"main.5\", instruction \"add.3\" (id 3): operand 0 "
            "(\"tuple.4\", id 4) comes after its user in the instruction "
            "list; operands must come first");

  p = FromText(kModule);
  p.mutable_computations(1)->mutable_instructions(4)->set_called_computation_ids(0, 7);
  m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "computation \"main.5\", instruction \"r.7\" (id 7): called "
            "computation 0 refers to id 7, which is not a computation of the "
            "module");

  p = FromText(kModule);
  p.mutable_computations(1)->mutable_instructions(1)->set_id(2);
  m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "computation \"main.5\", instruction \"p0.1\" (id 2): id 2 is also "
            "the id of \"p1.2\"");

  p = FromText(kModule);
  p.mutable_computations(0)->set_root_id(5);
  m = HloModule::Create(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "computation \"sum.1\": root_id 5 is not an instruction of this "
            "computation");

  m = HloModule::Create(xla::HloModuleProto());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "module \"\": has no computations");
}

TEST(HloModuleTest, ReplicaGroupsFromEveryForm) {
  xla::HloInstructionProto ins;
  ins.set_name("ar");
  ins.set_opcode("all-reduce");
  ins.set_id(1);
  ins.mutable_shape()->set_element_type(xla::F32);
  xla::HloModuleProto p;
  auto* c = p.add_computations();
  c->set_name("main");
  c->set_id(1);
  c->set_root_id(1);
  *c->add_instructions() = ins;
  auto groups = [&](const xla::HloModuleProto& proto) {
    auto m = HloModule::Create(proto);
    EXPECT_TRUE(m.ok()) << m.status();
    return (*m)->entry()->root()->ReplicaGroups();
  };
  EXPECT_TRUE(groups(p).empty());
  // Field 49.
  auto* g = p.mutable_computations(0)->mutable_instructions(0)->add_replica_groups();
  g->add_replica_ids(0);
  g->add_replica_ids(2);
  EXPECT_EQ(groups(p), (std::vector<std::vector<int64_t>>{{0, 2}}));
  // Iota form [2,4]<=[4,2]T(1,0): iota(8) as 4x2, transposed to 2x4:
  // {0,2,4,6},{1,3,5,7}.
  p.mutable_computations(0)->mutable_instructions(0)->clear_replica_groups();
  auto* iota = p.mutable_computations(0)
                   ->mutable_instructions(0)
                   ->mutable_collective_device_list()
                   ->mutable_iota_replica_group_list();
  iota->set_num_replica_groups(2);
  iota->set_num_devices_per_group(4);
  iota->add_iota_reshape_dims(4);
  iota->add_iota_reshape_dims(2);
  iota->add_iota_transpose_perm(1);
  iota->add_iota_transpose_perm(0);
  EXPECT_EQ(groups(p), (std::vector<std::vector<int64_t>>{{0, 2, 4, 6},
                                                          {1, 3, 5, 7}}));
  // An absurd device count is refused, not allocated.
  iota->set_num_replica_groups(int64_t{1} << 40);
  EXPECT_TRUE(groups(p).empty());
}

TEST(HloOpcodeTest, SpellingsRoundTrip) {
  for (int i = 0; i < kNumHloOpcodes; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    EXPECT_EQ(HloOpcodeFromString(HloOpcodeString(op)), op);
  }
  EXPECT_EQ(HloOpcodeString(HloOpcode::kExp), "exponential");
  EXPECT_EQ(HloOpcodeString(HloOpcode::kClz), "count-leading-zeros");
  EXPECT_EQ(HloOpcodeFromString("Add"), std::nullopt);
  EXPECT_EQ(HloOpcodeArity(HloOpcode::kSelect), 3);
  EXPECT_EQ(HloOpcodeArity(HloOpcode::kTuple), std::nullopt);
}

TEST(HloTextTest, ElidedLiteralIsShapeOnly) {
  xla::LiteralProto l;
  l.mutable_shape()->set_element_type(xla::F32);
  l.mutable_shape()->add_dimensions(100);
  EXPECT_TRUE(IsElidedLiteral(l));
  l.add_f32s(1.0f);
  EXPECT_FALSE(IsElidedLiteral(l));
  xla::LiteralProto empty;
  empty.mutable_shape()->set_element_type(xla::F32);
  empty.mutable_shape()->add_dimensions(0);
  EXPECT_FALSE(IsElidedLiteral(empty));  // nothing to elide
  xla::LiteralProto scalar;
  scalar.mutable_shape()->set_element_type(xla::S32);
  EXPECT_TRUE(IsElidedLiteral(scalar));  // a scalar with no value
}

}  // namespace
}  // namespace decomposed::hlo
