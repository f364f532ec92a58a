"""Benchmark: the report for 20 runs of 10^6 scores, 200 prevalences, 1000 bootstrap replicates.

Target (issue 5): renders in under 20 s and the HTML is under 5 MB. Prints the wall and CPU
time (``time.process_time``) per stage (load, metrics, bootstrap, ranking, figures, render)
and, as a baseline measured in this same process, the time to build one run's counts from its
10^6 scores and to save one matplotlib figure of one ROC curve.

Run:  python benchmarks/bench_report.py [--runs 20] [--n 1000000] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mlflow_imbalance as mi
from mlflow_imbalance import plots


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--output", default="bench_report.html")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    y = rng.random(args.n) < 0.01
    counts = {}
    t0 = time.perf_counter()
    for i in range(args.runs):
        sep = 1.0 + 0.08 * i
        s = rng.normal(size=args.n) * (1.0 + 0.03 * (i % 5)) + sep * y
        counts[f"model-{i:02d}"] = mi.RocCounts.from_scores(y, s)
    t_counts = (time.perf_counter() - t0) / args.runs
    t0 = time.perf_counter()
    ax = plots.plot_roc({"one": counts["model-00"]})
    plots.figure_to_svg(ax.figure)
    t_fig = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    rep = mi.build_report(
        counts,
        prevalences=[1e-4, 1e-3],
        n_bootstrap=args.bootstrap,
        seed=0,
        output=args.output,
    )
    total = time.perf_counter() - t0
    cpu_total = time.process_time() - c0
    size = len(rep.html.encode("utf-8"))
    k = np.mean([c.n_thresholds for c in counts.values()])
    print(
        f"{args.runs} runs x {args.n:,} scores (mean {k:,.0f} thresholds), 200 prevalences, "
        f"B={args.bootstrap}"
    )
    print(f"  {'stage':10s} {'wall':>9s} {'CPU':>9s}")
    for stage, sec in rep.timings.items():
        print(f"  {stage:10s} {sec:7.2f} s {rep.cpu_timings.get(stage, float('nan')):7.2f} s")
    print(
        f"  {'total':10s} {total:7.2f} s {cpu_total:7.2f} s  "
        f"(target < 20 s: {'OK' if total < 20 else 'MISSED'}; CPU time is the fair measure on a "
        "shared machine)"
    )
    print(f"  HTML       {size / 1e6:7.2f} MB (target < 5 MB: {'OK' if size < 5e6 else 'MISSED'})")
    print(
        f"baseline: counts of one run {t_counts:.2f} s -> report = {total / t_counts:.1f}x; "
        f"one ROC figure {t_fig:.2f} s -> report = {total / t_fig:.1f}x"
    )


if __name__ == "__main__":
    main()
