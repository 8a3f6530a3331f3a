#!/usr/bin/python3
"""CLI --json output survives strings that are not UTF-8.

Paths and environment values are bytes on Linux; nlohmann::json::dump throws
on invalid UTF-8, and an exception escaping a command aborted the CLI. Each
command must still exit normally (0 or 1) and print valid JSON, with such
bytes replaced by U+FFFD.
"""
import json
import os
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
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

for f in failures:
    print("FAIL:", f)
print("cli_json_utf8:", "FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
