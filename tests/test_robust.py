"""Deciding over a range of η (issue 37): stats/robust.py and the report's verdict rules.

References are computed here independently: the expected cost of every decision written out
from the ROC points (Maxion & Roberts §5: (1 − η)·C_FP·FPR + η·C_FN·(1 − TPR)) and the worst
case found by brute force on a fine η grid, not through the package's functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlflow_imbalance as mi
from mlflow_imbalance.report.model import Verdict
from mlflow_imbalance.stats.robust import (
    common_prevalence_test,
    decide_over_range,
    lowest_cost_limits,
    minimax_regret,
    worst_regret,
)


def _points(c):
    """Every decision a run can make, with the trivial ones: (TPR, FPR) arrays."""
    return (
        np.r_[0.0, np.asarray(c.tp, float) / c.n_pos, 1.0],
        np.r_[0.0, np.asarray(c.fp, float) / c.n_neg, 1.0],
    )


def _brute(counts, lo, hi, cfp, cfn, n=801):
    """Least worst-case regret over [lo, hi] by brute force on a grid of η (ends included)."""
    etas = np.linspace(lo, hi, n)
    pts = [_points(c) for c in counts.values()]
    t = np.concatenate([p[0] for p in pts])
    f = np.concatenate([p[1] for p in pts])
    cost = etas[:, None] * cfn * (1 - t[None, :]) + (1 - etas[:, None]) * cfp * f[None, :]
    regret = cost - cost.min(axis=1, keepdims=True)
    return float(regret.max(axis=0).min())


def _run(rng, mu, n_pos, n_neg, decimals=None):
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    s = np.r_[rng.normal(mu, 1, n_pos), rng.normal(0, 1, n_neg)]
    if decimals is not None:
        s = np.round(s, decimals)
    return mi.RocCounts.from_scores(y, s)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    lo=st.floats(0, 0.05),
    width=st.floats(0, 0.2),
    cfn=st.sampled_from([1.0, 10.0, 100.0]),
    decimals=st.sampled_from([None, 1, 2]),
)
def test_minimax_regret_equals_brute_force_and_is_exact_from_the_ends(
    seed, lo, width, cfn, decimals
):
    """Regret is convex in η, so the worst case of every decision is at an end: the package's
    two-end minimum equals a brute-force minimum over 801 η (to float error), and the chosen
    decision's worst case on the grid is its stated regret."""
    rng = np.random.default_rng(seed)
    counts = {"a": _run(rng, 1.0, 30, 300, decimals), "b": _run(rng, 2.0, 20, 500, decimals)}
    hi = max(min(lo + width, 0.9), 1e-6)
    choice = minimax_regret(counts, lo, hi, 1.0, cfn)
    assert choice.regret == pytest.approx(_brute(counts, lo, hi, 1.0, cfn), abs=1e-12)
    o = choice.option
    etas = np.linspace(lo, hi, 801)
    own = etas * cfn * (1 - o.tpr) + (1 - etas) * o.fpr
    pts = [_points(c) for c in counts.values()]
    t = np.concatenate([p[0] for p in pts])
    f = np.concatenate([p[1] for p in pts])
    best = (etas[:, None] * cfn * (1 - t) + (1 - etas[:, None]) * f).min(axis=1)
    assert float((own - best).max()) == pytest.approx(choice.regret, abs=1e-12)
    assert worst_regret(o.tpr, o.fpr, counts, lo, hi, 1.0, cfn) == pytest.approx(
        choice.regret, abs=1e-12
    )
    assert choice.uniform == (choice.regret <= 0)
    if lo == hi:  # a typed η: the least expected cost there, regret 0
        assert choice.regret == 0


def test_trivial_decisions_win_where_they_are_best():
    """At η far below what any run can use, flagging nothing is best; with C_FP tiny against
    C_FN at a high η, flagging everything is; ties go to the decision that needs no model."""
    rng = np.random.default_rng(0)
    counts = {"a": _run(rng, 1.0, 200, 2000)}
    c = minimax_regret(counts, 1e-6, 1e-5, 1.0, 100.0)
    assert c.option.kind == "nothing" and c.option.run is None and c.regret == 0
    # a run whose lowest score is a positive's reaches TPR 1 only by flagging every case: a tie
    # with flagging everything, which needs no model
    two = {"two": mi.RocCounts([1.0, 0.0], [5, 10], [1, 10], 10, 10)}
    c = minimax_regret(two, 0.5, 0.6, 0.001, 100.0)
    assert c.option.kind == "everything" and c.option.run is None and c.regret == 0


def test_the_beats_nothing_check_uses_the_lowest_cost_limit_at_the_upper_end():
    """A weak run at η where its lowest cost's interval reaches flagging nothing: the decision
    is flagging nothing (its regret is flagging nothing's); a strong run keeps its decision.
    The limits are capped at the trivial decisions' costs."""
    rng = np.random.default_rng(3)
    weak = {"weak": _run(rng, 0.3, 20, 2000)}
    eta = 0.002
    _, hi_c = lowest_cost_limits(weak["weak"], [eta], 1.0, 100.0, n_boot=300, seed=1)
    assert hi_c[0] <= min(eta * 100, 1 - eta) + 1e-15
    rd = decide_over_range(weak, eta, eta * 2, 1.0, 100.0, n_boot=300, seed=1)
    if rd.choice.option.kind == "run":
        assert rd.upper is not None
        assert (rd.option.kind == "nothing") == (rd.upper >= rd.trivial_cost)
    strong = {"strong": _run(rng, 3.0, 300, 30_000)}
    rd = decide_over_range(strong, 0.005, 0.02, 1.0, 100.0, n_boot=300, seed=1)
    assert rd.option.kind == "run" and not rd.not_shown
    assert rd.upper < rd.trivial_cost == pytest.approx(min(0.02 * 100, 1 - 0.02))


def test_common_prevalence_test_names_the_outlier():
    """Three consistent estimates pass; a fourth far outside them is named (Cochran's Q,
    computed here from the inverse-variance weights)."""
    same = [(0.010, 0.008, 0.012), (0.011, 0.009, 0.013), (0.0105, 0.0085, 0.0125)]
    r = common_prevalence_test(same)
    se = np.array([0.002 / 1.959964] * 3)
    e = np.array([0.010, 0.011, 0.0105])
    q = float(np.sum((e - np.average(e, weights=1 / se**2)) ** 2 / se**2))
    from scipy import stats as sps

    assert r.p_value == pytest.approx(float(sps.chi2.sf(q, 2)), rel=1e-6)
    assert r.disagree == ()
    r = common_prevalence_test([*same, (0.030, 0.027, 0.033)])
    assert r.p_value < 0.05 and r.disagree == (3,)
    assert common_prevalence_test([(0.01, 0.009, 0.011)]).p_value is None


def test_verdict_record_checks_its_decision():
    kw = dict(prevalence=0.01, criterion="expected cost", criterion_key="cost", value=0.1,
              threshold=math.inf, precision=math.nan, precision_low=None, precision_high=None,
              recall=0.0, recall_low=None, recall_high=None, per=10_000, alerts=0.0,
              caught=0.0, missed=100.0)  # fmt: skip
    v = Verdict(run=None, decision="nothing", **kw)
    assert v.prevalence_low == v.prevalence_high == 0.01 and v.regret is None
    assert v.as_dict()["decision"] == "nothing"
    with pytest.raises(ValueError, match="decision must be one of"):
        Verdict(run=None, decision="maybe", **kw)
    with pytest.raises(ValueError, match="run must be given exactly when decision is 'run'"):
        Verdict(run="a", decision="nothing", **kw)


@pytest.mark.parametrize("bad", [(0.2, 0.1), (-0.1, 0.2), (0.1, 1.0), "x:y", "0.1", (0.1,), True])
def test_decide_over_bad_input_is_named(bad):
    with pytest.raises(ValueError, match="decide_over"):
        mi.build_report({"a": mi.RocCounts([1.0], [1], [1], 1, 1)}, decide_over=bad)


def test_tiny_run_never_wins_and_the_range_verdict_over_decide_over():
    """Issue 37: a run with 3 positives and 1 negative beside a run of 3,000 cases is 'not
    judged' and never the verdict's run (it has the highest AP); with only tiny runs the
    decision is none_judged. decide_over gives a first verdict over the range asked, whose
    regret equals the brute-force minimax over the judged run alone."""
    rng = np.random.default_rng(5)
    big = _run(rng, 1.5, 300, 2700)
    tiny = mi.RocCounts.from_scores([1, 1, 1, 0], [0.9, 0.8, 0.7, 0.1])
    assert mi.metrics.average_precision(tiny) > mi.metrics.average_precision(big)
    rep = mi.build_report({"big": big, "tiny": tiny}, n_bootstrap=0, progress=False)
    (v,) = rep.verdict
    assert v.run == "big" and v.decision == "run"
    assert v.not_judged == ("tiny (3 positives, 1 negative)",)
    assert "not judged" in v.text.lower() or "Not judged" in v.text
    assert 'data-decision="run"' in rep.html and "tiny (3 positives, 1 negative)" in rep.html
    rep = mi.build_report({"tiny": tiny}, n_bootstrap=0, progress=False)
    (v,) = rep.verdict
    assert v.decision == "none_judged" and v.run is None and "no run can be judged" in v.text
    assert 'data-run="" data-decision="none_judged"' in rep.html
    rep = mi.build_report(
        {"big": big, "tiny": tiny}, costs={"fp": 1, "fn": 100}, n_bootstrap=0,
        decide_over=(1e-3, 2e-2), progress=False,
    )  # fmt: skip
    v = rep.verdict[0]
    assert (v.prevalence_low, v.prevalence_high, v.source) == (1e-3, 2e-2, "range")
    assert v.prevalence == float(f"{math.sqrt(1e-3 * 2e-2):.3g}")
    assert v.regret == pytest.approx(_brute({"big": big}, 1e-3, 2e-2, 1.0, 100.0), abs=1e-12)
    assert v.at_estimate is not None and v.at_estimate.prevalence == v.prevalence
    assert v.at_low["prevalence"] == 1e-3 and v.at_high["prevalence"] == 2e-2
    # a range from 0: its lower end has no positives, so every alert there is false (not "0 of
    # 0 positives caught"); the regret is still the brute-force minimax
    rep = mi.build_report({"big": big}, costs={"fp": 1, "fn": 100}, n_bootstrap=0,
                          decide_over=(0, 2e-2), progress=False)  # fmt: skip
    v = rep.verdict[0]
    assert v.regret == pytest.approx(_brute({"big": big}, 0, 2e-2, 1.0, 100.0), abs=1e-12)
    assert "all false (no positives at η = 0)" in v.text and "0 of 0" not in rep.html
    assert "all false (no positives at η = 0)" in rep.html


def test_labels_to_settle_pins_eta_where_the_regret_is_within_tolerance():
    """Issue 39's budget said up front: the half-width it returns keeps the least worst-case
    regret (brute force over 801 η) within τ, a half-width 1.5x wider does not, and the labels
    the audit design needs for it shrink that design's expected η half-width to at most h."""
    from mlflow_imbalance.core.production import ScoreCounts
    from mlflow_imbalance.stats.audit import design_audit, expected_half_widths
    from mlflow_imbalance.stats.robust import labels_to_settle

    rng = np.random.default_rng(11)
    counts = {"a": _run(rng, 1.5, 200, 20_000), "b": _run(rng, 2.5, 200, 20_000)}
    n, eta = 20_000, 0.01
    k = rng.binomial(n, eta)
    sc = ScoreCounts.from_scores(np.r_[rng.normal(2.5, 1, k), rng.normal(0, 1, n - k)])
    tol = 0.02
    got = labels_to_settle(counts, "b", sc, 1.5, eta, tol, 1.0, 100.0)
    h = got.half_width
    assert 0 < h < eta and got.labels is not None and got.labels > 0
    assert _brute(counts, eta - h, eta + h, 1.0, 100.0) <= tol + 1e-12
    assert _brute(counts, max(eta - 1.5 * h, 0), eta + 1.5 * h, 1.0, 100.0) > tol
    d = design_audit(counts["b"], sc, got.labels, 1.5, prevalence=eta)
    assert expected_half_widths(d)["prevalence"] <= h * 1.0001
    assert "plan_audit" in got.text


def test_a_wide_or_failing_estimate_says_how_many_labels_settle_it():
    """Issue 39's budget in the estimate's own text: given costs (with_audit_advice), a
    label-free estimate whose
    interval is too wide for the run's decision to lose at most 10 % of its least cost (brute
    force over 801 η) names the labels; a narrow one, or one without costs, does not."""
    from mlflow_imbalance.core.production import ScoreCounts
    from mlflow_imbalance.stats.prevalence import estimate_prevalence
    from mlflow_imbalance.stats.robust import with_audit_advice

    def estimate(c, sc, costs=None):
        return with_audit_advice(estimate_prevalence(c, sc), c, sc, costs)

    rng = np.random.default_rng(5)
    c = _run(rng, 2.5, 200, 20_000)
    n = 10_000
    wide = ScoreCounts.from_scores(np.r_[rng.normal(2.5, 1, 10), rng.normal(0, 1, n - 10)])
    e = estimate(c, wide, costs=(1.0, 100.0))
    pts_t, pts_f = _points(c)
    best = float(np.min(e.estimate * 100 * (1 - pts_t) + (1 - e.estimate) * pts_f))
    assert _brute({"r": c}, e.low, e.high, 1.0, 100.0) > 0.1 * best  # too wide to decide
    assert e.audit is not None and e.audit.labels > 0
    assert e.audit.tolerance == pytest.approx(0.1 * best, rel=1e-9)
    assert f"About {e.audit.labels:,} labels drawn by plan_audit" in e.text
    assert e.text.startswith(estimate_prevalence(c, wide).text)  # the same estimate, then advice
    assert estimate(c, wide).audit is None  # no costs, no advice
    narrow = ScoreCounts.from_scores(np.r_[rng.normal(2.5, 1, 3000), rng.normal(0, 1, n - 3000)])
    e2 = estimate(c, narrow, costs=(1.0, 100.0))
    best2 = float(np.min(e2.estimate * 100 * (1 - pts_t) + (1 - e2.estimate) * pts_f))
    assert e2.check_passed and _brute({"r": c}, e2.low, e2.high, 1.0, 100.0) <= 0.1 * best2
    assert e2.audit is None and "plan_audit" not in e2.text
    with pytest.raises(ValueError, match="costs"):
        estimate(c, narrow, costs=(1.0, -1.0))
