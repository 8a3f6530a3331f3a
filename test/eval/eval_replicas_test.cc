// The replay of several ranks (eval/replicas.h): XLA's group modes, every
// collective's exchange on hand-worked values, tensor-parallel shards of
// an MLP and of an attention block against the dense module at TP 2, 4 and
// 8, bit-for-bit reproducibility, and the errors: wrong replica groups,
// ranks that disagree, a rank that fails or stops early.
#include "decomposed/eval/replicas.h"

#include <cmath>
#include <cstring>

#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tp_test_models.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using hlo::HloComputationBuilder;
using hlo::HloModuleBuilder;
using hlo::HloOp;
using hlo::MakeArrayShape;
using tp_test::AllRanks;
using tp_test::BuildModule;
using tp_test::ScalarBinary;

std::vector<float> Floats(const Value& v) {
  return testing::ToVector<float>(v.is_tuple() ? v.element(0).array() : v.array());
}

// A module whose root is `make(c, x)` on one f32 parameter of `dims`.
template <class Make>
std::unique_ptr<hlo::HloModule> OneParam(std::vector<int64_t> dims, Make make) {
  HloModuleBuilder mb("m");
  HloComputationBuilder& add = ScalarBinary(mb, "add", hlo::HloOpcode::kAdd);
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, dims), "x");
  make(c, add, x);
  return BuildModule(mb);
}

std::vector<std::vector<Value>> PerRank(int64_t n, std::vector<int64_t> dims,
                                        const std::function<float(int64_t, int64_t)>& value) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<std::vector<Value>> in;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i) v[i] = value(r, i);
    in.push_back({tp_test::F32Array(dims, v)});
  }
  return in;
}

absl::StatusOr<std::vector<Value>> Replay(const hlo::HloModule& m,
                                          std::span<const std::vector<Value>> in,
                                          ReplicaOptions o = {}) {
  const hlo::HloModule* mods[] = {&m};
  return EvaluateReplicas(mods, in, o);
}

// --- Group modes (XLA's GetParticipatingDevices) ------------------------------

xla::HloInstructionProto Collective(std::string opcode, std::vector<std::vector<int64_t>> groups,
                                    std::optional<int64_t> channel, bool global) {
  xla::HloInstructionProto p;
  p.set_opcode(opcode);
  p.set_name(opcode + ".1");
  for (const auto& g : groups) {
    auto* rg = p.add_replica_groups();
    for (int64_t id : g) rg->add_replica_ids(id);
  }
  if (channel) p.set_channel_id(*channel);
  p.set_use_global_device_ids(global);
  return p;
}

// Wraps one instruction into a module, for its view.
struct One {
  explicit One(xla::HloInstructionProto p) {
    xla::HloModuleProto m;
    m.set_name("one");
    auto* c = m.add_computations();
    c->set_name("main");
    c->set_id(1);
    auto* x = c->add_instructions();
    x->set_name("x");
    x->set_opcode("parameter");
    x->set_id(2);
    *x->mutable_shape() = MakeArrayShape(xla::F32, {4});
    p.set_id(3);
    p.add_operand_ids(2);
    *p.mutable_shape() = MakeArrayShape(xla::F32, {4});
    *c->add_instructions() = p;
    c->set_root_id(3);
    m.set_entry_computation_id(1);
    module = *hlo::HloModule::Create(m);
  }
  const hlo::HloInstruction& instr() const { return *module->entry()->root(); }
  std::unique_ptr<hlo::HloModule> module;
};

TEST(EvalReplicas, GroupModesFollowXla) {
  auto mode = [](const One& o) { return *CollectiveGroupModeOf(o.instr()); };
  EXPECT_EQ(mode(One(Collective("all-reduce", {}, std::nullopt, false))),
            CollectiveGroupMode::kCrossReplica);
  EXPECT_EQ(mode(One(Collective("all-reduce", {}, 1, false))),
            CollectiveGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(mode(One(Collective("all-gather", {{0, 1}}, 1, true))),
            CollectiveGroupMode::kFlattenedId);
  // all-to-all and collective-permute have no use_global_device_ids: a
  // channel makes them cross-partition.
  EXPECT_EQ(mode(One(Collective("all-to-all", {}, 1, false))), CollectiveGroupMode::kCrossPartition);
  EXPECT_EQ(mode(One(Collective("all-to-all", {}, std::nullopt, false))),
            CollectiveGroupMode::kCrossReplica);
  absl::StatusOr<CollectiveGroupMode> bad =
      CollectiveGroupModeOf(One(Collective("all-reduce", {}, std::nullopt, true)).instr());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("needs a channel_id"));
}

TEST(EvalReplicas, ParticipantsOnTwoReplicasOfTwoPartitions) {
  // Ranks: replica * 2 + partition. Worked by hand from XLA's rules.
  const ReplicaLayout layout{4, 2, 2};
  auto parts = [&](const One& o, int64_t rank) { return *ParticipatingRanks(o.instr(), rank, layout); };
  // Cross-replica, {{0,1}}: the replicas of the rank's own partition.
  One cross_replica(Collective("all-reduce", {{0, 1}}, std::nullopt, false));
  EXPECT_THAT(parts(cross_replica, 3), ElementsAre(1, 3));
  EXPECT_THAT(parts(cross_replica, 0), ElementsAre(0, 2));
  // Cross-partition (all-to-all with a channel), {{0,1}}: the partitions of
  // the rank's own replica.
  One cross_partition(Collective("all-to-all", {{0, 1}}, 1, false));
  EXPECT_THAT(parts(cross_partition, 2), ElementsAre(2, 3));
  // Cross-replica-and-partition, {{0,1}}: replicas 0 and 1, each with all
  // partitions.
  One both(Collective("all-reduce", {{0, 1}}, 1, false));
  EXPECT_THAT(parts(both, 2), ElementsAre(0, 1, 2, 3));
  // Flattened ids, {{0,3},{2,1}}: device ids as given, in group order.
  One flat(Collective("all-gather", {{0, 3}, {2, 1}}, 1, true));
  EXPECT_THAT(parts(flat, 1), ElementsAre(2, 1));
  // No groups: all replicas (cross-replica).
  One all(Collective("all-reduce", {}, std::nullopt, false));
  EXPECT_THAT(parts(all, 1), ElementsAre(1, 3));
  // collective-permute pairs of partition ids, within the replica.
  xla::HloInstructionProto perm;
  perm.set_opcode("collective-permute");
  perm.set_name("perm");
  perm.set_channel_id(1);
  auto* st = perm.add_source_target_pairs();
  st->set_source(0);
  st->set_target(1);
  One permute(perm);
  EXPECT_THAT(parts(permute, 3), ElementsAre(2));  // replica 1: partition 0 -> 1
  EXPECT_THAT(parts(permute, 2), ElementsAre());   // nothing targets partition 0
}

TEST(EvalReplicas, FlatLayoutReadsEveryModeAsRanks) {
  const ReplicaLayout flat{4, 0, 0};
  for (auto [channel, global] : {std::pair<bool, bool>{false, false}, {true, false}, {true, true}}) {
    One o(Collective("all-reduce", {{3, 1}, {0, 2}}, channel ? std::optional<int64_t>(1) : std::nullopt,
                     global));
    EXPECT_THAT(*ParticipatingRanks(o.instr(), 1, flat), ElementsAre(3, 1));
  }
  One a2a(Collective("all-to-all", {{0, 1, 2, 3}}, 5, false));
  EXPECT_THAT(*ParticipatingRanks(a2a.instr(), 2, flat), ElementsAre(0, 1, 2, 3));
}

TEST(EvalReplicas, BadGroupsAreNamed) {
  const ReplicaLayout flat{4, 0, 0};
  auto err = [&](std::vector<std::vector<int64_t>> g, int64_t rank) {
    One o(Collective("all-reduce", g, std::nullopt, false));
    absl::StatusOr<std::vector<int64_t>> p = ParticipatingRanks(o.instr(), rank, flat);
    EXPECT_FALSE(p.ok());
    return std::string(p.status().message());
  };
  EXPECT_THAT(err({{0, 1, 2}}, 3), HasSubstr("replica 3 is in no replica group of {{0,1,2}}"));
  EXPECT_THAT(err({{0, 1}, {1, 2, 3}}, 1), HasSubstr("replica 1 is in two replica groups"));
  EXPECT_THAT(err({{0, 1, 2, 4}}, 0), HasSubstr("names replica 4, expected one below 4"));
  EXPECT_THAT(err({{0, 1, 2, 4}}, 0), HasSubstr("instruction \"all-reduce.1\""));
  absl::StatusOr<std::vector<int64_t>> layout =
      ParticipatingRanks(One(Collective("all-reduce", {}, std::nullopt, false)).instr(), 0,
                         ReplicaLayout{4, 3, 2});
  ASSERT_FALSE(layout.ok());
  EXPECT_THAT(layout.status().message(), HasSubstr("replica_count * partition_count == 4"));
}

// --- Each collective on hand-worked values -----------------------------------------

TEST(EvalReplicas, AllReduceSumsInGroupsAndIdsAreTheRank) {
  auto m = OneParam({2}, [](HloComputationBuilder& c, HloComputationBuilder& add, HloOp x) {
    hlo::CollectiveOptions o;
    o.replica_groups = {{0, 2}, {1, 3}};
    HloOp s = c.AllReduce({x}, add, o);
    HloOp id = c.Convert(c.ReplicaId(), xla::F32);
    c.Tuple({s, id, c.Convert(c.PartitionId(), xla::F32)});
  });
  ASSERT_NE(m, nullptr);
  auto in = PerRank(4, {2}, [](int64_t r, int64_t i) { return float(10 * r + i); });
  absl::StatusOr<std::vector<Value>> out = Replay(*m, in);
  ASSERT_TRUE(out.ok()) << out.status();
  // Ranks 0 and 2: {0,1} + {20,21}; ranks 1 and 3: {10,11} + {30,31}.
  EXPECT_THAT(testing::ToVector<float>((*out)[0].element(0).array()), ElementsAre(20, 22));
  EXPECT_THAT(testing::ToVector<float>((*out)[2].element(0).array()), ElementsAre(20, 22));
  EXPECT_THAT(testing::ToVector<float>((*out)[3].element(0).array()), ElementsAre(40, 42));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(testing::ToVector<float>((*out)[r].element(1).array())[0], r);
    EXPECT_EQ(testing::ToVector<float>((*out)[r].element(2).array())[0], r);
  }
  // An explicit layout of 2 replicas x 2 partitions: ids split.
  ReplicaOptions o;
  o.replica_count = 2;
  o.partition_count = 2;
  auto ids = OneParam({2}, [](HloComputationBuilder& c, HloComputationBuilder&, HloOp) {
    c.Tuple({c.ReplicaId(), c.PartitionId()});
  });
  out = Replay(*ids, in, o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testing::ToVector<uint32_t>((*out)[3].element(0).array())[0], 1u);
  EXPECT_EQ(testing::ToVector<uint32_t>((*out)[3].element(1).array())[0], 1u);
  EXPECT_EQ(testing::ToVector<uint32_t>((*out)[2].element(0).array())[0], 1u);
  EXPECT_EQ(testing::ToVector<uint32_t>((*out)[2].element(1).array())[0], 0u);
}

TEST(EvalReplicas, AllReduceOfAnotherReducerAppliesItInGroupOrder) {
  for (auto op : {hlo::HloOpcode::kMaximum, hlo::HloOpcode::kSubtract}) {
    HloModuleBuilder mb("m");
    HloComputationBuilder& red = ScalarBinary(mb, "red", op);
    HloComputationBuilder& c = mb.AddEntryComputation("main");
    HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {1}), "x");
    c.AllReduce({x}, red, AllRanks(3));
    auto m = BuildModule(mb);
    auto in = PerRank(3, {1}, [](int64_t r, int64_t) { return float(r == 1 ? 7 : r + 1); });
    absl::StatusOr<std::vector<Value>> out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    // Values 1, 7, 3: max 7; ((1 - 7) - 3) = -9 (a subtract reducer is
    // applied in group order).
    const float want = op == hlo::HloOpcode::kMaximum ? 7 : -9;
    for (int r = 0; r < 3; ++r) EXPECT_EQ(Floats((*out)[r])[0], want) << r;
  }
}

TEST(EvalReplicas, AllGatherReduceScatterAllToAllPermuteBroadcast) {
  auto in = PerRank(4, {4}, [](int64_t r, int64_t i) { return float(10 * r + i); });
  {  // all-gather along 0: every rank gets 0..3, 10..13, 20..23, 30..33.
    auto m = OneParam({4}, [](HloComputationBuilder& c, HloComputationBuilder&, HloOp x) {
      c.AllGather({x}, 0, AllRanks(4));
    });
    auto out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Floats((*out)[2]), ElementsAre(0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31,
                                               32, 33));
  }
  {  // reduce-scatter: the sum 60, 64, 68, 72; rank r keeps element r.
    auto m = OneParam({4}, [](HloComputationBuilder& c, HloComputationBuilder& add, HloOp x) {
      c.ReduceScatter({x}, add, 0, AllRanks(4));
    });
    auto out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int r = 0; r < 4; ++r) EXPECT_THAT(Floats((*out)[r]), ElementsAre(60 + 4 * r)) << r;
  }
  {  // all-to-all, split dimension 0: rank r gets element r of every rank.
    auto m = OneParam({4}, [](HloComputationBuilder& c, HloComputationBuilder&, HloOp x) {
      c.AllToAll({x}, 0, AllRanks(4));
    });
    auto out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Floats((*out)[1]), ElementsAre(1, 11, 21, 31));
    EXPECT_THAT(Floats((*out)[3]), ElementsAre(3, 13, 23, 33));
  }
  {  // all-to-all, tuple form over groups {0,1},{2,3}: element j from
     // participant j's operand [my index].
    auto m = OneParam({4}, [](HloComputationBuilder& c, HloComputationBuilder&, HloOp x) {
      hlo::CollectiveOptions o;
      o.replica_groups = {{0, 1}, {2, 3}};
      HloOp a = c.Slice(x, {0}, {2});
      HloOp b = c.Slice(x, {2}, {4});
      c.AllToAll({a, b}, std::nullopt, o);
    });
    auto out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    // Rank 3 (index 1 of {2,3}): (rank 2's b, rank 3's b).
    EXPECT_THAT(testing::ToVector<float>((*out)[3].element(0).array()), ElementsAre(22, 23));
    EXPECT_THAT(testing::ToVector<float>((*out)[3].element(1).array()), ElementsAre(32, 33));
  }
  {  // collective-permute 0->1->2->0 (rank 3 receives nothing: zeros), and
     // its start/done form.
    for (bool async : {false, true}) {
      auto m = OneParam({4}, [&](HloComputationBuilder& c, HloComputationBuilder&, HloOp x) {
        const std::pair<int64_t, int64_t> pairs[] = {{0, 1}, {1, 2}, {2, 0}};
        if (async) {
          c.CollectivePermuteDone(c.CollectivePermuteStart(x, pairs));
        } else {
          c.CollectivePermute(x, pairs);
        }
      });
      auto out = Replay(*m, in);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_THAT(Floats((*out)[0]), ElementsAre(20, 21, 22, 23));
      EXPECT_THAT(Floats((*out)[1]), ElementsAre(0, 1, 2, 3));
      EXPECT_THAT(Floats((*out)[3]), ElementsAre(0, 0, 0, 0));
    }
  }
  {  // collective-broadcast: the first member's value, per group.
    auto m = OneParam({4}, [](HloComputationBuilder& c, HloComputationBuilder&, HloOp x) {
      xla::HloInstructionProto p;
      p.set_opcode("collective-broadcast");
      *p.mutable_shape() = MakeArrayShape(xla::F32, {4});
      for (auto g : {std::vector<int64_t>{2, 0}, std::vector<int64_t>{1, 3}}) {
        auto* rg = p.add_replica_groups();
        for (int64_t id : g) rg->add_replica_ids(id);
      }
      c.AddInstruction(p, {x});
    });
    auto out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Floats((*out)[0]), ElementsAre(20, 21, 22, 23));
    EXPECT_THAT(Floats((*out)[3]), ElementsAre(10, 11, 12, 13));
  }
}

TEST(EvalReplicas, CollectivesInsideALoopMeetPerIteration) {
  // while (i < 3) { v = all-reduce(v); i++ }: each iteration's all-reduce
  // meets the same iteration's on the other ranks: v * 2^3 summed... the
  // sum of two ranks' values doubles each round.
  HloModuleBuilder mb("loop");
  HloComputationBuilder& add = ScalarBinary(mb, "add", hlo::HloOpcode::kAdd);
  const xla::ShapeProto state = hlo::MakeTupleShape(
      std::vector<xla::ShapeProto>{hlo::MakeScalarShape(xla::S32), MakeArrayShape(xla::F32, {2})});
  HloComputationBuilder& cond = mb.AddComputation("cond");
  {
    HloOp s = cond.Parameter(0, state, "cond.s");
    cond.Compare(cond.GetTupleElement(s, 0), cond.ConstantR0Int(xla::S32, 3),
                 hlo::ComparisonDirection::kLt);
  }
  HloComputationBuilder& body = mb.AddComputation("body");
  {
    HloOp s = body.Parameter(0, state, "body.s");
    HloOp i = body.Add(body.GetTupleElement(s, 0), body.ConstantR0Int(xla::S32, 1));
    HloOp v = body.AllReduce({body.GetTupleElement(s, 1)}, add, AllRanks(2));
    body.Tuple({i, v});
  }
  HloComputationBuilder& c = mb.AddEntryComputation("main");
  HloOp x = c.Parameter(0, MakeArrayShape(xla::F32, {2}), "x");
  HloOp w = c.While(cond, body, c.Tuple({c.ConstantR0Int(xla::S32, 0), x}));
  c.GetTupleElement(w, 1);
  auto m = BuildModule(mb);
  ASSERT_NE(m, nullptr);
  auto in = PerRank(2, {2}, [](int64_t r, int64_t i) { return float(r + 1 + i); });
  auto out = Replay(*m, in);
  ASSERT_TRUE(out.ok()) << out.status();
  // Round 1: {1,2}+{2,3} = {3,5}; round 2: {6,10}; round 3: {12,20}.
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(12, 20));
  EXPECT_THAT(Floats((*out)[1]), ElementsAre(12, 20));
}

// --- Tensor-parallel shards against the dense module -------------------------------------

void ExpectClose(const std::vector<float>& want, const std::vector<float>& got, std::string what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << what << " element " << i;
  }
}

template <class Model>
void CheckShardsGiveTheDenseResult(const Model& model, int64_t n) {
  const auto w = model.Random(7);
  auto dense = model.Build(0);
  auto shard = model.Build(n);
  ASSERT_NE(dense, nullptr);
  ASSERT_NE(shard, nullptr);
  absl::StatusOr<Value> want = Evaluate(*dense, model.DenseInputs(w), {});
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<std::vector<Value>> in;
  for (int64_t r = 0; r < n; ++r) in.push_back(model.RankInputs(w, n, r));
  absl::StatusOr<std::vector<Value>> out = Replay(*shard, in);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> first = Floats((*out)[0]);
  for (int64_t r = 0; r < n; ++r) {
    ExpectClose(Floats(*want), Floats((*out)[r]), absl::StrCat("TP ", n, " rank ", r));
    // Every rank computed the same reduction from the same inputs.
    EXPECT_EQ(std::memcmp(first.data(), Floats((*out)[r]).data(), first.size() * 4), 0) << r;
  }
  // Bit for bit again, with another thread count per rank.
  ReplicaOptions o;
  o.eval.threads = 2;
  absl::StatusOr<std::vector<Value>> again = Replay(*shard, in, o);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Floats((*again)[n - 1]), first);
}

TEST(EvalReplicas, TensorParallelMlpGivesTheDenseResult) {
  for (int64_t n : {2, 4, 8}) CheckShardsGiveTheDenseResult(tp_test::Mlp{}, n);
}

TEST(EvalReplicas, TensorParallelAttentionGivesTheDenseResult) {
  for (int64_t n : {2, 4, 8}) CheckShardsGiveTheDenseResult(tp_test::Attention{}, n);
}

TEST(EvalReplicas, OneModulePerRankAndPerRankSubstitutes) {
  tp_test::Mlp mlp;
  const auto w = mlp.Random(3);
  std::vector<std::unique_ptr<hlo::HloModule>> own;
  std::vector<const hlo::HloModule*> mods;
  std::vector<std::vector<Value>> in;
  for (int64_t r = 0; r < 2; ++r) {
    own.push_back(mlp.Build(2));
    mods.push_back(own.back().get());
    in.push_back(mlp.RankInputs(w, 2, r));
  }
  ReplicaOptions o;
  // Rank 1's partial product replaced by zeros: every rank gets rank 0's.
  const hlo::HloInstruction* partial = mods[1]->entry()->root()->operand(0)->operand(0);
  ASSERT_EQ(partial->opcode(), hlo::HloOpcode::kDot);
  o.rank_substitutes.resize(2);
  o.rank_substitutes[1][partial->name()] = *Array::Zeros(PrimitiveType::kF32, {4, 32});
  int64_t seen_rank1 = 0;
  o.on_instruction = [&](int64_t rank, const InstructionEvent&) {
    seen_rank1 += rank == 1;
    return absl::OkStatus();
  };
  absl::StatusOr<std::vector<Value>> out = EvaluateReplicas(mods, in, o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_GT(seen_rank1, 0);
  // Rank 0 alone: its partial product.
  auto half = tp_test::Mlp{mlp.batch, mlp.hidden, mlp.ffn / 2}.Build(0);
  absl::StatusOr<Value> rank0 = Evaluate(*half, in[0], {});
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  ExpectClose(Floats(*rank0), Floats((*out)[1]), "rank 1 with a zero partial");
}

// --- Errors -------------------------------------------------------------------------

TEST(EvalReplicas, AWrongReplicaGroupIsFound) {
  tp_test::Mlp mlp;
  const auto w = mlp.Random(11);
  std::vector<std::vector<Value>> in;
  for (int64_t r = 0; r < 4; ++r) in.push_back(mlp.RankInputs(w, 4, r));
  {  // A group that leaves rank 3 out: named before anything is exchanged.
    hlo::CollectiveOptions g;
    g.replica_groups = {{0, 1, 2}};
    auto m = mlp.Build(4, &g);
    absl::StatusOr<std::vector<Value>> out = Replay(*m, in);
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("rank 3: "));
    EXPECT_THAT(out.status().message(), HasSubstr("replica 3 is in no replica group of {{0,1,2}}"));
  }
  {  // Ranks whose modules disagree on the groups.
    hlo::CollectiveOptions a, b;
    a.replica_groups = {{0, 1}, {2, 3}};
    b.replica_groups = {{0, 2}, {1, 3}};
    auto ma = mlp.Build(4, &a), mb = mlp.Build(4, &b);
    const hlo::HloModule* mods[] = {ma.get(), ma.get(), mb.get(), mb.get()};
    absl::StatusOr<std::vector<Value>> out = EvaluateReplicas(mods, in, {});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("disagree on their collective 1"));
    EXPECT_THAT(out.status().message(), HasSubstr("replica_groups={{0,1},{2,3}}"));
    EXPECT_THAT(out.status().message(), HasSubstr("replica_groups={{0,2},{1,3}}"));
  }
  {  // Consistent but wrong: pairs instead of all four. It runs, and the
     // result is not the dense one.
    hlo::CollectiveOptions g;
    g.replica_groups = {{0, 1}, {2, 3}};
    auto m = mlp.Build(4, &g);
    absl::StatusOr<std::vector<Value>> out = Replay(*m, in);
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<Value> dense = Evaluate(*mlp.Build(0), mlp.DenseInputs(w), {});
    ASSERT_TRUE(dense.ok());
    const std::vector<float> want = Floats(*dense), got = Floats((*out)[0]);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max<double>(worst, std::fabs(want[i] - got[i]));
    EXPECT_GT(worst, 1e-2);
  }
}

TEST(EvalReplicas, ARankThatFailsOrStopsEarlyEndsTheReplay) {
  tp_test::Mlp mlp;
  const auto w = mlp.Random(5);
  auto m = mlp.Build(2);
  {  // Rank 1's input has the wrong shape: its own error, not rank 0's wait.
    std::vector<std::vector<Value>> in = {mlp.RankInputs(w, 2, 0), mlp.RankInputs(w, 2, 0)};
    in[1][0] = tp_test::F32Array({2, 2}, {1, 2, 3, 4});
    absl::StatusOr<std::vector<Value>> out = Replay(*m, in);
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("rank 1: "));
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("expected F32[4,32], found F32[2,2]"));
  }
  {  // Rank 1 runs a module without the all-reduce: rank 0 waits in vain.
    std::vector<std::vector<Value>> in = {mlp.RankInputs(w, 2, 0), mlp.RankInputs(w, 2, 1)};
    // The dense module of half the width has rank 1's shapes.
    auto half = tp_test::Mlp{mlp.batch, mlp.hidden, mlp.ffn / 2}.Build(0);
    const hlo::HloModule* mods[] = {m.get(), half.get()};
    absl::StatusOr<std::vector<Value>> out = EvaluateReplicas(mods, in, {});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("rank 0: "));
    EXPECT_THAT(out.status().message(),
                HasSubstr("rank 1 finished after 0 collectives: the ranks do not run the same collectives"));
  }
  {  // Counts.
    absl::StatusOr<std::vector<Value>> none = Replay(*m, {});
    ASSERT_FALSE(none.ok());
    EXPECT_THAT(none.status().message(), HasSubstr("at least one rank"));
  }
}

TEST(EvalReplicas, OverMpiNeedsMpi) {
  // (test/replicas_mpi.py runs the MPI job itself.)
  auto m = tp_test::Mlp{}.Build(2);
  const auto w = tp_test::Mlp{}.Random(1);
  absl::StatusOr<Value> r = EvaluateRankOverMpi(*m, tp_test::Mlp{}.RankInputs(w, 2, 0), {});
  ASSERT_FALSE(r.ok());
  if (ReplicasOverMpiAvailable()) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(r.status().message(), HasSubstr("MPI_Init"));
  } else {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(r.status().message(), HasSubstr("DECOMPOSED_WITH_MPI"));
  }
}

TEST(EvalReplicas, MpiRankSharesAreContiguousBlocksCoveringEveryRankOnce) {
  // 8 ranks on 3 processes: 3, 3, 2 (the first 8 % 3 processes one more).
  EXPECT_EQ(MpiRankShare(0, 3, 8).first, 0);
  EXPECT_EQ(MpiRankShare(0, 3, 8).end, 3);
  EXPECT_EQ(MpiRankShare(1, 3, 8).first, 3);
  EXPECT_EQ(MpiRankShare(1, 3, 8).end, 6);
  EXPECT_EQ(MpiRankShare(2, 3, 8).first, 6);
  EXPECT_EQ(MpiRankShare(2, 3, 8).end, 8);
  for (int64_t ranks = 1; ranks <= 40; ++ranks) {
    for (int64_t procs = 1; procs <= ranks; ++procs) {
      int64_t next = 0;
      for (int64_t p = 0; p < procs; ++p) {
        const RankShare s = MpiRankShare(p, procs, ranks);
        EXPECT_EQ(s.first, next) << ranks << " ranks, process " << p << " of " << procs;
        EXPECT_GE(s.end - s.first, ranks / procs);
        EXPECT_LE(s.end - s.first, ranks / procs + 1);
        next = s.end;
      }
      EXPECT_EQ(next, ranks);
    }
  }
  // Out of range: empty.
  EXPECT_EQ(MpiRankShare(3, 3, 8).end - MpiRankShare(3, 3, 8).first, 0);
  EXPECT_EQ(MpiRankShare(0, 0, 8).end, 0);
}

TEST(EvalReplicas, ASingleRunStillRefusesGroupsOfSeveralRanks) {
  auto m = tp_test::Mlp{}.Build(2);
  const auto w = tp_test::Mlp{}.Random(1);
  absl::StatusOr<Value> r = Evaluate(*m, tp_test::Mlp{}.RankInputs(w, 2, 0), {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("replica groups of 2 ranks"));
}

}  // namespace
}  // namespace decomposed::eval
