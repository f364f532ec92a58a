"""Level and power of the flip-significance test, by simulation from known score models.

Both runs score the same examples (P = 200, N = 20,000; noise correlation 0.5 within each
class); A's positives ~ N(2, 1), negatives N(0, 1) for both runs. B's positives define the
scenario (:func:`flip_scores`):

* ``"null"``: B = A's model, D(eta) = AP_A - AP_B = 0 everywhere.
* ``"least favourable"``: B's positives scoring below 1.5 are pushed down by 2. B ranks like A
  at the top, so D >= 0 everywhere, ~ 0 at low eta and clearly positive at high eta: a false
  flip needs "D < 0" shown where D ~ 0, the intersection-union test's least favourable null.
* ``"crossing"``: B's positives ~ N(1.6, 1.8): one real flip near eta = 1.3e-2.
* ``"mid-range crossing"``: B ranks like A at the top (positives above 2.5), its positives in
  (1.3, 2.5] move up by 0.5 (capped at 2.5) and those below 1.3 down by 4: D ~ 0 at the lowest
  eta, negative around eta = 1e-2 to 3e-2, one flip at eta = 0.13, positive above. The case
  where the windows from the grid's end are weaker than single points.

The true D is computed here by quadrature (:func:`true_ap_difference`, scipy only), and the
quadrature is checked against scikit-learn on a large sample. The smoke tests use R = 60 test
sets (unpaired mode, default ``side_test="points"``, B = 200): Monte-Carlo s.d. of a rate is
<= 0.065, so the bounds below are far from the measured values (false alarms 0.035, power
0.635; docs/statistics.md, "Is a flip real?", R = 200) and a test that always or never rejects
fails. Two deterministic tests pin down what ``side_test="windows"`` adds, with analytic
critical values. The full study is ``benchmarks/bench_band_coverage.py --flips``, which
imports these scenarios.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mlflow_imbalance import RocCounts
from mlflow_imbalance import ranking as u_rank

N_POS, N_NEG = 200, 20_000
GRID = np.logspace(-4, np.log10(0.5), 40)
SCENARIOS = ("null", "least favourable", "crossing", "mid-range crossing")


def flip_scores(
    rng: np.random.Generator, y: np.ndarray, scen: str
) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' scores on the examples ``y`` (bool) under scenario ``scen``."""
    e1 = rng.normal(size=y.size)
    e2 = 0.5 * e1 + np.sqrt(0.75) * rng.normal(size=y.size)
    sa = np.where(y, 2.0 + e1, e1)
    if scen == "null":
        return sa, np.where(y, 2.0 + e2, e2)
    if scen == "least favourable":
        x = 2.0 + e2
        return sa, np.where(y, np.where(x > 1.5, x, x - 2.0), e2)
    if scen == "crossing":
        return sa, np.where(y, 1.6 + 1.8 * e2, e2)
    if scen == "mid-range crossing":
        x = 2.0 + e2
        xb = np.where(x > 2.5, x, np.where(x > 1.3, np.minimum(x + 0.5, 2.5), x - 4.0))
        return sa, np.where(y, xb, e2)
    raise ValueError(f"unknown scenario {scen!r}")


def true_ap_difference(eta: np.ndarray, scen: str) -> np.ndarray:
    """Population ``D(eta) = AP_A - AP_B`` by quadrature over the threshold (scipy only).

    ``AP(eta) = int precision dTPR``, TPR and FPR the normal tail probabilities of the
    scenario's class models; trapezoid rule on 400,001 thresholds in [-10, 12].
    """
    t = np.linspace(12.0, -10.0, 400_001)
    fpr = stats.norm.sf(t)

    def ap(tpr: np.ndarray) -> np.ndarray:
        e = np.asarray(eta, dtype=float)[:, None]
        prec = np.where(tpr > 0, e * tpr / np.maximum(e * tpr + (1 - e) * fpr, 1e-300), 1.0)
        return np.sum(0.5 * (prec[:, 1:] + prec[:, :-1]) * np.diff(tpr), axis=1)

    tpr_b = {
        "null": stats.norm.sf(t - 2.0),
        # score x if x > 1.5 else x - 2, x ~ N(2, 1): P(x > max(t, 1.5)) + P(t + 2 < x <= 1.5)
        "least favourable": stats.norm.sf(np.maximum(t, 1.5) - 2.0)
        + np.clip(stats.norm.cdf(-0.5) - stats.norm.cdf(t), 0.0, None),
        "crossing": stats.norm.sf((t - 1.6) / 1.8),
        # x > 2.5 keeps x; (1.3, 2.5] -> min(x + 0.5, 2.5), above t < 2.5 iff x > t - 0.5;
        # <= 1.3 -> x - 4, above t iff x > t + 4
        "mid-range crossing": np.where(
            t >= 2.5,
            stats.norm.sf(t - 2.0),
            stats.norm.sf(0.5)
            + np.clip(stats.norm.cdf(0.5) - stats.norm.cdf(np.maximum(-0.7, t - 2.5)), 0.0, None)
            + np.clip(stats.norm.cdf(-0.7) - stats.norm.cdf(t + 2.0), 0.0, None),
        ),
    }[scen]
    return ap(stats.norm.sf(t - 2.0)) - ap(tpr_b)


def _rate(scen: str, r: int, b: int = 200) -> float:
    """Share of ``r`` simulated test sets with a flip called significant (unpaired test)."""
    rng = np.random.default_rng([2026, SCENARIOS.index(scen)])
    y = np.r_[np.ones(N_POS, bool), np.zeros(N_NEG, bool)]
    hits = 0
    for i in range(r):
        sa, sb = flip_scores(rng, y, scen)
        ca, cb = RocCounts.from_scores(y, sa), RocCounts.from_scores(y, sb)
        res = u_rank.flip_significance(ca, cb, "ap", GRID, n_boot=b, seed=i)
        hits += any(res.significant)
    return hits / r


def test_quadrature_matches_sklearn_on_a_large_sample():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    n = 400_000
    y = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    for scen in SCENARIOS[1:]:
        sa, sb = flip_scores(rng, y, scen)
        ap = sklearn_metrics.average_precision_score
        d = ap(y, sa) - ap(y, sb)
        # eta = 0.5 is the sample's own prevalence; s.e. of D at this n is ~1e-3
        assert abs(d - true_ap_difference(np.array([0.5]), scen)[0]) < 5e-3


def test_scenarios_are_what_the_study_says():
    d = {s: true_ap_difference(GRID, s) for s in SCENARIOS}
    np.testing.assert_allclose(d["null"], 0.0, atol=1e-12)
    lf = d["least favourable"]
    # a null (no sign change), ~0 at low eta, clearly positive at high eta
    assert np.all(lf >= 0)
    assert np.all(lf[GRID <= 1e-3] < 2e-3) and np.all(lf[GRID >= 0.1] > 0.07)
    cr = d["crossing"]
    change = np.flatnonzero(np.diff(np.sign(cr)) != 0)
    assert change.size == 1 and 1e-2 < GRID[change[0] + 1] and GRID[change[0]] < 2e-2
    assert cr.min() < -0.08 and cr.max() > 0.12
    mid = d["mid-range crossing"]
    change = np.flatnonzero(np.diff(np.sign(mid)) != 0)
    assert change.size == 1 and 0.1 < GRID[change[0] + 1] and GRID[change[0]] < 0.2
    assert np.all(np.abs(mid[GRID <= 1e-4]) < 2e-3) and mid.min() < -0.07 and mid.max() > 0.06


def test_false_alarms_at_the_least_favourable_null_are_rare():
    # nominal 0.05. A level-0.05 test exceeds 8/60 with probability 0.003 (binomial); a test
    # with a false-alarm rate of 0.30 stays within it with probability 0.002
    assert _rate("least favourable", 60) <= 8 / 60


def test_real_crossing_is_usually_called_significant():
    # a test of power 0.65 falls below 27/60 with probability 5e-4 (binomial); one of power
    # 0.30 reaches it with probability 0.01
    assert _rate("crossing", 60) >= 27 / 60


def _replicates(d: np.ndarray, b: int = 4000) -> np.ndarray:
    """Replicates of D: the estimate plus independent N(0, 1) noise at every grid point."""
    return d + np.random.default_rng(3).normal(size=(b, d.size))


def test_windows_add_up_consistent_moderate_evidence_on_the_outer_sides():
    # D-hat = -1.2 on the 15 points left of the flip, +1.2 on the 15 right of it, iid N(0, 1)
    # replicates. Single points: 1.2 is below the sup-t critical value over a side,
    # Phi^-1(0.95^(1/15)) = 2.39. Windows from the grid's end: the full side's standardised
    # sum is 1.2 sqrt(15) = 4.65, above 3, which bounds the critical value of the 15 windows
    # (Bonferroni: 15 P(Z > 3) = 0.02 < 0.05).
    grid = np.logspace(-4, np.log10(0.5), 30)
    d = np.r_[np.full(15, -1.2), np.full(15, 1.2)]
    assert stats.norm.ppf(0.95 ** (1 / 15)) > 2.3 and 15 * stats.norm.sf(3.0) < 0.05
    flip = [float(np.sqrt(grid[14] * grid[15]))]
    res = u_rank.flip_significance_from_replicates(
        d, _replicates(d), grid, flip, side_test="windows"
    )
    assert res.significant == [True] and "(windows)" in res.method
    # the default tests single points (sup-t) on every side
    points = u_rank.flip_significance_from_replicates(d, _replicates(d), grid, flip)
    assert points.significant == [False] and "(points)" in points.method
    with pytest.raises(ValueError, match="side_test"):
        u_rank.flip_significance_from_replicates(d, _replicates(d), grid, flip, side_test="x")


def test_windows_test_a_side_between_two_flips_by_single_points():
    # +3 on the outer sides (shown), -1.2 on the 10 middle points between the two flips: the
    # middle side is tested point by point (sup-t, critical value Phi^-1(0.95^(1/10)) = 2.32),
    # so neither flip is shown although the middle side's sum (1.2 sqrt(10) = 3.8) is large
    grid = np.logspace(-4, np.log10(0.5), 30)
    d = np.r_[np.full(10, 3.0), np.full(10, -1.2), np.full(10, 3.0)]
    flips = [float(np.sqrt(grid[9] * grid[10])), float(np.sqrt(grid[19] * grid[20]))]
    res = u_rank.flip_significance_from_replicates(
        d, _replicates(d), grid, flips, side_test="windows"
    )
    assert stats.norm.ppf(0.95 ** (1 / 10)) > 2.3
    assert res.significant == [False, False]
