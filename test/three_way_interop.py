#!/usr/bin/python3
"""Interop test of `decomposed compare --baseline` (the three-way comparison)
and of `compare --plot` against an independent NumPy computation of the
definitions in Neuron's module test guidelines and vLLM-Neuron's
assert_close_three_way (docs/compare.md, "Three-way comparison"):

  * target error t = |ACTUAL - BASELINE|, reference error r = |EXPECTED -
    BASELINE| in float64, 0 where the values are equal; elements where
    either error (or its float32 rounding) is not finite are left out;
  * sigma-ratio RMS(t) / RMS(r), L-inf ratio max t / max r, L2 ratio
    ||t|| / ||r||, per input, and over each tensor's and all inputs with
    the worst input ratios; x / 0 is inf, 0 / 0 is 0;
  * BC: vLLM-Neuron's _compute_bc on the float32 errors: 100 bins of
    np.linspace(min, max) over both sets, np.histogram, sum sqrt(p q) with
    p = h / (h.sum() + 1e-10), clipped; 1 when min == max;
  * QQ quantiles np.quantile(t, np.linspace(0, 1, 101)), within the
    sketch's 2^-11 relative bucket width;
  * PASS: (BC >= 0.99 or sigma <= 1) and worst L-inf < 5 and worst L2 < 3.

Random error sets of several sizes and dtypes (f16, f32, f64, bf16 as .pt,
a decomposed snapshot in column-major layout), zero reference errors, NaN
and Inf, several runs of several tensors; then the guidelines' examples
of pass and fail built as sides (BF16 quantization matched, a target more
accurate than the reference, errors nine times wider, an RMSNorm with the
wrong epsilon, one outlier element, one bad input among twenty); then the
pictures: the SVG parses as XML, each histogram's bins sum to the counted
elements and match the JSON, rsvg-convert renders it to a PNG that is not
blank (red and blue bars, green QQ points); the two-sided --plot scatter
holds the sampled points; exit codes 0, 1 and 2.

usage: three_way_interop.py <decomposed CLI> <scratch dir>
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unpack_interop as enc  # noqa: E402  (the hand-written spec encoder)

import torch  # noqa: E402  (python3-torch: bf16 sides as torch.save files)

CLI = None
SCRATCH = None
failures = []
rng = np.random.default_rng(20261201)
SVG = "{http://www.w3.org/2000/svg}"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def close(got, want, what, rtol=1e-12, atol=0.0):
    if want is None or (isinstance(want, float) and math.isinf(want)):
        ok = got == ("inf" if want is not None else None)
    elif got is None or isinstance(got, str):
        ok = False
    else:
        ok = abs(got - want) <= atol + rtol * abs(want)
    check(ok, "%s: got %r, want %r" % (what, got, want))


# ---------------------------------------------------------------- the oracle

def errors(x, b, equal_nan=False):
    x = np.asarray(x, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    with np.errstate(invalid="ignore"):
        d = np.abs(x - b)
    d[x == b] = 0.0
    if equal_nan:
        d[np.isnan(x) & np.isnan(b)] = 0.0
    return d


def ratio(x, y):
    if y > 0:
        return x / y
    return 0.0 if x == 0 else math.inf


def vllm_bc(e1, e2, num_bins=100):
    """vLLM-Neuron's _compute_bc, as its tensor_compare.py writes it."""
    if len(e1) == 0 or len(e2) == 0:
        return 0.0
    min_val = min(e1.min(), e2.min())
    max_val = max(e1.max(), e2.max())
    if min_val == max_val:
        return 1.0
    bins = np.linspace(min_val, max_val, num_bins + 1)
    h1, _ = np.histogram(e1, bins=bins)
    h2, _ = np.histogram(e2, bins=bins)
    p1 = h1 / (h1.sum() + 1e-10)
    p2 = h2 / (h2.sum() + 1e-10)
    return float(np.clip(np.sum(np.sqrt(p1 * p2)), 0.0, 1.0))


def oracle_input(e, a, b, equal_nan=False):
    t = errors(a, b, equal_nan)
    r = errors(e, b, equal_nan)
    t32 = t.astype(np.float32)
    r32 = r.astype(np.float32)
    tf = np.isfinite(t32)
    rf = np.isfinite(r32)
    keep = tf & rf
    return {"t": t[keep], "r": r[keep], "t32": t32[keep], "r32": r32[keep],
            "elements": t.size, "target_only": int(np.sum(~tf & rf)),
            "t_nonfinite": int(np.sum(~tf)), "r_nonfinite": int(np.sum(~rf))}


def oracle_level(parts, bins=100):
    """Metrics of a level from its inputs' oracle_input results."""
    t = np.concatenate([p["t"] for p in parts]) if parts else np.zeros(0)
    r = np.concatenate([p["r"] for p in parts]) if parts else np.zeros(0)
    t32 = np.concatenate([p["t32"] for p in parts]) if parts else np.zeros(0, np.float32)
    r32 = np.concatenate([p["r32"] for p in parts]) if parts else np.zeros(0, np.float32)
    out = {"counted": t.size, "target_only": sum(p["target_only"] for p in parts)}
    if t.size == 0:
        out.update(sigma=None, bc=None, linf=None, l2=None, t_rms=None, r_rms=None)
        return out
    out["t_rms"] = math.sqrt(np.mean(t * t))
    out["r_rms"] = math.sqrt(np.mean(r * r))
    out["t_linf"] = float(t.max())
    out["r_linf"] = float(r.max())
    out["sigma"] = ratio(out["t_rms"], out["r_rms"])
    out["bc"] = vllm_bc(t32, r32, bins)
    lo = float(min(t32.min(), r32.min()))
    hi = float(max(t32.max(), r32.max()))
    edges = np.linspace(lo, hi, bins + 1)
    out["edges"] = edges
    out["t_hist"] = np.histogram(t32, bins=edges)[0]
    out["r_hist"] = np.histogram(r32, bins=edges)[0]
    levels = np.linspace(0, 1, 101)
    out["t_q"] = np.quantile(t32.astype(np.float64), levels)
    out["r_q"] = np.quantile(r32.astype(np.float64), levels)
    linfs, l2s = [], []
    for p in parts:
        if p["t"].size:
            linfs.append(ratio(p["t"].max(), p["r"].max()))
            l2s.append(ratio(np.sqrt(np.sum(p["t"] ** 2)), np.sqrt(np.sum(p["r"] ** 2))))
    out["linf"] = max(linfs)
    out["l2"] = max(l2s)
    return out


def verdict(m, bc_t=0.99, sigma_t=1.0, linf_t=5.0, l2_t=3.0):
    ok = m["target_only"] == 0
    if m["counted"]:
        ok = ok and (m["bc"] >= bc_t or m["sigma"] <= sigma_t)
        ok = ok and m["linf"] < linf_t and m["l2"] < l2_t
    return ok


def check_level(got, want, what, rtol=1e-12):
    check(got["counted"] == want["counted"], "%s counted %r != %r" % (what, got["counted"], want["counted"]))
    check(got["target_only_nonfinite"] == want["target_only"], what + " target_only_nonfinite")
    if want["counted"] == 0:
        check(got["sigma_ratio"] is None and got["bc"] is None, what + " metrics should be null")
        return
    close(got["target"]["rms"], want["t_rms"], what + " target rms", rtol)
    close(got["reference"]["rms"], want["r_rms"], what + " reference rms", rtol)
    close(got["target"]["linf"], want["t_linf"], what + " target linf", rtol)
    close(got["sigma_ratio"], want["sigma"], what + " sigma_ratio", rtol)
    close(got["bc"], want["bc"], what + " bc", 1e-12)
    close(got["worst_linf_ratio"], want["linf"], what + " worst_linf_ratio", rtol)
    close(got["worst_l2_ratio"], want["l2"], what + " worst_l2_ratio", rtol)
    h = got["histogram"]
    check(h["target"] == [int(x) for x in want["t_hist"]], what + " target histogram")
    check(h["reference"] == [int(x) for x in want["r_hist"]], what + " reference histogram")
    check(len(h["edges"]) == len(want["edges"]) and
          all(g == float(w) for g, w in zip(h["edges"], want["edges"])),
          what + " edges equal np.linspace's")
    check(sum(h["target"]) == want["counted"] and sum(h["reference"]) == want["counted"],
          what + " bins sum to the element count")
    q = got["quantiles"]
    for name, key in (("target", "t_q"), ("reference", "r_q")):
        for g, w in zip(q[name], want[key]):
            if abs(g - w) > 2.0 ** -10 * abs(w) + 1e-300:
                check(False, "%s %s quantile %r vs np.quantile %r" % (what, name, g, w))
                break
    check(got["pass"] == verdict(want), "%s pass %r, oracle %r" % (what, got["pass"], verdict(want)))


# ---------------------------------------------------------------- sides

def npy(path, arr):
    np.save(path, arr)
    return path


def pt_bf16(path, arr):
    torch.save(torch.from_numpy(np.ascontiguousarray(arr, np.float32)).to(torch.bfloat16), path)
    return path


def bf16_values(arr):
    return torch.from_numpy(np.asarray(arr, np.float32)).to(torch.bfloat16).to(torch.float32).numpy()


def unpack_dir(path, arrays):
    os.makedirs(path, exist_ok=True)
    for j, a in enumerate(arrays):
        np.save(os.path.join(path, "snapshot_output%d.npy" % j), a)
    return path


def decomposed_colmajor(path, arrays):
    """A decomposed snapshot whose outputs are F32 literals in column-major
    layout (read through the decoder and a transpose)."""
    lits = []
    for a in arrays:
        a = np.asarray(a, np.float32)
        lits.append(enc.literal("F32", a, list(range(a.ndim)), "canonical"))
    with open(path, "wb") as f:
        f.write(enc.decomposed_file([], lits, True))
    return path


def run(args, want_rc=None):
    p = subprocess.run([CLI, "compare"] + args, capture_output=True, text=True)
    if want_rc is not None:
        check(p.returncode == want_rc, "compare %s: exit %d, want %d; stderr %s" %
              (" ".join(args), p.returncode, want_rc, p.stderr[-400:]))
    return p


def three_way(triples, extra=(), want_rc=None):
    """compare --json over runs [(E, A, B), ...]; the JSON report."""
    args = []
    for e, a, _ in triples:
        args += [e, a]
    for _, _, b in triples:
        args += ["--baseline", b]
    p = run(args + ["--json"] + list(extra), want_rc)
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, "no JSON from compare %s: %s" % (" ".join(args), p.stderr[-400:]))
        return None


def d(name):
    p = os.path.join(SCRATCH, name)
    return p


# ---------------------------------------------------------------- cases

def random_sets():
    for n, dtype, tscale in [(1, np.float32, 1e-2), (7, np.float32, 3e-2), (1000, np.float64, 1e-2),
                             (40000, np.float32, 1.05e-2), (513, np.float16, 2e-2)]:
        b = rng.standard_normal(n).astype(np.float32)
        e = (b + 1e-2 * rng.standard_normal(n)).astype(dtype)
        a = (b + tscale * rng.standard_normal(n)).astype(dtype)
        what = "random n=%d %s" % (n, np.dtype(dtype).name)
        rep = three_way([(npy(d("e.npy"), e), npy(d("a.npy"), a), npy(d("b.npy"), b))])
        if rep is None:
            continue
        want = oracle_level([oracle_input(e, a, b)])
        check_level(rep["tensors"][0], want, what)
        check_level(rep["all"], want, what + " (all)")
        i = rep["inputs"][0]
        close(i["linf_ratio"], want["linf"], what + " input linf_ratio")
        close(i["l2_ratio"], want["l2"], what + " input l2_ratio")
        close(i["bc"], want["bc"], what + " input bc")
        check(rep["pass"] == verdict(want), what + " report pass")
        k = int(np.argmax(errors(a, b)))
        check(i["max_target_error"]["index"] == [k], what + " max target error index")


def bf16_and_snapshot_sides():
    # EXPECTED bf16 (.pt), ACTUAL a decomposed snapshot in column-major
    # layout, BASELINE f32 .npy; two tensors of rank 2.
    bs = [rng.standard_normal((33, 17)).astype(np.float32), rng.standard_normal((4, 250)).astype(np.float32)]
    es = [bf16_values(x) for x in bs]
    acts = [(x * (1 + 2e-3 * rng.standard_normal(x.shape))).astype(np.float32) for x in bs]
    edir = d("e_pt")
    os.makedirs(edir, exist_ok=True)
    ok = True
    for j, (x, b) in enumerate(zip(es, bs)):
        pe = pt_bf16(os.path.join(edir, "e%d.pt" % j), b)
        pa = d("a%d.npy" % j)
        npy(pa, acts[j])
        pb = npy(d("b%d.npy" % j), b)
        rep = three_way([(pe, pa, pb)])
        if rep is None:
            ok = False
            continue
        check(rep["inputs"][0]["expected"]["dtype"] == "bf16", "bf16 .pt side dtype")
        check_level(rep["tensors"][0], oracle_level([oracle_input(x, acts[j], b)]), "bf16 .pt tensor %d" % j)
    # The snapshot with both tensors against unpack directories.
    snap = decomposed_colmajor(d("act.decomposed"), acts)
    rep = three_way([(unpack_dir(d("e_dir"), [x.astype(np.float32) for x in es]), snap,
                      unpack_dir(d("b_dir"), bs))])
    if rep is not None:
        parts = [oracle_input(x, a, b) for x, a, b in zip(es, acts, bs)]
        for j in range(2):
            check_level(rep["tensors"][j], oracle_level([parts[j]]), "snapshot side tensor %d" % j)
        check_level(rep["all"], oracle_level(parts), "snapshot side all")
    return ok


def zero_reference():
    b = rng.standard_normal(100).astype(np.float32)
    rep = three_way([(npy(d("e.npy"), b), npy(d("a.npy"), b), npy(d("b.npy"), b))], want_rc=0)
    if rep:
        t = rep["tensors"][0]
        check(t["zero_reference_error"] is True, "exact: zero_reference_error")
        check(t["sigma_ratio"] == 0 and t["worst_linf_ratio"] == 0 and t["worst_l2_ratio"] == 0,
              "exact: ratios 0 / 0 are 0, got %r" % t)
        check(t["bc"] == 1.0, "exact: BC 1")
    a = b.copy()
    a[3] += 1e-3
    rep = three_way([(npy(d("e.npy"), b), npy(d("a.npy"), a), npy(d("b.npy"), b))], want_rc=1)
    if rep:
        t = rep["tensors"][0]
        want = oracle_level([oracle_input(b, a, b)])
        check_level(t, want, "zero reference error, target not")
        check(t["sigma_ratio"] == "inf" and t["worst_linf_ratio"] == "inf", "x / 0 is inf")
        check(t["zero_reference_error"] is True, "zero_reference_error named")
    p = run([d("e.npy"), d("a.npy"), "--baseline", d("b.npy")], want_rc=1)
    check("every reference error is 0" in p.stdout, "the text names the zero reference error")


def nonfinite():
    b = rng.standard_normal(64).astype(np.float32)
    e = (b + 1e-2 * rng.standard_normal(64)).astype(np.float32)
    a = (b + 1e-2 * rng.standard_normal(64)).astype(np.float32)
    e[5] = a[5] = np.nan          # both NaN: left out, no failure
    b[9] = e[9] = a[9] = np.inf   # equal infinities: error 0
    a[11] = np.nan                # the target only: a failure
    rep = three_way([(npy(d("e.npy"), e), npy(d("a.npy"), a), npy(d("b.npy"), b))], want_rc=1)
    if rep:
        want = oracle_level([oracle_input(e, a, b)])
        check_level(rep["tensors"][0], want, "nonfinite")
        check(rep["tensors"][0]["failures"] == ["nonfinite"] or "nonfinite" in rep["tensors"][0]["failures"],
              "nonfinite named as the failure")
        check(rep["tensors"][0]["target"]["nonfinite"] == 2, "target nonfinite count")


def runs_and_tensors():
    # Three runs, two tensors each (unpack directories): per tensor over the
    # runs, and all.
    parts = [[], []]
    triples = []
    for k in range(3):
        es, acts, bs = [], [], []
        for j, n in enumerate((50, 300)):
            b = rng.standard_normal(n).astype(np.float32)
            bs.append(b)
            es.append((b + 1e-2 * rng.standard_normal(n)).astype(np.float32))
            acts.append((b + (1e-2 if j == 0 else 1e-2 * (1 + k)) * rng.standard_normal(n)).astype(np.float32))
            parts[j].append(oracle_input(es[-1], acts[-1], b))
        triples.append((unpack_dir(d("re%d" % k), es), unpack_dir(d("ra%d" % k), acts),
                        unpack_dir(d("rb%d" % k), bs)))
    rep = three_way(triples)
    if rep is None:
        return
    check(len(rep["inputs"]) == 6 and len(rep["tensors"]) == 2, "3 runs x 2 tensors")
    for j in range(2):
        check_level(rep["tensors"][j], oracle_level(parts[j]), "runs tensor %d" % j)
        check(rep["tensors"][j]["inputs"] == [j, 2 + j, 4 + j], "tensor %d inputs by run" % j)
    check_level(rep["all"], oracle_level(parts[0] + parts[1]), "runs all")
    want_pass = verdict(oracle_level(parts[0])) and verdict(oracle_level(parts[1])) and \
        verdict(oracle_level(parts[0] + parts[1]))
    check(rep["pass"] == want_pass, "runs: report pass is every tensor's and all's")


# ------------------------------------------------ the guidelines' examples

def guideline(name, triples, want_pass, want_failures=None):
    rep = three_way(triples, want_rc=0 if want_pass else 1)
    if rep is None:
        return None
    parts = [oracle_input(np.load(e), np.load(a), np.load(b)) for e, a, b in triples]
    check_level(rep["all"], oracle_level(parts), "guideline " + name)
    check(rep["pass"] == want_pass, "guideline %s: pass %r, want %r" % (name, rep["pass"], want_pass))
    if want_failures is not None:
        check(rep["all"]["failures"] == want_failures,
              "guideline %s: failures %r, want %r" % (name, rep["all"]["failures"], want_failures))
    return rep


def guidelines():
    # FP32 baseline of a matmul-like output, BF16 on CPU = the baseline
    # rounded to bf16; the device's BF16 rounds a value within a few ulps of
    # f32 of the baseline: the same quantization error. BC >= 0.99: PASS.
    x = rng.standard_normal((64, 256)).astype(np.float32)
    w = (rng.standard_normal((256, 128)) / 16).astype(np.float32)
    base = x @ w
    cpu = bf16_values(base)
    dev = bf16_values(base * (1 + 1e-7 * rng.standard_normal(base.shape)).astype(np.float32))
    rep = guideline("quantization matched", [(npy(d("g_e.npy"), cpu), npy(d("g_a.npy"), dev),
                                              npy(d("g_b.npy"), base))], True, [])
    if rep:
        check(rep["all"]["bc"] >= 0.99, "quantization matched: BC %r >= 0.99" % rep["all"]["bc"])
    # The device more accurate than the reference (f16 rounding against
    # bf16's): sigma-ratio <= 1 passes whatever BC says.
    dev16 = base.astype(np.float16).astype(np.float32)
    rep = guideline("target more accurate", [(npy(d("g_e.npy"), cpu), npy(d("g_a.npy"), dev16),
                                              npy(d("g_b.npy"), base))], True, [])
    if rep:
        check(rep["all"]["sigma_ratio"] <= 1 and rep["all"]["bc"] < 0.99,
              "target more accurate: sigma %r <= 1 with BC %r < 0.99" %
              (rep["all"]["sigma_ratio"], rep["all"]["bc"]))
    # "Neuron errors much wider than CPU": errors about nine times the
    # bf16 rounding's: sigma-ratio near 8.9, BC well below 0.99: FAIL.
    ref_rms = float(np.sqrt(np.mean((cpu - base) ** 2)))
    wide = bf16_values(base + 8.9 * ref_rms * rng.standard_normal(base.shape).astype(np.float32))
    rep = guideline("errors nine times wider", [(npy(d("g_e.npy"), cpu), npy(d("g_a.npy"), wide),
                                                 npy(d("g_b.npy"), base))], False)
    if rep:
        check(rep["all"]["sigma_ratio"] > 5 and rep["all"]["bc"] < 0.95 and
              "distribution" in rep["all"]["failures"],
              "nine times wider: sigma %r, BC %r" % (rep["all"]["sigma_ratio"], rep["all"]["bc"]))
    # RMSNorm with epsilon 1e-6 on the device instead of 1e-5: small
    # activations make epsilon matter; the device's errors are larger at
    # every quantile (the QQ-plot above the diagonal): FAIL.
    h = (rng.standard_normal((32, 512)) * 3e-3).astype(np.float32)
    def rmsnorm(v, eps):
        v = v.astype(np.float32)
        return (v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + np.float32(eps))).astype(np.float32)
    base = rmsnorm(h, 1e-5)
    cpu = bf16_values(rmsnorm(bf16_values(h), 1e-5))
    dev = bf16_values(rmsnorm(bf16_values(h), 1e-6))
    rep = guideline("rmsnorm epsilon", [(npy(d("g_e.npy"), cpu), npy(d("g_a.npy"), dev),
                                         npy(d("g_b.npy"), base))], False)
    if rep:
        t = rep["tensors"][0]["quantiles"]
        above = sum(1 for a, r in zip(t["target"][50:], t["reference"][50:]) if a > r)
        check(above >= 45, "rmsnorm epsilon: upper target quantiles above the reference's (%d)" % above)
    # One element far off: the distribution still matches (BC >= 0.99, one
    # outlier in 8192) but the L-inf guard fails it.
    base = (x @ w)
    cpu = bf16_values(base)
    dev = cpu.copy()
    dev[3, 7] += 12 * float(np.max(np.abs(cpu - base)))
    rep = guideline("one outlier", [(npy(d("g_e.npy"), cpu), npy(d("g_a.npy"), dev),
                                     npy(d("g_b.npy"), base))], False, ["linf_ratio"])
    # Twenty inputs, nineteen with half the reference's error, one with 3.2
    # times: the aggregate sigma-ratio is below 1, the worst L2 ratio is not
    # below 3: FAIL on the per-input guard only.
    triples = []
    for k in range(20):
        b = rng.standard_normal(200).astype(np.float32)
        noise = rng.standard_normal(200)
        e = (b + 1e-2 * noise).astype(np.float64)
        s = 3.2 if k == 7 else 0.5
        a = (b + 1e-2 * s * noise[::-1]).astype(np.float64)
        triples.append((npy(d("m_e%d.npy" % k), e), npy(d("m_a%d.npy" % k), a), npy(d("m_b%d.npy" % k), b)))
    rep = guideline("one bad input of twenty", triples, False, ["l2_ratio"])
    if rep:
        check(rep["all"]["sigma_ratio"] < 1, "one bad input: aggregate sigma %r < 1" % rep["all"]["sigma_ratio"])
        check(rep["all"]["worst_l2_input"] == 7, "one bad input: the worst is input 7")


# ---------------------------------------------------------------- pictures

def read_png(path):
    """RGB(A) pixels of an 8-bit non-interlaced PNG (rsvg-convert's output)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("PNG of depth %d type %d" % (depth, ctype))
            channels = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = channels * w
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int64)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        if f == 1:  # Sub: a running sum per channel
            line = np.cumsum(line.reshape(w, channels), axis=0).reshape(-1) & 255
        elif f == 2:  # Up
            line = (line + prev) & 255
        elif f in (3, 4):  # Average, Paeth: left to right
            cur = line.tolist()
            up = prev.tolist()
            for i in range(stride):
                a = cur[i - channels] if i >= channels else 0
                b = up[i]
                if f == 3:
                    cur[i] = (cur[i] + (a + b) // 2) & 255
                else:
                    c = up[i - channels] if i >= channels else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.array(cur, np.int64)
        out[y] = line
        prev = line
    return out.reshape(h, w, channels)


def render(svg, what):
    png = svg[:-4] + ".png"
    # Half size: enough to see every bar and point, and quick to decode.
    p = subprocess.run(["rsvg-convert", "-z", "0.5", "-o", png, svg], capture_output=True,
                       text=True)
    check(p.returncode == 0, "%s: rsvg-convert: %s" % (what, p.stderr))
    if p.returncode != 0:
        return None
    return read_png(png)


def pictures():
    b = rng.standard_normal((40, 50)).astype(np.float32)
    e = (b + 1e-2 * rng.standard_normal(b.shape)).astype(np.float32)
    a = (b + 3e-2 * rng.standard_normal(b.shape)).astype(np.float32)
    b2 = rng.standard_normal(300).astype(np.float32)
    e2 = (b2 + 1e-2 * rng.standard_normal(300)).astype(np.float32)
    a2 = (b2 + 1e-2 * rng.standard_normal(300)).astype(np.float32)
    svg = d("three.svg")
    if os.path.exists(svg):
        os.remove(svg)
    rep = three_way([(unpack_dir(d("pe"), [e, e2]), unpack_dir(d("pa"), [a, a2]),
                      unpack_dir(d("pb"), [b, b2]))], extra=["--plot", svg], want_rc=1)
    if rep is None or not os.path.exists(svg):
        check(False, "--plot wrote no SVG")
        return
    root = ET.parse(svg).getroot()
    check(root.tag == SVG + "svg", "the SVG's root is <svg>")
    rows = {g.get("data-tensor"): g for g in root.iter(SVG + "g") if g.get("class") == "row"}
    check(sorted(rows) == ["0", "1", "all"], "rows all, 0, 1: %r" % sorted(rows))
    for key, level in (("all", rep["all"]), ("0", rep["tensors"][0]), ("1", rep["tensors"][1])):
        row = rows.get(key)
        if row is None:
            continue
        for g in row.iter(SVG + "g"):
            if g.get("class") != "histogram":
                continue
            s = g.get("data-set")
            counts = [int(r.get("data-count")) for r in g.iter(SVG + "rect")]
            check(int(g.get("data-counted")) == level["counted"], "row %s %s: data-counted" % (key, s))
            check(sum(counts) == level["counted"],
                  "row %s %s: bins sum to %d, want %d" % (key, s, sum(counts), level["counted"]))
            check(sorted(counts) == sorted(c for c in level["histogram"][s] if c),
                  "row %s %s: the bars are the JSON's bins" % (key, s))
        qq = [c for c in row.iter(SVG + "circle") if c.get("class") == "qq"]
        check(len(qq) == 101, "row %s: 101 QQ points, got %d" % (key, len(qq)))
    check(len(rows) == 3 and list(rows)[1] == "0", "the failing tensor 0 is drawn first")
    px = render(svg, "three-way picture")
    if px is not None:
        rgb = px[..., :3].astype(int)
        red = np.sum((rgb[..., 0] - rgb[..., 2] > 60) & (rgb[..., 1] < 160))
        blue = np.sum((rgb[..., 2] - rgb[..., 0] > 60) & (rgb[..., 1] > 90))
        green = np.sum((rgb[..., 1] - rgb[..., 0] > 50) & (rgb[..., 1] - rgb[..., 2] > 50))
        nonwhite = np.sum(np.any(rgb < 240, axis=-1))
        check(px.shape[1] == 550 and px.shape[0] > 500, "picture size %r" % (px.shape,))
        check(nonwhite > 0.03 * px.shape[0] * px.shape[1], "the picture is not blank (%d)" % nonwhite)
        check(red > 500 and blue > 500 and green > 50,
              "red (target) %d, blue (reference) %d, green (QQ) %d pixels" % (red, blue, green))
    # Two-sided --plot: the scatter of actual against expected.
    svg2 = d("scatter.svg")
    p = run([d("pe"), d("pa"), "--plot", svg2, "--plot-points", "500"], want_rc=1)
    if os.path.exists(svg2):
        root = ET.parse(svg2).getroot()
        panels = {g.get("data-tensor"): g for g in root.iter(SVG + "g") if g.get("class") == "scatter"}
        check(sorted(panels) == ["0", "1"], "scatter panels 0 and 1")
        for key, n in (("0", 500), ("1", 300)):
            g = panels.get(key)
            if g is None:
                continue
            pts = [c for c in g.iter(SVG + "circle") if c.get("class") == "point"]
            check(len(pts) == n and int(g.get("data-points")) == n,
                  "scatter %s: %d points, want %d" % (key, len(pts), n))
        px = render(svg2, "scatter picture")
        if px is not None:
            rgb = px[..., :3].astype(int)
            steel = np.sum(rgb[..., 2] - rgb[..., 0] > 30)
            check(steel > 100, "scatter points drawn (%d pixels)" % steel)
    else:
        check(False, "two-sided --plot wrote no SVG: %s" % p.stderr)
    # A picture that cannot be written: exit 2, named; nothing left behind.
    p = run([d("pe"), d("pa"), "--baseline", d("pb"), "--plot", d("no/such/dir/x.svg")], want_rc=2)
    check("x.svg" in p.stderr, "unwritable --plot named: %s" % p.stderr)


def usage():
    b = npy(d("u_b.npy"), np.ones(3, np.float32))
    e = npy(d("u_e.npy"), np.ones(3, np.float32))
    run([e, e, e, "--baseline", b], want_rc=2)               # an odd side
    run([e, e, "--baseline", b, "--baseline", b], want_rc=2)  # two baselines, one pair
    run([e, e, e, e], want_rc=2)                             # more sides without --baseline
    run([e, e, "--baseline", b, "--rtol", "1"], want_rc=2)   # a two-sided option
    run([e, e, "--bins", "10"], want_rc=2)                   # a three-way option alone
    run([e, e, "--baseline", b, "--bc-threshold", "2"], want_rc=2)
    run([e, e, "--baseline", b, "--bins", "0"], want_rc=2)
    garbage = d("u_garbage.npy")
    with open(garbage, "wb") as f:
        f.write(b"\x93NUMPY garbage")
    p = run([e, e, "--baseline", garbage], want_rc=2)
    check("u_garbage.npy" in p.stderr, "an unreadable baseline is named: %s" % p.stderr)
    short = npy(d("u_short.npy"), np.ones(2, np.float32))
    rep = three_way([(e, e, short)], want_rc=1)
    if rep:
        check(rep["tensors"][0]["status"] == "shape_mismatch", "shape mismatch with the baseline")
    p = run([e, e, "--baseline", b, "--bc-threshold", "0.5", "--max-sigma-ratio", "2",
             "--max-linf-ratio", "7", "--max-l2-ratio", "4", "--bins", "10", "--json"], want_rc=0)
    try:
        j = json.loads(p.stdout)
        check(j["thresholds"] == {"bc": 0.5, "sigma_ratio": 2.0, "linf_ratio": 7.0, "l2_ratio": 4.0}
              and j["bins"] == 10 and len(j["all"]["histogram"]["edges"]) == 11,
              "thresholds and bins are options: %r" % j["thresholds"])
    except ValueError:
        check(False, "thresholds run gave no JSON")


def main():
    global CLI, SCRATCH
    CLI, SCRATCH = sys.argv[1], sys.argv[2]
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    if shutil.which("rsvg-convert") is None:
        check(False, "rsvg-convert is not installed (librsvg2-bin: scripts/setup-debian.sh --test)")
    random_sets()
    bf16_and_snapshot_sides()
    zero_reference()
    nonfinite()
    runs_and_tensors()
    guidelines()
    if shutil.which("rsvg-convert") is not None:
        pictures()
    usage()
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    shutil.rmtree(SCRATCH, ignore_errors=True)
    print("three_way_interop: all cases pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
