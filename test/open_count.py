#!/usr/bin/python3
"""Every command opens each input file once (issue 17 §1).

  open_count.py CLI SNAPSHOT_UNPACK EXAMPLE [--python-path DIR]
      [--python-preload LIBS]

Runs each command that reads a snapshot -- unpack (also --each and
--dump-snapshot-outputs), verify, inspect (text and --json), convert,
compare, stats, run (--compare, --three-way), snapshot-unpack, bundle
from-decomposed and, with
--python-path, the Python package's open() -- under
`strace -f -e trace=open,openat,openat2` on the committed example and on
its classic conversion, and counts the opens whose path is the input (by
name, or by /proc/self/fd/N, which would open it again). More than one
fails the run, as does a command that fails.

A canary first proves the count can fail: `cat FILE FILE` must count 2.
Exits 77 (ctest: skipped, with the reason) when strace is missing or the
kernel does not allow tracing here; scripts/setup-debian.sh --test
installs strace.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

args = sys.argv[1:]
python_path = None
if "--python-path" in args:
    i = args.index("--python-path")
    python_path = args[i + 1]
    del args[i:i + 2]
# Sanitizer builds: the libraries the interpreter preloads to load the
# instrumented extension (the ASan runtime first), for the traced
# interpreter only (strace -E), as python_package's interpreter does.
python_preload = None
if "--python-preload" in args:
    i = args.index("--python-preload")
    python_preload = args[i + 1]
    del args[i:i + 2]
CLI, UNPACK, EXAMPLE = (os.path.abspath(a) for a in args)
OPEN = re.compile(r'\b(?:open|openat|openat2)\((?:[^,]*, )?"([^"]*)"')
failures = []


def opens(argv, path, env=None, cwd=None, stdin=None, preload=None):
    """(returncode, number of opens of `path`, stderr) of argv under strace."""
    with tempfile.NamedTemporaryFile(prefix="open_count_", suffix=".strace",
                                     delete=False) as log:
        trace = log.name
    # LeakSanitizer cannot run under ptrace (it stops the process's threads
    # with ptrace itself): in a sanitizer build the traced run checks opens,
    # ASan and UBSan; the same commands run untraced elsewhere in the suite
    # with leak checking on.
    env = dict(os.environ if env is None else env)
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if preload:
        env["ASAN_OPTIONS"] += ":verify_asan_link_order=0"
    try:
        extra = ["-E", f"LD_PRELOAD={preload}"] if preload else []
        r = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2",
             *extra, "-o", trace, *argv],
            capture_output=True, encoding="utf-8", errors="replace", env=env,
            cwd=cwd, stdin=stdin,
            timeout=300)
        with open(trace, errors="replace") as f:
            lines = f.read().splitlines()
    finally:
        os.unlink(trace)
    n = 0
    for line in lines:
        m = OPEN.search(line)
        if not m or "= -1 ENOENT" in line and m.group(1) != path:
            continue
        opened = m.group(1)
        if os.path.isabs(opened) or cwd is None:
            full = opened
        else:
            full = os.path.join(cwd, opened)
        if full == path or opened.startswith("/proc/self/fd/"):
            n += 1
    return r.returncode, n, r.stderr


def check(label, argv, path, want_rc=0, **kw):
    rc, n, err = opens(argv, path, **kw)
    if rc != want_rc:
        failures.append(f"{label}: exit {rc} (want {want_rc}): {err[-300:]!r}")
    elif n != 1:
        failures.append(f"{label}: opened {os.path.basename(path)} {n} times")
    else:
        print(f"ok   {label}: 1 open")


def main():
    if shutil.which("strace") is None:
        print("open_count: strace is not installed "
              "(scripts/setup-debian.sh --test installs it)")
        return 77
    probe = subprocess.run(["strace", "-qq", "-e", "trace=none", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"open_count: tracing is not allowed here: {probe.stderr!r}")
        return 77
    work = tempfile.mkdtemp(prefix="open_count_")
    try:
        dec = os.path.join(work, "x.decomposed_hlo_snapshot")
        shutil.copyfile(EXAMPLE, dec)
        pb = os.path.join(work, "x.pb")
        subprocess.run([CLI, "convert", dec, pb, "--to", "snapshot"],
                       check=True, capture_output=True)
        # The canary: two opens of one file are seen as two.
        rc, n, _ = opens(["cat", dec, dec], dec)
        if rc != 0 or n != 2:
            print(f"open_count: the canary `cat FILE FILE` counted {n} "
                  f"opens, not 2: the count proves nothing")
            return 1
        print("ok   canary: cat FILE FILE counts 2 opens")
        for path, form in ((dec, "decomposed"), (pb, "snapshot")):
            other = "snapshot" if form == "decomposed" else "decomposed"
            base = os.path.basename(path)
            out = os.path.join(work, "out-" + form)
            for t in ("auto", form):
                st = f"--snapshot-type={t}"
                check(f"unpack {st} {base}",
                      [CLI, "unpack", st, f"--output-prefix={out}/", path],
                      path)
                check(f"unpack --dump-snapshot-outputs {st} {base}",
                      [CLI, "unpack", st, "--dump-snapshot-outputs",
                       "--manifest", f"--output-prefix={out}/", path], path)
                check(f"verify {st} {base}", [CLI, "verify", st, path], path)
                check(f"inspect {st} {base}", [CLI, "inspect", st, path], path)
                check(f"inspect --json {st} {base}",
                      [CLI, "inspect", "--json", st, path], path)
                check(f"stats {st} {base}", [CLI, "stats", st, path], path)
            # A failing run opens its input once too (and then gives the
            # hint from what it already read).
            check(f"unpack --snapshot-type={other} {base}",
                  [CLI, "unpack", f"--snapshot-type={other}",
                   f"--output-prefix={out}/", path], path, want_rc=1)
            check(f"unpack --to npz {base}",
                  [CLI, "unpack", "--to", "npz",
                   os.path.join(work, form + ".npz"), path], path)
            check(f"unpack --each {base}",
                  [CLI, "unpack", "--each", os.path.join(work, "each-" + form),
                   path], path)
            check(f"convert {base}",
                  [CLI, "convert", path, os.path.join(work, "c-" + base),
                   "--to", other], path)
            check(f"snapshot-unpack {base}",
                  [UNPACK, f"--snapshot-type={form}", f"--output-prefix={out}/",
                   "--dump-snapshot-outputs", path], path)
            # run: the module, the inputs and the recorded outputs from
            # one open.
            check(f"run --compare {base}", [CLI, "run", "--compare", path], path)
            check(f"run --three-way --to npz {base}",
                  [CLI, "run", "--three-way", "--to", "npz",
                   os.path.join(work, "run-" + form + ".npz"), path], path)
            # compare A B: each side once.
            for side, a, b in (("EXPECTED", path, EXAMPLE),
                               ("ACTUAL", EXAMPLE, path)):
                check(f"compare ({side} {base})",
                      [CLI, "compare", "--inputs", a, b], path)
            # Standard input redirected from the file: read as that file,
            # never opened again by name or by /proc/self/fd.
            with open(path, "rb") as f:
                rc, n, err = opens([CLI, "unpack", f"--output-prefix={out}/",
                                    "-"], "-", stdin=f)
            if rc != 0 or n != 0:
                failures.append(f"unpack - < {base}: exit {rc}, {n} reopens")
            else:
                print(f"ok   unpack - < {base}: no reopen")
        bundle = os.path.join(work, "bundle", "call0")
        check("bundle from-decomposed",
              [CLI, "bundle", "from-decomposed", dec, "-o", bundle], dec)
        if python_path:
            env = dict(os.environ, PYTHONPATH=python_path,
                       PYTHONDONTWRITEBYTECODE="1")
            for path in (dec, pb):
                code = ("import decomposed, sys\n"
                        "with decomposed.open(sys.argv[1]) as f:\n"
                        "    f.module\n"
                        "    for lits in (f.inputs, f.outputs or []):\n"
                        "        for lit in lits:\n"
                        "            lit.numpy()\n")
                check(f"python open() {os.path.basename(path)}",
                      ["/usr/bin/python3", "-c", code, path], path, env=env,
                      preload=python_preload)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print(f"open_count: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
