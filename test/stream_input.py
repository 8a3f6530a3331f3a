#!/usr/bin/python3
"""Valid snapshots read from a pipe (`-`) and from a FIFO give what the
regular file gives (issue 12 §3).

  stream_input.py build/bin/decomposed build/bin/snapshot-unpack \\
                  examples/example.decomposed_hlo_snapshot

Inputs: the committed example (decomposed), its classic conversion, a file
of 300 small inputs, and a file whose one literal (80 MiB) is larger than
the spool's memory limit (limits::kSpoolMemoryBytes), so that it goes
through the temp file, in both forms. For each: unpack (with and without
--dump-snapshot-outputs), inspect, inspect --json, verify, verify --json,
stats and compare, with --snapshot-type auto and the file's own type, and
snapshot-unpack (the drop-in, classic by default) on the classic files. Each
run from a pipe and from a FIFO must exit as the file's run did, write the
same files with the same bytes, and print the same text once the input is
named as such ("(at byte N, from stdin)", "-"). The malformed inputs are
test/corpus/run_corpus.py's. Also: --progress with an unknown total.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np

# The corpus runner's helpers: a directory's files as bytes, and a FIFO
# writer that waits for its reader.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "corpus"))
from run_corpus import feed_fifo, tree  # noqa: E402

CLI, UNPACK, EXAMPLE = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []
runs = 0


def run(argv, path, mode, data, work):
    """Runs argv (with `path` replaced per mode) in a fresh out dir."""
    out = tempfile.mkdtemp(dir=work, prefix=f"out-{mode}-")
    fifo_dir = tempfile.mkdtemp(dir=work, prefix="fifo-")
    fifo = os.path.join(fifo_dir, "in.fifo")
    name = {"file": path, "stdin": "-", "fifo": fifo}[mode]
    argv = [a.replace("@OUT@", out + "/") for a in argv]
    argv = [name if a == path else a for a in argv]
    done = threading.Event()
    feeder = None
    if mode == "fifo":
        os.mkfifo(fifo)
        feeder = threading.Thread(target=feed_fifo, args=(fifo, data, done))
        feeder.start()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=120, cwd=out,
                           input=data if mode == "stdin" else b"")
    finally:
        done.set()
        if feeder:
            feeder.join()
    text = (p.stdout + p.stderr).decode("utf-8", "replace").replace(out, "<OUT>")
    files = tree(out)
    shutil.rmtree(out)
    shutil.rmtree(fifo_dir)
    return p.returncode, text, files, fifo


def check(label, argv, path, work):
    global runs
    with open(path, "rb") as f:
        data = f.read()
    code, text, files, _ = run(argv, path, "file", data, work)
    for mode in ("stdin", "fifo"):
        runs += 1
        c, t, fs, fifo = run(argv, path, mode, data, work)
        if mode == "stdin":
            want = (text.replace(f" of {path})", ", from stdin)")
                        .replace(f" ({path})", " (from stdin)")
                        .replace(path, "-"))
        else:
            want = text.replace(path, fifo)
        if c != code:
            failures.append(f"{label} [{mode}]: exit {c}, the file's {code}")
        if t != want:
            failures.append(f"{label} [{mode}]: output differs:\n  file: "
                            f"{want[:600]!r}\n  {mode}: {t[:600]!r}")
        if fs != files:
            failures.append(f"{label} [{mode}]: files differ "
                            f"({sorted(fs)} vs {sorted(files)})")
    return code


def main():
    work = tempfile.mkdtemp(prefix="stream-input-")
    try:
        def cli(*a):
            r = subprocess.run([CLI, *a], capture_output=True, text=True,
                               cwd=work)
            if r.returncode != 0:
                raise SystemExit(f"setup: decomposed {a}: {r.stderr}")

        def w(name):
            return os.path.join(work, name)

        classic = w("example.pb")
        cli("convert", "--to", "snapshot", EXAMPLE, classic)
        cli("unpack", f"--output-prefix={w('ex')}/", EXAMPLE)
        module = w("ex/model.hlo")
        many = []
        for i in range(300):
            np.save(w(f"s{i}.npy"), np.arange(i, i + 6, dtype=np.float32))
            many += ["--input", w(f"s{i}.npy")]
        many_dec = w("many.decomposed_hlo_snapshot")
        cli("pack", "--module", module, *many, "-o", many_dec)
        big = np.arange(20 << 20, dtype=np.float32).reshape(5 << 10, 4 << 10)
        np.save(w("big.npy"), big)
        np.save(w("small.npy"), np.ones((2, 3), np.int32))
        big_dec = w("big.decomposed_hlo_snapshot")
        cli("pack", "--module", module, "--input", w("small.npy"), "--input",
            w("big.npy"), "--output", w("small.npy"), "-o", big_dec)
        big_pb = w("big.pb")
        cli("convert", "--to", "snapshot", big_dec, big_pb)
        os.unlink(w("big.npy"))

        inputs = [(EXAMPLE, "decomposed"), (classic, "snapshot"),
                  (many_dec, "decomposed"), (big_dec, "decomposed"),
                  (big_pb, "snapshot")]
        for path, own in inputs:
            base = os.path.basename(path)
            for t in ("auto", own):
                st = f"--snapshot-type={t}"
                commands = [
                    ["unpack", st, "--output-prefix=@OUT@"],
                    ["unpack", st, "--dump-snapshot-outputs",
                     "--ml-dtype-sidecar", "--output-prefix=@OUT@"],
                    ["inspect", st], ["inspect", st, "--json"],
                    ["verify", st], ["verify", st, "--json"],
                ]
                if "big" not in base:  # the analysis reads every element
                    commands += [["stats", st]]
                for c in commands:
                    label = f"{base}: decomposed {' '.join(c)}"
                    code = check(label, [CLI, *c, path], path, work)
                    if code != 0:
                        failures.append(f"{label}: exit {code} on the file")
                if "big" not in base:
                    label = f"{base}: compare {st} - FILE"
                    check(label, [CLI, "compare", "--inputs", st, path,
                                  EXAMPLE], path, work)
            if own == "snapshot":
                label = f"{base}: snapshot-unpack"
                check(label, [UNPACK, "--output-prefix=@OUT@",
                              "--dump-snapshot-outputs", path], path, work)
        # A wrongly named type still gets its hint from a pipe.
        check("example: --snapshot-type=snapshot",
              [CLI, "unpack", "--snapshot-type=snapshot", EXAMPLE], EXAMPLE,
              work)
        # Progress with an unknown total (a pipe): forced on, must not break.
        with open(big_dec, "rb") as f:
            data = f.read()
        out = w("progress")
        p = subprocess.run([CLI, "unpack", "--progress",
                            f"--output-prefix={out}/", "-"], input=data,
                           capture_output=True, timeout=300)
        # The line shows what was read and the rate, never "0 B" of a
        # total or a percentage (docs/unpack.md, Streaming input).
        line = p.stderr.decode(errors="replace").split("\r")[-1]
        runs_ok = (p.returncode == 0 and b"unpacked 3 files" in p.stdout
                   and line.startswith("unpack: ") and "/s" in line
                   and "%" not in line and "MiB" in line)
        if not runs_ok:
            failures.append(f"unpack --progress from a pipe: exit "
                            f"{p.returncode}, {p.stderr[-300:]!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print(f"stream_input: {runs} stream runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
