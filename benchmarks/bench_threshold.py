"""How wasteful is a certified threshold? ``choose_threshold(min_precision=q)`` against the oracle.

Issue 30. For each cell -- binormal scores (mu = 2, unit variances), continuous or rounded to a
grid of 0.25 (tied); P / N = 200 / 20,000 and 1,000 / 100,000 positives / negatives;
eta = 1e-2 and 1e-3 -- two precision requirements q are set from the population so that the
oracle's recall is about 0.6 and 0.35 (the oracle: the highest-recall threshold whose TRUE
precision at eta is at least q). R test sets are drawn per cell (the same sets serve both q's
and both constructions); each construction picks a threshold on the test set's counts, and its
true precision and recall are computed exactly: by ``scipy.stats.norm`` for continuous scores
(TPR = sf(t - mu), FPR = sf(t)), and for rounded scores from the rounding level's cell
(score >= level  <=>  latent >= level - 0.125).

Columns: ``fail`` = share of test sets whose returned threshold has true precision < q
(infeasible sets cannot fail), with its one-sided 95 % Clopper-Pearson upper bound ``ub``;
``feas`` = share of sets with a threshold returned; ``rec/or`` = median over ALL sets of the
true recall divided by the oracle's (an infeasible set counts 0), ``rec/or|f`` the median over
the feasible ones; ``prec/q`` = median true precision / q at the returned thresholds; ``cov`` =
share of the feasible sets whose reported precision bounds (``precision_low`` = the certificate
q for ``new``; the selection-valid limits of ``selected_point_interval`` otherwise) AND recall
bounds contain the truth. Constructions: ``new`` = the calibrated fixed-sequence test
(``choose_threshold``), ``old`` = simultaneous Bonferroni boxes
(``decision._choose_simultaneous``, the construction before issue 30).

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_threshold.py [R] [--only-new]
[--ratio r] [--start s] [--cells 0,1,...]`` (defaults R = 200; ``--ratio``/``--start``
override ``SEQUENCE_RATIO``/``SEQUENCE_START`` for tuning; ``--cells`` picks cells by index).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy import optimize, stats

from mlflow_imbalance import RocCounts
from mlflow_imbalance.stats import decision

MU = 2.0
STEP = 0.25  # rounding grid of the tied cells
TARGET_RECALLS = (0.6, 0.35)
CELLS = [
    (kind, p, n, eta)
    for kind in ("continuous", "tied")
    for p, n in ((200, 20_000), (1_000, 100_000))
    for eta in (1e-2, 1e-3)
]


def true_rates(kind: str, thr: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Population TPR and FPR of 'predict positive when score >= thr'."""
    thr = np.asarray(thr, float)
    if kind == "tied":
        # the lowest rounding level >= thr, and its latent cut (score >= L <=> latent >= L - STEP/2)
        thr = np.ceil(thr / STEP) * STEP - STEP / 2  # STEP = 2^-2: exact
    return stats.norm.sf(thr - MU), stats.norm.sf(thr)


def prec(t, f, eta):
    o = eta / (1 - eta)
    t, f = np.asarray(t, float), np.asarray(f, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(t * o + f > 0, t * o / (t * o + f), 0.0)


def oracle(kind: str, eta: float, q: float) -> float:
    """Highest recall among thresholds whose true precision is >= q."""
    if kind == "tied":
        levels = np.arange(-8, 14, STEP)
        t, f = true_rates(kind, levels)
        ok = prec(t, f, eta) >= q
        return float(t[ok].max()) if ok.any() else 0.0
    # continuous, equal variances: precision falls monotonically as the threshold falls
    g = lambda x: float(prec(*true_rates(kind, x), eta)) - q  # noqa: E731
    return float(stats.norm.sf(optimize.brentq(g, -6.0, 12.0, xtol=1e-12) - MU))


def requirement(kind: str, eta: float, rec: float) -> float:
    """q (3 significant digits) at which the continuous oracle's recall is ``rec``."""
    t = MU - stats.norm.ppf(rec)
    q = float(prec(*true_rates("continuous", t), eta))
    return float(f"{q:.3g}")


def draw(rng, kind, p, n) -> RocCounts:
    s = np.r_[rng.normal(MU, 1.0, p), rng.normal(0.0, 1.0, n)]
    if kind == "tied":
        s = np.round(s / STEP) * STEP
    y = np.r_[np.ones(p, bool), np.zeros(n, bool)]
    return RocCounts.from_scores(y, s)


def cp_upper(k: int, r: int, conf: float = 0.95) -> float:
    return 1.0 if k >= r else float(stats.beta.ppf(conf, k + 1, r - k))


def run(r_sets: int, methods: tuple[str, ...], cells: set[int] | None = None) -> None:
    print(
        f"R = {r_sets} test sets per cell; SEQUENCE_RATIO = {decision.SEQUENCE_RATIO}, "
        f"SEQUENCE_START = {decision.SEQUENCE_START}\n"
    )
    print(
        "| scores | P / N | eta | q | oracle rec | method | fail | ub | feas | rec/or "
        "| rec/or\\|f | prec/q | cov |"
    )
    print("|" + "---|" * 13)
    for ci, (kind, p, n, eta) in enumerate(CELLS):
        if cells is not None and ci not in cells:
            continue
        t0 = time.time()
        qs = [requirement(kind, eta, r) for r in TARGET_RECALLS]
        orc = [oracle(kind, eta, q) for q in qs]
        rng = np.random.default_rng(1000 + ci)
        res = {(q, m): [] for q in qs for m in methods}
        for _ in range(r_sets):
            c = draw(rng, kind, p, n)
            for q in qs:
                for m in methods:
                    if m == "new":
                        ch = decision.choose_threshold(c, eta, min_precision=q)
                    else:
                        ch = decision._choose_simultaneous(c, eta, q, None, None, 0.95)
                    if not ch.feasible:
                        res[q, m].append((False, np.nan, 0.0, False))
                        continue
                    t, f = true_rates(kind, ch.threshold)
                    pt = float(prec(t, f, eta))
                    cov = (
                        ch.precision_low <= pt <= ch.precision_high
                        and ch.recall_low <= float(t) <= ch.recall_high
                    )
                    res[q, m].append((True, pt, float(t), cov))
        for q, o_rec in zip(qs, orc, strict=True):
            for m in methods:
                arr = res[q, m]
                feas = np.array([a[0] for a in arr])
                pt = np.array([a[1] for a in arr])
                rec = np.array([a[2] for a in arr])
                cov = np.array([a[3] for a in arr])
                fails = int(np.sum(feas & (pt < q)))
                ratio = rec / o_rec
                print(
                    f"| {kind} | {p} / {n} | {eta:g} | {q:g} | {o_rec:.3f} | {m} | "
                    f"{fails / r_sets:.3f} | {cp_upper(fails, r_sets):.3f} | {feas.mean():.2f} | "
                    f"{np.median(ratio):.2f} | "
                    f"{np.median(ratio[feas]) if feas.any() else float('nan'):.2f} | "
                    f"{np.nanmedian(pt / q) if feas.any() else float('nan'):.2f} | "
                    f"{cov[feas].mean() if feas.any() else float('nan'):.3f} |"
                )
        print(f"<!-- cell {ci} took {time.time() - t0:.0f} s -->", file=sys.stderr)


if __name__ == "__main__":
    args = sys.argv[1:]
    methods: tuple[str, ...] = ("new", "old")
    if "--only-new" in args:
        args.remove("--only-new")
        methods = ("new",)
    for flag, attr in (("--ratio", "SEQUENCE_RATIO"), ("--start", "SEQUENCE_START")):
        if flag in args:
            i = args.index(flag)
            setattr(decision, attr, float(args[i + 1]))
            del args[i : i + 2]
    cells = None
    if "--cells" in args:
        i = args.index("--cells")
        cells = {int(v) for v in args[i + 1].split(",")}
        del args[i : i + 2]
    run(int(args[0]) if args else 200, methods, cells)
