"""Audit plans under drift: coverage, widths, efficiency against simple random sampling (issue 39).

For η ∈ {1e-3, 1e-2, 0.1}, budgets 100 / 300 / 1,000, a strong (binormal μ = 2.5) and a weak
(μ = 1) model and four production conditions (pure prior shift; negatives' scores shifted up
0.1 SD; positives' scores shifted down 0.2 SD; both), R replicates per cell. Each replicate
draws a test set (200 positives, 20,000 negatives) and a production batch (10^5 cases) as counts
on a fine score grid (0.01 SD wide bins: exact counts of the binned scores), plans the audit with
the package's own ``design_audit`` (prevalence guess: its default, the label-free estimate),
draws each stratum's labelled positives (hypergeometric: sampling without replacement) and
estimates with the package's kernel, vectorised over replicates.

The threshold of a cell is the max-F1 threshold of the true test curves at the cell's η (a
fixed score per model and η). Printed per cell: expected positives in the sample; the share the
threshold flags; coverage of the η, precision and recall intervals (of the batch's true values)
and their median widths; the variance of the η estimate over the replicates against simple
random sampling of the same budget (``p(1-p)/n`` with the finite population correction, at each
batch's true share); the median half-width of precision; how often ``roc_shift_p`` falls below
its level (the level under pure prior shift, power otherwise); and the label-free estimate's
coverage (``estimate_prevalence``, default interval, check off; on the first ``--lf-reps``
replicates of each (model, condition, η): it does not depend on the budget).

Usage: ``nice python benchmarks/bench_audit.py --reps 1000`` (``--reps 100`` for a quick run;
``--method`` picks the interval construction, ``--draws`` the joint draws per replicate;
``--precision-weight W`` the allocation's weight on precision, for the trade-off between
precision's half-width and η's variance and coverage that docs/statistics.md measures;
``--focus precision`` plans every audit with ``design_audit(..., focus="precision")``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np
from scipy import stats

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats._audit_draws import audit_kernel
from mlflow_imbalance.stats.audit import (
    DEFAULT_METHOD,
    FOCUSES,
    ROC_SHIFT_ALPHA,
    _guess_prevalence,
    design_audit,
)
from mlflow_imbalance.stats.prevalence import estimate_prevalence

ETAS = (1e-3, 1e-2, 0.1)
BUDGETS = (100, 300, 1000)
MODELS = {"strong": 2.5, "weak": 1.0}
CONDITIONS = {  # (shift of the negatives, shift of the positives), in SD
    "prior": (0.0, 0.0),
    "neg+0.1": (0.1, 0.0),
    "pos-0.2": (0.0, -0.2),
    "both": (0.1, -0.2),
}
N_TEST_POS, N_TEST_NEG, N_PROD = 200, 20_000, 100_000
EDGES = np.arange(-6.0, 9.0 + 1e-9, 0.01)  # bin lower edges; a score in [e_i, e_i+1) gets e_i


def _probs(mu: float) -> np.ndarray:
    cdf = stats.norm.cdf(np.concatenate([EDGES, [np.inf]]), loc=mu)
    cdf[0] = 0.0
    return np.diff(cdf)


def _threshold(mu: float, eta: float) -> float:
    """Max-F1 threshold of the true curves at η (a grid edge)."""
    tpr = stats.norm.sf(EDGES, loc=mu)
    fpr = stats.norm.sf(EDGES)
    prec = eta * tpr / (eta * tpr + (1 - eta) * fpr)
    f1 = 2 * prec * tpr / (prec + tpr)
    return float(EDGES[int(np.nanargmax(f1))])


def _roc(pos: np.ndarray, neg: np.ndarray) -> RocCounts:
    keep = (pos + neg) > 0
    thr = EDGES[keep][::-1]
    return RocCounts(thr, np.cumsum(pos[keep][::-1]), np.cumsum(neg[keep][::-1]),
                     int(pos.sum()), int(neg.sum()))  # fmt: skip


def _score_counts(n_bin: np.ndarray) -> ScoreCounts:
    keep = n_bin > 0
    return ScoreCounts(EDGES[keep][::-1], np.cumsum(n_bin[keep][::-1]), int(n_bin.sum()))


def run_cell(mu, shifts, eta, budgets, reps, rng, method, draws, lf_reps, focus="balanced"):
    thr = _threshold(mu, eta)
    p_tp, p_tn = _probs(mu), _probs(0.0)
    p_pp, p_pn = _probs(mu + shifts[1]), _probs(shifts[0])
    test_pos = rng.multinomial(N_TEST_POS, p_tp, size=reps)
    test_neg = rng.multinomial(N_TEST_NEG, p_tn, size=reps)
    n_pos = rng.binomial(N_PROD, eta, size=reps)
    prod_pos = rng.multinomial(n_pos, p_pp)
    prod_neg = rng.multinomial(N_PROD - n_pos, p_pn)
    flag_bin = EDGES >= thr
    truth_eta = n_pos / N_PROD
    y_a = prod_pos[:, flag_bin].sum(1)
    n_a = (prod_pos + prod_neg)[:, flag_bin].sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        truth_p = y_a / n_a
        truth_r = y_a / n_pos
    k_thr = int(np.searchsorted(EDGES, thr))
    t_tp = test_pos[:, k_thr:].sum(1)
    t_fp = test_neg[:, k_thr:].sum(1)
    rows = []
    # each replicate's run and batch once: counts, the design's prevalence guess (the default of
    # design_audit, computed once for the three budgets) and the label-free estimate
    runs, guesses, lf_cover = [], [], []
    for r in range(reps):
        c = _roc(test_pos[r], test_neg[r])
        sc = _score_counts(prod_pos[r] + prod_neg[r])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            guesses.append(_guess_prevalence(c, sc))
            if r < lf_reps:
                e = estimate_prevalence(c, sc, n_check=0, seed=r)
                lf_cover.append(e.low <= truth_eta[r] <= e.high)
        runs.append((c, sc))
    lf = float(np.mean(lf_cover)) if lf_cover else math.nan
    for budget in budgets:
        hmax = 10
        big_n = np.zeros((reps, hmax))
        alloc = np.zeros((reps, hmax), dtype=np.int64)
        y_pop = np.zeros((reps, hmax), dtype=np.int64)
        above = np.zeros((reps, hmax), dtype=bool)
        for r in range(reps):  # the design per replicate (the package's own planner)
            d = design_audit(*runs[r], budget, thr, prevalence=guesses[r], focus=focus)
            st = d.stratum_of(EDGES)
            h = d.n_strata
            big_n[r, :h] = d.n_cases
            alloc[r, :h] = d.allocation
            above[r, :h] = d.above
            y_pop[r, :h] = np.bincount(st, weights=prod_pos[r], minlength=h)
        n_neg_pop = big_n.astype(np.int64) - y_pop
        pad = big_n == 0  # padding strata: one dummy case, never labelled
        y = rng.hypergeometric(y_pop, np.where(pad, 1, n_neg_pop), np.where(pad, 1, alloc))
        y = np.where(pad, 0, y)
        out = audit_kernel(big_n, alloc, y, above, test_tp=t_tp, test_fp=t_fp,
                           test_n_pos=N_TEST_POS, test_n_neg=N_TEST_NEG, n_draws=draws,
                           method=method, rng=rng)  # fmt: skip

        def cov(q, truth, out=out):
            ok = np.isfinite(truth)
            return float(
                np.mean((out[q + "_low"][ok] <= truth[ok]) & (truth[ok] <= out[q + "_high"][ok]))
            )

        def width(q, out=out):
            return float(np.nanmedian(out[q + "_high"] - out[q + "_low"]))

        srs = np.mean(truth_eta * (1 - truth_eta) / budget * (N_PROD - budget) / (N_PROD - 1))
        var_ratio = float(np.mean((out["prevalence"] - truth_eta) ** 2) / srs)
        exp_pos = float(
            np.mean(np.sum(np.where(big_n > 0, alloc * y_pop / np.maximum(big_n, 1), 0), 1))
        )
        rows.append(dict(
            budget=budget, exp_pos=exp_pos, flag=float(np.mean(n_a / N_PROD)),
            cov_eta=cov("prevalence", truth_eta), cov_p=cov("precision", truth_p),
            cov_r=cov("recall", truth_r), w_eta=width("prevalence"), w_p=width("precision"),
            w_r=width("recall"), var_ratio=var_ratio,
            hw_p=float(np.nanmedian(out["precision_high"] - out["precision_low"]) / 2),
            shift=float(np.mean(out["roc_shift_p"] < ROC_SHIFT_ALPHA)),
        ))  # fmt: skip
    return rows, lf


def _weights() -> tuple:
    import mlflow_imbalance.stats.audit as audit_module

    return audit_module.WEIGHTS


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--method", default=DEFAULT_METHOD)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--lf-reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", default="strong,weak")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--etas", default=",".join(map(str, ETAS)))
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--focus", default="balanced", choices=FOCUSES)
    ap.add_argument(
        "--precision-weight", type=float, default=None,
        help="the allocation's weight on precision's design effect (default: the package's)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.precision_weight is not None:  # the trade-off of docs/statistics.md, "Audits"
        import mlflow_imbalance.stats.audit as audit_module

        w = audit_module.WEIGHTS
        audit_module.WEIGHTS = (w[0], float(args.precision_weight), w[2])
    rng = np.random.default_rng(args.seed)
    print(
        f"bench_audit: R = {args.reps} per cell, interval {args.method!r}, {args.draws} joint "
        f"draws; test {N_TEST_POS}/{N_TEST_NEG}, batch {N_PROD:,}; label-free coverage on "
        f"{args.lf_reps} replicates per (model, condition, η); shift level {ROC_SHIFT_ALPHA}; "
        f"allocation weights (η, precision, recall) {_weights()}; focus {args.focus!r}"
    )
    head = (
        "model  cond     eta    n     E[pos] flag%  cov_eta cov_P cov_R  w_eta    w_P    "
        "w_R    var/SRS hw_P   shift  lf_cov"
    )
    print(head)
    t0 = time.time()
    worst = {}
    for model in args.models.split(","):
        for cond in args.conditions.split(","):
            for eta in (float(e) for e in args.etas.split(",")):
                budgets = [int(b) for b in args.budgets.split(",")]
                rows, lf = run_cell(MODELS[model], CONDITIONS[cond], eta, budgets, args.reps,
                                    rng, args.method, args.draws, args.lf_reps,
                                    args.focus)  # fmt: skip
                for r in rows:
                    print(f"{model:6s} {cond:8s} {eta:<6g} {r['budget']:<5d} {r['exp_pos']:6.1f} "
                          f"{100 * r['flag']:5.2f}  {r['cov_eta']:.3f}   {r['cov_p']:.3f} "
                          f"{r['cov_r']:.3f}  {r['w_eta']:.2e} {r['w_p']:.3f}  {r['w_r']:.3f}  "
                          f"{r['var_ratio']:.2f}    {r['hw_p']:.3f}  {r['shift']:.3f}  "
                          f"{lf:.2f}", flush=True)  # fmt: skip
                    key = "ge5" if r["exp_pos"] >= 5 else "lt5"
                    for q in ("cov_eta", "cov_p", "cov_r"):
                        worst[key] = min(worst.get(key, 1.0), r[q])
    print(
        f"lowest coverage where E[pos] >= 5: {worst.get('ge5', math.nan):.3f}; elsewhere: "
        f"{worst.get('lt5', math.nan):.3f}; {time.time() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
