#!/usr/bin/python3
"""Every JSON the CLI writes survives strings that are not UTF-8.

Paths and environment values are bytes on Linux; nlohmann::json::dump throws
on invalid UTF-8, and an exception escaping a command aborted the CLI (exit
134). Every command that writes JSON (verify, inspect, stats, compare and
its three-way form with --json, hlo --json, run --json and its --bisect
form, run --dump's index.json, capture plan, bundle ls --json, unpack
--manifest to files and into an .npz, bundle from-decomposed's meta.json)
writes it through the library's one writer (JsonText, npy/json_text.h): it
must exit normally and write valid JSON, such bytes replaced by U+FFFD.

    cli_json_utf8.py CLI SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

CLI = sys.argv[1]
SOURCE = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(SOURCE, "examples", "example.decomposed_hlo_snapshot")
P = b"VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_"
failures = []


def check(name, r, want_rc):
    if r.returncode != want_rc:
        failures.append(f"{name}: exit {r.returncode}, want {want_rc}; "
                        f"stderr {r.stderr[-300:]!r}")
        return None
    try:
        return json.loads(r.stdout.decode("utf-8"))
    except ValueError as e:
        failures.append(f"{name}: output is not JSON ({e}): {r.stdout[:200]!r}")
        return None


with tempfile.TemporaryDirectory(prefix="cli_json_utf8_") as tmp:
    # verify --json on a path that is not UTF-8 (and does not exist).
    bad = os.path.join(tmp.encode(), b"missing-\xff.bin")
    out = check("verify", subprocess.run([CLI.encode(), b"verify", b"--json", bad],
                                         capture_output=True), 1)
    if out is not None and ("\ufffd" not in out[0]["file"]):
        failures.append(f"verify: file {out[0]['file']!r} lacks U+FFFD")

    # capture plan: a malformed RANKS token that is not UTF-8 degrades to a
    # warning quoting it.
    fwd = os.path.join(tmp, "forwards.json")
    with open(fwd, "w") as f:
        json.dump([{"neffs": ["A"]}], f)
    env = {k: v for k, v in os.environb.items() if not k.startswith(P)}
    env[P + b"ENABLE"] = b"1"
    env[P + b"RANKS"] = b"0,\xff"
    env[b"VLLM_CACHE_ROOT"] = b"/cache"
    out = check("capture plan",
                subprocess.run([CLI, "capture", "plan", fwd], env=env,
                               capture_output=True), 0)
    if out is not None and not any("\ufffd" in w for w in out["warnings"]):
        failures.append(f"capture plan: warnings {out['warnings']!r}")

    # bundle ls --json: an invalid bundle whose error names a non-UTF-8 path.
    call = os.path.join(tmp.encode(), b"root", b"h\xfe", b"rank0", b"call0")
    os.makedirs(call)
    with open(os.path.join(call, b"meta.json"), "w") as f:
        f.write("{not json")
    out = check("bundle ls",
                subprocess.run([CLI.encode(), b"bundle", b"ls",
                                os.path.join(tmp.encode(), b"root"), b"--json"],
                               capture_output=True), 0)
    if out is not None and not (len(out) == 1 and "error" in out[0]):
        failures.append(f"bundle ls: {out!r}")

def has_fffd(value):
    """True when some string in a JSON value holds U+FFFD."""
    if isinstance(value, str):
        return "\ufffd" in value
    if isinstance(value, list):
        return any(has_fffd(v) for v in value)
    if isinstance(value, dict):
        return any(has_fffd(k) or has_fffd(v) for k, v in value.items())
    return False


def run(args, **kw):
    return subprocess.run([CLI.encode()] + args, capture_output=True, **kw)


def json_file(name, path, want_fffd=True):
    try:
        with open(path, "rb") as f:
            value = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        failures.append(f"{name}: {path!r} is not JSON: {e}")
        return None
    if want_fffd and not has_fffd(value):
        failures.append(f"{name}: no U+FFFD in {value!r}"[:400])
    return value


with tempfile.TemporaryDirectory(prefix="cli_json_utf8_") as tmp:
    t = tmp.encode()
    d = os.path.join(t, b"dir-\xff")
    os.makedirs(d)
    snap = os.path.join(d, b"s-\xfe.dhs")
    shutil.copyfile(EXAMPLE, snap)

    # inspect names each file when it is given several.
    for cmd, rc in (([b"inspect", b"--json", snap], 0), ([b"verify", b"--json"], 0),
                    ([b"stats", b"--json"], 0)):
        r = run(cmd + [snap])
        out = check(cmd[0].decode(), r, rc)
        if out is not None and not has_fffd(out):
            failures.append(f"{cmd[0].decode()}: no U+FFFD in {out!r}"[:400])

    # compare, both forms: valid JSON whatever the paths.
    r = run([b"compare", b"--json", snap, snap])
    check("compare", r, 0)
    r = run([b"compare", b"--json", snap, snap, b"--baseline", snap])
    check("compare --baseline", r, 0)

    # unpack --manifest under an output prefix that is not UTF-8.
    prefix = os.path.join(t, b"out-\xfd") + b"/"
    r = run([b"unpack", b"--manifest", b"--dump-snapshot-outputs",
             b"--output-prefix", prefix, snap])
    if r.returncode != 0:
        failures.append(f"unpack --manifest: exit {r.returncode}; stderr "
                        f"{r.stderr[-300:]!r}")
    else:
        json_file("unpack --manifest", prefix + b"manifest.json")

    # ... and into an .npz whose name is not UTF-8.
    npz = os.path.join(t, b"z-\xfc.npz")
    r = run([b"unpack", b"--manifest", b"--to", b"npz", npz, snap])
    if r.returncode != 0:
        failures.append(f"unpack --to npz --manifest: exit {r.returncode}; "
                        f"stderr {r.stderr[-300:]!r}")
    else:
        with zipfile.ZipFile(npz.decode("utf-8", "surrogateescape")) as z:
            try:
                m = json.loads(z.read("manifest.json").decode("utf-8"))
                if not has_fffd(m):
                    failures.append(f"npz manifest: no U+FFFD in {m!r}"[:400])
            except ValueError as e:
                failures.append(f"npz manifest.json is not JSON: {e}")

    # hlo --json (the module's summary), run --json (the report names the
    # file), run --bisect --json, and run --dump's index.json under a
    # directory that is not UTF-8.
    check("hlo", run([b"hlo", b"--json", snap]), 0)
    out = check("run", run([b"run", b"--json", snap]), 0)
    if out is not None and not has_fffd(out):
        failures.append(f"run: no U+FFFD in {out!r}"[:400])
    check("run --bisect", run([b"run", b"--bisect", b"--json", snap]), 0)
    dump = os.path.join(d, b"dump-\xfd")
    if check("run --dump", run([b"run", b"--json", b"--dump", dump, snap]), 0) is not None:
        json_file("run --dump", os.path.join(dump, b"index.json"))

    # bundle from-decomposed: meta.json's hash is the file's base name.
    call = os.path.join(t, b"b", b"call0")
    r = run([b"bundle", b"from-decomposed", snap, b"-o", call, b"--format",
             b"npy"])
    if r.returncode != 0:
        failures.append(f"bundle from-decomposed: exit {r.returncode}; stderr "
                        f"{r.stderr[-300:]!r}")
    else:
        meta = json_file("bundle from-decomposed", os.path.join(call, b"meta.json"))
        if meta is not None and "\ufffd" not in meta.get("hash", ""):
            failures.append(f"meta.json hash {meta.get('hash')!r} lacks U+FFFD")

for f in failures:
    print("FAIL:", f)
print("cli_json_utf8:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
