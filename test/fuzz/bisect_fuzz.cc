// libFuzzer target: divergence origins (analysis/divergence.h) on random
// modules (hlo/random_module.h) with a random planted fault. The bytes pick
// the module (seed, size), the input values, the instruction to perturb,
// the element, and whether the two sides run the same numerics. Bisect
// must never crash, hang or allocate past its limit; when both sides run
// the same numerics (so the fault is the only difference) and the run
// succeeds, the planted instruction must be an origin, every origin must be
// downstream of it, and every output that differs must be downstream of an
// origin. Evaluations run under a 1 MiB array limit and a 64-iteration loop
// guard.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>

#include "../planted_fault.h"
#include "decomposed/analysis/divergence.h"
#include "decomposed/eval/evaluate.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/random_module.h"

namespace {

using namespace decomposed;

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t Next() { return i_ < n_ ? d_[i_++] : 0; }
  uint64_t Next64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = v << 8 | Next();
    return v;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

// Stops the run with what failed (a trap the fuzzer reports).
#define BISECT_CHECK(cond, what)                                  \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "bisect_fuzz: %s\n", what);           \
      __builtin_trap();                                           \
    }                                                             \
  } while (0)

bool Reaches(const hlo::HloInstruction* from, const hlo::HloInstruction* to) {
  std::set<const hlo::HloInstruction*> seen = {from};
  std::vector<const hlo::HloInstruction*> stack = {from};
  while (!stack.empty()) {
    const hlo::HloInstruction* i = stack.back();
    stack.pop_back();
    if (i == to) return true;
    for (const hlo::HloInstruction* u : i->users()) {
      if (seen.insert(u).second) stack.push_back(u);
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes b(data, size);
  const uint64_t seed = b.Next64();
  hlo::RandomModuleOptions ro;
  ro.steps = 4 + b.Next() % 24;
  ro.max_dim = 1 + b.Next() % 6;
  ro.attributes = b.Next() % 2;
  absl::StatusOr<xla::HloModuleProto> proto = hlo::RandomModule(seed, ro);
  if (!proto.ok()) return 0;
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::HloModule::Create(*std::move(proto));
  if (!m.ok()) return 0;
  std::mt19937 g(static_cast<uint32_t>(b.Next64()));
  const bool finite = b.Next() % 4 != 0;
  std::vector<eval::Value> in;
  for (const hlo::HloInstruction* p : (*m)->entry()->parameters()) {
    if (!p) return 0;
    std::optional<eval::Value> v = planted::RandomValue(p->shape(), g, finite);
    if (!v) return 0;
    in.push_back(*v);
  }
  eval::EvalOptions eo;
  eo.threads = 1;
  eo.max_array_bytes = 1 << 20;
  eo.max_loop_iterations = 64;
  // The planted instruction's value, from a plain run.
  absl::StatusOr<std::unique_ptr<eval::Evaluation>> ev = eval::Evaluation::Start(**m, in, eo);
  if (!ev.ok()) return 0;
  const auto schedule = (*ev)->schedule();
  if (schedule.empty()) return 0;
  const hlo::HloInstruction* x = schedule[b.Next64() % schedule.size()];
  std::optional<eval::Value> value;
  while (!(*ev)->done()) {
    absl::StatusOr<const hlo::HloInstruction*> i = (*ev)->Step();
    if (!i.ok()) return 0;
    if (*i == x) value = (*ev)->value();
  }
  BISECT_CHECK(value, "the planted instruction was not stepped");
  std::optional<eval::Value> bad = planted::Perturbed(*value, b.Next64());
  if (!bad) return 0;
  const bool same_numerics = b.Next() % 4 != 0;
  BisectOptions o;
  o.actual = eo;
  o.reference = eo;
  if (!same_numerics) o.reference.numerics = eval::Numerics::kF32;
  (b.Next() % 2 ? o.actual : o.reference).substitutes[x->name()] = *bad;
  absl::StatusOr<BisectReport> r = Bisect(**m, in, o);
  if (!r.ok()) {
    BISECT_CHECK(!r.status().message().empty(), "an error without a message");
    return 0;
  }
  // The reports always render.
  BISECT_CHECK(!BisectReportJson(*r).empty() && !BisectReportText(*r, 3).empty(),
               "an empty report");
  if (!same_numerics) return 0;
  bool planted_found = false;
  for (const DivergenceOrigin& origin : r->origins) {
    planted_found |= origin.instruction == x;
    BISECT_CHECK(Reaches(x, origin.instruction), "an origin not downstream of the fault");
  }
  BISECT_CHECK(planted_found, "the planted instruction is not an origin");
  for (const OutputVerdict& out : r->outputs) {
    if (!out.differs) continue;
    const hlo::HloInstruction* oi = (*m)->entry()->FindInstruction(out.instruction);
    bool reached = false;
    for (const DivergenceOrigin& origin : r->origins) reached |= Reaches(origin.instruction, oi);
    BISECT_CHECK(reached, "a differing output downstream of no origin");
  }
  return 0;
}
