#!/usr/bin/env python3
"""The evaluator against NumPy and PyTorch.

    eval_interop.py EVAL_NPY_TOOL PROTOC PROTO_DIR SCRATCH

Builds HLO modules with the Python classes protoc generates from proto/,
evaluates them with eval_npy_tool (test/eval_npy_tool.cc) on random .npy
inputs, and compares with the same computation in NumPy or torch:

  * elementwise ops in every element type they take, inputs with NaN,
    +-inf, -0 and subnormals; bf16 results bit-exact against torch's bf16
    rounding of the f32 result for the correctly rounded ops (add,
    subtract, multiply, divide, sqrt, max, min, negate, abs, convert);
  * integer ops with XLA's truncating division, compare in every direction;
  * dot, reduce, gather, dynamic-update-slice, sort/topk;
  * whole graphs (MLP, layer norm as batch-norm-training on a reshape,
    softmax, attention with batch dims and a causal mask, an embedding
    gather, a KV-cache update, a while loop, a conditional, top-k sampling,
    a transformer decoder layer) in the three numerics modes, which must
    differ where they should (neuron: bf16-rounded dot operands; f32: bf16
    values kept in f32) and nowhere else.

Prints one line per case and 'N passed, N failed' at the end.
"""
import itertools
import os
import subprocess
import sys

import numpy as np
import torch

TOOL, PROTOC, PROTO_DIR, SCRATCH = sys.argv[1:5]
os.makedirs(SCRATCH, exist_ok=True)
subprocess.check_call([PROTOC, f"--python_out={SCRATCH}", "-I", PROTO_DIR,
                       os.path.join(PROTO_DIR, "xla_data.proto"),
                       os.path.join(PROTO_DIR, "hlo.proto")])
sys.path.insert(0, SCRATCH)
import hlo_pb2  # noqa: E402
import xla_data_pb2  # noqa: E402

TYPES = {"pred": 1, "s8": 2, "s16": 3, "s32": 4, "s64": 5, "u8": 6, "u16": 7,
         "u32": 8, "u64": 9, "f16": 10, "f32": 11, "f64": 12, "bf16": 16}
NP = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32,
      "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
      "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
_ids = itertools.count(1)


def shape(s):
    """'f32[2,3]' or '(f32[2], s32[])' -> ShapeProto."""
    p = xla_data_pb2.ShapeProto()
    s = s.strip()
    if s.startswith("("):
        depth, start, inner = 0, 0, s[1:-1]
        for i, ch in enumerate(inner + ","):
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "," and depth == 0:
                if inner[start:i].strip():
                    p.tuple_shapes.append(shape(inner[start:i]))
                start = i + 1
        p.element_type = 13
        return p
    t, rest = s.split("[")
    p.element_type = TYPES[t]
    dims = [int(d) for d in rest[:-1].split(",") if d]
    p.dimensions.extend(dims)
    p.layout.minor_to_major.extend(reversed(range(len(dims))))
    return p


class Comp:
    def __init__(self, name):
        self.c = hlo_pb2.HloComputationProto(name=f"{name}.{next(_ids)}", id=next(_ids))

    @property
    def id(self):
        return self.c.id

    def op(self, opcode, shp, operands=(), fn=None, **attrs):
        i = self.c.instructions.add()
        i.id = next(_ids)
        i.name = f"{opcode}.{i.id}"
        i.opcode = opcode
        i.shape.CopyFrom(shape(shp))
        i.operand_ids.extend(operands)
        for k, v in attrs.items():
            if isinstance(v, (list, tuple)):
                getattr(i, k).extend(v)
            else:
                setattr(i, k, v)
        if fn:
            fn(i)
        self.c.root_id = i.id
        return i.id

    def param(self, n, shp):
        return self.op("parameter", shp, parameter_number=n)

    def const(self, shp, values):
        def fill(i):
            i.literal.shape.CopyFrom(shape(shp))
            t = shp.split("[")[0]
            vals = list(np.asarray(values).ravel())
            if t == "f32":
                i.literal.f32s.extend(float(v) for v in vals)
            elif t == "s32":
                i.literal.s32s.extend(int(v) for v in vals)
            elif t == "pred":
                i.literal.preds.extend(bool(v) for v in vals)
            elif t == "f64":
                i.literal.f64s.extend(float(v) for v in vals)
            elif t == "bf16":
                i.literal.bf16s = to_bf16_bits(np.asarray(vals, np.float32)).tobytes()
            else:
                raise ValueError(t)
        return self.op("constant", shp, fn=fill)


def scalar_comp(opcode, t):
    c = Comp(f"{opcode}_{t}")
    a, b = c.param(0, f"{t}[]"), c.param(1, f"{t}[]")
    c.op(opcode, f"{t}[]", [a, b])
    return c


def module(*comps):
    m = hlo_pb2.HloModuleProto(name="interop")
    for c in comps:
        m.computations.append(c.c)
    return m


def to_bf16_bits(f32):
    return torch.from_numpy(np.ascontiguousarray(f32, np.float32)).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def from_bf16_bits(u16):
    return torch.from_numpy(np.ascontiguousarray(u16).view(np.int16)).view(torch.bfloat16).float().numpy()


_case = itertools.count()


def run(mod, inputs, numerics="xla", expect_fail=False):
    """inputs: list of (numpy array, xla type). Returns the output arrays
    (bf16/f16 outputs as float32 values; f16 bits decoded)."""
    k = next(_case)
    path = os.path.join(SCRATCH, f"m{k}.pb")
    with open(path, "wb") as f:
        f.write(mod.SerializeToString())
    args = []
    for j, (a, t) in enumerate(inputs):
        p = os.path.join(SCRATCH, f"m{k}_in{j}.npy")
        if t == "bf16":
            np.save(p, to_bf16_bits(a))
            args.append(p + ":bf16")
        else:
            np.save(p, np.asarray(a, NP[t]))
            args.append(p)
    prefix = os.path.join(SCRATCH, f"m{k}_out")
    r = subprocess.run([TOOL, path, numerics, prefix] + args, capture_output=True, text=True)
    if r.returncode != 0:
        if expect_fail:
            return r.stderr
        raise RuntimeError(r.stderr)
    outs, j = [], 0
    while os.path.exists(f"{prefix}{j}.npy"):
        outs.append(np.load(f"{prefix}{j}.npy"))
        j += 1
    return outs


def out_type(mod):
    entry = mod.computations[-1]
    root = [i for i in entry.instructions if i.id == entry.root_id][0]
    return root.shape


def decode(arr, t):
    if t == "bf16":
        return from_bf16_bits(arr)
    if t == "f16":
        return arr.view(np.float16)
    return arr


PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "  " + detail))


def close(got, want, rtol, atol, equal_nan=True):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False, f"shape {got.shape} vs {want.shape}"
    ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not ok:
        bad = np.argwhere(~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=equal_nan))[:3]
        return False, f"first mismatches {[(tuple(b), got[tuple(b)], want[tuple(b)]) for b in bad]}"
    return True, ""


rng = np.random.default_rng(7)
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 1.5, -2.5, 65504, 3.4e38], np.float32)


def float_inputs(n, positive=False):
    x = rng.standard_normal(n).astype(np.float32) * 3
    x[: len(SPECIAL)] = SPECIAL
    return np.abs(x) if positive else x


# --- 1. Elementwise floats: f32, f64, bf16, f16 ---------------------------
def via_numpy(f):
    """NumPy's (C library's) result: torch flushes subnormal divisors
    (fmod), returns 0 for sign(NaN) where XLA gives NaN, and inf for
    log1p of huge values."""
    def fn(*a):
        with np.errstate(all="ignore"):
            return torch.from_numpy(np.asarray(f(*[z.numpy() for z in a])))
    return fn


UNARY = {
    "negate": torch.neg, "abs": torch.abs, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "exponential": torch.exp, "log": torch.log, "log-plus-one": via_numpy(np.log1p),
    "exponential-minus-one": torch.expm1, "tanh": torch.tanh, "logistic": torch.sigmoid,
    "sine": torch.sin, "cosine": torch.cos, "floor": torch.floor, "ceil": torch.ceil,
    "round-nearest-even": torch.round, "sign": via_numpy(np.sign), "erf": torch.erf,
    "cbrt": lambda x: torch.sign(x) * torch.abs(x) ** (1 / 3), "atan": torch.atan,
}
EXACT = {"negate", "abs", "sqrt", "floor", "ceil", "round-nearest-even", "sign",
         "add", "subtract", "multiply", "divide", "maximum", "minimum"}
BINARY = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum, "power": torch.pow,
          "atan2": torch.atan2, "remainder": via_numpy(np.fmod)}

N = 64
for t in ["f32", "f64", "bf16", "f16"]:
    tt = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16}[t]
    for name, fn in UNARY.items():
        c = Comp("main")
        c.op(name, f"{t}[{N}]", [c.param(0, f"{t}[{N}]")])
        x = float_inputs(N, positive=name in ("sqrt", "rsqrt", "log", "log-plus-one"))
        # Inputs as the type holds them.
        xin = torch.from_numpy(x).to(tt)
        got = decode(run(module(c), [(xin.float().numpy() if t != "f64" else xin.numpy(), t)])[0], t)
        # torch computes in f32 for the narrow types and rounds once.
        want = fn(xin.float() if t in ("bf16", "f16") else xin).to(tt).to(torch.float64).numpy()
        if name in EXACT and t in ("bf16", "f16"):
            ok = np.array_equal(np.asarray(got, np.float64), want, equal_nan=True)
            check(f"{name} {t} bit-exact", ok, f"{got[:6]} vs {want[:6]}")
        else:
            tol = {"f32": 2e-6, "f64": 1e-13, "bf16": 8e-3, "f16": 1e-3}[t]
            ok, d = close(got, want, tol, tol)
            check(f"{name} {t}", ok, d)
    for name, fn in BINARY.items():
        c = Comp("main")
        c.op(name, f"{t}[{N}]", [c.param(0, f"{t}[{N}]"), c.param(1, f"{t}[{N}]")])
        x, y = float_inputs(N), float_inputs(N)[::-1].copy()
        if name == "power":
            x = np.abs(x)
        xin, yin = torch.from_numpy(x).to(tt), torch.from_numpy(y).to(tt)
        conv = (lambda v: v.float().numpy()) if t != "f64" else (lambda v: v.numpy())
        got = decode(run(module(c), [(conv(xin), t), (conv(yin), t)])[0], t)
        up = (lambda v: v.float()) if t in ("bf16", "f16") else (lambda v: v)
        want = fn(up(xin), up(yin)).to(tt).to(torch.float64).numpy()
        if name in EXACT:
            ok = np.array_equal(np.asarray(got, np.float64), want, equal_nan=True)
            check(f"{name} {t} bit-exact", ok, f"{got[:8]} vs {want[:8]}")
        else:
            tol = {"f32": 2e-6, "f64": 1e-13, "bf16": 8e-3, "f16": 1e-3}[t]
            ok, d = close(got, want, tol, tol)
            check(f"{name} {t}", ok, d)

# --- 2. Integers: XLA's truncating division, wraparound, bit ops ---------
for t in ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]:
    info = np.iinfo(NP[t])
    x = rng.integers(info.min, info.max, N, dtype=NP[t], endpoint=True)
    y = rng.integers(info.min, info.max, N, dtype=NP[t], endpoint=True)
    y[y == 0] = 3
    if info.min < 0:
        x[0], y[0] = info.min, -1  # INT_MIN / -1 = INT_MIN, % = 0
    for name in ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or", "xor"]:
        c = Comp("main")
        c.op(name, f"{t}[{N}]", [c.param(0, f"{t}[{N}]"), c.param(1, f"{t}[{N}]")])
        got = run(module(c), [(x, t), (y, t)])[0]
        with np.errstate(all="ignore"):
            if name in ("divide", "remainder"):
                def trunc_div(a, b):
                    q = abs(a) // abs(b)
                    return q if (a < 0) == (b < 0) else -q
                vals = [trunc_div(int(a), int(b)) if name == "divide" else int(a) - trunc_div(int(a), int(b)) * int(b)
                        for a, b in zip(x, y)]
                want = np.array([v % (1 << (8 * x.itemsize)) for v in vals], dtype=np.uint64).astype(NP[t])
            else:
                fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                      "maximum": np.maximum, "minimum": np.minimum, "and": np.bitwise_and,
                      "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
                want = fn(x, y)
        check(f"{name} {t}", np.array_equal(got.astype(NP[t]), want.astype(NP[t])), f"{got[:4]} vs {want[:4]}")
    s = rng.integers(0, 8 * x.itemsize, N).astype(NP[t])
    for name, fn in [("shift-left", np.left_shift), ("shift-right-logical", None), ("shift-right-arithmetic", None)]:
        c = Comp("main")
        c.op(name, f"{t}[{N}]", [c.param(0, f"{t}[{N}]"), c.param(1, f"{t}[{N}]")])
        got = run(module(c), [(x, t), (s, t)])[0]
        u = x.view(NP["u" + t[1:]]) if t.startswith("s") else x
        sg = x.view(NP["s" + t[1:]]) if t.startswith("u") else x
        if name == "shift-left":
            want = np.left_shift(x, s)
        elif name == "shift-right-logical":
            want = np.right_shift(u, s.astype(u.dtype)).view(NP[t])
        else:
            want = np.right_shift(sg, s.astype(sg.dtype)).view(NP[t])
        check(f"{name} {t}", np.array_equal(got.astype(NP[t]), want), f"{got[:4]} vs {want[:4]}")

# --- 3. Compare, every direction, float (with NaN, -0) and ints ----------
for t in ["f32", "s32", "u8", "bf16"]:
    if t in ("f32", "bf16"):
        x, y = float_inputs(N), float_inputs(N)[::-1].copy()
        if t == "bf16":
            x, y = from_bf16_bits(to_bf16_bits(x)), from_bf16_bits(to_bf16_bits(y))
    else:
        x = rng.integers(0, 5, N).astype(NP[t])
        y = rng.integers(0, 5, N).astype(NP[t])
    for d, fn in [("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less), ("LE", np.less_equal),
                  ("GT", np.greater), ("GE", np.greater_equal)]:
        c = Comp("main")
        c.op("compare", f"pred[{N}]", [c.param(0, f"{t}[{N}]"), c.param(1, f"{t}[{N}]")], comparison_direction=d)
        got = run(module(c), [(x, t), (y, t)])[0]
        with np.errstate(invalid="ignore"):
            check(f"compare {d} {t}", np.array_equal(got, fn(x, y)))

# --- 4. Convert ---------------------------------------------------------
x = float_inputs(N)
for to in ["f16", "bf16", "f64"]:
    c = Comp("main")
    c.op("convert", f"{to}[{N}]", [c.param(0, f"f32[{N}]")])
    got = decode(run(module(c), [(x, "f32")])[0], to)
    with np.errstate(over="ignore"):
        want = {"f16": x.astype(np.float16), "bf16": from_bf16_bits(to_bf16_bits(x)),
                "f64": x.astype(np.float64)}[to]
    check(f"convert f32->{to} bit-exact", np.array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64), equal_nan=True))
xi = (rng.standard_normal(N) * 50).astype(np.float32)
for to in ["s8", "s32", "u8", "s64"]:
    c = Comp("main")
    c.op("convert", f"{to}[{N}]", [c.param(0, f"f32[{N}]")])
    got = run(module(c), [(xi, "f32")])[0]
    info = np.iinfo(NP[to])
    want = np.clip(np.trunc(xi), info.min, info.max).astype(NP[to])
    check(f"convert f32->{to} (saturating)", np.array_equal(got, want), f"{got[:5]} vs {want[:5]}")
ints = rng.integers(-2**40, 2**40, N).astype(np.int64)
c = Comp("main")
c.op("convert", f"bf16[{N}]", [c.param(0, f"s64[{N}]")])
got = decode(run(module(c), [(ints, "s64")])[0], "bf16")
want = torch.from_numpy(ints).to(torch.bfloat16).float().numpy()
check("convert s64->bf16", np.array_equal(got, want))


# --- 5. Dot, reduce, gather, dynamic-update-slice, sort ------------------
def dot_op(c, a, b, out, lc, rc, lb=(), rb=()):
    def fn(i):
        d = i.dot_dimension_numbers
        d.lhs_contracting_dimensions.extend(lc)
        d.rhs_contracting_dimensions.extend(rc)
        d.lhs_batch_dimensions.extend(lb)
        d.rhs_batch_dimensions.extend(rb)
    return c.op("dot", out, [a, b], fn=fn)


for t in ["f32", "f64", "bf16"]:
    c = Comp("main")
    dot_op(c, c.param(0, f"{t}[3,17,9]"), c.param(1, f"{t}[3,9,11]"), f"{t}[3,17,11]", [2], [1], [0], [0])
    a = rng.standard_normal((3, 17, 9)).astype(np.float32)
    b = rng.standard_normal((3, 9, 11)).astype(np.float32)
    if t == "bf16":
        a, b = from_bf16_bits(to_bf16_bits(a)), from_bf16_bits(to_bf16_bits(b))
    got = decode(run(module(c), [(a, t), (b, t)])[0], t)
    want = torch.from_numpy(a.astype(np.float64)) @ torch.from_numpy(b.astype(np.float64))
    if t == "bf16":
        want = want.float().to(torch.bfloat16).float()
    ok, d = close(got, want.numpy(), {"f32": 1e-5, "f64": 1e-12, "bf16": 8e-3}[t], 1e-5)
    check(f"dot batch {t}", ok, d)

for t in ["f32", "bf16", "s32"]:
    add = scalar_comp("add", t)
    mx = scalar_comp("maximum", t)
    c = Comp("main")
    x_ = c.param(0, f"{t}[4,5,6]")
    z = c.const(f"{t}[]", [0]) if t != "s32" else c.const("s32[]", [0])
    lo = c.const(f"{t}[]", [-1e30]) if t != "s32" else c.const("s32[]", [-2**31])
    s1 = c.op("reduce", f"{t}[5]", [x_, z], dimensions=[0, 2], called_computation_ids=[add.id])
    s2 = c.op("reduce", f"{t}[4,5]", [x_, lo], dimensions=[2], called_computation_ids=[mx.id])
    c.op("tuple", f"({t}[5], {t}[4,5])", [s1, s2])
    if t == "s32":
        x = rng.integers(-1000, 1000, (4, 5, 6)).astype(np.int32)
    else:
        x = rng.standard_normal((4, 5, 6)).astype(np.float32)
        if t == "bf16":
            x = from_bf16_bits(to_bf16_bits(x))
    outs = run(module(add, mx, c), [(x, t)])
    got1, got2 = decode(outs[0], t), decode(outs[1], t)
    w1 = x.astype(np.float64).sum(axis=(0, 2))
    if t == "bf16":
        w1 = from_bf16_bits(to_bf16_bits(w1.astype(np.float32)))
    ok, d = close(got1, w1, 1e-5 if t != "bf16" else 0, 1e-4 if t != "bf16" else 0)
    check(f"reduce add {t}", ok, d)
    check(f"reduce max {t}", np.array_equal(np.asarray(got2, np.float64), x.max(axis=2).astype(np.float64)))

# --- 6. Whole graphs -------------------------------------------------------
F = "f32"


def bcast(c, x, out, dims):
    return c.op("broadcast", out, [x], dimensions=dims)


def softmax_last(c, x, shp, t, add, mx):
    dims = [int(d) for d in shp.split(",")]
    red = ",".join(map(str, dims[:-1]))
    lo = c.const(f"{t}[]", [-np.inf]) if t == "f32" else c.const("f32[]", [-np.inf])
    z = c.const(f"{t}[]", [0])
    m = c.op("reduce", f"{t}[{red}]", [x, lo], dimensions=[len(dims) - 1], called_computation_ids=[mx.id])
    mb = bcast(c, m, f"{t}[{shp}]", list(range(len(dims) - 1)))
    e = c.op("exponential", f"{t}[{shp}]", [c.op("subtract", f"{t}[{shp}]", [x, mb])])
    s = c.op("reduce", f"{t}[{red}]", [e, z], dimensions=[len(dims) - 1], called_computation_ids=[add.id])
    return c.op("divide", f"{t}[{shp}]", [e, bcast(c, s, f"{t}[{shp}]", list(range(len(dims) - 1)))])


def layer_norm(c, x, B, T, H, gamma, beta, eps=1e-5):
    """torch-xla's lowering: batch-norm-training over a [1, B*T, H] view."""
    r = c.op("reshape", f"f32[1,{B*T},{H}]", [x])
    ones = bcast(c, c.const("f32[]", [1]), f"f32[{B*T}]", [])
    zeros = bcast(c, c.const("f32[]", [0]), f"f32[{B*T}]", [])
    bn = c.op("batch-norm-training", f"(f32[1,{B*T},{H}], f32[{B*T}], f32[{B*T}])", [r, ones, zeros],
              feature_index=1, epsilon=eps)
    n = c.op("get-tuple-element", f"f32[1,{B*T},{H}]", [bn], tuple_index=0)
    n = c.op("reshape", f"f32[{B},{T},{H}]", [n])
    g = bcast(c, gamma, f"f32[{B},{T},{H}]", [2])
    b = bcast(c, beta, f"f32[{B},{T},{H}]", [2])
    return c.op("add", f"f32[{B},{T},{H}]", [c.op("multiply", f"f32[{B},{T},{H}]", [n, g]), b])


def linear(c, x, w, B, T, I, O):
    return dot_op(c, x, w, f"f32[{B},{T},{O}]", [2], [0])


def attention(c, q, k, v, B, T, D, add, mx):
    """softmax(q k^T / sqrt(D) + causal mask) v with batch dims."""
    s = dot_op(c, q, k, f"f32[{B},{T},{T}]", [2], [2], [0], [0])
    s = c.op("multiply", f"f32[{B},{T},{T}]", [s, bcast(c, c.const("f32[]", [1 / np.sqrt(D)]), f"f32[{B},{T},{T}]", [])])
    row = c.op("iota", f"s32[{B},{T},{T}]", dimensions=[1])
    col = c.op("iota", f"s32[{B},{T},{T}]", dimensions=[2])
    keep = c.op("compare", f"pred[{B},{T},{T}]", [row, col], comparison_direction="GE")
    neg = bcast(c, c.const("f32[]", [-np.inf]), f"f32[{B},{T},{T}]", [])
    s = c.op("select", f"f32[{B},{T},{T}]", [keep, s, neg])
    p = softmax_last(c, s, f"{B},{T},{T}", "f32", add, mx)
    return dot_op(c, p, v, f"f32[{B},{T},{D}]", [2], [1], [0], [0])


def t_(a):
    return torch.from_numpy(np.asarray(a, np.float64))


B, T, H, FF = 2, 5, 8, 16
x = rng.standard_normal((B, T, H)).astype(np.float32)
w1 = (rng.standard_normal((H, FF)) / 3).astype(np.float32)
w2 = (rng.standard_normal((FF, H)) / 3).astype(np.float32)
b1 = rng.standard_normal(FF).astype(np.float32)
gamma = rng.standard_normal(H).astype(np.float32)
beta = rng.standard_normal(H).astype(np.float32)


def mlp_graph(c, xi, w1i, b1i, w2i):
    h = linear(c, xi, w1i, B, T, H, FF)
    h = c.op("add", f"f32[{B},{T},{FF}]", [h, bcast(c, b1i, f"f32[{B},{T},{FF}]", [2])])
    h = c.op("maximum", f"f32[{B},{T},{FF}]", [h, bcast(c, c.const("f32[]", [0]), f"f32[{B},{T},{FF}]", [])])
    return linear(c, h, w2i, B, T, FF, H)


def torch_mlp(x_, w1_, b1_, w2_, round_operands=False):
    r = (lambda a: a.float().to(torch.bfloat16).double()) if round_operands else (lambda a: a)
    h = torch.relu(r(x_) @ r(w1_) + b1_)
    return r(h) @ r(w2_)


c = Comp("main")
out = mlp_graph(c, c.param(0, f"f32[{B},{T},{H}]"), c.param(1, f"f32[{H},{FF}]"), c.param(2, f"f32[{FF}]"),
                c.param(3, f"f32[{FF},{H}]"))
mlp = module(c)
ins = [(x, F), (w1, F), (b1, F), (w2, F)]
got_x = run(mlp, ins, "xla")[0]
got_n = run(mlp, ins, "neuron")[0]
got_f = run(mlp, ins, "f32")[0]
want = torch_mlp(t_(x), t_(w1), t_(b1), t_(w2)).numpy()
want_n = torch_mlp(t_(x), t_(w1), t_(b1), t_(w2), round_operands=True).numpy()
check("graph mlp xla", *close(got_x, want, 1e-5, 1e-5))
check("graph mlp neuron = torch with bf16-rounded dot operands", *close(got_n, want_n, 1e-5, 1e-5))
check("graph mlp neuron differs from xla", not np.allclose(got_n, got_x, rtol=1e-6, atol=1e-6))
check("graph mlp f32 = xla on an f32 graph", np.array_equal(got_f, got_x))

add, mx = scalar_comp("add", "f32"), scalar_comp("maximum", "f32")
c = Comp("main")
c.op("tuple", f"(f32[{B},{T},{H}])", [layer_norm(c, c.param(0, f"f32[{B},{T},{H}]"), B, T, H,
                                                  c.param(1, f"f32[{H}]"), c.param(2, f"f32[{H}]"))])
got = run(module(c), [(x, F), (gamma, F), (beta, F)])[0]
want = torch.nn.functional.layer_norm(t_(x), (H,), t_(gamma), t_(beta), 1e-5).numpy()
check("graph layer norm (batch-norm-training on a reshape)", *close(got, want, 1e-5, 1e-5))

c = Comp("main")
softmax_last(c, c.param(0, f"f32[{B},{T},{H}]"), f"{B},{T},{H}", "f32", add, mx)
got = run(module(add, mx, c), [(x, F)])[0]
check("graph softmax", *close(got, torch.softmax(t_(x), -1).numpy(), 1e-6, 1e-7))

D = H
q, k_, v_ = (rng.standard_normal((B, T, D)).astype(np.float32) for _ in range(3))
c = Comp("main")
attention(c, c.param(0, f"f32[{B},{T},{D}]"), c.param(1, f"f32[{B},{T},{D}]"), c.param(2, f"f32[{B},{T},{D}]"),
          B, T, D, add, mx)
got = run(module(add, mx, c), [(q, F), (k_, F), (v_, F)])[0]
mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
sc = (t_(q) @ t_(k_).transpose(1, 2)) / np.sqrt(D)
want = torch.softmax(sc.masked_fill(~mask, float("-inf")), -1) @ t_(v_)
check("graph causal attention", *close(got, want.numpy(), 1e-5, 1e-6))

V = 11
table = rng.standard_normal((V, H)).astype(np.float32)
ids = rng.integers(0, V, (B, T)).astype(np.int32)
c = Comp("main")
tb, ii = c.param(0, f"f32[{V},{H}]"), c.param(1, f"s32[{B},{T}]")


def gather_dims(i):
    d = i.gather_dimension_numbers
    d.offset_dims.append(2)
    d.collapsed_slice_dims.append(0)
    d.start_index_map.append(0)
    d.index_vector_dim = 2
    i.gather_slice_sizes.extend([1, H])


c.op("gather", f"f32[{B},{T},{H}]", [tb, ii], fn=gather_dims)
got = run(module(c), [(table, F), (ids, "s32")])[0]
check("graph embedding gather", np.array_equal(got, torch.nn.functional.embedding(torch.from_numpy(ids).long(), torch.from_numpy(table)).numpy()))

S = 8
cache = rng.standard_normal((B, S, H)).astype(np.float32)
new = rng.standard_normal((B, 1, H)).astype(np.float32)
c = Comp("main")
kc, nw, pos = c.param(0, f"f32[{B},{S},{H}]"), c.param(1, f"f32[{B},1,{H}]"), c.param(2, "s32[]")
zero = c.const("s32[]", [0])
c.op("dynamic-update-slice", f"f32[{B},{S},{H}]", [kc, nw, zero, pos, zero])
got = run(module(c), [(cache, F), (new, F), (np.array(5, np.int32), "s32")])[0]
want = cache.copy()
want[:, 5:6, :] = new
check("graph kv-cache dynamic-update-slice", np.array_equal(got, want))

# while: x = tanh(x @ w) four times.
cond, body = Comp("cond"), Comp("body")
st = f"(s32[], f32[{T},{H}], f32[{H},{H}])"
p = cond.param(0, st)
cond.op("compare", "pred[]", [cond.op("get-tuple-element", "s32[]", [p], tuple_index=0), cond.const("s32[]", [4])],
        comparison_direction="LT")
p = body.param(0, st)
i0 = body.op("get-tuple-element", "s32[]", [p], tuple_index=0)
xs = body.op("get-tuple-element", f"f32[{T},{H}]", [p], tuple_index=1)
ws = body.op("get-tuple-element", f"f32[{H},{H}]", [p], tuple_index=2)
nx = body.op("tanh", f"f32[{T},{H}]", [dot_op(body, xs, ws, f"f32[{T},{H}]", [1], [0])])
body.op("tuple", st, [body.op("add", "s32[]", [i0, body.const("s32[]", [1])]), nx, ws])
c = Comp("main")
w0 = c.op("while", st, [c.op("tuple", st, [c.const("s32[]", [0]), c.param(0, f"f32[{T},{H}]"), c.param(1, f"f32[{H},{H}]")])],
          called_computation_ids=[body.id, cond.id])  # XLA's order: body, condition
c.op("get-tuple-element", f"f32[{T},{H}]", [w0], tuple_index=1)
ww = (rng.standard_normal((H, H)) / 3).astype(np.float32)
got = run(module(cond, body, c), [(x[0], F), (ww, F)])[0]
want = t_(x[0])
for _ in range(4):
    want = torch.tanh(want @ t_(ww))
check("graph while loop", *close(got, want.numpy(), 1e-5, 1e-6))

# conditional: relu branch or negate branch by a pred.
br1, br2 = Comp("relu"), Comp("neg")
pp = br1.param(0, f"f32[{H}]")
br1.op("maximum", f"f32[{H}]", [pp, bcast(br1, br1.const("f32[]", [0]), f"f32[{H}]", [])])
br2.op("negate", f"f32[{H}]", [br2.param(0, f"f32[{H}]")])
c = Comp("main")
pr, xv = c.param(0, "pred[]"), c.param(1, f"f32[{H}]")
c.op("conditional", f"f32[{H}]", [pr, xv, xv], called_computation_ids=[br1.id, br2.id])
cm = module(br1, br2, c)
check("graph conditional true", np.array_equal(run(cm, [(np.array(True), "pred"), (x[0, 0], F)])[0], np.maximum(x[0, 0], 0)))
check("graph conditional false", np.array_equal(run(cm, [(np.array(False), "pred"), (x[0, 0], F)])[0], -x[0, 0]))

# top-k sampling: logits -> top 3 -> softmax over them.
logits = rng.standard_normal((B, V)).astype(np.float32)
c = Comp("main")
tk = c.op("topk", f"(f32[{B},3], s32[{B},3])", [c.param(0, f"f32[{B},{V}]")], k=3, largest=True)
vals = c.op("get-tuple-element", f"f32[{B},3]", [tk], tuple_index=0)
idx = c.op("get-tuple-element", f"s32[{B},3]", [tk], tuple_index=1)
c.op("tuple", f"(f32[{B},3], s32[{B},3])", [softmax_last(c, vals, f"{B},3", "f32", add, mx), idx])
outs = run(module(add, mx, c), [(logits, F)])
tv, ti = torch.topk(torch.from_numpy(logits), 3)
check("graph top-k sampling indices", np.array_equal(outs[1], ti.numpy().astype(np.int32)))
check("graph top-k sampling probabilities", *close(outs[0], torch.softmax(tv.double(), -1).numpy(), 1e-6, 1e-7))

# Transformer decoder layer: x + attn(ln1(x)); then + mlp(ln2(.)).
wq, wk, wv, wo = ((rng.standard_normal((H, H)) / 3).astype(np.float32) for _ in range(4))
c = Comp("main")
xp = c.param(0, f"f32[{B},{T},{H}]")
P = [c.param(i + 1, f"f32[{H},{H}]") for i in range(4)]
g1, be1 = c.param(5, f"f32[{H}]"), c.param(6, f"f32[{H}]")
W1, Bi1, W2 = c.param(7, f"f32[{H},{FF}]"), c.param(8, f"f32[{FF}]"), c.param(9, f"f32[{FF},{H}]")
h = layer_norm(c, xp, B, T, H, g1, be1)
qq, kk, vv = (linear(c, h, P[i], B, T, H, H) for i in range(3))
a = linear(c, attention(c, qq, kk, vv, B, T, H, add, mx), P[3], B, T, H, H)
r1 = c.op("add", f"f32[{B},{T},{H}]", [xp, a])
h2 = layer_norm(c, r1, B, T, H, g1, be1)
c.op("add", f"f32[{B},{T},{H}]", [r1, mlp_graph(c, h2, W1, Bi1, W2)])
dec = module(add, mx, c)
ins = [(x, F), (wq, F), (wk, F), (wv, F), (wo, F), (gamma, F), (beta, F), (w1, F), (b1, F), (w2, F)]
got = run(dec, ins)[0]


def torch_decoder(rnd):
    ln = lambda z: torch.nn.functional.layer_norm(z, (H,), t_(gamma), t_(beta), 1e-5)
    hh = ln(t_(x))
    qq_, kk_, vv_ = (rnd(hh) @ rnd(t_(w)) for w in (wq, wk, wv))
    sc_ = (rnd(qq_) @ rnd(kk_).transpose(1, 2)) / np.sqrt(H)
    pr_ = torch.softmax(sc_.masked_fill(~mask, float("-inf")), -1)
    r1_ = t_(x) + rnd(rnd(pr_) @ rnd(vv_)) @ rnd(t_(wo))
    h2_ = ln(r1_)
    m = torch.relu(rnd(h2_) @ rnd(t_(w1)) + t_(b1))
    return r1_ + rnd(m) @ rnd(t_(w2))


check("graph transformer decoder layer", *close(got, torch_decoder(lambda z: z).numpy(), 1e-4, 1e-5))
got_n = run(dec, ins, "neuron")[0]
want_n = torch_decoder(lambda z: z.float().to(torch.bfloat16).double())
check("graph transformer decoder layer neuron", *close(got_n, want_n.numpy(), 2e-3, 2e-3))

# A bf16 graph: kF32 keeps the values in f32 (torch in f32), kXla rounds.
c = Comp("main")
xb, yb = c.param(0, "bf16[64]"), c.param(1, "bf16[64]")
c.op("multiply", "bf16[64]", [c.op("add", "bf16[64]", [xb, yb]), yb])
bg = module(c)
xa = from_bf16_bits(to_bf16_bits(rng.standard_normal(64).astype(np.float32)))
ya = from_bf16_bits(to_bf16_bits(rng.standard_normal(64).astype(np.float32)))
got_b = decode(run(bg, [(xa, "bf16"), (ya, "bf16")], "xla")[0], "bf16")
got_32 = run(bg, [(xa, "bf16"), (ya, "bf16")], "f32")[0]
tx_, ty_ = torch.from_numpy(xa).to(torch.bfloat16), torch.from_numpy(ya).to(torch.bfloat16)
want_b = ((tx_.float() + ty_.float()).to(torch.bfloat16).float() * ty_.float()).to(torch.bfloat16).float().numpy()
check("bf16 graph xla: rounded per instruction, bit-exact", np.array_equal(got_b, want_b))
check("bf16 graph f32: kept in f32", got_32.dtype == np.float32 and np.array_equal(got_32, (xa + ya) * ya))
check("bf16 graph neuron = xla (no dot)", np.array_equal(decode(run(bg, [(xa, "bf16"), (ya, "bf16")], "neuron")[0], "bf16"), got_b))

print(f"{len(PASSED)} passed, {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
