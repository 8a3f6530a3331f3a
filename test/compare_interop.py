#!/usr/bin/python3
"""Interop test of `decomposed compare` and `decomposed stats` against NumPy
and PyTorch 1.13.

Expected and actual arrays are built here with NumPy, written as decomposed
files (hand-encoded from the spec by unpack_interop.py's encoder, with
default, column-major and permuted layouts on either side) or as .npy files,
and compared by the CLI. For every case:
  * torch mode: the verdict equals torch.testing.assert_close's (where torch
    1.13 has the dtype), and the mismatch count equals the number of
    elements torch.isclose rejects after assert_close's promotion;
  * numpy mode: the verdict equals numpy.isclose(a, e, ...).all(), the
    mismatch count the number of False;
  * xla mode: the mismatch count equals a NumPy evaluation of XLA's rule;
  * the metrics equal a NumPy evaluation in float64 to 1e-12 relative, the
    counts and indices exactly.
stats is checked the same way against NumPy (nanmin over finite values,
np.std with ddof=0, ...).

The other sides: classic HloSnapshot files (against their decomposed
conversion by `decomposed convert`, against `decomposed unpack`'s .npy
directory and against NumPy's own metrics, inputs and outputs), single .pt
files written by torch.save (dtype from the file; bfloat16 included), and
Fortran-order .npy files written by np.save(np.asfortranarray(...)).

usage: compare_interop.py <decomposed CLI> <scratch dir>
"""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unpack_interop as enc  # noqa: E402  (the hand-written spec encoder)

try:
    import torch
except ImportError:  # the suite installs python3-torch; fail loudly if not
    torch = None

CLI = None
SCRATCH = None
failures = []
rng = np.random.default_rng(20261130)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


# ------------------------------------------------------------- array types

# name -> (numpy dtype used to hold values, torch dtype or None)
TYPES = {
    "F16": (np.float16, "float16"),
    "F32": (np.float32, "float32"),
    "F64": (np.float64, "float64"),
    "BF16": (None, "bfloat16"),
    "C64": (np.complex64, "complex64"),
    "C128": (np.complex128, "complex128"),
    "S8": (np.int8, "int8"),
    "S32": (np.int32, "int32"),
    "S64": (np.int64, "int64"),
    "U8": (np.uint8, "uint8"),
    "U32": (np.uint32, None),
    "PRED": (np.bool_, "bool"),
}
FLOATS = ("F16", "F32", "F64", "BF16")
COMPLEX = ("C64", "C128")


def bf16_bits(x):
    """float32 values -> bfloat16 bit patterns (round to nearest even)."""
    f = np.atleast_1d(np.asarray(x, dtype=np.float32))
    b = f.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(f)] = 0x7FC0
    return r.reshape(np.asarray(x).shape)


def bf16_values(bits):
    b = np.asarray(bits)
    return (np.atleast_1d(b).astype(np.uint32) << 16).view(np.float32).reshape(b.shape)


def values(name, shape, specials):
    """Expected-side values (as the holding dtype; bf16 as uint16 bits)."""
    n = int(np.prod(shape)) if shape else 1
    if name in FLOATS or name in COMPLEX:
        base = rng.standard_normal(n) * 10
        if specials:
            sp = [np.nan, np.inf, -np.inf, 0.0, -0.0]
            for i in range(min(n, len(sp))):
                base[(i * 7) % n] = sp[i]
        if name in COMPLEX:
            im = rng.standard_normal(n) * 10
            if specials and n > 3:
                im[3] = np.nan
            arr = (base + 1j * im).astype(TYPES[name][0])
        elif name == "BF16":
            arr = bf16_bits(base.astype(np.float32))
        else:
            arr = base.astype(TYPES[name][0])
        return arr.reshape(shape)
    dt = TYPES[name][0]
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True).reshape(shape)


def perturb(name, e):
    """An actual side near `e`: some elements equal, some within the mode's
    tolerances, some just outside, some far, NaN where e is NaN or not."""
    a = e.copy()
    flat = a.reshape(-1)
    n = flat.size
    if n == 0:
        return a
    if name == "BF16":
        v = bf16_values(flat).astype(np.float64)
    elif name in COMPLEX:
        v = flat.astype(np.complex128)
    elif name in FLOATS:
        v = flat.astype(np.float64)
    else:
        for i in range(0, n, 3):
            flat[i] = flat[i] ^ 1 if flat.dtype != np.bool_ else not flat[i]
        return a
    scales = [0, 1e-7, 5e-7, 2e-6, 1e-5, 1e-4, 1e-3, 2e-3, 1e-2, 3e-2, 1.0]
    for i in range(n):
        s = scales[i % len(scales)]
        if s:
            v[i] = v[i] * (1 + s) + (s if i % 2 else 0)
    if n > 5:
        v[5] = np.nan
    if n > 6:
        v[6] = np.inf
    if name == "BF16":
        flat[:] = bf16_bits(v.astype(np.float32))
    else:
        flat[:] = v.astype(flat.dtype)
    return a


# ------------------------------------------------------------- files

XLA = {"F16": 10, "F32": 11, "F64": 12, "BF16": 16, "C64": 15, "C128": 18,
       "S8": 2, "S32": 4, "S64": 5, "U8": 6, "U32": 8, "PRED": 1}


def literal_bytes(name, arr, m2m):
    """A canonical LiteralProto for `arr` with layout `m2m` (via the hand
    encoder of unpack_interop.py, whose TYPES table knows every type)."""
    if name == "BF16":
        arr = arr.view(np.dtype("V2"))
    return enc.literal(name, arr, m2m, "canonical")


def write_decomposed(path, name, arrays, layouts):
    lits = [literal_bytes(name, a, m) for a, m in zip(arrays, layouts)]
    with open(path, "wb") as f:
        f.write(enc.decomposed_file([], lits, True))


def write_npy_dir(path, name, arrays):
    os.makedirs(path, exist_ok=True)
    for j, a in enumerate(arrays):
        p = os.path.join(path, "snapshot_output%d.npy" % j)
        if name == "BF16":
            np.save(p, a.view(np.dtype("V2")))
            with open(p + ".meta", "w") as f:
                json.dump({"ml_dtype": "bfloat16"}, f)
        else:
            np.save(p, a)


def layout_for(rank, k):
    if rank < 2 or k % 3 == 0:
        return list(range(rank - 1, -1, -1))
    if k % 3 == 1:
        return list(range(rank))
    p = list(range(rank))
    p = p[1:] + p[:1]
    return p


# ------------------------------------------------------------- references


def as_values(name, arr):
    """Values a NumPy user compares: float64/complex128 for metrics."""
    if name == "BF16":
        return bf16_values(arr).astype(np.float64)
    if name in COMPLEX:
        return arr.astype(np.complex128)
    return arr.astype(np.float64)


def numpy_native(name, arr):
    if name == "BF16":
        return bf16_values(arr)  # float32: what a NumPy user upcasts to
    return arr


def torch_tensor(name, arr):
    if name == "BF16":
        return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(arr))


DEFAULTS = {
    "torch": {"F16": (1e-3, 1e-5), "BF16": (1.6e-2, 1e-5), "F32": (1.3e-6, 1e-5),
              "C64": (1.3e-6, 1e-5), "F64": (1e-7, 1e-7), "C128": (1e-7, 1e-7)},
}


def tolerance(mode, name):
    if mode == "numpy":
        return 1e-5, 1e-8
    if mode == "xla":
        return (1e-3, 1e-3) if (name in FLOATS or name in COMPLEX) else (0.0, 0.0)
    return DEFAULTS["torch"].get(name, (0.0, 0.0))


def ref_close(mode, name, e, a, rtol, atol, equal_nan):
    """Element-wise closeness by the reference library's own rule."""
    if mode == "numpy":
        return np.isclose(numpy_native(name, a), numpy_native(name, e), rtol=rtol,
                          atol=atol, equal_nan=equal_nan)
    if mode == "torch" and TYPES[name][1] is not None:
        ta, te = torch_tensor(name, a), torch_tensor(name, e)
        if te.dtype.is_complex:
            ta, te = ta.to(torch.complex128), te.to(torch.complex128)
        elif te.dtype.is_floating_point:
            ta, te = ta.to(torch.float64), te.to(torch.float64)
        else:
            ta, te = ta.to(torch.int64), te.to(torch.int64)
        return torch.isclose(ta, te, rtol=rtol, atol=atol, equal_nan=equal_nan).numpy()
    # xla (and torch for types torch lacks: exact): evaluated here.
    ev, av = as_values(name, e), as_values(name, a)
    if name not in FLOATS and name not in COMPLEX:
        return e == a
    en, an = np.isnan(ev), np.isnan(av)
    with np.errstate(invalid="ignore", divide="ignore"):
        eq = av == ev
        d = np.where(eq, 0.0, np.abs(av - ev))
        ae = np.abs(ev)
        rel = np.where(eq, 0.0, np.where((ae == 0) | np.isinf(d) | np.isinf(ae), np.inf, d / np.where(ae == 0, 1, ae)))
    close = ~((d > atol) & (rel > rtol))
    close = np.where(en | an, en & an & equal_nan, close)
    return close


def torch_verdict(name, e, a, rtol, atol, equal_nan):
    try:
        torch.testing.assert_close(torch_tensor(name, a), torch_tensor(name, e),
                                   rtol=rtol, atol=atol, equal_nan=equal_nan)
        return True
    except AssertionError:
        return False


def fsum(x):
    """Exact sum of float64 values; inf or nan when they are not finite."""
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        return float(np.sum(x))
    return math.fsum(x)


def ref_metrics(name, e, a):
    ev = as_values(name, e).reshape(-1)
    av = as_values(name, a).reshape(-1)
    nan = np.isnan(ev) | np.isnan(av)
    valid = np.flatnonzero(~nan)
    out = {"elements": ev.size,
           "expected_nan": int(np.isnan(ev).sum()), "actual_nan": int(np.isnan(av).sum()),
           "expected_inf": int((np.isinf(ev) & ~np.isnan(ev)).sum()),
           "actual_inf": int((np.isinf(av) & ~np.isnan(av)).sum())}
    if valid.size == 0:
        for k in ("max_abs_error", "max_rel_error", "mean_abs_error", "rms_error", "cosine"):
            out[k] = None
        return out
    e1, a1 = ev[valid], av[valid]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        eq = a1 == e1
        d = np.where(eq, 0.0, np.abs(a1 - e1))
        ae = np.abs(e1)
        # torch's and NumPy's relative difference: |a - e| / |e| (NaN for an
        # infinite e against a different a), 0 where equal, inf where e == 0.
        rel = np.where(eq, 0.0, np.where(ae == 0, np.inf, d / np.where(ae == 0, 1, ae)))
        out["max_abs_error"] = float(d.max())
        out["max_abs_error_index"] = int(valid[int(np.argmax(d))])
        out["max_rel_error"] = float(rel.max())
        out["max_rel_error_index"] = int(valid[int(np.argmax(rel))])
        out["mean_abs_error"] = fsum(d) / d.size
        out["rms_error"] = math.sqrt(fsum(d * d) / d.size)
        dot = fsum(np.real(np.conj(e1) * a1))
        ee, aa = fsum(np.abs(e1) ** 2), fsum(np.abs(a1) ** 2)
        denom = math.sqrt(ee) * math.sqrt(aa) if math.isfinite(ee + aa) else math.inf
        ok = ee > 0 and aa > 0 and math.isfinite(denom) and math.isfinite(dot)
        out["cosine"] = dot / denom if ok and math.isfinite(dot / denom) else None
    return out


def same_number(got, want, what):
    if want is None:
        check(got is None, "%s: got %r, want null" % (what, got))
        return
    if isinstance(want, float) and math.isnan(want):
        check(got == "nan", "%s: got %r, want \"nan\"" % (what, got))
        return
    if isinstance(want, float) and math.isinf(want):
        check(got == ("inf" if want > 0 else "-inf"), "%s: got %r, want %r" % (what, got, want))
        return
    if not isinstance(got, (int, float)):
        check(False, "%s: got %r, want %r" % (what, got, want))
        return
    ok = got == want or abs(got - want) <= 1e-12 * max(abs(got), abs(want))
    check(ok, "%s: got %r, want %r" % (what, got, want))


def run(args, want_rc=None):
    p = subprocess.run([CLI] + args, capture_output=True, text=True)
    if want_rc is not None:
        check(p.returncode == want_rc, "%s: exit %d, want %d; stderr %s" %
              (" ".join(args), p.returncode, want_rc, p.stderr.strip()))
    return p


# ------------------------------------------------------------- cases

SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5)]


def compare_case(name, shape, k, as_npy_side):
    e = values(name, shape, specials=(k % 2 == 0))
    a = perturb(name, e)
    d = os.path.join(SCRATCH, "c%d" % k)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    ep = os.path.join(d, "expected.decomposed")
    write_decomposed(ep, name, [e], [layout_for(len(shape), k)])
    if as_npy_side:
        ap = os.path.join(d, "actual")
        write_npy_dir(ap, name, [a])
    else:
        ap = os.path.join(d, "actual.decomposed")
        write_decomposed(ap, name, [a], [layout_for(len(shape), k + 1)])
    what = "%s %s layouts %s/%s %s" % (name, shape, layout_for(len(shape), k),
                                      layout_for(len(shape), k + 1), "npy" if as_npy_side else "")
    metrics = ref_metrics(name, e, a)
    for mode in ("torch", "numpy", "xla"):
        for equal_nan in (False, True):
            args = ["compare", ep, ap, "--json", "--mode", mode, "--show", "3"]
            if equal_nan:
                args.append("--equal-nan")
            p = run(args)
            check(p.returncode in (0, 1), "%s %s: exit %d %s" % (what, mode, p.returncode, p.stderr))
            if p.returncode not in (0, 1):
                continue
            j = json.loads(p.stdout)
            t = j["tensors"][0]
            rtol, atol = tolerance(mode, name)
            close = np.asarray(ref_close(mode, name, e, a, rtol, atol, equal_nan)).reshape(-1)
            want_mism = int((~close.astype(bool)).sum())
            tag = "%s %s equal_nan=%s" % (what, mode, equal_nan)
            check(t["mismatches"] == want_mism, "%s: mismatches %d, want %d" % (tag, t["mismatches"], want_mism))
            if mode == "numpy":
                want_pass = bool(np.isclose(numpy_native(name, a), numpy_native(name, e), rtol=rtol,
                                            atol=atol, equal_nan=equal_nan).all())
                check(j["pass"] == want_pass, "%s: pass %s, numpy says %s" % (tag, j["pass"], want_pass))
            if mode == "torch" and torch is not None and TYPES[name][1] is not None:
                want_pass = torch_verdict(name, e, a, rtol, atol, equal_nan)
                check(j["pass"] == want_pass, "%s: pass %s, torch says %s" % (tag, j["pass"], want_pass))
            check(p.returncode == (0 if j["pass"] else 1), "%s: exit code %d for pass=%s" % (tag, p.returncode, j["pass"]))
            check(t["expected"]["shape"] == list(shape), "%s: shape %s" % (tag, t["expected"]["shape"]))
            check(t["expected"]["dtype"] == name.lower(), "%s: dtype %s" % (tag, t["expected"]["dtype"]))
            for key in ("elements", "expected_nan", "actual_nan", "expected_inf", "actual_inf"):
                check(t[key] == metrics[key], "%s: %s %r, want %r" % (tag, key, t[key], metrics[key]))
            for key in ("max_abs_error", "max_rel_error", "mean_abs_error", "rms_error", "cosine"):
                same_number(t[key], metrics[key], "%s: %s" % (tag, key))
            for key in ("max_abs_error_index", "max_rel_error_index"):
                if metrics.get(key) is not None:
                    want = list(np.unravel_index(metrics[key], shape)) if shape else []
                    check(t[key] == [int(x) for x in want], "%s: %s %r, want %r" % (tag, key, t[key], want))
            check(len(t["first_mismatches"]) == min(3, want_mism), "%s: first_mismatches" % tag)


def stats_case(name, shape, k):
    e = values(name, shape, specials=True)
    d = os.path.join(SCRATCH, "s%d" % k)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    p = os.path.join(d, "x.decomposed")
    write_decomposed(p, name, [e], [layout_for(len(shape), k)])
    r = run(["stats", p, "--json"], 0)
    if r.returncode != 0:
        return
    t = [x for x in json.loads(r.stdout)["tensors"] if x["set"] == "outputs"][0]
    what = "stats %s %s" % (name, shape)
    v = as_values(name, e).reshape(-1)
    nan = np.isnan(v)
    check(t["nan"] == int(nan.sum()), "%s: nan" % what)
    first = int(np.flatnonzero(nan)[0]) if nan.any() else None
    want_first = (list(np.unravel_index(first, shape)) if shape else []) if first is not None else None
    check(t["first_nan_index"] == ([int(x) for x in want_first] if want_first is not None else None),
          "%s: first_nan_index %r, want %r" % (what, t["first_nan_index"], want_first))
    if name in COMPLEX:
        inf = np.isinf(v) & ~nan
        check(t["pos_inf"] == int(inf.sum()), "%s: inf" % what)
        return
    check(t["pos_inf"] == int((v == np.inf).sum()), "%s: pos_inf" % what)
    check(t["neg_inf"] == int((v == -np.inf).sum()), "%s: neg_inf" % what)
    check(t["zeros"] == int((v == 0).sum()), "%s: zeros" % what)
    fin = v[np.isfinite(v)]
    if fin.size == 0:
        for key in ("min", "max", "mean", "std"):
            check(t[key] is None, "%s: %s not null" % (what, key))
        return
    same_number(t["min"], float(fin.min()), what + " min")
    same_number(t["max"], float(fin.max()), what + " max")
    same_number(t["mean"], float(math.fsum(fin) / fin.size), what + " mean")
    mean = math.fsum(fin) / fin.size
    same_number(t["std"], math.sqrt(math.fsum((fin - mean) ** 2) / fin.size), what + " std")


def cli_errors():
    d = os.path.join(SCRATCH, "errors")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    good = os.path.join(d, "good.decomposed")
    write_decomposed(good, "F32", [np.arange(6, dtype=np.float32).reshape(2, 3)], [[1, 0]])
    data = open(good, "rb").read()
    trunc = os.path.join(d, "trunc.decomposed")
    open(trunc, "wb").write(data[:-5])
    r = run(["compare", good, trunc], 2)
    check("byte" in r.stderr, "truncated side: message names no byte offset: %s" % r.stderr)
    run(["compare", good, good], 0)
    run(["compare", good], 2)
    run(["compare", good, good, "--mode", "bogus"], 2)
    run(["stats", trunc], 2)
    nanf = os.path.join(d, "nan.decomposed")
    write_decomposed(nanf, "F32", [np.array([1, np.nan], dtype=np.float32)], [[0]])
    run(["stats", nanf], 0)
    run(["stats", nanf, "--fail-on-nonfinite"], 1)
    run(["stats", good, "--fail-on-nonfinite"], 0)
    void = os.path.join(d, "void")
    os.makedirs(void)
    np.save(os.path.join(void, "snapshot_output0.npy"), np.zeros(2, dtype="V2"))
    r = run(["compare", void, void], 2)
    check("--dtype" in r.stderr, "bare |V2: message does not name --dtype: %s" % r.stderr)
    run(["compare", void, void, "--dtype", "bf16"], 0)


# ------------------------------------------------------------- other sides


def compare_json(args, want_rc=None):
    p = run(["compare"] + args + ["--json"], want_rc)
    if p.returncode not in (0, 1):
        return None
    return json.loads(p.stdout)


def check_metrics(tag, t, name, e, a, shape):
    m = ref_metrics(name, e, a)
    for key in ("elements", "expected_nan", "actual_nan", "expected_inf", "actual_inf"):
        check(t[key] == m[key], "%s: %s %r, want %r" % (tag, key, t[key], m[key]))
    for key in ("max_abs_error", "max_rel_error", "mean_abs_error", "rms_error", "cosine"):
        same_number(t[key], m[key], "%s: %s" % (tag, key))
    for key in ("max_abs_error_index", "max_rel_error_index"):
        if m.get(key) is not None:
            want = [int(x) for x in np.unravel_index(m[key], shape)] if shape else []
            check(t[key] == want, "%s: %s %r, want %r" % (tag, key, t[key], want))


def classic_cases():
    """Classic files: two arguments (row-major and column-major) and a
    TUPLE result of three outputs (one permuted), against the decomposed
    conversion, the unpack directory and NumPy."""
    d = os.path.join(SCRATCH, "classic")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for k, name in enumerate(("F32", "BF16", "F64", "S32", "C64", "PRED")):
        args = [values(name, (3, 4), specials=False), values(name, (2, 3, 2), specials=True)]
        outs = [values(name, (5,), specials=True), values(name, (4, 3), specials=False),
                values(name, (2, 2, 3), specials=True)]
        arg_lits = [literal_bytes(name, args[0], [1, 0]), literal_bytes(name, args[1], [0, 1, 2])]
        out_m2m = [[0], [0, 1], [1, 2, 0]]
        out_lits = [literal_bytes(name, o, m) for o, m in zip(outs, out_m2m)]
        num = XLA[name]
        shapes = [enc.shape_proto(num, list(o.shape), m, True) for o, m in zip(outs, out_m2m)]
        result = enc.tuple_literal(out_lits, shapes)
        cp = os.path.join(d, "%s.hlo_snapshot.pb" % name)
        with open(cp, "wb") as f:
            f.write(enc.hlo_snapshot(arg_lits, result))
        dp = os.path.join(d, "%s.decomposed" % name)
        run(["convert", cp, dp, "--to", "decomposed"], 0)
        ud = os.path.join(d, "%s_unpacked" % name)
        os.makedirs(ud, exist_ok=True)
        run(["unpack", cp, "--output-prefix", ud + "/", "--dump-snapshot-outputs",
             "--ml-dtype-sidecar"], 0)
        for inputs, want in ((False, outs), (True, args)):
            flag = ["--inputs"] if inputs else []
            tag = "classic %s %s" % (name, "inputs" if inputs else "outputs")
            for other in (dp, ud):
                j = compare_json([cp, other, "--equal-nan"] + flag, 0)
                if j:
                    check(len(j["tensors"]) == len(want), "%s vs %s: %d tensors" % (tag, other, len(j["tensors"])))
                    check(all(t["mismatches"] == 0 and t["max_abs_error"] in (0, 0.0, None)
                              for t in j["tensors"]), "%s vs %s: not identical" % (tag, other))
                    for t, w in zip(j["tensors"], want):
                        check(t["expected"]["shape"] == list(w.shape), "%s: shape" % tag)
                        check(t["expected"]["dtype"] == name.lower(), "%s: dtype" % tag)
            # Against a perturbed .npy directory: NumPy's metrics.
            pd = os.path.join(d, "%s_perturbed_%d" % (name, inputs))
            shutil.rmtree(pd, ignore_errors=True)
            pert = [perturb(name, w) for w in want]
            if inputs:
                os.makedirs(pd)
                for i, a in enumerate(pert):
                    p = os.path.join(pd, "value_input%d.npy" % i)
                    if name == "BF16":
                        np.save(p, a.view(np.dtype("V2")))
                        with open(p + ".meta", "w") as f:
                            json.dump({"ml_dtype": "bfloat16"}, f)
                    else:
                        np.save(p, a)
            else:
                write_npy_dir(pd, name, pert)
            j = compare_json([cp, pd] + flag)
            if j:
                for i, (t, w, a) in enumerate(zip(j["tensors"], want, pert)):
                    check_metrics("%s tensor %d vs perturbed" % (tag, i), t, name, w, a, w.shape)
        # stats of the classic file equals stats of its conversion.
        sc = run(["stats", cp, "--json"], 0)
        sd = run(["stats", dp, "--json"], 0)
        if sc.returncode == 0 and sd.returncode == 0:
            tc = json.loads(sc.stdout)["tensors"]
            td = json.loads(sd.stdout)["tensors"]
            strip = lambda ts: [{k: v for k, v in t.items() if k != "source"} for t in ts]
            check(strip(tc) == strip(td), "classic %s: stats differ from the conversion's" % name)
            check(len(tc) == 5, "classic %s: %d stats entries" % (name, len(tc)))
    # A truncated classic file: exit 2 with the frame and offset.
    data = open(os.path.join(d, "F32.hlo_snapshot.pb"), "rb").read()
    bad = os.path.join(d, "trunc.pb")
    open(bad, "wb").write(data[:-9])
    r = run(["compare", bad, os.path.join(d, "F32.decomposed")], 2)
    check("at byte" in r.stderr and "trunc.pb" in r.stderr, "truncated classic: %s" % r.stderr)
    r = run(["stats", bad], 2)
    check("at byte" in r.stderr, "truncated classic stats: %s" % r.stderr)


PT_TYPES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64",
            "S64": "int64", "S32": "int32", "U8": "uint8", "PRED": "bool", "C64": "complex64"}


def pt_cases():
    """Single .pt files written by torch.save: dtype and shape from the file,
    compared with decomposed and .npy sides, and stats against NumPy."""
    d = os.path.join(SCRATCH, "pt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for k, (name, tname) in enumerate(PT_TYPES.items()):
        for shape in ((), (5,), (3, 4), (2, 0, 3)):
            e = values(name, shape, specials=True)
            a = perturb(name, e)
            tag = "pt %s %s" % (name, shape)
            ep = os.path.join(d, "e_%s_%d.pt" % (name, len(shape)))
            ap = os.path.join(d, "a_%s_%d.pt" % (name, len(shape)))
            torch.save(torch_tensor(name, e).reshape(shape), ep)
            torch.save(torch_tensor(name, a).reshape(shape), ap)
            dp = os.path.join(d, "e_%s_%d.decomposed" % (name, len(shape)))
            write_decomposed(dp, name, [e], [layout_for(len(shape), k + 1)])
            j = compare_json([dp, ep, "--equal-nan"], 0)
            if j:
                t = j["tensors"][0]
                check(t["actual"]["dtype"] == name.lower(), "%s: dtype %s" % (tag, t["actual"]["dtype"]))
                check(t["actual"]["shape"] == list(shape), "%s: shape %s" % (tag, t["actual"]["shape"]))
            for mode in ("torch", "numpy"):
                j = compare_json([ep, ap, "--mode", mode])
                if not j:
                    check(False, "%s: compare failed" % tag)
                    continue
                t = j["tensors"][0]
                rtol, atol = tolerance(mode, name)
                close = np.asarray(ref_close(mode, name, e, a, rtol, atol, False)).reshape(-1)
                check(t["mismatches"] == int((~close.astype(bool)).sum()), "%s %s: mismatches" % (tag, mode))
                if mode == "torch":
                    want = torch_verdict(name, e, a, rtol, atol, False)
                    check(j["pass"] == want, "%s: pass %s, torch says %s" % (tag, j["pass"], want))
                check_metrics("%s %s" % (tag, mode), t, name, e, a, shape)
            r = run(["stats", ep, "--json"], 0)
            if r.returncode == 0 and name in FLOATS:
                t = json.loads(r.stdout)["tensors"][0]
                v = as_values(name, e).reshape(-1)
                check(t["nan"] == int(np.isnan(v).sum()), "%s: stats nan" % tag)
                fin = v[np.isfinite(v)]
                if fin.size:
                    same_number(t["mean"], float(math.fsum(fin) / fin.size), tag + " stats mean")
    # A torch.save of a non-contiguous view is refused, with exit 2.
    tp = os.path.join(d, "transposed.pt")
    torch.save(torch.arange(6, dtype=torch.float32).reshape(2, 3).t(), tp)
    r = run(["stats", tp], 2)
    check("transposed.pt" in r.stderr, "non-contiguous .pt: %s" % r.stderr)
    # Unreadable .pt files: exit 2 naming the file.
    good = open(os.path.join(d, "e_F32_2.pt"), "rb").read()
    for what, data in (("truncated", good[: len(good) // 2]), ("garbage", b"PK\x03\x04" + b"\0" * 40),
                       ("empty", b"")):
        bp = os.path.join(d, "%s.pt" % what)
        open(bp, "wb").write(data)
        r = run(["compare", os.path.join(d, "e_F32_2.pt"), bp], 2)
        check("%s.pt" % what in r.stderr, "%s .pt: %s" % (what, r.stderr))
        run(["stats", bp], 2)


def fortran_cases():
    """Fortran-order .npy (np.save of np.asfortranarray) against C-order
    decomposed files and NumPy's metrics, rank 2 to 4, every layout."""
    d = os.path.join(SCRATCH, "fortran")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    k = 0
    for name in ("F32", "F16", "F64", "S8", "S64", "C128", "PRED", "U32"):
        for shape in ((3, 4), (2, 3, 5), (2, 1, 3, 2), (0, 3), (40, 300)):
            e = values(name, shape, specials=True)
            a = perturb(name, e)
            tag = "fortran %s %s" % (name, shape)
            fp = os.path.join(d, "f%d.npy" % k)
            np.save(fp, np.asfortranarray(a))
            hdr = open(fp, "rb").read(128)
            # (A zero-size array is both C- and Fortran-contiguous: NumPy
            # writes it in C order.)
            check(b"'fortran_order': True" in hdr or a.size == 0, "%s: NumPy wrote C order" % tag)
            dp = os.path.join(d, "e%d.decomposed" % k)
            write_decomposed(dp, name, [e], [layout_for(len(shape), k)])
            cp = os.path.join(d, "c%d.npy" % k)
            np.save(cp, a)
            j = compare_json([cp, fp, "--equal-nan"], 0)
            if j:
                check(j["tensors"][0]["mismatches"] == 0 and
                      j["tensors"][0]["max_abs_error"] in (0, 0.0, None), "%s: differs from C order" % tag)
            j = compare_json([dp, fp, "--mode", "numpy"])
            if j:
                t = j["tensors"][0]
                check(t["actual"]["shape"] == list(shape), "%s: shape" % tag)
                close = np.isclose(numpy_native(name, a), numpy_native(name, e), rtol=1e-5, atol=1e-8)
                check(t["mismatches"] == int((~close).sum()), "%s: mismatches" % tag)
                check_metrics(tag, t, name, e, a, shape)
            r = run(["stats", fp, "--json"], 0)
            if r.returncode == 0:
                t = json.loads(r.stdout)["tensors"][0]
                v = as_values(name, a).reshape(-1)
                nan = np.isnan(v)
                first = int(np.flatnonzero(nan)[0]) if nan.any() else None
                want_first = [int(x) for x in np.unravel_index(first, shape)] if first is not None else None
                check(t["first_nan_index"] == want_first, "%s: first_nan_index" % tag)
            k += 1


def greatest_relative_difference():
    """An infinite expected value against a finite actual one: torch's
    assert_close reports the greatest relative difference as nan (|3 - inf|
    / |inf|), and so must compare, at the same index; an infinite actual
    against a finite expected is inf."""
    for e, a, want, index in (([float("inf"), 1.0, 2.0], [3.0, 1.0, 3.0], "nan", [0]),
                              ([3.0, 2.0], [float("inf"), 3.0], "inf", [0])):
        d = os.path.join(SCRATCH, "rel_%s" % want)
        os.makedirs(d, exist_ok=True)
        ep, ap = os.path.join(d, "e.npy"), os.path.join(d, "a.npy")
        np.save(ep, np.array(e, np.float32))
        np.save(ap, np.array(a, np.float32))
        j = compare_json([ep, ap], want_rc=1)
        if j is None:
            continue
        t = j["tensors"][0]
        check(t["max_rel_error"] == want and t["max_rel_error_index"] == index,
              "rel of %s against %s: %r at %r, want %r at %r" % (
                  e, a, t["max_rel_error"], t["max_rel_error_index"], want, index))
        try:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(e))
            check(False, "torch found %s and %s close" % (a, e))
        except AssertionError as err:
            check("Greatest relative difference: %s at index (%d,)" % (want, index[0])
                  in str(err), "torch says %r" % str(err))


def main():
    global CLI, SCRATCH
    CLI, SCRATCH = sys.argv[1], sys.argv[2]
    os.makedirs(SCRATCH, exist_ok=True)
    if torch is None:
        print("compare_interop: PyTorch is required (python3-torch)", file=sys.stderr)
        return 1
    k = 0
    for name in TYPES:
        for shape in SHAPES:
            compare_case(name, shape, k, as_npy_side=(k % 4 == 3))
            stats_case(name, shape, k)
            k += 1
    cli_errors()
    classic_cases()
    pt_cases()
    fortran_cases()
    greatest_relative_difference()
    print("compare_interop: %d cases (and the classic, .pt and Fortran-order sides), "
          "%d failures" % (k, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
