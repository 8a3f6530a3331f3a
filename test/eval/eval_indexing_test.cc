// gather and scatter: an embedding lookup, clamped start indices, scatter-
// add with repeated indices (applied in order) and an out-of-bounds update
// (skipped), overwrite scatter.
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using testing::CompBuilder;
using testing::MakeArray;
using testing::ModuleBuilder;
using testing::ToVector;

std::unique_ptr<hlo::HloModule> EmbeddingModule() {
  CompBuilder c("main");
  int64_t table = c.Param(0, "f32[4,2]"), ids = c.Param(1, "s32[3]");
  c.Op("gather", "f32[3,2]", {table, ids}, [](xla::HloInstructionProto& i) {
    auto* d = i.mutable_gather_dimension_numbers();
    d->add_offset_dims(1);
    d->add_collapsed_slice_dims(0);
    d->add_start_index_map(0);
    d->set_index_vector_dim(1);
    i.add_gather_slice_sizes(1);
    i.add_gather_slice_sizes(2);
  });
  ModuleBuilder m;
  m.Add(c);
  return m.Build();
}

TEST(EvalGather, EmbeddingLookupClampsOutOfRangeIds) {
  auto mod = EmbeddingModule();
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {3}, {2, 9, -5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(20, 21, 30, 31, 0, 1));
}

std::unique_ptr<hlo::HloModule> ScatterModule(const CompBuilder& combiner) {
  CompBuilder c("main");
  int64_t x = c.Param(0, "f32[4]"), idx = c.Param(1, "s32[4,1]"), u = c.Param(2, "f32[4]");
  c.Op("scatter", "f32[4]", {x, idx, u}, [&](xla::HloInstructionProto& i) {
    auto* d = i.mutable_scatter_dimension_numbers();
    d->add_inserted_window_dims(0);
    d->add_scatter_dims_to_operand_dims(0);
    d->set_index_vector_dim(1);
    i.add_called_computation_ids(combiner.id());
  });
  ModuleBuilder m;
  m.Add(combiner);
  m.Add(c);
  return m.Build();
}

TEST(EvalScatter, AddCombinesRepeatedIndicesAndSkipsOutOfBounds) {
  auto add = testing::BinaryComputation("add", "f32");
  auto mod = ScatterModule(add);
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {4}, {1, 1, 1, 1}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {4, 1}, {2, 2, 4, -1}),
                               MakeArray<float>(PrimitiveType::kF32, {4}, {10, 20, 30, 40})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(1, 1, 31, 1));
}

TEST(EvalScatter, OverwriteKeepsTheLastUpdate) {
  CompBuilder set("set");
  set.Param(0, "f32[]");
  set.Param(1, "f32[]");
  auto mod = ScatterModule(set);
  auto r = testing::Run(*mod, {MakeArray<float>(PrimitiveType::kF32, {4}, {0, 0, 0, 0}),
                               MakeArray<int32_t>(PrimitiveType::kS32, {4, 1}, {1, 3, 1, 0}),
                               MakeArray<float>(PrimitiveType::kF32, {4}, {5, 6, 7, 8})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ToVector<float>(r->array()), ElementsAre(8, 7, 0, 6));
}

}  // namespace
}  // namespace decomposed::eval
