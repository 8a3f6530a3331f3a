// Stepping an evaluation one entry instruction at a time
// (eval::Evaluation, evaluate.h): the schedule, the same values as
// Evaluate's hook, values let go after their last use, errors and misuse.
// Also the thread pool under every evaluation (thread_pool.h): its
// ParallelFor and the cache of idle pools that evaluations lease.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "decomposed/eval/evaluate.h"
#include "decomposed/eval/thread_pool.h"
#include "decomposed/hlo/builder.h"
#include "decomposed/hlo/shape_inference.h"
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tp_test_models.h"

namespace decomposed::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using hlo::HloComputationBuilder;
using hlo::HloModuleBuilder;
using hlo::HloOp;
using hlo::MakeArrayShape;

struct Chain {
  std::unique_ptr<hlo::HloModule> module;
  std::string dead, a, b, c;
};

// x -> a = exp(x) -> b = negate(a) -> c = b + x; root (c, b); plus an
// instruction nothing needs.
Chain BuildChain() {
  HloModuleBuilder mb("chain");
  HloComputationBuilder& m = mb.AddEntryComputation("main");
  HloOp x = m.Parameter(0, MakeArrayShape(xla::F32, {3}), "x");
  HloOp dead = m.Sqrt(x);
  HloOp a = m.Exp(x);
  HloOp b = m.Negate(a);
  HloOp c = m.Add(b, x);
  m.Tuple({c, b});
  return {tp_test::BuildModule(mb), dead.name(), a.name(), b.name(), c.name()};
}

TEST(EvalThreadPool, ParallelForCoversTheRangeOnceAndNestsInline) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, 7, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
    // A nested call runs inline, on this thread, without deadlock.
    pool.ParallelFor(4, 1, [](int64_t, int64_t) {});
  });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(EvalThreadPool, LeasesReuseAnIdlePoolAndNeverShareOne) {
  // 7 threads: a size no other test or evaluation here leases, so the
  // process-wide cache holds none of it to begin with.
  ThreadPool* first = nullptr;
  {
    ThreadPoolLease a(7);
    first = &a.pool();
    EXPECT_EQ(a.pool().threads(), 7);
    // Held at the same time: two pools.
    ThreadPoolLease b(7);
    EXPECT_NE(&b.pool(), first);
  }
  // Both given back; the next lease of that size takes one of them.
  ThreadPoolLease c(7);
  ThreadPoolLease d(7);
  EXPECT_TRUE(&c.pool() == first || &d.pool() == first);
  ThreadPoolLease e(2);  // another size: never a 7-thread pool
  EXPECT_EQ(e.pool().threads(), 2);
}

TEST(EvalThreadPool, ABodyThatThrowsReachesTheCallerAndThePoolGoesOn) {
  ThreadPoolLease a(6);
  ThreadPool& pool = a.pool();
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.ParallelFor(24, 1,
                                [&](int64_t b, int64_t) {
                                  ++ran;
                                  if (b % 2 == 0) throw std::runtime_error("x");
                                }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 24);  // every range ran, none was left half done
  EXPECT_TRUE(pool.idle());
  // The calling thread is not left "inside a body": its next job runs on
  // two threads at once.
  std::atomic<int> arrived{0}, saw_both{0};
  pool.ParallelFor(2, 1, [&](int64_t, int64_t) {
    ++arrived;
    for (int i = 0; i < 2000 && arrived.load() < 2; ++i) usleep(1000);
    saw_both += arrived.load() == 2;  // run one after the other: only 1
  });
  EXPECT_EQ(saw_both.load(), 2);
}

TEST(EvalThreadPool, AForkedChildStartsItsOwnPools) {
  { ThreadPoolLease warm(2); }  // an idle pool whose workers the child lacks
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a join of the parent's workers would hang: fail instead
    std::atomic<int64_t> sum{0};
    {
      // The first lease would get the inherited pool; it is given back
      // last, to a full cache, so it is joined here.
      auto first = std::make_unique<ThreadPoolLease>(2);
      first->pool().ParallelFor(100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
      std::vector<std::unique_ptr<ThreadPoolLease>> more;
      for (int i = 0; i < 4; ++i) more.push_back(std::make_unique<ThreadPoolLease>(2));
      more.clear();
      first.reset();
    }
    _exit(sum.load() == 100 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Inputs given by value are released after their last use, as every value
// is; inputs given by span stay with the caller. The input is a borrowed
// array whose keep-alive records when its last holder lets go.
TEST(EvalEvaluation, InputsGivenByValueAreReleasedAfterTheirLastUse) {
  static const float kData[3] = {1, 2, 3};
  HloModuleBuilder mb("release");
  HloComputationBuilder& m = mb.AddEntryComputation("main");
  HloOp x = m.Parameter(0, MakeArrayShape(xla::F32, {3}), "x");
  HloOp unused = m.Parameter(1, MakeArrayShape(xla::F32, {3}), "unused");
  (void)unused;
  HloOp a = m.Exp(x);
  HloOp b = m.Negate(a);
  const std::string b_name = b.name();
  auto module = tp_test::BuildModule(mb);
  for (bool by_value : {true, false}) {
    auto released = std::make_shared<std::vector<bool>>(2, false);
    std::vector<Value> in;
    for (int i = 0; i < 2; ++i) {
      std::shared_ptr<const void> keep(new int(i), [released, i](const void* p) {
        delete static_cast<const int*>(p);
        (*released)[i] = true;
      });
      absl::StatusOr<Array> arr = Array::Borrow(PrimitiveType::kF32, {3},
                                                reinterpret_cast<const char*>(kData), 12, keep);
      ASSERT_TRUE(arr.ok()) << arr.status();
      in.push_back(Value(*arr));
    }
    std::vector<bool> at_negate;
    EvalOptions o;
    o.on_instruction = [&](const InstructionEvent& e) {
      if (e.instruction.name() == b_name) at_negate = *released;
      return absl::OkStatus();
    };
    absl::StatusOr<Value> r = by_value ? Evaluate(*module, std::move(in), o)
                                       : Evaluate(*module, in, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(testing::ToVector<float>(r->array()),
                ElementsAre(-std::exp(1.0f), -std::exp(2.0f), -std::exp(3.0f)));
    if (by_value) {
      // x was let go after exp, the unneeded parameter at the start.
      EXPECT_THAT(at_negate, ElementsAre(true, true));
    } else {
      EXPECT_THAT(at_negate, ElementsAre(false, false));  // the caller holds them
      in.clear();
      EXPECT_THAT(*released, ElementsAre(true, true));
    }
  }
}

// An input given by value is its parameter's only holder, so an update at
// its last use writes it in place (a KV cache is not copied); given by span,
// the caller still holds it and the update writes a copy.
TEST(EvalEvaluation, AnUpdateOfAnInputGivenByValueWritesItInPlace) {
  HloModuleBuilder mb("kv");
  HloComputationBuilder& m = mb.AddEntryComputation("main");
  HloOp cache = m.Parameter(0, MakeArrayShape(xla::F32, {4}), "cache");
  HloOp update = m.Parameter(1, MakeArrayShape(xla::F32, {1}), "update");
  HloOp at = m.Parameter(2, MakeArrayShape(xla::S32, {}), "at");
  HloOp dus = m.DynamicUpdateSlice(cache, update, {at});
  m.Negate(dus);
  auto module = tp_test::BuildModule(mb);
  for (bool by_value : {true, false}) {
    std::vector<Value> in = {
        Value(testing::MakeArray<float>(PrimitiveType::kF32, {4}, {1, 2, 3, 4})),
        Value(testing::MakeArray<float>(PrimitiveType::kF32, {1}, {9})),
        Value(testing::MakeArray<int32_t>(PrimitiveType::kS32, {}, {2}))};
    const char* cache_bytes = in[0].array().data();
    const char* updated = nullptr;
    EvalOptions o;
    o.on_instruction = [&](const InstructionEvent& e) {
      if (e.instruction.name() == dus.name()) updated = e.value.array().data();
      return absl::OkStatus();
    };
    absl::StatusOr<Value> r = by_value ? Evaluate(*module, std::move(in), o)
                                       : Evaluate(*module, in, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(testing::ToVector<float>(r->array()), ElementsAre(-1, -2, -9, -4));
    EXPECT_EQ(updated == cache_bytes, by_value) << (by_value ? "by value" : "by span");
    if (!by_value) {
      EXPECT_THAT(testing::ToVector<float>(in[0].array()), ElementsAre(1, 2, 3, 4));
    }
  }
}

TEST(EvalEvaluation, StepsFollowTheScheduleWithEvaluatesValues) {
  Chain chain = BuildChain();
  ASSERT_NE(chain.module, nullptr);
  const std::vector<Value> in = {testing::MakeArray<float>(PrimitiveType::kF32, {3}, {0, 1, 2})};
  std::map<std::string, std::vector<float>> seen;
  EvalOptions o;
  o.on_instruction = [&](const InstructionEvent& e) {
    if (e.value.is_array()) seen[e.instruction.name()] = testing::ToVector<float>(e.value.array());
    return absl::OkStatus();
  };
  absl::StatusOr<Value> whole = Evaluate(*chain.module, in, o);
  ASSERT_TRUE(whole.ok()) << whole.status();

  int hook_calls = 0;
  EvalOptions counting;
  counting.on_instruction = [&](const InstructionEvent&) {
    ++hook_calls;
    return absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<Evaluation>> ev = Evaluation::Start(*chain.module, in, counting);
  ASSERT_TRUE(ev.ok()) << ev.status();
  std::vector<std::string> names;
  for (const hlo::HloInstruction* i : (*ev)->schedule()) names.push_back(i->name());
  EXPECT_THAT(names, ElementsAre("x", chain.a, chain.b, chain.c, chain.module->entry()->root()->name()));
  EXPECT_TRUE((*ev)->value().is_tuple());  // nothing stepped yet
  while (!(*ev)->done()) {
    const int64_t before = (*ev)->steps_done();
    absl::StatusOr<const hlo::HloInstruction*> i = (*ev)->Step();
    ASSERT_TRUE(i.ok()) << i.status();
    EXPECT_EQ(*i, (*ev)->schedule()[before]);
    if ((*ev)->value().is_array()) {
      EXPECT_EQ(testing::ToVector<float>((*ev)->value().array()), seen[(*i)->name()]) << (*i)->name();
    }
  }
  EXPECT_EQ(hook_calls, 5);  // the hook runs as in Evaluate
  absl::StatusOr<Value> root = (*ev)->Finish();
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(testing::ToVector<float>(root->element(0).array()),
            testing::ToVector<float>(whole->element(0).array()));
  absl::StatusOr<const hlo::HloInstruction*> past = (*ev)->Step();
  EXPECT_EQ(past.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*ev)->Finish().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EvalEvaluation, ValuesAreLetGoAfterTheirLastUse) {
  Chain chain = BuildChain();
  const std::vector<Value> in = {testing::MakeArray<float>(PrimitiveType::kF32, {3}, {0, 1, 2})};
  auto ev = *Evaluation::Start(*chain.module, in, {});
  std::weak_ptr<const void> a;
  while (!ev->done()) {
    const hlo::HloInstruction* i = *ev->Step();
    if (i->name() == chain.a) a = ev->value().array().storage();
    // a's last use is b: after b's step nothing holds it.
    if (i->name() == chain.b) {
      EXPECT_TRUE(a.expired());
    }
    if (i->name() == chain.a) {
      EXPECT_FALSE(a.expired());
    }
  }
}

TEST(EvalEvaluation, AnUpdateBeforeItsOperandsLastUseLeavesTheOperand) {
  // x = exp(p) is owned by the run alone; the dynamic-update-slice is not
  // its last use (the negate after it is), so it must not write x in place.
  // (Found by bisect_fuzz: a substituted neighbour no longer shared x's
  // storage, and the update wrote into the value the negate then read.)
  HloModuleBuilder mb("dus");
  HloComputationBuilder& m = mb.AddEntryComputation("main");
  HloOp p = m.Parameter(0, MakeArrayShape(xla::F32, {4}), "p");
  HloOp x = m.Exp(p);
  HloOp u = m.DynamicUpdateSlice(x, m.ConstantR1(xla::F32, {100}), {m.ConstantR0Int(xla::S32, 1)});
  HloOp y = m.Negate(x);
  m.Tuple({u, y});
  auto module = tp_test::BuildModule(mb);
  ASSERT_NE(module, nullptr);
  const std::vector<Value> in = {testing::MakeArray<float>(PrimitiveType::kF32, {4}, {0, 0, 0, 0})};
  absl::StatusOr<Value> r = Evaluate(*module, in, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(testing::ToVector<float>(r->element(0).array()), ElementsAre(1, 100, 1, 1));
  EXPECT_THAT(testing::ToVector<float>(r->element(1).array()), ElementsAre(-1, -1, -1, -1));
  (void)u;
  (void)y;
}

TEST(EvalEvaluation, AnErrorStopsTheSteps) {
  HloModuleBuilder mb("nki");
  HloComputationBuilder& m = mb.AddEntryComputation("main");
  HloOp x = m.Parameter(0, MakeArrayShape(xla::F32, {2}), "x");
  m.CustomCall("AwsNeuronCustomNativeKernel", {x}, MakeArrayShape(xla::F32, {2}));
  auto module = tp_test::BuildModule(mb);
  const std::vector<Value> in = {testing::MakeArray<float>(PrimitiveType::kF32, {2}, {1, 2})};
  auto ev = *Evaluation::Start(*module, in, {});
  ASSERT_TRUE(ev->Step().ok());  // the parameter
  absl::StatusOr<const hlo::HloInstruction*> s = ev->Step();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.status().message(), HasSubstr("--substitute"));
  EXPECT_EQ(ev->Step().status().code(), absl::StatusCode::kFailedPrecondition);
  // Bad inputs are refused at the start.
  const std::vector<Value> none;
  EXPECT_EQ(Evaluation::Start(*module, none, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace decomposed::eval
