"""Coverage study of the bootstrap bands (binormal model), printed as a table.

For each regime (mu, n_pos, n_neg) R test sets are drawn from the discretised binormal model of
``tests/test_band_coverage.py`` (same independent scipy reference) and each band is built with
B replicates. Columns: simultaneous coverage over the band's whole grid ("all") and over the
grid points the band marks ``supported`` ("supp."), pointwise coverage of AP at single
prevalences, and the share of grid points supported. "pr" is the default PR band (the ROC band
mapped through eq. 8, ``u.pr_band``): "pr@0.01" over the whole recall grid at eta = 0.01, "pr
joint" over the whole recall grid at all 12 prevalences at once (one ROC band per test set);
"pr sup-t" is the sup-t option (``construction="sup-t"``) at eta = 0.01. "<metric> mapped" is
``u.prevalence_band_from_roc`` from the same ROC band over all 12 prevalences (no support mask),
"mapped joint" all three metrics at once, "w@eta" its mean width there. Monte-Carlo s.d.
of a coverage near 0.95 is sqrt(0.95 * 0.05 / R).
Run: ``python benchmarks/bench_band_coverage.py [R] [B] [--mapped]`` (``--mapped``: only the
ROC band and the bands mapped from it, a few seconds).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_band_coverage import binormal_model, covers, draw_counts, true_curves

from mlflow_imbalance import uncertainty as u

REGIMES = [(2.0, 50, 1_000), (2.0, 200, 10_000), (2.0, 1_000, 100_000), (1.0, 200, 10_000)]
ETA = np.logspace(-4, np.log10(0.5), 12)
ETA_POINTS = (1e-4, 1e-3, 1e-2, 0.5)
PR_ETA = 0.01


def run(
    mu: float, n_pos: int, n_neg: int, r: int, b: int, mapped_only: bool = False
) -> dict[str, str]:
    m = binormal_model(mu)
    fgrid = np.logspace(np.log10(max(1e-6, 1 / n_neg)), 0, 100)
    rgrid = np.linspace(0.01, 1.0, 100)
    tr = true_curves(m, fgrid, ETA, rgrid, PR_ETA)
    pr_truth = {e: true_curves(m, fgrid[:1], ETA[:1], rgrid, e)["pr"] for e in ETA}
    sets = draw_counts(np.random.default_rng(n_neg + n_pos), m, n_pos, n_neg, r)
    hit: dict[str, list] = {}
    for i, c in enumerate(sets):
        rb = u.roc_band(c, fgrid, n_boot=b, seed=i)
        hit.setdefault("roc", []).append(covers(rb, tr["roc"]))
        mapped = {e: u.pr_band_from_roc(rb, e, rgrid) for e in ETA}
        pr_at = u.pr_band_from_roc(rb, PR_ETA, rgrid)
        hit.setdefault("pr@0.01", []).append(covers(pr_at, tr["pr"]))
        hit.setdefault("pr joint", []).append(all(covers(mapped[e], pr_truth[e]) for e in ETA))
        # AP / PR-AUC / max-F1 vs eta from the same ROC band (prevalence_band_from_roc)
        joint = True
        for key in ("ap", "pr_auc", "max_f1"):
            mb = u.prevalence_band_from_roc(rb, ETA, key)
            ok = covers(mb, tr[key])
            joint &= ok
            hit.setdefault(f"{key} mapped", []).append(ok)
            hit.setdefault(f"{key} mapped w@1e-4", []).append(mb.high[0] - mb.low[0])
            hit.setdefault(f"{key} mapped w@0.5", []).append(mb.high[-1] - mb.low[-1])
        hit.setdefault("mapped joint", []).append(joint)
        if mapped_only:
            continue
        band = u.pr_band(c, PR_ETA, n_boot=b, seed=i, construction="sup-t")
        sup = band.extra["supported"]
        hit.setdefault("pr sup-t all", []).append(covers(band, tr["pr"]))
        hit.setdefault("pr sup-t supp.", []).append(covers(band, tr["pr"], sup))
        hit.setdefault("pr sup-t %supp", []).append(sup.mean())
        for key in ("ap", "pr_auc", "max_f1"):
            band = u.prevalence_band(c, key, ETA, n_boot=b, seed=i)
            sup = band.extra["supported"]
            hit.setdefault(f"{key} all", []).append(covers(band, tr[key]))
            hit.setdefault(f"{key} supp.", []).append(covers(band, tr[key], sup))
            if key == "ap":
                hit.setdefault("ap %supp", []).append(sup.mean())
                ok = (band.low <= tr[key] + 1e-12) & (tr[key] <= band.high + 1e-12)
                for e in ETA_POINTS:
                    j = int(np.argmin(np.abs(np.log(ETA / e))))
                    hit.setdefault(f"ap@{e:g}", []).append(ok[j])
    return {k: f"{np.mean(v):.2f}" for k, v in hit.items()}


def main() -> None:
    only_mapped = "--mapped" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--mapped"]
    r = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    b = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    print(
        f"binormal coverage study: R={r} test sets x B={b} replicates, nominal 0.95, "
        f"MC s.d. {np.sqrt(0.95 * 0.05 / r):.3f}; AP/PR-AUC/max-F1 on 12 log-eta in "
        f"[1e-4, 0.5]; PR band at eta={PR_ETA}"
    )
    rows = []
    for mu, n_pos, n_neg in REGIMES:
        t0 = time.perf_counter()
        res = run(mu, n_pos, n_neg, r, b, only_mapped)
        rows.append((f"mu={mu:g} P={n_pos} N={n_neg}", res, time.perf_counter() - t0))
    cols = list(rows[0][1])
    print("| regime | " + " | ".join(cols) + " | s |")
    print("|---" * (len(cols) + 2) + "|")
    for name, res, dt in rows:
        print(f"| {name} | " + " | ".join(res[c] for c in cols) + f" | {dt:.0f} |")


if __name__ == "__main__":
    main()
