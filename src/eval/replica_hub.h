// Private to src/eval: where the ranks of a replay meet at their
// collectives (replicas.cc). Two transports: InProcessHub, ranks as
// threads of one process (EvaluateReplicas), and the MPI hub, ranks as
// processes of an MPI job (replicas_mpi.cc, EvaluateRanksOverMpi).
#ifndef DECOMPOSED_SRC_EVAL_REPLICA_HUB_H_
#define DECOMPOSED_SRC_EVAL_REPLICA_HUB_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/eval/value.h"
#include "decomposed/hlo/module.h"

namespace decomposed::eval::internal {

class ReplicaHub {
 public:
  // One rank's operands for one collective.
  struct Posting {
    const hlo::HloInstruction* instr = nullptr;
    // What the participants must agree on (opcode, groups, dimensions,
    // operand shapes).
    std::string signature;
    std::vector<Value> values;
  };

  explicit ReplicaHub(const ReplicaLayout& layout) : layout_(layout) {}
  virtual ~ReplicaHub() = default;
  const ReplicaLayout& layout() const { return layout_; }

  // Posts `mine` as `rank`'s n-th collective (counting from 0) and returns
  // the postings of `wait_for` for their n-th, in that order. Errors: a
  // rank waited for ended or failed first (kAborted when it failed).
  virtual absl::StatusOr<std::vector<std::shared_ptr<const Posting>>> Exchange(
      int64_t rank, int64_t n, std::shared_ptr<const Posting> mine,
      std::span<const int64_t> wait_for) = 0;

  // Rank `rank` will post no more: it finished after `collectives`
  // collectives (`result` OK), or failed with `result`. An error when the
  // ranks did not end together.
  virtual absl::Status End(int64_t rank, int64_t collectives, const absl::Status& result) = 0;

 private:
  const ReplicaLayout layout_;
};

// Ranks as threads of this process: postings are shared, never copied.
class InProcessHub : public ReplicaHub {
 public:
  explicit InProcessHub(const ReplicaLayout& layout)
      : ReplicaHub(layout), ended_(static_cast<size_t>(layout.ranks)) {}
  absl::StatusOr<std::vector<std::shared_ptr<const Posting>>> Exchange(
      int64_t rank, int64_t n, std::shared_ptr<const Posting> mine,
      std::span<const int64_t> wait_for) override;
  absl::Status End(int64_t rank, int64_t collectives, const absl::Status& result) override;

 private:
  struct Slot {
    std::vector<std::shared_ptr<const Posting>> by_rank;
    int64_t taken = 0;
  };
  struct Ended {
    bool ended = false;
    bool failed = false;
    int64_t collectives = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Slot> slots_;
  std::vector<Ended> ended_;
};

// "rank R waits here, at its collective n+1": how an error of a rank
// waiting at its n-th collective begins.
std::string WaitPlace(int64_t rank, int64_t n);

// The ranks' results in rank order, or the first rank's own error (one
// caused by another rank's stop, kAborted, only when there is no other)
// prefixed "rank R: ", R counted from `first_rank` (replicas.cc).
absl::StatusOr<std::vector<Value>> RanksResult(std::vector<absl::StatusOr<Value>> results,
                                               int64_t first_rank);

// kInvalidArgument unless the layout's counts multiply out (replicas.cc).
absl::Status CheckReplicaLayout(const ReplicaLayout& layout);

}  // namespace decomposed::eval::internal

#endif  // DECOMPOSED_SRC_EVAL_REPLICA_HUB_H_
