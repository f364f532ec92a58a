"""Benchmark: the AP-vs-prevalence band vs one raw-data bootstrap replicate.

1000 replicates of the AP band over 200 prevalences for counts built from 10^7 scores with
10^4 positives (target: under 10 s), printed beside the cost of ONE raw-data replicate
(resample 10^7 (score, label) pairs within each class + RocCounts.from_scores) as the baseline
measured in the same process, and the default (Bayesian count bootstrap) band's cost relative
to the earlier count-bootstrap band (``construction="bootstrap"``).
Run: ``python benchmarks/bench_uncertainty.py``.
"""

from __future__ import annotations

import time

import numpy as np

from mlflow_imbalance import RocCounts
from mlflow_imbalance import uncertainty as u


def main() -> None:
    rng = np.random.default_rng(0)
    n, n_pos = 10**7, 10**4
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    s = rng.normal(size=n).astype(np.float64)
    s[:n_pos] += 3.0
    t0 = time.perf_counter()
    c = RocCounts.from_scores(y, s)
    t_counts = time.perf_counter() - t0
    print(f"counts: {c.n_thresholds} thresholds from {n:.0e} scores in {t_counts:.2f} s")

    eta = u.default_prevalence_grid(200)
    t0 = time.perf_counter()
    band = u.prevalence_band(c, "ap", eta, n_boot=1000, seed=0)
    t_band = time.perf_counter() - t0

    # baseline: one raw-data bootstrap replicate
    pos_idx = np.flatnonzero(y)
    neg_idx = np.flatnonzero(~y)
    t0 = time.perf_counter()
    idx = np.concatenate([rng.choice(pos_idx, pos_idx.size), rng.choice(neg_idx, neg_idx.size)])
    RocCounts.from_scores(y[idx], s[idx])
    t_raw = time.perf_counter() - t0

    print(
        f"AP band, B=1000, M=200 ({band.method}, {band.label}): {t_band:.2f} s "
        f"[target < 10 s: {'OK' if t_band < 10 else 'MISSED'}]"
    )
    print(f"one raw-data bootstrap replicate (resample 1e7 pairs + from_scores): {t_raw:.2f} s")
    print(
        f"=> 1000 count-bootstrap replicates cost {t_band / t_raw:.1f} raw replicates "
        f"(raw bootstrap of 1000 would take ~{1000 * t_raw:.0f} s, "
        f"{1000 * t_raw / t_band:.0f}x longer)"
    )
    print(
        f"AP grid deposit step {band.extra.get('ap_grid_step')}, max abs AP error "
        f"{band.extra.get('ap_max_abs_error', 0):.1e}"
    )
    # the default band (Bayesian count bootstrap) against the earlier count-bootstrap band,
    # measured here in the same process
    t0 = time.perf_counter()
    u.prevalence_band(c, "ap", eta, n_boot=1000, seed=0, construction="bootstrap")
    t_old = time.perf_counter() - t0
    print(
        f"earlier count-bootstrap sup-t band (construction='bootstrap'): {t_old:.2f} s; "
        f"default Bayesian band / earlier = {t_band / t_old:.2f}"
    )


if __name__ == "__main__":
    main()
