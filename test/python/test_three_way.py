"""decomposed.three_way(), compare(..., plot=...) and decomposed.plot: the
package's face of the three-way comparison (docs/compare.md, "Three-way
comparison"). The metrics are checked against NumPy here in brief;
test/three_way_interop.py is the full oracle."""
import math
import os
import sys
import types
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import decomposed

SVG = "{http://www.w3.org/2000/svg}"


def _sides(tmp_path, n=500, scale=1e-2, seed=0, tag=""):
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(n).astype(np.float32)
    e = (b + 1e-2 * rng.standard_normal(n)).astype(np.float32)
    a = (b + scale * rng.standard_normal(n)).astype(np.float32)
    paths = []
    for name, x in (("e", e), ("a", a), ("b", b)):
        p = tmp_path / ("%s%s.npy" % (name, tag))
        np.save(p, x)
        paths.append(p)
    return paths, (e, a, b)


def _bc(t, r):
    lo, hi = min(t.min(), r.min()), max(t.max(), r.max())
    if lo == hi:
        return 1.0
    edges = np.linspace(lo, hi, 101)
    p = np.histogram(t, edges)[0]
    q = np.histogram(r, edges)[0]
    return float(np.clip(np.sum(np.sqrt(p / (p.sum() + 1e-10) * (q / (q.sum() + 1e-10)))), 0, 1))


def test_three_way_metrics_are_numpys(tmp_path):
    (pe, pa, pb), (e, a, b) = _sides(tmp_path, scale=2e-2)
    r = decomposed.three_way(pe, pa, pb)
    t = np.abs(a.astype(np.float64) - b)
    ref = np.abs(e.astype(np.float64) - b)
    m = r["tensors"][0]
    assert m["sigma_ratio"] == pytest.approx(math.sqrt(np.mean(t * t) / np.mean(ref * ref)), rel=1e-12)
    assert m["bc"] == pytest.approx(_bc(t.astype(np.float32), ref.astype(np.float32)), abs=1e-12)
    assert m["worst_linf_ratio"] == pytest.approx(t.max() / ref.max(), rel=1e-12)
    assert isinstance(m["histogram"]["edges"], np.ndarray)
    assert m["histogram"]["target"].dtype == np.int64
    assert m["histogram"]["target"].sum() == 500 == m["histogram"]["reference"].sum()
    assert len(m["quantiles"]["levels"]) == 101
    np.testing.assert_allclose(m["quantiles"]["target"],
                               np.quantile(t.astype(np.float32).astype(np.float64),
                                           np.linspace(0, 1, 101)), rtol=2.0 ** -10)
    assert r["pass"] is False and m["failures"] == ["distribution"]
    # Thresholds are arguments.
    loose = decomposed.three_way(pe, pa, pb, max_sigma_ratio=3.0)
    assert loose["pass"] is True


def test_three_way_runs_are_lists_paired_by_position(tmp_path):
    s0, v0 = _sides(tmp_path, seed=1, tag="0")
    s1, v1 = _sides(tmp_path, seed=2, scale=4e-2, tag="1")
    r = decomposed.three_way([s0[0], s1[0]], [s0[1], s1[1]], [s0[2], s1[2]])
    assert len(r["inputs"]) == 2 and [i["run"] for i in r["inputs"]] == [0, 1]
    assert r["tensors"][0]["worst_l2_input"] == 1
    t = np.concatenate([np.abs(v[1].astype(np.float64) - v[2]) for v in (v0, v1)])
    ref = np.concatenate([np.abs(v[0].astype(np.float64) - v[2]) for v in (v0, v1)])
    assert r["all"]["sigma_ratio"] == pytest.approx(math.sqrt(np.mean(t * t) / np.mean(ref * ref)),
                                                    rel=1e-12)
    with pytest.raises(ValueError, match="as many sides"):
        decomposed.three_way([s0[0], s1[0]], [s0[1]], [s0[2], s1[2]])


def test_zero_reference_error_is_inf_not_a_division(tmp_path):
    (pe, pa, pb), (e, a, b) = _sides(tmp_path)
    np.save(pe, b)
    r = decomposed.three_way(pe, pa, pb)
    m = r["tensors"][0]
    assert m["zero_reference_error"] is True
    assert m["sigma_ratio"] == math.inf and m["worst_linf_ratio"] == math.inf
    assert r["pass"] is False


def test_three_way_plot_is_an_svg(tmp_path):
    (pe, pa, pb), _ = _sides(tmp_path, n=300)
    out = tmp_path / "x.svg"
    r = decomposed.three_way(pe, pa, pb, plot=out)
    root = ET.parse(out).getroot()
    assert root.tag == SVG + "svg"
    bars = [int(x.get("data-count")) for x in root.iter(SVG + "rect")
            if x.get("class") == "bin target"]
    assert sum(bars) == r["tensors"][0]["counted"] == 300


def test_errors_name_the_input(tmp_path):
    (pe, pa, pb), _ = _sides(tmp_path)
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY no")
    with pytest.raises(decomposed.FormatError, match="bad.npy"):
        decomposed.three_way(pe, pa, bad)
    with pytest.raises(ValueError, match="bins"):
        decomposed.three_way(pe, pa, pb, bins=0)
    with pytest.raises(OSError, match="x.svg"):
        decomposed.three_way(pe, pa, pb, plot=tmp_path / "no" / "such" / "x.svg")


def test_compare_plot_samples_the_same_elements_of_both_sides(tmp_path):
    (pe, pa, _), (e, a, _) = _sides(tmp_path, n=5000)
    out = tmp_path / "s.svg"
    r = decomposed.compare(pe, pa, plot=out, plot_points=200)
    assert r["pass"] is False and r["tensors"][0]["status"] == "fail"
    s = r["scatter"][0]
    assert s["index"] == 0 and s["elements"] == 5000
    idx = s["element"]
    assert len(idx) == 200 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(s["expected"], e[idx].astype(np.float64))
    np.testing.assert_array_equal(s["actual"], a[idx].astype(np.float64))
    root = ET.parse(out).getroot()
    assert sum(1 for c in root.iter(SVG + "circle") if c.get("class") == "point") == 200
    # plot=True: the data alone, no file; the same sample (a fixed seed).
    again = decomposed.compare(pe, pa, plot=True, plot_points=200)
    np.testing.assert_array_equal(again["scatter"][0]["element"], idx)
    # Without plot the report is compare's own.
    plain = decomposed.compare(pe, pa)
    assert "scatter" not in plain
    assert plain["tensors"] == r["tensors"]


class _Recorder:
    """Stands in for a matplotlib Figure / Axes / pyplot: records calls."""

    def __init__(self, log, name):
        self._log, self._name = log, name

    def __getattr__(self, attr):
        def call(*args, **kwargs):
            self._log.append((self._name, attr))
            if attr == "subplots":
                n = args[1] if len(args) > 1 else 1
                axes = [_Recorder(self._log, "ax%d" % k) for k in range(n)]
                return _Recorder(self._log, "fig"), (axes[0] if n == 1 else tuple(axes))
            if attr == "gcf":
                return _Recorder(self._log, "fig")
            return None
        return call


def test_plot_helpers_import_matplotlib_lazily(tmp_path, monkeypatch):
    (pe, pa, pb), _ = _sides(tmp_path)
    r = decomposed.three_way(pe, pa, pb)
    if "matplotlib" not in sys.modules:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="apt-get install python3-matplotlib"):
                decomposed.plot.three_way(r)
    # With a stand-in pyplot, each helper draws what it says.
    log = []
    fake = types.ModuleType("matplotlib")
    pyplot = _Recorder(log, "plt")
    fake.pyplot = pyplot
    monkeypatch.setitem(sys.modules, "matplotlib", fake)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)
    decomposed.plot.three_way(r, output_path=str(tmp_path / "x.png"))
    calls = {(who, what) for who, what in log}
    assert ("ax0", "bar") in calls and ("ax0", "axvline") in calls
    assert ("ax0", "set_yscale") in calls
    assert ("ax1", "scatter") in calls and ("ax1", "plot") in calls
    assert ("fig", "savefig") in calls
    log.clear()
    c = decomposed.compare(pe, pa, plot=True, plot_points=50)
    decomposed.plot.scatter(c["scatter"][0], output_path=str(tmp_path / "s.png"))
    assert ("ax0", "scatter") in {(w, a) for w, a in log}
