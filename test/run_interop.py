#!/usr/bin/env python3
"""`decomposed run` against PyTorch: a torch MLP's inputs and outputs packed
into snapshots, replayed on the CPU evaluator and checked.

    run_interop.py DECOMPOSED PROTOC PROTO_DIR SCRATCH

A torch MLP (Linear, ReLU, Linear) runs on a random batch; its module is
built in HLO with the Python classes protoc generates from proto/ (as
test/eval_interop.py builds its modules) and written as an HloModuleProto;
`decomposed pack` packs the batch and the weights as inputs and torch's
outputs (the logits and the hidden activations) as region [2]. Then:

  * `run SNAPSHOT --compare` passes (exit 0), also in the classic form;
  * with one element of output 1 perturbed it fails (exit 1) and names
    tensor 1 and that element, output 0 still passing;
  * `run --to npz` writes outputs NumPy reads and torch agrees with;
  * `run --module model.pb --inputs DIR --compare DIR` on an unpack
    directory, and `--inputs` given as the .npy files;
  * `run --dump` writes the hidden layer torch computed;
  * `run --json` reports the outputs, opcodes and peak memory.

Prints one line per case and 'N passed, N failed' at the end.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

CLI, PROTOC, PROTO_DIR, SCRATCH = sys.argv[1:5]
os.makedirs(SCRATCH, exist_ok=True)
subprocess.check_call([PROTOC, f"--python_out={SCRATCH}", "-I", PROTO_DIR,
                       os.path.join(PROTO_DIR, "xla_data.proto"),
                       os.path.join(PROTO_DIR, "hlo.proto")])
sys.path.insert(0, SCRATCH)
import hlo_pb2  # noqa: E402
import xla_data_pb2  # noqa: E402

PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


# --- The torch model -------------------------------------------------------------
torch.manual_seed(7)
B, I, H, O = 4, 16, 32, 8
model = torch.nn.Sequential(torch.nn.Linear(I, H), torch.nn.ReLU(), torch.nn.Linear(H, O))
x = torch.randn(B, I)
with torch.no_grad():
    hidden = model[1](model[0](x))
    logits = model[2](hidden)
w1, b1 = model[0].weight.detach(), model[0].bias.detach()
w2, b2 = model[2].weight.detach(), model[2].bias.detach()

# --- The module: the same layers in HLO ------------------------------------------
F32, TUPLE = 11, 13


def shape(dims, etype=F32):
    s = xla_data_pb2.ShapeProto(element_type=etype, dimensions=dims)
    s.layout.minor_to_major.extend(reversed(range(len(dims))))
    return s


comp = hlo_pb2.HloComputationProto(name="main", id=100)
ids = iter(range(1, 100))


def op(opcode, dims, operands=(), name=None, **attrs):
    i = comp.instructions.add()
    i.id = next(ids)
    i.name = name or f"{opcode}.{i.id}"
    i.opcode = opcode
    i.shape.CopyFrom(shape(dims) if dims is not None else attrs.pop("tuple_shape"))
    i.operand_ids.extend(operands)
    for k, v in attrs.items():
        if k == "op_name":
            i.metadata.op_name = v
        elif isinstance(v, list):
            getattr(i, k).extend(v)
        else:
            setattr(i, k, v)
    comp.root_id = i.id
    return i.id


def linear(inp, w, b, n_in, n_out, tag):
    """torch's Linear: inp @ w.T + b, w of [out, in]."""
    d = comp.instructions.add()
    d.id = next(ids)
    d.name = f"{tag}.dot"
    d.opcode = "dot"
    d.shape.CopyFrom(shape([B, n_out]))
    d.operand_ids.extend([inp, w])
    d.dot_dimension_numbers.lhs_contracting_dimensions.append(1)
    d.dot_dimension_numbers.rhs_contracting_dimensions.append(1)
    d.metadata.op_name = f"{tag}/linear"
    bb = op("broadcast", [B, n_out], [b], name=f"{tag}.bias", dimensions=[1])
    return op("add", [B, n_out], [d.id, bb], name=f"{tag}.out", op_name=f"{tag}/linear")


px = op("parameter", [B, I], name="x", parameter_number=0)
pw1 = op("parameter", [H, I], name="w1", parameter_number=1)
pb1 = op("parameter", [H], name="b1", parameter_number=2)
pw2 = op("parameter", [O, H], name="w2", parameter_number=3)
pb2 = op("parameter", [O], name="b2", parameter_number=4)
l1 = linear(px, pw1, pb1, I, H, "fc1")
zero = comp.instructions.add()
zero.id, zero.name, zero.opcode = next(ids), "zero", "constant"
zero.shape.CopyFrom(shape([]))
zero.literal.shape.CopyFrom(shape([]))
zero.literal.f32s.append(0.0)
zb = op("broadcast", [B, H], [zero.id], name="zeros", dimensions=[])
relu = op("maximum", [B, H], [l1, zb], name="relu", op_name="act/relu")
l2 = linear(relu, pw2, pb2, H, O, "fc2")
tup = xla_data_pb2.ShapeProto(element_type=TUPLE)
tup.tuple_shapes.extend([shape([B, O]), shape([B, H])])
op("tuple", None, [l2, relu], name="result", tuple_shape=tup)
mod = hlo_pb2.HloModuleProto(name="mlp", entry_computation_name="main", entry_computation_id=100)
mod.computations.append(comp)
ps = mod.host_program_shape
for d in ([B, I], [H, I], [H], [O, H], [O]):
    ps.parameters.append(shape(d))
ps.parameter_names.extend(["x", "w1", "b1", "w2", "b2"])
ps.result.CopyFrom(tup)
module_path = os.path.join(SCRATCH, "mlp.pb")
with open(module_path, "wb") as f:
    f.write(mod.SerializeToString())

# --- Snapshots of the torch run ---------------------------------------------------
arrays = {"x": x, "w1": w1, "b1": b1, "w2": w2, "b2": b2, "logits": logits, "hidden": hidden}
npy = {}
for k, t in arrays.items():
    npy[k] = os.path.join(SCRATCH, f"{k}.npy")
    np.save(npy[k], t.numpy().astype(np.float32))
ins = [a for k in ("x", "w1", "b1", "w2", "b2") for a in ("--input", npy[k])]


def pack(out, outputs, *extra):
    r = cli("pack", "--module", module_path, *ins,
            *[a for o in outputs for a in ("--output", o)], "-o", out, *extra)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return out


good = pack(os.path.join(SCRATCH, "mlp.dhs"), [npy["logits"], npy["hidden"]])
perturbed_hidden = hidden.numpy().copy()
perturbed_hidden[2, 5] += 0.25
npy["bad_hidden"] = os.path.join(SCRATCH, "bad_hidden.npy")
np.save(npy["bad_hidden"], perturbed_hidden)
bad = pack(os.path.join(SCRATCH, "mlp_bad.dhs"), [npy["logits"], npy["bad_hidden"]])
classic = pack(os.path.join(SCRATCH, "mlp.pb.snapshot"), [npy["logits"], npy["hidden"]],
               "--format", "snapshot")

# --- run --compare ------------------------------------------------------------------
r = cli("run", good, "--compare")
check("run --compare passes on torch's outputs", r.returncode == 0 and "PASS: 2 of 2 tensors pass"
      in r.stdout, r.stdout + r.stderr)
r = cli("run", classic, "--compare")
check("run --compare passes on the classic form", r.returncode == 0, r.stdout + r.stderr)
r = cli("run", bad, "--compare")
check("run --compare fails on a perturbed output (exit 1)", r.returncode == 1, r.stdout + r.stderr)
lines = r.stdout.splitlines()
rows = [l.split() for l in lines if l[:1].isdigit()]
check("the report names tensor 1, and tensor 0 passes",
      len(rows) == 2 and rows[0][1] == "pass" and rows[1][1] == "FAIL"
      and "tensor 1: 1 / 128 elements mismatch" in r.stdout, r.stdout)
check("the mismatch is at the perturbed element [2,5]", "at [2,5]:" in r.stdout, r.stdout)
r = cli("run", bad, "--compare", "--json")
j = json.loads(r.stdout) if r.stdout else {}
t = j.get("compare", {}).get("tensors", [])
check("run --compare --json: tensor 1 fails at [2,5], the run's 0 against 0.25",
      r.returncode == 1 and len(t) == 2 and t[0]["status"] == "pass" and t[1]["status"] == "fail"
      and t[1]["mismatches"] == 1 and t[1]["first_mismatches"][0]["index"] == [2, 5]
      and t[1]["first_mismatches"][0]["actual"] == float(np.float32(perturbed_hidden[2, 5]))
      and t[1]["first_mismatches"][0]["expected"] == float(hidden[2, 5]), r.stdout[:2000])
check("run --json: outputs, opcodes, peak memory",
      j.get("outputs", [{}])[0].get("shape") == [B, O] and j["outputs"][1]["dtype"] == "f32"
      and any(o["opcode"] == "dot" and o["count"] == 2 for o in j.get("opcodes", []))
      and j.get("peak_rss_bytes", 0) > 0 and j.get("pass") is False, r.stdout[:2000])
r = cli("run", bad, "--compare", "--atol", "0.3")
check("a tolerance that covers the perturbation passes", r.returncode == 0, r.stdout + r.stderr)

# --- outputs ------------------------------------------------------------------------
out_npz = os.path.join(SCRATCH, "out.npz")
r = cli("run", good, "--to", "npz", out_npz)
ok = r.returncode == 0 and os.path.exists(out_npz)
if ok:
    z = np.load(out_npz)
    ok = z.files == ["snapshot_output0", "snapshot_output1"]
    ok = ok and np.allclose(z["snapshot_output0"], logits.numpy(), rtol=1e-5, atol=1e-6)
    ok = ok and np.allclose(z["snapshot_output1"], hidden.numpy(), rtol=1e-5, atol=1e-6)
check("run --to npz: NumPy reads torch's values", ok, r.stdout + r.stderr)
prefix = os.path.join(SCRATCH, "out") + "/"
r = cli("run", good, "--output-prefix", prefix)
ok = r.returncode == 0 and np.allclose(np.load(prefix + "snapshot_output0.npy"), logits.numpy(),
                                       rtol=1e-5, atol=1e-6)
check("run --output-prefix: snapshot_output0.npy", ok, r.stdout + r.stderr)

# --- module and inputs from elsewhere --------------------------------------------------
u = os.path.join(SCRATCH, "u") + "/"
subprocess.check_call([CLI, "unpack", "--dump-snapshot-outputs", "--output-prefix", u, good],
                      stdout=subprocess.DEVNULL)
r = cli("run", "--module", u + "model.hlo", "--inputs", u, "--compare", u)
check("run --module --inputs DIR --compare DIR", r.returncode == 0, r.stdout + r.stderr)
r = cli("run", "--module", module_path, *[a for k in ("x", "w1", "b1", "w2", "b2")
                                          for a in ("--inputs", npy[k])],
        "--compare", os.path.join(SCRATCH, "out.npz"))
check("run --module --inputs A.npy --inputs B.npy ... --compare OUT.npz", r.returncode == 0,
      r.stdout + r.stderr)
r = cli("run", "--module", module_path, "--inputs", npy["w1"], "--inputs", npy["x"],
        "--inputs", npy["b1"], "--inputs", npy["w2"], "--inputs", npy["b2"])
check("inputs out of order: exit 1, naming both shapes",
      r.returncode == 1 and "expected F32[4,16] for parameter 0 \"x\"" in r.stderr
      and "found F32[32,16]" in r.stderr, r.stderr)

# --- dump ----------------------------------------------------------------------------
d = os.path.join(SCRATCH, "dump")
r = cli("run", good, "--dump", d, "--dump-filter", "relu")
ok = r.returncode == 0 and os.path.exists(os.path.join(d, "main", "relu.npy"))
if ok:
    ok = np.allclose(np.load(os.path.join(d, "main", "relu.npy")), hidden.numpy(),
                     rtol=1e-5, atol=1e-6)
    idx = json.load(open(os.path.join(d, "index.json")))
    ok = ok and [e["name"] for e in idx["instructions"]] == ["relu"] \
        and idx["instructions"][0]["op_name"] == "act/relu"
check("run --dump --dump-filter: the hidden layer torch computed", ok, r.stdout + r.stderr)

print(f"{len(PASSED)} passed, {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
