// Test driver for test/replicas_mpi.py: the tensor-parallel test models
// (tp_test_models.h) replayed in one process (EvaluateReplicas) or as an
// MPI job of N ranks spread over the job's processes (EvaluateRanksOverMpi;
// with one process per rank, EvaluateRankOverMpi), each rank's first
// output written raw to OUT/rank<r>.bin, so that the two can be compared
// byte for byte.
//
//   replicas_mpi_tool in-process MODEL N OUT
//   mpirun -np P replicas_mpi_tool mpi MODEL N OUT [disagree|stop]   (P <= N)
//
// MODEL: mlp or attention. With mlp, `disagree`: the odd ranks' modules
// list the group's members in another order; `stop`: the last rank runs a
// dense module (no collective); `fail-before` / `fail-after`: rank 0 fails
// at its first instruction (before any collective) / at its root (after
// its last). Exit 0 on success, 1 with the error on stderr.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "decomposed/eval/replicas.h"
#include "tp_test_models.h"

namespace {

using decomposed::eval::Value;

absl::Status WriteRank(const std::string& out, int64_t r, const Value& v) {
  const Value& first = v.is_tuple() ? v.element(0) : v;
  absl::StatusOr<decomposed::eval::Array> a = first.array().Contiguous();
  if (!a.ok()) return a.status();
  std::ofstream f(out + "/rank" + std::to_string(r) + ".bin", std::ios::binary);
  f.write(a->data(), static_cast<std::streamsize>(a->byte_size()));
  return f ? absl::OkStatus() : absl::InternalError("writing " + out);
}

// Rank r's module: the shard, or with a fault.
std::unique_ptr<decomposed::hlo::HloModule> RankModule(const decomposed::tp_test::Mlp& mlp,
                                                       int64_t n, int64_t r,
                                                       const std::string& fault) {
  if (fault == "disagree" && r % 2 == 1) {
    // The same members in another order: a group the even ranks do not have.
    decomposed::hlo::CollectiveOptions g = decomposed::tp_test::AllRanks(n);
    std::reverse(g.replica_groups[0].begin(), g.replica_groups[0].end());
    return mlp.Build(n, &g);
  }
  if (fault == "stop" && r == n - 1) {
    // The dense module of one shard's width takes this rank's inputs and
    // reaches no collective.
    return decomposed::tp_test::Mlp{mlp.batch, mlp.hidden, mlp.ffn / n}.Build(0);
  }
  return mlp.Build(n);
}
std::unique_ptr<decomposed::hlo::HloModule> RankModule(const decomposed::tp_test::Attention& a,
                                                       int64_t n, int64_t, const std::string&) {
  return a.Build(n);
}

template <class Model>
int Run(const Model& model, const std::string& how, int64_t n, const std::string& out,
        const std::string& fault) {
  const auto w = model.Random(17);
  decomposed::eval::ReplicaOptions o;
  o.eval.threads = 1;
  if (fault == "fail-before" || fault == "fail-after") {
    const auto at = fault == "fail-before" ? decomposed::hlo::HloOpcode::kParameter
                                           : decomposed::hlo::HloOpcode::kTuple;
    o.on_instruction = [at, fault](int64_t rank, const decomposed::eval::InstructionEvent& e) {
      if (rank == 0 && e.depth == 0 && e.instruction.opcode() == at) {
        return absl::InternalError("the planted failure, " + fault);
      }
      return absl::OkStatus();
    };
  }
  if (how == "in-process") {
    auto shard = model.Build(n);
    std::vector<std::vector<Value>> in;
    for (int64_t r = 0; r < n; ++r) in.push_back(model.RankInputs(w, n, r));
    const decomposed::hlo::HloModule* mods[] = {shard.get()};
    absl::StatusOr<std::vector<Value>> v = decomposed::eval::EvaluateReplicas(mods, in, o);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      return 1;
    }
    for (int64_t r = 0; r < n; ++r) {
      if (absl::Status s = WriteRank(out, r, (*v)[r]); !s.ok()) return 1;
    }
    return 0;
  }
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int process = 0, processes = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  int rc = 0;
  if (processes == n) {
    // One rank per process: the single-rank entry point.
    std::unique_ptr<decomposed::hlo::HloModule> m = RankModule(model, n, process, fault);
    std::vector<Value> in = model.RankInputs(w, n, process);
    absl::StatusOr<Value> v = decomposed::eval::EvaluateRankOverMpi(*m, in, o);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      rc = 1;
    } else if (absl::Status s = WriteRank(out, process, *v); !s.ok()) {
      rc = 1;
    }
  } else {
    const decomposed::eval::RankShare share = decomposed::eval::MpiRankShare(process, processes, n);
    std::vector<std::unique_ptr<decomposed::hlo::HloModule>> owned;
    std::vector<const decomposed::hlo::HloModule*> mods;
    std::vector<std::vector<Value>> in;
    for (int64_t r = share.first; r < share.end; ++r) {
      owned.push_back(RankModule(model, n, r, fault));
      mods.push_back(owned.back().get());
      in.push_back(model.RankInputs(w, n, r));
    }
    absl::StatusOr<std::vector<Value>> v = decomposed::eval::EvaluateRanksOverMpi(mods, in, n, o);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      rc = 1;
    } else {
      for (int64_t r = share.first; r < share.end; ++r) {
        if (absl::Status s = WriteRank(out, r, (*v)[r - share.first]); !s.ok()) rc = 1;
      }
    }
  }
  MPI_Finalize();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s in-process|mpi mlp|attention N OUT [disagree|stop]\n", argv[0]);
    return 2;
  }
  const std::string how = argv[1], model = argv[2], out = argv[4];
  const int64_t n = std::stoll(argv[3]);
  const std::string fault = argc > 5 ? argv[5] : "";
  if (model == "mlp") return Run(decomposed::tp_test::Mlp{}, how, n, out, fault);
  return Run(decomposed::tp_test::Attention{}, how, n, out, fault);
}
