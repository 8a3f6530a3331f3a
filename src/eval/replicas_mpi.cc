// The ranks of a replay spread over the processes of an MPI job
// (eval/replicas.h, EvaluateRanksOverMpi; docs/eval.md §10.5). Built with
// MPI only when DECOMPOSED_WITH_MPI is on; otherwise the entry points say
// so.
//
// Each process runs its share of the ranks as threads (as EvaluateReplicas
// runs all of them) and meets the other processes in steps. A step begins
// when every local rank is at a collective or has ended (finished or
// failed); then the calling thread, the only one that calls MPI, takes
// part in one round over the whole job: an all-gather of every rank's
// header (what it is at: a collective, the end, a failure) and of its
// collective's signature. A round in which every rank is at a collective
// with the same signature is followed by the exchange proper: the
// processes joined by the collective's groups form one communicator
// (MPI_Comm_split, kept for the next collective with the same groups),
// and one MPI_Alltoallv over it gives each process the operands of the
// ranks its own ranks need. The results are then computed on each rank
// from the operands in group order, as EvaluateReplicas does, so the bytes
// are the in-process replay's. Any other round (a rank ended or failed, or
// the signatures differ) ends the replay on every process with the same
// error, so no process is left waiting.
#include <algorithm>
#include <mutex>
#include <numeric>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/eval/replicas.h"
#include "decomposed/status.h"
#include "src/eval/ops.h"
#include "src/eval/replica_hub.h"

#if defined(DECOMPOSED_HAVE_MPI)
#include <mpi.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <limits>
#endif

#if defined(DECOMPOSED_HAVE_OPENBLAS)
extern "C" void openblas_set_num_threads(int);
#endif

namespace decomposed::eval {

RankShare MpiRankShare(int64_t process, int64_t processes, int64_t ranks) {
  if (processes < 1 || process < 0 || process >= processes || ranks < 0) return {};
  const int64_t base = ranks / processes, extra = ranks % processes;
  RankShare s;
  s.first = process * base + std::min(process, extra);
  s.end = s.first + base + (process < extra ? 1 : 0);
  return s;
}

#if !defined(DECOMPOSED_HAVE_MPI)

namespace {
absl::Status NoMpi() {
  return absl::UnimplementedError(
      "this build has no MPI: configure with -DDECOMPOSED_WITH_MPI=ON (Debian: libopenmpi-dev)");
}
}  // namespace

bool ReplicasOverMpiAvailable() { return false; }

absl::StatusOr<std::vector<Value>> EvaluateRanksOverMpi(std::span<const hlo::HloModule* const>,
                                                        std::span<const std::vector<Value>>,
                                                        int64_t, const ReplicaOptions&) {
  return NoMpi();
}

absl::StatusOr<Value> EvaluateRankOverMpi(const hlo::HloModule&, std::span<const Value>,
                                          const ReplicaOptions&) {
  return NoMpi();
}

absl::StatusOr<MpiProcess> StartMpi() { return NoMpi(); }

void FinishMpi() {}

absl::Status AllProcessesOk(const absl::Status& mine) { return mine; }

#else

namespace {
bool started_mpi = false;  // StartMpi called MPI_Init_thread
}  // namespace

absl::StatusOr<MpiProcess> StartMpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return absl::FailedPreconditionError("MPI was finalised already in this process");
    // The ranks are threads; only this one calls MPI.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Init_thread failed: is this process started by mpirun?");
    }
    started_mpi = true;
  }
  MpiProcess p;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.size);
  return p;
}

namespace {
// Whether every process of `comm` is ready: `mine` when it is an error,
// else an error when any other process's is.
absl::Status Agree(MPI_Comm comm, const absl::Status& mine) {
  int failed = mine.ok() ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!mine.ok()) return mine;
  if (any != 0) return absl::FailedPreconditionError("another process could not start its ranks");
  return absl::OkStatus();
}
}  // namespace

absl::Status AllProcessesOk(const absl::Status& mine) { return Agree(MPI_COMM_WORLD, mine); }

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

absl::Status Serialize(const Value& v, uint64_t max_bytes, std::string& out) {
  if (v.is_tuple()) {
    out.push_back(1);
    PutU64(out, v.element_count());
    for (const Value& e : v.elements()) {
      if (absl::Status s = Serialize(e, max_bytes, out); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  out.push_back(0);
  const Array& a = v.array();
  // A broadcast view is stored small and sent whole: its bytes are
  // allocated here, within the evaluation's limit.
  if (a.byte_size() > max_bytes || out.size() + a.byte_size() > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sending an operand of ", a.byte_size(), " bytes to another process would pass the "
        "limit of ", max_bytes, " bytes (max_array_bytes)"));
  }
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

// --- The hub ---------------------------------------------------------------------

// The process that runs `rank`: MpiRankShare's blocks (processes <= ranks).
int ProcessOf(int64_t rank, int processes, int64_t ranks) {
  const int64_t base = ranks / processes, extra = ranks % processes;
  const int64_t big = extra * (base + 1);
  if (rank < big) return static_cast<int>(rank / (base + 1));
  return static_cast<int>(extra + (rank - big) / base);
}

// Bytes [from, from + n) of the concatenation of `pieces`, copied to dst.
void CopyRange(const std::vector<const std::string*>& pieces, uint64_t from, uint64_t n,
               char* dst) {
  for (const std::string* p : pieces) {
    if (n == 0) return;
    if (from >= p->size()) {
      from -= p->size();
      continue;
    }
    const uint64_t take = std::min<uint64_t>(n, p->size() - from);
    std::memcpy(dst, p->data() + from, take);
    dst += take;
    n -= take;
    from = 0;
  }
}

// One MPI_Alltoallv moves at most this many bytes in all (MPI's counts and
// displacements are ints); larger exchanges take several.
constexpr uint64_t kRoundBytes = uint64_t{1} << 30;

class MpiHub : public ReplicaHub {
 public:
  MpiHub(const ReplicaLayout& layout, MPI_Comm comm, int process, int processes,
         uint64_t max_bytes)
      : ReplicaHub(layout),
        max_bytes_(max_bytes),
        comm_(comm),
        process_(process),
        processes_(processes),
        share_(MpiRankShare(process, processes, layout.ranks)),
        slots_(static_cast<size_t>(share_.end - share_.first)) {}

  ~MpiHub() override {
    for (auto& [key, c] : comms_) MPI_Comm_free(&c);
  }

  absl::StatusOr<std::vector<std::shared_ptr<const Posting>>> Exchange(
      int64_t rank, int64_t n, std::shared_ptr<const Posting> mine,
      std::span<const int64_t> wait_for) override {
    std::unique_lock<std::mutex> l(mu_);
    if (closed_) return absl::FailedPreconditionError("the replay has ended");
    const std::shared_ptr<const Posting> keep = mine;
    std::string payload = keep->signature;
    payload.push_back('\0');
    payload += hlo::DescribeInstruction(*keep->instr);
    Arrive(l, rank, Slot{kAtCollective, n, std::move(mine), std::move(payload)});
    const Outcome& o = outcome_;
    if (!o.exchanged) {
      return o.job_error.ok() ? absl::InternalError(absl::StrCat(WaitPlace(rank, n), ": the round failed"))
                              : o.job_error;
    }
    if (!o.error.ok()) return o.error;
    std::vector<std::shared_ptr<const Posting>> got;
    got.reserve(wait_for.size());
    for (int64_t q : wait_for) {
      if (q >= share_.first && q < share_.end) {
        got.push_back(o.local[q - share_.first]);
        continue;
      }
      auto it = o.remote.find(q);
      if (it == o.remote.end()) {
        return absl::DataLossError(absl::StrCat(WaitPlace(rank, n), ": rank ", q,
                                                "'s operands did not arrive"));
      }
      got.push_back(it->second);
    }
    return got;
  }

  absl::Status End(int64_t rank, int64_t collectives, const absl::Status& result) override {
    std::unique_lock<std::mutex> l(mu_);
    if (closed_) return absl::OkStatus();
    // A failure travels to every process as its code and message.
    std::string payload;
    if (!result.ok()) {
      payload = absl::StrCat(static_cast<int>(result.code()), "\n",
                             result.message().substr(0, kMaxMessage));
    }
    Arrive(l, rank, Slot{result.ok() ? kEnded : kFailed, collectives, nullptr, std::move(payload)});
    if (!result.ok()) return absl::OkStatus();
    return outcome_.job_error;
  }

  // Once the replay has ended: the error every process reports, the same
  // on each (built from the last round alone), or OK when every rank
  // finished. The first rank's own failure (one caused by another's stop,
  // kAborted, only when there is no other), else ranks that ended while
  // others wait, else ranks that disagree on their collective.
  absl::Status job_error() {
    std::lock_guard<std::mutex> l(mu_);
    return outcome_.job_error;
  }

  // The calling thread's part, while the ranks run: every step's round
  // and exchange, until a round ends the replay.
  void Drive() {
    const size_t local = slots_.size();
    for (;;) {
      std::vector<Slot> slots;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return arrived_ == local; });
        slots.swap(slots_);
        slots_.assign(local, Slot{});
      }
      Outcome o = Step(slots);
      const bool done = !o.exchanged;
      {
        std::lock_guard<std::mutex> l(mu_);
        outcome_ = std::move(o);
        arrived_ = 0;
        ++step_;
        closed_ = done;
      }
      cv_.notify_all();
      if (done) return;
    }
  }

 private:
  enum Kind : int64_t { kNone = 0, kAtCollective = 1, kEnded = 2, kFailed = 3 };
  struct Header {
    int64_t kind = kNone;
    int64_t n = 0;
    int64_t signature_bytes = 0;
  };
  // A local rank at this step.
  struct Slot {
    int64_t kind = kNone;
    int64_t n = 0;
    std::shared_ptr<const Posting> posting;
    // What the round carries: at a collective, its signature, a NUL and
    // the instruction; failed, the status code, a newline and the message.
    std::string payload;
  };
  static constexpr size_t kMaxMessage = size_t{64} << 10;
  // What a step gave: every rank's header and signature; when every rank
  // was at the same collective (exchanged), the local ranks' postings and
  // the others' this process needs.
  struct Outcome {
    bool exchanged = false;
    absl::Status error;      // this process's, of an exchange
    absl::Status job_error;  // every process's, of a round that ends it
    std::vector<Header> headers;
    std::vector<std::string> signatures;
    std::vector<std::shared_ptr<const Posting>> local;
    std::map<int64_t, std::shared_ptr<const Posting>> remote;
  };

  // Posts this rank's slot and waits for the step's outcome (outcome_
  // stays this step's until this rank arrives again).
  void Arrive(std::unique_lock<std::mutex>& l, int64_t rank, Slot slot) {
    slots_[rank - share_.first] = std::move(slot);
    ++arrived_;
    const int64_t step = step_;
    cv_.notify_all();
    cv_.wait(l, [&] { return step_ != step; });
  }

  // The signature and the instruction of a rank at a collective.
  static std::pair<std::string_view, std::string_view> SignatureOf(std::string_view payload) {
    const size_t nul = payload.find('\0');
    if (nul == std::string_view::npos) return {payload, ""};
    return {payload.substr(0, nul), payload.substr(nul + 1)};
  }

  // The error of a round that ends the replay: JobError's rules, from what
  // every process received.
  absl::Status JobError(const Outcome& o) const {
    const int64_t ranks = static_cast<int64_t>(o.headers.size());
    int64_t failed = -1;
    absl::Status failure;
    for (int64_t q = 0; q < ranks; ++q) {
      if (o.headers[q].kind != kFailed) continue;
      const std::string& p = o.signatures[q];
      const size_t nl = p.find('\n');
      int code = static_cast<int>(absl::StatusCode::kUnknown);
      if (nl == std::string::npos || !absl::SimpleAtoi(p.substr(0, nl), &code) || code <= 0 ||
          code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
        code = static_cast<int>(absl::StatusCode::kUnknown);
      }
      absl::Status s(static_cast<absl::StatusCode>(code),
                     absl::StrCat("rank ", q, ": ", nl == std::string::npos ? p : p.substr(nl + 1)));
      if (failed < 0 || (failure.code() == absl::StatusCode::kAborted &&
                         s.code() != absl::StatusCode::kAborted)) {
        failed = q;
        failure = s;
      }
    }
    if (failed >= 0) return failure;
    int64_t waits = -1, ended = -1;
    for (int64_t q = 0; q < ranks; ++q) {
      if (o.headers[q].kind == kAtCollective && waits < 0) waits = q;
      if (o.headers[q].kind == kEnded && ended < 0) ended = q;
    }
    if (waits >= 0 && ended >= 0) {
      const auto [sig, instr] = SignatureOf(o.signatures[waits]);
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", waits, " waits at its collective ", o.headers[waits].n + 1, ", ", Sv(instr),
          " (", Sv(sig), "), but rank ", ended, " finished after ", o.headers[ended].n,
          " collectives: the ranks do not run the same collectives"));
    }
    if (waits >= 0) {
      const auto [sig0, instr0] = SignatureOf(o.signatures[0]);
      for (int64_t q = 1; q < ranks; ++q) {
        const auto [sig, instr] = SignatureOf(o.signatures[q]);
        if (sig == sig0) continue;
        return absl::InvalidArgumentError(absl::StrCat(
            "rank 0 and rank ", q, " disagree on their collective ", o.headers[0].n + 1,
            ": rank 0 has ", Sv(instr0), ": ", Sv(sig0), "; rank ", q, " has ", Sv(instr), ": ",
            Sv(sig)));
      }
    }
    return absl::OkStatus();
  }

  // This process's ranks: [first, end) of each process.
  RankShare ShareOf(int p) const { return MpiRankShare(p, processes_, layout().ranks); }

  // Every rank's header and signature, from every process.
  absl::Status Round(const std::vector<Slot>& slots, Outcome& o) {
    const int64_t ranks = layout().ranks;
    std::vector<Header> mine;
    std::string my_signatures;
    for (const Slot& s : slots) {
      mine.push_back({s.kind, s.n, static_cast<int64_t>(s.payload.size())});
      my_signatures += s.payload;
    }
    std::vector<int> counts(processes_), displs(processes_);
    int total = 0;
    for (int p = 0; p < processes_; ++p) {
      const RankShare s = ShareOf(p);
      counts[p] = static_cast<int>((s.end - s.first) * static_cast<int64_t>(sizeof(Header)));
      displs[p] = total;
      total += counts[p];
    }
    o.headers.assign(static_cast<size_t>(ranks), Header{});
    if (MPI_Allgatherv(mine.data(), counts[process_], MPI_BYTE, o.headers.data(), counts.data(),
                       displs.data(), MPI_BYTE, comm_) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Allgatherv of the ranks' headers failed");
    }
    total = 0;
    for (int p = 0; p < processes_; ++p) {
      const RankShare s = ShareOf(p);
      int64_t bytes = 0;
      for (int64_t q = s.first; q < s.end; ++q) {
        const Header& h = o.headers[q];
        if (h.signature_bytes < 0 || h.signature_bytes > (1 << 20) || h.kind < kAtCollective ||
            h.kind > kFailed) {
          return absl::DataLossError(absl::StrCat("rank ", q, " sent a malformed header"));
        }
        bytes += h.signature_bytes;
      }
      counts[p] = static_cast<int>(bytes);
      displs[p] = total;
      total += counts[p];
    }
    std::string gathered(static_cast<size_t>(total), '\0');
    if (MPI_Allgatherv(my_signatures.data(), static_cast<int>(my_signatures.size()), MPI_BYTE,
                       gathered.data(), counts.data(), displs.data(), MPI_BYTE,
                       comm_) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Allgatherv of the ranks' signatures failed");
    }
    o.signatures.assign(static_cast<size_t>(ranks), "");
    size_t at = 0;
    for (int64_t q = 0; q < ranks; ++q) {
      o.signatures[q] = gathered.substr(at, static_cast<size_t>(o.headers[q].signature_bytes));
      at += static_cast<size_t>(o.headers[q].signature_bytes);
    }
    return absl::OkStatus();
  }

  // The communicator of the processes whose ranks meet at this collective
  // (color: the least process of each group of processes), made once per
  // distinct grouping. Every process calls it with the same colors.
  MPI_Comm CommFor(const std::vector<int>& color) {
    auto it = comms_.find(color);
    if (it != comms_.end()) return it->second;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(comm_, color[process_], process_, &c);
    comms_.emplace(color, c);
    return c;
  }

  Outcome Step(const std::vector<Slot>& slots) {
    Outcome o;
    for (const Slot& s : slots) o.local.push_back(s.posting);
    if (absl::Status s = Round(slots, o); !s.ok()) {
      o.error = s;
      o.job_error = s;
      return o;
    }
    const int64_t ranks = layout().ranks;
    for (int64_t q = 0; q < ranks; ++q) {
      if (o.headers[q].kind != kAtCollective ||
          SignatureOf(o.signatures[q]).first != SignatureOf(o.signatures[0]).first) {
        o.job_error = JobError(o);
        return o;
      }
    }
    // Every rank is at this collective with this signature, so every
    // process knows who needs whose operands.
    o.exchanged = true;
    o.error = Exchange(slots, o);
    return o;
  }

  absl::Status Exchange(const std::vector<Slot>& slots, Outcome& o) {
    const int64_t ranks = layout().ranks;
    const Posting& lead = *slots[0].posting;
    std::vector<std::vector<int64_t>> parts(static_cast<size_t>(ranks));
    for (int64_t r = 0; r < ranks; ++r) {
      absl::StatusOr<std::vector<int64_t>> p = ParticipatingRanks(*lead.instr, r, layout());
      if (!p.ok()) return p.status();
      parts[r] = *std::move(p);
    }
    // need[p][q]: a rank of process p takes rank q's operands.
    std::vector<std::vector<char>> need(static_cast<size_t>(processes_),
                                        std::vector<char>(static_cast<size_t>(ranks), 0));
    std::vector<int> color(static_cast<size_t>(processes_));
    std::iota(color.begin(), color.end(), 0);
    auto find = [&](int p) {
      while (color[p] != p) p = color[p] = color[color[p]];
      return p;
    };
    for (int64_t r = 0; r < ranks; ++r) {
      const int pr = ProcessOf(r, processes_, ranks);
      for (int64_t q : parts[r]) {
        need[pr][q] = 1;
        const int a = find(pr), b = find(ProcessOf(q, processes_, ranks));
        if (a != b) color[std::max(a, b)] = std::min(a, b);
      }
    }
    for (int p = 0; p < processes_; ++p) color[p] = find(p);
    MPI_Comm c = CommFor(color);
    std::vector<int> members;
    for (int p = 0; p < processes_; ++p) {
      if (color[p] == color[process_]) members.push_back(p);
    }
    const int k = static_cast<int>(members.size());
    if (k == 1) return absl::OkStatus();  // every participant is here
    const int me = static_cast<int>(std::find(members.begin(), members.end(), process_) -
                                    members.begin());

    // Each local rank's operands, serialised once, for whoever needs them.
    // A failure here is agreed on below, not returned at once: the other
    // members are about to meet this process in the communicator.
    absl::Status failed;
    std::vector<std::string> bytes(slots.size());
    std::vector<std::vector<const std::string*>> out(k);
    std::vector<std::vector<int64_t>> in_ranks(k);
    std::vector<uint64_t> out_size(k, 0), in_size(k, 0);
    for (int j = 0; j < k; ++j) {
      if (j == me) continue;
      for (int64_t q = share_.first; q < share_.end; ++q) {
        if (!need[members[j]][q]) continue;
        if (!failed.ok()) break;
        std::string& b = bytes[q - share_.first];
        if (b.empty()) {
          for (const Value& v : slots[q - share_.first].posting->values) {
            failed = Serialize(v, max_bytes_, b);
            if (!failed.ok()) break;
          }
        }
        out[j].push_back(&b);
        out_size[j] += b.size();
      }
      const RankShare theirs = ShareOf(members[j]);
      for (int64_t q = theirs.first; q < theirs.end; ++q) {
        if (need[process_][q]) in_ranks[j].push_back(q);
      }
    }
    if (!failed.ok()) {
      for (int j = 0; j < k; ++j) {
        out[j].clear();
        out_size[j] = 0;
      }
    }
    if (MPI_Alltoall(out_size.data(), 8, MPI_BYTE, in_size.data(), 8, MPI_BYTE, c) !=
        MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Alltoall of the exchange's sizes failed");
    }
    const uint64_t piece = std::max<uint64_t>(1, kRoundBytes / static_cast<uint64_t>(k));
    int64_t my_rounds = 0;
    for (int j = 0; j < k; ++j) {
      my_rounds = std::max<int64_t>(
          my_rounds, static_cast<int64_t>((std::max(out_size[j], in_size[j]) + piece - 1) / piece));
    }
    // {rounds, whether any member failed}, the maximum of each.
    int64_t mine[2] = {my_rounds, failed.ok() ? 0 : 1}, all[2] = {0, 0};
    if (MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, c) != MPI_SUCCESS) {
      return absl::UnavailableError("MPI_Allreduce of the exchange's rounds failed");
    }
    if (!failed.ok()) return failed;
    if (all[1] != 0) {
      return absl::AbortedError("another process could not send its ranks' operands");
    }
    const int64_t rounds = all[0];
    std::vector<std::string> in(k);
    std::string send_stage, recv_stage;
    std::vector<int> scounts(k), sdispls(k), rcounts(k), rdispls(k);
    for (int64_t round = 0; round < rounds; ++round) {
      const uint64_t from = static_cast<uint64_t>(round) * piece;
      auto chunk = [&](uint64_t size) {
        return static_cast<int>(size > from ? std::min(piece, size - from) : 0);
      };
      int st = 0, rt = 0;
      for (int j = 0; j < k; ++j) {
        scounts[j] = chunk(out_size[j]);
        sdispls[j] = st;
        st += scounts[j];
        rcounts[j] = chunk(in_size[j]);
        rdispls[j] = rt;
        rt += rcounts[j];
      }
      send_stage.resize(static_cast<size_t>(st));
      recv_stage.resize(static_cast<size_t>(rt));
      for (int j = 0; j < k; ++j) {
        CopyRange(out[j], from, static_cast<uint64_t>(scounts[j]), send_stage.data() + sdispls[j]);
      }
      if (MPI_Alltoallv(send_stage.data(), scounts.data(), sdispls.data(), MPI_BYTE,
                        recv_stage.data(), rcounts.data(), rdispls.data(), MPI_BYTE,
                        c) != MPI_SUCCESS) {
        return absl::UnavailableError("MPI_Alltoallv of the collective's operands failed");
      }
      for (int j = 0; j < k; ++j) in[j].append(recv_stage.data() + rdispls[j], rcounts[j]);
    }
    const size_t values = lead.values.size();
    for (int j = 0; j < k; ++j) {
      if (j == me) continue;
      Reader r(in[j]);
      for (int64_t q : in_ranks[j]) {
        auto posting = std::make_shared<Posting>();
        posting->instr = lead.instr;
        posting->signature = std::string(SignatureOf(o.signatures[q]).first);
        for (size_t v = 0; v < values; ++v) {
          absl::StatusOr<Value> x = Deserialize(r);
          if (!x.ok()) return absl::DataLossError(absl::StrCat("rank ", q, ": ", x.status().message()));
          posting->values.push_back(*std::move(x));
        }
        o.remote.emplace(q, std::move(posting));
      }
      if (!r.done()) {
        return absl::DataLossError(absl::StrCat("process ", members[j], " sent more than its ranks' operands"));
      }
    }
    return absl::OkStatus();
  }

  const uint64_t max_bytes_;
  MPI_Comm comm_;
  const int process_;
  const int processes_;
  const RankShare share_;
  std::map<std::vector<int>, MPI_Comm> comms_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;  // this step's, by local rank
  size_t arrived_ = 0;
  int64_t step_ = 0;
  bool closed_ = false;
  Outcome outcome_;  // the last step's
};

}  // namespace
}  // namespace internal

absl::StatusOr<std::vector<Value>> EvaluateRanksOverMpi(
    std::span<const hlo::HloModule* const> modules, std::span<const std::vector<Value>> inputs,
    int64_t ranks, const ReplicaOptions& options) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return absl::FailedPreconditionError(
        "expected MPI to be initialised (MPI_Init_thread) before the replay");
  }
  int level = MPI_THREAD_SINGLE, is_main = 0;
  MPI_Query_thread(&level);
  MPI_Is_thread_main(&is_main);
  if (level < MPI_THREAD_FUNNELED || !is_main) {
    return absl::FailedPreconditionError(
        "expected MPI initialised with MPI_THREAD_FUNNELED or more (MPI_Init_thread) and the "
        "call from the thread that initialised it: the ranks are threads, this thread alone "
        "calls MPI");
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int process = 0, processes = 0;
  MPI_Comm_rank(comm, &process);
  MPI_Comm_size(comm, &processes);
  const RankShare share = MpiRankShare(process, processes, ranks);
  const int64_t local = share.end - share.first;
  const ReplicaLayout layout{ranks, options.replica_count, options.partition_count};
  // Checked on every process, agreed on before any rank starts.
  absl::Status ready = internal::CheckReplicaLayout(layout);
  if (ready.ok() && ranks < processes) {
    ready = absl::InvalidArgumentError(absl::StrCat(
        "expected at least one rank per process: the job has ", processes,
        " processes (mpirun -np ", processes, ") and ", ranks,
        ranks == 1 ? " rank" : " ranks"));
  } else if (ready.ok() && static_cast<int64_t>(inputs.size()) != local) {
    ready = absl::InvalidArgumentError(absl::StrCat(
        "expected the inputs of this process's ", local, " ranks (", share.first, " to ",
        share.end - 1, "), found ", inputs.size()));
  } else if (ready.ok() && modules.size() != 1 && static_cast<int64_t>(modules.size()) != local) {
    ready = absl::InvalidArgumentError(absl::StrCat(
        "expected 1 module or one per rank of this process (", local, "), found ",
        modules.size()));
  } else if (ready.ok() && !options.rank_substitutes.empty() &&
             static_cast<int64_t>(options.rank_substitutes.size()) != ranks) {
    ready = absl::InvalidArgumentError(absl::StrCat(
        "expected rank_substitutes for every rank (", ranks, "), found ",
        options.rank_substitutes.size()));
  }
  for (const hlo::HloModule* m : modules) {
    if (ready.ok() && !m) ready = absl::InvalidArgumentError("a module is null");
  }
  if (absl::Status s = Agree(comm, ready); !s.ok()) {
    MPI_Comm_free(&comm);
    return s;
  }
  // The processes sharing this machine share its cores.
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, process, MPI_INFO_NULL, &node);
  int node_processes = 1;
  MPI_Comm_size(node, &node_processes);
  MPI_Comm_free(&node);
  int threads = options.eval.threads;
  if (threads <= 0) {
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<int>(std::max<int64_t>(1, cores / (node_processes * local)));
  }
#if defined(DECOMPOSED_HAVE_OPENBLAS)
  openblas_set_num_threads(threads);
#endif
  std::vector<absl::StatusOr<Value>> results(static_cast<size_t>(local),
                                             absl::UnknownError("not run"));
  absl::Status job;
  {
    uint64_t max_bytes = options.eval.max_array_bytes;
    if (max_bytes == 0) {
      const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
      max_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                                        : std::numeric_limits<uint64_t>::max();
    }
    internal::MpiHub hub(layout, comm, process, processes, max_bytes);
    std::mutex hook_mu;
    auto run_rank = [&](int64_t i) {
      const int64_t r = share.first + i;
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
      const hlo::HloModule& m = *modules[modules.size() == 1 ? 0 : i];
      results[i] = internal::EvaluateOnRank(m, inputs[i], o, &state);
      // Every rank ends with one round, failed or not: none is left waiting.
      absl::Status end = hub.End(r, state.collectives, results[i].status());
      if (results[i].ok() && !end.ok()) results[i] = end;
    };
    std::vector<std::thread> workers;
    workers.reserve(static_cast<size_t>(local));
    for (int64_t i = 0; i < local; ++i) workers.emplace_back(run_rank, i);
    hub.Drive();
    for (std::thread& t : workers) t.join();
    job = hub.job_error();
  }
  MPI_Comm_free(&comm);
  // The replay's error, the same on every process.
  if (!job.ok()) return job;
  return internal::RanksResult(std::move(results), share.first);
}

absl::StatusOr<Value> EvaluateRankOverMpi(const hlo::HloModule& module,
                                          std::span<const Value> inputs,
                                          const ReplicaOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    return absl::FailedPreconditionError(
        "expected MPI to be initialised (MPI_Init_thread) before the replay");
  }
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const hlo::HloModule* modules[] = {&module};
  std::vector<std::vector<Value>> in(1, std::vector<Value>(inputs.begin(), inputs.end()));
  absl::StatusOr<std::vector<Value>> out = EvaluateRanksOverMpi(modules, in, processes, options);
  if (!out.ok()) return out.status();
  return std::move((*out)[0]);
}

#endif

}  // namespace decomposed::eval
