"""Write the report HTML of fixed-seed scenarios, timestamp stripped, for byte-for-byte checks.

Used to check that a speed change leaves the page unchanged (issue 32): run it with the
package of the base commit and with the changed one, into two directories, and compare::

    git worktree add /tmp/base <base commit>
    PYTHONPATH=/tmp/base python benchmarks/check_report_identical.py /tmp/out-base
    PYTHONPATH=.         python benchmarks/check_report_identical.py /tmp/out-new
    cmp /tmp/out-base/bench.html /tmp/out-new/bench.html   # ... for every scenario

Scenarios (B = 1000 unless said): ``bench`` the benchmark's case at 14 runs x 2*10^5 scores
(10 leading runs drawn, 4 with table intervals only; costs 1 and 100, η 1e-4 and 1e-3);
``tied`` 6 runs of scores rounded to 2 decimals on one shared test set with the scores kept
(paired tests), no costs (AP decides), η 1e-3, 1e-2 and 0.05; ``production`` 3 runs with
production batches for one (the verdict also at the estimated η), costs 1 and 10, B = 300.
Prints each file's SHA-256 and the CPU seconds of each build.
"""

from __future__ import annotations

import hashlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import mlflow_imbalance as mi
from mlflow_imbalance.report.model import RunData
from mlflow_imbalance.report.render import strip_timestamp


def _bench() -> dict:
    rng = np.random.default_rng(0)
    n, n_runs = 200_000, 14
    y = rng.random(n) < 0.01
    runs = {}
    for i in range(n_runs):
        sep = 1.0 + 1.5 * i / (n_runs - 1)
        s = (rng.normal(size=n) * (1.0 + 0.03 * (i % 5)) + sep * y).astype(np.float32)
        runs[f"model-{i:03d}"] = mi.RocCounts.from_scores(y, s)
    return {"runs_or_counts": runs, "prevalences": [1e-4, 1e-3], "costs": {"fp": 1, "fn": 100}}


def _tied() -> dict:
    rng = np.random.default_rng(1)
    n = 50_000
    y = rng.random(n) < 0.02
    runs = []
    for i in range(6):
        s = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + (0.8 + 0.3 * i) * y))), 2)
        c = mi.RocCounts.from_scores(y, s)
        runs.append(RunData(name=f"tied-{i}", counts=c, digest="same-test-set", scores=(y, s)))
    return {"runs_or_counts": runs, "prevalences": [1e-3, 1e-2, 0.05]}


def _production() -> dict:
    rng = np.random.default_rng(2)
    n = 100_000
    y = rng.random(n) < 0.01
    runs = {}
    for i, sep in enumerate((1.2, 1.8, 2.4)):
        s = rng.normal(size=n) + sep * y
        runs[f"prod-{i}"] = mi.RocCounts.from_scores(y, s)
    batches = {}
    for label, eta in (("w1", 2e-3), ("w2", 5e-3)):
        m = 400_000
        pos = rng.random(m) < eta
        batches[label] = rng.normal(size=m) + 1.8 * pos
    return {
        "runs_or_counts": runs,
        "prevalences": [1e-3],
        "costs": {"fp": 1, "fn": 10},
        "production": {"prod-1": batches},
        "n_bootstrap": 300,
    }


SCENARIOS = {"bench": _bench, "tied": _tied, "production": _production}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "report-check")
    out.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    for name, make in SCENARIOS.items():
        kw = {"n_bootstrap": 1000, "seed": 0, "progress": False, **make()}
        c0 = time.process_time()
        rep = mi.build_report(**kw)
        cpu = time.process_time() - c0
        text = strip_timestamp(rep.html)
        (out / f"{name}.html").write_text(text, encoding="utf-8")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        print(f"{name:10s} {digest}  {len(text) / 1e6:.2f} MB  {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
