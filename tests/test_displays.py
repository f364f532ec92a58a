"""Tests of the Display objects of mlflow_imbalance.plots, with real matplotlib (Agg), no mocks.

Reference values come from independent computations: scikit-learn's roc_curve,
precision_recall_curve and average_precision_score with the negatives re-weighted so that the
weighted prevalence is η (the test set "at prevalence η"), a hand-written convex hull and the
Drummond–Holte and Cárdenas–Baras formulas, and scipy's beta quantiles for Clopper–Pearson.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from mlflow_imbalance import plots
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots import (
    BrocDisplay,
    CostCurveDisplay,
    P3Display,
    PrecisionRecallDisplay,
    PrevalenceDisplay,
    RocDisplay,
    SampleSizeDisplay,
)
from mlflow_imbalance.plots._style import _pyplot_session

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # only to check that nothing is registered in pyplot

#: every test: no pyplot figure is created and rcParams are unchanged (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("no_global_state")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _scores(seed: int, n_pos: int, n_neg: int, mu: float, sd: float = 1.0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, dtype=int), np.zeros(n_neg, dtype=int)]
    s = np.round(np.r_[rng.normal(mu, sd, n_pos), rng.normal(0.0, 1.0, n_neg)], 2)
    return y, s


@pytest.fixture(scope="module")
def data():
    """Two runs on the same labels; uncompressed counts keep every scikit-learn point."""
    y, sa = _scores(1, 120, 2500, 2.0, 0.6)
    _, sb = _scores(2, 120, 2500, 1.6, 2.0)
    scores = {"narrow": sa, "wide": sb}
    counts = {n: RocCounts.from_scores(y, s, compress=False) for n, s in scores.items()}
    return y, scores, counts


def _weights_at(y, eta):
    """Sample weights giving the negatives the weight that makes the prevalence η."""
    n_pos, n_neg = int(np.sum(y == 1)), int(np.sum(y == 0))
    return np.where(y == 1, 1.0, n_pos * (1.0 - eta) / (n_neg * eta))


def _gids(ax):
    return {ln.get_gid() for ln in ax.get_lines()}


def _upper_hull(fpr, tpr):
    """Upper convex hull of ROC points (monotone chain), from (0, 0) to (1, 1)."""
    pts = sorted(set(zip(np.r_[0.0, fpr, 1.0], np.r_[0.0, tpr, 1.0], strict=True)))
    hull: list[tuple[float, float]] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return np.array(hull)


# --------------------------------------------------------------------------- arrays


def test_roc_display_arrays_equal_sklearn(data, ax):
    from sklearn.metrics import roc_auc_score, roc_curve

    y, scores, counts = data
    disp = RocDisplay.from_counts(counts, ax=ax)
    assert disp.names == ["narrow", "wide"]
    for name, s in scores.items():
        sk_fpr, sk_tpr, _ = roc_curve(y, s, drop_intermediate=False)
        np.testing.assert_allclose(disp.fpr[name], sk_fpr, rtol=0, atol=1e-15)
        np.testing.assert_allclose(disp.tpr[name], sk_tpr, rtol=0, atol=1e-15)
        assert disp.roc_auc[name] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        hull = _upper_hull(sk_fpr, sk_tpr)
        np.testing.assert_allclose(disp.hull_fpr[name], hull[:, 0], atol=1e-12)
        np.testing.assert_allclose(disp.hull_tpr[name], hull[:, 1], atol=1e-12)


def test_roc_display_from_predictions_with_weights(data, ax):
    from sklearn.metrics import roc_auc_score, roc_curve

    y, scores, _ = data
    w = np.random.default_rng(5).uniform(0.5, 2.0, y.size)
    disp = RocDisplay.from_predictions(y, scores, sample_weight=w, ax=ax)
    for name, s in scores.items():
        assert disp.roc_auc[name] == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
        # compressed counts keep fewer points: every sklearn point lies on our polyline
        # (FPR + TPR grows strictly along a ROC curve, so it parametrises both curves)
        sk_fpr, sk_tpr, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
        f, t = disp.fpr[name], disp.tpr[name]
        u = f + t
        assert np.all(np.diff(u) > 0)
        np.testing.assert_allclose(np.interp(sk_fpr + sk_tpr, u, f), sk_fpr, atol=1e-9)
        np.testing.assert_allclose(np.interp(sk_fpr + sk_tpr, u, t), sk_tpr, atol=1e-9)
    one = RocDisplay.from_predictions(y, scores["wide"], ax=plots.new_axes())
    assert one.names == ["run"]
    plots.close_figure(one.figure_)


@pytest.mark.parametrize("eta", [0.2, 1e-3])
def test_pr_display_equals_sklearn_at_reweighted_prevalence(data, ax, eta):
    from sklearn.metrics import average_precision_score, precision_recall_curve

    y, scores, counts = data
    w = _weights_at(y, eta)
    disp = PrecisionRecallDisplay.from_counts(counts, eta, points_per_segment=1, ax=ax)
    for name, s in scores.items():
        p, r, _ = precision_recall_curve(y, s, sample_weight=w, drop_intermediate=False)
        # ours: recall ascending from the (0, first precision) start; sklearn's: descending,
        # ending at its (recall 0, precision 1) anchor
        np.testing.assert_allclose(disp.recall[name][1:], r[:-1][::-1], atol=1e-12)
        np.testing.assert_allclose(disp.precision[name][1:], p[:-1][::-1], rtol=1e-9, atol=1e-12)
        ap = average_precision_score(y, s, sample_weight=w)
        assert disp.average_precision[name] == pytest.approx(ap, rel=1e-9)
    assert disp.prevalences == [eta]


def test_pr_display_several_prevalences_stack_rows(data, ax):
    _, _, counts = data
    etas = [1e-2, 1e-4]
    disp = PrecisionRecallDisplay.from_counts(counts, etas, points_per_segment=3, ax=ax)
    for name in counts:
        assert disp.precision[name].shape == (2, disp.recall[name].size)
        for j, eta in enumerate(etas):
            one = PrecisionRecallDisplay.from_counts(
                {name: counts[name]}, eta, points_per_segment=3, ax=plots.new_axes()
            )
            np.testing.assert_array_equal(disp.precision[name][j], one.precision[name])
            assert disp.average_precision[name][j] == one.average_precision[name]
            plots.close_figure(one.figure_)
    assert len([g for g in _gids(ax) if g.startswith("pr:")]) == 4


def test_prevalence_display_equals_sklearn_ap_and_max_f1(data, ax):
    from sklearn.metrics import average_precision_score, precision_recall_curve

    y, scores, counts = data
    grid = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.4])
    ap = PrevalenceDisplay.from_counts(counts, "ap", grid, ax=ax)
    f1 = PrevalenceDisplay.from_counts(counts, "max_f1", grid, ax=plots.new_axes())
    assert ap.metric_label == "average precision" and f1.metric_label == "max F1"
    for name, s in scores.items():
        np.testing.assert_array_equal(ap.prevalences[name], grid)
        ref_ap = [average_precision_score(y, s, sample_weight=_weights_at(y, e)) for e in grid]
        np.testing.assert_allclose(ap.values[name], ref_ap, rtol=1e-9)
        ref_f1 = []
        for e in grid:
            p, r, _ = precision_recall_curve(y, s, sample_weight=_weights_at(y, e))
            with np.errstate(invalid="ignore"):
                ref_f1.append(np.nanmax(np.where(p + r > 0, 2 * p * r / (p + r), 0.0)))
        np.testing.assert_allclose(f1.values[name], ref_f1, rtol=1e-9)
    plots.close_figure(f1.figure_)


def test_p3_display_follows_the_max_f1_point(data, ax):
    from sklearn.metrics import precision_recall_curve, roc_curve

    y, scores, counts = data
    eta, grid = 1e-3, np.geomspace(1e-5, 0.5, 30)
    disp = P3Display.from_counts(counts, grid, at_prevalence=eta, ax=ax)
    for name, s in scores.items():
        p, r, thr = precision_recall_curve(y, s, sample_weight=_weights_at(y, eta))
        with np.errstate(invalid="ignore"):
            f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)[:-1]
        best = thr[int(np.argmax(f1))]
        fpr, tpr, t = roc_curve(y, s, drop_intermediate=False)
        k = int(np.flatnonzero(t == best)[0])
        op_tpr, op_fpr, label = disp.operating_points[name]
        assert (op_tpr, op_fpr) == pytest.approx((tpr[k], fpr[k]), abs=1e-12)
        assert "max-F1" in label
        ref = tpr[k] * grid / (tpr[k] * grid + fpr[k] * (1 - grid))  # Brabec eq. 8
        np.testing.assert_allclose(disp.precision[name], ref, rtol=1e-12)


def test_cost_display_envelope_is_min_over_sklearn_points(data, ax):
    from sklearn.metrics import roc_curve

    y, scores, counts = data
    disp = CostCurveDisplay.from_counts(counts, cost_fp=1, cost_fn=20, num=51, ax=ax)
    for name, s in scores.items():
        fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
        pc = disp.probability_cost[name]
        np.testing.assert_allclose(pc, np.linspace(0, 1, 51))
        ref = np.min((1 - tpr)[:, None] * pc + fpr[:, None] * (1 - pc), axis=0)
        np.testing.assert_allclose(disp.envelope[name], ref, atol=1e-12)
        assert disp.costs[name].shape[1] == 51


def test_broc_display_maps_hull_vertices(data, ax):
    from sklearn.metrics import roc_curve

    y, scores, counts = data
    etas = [1e-2, 1e-3]
    disp = BrocDisplay.from_counts(counts, etas, ax=ax)
    single = BrocDisplay.from_counts(counts, 1e-2, ax=plots.new_axes())
    for name, s in scores.items():
        bfa, pd = disp.bayes_false_alarm[name], disp.detection_rate[name]
        assert bfa.shape == (2, pd.size) and single.bayes_false_alarm[name].shape == pd.shape
        np.testing.assert_array_equal(single.bayes_false_alarm[name], bfa[0])
        hull = _upper_hull(*roc_curve(y, s, drop_intermediate=False)[:2])
        for j, eta in enumerate(etas):
            for f, t in hull:
                if t > 0:
                    ref = (1 - eta) * f / (eta * t + (1 - eta) * f)
                    k = np.flatnonzero(np.isclose(pd, t, rtol=0, atol=1e-12))
                    assert np.any(np.isclose(bfa[j, k], ref, rtol=0, atol=1e-12))
    plots.close_figure(single.figure_)


def test_sample_size_display_is_clopper_pearson_at_expected_count(data, ax):
    from scipy.stats import beta

    _, _, counts = data
    disp = SampleSizeDisplay.from_counts(counts, confidence=0.9, num=12, ax=ax)
    for name, c in counts.items():
        f = disp.fpr[name]
        np.testing.assert_allclose(f, np.geomspace(1 / c.n_neg, 0.5, 12))
        k, n = f * c.n_neg, c.n_neg
        lo = beta.ppf(0.05, k, n - k + 1)
        hi = beta.ppf(0.95, k + 1, n - k)
        np.testing.assert_allclose(disp.width[name], np.maximum(hi - f, f - lo) / f, rtol=1e-6)
    assert "Clopper–Pearson, 90%" in ax.get_title(loc="left")


# --------------------------------------------------------------------------- plot() and repr


def _all_displays(counts, ax_factory):
    grid = np.geomspace(1e-4, 0.5, 20)
    return [
        RocDisplay.from_counts(counts, ax=ax_factory()),
        PrecisionRecallDisplay.from_counts(counts, 1e-2, ax=ax_factory()),
        P3Display.from_counts(counts, grid, ax=ax_factory()),
        PrevalenceDisplay.from_counts(counts, "pr_auc", grid, ax=ax_factory()),
        BrocDisplay.from_counts(counts, [1e-2, 1e-3], ax=ax_factory()),
        CostCurveDisplay.from_counts(counts, cost_fn=10, ax=ax_factory()),
        SampleSizeDisplay.from_counts(counts, ax=ax_factory()),
    ]


def test_plot_returns_self_and_draws_on_the_given_ax(data):
    _, _, counts = data
    for disp in _all_displays(counts, plots.new_axes):
        first = disp.ax_
        assert disp.figure_ is first.figure
        fig = Figure()
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        assert disp.plot(ax=ax) is disp
        assert disp.ax_ is ax and disp.figure_ is fig
        assert len(ax.get_lines()) >= len(counts), type(disp).__name__
        assert ax.get_legend() is not None
        assert first.get_lines(), "the earlier axes keep their drawing"
        plots.close_figure(first.figure)


def test_plot_without_ax_outside_a_notebook_is_a_plain_agg_figure(data):
    _, _, counts = data
    disp = RocDisplay.from_counts(counts)
    assert isinstance(disp.figure_.canvas, FigureCanvasAgg)
    assert disp.figure_.canvas.manager is None


def test_repr_png_returns_png_bytes(data, ax):
    _, _, counts = data
    drawn = PrecisionRecallDisplay.from_counts(counts, 1e-3, ax=ax)
    png = drawn._repr_png_()
    assert png.startswith(PNG_SIGNATURE)
    assert drawn.ax_ is ax
    # a Display built from arrays and never plotted still shows itself, without side effects
    fresh = RocDisplay(fpr={"a": [0, 0.1, 1]}, tpr={"a": [0, 0.7, 1]})
    png = fresh._repr_png_()
    assert png.startswith(PNG_SIGNATURE)
    assert fresh.ax_ is None and fresh.figure_ is None
    assert repr(fresh) == "RocDisplay(runs=['a'])"


def test_rcparams_unchanged_after_plotting(data):
    _, _, counts = data
    before = dict(matplotlib.rcParams)
    for disp in _all_displays(counts, plots.new_axes):
        disp._repr_png_()
        plots.figure_to_svg(disp.figure_, close=True)
    after = dict(matplotlib.rcParams)
    assert {k for k in before if before[k] != after.get(k)} == set()


def test_constructor_validation_names_the_argument():
    with pytest.raises(ValueError, match=r"fpr\['a'\] and tpr\['a'\] must have one length"):
        RocDisplay(fpr={"a": [0, 1]}, tpr={"a": [0, 0.5, 1]})
    with pytest.raises(ValueError, match="hull=True needs hulls"):
        RocDisplay(fpr={"a": [0, 1]}, tpr={"a": [0, 1]}).plot(hull=True)
    with pytest.raises(ValueError, match=r"precision\['a'\] must have shape \(2, 3\)"):
        PrecisionRecallDisplay(recall={"a": [0, 0.5, 1]}, precision={"a": [[1, 1, 1]]},
                               prevalence=[0.1, 0.2])  # fmt: skip
    with pytest.raises(ValueError, match="prevalence=None needs test_prevalence"):
        PrecisionRecallDisplay(recall={"a": [0, 1]}, precision={"a": [1, 0.5]})
    with pytest.raises(ValueError, match="metric must be one of"):
        PrevalenceDisplay.from_counts(RocCounts.from_scores([0, 1], [0.2, 0.7]), "auc")


# --------------------------------------------------------------------------- one input convention


def test_plot_functions_accept_counts_and_the_old_forms(data, ax):
    _, _, counts = data
    grid = np.geomspace(1e-4, 0.5, 25)
    out = plots.plot_metric_vs_prevalence(counts, "pr_auc", grid, ax=ax, test_prevalence=0.05)
    assert out is ax and ax.get_ylabel() == "PR-AUC"
    ax2 = plots.new_axes()
    sweeps = {n: (grid, ys) for n, ys in zip(counts, (ln.get_ydata() for ln in ax.get_lines()
                                                      if ln.get_gid().startswith("sweep:")),
                                             strict=True)}  # fmt: skip
    plots.plot_metric_vs_prevalence(sweeps, metric_label="PR-AUC", ax=ax2)
    for name in counts:
        line = next(ln for ln in ax2.get_lines() if ln.get_gid() == f"sweep:{name}")
        np.testing.assert_array_equal(line.get_ydata(), sweeps[name][1])
    with pytest.raises(ValueError, match="metric and prevalences need counts"):
        plots.plot_metric_vs_prevalence(sweeps, "ap", metric_label="AP", ax=ax2)
    ax3 = plots.new_axes()
    plots.plot_p3(counts, grid, ax=ax3, highlight=(0.05, [1e-3]))
    assert {f"p3:{n}" for n in counts} <= _gids(ax3)
    with pytest.raises(ValueError, match="at_prevalence needs counts"):
        plots.plot_p3({"a": (0.5, 0.1, "x")}, at_prevalence=0.1, ax=ax3)
    ax4 = plots.new_axes()
    plots.plot_sample_size(counts, tolerance=0.2, ax=ax4)
    assert {f"size:{n}" for n in counts} <= _gids(ax4)
    for a in (ax2, ax3, ax4):
        plots.close_figure(a.figure)


def test_band_objects_are_duck_typed(data, ax):
    _, _, counts = data
    grid = np.geomspace(1e-4, 0.5, 25)
    disp = PrevalenceDisplay.from_counts(counts, "ap", grid, ax=plots.new_axes())
    y = disp.values["wide"]
    band = SimpleNamespace(
        grid=grid, low=y * 0.9, high=y * 1.1, label="95% simultaneous band (test)",
        extra={"supported": grid > 1e-3},
    )  # fmt: skip
    disp.plot(ax=ax, bands={"wide": band})
    gids = {c.get_gid() for c in ax.collections}
    assert {"band:wide", "band-invalid:wide"} <= gids
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "shaded: 95% simultaneous band (test)" in texts
    assert plots.BAND_NOT_VALID_LABEL in texts


# --------------------------------------------------------------------------- notebooks


_FAKE_INLINE_BACKEND = """
from matplotlib.backends.backend_agg import FigureCanvas, FigureManager  # noqa: F401
"""

_NOTEBOOK_SCRIPT = """
import sys, threading, types
sys.path.insert(0, {path!r})
# a running kernel, as far as matplotlib and mlflow_imbalance look at one
shell = types.SimpleNamespace(
    events=types.SimpleNamespace(register=lambda *args: None), enable_gui=lambda *args: None
)
sys.modules["IPython"] = types.SimpleNamespace(get_ipython=lambda: shell, version_info=(9, 0))
import matplotlib
matplotlib.use("module://fake_backend_inline")
from mlflow_imbalance import plots
from mlflow_imbalance.core.counts import RocCounts
c = RocCounts.from_scores([0, 1, 1, 0, 1, 0], [0.1, 0.8, 0.35, 0.4, 0.9, 0.2])
assert "matplotlib.pyplot" not in sys.modules
disp = plots.RocDisplay.from_counts({{"a": c}})
import matplotlib.pyplot as plt  # imported by the plot: the inline backend shows the figure
assert plt.get_fignums() == [disp.figure_.number], plt.get_fignums()
assert disp._repr_png_() is None  # shown by the backend, not twice
ax = plots.plot_pr({{"a": c}}, 0.1)
assert len(plt.get_fignums()) == 2
agg = plots.plot_roc({{"a": c}}, ax=plots.new_axes())  # explicit axes: never pyplot
assert len(plt.get_fignums()) == 2 and agg.figure.canvas.manager is None
figs = plots.run_figures(c, prevalences=[1e-3])  # the logging hook's figures: never pyplot
assert len(plt.get_fignums()) == 2
out = {{}}
t = threading.Thread(target=lambda: out.update(d=plots.RocDisplay.from_counts({{"a": c}})))
t.start(); t.join()
assert len(plt.get_fignums()) == 2 and out["d"].figure_.canvas.manager is None
assert out["d"]._repr_png_().startswith(b"\\x89PNG")
plt.close("all")
assert disp._repr_png_().startswith(b"\\x89PNG")  # closed by the backend: rendered again
print("ok")
"""


def test_notebook_figures_are_managed_by_pyplot(tmp_path):
    (tmp_path / "fake_backend_inline.py").write_text(_FAKE_INLINE_BACKEND)
    code = textwrap.dedent(_NOTEBOOK_SCRIPT.format(path=str(tmp_path)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_scripts_and_threads_never_use_pyplot():
    # here pyplot is imported but neither IPython runs nor is interactive mode on
    assert _pyplot_session() is None
    plt.ion()
    try:
        # interactive mode, but the Agg backend cannot show figures
        assert _pyplot_session() is None
        out: dict = {}
        t = threading.Thread(target=lambda: out.update(s=_pyplot_session()))
        t.start()
        t.join()
        assert out["s"] is None
    finally:
        plt.ioff()
