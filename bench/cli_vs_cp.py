#!/usr/bin/python3
"""`decomposed pack` and `decomposed unpack` of one big literal against `cp`
of the same bytes, as a user runs them: separate processes, fresh output
names, a sync before each run, and the tools in an order that rotates every
round, so that each run follows a different tool (on the VMs we measure on,
what ran before moves a 1 GiB page-cache copy between 0.45 and 2 s; see
docs/unpack.md#closer-to-cp). Reports each tool's median and fastest run
and the ratios to `cp`. With --other, a second build of the CLI runs as a
third tool (before/after comparisons).

usage: /usr/bin/python3 bench/cli_vs_cp.py [--cli build/bin/decomposed]
          [--other OTHER_CLI] [--mib 1024] [--rounds 9] [--type f32|bf16]
          [--dir /tmp]

The input (a .npy of MIB MiB, and the decomposed file pack makes of it) is
written once into a temp folder under --dir and removed at the end.
Nothing is asserted: the figures are printed.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def write_npy(path, mib, kind):
    descr = "<f4" if kind == "f32" else "|V2"
    width = 4 if kind == "f32" else 2
    n = (mib << 20) // width
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (
        descr, n)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    chunk = bytes((i * 31) & 0xFF for i in range(1 << 20))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little"))
        f.write(header.encode())
        left = n * width
        while left:
            k = min(left, len(chunk))
            f.write(chunk[:k])
            left -= k
    if kind == "bf16":
        with open(path + ".meta", "w") as f:
            f.write('{"ml_dtype": "bfloat16"}')


def quiet(cli):
    """["--quiet"] where the build has it (older builds show no progress
    line unless asked)."""
    h = subprocess.run([cli, "pack", "--help"], capture_output=True, text=True)
    return ["--quiet"] if "--quiet" in h.stdout + h.stderr else []


def timed(argv):
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin",
                                                  "decomposed"))
    ap.add_argument("--other")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--type", choices=("f32", "bf16"), default="f32")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cli_vs_cp-", dir=a.dir)
    try:
        npy = os.path.join(work, "in.npy")
        write_npy(npy, a.mib, a.type)
        module = os.path.join(work, "model.hlo")
        with open(module, "wb") as f:
            f.write(b"\x0a\x05bench")  # HloModuleProto {name: "bench"}
        dhs = os.path.join(work, "in.dhs")
        subprocess.run([a.cli, "pack", "--module", module, "--input", npy,
                        "-o", dhs, "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        os.sync()
        clis = {"decomposed": a.cli}
        if a.other:
            clis["other"] = a.other
        outs = []

        def out(name):
            p = os.path.join(work, name)
            outs.append(p)
            return p

        jobs = {}
        for kind in ("pack", "unpack"):
            for name, cli in clis.items():
                if kind == "pack":
                    argv = [cli, "pack", "--module", module, "--input", npy,
                            "-o", out(f"{name}.dhs")] + quiet(cli)
                else:
                    d = out(f"{name}_unpacked")
                    argv = [cli, "unpack", "--snapshot-type=decomposed",
                            "--output-prefix", d + "/", dhs] + quiet(cli)
                jobs[(kind, name)] = argv
            jobs[(kind, "cp")] = ["cp", npy if kind == "pack" else dhs,
                                  out(f"cp_{kind}")]

        def clean():
            for p in outs:
                if os.path.isdir(p):
                    shutil.rmtree(p)
                elif os.path.exists(p):
                    os.unlink(p)
            os.sync()

        for kind in ("pack", "unpack"):
            names = [n for (k, n) in jobs if k == kind]
            runs = {n: [] for n in names}
            for r in range(a.rounds):
                for n in names[r % len(names):] + names[:r % len(names)]:
                    clean()
                    if kind == "unpack" and n != "cp":
                        os.mkdir(os.path.join(work, f"{n}_unpacked"))
                    runs[n].append(timed(jobs[(kind, n)]))
            clean()
            cp_med = statistics.median(runs["cp"])
            cp_best = min(runs["cp"])
            for n in names:
                med, best = statistics.median(runs[n]), min(runs[n])
                print(f"{kind:6} {a.type} {a.mib} MiB {n:10} median {med:.3f} s"
                      f"  fastest {best:.3f} s  x cp: median {med / cp_med:.2f}"
                      f"  fastest {best / cp_best:.2f}  runs "
                      + " ".join(f"{x:.2f}" for x in runs[n]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
