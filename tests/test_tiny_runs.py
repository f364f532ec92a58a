"""Tiny runs (issue 31): every statistic the report calls, on counts that barely exist.

One to three positives or negatives, tied scores, sample weights: each function either returns
finite results (or the NaN it documents: an unavailable DeLong interval) or raises
:class:`~mlflow_imbalance.stats.InsufficientDataError` -- never another error -- so the report
can isolate such a run instead of failing as a whole.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import mlflow_imbalance as mi
from mlflow_imbalance import uncertainty
from mlflow_imbalance.stats import (
    InsufficientDataError,
    auc,
    bands,
    compare,
    decision,
    flip_significance,
    headline,
    intervals,
    posterior,
    prevalence_bands,
    ranking,
    sample_size,
)
from mlflow_imbalance.stats import bootstrap as bs

ETAS = np.array([1e-3, 0.05])
GRID = np.geomspace(1e-4, 0.4, 8)
B = 20


def _good() -> mi.RocCounts:
    rng = np.random.default_rng(1)
    y = rng.random(400) < 0.2
    return mi.RocCounts.from_scores(y, np.round(rng.normal(y * 1.5, 1.0), 2))


GOOD = _good()


@st.composite
def tiny_runs(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Labels, scores (few distinct values: ties) and maybe weights of a tiny run."""
    few = draw(st.integers(1, 3))
    many = draw(st.integers(1, 12))
    n_pos, n_neg = (few, many) if draw(st.booleans()) else (many, few)
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    levels = draw(st.integers(1, 4))
    s = np.asarray(draw(st.lists(st.integers(0, levels - 1), min_size=y.size, max_size=y.size)))
    w = None
    if draw(st.integers(0, 3)) == 0:
        w = np.asarray(
            draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=y.size, max_size=y.size))
        )
    return y, s / 4.0, w


def _test_ok(t: Any) -> None:
    """A test result: a p-value in [0, 1] and a z that is a number (infinite only at p = 0)."""
    assert 0.0 <= t.p_value <= 1.0 and not np.isnan(t.z), t
    assert np.isfinite(t.z) or t.p_value == 0.0, t


def _finite(*arrays: Any) -> None:
    for a in arrays:
        assert np.all(np.isfinite(np.asarray(a, dtype=float))), a


def _band_ok(b: bands.Band, unit: bool = True) -> None:
    _finite(b.low, b.high, b.estimate, b.grid)
    assert np.all(np.asarray(b.low) <= np.asarray(b.high) + 1e-12)
    if unit:
        assert np.all(np.asarray(b.low) >= -1e-12) and np.all(np.asarray(b.high) <= 1 + 1e-12)


def _report_path(c: mi.RocCounts) -> None:
    """The report's per-run bootstrap stage (report/analysis/intervals.py, ``bootstrap``)."""
    thin = headline.thin_for_bootstrap(c, 80).counts
    stats = {k: bs.metric_statistic(thin, k, ETAS) for k in ("ap", "pr_auc", "max_f1")}
    stats["cost"] = bs.min_cost_statistic(thin, ETAS, 1.0, 10.0)
    stats["cost:chosen"] = bs.chosen_cost_statistic(thin, ETAS, 1.0, 10.0)
    stats["roc"] = bs.roc_statistic(thin)
    reps = np.concatenate(
        [
            stats["roc"](tp.astype(float), fp.astype(float))
            for tp, fp in bs.bootstrap_counts(thin, B, 0)
        ]
    )
    tests = bs.bootstrap_statistics(thin, {"ap": stats["ap"]}, B, 1)
    _finite(tests["ap"])
    draws = bs.bayesian_statistics(
        thin, stats, B, np.random.default_rng(0), base_for=("max_f1", "cost")
    )
    for key in ("ap", "pr_auc", "max_f1"):
        est = stats[key].estimate(thin)
        for simultaneous in (False, True):
            band = posterior.band_from_draws(
                est, draws[key], ETAS, metric=key, base=draws.get(f"{key}:base"),
                simultaneous=simultaneous,
            )  # fmt: skip
            _band_ok(band)
            _finite(*headline.recentre(band, est))
    est_c = stats["cost"].estimate(thin)
    lo, hi = posterior.min_cost_interval(
        draws["cost"], draws["cost:base"], est_c, est_c, 0.95, chosen=draws["cost:chosen"]
    )
    _finite(lo, hi)
    est_roc = stats["roc"].estimate(thin)
    rb = bands.band_from_replicates(
        est_roc, reps, stats["roc"].grid, grid_name="fpr", metric="roc", rate_n=thin.n_pos
    )
    _band_ok(rb)
    _band_ok(bands.pr_band_from_roc(rb, 1e-3))


def _calls(y: np.ndarray, s: np.ndarray, c: mi.RocCounts) -> dict[str, Any]:
    k = c.n_thresholds - 1
    tp, fp = float(c.tp[0]), float(c.fp[0])

    def roc_then_pr() -> None:
        rb = bands.roc_band(c, n_boot=B)
        _band_ok(rb)
        _band_ok(bands.pr_band_from_roc(rb, 1e-3))
        _band_ok(prevalence_bands.prevalence_band_from_roc(rb, GRID, "pr_auc"))

    def auc_interval() -> None:
        iv = auc.roc_auc_interval(c)
        if iv.available:
            _finite(iv.low, iv.high)
        else:  # documented: NaN limits, .available False
            assert math.isnan(iv.low) and math.isnan(iv.high)

    def selected() -> None:
        sp = decision.selected_point_interval(c, k, 1e-3)
        _finite(sp.precision_low, sp.precision_high, sp.recall_low, sp.recall_high)

    def adequacy() -> None:
        if c.weighted or tp <= 0:  # the report's adequacy check skips these (no binomial counts)
            return
        fpr = max(float(fp) / c.n_neg, 1.0 / c.n_neg)
        _finite(sample_size.expected_rate_cv(np.array([fpr]), c.n_neg, 0.95))
        try:  # the report catches ValueError here (target not reachable): documented
            sample_size.required_sample_size(
                min(float(tp) / c.n_pos, 1.0), min(fpr, 0.5), 0.3, 0.95
            )
        except InsufficientDataError:
            raise
        except ValueError as exc:
            assert "InsufficientDataError" not in type(exc).__name__

    return {
        "report bootstrap stage": lambda: _report_path(c),
        "roc_band + pr_band_from_roc": roc_then_pr,
        "pr_band": lambda: _band_ok(bands.pr_band(c, 1e-3, n_boot=B)),
        "pr_band sup-t": lambda: _band_ok(bands.pr_band(c, 1e-3, n_boot=B, construction="sup-t")),
        "f1_band": lambda: _band_ok(bands.f1_band(c, float(c.thresholds[0]), ETAS)),
        "p3_band": lambda: _band_ok(bands.p3_band(tp, fp, c.n_pos, c.n_neg, ETAS)),
        **{
            f"prevalence_band {m} {how}": (
                lambda m=m, how=how: _band_ok(
                    prevalence_bands.prevalence_band(c, m, GRID, n_boot=B, construction=how)
                )
            )
            for m in ("ap", "pr_auc", "max_f1")
            for how in ("bayesian", "bootstrap")
        },
        "headline_intervals": lambda: [
            _finite(v)
            for v in headline.headline_intervals(
                c, ETAS, n_boot=B, costs=(1, 10)
            ).intervals.values()
        ],
        "roc_auc_interval": auc_interval,
        "delong_test_unpaired": lambda: _finite(compare.delong_test_unpaired(c, GOOD).z),
        # z = +-inf, p = 0 is the documented zero-variance convention (pROC's), not a failure
        "delong_test (paired scores)": lambda: _test_ok(compare.delong_test(y, s, s[::-1])),
        "paired_metric_test (counts)": lambda: _finite(
            compare.paired_metric_test(c, GOOD, "ap", 1e-3, n_boot=B).difference
        ),
        "shared replicates (paired)": lambda: [
            None
            for _ in compare._shared_count_replicates(
                y, [s, s[::-1]], B, np.random.default_rng(0), ["a", "b"]
            )[1]
        ],
        "choose_threshold": lambda: decision.choose_threshold(c, 1e-3, min_precision=0.5),
        "candidate_limits": lambda: _finite(decision.candidate_limits(c).tpr_low),
        "selected_point_interval": selected,
        "chance_level": lambda: decision.chance_level(tp / c.n_pos, fp / c.n_neg, None, 1e-3),
        "precision_interval": lambda: _finite(
            *intervals.precision_interval(tp, fp, c.n_pos, c.n_neg, 1e-3)
        ),
        "adequacy": adequacy,
        "flip_table": lambda: ranking.flip_table({"tiny": c, "good": GOOD}),
        "rank_runs": lambda: ranking.rank_runs({"tiny": c, "good": GOOD}, "ap", ETAS),
        "flip_significance (unpaired)": lambda: flip_significance.flip_significance(
            c, GOOD, "ap", GRID, n_boot=B
        ),
        "check_sample_size": lambda: sample_size.check_sample_size(c, 0.1, warn=False),
    }


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tiny_runs())
# weights below one case: check_sample_size took "one positive" as TPR 1 / 0.5 = 2 (found once)
@example(run=(np.array([True, False]), np.array([0.0, 0.25]), np.array([0.5, 0.5])))
@example(run=(np.array([True, True, False, False]), np.array([0.0, 0.0, 0.25, 0.25]), None))
def test_tiny_runs_give_results_or_insufficient_data(run):
    y, s, w = run
    c = mi.RocCounts.from_scores(y, s, sample_weight=w)
    for name, call in _calls(y, s, c).items():
        try:
            call()
        except InsufficientDataError as exc:
            text = str(exc)
            assert "\n" not in text and ("positive" in text or "negative" in text), (name, text)
        except Exception as exc:  # pragma: no cover - the failure being tested for
            raise AssertionError(f"{name} raised {type(exc).__name__}: {exc}") from exc


@pytest.mark.parametrize(
    ("y", "s"),
    [
        ([1, 1, 1, 0], [0.3, 0.9, 0.8, 0.1]),  # the run: one negative
        ([1, 0], [0.9, 0.1]),
        ([1, 0], [0.5, 0.5]),
        ([1, 1, 0], [0.1, 0.2, 0.9]),
    ],
)
def test_one_negative_roc_band_is_the_honest_degenerate_band(y, s):
    c = mi.RocCounts.from_scores(y, s)
    rb = uncertainty.roc_band(c, n_boot=50)
    assert rb.grid.tolist() == [1.0]  # nothing is claimed below the one negative's FPR
    pb = uncertainty.pr_band_from_roc(rb, 1e-3)
    assert np.all(pb.high == 1.0)  # precision not bounded above: nothing is known


def test_insufficient_data_messages_name_the_counts():
    c = mi.RocCounts.from_scores([1, 1, 1, 0], [0.3, 0.9, 0.8, 0.1])
    with pytest.raises(InsufficientDataError, match=r"^1 negative \(of 3 positives and 1 negati"):
        uncertainty.delong_test_unpaired(c, GOOD)
    w = mi.RocCounts.from_scores([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], sample_weight=[1, 2, 3, 4])
    with pytest.raises(InsufficientDataError, match="weighted"):
        uncertainty.roc_band(w, n_boot=20)
    assert issubclass(InsufficientDataError, ValueError)
    assert uncertainty.InsufficientDataError is InsufficientDataError
