"""Benchmark: estimating the deployment prevalence from production scores (issue 33).

Simulated prior shift: a binormal model (negatives N(0, 1), positives N(2, 1), continuous
float64) and a heavily tied one (the same scores rounded to 0.1: about 80 distinct values).
Every replicate draws a fresh test set (so the test set's own sampling error is in the numbers)
and a fresh production batch of ``N`` cases with ``Binomial(N, eta)`` positives, and runs
:func:`mlflow_imbalance.stats.prevalence.estimate_prevalence` with each method.

Reported per cell and method: relative bias and RMSE (``/ eta``), coverage of the 95 %
interval, its mean width, and the share of estimates at 0; for the prior-shift check, the share
of batches it fails (p < :data:`~mlflow_imbalance.stats.prevalence.PRIOR_SHIFT_LEVEL`) under
pure prior shift (level) and under covariate shift (production scores of both classes shifted by
``delta`` standard deviations, or of the negatives only with ``delta`` written ``0.02n``:
power), and the share of batches whose interval misses the truth while the check passes
("silent": a wrong estimate nobody is warned about).

``--levels`` (the default with ``--drift``) also prints, per candidate level of the check, the
share of batches failing it and the silent share: the check's p-value is computed once per
batch, so every level is judged on the same batches. ``--drift`` runs the cells that decide the
level (binormal, 200 / 20,000 test examples; eta 1e-3 and 0.01; N 10^4 and 10^5; no drift, the
negatives' scores shifted by 0.02 and 0.05 SD, both classes' by 0.05 and 0.1 SD) and ends with
one line per level: the false-alarm rate over the prior-shift cells and the silent share over
the drift cells (docs/statistics.md, "The prior-shift check's level").

    .venv/bin/python benchmarks/bench_prevalence.py            # --quick (default), ~5 min
    .venv/bin/python benchmarks/bench_prevalence.py --full     # every cell, R = 200
    .venv/bin/python benchmarks/bench_prevalence.py --full --reps 1000 \
        --only binormal:200/20000:1e4:0.01                        # one cell, closer
    nice .venv/bin/python benchmarks/bench_prevalence.py --drift --reps 1000   # the level, 41 min
                                                         # on 2 workers at load average 12

Replicates run in a process pool of ``--workers`` (default 2) with one thread each.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.stats.prevalence import INTERVALS, PRIOR_SHIFT_LEVEL, estimate_prevalence

MU = 2.0
METHODS = ("mle", "acc", "median_sweep")
ALPHA = PRIOR_SHIFT_LEVEL
#: Candidate levels of the prior-shift check judged by ``--levels`` / ``--drift``.
LEVELS = (0.001, 0.01, 0.02, 0.05, 0.1)


def _scores(
    rng: np.random.Generator,
    n_pos: int,
    n_neg: int,
    model: str,
    shift: float = 0.0,
    negatives_only: bool = False,
):
    """Binormal scores; production drifts by ``shift`` SD (both classes, or the negatives)."""
    pos, neg = rng.normal(MU, 1.0, n_pos), rng.normal(0.0, 1.0, n_neg)
    s = np.concatenate([pos + (0.0 if negatives_only else shift), neg + shift])
    return np.round(s, 1) if model == "tied" else s


def _delta(delta: float | str) -> tuple[float, bool]:
    """``0.05`` -> (0.05, both classes); ``"0.02n"`` -> (0.02, the negatives only)."""
    text = str(delta)
    return float(text.rstrip("n")), text.endswith("n")


def _replicates(task: tuple) -> list[dict]:
    model, n_pos, n_neg, n_prod, eta, delta, seed, reps, n_boot, n_check, methods, how = task
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        y = np.zeros(n_pos + n_neg, dtype=bool)
        y[:n_pos] = True
        counts = RocCounts.from_scores(y, _scores(rng, n_pos, n_neg, model))
        k = int(rng.binomial(n_prod, eta))
        prod = ScoreCounts.from_scores(_scores(rng, k, n_prod - k, model, *_delta(delta)))
        row = {}
        for i, m in enumerate(methods):
            e = estimate_prevalence(
                counts,
                prod,
                method=m,
                n_boot=n_boot,
                interval=how,
                n_check=n_check if i == 0 else 0,
                seed=int(rng.integers(2**63)),
            )
            row[m] = (e.estimate, e.low, e.high, e.at_zero, e.test_share)
            if i == 0:
                row["p"] = e.prior_shift_p
        out.append(row)
    return out


def _run(cells: list[tuple], r: int, n_boot: int, n_check: int, workers: int, seed: int, how: str):
    """Run every cell with ``r`` replicates split into chunks across the pool."""
    chunk = max(1, r // (2 * workers)) if workers > 1 else r
    tasks, owner = [], []
    children = iter(np.random.SeedSequence(seed).spawn(len(cells) * (r // chunk + 1)))
    for ci, cell in enumerate(cells):
        *spec, methods = cell
        done = 0
        while done < r:
            b = min(chunk, r - done)
            child = int(next(children).generate_state(1)[0])
            tasks.append((*spec, child, b, n_boot, n_check, methods, how))
            owner.append(ci)
            done += b
    results: list[list[dict]] = [[] for _ in cells]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for ci, res in zip(owner, pool.map(_replicates, tasks), strict=True):
                results[ci].extend(res)
    else:
        for ci, t in zip(owner, tasks, strict=True):
            results[ci].extend(_replicates(t))
    return results


def _drifts(delta: float | str) -> bool:
    return _delta(delta)[0] != 0.0


def _misses(cell: tuple, rows: list[dict]) -> np.ndarray:
    """Per batch: does the first method's interval miss the true eta?"""
    eta, method = cell[4], cell[6][0]
    lo, hi = np.array([row[method][1:3] for row in rows], dtype=float).T
    return ~((lo <= eta) & (eta <= hi))


def _level_lines(cells: list[tuple], results: list[list[dict]], levels: tuple) -> list[str]:
    """Per cell and level: share failing the check, silent share; then the pooled rates."""
    lines = [
        "# per level of the prior-shift check: fail = share of batches with p < level; silent ="
        " share whose interval misses eta while p >= level (same batches at every level)",
        f"{'model':8s} {'test pos/neg':13s} {'N':>8s} {'eta':>7s} {'drift':>6s} "
        + " ".join(f"{f'fail@{a:g}':>10s} {f'silent@{a:g}':>12s}" for a in levels),
    ]
    pooled_p, pooled_drift = [], []
    for cell, rows in zip(cells, results, strict=True):
        model, n_pos, n_neg, n_prod, eta, delta, _ = cell
        p = np.array([row["p"] for row in rows], dtype=float)
        miss = _misses(cell, rows)
        cols = " ".join(f"{np.mean(p < a):10.1%} {np.mean(miss & ~(p < a)):12.1%}" for a in levels)
        lines.append(
            f"{model:8s} {n_pos:>5d}/{n_neg:<7d} {n_prod:>8.0e} {eta:>7.0e} {delta!s:>6s} {cols}"
        )
        (pooled_drift if _drifts(delta) else pooled_p).append((p, miss))
    for label, pool in (("prior shift", pooled_p), ("drift", pooled_drift)):
        if not pool:
            continue
        p = np.concatenate([v for v, _ in pool])
        miss = np.concatenate([m for _, m in pool])
        for a in levels:
            fail = np.mean(p < a)
            silent = np.mean(miss & ~(p < a))
            what = (
                f"false alarms {fail:6.2%}"
                if label == "prior shift"
                else f"fail {fail:6.1%}, silently wrong {silent:5.1%} (interval misses "
                f"{np.mean(miss):5.1%}; worst cell "
                f"{max(np.mean(m & ~(v < a)) for v, m in pool):5.1%})"
            )
            lines.append(
                f"# level {a:<6g} {label:11s} ({len(pool)} cells, {p.size} batches): {what}"
            )
    return lines


def _summarise(cell: tuple, rows: list[dict]) -> list[str]:
    model, n_pos, n_neg, n_prod, eta, delta, methods = cell
    lines = []
    fail = np.mean([row["p"] < ALPHA for row in rows])
    for m in methods:
        a = np.array([row[m][:3] for row in rows], dtype=float)
        est, lo, hi = a.T
        zero = np.mean([row[m][3] for row in rows])
        tshare = np.mean([row[m][4] for row in rows])
        bias = (est.mean() - eta) / eta
        rmse = np.sqrt(np.mean((est - eta) ** 2)) / eta
        cov = np.mean((lo <= eta) & (eta <= hi))
        width = np.mean(hi - lo)
        check = f"{fail:6.1%}" if m == methods[0] else "      "
        if m == methods[0]:  # a wrong interval the check lets through: the silent failures
            ok = np.array([row["p"] >= ALPHA for row in rows])
            check += f" {np.mean(ok & ~((lo <= eta) & (eta <= hi))):6.1%}"
        lines.append(
            f"{model:8s} {n_pos:>5d}/{n_neg:<7d} {n_prod:>8.0e} {eta:>7.0e} {delta!s:>5s} "
            f"{m:12s} {bias:+8.3f} {rmse:8.3f} {cov:6.1%} {width:9.3g} {zero:6.1%} "
            f"{tshare:6.2f} {check}"
        )
    return lines


def _only_cell(spec: str) -> tuple:
    """``MODEL:POS/NEG:N:ETA[:DELTA]`` -> a prior-shift cell with every method, or with DELTA a
    covariate-shift cell (the check's power; the default method only). ``DELTA`` shifts both
    classes' production scores by that many SD; with a trailing ``n`` (``0.02n``) only the
    negatives'."""
    try:
        model, test, n_prod, eta, *rest = spec.split(":")
        n_pos, n_neg = (int(v) for v in test.split("/"))
        delta: float | str = 0.0
        if rest:
            delta = rest[0] if rest[0].endswith("n") else float(rest[0])
        _delta(delta)
        if model not in ("binormal", "tied") or len(rest) > 1:
            raise ValueError(model if len(rest) <= 1 else "too many fields")
        methods = METHODS if not _drifts(delta) else ("mle",)
        return (model, n_pos, n_neg, int(float(n_prod)), float(eta), delta, methods)
    except ValueError as exc:
        raise SystemExit(f"--only {spec!r}: expected MODEL:POS/NEG:N:ETA[:DELTA] ({exc})") from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="few cells, R = 100 (default)")
    mode.add_argument("--full", action="store_true", help="every cell, R = 200")
    mode.add_argument(
        "--drift",
        action="store_true",
        help="the cells that decide the check's level (prior shift and drift at eta 1e-3 and "
        "0.01, N 1e4 and 1e5), the default method only, n_boot = n_check = 1000; implies --levels",
    )
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20250)
    ap.add_argument("--interval", choices=list(INTERVALS), default="auto")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="MODEL:POS/NEG:N:ETA[:DELTA]",
        help="run just this cell (repeatable), e.g. binormal:200/20000:1e4:0.01 (prior shift; "
        "with --reps to measure a cell's coverage more closely) or tied:1000/100000:1e5:0.01:0.1 "
        "(production shifted by 0.1 SD: the check's power)",
    )
    ap.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        help="only these methods (the first one listed in METHODS order carries the check; "
        "each replicate then draws fewer seeds, so the batches differ from an all-methods run)",
    )
    ap.add_argument(
        "--levels",
        nargs="*",
        type=float,
        default=None,
        help=f"also print, per level of the prior-shift check (default {LEVELS}), the share "
        "failing it and the silent share",
    )
    args = ap.parse_args()
    full = args.full
    r = args.reps or (200 if full or args.drift else 100)
    n_boot, n_check = (1000, 1000) if full or args.drift else (400, 400)
    levels = None if args.levels is None and not args.drift else tuple(args.levels or LEVELS)
    tests = [(200, 20_000), (1_000, 100_000)]
    if full:
        prods, etas = [10**4, 10**5, 10**6], [1e-4, 1e-3, 1e-2, 0.1, 0.3]
        models, deltas, shift_prods = ["binormal", "tied"], [0.05, 0.1, 0.2], [10**4, 10**5, 10**6]
    else:
        prods, etas = [10**4, 10**6], [1e-4, 1e-2, 0.3]
        models, deltas, shift_prods = ["binormal", "tied"], [0.1, 0.2], [10**4, 10**6]
    cells = []
    for model, (n_pos, n_neg) in itertools.product(models, tests):
        if model == "tied" and not full and n_pos != 200:
            continue
        for n_prod, eta in itertools.product(prods, etas):
            cells.append((model, n_pos, n_neg, n_prod, eta, 0.0, METHODS))
    for delta, n_prod in itertools.product(deltas, shift_prods):
        cells.append(("binormal", 200, 20_000, n_prod, 0.01, delta, ("mle",)))
    if args.drift:
        cells = [
            ("binormal", 200, 20_000, n_prod, eta, delta, ("mle",))
            for eta, n_prod, delta in itertools.product(
                (1e-3, 1e-2), (10**4, 10**5), (0.0, "0.02n", "0.05n", 0.05, 0.1)
            )
        ]
    if args.only:
        cells = [_only_cell(spec) for spec in args.only]
    if args.methods:
        cells = [(*cell[:-1], tuple(m for m in cell[-1] if m in args.methods)) for cell in cells]
        cells = [cell for cell in cells if cell[-1]]
    t0 = time.perf_counter()
    results = _run(cells, r, n_boot, n_check, args.workers, args.seed, args.interval)
    took = time.perf_counter() - t0
    print(
        f"# {'drift' if args.drift else 'full' if full else 'quick'}: R = {r} replicates a cell, "
        f"n_boot = {n_boot}, "
        f"n_check = {n_check}, {args.interval} interval, {len(cells)} cells, "
        f"{args.workers} workers, {took:.0f} s"
    )
    print(
        "# bias, rmse relative to eta; cover = 95 % interval coverage; width = mean width; "
        "zero = share at 0;\n# test = share of variance from the test set; delta = production "
        "drift in SD (both classes; 0.02n: the negatives only); "
        f"check = share of batches the prior-shift check fails (p < {ALPHA}); silent = share "
        "whose interval misses eta while the check passes"
    )
    print(
        f"{'model':8s} {'test pos/neg':13s} {'N':>8s} {'eta':>7s} {'delta':>5s} "
        f"{'method':12s} {'bias':>8s} {'rmse':>8s} {'cover':>6s} {'width':>9s} {'zero':>6s} "
        f"{'test':>6s} {'check':>6s} {'silent':>6s}"
    )
    level = []
    for cell, rows in zip(cells, results, strict=True):
        for line in _summarise(cell, rows):
            print(line)
        if not _drifts(cell[5]):
            level.extend(row["p"] < ALPHA for row in rows)
    if level:
        print(f"# check level over the prior-shift cells: {np.mean(level):.2%} of {len(level)}")
    if levels:
        print("\n".join(_level_lines(cells, results, levels)))


if __name__ == "__main__":
    main()
