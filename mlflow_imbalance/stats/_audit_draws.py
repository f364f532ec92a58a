"""The audit's estimators and their intervals, vectorised over replicates (numpy only).

One kernel, :func:`audit_kernel`, serves both a single audit
(:func:`mlflow_imbalance.stats.audit.estimate_audit`, one row) and the benchmark (one row per
simulated audit). Inputs per row and stratum ``h``: the stratum's size ``N_h``, the labels in
``m_h``, the positives among them ``y_h``, and whether the stratum lies at or above the decision
threshold (``above``). Padding strata have ``N_h = 0`` and weigh nothing.

Estimators (stratified, Cochran 1977 §5.1-5.3 and §6.11; Särndal, Swensson & Wretman 1992
§3.7, §7.3): with ``p_h = y_h / m_h`` (labels missing at random within their stratum, so the
labelled cases are a simple random sample of it), positives ``Y = sum N_h p_h``,
``Y_A = sum_{h above} N_h p_h``, ``N_A = sum_{h above} N_h``:

- prevalence ``eta = Y / N`` (the stratified mean);
- precision at the threshold ``Y_A / N_A`` (``N_A`` is known exactly: a stratified mean over
  the flagged strata);
- recall ``Y_A / Y`` (the combined ratio estimator, Cochran §6.11);
- expected cost per case ``(C_FP (N_A - Y_A) + C_FN (Y - Y_A)) / N``.

Intervals: each stratum's positive share gets a beta distribution and the estimators are
evaluated on joint draws; the interval is the draws' equal-tailed quantiles. Four constructions
(``method=``), differing in the pseudo-counts each stratum's beta gets:

- ``"directional"`` (the default): one Clopper-Pearson pseudo-observation split over the strata
  by their share of the labels, ``c_h = m_h / m`` (over the flagged strata for precision),
  placed per limit where it pushes the quantity towards that limit: ``Beta(y + c_h, m - y)`` or
  ``Beta(y, m - y + c_h)`` (:func:`_directional`). One stratum: the Clopper-Pearson interval.
- ``"split"``: one Jeffreys pseudo-observation split the same way, ``Beta(y + a_h, m - y +
  a_h)``, ``a_h = m_h / (2 m)``, with Jeffreys' one-sided rule (Brown, Cai & DasGupta 2001)
  where a quantity's sample holds no positive (or no negative). One stratum: Jeffreys.
- ``"jeffreys"``: ``Beta(y + 1/2, m - y + 1/2)`` in every stratum.
- ``"conservative"``: ``Beta(y, m - y + 1)`` or ``Beta(y + 1, m - y)`` in every stratum,
  whichever moves the quantity towards the limit (the stochastic-ordering construction of
  stratified exact limits; cf. Fay & Feuer 1997 for weighted Poisson sums).

A stratum with no positives in its sample keeps a positive upper tail in each, which the
linearised (Taylor) variance, 0 there, does not. Draws are shrunk towards ``p_h`` by
``sqrt(1 - (m_h - 1) / (N_h - 1))`` (the finite population correction: a stratum labelled
in full is known exactly). Which one is the default, and why: docs/statistics.md, "Audits".
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["INTERVAL_METHODS", "audit_kernel"]

#: The interval constructions of the audit (``method=``).
INTERVAL_METHODS = ("jeffreys", "split", "directional", "conservative")
#: Fewest labelled positives for the ROC-shift test to compare TPRs (below: the FPR alone).
SHIFT_MIN_POSITIVES = 5
#: Rows of draws held in memory at once (rows x draws x strata float64 values).
_BLOCK_VALUES = 4_000_000


def _beta(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, d: int) -> np.ndarray:
    """``(R, D, H)`` draws of ``Beta(a, b)`` per ``(R, H)`` cell; ``a = 0`` gives 0, ``b = 0`` 1."""
    r, h = a.shape
    a_s = np.where(a > 0, a, 1.0)[:, None, :]
    b_s = np.where(b > 0, b, 1.0)[:, None, :]
    x = rng.gamma(np.broadcast_to(a_s, (r, d, h)))
    y = rng.gamma(np.broadcast_to(b_s, (r, d, h)))
    out = x / (x + y)
    out = np.where((a <= 0)[:, None, :], 0.0, out)
    return np.where((b <= 0)[:, None, :], 1.0, out)


def _fpc(draws: np.ndarray, p: np.ndarray, shrink: np.ndarray) -> np.ndarray:
    """Draws shrunk towards the estimate ``p`` by ``shrink`` per stratum (stays in [0, 1])."""
    return p[:, None, :] + shrink[:, None, :] * (draws - p[:, None, :])


def _stats(
    pd: np.ndarray, n_cases: np.ndarray, above: np.ndarray, cfp: float, cfn: float
) -> dict[str, np.ndarray]:
    """η, precision, recall, cost (per case), TPR and FPR from stratum shares ``pd`` (…, H)."""
    nn = n_cases[:, None, :] if pd.ndim == 3 else n_cases
    ab = above[:, None, :] if pd.ndim == 3 else above
    y = pd * nn
    y_all = y.sum(-1)
    y_a = np.where(ab, y, 0.0).sum(-1)
    n_tot = nn.sum(-1)
    n_a = np.where(ab, nn, 0.0).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = y_a / y_all
        fpr = (n_a - y_a) / (n_tot - y_all)
    return {
        "prevalence": y_all / n_tot,
        "precision": y_a / n_a,
        "recall": recall,
        "cost": (cfp * (n_a - y_a) + cfn * (y_all - y_a)) / n_tot,
        "fpr": fpr,
    }


#: For the directed limits: does the quantity grow with a flagged / an unflagged stratum's
#: positive share? (+1 grows, -1 falls, 0 independent.)
_DIRECTION = {
    "prevalence": (1, 1),
    "precision": (1, 0),
    "recall": (1, -1),
    "cost": (-1, 1),  # cfp (N_A - Y_A) + cfn (Y - Y_A): falls with Y_A, grows with Y_B
}


def audit_kernel(
    n_cases: Any,
    n_labels: Any,
    n_positive: Any,
    above: Any,
    *,
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    test_tp: Any = None,
    test_fp: Any = None,
    test_n_pos: Any = None,
    test_n_neg: Any = None,
    confidence: float = 0.95,
    n_draws: int = 4000,
    method: str = "directional",
    rng: np.random.Generator | None = None,
) -> dict[str, np.ndarray]:
    """Point estimates, intervals and the ROC-shift test for ``R`` audits at once.

    Args:
        n_cases: ``(R, H)`` stratum sizes (0: a padding stratum).
        n_labels: ``(R, H)`` labels in per stratum.
        n_positive: ``(R, H)`` positives among them.
        above: ``(R, H)`` bool, the stratum lies at or above the threshold.
        cost_fp: cost of one false positive.
        cost_fn: cost of one false negative.
        test_tp: ``(R,)`` test positives scoring at or above the threshold; None skips the
            ROC-shift test.
        test_fp: ``(R,)`` test negatives scoring at or above it.
        test_n_pos: test positives in all.
        test_n_neg: test negatives in all.
        confidence: the intervals' level.
        n_draws: joint draws per row.
        method: one of :data:`INTERVAL_METHODS` (``"directional"`` by default).
        rng: the random generator (seeded by the caller).

    Returns:
        ``{q: (R,), q + "_low": (R,), q + "_high": (R,)}`` for q in prevalence, precision,
        recall, cost, and ``roc_shift_p`` (R,) (NaN without test counts), ``tpr``, ``fpr``.
    """
    big_n = np.atleast_2d(np.asarray(n_cases, dtype=np.float64))
    m = np.atleast_2d(np.asarray(n_labels, dtype=np.float64))
    y = np.atleast_2d(np.asarray(n_positive, dtype=np.float64))
    ab = np.atleast_2d(np.asarray(above, dtype=bool))
    rng = np.random.default_rng() if rng is None else rng
    alpha = 1.0 - float(confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = np.where(m > 0, y / m, 0.5)  # no label yet: the Jeffreys prior's mean
        shrink = np.where(big_n > 1, np.sqrt(np.clip(1 - (m - 1) / (big_n - 1), 0, 1)), 0.0)
    shrink = np.where(m > 0, shrink, 1.0)
    prior = np.full_like(m, 0.5)
    prior_a = prior
    if method in ("split", "directional"):  # one Jeffreys pseudo-observation, split by labels
        m_tot = np.maximum(m.sum(1, keepdims=True), 1.0)
        prior = np.where(m > 0, 0.5 * m / m_tot, 0.5)
        m_a = np.maximum(np.where(ab, m, 0).sum(1, keepdims=True), 1.0)
        prior_a = np.where(m > 0, 0.5 * m / m_a, 0.5)  # precision: split over flagged strata
    point = _stats(p_hat, big_n, ab, cost_fp, cost_fn)
    point["tpr"] = point["recall"]
    out: dict[str, np.ndarray] = {k: v for k, v in point.items()}
    r, h = big_n.shape
    lows = {q: np.empty(r) for q in _DIRECTION}
    highs = {q: np.empty(r) for q in _DIRECTION}
    shift_p = np.full(r, np.nan)
    tests = None
    if test_tp is not None:
        tests = [
            np.broadcast_to(np.asarray(t, dtype=np.float64), (r,))
            for t in (test_tp, test_fp, test_n_pos, test_n_neg)
        ]
    block = max(1, _BLOCK_VALUES // max(1, n_draws * h))
    for s in range(0, r, block):
        sl = slice(s, min(r, s + block))
        nn, mm, yy, aa, pp, sh = big_n[sl], m[sl], y[sl], ab[sl], p_hat[sl], shrink[sl]
        a0 = prior[sl]
        jeff = _fpc(_beta(rng, yy + a0, mm - yy + a0, n_draws), pp, sh)
        jstats = _stats(jeff, nn, aa, cost_fp, cost_fn)
        if method == "conservative":
            lo_d = _fpc(_beta(rng, yy, mm - yy + 1, n_draws), pp, sh)
            hi_d = _fpc(_beta(rng, yy + 1, mm - yy, n_draws), pp, sh)
            for q, (d_a, d_b) in _DIRECTION.items():
                for which, store, qq in ((-1, lows, alpha / 2), (1, highs, 1 - alpha / 2)):
                    want_a, want_b = which * d_a, which * d_b
                    pick = np.where(
                        aa[:, None, :],
                        hi_d if want_a > 0 else (lo_d if want_a < 0 else jeff),
                        hi_d if want_b > 0 else (lo_d if want_b < 0 else jeff),
                    )
                    vals = _stats(pick, nn, aa, cost_fp, cost_fn)[q]
                    store[q][sl] = _quantile(vals, qq, fill=0.0 if which < 0 else 1.0)
        elif method == "directional":
            _directional(rng, nn, mm, yy, aa, pp, sh, n_draws, alpha, cost_fp, cost_fn,
                         lows, highs, sl)  # fmt: skip
        else:
            qstats = dict(jstats)
            if method == "split":
                a1 = prior_a[sl]
                flagged = _fpc(_beta(rng, yy + a1, mm - yy + a1, n_draws), pp, sh)
                qstats["precision"] = _stats(flagged, nn, aa, cost_fp, cost_fn)["precision"]
            for q in _DIRECTION:
                lo, hi = np.nanquantile(qstats[q], [alpha / 2, 1 - alpha / 2], axis=1)
                lows[q][sl], highs[q][sl] = lo, hi
        if tests is not None:
            shift_p[sl] = _shift_p(rng, jstats, *(t[sl] for t in tests), yy.sum(1))
    # one-sided where a quantity's sample holds no positives (or no negatives): Jeffreys' rule
    y_a = np.where(ab, y, 0).sum(1)
    y_b = np.where(ab, 0, y).sum(1)
    neg_a = np.where(ab, m - y, 0).sum(1)
    if method in ("jeffreys", "split"):
        lows["prevalence"] = np.where(y_a + y_b == 0, 0.0, lows["prevalence"])
        lows["precision"] = np.where(y_a == 0, 0.0, lows["precision"])
        highs["precision"] = np.where(neg_a == 0, 1.0, highs["precision"])
        lows["recall"] = np.where(y_a == 0, 0.0, lows["recall"])
        highs["recall"] = np.where(y_b == 0, 1.0, highs["recall"])
    for q in _DIRECTION:
        est = out[q]
        finite = np.isfinite(est)
        out[q + "_low"] = np.where(finite, np.minimum(lows[q], est), lows[q])
        out[q + "_high"] = np.where(finite, np.maximum(highs[q], est), highs[q])
    out["roc_shift_p"] = shift_p
    return out


def _quantile(vals: np.ndarray, q: float, fill: float) -> np.ndarray:
    """Row quantiles of draws; an undefined draw (recall with no positive) counts as ``fill``."""
    return np.quantile(np.where(np.isnan(vals), fill, vals), q, axis=1)


def _shift_p(
    rng: np.random.Generator,
    jstats: dict[str, np.ndarray],
    test_tp: np.ndarray,
    test_fp: np.ndarray,
    test_n_pos: np.ndarray,
    test_n_neg: np.ndarray,
    labelled_positives: np.ndarray,
) -> np.ndarray:
    """Do production's TPR and FPR at the threshold match the test set's? (Bonferroni of two).

    Each rate's difference (production's, from the audit's Jeffreys draws, minus the test
    set's, from its own Jeffreys posterior ``Beta(k + 1/2, n - k + 1/2)``: the test set's
    sampling error is in the null) gets a two-sided posterior tail p-value
    ``2 min(P(d > 0), P(d < 0))`` (draws counted with a +1, so never 0); the smaller of the two,
    doubled, is the p-value. With fewer than :data:`SHIFT_MIN_POSITIVES` labelled positives
    production's TPR is the prior's more than the labels' (a large unflagged stratum with no
    positive labelled still holds a Beta pseudo-count's worth of them), so the TPR half is left
    out and the FPR half alone, undoubled, is the p-value: with both halves the test rejected
    12-14 % of audits under pure prior shift at its 5 % level where 1-3 positives were labelled
    (weak model, η = 1e-3). Its level is measured by ``benchmarks/bench_audit.py``.
    """
    d = jstats["recall"].shape[1]
    out = []
    for rate, k, n in (("fpr", test_fp, test_n_neg), ("recall", test_tp, test_n_pos)):
        a = rng.gamma(np.broadcast_to((k + 0.5)[:, None], (k.size, d)))
        b = rng.gamma(np.broadcast_to((n - k + 0.5)[:, None], (k.size, d)))
        diff = jstats[rate] - a / (a + b)
        gt = (np.sum(diff > 0, axis=1) + 1) / (d + 1)
        lt = (np.sum(diff < 0, axis=1) + 1) / (d + 1)
        out.append(np.minimum(1.0, 2 * np.minimum(gt, lt)))
    both = np.minimum(1.0, 2 * np.minimum(out[0], out[1]))
    return np.where(labelled_positives >= SHIFT_MIN_POSITIVES, both, out[0])


def _directional(
    rng: np.random.Generator,
    nn: np.ndarray,
    mm: np.ndarray,
    yy: np.ndarray,
    aa: np.ndarray,
    pp: np.ndarray,
    sh: np.ndarray,
    n_draws: int,
    alpha: float,
    cost_fp: float,
    cost_fn: float,
    lows: dict[str, np.ndarray],
    highs: dict[str, np.ndarray],
    sl: slice,
) -> None:
    """Limits from one Clopper-Pearson pseudo-observation split over the strata, directed.

    For each limit, stratum ``h`` draws ``Beta(y + c_h, m - y)`` where raising its share moves
    the quantity towards the limit, ``Beta(y, m - y + c_h)`` where lowering it does, and
    ``Beta(y + c_h/2, m - y + c_h/2)`` where the quantity does not depend on it; ``c_h = m_h /
    m`` (the stratum's share of the labels; over the flagged strata for precision), so the
    pseudo-counts add up to one. With one stratum this is the Clopper-Pearson interval.
    """
    m_all = np.maximum(mm.sum(1, keepdims=True), 1.0)
    m_a = np.maximum(np.where(aa, mm, 0).sum(1, keepdims=True), 1.0)
    c_all = np.where(mm > 0, mm / m_all, 1.0)
    c_flag = np.where(mm > 0, mm / m_a, 1.0)
    cache: dict[tuple[int, int, bool], dict[str, np.ndarray]] = {}
    for q, (d_a, d_b) in _DIRECTION.items():
        c = c_flag if q == "precision" else c_all
        for which, store, qq in ((-1, lows, alpha / 2), (1, highs, 1 - alpha / 2)):
            want_a, want_b = which * d_a, which * d_b
            key = (want_a, want_b, q == "precision")
            if key not in cache:
                want = np.where(aa, want_a, want_b)
                a = yy + np.where(want > 0, c, np.where(want < 0, 0.0, c / 2))
                b = mm - yy + np.where(want < 0, c, np.where(want > 0, 0.0, c / 2))
                draws = _fpc(_beta(rng, a, b, n_draws), pp, sh)
                cache[key] = _stats(draws, nn, aa, cost_fp, cost_fn)
            store[q][sl] = _quantile(cache[key][q], qq, fill=0.0 if which < 0 else 1.0)
