"""Benchmark roc_counts_from_spark against collecting the columns to the driver.

Run: ``python benchmarks/bench_spark.py [--sizes 1000000 10000000] [--max-points 1000]
[--grid 10000]``.

For each size, a DataFrame of ``n`` rows is generated *in Spark* (``spark.range`` and ``rand``;
scores on a grid of ``--grid`` values, 10^4 by default as for scores rounded to four decimals, so
ties are common; prevalence about 1%) and cached in the executors, so both methods read the
same cached data. In this one process it times

* ``roc_counts_from_spark(df, "y", "s")`` (exact; the driver receives only compressed counts),
* the same with ``max_points`` (bounded-error mode, quantile buckets, no shuffle of rows),
* the baseline: ``df.select("y", "s").toPandas()`` then ``RocCounts.from_scores`` (Arrow
  transfer enabled, the fastest way to collect),

and reports wall time, the peak *extra* resident memory of the driver's Python process during the
call (``VmRSS`` sampled every 5 ms from ``/proc/self/status``; the JVM driver is a separate
process and not included), the rows the driver received, and the ratios against the baseline.
The Spark methods run first at every size, so the baseline's larger allocations cannot hide
theirs; one warm-up of each method on a tiny table comes first. Spark runs ``local[2]`` with
3 GiB driver memory; numbers depend on the machine's load.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any


def rss_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def measure(fn: Callable[[], Any]) -> tuple[Any, float, int]:
    """(result, seconds, peak extra RSS in bytes of this Python process during ``fn``)."""
    gc.collect()
    base = rss_bytes()
    peak = base
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, rss_bytes())
            time.sleep(0.005)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    stop.set()
    th.join()
    peak = max(peak, rss_bytes())
    return out, dt, peak - base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--max-points", type=int, default=1000)
    ap.add_argument(
        "--grid", type=int, default=10_000, help="scores take values k / grid (default 10^4)"
    )
    ap.add_argument("--skip-baseline-above", type=int, default=10**8)
    args = ap.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warnings.simplefilter("ignore", FutureWarning)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from mlflow_imbalance import RocCounts
    from mlflow_imbalance.integrations.spark import _roc_counts_from_spark

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("bench_spark")
        .config("spark.driver.memory", "3g")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    # Warm-up (JVM code paths, Python workers) on a tiny table, so the first size is not charged.
    tiny = spark.range(1000).select((F.col("id") % 7).alias("s"), (F.col("id") % 3 == 0).alias("y"))
    _roc_counts_from_spark(tiny, "y", "s")
    _roc_counts_from_spark(tiny, "y", "s", max_points=4)
    tiny.toPandas()

    header = (
        f"{'rows':>10} {'method':<26} {'time s':>8} {'x base':>7} "
        f"{'peak MiB':>9} {'x base':>7} {'rows to driver':>15} {'points':>8}"
    )
    print(header)
    print("-" * len(header))
    results: dict[int, dict[str, tuple[float, int]]] = {}
    for n in args.sizes:
        df = (
            spark.range(n, numPartitions=8)
            .select(
                (F.floor(F.rand(seed=1) * args.grid) / args.grid).alias("s"),
                F.rand(seed=2).alias("u"),
            )
            .select("s", (F.col("u") < 0.002 + 0.04 * F.pow(F.col("s"), 4)).alias("y"))
            .cache()
        )
        df.count()
        rows: dict[str, tuple[float, int]] = {}

        (exact, info), t_exact, m_exact = measure(
            lambda df=df: _roc_counts_from_spark(df, "y", "s")
        )
        rows["spark exact"] = (t_exact, m_exact)
        line_exact = (exact, info)
        (bounded, binfo), t_b, m_b = measure(
            lambda df=df: _roc_counts_from_spark(df, "y", "s", max_points=args.max_points)
        )
        rows[f"spark max_points={args.max_points}"] = (t_b, m_b)

        baseline = None
        if n <= args.skip_baseline_above:

            def collect(df=df) -> RocCounts:
                pdf = df.select("y", "s").toPandas()
                return RocCounts.from_scores(pdf["y"].to_numpy(), pdf["s"].to_numpy())

            baseline, t_base, m_base = measure(collect)
            rows["toPandas + from_scores"] = (t_base, m_base)
            assert baseline == exact, "Spark counts differ from the in-memory counts"
        results[n] = rows
        t0, m0 = rows.get("toPandas + from_scores", (float("nan"), 0))
        received = {
            "spark exact": (line_exact[1]["rows_received"], exact.n_thresholds),
            f"spark max_points={args.max_points}": (binfo["rows_received"], bounded.n_thresholds),
            "toPandas + from_scores": (n, baseline.n_thresholds if baseline else 0),
        }
        for name, (t, m) in rows.items():
            r_t = t / t0 if t0 == t0 else float("nan")
            r_m = m / m0 if m0 else float("nan")
            got, pts = received[name]
            print(
                f"{n:>10} {name:<26} {t:>8.2f} {r_t:>7.2f} {m / 2**20:>9.1f} {r_m:>7.3f} "
                f"{got:>15,} {pts:>8,}"
            )
        print(
            f"{'':>10} bounded mode: max_tpr_error={bounded.max_tpr_error:.2e}, "
            f"max_fpr_error={bounded.max_fpr_error:.2e}; exact == baseline: "
            f"{baseline == exact if baseline else 'not run'}"
        )
        df.unpersist()
    if len(results) > 1:
        lo, hi = min(results), max(results)
        for name in results[lo]:
            if name in results[hi]:
                m_lo, m_hi = results[lo][name][1], results[hi][name][1]
                print(
                    f"driver peak growth {lo:,} -> {hi:,} rows ({hi / lo:.0f}x), {name}: "
                    f"{m_lo / 2**20:.1f} -> {m_hi / 2**20:.1f} MiB"
                )
    spark.stop()


if __name__ == "__main__":
    main()
