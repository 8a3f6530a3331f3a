#!/usr/bin/env python3
"""Runs the malformed-input corpus through the CLI for one command.

  run_corpus.py --cli build/bin/decomposed --command inspect
                [--memory-limit-mib 256] [--manifest test/corpus/manifest.tsv]

For every manifest row of that command: runs the CLI on the file and
requires the expected exit code, no signal, no sanitizer report, no
uncaught exception, the frame name and the message fragment in its output
(stderr, or stdout where `verify` reports), and
no partial output under a final name. With --memory-limit-mib every case
runs a second time under that address-space limit (RLIMIT_AS, as `ulimit -v`
does), proving no declared size is allocated. (Not for sanitizer builds:
ASan reserves terabytes of address space.)

Every case of a command that reads a snapshot (inspect, verify, unpack,
compare, stats) also runs with the same bytes through a pipe on stdin
(`-`) and through a FIFO path (compare and stats: the snapshot files;
.npy and .pt files are told by their names), and, outside the memory-limit
pass, on stdin redirected from the file itself (`- < FILE`, read by the
regular-file code), and must give what the regular file gave:
the same exit code, the same output files and bytes, and the same output
text once the input is named as such (`(at byte N of PATH)` becomes
`(at byte N, from stdin)`, `(PATH)` becomes `(from stdin)`, any other
PATH `-`; a FIFO is named by its path). The empty file read from a pipe
is one of these cases.

Rows marked "provisional" were written from the spec before the command
existed: their exit code and crash checks are enforced; a frame or fragment
mismatch is printed as a warning to update the manifest, not a failure.
"""
import argparse
import ast
import csv
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
BAD_OUTPUT = re.compile(r"Sanitizer|runtime error|terminate called|"
                        r"Segmentation|Aborted|std::bad_alloc")


def form_of(path):
    """The corpus files are decomposed files, read as such: auto-detection
    (the default) would read a damaged one as a classic snapshot. Files
    ending in .pb (classic) or .auto are read with the default, auto."""
    return "auto" if path.endswith((".pb", ".auto")) else "decomposed"


def argv_for(cli, command, path, out_dir, files_dir):
    form = f"--snapshot-type={form_of(path)}"
    if command == "inspect":
        return [cli, "inspect", form, path]
    if command == "verify":
        return [cli, "verify", form, path]
    if command == "unpack":
        return [cli, "unpack", form,
                "--dump-snapshot-outputs", f"--output-prefix={out_dir}/", path]
    if command == "pack":
        return [cli, "pack", "--module", os.path.join(files_dir, "module.hlo"),
                "--input", path, "-o",
                os.path.join(out_dir, "out.decomposed_hlo_snapshot")]
    if command == "bundle verify":
        return [cli, "bundle", "verify", path]
    if command in ("compare", "compare actual", "stats"):
        opts = [f"--snapshot-type={form_of(path)}"]
        if command == "stats":
            return [cli, "stats", *opts, path]
        ref = os.path.join(files_dir, "compare_reference.bin")
        sides = [path, ref] if command == "compare" else [ref, path]
        # --inputs: the literal defects are in input 0.
        return [cli, "compare", "--inputs", *opts, *sides]
    raise SystemExit(f"run_corpus.py: no argv rule for command {command!r}")


def npy_complete(path):
    """True when an .npy file holds exactly its header's declared bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        return False
    if data[6] == 1:
        hl, fixed = int.from_bytes(data[8:10], "little"), 10
    else:
        hl, fixed = int.from_bytes(data[8:12], "little"), 12
    try:
        d = ast.literal_eval(data[fixed:fixed + hl].decode("latin-1"))
        item = int(re.search(r"(\d+)$", d["descr"]).group(1))
        n = 1
        for x in d["shape"]:
            n *= x
    except Exception:
        return False
    return len(data) == fixed + hl + n * item


def check_outputs(out_dir):
    """Problems with files left in out_dir after a failed run."""
    problems = []
    for root, _, names in os.walk(out_dir):
        for n in names:
            p = os.path.join(root, n)
            if n.endswith(".npy") and not npy_complete(p):
                problems.append(f"partial .npy under a final name: {n}")
            elif n.endswith(".decomposed_hlo_snapshot"):
                problems.append(f"output left after a failed pack: {n}")
    return problems


def limited_env(mib):
    """The environment of a run under RLIMIT_AS: OpenBLAS (which the CLI
    loads for `run`) starts its worker threads when it is loaded, each
    mapping a 128 MiB buffer; when the limit makes that mapping fail,
    OpenBLAS retries it for ever and the process hangs at exit joining the
    thread (about one run in 100 here). With one BLAS thread it starts none.
    README, "Choices", says the same to users who run under `ulimit -v`."""
    return dict(os.environ, OPENBLAS_NUM_THREADS="1") if mib else None


def limit_memory(mib):
    def f():
        b = mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
    return f


STREAM_COMMANDS = {"inspect", "verify", "unpack", "compare",
                   "compare actual", "stats"}


def tree(out_dir):
    """{relative name: bytes} of every file under out_dir."""
    out = {}
    for root, _, names in os.walk(out_dir):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, out_dir)] = f.read()
    return out


def feed_fifo(fifo, data, done):
    """Writes data into fifo once a reader opens it (or gives up at done)."""
    fd = -1
    while fd < 0 and not done.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            done.wait(0.002)
    if fd < 0:
        return
    os.set_blocking(fd, True)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:1 << 16]):]
    except OSError:  # the reader stopped early (EPIPE)
        pass
    finally:
        os.close(fd)


def run_stream(row, cli, files_dir, mem_mib, mode, path, base):
    """Runs the case with the bytes of path on stdin through a pipe
    ("stdin"), on stdin redirected from the file ("redirect") or through a
    FIFO ("fifo"); compares with base = (returncode, text, tree, out_dir)."""
    with open(path, "rb") as f:
        data = f.read()
    out_dir = tempfile.mkdtemp(prefix=f"corpus-{mode}-")
    fifo_dir = tempfile.mkdtemp(prefix="corpus-fifo-")
    fifo = os.path.join(fifo_dir, "snapshot.fifo")
    try:
        name = fifo if mode == "fifo" else "-"
        argv = argv_for(cli, row["command"], path, out_dir, files_dir)
        argv = [name if a == path else a for a in argv]
        done = threading.Event()
        feeder = None
        if mode == "fifo":
            os.mkfifo(fifo)
            feeder = threading.Thread(target=feed_fifo,
                                      args=(fifo, data, done))
            feeder.start()
        try:
            stdin_file = open(path, "rb") if mode == "redirect" else None
            p = subprocess.run(argv, capture_output=True,
                               input=data if mode == "stdin" else
                               None if stdin_file else b"",
                               stdin=stdin_file,
                               timeout=120, cwd=out_dir,
                               env=limited_env(mem_mib),
                               preexec_fn=limit_memory(mem_mib) if mem_mib
                               else None)
        except subprocess.TimeoutExpired:
            return [f"{mode}: hang: no exit within 120 s"]
        finally:
            if stdin_file:
                stdin_file.close()
            done.set()
            if feeder:
                feeder.join()
        problems = []
        code, text, files, base_out = base
        if p.returncode != code:
            problems.append(f"{mode}: exit {p.returncode}, the file's {code}")
        got = (p.stderr + p.stdout).decode("utf-8", "replace")
        got = got.replace(out_dir, "<OUT>")
        want = text.replace(base_out, "<OUT>")
        if mode != "fifo":
            want = (want.replace(f" of {path})", ", from stdin)")
                        .replace(f" ({path})", " (from stdin)")
                        .replace(path, "-"))
        else:
            want = want.replace(path, fifo)
        if got != want:
            problems.append(f"{mode}: output differs from the file's:\n"
                            f"       file : {want.strip()!r}\n"
                            f"       {mode:5}: {got.strip()!r}")
        if tree(out_dir) != files:
            problems.append(f"{mode}: output files differ from the file's")
        return problems
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(fifo_dir, ignore_errors=True)


def run_case(row, cli, files_dir, mem_mib):
    path = os.path.join(files_dir, row["file"])
    out_dir = tempfile.mkdtemp(prefix="corpus-")
    try:
        argv = argv_for(cli, row["command"], path, out_dir, files_dir)
        try:
            p = subprocess.run(argv, capture_output=True, text=True,
                               timeout=120, cwd=out_dir,
                               env=limited_env(mem_mib),
                               preexec_fn=limit_memory(mem_mib) if mem_mib
                               else None)
        except subprocess.TimeoutExpired:
            return ["hang: no exit within 120 s"], [], ""
        hard, soft = [], []
        if p.returncode < 0:
            hard.append(f"killed by signal {-p.returncode}")
        elif p.returncode != int(row["exit"]):
            hard.append(f"exit {p.returncode}, expected {row['exit']}")
        if BAD_OUTPUT.search(p.stderr):
            hard.append("crash/sanitizer text in stderr")
        # Errors go to stderr; `verify` reports problems on stdout.
        text = p.stderr + p.stdout
        msg = text.strip().replace("\n", " | ")
        expectation = hard if row["state"] == "checked" else soft
        for key in ("frame", "fragment"):
            if row[key] and row[key] not in text:
                expectation.append(f"{key} {row[key]!r} not in message")
        hard.extend(check_outputs(out_dir))
        # compare and stats tell .npy and .pt files by their names: only
        # snapshots are read from a stream.
        if row["command"] in STREAM_COMMANDS and os.path.isfile(path) and \
                not path.endswith((".npy", ".pt")):
            base = (p.returncode, p.stderr + p.stdout, tree(out_dir), out_dir)
            modes = ("stdin", "fifo") if mem_mib else \
                ("stdin", "redirect", "fifo")
            for mode in modes:
                hard.extend(run_stream(row, cli, files_dir, mem_mib, mode,
                                       path, base))
        return hard, soft, msg
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.tsv"))
    ap.add_argument("--files", default=os.path.join(HERE, "files"))
    ap.add_argument("--memory-limit-mib", type=int, default=0)
    a = ap.parse_args()
    a.cli = os.path.abspath(a.cli)
    a.files = os.path.abspath(a.files)

    with open(a.manifest) as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    all_files = {r["file"] for r in rows}
    if len(all_files) < 40:
        print(f"corpus: only {len(all_files)} distinct malformed inputs "
              f"(at least 40 required)")
        return 1
    for r in rows:
        if not os.path.exists(os.path.join(a.files, r["file"])):
            print(f"corpus: manifest names missing file {r['file']}")
            return 1
    mine = [r for r in rows if r["command"] == a.command]
    if not mine:
        print(f"corpus: no manifest rows for command {a.command!r}")
        return 1

    if a.memory_limit_mib:
        # Canary: the limit must really stop a large allocation.
        c = subprocess.run([sys.executable, "-c",
                            f"bytearray({2 * a.memory_limit_mib} << 20)"],
                           capture_output=True,
                           preexec_fn=limit_memory(a.memory_limit_mib))
        if c.returncode == 0:
            print("corpus: RLIMIT_AS did not stop a "
                  f"{2 * a.memory_limit_mib} MiB allocation; the memory-limit "
                  "run would prove nothing")
            return 1
    failures = 0
    warnings = 0
    limits = [0] + ([a.memory_limit_mib] if a.memory_limit_mib else [])
    for r in mine:
        for mem in limits:
            tag = f" [RLIMIT_AS {mem} MiB]" if mem else ""
            hard, soft, msg = run_case(r, a.cli, a.files, mem)
            if hard:
                failures += 1
                print(f"FAIL {r['file']}{tag}: {'; '.join(hard + soft)}\n"
                      f"     message: {msg}")
            elif soft:
                warnings += 1
                print(f"WARN {r['file']}{tag} (provisional row; update the "
                      f"manifest): {'; '.join(soft)}\n     message: {msg}")
            else:
                print(f"ok   {r['file']}{tag}"
                      + (" (provisional row met; mark it checked)"
                         if r["state"] != "checked" else ""))
    print(f"corpus {a.command}: {len(mine)} cases x {len(limits)} runs, "
          f"{failures} failures, {warnings} provisional mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
