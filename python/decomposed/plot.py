"""matplotlib pictures of compare's results, as Neuron's module test
guidelines draw them (the library writes the same pictures as SVG itself:
compare(..., plot="x.svg"), three_way(..., plot="x.svg")).

    import decomposed, decomposed.plot
    r = decomposed.three_way(expected, actual, baseline)
    decomposed.plot.three_way(r, output_path="errors.png")   # both panels
    decomposed.plot.error_distributions(r["tensors"][0], ax=ax1)
    decomposed.plot.error_qqplot(r["tensors"][0], ax=ax2)
    decomposed.plot.scatter(decomposed.compare(e, a, plot=True)["scatter"][0])

matplotlib is imported when a helper is called, not with the package: it is
not needed for anything else. Where it is missing, the helpers raise
ImportError saying how to install it (Debian: apt-get install
python3-matplotlib).
"""

_INSTALL = ("decomposed.plot needs matplotlib, which is not installed: "
            "apt-get install python3-matplotlib (Debian), or pip install "
            "matplotlib")


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return plt


def _level(result, tensor):
    """The level to draw: a tensor's or "all" from a three_way() result, or
    a level dict itself."""
    if "histogram" in result:
        return result
    if tensor is None:
        return result["all"] if len(result["tensors"]) != 1 else result["tensors"][0]
    return result["tensors"][tensor]


def _fmt(v):
    return "-" if v is None else "%.4g" % v


def error_distributions(result, tensor=None, ax=None, output_path=None):
    """The histograms of the target error (red) and the reference error
    (blue) on the report's bins, log counts, each sigma (RMS) dashed."""
    plt = _pyplot()
    m = _level(result, tensor)
    standalone = ax is None
    if standalone:
        _, ax = plt.subplots(figsize=(8, 5))
    h = m["histogram"]
    edges = h["edges"]
    widths = edges[1:] - edges[:-1]
    ax.bar(edges[:-1], h["reference"], width=widths, align="edge", alpha=0.55,
           color="#1f77b4", label="reference (EXPECTED)")
    ax.bar(edges[:-1], h["target"], width=widths, align="edge", alpha=0.55,
           color="#d62728", label="target (ACTUAL)")
    ax.axvline(m["reference"]["rms"], color="#1f77b4", linestyle="--",
               label="reference sigma=%.4e" % m["reference"]["rms"])
    ax.axvline(m["target"]["rms"], color="#d62728", linestyle="--",
               label="target sigma=%.4e" % m["target"]["rms"])
    ax.set_yscale("log")
    ax.set_xlabel("|error| against BASELINE")
    ax.set_ylabel("count")
    ax.set_title("BC=%s  sigma-ratio=%s" % (_fmt(m["bc"]), _fmt(m["sigma_ratio"])))
    ax.legend(fontsize=8)
    if standalone:
        return _finish(plt, output_path)
    return ax


def error_qqplot(result, tensor=None, ax=None, output_path=None):
    """Target error quantiles against reference error quantiles, with the
    45-degree line."""
    plt = _pyplot()
    m = _level(result, tensor)
    standalone = ax is None
    if standalone:
        _, ax = plt.subplots(figsize=(6, 6))
    q = m["quantiles"]
    ax.scatter(q["reference"], q["target"], c="#2ca02c", s=8, alpha=0.75)
    lo = min(q["reference"].min(), q["target"].min())
    hi = max(q["reference"].max(), q["target"].max())
    ax.plot([lo, hi], [lo, hi], "r--", label="45-degree line")
    ax.set_xlabel("reference error quantiles")
    ax.set_ylabel("target error quantiles")
    ax.set_title("QQ-plot")
    ax.legend()
    if standalone:
        return _finish(plt, output_path)
    return ax


def three_way(result, tensor=None, output_path=None):
    """Both panels side by side, for one tensor (or all)."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 6))
    error_distributions(result, tensor, ax=ax1)
    error_qqplot(result, tensor, ax=ax2)
    m = _level(result, tensor)
    fig.suptitle("%s  worst L-inf ratio %s  worst L2 ratio %s" % (
        "PASS" if m["pass"] else "FAIL", _fmt(m.get("worst_linf_ratio")),
        _fmt(m.get("worst_l2_ratio"))))
    return _finish(plt, output_path, fig)


def scatter(points, ax=None, output_path=None):
    """Actual against expected for one entry of compare(..., plot=...)
    ["scatter"], with the y = x line."""
    plt = _pyplot()
    standalone = ax is None
    if standalone:
        _, ax = plt.subplots(figsize=(8, 8))
    e, a = points["expected"], points["actual"]
    ax.scatter(e, a, s=2, alpha=0.4, c="#4682b4")
    lo = min(e.min(), a.min())
    hi = max(e.max(), a.max())
    ax.plot([lo, hi], [lo, hi], "r--", linewidth=1, label="y = x")
    ax.set_xlabel("expected")
    ax.set_ylabel("actual")
    ax.set_title("tensor %d: %d of %d elements" % (points["index"], len(e),
                                                   points["elements"]))
    ax.legend()
    if standalone:
        return _finish(plt, output_path)
    return ax


def _finish(plt, output_path, fig=None):
    fig = fig or plt.gcf()
    fig.tight_layout()
    if output_path is not None:
        fig.savefig(output_path, dpi=150)
        plt.close(fig)
        return None
    return fig
