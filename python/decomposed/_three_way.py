"""The three-way comparison and compare's pictures (docs/compare.md,
"Three-way comparison"): decomposed.three_way() and compare(..., plot=...).

    r = decomposed.three_way("cpu_bf16/", "neuron.decomposed_hlo_snapshot",
                             "cpu_fp32/", plot="errors.svg")
    r["pass"], r["all"]["sigma_ratio"], r["all"]["bc"]
    t = r["tensors"][0]
    t["histogram"]["edges"], t["histogram"]["target"]     # NumPy arrays
    t["quantiles"]["reference"], t["quantiles"]["target"]  # the QQ-plot

Several runs (e.g. ten captured calls) are lists, paired by position:
three_way([e0, e1], [a0, a1], [b0, b1]).
"""
import json as _json
import os as _os

import numpy as _np

from . import _decomposed


def _paths(x):
    if isinstance(x, (list, tuple)):
        return [_os.fspath(p) for p in x]
    return [_os.fspath(x)]


def _dtype_map(d):
    return {int(k): str(v) for k, v in (d or {}).items()}


def _ratio(v):
    """A JSON ratio as a float: "inf" -> inf, null -> None."""
    if isinstance(v, str):
        return float(v)
    return v


def _arrays(level):
    h = level.get("histogram")
    if h is not None:
        h["edges"] = _np.array([_ratio(e) for e in h["edges"]], dtype=_np.float64)
        h["target"] = _np.array(h["target"], dtype=_np.int64)
        h["reference"] = _np.array(h["reference"], dtype=_np.int64)
    q = level.get("quantiles")
    if q is not None:
        for k in ("levels", "target", "reference"):
            q[k] = _np.array(q[k], dtype=_np.float64)
    for k in ("sigma_ratio", "bc", "linf_ratio", "l2_ratio", "worst_linf_ratio",
              "worst_l2_ratio"):
        if k in level:
            level[k] = _ratio(level[k])
    return level


def three_way(expected, actual, baseline, *, inputs=False, dtypes=None,
              bc_threshold=0.99, max_sigma_ratio=1.0, max_linf_ratio=5.0,
              max_l2_ratio=3.0, bins=100, quantiles=101, equal_nan=False,
              plot=None):
    """`decomposed compare EXPECTED ACTUAL --baseline BASELINE --json` as a
    dict, with each histogram and quantile list as a NumPy array and each
    ratio as a float (inf where the reference error is 0 and the target's
    is not). Each side is a path of any form compare reads, or a list of
    them (one per run, paired by position). `plot` writes the SVG picture.
    """
    e, a, b = _paths(expected), _paths(actual), _paths(baseline)
    r = _json.loads(_decomposed._three_way_json(
        e, a, b, bool(inputs), _dtype_map(dtypes), float(bc_threshold),
        float(max_sigma_ratio), float(max_linf_ratio), float(max_l2_ratio),
        int(bins), int(quantiles), bool(equal_nan),
        None if plot is None else _os.fspath(plot)))
    for t in r["tensors"]:
        _arrays(t)
    for i in r["inputs"]:
        _arrays(i)
    _arrays(r["all"])
    return r


def _compare_plot(expected, actual, plot, plot_points, inputs, mode, rtol, atol,
                  equal_nan, allow_dtype_mismatch, expected_dtypes, actual_dtypes):
    """compare() with plot=: the report, plus "scatter": per tensor the
    sampled element indices and their expected and actual values (NumPy
    arrays), as drawn in the SVG."""
    r = _json.loads(_decomposed._compare_plot_json(
        _os.fspath(expected), _os.fspath(actual),
        None if plot is True else _os.fspath(plot), int(plot_points),
        bool(inputs), mode, rtol, atol, bool(equal_nan),
        bool(allow_dtype_mismatch), _dtype_map(expected_dtypes),
        _dtype_map(actual_dtypes)))
    for s in r["scatter"]:
        s["element"] = _np.array(s["element"], dtype=_np.int64)
        for k in ("expected", "actual"):
            s[k] = _np.array([_np.nan if v is None else float(v) for v in s[k]],
                             dtype=_np.float64)
    return r
