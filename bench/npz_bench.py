#!/usr/bin/python3
"""Benchmark of `decomposed unpack --to npz` against unpacking to one file
per literal and against `cp -r` of the unpacked directory (issue 12 §4;
figures for the README and docs/unpack.md; nothing is asserted). Run after a
Release build:

    /usr/bin/python3 bench/npz_bench.py [--cli build/bin/decomposed]
        [--inputs 20000] [--dims 16x16] [--runs 5]
        [--scratch build/npz_bench_data] [--keep]

The input (written once into SCRATCH): a decomposed snapshot holding
INPUTS F32 inputs of DIMS each (16x16: 1 KiB of payload, 1152-byte .npy
files). Each run, in this order, every command a child process timed with
time.perf_counter, its outputs removed before the run (not timed), the page
cache warm:
  unpack to files   decomposed unpack --output-prefix files/ IN
  unpack to npz     decomposed unpack --to npz out.npz IN
  cp -r             cp -r files/ copy/  (the directory the first wrote)
Reports the median of each and the ratios npz/files and npz/cp -r, each
the median of the per-run ratios.
"""
import argparse
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
from wire import box, ld, varint  # noqa: E402


def f32_literal(dims, data):
    # ShapeProto {element_type: F32, dimensions..., layout {m2m: rank-1..0}}
    rank = len(dims)
    shape = (b"\x10\x0b" + ld(3, b"".join(varint(d) for d in dims))
             + ld(5, ld(1, b"".join(varint(rank - 1 - k) for k in range(rank)))))
    return ld(1, shape) + ld(8, data)


def make_input(path, inputs, dims):
    module = ld(1, b"bench")
    snap = ld(1, ld(1, module))
    n = 1
    for d in dims:
        n *= d
    with open(path, "wb") as f:
        f.write(box(len(snap)) + snap + box(inputs))
        for i in range(inputs):
            lit = f32_literal(dims, struct.pack("<%df" % n,
                                                *[float(i + k) for k in range(n)]))
            f.write(box(len(lit)) + lit)


def timed(argv, cwd):
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/bin/decomposed")
    ap.add_argument("--inputs", type=int, default=20000)
    ap.add_argument("--dims", default="16x16")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scratch", default="build/npz_bench_data")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    dims = [int(x) for x in a.dims.split("x")]
    os.makedirs(a.scratch, exist_ok=True)
    src = os.path.join(a.scratch, "in.decomposed_hlo_snapshot")
    make_input(src, a.inputs, dims)
    with open(src, "rb") as f:
        f.read()  # warm the page cache
    t = {"files": [], "npz": [], "cp": []}
    for _ in range(a.runs):
        for d in ("files", "copy"):
            shutil.rmtree(os.path.join(a.scratch, d), ignore_errors=True)
        npz = os.path.join(a.scratch, "out.npz")
        if os.path.exists(npz):
            os.remove(npz)
        t["files"].append(timed([cli, "unpack", "--output-prefix=files/",
                                 "in.decomposed_hlo_snapshot"], a.scratch))
        t["npz"].append(timed([cli, "unpack", "--to", "npz", "out.npz",
                               "in.decomposed_hlo_snapshot"], a.scratch))
        t["cp"].append(timed(["cp", "-r", "files", "copy"], a.scratch))
    med = {k: statistics.median(v) for k, v in t.items()}
    r_files = statistics.median(n / f for n, f in zip(t["npz"], t["files"]))
    r_cp = statistics.median(n / c for n, c in zip(t["npz"], t["cp"]))
    print("%d F32[%s] inputs, %d runs (medians):" % (a.inputs, a.dims, a.runs))
    print("  unpack to files  %.3f s" % med["files"])
    print("  unpack to npz    %.3f s  (%.1f MB)" % (
        med["npz"], os.path.getsize(os.path.join(a.scratch, "out.npz")) / 1e6))
    print("  cp -r files      %.3f s" % med["cp"])
    print("  npz / files      %.3fx" % r_files)
    print("  npz / cp -r      %.3fx" % r_cp)
    if not a.keep:
        shutil.rmtree(a.scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
