#!/usr/bin/python3
"""`decomposed capture plan`: the policy dry run against hand-worked plans."""
import json
import os
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
P = "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_"
failures = []

FORWARDS = [
    {"neffs": ["A"]},                                        # warmup: no context
    {"is_prompt": True, "req_ids": ["abc-1"], "positions": [5], "neffs": ["A", "B"]},
    {"is_prompt": False, "req_ids": ["abc-1", "zz"], "positions": [5, 9],
     "max_generated": 2, "neffs": ["B", "B"]},
    {"is_prompt": False, "req_ids": ["q"], "positions": [0, 10], "neffs": ["A"]},
]


def run(env, args=()):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(FORWARDS, f)
    e = {k: v for k, v in os.environ.items() if not k.startswith(P)}
    e.update(env)
    e["VLLM_CACHE_ROOT"] = "/cache"
    r = subprocess.run([CLI, "capture", "plan", *args, f.name], env=e,
                       capture_output=True, text=True)
    os.unlink(f.name)
    return r


def caps(r):
    out = json.loads(r.stdout)
    return [(c["forward"], c["neff"], c["call_index"], c["dir"], c["selected_by"],
             [(m["batch_index"], m["request_id"], m["position"], m["reason"])
              for m in c["matches"]]) for c in out["captures"]], out


def expect(name, got, want):
    if got != want:
        failures.append(name)
        print(f"FAIL {name}:\n  got  {got}\n  want {want}")


# Off: nothing.
r = run({})
expect("off", caps(r)[0], [])
# Default rule: call 0 of each NEFF (forward 0 has no context and is not
# counted).
r = run({P + "ENABLE": "1"}, ["--global-rank", "3"])
c, out = caps(r)
expect("default call 0", c, [(1, "A", 0, "A/rank3/call0", ["call_index"], []),
                             (1, "B", 0, "B/rank3/call0", ["call_index"], [])])
expect("root", out["root"], "/cache/neuron/snapshots")
# Every call, budget 3: A0, B0, B1, then refused (logged once).
r = run({P + "ENABLE": "1", P + "CAPTURE_AT_CALL": "-1", P + "MAX_CAPTURES": "3"})
c, out = caps(r)
expect("every call", [(x[0], x[1], x[2]) for x in c], [(1, "A", 0), (1, "B", 0), (2, "B", 1)])
expect("budget log", len(out["budget_log"]), 1)
# Request + token rules (speculative offsets; padding position ignored).
r = run({P + "ENABLE": "1", P + "CAPTURE_REQUEST": "abc", P + "CAPTURE_TOKEN": "11"})
c, _ = caps(r)
expect("request+token", c, [
    (1, "A", 0, "A/rank0/call0", ["request"], [(0, "abc-1", -1, "request")]),
    (1, "B", 0, "B/rank0/call0", ["request"], [(0, "abc-1", -1, "request")]),
    (2, "B", 1, "B/rank0/call1", ["request", "token"],
     [(0, "abc-1", 5, "request"), (1, "zz", 11, "token")]),
    (2, "B", 2, "B/rank0/call2", ["request", "token"],
     [(0, "abc-1", 5, "request"), (1, "zz", 11, "token")]),
])
# Rank filter on the tp-rank; malformed ranks degrade with a warning.
r = run({P + "ENABLE": "1", P + "RANKS": "1"}, ["--tp-rank", "0"])
expect("rank filtered", caps(r)[0], [])
r = run({P + "ENABLE": "1", P + "RANKS": "1"}, ["--tp-rank", "1", "--global-rank", "9"])
expect("rank kept", [x[3] for x in caps(r)[0]], ["A/rank9/call0", "B/rank9/call0"])
r = run({P + "ENABLE": "1", P + "RANKS": "one"}, ["--tp-rank", "5"])
c, out = caps(r)
expect("rank degrade", (len(c), len(out["warnings"]), out["config"]["ranks"]), (2, 1, None))
# Invalid configuration: exit 1 naming the variable and token.
for env, var, tok in [({P + "CAPTURE_AT_CALL": "-1,2"}, "CAPTURE_AT_CALL", "'2'"),
                      ({P + "CAPTURE_TOKEN": "-1"}, "CAPTURE_TOKEN", "'-1'"),
                      ({P + "MAX_CAPTURES": "0"}, "MAX_CAPTURES", "'0'"),
                      ({P + "FORMAT": "zip"}, "FORMAT", "'zip'")]:
    env[P + "ENABLE"] = "1"
    r = run(env)
    expect(f"invalid {var}", (r.returncode, P + var in r.stderr, tok in r.stderr, r.stdout),
           (1, True, True, ""))
r = run({P + "ENABLE": "yes"})
expect("invalid ENABLE", r.returncode, 1)

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
