"""The HTML report: structure, numbers, flips, skipped runs, escaping, determinism (no mocks)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import mlflow_imbalance as mi
from mlflow_imbalance import metrics
from mlflow_imbalance.report import RunData, build_report, strip_timestamp
from mlflow_imbalance.report.render import _environment, _fmt, _fmt_eta

XSS_NAME = "<script>alert(1)</script>\"q'uote"
XSS_TAG = '"><img src=x onerror=alert(2)>'


class _Collector(HTMLParser):
    """Records start tags with attributes, text and unbalanced markup."""

    VOID = frozenset({"meta", "img", "br", "hr", "link", "input", "col", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> _Collector:
    p = _Collector()
    p.feed(html)
    p.close()
    return p


def binormal(sep: float, n: int = 6000, prev: float = 0.05, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prev
    s = rng.normal(size=n) + sep * y
    return y, s


def two_bin(top_pos: int, top_neg: int, n_pos: int = 1000, n_neg: int = 1_000_000):
    """Issue 3's reference: a top bin holding some of each class, the rest in one bin below."""
    return mi.RocCounts([1.0, 0.0], [top_pos, n_pos], [top_neg, n_neg], n_pos, n_neg)


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple]:
    return {"alpha": binormal(1.2, seed=1), "beta": binormal(1.8, seed=2), "gamma": binormal(0.8)}


@pytest.fixture(scope="module")
def basic(runs):
    counts = {k: mi.RocCounts.from_scores(y, s) for k, (y, s) in runs.items()}
    rep = build_report(counts, prevalences=[1e-3], n_bootstrap=60, seed=3)
    return counts, rep


def test_structure_self_contained(basic):
    _, rep = basic
    html = rep.html
    p = parse(html)
    assert not p.errors, p.errors[:5]
    scripts = [a for t, a in p.tags if t == "script"]
    # inline scripts only: two JSON data blocks, the Vega bundle, the page's own script and
    # its print script (issue 38)
    assert len(scripts) == 5 and all("src" not in a for a in scripts)
    assert [a.get("type") for a in scripts] == ["application/json"] * 2 + [None, None, None]
    for tag, attrs in p.tags:
        for key in ("src", "href"):
            v = attrs.get(key)
            if v is not None:
                assert v.startswith(("data:", "#")), (tag, v[:60])
    # outside the Vega library's own text (which the CSP and the browser test cover)
    from mlflow_imbalance.report.render import vega_bundle

    assert html.count(vega_bundle()) == 1
    ours = html.replace(vega_bundle(), "")
    assert "<link" not in ours and "@import" not in ours and "url(" not in ours
    assert "http://" not in ours and "https://" not in ours.replace(
        "https://vega.github.io/schema/vega-lite/", ""
    )
    csp = next(a for t, a in p.tags if t == "meta" and a.get("http-equiv"))
    assert csp["http-equiv"] == "Content-Security-Policy"
    assert "default-src 'none'" in csp["content"] and "unsafe-eval" not in csp["content"]
    ids = [a.get("id") for _, a in p.tags if a.get("id")]
    assert len(ids) == len(set(ids)), "duplicated ids"
    for sec in (
        "verdict",
        "warnings",
        "live",
        "tables",
        "flips",
        "charts",
        "adequacy",
        "runs",
        "methods",
        "prevalence",
        "verdict-live",
    ):
        assert sec in ids, sec
    # sections in reading order: verdict, the prevalence control, tables, evidence, methods
    order = [
        ids.index(k)
        for k in ("verdict", "live", "tables", "flips", "charts", "adequacy", "runs", "methods")
    ]
    assert order == sorted(order)
    # every chart is present: PR at eta and the criterion against eta (live), ROC and, without
    # costs, max-F1 against eta beside it
    charts = [a["id"] for t, a in p.tags if t == "div" and "vega" in a.get("class", "")]
    assert {"chart-pr", "chart-roc", "chart-sweep-ap", "chart-sweep-max_f1"} <= set(charts)
    assert set(charts) == set(rep.context["specs"])
    assert "@media print" in html and "overflow-x: auto" in html
    assert rep.path is None and "Report(" in repr(rep)


def test_table_numbers_match_metrics(basic, runs):
    counts, rep = basic
    text = " ".join(parse(rep.html).text)
    for c in counts.values():
        assert _fmt(metrics.roc_auc(c)) in text
        assert _fmt(metrics.average_precision(c, 1e-3)) in text
        assert _fmt(metrics.pr_auc(c, 1e-3)) in text
        assert _fmt(metrics.max_f1(c, 1e-3)) in text
    # independent reference: scikit-learn AP with positives re-weighted to eta = 1e-3
    from sklearn.metrics import average_precision_score

    y, s = runs["beta"]
    eta = 1e-3
    w = np.where(y, eta / (1 - eta) * (~y).sum() / y.sum(), 1.0)
    assert _fmt(average_precision_score(y, s, sample_weight=w)) in text
    ctx = rep.context
    # ranks: the best ROC-AUC run is marked best
    best = max(counts, key=lambda k: metrics.roc_auc(counts[k]))
    row = next(r for r in ctx["roc_rows"] if r["name"] == best)
    assert row["best"] and row["rank"] == 1
    # one table per prevalence, the deployment prevalence first, runs ordered by AP there
    assert ctx["tables"][0]["eta_value"] == repr(1e-3)
    order = [r["name"] for r in ctx["tables"][0]["rows"]]
    assert order == sorted(counts, key=lambda k: -metrics.average_precision(counts[k], 1e-3))
    # intervals bracket the estimates
    cells = [c for t in ctx["tables"] for r in t["rows"] for c in r["cells"]]
    for cell in cells:
        assert cell["ci"].startswith("[") or cell["ci"] == ""
    assert any(c["ci"] for c in cells)


def test_weighted_runs_get_exact_point_estimates_and_say_so():
    """Sample-weighted counts: AP at η equals scikit-learn's weighted AP (negatives re-weighted
    to η), no cell, verdict or adequacy row claims an interval, and the page says so once for
    all weighted runs (the verdict's and the live table's notes too)."""
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(5)
    y = rng.random(4000) < 0.05
    w = rng.uniform(0.5, 2.0, y.size)
    scores = {"w1": rng.normal(size=y.size) + 1.2 * y, "w2": rng.normal(size=y.size) + 2.0 * y}
    counts = {k: mi.RocCounts.from_scores(y, s, sample_weight=w) for k, s in scores.items()}
    rep = build_report(counts, prevalences=[1e-3], n_bootstrap=60, progress=False)
    ctx, eta = rep.context, 1e-3
    table = next(t for t in ctx["tables"] if float(t["eta_value"]) == eta)
    for row in table["rows"]:
        y_w = w * np.where(y, 1.0, (1 - eta) / eta * w[y].sum() / w[~y].sum())
        ref = average_precision_score(y, scores[row["name"]], sample_weight=y_w)
        assert row["cells"][0]["value"].split()[0] == _fmt(ref), (row["name"], ref)
    cells = [c for t in ctx["tables"] for r in t["rows"] for c in r["cells"]]
    assert cells and all(c["ci"] == "" for c in cells)
    (v,) = ctx["verdicts"]
    assert v["precision_ci"] == "" and v["recall_ci"] == ""
    assert ctx["adequacy"] == []
    notes = [w["title"] for w in ctx["warnings"]]
    assert notes.count("Weighted counts.") == 1 and "No bootstrap for weighted counts." not in notes
    (text,) = [w["text"] for w in ctx["warnings"] if w["title"] == "Weighted counts."]
    assert text.startswith("w1, w2 carry sample weights") and "point estimates only" in text
    html = " ".join(parse(rep.html).text)
    assert "Precision and recall: point estimates (weighted counts have no binomial" in html
    assert "intervals (none for weighted counts)" in html
    assert "No run has an operating point this check applies to" in html
    # the header and the charts follow the runs: no intervals, replicates or bands to announce
    assert (
        "Uncertainty point estimates only (weighted counts: no intervals, bands or tests)" in html
    )
    assert "60 bootstrap replicates" not in html and "Shaded:" not in html
    assert ctx["data"]["has_bands"] is False
    assert all(
        "band" not in layer.get("data", {}).get("name", "")
        for spec in ctx["specs"].values()
        for layer in spec.get("layer", [])
    )


def test_an_operating_point_that_flags_every_case_is_not_ranked_on_precision_and_recall():
    """With C_FN = 100 at the test prevalence (~0.07), flagging every case (cost (1 - η) C_FP)
    beats every threshold of a weak two-level rule -- scikit-learn's ROC points say so -- so
    its precision is the prevalence and its recall 1 whatever the rule does. Those cells say
    "flags all" instead of a rank; the recall column's best is a run that chose a threshold."""
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(5)
    y = rng.random(6000) < 0.07
    scores = {
        "model": rng.normal(size=y.size) + 2.5 * y,
        "rule": (rng.random(y.size) < np.where(y, 0.3, 0.1)).astype(float),
    }
    eta = float(y.mean())
    fpr, tpr, _ = roc_curve(y, scores["rule"], drop_intermediate=False)
    cost = (1 - eta) * fpr + eta * 100 * (1 - tpr)
    assert np.argmin(cost) == cost.size - 1 and (tpr[-1], fpr[-1]) == (1.0, 1.0)  # flag all
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
    rep = build_report(counts, costs={"fp": 1, "fn": 100}, n_bootstrap=60, progress=False)
    (table,) = [t for t in rep.context["tables"] if t["kind"] == "test"]
    keys = [c["key"] for c in table["columns"]]
    rows = {r["name"]: dict(zip(keys, r["cells"], strict=True)) for r in table["rows"]}
    for key in ("precision", "recall"):
        cell = rows["rule"][key]
        assert cell["note"] == "flags all" and cell["rank"] is None, cell
        assert not cell["best"] and not cell["tie"]
        assert rows["model"][key]["note"] == "" and rows["model"][key]["rank"] == 1
    assert rows["rule"]["recall"]["value"] == "1"
    assert rows["rule"]["precision"]["value"] == _fmt(eta, 4)
    rule_row = next(r for r in table["rows"] if r["name"] == "rule")
    assert "flags every case" in rule_row["op"]
    assert "flags all" in rep.html and "not ranked" in rep.html


def test_ties_follow_the_intervals_and_a_column_of_ties_names_no_best():
    """At η = 1e-4 the unpaired z-test's variance comes from heavy-tailed replicates (a
    resample without the negative that outranks the top positives lifts AP several-fold), so
    it called a run with AP 0.02 [0.008, 0.04] tied with one at 3e-4 [2.7e-4, 3.9e-4]. Two
    valid 95% intervals that do not overlap reject equality at level ≤ 0.05 per direction
    (docs/statistics.md measures that this never adds a rejection with equal models): the
    verdict calls such a difference significant and says why, and no table cell is marked
    tied with the best when their intervals are apart. A column where every run is tied with
    the top names no best."""
    rng = np.random.default_rng(0)
    y = rng.random(20000) < 0.02
    a = rng.normal(size=y.size) + 2.35 * y
    b = rng.normal(size=y.size) + 1.3 * y + 0.6 * rng.standard_t(3, size=y.size)
    counts = {"A": mi.RocCounts.from_scores(y, a), "B": mi.RocCounts.from_scores(y, b)}
    rep = build_report(counts, prevalences=[1e-4], n_bootstrap=60, progress=False)
    (v,) = rep.context["verdict_data"]
    # the scenario: A leads clearly, yet the z-test alone does not separate the two
    assert v.run == "A" and v.p_value >= 0.05
    assert metrics.average_precision(counts["A"], 1e-4) > 20 * metrics.average_precision(
        counts["B"], 1e-4
    )
    assert v.significant is True and v.intervals_apart is True
    html = " ".join(parse(rep.html).text)
    assert "Better than B (their 95% AP intervals do not overlap; the z-test alone: p =" in html
    assert "Significantly better than B (their 95% AP intervals do not overlap; the z-test " in (
        v.text
    )
    bounds = re.compile(r"\[([^,]+), ([^\]]+)\]")
    n_apart = 0
    for t in rep.context["tables"]:
        best = {}
        for row in t["rows"]:
            for col, cell in zip(t["columns"], row["cells"], strict=True):
                if cell["best"]:
                    best[col["key"]] = cell
        for row in t["rows"]:
            for col, cell in zip(t["columns"], row["cells"], strict=True):
                if cell["best"] or not cell["ci"] or col["key"] not in best:
                    continue
                lo, hi = map(float, bounds.fullmatch(cell["ci"]).groups())
                b_lo, b_hi = map(float, bounds.fullmatch(best[col["key"]]["ci"]).groups())
                if lo > b_hi or b_lo > hi:
                    n_apart += 1
                    assert not cell["tie"], (t["label"], row["name"], col["key"])
    assert n_apart >= 3  # AP, PR-AUC and max-F1 at η = 1e-4 at least
    # a column names a best only when its lead separates it from some run: at η = 1e-4 both
    # operating points rest on a handful of cases (precision intervals ~[0.003, 1] and
    # [5e-6, 0.07]), so the precision column has no winner and both read "#k="
    no_winner = []
    for t in rep.context["tables"]:
        for i, col in enumerate(t["columns"]):
            cells = [row["cells"][i] for row in t["rows"]]
            if any(c["best"] for c in cells):
                assert not all(c["tie"] for c in cells if not c["best"]), (t["label"], col)
            else:
                assert all(c["tie"] for c in cells), (t["label"], col)
                no_winner.append((t["eta_value"], col["key"]))
    assert (repr(1e-4), "precision") in no_winner


def _two_bin_cost(top_pos, top_neg, eta, c_fn, n_pos=1000, n_neg=1_000_000):
    """Expected cost per case of a two-bin run at its best operating point, in closed form.

    Maxion & Roberts §5 / Brabec et al. eq. 8: cost = (1 - η)·C_FP·FPR + η·C_FN·(1 - TPR),
    minimised over the three points the run can reach (flag nothing, the top bin, everything).
    """
    points = [(0.0, 0.0), (top_pos / n_pos, top_neg / n_neg), (1.0, 1.0)]
    return min((1 - eta) * f + eta * c_fn * (1 - t) for t, f in points)


def test_flip_warning_present_for_flipping_pair():
    a = two_bin(900, 1000)  # high recall, LR 900
    b = two_bin(500, 100)  # low recall, LR 5000: wins at small prevalence
    rep = build_report({"A": a, "B": b}, prevalences=[1e-4], n_bootstrap=0)
    flips = rep.context["flips"]
    assert flips, "the reference pair must flip"
    assert {f["metric"] for f in flips} >= {"AP"}
    ap = next(f for f in flips if f["metric"] == "AP")
    assert ap["low_winner"] == "B"
    eta = ap["eta_value"]
    da = metrics.average_precision(a, eta / 2) - metrics.average_precision(b, eta / 2)
    db = metrics.average_precision(a, eta * 2) - metrics.average_precision(b, eta * 2)
    assert da < 0 < db  # independent check of the sign change around eta*
    # AP is the criterion here (no costs): its winner changes between the test prevalence
    # (1e-3: A) and 1e-4 (B), untested without a bootstrap
    (row,) = [f for f in rep.context["decision_flips"] if f["changes"]]
    assert (row["low_winner"], row["high_winner"], row["changes"]) == ("B", "A", "η = 1e-4")
    assert row["significant"] is None
    assert abs(math.log(row["eta_value"] / eta)) < 1e-6  # the same crossing as the AP flip
    html = rep.html
    assert "The decision may depend on the prevalence." in html
    assert "(not tested)" in html


def test_only_another_metric_flips_the_decision_banner_stays_quiet():
    """Done-when (a) of issue 29: AP flips between the test prevalence (1e-3) and η = 1e-4,
    but the decision criterion (expected cost, C_FN = 100) picks A at both -- computed here in
    closed form. No banner may say the winner depends on η, no row 'changes the verdict', and
    the AP flip appears once, in the collapsed line counted in run pairs."""
    a, b = two_bin(900, 1000), two_bin(500, 100)
    for eta in (1e-3, 1e-4):
        assert _two_bin_cost(900, 1000, eta, 100) < _two_bin_cost(500, 100, eta, 100)
    assert metrics.average_precision(b, 1e-4) > metrics.average_precision(a, 1e-4)
    rep = build_report(
        {"A": a, "B": b}, prevalences=[1e-4], costs={"fp": 1, "fn": 100}, n_bootstrap=200
    )
    ctx, html = rep.context, rep.html
    assert [v.run for v in rep.verdict] == ["A"]
    assert not any(f["changes"] for f in ctx["decision_flips"])
    assert "depends on the prevalence" not in html and "may depend" not in html
    assert 'class="badge danger">η' not in html and 'class="badge warn">η' not in html
    note = ctx["warnings"][0]
    assert note["level"] == "ok" and note["text"].startswith("A, by expected cost, at the test")
    summary = ctx["other_flips"]["text"]
    assert summary.startswith("AP") and " 1 run pair " in summary
    assert "the decision uses expected cost" in html
    # the cost winner does change, far below both prevalences: where the closed form says
    (row,) = ctx["decision_flips"]
    star = row["eta_value"]
    assert _two_bin_cost(500, 100, star / 1.01, 100) < _two_bin_cost(900, 1000, star / 1.01, 100)
    assert _two_bin_cost(500, 100, star * 1.01, 100) > _two_bin_cost(900, 1000, star * 1.01, 100)


def test_the_cost_winner_flips_between_the_test_and_deployment_prevalence():
    """Done-when (b) of issue 29: with C_FN = 10 the cost winner is A at the test prevalence
    (1e-3) and B at η = 1e-4 (closed form). The banner says the decision depends on η, the
    row changes the verdict at 1e-4, and its significance is the verdict's own test of B
    against A (A is the verdict's runner-up)."""
    a, b = two_bin(900, 1000), two_bin(500, 100)
    assert _two_bin_cost(900, 1000, 1e-3, 10) < _two_bin_cost(500, 100, 1e-3, 10)
    assert _two_bin_cost(500, 100, 1e-4, 10) < _two_bin_cost(900, 1000, 1e-4, 10)
    rep = build_report(
        {"A": a, "B": b}, prevalences=[1e-4], costs={"fp": 1, "fn": 10}, n_bootstrap=200
    )
    (v,) = rep.verdict
    assert (v.run, v.runner_up) == ("B", "A")
    (row,) = [f for f in rep.context["decision_flips"] if f["changes"]]
    assert (row["low_winner"], row["high_winner"], row["changes"]) == ("B", "A", "η = 1e-4")
    assert 1e-4 < row["eta_value"] < 1e-3
    assert row["significant"] == v.significant
    note = rep.context["warnings"][0]
    title = "The decision depends on the prevalence." if v.significant else None
    assert note["title"] == title and note["level"] == "danger"
    assert note["text"].startswith("Best by expected cost: B at 1e-4; A at the test prevalence")
    assert '<span class="badge danger">η = 1e-4</span>' in rep.html
    # the chart marks the crossing on the criterion's own curve
    assert any(f["metric"] == "cost" for f in rep.context["data"]["flips"])


def test_flip_callout_follows_the_decisions_significance():
    """The decision callout: alarming when a verdict-changing flip is significant or untested,
    a caution when it was tested and is within noise; quiet 'same winner' otherwise."""
    from mlflow_imbalance.report.analysis.decision import Anchor, DecisionFlip
    from mlflow_imbalance.report.analysis.notes import decision_note

    anchors = [Anchor(1e-3, "A", is_test=True), Anchor(1e-4, "B")]

    def note(sig):
        f = DecisionFlip(3e-4, "B", "A", changes_at=[1e-4], significant=sig)
        return decision_note([f], anchors, "AP", {}, str, str)

    assert note(True)["level"] == "danger" and "depends" in note(True)["title"]
    assert note(None)["level"] == "danger" and "may depend" in note(None)["title"]
    w = note(False)
    assert w["level"] == "warning" and "does not carry over" not in w["text"]
    assert "statistical tie" in w["text"] and "(significant)" not in w["text"]
    same = decision_note([], [Anchor(1e-3, "A", True), Anchor(1e-4, "A")], "AP", {}, str, str)
    assert same["level"] == "ok"
    # the flips table's "changes the verdict" badge: amber for a flip within noise
    for sig, cls in ((True, "danger"), (None, "danger"), (False, "warn")):
        row = {"eta": "3e-4", "low_winner": "B", "high_winner": "A", "changes": "η = 1e-4",
               "significant": sig, "significance": ""}  # fmt: skip
        html = _environment().get_template("_flips.html.j2").render(
            decision_flips=[row], other_flips={"text": ""}, lead=["A", "B"], n_runs=2,
            criterion_label="AP", prevalence_range="1e-5 – 0.5", roc_contradictions=[],
            confidence="95%", criterion_key="ap",
        )  # fmt: skip
        assert f'<span class="badge {cls}">η = 1e-4</span>' in html, html


def test_unpaired_flip_test_uses_count_bootstrap_replicates():
    """Without shared scores a flip is tested on each run's count-bootstrap replicates
    (FLIP_BOOTSTRAP of them, whatever --bootstrap is): the construction whose false-alarm rate
    bench_band_coverage.py --report-flips measures (median-centred Bayesian draws were not
    valid). The reference pair's flip (P = 1000 each) is clear and must be called."""
    from mlflow_imbalance.report.analysis.intervals import FLIP_BOOTSTRAP

    a, b = two_bin(900, 1000), two_bin(500, 100)
    rep = build_report({"A": a, "B": b}, prevalences=[1e-4], n_bootstrap=300, progress=False)
    ap = next(f for f in rep.context["flips"] if f["metric"] == "AP")
    assert FLIP_BOOTSTRAP != 300
    assert f"unpaired bootstrap (conservative), {FLIP_BOOTSTRAP} replicates" in ap["significance"]
    assert "count-bootstrap replicates" in ap["significance"]
    assert ap["significant"]
    # AP is the criterion (no costs): the verdict-changing AP crossing alarms
    assert "The decision depends on the prevalence." in rep.html
    assert '<span class="badge danger">η = 1e-4</span>' in rep.html


def test_no_flip_for_dominating_pair():
    a = two_bin(900, 100)
    b = two_bin(500, 1000)  # dominated at every FPR
    rep = build_report({"A": a, "B": b}, prevalences=[1e-4, 1e-2], n_bootstrap=0)
    assert rep.context["flips"] == []
    assert 'class="flip' not in rep.html
    assert "The best run by AP is the same everywhere" in rep.html


def test_skipped_runs_and_npz_files_without_mlflow(tmp_path, runs):
    paths = []
    for k, (y, s) in runs.items():
        p = tmp_path / f"{k}.npz"
        mi.RocCounts.from_scores(y, s).save(p)
        paths.append(str(p))
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a zip at all")
    missing = tmp_path / "missing.npz"
    out = tmp_path / "r.html"
    code = textwrap.dedent(
        f"""
        import sys
        from mlflow_imbalance import build_report
        rep = build_report({[*paths, str(bad), str(missing)]!r}, prevalences=1e-3,
                           n_bootstrap=0, output={str(out)!r})
        assert "mlflow" not in sys.modules, "report imported mlflow for files"
        print(len(rep.skipped))
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "2"
    html = out.read_text(encoding="utf-8")
    assert "Skipped runs" in html and "broken" in html and "missing" in html
    assert "not a valid .npz" in html
    assert "2 run(s) skipped." in html


def test_digest_caution_and_synthesized_marker(runs):
    (y1, s1), (y2, s2) = runs["alpha"], runs["beta"]
    r1 = RunData("one", mi.RocCounts.from_scores(y1, s1), digest="aaaa1111")
    r2 = RunData(
        "two",
        mi.RocCounts.from_scores(y2, s2),
        digest="bbbb2222",
        summary={"positives": "synthesized"},
    )
    rep = build_report([r1, r2], prevalences=[1e-3], n_bootstrap=0)
    html = rep.html
    assert "Different test sets." in html and "aaaa1111" in html and "bbbb2222" in html
    assert "Runs were evaluated on different test sets." in html
    assert "synthetic positives" in html and "Synthesised positives." in html
    same = build_report(
        [r1, RunData("two", r2.counts, digest="aaaa1111")], prevalences=[1e-3], n_bootstrap=0
    )
    assert "Different test sets." not in same.html


def test_user_strings_are_escaped(runs):
    y, s = runs["alpha"]
    r = RunData(
        XSS_NAME,
        mi.RocCounts.from_scores(y, s),
        run_id="abc",
        params={"p<b>": XSS_TAG},
        tags={XSS_TAG: XSS_NAME},
        source=XSS_TAG,
    )
    r2 = RunData(XSS_TAG, mi.RocCounts.from_scores(*runs["beta"]))
    rep = build_report(
        [r, r2], prevalences=[1e-3], n_bootstrap=0, experiment=XSS_NAME, title=XSS_TAG
    )
    p = parse(rep.html)
    assert not p.errors, p.errors[:5]
    scripts = [a for t, a in p.tags if t == "script"]
    assert len(scripts) == 5 and all("src" not in a for a in scripts)  # only the report's own
    for tag, attrs in p.tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        if tag == "img":
            assert attrs["src"].startswith("data:image/")
    text = "".join(p.text)
    assert XSS_NAME in text and XSS_TAG in text  # shown literally, as text
    assert "1 param, 1 tag" in text  # the run's details, counted in words that agree
    assert "<script>alert" not in rep.html and "<img src=x" not in rep.html
    # inside the embedded JSON the names survive exactly, with < > & escaped
    import json
    import re

    blob = re.search(r'<script type="application/json" id="mi-data">(.*?)</script>', rep.html, re.S)
    assert blob and "<" not in blob.group(1)
    names = {r["name"] for r in json.loads(blob.group(1))["runs"]}
    assert names == {XSS_NAME, XSS_TAG}
    iframe = rep._repr_html_()
    assert iframe.startswith("<iframe srcdoc=") and "<script>alert" not in iframe
    assert 'sandbox="allow-scripts"' in iframe


def test_deterministic_except_timestamp(runs):
    counts = {k: mi.RocCounts.from_scores(y, s) for k, (y, s) in list(runs.items())[:2]}
    one = build_report(counts, prevalences=[1e-3], n_bootstrap=50, seed=11)
    two = build_report(counts, prevalences=[1e-3], n_bootstrap=50, seed=11)
    assert one.html != strip_timestamp(one.html)  # the timestamp line exists and is removed
    assert strip_timestamp(one.html) == strip_timestamp(two.html)
    other = build_report(counts, prevalences=[1e-3], n_bootstrap=50, seed=12)
    assert strip_timestamp(other.html) != strip_timestamp(one.html)


def test_save_and_bad_options(tmp_path, basic):
    counts, rep = basic
    out = rep.save(tmp_path / "sub" / "r.html")
    assert out.read_text(encoding="utf-8") == rep.html
    with pytest.raises(ValueError, match="prevalences"):
        build_report(counts, prevalences=[0.0])
    with pytest.raises(ValueError, match="prevalence_range"):
        build_report(counts, prevalence_range="0.1:0.01")
    with pytest.raises(ValueError, match="confidence"):
        build_report(counts, confidence=1.5)
    with pytest.raises(ValueError, match="no run with valid counts"):
        build_report([str(tmp_path / "nothing.npz")])


@settings(max_examples=300, deadline=None)
@example(x=9999.7, digits=4, sign=1)  # rounds up out of the 4-digit branch
@example(x=99999.6, digits=4, sign=-1)
@example(x=999.96, digits=3, sign=1)
@given(
    x=st.floats(min_value=1e-12, max_value=1e12, allow_nan=False) | st.integers(1, 10**9),
    digits=st.integers(3, 4),
    sign=st.sampled_from([1, -1]),
)
def test_a_formatted_number_reads_back_as_itself(x, digits, sign):
    """Whatever the magnitude, the text parses back (separators dropped) to the number within
    its shown precision: ``digits`` significant digits, or whole units from 10^(digits-1)."""
    from mlflow_imbalance.tracking.card import _fmt as card_fmt

    x = sign * float(x)
    for f in (_fmt, card_fmt):
        text = f(x, digits)
        assert "e+" not in text and " " not in text, text
        back = float(text.replace(",", ""))
        tol = max(abs(x) * 10.0 ** (1 - digits) / 2, 0.5 if abs(x) >= 10 ** (digits - 1) else 0)
        assert abs(back - x) <= tol * (1 + 1e-9), (f.__module__, x, text)


def test_template_dir_found():
    from mlflow_imbalance.report import template_dir

    d = template_dir()
    assert (d / "report.html.j2").is_file()
    assert Path(d).name == "templates"


@pytest.mark.parametrize(
    ("x", "digits", "shown"),
    [
        (9264.3, 4, "9,264"),  # a cost per 10^6 beside its interval "[9,264, 9,310]"
        (9999.7, 4, "10,000"),  # rounds up out of the 4-digit branch: not "1e+04"
        (999.96, 3, "1,000"),  # an interval limit: not "1e+03"
        (123456.4, 4, "123,456"),
        (0.12345, 4, "0.1235"),
        (12.5, 3, "12.5"),
        (0.00012, 4, "1.2e-4"),
        (2e9 + 0.5, 4, "2e9"),
        (9.99999e-4, 3, "0.001"),  # rounds up into the plain branch: not "1e-3" beside "0.001"
    ],
)
def test_numbers_read_the_same_in_the_report_and_the_run_card(x, digits, shown):
    """A value and its interval limits use one style: thousands separated, never Python's
    '1e+04' (the report printed a cost as '9264 [9,264, 9,310]'; the card '1e+05' for 99,999.2)."""
    from mlflow_imbalance.tracking.card import _fmt as card_fmt

    assert _fmt(x, digits) == shown
    assert card_fmt(x, digits) == shown


# ---------------------------------------------------------------------------- bands in the report
def _report_uncertainty(c: mi.RocCounts, name: str, prevalences, n_boot: int = 120):
    """The report's own bootstrap stage for one run (the code build_report runs)."""
    from mlflow_imbalance.report.analysis.intervals import _Uncertainty
    from mlflow_imbalance.report.options import _options
    from mlflow_imbalance.report.render import _stable_seed

    opts = _options(prevalences, None, "test", 1.0, 1.0, 0.95, n_boot, 5, None)
    unc = _Uncertainty(opts, _stable_seed)
    etas = np.array([c.prevalence, *prevalences])
    grid = np.geomspace(1e-5, 0.5, 60)
    sweep = {k: np.atleast_1d(f(c, grid)) for k, f in
             (("ap", metrics.average_precision), ("pr_auc", metrics.pr_auc),
              ("max_f1", metrics.max_f1))}  # fmt: skip
    out = unc.bootstrap(name, c, etas, grid, sweep)
    return unc, out, opts


def test_report_roc_band_is_the_tested_roc_band():
    """The report's ROC band is uncertainty.roc_band's construction on the same replicates
    (binomial floor; the low-FPR floor from the Bayesian draws of the run's table intervals,
    which roc_band draws from a generator of its own): positive width at high FPR where every
    replicate has TPR = 1 (it collapsed before)."""
    from mlflow_imbalance import uncertainty
    from mlflow_imbalance.report.analysis._common import draw_counts
    from mlflow_imbalance.report.analysis.intervals import BOOT_POINTS
    from mlflow_imbalance.report.render import _stable_seed
    from mlflow_imbalance.stats.bootstrap import bayesian_statistics

    y, s = binormal(3.0, n=4000, prev=0.05, seed=4)
    c = mi.RocCounts.from_scores(y, s)
    unc, _, opts = _report_uncertainty(c, "r", [1e-3])
    rb = unc.roc_bands["r"]
    thin = draw_counts(c, BOOT_POINTS)
    rng = np.random.default_rng(_stable_seed(opts.seed, "r", "shared"))
    stat = uncertainty.roc_statistic(thin)
    reps = uncertainty.bootstrap_statistic(thin, stat, opts.n_bootstrap, rng)
    # roc_low_fpr_floor's formula, on the draws of headline_intervals (seeded by the report's
    # seed alone, on the same thinned counts)
    draws = bayesian_statistics(
        thin, {"roc": stat}, opts.n_bootstrap, np.random.default_rng(opts.seed)
    )["roc"]
    est = stat.estimate(thin)
    g_est = np.arcsin(np.sqrt(np.clip(est, 0.0, 1.0)))
    q16 = np.quantile(np.arcsin(np.sqrt(np.clip(draws, 0.0, 1.0))), 0.158655, axis=0)
    ref = uncertainty.band_from_replicates(
        est, reps, stat.grid, grid_name="fpr", metric="roc", confidence=opts.confidence,
        rate_n=thin.n_pos, min_scale=(np.maximum(g_est - q16, 0.0), 0.0),
    )  # fmt: skip
    np.testing.assert_allclose(rb.grid, ref.grid)
    np.testing.assert_allclose(rb.low, ref.low, atol=1e-12)
    np.testing.assert_allclose(rb.high, ref.high, atol=1e-12)
    high_fpr = rb.estimate == 1.0  # the degenerate region: no positive below the threshold
    assert high_fpr.sum() >= 3 and rb.grid[high_fpr].min() > 0.1
    assert np.all(rb.high[high_fpr] - rb.low[high_fpr] > 1e-3)
    # ... and what the report hands to the figure is that band
    _x, lo, hi, label = unc.bands_for("roc")["r"]
    np.testing.assert_allclose(lo, ref.low, atol=1e-12)
    np.testing.assert_allclose(hi, ref.high, atol=1e-12)
    assert "binomial scale floor" in label


def test_report_pr_bands_come_from_the_roc_band():
    """PR bands at every prevalence are the ROC band mapped through eq. 8."""
    from mlflow_imbalance import uncertainty

    y, s = binormal(2.0, n=4000, prev=0.05, seed=5)
    c = mi.RocCounts.from_scores(y, s)
    unc, _, _ = _report_uncertainty(c, "r", [1e-4, 1e-2])
    rb = unc.roc_bands["r"]
    for e in (None, 1e-4, 1e-2):
        _x, lo, hi, label = unc.bands_for("pr", e)["r"]
        ref = uncertainty.pr_band_from_roc(rb, c.prevalence if e is None else e)
        np.testing.assert_allclose(lo, ref.low)
        np.testing.assert_allclose(hi, ref.high)
        assert "mapped through eq. 8" in label


def test_report_live_cost_limits_are_lowest_cost_limits_on_the_table_draws():
    """A leading run's cost limits for the live verdict come from the draws of its table
    intervals: value for value stats.robust.lowest_cost_limits, which draws them again."""
    from mlflow_imbalance.report.analysis.draws import live_cost_grid
    from mlflow_imbalance.stats.robust import lowest_cost_limits

    y, s = binormal(2.0, n=20_000, prev=0.01, seed=7)
    c = mi.RocCounts.from_scores(y, s)
    unc, _, opts = _report_uncertainty(c, "r", [1e-3])
    assert opts.costs_given
    eta, lo, hi = unc.live_cost_limits("r")
    np.testing.assert_array_equal(eta, live_cost_grid(np.geomspace(1e-5, 0.5, 60)))
    ref_lo, ref_hi = lowest_cost_limits(
        c, eta, opts.cost_fp, opts.cost_fn, n_boot=opts.n_bootstrap, seed=opts.seed,
        confidence=opts.confidence,
    )  # fmt: skip
    np.testing.assert_array_equal(lo, ref_lo)
    np.testing.assert_array_equal(hi, ref_hi)
    assert unc.live_cost_limits("not drawn") is None


def test_report_metric_bands_are_prevalence_band_on_the_same_draws():
    """AP, PR-AUC and max-F1 bands against eta are uncertainty.prevalence_band (new default,
    Bayesian count bootstrap) on the same draws; no validity mask, nothing hatched. Scores
    with few distinct values keep every threshold (no thinning), so the bands must agree to
    rounding; the table intervals are the pointwise version of the same construction. One draw
    set for both: the logging hook's (seeded by the report's seed alone)."""
    from mlflow_imbalance import uncertainty
    from mlflow_imbalance.report.analysis.intervals import band_indices

    y, s = binormal(1.5, n=2500, prev=0.2, seed=6)
    c = mi.RocCounts.from_scores(y, np.round(s, 1))
    assert c.n_thresholds < 200
    prevs = [1e-5]
    # B * K * M below metric_statistic's deposit switch: exact sums on both sides
    unc, out, opts = _report_uncertainty(c, "r", prevs, n_boot=60)
    grid = np.geomspace(1e-5, 0.5, 60)
    bgrid = grid[band_indices(grid.size)]
    etas = np.array([c.prevalence, *prevs])
    for key, fn in (
        ("ap", metrics.average_precision),
        ("pr_auc", metrics.pr_auc),
        ("max_f1", metrics.max_f1),
    ):
        band = unc.bands_for(key)["r"]
        assert len(band) == 4  # no validity mask
        x, lo, hi, label = band
        ref = uncertainty.prevalence_band(c, key, bgrid, n_boot=opts.n_bootstrap, seed=opts.seed)
        assert "Bayesian count bootstrap" in ref.method and ref.extra["supported"].all()
        np.testing.assert_allclose(x, bgrid)
        # the report re-centres on the logit scale, which keeps the band inside (0, 1) (the
        # max-F1 draws moved by the selection bias can dip below 0 at low eta)
        np.testing.assert_allclose(lo, np.clip(ref.low, 0, 1), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(hi, np.clip(ref.high, 0, 1), rtol=1e-9, atol=1e-11)
        exact = np.atleast_1d(fn(c, bgrid))
        assert np.all((lo <= exact + 1e-12) & (exact <= hi + 1e-12))
        assert "simultaneous credible band" in label
        # the table's intervals: pointwise intervals of the same construction, at every eta,
        # drawn as the logging hook draws them (seeded by the report's seed alone: issue 37)
        pw = uncertainty.prevalence_band(
            c, key, etas, n_boot=opts.n_bootstrap, seed=opts.seed, simultaneous=False
        )
        for j in range(etas.size):
            ref_j = np.clip([pw.low[j], pw.high[j]], 0, 1)
            np.testing.assert_allclose(out[(key, j)], ref_j, rtol=1e-9, atol=1e-11)
    assert "valid at every η" in unc.support_caption("ap")


def test_report_bands_statistically_match_prevalence_band_after_thinning():
    """With many thresholds the report draws on counts thinned to ~600 thresholds and
    re-centres on the exact curve. Against prevalence_band on the full counts (other seed) the
    lower edge agrees within 0.15 of the band width; the thinned draws' upper tail is longer at
    some eta (measured: the report's band up to ~1.5x wider), never narrower than 0.75x:
    the same construction, conservative after thinning."""
    from mlflow_imbalance import uncertainty
    from mlflow_imbalance.report.analysis.intervals import band_indices

    y, s = binormal(1.5, n=20000, prev=0.05, seed=7)
    c = mi.RocCounts.from_scores(y, s)
    unc, _, _opts = _report_uncertainty(c, "r", [1e-4], n_boot=400)
    grid = np.geomspace(1e-5, 0.5, 60)
    bgrid = grid[band_indices(grid.size)]
    for key in ("ap", "pr_auc", "max_f1"):
        _x, lo, hi, _label = unc.bands_for(key)["r"]
        ref = uncertainty.prevalence_band(c, key, bgrid, n_boot=400, seed=123)
        width = ref.high - ref.low
        assert np.all(np.abs(lo - ref.low) <= 0.15 * width + 1e-3)
        assert np.all(hi >= ref.high - 0.3 * width)
        ratio = (hi - lo) / width
        assert ratio.min() >= 0.75 and ratio.max() <= 1.6


def test_no_not_valid_notes_where_the_bayesian_interval_is_valid():
    """At eta = 1e-5 with ~2000 negatives AP rests on a handful of FPs: the old count bootstrap
    withheld the interval there ("not valid", a dagger footnote, hatching); the Bayesian count
    bootstrap is valid at every eta, so every table cell has its interval and no such note
    remains, and no footnote points to local doc paths."""
    y, s = binormal(1.5, n=2500, prev=0.2, seed=6)
    c = mi.RocCounts.from_scores(y, s)
    rep = build_report({"r": c}, prevalences=[1e-5], n_bootstrap=60, seed=1)
    html = rep.html
    for gone in ("not valid", "NOT valid", "No interval", "†", "hatched", "fn-mark"):
        assert gone not in html
    assert "docs/statistics.md" not in html
    assert "Bayesian count bootstrap" in html and "mapped through eq. 8" in html
    assert "0.91–0.96 (AP)" in html  # the measured coverage, quoted in the methods
    deploy, test = rep.context["tables"][0], rep.context["tables"][-1]
    assert deploy["eta_value"] == repr(1e-5) and test["kind"] == "test"
    for t in (deploy, test):
        assert t["footnotes"] == []
        cells = t["rows"][0]["cells"]
        assert all(cell["ci"].startswith("[") for cell in cells[:3])  # AP, PR-AUC, max-F1


def test_report_roc_auc_interval_is_delong_and_ties_use_it():
    """ROC-AUC intervals are DeLong's (exact from the counts, with or without the bootstrap);
    a run not significantly different from the best by DeLong's test is a tie, a clearly worse
    one is not (the test, not interval overlap)."""
    from mlflow_imbalance import uncertainty

    y, s = binormal(1.0, n=3000, prev=0.1, seed=11)
    rng = np.random.default_rng(12)
    counts = {
        "best": mi.RocCounts.from_scores(y, s),
        "close": mi.RocCounts.from_scores(y, s + rng.normal(0, 0.15, s.size)),
        "worse": mi.RocCounts.from_scores(y, np.where(y == 1, s - 0.8, s)),
    }
    _, out, _ = _report_uncertainty(counts["close"], "close", [1e-2], n_boot=60)
    ref = uncertainty.roc_auc_interval(counts["close"], 0.95)
    assert out[("roc_auc", None)] == (ref.low, ref.high)
    for n_boot in (0, 60):
        rep = build_report(counts, prevalences=[1e-2], n_bootstrap=n_boot, seed=1)
        rows = {r["name"]: r for r in rep.context["roc_rows"]}
        assert rows["best"]["best"] and not rows["best"]["tie"]
        assert rows["close"]["tie"] and "tie" in rows["close"]["classes"]
        assert not rows["worse"]["tie"] and not rows["worse"]["best"]
        assert rows["close"]["ci"] != rows["worse"]["ci"] != ""  # an interval is printed
        ref_t = uncertainty.delong_test_unpaired(counts["best"], counts["close"])
        assert f"p = {ref_t.p_value:.3g}" in rows["close"]["test"] and ref_t.p_value >= 0.05
        assert uncertainty.delong_test_unpaired(counts["best"], counts["worse"]).p_value < 0.05
        methods = {m["what"]: m["how"] for m in rep.context["methods"]}
        assert "DeLong" in methods["ROC-AUC"] and "no bootstrap" in methods["ROC-AUC"]


def test_options_validated_once_at_the_boundary(monkeypatch):
    """build_report checks its option values once; the layers below do not re-check them."""
    from mlflow_imbalance.core import validation

    real = validation._VALIDATED

    class Spy:
        def __init__(self):
            self.checked = 0  # option checks that really ran
            self.skipped = 0  # option checks skipped because the boundary had checked

        def get(self):
            value = real.get()
            if value:
                self.skipped += 1
            else:
                self.checked += 1
            return value

        def set(self, v):
            return real.set(v)

        def reset(self, token):
            return real.reset(token)

    spy = Spy()
    monkeypatch.setattr(validation, "_VALIDATED", spy)
    rng = np.random.default_rng(3)
    y = (rng.random(3000) < 0.05).astype(int)
    runs = {
        "a": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + y),
        "b": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 1.5 * y),
    }
    build_report(runs, prevalences=[1e-3, 1e-2], costs={"fp": 1, "fn": 50}, n_bootstrap=0)
    # the boundary: prevalences, cost_fp, cost_fn
    assert spy.checked <= 4, spy.checked
    # and the pipeline below did call the (now skipped) checks many times
    assert spy.skipped > 10, spy.skipped
    with pytest.raises(ValueError, match="prevalences must lie strictly between 0 and 1"):
        build_report(runs, prevalences=[0.5, 1.5])
    with pytest.raises(ValueError, match="prevalences must be a number or a sequence"):
        build_report(runs, prevalences="0.01")
    assert not validation.in_validated_block()


# ---------------------------------------------------------------------------- verdict (issue 11)
def _cost_runs():
    """Same test set; 'sharp' catches few positives very cleanly, 'wide' many less cleanly."""
    rng = np.random.default_rng(21)
    y = rng.random(20_000) < 0.05
    return y, {
        "wide": rng.normal(size=y.size) + 1.6 * y,
        "sharp": np.where(y & (rng.random(y.size) < 0.35), 5.0, 0.0) + rng.normal(size=y.size),
        "weak": rng.normal(size=y.size) + 0.7 * y,
    }


def _sk_min_cost(y, s, eta, cfp, cfn):
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    cost = (1 - eta) * cfp * fpr + eta * cfn * (1 - tpr)
    i = int(np.flatnonzero(cost == cost.min())[0])
    return float(cost[i]), float(thr[i]), float(tpr[i]), float(fpr[i])


def test_verdict_is_the_lowest_expected_cost_and_is_data():
    y, scores = _cost_runs()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
    rep = build_report(
        counts,
        prevalences=[1e-4, 1e-2],
        costs={"fp": 1, "fn": 300},
        n_bootstrap=200,
        progress=False,
    )
    assert [v.prevalence for v in rep.verdict] == [1e-4, 1e-2]
    for v in rep.verdict:
        ref = {k: _sk_min_cost(y, s, v.prevalence, 1, 300) for k, s in scores.items()}
        best = min(ref, key=lambda k: ref[k][0])
        assert v.run == best and v.criterion_key == "cost"
        cost, thr, tpr, fpr = ref[best]
        assert v.value == pytest.approx(cost, rel=1e-9)
        assert v.threshold == pytest.approx(thr) and v.recall == pytest.approx(tpr)
        eta = v.prevalence
        assert v.precision == pytest.approx(eta * tpr / (eta * tpr + (1 - eta) * fpr))
        assert v.per == (1_000_000 if eta < 1e-3 else 10_000)
        assert v.alerts == pytest.approx(v.per * (eta * tpr + (1 - eta) * fpr))
        assert v.caught == pytest.approx(v.per * eta * tpr)
        assert v.precision_low <= v.precision <= v.precision_high
        assert v.recall_low <= v.recall <= v.recall_high
        # the printed verdict carries the intervals too (a precision of 1 read alone misleads)
        p_ci = f"[{_fmt(v.precision_low, 3)}, {_fmt(v.precision_high, 3)}]"
        r_ci = f"[{_fmt(v.recall_low, 3)}, {_fmt(v.recall_high, 3)}]"
        assert f"precision {_fmt(v.precision, 3)} {p_ci}, recall {_fmt(v.recall, 3)} {r_ci}." in (
            v.text
        ), v.text
        assert v.runner_up is not None and v.p_value is not None
        # the criterion's interval: around scikit-learn's lowest cost, for the runner-up too;
        # the same as the tables' cost cell, and in the printed sentence
        assert v.value_low <= cost <= v.value_high
        assert v.runner_up_low <= ref[v.runner_up][0] <= v.runner_up_high
        c_ci = f"[{_fmt(v.value_low * v.per, 3)}, {_fmt(v.value_high * v.per, 3)}]"
        assert f"lowest expected cost, {_fmt(v.value * v.per, 3)} {c_ci} per " in v.text
        table = next(t for t in rep.context["tables"] if float(t["eta_value"]) == eta)
        keys = [c["key"] for c in table["columns"]]
        cells = next(r for r in table["rows"] if r["name"] == v.run)["cells"]
        assert dict(zip(keys, (c["ci"] for c in cells), strict=True))["cost"] == c_ci
        assert v.significant == (v.p_value < 0.05)
        assert (v.more_data != "") == (not v.significant)
        assert v.run in v.text and f"η = {'1e-4' if eta < 1e-3 else '0.01'}" in v.text
        assert v.as_dict()["run"] == v.run
    # one verdict element per prevalence in the HTML, with the raw eta and the run
    p = parse(rep.html)
    items = [a for _, a in p.tags if "verdict-item" in a.get("class", "")]
    assert [(float(a["data-prevalence"]), a["data-run"]) for a in items] == [
        (v.prevalence, v.run) for v in rep.verdict
    ]


def test_verdict_says_when_the_point_it_ships_is_not_shown_to_beat_chance():
    """Scores independent of the labels have precision η at every threshold (flagging at
    random); constant scores flag every case. The verdict says so, in its sentence and its box;
    a real model gets no such note (scikit-learn: its precision at η at the verdict's threshold,
    reweighted from the test set, is well above η)."""
    from sklearn.metrics import precision_score

    rng = np.random.default_rng(0)
    y = rng.random(20_000) < 0.02
    noise = rng.normal(size=y.size)
    good = rng.normal(size=y.size) + 2.0 * y
    etas = [1e-3, 0.1]

    def verdicts(scores):
        counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
        rep = build_report(counts, prevalences=etas, n_bootstrap=0, progress=False)
        return rep, {v.prevalence: v for v in rep.verdict}

    rep, vs = verdicts({"noise": noise})
    for eta, v in vs.items():
        assert v.chance == "interval", (eta, v.text)
        assert v.precision_low <= eta <= v.precision_high
        assert (
            "At this threshold its alerts are not shown to be more precise than flagging as "
            "many cases at random: precision [" in v.text
        )
        assert f"reaches η = {_fmt_eta(eta)}." in v.text
    assert rep.html.count('<li class="chance">') == len(etas)
    # each box says it, and so does the one-line summary of every box after the first
    assert rep.html.count("no better than random?</span>") == 2 * len(etas) - 1

    rep, vs = verdicts({"constant": np.zeros(y.size)})
    for eta, v in vs.items():
        assert v.chance == "all" and np.all(np.zeros(y.size) >= v.threshold)
        assert f"Its threshold flags every case: at η = {_fmt_eta(eta)} no model" in v.text
    assert rep.html.count("flags every case</span>") == 2 * len(etas) - 1

    rep, vs = verdicts({"good": good, "noise": noise})
    for eta, v in vs.items():
        assert v.run == "good" and v.chance == ""
        # scikit-learn's precision at the threshold with the classes reweighted to eta
        w = np.where(y, eta / y.mean(), (1 - eta) / (1 - y.mean()))
        prec = precision_score(y, good >= v.threshold, sample_weight=w)
        assert prec == pytest.approx(v.precision, rel=1e-9) and prec > 3 * eta
        assert "at random" not in v.text
    assert "no better than random?" not in rep.html


def test_verdict_by_primary_metric_names_disagreeing_metrics():
    y, scores = _cost_runs()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
    rep = build_report(counts, prevalences=[1e-4], n_bootstrap=0, progress=False)
    (v,) = rep.verdict
    ap = {k: metrics.average_precision(c, 1e-4) for k, c in counts.items()}
    assert v.criterion == "AP" and v.run == max(ap, key=ap.get)
    assert v.significant is None and "bootstrap off" in v.test  # not tested, and says why
    assert v.value_low is None and v.value_high is None  # no bootstrap: no interval to show
    auc = {k: metrics.roc_auc(c) for k, c in counts.items()}
    if max(auc, key=auc.get) != v.run:
        assert f"ROC-AUC favours {max(auc, key=auc.get)}" in v.disagree
    rep2 = build_report(
        counts, prevalences=[1e-4], primary_metric="roc_auc", n_bootstrap=0, progress=False
    )
    assert rep2.verdict[0].run == max(auc, key=auc.get)
    assert rep2.verdict[0].p_value is not None  # DeLong needs no bootstrap
    # the criterion's name keeps its capitals where the verdict opens with it (not "Ap:")
    for r, label in ((rep, "AP"), (rep2, "ROC-AUC")):
        why = re.findall(r'<p class="verdict-why">([^<]*)', r.html)
        assert why and why[0].startswith(f"{label}: "), why
    with pytest.raises(ValueError, match="primary_metric"):
        build_report(counts, primary_metric="accuracy")


def test_defaults_from_the_runs_and_cli_prints_the_verdict(tracking_uri, tmp_path):
    import mlflow
    from click.testing import CliRunner

    from mlflow_imbalance.report.cli import main

    y, scores = _cost_runs()
    mlflow.set_experiment("defaults")
    for name, s in scores.items():
        with mlflow.start_run(run_name=name):
            mi.log_scores(y, s, name="test", prevalences=[1e-3, 1e-4],
                          costs={"fp": 1, "fn": 300})  # fmt: skip
    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        main,
        ["report", "-e", "defaults", "--tracking-uri", tracking_uri, "--bootstrap", "0",
         "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "the union of the prevalences logged with the runs" in html
    assert "(not given: logged with the runs)" in html
    assert "Verdict (prevalences and costs logged with the runs):" in res.output
    for eta, label in ((1e-4, "1e-4"), (1e-3, "0.001")):
        ref = {k: _sk_min_cost(y, s, eta, 1, 300)[0] for k, s in scores.items()}
        line = next(x for x in res.output.splitlines() if f"At η = {label}:" in x)
        assert f"ship {min(ref, key=ref.get)} at" in line
    # explicit options win over what the runs logged
    rep = build_report(
        mlflow.search_runs(output_format="list"), prevalences=[0.02], costs={"fp": 2, "fn": 5},
        n_bootstrap=0, progress=False,
    )  # fmt: skip
    assert [v.prevalence for v in rep.verdict] == [0.02]
    assert rep.context["costs_source"] == "argument" and rep.context["cost_fn"] == "5"


def test_progress_false_is_silent_and_callable_gets_stages(capfd):
    y, scores = _cost_runs()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in list(scores.items())[:2]}
    build_report(counts, prevalences=[1e-3], n_bootstrap=0, progress=False)
    assert capfd.readouterr().err == ""
    seen = []
    build_report(counts, prevalences=[1e-3], n_bootstrap=0,
                 progress=lambda stage, done, total: seen.append((stage, done, total)))  # fmt: skip
    stages = [s for s, d, t in seen if d == t]
    assert {"metrics", "bootstrap", "verdict", "charts"} <= set(stages)
    build_report(counts, prevalences=[1e-3], n_bootstrap=0)  # not a terminal: plain lines
    err = capfd.readouterr().err
    assert "mlflow-imbalance report: bootstrap 2/2 done" in err and "\r" not in err


def test_table_ties_use_the_test_on_the_draws_not_interval_overlap():
    """'#k=' in the per-prevalence tables: not significantly different from the best by the
    verdict's unpaired test (recomputed here with scipy from the report's exact values and
    variances), not interval overlap."""
    from scipy import stats as sps

    y, s = binormal(1.2, n=4000, prev=0.1, seed=21)
    rng = np.random.default_rng(22)
    counts = {
        "best": mi.RocCounts.from_scores(y, s),
        "close": mi.RocCounts.from_scores(y, s + rng.normal(0, 0.1, s.size)),
        "worse": mi.RocCounts.from_scores(y, np.where(y == 1, s - 0.9, s)),
    }
    rep = build_report(counts, prevalences=[1e-2], n_bootstrap=200, seed=3, progress=False)
    table = rep.context["tables"][0]
    keys = [c["key"] for c in table["columns"]]
    j_ap = keys.index("ap")
    cells = {r["name"]: r["cells"][j_ap] for r in table["rows"]}
    best = next(n for n, c in cells.items() if c["best"])
    from mlflow_imbalance.report.analysis import tables as tables_mod

    checked = 0
    for name, cell in cells.items():
        if name == best:
            assert not cell["tie"]
            continue
        # independent recomputation of the test from the report's exact values and variances
        reps = rep.context["point_reps"]
        ea, va = reps[name]["ap"]
        eb, vb = reps[best]["ap"]
        assert ea[1] == pytest.approx(mi.metrics.average_precision(counts[name], 1e-2), abs=1e-12)
        p = 2 * sps.norm.sf(abs((ea[1] - eb[1]) / np.sqrt(va[1] + vb[1])))
        assert cell["tie"] == (p >= 0.05)
        checked += 1
    assert checked == 2
    assert not cells["worse"]["tie"]
    # the helper itself: equal values are a tie, values 0.4 apart with s.d. 0.01 are not
    var = np.full(2, 0.01**2)
    reps = {"a": {"ap": (np.array([0.5, 0.5]), var)}, "b": {"ap": (np.array([0.5, 0.9]), var)}}
    assert tables_mod._not_worse(reps, "a", "b", "ap", 0, 0.95) is True
    assert tables_mod._not_worse(reps, "a", "b", "ap", 1, 0.95) is False
    assert tables_mod._not_worse(reps, "a", "c", "ap", 0, 0.95) is None


def test_table_agrees_with_the_verdicts_paired_test(tracking_uri):
    """Two runs scored on the same examples: the verdict's paired bootstrap finds the runner-up
    significantly worse on AP, where the tables' unpaired test alone would call it tied; the
    runner-up's AP cell must follow the verdict (no '#k=' beside 'significantly better')."""
    import mlflow

    from mlflow_imbalance.report.analysis import tables as tables_mod

    rng = np.random.default_rng(31)
    y = rng.random(20_000) < 0.05
    sa = rng.normal(size=y.size) + 1.2 * y
    ids = []
    for name, s in (("a", sa), ("b", sa + 0.4 * rng.normal(size=y.size))):
        with mlflow.start_run(run_name=name) as run:
            mi.log_scores(y, s, name="test", prevalences=[1e-2])
            ids.append(run.info.run_id)
    # seed 2: p = 0.003 (seeds 0-7: 0.003-0.062; seed 3, used before the bands and the tests'
    # variances shared the table's draws, now 0.062, then 0.024)
    rep = build_report(ids, prevalences=[1e-2], n_bootstrap=200, seed=2, progress=False)
    (v,) = rep.verdict
    assert (v.run, v.runner_up, v.criterion_key) == ("a", "b", "ap")
    assert "paired" in v.test and v.significant is True and v.p_value < 0.05
    # the precondition that makes this test bite: the unpaired test alone says "tied"
    reps = rep.context["point_reps"]
    assert tables_mod._not_worse(reps, "b", "a", "ap", 1, 0.95) is True
    table = rep.context["tables"][0]
    j_ap = [c["key"] for c in table["columns"]].index("ap")
    cells = {r["name"]: r["cells"][j_ap] for r in table["rows"]}
    assert cells["a"]["best"] and not cells["b"]["tie"]
    assert "tie" not in cells["b"]["classes"].split()


def test_tables_tie_runs_on_shared_examples_by_the_paired_test(tracking_uri):
    """Two runs scored on the same examples, B = A + noise: in the cells the verdict does not
    test (AP at the test prevalence), the unpaired test calls B tied with A while a
    paired bootstrap (computed here with scikit-learn, independently of the package) finds B
    clearly worse; the tables must follow the paired test there, as the verdict does."""
    import mlflow
    from sklearn.metrics import average_precision_score

    from mlflow_imbalance.report.analysis import tables as tables_mod

    rng = np.random.default_rng(31)
    y = rng.random(20_000) < 0.05
    sa = rng.normal(size=y.size) + 1.2 * y
    sb = sa + 0.4 * rng.normal(size=y.size)
    ids = []
    for name, s in (("a", sa), ("b", sb)):
        with mlflow.start_run(run_name=name) as run:
            mi.log_scores(y, s, name="test", prevalences=[1e-2])
            ids.append(run.info.run_id)
    rep = build_report(ids, prevalences=[1e-2], n_bootstrap=300, seed=3, progress=False)
    reps, shared = rep.context["point_reps"], rep.context["shared_replicates"]

    # independent paired bootstrap of AP at the test prevalence (stratified, 300 replicates)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    r2 = np.random.default_rng(7)
    diffs = []
    for _ in range(300):
        idx = np.r_[r2.choice(pos, pos.size), r2.choice(neg, neg.size)]
        yr = y[idx]
        diffs.append(average_precision_score(yr, sa[idx]) - average_precision_score(yr, sb[idx]))
    d_exact = average_precision_score(y, sa) - average_precision_score(y, sb)
    z_ref = d_exact / np.std(diffs, ddof=1)
    assert z_ref > 3.5, z_ref  # clearly significant by the paired test
    # the package's paired replicates give the same s.d. (to bootstrap noise)
    sd = shared.difference_sd("b", "a", "ap", 0)
    assert sd == pytest.approx(np.std(diffs, ddof=1), rel=0.2)
    # precondition that makes this test bite: the unpaired test alone says "tied" here
    assert tables_mod._not_worse(reps, "b", "a", "ap", 0, 0.95) is True
    assert tables_mod._not_worse(reps, "b", "a", "ap", 0, 0.95, shared) is False
    test_table = next(t for t in rep.context["tables"] if t["kind"] == "test")
    j_ap = [c["key"] for c in test_table["columns"]].index("ap")
    cells = {r["name"]: r["cells"][j_ap] for r in test_table["rows"]}
    assert cells["a"]["best"] and not cells["b"]["tie"]
    # runs on different examples keep the unpaired test: no shared replicates for them
    assert shared.difference_sd("a", "nobody", "ap", 0) is None


def test_shared_replicates_group_runs_by_their_examples_within_the_work_bound():
    """Runs are paired only with runs scored on the same examples (equal digest and labels),
    never across test sets; the work bound keeps the first runs of a group and leaves the
    rest unpaired; each group's replicates are the paired resample: the difference of two
    identical runs has no spread."""
    from types import SimpleNamespace

    from mlflow_imbalance.report.analysis.paired import shared_replicates
    from mlflow_imbalance.report.model import RunData

    rng = np.random.default_rng(5)
    y1, y2 = rng.random(3000) < 0.1, rng.random(3000) < 0.1
    s1, s2 = rng.normal(size=3000) + y1, rng.normal(size=3000) + y2

    def run(name, y, s, digest):
        return RunData(name, mi.RocCounts.from_scores(y, s), digest=digest, scores=(y, s))

    runs = [run("a", y1, s1, "d1"), run("a-copy", y1, s1, "d1"), run("c", y1, s1 + 0.3 * y1, "d1"),
            run("other-set", y2, s2, "d2"), run("lone", y2, s2 + 1, "d3")]  # fmt: skip
    etas = {r.name: np.array([0.1, 1e-3]) for r in runs}
    opts = SimpleNamespace(n_bootstrap=50, costs_given=False, seed=0)

    def seed_for(*parts):
        return np.random.SeedSequence([len(p) for p in map(str, parts)])

    sh = shared_replicates(runs, etas, opts, seed_for, 10**6)
    assert sh.group == {"a": 0, "a-copy": 0, "c": 0}  # d2 and d3 have one run each
    assert sh.difference_sd("a", "a-copy", "ap", 1) == 0.0  # same scores, same resample
    assert sh.difference_sd("a", "c", "pr_auc", 0) > 0
    assert sh.difference_sd("a", "other-set", "ap", 0) is None
    assert sh.reps["c"]["max_f1"].shape == (50, 2)
    # the runs' own variances floor the paired s.d.: sqrt(var_a + var_b - 2 cov)
    x, z = sh.reps["a"]["ap"][:, 1], sh.reps["c"]["ap"][:, 1]
    cov = np.sum((x - x.mean()) * (z - z.mean())) / (x.size - 1)
    assert sh.difference_sd("a", "c", "ap", 1, 0.01, 0.02) == pytest.approx(
        np.sqrt(0.03 - 2 * cov), rel=1e-12
    )
    assert sh.difference_sd("a", "c", "ap", 1, 0.0, 0.0) == pytest.approx(np.std(x - z, ddof=1))
    # room for two runs of the group only: the third stays unpaired
    sh2 = shared_replicates(runs, etas, opts, seed_for, 10**6, max_work=2 * 50 * 3000 + 1)
    assert sh2.group == {"a": 0, "a-copy": 0}
    # no room for two: nothing is paired
    assert shared_replicates(runs, etas, opts, seed_for, 10**6, max_work=50 * 3000).group == {}
    # test sets above the size limit are not resampled
    assert shared_replicates(runs, etas, opts, seed_for, 2999).group == {}


def test_adequacy_rows_follow_the_operating_point(basic, runs):
    """Sample-size adequacy (Brabec §5) at each run's operating point (the max-F1 threshold at
    η without costs): its false positives, the precision, its Koopman relative half-width
    and the verdict "too small" (above 10 %) recomputed from the raw scores with scikit-learn's
    PR curve (negatives reweighted to η) and the public interval function."""
    from sklearn.metrics import precision_recall_curve

    from mlflow_imbalance import uncertainty

    _, rep = basic
    rows = rep.context["adequacy"]
    assert {(r["run"], r["eta"]) for r in rows} == {
        (k, e) for k in runs for e in ("0.001", f"{runs[k][0].mean():.3g} (test)")
    }
    assert any(not r["ok"] for r in rows)  # the text of a "too small" row is checked
    for row in rows:
        y, s = runs[row["run"]]
        eta = float(row["eta"].split()[0])
        w = np.where(y, 1.0, (1 - eta) / eta * y.sum() / (~y).sum())
        p, r, thr = precision_recall_curve(y, s, sample_weight=w)
        f1 = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-300), 0.0)[:-1]
        t = thr[int(np.argmax(f1))]
        tp, fp = int(np.sum(y & (s >= t))), int(np.sum(~y & (s >= t)))
        tpr, fpr = tp / y.sum(), fp / (~y).sum()
        prec = eta * tpr / (eta * tpr + (1 - eta) * fpr)
        assert row["precision"] == _fmt(prec, 3), (row, prec)
        lo, hi = uncertainty.precision_interval(tp, fp, int(y.sum()), int((~y).sum()), eta)
        rel = (hi - lo) / 2 / prec
        assert row["rel_width"] == f"±{rel:.1%}", (row, rel)
        assert row["ok"] == (rel <= 0.1)
        # the false positives behind the width have their own column; no text repeats them
        assert row["fp"] == f"{fp:,}" and row["text"] == ""


def test_verdict_intervals_hold_after_the_threshold_choice_and_match_the_card(tracking_uri):
    """The verdict's threshold is chosen on the test set, so its precision and recall bounds
    are the selection-valid ones -- the same numbers the logging hook puts in the run's
    summary (and card) for that η and costs -- and they contain the point scikit-learn finds;
    the tables' cells at that point carry the same bounds."""
    import mlflow

    y, scores = _cost_runs()
    ids = {}
    for name, s in scores.items():
        with mlflow.start_run(run_name=name) as run:
            mi.log_scores(y, s, prevalences=[1e-3], costs=(1, 300), log_figures=False)
        ids[name] = run.info.run_id
    rep = build_report(list(ids.values()), prevalences=[1e-3], n_bootstrap=60, progress=False)
    (v,) = rep.verdict
    summary = mi.tracking.load_summary(ids[v.run])
    (row,) = [r for r in summary["headline"]["at_prevalence"] if r["prevalence"] == 1e-3]
    mc = row["min_cost"]
    assert v.threshold == mc["threshold"]
    assert [v.precision_low, v.precision_high] == pytest.approx(mc["precision"]["interval"])
    assert [v.recall_low, v.recall_high] == pytest.approx(mc["recall"]["interval"])
    _, thr, tpr, fpr = _sk_min_cost(y, scores[v.run], 1e-3, 1, 300)
    assert v.threshold == pytest.approx(thr)
    prec = 1e-3 * tpr / (1e-3 * tpr + (1 - 1e-3) * fpr)
    assert v.precision_low <= prec <= v.precision_high and v.recall_low <= tpr <= v.recall_high
    # wider than the pointwise Koopman interval at a fixed threshold: the selection is paid for
    fixed = mi.uncertainty.precision_interval(
        round(tpr * y.sum()), round(fpr * (~y).sum()), int(y.sum()), int((~y).sum()), 1e-3
    )
    assert v.precision_low < fixed.low and v.precision_high > fixed.high
    table = next(t for t in rep.context["tables"] if float(t["eta_value"]) == 1e-3)
    keys = [c["key"] for c in table["columns"]]
    cells = next(r for r in table["rows"] if r["name"] == v.run)["cells"]
    shown = dict(zip(keys, (c["ci"] for c in cells), strict=True))
    assert shown["precision"] == f"[{_fmt(v.precision_low, 3)}, {_fmt(v.precision_high, 3)}]"
    assert shown["recall"] == f"[{_fmt(v.recall_low, 3)}, {_fmt(v.recall_high, 3)}]"


def test_a_tie_says_how_much_more_data_would_separate_the_runs():
    """Two runs of one model on the same examples: a statistical tie, and the verdict's
    estimate of the data needed, k = ((z_{0.975} + z_{0.80}) / |z|)^2 times the test set with z
    from the test's p-value, given to two significant digits (a rough figure)."""
    from scipy.stats import norm

    rng = np.random.default_rng(17)
    y = rng.random(8000) < 0.05
    common = rng.normal(size=y.size)
    scores = {k: common + 0.8 * rng.normal(size=y.size) + 1.4 * y for k in ("A", "B")}
    runs = {k: RunData(k, mi.RocCounts.from_scores(y, s), digest="d", scores=(y, s))
            for k, s in scores.items()}  # fmt: skip
    rep = build_report(runs, prevalences=[0.01], n_bootstrap=200, progress=False)
    (v,) = rep.verdict
    assert v.significant is False and v.p_value > 0.05
    k = ((norm.isf(0.025) + norm.isf(0.2)) / norm.isf(v.p_value / 2)) ** 2
    times = float(f"{k:.2g}")
    shown = f"{times:,.0f}" if times >= 10 else f"{times:g}"
    n_pos = float(f"{int(y.sum()) * k:.2g}")
    n_neg = float(f"{int((~y).sum()) * k:.2g}")
    assert f"About {shown}× the test data (≈ {n_pos:,.0f} positives, {n_neg:,.0f} negatives)" in (
        v.more_data
    ), (v.more_data, k)


def test_a_failing_stage_for_one_run_leaves_the_rest_of_the_report(monkeypatch):
    """Issue 31: each analysis stage isolates runs. A failure injected for one run in the exact
    metrics leaves that run out with its reason; in its intervals keeps its exact values with a
    callout; in the flips stage keeps the verdict and tables. The good runs are fully analysed
    every time (their verdict equals the one of a report without the failing run)."""
    from mlflow_imbalance.report.analysis import context

    rng = np.random.default_rng(8)
    y = rng.random(4000) < 0.05
    counts = {
        "good": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 1.6 * y),
        "fine": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 1.0 * y),
        "bad": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 1.3 * y),
    }
    kw = {"prevalences": [1e-3], "costs": {"fp": 1, "fn": 50}, "n_bootstrap": 60}
    clean = build_report({k: counts[k] for k in ("good", "fine")}, **kw)

    def boom(*args, **kwargs):
        raise RuntimeError("injected")

    real_point, real_intervals = context.run_point, context._run_intervals
    with monkeypatch.context() as m:
        m.setattr(context, "run_point", lambda c, *a: boom() if c is counts["bad"] else
                  real_point(c, *a))  # fmt: skip
        rep = build_report(counts, **kw)
    assert [s.name for s in rep.skipped] == ["bad"]
    assert "RuntimeError: injected" in rep.skipped[0].reason
    assert rep.verdict[0].text == clean.verdict[0].text
    with monkeypatch.context() as m:
        m.setattr(context, "_run_intervals", lambda unc, r, *a: boom() if r.name == "bad" else
                  real_intervals(unc, r, *a))  # fmt: skip
        rep = build_report(counts, **kw)
    assert not rep.skipped
    titles = [w["title"] for w in rep.context["warnings"]]
    assert "No intervals for bad:" in titles
    bad_row = next(r for r in rep.context["tables"][0]["rows"] if r["name"] == "bad")
    assert bad_row["cells"][0]["value"] and not bad_row["cells"][0]["ci"]
    good_row = next(r for r in rep.context["tables"][0]["rows"] if r["name"] == "good")
    assert good_row["cells"][0]["ci"]
    with monkeypatch.context() as m:
        m.setattr(context, "_flip_stage", boom)
        rep = build_report(counts, **kw)
    assert "No ranking flips for all runs:" in [w["title"] for w in rep.context["warnings"]]
    assert rep.verdict and rep.context["tables"]
    # the charts, the tables and the verdict: the run that fails there is left out of that
    # stage alone (a callout each); the others are drawn, tabled and decided as without it
    from mlflow_imbalance.report.analysis import charts, tables, verdict

    real_item, real_row, real_point = charts._run_item, tables._row, verdict._deployed_point
    with monkeypatch.context() as m:
        m.setattr(charts, "_run_item", lambda r, *a: boom() if r.name == "bad" else
                  real_item(r, *a))  # fmt: skip
        rep = build_report(counts, **kw)
    assert {it["name"] for it in rep.context["data"]["runs"]} == {"good", "fine"}
    assert "No charts for bad:" in [w["title"] for w in rep.context["warnings"]]
    assert any(r["name"] == "bad" for r in rep.context["tables"][0]["rows"])
    with monkeypatch.context() as m:
        m.setattr(tables, "_row", lambda r, *a: boom() if r.name == "bad" else real_row(r, *a))
        rep = build_report(counts, **kw)
    assert [r["name"] for r in rep.context["tables"][0]["rows"] if r["name"] == "bad"] == []
    assert "No tables for bad:" in [w["title"] for w in rep.context["warnings"]]
    assert rep.verdict[0].text == build_report(counts, **kw).verdict[0].text
    strong = {**counts, "bad": mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 3 * y)}
    with monkeypatch.context() as m:
        m.setattr(verdict, "_deployed_point", lambda unc, best, *a: boom() if best == "bad"
                  else real_point(unc, best, *a))  # fmt: skip
        rep = build_report(strong, **kw)
    assert rep.verdict[0].run != "bad" and rep.verdict[0].text == clean.verdict[0].text
    assert "No verdict for bad:" in [w["title"] for w in rep.context["warnings"]]
    assert any(r["name"] == "bad" for r in rep.context["tables"][0]["rows"])  # still tabled


def test_only_the_crossing_that_changes_the_verdict_is_marked():
    """Between a chosen η (winner X) and the test prevalence (winner A) the best run changes
    three times (X -> A -> L -> A): only the crossing where X stops being best changes the
    verdict; the A/L crossings further on cancel out and are not marked."""
    from mlflow_imbalance.report.analysis.decision import (
        Anchor,
        DecisionFlip,
        WinnerMap,
        decision_flips,
    )

    flips = [DecisionFlip(1.3e-3, "X", "A"), DecisionFlip(0.018, "A", "L"),
             DecisionFlip(0.06, "L", "A")]  # fmt: skip
    wmap = WinnerMap([(1e-5, 1.3e-3, "X"), (1.3e-3, 0.018, "A"), (0.018, 0.06, "L"),
                      (0.06, 0.5, "A")], flips)  # fmt: skip
    anchors = [Anchor(1e-3, "X"), Anchor(0.0968, "A", is_test=True)]
    calls = []

    def test(run, other, eta):
        calls.append((run, other, eta))
        return True, "p < 0.001"

    out = decision_flips(wmap, anchors, test, str)
    assert [f.changes_at for f in out] == [[1e-3], [], []]
    assert [f.significant for f in out] == [True, None, None]
    assert calls == [("X", "A", 1e-3)]


def _two_bin_production(eta, n, top_pos=900, top_neg=1000, seed=0):
    """Unlabeled scores of the two-bin run A under prior shift to ``eta`` (1.0 = top bin)."""
    rng = np.random.default_rng(seed)
    pos = rng.random(n) < eta
    top = np.where(pos, rng.random(n) < top_pos / 1000, rng.random(n) < top_neg / 1_000_000)
    return top.astype(float)


def _two_bin_regret(eta_lo, eta_hi, c_fn):
    """Closed-form least worst-case regret over [eta_lo, eta_hi] of the runs A = two_bin(900,
    1000) and B = two_bin(500, 100) with C_FP = 1: (decision, regret), the decision as
    ("A" | "B" | "nothing" | "everything", TPR, FPR). Written out, not through stats.robust."""
    options = [("nothing", 0.0, 0.0), ("everything", 1.0, 1.0), ("A", 0.9, 0.001),
               ("B", 0.5, 1e-4)]  # fmt: skip

    def cost(t, f, eta):
        return (1 - eta) * f + eta * c_fn * (1 - t)

    best = {e: min(cost(t, f, e) for _, t, f in options) for e in (eta_lo, eta_hi)}
    worst = [(max(cost(t, f, e) - best[e] for e in best), o) for o, t, f in options]
    return min(worst, key=lambda w: w[0])[::-1]


def test_range_verdict_names_the_threshold_its_audit_labels_are_for():
    """Issue 39's budget in the verdict: where the label-free range can lose more than the
    tolerance, the verdict says how many labels would settle it AND at which threshold to plan
    them (plan_audit's default is the run's at its logged prevalence, not the verdict's), in its
    text and in the box, and the count is the one stats.robust.labels_to_settle gives there."""
    from mlflow_imbalance.stats.robust import AUDIT_TOLERANCE_SHARE, labels_to_settle

    a, b = two_bin(900, 1000), two_bin(500, 100)
    near = _two_bin_production(2.2e-4, 200_000, seed=1)
    rep = build_report({"A": a, "B": b}, production={"A": {"w": near}},
                       costs={"fp": 1, "fn": 10}, n_bootstrap=0, progress=False)  # fmt: skip
    v = rep.verdict[0]
    assert v.decision == "run" and v.regret > AUDIT_TOLERANCE_SHARE * v.value
    assert v.audit_threshold == v.threshold
    from mlflow_imbalance.core.production import ScoreCounts

    want = labels_to_settle(
        {"A": a, "B": b}, "A", ScoreCounts.from_scores(near), v.threshold, v.prevalence,
        AUDIT_TOLERANCE_SHARE * v.value, 1.0, 10.0,
    )  # fmt: skip
    assert v.audit_labels == want.labels and want.labels is not None
    call = f"plan_audit(threshold={v.threshold:.6g})"
    assert call in v.audit_text and call in v.text
    assert f"labels (<code>{call}</code>) would settle it" in rep.html


def test_the_verdict_is_decided_over_the_prevalence_estimated_from_production():
    """Issues 33 and 37 (report part): with production batches the verdict is decided over the
    latest batch's estimated η (its interval: one judged run estimated it, no sign of drift),
    at least worst-case regret, with its numbers at the estimate (3 significant digits). By the
    closed-form costs (C_FN = 10) the best run changes at η* ≈ 2.25e-4: a batch drawn at
    η = 2.2e-4 has η* inside its interval, so the decision can lose something (regret > 0,
    checked against a closed-form minimax over the two runs and the trivial decisions); at
    2e-3 one decision is best throughout (regret 0)."""
    from mlflow_imbalance.stats.prevalence import estimate_prevalence

    a, b = two_bin(900, 1000), two_bin(500, 100)
    star = 9e-4 / (0.4 * 10 + 9e-4)
    assert _two_bin_cost(900, 1000, star * 0.9, 10) > _two_bin_cost(500, 100, star * 0.9, 10)
    assert _two_bin_cost(900, 1000, star * 1.1, 10) < _two_bin_cost(500, 100, star * 1.1, 10)
    near = _two_bin_production(2.2e-4, 2_000_000, seed=1)
    far = _two_bin_production(2e-3, 2_000_000, seed=2)
    kw = {"costs": {"fp": 1, "fn": 10}, "n_bootstrap": 0, "progress": False}
    rep = build_report({"A": a, "B": b}, production={"A": {"w1": far, "w2": near}}, **kw)
    est = estimate_prevalence(a, near)
    v = rep.verdict[0]
    assert v.prevalence == float(f"{est.estimate:.3g}")
    assert (v.prevalence_low, v.prevalence_high) == (est.low, est.high)
    assert est.low < star < est.high
    want, regret = _two_bin_regret(est.low, est.high, 10)
    assert v.regret == pytest.approx(regret, rel=1e-9, abs=1e-15) and regret > 0
    assert (v.run if v.decision == "run" else v.decision) == want
    assert v.source == "estimated" and v.batch == "w2" and v.at_estimate is not None
    assert v.at_estimate.prevalence == v.prevalence
    assert "loses at most" in v.text
    assert [r["batch"] for r in rep.context["deployment"]["rows"]] == ["w1", "w2"]
    # issue 39: each row's sentence is the estimate's own at the report's costs (the card's at
    # equal logged costs); A's own decision is settled within 10 % here, so no labels are asked
    row = rep.context["deployment"]["rows"][1]
    from mlflow_imbalance.stats.robust import with_audit_advice

    with_costs = with_audit_advice(estimate_prevalence(a, near), a, near, (1, 10))
    assert row["text"] == with_costs.text and with_costs.audit is None
    assert row["audit_labels"] is None and "audit labels would settle this run" not in rep.html
    assert "(batch w2)" in rep.html and 'data-decision="run"' in rep.html
    rep = build_report({"A": a, "B": b}, production={"A": {"w1": far, "w2": near}}, batch="w1",
                       **kw)  # fmt: skip
    est = estimate_prevalence(a, far)
    v = rep.verdict[0]
    assert v.prevalence == float(f"{est.estimate:.3g}")
    assert not est.low < star < est.high
    assert v.regret == 0 and "the best decision at every η in that range" in v.text
    # the decision is the run of lower closed-form cost at the estimate
    assert v.run == min(
        ("A", "B"),
        key=lambda k: _two_bin_cost(*((900, 1000) if k == "A" else (500, 100)), v.prevalence, 10),
    )  # fmt: skip
    with pytest.raises(ValueError, match="batch must be one of the logged batches"):
        build_report({"A": a, "B": b}, production={"A": {"w1": far}}, batch="w9", **kw)
    with pytest.raises(ValueError, match="production names runs that are not in the report"):
        build_report({"A": a, "B": b}, production={"C": far}, **kw)


def test_logged_prevalences_beyond_the_cap_are_in_the_notes():
    """Issue 31: a run that logged 40 prevalences: the report evaluates 32 of them and says,
    in Report.notes and a callout, how many it left out."""
    from mlflow_imbalance.report.options import MAX_REPORT_PREVALENCES

    etas = [float(v) for v in np.geomspace(1e-5, 0.3, 40)]
    run = RunData(name="r", counts=two_bin(900, 1000), summary={"prevalences": etas})
    rep = build_report([run], n_bootstrap=0, progress=False)
    assert len(rep.verdict) == MAX_REPORT_PREVALENCES
    (note,) = [n for n in rep.notes if "not evaluated" in n]
    assert note.startswith(f"{40 - MAX_REPORT_PREVALENCES} prevalence(s) logged")
    assert "Logged prevalences left out." in rep.html


@settings(max_examples=25, deadline=None)
@given(
    n_pos=st.integers(1, 3),
    n_neg=st.integers(1, 3),
    levels=st.integers(1, 3),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_tiny_runs_beside_a_normal_run_leave_it_fully_analysed(
    n_pos, n_neg, levels, weighted, seed
):
    """Issue 31: random tiny counts (1-3 positives or negatives, ties, weights) beside a normal
    run: the report is built, and the normal run is fully analysed -- its table intervals,
    verdict test and bands are those of a report without the tiny run (same seed)."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    s = rng.integers(0, levels, size=y.size).astype(float)
    w = rng.uniform(0.5, 2.0, size=y.size) if weighted else None
    tiny = mi.RocCounts.from_scores(y, s, sample_weight=w)
    normal, other = _cost_runs_counts()
    kw = {"prevalences": [1e-3], "costs": {"fp": 1, "fn": 50}, "n_bootstrap": 60,
          "progress": False}  # fmt: skip
    rep = build_report({"normal": normal, "other": other, "tiny": tiny}, **kw)
    ref = build_report({"normal": normal, "other": other}, **kw)

    def cells(r, name):
        t = r.context["tables"][0]
        row = next(x for x in t["rows"] if x["name"] == name)
        keys = [c["key"] for c in t["columns"]]
        return {k: (c["value"], c["ci"]) for k, c in zip(keys, row["cells"], strict=True)}

    assert cells(rep, "normal") == cells(ref, "normal")
    assert not rep.skipped
    names = {it["name"] for it in rep.context["data"]["runs"]}
    assert names == {"normal", "other", "tiny"}


_COST_RUNS: dict = {}


def _cost_runs_counts():
    if not _COST_RUNS:
        y, scores = _cost_runs()
        _COST_RUNS["c"] = (mi.RocCounts.from_scores(y, scores["wide"]),
                           mi.RocCounts.from_scores(y, scores["sharp"]))  # fmt: skip
    return _COST_RUNS["c"]
