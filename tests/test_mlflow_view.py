"""A logged run as it looks in the MLflow UI: metric latest values, tags, the card, the figures.

Two kinds of test:

- on a temporary SQLite store: every single-valued metric is the value at the prevalence its
  key names (no η in the key: the test prevalence), in the unit its name says, checked against
  scikit-learn with negatives re-weighted to that η; the across-prevalence series
  (``imb/<metric>_sweep``) hold the grid's steps in ascending η and nothing else; the class
  totals and test prevalence are tags, not metrics;
- against a real ``mlflow server`` on 127.0.0.1 in real headless Chromium: the run's artifact
  page shows the card (title = the run's name) and the PNG figures (pixel size, dpi and text
  size at display size), next to MLflow's own ``evaluate(..., evaluators="default")`` figures;
  the chart view draws each run's sweep with no hook on the default (step) x axis, and
  overlays the runs' across-prevalence series once ``imb/log10_eta`` is chosen as the x axis.
  Screenshots at 1400 and 800 px go to ``test-artifacts/``. One Chromium serves these tests
  (``ui_browser``); each starts from a blank page with the UI origin's storage cleared.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import struct
import tempfile
import time
import urllib.request
from pathlib import Path

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from sklearn.metrics import (
    average_precision_score,
    f1_score,
    precision_recall_curve,
    precision_score,
    roc_auc_score,
    roc_curve,
)
from test_browser import CHROMIUM, Chromium

import mlflow_imbalance as mi
from mlflow_imbalance import tracking
from mlflow_imbalance.core import metrics as core_metrics
from mlflow_imbalance.plots._style import PREVIEW_MIN_FONT_PT
from mlflow_imbalance.tracking import keys

ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).parent.parent / "test-artifacts"))


def _data(seed: int, n: int = 6000, sep: float = 1.4):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.04).astype(int)
    y[:2] = [0, 1]
    return y, np.round(rng.normal(size=n) + sep * y, 3)


def _weights(y: np.ndarray, eta: float) -> np.ndarray:
    """Sample weights that move the test set to prevalence η (negatives re-weighted)."""
    n_pos, n_neg = y.sum(), (1 - y).sum()
    return np.where(y == 1, 1.0, n_pos * (1 - eta) / (eta * n_neg))


def _max_f1_weighted(y, s, w):
    """(max F1, its threshold, precision there) from scikit-learn's weighted PR curve."""
    p, r, thr = precision_recall_curve(y, s, sample_weight=w)
    p, r = p[:-1], r[:-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    best = np.flatnonzero(f1 == f1.max())
    k = best[np.argmax(thr[best])]  # the highest threshold on ties
    return f1[k], thr[k], p[k]


def _min_cost(y, s, eta, cfp, cfn):
    """(lowest expected cost per case, its threshold): (1−η)·C_FP·FPR + η·C_FN·FNR minimised over
    scikit-learn's ROC points, flagging nothing (threshold +inf) included; lowest FPR on ties."""
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    thr = np.where(np.isinf(thr), np.inf, thr)  # scikit-learn's first point: flag nothing
    cost = (1 - eta) * cfp * fpr + eta * cfn * (1 - tpr)
    k = int(np.flatnonzero(cost == cost.min())[0])
    return float(cost[k]), float(thr[k])


def _per_cases(eta: float) -> int:
    """The report's unit, written out independently: 10,000 cases when η ≥ 1e-3, else 10⁶."""
    return 10_000 if eta >= 1e-3 else 1_000_000


# --------------------------------------------------------------------------- SQLite store


def test_latest_values_are_at_the_prevalence_the_key_names(tracking_uri):
    y, s = _data(0)
    cfp, cfn = 1.0, 30.0
    with mlflow.start_run() as run:
        mi.log_scores(y, s, prevalences=[1e-2, 1e-3, 1e-4], costs={"fp": cfp, "fn": cfn})
    client = MlflowClient()
    data = client.get_run(run.info.run_id).data
    test_eta = y.mean()
    threshold = data.metrics[keys.metric_key("test", "max_f1_threshold")]
    assert threshold == _max_f1_weighted(y, s, _weights(y, test_eta))[1]
    pred = s >= threshold
    counts = mi.RocCounts.from_scores(y, s)
    x_steps = {
        p.step: 10**p.value
        for p in client.get_metric_history(run.info.run_id, keys.metric_key("test", "log10_eta"))
    }
    checked = set()
    for key, value in data.metrics.items():
        parsed = keys.parse_metric_key(key)
        assert parsed is not None, f"{key!r} does not follow the imb/<metric> [<η>] <name> layout"
        metric, eta, name = parsed
        assert name == "test"
        eta = test_eta if eta is None else eta
        history = sorted(client.get_metric_history(run.info.run_id, key), key=lambda p: p.step)
        sweep = metric.endswith("_sweep") or metric == "log10_eta"
        # a series: steps 0..40 in ascending η, nothing appended; a single value otherwise
        assert [p.step for p in history] == (list(range(len(x_steps))) if sweep else [0]), key
        points = [(x_steps[p.step], p.value) for p in history] if sweep else [(eta, value)]
        for eta, value in points[:: 7 if sweep else 1] + points[-1:]:
            w = _weights(y, eta)
            stem = metric.removesuffix("_sweep")
            if stem == "ap":
                expected = average_precision_score(y, s, sample_weight=w)
            elif stem == "max_f1":
                expected = _max_f1_weighted(y, s, w)[0]
            elif stem == "prec_f1":
                expected = _max_f1_weighted(y, s, w)[2]
            elif stem == "max_f1_threshold":
                expected = _max_f1_weighted(y, s, w)[1]
            elif stem == "precision_op":
                expected = precision_score(y, pred, sample_weight=w)
            elif stem == "f1_op":
                expected = f1_score(y, pred, sample_weight=w)
            elif stem == "pr_auc":  # the η is what is checked here (the formula: test_metrics)
                expected = core_metrics.pr_auc(counts, eta)
            elif stem.startswith("min_cost_per_"):  # the unit in the key is per_cases(η)'s
                assert (
                    stem
                    == {10_000: "min_cost_per_10k", 1_000_000: "min_cost_per_1m"}[_per_cases(eta)]
                ), key
                expected = _min_cost(y, s, eta, cfp, cfn)[0] * _per_cases(eta)
            elif stem == "cost_threshold":
                expected = _min_cost(y, s, eta, cfp, cfn)[1]
            elif stem == "prec_cost":  # precision at η at the lowest-cost threshold
                at = s >= _min_cost(y, s, eta, cfp, cfn)[1]
                expected = precision_score(y, at, sample_weight=w)
            elif stem == "log10_eta":
                expected = math.log10(eta)
            elif stem == "roc_auc":
                expected = roc_auc_score(y, s)
            elif stem.startswith("tpr_at_fpr_"):  # η-free: the TPR at an FPR budget
                alpha = float(stem.removeprefix("tpr_at_fpr_"))
                order = np.argsort(-s, kind="stable")
                last = np.r_[np.diff(s[order]) != 0, True]
                fp = np.cumsum(1 - y[order])[last] / (1 - y).sum()
                tp = np.cumsum(y[order])[last] / y.sum()
                expected = tp[fp <= alpha].max(initial=0.0)
            else:
                pytest.fail(f"unexpected metric {key!r}")
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-12), (key, eta)
        checked.add(metric)
    assert checked >= {
        "ap", "max_f1", "prec_f1", "pr_auc", "max_f1_threshold", "cost_threshold", "prec_cost",
        "min_cost_per_10k", "min_cost_per_1m", "ap_sweep", "pr_auc_sweep", "max_f1_sweep",
        "prec_f1_sweep", "precision_op_sweep", "f1_op_sweep", "log10_eta",
    }  # fmt: skip
    # the constants are tags, not metrics; no tag or key says "operating_threshold" any more
    for what, expected in (
        ("n_pos", y.sum()),
        ("n_neg", (1 - y).sum()),
        ("test_prevalence", test_eta),
    ):
        assert float(data.tags[keys.tag_key("test", what)]) == pytest.approx(expected, rel=1e-12)
        assert not any(what in k for k in data.metrics), what
    assert not any("operating_threshold" in k for k in (*data.tags, *data.metrics))


def test_keys_put_the_distinguishing_part_first():
    k = keys.metric_key("validation", "max_f1", 2.5e-4)
    assert k == "imb/max_f1 2.5e-4 validation"
    assert keys.parse_metric_key(k) == ("max_f1", 2.5e-4, "validation")
    assert keys.metric_key("test", "ap") == "imb/ap test"
    assert keys.parse_metric_key("imbalance/test/ap") is None
    # compact: no zero-padded exponents, no '+', nothing MLflow refuses
    assert [keys.eta_label(e) for e in (1e-4, 0.5, 0.01, 0.99999)] == [
        "1e-4",
        "5e-1",
        "1e-2",
        "1e0",
    ]


def test_runs_view_url():
    assert (
        tracking.runs_view_url("http://127.0.0.1:5000/", "7")
        == "http://127.0.0.1:5000/#/experiments/7/runs?workflowType=machine_learning"
    )
    assert tracking.runs_view_url("sqlite:///mlflow.db", 0).startswith("http://127.0.0.1:5000/#/")


def test_summary_reads_top_down(tracking_uri):
    y, s = _data(1, n=1500)
    with mlflow.start_run() as run:
        mi.log_scores(y, s, prevalences=[1e-3], log_figures=False, extra_summary={"note": "x"})
    local = MlflowClient().download_artifacts(
        run.info.run_id, "imbalance/test/summary.json", tempfile.mkdtemp()
    )
    order = list(json.loads(Path(local).read_text()))
    assert order[:3] == ["schema", "schema_version", "name"]
    assert order.index("headline") < order.index("sweep") < order.index("package_version")
    assert order[-1] == "files"
    assert mi.load_counts(run.info.run_id).n_pos == y.sum()  # the manifest still verifies


# --------------------------------------------------------------------------- real server + UI


class _Chromium(Chromium):
    """:class:`test_browser.Chromium` with what the MLflow UI needs: promises, waits, iframes."""

    def __init__(self, width: int, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="mi-chromium-")
        super().__init__(Path(self.profile), width, height)
        self.__enter__()

    def js(self, expression: str, context_id: int | None = None):
        kw = {"contextId": context_id} if context_id is not None else {}
        res = self.dt.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True, **kw
        )
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.3)
        raise TimeoutError(expression)

    def go(self, url: str, ready: str) -> None:
        self.dt.send("Page.navigate", url="about:blank")  # a fresh document for every page
        time.sleep(0.3)
        self.dt.send("Page.navigate", url=url)
        self.wait_for(f"!!({ready})")
        # MLflow 3 opens its assistant panel on the right: close it (as a user would)
        self.js(
            "[...document.querySelectorAll('button')].filter(b => /close/i.test("
            "b.getAttribute('aria-label') || '') && b.getBoundingClientRect().left > "
            "innerWidth * 0.6).forEach(b => b.click())"
        )
        time.sleep(1.5)

    def frame_title(self, url_prefix: str) -> str:
        """``document.title`` inside the sandboxed iframe loaded from a URL.

        MLflow previews HTML in an ``allow-scripts``-only iframe (an opaque origin, its own
        process): the page's scripts cannot read it, so attach to its DevTools target.
        """
        deadline = time.monotonic() + 30
        while True:
            infos = self.dt.send("Target.getTargets")["targetInfos"]
            target = next(
                (t for t in infos if t["type"] == "iframe" and t["url"].startswith(url_prefix)),
                None,
            )
            if target is not None or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert target is not None, f"no iframe target with a URL starting {url_prefix!r}"
        session = self.dt.send("Target.attachToTarget", targetId=target["targetId"], flatten=True)
        res = self.dt.send(
            "Runtime.evaluate", session_id=session["sessionId"], expression="document.title",
            returnByValue=True,
        )  # fmt: skip
        return res.get("result", {}).get("value")

    def save_screenshot(self, path: Path) -> bytes:
        png = self.screenshot()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return png

    def close(self) -> None:
        self.__exit__()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def ui_browser():
    """One headless Chromium for the module's MLflow UI tests."""
    b = _Chromium(1400)
    try:
        yield b
    finally:
        b.close()


def _ui_page(b: _Chromium, base: str, width: int, height: int = 900) -> _Chromium:
    """The module's browser as a new one for a test: ``width`` x ``height``, no storage of the
    MLflow UI's origin left by an earlier test (a fresh profile's state), a blank page."""
    b.resize(width, height)
    b.dt.send("Page.navigate", url="about:blank")
    b.dt.send("Storage.clearDataForOrigin", origin=base, storageTypes="all")
    return b


def _png_info(png: bytes) -> tuple[int, int, float | None]:
    """(width, height, dpi from the pHYs chunk or None) of a PNG file."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    pos, dpi = 8, None
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        if kind == b"pHYs":
            ppu_x, _, unit = struct.unpack(">IIB", png[pos + 8 : pos + 17])
            dpi = round(ppu_x * 0.0254, 1) if unit == 1 else None  # pixels per metre
        if kind == b"IDAT":
            break
        pos += 12 + length
    return width, height, dpi


@pytest.fixture(scope="module")
def ui_runs(mlflow_server):
    """Three runs logged through the server: our hook and MLflow's own default evaluator."""
    import pandas as pd
    from mlflow.tracking import _tracking_service
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    previous = _tracking_service.utils._tracking_uri
    mlflow.set_tracking_uri(mlflow_server)
    try:
        rng = np.random.default_rng(7)
        n, d = 12000, 8
        y = (rng.random(n) < 0.03).astype(int)
        X = rng.normal(size=(n, d)) + np.outer(y, np.linspace(1.2, 0.1, d))
        X[:, 3] += 0.8 * X[:, 0] ** 2 * y  # something non-linear for the models to differ on
        half = n // 2
        exp_id = mlflow.create_experiment(f"ui-{time.time_ns()}")
        runs = {}
        models = {
            "logistic-regression": LogisticRegression(max_iter=500),
            "naive-bayes": GaussianNB(),
            "lda": LinearDiscriminantAnalysis(),
        }
        for run_name, model in models.items():
            with mlflow.start_run(experiment_id=exp_id, run_name=run_name) as run:
                model.fit(X[:half], y[:half])
                s = model.predict_proba(X[half:])[:, 1]
                mi.log_scores(y[half:], s, prevalences=[1e-2, 1e-3, 1e-4], costs=(1, 50))
                if run_name == "naive-bayes":  # MLflow's own figures, for the comparison
                    info = mlflow.sklearn.log_model(model, name="model")
                    df = pd.DataFrame(X[half:], columns=[f"x{i}" for i in range(d)])
                    df["label"] = y[half:]
                    mlflow.models.evaluate(
                        info.model_uri, df, targets="label", model_type="classifier",
                        evaluators="default",
                    )  # fmt: skip
                runs[run_name] = run.info.run_id
        yield {"url": mlflow_server, "experiment_id": exp_id, "runs": runs}
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)


_IMAGES = (
    "JSON.stringify([...document.images].filter(i => i.naturalWidth > 300 && i.clientWidth > 0)"
    ".map(i => [i.naturalWidth, i.naturalHeight, i.clientWidth, i.clientHeight]))"
)


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.server
@pytest.mark.browser
@pytest.mark.skipif(
    not (Path(CHROMIUM).exists() or shutil.which("chromium")), reason="chromium not installed"
)
def test_run_in_the_mlflow_ui(ui_runs, ui_browser, width):
    base, exp_id = ui_runs["url"], ui_runs["experiment_id"]
    run_name = "naive-bayes"
    run_id = ui_runs["runs"][run_name]
    page = f"{base}/#/experiments/{exp_id}/runs/{run_id}/artifacts"
    b = _ui_page(ui_browser, base, width)
    try:
        # the card: its <title> (inside MLflow's sandboxed iframe) names the run
        b.go(f"{page}/imbalance/test/card.html", "document.querySelector('iframe')")
        b.wait_for("document.querySelector('iframe').src.startsWith('blob:')")
        time.sleep(1.0)
        title = b.frame_title("blob:")
        assert title.startswith(run_name), title
        b.save_screenshot(ARTIFACTS / f"mlflow-card-{width}.png")

        # our PR figure as MLflow previews it, then MLflow's own PR figure of the same run
        shown = {}
        for label, path in (
            ("ours", "imbalance/test/pr.png"),
            ("mlflow", "precision_recall_curve_plot.png"),
        ):
            b.go(f"{page}/{path}", f"{_IMAGES} !== '[]'")
            shown[label] = json.loads(b.js(_IMAGES))[0]
            b.save_screenshot(ARTIFACTS / f"mlflow-figure-{label}-{width}.png")
        png = _get(f"{base}/get-artifact?path=imbalance/test/pr.png&run_uuid={run_id}")
        w_px, h_px, dpi = _png_info(png)
        assert dpi is not None and dpi >= 100, dpi
        assert (w_px, h_px) == (shown["ours"][0], shown["ours"][1])
        assert w_px >= 800 and h_px >= 500
        scale = shown["ours"][2] / w_px  # display size / pixel size
        smallest_text_px = PREVIEW_MIN_FONT_PT * dpi / 72.0 * scale
        if width >= 1400:
            assert scale == pytest.approx(1.0, abs=0.01)  # shown at full size: nothing shrinks
            assert smallest_text_px >= 12.0, smallest_text_px
        else:  # a narrow window shrinks every figure alike; ours are never smaller than MLflow's
            assert shown["ours"][2] >= 0.9 * shown["mlflow"][2], shown
        _side_by_side(
            ARTIFACTS / f"mlflow-figure-ours-{width}.png",
            ARTIFACTS / f"mlflow-figure-mlflow-{width}.png",
            ARTIFACTS / f"mlflow-figures-side-by-side-{width}.png",
        )
    finally:
        b.dt.send("Page.navigate", url="about:blank")  # the browser stays for the module


@pytest.mark.server
@pytest.mark.browser
@pytest.mark.skipif(
    not (Path(CHROMIUM).exists() or shutil.which("chromium")), reason="chromium not installed"
)
def test_across_prevalence_chart_overlays_runs(ui_runs, ui_browser):
    base, exp_id = ui_runs["url"], ui_runs["experiment_id"]
    b = _ui_page(ui_browser, base, 1400)
    series = keys.sweep_key("test", "max_f1")
    try:
        _chart_view(b, f"{base}/#/experiments/{exp_id}/runs?workflowType=machine_learning", series)
        # MLflow's default x axis (Step): each run's sweep is one curve over steps 0..40 in
        # ascending η, with no point appended after the grid (that drew a hook back to the
        # test-prevalence value at the right end); max-F1 rises with η, so it never turns down
        step_traces = _traces(b, 3)
        for x, y in step_traces:
            assert x == list(range(tracking.SWEEP_POINTS)), x
            assert all(hi >= lo - 1e-12 for lo, hi in itertools.pairwise(y)), y
        _click(b, "[data-component-id='fullscreen_button_chartcard']")
        b.wait_for("!!document.querySelector('[role=dialog] .js-plotly-plot')")
        time.sleep(2.0)
        b.save_screenshot(ARTIFACTS / "mlflow-sweep-step-axis-full-1400.png")

        # the same chart against log10 η: a fresh page, then the x axis chosen once for all
        _chart_view(b, f"{base}/#/experiments/{exp_id}/runs?workflowType=machine_learning", series)
        _click(b, "[aria-label='Configure charts']")
        _click(b, "[role=menuitem]", text="Metric")
        x_key = keys.metric_key("test", keys.X_AXIS_METRIC)
        item = (
            f"[...document.querySelectorAll('[role=menuitemcheckbox]')]"
            f".find(e => e.textContent.trim() === {json.dumps(x_key)})"
        )
        b.wait_for(f"!!{item}")
        b.js(f"{item}.click()")
        time.sleep(3.0)
        # every run's series is drawn (one trace per run) in the filtered chart, against log10 η
        traces = _traces(b, 3)
        for x, _ in traces:
            assert len(x) == tracking.SWEEP_POINTS and all(np.diff(x) > 0), x
        b.save_screenshot(ARTIFACTS / "mlflow-across-prevalence-1400.png")
        # the x axis reads log10 η: ticks from about -6 to 0, not steps 0..40
        ticks = json.loads(
            b.js(
                "JSON.stringify([...document.querySelectorAll('.js-plotly-plot .xtick text')]"
                ".map(t => t.textContent))"
            )
        )
        values = [float(t.replace("−", "-")) for t in ticks if t.strip()]
        assert values and min(values) <= -4 and max(values) <= 0, ticks
        # the chart's own full-screen button: the same chart, large (the docs' screenshot)
        _click(b, "[data-component-id='fullscreen_button_chartcard']")
        b.wait_for("!!document.querySelector('[role=dialog] .js-plotly-plot')")
        time.sleep(2.0)
        b.save_screenshot(ARTIFACTS / "mlflow-across-prevalence-full-1400.png")
    finally:
        b.dt.send("Page.navigate", url="about:blank")  # the browser stays for the module


def _chart_view(b: _Chromium, url: str, search: str) -> None:
    """The runs page in its chart view, the charts filtered to those matching ``search``."""
    b.go(url, "document.querySelector('input[value=CHART]')")
    b.js("document.querySelector('input[value=CHART]').click()")
    b.wait_for("!!document.querySelector('[aria-label=\"Configure charts\"]')")
    time.sleep(2.0)
    box = "document.querySelector(\"input[placeholder='Search metric charts']\")"
    b.js(f"void ({box}.focus(), {box}.select())")  # typing replaces a remembered search
    b.dt.send("Input.insertText", text=search.removeprefix(keys.METRIC_PREFIX))
    time.sleep(3.0)


def _traces(b: _Chromium, at_least: int) -> list[tuple[list[float], list[float]]]:
    """``(x, y)`` of every line of the (one) chart shown, once it has ``at_least`` of them."""
    plots = "[...document.querySelectorAll('.js-plotly-plot')].filter(p => p.offsetParent)"
    got = b.wait_for(
        f"(() => {{ const p = {plots}; if (p.length !== 1) return null;"
        " const d = (p[0].data || []).filter(t => t.x && t.x.length > 1);"
        f" return d.length >= {at_least} ?"
        " JSON.stringify(d.map(t => [Array.from(t.x), Array.from(t.y)])) : null; })()"
    )
    return [(list(x), list(y)) for x, y in json.loads(got)]


def _click(b: _Chromium, selector: str, text: str | None = None) -> None:
    """A real mouse click (pointer events) at the centre of the last matching element."""
    find = (
        f"(() => {{ const els = [...document.querySelectorAll({json.dumps(selector)})]"
        f".filter(e => e.offsetParent !== null"
        + (f" && e.textContent.trim() === {json.dumps(text)}" if text else "")
        + "); if (!els.length) return null; const e = els[els.length - 1];"
        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    x, y = b.wait_for(find)
    b.dt.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    for kind in ("mousePressed", "mouseReleased"):
        b.dt.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
    time.sleep(1.0)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read()


def _side_by_side(left: Path, right: Path, out: Path) -> None:
    """Two screenshots next to each other in one PNG (for the test log and the docs)."""
    from matplotlib.image import imread, imsave

    a, b = imread(left), imread(right)
    h = max(a.shape[0], b.shape[0])
    pad = [np.ones((h - im.shape[0], im.shape[1], im.shape[2]), dtype=im.dtype) for im in (a, b)]
    gap = np.ones((h, 12, a.shape[2]), dtype=a.dtype) * 0.6
    imsave(out, np.hstack([np.vstack([a, pad[0]]), gap, np.vstack([b, pad[1]])]))


# --------------------------------------------------------------------------- preview figures


def test_preview_figures_legends_inside_and_colours_apart():
    from matplotlib.colors import to_rgb

    from mlflow_imbalance import plots
    from mlflow_imbalance.plots._style import PREVIEW_DPI

    y, s = _data(3, n=20000)
    c = mi.RocCounts.from_scores(y, s)
    figs = plots.preview_figures(c, prevalences=[1e-2, 1e-3, 1e-4], cost_fp=1, cost_fn=50)
    assert list(figs) == ["pr", "roc", "cost"]
    assert list(plots.preview_figures(c, kinds=("pr",))) == ["pr"]
    for key, fig in figs.items():
        assert fig.dpi == PREVIEW_DPI >= 100
        w, h = fig.get_size_inches() * fig.dpi
        assert w >= 800 and h >= 500, (key, w, h)
        fig.canvas.draw()
        ax = fig.axes[0]
        box, legend = ax.get_window_extent(), ax.get_legend().get_window_extent()
        # the legend sits inside the axes and takes a modest share of them
        assert box.x0 <= legend.x0 and legend.x1 <= box.x1 and box.y0 <= legend.y0
        assert legend.width * legend.height <= 0.3 * box.width * box.height, key
        for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and a.get_visible()):
            if getattr(text, "get_text", lambda: "x")():
                assert text.get_fontsize() >= PREVIEW_MIN_FONT_PT, (key, text)
    # one colour per prevalence, far apart (the P³ figure's 1e-3 and 1e-4 used to look alike)
    curves = [ln for ln in figs["pr"].axes[0].get_lines() if (ln.get_gid() or "").startswith("pr:")]
    rgb = np.array([to_rgb(ln.get_color()) for ln in curves])
    assert len(curves) == 4
    gaps = [np.abs(rgb[i] - rgb[j]).sum() for i in range(4) for j in range(i + 1, 4)]
    assert min(gaps) >= 0.5, gaps
    # the cost figure draws the envelope, not one line per operating point
    cost_lines = [ln for ln in figs["cost"].axes[0].get_lines() if ln.get_gid() == "cost_envelope"]
    assert len(cost_lines) == 1 and not figs["cost"].axes[0].collections
    for fig in figs.values():
        plots.close_figure(fig)


def test_preview_roc_draws_fpr_zero_on_its_own_tick_not_at_the_first_decade():
    """A max-F1 point at FPR = 0 sits above the axis's "0" tick, left of a break in the axis;
    before, it was drawn at the log axis's left limit, where it read as FPR = 1e-5."""
    from mlflow_imbalance import plots

    rng = np.random.default_rng(4)
    # 30 of 200 positives above every one of 50,000 negatives: at eta = 1e-4 the best F1 is
    # there (independently: precision 1 at FPR 0 beats any threshold admitting a negative)
    pos = np.r_[rng.uniform(10, 11, 30), rng.normal(1.0, 1.0, 170)]
    neg = rng.normal(0.0, 1.0, 50_000)
    y = np.r_[np.ones(pos.size, bool), np.zeros(neg.size, bool)]
    c = mi.RocCounts.from_scores(y, np.r_[pos, neg])
    fig = plots.preview_figures(c, prevalences=[1e-4], kinds=("roc",))["roc"]
    ax = fig.axes[0]
    fig.canvas.draw()
    x_zero = ax.get_xlim()[0]
    ticks = {float(t.get_loc()): t.label1.get_text() for t in ax.xaxis.get_major_ticks()}
    assert ticks[x_zero] == "0"
    # the curve's smallest positive FPR is that of the 31st positive (counts have a point at
    # each positive score): the decades start at its decade, right of "0"
    fpr_1 = np.mean(neg >= np.sort(pos)[::-1][30])
    assert min(v for v in ticks if v > x_zero) == pytest.approx(10.0 ** np.floor(np.log10(fpr_1)))
    dots = [ln for ln in ax.get_lines() if ln.get_label() == "max-F1 at η = 1e-4"]
    assert len(dots) == 1
    assert dots[0].get_xdata()[0] == x_zero and dots[0].get_ydata()[0] == pytest.approx(30 / 200)
    # the curve climbs the "0" tick to TPR 30/200 before it reaches any positive FPR
    line = next(ln for ln in ax.get_lines() if ln.get_gid() == "roc")
    x, yv = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert np.max(yv[x == x_zero]) == pytest.approx(30 / 200)
    plots.close_figure(fig)


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.server
@pytest.mark.browser
@pytest.mark.skipif(
    not (Path(CHROMIUM).exists() or shutil.which("chromium")), reason="chromium not installed"
)
def test_run_page_answers_in_the_training_view(ui_runs, ui_browser, width):
    """Issue 38: the run's URL as the package builds it opens the model-training view (no
    "Evaluations" breadcrumb of the GenAI view); the run's description shows the summary block
    (decisions at each logged prevalence, headline intervals); its card link opens the card's
    artifact-root copy; the runs list opens in the training view too. Screenshots kept."""
    from mlflow_imbalance.tracking import runpage

    base, exp_id = ui_runs["url"], ui_runs["experiment_id"]
    run_name = "logistic-regression"
    run_id = ui_runs["runs"][run_name]
    note = MlflowClient(base).get_run(run_id).data.tags[runpage.NOTE_TAG]
    b = _ui_page(ui_browser, base, width)
    try:
        b.go(
            keys.run_view_url(base, exp_id, run_id),
            "document.body.innerText.includes('Decision at each logged prevalence')",
        )
        text = b.js("document.body.innerText")
        assert "Evaluations" not in text, text[:400]
        assert "mlflow-imbalance · counts test" in text
        # every decision line of the block is rendered as text (no Markdown escapes left)
        for line in note.splitlines():
            if line.startswith("- At η = "):
                shown = line[2:].replace("\\", "")
                assert shown[:60] in text, shown[:60]
        b.save_screenshot(ARTIFACTS / f"mlflow-run-page-{width}.png")
        # the card one click away: the description's link opens the root copy
        href = b.js("document.querySelector(\"a[href*='imbalance_card_test.html']\").href")
        assert href == keys.run_view_url(base, exp_id, run_id, "imbalance_card_test.html")
        b.go(href, "document.querySelector('iframe')")
        b.wait_for("document.querySelector('iframe').src.startsWith('blob:')")
        time.sleep(1.0)
        assert b.frame_title("blob:").startswith(run_name)
        assert "imbalance_card_test.html" in b.js("location.href")
        assert "Evaluations" not in b.js("document.body.innerText")
        b.save_screenshot(ARTIFACTS / f"mlflow-run-card-root-{width}.png")
        # the runs list, as the quick start prints its URL
        b.go(
            tracking.runs_view_url(base, exp_id),
            f"document.body.innerText.includes({json.dumps(run_name)})",
        )
        assert "Evaluations" not in b.js("document.body.innerText")
        b.save_screenshot(ARTIFACTS / f"mlflow-runs-list-{width}.png")
    finally:
        b.dt.send("Page.navigate", url="about:blank")  # the browser stays for the module
