"""Benchmark: deciding when η is only estimated (issue 37).

Two binormal models (negatives N(0, 1), positives N(1.5, 1) and N(2.5, 1)), each with its own
test set of 200 positives and 20,000 negatives, costs C_FP = 1, C_FN = 100. A production batch
of ``N`` cases with ``Binomial(N, eta)`` positives is scored by both models (one population);
in the drift cells the negatives' production scores are shifted by ``delta`` standard
deviations (a drift the prior-shift check may not see). Each run estimates the batch's η from
its own test counts (:func:`mlflow_imbalance.stats.prevalence.estimate_prevalence`, the
report's defaults), and three decisions are made from the test counts alone:

- **robust**: the report's verdict over its deciding range (the chosen estimate's interval;
  :func:`mlflow_imbalance.stats.robust.decide_over_range`: least worst-case regret, then the
  "beats flagging nothing" check). The alternatives measured: ``BENCH_RULE=minimax`` always
  takes the union of the runs' intervals, ``BENCH_RULE=union-if-drift`` the union where a
  check fails or the estimates disagree, ``BENCH_RULE=mean`` decides at the mean of the
  runs' estimates;
- **point**: the least-cost decision at the point estimate the report shows (the narrowest
  interval's estimate; else the runs' weighted common value; else the range's middle), with
  the same check at that η;
- **nothing**: always flag nothing.

Each decision's expected cost is computed at the true η under the *production* population
(drifted negatives included) and divided by the oracle's: the least cost of any run at any
threshold, or a trivial decision, on the population ROC curves there. Printed per cell: the
median and 90th percentile of the ratio for each decision, over all batches and, for the drift
cells, split by whether every run's prior-shift check passes.

    .venv/bin/python benchmarks/bench_decision.py --reps 1000     # the issue's R
    .venv/bin/python benchmarks/bench_decision.py --reps 100      # a quick look

Replicates run in a process pool of ``--workers`` (default 2) with one thread each.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from scipy import stats as sps

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats.prevalence import estimate_prevalence
from mlflow_imbalance.stats.robust import (
    common_prevalence_test,
    decide_over_range,
)

MUS = {"weak": 1.5, "strong": 2.5}
N_POS, N_NEG = 200, 20_000
CFP, CFN = 1.0, 100.0
CONF = 0.95
CELLS = [
    (n, eta, delta) for delta in (0.0, 0.02, 0.05) for eta in (0.01, 1e-3) for n in (10**4, 10**5)
]
#: thresholds for the oracle's population ROC (fine enough: the cost is flat at its minimum)
T_GRID = np.linspace(-4.0, 9.0, 26_001)


def _population_cost(mu: float, t: np.ndarray, eta: float, delta: float) -> np.ndarray:
    """Expected cost per case in production of "score >= t" for a model with positives N(mu)."""
    tpr = sps.norm.sf(t - mu)
    fpr = sps.norm.sf(t - delta)
    return eta * CFN * (1 - tpr) + (1 - eta) * CFP * fpr


def _oracle(eta: float, delta: float) -> float:
    best = min(eta * CFN, (1 - eta) * CFP)
    for mu in MUS.values():
        best = min(best, float(_population_cost(mu, T_GRID, eta, delta).min()))
    return best


def _cost_of(option, eta: float, delta: float) -> float:
    if option.kind == "nothing":
        return eta * CFN
    if option.kind == "everything":
        return (1 - eta) * CFP
    return float(_population_cost(MUS[option.run], np.array([option.threshold]), eta, delta)[0])


def _one(args: tuple[int, int]) -> list[tuple]:
    """One replicate: fresh test sets, then one production batch per cell."""
    seed, n_boot = args
    rng = np.random.default_rng(seed)
    counts = {}
    for name, mu in MUS.items():
        y = np.r_[np.ones(N_POS), np.zeros(N_NEG)]
        s = np.r_[rng.normal(mu, 1, N_POS), rng.normal(0, 1, N_NEG)]
        counts[name] = RocCounts.from_scores(y, s)
    out = []
    for ci, (n, eta, delta) in enumerate(CELLS):
        k = rng.binomial(n, eta)
        neg = rng.normal(delta, 1, n - k)
        ests = {}
        for name, mu in MUS.items():
            prod = np.r_[rng.normal(mu, 1, k), neg]
            ests[name] = estimate_prevalence(counts[name], prod, confidence=CONF, seed=seed)
        lo = min(float(e.low) for e in ests.values())
        hi = max(float(e.high) for e in ests.values())
        passes = all(e.prior_shift_p is None or e.prior_shift_p >= CHECK_LEVEL
                     for e in ests.values())  # fmt: skip
        # the report's point: the narrowest trusted interval's estimate, else the common value
        trusted = [e for e in ests.values() if e.prior_shift_p is None
                   or e.prior_shift_p >= CHECK_LEVEL] or list(ests.values())  # fmt: skip
        chosen = min(trusted, key=lambda e: float(e.high) - float(e.low))
        point = float(chosen.estimate)
        if not point > 0:
            cp = common_prevalence_test(
                [(float(e.estimate), float(e.low), float(e.high)) for e in ests.values()], CONF
            )
            point = float(cp.estimate or 0.0)
        if not point > 0 or not lo <= point <= hi:
            point = (lo + hi) / 2
        point = float(f"{point:.3g}")
        if not hi > 0:
            hi = point = 1e-6
        if RULE in ("report", "union-if-drift"):  # report/analysis/deployment.py: deciding_range
            clo, chi = float(chosen.low), float(chosen.high)
            cp = common_prevalence_test(
                [(float(e.estimate), float(e.low), float(e.high)) for e in ests.values()], CONF,
                level=1 - CONF,
            )  # fmt: skip
            if RULE == "union-if-drift" and (not passes or cp.disagree):
                clo, chi = lo, hi
            robust = decide_over_range(counts, clo, max(chi, 1e-6), CFP, CFN, n_boot=n_boot,
                                       seed=seed)  # fmt: skip
        elif RULE == "mean":
            m = float(np.mean([float(e.estimate) for e in ests.values()]))
            m = m if m > 0 else (lo + hi) / 2
            robust = decide_over_range(counts, m, m, CFP, CFN, n_boot=n_boot, seed=seed)
        else:
            robust = decide_over_range(counts, lo, hi, CFP, CFN, n_boot=n_boot, seed=seed)
        at_point = decide_over_range(counts, point, point, CFP, CFN, n_boot=n_boot, seed=seed)
        oracle = _oracle(eta, delta)
        out.append((
            ci,
            _cost_of(robust.option, eta, delta) / oracle,
            _cost_of(at_point.option, eta, delta) / oracle,
            eta * CFN / oracle,
            passes,
            lo <= eta <= hi,
        ))  # fmt: skip
    return out


#: the prior-shift check's level (the one the report and the estimate use)
try:
    from mlflow_imbalance.stats.prevalence import PRIOR_SHIFT_LEVEL as CHECK_LEVEL
except ImportError:  # pragma: no cover - before the level was one constant
    CHECK_LEVEL = 0.05


RULE = os.environ.get("BENCH_RULE", "report")


def _q(x: np.ndarray, q: float) -> str:
    return f"{np.quantile(x, q):6.3f}" if x.size else "     –"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--boot", type=int, default=1000, help="replicates of the cost check")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t0 = time.time()
    jobs = [(a.seed * 1_000_003 + r, a.boot) for r in range(a.reps)]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = [row for rep in pool.map(_one, jobs, chunksize=4) for row in rep]
    arr = np.array(rows, dtype=float)
    print(
        f"bench_decision: R = {a.reps} per cell, test sets {N_POS} / {N_NEG} per run, "
        f"mu = {MUS}, C_FP = {CFP:g}, C_FN = {CFN:g}, check level {CHECK_LEVEL:g}, "
        f"cost-check B = {a.boot}; {time.time() - t0:.0f} s"
    )
    print("ratio = the decision's expected cost at the true η in production / the oracle's")
    head = (
        f"{'N':>7} {'eta':>6} {'delta':>5} {'batches':>12} {'covers':>6} | "
        f"{'robust med':>10} {'p90':>6} | {'point med':>9} {'p90':>6} | {'nothing':>7}"
    )
    print(head)
    for ci, (n, eta, delta) in enumerate(CELLS):
        cell = arr[arr[:, 0] == ci]
        groups = [("all", cell)]
        if delta > 0:
            groups += [("check passes", cell[cell[:, 4] == 1]),
                       ("check fails", cell[cell[:, 4] == 0])]  # fmt: skip
        for label, g in groups:
            print(
                f"{n:>7} {eta:>6g} {delta:>5g} {label + f' {len(g)}':>12} "
                f"{(g[:, 5].mean() if len(g) else float('nan')):6.3f} | "
                f"{_q(g[:, 1], 0.5):>10} {_q(g[:, 1], 0.9)} | {_q(g[:, 2], 0.5):>9} "
                f"{_q(g[:, 2], 0.9)} | {_q(g[:, 3], 0.5):>7}"
            )


if __name__ == "__main__":
    main()
