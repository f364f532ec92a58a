"""Tests of mlflow_imbalance.plots with real matplotlib (Agg), no mocks.

Reference values come from independent computations: scikit-learn's roc_curve and
precision_recall_curve, Brabec et al. (2020) eq. 8 written out by hand (and their Fig. 1
example), the Drummond–Holte cost lines and the B-ROC mapping of Cárdenas & Baras.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure

from mlflow_imbalance import metrics, plots
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots._legend import _LEGEND_WIDTH
from mlflow_imbalance.plots._style import _DEFAULT_FIGSIZE, _run_styles
from mlflow_imbalance.plots.roc import _log_densify

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # only to check that nothing is registered in pyplot

#: every test: no pyplot figure is created and rcParams are unchanged (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("no_global_state")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _scores(seed: int, n_pos: int, n_neg: int, mu: float, sd: float = 1.0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    s = np.r_[rng.normal(mu, sd, n_pos), rng.normal(0.0, 1.0, n_neg)]
    s = np.round(s, 2)  # ties, so tie batches (diagonal ROC segments) occur
    return y, s


@pytest.fixture(scope="module")
def data():
    """Two runs whose ROC curves cross (narrow vs wide positive score distributions).

    Uncompressed, so every scikit-learn point is one of ours (compression drops points on
    horizontal ROC segments; the property test below covers compressed counts).
    """
    ya, sa = _scores(1, 150, 3000, 2.0, 0.6)
    yb, sb = _scores(2, 150, 3000, 1.6, 2.0)
    return {
        "narrow": (ya, sa, RocCounts.from_scores(ya, sa, compress=False)),
        "wide": (yb, sb, RocCounts.from_scores(yb, sb, compress=False)),
    }


@pytest.fixture(scope="module")
def runs(data):
    return {name: c for name, (_, _, c) in data.items()}


def _line(ax, gid):
    found = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
    assert len(found) == 1, f"expected one line {gid!r}, found {len(found)}"
    return found[0]


def _lines(ax, prefix):
    return [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith(prefix)]


def _pointset(x, y, decimals=12):
    """The (x, y) points of a curve as a set, rounded to absorb last-bit differences."""
    return set(map(tuple, np.round(np.c_[x, y], decimals).tolist()))


def _legend_texts(ax):
    leg = ax.get_legend()
    assert leg is not None
    return [t.get_text() for t in leg.get_texts()]


# --------------------------------------------------------------------------- ROC


def test_roc_draws_on_given_ax_and_matches_sklearn(ax, data, runs):
    from sklearn.metrics import roc_auc_score, roc_curve

    out = plots.plot_roc(runs, ax=ax)
    assert out is ax
    for name, (y, s, c) in data.items():
        line = _line(ax, f"roc:{name}")
        fpr, tpr, _ = metrics.roc_curve(c)
        np.testing.assert_array_equal(line.get_xdata(), fpr)
        np.testing.assert_array_equal(line.get_ydata(), tpr)
        # independent reference: scikit-learn's curve with every threshold kept
        sk_fpr, sk_tpr, _ = roc_curve(y, s, drop_intermediate=False)
        pts = _pointset(line.get_xdata(), line.get_ydata())
        sk = _pointset(sk_fpr, sk_tpr)
        assert sk <= pts
        # legend carries the AUC
        assert any(f"{name} (AUC {roc_auc_score(y, s):.3f})" == t for t in _legend_texts(ax))
        hull = _line(ax, f"hull:{name}")
        h = metrics.convex_hull(c)
        np.testing.assert_array_equal(hull.get_xdata(), h.fpr)
    chance = _line(ax, "chance")
    np.testing.assert_array_equal(chance.get_xdata(), [0.0, 1.0])
    assert ax.get_xscale() == "linear"
    assert "FPR" in ax.get_xlabel() and "TPR" in ax.get_ylabel()
    assert len(ax.get_lines()) == 2 * len(runs) + 1  # curves, hulls, chance


def test_roc_log_scale_keeps_every_point_and_bends_straight_segments(ax, runs):
    plots.plot_roc(runs, ax=ax, log_fpr=True, chance=False)
    assert ax.get_xscale() == "log"
    assert "log scale" in ax.get_xlabel()
    x_zero = ax.get_xlim()[0]
    assert x_zero > 0
    # FPR = 0 has its own tick, labelled "0", left of the first decade and past a break mark
    ax.figure.canvas.draw()
    ticks = {float(t.get_loc()): t.label1.get_text() for t in ax.xaxis.get_major_ticks()}
    assert ticks[x_zero] == "0"
    first_decade = min(v for v in ticks if v > x_zero)
    assert ticks[first_decade].startswith("10")
    assert any(ln.get_gid() == "axis-break" for ln in ax.get_lines())
    for name, c in runs.items():
        fpr, tpr, _ = metrics.roc_curve(c)
        line = _line(ax, f"roc:{name}")
        x, y = line.get_xdata(), line.get_ydata()
        pts = _pointset(x, y)
        # every point of the curve is drawn; those at FPR = 0 on the "0" tick
        assert _pointset(np.where(fpr > 0, fpr, x_zero), tpr) <= pts
        assert np.all(np.diff(x) >= 0)
        # no point with FPR > 0 falls into the break, where it would read as FPR = 0
        assert np.min(fpr[fpr > 0]) >= first_decade
        h = metrics.convex_hull(c)
        hx = _line(ax, f"hull:{name}").get_xdata()
        assert hx.size > h.fpr.size  # long hull edges are sampled along the log axis


def test_roc_iso_performance_lines_are_tangent_to_all_runs(ax, data, runs):
    from sklearn.metrics import roc_curve

    slopes = [2.0, (25.0, "deployment")]
    plots.plot_roc(runs, ax=ax, iso_slopes=slopes)
    # independent: the best value of tpr - m fpr over every run's sklearn ROC points
    all_pts = np.vstack(
        [np.c_[roc_curve(y, s, drop_intermediate=False)[:2]] for y, s, _ in data.values()]
    )
    for m in (2.0, 25.0):
        line = _line(ax, f"iso:{m:.6g}")
        x, y = line.get_xdata(), line.get_ydata()
        intercept = y[0] - m * x[0]
        np.testing.assert_allclose(np.diff(y) / np.diff(x), m)
        best = np.max(all_pts[:, 1] - m * all_pts[:, 0])
        assert intercept == pytest.approx(best, abs=1e-12)
        point = _line(ax, f"iso_point:{m:.6g}")
        px, py = point.get_xdata()[0], point.get_ydata()[0]
        assert py - m * px == pytest.approx(best, abs=1e-12)
        assert np.all((y >= -1e-12) & (y <= 1 + 1e-12))
    assert any(t.startswith("deployment (touches ") for t in _legend_texts(ax))


def test_roc_iso_line_steeper_than_hull_touches_always_negative(ax):
    # the top score is a negative: the hull leaves the origin with finite slope 2 / 0.5 = 4
    c = RocCounts.from_scores([0, 1, 1, 0], [0.9, 0.8, 0.7, 0.1])
    plots.plot_roc({"r": c}, ax=ax, iso_slopes=[1e9, 0.5])
    flat = _line(ax, "iso_point:0.5")
    assert (flat.get_xdata()[0], flat.get_ydata()[0]) == (0.5, 1.0)
    point = _line(ax, "iso_point:1e+09")
    assert (point.get_xdata()[0], point.get_ydata()[0]) == (0.0, 0.0)
    assert any("always negative" in t for t in _legend_texts(ax))


def test_roc_bands_shaded_with_their_label(ax, runs):
    grid = np.linspace(0, 1, 11)
    band = (grid, np.clip(grid - 0.1, 0, 1), np.clip(grid + 0.2, 0, 1), "95% simultaneous (sup-t)")
    plots.plot_roc(runs, ax=ax, bands={"narrow": band})
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert [p.get_gid() for p in polys] == ["band:narrow"]
    assert "shaded: 95% simultaneous (sup-t)" in _legend_texts(ax)


def test_roc_accepts_single_counts_and_creates_unregistered_figure(runs):
    out = plots.plot_roc(runs["narrow"])
    assert isinstance(out.figure, Figure)
    assert isinstance(out.figure.canvas, FigureCanvasAgg)
    assert _line(out, "roc:run") is not None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"counts_by_name": {}}, "counts_by_name is empty"),
        ({"counts_by_name": [1, 2]}, "counts_by_name must be a mapping"),
        ({"counts_by_name": {"a": 3}}, r"counts_by_name\['a'\] must be a RocCounts"),
        ({"iso_slopes": [-1.0]}, "iso_slopes must be positive"),
        ({"bands": {"zzz": ([0, 1], [0, 1], [0, 1], "x")}}, "unknown name"),
        ({"bands": {"narrow": ([0, 1], [0], [0, 1], "x")}}, "one length"),
        ({"bands": {"narrow": ([0, 1], [0, 1], [0, 1], "")}}, "label"),
        ({"bands": {"narrow": ([0, 1], [0.5, 1], [0, 1], "x")}}, "lower exceeds upper"),
    ],
)
def test_roc_rejects_bad_input_naming_the_argument(runs, kwargs, match):
    kwargs = {"counts_by_name": runs, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        plots.plot_roc(kwargs.pop("counts_by_name"), **kwargs)


# --------------------------------------------------------------------------- PR


def test_pr_line_equals_metrics_and_passes_through_sklearn_points(ax, data, runs):
    from sklearn.metrics import precision_recall_curve

    out = plots.plot_pr(runs, ax=ax, points_per_segment=5)
    assert out is ax
    for name, (y, s, c) in data.items():
        line = _line(ax, f"pr:{name}:0")
        rec, prec = metrics.pr_curve(c, None, interpolate=True, points_per_segment=5)
        np.testing.assert_array_equal(line.get_xdata(), rec)
        np.testing.assert_array_equal(line.get_ydata(), prec)
        # at the test prevalence every sklearn PR point (a segment end) lies on our line
        sk_p, sk_r, _ = precision_recall_curve(y, s, drop_intermediate=False)
        ours = _pointset(line.get_xdata(), line.get_ydata(), 9)
        # the last sklearn point is its (recall 0, precision 1) anchor, not a threshold
        sk = _pointset(sk_r[:-1], sk_p[:-1], 9)
        assert sk <= ours
    eta = runs["narrow"].prevalence
    assert "test prevalence" in ax.get_title(loc="left")
    assert _line(ax, "chance").get_ydata()[0] == pytest.approx(eta)
    assert ax.get_xlabel().startswith("recall")


def test_pr_at_chosen_prevalence_uses_eq8(ax, runs):
    eta = 1e-3
    plots.plot_pr(runs, 1e-3, ax=ax, points_per_segment=1)
    for name, c in runs.items():
        line = _line(ax, f"pr:{name}:0")
        # Brabec eq. 8 at the stored points, written out independently
        t, f = c.tpr, c.fpr
        expected = t * eta / (t * eta + f * (1 - eta))
        np.testing.assert_allclose(line.get_ydata()[1:], expected, rtol=1e-12)
    assert "η = 0.001" in ax.get_title(loc="left")  # written as the text writes it


def test_pr_several_prevalences_one_style_each(ax, runs):
    plots.plot_pr(runs, [1e-2, 1e-4], ax=ax)
    lines = _lines(ax, "pr:")
    assert len(lines) == 4
    assert _line(ax, "pr:narrow:0").get_linestyle() != _line(ax, "pr:narrow:1").get_linestyle()
    assert len(_lines(ax, "chance")) == 2
    with pytest.raises(ValueError, match="bands need a single prevalence"):
        plots.plot_pr(runs, [1e-2, 1e-4], ax=ax, bands={"narrow": ([0, 1], [0, 0], [1, 1], "b")})
    with pytest.raises(ValueError, match="prevalence must lie strictly between 0 and 1"):
        plots.plot_pr(runs, 1.5, ax=ax)


# --------------------------------------------------------------------------- P3


def test_p3_brabec_figure_1_point(ax):
    eta = np.geomspace(1e-6, 0.5, 50)
    out = plots.plot_p3(
        {"clf": (0.6, 0.001, "TPR 60 %")}, eta, ax=ax, highlight=(0.1, [1e-3, 1e-4])
    )
    assert out is ax
    line = _line(ax, "p3:clf")
    np.testing.assert_allclose(line.get_xdata(), eta)
    np.testing.assert_allclose(line.get_ydata(), 0.6 * eta / (0.6 * eta + 0.001 * (1 - eta)))
    marks = _line(ax, "p3_at_deployment:clf")
    # Brabec Fig. 1: at η = 1e-3 precision is 0.6e-3 / (0.6e-3 + 0.999e-3) ≈ 0.375
    assert marks.get_ydata()[0] == pytest.approx(0.0006 / (0.0006 + 0.000999))
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "prevalence η (log scale)"
    assert [ln.get_xdata()[0] for ln in _lines(ax, "test_prevalence")] == [0.1]
    assert sorted(ln.get_xdata()[0] for ln in _lines(ax, "deployment_prevalence")) == [1e-4, 1e-3]


def test_p3_rejects_bad_points(ax):
    with pytest.raises(ValueError, match=r"operating_points\['x'\] fpr must be in \[0, 1\]"):
        plots.plot_p3({"x": (0.5, 2.0, "bad")}, ax=ax)
    with pytest.raises(ValueError, match="operating_points must be a non-empty mapping"):
        plots.plot_p3({}, ax=ax)


# --------------------------------------------------------------------------- metric vs η


def test_metric_vs_prevalence_flips_and_highlights(ax, runs):
    eta = metrics.default_prevalence_grid(num=60)
    sweeps = {n: (eta, metrics.average_precision(c, eta)) for n, c in runs.items()}
    band = (eta, sweeps["wide"][1] * 0.9, sweeps["wide"][1] * 1.1, "95% pointwise (bootstrap)")
    out = plots.plot_metric_vs_prevalence(
        sweeps,
        metric_label="average precision",
        ax=ax,
        bands={"wide": band},
        flip_points=[(3e-3, "narrow ↔ wide"), (2e-5, "other")],
        test_prevalence=runs["wide"].prevalence,
        deployment_prevalences=[1e-4],
        deployment_range=(1e-5, 1e-3),
    )
    assert out is ax
    for name in runs:
        np.testing.assert_allclose(_line(ax, f"sweep:{name}").get_ydata(), sweeps[name][1])
    flips = sorted(ln.get_xdata()[0] for ln in _lines(ax, "flip") if ln.get_gid() == "flip")
    assert flips == [2e-5, 3e-3]
    markers = sorted(ln.get_xdata()[0] for ln in _lines(ax, "flip_marker"))
    assert markers == [2e-5, 3e-3]
    assert [t.get_text() for t in ax.texts] == ["narrow ↔ wide", "other"]
    test_line = _line(ax, "test_prevalence")
    dep_line = _line(ax, "deployment_prevalence")
    assert test_line.get_xdata()[0] == pytest.approx(runs["wide"].prevalence)
    assert dep_line.get_xdata()[0] == 1e-4
    assert test_line.get_linestyle() != dep_line.get_linestyle()
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "average precision"
    texts = _legend_texts(ax)
    assert "shaded: 95% pointwise (bootstrap)" in texts
    assert "ranking flip η*" in texts and "deployment range" in texts
    polys = [c.get_gid() for c in ax.collections if isinstance(c, PolyCollection)]
    assert polys[0] == "band:wide"


def test_long_band_label_wraps_and_keeps_the_axes_in_a_constrained_figure(runs):
    # Regression: a one-line band label of ~100 characters pushed the outside legend so wide
    # that constrained layout collapsed the axes (a warning, and a clipped legend).
    eta = metrics.default_prevalence_grid(num=40)
    sweeps = {n: (eta, metrics.average_precision(c, eta)) for n, c in runs.items()}
    label = (
        "95% simultaneous band (count bootstrap asymmetric sup-t over prevalence grid "
        "(arcsine scale), B=1000), on 50 log-spaced η"
    )
    ax = plots.new_axes()
    band = (eta, sweeps["wide"][1] * 0.9, sweeps["wide"][1] * 1.1, label)
    plots.plot_metric_vs_prevalence(sweeps, metric_label="AP", ax=ax, bands={"wide": band})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "constrained_layout not applied" would raise here
        png = plots.figure_to_png(ax.figure, close=False)
    assert png.startswith(b"\x89PNG")
    texts = _legend_texts(ax)
    wrapped = [t for t in texts if t.startswith("shaded:")]
    assert len(wrapped) == 1 and "\n" in wrapped[0]
    assert max(len(line) for line in wrapped[0].splitlines()) <= _LEGEND_WIDTH
    assert wrapped[0].replace("\n", " ") == "shaded: " + label
    bbox = ax.get_position()
    assert bbox.width > 0.4  # the axes keep most of the figure's width
    plots.close_figure(ax.figure)


def test_metric_vs_prevalence_rejects_misaligned(ax):
    with pytest.raises(ValueError, match=r"sweeps\['a'\]: eta and values must be 1-d"):
        plots.plot_metric_vs_prevalence({"a": ([0.1, 0.2], [1.0])}, metric_label="AP", ax=ax)
    with pytest.raises(ValueError, match="flip_points eta must lie strictly between 0 and 1"):
        plots.plot_metric_vs_prevalence(
            {"a": ([0.1, 0.2], [1.0, 2.0])}, metric_label="AP", ax=ax, flip_points=[(0, "x")]
        )


# --------------------------------------------------------------------------- B-ROC


def test_broc_maps_hull_to_bayesian_false_alarm(ax, runs):
    etas = [1e-2, 1e-3]
    out = plots.plot_broc(runs, etas, ax=ax)
    assert out is ax
    assert len(_lines(ax, "broc:")) == len(runs) * len(etas)
    for name, c in runs.items():
        h = metrics.convex_hull(c)
        for j, eta in enumerate(etas):
            line = _line(ax, f"broc:{name}:{j}")
            x, y = line.get_xdata(), line.get_ydata()
            # each hull vertex (f, t) with t > 0 maps to B_FA = (1-η) f / (η t + (1-η) f)
            for f, t in zip(h.fpr, h.tpr, strict=True):
                if t > 0:
                    bfa = (1 - eta) * f / (eta * t + (1 - eta) * f)
                    k = np.flatnonzero(np.isclose(y, t))
                    assert np.any(np.isclose(x[k], bfa, atol=1e-12))
            assert x[-1] == pytest.approx(1 - eta) and y[-1] == 1.0  # (1,1) -> (1-η, 1)
    chance = sorted(ln.get_xdata()[0] for ln in _lines(ax, "chance"))
    assert chance == pytest.approx([1 - 1e-2, 1 - 1e-3])
    assert "1 − PPV" in ax.get_xlabel() and "P_D" in ax.get_ylabel()


# --------------------------------------------------------------------------- cost curves


def test_cost_curve_lines_envelope_and_trivial_classifiers(ax, runs):
    out = plots.plot_cost_curve(runs, cost_fp=1, cost_fn=10, ax=ax)
    assert out is ax
    colls = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert sorted(c.get_gid() for c in colls) == [f"cost_lines:{n}" for n in sorted(runs)]
    for name, c in runs.items():
        env = _line(ax, f"cost_envelope:{name}")
        pc, y = env.get_xdata(), env.get_ydata()
        # independent: min over hull vertices of the Drummond–Holte line FNR·PC + FPR·(1−PC)
        h = metrics.convex_hull(c)
        ref = np.min((1 - h.tpr)[:, None] * pc + h.fpr[:, None] * (1 - pc), axis=0)
        np.testing.assert_allclose(y, ref, atol=1e-12)
        assert np.all(y <= np.minimum(pc, 1 - pc) + 1e-12)  # never worse than trivial
        (coll,) = [x for x in colls if x.get_gid() == f"cost_lines:{name}"]
        assert len(coll.get_segments()) == h.fpr.size
    neg, pos = _line(ax, "always_negative"), _line(ax, "always_positive")
    np.testing.assert_allclose(neg.get_ydata(), neg.get_xdata())
    np.testing.assert_allclose(pos.get_ydata(), 1 - pos.get_xdata())
    assert "C_FN = 10" in ax.get_title(loc="left")
    with pytest.raises(ValueError, match="cost_fn must be positive"):
        plots.plot_cost_curve(runs, cost_fn=0, ax=ax)


# --------------------------------------------------------------------------- sample size


def test_sample_size_marks_where_test_set_is_too_small(ax):
    fpr = np.geomspace(1e-5, 1, 41)
    n_neg = 10_000
    width = 1.96 * np.sqrt((1 - fpr) / (fpr * n_neg))  # Wald relative half-width
    out = plots.plot_sample_size({"run": (fpr, width)}, tolerance=0.2, ax=ax, interval_label="W")
    assert out is ax
    limit = _line(ax, "size_limit:run").get_xdata()[0]
    assert width[fpr == limit][0] > 0.2
    assert np.all(width[fpr > limit] <= 0.2)
    assert _line(ax, "tolerance").get_ydata()[0] == 0.2
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "(W)" in ax.get_title(loc="left")
    plots.plot_sample_size({"run": (fpr, width)}, min_fpr={"run": 1e-3}, ax=ax)
    assert 1e-3 in [ln.get_xdata()[0] for ln in _lines(ax, "size_limit:run")]
    with pytest.raises(ValueError, match=r"widths_by_name\['run'\]: fpr must lie in"):
        plots.plot_sample_size({"run": ([0.0, 0.1], [1.0, 1.0])}, ax=ax)


# --------------------------------------------------------------------------- figures and output


def test_run_figures_all_keys_png_svg(runs):
    figs = plots.run_figures(runs["narrow"], prevalences=[1e-3, 1e-4], cost_fn=100, name="m")
    assert set(figs) == {"roc", "roc_log", "pr", "p3", "broc", "cost"}
    for fig in figs.values():
        assert isinstance(fig, Figure)
    roc_ax = figs["roc"].axes[0]
    assert len(_lines(roc_ax, "iso:")) + len(_lines(roc_ax, "iso_point:")) >= 2
    assert figs["roc_log"].axes[0].get_xscale() == "log"
    assert len(_lines(figs["pr"].axes[0], "pr:")) == 3  # test η and two deployment η
    assert len(_lines(figs["p3"].axes[0], "p3:")) == 3
    png = plots.figure_to_png(figs["roc"])
    assert png.startswith(PNG_SIGNATURE)
    # deterministic: the same inputs give the same bytes
    again = plots.run_figures(runs["narrow"], prevalences=[1e-3, 1e-4], cost_fn=100, name="m")
    assert png == plots.figure_to_png(again["roc"])
    svg = plots.figure_to_svg(figs["pr"])
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    allowed = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    import re

    assert set(re.findall(r"https?://[^\"'\s<>)]*", svg)) <= allowed
    for el in root.iter():
        for key, value in el.attrib.items():
            if key.endswith("href"):
                assert not value.startswith(("http", "//")), value
    assert svg == plots.figure_to_svg(again["pr"])  # deterministic ids
    plots.close_figure(figs["cost"])
    assert not figs["cost"].axes


def test_close_figure_closes_pyplot_figures_too():
    fig = plt.figure()
    num = fig.number
    plots.plot_roc(RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.9, 0.4, 0.3]), ax=fig.add_subplot())
    assert num in plt.get_fignums()
    png = plots.figure_to_png(fig, close=True)
    assert png.startswith(PNG_SIGNATURE)
    assert num not in plt.get_fignums()


def _pixels(png: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _savefig_pixels(fig: Figure, dpi: float) -> np.ndarray:
    """The reference: matplotlib's own ordinary draw of the whole figure."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return _pixels(buf.getvalue())


def _visibility(fig: Figure) -> list[bool]:
    return [a.get_visible() for ax in fig.axes for a in (ax, *ax.get_children())]


def test_preview_frames_drawn_once_per_process_give_the_same_pixels(runs):
    from mlflow_imbalance.plots import _static

    _static._clear_backgrounds()
    for _ in range(2):  # cold: each kind's frame is drawn and kept; then its pixels are reused
        for name, c in runs.items():
            figs = plots.preview_figures(c, prevalences=[1e-3, 1e-4], cost_fn=20, name=name)
            for key, fig in figs.items():
                before = _visibility(fig)
                png = plots.figure_to_png(fig, dpi=fig.dpi)
                assert _visibility(fig) == before  # the passes leave the figure as it was
                assert np.array_equal(_pixels(png), _savefig_pixels(fig, fig.dpi)), (name, key)
    # 12 figures, one frame per kind: both runs' ROC start at the same decade (n_neg = 3000)
    assert len(_static._backgrounds) == 3


def _same_as_savefig(fig: Figure, dpi: float = 100) -> bool:
    """figure_to_png gives the pixels of matplotlib's ordinary draw (savefig) of ``fig``."""
    return np.array_equal(_pixels(plots.figure_to_png(fig, dpi=dpi)), _savefig_pixels(fig, dpi))


def test_preview_frame_reuse_falls_back_or_rekeys_when_the_figure_changes(runs):
    from mlflow_imbalance.plots import _static

    _static._clear_backgrounds()
    c = runs["narrow"]

    def roc():  # written at 100 dpi, as the logging hook does (FIGURE_DPI)
        return plots.preview_figures(c, prevalences=[1e-3], name="r")["roc"]

    assert _same_as_savefig(roc())
    assert len(_static._backgrounds) == 1
    # other limits, or other matplotlib defaults: another frame, drawn and kept
    fig = roc()
    fig.axes[0].set_xlim(1e-3, 1.0)
    assert _same_as_savefig(fig)
    assert len(_static._backgrounds) == 2
    with matplotlib.rc_context({"xtick.color": "#CC0000", "font.family": "DejaVu Serif"}):
        assert _same_as_savefig(roc())
    assert len(_static._backgrounds) == 3
    assert _same_as_savefig(roc())  # the defaults back: the first frame again
    # an artist under the grid, a layout engine or another dpi: the ordinary way, nothing cached
    fig = roc()
    fig.axes[0].axhspan(0.2, 0.4, color="#FFEEDD", zorder=0.1)
    assert _same_as_savefig(fig)
    fig = roc()
    fig.set_layout_engine("constrained")
    assert _same_as_savefig(fig)
    fig = roc()
    assert _same_as_savefig(fig, dpi=60)
    assert _pixels(plots.figure_to_png(fig, dpi=60)).shape[:2] == (312, 504)
    assert len(_static._backgrounds) == 3
    # the cache is bounded
    for i in range(_static.MAX_BACKGROUNDS + 2):
        fig = roc()
        fig.axes[0].set_ylim(-0.01 * (i + 2), 1.02)
        plots.figure_to_png(fig, dpi=100, close=True)
    assert len(_static._backgrounds) == _static.MAX_BACKGROUNDS


def test_run_colors_deterministic_and_distinct():
    names = ["a", "b", "c", "d", "e", "f", "g", "h"]
    c1 = plots.run_colors(names)
    c2 = plots.run_colors(list(reversed(names)))
    assert c1 == c2
    assert len(set(c1.values())) == len(names)
    assert set(c1.values()) <= set(plots.PALETTE)
    # one run alone keeps a stable colour between calls
    assert plots.run_colors(["model-x"]) == plots.run_colors(("model-x",))
    many = plots.run_colors([f"r{i}" for i in range(20)])
    assert len(many) == 20
    styles = _run_styles([f"r{i}" for i in range(10)])
    assert len({styles[n] for n in styles}) == 10  # colour + dash pattern tell all apart


def test_import_does_not_load_matplotlib():
    code = (
        "import sys, mlflow_imbalance.plots as p\n"
        "assert 'matplotlib' not in sys.modules, 'imported at module import'\n"
        "import numpy as np\n"
        "from mlflow_imbalance.core.counts import RocCounts\n"
        "p.plot_roc({'a': RocCounts.from_scores([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.2])})\n"
        "assert 'matplotlib' in sys.modules\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot used'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=30),
    st.floats(1e-6, 1e-2),
)
def test_log_densify_keeps_points_and_stays_on_segments(xs, x_min):
    x = np.sort(np.asarray(xs))
    y = np.linspace(0, 1, x.size)
    dx, dy = _log_densify(x, y, x_min)
    # the original points appear in order
    pos = 0
    for xv, yv in zip(x, y, strict=True):
        while not (dx[pos] == xv and dy[pos] == yv):
            pos += 1
    assert np.all(np.diff(dx) >= -1e-15)
    # every inserted point lies on the straight segment through its neighbours' originals
    interp = np.interp(dx, x, y)
    unique_x = np.unique(x).size == x.size
    if unique_x:
        np.testing.assert_allclose(dy, interp, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 40), st.integers(2, 60))
def test_roc_line_equals_metrics_roc_curve_for_random_scores(seed, n_pos, n_neg):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    s = np.round(rng.normal(size=n_pos + n_neg) + y, 1)
    c = RocCounts.from_scores(y, s)
    fig = Figure()
    ax = fig.add_subplot()
    plots.plot_roc({"r": c}, ax=ax, iso_slopes=[1.0])
    fpr, tpr, _ = metrics.roc_curve(c)
    np.testing.assert_array_equal(_line(ax, "roc:r").get_xdata(), fpr)
    np.testing.assert_array_equal(_line(ax, "roc:r").get_ydata(), tpr)
    point = _line(ax, "iso_point:1")
    best = np.max(np.r_[tpr - fpr, 0.0])
    assert point.get_ydata()[0] - point.get_xdata()[0] == pytest.approx(best)


def test_cost_curve_marks_prevalences_at_their_probability_cost(ax, runs):
    plots.plot_cost_curve(runs, cost_fp=1, cost_fn=100, prevalences=[1e-3, 0.5], ax=ax)
    xs = sorted(ln.get_xdata()[0] for ln in _lines(ax, "prevalence_mark"))
    # Drummond–Holte PC(+) = η C_FN / (η C_FN + (1 − η) C_FP), by hand
    assert xs == pytest.approx(sorted([0.1 / (0.1 + 0.999), 50 / 50.5]))
    assert len([t for t in ax.texts if t.get_gid() == "prevalence_label"]) == 2


def test_fixed_layout_axes_and_validation():
    ax = plots.new_axes(layout="fixed")
    assert ax.figure.get_layout_engine() is None
    assert plots.new_axes().figure.get_layout_engine() is not None
    assert len(plots.new_axes(ncols=3)) == 3
    with pytest.raises(ValueError, match="layout must be"):
        plots.new_axes(layout="tight")
    with pytest.raises(ValueError, match="ncols must be at least 1"):
        plots.new_axes(ncols=0)


def test_band_validity_mask_draws_the_invalid_part_hatched(ax, runs):
    """Optional 5th/6th band elements: where ``valid`` is False the band is hatched, very
    light, with its own legend entry; the valid part is shaded as before; the parts meet."""
    eta = metrics.default_prevalence_grid(num=40)
    sweeps = {n: (eta, metrics.average_precision(c, eta)) for n, c in runs.items()}
    y = sweeps["wide"][1]
    valid = eta > 1e-3
    band = (eta, y * 0.9, y * 1.1, "95% simultaneous (sup-t)", valid, "hatched: < 20 FP")
    plots.plot_metric_vs_prevalence(sweeps, metric_label="AP", ax=ax, bands={"wide": band})
    polys = {c.get_gid(): c for c in ax.collections if isinstance(c, PolyCollection)}
    assert {"band:wide", "band-invalid:wide"} <= set(polys)
    inv = polys["band-invalid:wide"]
    assert inv.get_hatch() == "////"
    assert inv.get_facecolor().size == 0 or inv.get_facecolor()[0][3] == 0  # no fill
    xs_valid = np.concatenate([p.vertices[:, 0] for p in polys["band:wide"].get_paths()])
    xs_bad = np.concatenate([p.vertices[:, 0] for p in inv.get_paths()])
    assert xs_valid.min() >= eta[valid].min() - 1e-15  # shaded only where valid
    assert xs_bad.max() >= eta[valid].min() - 1e-15  # the hatched part reaches the valid one
    assert xs_bad.min() == pytest.approx(eta[0])
    texts = _legend_texts(ax)
    assert "shaded: 95% simultaneous (sup-t)" in texts and "hatched: < 20 FP" in texts
    # all valid (or mask None) -> exactly the old drawing, no hatched legend entry
    ax2 = plots.new_axes()
    plots.plot_metric_vs_prevalence(
        sweeps, metric_label="AP", ax=ax2, bands={"wide": (*band[:4], np.ones(40, bool))}
    )
    gids = [c.get_gid() for c in ax2.collections if isinstance(c, PolyCollection)]
    assert gids == ["band:wide"]
    assert not any(t.startswith("hatched") for t in _legend_texts(ax2))
    plots.close_figure(ax2.figure)


def test_band_validity_mask_is_validated(ax, runs):
    eta = metrics.default_prevalence_grid(num=10)
    sweeps = {"wide": (eta, metrics.average_precision(runs["wide"], eta))}
    y = sweeps["wide"][1]
    with pytest.raises(ValueError, match="valid must be a boolean array of length 10"):
        plots.plot_metric_vs_prevalence(
            sweeps, metric_label="AP", ax=ax, bands={"wide": (eta, y, y, "b", np.ones(9, bool))}
        )
    with pytest.raises(ValueError, match="valid must be a boolean"):
        plots.plot_metric_vs_prevalence(
            sweeps, metric_label="AP", ax=ax, bands={"wide": (eta, y, y, "b", np.ones(10))}
        )
    with pytest.raises(ValueError, match="invalid_label must be a non-empty string"):
        plots.plot_metric_vs_prevalence(
            sweeps, metric_label="AP", ax=ax,
            bands={"wide": (eta, y, y, "b", np.ones(10, bool), "")},
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"tuple \(x, lower, upper, label\[, valid"):
        plots.plot_metric_vs_prevalence(
            sweeps, metric_label="AP", ax=ax, bands={"wide": (eta, y, y)}
        )


# --------------------------------------------------------------------------- many runs
@pytest.fixture(scope="module")
def twenty_runs():
    """20 runs, as in benchmarks/bench_report.py (small data: the legend is what matters)."""
    out = {}
    for i in range(20):
        y, s = _scores(100 + i, 40, 400, 1.0 + 0.08 * i)
        out[f"model-{i:02d}"] = RocCounts.from_scores(y, s)
    return out


def _legend_fits(ax) -> tuple[list[str], float]:
    """Legend texts, after checking the drawn legend lies inside the figure; axes height share."""
    fig = ax.figure
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()  # lay out at the figure's own dpi, then measure at it
    renderer = fig.canvas.get_renderer()
    leg = ax.get_legend().get_window_extent(renderer)
    box = fig.bbox
    assert leg.x0 >= box.x0 - 1 and leg.y0 >= box.y0 - 1, (leg, box)
    assert leg.x1 <= box.x1 + 1 and leg.y1 <= box.y1 + 1, (leg, box)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    return texts, ax.get_window_extent(renderer).height / box.height


@pytest.mark.parametrize("n_runs", [3, 20])
@pytest.mark.parametrize(
    "draw",
    [
        lambda c, ax: plots.plot_roc(c, ax=ax, iso_slopes=[1.0, 5.0]),
        lambda c, ax: plots.plot_pr(c, [0.01, 0.001], ax=ax),  # 2 entries per run
        lambda c, ax: plots.plot_metric_vs_prevalence(
            {
                n: (g := metrics.default_prevalence_grid(20), metrics.prevalence_sweep(x, g)["ap"])
                for n, x in c.items()
            },
            metric_label="average precision",
            ax=ax,
            test_prevalence=0.09,
            deployment_prevalences=[1e-3],
        ),
    ],
    ids=["roc", "pr", "sweep"],
)
def test_outside_legend_adapts_to_many_runs(twenty_runs, n_runs, draw):
    counts = dict(list(twenty_runs.items())[:n_runs])
    ax = plots.new_axes()  # constrained layout
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied ... collapsed"
        draw(counts, ax)
        plots.figure_to_png(ax.figure)
        plots.figure_to_svg(ax.figure)
    texts, share = _legend_fits(ax)
    for name in counts:
        assert any(t.startswith(name) for t in texts), name
    assert share > 0.45  # the plot keeps most of the figure
    leg = ax.get_legend()
    if n_runs == 3:  # few entries: unchanged, one column right of the axes at the usual size
        assert leg._ncols == 1 and leg.get_texts()[0].get_fontsize() == 8.5
        assert leg.get_window_extent().x0 > ax.get_window_extent().x1


def test_many_entries_go_below_and_fixed_layout_uses_columns(twenty_runs):
    ax = plots.plot_pr(twenty_runs, [0.01, 0.001], ax=plots.new_axes())  # 41 entries
    height = ax.figure.get_figheight()
    plots.figure_to_png(ax.figure)
    leg, box = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert leg.y1 < box.y0 and ax.get_legend()._ncols >= 3  # below the axes, in columns
    assert height > _DEFAULT_FIGSIZE[1]  # the one-axes figure grew to make room
    fixed = plots.new_axes(layout="fixed")
    plots.plot_pr(twenty_runs, [0.01, 0.001], ax=fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plots.figure_to_png(fixed.figure)
    texts, share = _legend_fits(fixed)
    assert len(texts) == 41 and fixed.get_legend()._ncols >= 3 and share > 0.45
    assert fixed.get_legend().get_window_extent().y1 < fixed.get_window_extent().y0
    # the axes kept their height in inches; the figure grew instead
    assert fixed.get_position().height * fixed.figure.get_figheight() == pytest.approx(
        (0.91 - 0.115) * _DEFAULT_FIGSIZE[1]
    )
