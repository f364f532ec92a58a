"""The measured under-coverage rule (stats/coverage.py) where it shows: report, hook, card.

One rule, :func:`mlflow_imbalance.stats.coverage.undercovers`, derived from
``benchmarks/bench_band_coverage.py --regimes`` (docs/statistics.md, "Coverage at a glance"):
flagged at 100 / 10^6 at low eta, not at 1,000 / 100,000; the smoke test keeps the table's
values from going stale.
"""

from __future__ import annotations

import json

import mlflow
import numpy as np
import pytest
from test_band_coverage import continuous_binormal, draw_counts, true_curves

import mlflow_imbalance as mi
from mlflow_imbalance import uncertainty as u
from mlflow_imbalance.report import build_report
from mlflow_imbalance.stats.coverage import MEASURED, undercover_text, undercovers


def _binormal_counts(n_pos: int, n_neg: int, seed: int) -> mi.RocCounts:
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    s = np.r_[rng.normal(2.0, 1.0, n_pos), rng.normal(0.0, 1.0, n_neg)]
    return mi.RocCounts.from_scores(y, s)


@pytest.fixture(scope="module")
def small_p() -> mi.RocCounts:
    return _binormal_counts(100, 1_000_000, 3)


@pytest.fixture(scope="module")
def large_p() -> mi.RocCounts:
    return _binormal_counts(1_000, 100_000, 4)


def test_rule_flags_few_positives_at_low_eta_only(small_p, large_p):
    eta = np.logspace(-6, np.log10(0.5), 23)
    for key in ("ap", "pr_auc", "max_f1"):
        flag = undercovers(small_p, key, eta)
        assert flag.dtype == bool and flag.shape == eta.shape
        assert flag[eta < 1e-4].any() and not flag[eta > 1e-2].any(), key
        assert not undercovers(large_p, key, eta[eta >= 1e-4]).any(), key
    assert "narrower than it is" in undercover_text(small_p, "ap", 1e-4)
    assert undercover_text(large_p, "ap", 1e-2) == ""
    weighted = mi.RocCounts([1.0, 0.0], [1.0, 2.0], [0.5, 3.0], 2.0, 3.0, weighted=True)
    assert not undercovers(weighted, "ap", [1e-4, 0.1]).any()


def test_report_flags_the_ap_band_at_low_eta(small_p, large_p):
    """100 / 10^6: the AP band has a grey stretch at low eta, its table interval a reason, and
    the page one caption line; 1,000 / 100,000: none of these."""
    rep = build_report({"small": small_p}, prevalences=[1e-4], n_bootstrap=60, seed=1)
    runs = {it["name"]: it for it in rep.context["data"]["runs"]}
    seg = runs["small"]["sweep_bands"]["ap_undercovers"]
    assert seg["eta"] and min(seg["eta"]) < 1e-4
    assert max(seg["eta"]) < 0.5
    full = runs["small"]["sweep_bands"]["ap"]
    assert len(seg["eta"]) < len(full["eta"])  # only a stretch of it
    assert "sweepband_ap_undercovers" in json.dumps(rep.context["specs"]["chart-sweep-ap"])
    assert "read them as narrower than they are" in rep.html
    assert any(m.get("caption") for m in rep.context["methods"])
    # the table's AP cell at 1e-4 carries the marker (with the rule's reason on hover)
    t = rep.context["tables"][0]
    i = [c["key"] for c in t["columns"]].index("ap")
    cell = t["rows"][0]["cells"][i]
    assert cell["undercovers"] and cell["undercovers"] == undercover_text(small_p, "ap", 1e-4)
    assert f'<span class="uc" title="{cell["undercovers"]}"> ≈</span>' in rep.html

    rep2 = build_report({"large": large_p}, prevalences=[1e-2], n_bootstrap=60, seed=1)
    runs2 = {it["name"]: it for it in rep2.context["data"]["runs"]}
    assert "ap_undercovers" not in runs2["large"]["sweep_bands"]
    assert not any(m.get("caption") for m in rep2.context["methods"])
    assert "read them as narrower than they are" not in rep2.html
    assert 'class="uc"' not in rep2.html


def test_table_intervals_carry_the_flag(small_p):
    """The bootstrap dict of a run holds ``("undercovers", metric, j)`` for flagged cells."""
    from mlflow_imbalance.report.analysis.intervals import _Uncertainty
    from mlflow_imbalance.report.build import _stable_seed
    from mlflow_imbalance.report.options import _options

    etas = np.array([1e-4, 0.1])
    opts = _options(list(etas), None, "x", 1.0, 1.0, 0.95, 60, 0, None)
    unc = _Uncertainty(opts, _stable_seed)
    out = unc.bootstrap("a", small_p, etas, np.logspace(-6, np.log10(0.5), 40), None, full=False)
    assert out[("undercovers", "ap", 0)] and ("undercovers", "ap", 1) not in out
    assert unc.undercover[("a", "ap", 0)] == out[("undercovers", "ap", 0)]
    assert unc.undercover_note


def test_hook_summary_rows_carry_the_flag(tracking_uri, small_p):
    with mlflow.start_run() as run:
        mi.log_counts(small_p, prevalences=[1e-4, 0.1], log_figures=False)
    summary = mi.tracking.load_summary(run.info.run_id)
    rows = {r["prevalence"]: r for r in summary["headline"]["at_prevalence"]}
    low, high = rows[1e-4], rows[0.1]
    assert low["undercovers"] is True and "narrower" in low["undercovers_reason"]
    assert low["ap"]["undercovers"] is True
    assert high["undercovers"] is False and high["undercovers_reason"] is None
    assert high["ap"]["undercovers"] is False


def test_card_marks_flagged_rows():
    from mlflow_imbalance.tracking.headline import _headline

    c = _binormal_counts(100, 1_000_000, 5)
    headline, _ = _headline(c, "t", [1e-4, 0.1], None, n_boot=60, seed=0)
    rows = headline["at_prevalence"]
    assert [r["undercovers"] for r in rows[1:]] == [True, False]


@pytest.mark.parametrize(
    ("key", "col", "table"),
    [("ap", 0, 0.910), ("pr_auc", 0, 0.890), ("ap", 1, 0.947)],
)
def test_coverage_not_far_below_the_table(key, col, table):
    """Headline intervals, continuous binormal 100 / 10^6, at the test prevalence and 1e-3:
    R = 60 test sets (MC s.d. ~0.037), so coverage must not fall 0.10 below the table's
    (R = 300) value -- a construction that regressed to the old bootstrap (0.45-0.85 at low
    eta) would."""
    model = continuous_binormal()
    n_pos, n_neg = 100, 1_000_000
    h_eta = np.array([n_pos / (n_pos + n_neg), 1e-3])
    truth = true_curves(model, np.array([0.5]), h_eta, np.array([0.5]), 0.5)[key]
    sets = draw_counts(np.random.default_rng(77), model, n_pos, n_neg, 60)
    hits = []
    for i, c in enumerate(sets):
        iv = u.headline_intervals(c, h_eta, n_boot=200, seed=i).intervals[key][col]
        hits.append(iv[0] - 1e-12 <= truth[col] <= iv[1] + 1e-12)
    assert np.mean(hits) >= table - 0.10, (key, col, np.mean(hits))
    assert MEASURED[key]["unflagged"] >= 0.94
