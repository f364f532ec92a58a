"""Choosing a threshold for a deployment requirement, with bounds valid after the choice.

References: Clopper-Pearson limits recomputed here from scipy's Beta quantiles, the
Bonferroni level written out, and coverage by simulation from the discretised binormal model
of ``tests/test_band_coverage.py`` (truth = the population's TPR and FPR at the chosen
threshold).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_band_coverage import binormal_model, draw_counts

from mlflow_imbalance import RocCounts, metrics
from mlflow_imbalance import uncertainty as u
from mlflow_imbalance.stats import decision


def _cp(k, n, level):
    a = 1 - level
    lo = stats.beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
    return lo, hi


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(300, bool), np.zeros(30_000, bool)]
    s = rng.normal(size=y.size) + 2.2 * y
    return RocCounts.from_scores(y, s)


def test_old_construction_bounds_are_bonferroni_clopper_pearson_at_the_chosen_point(counts):
    """The simultaneous-box construction (still used with min_recall / max_alerts_per, and kept
    callable for min_precision alone as ``decision._choose_simultaneous``)."""
    ch = decision._choose_simultaneous(counts, 0.01, 0.2, None, None, 0.95)
    assert ch.feasible and ch.reason == ""
    k = int(np.flatnonzero(counts.thresholds == ch.threshold)[0])
    m = ch.n_candidates
    level = 1 - 0.05 / (2 * m)
    t_lo, t_hi = _cp(int(counts.tp[k]), counts.n_pos, level)
    f_lo, f_hi = _cp(int(counts.fp[k]), counts.n_neg, level)
    o = 0.01 / 0.99
    assert ch.recall_low == pytest.approx(t_lo, rel=1e-9)
    assert ch.recall_high == pytest.approx(t_hi, rel=1e-9)
    assert ch.fpr_high == pytest.approx(f_hi, rel=1e-9)
    assert ch.precision_low == pytest.approx(t_lo * o / (t_lo * o + f_hi), rel=1e-9)
    assert ch.precision_high == pytest.approx(t_hi * o / (t_hi * o + f_lo), rel=1e-9)
    assert ch.precision_low >= 0.2
    prec = float(np.atleast_1d(metrics.precision(counts, 0.01))[k])
    assert ch.precision == pytest.approx(prec, rel=1e-12)
    assert ch.recall == pytest.approx(counts.tpr[k], rel=1e-12)
    # the best recall among the candidates that qualify
    cand = u.candidate_thresholds(counts)
    for j in cand:
        lo_t, _ = _cp(int(counts.tp[j]), counts.n_pos, level)
        _, hi_f = _cp(int(counts.fp[j]), counts.n_neg, level)
        if lo_t * o / (lo_t * o + hi_f) >= 0.2:
            assert counts.tpr[j] <= ch.recall + 1e-12
    assert "Bonferroni" in ch.method and ch.confidence == 0.95


def _sequence_reference(c, eta, q, crit):
    """The fixed sequence written out from its docstring: levels 0 and floor(1.1^i) from the
    largest at or below 0.05 j_max up to j_max; at each, the lowest threshold with FP <= j
    (the smallest level reaching it); pass when its TP count reaches the critical count; the
    last threshold of the unbroken run of passes from the top."""
    o = eta / (1 - eta)
    n = c.n_neg
    j_max = min(n, np.floor(n * o * (1 - q) / q))
    geo = np.unique(np.floor(1.1 ** np.arange(400) + 1e-9))
    levels = np.unique(np.r_[0.0, geo[geo <= j_max]])
    levels = levels[levels >= levels[levels <= 0.05 * j_max].max()]
    fp, tp = np.asarray(c.fp, float), np.asarray(c.tp, float)
    chosen, seen = None, set()
    for j, cj in zip(levels, crit, strict=True):
        i = int(np.searchsorted(fp, j, side="right") - 1)
        if i in seen:
            continue
        seen.add(i)
        if i < 0 or tp[i] < cj:
            break
        chosen = i
    return levels, chosen


def test_min_precision_alone_is_the_calibrated_sequence(counts):
    """The chosen threshold is the one of the construction written out in the docstring; its
    precision_low is the certificate q, its other bounds the selection-valid ones of
    ``selected_point_interval`` there (what the report shows at that threshold)."""
    from mlflow_imbalance.stats.order_stats import sequence_critical_counts

    for eta, q in ((0.01, 0.2), (0.01, 0.35), (1e-3, 0.03)):
        ch = u.choose_threshold(counts, eta, min_precision=q)
        levels = decision.sequence_levels(counts.n_neg, eta, q)
        o = eta / (1 - eta)
        crit, _, bound = sequence_critical_counts(
            counts.n_pos, counts.n_neg, q / (o * (1 - q)), tuple(int(v) for v in levels), 0.05
        )
        assert bound <= 0.05
        ref_levels, k = _sequence_reference(counts, eta, q, crit)
        np.testing.assert_array_equal(ref_levels, levels)
        assert ch.feasible == (k is not None)
        if k is None:
            continue
        assert ch.threshold == counts.thresholds[k]
        sp = u.selected_point_interval(counts, k, eta)
        assert ch.precision_low == q
        assert ch.precision_high == sp.precision_high
        assert (ch.recall_low, ch.recall_high) == (sp.recall_low, sp.recall_high)
        assert ch.recall == pytest.approx(counts.tpr[k], rel=1e-12)
        assert "fixed-sequence" in ch.method
    # the levels are fixed before the data: class size, eta and q only
    lev = decision.sequence_levels(30_000, 0.01, 0.2)
    j_max = np.floor(30_000 * (0.01 / 0.99) * 0.8 / 0.2)
    assert lev[-1] <= j_max and lev[0] <= 0.05 * j_max < lev[1]


def test_critical_counts_marginal_tails_by_scipy_quadrature():
    """Each critical count's marginal null tail E[P(Bin(P, k U_(j+1)) >= c_j)], integrated by
    scipy.integrate.quad against the Beta(j+1, N-j) density, is about the reported pointwise
    level gamma (the count one lower exceeds it)."""
    from scipy import integrate

    from mlflow_imbalance.stats.order_stats import sequence_critical_counts

    p, n, eta, q = 200, 20_000, 0.01, 0.293
    o = eta / (1 - eta)
    slope = q / (o * (1 - q))
    levels = decision.sequence_levels(n, eta, q)
    crit, gamma, _ = sequence_critical_counts(p, n, slope, tuple(int(v) for v in levels), 0.05)

    def tail(c, j):
        d = stats.beta(j + 1, n - j)
        f = lambda x: stats.binom.sf(c - 1, p, min(1.0, slope * x)) * d.pdf(x)  # noqa: E731
        return integrate.quad(f, d.ppf(1e-12), d.ppf(1 - 1e-12), limit=200)[0]

    for j, c in list(zip(levels, crit, strict=True))[::6]:
        assert tail(c, j) <= gamma * 1.1, (j, c)
        assert tail(c - 1, j) > gamma * 0.9, (j, c)


def test_optimal_stopping_bound_lies_between_crossing_and_maximum():
    """The backward-induction bound on the error probability, checked by simulation with
    uniform order statistics from sorted uniforms (not the chain used inside): at least the
    best first-crossing stopping rule's value, at most E[max_j g_j] (every stopping time's)."""
    from mlflow_imbalance.stats.order_stats import sequence_critical_counts

    p, n, eta, q = 60, 3_000, 0.01, 0.2
    o = eta / (1 - eta)
    slope = q / (o * (1 - q))
    levels = decision.sequence_levels(n, eta, q).astype(int)
    crit, _, bound = sequence_critical_counts(p, n, slope, tuple(int(v) for v in levels), 0.05)
    rng = np.random.default_rng(3)
    v = np.vstack([np.sort(rng.random((500, n)), axis=1)[:, levels] for _ in range(8)])
    g = stats.binom.sf(crit[None, :] - 1, p, np.minimum(1.0, slope * v))
    se = 3 / np.sqrt(v.shape[0])
    e_max = g.max(axis=1).mean()
    cross = 0.0
    for f0 in np.quantile(v, np.linspace(0.02, 0.98, 60)):
        hit = v >= f0
        first = np.argmax(hit, axis=1)
        cross = max(cross, np.where(hit.any(1), g[np.arange(len(v)), first], 0.0).mean())
    assert cross - se * np.sqrt(cross) <= bound <= e_max + se * np.sqrt(e_max)
    assert bound <= 0.05


def test_sequence_recall_beats_the_simultaneous_boxes(counts):
    """A clear case (300 / 30,000, mu = 2.2, eta = 0.01, q = 0.2): the new threshold catches more
    positives than the simultaneous-box construction it replaced for min_precision alone."""
    new = u.choose_threshold(counts, 0.01, min_precision=0.2)
    old = decision._choose_simultaneous(counts, 0.01, 0.2, None, None, 0.95)
    assert new.feasible and old.feasible
    assert new.recall > old.recall + 0.03, (new.recall, old.recall)


@pytest.mark.parametrize("tied", [False, True])
def test_sequence_failure_rate_smoke(tied):
    """Binormal mu = 2, 200 / 20,000, eta = 0.01, q = 0.131 and 0.293 (the continuous oracle's
    recall 0.6 and 0.35), continuous or rounded to 0.25, R = 40 each: true precision at the
    returned threshold (exact, scipy.stats.norm; a rounding level L cuts the latent at
    L - 0.125) below q in at most 10 % of test sets (nominal <= 5 %; measured 0.5-1.5 % by
    benchmarks/bench_threshold.py), and most sets feasible."""
    rng = np.random.default_rng(7)
    eta, mu = 0.01, 2.0
    o = eta / (1 - eta)
    y = np.r_[np.ones(200, bool), np.zeros(20_000, bool)]
    fails = feas = 0
    for _ in range(40):
        s = rng.normal(size=y.size) + mu * y
        c = RocCounts.from_scores(y, np.round(s * 4) / 4 if tied else s)
        for q in (0.131, 0.293):
            ch = u.choose_threshold(c, eta, min_precision=q)
            if ch.feasible:
                feas += 1
                cut = ch.threshold - 0.125 if tied else ch.threshold
                t, f = stats.norm.sf(cut - mu), stats.norm.sf(cut)
                fails += t * o / (t * o + f) < q
    assert fails <= 8 and feas >= 64, (fails, feas)


def test_recall_and_alert_budget_requirements(counts):
    ch = u.choose_threshold(counts, 1e-3, min_recall=0.8)
    assert ch.feasible and ch.recall_low >= 0.8
    # fewest alerts among the qualifying candidates: the next-higher candidate fails
    cand = u.candidate_thresholds(counts)
    k = int(np.flatnonzero(counts.thresholds == ch.threshold)[0])
    higher = cand[cand < k]
    if higher.size:
        m = ch.n_candidates
        lo, _ = _cp(int(counts.tp[higher[-1]]), counts.n_pos, 1 - 0.05 / (2 * m))
        assert lo < 0.8
    al = u.choose_threshold(counts, 1e-3, max_alerts_per=(20, 10_000))
    assert al.feasible and al.alerts_per["high"] <= 20 and al.alerts_per["per"] == 10_000
    expected = 10_000 * (1e-3 * al.recall + (1 - 1e-3) * al.fpr)
    assert al.alerts_per["expected"] == pytest.approx(expected, rel=1e-12)
    both = u.choose_threshold(counts, 1e-3, min_recall=0.5, max_alerts_per=(20, 10_000))
    assert not both.feasible or (both.recall_low >= 0.5 and both.alerts_per["high"] <= 20)


def test_infeasible_requirement_says_why(counts):
    ch = u.choose_threshold(counts, 1e-4, min_precision=0.999)
    assert not ch.feasible and np.isnan(ch.threshold)
    assert "no threshold meets" in ch.reason and ch.precision_low < 0.999
    with pytest.raises(ValueError, match="at least one"):
        u.choose_threshold(counts, 0.01)
    with pytest.raises(ValueError, match="min_precision"):
        u.choose_threshold(counts, 0.01, min_precision=1.5)
    with pytest.raises(ValueError, match="max_alerts_per"):
        u.choose_threshold(counts, 0.01, max_alerts_per=5)


def test_bounds_stay_valid_after_selection():
    """Coverage smoke test at P = 100, N = 10,000 (R = 150): the precision interval at the
    threshold chosen for min_precision, and the precision/recall intervals at the max-F1 point
    (``selected_point_interval``), contain the population values in >= 0.93 of test sets."""
    m = binormal_model(2.0)
    sets = draw_counts(np.random.default_rng(42), m, 100, 10_000, 150)
    eta = 0.01
    o = eta / (1 - eta)

    def truth_at(thr):
        j = int(np.flatnonzero(m["thr"] == thr)[0])
        t, f = m["T"][j], m["F"][j]
        return t * o / (t * o + f), t

    hits_choice, hits_sel, tried = [], [], 0
    for c in sets:
        ch = u.choose_threshold(c, eta, min_precision=0.2)
        if ch.feasible:
            tried += 1
            p, _ = truth_at(ch.threshold)
            hits_choice.append(ch.precision_low <= p <= ch.precision_high)
        _, thr = metrics.max_f1_point(c, eta)
        k = int(np.searchsorted(-c.thresholds, -float(thr)))
        sp = u.selected_point_interval(c, k, eta)
        p, t = truth_at(c.thresholds[k])
        hits_sel.append(
            sp.precision_low <= p <= sp.precision_high and sp.recall_low <= t <= sp.recall_high
        )
    assert tried >= 50
    assert np.mean(hits_choice) >= 0.93, np.mean(hits_choice)
    assert np.mean(hits_sel) >= 0.93, np.mean(hits_sel)


def test_selected_point_bounds_bracket_every_point_between_candidates(counts):
    """At every index: the Clopper-Pearson limits (scipy, Bonferroni level written out) of the
    nearest candidate at or above the point for the lower bounds, at or below it for the upper
    ones -- by index; ``CandidateLimits.bracket`` finds them by the counts (what the report's
    page does), and the limits passed in give the same bounds as computed afresh."""
    lim = u.candidate_limits(counts)
    cand = u.candidate_thresholds(counts)
    m = cand.size
    assert np.array_equal(lim.index, cand) and lim.confidence == 0.95
    level = 1 - 0.05 / (2 * m)
    eta = 1e-3
    o = eta / (1 - eta)
    rng = np.random.default_rng(3)
    ks = np.unique(
        np.r_[0, counts.n_thresholds - 1, cand, rng.integers(0, counts.n_thresholds, 60)]
    )
    for k in ks:
        i = cand[cand <= k].max() if np.any(cand <= k) else None
        j = cand[cand >= k].min() if np.any(cand >= k) else None
        tl = _cp(int(counts.tp[i]), counts.n_pos, level)[0] if i is not None else 0.0
        fl = _cp(int(counts.fp[i]), counts.n_neg, level)[0] if i is not None else 0.0
        th = _cp(int(counts.tp[j]), counts.n_pos, level)[1] if j is not None else 1.0
        fh = _cp(int(counts.fp[j]), counts.n_neg, level)[1] if j is not None else 1.0
        sp = u.selected_point_interval(counts, int(k), eta)
        assert sp.recall_low == pytest.approx(tl, rel=1e-9, abs=1e-15)
        assert sp.recall_high == pytest.approx(th, rel=1e-9, abs=1e-15)
        assert sp.precision_low == pytest.approx(tl * o / (tl * o + fh), rel=1e-9, abs=1e-15)
        assert sp.precision_high == pytest.approx(th * o / (th * o + fl), rel=1e-9, abs=1e-15)
        again = u.selected_point_interval(counts, int(k), eta, limits=lim)
        assert again == sp
    with pytest.raises(ValueError, match="confidence"):
        u.selected_point_interval(counts, 0, eta, confidence=0.9, limits=lim)


def test_chance_level_compares_the_precision_bound_with_random_flagging():
    """Random flagging (TPR = FPR, likelihood ratio 1) has precision η at η (Brabec eq. 8):
    a point is shown to beat it only when its precision lower bound exceeds η."""
    eta = 0.01
    o = eta / (1 - eta)
    random_precision = 0.3 * o / (0.3 * o + 0.3)  # TPR = FPR = 0.3
    assert random_precision == pytest.approx(eta, rel=1e-12)
    assert u.chance_level(0.3, 0.3, random_precision, eta) == "interval"
    assert u.chance_level(0.5, 0.01, 0.2, eta) == ""
    assert u.chance_level(0.5, 0.01, None, eta) == ""  # no bound: nothing is claimed
    # a point that catches no positive: the report gives no precision interval there, so the
    # card and the page make no claim either (the three views agree)
    assert u.chance_level(0.0, 0.01, 0.0, eta) == ""
    assert u.chance_level(1.0, 1.0, 0.5, eta) == "all"  # flags every case, whatever the bound


def test_report_operating_point_shows_the_choice_bounds(counts):
    """The report's selection-valid interval at the threshold ``choose_threshold`` certified is
    the choice's own: recall bounds and precision's upper bound identical; its lower precision
    bound is the simultaneous one, at most the certificate q the choice reports."""
    from mlflow_imbalance.report.analysis.intervals import _Uncertainty
    from mlflow_imbalance.report.build import _stable_seed
    from mlflow_imbalance.report.options import _options

    opts = _options([0.01], None, "x", 1.0, 1.0, 0.95, 60, 0, None)
    unc = _Uncertainty(opts, _stable_seed)
    ch = u.choose_threshold(counts, 0.01, min_precision=0.2)
    assert ch.feasible and ch.precision_low == 0.2
    (p_lo, p_hi), (r_lo, r_hi) = unc.selected_interval("a", counts, ch.threshold, 0.01)
    assert (r_lo, r_hi) == (ch.recall_low, ch.recall_high)
    assert p_hi == ch.precision_high
    assert p_lo <= ch.precision_low
