#!/usr/bin/python3
"""`decomposed run --bisect` and `decomposed run RANK0 RANK1 ...`, end to end
through the CLI (docs/eval.md §9, §10, §12).

  replay_cli.py build/bin/decomposed examples/example.decomposed_hlo_snapshot

Bisect: the example (x * 2 in f32) against f32 numerics and against its own
dump agrees (exit 0, no origin); against a dump whose multiply value was
changed in one element (with NumPy), the multiply is the one origin (exit
1), in the JSON and in the text. Ranks: an all-reduce module written as HLO
text and packed twice by `decomposed pack` under libneuronxla's names
(device000001 given first), each rank's recorded output the sum of both
inputs worked out by NumPy: `run D1 D0 --compare --output-prefix OUT/`
passes (exit 0) and writes OUT/rank<i>/snapshot_output0.npy holding the sum;
a wrong recorded output fails that rank (exit 1); files of two executions
are refused (exit 1, bad input); --bisect with --compare is a usage error
(exit 2).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CLI, EXAMPLE = sys.argv[1], os.path.abspath(sys.argv[2])
failures = []


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


TP_MODULE = """HloModule tp, entry_computation_layout={(f32[2,3]{1,0})->(f32[2,3]{1,0})}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  r = f32[2,3]{1,0} all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT t = (f32[2,3]{1,0}) tuple(r)
}
"""


def name(device, execution=5):
    return (f"tp-process000000-executable000001-device{device:06d}-"
            f"execution{execution:06d}.inputs.decomposed_hlo_snapshot")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # --- bisect -------------------------------------------------------------
        r = run("run", EXAMPLE, "--bisect")
        check(r.returncode == 0 and "0 origins" in r.stdout,
              f"bisect against f32: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
        dump = os.path.join(tmp, "dump")
        r = run("run", EXAMPLE, "--dump", dump)
        check(r.returncode == 0, f"run --dump: {r.stderr}")
        r = run("run", EXAMPLE, "--bisect", "--against", dump, "--json")
        if check(r.returncode == 0, f"bisect against its dump: {r.returncode} {r.stderr}"):
            j = json.loads(r.stdout)
            check(j["origins"] == [] and j["reference"] == dump and j["compared"] > 0,
                  f"bisect against its dump: {j}")
        index = json.load(open(os.path.join(dump, "index.json")))
        mul = [e for e in index["instructions"] if e["opcode"] == "multiply"][0]
        path = os.path.join(dump, mul["files"][0])
        a = np.load(path)
        a.flat[4] += 1.0
        np.save(path, a)
        r = run("run", EXAMPLE, "--bisect", "--against", dump, "--json")
        if check(r.returncode == 1, f"bisect against a changed dump: exit {r.returncode} "
                                    f"{r.stderr}"):
            j = json.loads(r.stdout)
            check([o["name"] for o in j["origins"]] == [mul["name"]] and
                  j["origins"][0]["opcode"] == "multiply" and
                  j["origins"][0]["max_abs_error_index"] == 4 and j["outputs"][0]["differs"],
                  f"the changed multiply is the origin: {j['origins']}")
        r = run("run", EXAMPLE, "--bisect", "--against", dump, "--top", "1")
        check(r.returncode == 1 and f"1. {mul['name']}  multiply  f32[2,3]" in r.stdout,
              f"bisect text: {r.stdout!r}")
        r = run("run", EXAMPLE, "--bisect", "--compare")
        check(r.returncode == 2 and "does not apply with --bisect" in r.stderr,
              f"--bisect --compare: {r.returncode} {r.stderr!r}")
        r = run("run", EXAMPLE, "--top", "3")
        check(r.returncode == 2, f"--top without --bisect: {r.returncode}")

        # --- the ranks of one step -------------------------------------------------
        hlo = os.path.join(tmp, "tp.hlo")
        with open(hlo, "w") as f:
            f.write(TP_MODULE)
        x0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
        x1 = np.array([[10, -1, 0.5], [3, 2, -7]], dtype=np.float32)
        total = x0 + x1
        files = {}
        for rank, x in ((0, x0), (1, x1)):
            np.save(os.path.join(tmp, f"x{rank}.npy"), x)
        np.save(os.path.join(tmp, "sum.npy"), total)
        np.save(os.path.join(tmp, "wrong.npy"), total + np.float32(1))
        steps = os.path.join(tmp, "steps")
        os.makedirs(steps)
        for rank in (0, 1):
            files[rank] = os.path.join(steps, name(rank))
            r = run("pack", "--module", hlo, "--input", os.path.join(tmp, f"x{rank}.npy"),
                    "--output", os.path.join(tmp, "sum.npy"), "-o", files[rank])
            check(r.returncode == 0, f"pack rank {rank}: {r.stderr}")
        out = os.path.join(tmp, "out") + "/"
        r = run("run", files[1], files[0], "--compare", "--output-prefix", out)
        if check(r.returncode == 0, f"run the ranks: exit {r.returncode} {r.stderr} {r.stdout}"):
            check("replayed 2 ranks together" in r.stdout and "PASS: 2 of 2 ranks pass" in r.stdout,
                  f"the ranks' report: {r.stdout!r}")
            for rank in (0, 1):
                got = np.load(os.path.join(out, f"rank{rank}", "snapshot_output0.npy"))
                check(np.array_equal(got, total), f"rank {rank}'s output {got}")
        r = run("run", files[0], files[1], "--json")
        if check(r.returncode == 0, f"run the ranks --json: {r.stderr}"):
            j = json.loads(r.stdout)
            check([k["path"] for k in j["ranks"]] == [files[0], files[1]] and j["pass"],
                  f"ranks in device order: {[k['path'] for k in j['ranks']]}")
        # Rank 1 recorded a wrong output: that rank fails.
        wrong = os.path.join(tmp, "wrong")
        os.makedirs(wrong)
        bad = {}
        for rank in (0, 1):
            bad[rank] = os.path.join(wrong, name(rank))
            recorded = "wrong.npy" if rank == 1 else "sum.npy"
            run("pack", "--module", hlo, "--input", os.path.join(tmp, f"x{rank}.npy"),
                "--output", os.path.join(tmp, recorded), "-o", bad[rank])
        r = run("run", bad[0], bad[1], "--compare")
        check(r.returncode == 1 and "FAIL: 1 of 2 ranks pass" in r.stdout,
              f"a wrong recorded output: exit {r.returncode} {r.stdout[-300:]!r}")
        # Files of two executions.
        other = os.path.join(steps, name(1, execution=6))
        os.rename(files[1], other)
        r = run("run", files[0], other)
        check(r.returncode == 1 and "differing only in their device" in r.stderr,
              f"two executions: exit {r.returncode} {r.stderr!r}")
        r = run("run", files[0], "--ranks", other)
        check(r.returncode == 2, f"snapshots and --ranks: exit {r.returncode}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
