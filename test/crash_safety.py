#!/usr/bin/env python3
"""Crash safety: SIGKILL `decomposed unpack` / `decomposed pack` during a
large write, then check that every file under a final name is complete and
byte-identical to a reference run's, that everything else is an
AtomicFileSink temp file (`.<name>.tmp.XXXXXX`), and that a next run in the
same directory succeeds with the leftovers present.

  crash_safety.py --cli build/bin/decomposed --command unpack|unpack-npz|pack
                  [--mib 64] [--work DIR]

unpack-npz is `unpack --to npz out.npz`: its one output is the archive, so
a killed run leaves no out.npz at all, only a temp file.

Kill points: fractions of a reference run's wall time (5% .. 95%), so the
kills land inside the writes whatever the machine's speed; at least one
kill must catch the process still running or the test fails (it would
prove nothing).
"""
import argparse
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import box, ld, varint  # noqa: E402

TEMP = re.compile(r"^\..+\.tmp\.[A-Za-z0-9]{6}$")
FRACTIONS = [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95]


def payload(i, nbytes):
    block = bytes((i * 7 + k) & 0xFF for k in range(4096))
    return block * (nbytes // 4096)


def f32_literal(data):
    n = len(data) // 4
    # ShapeProto {element_type: F32, dimensions: [n], layout {m2m: [0]}}
    shape = b"\x10\x0b" + ld(3, varint(n)) + ld(5, ld(1, b"\x00"))
    return ld(1, shape) + ld(8, data)


MODULE = b"\x0a\x01m"  # HloModuleProto {name: "m"}
SNAPSHOT = ld(1, ld(1, MODULE))  # HloSnapshot {hlo {hlo_module {...}}}


def npy_f32(data):
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % (
        len(data) // 4)
    text = text.encode()
    text += b" " * ((-(10 + len(text) + 1)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data


def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                       timeout=600)
    return p.returncode, p.stderr


def killed_run(argv, cwd, delay):
    """Starts argv, SIGKILLs it after `delay` s; True if it was running."""
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(delay)
    running = p.poll() is None
    if running:
        p.send_signal(signal.SIGKILL)
    p.wait()
    return running


def check_dir(d, ref, finals):
    """Problems: a final-named file that differs from the reference, or a
    file that is neither a final name nor a temp file."""
    problems, temps = [], 0
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if n in finals:
            with open(p, "rb") as a, open(os.path.join(ref, n), "rb") as b:
                if a.read() != b.read():
                    problems.append(f"{n}: under its final name but not "
                                    "complete/identical to the reference")
        elif TEMP.match(n):
            temps += 1
        elif n not in finals:
            problems.append(f"{n}: neither a final output nor a temp file")
    return problems, temps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--command", required=True, choices=["unpack", "unpack-npz", "pack"])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--work")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    work = a.work or tempfile.mkdtemp(prefix="crash-safety-")
    os.makedirs(work, exist_ok=True)
    try:
        return scenario(cli, a.command, a.mib << 20, work)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


def scenario(cli, command, nbytes, work):
    datas = [payload(i, nbytes) for i in range(3)]
    src = os.path.join(work, "src")
    os.makedirs(src)
    if command.startswith("unpack"):
        f = os.path.join(src, "big.decomposed_hlo_snapshot")
        with open(f, "wb") as out:
            out.write(box(len(SNAPSHOT)) + SNAPSHOT)
            out.write(box(2))
            for d in datas[:2]:
                lit = f32_literal(d)
                out.write(box(len(lit)) + lit)
            out.write(box(1))
            lit = f32_literal(datas[2])
            out.write(box(len(lit)) + lit)

        def argv(d):
            return [cli, "unpack", "--snapshot-type=decomposed",
                    "--dump-snapshot-outputs", f"--output-prefix={d}/", f]
        finals = {"model.hlo", "value_input0.npy", "value_input1.npy",
                  "snapshot_output0.npy"}
        if command == "unpack-npz":
            def argv(d):
                return [cli, "unpack", "--snapshot-type=decomposed",
                        "--dump-snapshot-outputs", "--to", "npz",
                        os.path.join(d, "out.npz"), f]
            finals = {"out.npz"}
    else:
        with open(os.path.join(src, "m.hlo"), "wb") as out:
            out.write(MODULE)
        inputs = []
        for i, d in enumerate(datas):
            p = os.path.join(src, f"in{i}.npy")
            with open(p, "wb") as out:
                out.write(npy_f32(d))
            inputs += ["--input", p]

        def argv(d):
            return [cli, "pack", "--module", os.path.join(src, "m.hlo"),
                    *inputs, "-o", os.path.join(d, "out.decomposed_hlo_snapshot")]
        finals = {"out.decomposed_hlo_snapshot"}

    # Reference run, timed; its outputs are checked against the inputs.
    ref = os.path.join(work, "ref")
    os.makedirs(ref)
    t0 = time.monotonic()
    rc, err = run(argv(ref), ref)
    elapsed = time.monotonic() - t0
    if rc != 0:
        print(f"crash_safety: reference {command} failed (exit {rc}): {err}")
        return 1
    if set(os.listdir(ref)) != finals:
        print(f"crash_safety: reference run wrote {sorted(os.listdir(ref))},"
              f" expected {sorted(finals)}")
        return 1
    if command.startswith("unpack"):
        npz = None
        if command == "unpack-npz":
            npz = zipfile.ZipFile(os.path.join(ref, "out.npz"))
            if npz.testzip() is not None:
                print("crash_safety: reference out.npz has a bad CRC")
                return 1

        def read(name):
            if npz:
                return npz.read(name)
            with open(os.path.join(ref, name), "rb") as fh:
                return fh.read()
        for name, d in [("value_input0.npy", datas[0]),
                        ("value_input1.npy", datas[1]),
                        ("snapshot_output0.npy", datas[2])]:
            body = read(name)
            if not body.endswith(d) or not body.startswith(b"\x93NUMPY"):
                print(f"crash_safety: reference {name} does not hold the data")
                return 1
        if read("model.hlo") != MODULE:
            print("crash_safety: reference model.hlo differs from the module")
            return 1
    else:
        rc, err = run([cli, "inspect", os.path.join(
            ref, "out.decomposed_hlo_snapshot")], ref)
        if rc != 0:
            print(f"crash_safety: the reference pack output does not inspect: {err}")
            return 1
    print(f"reference {command}: {elapsed:.3f} s for "
          f"{3 * nbytes >> 20} MiB of data")

    failures, caught = 0, 0
    for frac in FRACTIONS:
        d = os.path.join(work, f"kill{int(frac * 100)}")
        os.makedirs(d)
        running = killed_run(argv(d), d, elapsed * frac)
        caught += running
        problems, temps = check_dir(d, ref, finals)
        done = sorted(n for n in os.listdir(d) if n in finals)
        print(f"kill at {frac:.0%} ({elapsed * frac:.3f} s): "
              f"{'killed' if running else 'had finished'}; complete "
              f"{done}; temp files {temps}")
        for p in problems:
            print(f"  FAIL {p}")
        failures += len(problems)
        # A next run with the leftovers present must succeed and be right.
        rc, err = run(argv(d), d)
        problems, temps_after = check_dir(d, ref, finals)
        missing = finals - set(os.listdir(d))
        if rc != 0 or problems or missing:
            print(f"  FAIL rerun after the kill: exit {rc} {err.strip()} "
                  f"{problems} missing {sorted(missing)}")
            failures += 1
        shutil.rmtree(d)
    if caught == 0:
        print("crash_safety: no kill caught the process running; use more "
              "--mib, the test proved nothing")
        return 1
    print(f"crash_safety {command}: {caught}/{len(FRACTIONS)} kills landed "
          f"mid-run, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
