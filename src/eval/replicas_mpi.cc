// The ranks of a replay as the processes of an MPI job (eval/replicas.h,
// EvaluateRankOverMpi; docs/eval.md §10.5). Built with MPI only when
// DECOMPOSED_WITH_MPI is on; otherwise EvaluateRankOverMpi says so.
//
// The protocol keeps every process in step without a timeout: each time a
// rank reaches a collective, and once when it ends (finished or failed),
// every rank takes part in one round, an all-gather of a small header
// (what it is at: a collective, the end, a failure) and of its collective's
// signature. A round in which every rank is at a collective with the same
// signature is followed by the exchange proper, point to point: each rank
// sends its operands to the ranks whose participants include it, and
// receives from its own participants. Any other round (a rank ended or
// failed, or the signatures differ) ends the replay on every rank with the
// same error, so no rank is left waiting.
#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "decomposed/eval/replicas.h"
#include "src/eval/ops.h"
#include "src/eval/replica_hub.h"

#if defined(DECOMPOSED_HAVE_MPI)
#include <mpi.h>

#include <cstring>
#include <limits>
#endif

#if defined(DECOMPOSED_HAVE_OPENBLAS)
extern "C" void openblas_set_num_threads(int);
#endif

namespace decomposed::eval {

#if !defined(DECOMPOSED_HAVE_MPI)

bool ReplicasOverMpiAvailable() { return false; }

absl::StatusOr<Value> EvaluateRankOverMpi(const hlo::HloModule&, std::span<const Value>,
                                          const ReplicaOptions&) {
  return absl::UnimplementedError(
      "this build has no MPI: configure with -DDECOMPOSED_WITH_MPI=ON (Debian: libopenmpi-dev)");
}

absl::StatusOr<MpiProcess> StartMpi() {
  return absl::UnimplementedError(
      "this build has no MPI: configure with -DDECOMPOSED_WITH_MPI=ON (Debian: libopenmpi-dev)");
}

void FinishMpi() {}

absl::Status AllProcessesOk(const absl::Status& mine) { return mine; }

#else

namespace {
bool started_mpi = false;  // StartMpi called MPI_Init
}  // namespace

absl::StatusOr<MpiProcess> StartMpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return absl::FailedPreconditionError("MPI was finalised already in this process");
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Init failed: is this process started by mpirun?");
    }
    started_mpi = true;
  }
  MpiProcess p;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.size);
  return p;
}

absl::Status AllProcessesOk(const absl::Status& mine) {
  int failed = mine.ok() ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!mine.ok()) return mine;
  if (any != 0) return absl::FailedPreconditionError("another process could not start its rank");
  return absl::OkStatus();
}

void FinishMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (started_mpi && !finalized) MPI_Finalize();
  started_mpi = false;
}

bool ReplicasOverMpiAvailable() { return true; }

namespace internal {
namespace {

// --- Values on the wire -------------------------------------------------------
// A value: u8 1 (tuple), u64 count, the elements; or u8 0 (array), u32 type,
// u64 rank, the dims (i64 each), u64 bytes, the contiguous bytes.

void PutU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

absl::Status Serialize(const Value& v, std::string& out) {
  if (v.is_tuple()) {
    out.push_back(1);
    PutU64(out, v.element_count());
    for (const Value& e : v.elements()) {
      if (absl::Status s = Serialize(e, out); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  out.push_back(0);
  const Array& a = v.array();
  absl::StatusOr<Array> c = a.Contiguous();
  if (!c.ok()) return c.status();
  const uint32_t t = static_cast<uint32_t>(c->type());
  out.append(reinterpret_cast<const char*>(&t), 4);
  PutU64(out, static_cast<uint64_t>(c->rank()));
  for (int64_t d : c->dims()) PutU64(out, static_cast<uint64_t>(d));
  PutU64(out, c->byte_size());
  out.append(c->data(), static_cast<size_t>(c->byte_size()));
  return absl::OkStatus();
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool U64(uint64_t* v) { return Bytes(v, 8); }
  bool Bytes(void* dst, size_t n) {
    if (s_.size() - at_ < n) return false;
    std::memcpy(dst, s_.data() + at_, n);
    at_ += n;
    return true;
  }
  std::string_view Take(size_t n) {
    if (s_.size() - at_ < n) return {};
    std::string_view v = s_.substr(at_, n);
    at_ += n;
    return v;
  }
  bool done() const { return at_ == s_.size(); }

 private:
  std::string_view s_;
  size_t at_ = 0;
};

absl::StatusOr<Value> Deserialize(Reader& r, int depth = 0) {
  auto bad = [] { return absl::DataLossError("a malformed value from another rank"); };
  if (depth > 64) return bad();
  uint8_t kind = 0;
  if (!r.Bytes(&kind, 1)) return bad();
  if (kind == 1) {
    uint64_t n = 0;
    if (!r.U64(&n) || n > (uint64_t{1} << 20)) return bad();
    std::vector<Value> e;
    for (uint64_t i = 0; i < n; ++i) {
      absl::StatusOr<Value> v = Deserialize(r, depth + 1);
      if (!v.ok()) return v.status();
      e.push_back(*std::move(v));
    }
    return Value::Tuple(std::move(e));
  }
  uint32_t t = 0;
  uint64_t rank = 0, bytes = 0;
  if (kind != 0 || !r.Bytes(&t, 4) || t >= kNumPrimitiveTypes || !r.U64(&rank) || rank > 64) {
    return bad();
  }
  std::vector<int64_t> dims(rank);
  for (int64_t& d : dims) {
    uint64_t v = 0;
    if (!r.U64(&v)) return bad();
    d = static_cast<int64_t>(v);
  }
  if (!r.U64(&bytes)) return bad();
  std::string_view data = r.Take(bytes);
  if (data.size() != bytes) return bad();
  absl::StatusOr<Array> a = Array::Copy(static_cast<PrimitiveType>(t), dims, data);
  if (!a.ok()) return a.status();
  return Value(*std::move(a));
}

// --- Messages of any size --------------------------------------------------------

constexpr int kTag = 77;
// MPI counts are ints: a message goes in pieces of at most 1 GiB.
constexpr size_t kPiece = size_t{1} << 30;

struct Outgoing {
  std::string bytes;
  uint64_t size = 0;
  std::vector<MPI_Request> requests;
};

void StartSend(Outgoing& o, int to, MPI_Comm comm) {
  o.size = o.bytes.size();
  o.requests.emplace_back();
  MPI_Isend(&o.size, 8, MPI_BYTE, to, kTag, comm, &o.requests.back());
  for (size_t at = 0; at < o.bytes.size(); at += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, o.bytes.size() - at));
    o.requests.emplace_back();
    MPI_Isend(o.bytes.data() + at, n, MPI_BYTE, to, kTag, comm, &o.requests.back());
  }
}

absl::StatusOr<std::string> Receive(int from, MPI_Comm comm) {
  uint64_t size = 0;
  if (MPI_Recv(&size, 8, MPI_BYTE, from, kTag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("receiving from rank ", from));
  }
  std::string out;
  out.resize(size);
  for (size_t at = 0; at < size; at += kPiece) {
    const int n = static_cast<int>(std::min<uint64_t>(kPiece, size - at));
    if (MPI_Recv(out.data() + at, n, MPI_BYTE, from, kTag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return absl::UnavailableError(absl::StrCat("receiving from rank ", from));
    }
  }
  return out;
}

// --- The hub ---------------------------------------------------------------------

class MpiHub : public ReplicaHub {
 public:
  MpiHub(const ReplicaLayout& layout, MPI_Comm comm) : ReplicaHub(layout), comm_(comm) {}

  absl::StatusOr<std::vector<std::shared_ptr<const Posting>>> Exchange(
      int64_t rank, int64_t n, std::shared_ptr<const Posting> mine,
      std::span<const int64_t> wait_for) override {
    if (closed_) return absl::FailedPreconditionError("the replay has ended");
    absl::StatusOr<std::vector<Header>> round = Round(kAtCollective, n, mine->signature);
    if (!round.ok()) return round.status();
    const std::string where = WaitPlace(rank, n);
    for (int64_t q = 0; q < layout().ranks; ++q) {
      const Header& h = (*round)[q];
      if (h.kind == kFailed) {
        closed_ = true;
        return absl::AbortedError(absl::StrCat(where, " for rank ", q, ", which stopped with an error"));
      }
      if (h.kind == kEnded) {
        closed_ = true;
        return absl::FailedPreconditionError(absl::StrCat(
            where, ", but rank ", q, " finished after ", h.n,
            " collectives: the ranks do not run the same collectives"));
      }
    }
    for (int64_t q = 0; q < layout().ranks; ++q) {
      if (signatures_[q] != mine->signature) {
        closed_ = true;
        return absl::InvalidArgumentError(absl::StrCat(
            "rank ", rank, " and rank ", q, " disagree on their collective ", n + 1, ": rank ",
            rank, " has ", hlo::DescribeInstruction(*mine->instr), ": ", mine->signature,
            "; rank ", q, " has ", signatures_[q]));
      }
    }
    // Every rank runs this collective with this signature: each can tell
    // who needs its operands.
    std::string mine_bytes;
    for (const Value& v : mine->values) {
      if (absl::Status s = Serialize(v, mine_bytes); !s.ok()) return s;
    }
    std::vector<Outgoing> out;
    out.reserve(static_cast<size_t>(layout().ranks));
    for (int64_t q = 0; q < layout().ranks; ++q) {
      if (q == rank) continue;
      absl::StatusOr<std::vector<int64_t>> theirs = ParticipatingRanks(*mine->instr, q, layout());
      if (!theirs.ok()) continue;  // rank q failed on it already, and said so
      if (std::find(theirs->begin(), theirs->end(), rank) == theirs->end()) continue;
      out.emplace_back();
      out.back().bytes = mine_bytes;
      StartSend(out.back(), static_cast<int>(q), comm_);
    }
    std::vector<std::shared_ptr<const Posting>> got;
    absl::Status failed;
    for (int64_t p : wait_for) {
      if (p == rank) {
        got.push_back(mine);
        continue;
      }
      absl::StatusOr<std::string> bytes = Receive(static_cast<int>(p), comm_);
      if (!bytes.ok()) {
        failed = bytes.status();
        break;
      }
      auto posting = std::make_shared<Posting>();
      posting->instr = mine->instr;
      posting->signature = signatures_[p];
      Reader r(*bytes);
      for (size_t k = 0; k < mine->values.size(); ++k) {
        absl::StatusOr<Value> v = Deserialize(r);
        if (!v.ok()) {
          failed = v.status();
          break;
        }
        posting->values.push_back(*std::move(v));
      }
      if (!failed.ok()) break;
      if (!r.done()) {
        failed = absl::DataLossError(absl::StrCat("rank ", p, " sent more than its operands"));
        break;
      }
      got.push_back(std::move(posting));
    }
    for (Outgoing& o : out) {
      MPI_Waitall(static_cast<int>(o.requests.size()), o.requests.data(), MPI_STATUSES_IGNORE);
    }
    if (!failed.ok()) return failed;
    return got;
  }

  absl::Status End(int64_t rank, int64_t collectives, bool failed) override {
    if (closed_) return absl::OkStatus();
    closed_ = true;
    absl::StatusOr<std::vector<Header>> round = Round(failed ? kFailed : kEnded, collectives, "");
    if (!round.ok()) return round.status();
    if (failed) return absl::OkStatus();
    for (int64_t q = 0; q < layout().ranks; ++q) {
      const Header& h = (*round)[q];
      if (h.kind == kAtCollective) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank ", rank, " finished after ", collectives, " collectives while rank ", q,
            " waits at its collective ", h.n + 1, ": the ranks do not run the same collectives"));
      }
    }
    return absl::OkStatus();
  }

 private:
  enum Kind : int64_t { kAtCollective = 1, kEnded = 2, kFailed = 3 };
  struct Header {
    int64_t kind = 0;
    int64_t n = 0;
    int64_t signature_bytes = 0;
  };

  // One round: every rank's header and signature (into signatures_).
  absl::StatusOr<std::vector<Header>> Round(Kind kind, int64_t n, const std::string& signature) {
    const int ranks = static_cast<int>(layout().ranks);
    Header mine{kind, n, static_cast<int64_t>(signature.size())};
    std::vector<Header> all(static_cast<size_t>(ranks));
    if (MPI_Allgather(&mine, sizeof(Header), MPI_BYTE, all.data(), sizeof(Header), MPI_BYTE,
                      comm_) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Allgather of the ranks' headers failed");
    }
    std::vector<int> counts(ranks), displs(ranks);
    int total = 0;
    for (int q = 0; q < ranks; ++q) {
      if (all[q].signature_bytes < 0 || all[q].signature_bytes > (1 << 20)) {
        return absl::DataLossError(absl::StrCat("rank ", q, " sent a malformed header"));
      }
      counts[q] = static_cast<int>(all[q].signature_bytes);
      displs[q] = total;
      total += counts[q];
    }
    std::string gathered(static_cast<size_t>(total), '\0');
    if (MPI_Allgatherv(signature.data(), static_cast<int>(signature.size()), MPI_BYTE,
                       gathered.data(), counts.data(), displs.data(), MPI_BYTE,
                       comm_) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Allgatherv of the ranks' signatures failed");
    }
    signatures_.assign(static_cast<size_t>(ranks), "");
    for (int q = 0; q < ranks; ++q) signatures_[q] = gathered.substr(displs[q], counts[q]);
    return all;
  }

  MPI_Comm comm_;
  bool closed_ = false;
  std::vector<std::string> signatures_;
};

}  // namespace
}  // namespace internal

absl::StatusOr<Value> EvaluateRankOverMpi(const hlo::HloModule& module,
                                          std::span<const Value> inputs,
                                          const ReplicaOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    return absl::FailedPreconditionError("expected MPI to be initialised (MPI_Init) before the replay");
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The processes sharing this machine share its cores.
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int local_size = 1;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  const ReplicaLayout layout{size, options.replica_count, options.partition_count};
  absl::StatusOr<Value> result = absl::UnknownError("not run");
  {
    internal::MpiHub hub(layout, comm);
    EvalOptions o = options.eval;
    if (o.threads <= 0) {
      const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      o.threads = std::max(1, cores / std::max(1, local_size));
    }
#if defined(DECOMPOSED_HAVE_OPENBLAS)
    openblas_set_num_threads(o.threads);
#endif
    if (options.on_instruction) {
      o.on_instruction = [&](const InstructionEvent& e) { return options.on_instruction(rank, e); };
    }
    internal::RankState state;
    state.hub = &hub;
    state.rank = rank;
    if (!options.rank_substitutes.empty() &&
        static_cast<int>(options.rank_substitutes.size()) != size) {
      result = absl::InvalidArgumentError(absl::StrCat(
          "expected rank_substitutes for every rank (", size, "), found ",
          options.rank_substitutes.size()));
    } else {
      if (!options.rank_substitutes.empty()) {
        for (const auto& [name, v] : options.rank_substitutes[rank]) o.substitutes[name] = v;
      }
      result = internal::EvaluateOnRank(module, inputs, o, &state);
    }
    // Every rank ends with one round, failed or not: none is left waiting.
    absl::Status end = hub.End(rank, state.collectives, !result.ok());
    if (result.ok() && !end.ok()) result = end;
  }
  MPI_Comm_free(&comm);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("rank ", rank, ": ", result.status().message()));
  }
  return result;
}

#endif

}  // namespace decomposed::eval
