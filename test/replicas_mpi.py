#!/usr/bin/env python3
"""The MPI replay against the in-process one (docs/eval.md §10.5).

    replicas_mpi.py TOOL MPIRUN CLI

For the tensor-parallel MLP and attention block at 2, 4 and 8 ranks: the
in-process replay (EvaluateReplicas) writes each rank's output; an MPI job
on loopback only (TCP over `lo`, no other interface) writes its own, with
one process per rank (2 and 4 processes) and with each process running a
share of the ranks (4 ranks on 2 processes, 8 on 2, 8 on 3: shares of
unequal size); every rank's bytes must be identical. Then the faults, at 2
ranks on 2 processes and 4 ranks on 2: a rank whose groups disagree and a
rank that reaches no collective end the job on every process with the
same error, naming both ranks, and no process hangs (a timeout fails
the test); a rank that fails before its first collective and one that
fails after its last end the job on every process with that rank's own
error. Then the
command: `mpirun -np P decomposed run --mpi` over N rank snapshots of an
all-reduce (packed by `decomposed pack` from HLO text), (N, P) = (2, 2),
(4, 4) and (4, 2), writes the bytes the in-process `decomposed run` of the
same files writes, each rank passing its comparison; a job of more
processes than ranks is refused, and a rank whose file is missing stops
every process.
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


def tp_module(n):
    """An all-reduce (sum) over n ranks, as HLO text."""
    group = ",".join(str(r) for r in range(n))
    return f"""HloModule tp, entry_computation_layout={{(f32[2,3]{{1,0}})->(f32[2,3]{{1,0}})}}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  x = f32[2,3]{{1,0}} parameter(0)
  r = f32[2,3]{{1,0}} all-reduce(x), replica_groups={{{{{group}}}}}, to_apply=add
  ROOT t = (f32[2,3]{{1,0}}) tuple(r)
}}
"""


def write_npy_f32(path, values, dims):
    """A little-endian f32 .npy, version 1.0, C order (NumPy's format)."""
    import struct
    shape = "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}f", *values))


def cli_checks(cli, mpirun_path, tmp, failures, n, procs):
    """run --mpi over n rank snapshots of an all-reduce on procs processes,
    against run."""
    def dec(*args, mpi=0):
        cmd = (mpirun(mpirun_path, mpi) if mpi else []) + [cli, *args]
        return run(cmd)

    tmp = os.path.join(tmp, f"cli{n}-{procs}")
    os.makedirs(tmp)
    hlo = os.path.join(tmp, "tp.hlo")
    with open(hlo, "w") as f:
        f.write(tp_module(n))
    # Values whose sums are exact in f32 in any order.
    x = {r: [0.25 * (r + 1) * k - 2.0 * r for k in range(6)] for r in range(n)}
    total = [sum(x[r][k] for r in range(n)) for k in range(6)]
    write_npy_f32(os.path.join(tmp, "sum.npy"), total, [2, 3])
    steps = os.path.join(tmp, "steps")
    os.makedirs(steps)
    files = []
    for rank in range(n):
        write_npy_f32(os.path.join(tmp, f"x{rank}.npy"), x[rank], [2, 3])
        files.append(os.path.join(
            steps, f"tp-process000000-executable000001-device{rank:06d}-"
                   "execution000005.inputs.decomposed_hlo_snapshot"))
        r = dec("pack", "--module", hlo, "--input", os.path.join(tmp, f"x{rank}.npy"),
                "--output", os.path.join(tmp, "sum.npy"), "-o", files[rank])
        if r.returncode != 0:
            failures.append(f"pack rank {rank}: {r.stderr}")
            return
    given = list(reversed(files))  # any order: put in rank order by name
    here = os.path.join(tmp, "cli-in-process") + "/"
    there = os.path.join(tmp, "cli-mpi") + "/"
    r = dec("run", *given, "--compare", "--output-prefix", here)
    if r.returncode != 0:
        failures.append(f"run in process: exit {r.returncode}: {r.stderr} {r.stdout}")
        return
    r = dec("run", "--mpi", *given, "--compare", "--output-prefix", there, mpi=procs)
    if r.returncode != 0:
        failures.append(f"run --mpi, {n} ranks on {procs}: exit {r.returncode}: {r.stderr} "
                        f"{r.stdout}")
        return
    for p in range(procs):
        first, end = share(p, procs, n)
        said = (f"replayed rank {first}" if end - first == 1 else
                f"replayed ranks {first} to {end - 1}")
        said += f" of {n} as process {p} of {procs} of an MPI job"
        if said not in r.stdout:
            failures.append(f"run --mpi: process {p} did not say '{said}': {r.stdout!r}")
    for rank in range(n):
        if f"rank {rank} (" not in r.stdout:
            failures.append(f"run --mpi: no report of rank {rank}: {r.stdout!r}")
        p = os.path.join(f"rank{rank}", "snapshot_output0.npy")
        a = open(os.path.join(here, p), "rb").read()
        b = open(os.path.join(there, p), "rb").read()
        if not a or a != b:
            failures.append(f"run --mpi, {n} ranks on {procs}, rank {rank}: {len(b)} bytes, "
                            f"the in-process run's {len(a)}, {'equal' if a == b else 'different'}")
    print(f"run --mpi, {n} ranks on {procs} processes: the in-process run's bytes, every "
          f"rank compared")
    if procs != n:
        return
    r = dec("run", "--mpi", *files, mpi=n + 1)
    if r.returncode == 0 or "at least one rank per MPI process" not in r.stderr:
        failures.append(f"run --mpi, {n + 1} processes for {n} ranks: exit {r.returncode}: "
                        f"{r.stderr}")
    missing = os.path.join(tmp, "steps2")
    os.makedirs(missing)
    gone = [os.path.join(missing, os.path.basename(f)) for f in files]
    for f, g in zip(files[:-1], gone[:-1]):
        with open(f, "rb") as src, open(g, "wb") as dst:
            dst.write(src.read())
    r = dec("run", "--mpi", *gone, mpi=n)
    if (r.returncode == 0 or r.stderr.count("another process could not start its ranks") != n - 1
            or f"rank {n - 1}" not in r.stderr):
        failures.append(f"run --mpi at {n}, the last rank's file missing: exit {r.returncode}: "
                        f"{r.stderr}")
    else:
        print(f"run --mpi at {n}: a missing rank file stops every process")


def share(p, procs, n):
    """The ranks process p runs: eval::MpiRankShare."""
    base, extra = divmod(n, procs)
    first = p * base + min(p, extra)
    return first, first + base + (1 if p < extra else 0)


def main():
    tool, mpirun_path = sys.argv[1], sys.argv[2]
    cli = sys.argv[3] if len(sys.argv) > 3 else None
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("mlp", "attention"):
            for n, procs in ((2, 2), (4, 4), (4, 2), (8, 2), (8, 3)):
                here = os.path.join(tmp, f"{model}{n}-{procs}-in-process")
                there = os.path.join(tmp, f"{model}{n}-{procs}-mpi")
                os.makedirs(here)
                os.makedirs(there)
                r = run([tool, "in-process", model, str(n), here])
                if r.returncode != 0:
                    failures.append(f"{model} {n} in-process: {r.stderr}")
                    continue
                r = run(mpirun(mpirun_path, procs) + [tool, "mpi", model, str(n), there])
                if r.returncode != 0:
                    failures.append(f"{model} {n} ranks on {procs} processes: exit "
                                    f"{r.returncode}: {r.stderr}")
                    continue
                for rank in range(n):
                    a = open(os.path.join(here, f"rank{rank}.bin"), "rb").read()
                    b = open(os.path.join(there, f"rank{rank}.bin"), "rb").read()
                    if not a or a != b:
                        failures.append(f"{model} {n} on {procs}, rank {rank}: {len(a)} bytes in "
                                        f"process, {len(b)} over MPI, "
                                        f"{'equal' if a == b else 'different'}")
                print(f"{model}, {n} ranks on {procs} processes: the MPI job's bytes are the "
                      f"in-process replay's")
        for n in (2, 4):
            for fault, want in (("disagree", "disagree on their collective 1"),
                                ("stop", "the ranks do not run the same collectives")):
                out = os.path.join(tmp, f"{fault}{n}")
                os.makedirs(out)
                r = run(mpirun(mpirun_path, 2) + [tool, "mpi", "mlp", str(n), out, fault])
                if r.returncode == 0 or want not in r.stderr:
                    failures.append(f"{fault}, {n} ranks on 2 processes: expected a failure "
                                    f"saying '{want}', found exit {r.returncode}: {r.stderr}")
                elif (len([l for l in r.stderr.splitlines() if want in l]) != 2 or
                      len({l for l in r.stderr.splitlines() if want in l}) != 1):
                    failures.append(f"{fault}, {n} ranks: expected both processes to report "
                                    f"the same error, found: {r.stderr}")
                else:
                    print(f"{fault}, {n} ranks on 2 processes: every process stopped with: "
                          f"{want}")
        for n in (2, 4):
            for fault in ("fail-before", "fail-after"):
                out = os.path.join(tmp, f"{fault}{n}")
                os.makedirs(out)
                r = run(mpirun(mpirun_path, 2) + [tool, "mpi", "mlp", str(n), out, fault])
                want = f"rank 0: the planted failure, {fault}"
                if r.returncode == 0 or r.stderr.count(want) != 2:
                    failures.append(f"{fault}, {n} ranks on 2 processes: expected both processes "
                                    f"to fail with '{want}', found exit {r.returncode}: "
                                    f"{r.stderr}")
                else:
                    print(f"{fault}, {n} ranks on 2 processes: both processes stopped with "
                          f"rank 0's error")
        if cli:
            for n, procs in ((2, 2), (4, 4), (4, 2)):
                cli_checks(cli, mpirun_path, tmp, failures, n, procs)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
