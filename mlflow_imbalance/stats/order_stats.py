"""Exact calibration of the fixed-sequence precision test over the negatives' order statistics.

Issue 30. ``choose_threshold(min_precision=q)`` tests "precision at eta < q" at thresholds
picked by the false-positive count -- "score above the ``(j+1)``-th highest negative" -- a
function of the negatives alone. Its true FPR is at most ``U_(j+1)``, the ``(j+1)``-th
smallest of ``n`` independent uniforms (couple each negative with its upper-tail probability;
equality for continuous scores, ``<=`` under ties), and the joint law of ``(U_(j+1))_j`` is
known exactly, whatever the score distribution: a Markov chain, ``(U_(j'+1) - U_(j+1)) /
(1 - U_(j+1)) ~ Beta(j' - j, n - j')`` given ``U_(j+1)`` (the remaining uniforms are uniform
above it). So the test's error probability is bounded by an optimal-stopping value of that
chain, computed here by backward induction rather than by Bonferroni over the levels (the
previous construction's ``alpha / K`` FPR limits). Results are memoised per class sizes,
slope, levels and ``alpha``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

__all__ = ["sequence_critical_counts"]

#: Quadrature nodes (equal-probability midpoints of the Beta law of ``U_(j+1)``) for the
#: marginal tail that shapes the critical counts.
_NODES = 48


def _sf(c: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """``P(Bin(n, p) >= c)`` elementwise (1 for ``c <= 0``, 0 for ``c > n``)."""
    c = np.asarray(c, float)
    p = np.clip(np.asarray(p, float), 0.0, 1.0)
    out = special.bdtrc(np.clip(c - 1.0, 0.0, n), n, p)
    out = np.where(p >= 1.0, 1.0, out)
    return np.where(c <= 0, 1.0, np.where(c > n, 0.0, out))


#: Grid points per level of the backward induction of :func:`sequence_critical_counts`.
_GRID = 480


def _level_grids(n_neg: int, lev: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per level: a grid ``x`` of quantiles of ``U_(j+1)`` and each cell's marginal mass.

    Cells are ``(x[r-1], x[r]]`` (the first from 0); the mass above the last point is
    ``1 - sum``. The probabilities are logit-spaced, densest in the middle.
    """
    from scipy import stats

    z = 18.0 * np.sinh(np.linspace(-3.0, 3.0, _GRID)) / math.sinh(3.0)  # dense in the middle
    probs = 1.0 / (1.0 + np.exp(-z))
    xs, ws = [], []
    for j in lev:
        if j >= n_neg:
            xs.append(np.ones(1))
            ws.append(np.ones(1))
            continue
        x = np.unique(stats.beta.ppf(probs, j + 1.0, n_neg - j))
        cdf = special.betainc(j + 1.0, n_neg - j, x)
        xs.append(x)
        ws.append(np.diff(np.r_[0.0, cdf]))
    return xs, ws


def _transitions(n_neg: int, lev: np.ndarray, xs: list[np.ndarray]) -> list[np.ndarray]:
    """Transition matrices of the chain between consecutive levels, on their grids.

    ``M[r, l] = P(U_(j'+1) in cell l of level i+1 | U_(j+1) = x_i[r])`` (last column: above
    the grid). Given ``U_(j+1) = v``, ``(U_(j'+1) - v) / (1 - v) ~ Beta(j' - j, n - j')``.
    """
    out = []
    for i in range(lev.size - 1):
        j, j2 = float(lev[i]), float(lev[i + 1])
        x, y = xs[i], xs[i + 1]
        if j2 >= n_neg:  # the next level flags every negative: its single point, FPR <= 1
            m = np.zeros((x.size, 2))
            m[:, 0] = 1.0
            out.append(m)
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            arg = (y[None, :] - x[:, None]) / (1.0 - x[:, None])
        at_one = np.broadcast_to(x[:, None] >= 1.0, arg.shape)  # then the next is 1 as well
        arg = np.where(at_one, (y[None, :] >= 1.0).astype(float), np.clip(arg, 0.0, 1.0))
        cdf = special.betainc(j2 - j, n_neg - j2, arg)
        out.append(np.diff(np.c_[np.zeros(x.size), cdf, np.ones(x.size)], axis=1))
    return out


@functools.lru_cache(maxsize=256)
def sequence_critical_counts(
    n_pos: int, n_neg: int, slope: float, levels: tuple[int, ...], alpha: float
) -> tuple[np.ndarray, float, float]:
    """Critical TP counts ``c_j`` of the fixed-sequence precision test, and their level.

    Null at level ``j``: ``TPR(tau_j) < slope * FPR(tau_j)`` (``slope = q / (o (1 - q))``:
    precision at ``eta`` below ``q``), where ``tau_j`` is "score above the ``(j+1)``-th highest
    negative" (a function of the negatives). Given the negatives, the TP count at ``tau_j`` is
    ``Bin(n_pos, TPR(tau_j))``, so under the null ``P(T_j >= c_j | negatives) <= g_j(V_j)``
    with ``g_j(u) = P(Bin(n_pos, min(1, slope u)) >= c_j)``, increasing in ``u``, and
    ``FPR(tau_j) <= V_j = U_(j+1)``, a deterministic function of it. A fixed sequence errs only
    by rejecting its first true null ``j*``, the first level whose ``V_j`` lies in a set fixed
    by the score distributions: a stopping time of the Markov chain ``(V_j)``. So
    ``P(error) <= sup_tau E[g_tau(V_tau)]`` over stopping times, for every score
    distribution: the optimal-stopping (Snell envelope) value, computed by backward induction
    ``W_K = g_K``, ``W_i = max(g_i, E[W_(i+1) | V_i])`` on a grid of quantiles of each ``V_j``,
    rounded up cell by cell (``W_i`` is increasing in ``v``; the chain is stochastically
    monotone), so the value is an upper bound, not an estimate. ``c_j`` is the smallest count
    whose marginal null tail ``E[g_j(V_j)]`` is at most ``gamma`` (equal-probability
    quadrature), and ``gamma`` the largest for which the bound is at most ``alpha``.

    Returns:
        ``(c, gamma, bound)``: the critical counts (``n_pos + 1`` = unattainable), the
        pointwise level and the bound on the error probability.
    """
    from scipy import stats

    lev = np.asarray(levels, dtype=np.int64)
    k = lev.size
    inside = lev < n_neg  # levels >= n_neg: FPR <= 1 only
    nodes = np.ones((_NODES, k))
    mid = (np.arange(_NODES) + 0.5) / _NODES
    if inside.any():
        j = lev[inside].astype(float)
        nodes[:, inside] = stats.beta.ppf(mid[:, None], j + 1.0, n_neg - j)
    p_nodes = np.minimum(1.0, slope * nodes)
    xs, ws = _level_grids(n_neg, lev)
    trans = _transitions(n_neg, lev, xs)
    p_grid = [np.minimum(1.0, slope * x) for x in xs]

    def crit(gamma: float) -> np.ndarray:
        lo, hi = np.zeros(k), np.full(k, n_pos + 1.0)  # tail(lo) > gamma >= tail(hi)
        while np.any(hi - lo > 1):
            mid_c = np.floor((lo + hi) / 2)
            ok = _sf(mid_c[None, :], n_pos, p_nodes).mean(axis=0) <= gamma
            hi, lo = np.where(ok, mid_c, hi), np.where(ok, lo, mid_c)
        return hi

    def bound(c: np.ndarray) -> float:
        w = _sf(c[-1], n_pos, p_grid[-1])
        for i in range(k - 2, -1, -1):
            cont = trans[i] @ np.r_[w, 1.0]  # cell values at their upper ends; above: 1
            w = np.maximum(_sf(c[i], n_pos, p_grid[i]), cont)
        return float(ws[0] @ w + max(0.0, 1.0 - ws[0].sum()))

    lo_g, hi_g = math.log(alpha / (4.0 * k)), math.log(alpha)
    best = crit(math.exp(lo_g))
    best_g, best_b = math.exp(lo_g), bound(best)
    if best_b > alpha:  # even alpha / 4k is too much: Bonferroni over the levels holds
        c = crit(alpha / k)
        return c, alpha / k, alpha
    for _ in range(14):
        g = 0.5 * (lo_g + hi_g)
        c = crit(math.exp(g))
        b = bound(c)
        if b <= alpha:
            lo_g, best, best_g, best_b = g, c, math.exp(g), b
        else:
            hi_g = g
    return best, best_g, best_b
