"""Benchmark: the logging hook on 10^6 scores vs mlflow.log_figure of one RocCurveDisplay.

Usage::

    python benchmarks/bench_logging.py [--n 1000000] [--repeats 3]

Both are measured in this process, into a temporary SQLite tracking store, after one warm-up
of each (imports, fonts, the store's schema). Printed: the best-of-``repeats`` wall and
process-CPU times of

- baseline: ``sklearn.metrics.RocCurveDisplay.from_predictions`` + ``mlflow.log_figure``;
- ``mlflow_imbalance.log_scores`` (counts, metrics, intervals, the three MLflow preview
  figures, card, raw scores, upload), split into counts / metrics / intervals / figures / card /
  scores / upload (wall and process CPU, best of the repeats per part), and the hook without
  the bootstrap intervals (``n_bootstrap=0``) and without figures;

and the ratios hook / baseline in wall and CPU time (issue 14's target: at most 1.5 in both).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

#: Issue 14: the hook at most 1.5x the baseline, in wall and in CPU time.
TARGET = 1.5


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.01).astype(np.int8)
    s = rng.normal(size=n).astype(np.float32) + 1.5 * y
    return y, s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mlflow
    from sklearn.metrics import RocCurveDisplay

    import mlflow_imbalance as mi
    from mlflow_imbalance import tracking

    y, s = _data(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")

        def baseline() -> tuple[float, float]:
            with mlflow.start_run():
                t0, c0 = time.perf_counter(), time.process_time()
                disp = RocCurveDisplay.from_predictions(y, s)
                mlflow.log_figure(disp.figure_, "roc.png")
                elapsed = time.perf_counter() - t0, time.process_time() - c0
                plt.close(disp.figure_)
            return elapsed

        def hook(**kw: object) -> tuple[float, float, dict[str, float], dict[str, float]]:
            with mlflow.start_run():
                t0, c0 = time.perf_counter(), time.process_time()
                mi.log_scores(y, s, prevalences=[1e-3, 1e-4], **kw)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            timings = tracking.last_timings
            return wall, cpu, dict(timings.parts), dict(timings.cpu)

        def hook_without_figures() -> tuple[float, float]:
            with mlflow.start_run():
                t0, c0 = time.perf_counter(), time.process_time()
                mi.log_scores(y, s, prevalences=[1e-3, 1e-4], log_figures=False)
                return time.perf_counter() - t0, time.process_time() - c0

        baseline()  # warm-up
        hook()
        bases = [baseline() for _ in range(args.repeats)]
        base, base_cpu = min(b[0] for b in bases), min(b[1] for b in bases)
        runs = [hook() for _ in range(args.repeats)]
        total, _, parts, _ = min(runs, key=lambda r: r[0])
        total_cpu = min(r[1] for r in runs)
        # per part, the best of the repeats (wall and CPU separately)
        parts = {k: min(r[2].get(k, 0.0) for r in runs) for k in parts}
        cpu_parts = {k: min(r[3].get(k, 0.0) for r in runs) for k in runs[0][3]}
        no_iv = [hook(n_bootstrap=0) for _ in range(args.repeats)]
        no_iv_wall, no_iv_cpu = min(r[0] for r in no_iv), min(r[1] for r in no_iv)
        bares = [hook_without_figures() for _ in range(args.repeats)]
        bare, bare_cpu = min(b[0] for b in bares), min(b[1] for b in bares)

    print(f"n = {args.n:,} scores, best of {args.repeats}")
    print("                                                 wall        CPU")
    print(f"baseline  RocCurveDisplay + mlflow.log_figure : {base:7.3f} s  {base_cpu:7.3f} s")
    print(f"hook      mlflow_imbalance.log_scores          : {total:7.3f} s  {total_cpu:7.3f} s")
    for key in ("counts", "metrics", "intervals", "figures", "card", "upload"):
        if key in parts:
            print(f"            {key:<9}: {parts[key]:7.3f} s  {cpu_parts.get(key, 0.0):7.3f} s")
    parallel = parts.pop("scores (in parallel)", None)
    if parallel is not None:
        print(
            f"            scores   : {parallel:7.3f} s            (in a thread during the figures)"
        )
    other = total - sum(parts.values())
    print(f"            {'other':<9}: {other:7.3f} s            (validation, digests, summary)")
    iv, iv_cpu = parts.get("intervals", 0.0), cpu_parts.get("intervals", 0.0)
    print(
        f"            intervals = {iv / base:.2f}x baseline wall, {iv_cpu / base_cpu:.2f}x CPU "
        "(DeLong ROC-AUC + 200-replicate count bootstrap of AP, PR-AUC, max-F1)"
    )
    print(
        f"hook      log_scores(n_bootstrap=0)        : {no_iv_wall:7.3f} s  {no_iv_cpu:7.3f} s  "
        f"({no_iv_wall / base:.2f}x wall, {no_iv_cpu / base_cpu:.2f}x CPU)"
    )
    print(
        f"hook      log_scores(log_figures=False)    : {bare:7.3f} s  {bare_cpu:7.3f} s  "
        f"({bare / base:.2f}x wall)"
    )
    ratio = total / base
    ratio_cpu = total_cpu / base_cpu
    verdict = "met" if max(ratio, ratio_cpu) <= TARGET else "NOT met"
    print(
        f"ratio hook / baseline: wall {ratio:.2f}, CPU {ratio_cpu:.2f}  "
        f"(target <= {TARGET} in both: {verdict})"
    )


if __name__ == "__main__":
    main()
