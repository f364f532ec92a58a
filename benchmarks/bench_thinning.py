"""How much does thinning the counts before the bootstrap change the bands? (BOOTSTRAP_POINTS)

The logging hook and the report bootstrap counts thinned by
:func:`mlflow_imbalance.uncertainty.thin_for_bootstrap` (``points`` bins per axis); the bands are
then shifted onto the exact estimate. Thinning makes the bootstrap cheaper; it must not change
the band's width beyond the Monte Carlo error of the bootstrap itself.

For ``--runs`` runs of ``--n`` scores (binormal, prevalence 0.01, separations 1 to 2.5: the
report benchmark's runs), and ``--seeds`` bootstrap seeds each, it builds the AP, PR-AUC and
max-F1 bands (``uncertainty.prevalence_band``, B = 1000) on the full counts (the baseline,
same process) and on counts thinned to each ``--points``, and prints the mean and s.d. of the
width ratio thinned / full at each prevalence, with the CPU time of each band.

Run: ``nice -n 10 python benchmarks/bench_thinning.py`` (about 4 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mlflow_imbalance as mi
from mlflow_imbalance import uncertainty as u

METRICS = ("ap", "pr_auc", "max_f1")
GRID = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.5])


def make_runs(n_runs: int, n: int, seed: int = 0) -> list[mi.RocCounts]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.01
    out = []
    for i in range(n_runs):
        s = rng.normal(size=n) + (1.0 + 1.5 * i / max(n_runs - 1, 1)) * y
        out.append(mi.RocCounts.from_scores(y, s.astype(np.float32)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--points", type=int, nargs="+", default=[40, 80, 200])
    args = ap.parse_args()
    runs = make_runs(args.runs, args.n)
    ratios = {p: {m: [] for m in METRICS} for p in args.points}
    cpu = {p: [] for p in [None, *args.points]}
    sizes = {p: [] for p in args.points}
    for c in runs:
        for seed in range(args.seeds):
            c0 = time.process_time()
            full = {m: u.prevalence_band(c, m, GRID, n_boot=1000, seed=seed) for m in METRICS}
            cpu[None].append(time.process_time() - c0)
            for pts in args.points:
                th = u.thin_for_bootstrap(c, pts).counts
                sizes[pts].append(th.n_thresholds)
                c0 = time.process_time()
                for m in METRICS:
                    b = u.prevalence_band(th, m, GRID, n_boot=1000, seed=seed + 100)
                    ratios[pts][m].append((b.high - b.low) / (full[m].high - full[m].low))
                cpu[pts].append(time.process_time() - c0)
    k = np.mean([c.n_thresholds for c in runs])
    print(
        f"{args.runs} runs x {args.n:,} scores ({k:.0f} thresholds), {args.seeds} seeds, B = 1000"
    )
    print(f"baseline (full counts): {np.mean(cpu[None]):.2f} s CPU for the three bands\n")
    print(
        "| points/axis | thresholds | CPU s | metric | width ratio thinned/full at η = "
        + ", ".join(f"{e:g}" for e in GRID)
        + " (mean ± s.d.) |"
    )
    print("|---|---|---|---|---|")
    for pts in args.points:
        for m in METRICS:
            r = np.asarray(ratios[pts][m])
            cells = ", ".join(f"{a:.2f}±{s:.2f}" for a, s in zip(r.mean(0), r.std(0), strict=True))
            print(
                f"| {pts} | {np.mean(sizes[pts]):.0f} | {np.mean(cpu[pts]):.2f} | {m} | {cells} |"
            )


if __name__ == "__main__":
    main()
