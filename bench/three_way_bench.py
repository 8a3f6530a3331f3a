#!/usr/bin/python3
"""Benchmark of `decomposed compare --baseline` (the three-way comparison;
figures for docs/compare.md; nothing is asserted). Run after a Release
build:

    /usr/bin/python3 bench/three_way_bench.py [--cli build/bin/decomposed]
        [--mib 256] [--runs 3] [--scratch build/three_way_bench_data] [--keep]

Files (written once into SCRATCH by a separate process, removed at the end
unless --keep): BASELINE, EXPECTED and ACTUAL .npy files of one F32 tensor
of MIB MiB each, EXPECTED and ACTUAL the baseline plus noise (ACTUAL's 1.5
times EXPECTED's), so every element is counted and, past 8 M elements, the
errors go to the temp file (docs/compare.md, "Three-way comparison").

Each run, every command in its own child process, page cache warm:
  cat B E A > /dev/null                      the baseline
  decomposed compare E A                     two sides
  decomposed compare E A --baseline B        three sides
  decomposed compare E A --baseline B --plot OUT.svg
Wall time (time.perf_counter around the child) and the child's peak RSS
(ru_maxrss from wait4); medians over the runs.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

WRITER = r"""
import sys, numpy as np
n, d = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)
b = rng.standard_normal(n, dtype=np.float32)
np.save(d + "/b.npy", b)
np.save(d + "/e.npy", b + np.float32(1e-2) * rng.standard_normal(n, dtype=np.float32))
np.save(d + "/a.npy", b + np.float32(1.5e-2) * rng.standard_normal(n, dtype=np.float32))
"""


def timed(cmd, stdout=subprocess.DEVNULL):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode not in (0, 1):
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, err))
    return dt, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(here)
    ap.add_argument("--cli", default=os.path.join(src, "build", "bin", "decomposed"))
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scratch", default=os.path.join(src, "build", "three_way_bench_data"))
    ap.add_argument("--keep", action="store_true")
    o = ap.parse_args()
    os.makedirs(o.scratch, exist_ok=True)
    n = o.mib * (1 << 20) // 4
    b, e, a = (os.path.join(o.scratch, x + ".npy") for x in "bea")
    if not all(os.path.exists(p) for p in (b, e, a)):
        subprocess.run([sys.executable, "-c", WRITER, str(n), o.scratch], check=True)
    svg = os.path.join(o.scratch, "out.svg")
    cmds = [
        ("cat B E A", ["cat", b, e, a]),
        ("compare E A", [o.cli, "compare", e, a, "--quiet"]),
        ("compare E A --baseline B", [o.cli, "compare", e, a, "--baseline", b, "--quiet"]),
        ("... --plot OUT.svg", [o.cli, "compare", e, a, "--baseline", b, "--plot", svg, "--quiet"]),
    ]
    for _, c in cmds:  # warm the page cache
        timed(c)
    results = {name: [] for name, _ in cmds}
    for _ in range(o.runs):
        for name, c in cmds:
            results[name].append(timed(c))
    print("%d M elements per side (%d MiB each), %d runs, medians:" % (n >> 20, o.mib, o.runs))
    base = statistics.median(t for t, _ in results["cat B E A"])
    for name, _ in cmds:
        ts = [t for t, _ in results[name]]
        rss = max(r for _, r in results[name])
        print("  %-28s %7.3f s  (%.3f-%.3f)  %6.0f MiB peak RSS  %5.2fx cat" %
              (name, statistics.median(ts), min(ts), max(ts), rss, statistics.median(ts) / base))
    if not o.keep:
        shutil.rmtree(o.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
