#!/usr/bin/env python3
"""The MPI replay against the in-process one (docs/eval.md §10.5).

    replicas_mpi.py TOOL MPIRUN

For the tensor-parallel MLP and attention block at 2 and 4 ranks: the
in-process replay (EvaluateReplicas) writes each rank's output; an MPI job
of as many processes on loopback only (TCP over `lo`, no other interface)
writes its own; every rank's bytes must be identical. Then the faults: a
rank whose groups disagree and a rank that reaches no collective end the
job on every process with the error named, and no process hangs (a
timeout fails the test).
"""
import os
import subprocess
import sys
import tempfile

TIMEOUT = 300


def mpirun(mpirun_path, n):
    return [mpirun_path, "-np", str(n), "--oversubscribe", "--allow-run-as-root",
            "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo",
            "--mca", "oob_tcp_if_include", "lo"]


def run(cmd):
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)


def main():
    tool, mpirun_path = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("mlp", "attention"):
            for n in (2, 4):
                here = os.path.join(tmp, f"{model}{n}-in-process")
                there = os.path.join(tmp, f"{model}{n}-mpi")
                os.makedirs(here)
                os.makedirs(there)
                r = run([tool, "in-process", model, str(n), here])
                if r.returncode != 0:
                    failures.append(f"{model} {n} in-process: {r.stderr}")
                    continue
                r = run(mpirun(mpirun_path, n) + [tool, "mpi", model, str(n), there])
                if r.returncode != 0:
                    failures.append(f"{model} {n} over MPI: exit {r.returncode}: {r.stderr}")
                    continue
                for rank in range(n):
                    a = open(os.path.join(here, f"rank{rank}.bin"), "rb").read()
                    b = open(os.path.join(there, f"rank{rank}.bin"), "rb").read()
                    if not a or a != b:
                        failures.append(f"{model} {n} rank {rank}: {len(a)} bytes in process, "
                                        f"{len(b)} over MPI, {'equal' if a == b else 'different'}")
                print(f"{model} at {n} ranks: the MPI job's bytes are the in-process replay's")
        for fault, want in (("disagree", "disagree on their collective 1"),
                            ("stop", "the ranks do not run the same collectives")):
            out = os.path.join(tmp, fault)
            os.makedirs(out)
            r = run(mpirun(mpirun_path, 2) + [tool, "mpi", "mlp", "2", out, fault])
            if r.returncode == 0 or want not in r.stderr:
                failures.append(f"{fault}: expected a failure saying '{want}', "
                                f"found exit {r.returncode}: {r.stderr}")
            elif r.stderr.count("rank ") < 2:
                failures.append(f"{fault}: expected both ranks to report, found: {r.stderr}")
            else:
                print(f"{fault}: every rank stopped with: {want}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
