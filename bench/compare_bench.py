#!/usr/bin/python3
"""Benchmark of `decomposed compare` and `decomposed stats` (figures for the
README and docs/compare.md; nothing is asserted). Run after a Release build:

    /usr/bin/python3 bench/compare_bench.py [--cli build/bin/decomposed]
        [--mib 1024] [--runs 3] [--scratch build/compare_bench_data] [--keep]

Files (written once into SCRATCH, removed at the end unless --keep): two
decomposed files each holding one F32 output of MIB MiB (row-major; the
actual side is the expected one perturbed by up to 1e-7 relative, so every
element takes the comparison's full path), the actual side again with a
column-major layout {0,1} (the permuted case: a transpose), and both as
.npy files for NumPy.

Each run, in this order, every command in its own child process, the page
cache warm (every file is read once before the first run):
  cat E A > /dev/null          the baseline for compare
  decomposed compare E A
  cat E > /dev/null            the baseline for stats
  decomposed stats E
  decomposed compare E A_colmajor
  NumPy: np.load of both .npy files + np.isclose(a, e, 1.3e-6, 1e-5).all()
Wall time per command (time.perf_counter around the child) and the child's
peak RSS (ru_maxrss from wait4; the files are generated in a separate
process so that the children forked here do not inherit a large RSS). The summary gives medians over the runs and
the ratios compare/cat and stats/cat, each from the same run's baseline,
then the median of those ratios.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)

NUMPY_CHILD = r"""
import sys, numpy as np
e = np.load(sys.argv[1])
a = np.load(sys.argv[2])
print(bool(np.isclose(a, e, rtol=1.3e-6, atol=1e-5).all()))
"""


def write_decomposed(path, arr, m2m):
    """A decomposed file with one F32 output `arr` in layout m2m, streamed:
    the hand encoder writes the frames, NumPy the data."""
    import numpy as np
    sys.path.insert(0, os.path.join(SOURCE, "test"))
    import unpack_interop as enc  # the spec's hand encoder
    phys = arr if m2m == [1, 0] else arr.T  # {0,1}: column-major order
    shp = enc.shape_proto(11, list(arr.shape), m2m, True)
    head = enc.f_len(1, shp) + enc.tag(8, 2) + enc.varint(arr.nbytes)
    snap = enc.hlo_snapshot()
    with open(path, "wb") as f:
        f.write(enc.box(len(snap)) + snap + enc.box(0) + enc.box(1) +
                enc.box(len(head) + arr.nbytes) + head)
        rows = 1 << 10
        for r in range(0, phys.shape[0], rows):
            np.ascontiguousarray(phys[r:r + rows]).tofile(f)


def file_paths(d):
    return {
        "e": os.path.join(d, "expected.decomposed_hlo_snapshot"),
        "a": os.path.join(d, "actual.decomposed_hlo_snapshot"),
        "at": os.path.join(d, "actual_colmajor.decomposed_hlo_snapshot"),
        "en": os.path.join(d, "expected.npy"),
        "an": os.path.join(d, "actual.npy"),
    }


def shape_for(mib):
    n = mib << 18  # F32 elements
    side = 1 << (n.bit_length() // 2)
    return (n // side, side)


def make_files(d, mib):
    """Run in a child process (--generate): the parent stays small, so the
    children it forks do not start with its pages in their peak RSS."""
    import numpy as np
    shape = shape_for(mib)
    rng = np.random.default_rng(20261130)
    e = rng.standard_normal(shape, dtype=np.float32)
    a = e + np.float32(1e-7) * e
    paths = file_paths(d)
    write_decomposed(paths["e"], e, [1, 0])
    write_decomposed(paths["a"], a, [1, 0])
    write_decomposed(paths["at"], a, [0, 1])
    np.save(paths["en"], e)
    np.save(paths["an"], a)


def run(argv, stdout=subprocess.DEVNULL):
    """Wall seconds and peak RSS (MiB) of one child."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {p.returncode}: {err}")
    return wall, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(SOURCE, "build", "bin", "decomposed"))
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scratch", default=os.path.join(SOURCE, "build", "compare_bench_data"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    if a.generate:
        make_files(a.scratch, a.mib)
        return
    try:
        paths, shape = file_paths(a.scratch), shape_for(a.mib)
        if not all(os.path.exists(p) for p in paths.values()):
            subprocess.run([sys.executable, __file__, "--generate", "--mib", str(a.mib),
                            "--scratch", a.scratch], check=True)
        for p in paths.values():  # warm the page cache
            run(["cat", p])
        cmds = [
            ("cat E A", ["sh", "-c", f"cat '{paths['e']}' '{paths['a']}' > /dev/null"]),
            ("compare", [a.cli, "compare", paths["e"], paths["a"]]),
            ("cat E", ["sh", "-c", f"cat '{paths['e']}' > /dev/null"]),
            ("stats", [a.cli, "stats", paths["e"]]),
            ("compare colmajor", [a.cli, "compare", paths["e"], paths["at"]]),
            ("numpy load+isclose", ["/usr/bin/python3", "-c", NUMPY_CHILD,
                                    paths["en"], paths["an"]]),
        ]
        times = {name: [] for name, _ in cmds}
        rss = {name: [] for name, _ in cmds}
        ratios = {"compare / cat E A": [], "stats / cat E": [],
                  "numpy / cat E A": []}
        with open("/proc/loadavg") as f:
            load_before = f.read().split()[:3]
        for r in range(a.runs):
            got = {}
            for name, argv in cmds:
                got[name] = run(argv)
                times[name].append(got[name][0])
                rss[name].append(got[name][1])
            ratios["compare / cat E A"].append(got["compare"][0] / got["cat E A"][0])
            ratios["stats / cat E"].append(got["stats"][0] / got["cat E"][0])
            ratios["numpy / cat E A"].append(got["numpy load+isclose"][0] / got["cat E A"][0])
            print(f"run {r + 1}: " + ", ".join(f"{n} {t:.3f} s" for n, (t, _) in got.items()),
                  flush=True)
        with open("/proc/loadavg") as f:
            load_after = f.read().split()[:3]
        print(f"\n== {a.mib} MiB F32 per file, shape {list(shape)}, {a.runs} runs, "
              f"load average {' '.join(load_before)} before, {' '.join(load_after)} after")
        print(f"{'command':22} {'median s':>9} {'min s':>7} {'max s':>7} {'peak RSS MiB':>13}")
        for name, _ in cmds:
            t = times[name]
            print(f"{name:22} {statistics.median(t):9.3f} {min(t):7.3f} {max(t):7.3f} "
                  f"{max(rss[name]):13.1f}")
        print()
        for name, v in ratios.items():
            print(f"{name:22} median {statistics.median(v):.2f}x  "
                  f"(runs: {', '.join(f'{x:.2f}' for x in v)})")
    finally:
        if not a.keep:
            shutil.rmtree(a.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
