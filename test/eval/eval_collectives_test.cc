// Collectives of one rank: single-member groups are the identity, groups
// of several ranks are refused with the reason, replica-id is 0.
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::CompBuilder;
using testing::MakeArray;
using testing::ModuleBuilder;
using testing::ToVector;

TEST(EvalCollectives, SingleMemberGroupsAreTheIdentityOthersAreRefused) {
  auto add = testing::BinaryComputation("add", "f32");
  for (bool single : {true, false}) {
    CompBuilder c("main");
    int64_t x = c.Param(0, "f32[2]");
    c.Op("all-reduce", "f32[2]", {x}, [&](auto& i) {
      if (single) {
        i.add_replica_groups()->add_replica_ids(0);
        i.add_replica_groups()->add_replica_ids(1);
      } else {
        auto* g = i.add_replica_groups();
        g->add_replica_ids(0);
        g->add_replica_ids(1);
      }
      i.add_called_computation_ids(add.id());
    });
    ModuleBuilder m;
    m.Add(add);
    m.Add(c);
    auto mod = m.Build();
    auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})});
    if (single) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(1, 2));
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_THAT(r.status().message(), HasSubstr("replica groups of 2 ranks"));
    }
  }
}

TEST(EvalCollectives, ReplicaIdIsZero) {
  CompBuilder c("main");
  c.Op("replica-id", "u32[]");
  ModuleBuilder m;
  m.Add(c);
  auto mod = m.Build();
  auto r = testing::Run(*mod, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToVector<uint32_t>(r->array())[0], 0u);
}

}  // namespace
}  // namespace decomposed::eval
