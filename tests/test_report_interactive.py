"""The report's charts under a real mouse in headless Chromium (DevTools driver of test_browser).

Asserts, from the rendered SVG and the tooltips a reader sees:

- a click on a run's legend entry (PR chart, metric-against-η chart) hides that run in every
  chart (its curve faded, its band and operating-point marker gone, its legend entry faded, the
  other runs untouched) and a second click shows it again;
- hovering a point of each curve shows a tooltip naming the run, with values equal to an
  independent computation from the raw scores (numpy, scikit-learn) to 3 significant digits:
  precision at that threshold and η (PR), TPR and FPR (ROC), the minimum expected cost and the
  AP at that η (metric-against-η charts), precision at the cost-optimal threshold (PR marker);
- after typing another η into the prevalence box the PR chart's tooltips and markers give the
  values at the new η, the current-η rule moves there, and a hidden run stays hidden.

One Chromium serves the module (conftest's ``browser``); each test loads its page anew.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from test_browser import ARTIFACTS, Chromium, _precision_at_cost_optimum, _scores

import mlflow_imbalance as mi

pytestmark = pytest.mark.browser
COST_FP, COST_FN = 1, 200

# ------------------------------------------------------------------------ page-side readers
#: The rendered state of one chart: legend entries (centre of label and symbol, opacity), the
#: opacity of each run's curve (opacity x stroke-opacity) and band (opacity x fill-opacity),
#: the operating-point markers drawn per run. Runs are read from the SVG elements' Vega
#: items (``__data__``).
_STATE = """(id => {
  const root = document.getElementById(id), entries = {}, lines = {}, bands = {}, ops = {};
  const centre = e => { const r = e.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2]; };
  const num = (e, a) => e.hasAttribute(a) ? Number(e.getAttribute(a)) : 1;
  root.querySelectorAll('.role-legend-label text').forEach(t => {
    entries[t.__data__.datum.value] = {label: centre(t), opacity: num(t, 'opacity')}; });
  root.querySelectorAll('.role-legend-symbol path').forEach(p => {
    const e = entries[p.__data__.datum.value];
    e.symbol = centre(p); e.symbolOpacity = num(p, 'opacity'); });
  root.querySelectorAll('g.mark-line path').forEach(p => {
    lines[p.__data__.datum.run] = num(p, 'opacity') * num(p, 'stroke-opacity'); });
  root.querySelectorAll('g.mark-area path').forEach(p => {
    bands[p.__data__.datum.run] = num(p, 'opacity') * num(p, 'fill-opacity'); });
  root.querySelectorAll('g.mark-symbol path').forEach(p => {
    const d = p.__data__.datum; if (d.what !== undefined) { ops[d.run] = (ops[d.run] || 0) + 1; }
  });
  return JSON.stringify({entries, lines, bands, ops});
})"""

#: The centre of a hover point of ``run`` (``kind`` 'curve': the invisible points on a curve;
#: 'op': the operating-point marker) inside the plot, the one farthest from the other runs'
#: points that could take the hover (so the tooltip is this run's), with that distance in px.
_PICK = """((id, run, kind) => {
  const root = document.getElementById(id);
  const frame = root.querySelector('g.role-frame path.background').getBoundingClientRect();
  const pts = [...root.querySelectorAll('g.mark-symbol path')]
    .filter(e => e.__data__ && e.__data__.datum && e.__data__.datum.run !== undefined)
    .map(e => { const r = e.getBoundingClientRect(), d = e.__data__.datum;
      return {x: r.left + r.width / 2, y: r.top + r.height / 2, run: d.run,
              kind: d.what === undefined ? 'curve' : 'op'}; });
  const m = kind === 'op' ? -1 : 3;  /* markers are not clipped: on the frame's edge is fine */
  const inside = p => p.x > frame.left + m && p.x < frame.right - m &&
    p.y > frame.top + m && p.y < frame.bottom - m;
  const mine = pts.filter(p => p.run === run && p.kind === kind && inside(p));
  /* markers are drawn above the curves' hover layer: only other markers can cover one */
  const others = pts.filter(p => p.run !== run && (kind === 'curve' || p.kind === 'op'));
  let best = null, far = -1;
  mine.forEach(p => { let m = Infinity;
    others.forEach(q => { m = Math.min(m, Math.hypot(p.x - q.x, p.y - q.y)); });
    if (m > far) { far = m; best = p; } });
  return JSON.stringify(best && {x: best.x, y: best.y, far: far});
})"""

#: The visible Vega tooltip as {title: text}, or null.
_TOOLTIP = """(() => {
  const t = document.getElementById('vg-tooltip-element');
  if (!t || !t.classList.contains('visible')) { return null; }
  return JSON.stringify(Object.fromEntries([...t.querySelectorAll('tr')].map(r =>
    [r.children[0].textContent, r.children[1].textContent])));
})()"""


def _num(text: str) -> float:
    """A number as d3-format prints it (U+2212 minus)."""
    return float(text.replace("\u2212", "-"))


def _same_3sig(shown: float, ref: float) -> bool:
    """``shown`` equals ``ref`` to 3 significant digits (half a unit of the third digit)."""
    if ref == 0:
        return shown == 0
    return abs(shown - ref) <= 0.5 * 10 ** (math.floor(math.log10(abs(ref))) - 2) + 1e-15


def _state(page: Chromium, chart: str) -> dict:
    return json.loads(page.eval(f"{_STATE}({json.dumps(chart)})"))


def _looks(st: dict) -> dict:
    """The state without positions: what a click may change."""
    entries = {k: (e["opacity"], e["symbolOpacity"]) for k, e in st["entries"].items()}
    return {"entries": entries, "lines": st["lines"], "bands": st["bands"], "ops": st["ops"]}


def _wait_line(page: Chromium, chart: str, run: str, hidden: bool) -> None:
    """Wait until ``run``'s curve in ``chart`` is drawn faded (hidden) or at full opacity."""
    test = "<= 0.05" if hidden else "=== 1"
    page.wait(f"JSON.parse({_STATE}({json.dumps(chart)})).lines[{json.dumps(run)}] {test}", 10)


def _click_legend(page: Chromium, chart: str, run: str, part: str = "label") -> None:
    """A real click on the centre of ``run``'s legend label (or symbol) in ``chart``."""
    _into_view(page, chart)
    x, y = _state(page, chart)["entries"][run][part]
    _mouse(page, x, y, click=True)


def _into_view(page: Chromium, chart: str) -> None:
    page.eval(f"document.getElementById({json.dumps(chart)}).scrollIntoView({{block: 'center'}})")
    time.sleep(0.2)


def _mouse(page: Chromium, x: float, y: float, click: bool = False) -> None:
    """A real pointer move (and left click) at viewport coordinates."""
    page.dt.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    if click:
        for kind in ("mousePressed", "mouseReleased"):
            page.dt.send(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )


def _hover(page: Chromium, chart: str, run: str, kind: str = "curve") -> dict:
    """Hover the point of ``run`` picked by :data:`_PICK`; the tooltip then shown."""
    _into_view(page, chart)
    _mouse(page, 2, 2)  # off the charts: any tooltip hides
    page.wait(f"{_TOOLTIP} === null", timeout=10)
    pick = json.loads(page.eval(f"{_PICK}({json.dumps(chart)}, {json.dumps(run)}, '{kind}')"))
    assert pick is not None, (chart, run, kind)
    assert pick["far"] >= (12 if kind == "op" else 3), pick  # no other run under the pointer
    _mouse(page, pick["x"], pick["y"])
    page.wait(f"{_TOOLTIP} !== null", timeout=10)
    return json.loads(page.eval(_TOOLTIP))


def _view_rows(page: Chromium, chart: str, dataset: str) -> list[dict]:
    """Rows of a chart's dataset, from the Vega view the page keeps (to identify a point)."""
    return json.loads(
        page.eval(f"JSON.stringify(mlflowImbalance.views[{json.dumps(chart)}].data('{dataset}'))")
    )


def _type_prevalence(page: Chromium, eta: float) -> None:
    """Type ``eta`` into the prevalence box (real key input) and wait for the page to follow."""
    page.eval(
        "(() => { const b = document.getElementById('prevalence'); b.focus(); b.select(); })()"
    )
    page.dt.send("Input.insertText", text=repr(eta))
    page.wait(f"Number(document.getElementById('verdict-live').dataset.prevalence) === {eta!r}")


# --------------------------------------------------------------- independent references
def _rates_at(y: np.ndarray, s: np.ndarray, thr6: float) -> tuple[np.ndarray, np.ndarray]:
    """(TPR, FPR) of 'score >= t' for every score t that rounds to ``thr6`` (6 significant)."""
    u = np.unique(s)
    half = 0.5 * 10 ** (math.floor(math.log10(abs(thr6))) - 5)
    t = u[np.abs(u - thr6) <= half * (1 + 1e-9)]
    assert t.size >= 1, thr6
    tpr = (s[y][None, :] >= t[:, None]).mean(axis=1)
    fpr = (s[~y][None, :] >= t[:, None]).mean(axis=1)
    return tpr, fpr


def _min_cost(y: np.ndarray, s: np.ndarray, eta: float) -> float:
    """Minimum expected cost per case over thresholds at ``eta`` (scikit-learn ROC)."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(y, s)
    return float(np.min((1 - eta) * COST_FP * fpr + eta * COST_FN * (1 - tpr)))


def _ap_at(y: np.ndarray, s: np.ndarray, eta: float) -> float:
    """AP at prevalence ``eta``: scikit-learn's AP with negatives reweighted to ``eta``."""
    from sklearn.metrics import average_precision_score

    w = np.where(y, 1.0, (1 - eta) / eta * y.sum() / (~y).sum())
    return float(average_precision_score(y, s, sample_weight=w))


# ------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, np.ndarray, dict[str, np.ndarray]]:
    """Three runs' counts from scores generated here (as test_browser), costs given."""
    y, runs = _scores()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in runs.items()}
    rep = mi.build_report(
        counts, prevalences=[1e-3, 1e-2], costs={"fp": COST_FP, "fn": COST_FN}, n_bootstrap=60,
        title="interactive test", progress=False,
    )  # fmt: skip
    return rep.save(tmp_path_factory.mktemp("interactive") / "report.html"), y, runs


# ----------------------------------------------------------------------------------- tests
CHARTS = ("chart-pr", "chart-sweep-cost", "chart-roc", "chart-sweep-ap")
#: (chart, run, part of its legend entry clicked): the live PR chart, the live criterion chart.
CLICKS = (("chart-pr", "sharp", "label"), ("chart-sweep-cost", "middle", "symbol"))


def _toggles(page: Chromium) -> list[dict[str, bool]]:
    """Each "Runs drawn" group's check boxes as {run: checked}."""
    return json.loads(
        page.eval(
            "JSON.stringify([...document.querySelectorAll('.run-toggles')].map(g =>"
            " Object.fromEntries([...g.querySelectorAll('input')].map(c => [c.value, c.checked]))))"
        )
    )


def _press(page: Chromium, key: str, code: str, vk: int) -> None:
    """A real key press (down, up) as the keyboard sends it, to the focused element."""
    text = {" ": " "}.get(key, "")
    page.dt.send(
        "Input.dispatchKeyEvent", type="keyDown", key=key, code=code, text=text,
        windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk,
    )  # fmt: skip
    page.dt.send(
        "Input.dispatchKeyEvent", type="keyUp", key=key, code=code,
        windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk,
    )  # fmt: skip


def test_keyboard_check_boxes_hide_runs_in_step_with_the_legends(report, browser) -> None:
    """The legends take no focus, so each group of charts has a check box per run: Tab reaches
    it, Space toggles it, the run hides in every chart and every group's box follows; a legend
    click is reflected back in the boxes."""
    path, _, runs = report
    names = list(runs)
    run = "sharp"
    with browser.at(1400, 900) as page:
        page.open(path)
        page.wait(f"Object.keys(mlflowImbalance.views).length === {len(CHARTS)}")
        groups = _toggles(page)
        assert len(groups) == 2 and all(g == {n: True for n in names} for g in groups), groups
        # Tab from the element before the box lands on it: it is in the keyboard order
        page.eval(
            "(() => { const b = document.querySelector('#charts .run-toggles input[value=sharp]');"
            " const all = [...document.querySelectorAll('a[href], input, button, summary')];"
            " all[all.indexOf(b) - 1].focus(); })()"
        )
        _press(page, "Tab", "Tab", vk=9)
        assert page.eval("document.activeElement.value") == run
        _press(page, " ", "Space", vk=32)
        for c in CHARTS:
            _wait_line(page, c, run, hidden=True)
        assert page.eval("JSON.stringify(mlflowImbalance.hidden())") == json.dumps([run])
        assert all(g == {n: n != run for n in names} for g in _toggles(page)), _toggles(page)
        for c in CHARTS:
            st = _state(page, c)
            assert all(st["lines"][n] == 1 for n in names if n != run), (c, st["lines"])
        # a legend click shows it again, and the boxes follow
        _click_legend(page, "chart-pr", run)
        _wait_line(page, "chart-pr", run, hidden=False)
        assert all(g == {n: True for n in names} for g in _toggles(page)), _toggles(page)
        errors = page.errors()
    assert not errors, errors[:3]


def _cost_leaders(y, runs, eta: float, k: int = 2) -> set[str]:
    """The ``k`` runs of lowest expected cost at ``eta`` (scikit-learn's ROC points)."""
    from sklearn.metrics import roc_curve

    cost = {}
    for n, s in runs.items():
        fpr, tpr, _ = roc_curve(y, s)
        cost[n] = float(np.min((1 - eta) * COST_FP * fpr + eta * COST_FN * (1 - tpr)))
    return set(sorted(cost, key=cost.get)[:k])


@pytest.mark.parametrize("width", [1000, 1400])
def test_legend_click_hides_the_run_in_every_chart(report, browser, width: int) -> None:
    path, y, runs = report
    names = list(runs)
    with browser.at(width, 900) as page:
        page.open(path)
        keys = page.eval("JSON.stringify(Object.keys(mlflowImbalance.views).sort())")
        assert json.loads(keys) == sorted(CHARTS)
        before = {c: _state(page, c) for c in CHARTS}
        for c, st in before.items():
            assert set(st["entries"]) == set(names), (c, st["entries"])
            assert st["lines"] == {n: 1 for n in names}, (c, st["lines"])
            assert all(e["opacity"] == 1 for e in st["entries"].values())
        assert before["chart-pr"]["ops"] == {n: 1 for n in names}
        # at first only the first verdict's winner and runner-up carry bands: the two runs of
        # lowest expected cost at η = 1e-3, computed here with scikit-learn's roc_curve
        first = {n for n, o in before["chart-pr"]["bands"].items() if o > 0}
        assert first == _cost_leaders(y, runs, 1e-3), first
        page.eval(
            "(() => { const s = document.querySelector('select.bands'); s.value = 'all'; "
            "s.dispatchEvent(new Event('change')); })()"
        )
        page.wait("mlflowImbalance.nobands().length === 0")
        time.sleep(0.3)
        before = {c: _state(page, c) for c in CHARTS}
        assert set(before["chart-pr"]["bands"]) == set(names)
        assert all(0 < v < 1 for v in before["chart-pr"]["bands"].values())
        for chart, run, part in CLICKS:
            _into_view(page, chart)
            shots = {"before": page.screenshot()}
            _click_legend(page, chart, run, part)
            _wait_line(page, chart, run, hidden=True)
            _mouse(page, 2, 2)
            shots["after"] = page.screenshot()
            after = {c: _state(page, c) for c in CHARTS}
            for c, st in after.items():  # hidden in every chart, the others untouched
                assert st["lines"][run] <= 0.05, (chart, c, st["lines"])
                assert all(st["lines"][n] == 1 for n in names if n != run), (chart, c, st)
                assert st["entries"][run]["opacity"] < 0.5, (chart, c, st["entries"])
                assert st["entries"][run]["symbolOpacity"] < 0.5
                assert all(st["entries"][n]["opacity"] == 1 for n in names if n != run)
                assert st["bands"].get(run, 0) == 0, (chart, c, st["bands"])
                assert all(st["bands"][n] > 0 for n in st["bands"] if n != run), (c, st)
            assert after["chart-pr"]["ops"] == {n: 1 for n in names if n != run}
            # a second click on the same entry shows it again, in every chart
            _click_legend(page, chart, run, part)
            _wait_line(page, chart, run, hidden=False)
            assert {c: _looks(_state(page, c)) for c in CHARTS} == {
                c: _looks(st) for c, st in before.items()
            }, (chart, run)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            for k, png in shots.items():
                assert png[:8] == b"\x89PNG\r\n\x1a\n"
                (ARTIFACTS / f"legend-{chart}-{width}-{k}.png").write_bytes(png)
        errors = page.errors()
    assert not errors, errors[:3]


def _check_pr_tooltip(page: Chromium, y, runs, run: str, eta: float) -> None:
    """Hover a PR point of ``run``: precision at its threshold and η equals numpy's."""
    tt = _hover(page, "chart-pr", run)
    assert tt["run"] == run, tt
    shown_r, shown_p, shown_t = _num(tt["recall"]), _num(tt["precision"]), _num(tt["threshold"])
    rows = [
        r
        for r in _view_rows(page, "chart-pr", "pr")
        if r["run"] == run and f"{r['x']:.3f}" == tt["recall"] and _same_3sig(shown_t, r["thr"])
    ]
    assert rows, tt
    for r in rows:
        tpr, fpr = _rates_at(y, runs[run], r["thr"])
        prec = eta * tpr / (eta * tpr + (1 - eta) * fpr)
        assert all(abs(t - shown_r) <= 5e-4 + 1e-12 for t in tpr), (tt, tpr)
        assert all(_same_3sig(shown_p, p) for p in prec), (run, eta, tt, prec)


def _check_op_tooltip(page: Chromium, y, runs, run: str, eta: float) -> None:
    """Hover ``run``'s operating-point marker: precision at the cost optimum equals sklearn's."""
    tt = _hover(page, "chart-pr", run, kind="op")
    assert tt["run"] == run and tt["point"] == "cost-optimal threshold", tt
    want = _precision_at_cost_optimum(y, runs[run], eta, COST_FP, COST_FN)
    assert _same_3sig(_num(tt["precision"]), want), (run, eta, tt, want)


def test_hover_values_and_prevalence_control(report, browser) -> None:
    path, y, runs = report
    with browser.at(1200, 900) as page:
        page.open(path)
        eta0 = float(page.eval("document.getElementById('verdict-live').dataset.prevalence"))
        for run in runs:
            _check_pr_tooltip(page, y, runs, run, eta0)
            _check_op_tooltip(page, y, runs, run, eta0)
            # ROC: TPR and FPR at the point's threshold
            tt = _hover(page, "chart-roc", run)
            assert tt["run"] == run, tt
            rows = [
                r
                for r in _view_rows(page, "chart-roc", "roc")
                if r["run"] == run and f"{r['y']:.3f}" == tt["TPR"]
                and _same_3sig(_num(tt["threshold"]), r["thr"])
            ]  # fmt: skip
            assert rows, tt
            for r in rows:
                tpr, fpr = _rates_at(y, runs[run], r["thr"])
                assert all(_same_3sig(_num(tt["FPR"]), f) for f in fpr), (tt, fpr)
                assert all(abs(t - _num(tt["TPR"])) <= 5e-4 + 1e-12 for t in tpr), (tt, tpr)
            # the criterion and AP against eta, at the hovered grid eta
            # the cost chart is in the unit of the η in effect, as the verdict (issue 38)
            per = 10_000 if eta0 >= 1e-3 else 1_000_000
            title = f"Expected cost per {per:,} cases"
            assert page.eval(
                f"document.querySelector('#chart-sweep-cost').textContent.includes('{title}')"
            )
            for chart, key, ref, unit in (
                ("chart-sweep-cost", "expected cost (the axis's unit)", _min_cost, per),
                ("chart-sweep-ap", "AP", _ap_at, 1),
            ):
                tt = _hover(page, chart, run)
                assert tt["run"] == run, (chart, tt)
                dataset = "sweep_" + chart.rsplit("-", 1)[1]
                etas = [
                    r["x"]
                    for r in _view_rows(page, chart, dataset)
                    if r["run"] == run and _same_3sig(_num(tt["η"]), r["x"])
                    and _same_3sig(_num(tt[key]), r["y"] * unit)
                ]  # fmt: skip
                assert etas, (chart, tt)
                for e in etas:
                    want = ref(y, runs[run], e) * unit
                    assert _same_3sig(_num(tt[key]), want), (chart, run, e, tt, want)

        # another eta typed into the box: the live charts follow
        eta1 = 5e-3  # the operating-point markers of the runs apart (not at recall ~1)
        assert not _same_3sig(eta1, eta0)
        hide = "sharp"
        _click_legend(page, "chart-pr", hide)
        _wait_line(page, "chart-pr", hide, hidden=True)
        _type_prevalence(page, eta1)
        for run in runs:
            if run == hide:
                continue
            _check_pr_tooltip(page, y, runs, run, eta1)
            _check_op_tooltip(page, y, runs, run, eta1)
        st = _state(page, "chart-pr")
        assert st["lines"][hide] <= 0.05 and hide not in st["ops"], st  # still hidden
        # the hidden run gives no tooltips: its points are out of the hover layer
        assert page.eval(f"{_PICK}('chart-pr', {json.dumps(hide)}, 'curve')") == "null"
        # the current-eta rule of the metric-against-eta chart sits at eta1 (between the
        # pixel positions of the grid points around it)
        rule = json.loads(page.eval("""JSON.stringify([...document.querySelectorAll(
          '#chart-sweep-cost g.mark-rule line')].filter(l => l.__data__.datum.eta !== undefined
          && l.__data__.datum.label === undefined).map(l => [l.__data__.datum.eta,
          l.getBoundingClientRect().left]))"""))  # fmt: skip
        assert [r[0] for r in rule] == [eta1], rule
        grid = json.loads(page.eval("""JSON.stringify([...document.querySelectorAll(
          '#chart-sweep-cost g.mark-symbol path')].filter(p => p.__data__.datum.i !== undefined)
          .map(p => { const r = p.getBoundingClientRect();
            return [p.__data__.datum.x, r.left + r.width / 2]; }))"""))  # fmt: skip
        lo = max((g for g in grid if g[0] <= eta1), key=lambda g: g[0])
        hi = min((g for g in grid if g[0] >= eta1), key=lambda g: g[0])
        assert lo[1] - 1 <= rule[0][1] <= hi[1] + 1, (lo, rule, hi)
        errors = page.errors()
    assert not errors, errors[:3]


def test_roc_chart_draws_fpr_zero_on_its_own_tick(report, browser) -> None:
    """A log FPR axis has no 0: the ROC chart gives FPR = 0 its own tick, labelled "0", at the
    left end of the axis, and each run's points at FPR = 0 (positives above every negative)
    are drawn there, up to the TPR scikit-learn finds at FPR = 0; before, they were dropped."""
    from sklearn.metrics import roc_curve

    path, y, runs = report
    with browser.at(1200, 900) as page:
        page.open(path)
        page.wait("mlflowImbalance.views['chart-roc'] !== undefined")
        lo, hi = json.loads(
            page.eval("JSON.stringify(mlflowImbalance.views['chart-roc'].scale('x').domain())")
        )
        assert hi == 1.0 and 0 < lo < 1e-3
        labels = json.loads(
            page.eval(
                "JSON.stringify([...document.querySelectorAll("
                "'#chart-roc g.role-axis text')].map(t => t.textContent))"
            )
        )
        assert labels[0] == "0" and labels.count("0") == 1, labels
        rows = _view_rows(page, "chart-roc", "roc")
        for run, s in runs.items():
            fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
            mine = [r for r in rows if r["run"] == run]
            zero = [r for r in mine if r["fpr"] == 0]
            assert zero and all(r["x"] == lo for r in zero), run
            assert max(r["y"] for r in zero) == pytest.approx(tpr[fpr == 0].max(), abs=1e-6)
            # every other point sits at its own FPR, right of the break
            assert all(r["x"] == r["fpr"] > lo for r in mine if r["fpr"] > 0)


def _max_f1_at(y: np.ndarray, s: np.ndarray, eta: float) -> float:
    """max-F1 at prevalence ``eta``: scikit-learn's PR curve with negatives reweighted."""
    from sklearn.metrics import precision_recall_curve

    w = np.where(y, 1.0, (1 - eta) / eta * y.sum() / (~y).sum())
    p, r, _ = precision_recall_curve(y, s, sample_weight=w)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return float(f1.max())


def test_report_without_costs_sets_max_f1_beside_the_roc_chart(tmp_path: Path, browser) -> None:
    """With AP as the criterion (no costs) the live section holds the PR and AP-against-η charts
    and the "Curves" section the ROC chart beside max-F1 against η (not the ROC chart alone on
    half the width): both drawn, side by side, and the max-F1 curve's points equal
    scikit-learn's max-F1 with the negatives reweighted to that η (3 significant digits)."""
    from sklearn.metrics import average_precision_score

    y, runs = _scores()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in runs.items()}
    rep = mi.build_report(counts, prevalences=[1e-3], n_bootstrap=60, progress=False)
    path = rep.save(tmp_path / "report.html")
    with browser.at(1400, 900) as page:
        page.open(path)
        page.wait("mlflowImbalance.views['chart-sweep-max_f1'] !== undefined")
        layout = json.loads(
            page.eval(
                "JSON.stringify(Object.fromEntries([...document.querySelectorAll('.vega')].map("
                "e => [e.id, [e.closest('section').id, Math.round(e.getBoundingClientRect().top),"
                " Math.round(e.getBoundingClientRect().left), e.querySelectorAll("
                "'svg path').length]])))"
            )
        )
        rows = _view_rows(page, "chart-sweep-max_f1", "sweep_max_f1")
        selects = json.loads(
            page.eval(
                "JSON.stringify([...document.querySelectorAll('select.bands')].map(s => "
                "[s.value, [...s.options].map(o => o.value)]))"
            )
        )
        bands = _bands_drawn(page, tuple(layout))
        errors = page.errors()
    assert not errors, errors[:3]
    assert set(layout) == {"chart-pr", "chart-sweep-ap", "chart-roc", "chart-sweep-max_f1"}
    assert layout["chart-sweep-ap"][0] == layout["chart-pr"][0] == "live"
    roc, mf1 = layout["chart-roc"], layout["chart-sweep-max_f1"]
    assert roc[0] == mf1[0] == "charts" and roc[1] == mf1[1] and roc[2] < mf1[2], layout
    assert all(v[3] > 10 for v in layout.values()), layout
    # three runs: the bands of the best two by AP at 1e-3 (scikit-learn, negatives
    # reweighted), and the bands control offers all, those two, or none
    w = np.where(y, 1.0, (1 - 1e-3) / 1e-3 * y.sum() / (~y).sum())
    ap = {k: average_precision_score(y, s, sample_weight=w) for k, s in runs.items()}
    assert selects == [["lead", ["all", "lead", "none"]]] * 2, selects
    assert all(b == set(sorted(ap, key=ap.get)[-2:]) for b in bands.values()), bands
    for run, s in runs.items():
        mine = [r for r in rows if r["run"] == run]
        assert len(mine) > 20, run
        for r in mine[:: max(1, len(mine) // 12)]:
            assert _same_3sig(r["y"], _max_f1_at(y, s, r["x"])), (run, r)


def _bands_drawn(page: Chromium, charts: tuple[str, ...]) -> dict[str, set[str]]:
    """Per chart, the runs whose band is drawn (fill visible)."""
    return {c: {n for n, o in _state(page, c)["bands"].items() if o > 0} for c in charts}


def test_bands_of_the_leading_runs_only_when_many_are_drawn(tmp_path: Path, browser) -> None:
    """Overlapping bands of many runs read as one: with more than BAND_RUNS runs charted only
    the verdict's winner and runner-up (best AP at the chosen η) have bands at first, and the
    "Bands" control of either group (kept in step) shows every run's bands or none. Lines
    are untouched. With no more runs than that, every band shows and there is no such option."""
    from sklearn.metrics import average_precision_score

    from mlflow_imbalance.report.analysis.charts import BAND_RUNS

    y, runs = _scores()
    rng = np.random.default_rng(5)
    runs = {**runs, **{f"noisy {k}": rng.normal(size=y.size) + k * 0.4 * y for k in (1, 2)}}
    assert len(runs) > BAND_RUNS
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in runs.items()}
    eta = 1e-2
    rep = mi.build_report(counts, prevalences=[eta], n_bootstrap=60, progress=False)
    w = np.where(y, 1.0, (1 - eta) / eta * y.sum() / (~y).sum())
    ap = {k: average_precision_score(y, s, sample_weight=w) for k, s in runs.items()}
    leading = set(sorted(ap, key=ap.get, reverse=True)[:BAND_RUNS])
    charts = ("chart-pr", "chart-roc", "chart-sweep-ap", "chart-sweep-max_f1")
    path = rep.save(tmp_path / "report.html")
    with browser.at(1400, 900) as page:
        page.open(path)
        page.wait(f"Object.keys(mlflowImbalance.views).length === {len(charts)}")
        first = _bands_drawn(page, charts)
        selects = json.loads(
            page.eval(
                "JSON.stringify([...document.querySelectorAll('select.bands')].map(s => "
                "[s.value, [...s.options].map(o => o.value)]))"
            )
        )
        seen = {}
        for mode in ("all", "none", "lead"):
            page.eval(
                "(() => { const s = document.querySelectorAll('select.bands')[1]; "
                f"s.value = '{mode}'; s.dispatchEvent(new Event('change')); }})()"
            )
            page.wait(
                "mlflowImbalance.nobands().length === "
                + str({"all": 0, "none": len(runs), "lead": len(runs) - BAND_RUNS}[mode])
            )
            time.sleep(0.3)
            values = page.eval("[...document.querySelectorAll('select.bands')].map(s => s.value)")
            seen[mode] = (_bands_drawn(page, charts), values, _state(page, "chart-pr")["lines"])
        errors = page.errors()
    assert not errors, errors[:3]
    assert selects == [["lead", ["all", "lead", "none"]]] * 2, selects
    assert all(first[c] == leading for c in charts), (first, leading)
    assert all(seen["all"][0][c] == set(runs) for c in charts), seen["all"][0]
    assert all(seen["none"][0][c] == set() for c in charts), seen["none"][0]
    assert all(seen["lead"][0][c] == leading for c in charts), seen["lead"][0]
    for mode, (_, values, lines) in seen.items():
        assert values == [mode, mode], (mode, values)  # both groups' controls in step
        assert all(v == 1 for v in lines.values()), (mode, lines)


def test_every_drawn_run_is_told_apart_beyond_the_palette(tmp_path: Path, browser) -> None:
    """Ten runs drawn, eight palette colours: the two runs whose colour repeats are drawn
    dashed (one legend entry per run, its symbol dashed too), and their swatches in the tables
    and the "Runs drawn" control are striped, so no two drawn runs look alike anywhere."""
    from mlflow_imbalance.plots import PALETTE
    from mlflow_imbalance.report.analysis.charts import MAX_LEAD

    rng = np.random.default_rng(11)
    y = rng.random(3000) < 0.08
    runs = {f"run {i}": rng.normal(size=y.size) + (0.6 + 0.15 * i) * y for i in range(MAX_LEAD)}
    assert MAX_LEAD > len(PALETTE)
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in runs.items()}
    rep = mi.build_report(counts, prevalences=[1e-2], n_bootstrap=0, progress=False)
    path = rep.save(tmp_path / "report.html")
    with browser.at(1400, 900) as page:
        page.open(path)
        looks = json.loads(page.eval("""JSON.stringify((() => {
          const root = document.getElementById('chart-pr'), lines = {}, legend = {};
          root.querySelectorAll('g.mark-line path').forEach(p => { lines[p.__data__.datum.run] =
            [p.getAttribute('stroke'), p.getAttribute('stroke-dasharray') || '']; });
          root.querySelectorAll('.role-legend-symbol path').forEach(p => {
            legend[p.__data__.datum.value] = [p.getAttribute('stroke'),
              p.getAttribute('stroke-dasharray') || '']; });
          const sw = {};
          document.querySelectorAll('.run-toggles label').forEach(l => {
            const s = l.querySelector('.swatch');  /* not the "Bands" control's label */
            if (s) { sw[l.textContent.trim()] = s.style.background; } });
          const rows = {};
          document.querySelectorAll('#tables tbody th.name').forEach(th => {
            rows[th.textContent.trim()] = th.querySelector('.swatch').style.background; });
          return {lines, legend, sw, rows};
        })())"""))  # fmt: skip
        assert not page.errors()
    lines, legend = looks["lines"], looks["legend"]
    assert set(lines) == set(runs) and set(legend) == set(runs)
    assert len(set(map(tuple, lines.values()))) == len(runs), lines  # all pairs distinct
    assert legend == lines  # the legend shows each run as drawn
    dashed = {k for k, (_, d) in lines.items() if d not in ("", "1,0")}  # 1,0: solid
    assert len(dashed) == len(runs) - len(PALETTE), lines
    for sw in (looks["sw"], looks["rows"]):
        assert set(sw) == set(runs), sw
        assert len(set(sw.values())) == len(runs), sw
        assert {k for k, v in sw.items() if "repeating-linear-gradient" in v} == dashed, sw
