#!/usr/bin/python3
"""Benchmarks of the Python package (figures for the README; nothing is
asserted). Run after scripts/build.sh:

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--scratch DIR]
        [--big-mib 256] [--write-mib 1024] [--small 20000] [--skip-protobuf]

Each measurement runs in a fresh child interpreter, so its extra RSS is its
own (VmRSS after minus before, and the peak VmHWM minus the RSS before).

  open+numpy   decomposed.open() and .numpy() of one F32 input of BIG MiB;
               then summing the view in NumPy (page-cache speed: the file
               was just written, so it is cached).
  protobuf     the same file through what AWS's reader does plus NumPy
               glue: read the file whole, parse every LiteralProto with
               protobuf (python3-protobuf, Debian), np.array(literal.f32s).
               AWS's own reader is not available here; this is its
               materialise-everything path.
  small        iterating SMALL small inputs (F32[4]) to NumPy.
  write        decomposed.write() of a WRITE MiB F32 array vs `cp` of a file
               of that size (the same file system), best of 3 each.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
PY = "/usr/bin/python3"

CHILD_PRELUDE = r"""
import os, sys, time
def rss_kib(field="VmRSS"):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
import numpy as np
"""


def child(code, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([PY, "-c", CHILD_PRELUDE + code], capture_output=True,
                       text=True, env=e)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return dict(line.split("=", 1) for line in r.stdout.split())


OPEN_NUMPY = r"""
import decomposed
before = rss_kib()
t0 = time.perf_counter()
f = decomposed.open(sys.argv[1] if len(sys.argv) > 1 else os.environ["BENCH_FILE"])
a = f.inputs[0].numpy()
t1 = time.perf_counter()
after = rss_kib()
t2 = time.perf_counter()
s = float(a.sum(dtype=np.float64))
t3 = time.perf_counter()
print(f"open_numpy_ms={(t1 - t0) * 1e3:.3f}")
print(f"extra_rss_mib={(after - before) / 1024:.2f}")
print(f"is_view={f.inputs[0].is_view}")
print(f"sum_s={t3 - t2:.4f}")
print(f"sum_gbps={a.nbytes / (t3 - t2) / 1e9:.2f}")
"""

PROTOBUF = r"""
sys.path.insert(0, os.environ["BENCH_PB_DIR"])
import hlo_pb2, xla_data_pb2
before = rss_kib()
t0 = time.perf_counter()
data = open(os.environ["BENCH_FILE"], "rb").read()
def read_box(p):
    n = data[p]
    box = xla_data_pb2.LiteralProto()
    box.ParseFromString(data[p + 1:p + 1 + n])
    return box.u64s[0], p + 1 + n
n, p = read_box(0)
snap = hlo_pb2.HloSnapshot(); snap.ParseFromString(data[p:p + n]); p += n
count, p = read_box(p)
arrays = []
for _ in range(count):
    n, p = read_box(p)
    lit = xla_data_pb2.LiteralProto(); lit.ParseFromString(data[p:p + n]); p += n
    arrays.append(np.array(lit.f32s, dtype=np.float32).reshape(tuple(lit.shape.dimensions)))
t1 = time.perf_counter()
print(f"protobuf_s={t1 - t0:.3f}")
print(f"peak_extra_rss_mib={(rss_kib('VmHWM') - before) / 1024:.1f}")
"""

SMALL = r"""
import decomposed
f = decomposed.open(os.environ["BENCH_FILE"])
t0 = time.perf_counter()
n = 0
for lit in f.inputs:
    a = lit.numpy()
    n += a.size
t1 = time.perf_counter()
t2 = time.perf_counter()
total = sum(lit.numpy().size for lit in f.inputs)
t3 = time.perf_counter()
print(f"iterate_s={t1 - t0:.4f}")
print(f"iterate_again_s={t3 - t2:.4f}")
print(f"count={len(f.inputs)}")
"""

WRITE = r"""
import decomposed
a = np.empty(int(os.environ["BENCH_ELEMS"]), np.float32)
a[:] = 1.5
out = os.environ["BENCH_OUT"]
best = None
for _ in range(3):
    if os.path.exists(out):
        os.unlink(out)
    t0 = time.perf_counter()
    decomposed.write(out, open(os.environ["BENCH_MODULE"], "rb").read(), [a])
    t1 = time.perf_counter()
    best = t1 - t0 if best is None else min(best, t1 - t0)
print(f"write_s={best:.3f}")
"""


def make_file(path, elems):
    code = (r"""
import decomposed
a = np.arange(%d, dtype=np.float32)
decomposed.write(os.environ["BENCH_FILE"], open(os.environ["BENCH_MODULE"], "rb").read(), [a])
print("ok=1")
""" % elems)
    child(code, {"BENCH_FILE": path, "BENCH_MODULE": os.environ["BENCH_MODULE"]})


def module_bytes():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
    from wire import ld
    return ld(1, b"bench") + ld(2, b"main")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default=None)
    ap.add_argument("--big-mib", type=int, default=256)
    ap.add_argument("--write-mib", type=int, default=1024)
    ap.add_argument("--small", type=int, default=20000)
    ap.add_argument("--skip-protobuf", action="store_true")
    args = ap.parse_args()
    scratch = args.scratch or tempfile.mkdtemp(prefix="pybench.",
                                               dir=os.path.join(SOURCE, "build"))
    os.makedirs(scratch, exist_ok=True)
    mod = os.path.join(scratch, "model.hlo")
    with open(mod, "wb") as f:
        f.write(module_bytes())
    os.environ["BENCH_MODULE"] = mod
    try:
        big = os.path.join(scratch, "big.dhs")
        make_file(big, args.big_mib * 262144)
        r = child(OPEN_NUMPY, {"BENCH_FILE": big})
        print(f"open()+numpy() of {args.big_mib} MiB F32: "
              f"{r['open_numpy_ms']} ms, extra RSS {r['extra_rss_mib']} MiB, "
              f"zero-copy {r['is_view']}; summing the view: {r['sum_s']} s "
              f"({r['sum_gbps']} GB/s)")
        if not args.skip_protobuf:
            try:
                import google.protobuf  # noqa: F401
            except ImportError:
                print("protobuf path: python3-protobuf is not installed")
            else:
                pb = os.path.join(scratch, "pb")
                os.makedirs(pb, exist_ok=True)
                subprocess.run(["protoc", "--python_out=" + pb, "-I",
                                os.path.join(SOURCE, "proto"), "xla_data.proto",
                                "hlo.proto"], check=True)
                r = child(PROTOBUF, {"BENCH_FILE": big, "BENCH_PB_DIR": pb})
                print(f"same file, protobuf + np.array (AWS reader's path): "
                      f"{r['protobuf_s']} s, peak extra RSS "
                      f"{r['peak_extra_rss_mib']} MiB")
        os.unlink(big)

        small = os.path.join(scratch, "small.dhs")
        code = (r"""
import decomposed
arrays = [np.full(4, i, np.float32) for i in range(%d)]
decomposed.write(os.environ["BENCH_FILE"], open(os.environ["BENCH_MODULE"], "rb").read(), arrays)
print("ok=1")
""" % args.small)
        child(code, {"BENCH_FILE": small})
        r = child(SMALL, {"BENCH_FILE": small})
        print(f"iterating {r['count']} F32[4] inputs to NumPy: "
              f"{r['iterate_s']} s (again: {r['iterate_again_s']} s)")

        out = os.path.join(scratch, "w.dhs")
        r = child(WRITE, {"BENCH_OUT": out,
                          "BENCH_ELEMS": str(args.write_mib * 262144)})
        best_cp = None
        copy = os.path.join(scratch, "cp.dhs")
        for _ in range(3):
            if os.path.exists(copy):
                os.unlink(copy)
            t0 = time.perf_counter()
            subprocess.run(["cp", out, copy], check=True)
            t1 = time.perf_counter()
            best_cp = t1 - t0 if best_cp is None else min(best_cp, t1 - t0)
        w = float(r["write_s"])
        print(f"write() of {args.write_mib} MiB F32: {w:.3f} s; cp of the "
              f"file: {best_cp:.3f} s; ratio {w / best_cp:.2f}x")
    finally:
        if args.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
