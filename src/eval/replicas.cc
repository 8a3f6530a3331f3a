// Replaying several ranks together (eval/replicas.h, docs/eval.md §10): one
// thread per rank, meeting at each collective in a ReplicaHub, each rank
// computing its result from the participants' operands in group order.
#include "decomposed/eval/replicas.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/xla/element_value.h"
#include "src/eval/ops.h"
#include "src/eval/replica_hub.h"
#include "src/eval/types.h"

#if defined(DECOMPOSED_HAVE_OPENBLAS)
extern "C" void openblas_set_num_threads(int);
#endif

namespace decomposed::eval {

using hlo::HloInstruction;
using hlo::HloOpcode;

std::string_view CollectiveGroupModeName(CollectiveGroupMode m) {
  switch (m) {
    case CollectiveGroupMode::kCrossReplica: return "cross-replica";
    case CollectiveGroupMode::kCrossPartition: return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition: return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId: return "flattened-id";
  }
  return "?";
}

namespace {

bool IsPermute(HloOpcode op) {
  return op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart;
}

// The ops whose proto carries use_global_device_ids as XLA reads it.
bool HasGlobalDeviceIdsAttribute(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter: case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
      return true;
    default:
      return false;
  }
}

std::string GroupsString(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<std::string> parts;
  for (const auto& g : groups) parts.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string PairsString(const HloInstruction& instr) {
  std::vector<std::string> parts;
  for (const auto& p : instr.proto().source_target_pairs()) {
    parts.push_back(absl::StrCat("{", p.source(), ",", p.target(), "}"));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// The replica and partition counts a collective of mode `m` sees.
struct Axes {
  int64_t replicas = 1;
  int64_t partitions = 1;
};

Axes AxesFor(const ReplicaLayout& l, CollectiveGroupMode m) {
  if (l.replica_count == 0 && l.partition_count == 0) {
    // Flat: the ranks are the axis the collective's ids name.
    if (m == CollectiveGroupMode::kCrossPartition) return {1, l.ranks};
    return {l.ranks, 1};
  }
  return {l.replica_count, l.partition_count};
}

absl::Status CheckLayout(const ReplicaLayout& l) {
  if (l.ranks < 1) return absl::InvalidArgumentError("expected at least one rank, found none");
  if (l.replica_count == 0 && l.partition_count == 0) return absl::OkStatus();
  if (l.replica_count < 1 || l.partition_count < 1 ||
      l.replica_count > l.ranks || l.partition_count > l.ranks ||
      l.replica_count * l.partition_count != l.ranks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected replica_count * partition_count == ", l.ranks, " ranks, found ",
        l.replica_count, " * ", l.partition_count));
  }
  return absl::OkStatus();
}

absl::Status GroupError(const HloInstruction& instr, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      hlo::DescribeInstruction(instr), " (", instr.opcode_string(), "): ", Sv(what)));
}

// XLA's GetParticipatingIDs: the group of `id` (all of 0..total-1 for no
// groups).
absl::StatusOr<std::vector<int64_t>> GroupOf(const HloInstruction& instr,
                                             const std::vector<std::vector<int64_t>>& groups,
                                             int64_t id, int64_t total, std::string_view kind) {
  if (groups.empty()) {
    std::vector<int64_t> all(total);
    for (int64_t i = 0; i < total; ++i) all[i] = i;
    return all;
  }
  const std::vector<int64_t>* found = nullptr;
  for (const auto& g : groups) {
    if (std::find(g.begin(), g.end(), id) == g.end()) continue;
    if (found) {
      return GroupError(instr, absl::StrCat(Sv(kind), " ", id, " is in two replica groups of ",
                                            GroupsString(groups)));
    }
    found = &g;
  }
  if (!found) {
    return GroupError(instr, absl::StrCat(Sv(kind), " ", id, " is in no replica group of ",
                                          GroupsString(groups)));
  }
  for (int64_t m : *found) {
    if (m < 0 || m >= total) {
      return GroupError(instr, absl::StrCat("replica_groups=", GroupsString(groups), " names ",
                                            Sv(kind), " ", m, ", expected one below ", total));
    }
  }
  std::vector<int64_t> sorted = *found;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return GroupError(instr, absl::StrCat("replica_groups=", GroupsString(groups),
                                          " repeats a member"));
  }
  return *found;
}

}  // namespace

absl::StatusOr<CollectiveGroupMode> CollectiveGroupModeOf(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (!hlo::IsCollective(op)) {
    return GroupError(instr, "expected a collective");
  }
  const bool channel = instr.channel_id().has_value();
  if (HasGlobalDeviceIdsAttribute(op)) {
    const bool global = instr.proto().use_global_device_ids();
    if (!channel) {
      if (global) {
        return GroupError(instr, "use_global_device_ids=true needs a channel_id");
      }
      return CollectiveGroupMode::kCrossReplica;
    }
    return global ? CollectiveGroupMode::kFlattenedId
                  : CollectiveGroupMode::kCrossReplicaAndPartition;
  }
  return channel ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
}

absl::StatusOr<std::vector<int64_t>> ParticipatingRanks(const HloInstruction& instr,
                                                        int64_t rank,
                                                        const ReplicaLayout& layout) {
  if (absl::Status s = CheckLayout(layout); !s.ok()) return s;
  if (rank < 0 || rank >= layout.ranks) {
    return absl::InvalidArgumentError(absl::StrCat("expected a rank below ", layout.ranks,
                                                   ", found ", rank));
  }
  absl::StatusOr<CollectiveGroupMode> mode = CollectiveGroupModeOf(instr);
  if (!mode.ok()) return mode.status();
  const Axes axes = AxesFor(layout, *mode);
  const int64_t replica = rank / axes.partitions;
  const int64_t partition = rank % axes.partitions;
  auto device = [&](int64_t r, int64_t p) { return r * axes.partitions + p; };
  std::vector<int64_t> out;
  if (IsPermute(instr.opcode())) {
    // Pairs of replica ids within this partition, or of partition ids
    // within this replica.
    const bool by_partition = *mode == CollectiveGroupMode::kCrossPartition;
    const int64_t me = by_partition ? partition : replica;
    const int64_t total = by_partition ? axes.partitions : axes.replicas;
    for (const auto& p : instr.proto().source_target_pairs()) {
      if (p.source() < 0 || p.source() >= total || p.target() < 0 || p.target() >= total) {
        return GroupError(instr, absl::StrCat("source_target_pairs=", PairsString(instr),
                                              " names an id past ", total - 1));
      }
      if (p.target() != me) continue;
      if (!out.empty()) {
        return GroupError(instr, absl::StrCat("source_target_pairs=", PairsString(instr),
                                              " has two sources for ", me));
      }
      out.push_back(by_partition ? device(replica, p.source()) : device(p.source(), partition));
    }
    return out;
  }
  const std::vector<std::vector<int64_t>> groups = instr.ReplicaGroups();
  switch (*mode) {
    case CollectiveGroupMode::kCrossReplica: {
      absl::StatusOr<std::vector<int64_t>> g = GroupOf(instr, groups, replica, axes.replicas, "replica");
      if (!g.ok()) return g.status();
      for (int64_t r : *g) out.push_back(device(r, partition));
      return out;
    }
    case CollectiveGroupMode::kCrossPartition: {
      absl::StatusOr<std::vector<int64_t>> g =
          GroupOf(instr, groups, partition, axes.partitions, "partition");
      if (!g.ok()) return g.status();
      for (int64_t p : *g) out.push_back(device(replica, p));
      return out;
    }
    case CollectiveGroupMode::kCrossReplicaAndPartition: {
      absl::StatusOr<std::vector<int64_t>> g = GroupOf(instr, groups, replica, axes.replicas, "replica");
      if (!g.ok()) return g.status();
      for (int64_t r : *g) {
        for (int64_t p = 0; p < axes.partitions; ++p) out.push_back(device(r, p));
      }
      return out;
    }
    case CollectiveGroupMode::kFlattenedId: {
      if (groups.empty()) {
        return GroupError(instr, "use_global_device_ids=true needs replica_groups");
      }
      return GroupOf(instr, groups, rank, axes.replicas * axes.partitions, "device");
    }
  }
  return out;
}

namespace internal {

absl::Status CheckReplicaLayout(const ReplicaLayout& layout) { return CheckLayout(layout); }

absl::StatusOr<std::vector<Value>> RanksResult(std::vector<absl::StatusOr<Value>> results,
                                               int64_t first_rank) {
  int64_t first = -1;
  for (int64_t r = 0; r < static_cast<int64_t>(results.size()); ++r) {
    if (results[r].ok()) continue;
    if (first < 0 || (results[first].status().code() == absl::StatusCode::kAborted &&
                      results[r].status().code() != absl::StatusCode::kAborted)) {
      first = r;
    }
  }
  if (first >= 0) {
    const absl::Status& s = results[first].status();
    return absl::Status(s.code(), absl::StrCat("rank ", first_rank + first, ": ", s.message()));
  }
  std::vector<Value> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(*std::move(r));
  return out;
}

std::string WaitPlace(int64_t rank, int64_t n) {
  // The instruction is named by the error's prefix (the driver's).
  return absl::StrCat("rank ", rank, " waits here, at its collective ", n + 1);
}

// Every rank posts its operands for each collective it reaches (its n-th),
// then waits for the postings of the ranks it needs at the same n. A slot
// is freed once every rank has taken from it.
absl::StatusOr<std::vector<std::shared_ptr<const ReplicaHub::Posting>>> InProcessHub::Exchange(
    int64_t rank, int64_t n, std::shared_ptr<const Posting> mine,
    std::span<const int64_t> wait_for) {
  std::unique_lock<std::mutex> l(mu_);
  Slot& slot = slots_[n];
  if (slot.by_rank.empty()) slot.by_rank.resize(static_cast<size_t>(layout().ranks));
  slot.by_rank[rank] = mine;
  cv_.notify_all();
  std::vector<std::shared_ptr<const Posting>> got;
  got.reserve(wait_for.size());
  for (int64_t q : wait_for) {
    cv_.wait(l, [&] { return slot.by_rank[q] || ended_[q].ended; });
    if (!slot.by_rank[q]) {
      const Ended& e = ended_[q];
      const std::string where = WaitPlace(rank, n);
      if (e.failed) {
        return absl::AbortedError(
            absl::StrCat(where, " for rank ", q, ", which stopped with an error"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          where, ", but rank ", q, " finished after ", e.collectives,
          " collectives: the ranks do not run the same collectives"));
    }
    got.push_back(slot.by_rank[q]);
  }
  if (++slot.taken == layout().ranks) slots_.erase(n);
  return got;
}

absl::Status InProcessHub::End(int64_t rank, int64_t collectives, const absl::Status& result) {
  std::lock_guard<std::mutex> l(mu_);
  ended_[rank] = {true, !result.ok(), collectives};
  cv_.notify_all();
  return absl::OkStatus();
}

int64_t RankReplicaId(const RankState& r) {
  const ReplicaLayout& l = r.hub->layout();
  if (l.replica_count == 0 && l.partition_count == 0) return r.rank;
  return r.rank / l.partition_count;
}

int64_t RankPartitionId(const RankState& r) {
  const ReplicaLayout& l = r.hub->layout();
  if (l.replica_count == 0 && l.partition_count == 0) return r.rank;
  return r.rank % l.partition_count;
}

namespace {

// What the participants must agree on.
std::string Signature(const HloInstruction& instr, Operands ops) {
  std::string s = instr.opcode_string();
  if (IsPermute(instr.opcode())) {
    absl::StrAppend(&s, " source_target_pairs=", PairsString(instr));
  } else {
    absl::StrAppend(&s, " replica_groups=", GroupsString(instr.ReplicaGroups()));
  }
  if (instr.channel_id()) absl::StrAppend(&s, " channel_id");
  if (instr.proto().use_global_device_ids()) absl::StrAppend(&s, " use_global_device_ids=true");
  if (!instr.dimensions().empty()) {
    absl::StrAppend(&s, " dimensions={", absl::StrJoin(instr.dimensions(), ","), "}");
  }
  std::vector<std::string> shapes;
  for (const Value* v : ops) shapes.push_back(v->ShapeString());
  absl::StrAppend(&s, " operands (", absl::StrJoin(shapes, ", "), ")");
  return s;
}

bool IsRealFloat(PrimitiveType t) { return KindOf(t) == ElementKind::kReal; }

absl::StatusOr<std::vector<const Array*>> ArraysAt(
    const std::vector<std::shared_ptr<const ReplicaHub::Posting>>& got, size_t k) {
  std::vector<const Array*> xs;
  for (const auto& p : got) {
    if (k >= p->values.size() || !p->values[k].is_array()) {
      return Expected(absl::StrCat("an array operand ", k, " from every participant"),
                      k < p->values.size() ? p->values[k].ShapeString() : "none");
    }
    xs.push_back(&p->values[k].array());
  }
  return xs;
}

// x0 op x1 op ... in order. Real-float adds sum in f64 and round once.
absl::StatusOr<Array> ReduceInOrder(Ctx& ctx, const hlo::HloComputation& reducer,
                                    const std::vector<const Array*>& xs) {
  const PrimitiveType t = xs[0]->type();
  for (const Array* x : xs) {
    if (x->type() != t || x->dims() != xs[0]->dims()) {
      return Expected(absl::StrCat("operands of one shape ", xs[0]->ShapeString()),
                      x->ShapeString());
    }
  }
  const HloOpcode op = SimpleBinaryReducer(reducer);
  if (op == HloOpcode::kAdd && IsRealFloat(t)) {
    absl::StatusOr<Array> acc = Alloc(ctx, PrimitiveType::kF64, xs[0]->dims());
    if (!acc.ok()) return acc.status();
    double* a = acc->mutable_data<double>();
    const int64_t n = acc->element_count();
    for (size_t i = 0; i < xs.size(); ++i) {
      absl::StatusOr<Array> d = ConvertArray(ctx, *xs[i], PrimitiveType::kF64);
      if (!d.ok()) return d.status();
      absl::StatusOr<Array> c = d->Contiguous(ctx.max_bytes);
      if (!c.ok()) return c.status();
      const double* p = c->data<double>();
      if (i == 0) {
        std::memcpy(a, p, static_cast<size_t>(n) * sizeof(double));
      } else {
        ctx.pool->ParallelFor(n, 1 << 15, [&](int64_t b, int64_t e) {
          for (int64_t j = b; j < e; ++j) a[j] += p[j];
        });
      }
    }
    return ConvertArray(ctx, *acc, t);
  }
  Array acc = *xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    absl::StatusOr<Array> next;
    if (op != HloOpcode::kUnknown) {
      next = ApplyBinary(ctx, op, acc, *xs[i]);
    } else if (IsLiftable(reducer)) {
      const Value args[] = {acc, *xs[i]};
      absl::StatusOr<Value> v = CallLifted(ctx, reducer, args);
      if (!v.ok()) return v.status();
      if (!v->is_array()) return Unsupported("a reducer that returns a tuple");
      next = v->array();
    } else {
      return Unsupported("a reducer that is not elementwise on scalars");
    }
    if (!next.ok()) return next.status();
    acc = *std::move(next);
  }
  if (acc.type() != t) return ConvertArray(ctx, acc, t);
  return acc;
}

// The pieces concatenated along `dim`, in order.
absl::StatusOr<Array> ConcatAlong(const Ctx& ctx, const std::vector<Array>& pieces, int64_t dim) {
  std::vector<int64_t> dims = pieces[0].dims();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) {
    return Expected(absl::StrCat("a dimension below ", dims.size()), absl::StrCat(dim));
  }
  int64_t total = 0;
  for (const Array& p : pieces) total += p.dims()[dim];
  dims[dim] = total;
  absl::StatusOr<Array> out = Alloc(ctx, pieces[0].type(), dims);
  if (!out.ok()) return out.status();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t w = out->element_bytes();
  const size_t row = static_cast<size_t>(total * inner) * w;
  size_t at = 0;
  for (const Array& piece : pieces) {
    absl::StatusOr<Array> c = piece.Contiguous(ctx.max_bytes);
    if (!c.ok()) return c.status();
    const size_t part = static_cast<size_t>(piece.dims()[dim] * inner) * w;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out->mutable_data() + o * row + at, c->data() + o * part, part);
    }
    at += part;
  }
  return *out;
}

// Piece `index` of `count` equal pieces of `x` along `dim`.
absl::StatusOr<Array> PieceAlong(const Ctx& ctx, const Array& x, int64_t dim, int64_t index,
                                 int64_t count) {
  if (dim < 0 || dim >= x.rank()) {
    return Expected(absl::StrCat("a dimension below ", x.rank()), absl::StrCat(dim));
  }
  if (count <= 0 || x.dims()[dim] % count != 0) {
    return Expected(absl::StrCat("dimension ", dim, " of ", x.ShapeString(), " divisible by ",
                                 count, " participants"),
                    absl::StrCat(x.dims()[dim]));
  }
  std::vector<int64_t> dims = x.dims();
  const int64_t size = dims[dim] / count;
  dims[dim] = size;
  absl::StatusOr<Array> c = x.Contiguous(ctx.max_bytes);
  if (!c.ok()) return c.status();
  absl::StatusOr<Array> out = Alloc(ctx, x.type(), dims);
  if (!out.ok()) return out.status();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t w = x.element_bytes();
  const size_t part = static_cast<size_t>(size * inner) * w;
  const size_t row = part * static_cast<size_t>(count);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(out->mutable_data() + o * part, c->data() + o * row + index * part, part);
  }
  return *out;
}

Value OneOrTuple(std::vector<Value> v) {
  if (v.size() == 1) return std::move(v[0]);
  return Value::Tuple(std::move(v));
}

}  // namespace

absl::StatusOr<Value> StartTuple(const Ctx& ctx, const HloInstruction& instr, Operands ops,
                                 Value result) {
  std::vector<Value> in;
  for (const Value* v : ops) in.push_back(*v);
  std::vector<Value> parts = {OneOrTuple(std::move(in)), std::move(result)};
  const xla::ShapeProto& s = instr.shape();
  for (int i = 2; IsTupleShape(s) && i < s.tuple_shapes_size(); ++i) {
    const xla::ShapeProto& e = s.tuple_shapes(i);
    if (IsTupleShape(e)) return Unsupported("a tuple context element of an async start");
    absl::StatusOr<Array> z = Array::Zeros(ctx.policy->StorageType(TypeOf(e)), DimsOf(e), ctx.max_bytes);
    if (!z.ok()) return z.status();
    parts.push_back(*z);
  }
  return Value::Tuple(std::move(parts));
}

absl::StatusOr<Value> EvalReplicatedCollective(Ctx& ctx, const HloInstruction& instr,
                                               Operands ops) {
  RankState& rs = *ctx.rank;
  ReplicaHub& hub = *rs.hub;
  const int64_t n = rs.collectives++;
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kCollectiveReduce || op == HloOpcode::kRaggedAllToAll) {
    return Unsupported(absl::StrCat("\"", instr.opcode_string(), "\" across ranks is not implemented"));
  }
  if (ops.empty()) return Expected("at least 1 operand", "none");
  absl::StatusOr<std::vector<int64_t>> parts = ParticipatingRanks(instr, rs.rank, hub.layout());
  if (!parts.ok()) return parts.status();
  if (IsPermute(op) && ops.size() != 1) {
    return Unsupported("the in-place (4-operand) collective-permute");
  }
  auto mine = std::make_shared<ReplicaHub::Posting>();
  mine->instr = &instr;
  mine->signature = Signature(instr, ops);
  for (const Value* v : ops) mine->values.push_back(*v);
  const std::string signature = mine->signature;
  absl::StatusOr<std::vector<std::shared_ptr<const ReplicaHub::Posting>>> got =
      hub.Exchange(rs.rank, n, std::move(mine), *parts);
  if (!got.ok()) return got.status();
  for (size_t i = 0; i < got->size(); ++i) {
    const ReplicaHub::Posting& p = *(*got)[i];
    if (p.signature != signature) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank ", rs.rank, " and rank ", (*parts)[i], " disagree on their collective ", n + 1,
          ": rank ", rs.rank, " has ", hlo::DescribeInstruction(instr), ": ", signature,
          "; rank ", (*parts)[i], " has ", hlo::DescribeInstruction(*p.instr), ": ", p.signature));
    }
  }
  const int64_t count = static_cast<int64_t>(parts->size());
  const int64_t me = IsPermute(op) ? 0
                                   : std::find(parts->begin(), parts->end(), rs.rank) - parts->begin();
  std::vector<Value> results;
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter: {
      const hlo::HloComputation* reducer = instr.to_apply();
      if (!reducer) return Expected("a reduction computation", "none");
      for (size_t k = 0; k < ops.size(); ++k) {
        absl::StatusOr<std::vector<const Array*>> xs = ArraysAt(*got, k);
        if (!xs.ok()) return xs.status();
        absl::StatusOr<Array> r = ReduceInOrder(ctx, *reducer, *xs);
        if (!r.ok()) return r.status();
        if (op == HloOpcode::kReduceScatter) {
          if (instr.dimensions().empty()) return Expected("a scatter dimension", "none");
          r = PieceAlong(ctx, *r, instr.dimensions()[0], me, count);
          if (!r.ok()) return r.status();
        }
        results.push_back(*r);
      }
      return OneOrTuple(std::move(results));
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      if (instr.dimensions().empty()) return Expected("an all-gather dimension", "none");
      for (size_t k = 0; k < ops.size(); ++k) {
        absl::StatusOr<std::vector<const Array*>> xs = ArraysAt(*got, k);
        if (!xs.ok()) return xs.status();
        std::vector<Array> pieces;
        for (const Array* x : *xs) pieces.push_back(*x);
        absl::StatusOr<Array> r = ConcatAlong(ctx, pieces, instr.dimensions()[0]);
        if (!r.ok()) return r.status();
        results.push_back(*r);
      }
      Value r = OneOrTuple(std::move(results));
      if (op == HloOpcode::kAllGatherStart) return StartTuple(ctx, instr, ops, std::move(r));
      return r;
    }
    case HloOpcode::kAllToAll: {
      if (!instr.dimensions().empty()) {
        if (ops.size() != 1) return Expected("1 operand with a split dimension", absl::StrCat(ops.size()));
        absl::StatusOr<std::vector<const Array*>> xs = ArraysAt(*got, 0);
        if (!xs.ok()) return xs.status();
        const int64_t dim = instr.dimensions()[0];
        std::vector<Array> pieces;
        for (const Array* x : *xs) {
          absl::StatusOr<Array> p = PieceAlong(ctx, *x, dim, me, count);
          if (!p.ok()) return p.status();
          pieces.push_back(*p);
        }
        absl::StatusOr<Array> r = ConcatAlong(ctx, pieces, dim);
        if (!r.ok()) return r.status();
        return Value(*r);
      }
      if (static_cast<int64_t>(ops.size()) != count) {
        return Expected(absl::StrCat(count, " operands (one per participant)"),
                        absl::StrCat(ops.size()));
      }
      for (const auto& p : *got) results.push_back(p->values[me]);
      return Value::Tuple(std::move(results));
    }
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      Value r;
      if (got->empty()) {
        if (!ops[0]->is_array()) return Unsupported("a collective-permute of a tuple");
        absl::StatusOr<Array> z = Array::Zeros(ops[0]->array().type(), ops[0]->array().dims(), ctx.max_bytes);
        if (!z.ok()) return z.status();
        r = *z;
      } else {
        r = (*got)[0]->values[0];
      }
      if (op == HloOpcode::kCollectivePermuteStart) return StartTuple(ctx, instr, ops, std::move(r));
      return r;
    }
    case HloOpcode::kCollectiveBroadcast: {
      return OneOrTuple((*got)[0]->values);
    }
    default:
      break;
  }
  return Unsupported(absl::StrCat("\"", instr.opcode_string(), "\" across ranks is not implemented"));
}

}  // namespace internal

absl::StatusOr<std::vector<Value>> EvaluateReplicas(std::span<const hlo::HloModule* const> modules,
                                                    std::span<const std::vector<Value>> inputs,
                                                    const ReplicaOptions& options) {
  const int64_t ranks = static_cast<int64_t>(inputs.size());
  ReplicaLayout layout{ranks, options.replica_count, options.partition_count};
  if (absl::Status s = CheckLayout(layout); !s.ok()) return s;
  if (modules.size() != 1 && static_cast<int64_t>(modules.size()) != ranks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected 1 module or one per rank (", ranks, "), found ", modules.size()));
  }
  for (const hlo::HloModule* m : modules) {
    if (!m) return absl::InvalidArgumentError("a module is null");
  }
  if (!options.rank_substitutes.empty() &&
      static_cast<int64_t>(options.rank_substitutes.size()) != ranks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected rank_substitutes for every rank (", ranks, "), found ",
        options.rank_substitutes.size()));
  }
  int threads = options.eval.threads;
  if (threads <= 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max<int>(1, cores / static_cast<int>(std::min<int64_t>(ranks, cores)));
  }
#if defined(DECOMPOSED_HAVE_OPENBLAS)
  // Set once, before the ranks start: a rank never changes the BLAS's
  // threads while another is inside a GEMM.
  openblas_set_num_threads(threads);
#endif
  internal::InProcessHub hub(layout);
  std::mutex hook_mu;
  std::vector<absl::StatusOr<Value>> results(static_cast<size_t>(ranks),
                                             absl::UnknownError("not run"));
  auto run_rank = [&](int64_t r) {
    EvalOptions o = options.eval;
    o.threads = threads;
    o.on_instruction = nullptr;
    if (options.on_instruction) {
      o.on_instruction = [&, r](const InstructionEvent& e) {
        std::lock_guard<std::mutex> l(hook_mu);
        return options.on_instruction(r, e);
      };
    }
    if (!options.rank_substitutes.empty()) {
      for (const auto& [name, v] : options.rank_substitutes[r]) o.substitutes[name] = v;
    }
    internal::RankState state;
    state.hub = &hub;
    state.rank = r;
    const hlo::HloModule& m = *modules[modules.size() == 1 ? 0 : r];
    results[r] = internal::EvaluateOnRank(m, inputs[r], o, &state);
    (void)hub.End(r, state.collectives, results[r].status());
  };
  if (ranks == 1) {
    run_rank(0);
  } else {
    std::vector<std::thread> workers;
    workers.reserve(static_cast<size_t>(ranks));
    for (int64_t r = 0; r < ranks; ++r) workers.emplace_back(run_rank, r);
    for (std::thread& t : workers) t.join();
  }
  return internal::RanksResult(std::move(results), 0);
}

}  // namespace decomposed::eval
