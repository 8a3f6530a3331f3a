#!/usr/bin/python3
"""Every command over files that other people's tools wrote.

`shared/real/` (beside the repository; never copied into it) holds files
from public repositories, written by XLA, JAX, TensorFlow, torch-xla and
Neuron's tools: one arguments-only HloSnapshot from XLA's tests, HloProto and
HloModuleProto dumps, HLO text of real models, text protos. Its SOURCES.json
says what each one is. This stage runs every applicable command over every
file and requires:

  - no crash: no signal, no abort, no sanitizer report, an exit code from
    the one table (README, "Exit codes");
  - the kind each file is: the HloSnapshot (and the derived
    RunHloModuleIterationLiterals, on the wire an arguments-only
    HloSnapshot) a classic snapshot that every command reads (exit 0),
    every other file "not a decomposed or classic snapshot" (exit 1; 2 from
    compare and stats, whose 1 is an answer about the data), said first,
    with the reason after;
  - the arguments-only snapshots' values, from unpack's .npy files: the
    HloSnapshot's S32[3,1] [2,-4,5] and [0,7,-5] (XLA's mlir_bisect test
    reads the same file and checks the same values), the derived file's
    F32[2,2] [[0.1,0.2],[0.3,0.4]] (its .pbtxt source says so).

Usage: real_files.py CLI [--real DIR]
  DIR defaults to the first of <repo>/../shared/real, <repo>/../../shared/real
  that exists (CI clones the repository with shared/ beside it). Without
  one, the stage is skipped: exit 77 (ctest's SKIP_RETURN_CODE) with a
  message.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# What each SOURCES.json kind is to our tools. Files that are not listed in
# SOURCES.json (the derived ones in _derived/) are described here.
SNAPSHOT_KINDS = {"HloSnapshot(binary)", "RunHloModuleIterationLiterals(binary)"}
DERIVED = {
    # An HloUnoptimizedSnapshot: field 1 is an HloModuleProto directly, not
    # an HloProto, so it is no HloSnapshot.
    "_derived/sharded_unoptimized_hlo_snapshot.pb": "HloUnoptimizedSnapshot(binary)",
    # RunHloModuleIterationLiterals{arguments=2, result=3, reference_result=4}:
    # on the wire an HloSnapshot's arguments and result, and a field 4 that
    # HloSnapshot declares as the string execution_platform.
    "_derived/input_literal_f32_2_2.pb": "RunHloModuleIterationLiterals(binary)",
}
# Kinds that hold an HLO module (text or proto): the `hlo` command's files.
HLO_TEXT_PREFIX = "HLO text"
HLO_PROTO_KINDS = {"HloProto(binary)", "HloModuleProto(binary)",
                   "HloUnoptimizedSnapshot(binary)"}

# The arguments-only snapshot from XLA's mlir_bisect test, and the values of
# its two S32[3,1] arguments (SOURCES.md section 2; the test's CHECK lines);
# the derived one's F32[2,2] argument (input_literal_f32_2_2.pbtxt).
ARGS_ONLY = "ROCm+xla/xla/mlir/tools/mlir_bisect/tests/snapshot.mlir.pb"
VALUES = {
    ARGS_ONLY: [np.array([[2], [-4], [5]], np.int32),
                np.array([[0], [7], [-5]], np.int32)],
    "_derived/input_literal_f32_2_2.pb":
        [np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)],
}

NOT_A_SNAPSHOT = "not a decomposed or classic snapshot"
LEAD = "file: " + NOT_A_SNAPSHOT  # the message's frame, then its lead

failures = []
failed_files = set()
counts = {"files": 0, "runs": 0}
# The snapshot-unpack drop-in beside the CLI (set in main).
UNPACK_TOOL = None
current = {"file": None}


def fail(msg):
    failures.append(msg)
    failed_files.add(current["file"])


def find_real(explicit):
    if explicit:
        return explicit if os.path.isdir(explicit) else None
    for up in (os.path.join(REPO, ".."), os.path.join(REPO, "..", "..")):
        d = os.path.normpath(os.path.join(up, "shared", "real"))
        if os.path.isdir(d):
            return d
    return None


def run(cli, args, what, want_rc):
    """Runs CLI args; checks it did not crash and exited with want_rc (an int
    or a set). Returns the CompletedProcess."""
    counts["runs"] += 1
    try:
        r = subprocess.run([cli] + args, capture_output=True, timeout=300,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"{what}: timed out")
        return None
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode < 0:
        fail(f"{what}: killed by {signal.Signals(-r.returncode).name}: {err[-400:]}")
        return r
    for marker in ("terminate called", "Sanitizer", "runtime error:", "Aborted"):
        if marker in err:
            fail(f"{what}: {marker!r} on stderr: {err[-400:]}")
            return r
    want = want_rc if isinstance(want_rc, set) else {want_rc}
    if r.returncode not in want:
        fail(f"{what}: exit {r.returncode}, want {sorted(want)}; stderr {err[-400:]!r}")
    return r


def check_not_a_snapshot(cli, path, rel, tmp):
    """Every command says the file is neither form, first, and exits by the
    table: 1, or 2 from compare and stats."""
    for cmd, rc in ((["inspect"], 1), (["verify"], 1),
                    (["unpack", "--output-prefix", os.path.join(tmp, "u") + "/"], 1),
                    (["convert", "--to", "decomposed"], 1),
                    (["stats"], 2), (["compare", "--inputs"], 2)):
        args = cmd + [path]
        if cmd[0] == "convert":
            args.append(os.path.join(tmp, "c.dhs"))
        if cmd[0] == "compare":
            args.append(path)
        r = run(cli, args, f"{rel}: {cmd[0]}", rc)
        if r is None:
            continue
        # The message (on stderr; verify's report on stdout) leads with it:
        # "decomposed inspect: file: not a decomposed or classic snapshot;
        # read as decomposed, ...; read as classic, ... (at byte 0 of F)".
        text = (r.stdout + r.stderr).decode("utf-8", "replace")
        if LEAD not in text:
            fail(f"{rel}: {cmd[0]}: no {LEAD!r} in {text[:300]!r}")
    # The snapshot-unpack drop-in (classic by default, as Neuron's tool):
    # exit 1, nothing written.
    if UNPACK_TOOL:
        run(UNPACK_TOOL, ["--output-prefix=" + os.path.join(tmp, "su") + "/", path],
            f"{rel}: snapshot-unpack", 1)
        if os.path.exists(os.path.join(tmp, "su")) and os.listdir(os.path.join(tmp, "su")):
            fail(f"{rel}: a failed snapshot-unpack left {os.listdir(os.path.join(tmp, 'su'))}")
    # Nothing is left under the final names by a failed run.
    for name in ("c.dhs",):
        if os.path.exists(os.path.join(tmp, name)):
            fail(f"{rel}: a failed convert left {name}")


def check_classic(cli, path, rel, tmp):
    """A classic snapshot: every command reads it."""
    r = run(cli, ["inspect", "--json", path], f"{rel}: inspect", 0)
    if r is not None and r.returncode == 0:
        j = json.loads(r.stdout)
        if j.get("type") != "snapshot":
            fail(f"{rel}: inspect: type {j.get('type')!r}, want 'snapshot'")
    r = run(cli, ["inspect", path], f"{rel}: inspect text", 0)
    if r is not None and b"(entry )" in r.stdout:
        fail(f"{rel}: inspect prints an empty module: {r.stdout[:300]!r}")
    run(cli, ["verify", path], f"{rel}: verify", 0)
    run(cli, ["stats", path], f"{rel}: stats", 0)
    run(cli, ["stats", "--inputs", "--json", path], f"{rel}: stats --inputs", 0)
    run(cli, ["compare", "--inputs", path, path], f"{rel}: compare with itself", 0)
    out = os.path.join(tmp, "u") + "/"
    r = run(cli, ["unpack", "--output-prefix", out, path], f"{rel}: unpack", 0)
    conv = os.path.join(tmp, "c.dhs")
    r = run(cli, ["convert", path, conv, "--to", "decomposed"], f"{rel}: convert", 0)
    if r is not None and r.returncode == 0:
        run(cli, ["verify", conv], f"{rel}: verify of the converted file", 0)
        run(cli, ["compare", "--inputs", path, conv],
            f"{rel}: compare with its conversion", 0)
    return out


def check_args_only(cli, path, rel, tmp):
    """An arguments-only classic snapshot: it says it has no module, and its
    arguments unpack to the values its source gives."""
    out = check_classic(cli, path, rel, tmp)
    r = run(cli, ["inspect", path], f"{rel}: inspect (no module)", 0)
    if r is not None and b"module: none" not in r.stdout:
        fail(f"{rel}: inspect does not say there is no module: {r.stdout[:300]!r}")
    r = run(cli, ["unpack", "--output-prefix", os.path.join(tmp, "v") + "/", path],
            f"{rel}: unpack (no module)", 0)
    if r is not None and b"the snapshot has no module" not in r.stdout:
        fail(f"{rel}: unpack does not say there is no module: {r.stdout[:300]!r}")
    wants = VALUES[rel]
    for i, want in enumerate(wants):
        p = os.path.join(out, f"value_input{i}.npy")
        if not os.path.exists(p):
            fail(f"{rel}: unpack wrote no {p}")
            continue
        a = np.load(p)
        if a.dtype != want.dtype or a.shape != want.shape or not np.array_equal(a, want):
            fail(f"{rel}: value_input{i}.npy is {a.dtype} {a.tolist()}, want "
                 f"{want.dtype} {want.tolist()}")
    if os.path.exists(os.path.join(out, f"value_input{len(wants)}.npy")):
        fail(f"{rel}: unpack wrote more inputs than {len(wants)}")
    # The snapshot-unpack drop-in writes the same inputs (and an empty
    # model.hlo: there is no module).
    if UNPACK_TOOL:
        su = os.path.join(tmp, "su") + "/"
        run(UNPACK_TOOL, ["--output-prefix=" + su, path], f"{rel}: snapshot-unpack", 0)
        for i in range(len(wants)):
            a, b = os.path.join(out, f"value_input{i}.npy"), os.path.join(su, f"value_input{i}.npy")
            if not (os.path.exists(b) and os.path.exists(a)
                    and open(a, "rb").read() == open(b, "rb").read()):
                fail(f"{rel}: snapshot-unpack's value_input{i}.npy differs from unpack's")


# --- decomposed hlo -------------------------------------------------------------
# `decomposed hlo FILE` (print a module as HLO text): every HLO text file
# and every HloModuleProto and HloProto file must parse and print (exit 0,
# text that starts with "HloModule"), and printing the printed text again
# must give the same text (for a proto: the second printing, see below). Files that are not modules keep their exit code
# of 1 there.
HLO_ENABLED = True


# Files where `hlo` does not yet do what the check wants, each with why.
# For these the check requires only no crash (exit 0 or 1) and reports
# them as known; one that starts passing is reported too, so that the entry
# goes.
KNOWN_HLO = {}
# torch-xla's XLA_SAVE_TENSORS_FILE dump: graph reports, each module between
# `## BEGIN_GRAPH` and `## END_GRAPH`. `hlo` prints the dump again.
TENSORS_DUMP_KIND = "HLO text (torch-xla XLA_SAVE_TENSORS_FILE dump)"


def check_hlo(cli, path, rel, kind, tmp):
    if not HLO_ENABLED:
        return
    if rel in KNOWN_HLO:
        before, files_before = len(failures), set(failed_files)
        check_hlo_strict(cli, path, rel, kind, tmp)
        strict_failed = len(failures) > before
        del failures[before:]
        failed_files.intersection_update(files_before)
        r = run(cli, ["hlo", path], f"{rel}: hlo", {0, 1})
        print(f"known: {rel}: hlo: {KNOWN_HLO[rel]}"
              + ("" if strict_failed else " (now passes: drop the entry)"))
        return
    check_hlo_strict(cli, path, rel, kind, tmp)


def check_hlo_strict(cli, path, rel, kind, tmp):
    is_module = kind.startswith(HLO_TEXT_PREFIX) or kind in HLO_PROTO_KINDS
    r = run(cli, ["hlo", path], f"{rel}: hlo", 0 if is_module else 1)
    if r is None or not is_module or r.returncode != 0:
        return
    if kind in HLO_PROTO_KINDS:
        want = kind.split("(")[0]
        rj = run(cli, ["hlo", "--json", path], f"{rel}: hlo --json", 0)
        if rj is not None and rj.returncode == 0:
            form = json.loads(rj.stdout).get("form")
            if form != want:
                fail(f"{rel}: hlo --json: form {form!r}, expected {want!r}")
    text = r.stdout
    if kind == TENSORS_DUMP_KIND:
        check_tensors_dump(cli, path, rel, text)
    elif not text.lstrip().startswith(b"HloModule"):
        fail(f"{rel}: hlo: the text does not start with HloModule: {text[:100]!r}")
    again_path = os.path.join(tmp, "again.hlo")
    with open(again_path, "wb") as f:
        f.write(text)
    r2 = run(cli, ["hlo", again_path], f"{rel}: hlo of its own text", 0)
    if r2 is None or r2.returncode != 0:
        return
    if r2.stdout != text and (kind.startswith(HLO_TEXT_PREFIX)
                              and computation_blocks(r2.stdout)
                              != computation_blocks(text)):
        fail(f"{rel}: hlo: printing the printed text gives other text")
        return
    # XLA orders the callees of a computation by its instruction list: the
    # proto's ids, or a text's line order. The printed text lists
    # instructions in post-order, so when the input's order was another (a
    # proto, or hand-written text) the text read back may order the same
    # computations differently once (XLA's printer does the same), and from
    # then on is a fixed point.
    if r2.stdout == text:
        return
    with open(again_path, "wb") as f:
        f.write(r2.stdout)
    r3 = run(cli, ["hlo", again_path], f"{rel}: hlo of its text's text", 0)
    if r3 is not None and r3.returncode == 0 and r3.stdout != r2.stdout:
        fail(f"{rel}: hlo: the text read back twice does not print the same")


def check_tensors_dump(cli, path, rel, text):
    with open(path, "rb") as f:
        original = f.read()
    graphs = original.count(b"\n## BEGIN_GRAPH\n")
    first = original.split(b"\n", 1)[0]
    if not text.startswith(first + b"\n") or text.count(b"\n## BEGIN_GRAPH\n") != graphs:
        fail(f"{rel}: hlo: the dump printed again does not keep its reports")
    r = run(cli, ["hlo", "--json", path], f"{rel}: hlo --json", 0)
    if r is not None and r.returncode == 0:
        j = json.loads(r.stdout)
        if j.get("form") != "torch-xla graph dump" or len(j.get("graphs", [])) != graphs:
            fail(f"{rel}: hlo --json: expected {graphs} graphs of a torch-xla "
                 f"graph dump, found {str(j)[:200]}")
    for g in (0, graphs - 1):
        r = run(cli, ["hlo", "--graph", str(g), path], f"{rel}: hlo --graph {g}", 0)
        if r is not None and r.returncode == 0 and not r.stdout.startswith(b"HloModule"):
            fail(f"{rel}: hlo --graph {g}: not a module's text: {r.stdout[:100]!r}")
    run(cli, ["hlo", "--graph", str(graphs), path], f"{rel}: hlo --graph {graphs}", 1)


def computation_blocks(text):
    """The printed computations (blank-line separated), in sorted order."""
    return sorted(text.split(b"\n\n"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--real", default=os.environ.get("DECOMPOSED_REAL_FILES"))
    a = ap.parse_args()
    global UNPACK_TOOL
    tool = os.path.join(os.path.dirname(os.path.abspath(a.cli)), "snapshot-unpack")
    UNPACK_TOOL = tool if os.path.exists(tool) else None
    real = find_real(a.real)
    if real is None:
        where = (a.real if a.real else
                 "shared/real beside the repository, under "
                 + os.path.normpath(os.path.join(REPO, "..")) + " or its parent")
        print(f"real_files: skipped: no {where}; --real DIR names it")
        return SKIP
    with open(os.path.join(real, "SOURCES.json")) as f:
        sources = {e["dest"]: e["kind"] for e in json.load(f)}
    kinds = dict(DERIVED)
    kinds.update(sources)
    files = []
    for dirpath, _, names in os.walk(real):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), real)
            if rel in ("SOURCES.json", "SOURCES.md"):
                continue
            files.append(rel)
    files.sort()
    unknown = [f for f in files if f not in kinds]
    if unknown:
        fail(f"files SOURCES.json does not describe: {unknown}")
    for rel in VALUES:
        if rel not in files:
            fail(f"{rel} is missing")
    per_kind = {}
    with tempfile.TemporaryDirectory(prefix="real_files_") as top:
        for i, rel in enumerate(files):
            if rel not in kinds:
                continue
            kind = kinds[rel]
            path = os.path.join(real, rel)
            tmp = os.path.join(top, str(i))
            os.makedirs(tmp)
            counts["files"] += 1
            current["file"] = rel
            per_kind[kind] = per_kind.get(kind, 0) + 1
            if rel in VALUES:
                check_args_only(cli=a.cli, path=path, rel=rel, tmp=tmp)
            elif kind in SNAPSHOT_KINDS:
                check_classic(a.cli, path, rel, tmp)
            else:
                check_not_a_snapshot(a.cli, path, rel, tmp)
            check_hlo(a.cli, path, rel, kind, tmp)
    for f in failures:
        print("FAIL:", f)
    print(f"real_files: {counts['files']} files, {counts['runs']} runs; "
          + ", ".join(f"{n} {k}" for k, n in sorted(per_kind.items()))
          + ("" if HLO_ENABLED else "; the hlo check is not enabled yet"))
    print(f"{counts['files'] - len(failed_files - {None})} passed, "
          f"{len(failed_files)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
