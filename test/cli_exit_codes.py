#!/usr/bin/python3
"""The `decomposed` CLI's exit-code rule, for every command:
0 success, 1 bad input or I/O, 2 usage.

  cli_exit_codes.py build/bin/decomposed examples/example.decomposed_hlo_snapshot

For each command: a successful run (0), an unknown option, a missing
argument and a bad option value (2, with the reason and the command's
"Usage:" line on stderr and nothing on stdout), and a bad input file (1,
with "decomposed <command>: " on stderr). `--help` exits 0 with the usage
on stdout. The inputs are the committed example and files made from it by
the CLI itself (unpack, bundle from-decomposed), plus a file of garbage.
"""
import json
import os
import subprocess
import sys
import tempfile

CLI, EXAMPLE = sys.argv[1], os.path.abspath(sys.argv[2])
ENV = {k: v for k, v in os.environ.items()
       if not k.startswith("VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_")}
failures = []
counts = {0: 0, 1: 0, 2: 0}


def run(args):
    return subprocess.run([CLI, *args], capture_output=True, text=True,
                          env=ENV, timeout=120)


def expect(rc, args, command=None):
    """Runs `decomposed args`; requires exit `rc` and rc's output shape."""
    r = run(args)
    what = "decomposed " + " ".join(args)
    counts[rc] += 1
    if r.returncode != rc:
        failures.append(f"{what}: exit {r.returncode}, want {rc}; "
                        f"stderr {r.stderr[-400:]!r}")
        return r
    if rc == 2:
        if "Usage:" not in r.stderr or r.stdout:
            failures.append(f"{what}: a usage error must print the usage on "
                            f"stderr only; stderr {r.stderr[:300]!r}")
    if rc == 1 and command and not r.stderr.startswith(f"decomposed {command}: ") \
            and not (command == "verify" and r.stdout):
        failures.append(f"{what}: stderr {r.stderr[:300]!r} does not start "
                        f"with 'decomposed {command}: '")
    return r


def usage_errors(command, good, bad_values):
    """Unknown option, missing argument(s), bad option values: all exit 2."""
    words = command.split()
    expect(2, [*words, "--bogus", "x", *good])
    expect(2, [*words, "--bogus"])
    expect(2, words)  # no arguments at all
    for args in bad_values:
        expect(2, [*words, *args])
    r = expect(0, [*words, "--help"])
    if "Usage:" not in r.stdout:
        failures.append(f"decomposed {command} --help: no usage on stdout")


with tempfile.TemporaryDirectory(prefix="cli_exit_codes_") as tmp:
    garbage = os.path.join(tmp, "garbage.bin")
    with open(garbage, "wb") as f:
        f.write(b"\xff\xfe not a snapshot, a module or JSON \x00\x01")
    missing = os.path.join(tmp, "missing.bin")
    u = os.path.join(tmp, "u") + "/"

    # --- the root and the groups ----------------------------------------------
    expect(2, [])
    expect(2, ["bogus"])
    expect(2, ["--bogus"])
    expect(2, ["bundle"])
    expect(2, ["bundle", "bogus"])
    expect(2, ["capture"])
    r = expect(0, ["--help"])
    for c in ("unpack", "inspect", "verify", "pack", "convert", "capture", "run",
              "bundle", "hlo"):
        if c not in r.stdout:
            failures.append(f"decomposed --help does not list {c}")

    # --- enum options: each reads the library's one table of spellings
    # (decomposed/names.h); another word is a usage error that lists them ----
    for words, option, spellings, good in [
        (["inspect", EXAMPLE], "--snapshot-type", "auto,decomposed,snapshot", "decomposed"),
        (["compare", EXAMPLE, EXAMPLE], "--mode", "torch,numpy,xla", "numpy"),
        (["run", EXAMPLE, "--compare"], "--mode", "torch,numpy,xla", "xla"),
        (["run", EXAMPLE], "--numerics", "xla,f32,neuron", "neuron"),
        (["hlo", EXAMPLE], "--style", "long,modern,short", "modern"),
        (["convert", EXAMPLE, os.path.join(tmp, "enum.pb")], "--to",
         "decomposed,snapshot", "snapshot"),
        (["bundle", "from-decomposed", EXAMPLE, "-o", os.path.join(tmp, "enum_call")],
         "--format", "pt,npy", "npy"),
    ]:
        r = expect(2, [*words, option, "bogus"])
        want = f"{option}: expected one of {{{spellings}}}, found 'bogus'"
        if want not in r.stderr:
            failures.append(f"{' '.join(words)} {option} bogus: no {want!r} in "
                            f"{r.stderr[:300]!r}")
        expect(0, [*words, option, good])

    # --- unpack ----------------------------------------------------------------
    ok = ["--snapshot-type=decomposed", "--dump-snapshot-outputs",
          "--output-prefix=" + u, EXAMPLE]
    r = expect(0, ["unpack", *ok])
    if "unpacked 4 files" not in r.stdout:
        failures.append(f"unpack: {r.stdout!r}")
    usage_errors("unpack", ok, [
        ["--snapshot-type=bogus", EXAMPLE],   # bad value
        ["--snapshot-type", EXAMPLE],         # the option eats the file
        [EXAMPLE, EXAMPLE],                   # one positional only
        ["--dump-snapshot-outputs=maybe", EXAMPLE],
        ["-bogus-option=1", EXAMPLE],         # one dash, not an option
    ])
    # snapshot-unpack's one-dash spellings work after `unpack` too.
    u1 = os.path.join(tmp, "u1") + "/"
    r = expect(0, ["unpack", "-snapshot-type=decomposed", "-output-prefix=" + u1,
                   "-dump-snapshot-outputs", EXAMPLE])
    if "unpacked 4 files" not in r.stdout or \
            not os.path.exists(u1 + "snapshot_output0.npy"):
        failures.append(f"unpack -output-prefix=: {r.stdout!r}")
    expect(1, ["unpack", "--snapshot-type=decomposed", "--output-prefix=" + u,
               garbage], "unpack")
    expect(1, ["unpack", "--output-prefix=" + u, missing], "unpack")

    # --- detection, empty files, hints, progress (docs/format.md §7.8) -------
    # The default type is auto: the example is found to be decomposed.
    r = expect(0, ["unpack", "--output-prefix=" + u, EXAMPLE])
    if "unpacked 3 files" not in r.stdout:
        failures.append(f"unpack (auto): {r.stdout!r}")
    r = expect(1, ["unpack", "--snapshot-type=snapshot",
                   "--output-prefix=" + u, EXAMPLE], "unpack")
    if ("this looks like a decomposed snapshot (region [0] box of 403 bytes "
            "at byte 0); use --snapshot-type=decomposed") not in r.stderr:
        failures.append(f"unpack as classic: no hint in {r.stderr!r}")
    empty = os.path.join(tmp, "empty.bin")
    open(empty, "wb").close()
    for args in (["unpack", "--output-prefix=" + u, empty],
                 ["unpack", "--snapshot-type=decomposed", empty],
                 ["inspect", empty], ["verify", empty],
                 ["convert", empty, os.path.join(tmp, "e.pb"), "--to",
                  "snapshot"]):
        r = expect(1, args, args[0])
        if "found an empty file" not in r.stdout + r.stderr:
            failures.append(f"{args}: no 'empty file' in "
                            f"{(r.stdout + r.stderr)!r}")
    for cmd in (["unpack", "--output-prefix=" + u], ["verify"], ["stats"],
                ["compare", EXAMPLE], ["run"]):
        r = expect(0, [*cmd, "--progress", EXAMPLE])
        if f"{cmd[0]}: " not in r.stderr or "100%" not in r.stderr:
            failures.append(f"{cmd[0]} --progress: stderr {r.stderr!r}")
        r = expect(0, [*cmd, "--quiet", EXAMPLE])
        if r.stderr:
            failures.append(f"{cmd[0]} --quiet: stderr {r.stderr!r}")
        expect(2, [*cmd, "--progress", "--quiet", EXAMPLE])
        # Not a terminal and a tiny file: no line by default.
        r = expect(0, [*cmd, EXAMPLE])
        if r.stderr:
            failures.append(f"{cmd[0]} (default): stderr {r.stderr!r}")
    module, npy = u + "model.hlo", u + "value_input0.npy"

    # --- inspect ------------------------------------------------------------------
    expect(0, ["inspect", EXAMPLE])
    expect(0, ["inspect", "--json", EXAMPLE])
    usage_errors("inspect", [EXAMPLE], [
        ["--json=maybe", EXAMPLE],
        ["--jobs=-1", EXAMPLE],
    ])
    expect(1, ["inspect", garbage], "inspect")
    expect(1, ["inspect", missing], "inspect")
    # --json prints JSON for one failing file too: the error entry.
    r = expect(1, ["inspect", "--json", garbage], "inspect")
    try:
        e = json.loads(r.stdout)
        if e.get("file") != garbage or "frame" not in e.get("error", {}):
            failures.append(f"inspect --json garbage: {r.stdout[:200]!r}")
    except ValueError:
        failures.append(f"inspect --json garbage: not JSON: {r.stdout[:200]!r}")
    # A long option with one dash is that option in every command (not
    # "-j son"); one-letter options keep their attached values.
    r = expect(0, ["inspect", "-json", EXAMPLE])
    if not r.stdout.startswith("{"):
        failures.append(f"inspect -json: not JSON: {r.stdout[:100]!r}")
    r = expect(0, ["inspect", "-j1", EXAMPLE])
    if r.stdout.startswith("{"):
        failures.append("inspect -j1: JSON without --json")
    expect(0, ["-version"])
    # ... but an option's value stays as written: `-o -json` is a file.
    r = subprocess.run([CLI, "hlo", EXAMPLE, "-o", "-json"], cwd=tmp,
                       capture_output=True, text=True, env=ENV, timeout=120)
    if r.returncode != 0 or not os.path.isfile(os.path.join(tmp, "-json")):
        failures.append(f"hlo -o -json: exit {r.returncode}, {r.stderr[:200]!r}")
    # Tolerances: a finite number >= 0, said in those words.
    for bad in ("-1e-3", "nan", "inf", "abc"):
        r = expect(2, ["compare", EXAMPLE, EXAMPLE, "--atol=" + bad])
        if f"Value {bad} is not a finite number >= 0" not in r.stderr:
            failures.append(f"compare --atol={bad}: {r.stderr[:200]!r}")
    expect(0, ["compare", EXAMPLE, EXAMPLE, "-atol=1e-3"])
    for bad in ("nan", "1.5", "-0.1"):
        r = expect(2, ["compare", EXAMPLE, EXAMPLE, "--baseline", EXAMPLE,
                       "--bc-threshold=" + bad])
        if f"Value {bad} is not a number from 0 to 1" not in r.stderr:
            failures.append(f"--bc-threshold={bad}: {r.stderr[:200]!r}")

    # --- verify --------------------------------------------------------------------
    expect(0, ["verify", EXAMPLE])
    expect(0, ["verify", "--snapshot-type", "decomposed", EXAMPLE, EXAMPLE])
    usage_errors("verify", [EXAMPLE], [
        ["--snapshot-type=bogus", EXAMPLE],
        ["--snapshot-type"],
    ])
    expect(1, ["verify", "--snapshot-type=decomposed", garbage], "verify")
    expect(1, ["verify", EXAMPLE, missing], "verify")

    # --- many files: verify, inspect --json, unpack --each, --jobs ---------------
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    names = []
    for i in range(5):
        names.append(os.path.join(many, f"s{i}.dhs"))
        with open(EXAMPLE, "rb") as f, open(names[-1], "wb") as g:
            # s2 is cut 4 bytes into input 0's body (at byte 416)
            g.write(f.read() if i != 2 else f.read()[:420])
    for jobs in ("1", "3"):
        r = expect(1, ["verify", "-j", jobs, *names], "verify")
        # One verdict line per file, in input order (warning lines aside).
        lines = [l for l in r.stdout.splitlines() if ": warning: " not in l]
        if [l.split(":")[0] for l in lines] != names or \
                "ok (decomposed" in lines[2] or \
                any("ok (decomposed snapshot, 2 inputs" not in lines[i]
                    for i in (0, 1, 3, 4)):
            failures.append(f"verify -j {jobs}: {r.stdout!r}")
        r = expect(1, ["inspect", "--json", "--jobs", jobs, *names], "inspect")
        got = json.loads(r.stdout) if r.stdout else []
        if [e["file"] for e in got] != names or "error" not in got[2] or \
                any(len(got[i]["report"]["inputs"]) != 2 for i in (0, 1, 3)):
            failures.append(f"inspect --json -j {jobs}: {r.stdout[:400]!r}")
        each = os.path.join(tmp, "each" + jobs)
        r = expect(1, ["unpack", "--each", each, "-j", jobs, *names], "unpack")
        # s2, cut inside input 0, is read as decomposed (docs/format.md
        # §7.8): its model.hlo is written before the error, and stays; the
        # error says so, and the summary counts only what the 4 good
        # snapshots unpacked.
        want = [f"wrote {each}/s{i}/{n}" for i in (0, 1, 2, 3, 4)
                for n in ("model.hlo", "value_input0.npy", "value_input1.npy")
                if i != 2 or n == "model.hlo"]
        if [l.split(" ")[0] + " " + l.split(" ")[1] for l in
                r.stdout.splitlines()[:-1]] != want or \
                not r.stdout.endswith("unpacked 12 files from 4 snapshots; "
                                      "1 failed\n") or \
                "input 0 body: declared 44 bytes but 4 remain" not in \
                r.stderr or \
                "; kept 1 complete file before the error" not in r.stderr or \
                f"s2.dhs" not in r.stderr:
            failures.append(f"unpack --each -j {jobs}: {r.stdout!r} "
                            f"{r.stderr!r}")
    r = expect(0, ["inspect", "--json", names[0], names[1]])
    expect(0, ["unpack", "--each", os.path.join(tmp, "each_ok"), names[0],
               names[1]])
    # Two inputs with one output directory: refused before writing.
    os.makedirs(os.path.join(many, "sub"))
    twin = os.path.join(many, "sub", "s0.dhs")
    with open(EXAMPLE, "rb") as f, open(twin, "wb") as g:
        g.write(f.read())
    r = expect(1, ["unpack", "--each", os.path.join(tmp, "clash"), names[0],
                   twin], "unpack")
    if "would both be unpacked to" not in r.stderr or \
            os.path.exists(os.path.join(tmp, "clash")):
        failures.append(f"unpack --each clash: {r.stderr!r}")
    expect(2, ["unpack", "--each", os.path.join(tmp, "x"),
               "--output-prefix", u, EXAMPLE])
    expect(2, ["unpack", "--each"])
    expect(2, ["unpack", "--each", os.path.join(tmp, "x"), "--to", "npz",
               os.path.join(tmp, "x.npz"), EXAMPLE])
    r = expect(0, ["unpack", "--each", os.path.join(tmp, "each_m"),
                   "--manifest", names[0], names[1]])
    if not all(os.path.exists(os.path.join(tmp, "each_m", f"s{i}",
                                           "manifest.json")) for i in (0, 1)):
        failures.append(f"unpack --each --manifest: {r.stdout!r}")
    expect(2, ["verify", "--jobs", "many", EXAMPLE])

    # --- pack ------------------------------------------------------------------------
    out = os.path.join(tmp, "packed.decomposed_hlo_snapshot")
    ok = ["--module", module, "--input", npy, "-o", out]
    r = expect(0, ["pack", *ok])
    # pack lists what it wrote, as unpack does.
    size = os.path.getsize(out) if os.path.exists(out) else -1
    if (f"wrote {out} (decomposed snapshot, {size} bytes)" not in r.stdout
            or "packed input 0 (" not in r.stdout
            or "1 input, 0 outputs" not in r.stdout):
        failures.append(f"pack: stdout {r.stdout!r}")
    expect(0, ["pack", "--snapshot", EXAMPLE, "--input", npy,
               "--format=snapshot", "--out", out + ".pb"])
    usage_errors("pack", ok, [
        ["--module", module, "--input", npy],                 # no -o
        ["--input", npy, "-o", out],                          # no module
        ["--module", module, "--snapshot", EXAMPLE, "-o", out],
        ["--module", module, "--input", npy, npy, "-o", out],  # one per --input
        ["--module", module, "-o"],
        ["--module", module, "--format=bogus", "-o", out],
        ["--module", module, "--input", npy, "--dtype", "1=bf16", "-o", out],
        ["--module", module, "--input", npy, "--dtype", "0=bogus", "-o", out],
        ["--module", module, "--input", npy, "--dtype", "bf16", "-o", out],
    ])
    expect(1, ["pack", "--module", garbage, "--input", npy, "-o", out], "pack")
    expect(1, ["pack", "--module", module, "--input", missing, "-o", out],
           "pack")

    # --- convert -------------------------------------------------------------------
    classic = os.path.join(tmp, "classic.pb")
    r = expect(0, ["convert", EXAMPLE, classic, "--to", "snapshot"])
    # convert says what it wrote, as pack does.
    size = os.path.getsize(classic) if os.path.exists(classic) else -1
    if r.stdout != (f"wrote {classic} (classic snapshot, {size} bytes): "
                    f"2 inputs, 1 output, from {EXAMPLE} (decomposed snapshot)\n"):
        failures.append(f"convert: stdout {r.stdout!r}")
    r = expect(0, ["convert", classic, classic + ".dhs", "--to=decomposed"])
    if not r.stdout.startswith(f"wrote {classic}.dhs (decomposed snapshot, "):
        failures.append(f"convert --to decomposed: stdout {r.stdout!r}")
    usage_errors("convert", [EXAMPLE, classic, "--to", "snapshot"], [
        [EXAMPLE, classic],                       # no --to
        [EXAMPLE, "--to", "snapshot"],            # no OUT
        [EXAMPLE, classic, "--to", "bogus"],
        [EXAMPLE, classic, classic, "--to", "snapshot"],
    ])
    expect(1, ["convert", garbage, classic, "--to", "snapshot"], "convert")
    expect(1, ["convert", missing, classic, "--to", "decomposed"], "convert")

    # --- capture plan -----------------------------------------------------------------
    forwards = os.path.join(tmp, "forwards.json")
    with open(forwards, "w") as f:
        json.dump([{"neffs": ["A"]}], f)
    expect(0, ["capture", "plan", forwards])
    expect(0, ["capture", "plan", "--tp-rank", "3", forwards])
    usage_errors("capture plan", [forwards], [
        ["--tp-rank=-1", forwards],
        ["--global-rank", "abc", forwards],
        ["--dp-rank"],
        [forwards, forwards],
    ])
    expect(1, ["capture", "plan", garbage], "capture plan")
    expect(1, ["capture", "plan", missing], "capture plan")
    # A directory and an endless device are errors with their reason, not
    # an abort; "-" reads standard input.
    r = expect(1, ["capture", "plan", tmp], "capture plan")
    if "found a directory" not in r.stderr:
        failures.append(f"capture plan DIR: {r.stderr[:200]!r}")
    r = expect(1, ["capture", "plan", "/dev/zero"], "capture plan")
    if "more than 67108864 bytes" not in r.stderr:
        failures.append(f"capture plan /dev/zero: {r.stderr[:200]!r}")
    with open(forwards) as f:
        r = subprocess.run([CLI, "capture", "plan", "-"], stdin=f, capture_output=True,
                           text=True, env=ENV, timeout=120)
    if r.returncode != 0 or not r.stdout.startswith("{"):
        failures.append(f"capture plan -: exit {r.returncode}, {r.stderr[:200]!r}")
    # HLO text on stdin whose first byte starts no protobuf record (a
    # comment) is read whole, past what detection reads (about 64 KiB).
    lines = ["// a comment first", "HloModule chain", "", "ENTRY e {",
             "  v0 = f32[] constant(1)"]
    lines += [f"  v{i} = f32[] add(v{i - 1}, v{i - 1})" for i in range(1, 4000)]
    lines += ["  ROOT r = f32[] negate(v3999)", "}", ""]
    r = subprocess.run([CLI, "hlo", "-", "--json"], input="\n".join(lines),
                       capture_output=True, text=True, env=ENV, timeout=120)
    if r.returncode != 0 or '"instructions": 4001' not in r.stdout:
        failures.append(f"hlo - (a comment first, {len(chr(10).join(lines))} bytes): "
                        f"exit {r.returncode}, {r.stderr[:300]!r}")
    # An endless character device as a snapshot fails at once (the stream
    # is not copied to a temp file first: a timeout here is the defect).
    for cmd in (["verify", "/dev/zero"], ["inspect", "/dev/zero"]):
        r = expect(1, cmd, cmd[0])
        if "found field number 0 (at byte 0" not in r.stdout + r.stderr:
            failures.append(f"{cmd}: {r.stderr[:200]!r}")
    # As a module file too (not 4 GiB of zeros first, then the size limit).
    r = expect(1, ["hlo", "/dev/zero"], "hlo")
    if "not a module file" not in r.stderr:
        failures.append(f"hlo /dev/zero: {r.stderr[:200]!r}")

    # --- bundle from-decomposed / ls / verify / to-decomposed ---------------------------
    root = os.path.join(tmp, "bundles")
    call = os.path.join(root, "abc", "rank0", "call0")
    r = expect(0, ["bundle", "from-decomposed", EXAMPLE, "-o", call,
                   "--format", "npy", "--hash", "abc"])
    # It says what it wrote, element types spelt as everywhere (f32).
    if not r.stdout.startswith(f"wrote {call}: 2 npy inputs and meta.json\n") \
            or "  tensor0 f32 [2,3] 24 bytes" not in r.stdout:
        failures.append(f"bundle from-decomposed: stdout {r.stdout!r}")
    usage_errors("bundle from-decomposed", [EXAMPLE, "-o", call + "x"], [
        [EXAMPLE],                                          # no -o
        [EXAMPLE, "-o", call + "x", "--format", "bogus"],
        [EXAMPLE, "-o", call + "x", "--call-index=-1"],
        [EXAMPLE, "-o", call + "x", "--global-rank", "two"],
        [EXAMPLE, EXAMPLE, "-o", call + "x"],
    ])
    expect(1, ["bundle", "from-decomposed", garbage, "-o", call + "g"],
           "bundle from-decomposed")
    expect(1, ["bundle", "from-decomposed", EXAMPLE, "-o", call],  # exists
           "bundle from-decomposed")

    r = expect(0, ["bundle", "ls", root, "--json"])
    if r.returncode == 0 and len(json.loads(r.stdout)) != 1:
        failures.append(f"bundle ls: {r.stdout!r}")
    usage_errors("bundle ls", [root], [
        [root, root],
        ["--json=maybe", root],
    ])
    expect(1, ["bundle", "ls", missing], "bundle ls")
    expect(1, ["bundle", "ls", garbage], "bundle ls")
    # A call, rank or hash directory lists its bundles too; a directory with
    # none says so (exit 1: the answer is no).
    for d in (call, os.path.dirname(call), os.path.dirname(os.path.dirname(call))):
        r = expect(0, ["bundle", "ls", d])
        if not r.stdout.startswith("abc\trank0\tcall0\tnpy, 2 inputs"):
            failures.append(f"bundle ls {d}: {r.stdout!r}")
    nothing = os.path.join(tmp, "nothing")
    os.makedirs(nothing)
    r = expect(1, ["bundle", "ls", nothing], "bundle ls")
    if "no bundle under " + nothing not in r.stderr or r.stdout:
        failures.append(f"bundle ls of an empty directory: {r.stdout!r} {r.stderr!r}")

    expect(0, ["bundle", "verify", call])
    usage_errors("bundle verify", [call], [[call, call]])
    expect(1, ["bundle", "verify", tmp], "bundle verify")  # no meta.json

    dec = os.path.join(tmp, "from_bundle.dhs")
    r = expect(0, ["bundle", "to-decomposed", call, "--module", module, "-o", dec])
    if not r.stdout.startswith(f"wrote {dec} (decomposed snapshot, ") or \
            "2 inputs, 0 outputs" not in r.stdout:
        failures.append(f"bundle to-decomposed: stdout {r.stdout!r}")
    usage_errors("bundle to-decomposed", [call, "--module", module, "-o", dec], [
        [call, "-o", dec],                       # no --module
        [call, "--module", module],              # no -o
        [call, call, "--module", module, "-o", dec],
    ])
    expect(1, ["bundle", "to-decomposed", tmp, "--module", module, "-o", dec],
           "bundle to-decomposed")
    expect(1, ["bundle", "to-decomposed", call, "--module", garbage,
               "-o", dec + "2"], "bundle to-decomposed")

    # --- hlo ----------------------------------------------------------------------
    r = expect(0, ["hlo", EXAMPLE])
    if not r.stdout.startswith("HloModule example, entry_computation_layout="):
        failures.append(f"hlo: {r.stdout[:200]!r}")
    short = os.path.join(tmp, "example.hlo.txt")
    expect(0, ["hlo", EXAMPLE, "--style", "short", "-o", short])
    r = expect(0, ["hlo", short, "--style", "short"])   # text -> text
    with open(short) as f:
        if r.stdout != f.read():
            failures.append("hlo: short text read back does not print the same")
    proto = os.path.join(tmp, "example.hlo.pb")
    expect(0, ["hlo", short, "--to-proto", "-o", proto])
    r = expect(0, ["hlo", proto, "--json"])
    if json.loads(r.stdout)["instructions"] != 6:
        failures.append(f"hlo --json: {r.stdout[:300]!r}")
    # Text parsed straight to bytes: an error leaves no output and names
    # the file, the line and the operand.
    bad_text, bad_pb = os.path.join(tmp, "bad.hlo"), os.path.join(tmp, "bad.pb")
    with open(bad_text, "w") as f:
        f.write("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                "  ROOT n = f32[2] negate(q)\n}\n")
    r = expect(1, ["hlo", bad_text, "--to-proto", "-o", bad_pb], "hlo")
    if os.path.exists(bad_pb) or "line 4" not in r.stderr or '"q"' not in r.stderr:
        failures.append(f"hlo --to-proto of bad text: {r.stderr[:300]!r}, "
                        f"output left: {os.path.exists(bad_pb)}")
    # torch-xla's graph dump: one graph is a module file to every command;
    # of several, --to-proto needs --graph.
    with open(short) as f:
        module_text = f.read()
    graph = ("[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (a.py:1)\n\n"
             "## BEGIN_GRAPH\n" + module_text + "\n## END_GRAPH\n\n\n")
    dump1, dump2 = os.path.join(tmp, "one.hlo.0"), os.path.join(tmp, "two.hlo.0")
    with open(dump1, "w") as f:
        f.write(graph)
    with open(dump2, "w") as f:
        f.write(graph + graph)
    r = expect(0, ["hlo", dump1, "--style", "short"])
    if r.stdout != graph:
        failures.append(f"hlo of a graph dump does not print it again: {r.stdout[:200]!r}")
    dump_pb = os.path.join(tmp, "dump.pb")
    expect(0, ["hlo", dump1, "--to-proto", "-o", dump_pb])
    with open(dump_pb, "rb") as f, open(proto, "rb") as g:
        if f.read() != g.read():
            failures.append("hlo --to-proto of a one-graph dump differs from its module's")
    expect(2, ["hlo", dump2, "--to-proto", "-o", dump_pb])
    expect(0, ["hlo", dump2, "--graph", "1", "--to-proto", "-o", dump_pb])
    expect(1, ["hlo", dump2, "--graph", "2"], "hlo")
    expect(1, ["run", "--module", dump2, "--inputs", EXAMPLE], "run")
    # pack --module takes HLO text too: the same snapshot as from the proto.
    from_text = os.path.join(tmp, "from_text.dhs")
    from_proto = os.path.join(tmp, "from_proto.dhs")
    expect(0, ["unpack", "--output-prefix=" + os.path.join(tmp, "hlo_"), EXAMPLE])
    inputs = ["--input", os.path.join(tmp, "hlo_value_input0.npy"),
              "--input", os.path.join(tmp, "hlo_value_input1.npy")]
    expect(0, ["pack", "--module", short, *inputs, "-o", from_text])
    expect(0, ["pack", "--module", proto, *inputs, "-o", from_proto])
    with open(from_text, "rb") as f, open(from_proto, "rb") as g:
        if f.read() != g.read():
            failures.append("pack --module TEXT differs from pack --module PROTO")
    elided = os.path.join(tmp, "elided.hlo.txt")
    with open(elided, "w") as f:
        f.write("HloModule m\n\nENTRY e {\n  ROOT c = f32[11]{0} constant({...})\n}\n")
    r = expect(1, ["pack", "--module", elided, "-o", os.path.join(tmp, "e.dhs")], "pack")
    if 'constant "c"' not in r.stderr:
        failures.append(f"pack of an elided constant: {r.stderr!r}")
    bad_text = os.path.join(tmp, "bad.hlo.txt")
    with open(bad_text, "w") as f:
        f.write("HloModule m\n\nENTRY e {\n  ROOT a = f32[] add(b, c)\n}\n")
    r = expect(1, ["hlo", bad_text], "hlo")
    if "line 4, column" not in r.stderr:
        failures.append(f"hlo of bad text: {r.stderr!r}")
    expect(1, ["hlo", os.path.join(tmp, "missing.pb")], "hlo")
    usage_errors("hlo", [EXAMPLE], [
        [EXAMPLE, "--style", "bogus"],
        [EXAMPLE, "--json", "--to-proto"],
    ])

    # --- run ----------------------------------------------------------------------
    r = expect(0, ["run", EXAMPLE, "--compare"])
    if "PASS: 1 of 1 tensor pass" not in r.stdout:
        failures.append(f"run --compare: {r.stdout!r}")
    expect(0, ["run", "--compare", EXAMPLE])  # the one path is the snapshot
    expect(0, ["run", EXAMPLE, "--output-prefix", os.path.join(tmp, "run") + "/"])
    expect(0, ["run", EXAMPLE, "--to", "npz", os.path.join(tmp, "run.npz"), "--json"])
    expect(0, ["run", "--module", module, "--inputs", u, "--compare", u])
    expect(0, ["run", EXAMPLE, "--three-way"])
    dump = os.path.join(tmp, "dump")
    usage_errors("run", [EXAMPLE], [
        ["--numerics=bogus", EXAMPLE],
        [EXAMPLE, "--to", "zip", os.path.join(tmp, "o.zip")],
        [EXAMPLE, "--output-prefix", u, "--to", "npz", os.path.join(tmp, "o.npz")],
        [EXAMPLE, "--rtol", "0.1"],                  # needs --compare
        [EXAMPLE, "--bins", "3", "--compare"],       # needs --three-way
        [EXAMPLE, "--three-way", "--rtol", "0.1"],   # two-sided only
        [EXAMPLE, "--three-way", "--numerics", "f32"],
        [EXAMPLE, "--dump-filter", "x"],             # needs --dump
        [EXAMPLE, "--dump", dump, "--dump-filter", "("],
        [EXAMPLE, "--substitute", "no_equals_sign"],
        [EXAMPLE, "--threads", "-1"],
        ["--module", module],                        # no inputs
        [EXAMPLE, "--top", "3"],                     # needs --bisect
        [EXAMPLE, "--bisect", "--compare"],
        [EXAMPLE, "--replicas", "2", "--partitions", "1"],  # ranks only
        [EXAMPLE, EXAMPLE, "--three-way"],           # not for ranks
    ])
    expect(0, ["run", EXAMPLE, "--bisect"])
    expect(1, ["run", EXAMPLE, EXAMPLE], "run")      # one file for two ranks
    expect(1, ["run", garbage], "run")
    expect(1, ["run", missing], "run")
    expect(1, ["run", "--module", garbage, "--inputs", u], "run")
    r = expect(1, ["run", "--module", module, "--inputs", npy], "run")
    if "expected 2 inputs" not in r.stderr:
        failures.append(f"run with one input of two: {r.stderr!r}")
    r = expect(1, ["run", EXAMPLE, "--substitute", "product=" + missing], "run")
    # With a check, compare's codes: 1 a mismatch, 2 an error (no usage).
    wrong = os.path.join(tmp, "wrong") + "/"
    subprocess.run([CLI, "unpack", "--dump-snapshot-outputs", "--output-prefix", wrong,
                    EXAMPLE], capture_output=True, env=ENV)
    with open(wrong + "snapshot_output0.npy", "r+b") as f:
        f.seek(-4, 2)
        f.write(b"\x00\x00\xe0\x40")  # 6 -> 7
    for args, rc in ((["run", EXAMPLE, "--compare", wrong], 1),
                     (["run", EXAMPLE, "--compare", missing], 2),
                     (["run", garbage, "--compare"], 2),
                     (["run", EXAMPLE, "--three-way", "--compare", missing], 2),
                     # --bisect answers a question: an unreadable reference is 2
                     (["run", EXAMPLE, "--bisect", "--against", missing], 2),
                     (["run", EXAMPLE, "--bisect", "--against", wrong], 2)):  # no dump
        r = run(args)
        counts[rc] += 1
        if r.returncode != rc or (rc == 2 and (not r.stderr.startswith("decomposed run: ")
                                              or "Usage:" in r.stderr)):
            failures.append(f"decomposed {' '.join(args)}: exit {r.returncode}, want {rc}; "
                            f"stderr {r.stderr[-300:]!r}")
    r = run(["run", EXAMPLE, "--compare", wrong])
    if "tensor 0: 1 / 6 elements mismatch" not in r.stdout:
        failures.append(f"run --compare (mismatch): {r.stdout!r}")

for f in failures:
    print("FAIL", f)
print(f"cli_exit_codes: {counts[0]} runs exit 0, {counts[1]} exit 1, "
      f"{counts[2]} exit 2; {len(failures)} failures")
sys.exit(1 if failures else 0)
