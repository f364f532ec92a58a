"""Coverage study of every band and interval of issue 15, printed as markdown tables.

Models (``tests/test_band_coverage.py``): the discretised binormal (mu = 2, 120 score levels)
and a skewed, heavily tied model (25 score levels, ROC-AUC 0.984). Regimes P / N = 200 /
20,000, 1,000 / 100,000 and 100 / 1,000,000. For each, R test sets are drawn (multinomial per
class) and every construction is built with B replicates. The truth is the population value of
the discretised model (scipy quadrature for PR-AUC), independent of the package.

Columns: "sim" = simultaneous coverage over 12 log-spaced eta in [1e-4, 0.5] (+- its Monte
Carlo s.e. sqrt(c (1 - c) / R)); "pw min" = the lowest pointwise coverage over the grid and
"@1e-4" the pointwise coverage at eta = 1e-4; "w/spread" = mean band width divided by the true
2.5-97.5% spread of the estimator (over SPREAD_SETS = 3,000 further test sets, so that the
ratio is not the noise of a spread from R sets), min-max over the grid. Bands:
"new" = ``prevalence_band`` (Bayesian count bootstrap, the default), "old" =
``construction="bootstrap"`` (count-bootstrap sup-t), "mapped" = ``prevalence_band_from_roc``.
Second table: headline intervals (pointwise at the test prevalence, 1e-3, 1e-4), the ROC band
(whole grid and its first point FPR = 1/N), precision and recall at the max-F1 threshold chosen
on the same data (pointwise Koopman/Clopper-Pearson as before vs ``selected_point_interval``),
and ``choose_threshold`` (min recall 0.5 at eta = 1e-3: both bounds at the chosen threshold).

Run: ``nice -n 10 python benchmarks/bench_band_coverage.py [R] [B]`` (default 300 x 400; about
15 minutes on 2 cores); ``... --flips [R] [B]``: the flip-significance study (:func:`flips`,
two nulls and two real crossings, both side tests; about 25 minutes at 200 x 200);
``... --roc [R] [B]``: the ROC band alone (:func:`roc_only`); ``... --report-flips [R]``: the
level and power of the report's unpaired flip test (:func:`report_flips`); ``... --verdict [R]
[B]``: the level of the report's unpaired test of a difference at one eta (:func:`verdict_level`);
``... --verdict-paired [R] [B]``: the public ``paired_metric_test``, paired and unpaired, with
and without its floor (:func:`verdict_level_paired`);
``... --headline MODEL P N [R]``: the headline intervals alone at many test sets
(:func:`headline_only`; MODEL ``binormal`` or ``skewed``); ``... --verdict-report [R] [B]``:
the level of the report's verdict for runs on shared examples (:func:`verdict_level_report`);
``... --cost [R] [B]``: the tables' lowest-expected-cost interval (:func:`cost_coverage`);
``... --regimes [R] [B] [SEED]``: the regime study (:func:`regime_study`; SEED 0 = the docs'
test sets, other = fresh ones);
``... --logit-ap MODEL P N [R]``: Boyd et al.'s logit interval for AP and PR-AUC against the
default, screened and not adopted (:func:`logit_interval_screen`).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_band_coverage import (
    binormal_model,
    continuous_binormal,
    draw_counts,
    mixture_model,
    skewed_model,
    true_curves,
)
from test_flip_power import flip_scores, true_ap_difference

from mlflow_imbalance import RocCounts, metrics
from mlflow_imbalance import ranking as u_rank
from mlflow_imbalance import report as u_report
from mlflow_imbalance import uncertainty as u

REGIMES = [(200, 20_000), (1_000, 100_000), (100, 1_000_000)]
ETA = np.logspace(-4, np.log10(0.5), 12)
METRICS = ("ap", "pr_auc", "max_f1")
#: Test sets (estimates only) from which the estimator's true 2.5-97.5 % spread is taken.
SPREAD_SETS = 3000


def _se(p: float, r: int) -> float:
    return float(np.sqrt(max(p * (1 - p), 1e-12) / r))


def _fmt(p: float, r: int) -> str:
    return f"{p:.3f} ± {_se(p, r):.3f}"


def run(model: dict, n_pos: int, n_neg: int, r: int, b: int) -> tuple[dict, dict]:
    tr = true_curves(model, np.array([1.0 / n_neg]), ETA, np.array([0.5]), 0.01)
    sets = draw_counts(np.random.default_rng(n_pos + n_neg), model, n_pos, n_neg, r)
    test_eta = n_pos / (n_pos + n_neg)
    h_eta = np.array([test_eta, 1e-3, 1e-4])
    h_truth = true_curves(model, np.array([0.5]), h_eta, np.array([0.5]), 0.5)
    fgrid = np.logspace(np.log10(1.0 / n_neg), 0, 100)
    roc_truth = true_curves(model, fgrid, ETA[:1], np.array([0.5]), 0.5)["roc"]
    ok: dict[str, list] = {}
    width: dict[str, list] = {}
    o_t = test_eta / (1 - test_eta)

    def at(thr: float) -> tuple[float, float]:
        j = int(np.flatnonzero(model["thr"] == thr)[0])
        return float(model["T"][j]), float(model["F"][j])

    for i, c in enumerate(sets):
        rb = u.roc_band(c, fgrid, n_boot=b, seed=i)
        okr = (rb.low <= roc_truth + 1e-12) & (roc_truth <= rb.high + 1e-12)
        ok.setdefault("roc band", []).append(okr)
        for key in METRICS:
            for name, band in (
                ("new", u.prevalence_band(c, key, ETA, n_boot=b, seed=i)),
                ("old", u.prevalence_band(c, key, ETA, n_boot=b, seed=i, construction="bootstrap")),
                ("mapped", u.prevalence_band_from_roc(rb, ETA, key)),
            ):
                hit = (band.low <= tr[key] + 1e-12) & (tr[key] <= band.high + 1e-12)
                ok.setdefault(f"{key} {name}", []).append(hit)
                width.setdefault(f"{key} {name}", []).append(band.high - band.low)
        for cons in ("bayesian", "bootstrap"):
            h = u.headline_intervals(c, h_eta, n_boot=200, seed=i, construction=cons)
            for key in METRICS:
                lo, hi = h.intervals[key][:, 0], h.intervals[key][:, 1]
                hit = (lo <= h_truth[key] + 1e-12) & (h_truth[key] <= hi + 1e-12)
                ok.setdefault(f"headline {key} {cons}", []).append(hit)
        # the max-F1 point at the test prevalence, chosen on this test set
        _, thr = metrics.max_f1_point(c, test_eta)
        k = int(np.searchsorted(-c.thresholds, -float(thr)))
        t, f = at(float(c.thresholds[k]))
        p_true = t * o_t / (t * o_t + f)
        plo, phi = u.precision_interval(int(c.tp[k]), int(c.fp[k]), n_pos, n_neg, test_eta)
        rlo, rhi = u.rate_interval(int(c.tp[k]), n_pos)
        ok.setdefault("max-F1 point, pointwise", []).append(
            np.array([plo <= p_true <= phi and rlo <= t <= rhi])
        )
        sp = u.selected_point_interval(c, k, test_eta)
        ok.setdefault("max-F1 point, selection-valid", []).append(
            np.array(
                [
                    sp.precision_low <= p_true <= sp.precision_high
                    and sp.recall_low <= t <= sp.recall_high
                ]
            )
        )
        ch = u.choose_threshold(c, 1e-3, min_recall=0.5)
        if ch.feasible:
            t, f = at(ch.threshold)
            o3 = 1e-3 / (1 - 1e-3)
            p3 = t * o3 / (t * o3 + f)
            ok.setdefault("choose_threshold", []).append(
                np.array(
                    [
                        ch.recall_low <= t <= ch.recall_high
                        and ch.precision_low <= p3 <= ch.precision_high
                    ]
                )
            )
    # the estimator's true spread from SPREAD_SETS further test sets (estimates only): the
    # spread over the R sets alone is itself 0.86-1.14x the true one at R = 300
    ref = draw_counts(np.random.default_rng(7 * (n_pos + n_neg)), model, n_pos, n_neg, SPREAD_SETS)
    ref_est = {key: np.array([u.metric_values(c, key, ETA) for c in ref]) for key in METRICS}
    bands = {}
    for key in METRICS:
        spread = np.diff(np.percentile(ref_est[key], [2.5, 97.5], axis=0), axis=0)[0]
        for name in ("new", "old", "mapped"):
            h = np.asarray(ok[f"{key} {name}"])
            w = np.mean(width[f"{key} {name}"], axis=0) / np.maximum(spread, 1e-12)
            bands[f"{key} {name}"] = (
                _fmt(h.all(axis=1).mean(), r),
                f"{h.mean(axis=0).min():.3f}",
                f"{h[:, 0].mean():.3f}",
                f"{w.min():.2f}-{w.max():.2f}",
            )
    other = {}
    for key in METRICS:
        for cons in ("bayesian", "bootstrap"):
            h = np.asarray(ok[f"headline {key} {cons}"]).mean(axis=0)
            other[f"headline {key} ({cons})"] = " / ".join(f"{x:.3f}" for x in h)
    h = np.asarray(ok["roc band"])
    other["roc band (whole grid / at FPR=1/N)"] = (
        f"{_fmt(h.all(axis=1).mean(), r)} / {h[:, 0].mean():.3f}"
    )
    for name in ("max-F1 point, pointwise", "max-F1 point, selection-valid", "choose_threshold"):
        v = np.asarray(ok.get(name, [np.array([np.nan])]))[:, 0]
        other[name] = f"{_fmt(float(np.mean(v)), v.size)} (n={v.size})"
    return bands, other


def flips(r: int, b: int) -> None:
    """Flip significance: false alarms under two nulls, power for two real AP crossings.

    P = 200, N = 20,000, the same examples scored by both runs (noise correlation 0.5 within
    each class); A's positives ~ N(2, 1), negatives N(0, 1) for both runs. Scenarios for B
    (``flip_scores`` and the quadrature ``true_ap_difference`` in tests/test_flip_power.py):

    * null (identical models): B = A's model; D = 0 everywhere.
    * least favourable null: B = A's model except that its positives scoring below 1.5 are
      pushed down by 2. B's ranking agrees with A's at the top, so D(eta) >= 0 everywhere,
      ~ 0 at low eta (<= 1.4e-3 for eta <= 1e-3) and clearly positive at high eta (0.11 at
      eta = 0.25): a false flip needs "D < 0 shown" where D ~ 0 -- the intersection-union
      test's least favourable configuration (exactly 0 on an interval is impossible for AP,
      which is analytic in eta, so this approaches it).
    * crossing: B's positives ~ N(1.6, 1.8) (B better at the top): D from -0.08 (eta ~ 1e-3)
      to +0.13 (eta ~ 0.1-0.3), one flip at eta = 1.3e-2.
    * mid-range crossing: B ranks like A at the top, better in the middle, worse at the
      bottom: D ~ 0 at eta = 1e-4, -0.07 around 1e-2 to 3e-2, one flip at 0.13, +0.06 at 0.5.

    Columns: "two-sided band" = the earliest rule (the whole-grid two-sided band excludes 0 on
    both sides of a flip), "points" = ``significant`` with the default ``side_test="points"``
    (sup-t on every side), "windows" = ``side_test="windows"``; same replicates (same seed)
    for all three. "flip found" = share of test sets with an estimated flip. "oracle"
    (crossing only): power of the one-sided test of "D >= 0 at eta_j" that rejects when the
    estimate of D(eta_j) is below its 5% quantile over the least-favourable test sets (a test
    that knows the null distribution; best eta_j, chosen after the fact) -- an optimistic
    reference for what a test at a single eta can reach. "oracle, own s.d." and "oracle, best
    combination" (crossing only): the power envelope of tests that standardise by the spread of
    D under the alternative, as ours do (:func:`_envelope`). Each scenario's test sets are the
    same in both modes. The true D by quadrature is printed first.
    """
    grid = np.logspace(-4, np.log10(0.5), 40)
    n_pos, n_neg = 200, 20_000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    scens = ("null", "least favourable", "crossing", "mid-range crossing")
    show = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.25, 0.5])
    print("\ntrue D(eta) = AP_A - AP_B at eta = " + ", ".join(f"{e:g}" for e in show))
    for scen in scens:
        print(f"  {scen}: " + ", ".join(f"{d:+.4f}" for d in true_ap_difference(show, scen)))
    rows, dhat = {}, {}
    for k, scen in enumerate(scens):
        for mode in ("paired", "unpaired"):
            rng = np.random.default_rng([2026, k])
            hits = {"band": 0, "points": 0, "windows": 0}
            found = 0
            ests = []
            for i in range(r):
                sa, sb = flip_scores(rng, y, scen)
                ca, cb = RocCounts.from_scores(y, sa), RocCounts.from_scores(y, sb)
                res = {}
                for side in ("points", "windows"):
                    if mode == "paired":
                        res[side] = u_rank.flip_significance(
                            metric="ap", prevalences=grid, y_true=y, score_a=sa, score_b=sb,
                            n_boot=b, seed=i, side_test=side,
                        )  # fmt: skip
                    else:
                        res[side] = u_rank.flip_significance(
                            ca, cb, "ap", grid, n_boot=b, seed=i, side_test=side
                        )
                    hits[side] += any(res[side].significant)
                one = res["windows"]
                ests.append(one.difference)
                found += bool(one.flips)
                edges = [grid[0], *one.flips, grid[-1]]
                hit = False
                for j, root in enumerate(one.flips):
                    lf = (grid >= edges[j]) & (grid < root)
                    rt = (grid > root) & (grid <= edges[j + 2])
                    pl, nl = np.any(one.low[lf] > 0), np.any(one.high[lf] < 0)
                    pr, nr = np.any(one.low[rt] > 0), np.any(one.high[rt] < 0)
                    hit |= bool((pl and nr) or (nl and pr))
                hits["band"] += hit
            rows[(scen, mode)] = ({key: v / r for key, v in hits.items()}, found / r)
            dhat[(scen, mode)] = np.asarray(ests)
            print(f"  done: {scen}, {mode}", file=sys.stderr, flush=True)
    print(
        "\n| scenario | mode | two-sided band | points | windows | flip found | oracle | "
        "oracle, own s.d. | oracle, best combination |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    true = true_ap_difference(grid, "crossing")
    for (scen, mode), (h, f) in rows.items():
        orc = ""
        if scen == "crossing":
            q = np.quantile(dhat[("least favourable", mode)], 0.05, axis=0)
            orc = f"{np.max(np.mean(dhat[(scen, mode)] < q, axis=0)):.3f} | "
            orc += " | ".join(_envelope(dhat[(scen, mode)], true, grid < 1.3e-2))
        else:
            orc = " |  | "
        cols = " | ".join(_fmt(h[key], r) for key in ("band", "points", "windows"))
        print(f"| {scen} | {mode} | {cols} | {f:.2f} | {orc} |")


def _envelope(d: np.ndarray, true: np.ndarray, side: np.ndarray) -> tuple[str, str]:
    """Power envelope of "D < 0 on the low-eta side" for tests that standardise by the spread.

    ``d``: the estimates of D on the crossing's test sets, ``true``: D by quadrature, ``side``:
    the grid points below the flip. Returns the power (share of test sets) of two oracles
    that know the alternative, as text: (1) the one-sided z-test at the single best eta,
    rejecting when ``D_hat < -1.645 s_j`` with ``s_j`` the true s.d. of ``D_hat`` there (taken
    over these test sets); (2) the best non-negative combination ``w`` of the side's points
    (the only combinations valid under the composite null ``D >= 0``), ``w`` minimising
    ``w' S w`` subject to ``w' |D| = 1`` (``S`` the covariance of ``D_hat``), rejecting when
    ``-w' D_hat`` exceeds 1.645 of its s.d., with its normal-theory power in brackets. Both
    pick where to look with hindsight, so they bound what a test that does not know the
    alternative can reach.
    """
    from scipy import optimize, stats

    e = d[:, side]
    s = e.std(axis=0)
    single = float(np.max(np.mean(e < -1.645 * s, axis=0)))
    cov, m = np.cov(e.T), -true[side]
    res = optimize.minimize(
        lambda w: w @ cov @ w,
        np.full(m.size, 1.0 / m.sum()),
        bounds=[(0.0, None)] * m.size,
        constraints=({"type": "eq", "fun": lambda w: w @ m - 1.0},),
        method="SLSQP",
    )
    proj = -(e @ res.x)
    theory = float(stats.norm.cdf(1.0 / np.sqrt(res.x @ cov @ res.x) - 1.645))
    return f"{single:.3f}", f"{np.mean(proj > 1.645 * proj.std()):.3f} ({theory:.3f})"


def headline_only(mname: str, n_pos: int, n_neg: int, r: int) -> None:
    """The headline intervals alone, at many test sets: coverage at the test prevalence, 1e-3
    and 1e-4 with MC s.e., and on which side the misses fall (``headline_intervals``, B = 200
    as in the main table; one regime, fresh test sets: seed ``31337 + P``). A few seconds per
    thousand sets at P / N = 100 / 1,000,000, so the cells near the target's edge can be
    pinned down (the main table's R = 300 leaves +-0.015)."""
    model = binormal_model(2.0) if mname == "binormal" else skewed_model()
    h_eta = np.array([n_pos / (n_pos + n_neg), 1e-3, 1e-4])
    truth = true_curves(model, np.array([0.5]), h_eta, np.array([0.5]), 0.5)
    sets = draw_counts(np.random.default_rng(31337 + n_pos), model, n_pos, n_neg, r)
    below = {key: np.zeros(h_eta.size) for key in METRICS}
    above = {key: np.zeros(h_eta.size) for key in METRICS}
    width = {key: np.zeros(h_eta.size) for key in METRICS}
    est = {key: [] for key in METRICS}
    fns = {"ap": metrics.average_precision, "pr_auc": metrics.pr_auc, "max_f1": metrics.max_f1}
    for i, c in enumerate(sets):
        h = u.headline_intervals(c, h_eta, n_boot=200, seed=10_000 + i)
        for key in METRICS:
            below[key] += truth[key] < h.intervals[key][:, 0] - 1e-12
            above[key] += truth[key] > h.intervals[key][:, 1] + 1e-12
            width[key] += h.intervals[key][:, 1] - h.intervals[key][:, 0]
            est[key].append(np.atleast_1d(fns[key](c, h_eta)))
    etas = ", ".join(f"{e:.3g}" for e in h_eta)
    print(f"\nheadline intervals, {mname} {n_pos} / {n_neg}, R = {r}; eta = {etas}")
    print(
        "| metric | coverage (± MC s.e.) | truth below / above the interval "
        "| mean width / the estimator's 2.5-97.5% spread over the R sets |"
    )
    print("|---|---|---|---|")
    for key in METRICS:
        cov = 1 - (below[key] + above[key]) / r
        cells = " / ".join(_fmt(float(x), r) for x in cov)
        pairs = zip(below[key], above[key], strict=True)
        miss = " / ".join(f"{int(a)}, {int(b)}" for a, b in pairs)
        q = np.quantile(np.asarray(est[key]), [0.025, 0.975], axis=0)
        ratio = " / ".join(f"{x:.2f}" for x in width[key] / r / (q[1] - q[0]))
        print(f"| {key} | {cells} | {miss} | {ratio} |")


def logit_interval_screen(mname: str, n_pos: int, n_neg: int, r: int) -> None:
    """Boyd, Eng & Page (2013)'s logit interval for AP (and PR-AUC), logit(m) +- z / sqrt(P m
    (1 - m)) with P the positives, against the default headline interval and the union of the
    two, on fresh test sets of one regime (seed ``777 + P``): coverage at the test prevalence,
    1e-3 and 1e-4, and mean width over the estimator's 2.5-97.5% spread over the R sets.
    Screened for the binormal 100 / 10^6 cells (docs/statistics.md); not used by the package."""
    from scipy.special import expit, logit
    from scipy.stats import norm

    model = binormal_model(2.0) if mname == "binormal" else skewed_model()
    h_eta = np.array([n_pos / (n_pos + n_neg), 1e-3, 1e-4])
    truth = true_curves(model, np.array([0.5]), h_eta, np.array([0.5]), 0.5)
    sets = draw_counts(np.random.default_rng(777 + n_pos), model, n_pos, n_neg, r)
    z = float(norm.ppf(0.975))
    fns = {"ap": metrics.average_precision, "pr_auc": metrics.pr_auc}
    hits: dict[tuple[str, str], list] = {}
    widths: dict[tuple[str, str], list] = {}
    est: dict[str, list] = {key: [] for key in fns}
    for i, c in enumerate(sets):
        h = u.headline_intervals(c, h_eta, n_boot=200, seed=50_000 + i)
        for key, fn in fns.items():
            m = np.atleast_1d(fn(c, h_eta))
            est[key].append(m)
            tau = z / np.sqrt(n_pos * m * (1 - m))
            lo, hi = h.intervals[key][:, 0], h.intervals[key][:, 1]
            ylo, yhi = expit(logit(m) - tau), expit(logit(m) + tau)
            for name, (a, b) in (
                ("bayesian", (lo, hi)),
                ("logit", (ylo, yhi)),
                ("union", (np.minimum(lo, ylo), np.maximum(hi, yhi))),
            ):
                hits.setdefault((key, name), []).append((a <= truth[key]) & (truth[key] <= b))
                widths.setdefault((key, name), []).append(b - a)
    etas = ", ".join(f"{e:.3g}" for e in h_eta)
    print(f"\nlogit interval screen, {mname} {n_pos} / {n_neg}, R = {r}; eta = {etas}")
    print("| metric | interval | coverage (± MC s.e.) | mean width / spread |")
    print("|---|---|---|---|")
    for (key, name), h in hits.items():
        q = np.quantile(np.asarray(est[key]), [0.025, 0.975], axis=0)
        cov = " / ".join(_fmt(float(x), r) for x in np.mean(h, axis=0))
        ratio = np.mean(widths[(key, name)], axis=0) / (q[1] - q[0])
        print(f"| {key} | {name} | {cov} | " + " / ".join(f"{x:.2f}" for x in ratio) + " |")


def roc_only(r: int, b: int) -> None:
    """ROC band alone (``roc_band``, default grid 1/N ... 1): whole-grid coverage and coverage
    at its first point FPR = 1/N, in every regime and model; mean width."""
    print("\n| model | P / N | roc sim (± MC s.e.) | at FPR = 1/N | mean width |")
    print("|---|---|---|---|---|")
    for mname, model in (("binormal", binormal_model(2.0)), ("skewed/tied", skewed_model())):
        for n_pos, n_neg in REGIMES:
            grid = np.logspace(np.log10(1.0 / n_neg), 0, 100)
            tr = true_curves(model, grid, ETA[:1], np.array([0.5]), 0.5)["roc"]
            sets = draw_counts(np.random.default_rng(n_pos + n_neg), model, n_pos, n_neg, r)
            hits, w = [], []
            for i, c in enumerate(sets):
                band = u.roc_band(c, grid, n_boot=b, seed=i)
                hits.append((band.low <= tr + 1e-12) & (tr <= band.high + 1e-12))
                w.append(np.mean(band.high - band.low))
            h = np.asarray(hits)
            print(
                f"| {mname} | {n_pos} / {n_neg} | {_fmt(h.all(axis=1).mean(), r)} | "
                f"{h[:, 0].mean():.3f} | {np.mean(w):.3f} |"
            )
            sys.stdout.flush()


def report_flips(r: int) -> None:
    """The report's unpaired flip test: the replicates it feeds to the test, compared.

    The scenarios of :func:`flips` (P = 200, N = 20,000, AP, 30 log-spaced eta as the report's
    band grid). Each run's counts are thinned as the report thins a drawn run; "count
    bootstrap" = 200 count-bootstrap replicates shifted onto the exact curve (what the report
    uses), "Bayesian, median-centred" = 1000 Bayesian count-bootstrap draws (Jeffreys
    pseudo-negative) centred on the exact curve by their median (what it used before).
    """
    from mlflow_imbalance.core.metrics import average_precision
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        bootstrap_statistics,
        metric_statistic,
    )
    from mlflow_imbalance.stats.flip_significance import flip_significance_from_replicates
    from mlflow_imbalance.stats.headline import BOOTSTRAP_POINTS, thin_for_bootstrap

    grid = np.logspace(-4, np.log10(0.5), 30)
    print(f"\nreport's unpaired flip test, R = {r} test sets per scenario")
    print("\n| scenario | count bootstrap, B = 200 (now) | Bayesian, median-centred, B = 1000 |")
    print("|---|---|---|")
    for k, scen in enumerate(("null", "least favourable", "crossing", "mid-range crossing")):
        rng = np.random.default_rng(3000 + k)
        hits = {"count": 0, "bayes": 0}
        for i in range(r):
            y = np.zeros(200 + 20_000, dtype=bool)
            y[:200] = True
            cs = [RocCounts.from_scores(y, s) for s in flip_scores(rng, y, scen)]
            fps = u_rank.flip_points(
                cs[0], cs[1], metric="ap", prevalence_range=(grid[0], grid[-1])
            )
            inside = [e for e in fps if grid[0] < e < grid[-1]]
            if not inside:
                continue
            ex = [np.atleast_1d(average_precision(c, grid)).astype(float) for c in cs]
            reps: dict[str, list[np.ndarray]] = {"count": [], "bayes": []}
            for j, c in enumerate(cs):
                th = thin_for_bootstrap(c, BOOTSTRAP_POINTS).counts
                st = metric_statistic(th, "ap", grid)
                g = np.random.default_rng(10 * i + j)
                d = bootstrap_statistics(th, {"ap": st}, 200, g)["ap"]
                reps["count"].append(d - st.estimate(th) + ex[j])
                d = bayesian_statistics(th, {"ap": st}, 1000, g)["ap"]
                reps["bayes"].append(d - np.median(d, axis=0) + ex[j])
            for kind, (ra, rb) in reps.items():
                res = flip_significance_from_replicates(
                    ex[0] - ex[1], ra - rb, grid, inside, metric="ap", confidence=0.95
                )
                hits[kind] += bool(any(res.significant))
        print(f"| {scen} | {_fmt(hits['count'] / r, r)} | {_fmt(hits['bayes'] / r, r)} |")
        sys.stdout.flush()


def verdict_level(r: int, b: int) -> None:
    """False-alarm rate of the report's unpaired test of a difference at one eta.

    The verdict ("how sure") and the tables' ties test ``z = (exact_A - exact_B) / SD`` of
    the difference of each run's replicates, two-sided normal, level 0.05. Two runs on
    independent test sets (P / N = 200 / 20,000 and 1,000 / 100,000), through the report's own
    code (``_Uncertainty.bootstrap`` with the report's thinning, then the verdict's test):
    "null" = both from the same binormal model; "least favourable" = the flip study's second
    model (equal ranking at the top: true AP difference 0.0001 at eta = 1e-4, 0.0014 at 1e-3).
    "now" = the report's test: z with each run's variance the larger of its count-bootstrap
    replicates' and its Bayesian draws', or the two runs' table intervals apart
    (``intervals_apart``); "z-test alone" without the second rule; the same z with only the
    count-bootstrap variance
    (200 replicates on counts thinned to 80 points, as the report's) and with only the
    Bayesian draws' variance (B draws, 40 points: what the report used before).
    """
    from types import SimpleNamespace

    from mlflow_imbalance.report.analysis import verdict
    from mlflow_imbalance.report.analysis._common import APART_KEYS, intervals_apart
    from mlflow_imbalance.report.analysis.intervals import _Uncertainty
    from mlflow_imbalance.report.build import _stable_seed
    from mlflow_imbalance.report.options import _options
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        bootstrap_statistics,
        metric_statistic,
        min_cost_statistic,
    )
    from mlflow_imbalance.stats.headline import BOOTSTRAP_POINTS, thin_for_bootstrap

    etas = np.array([1e-4, 1e-3, 1e-2, 0.1])
    keys = ("ap", "pr_auc", "max_f1", "cost", "roc_auc")
    grid = np.logspace(-4, np.log10(0.5), 30)
    print(f"\nreport's unpaired difference test, R = {r} pairs of test sets, B = {b}; share of")
    print(f"pairs with p < 0.05 at eta = {', '.join(f'{e:g}' for e in etas)} (MC s.e. ")
    print(f"{np.sqrt(0.05 * 0.95 / r):.3f} at 0.05)")
    print(
        "\n| scenario | P / N | metric | now | z-test alone | count bootstrap alone "
        "| Bayesian alone (before) |"
    )
    print("|---|---|---|---|---|---|---|")
    for scen in ("null", "least favourable"):
        for n_pos, n_neg in REGIMES[:2]:
            rng = np.random.default_rng(4000 + n_pos)
            rej = {k: np.zeros((3, etas.size)) for k in keys}
            rej_z = {k: np.zeros(etas.size) for k in keys}  # the z-test alone
            for i in range(r):
                y = np.zeros(n_pos + n_neg, dtype=bool)
                y[:n_pos] = True
                # independent test sets: A's scores from one draw, B's from another
                sa = flip_scores(rng, y, scen)[0]
                sb = flip_scores(rng, y, scen)[1]
                runs = [
                    SimpleNamespace(name=nm, counts=RocCounts.from_scores(y, sc), scores=None,
                                    digest=None)
                    for nm, sc in (("a", sa), ("b", sb))
                ]  # fmt: skip
                opts = _options(list(etas), None, "x", None, None, 0.95, b, i, None)
                unc = _Uncertainty(opts, _stable_seed)
                var: dict[tuple[str, str], dict[str, np.ndarray]] = {}
                ci = {}
                for run in runs:
                    ci[run.name] = unc.bootstrap(run.name, run.counts, etas, grid, None, full=False)
                    for kind, pts in (("boot", BOOTSTRAP_POINTS), ("bayes", 40)):
                        th = thin_for_bootstrap(run.counts, pts).counts
                        st = {k: metric_statistic(th, k, etas) for k in keys[:3]}
                        st["cost"] = min_cost_statistic(th, etas, 1.0, 1.0)
                        if kind == "boot":
                            d = bootstrap_statistics(th, st, 200, rng)
                        else:
                            d = bayesian_statistics(th, st, b, rng)
                        var[run.name, kind] = {k: d[k].var(axis=0, ddof=1) for k in st}
                for k in keys:
                    for j, e in enumerate(etas):
                        _, p, _ = verdict._test(k, runs[0], runs[1], float(e), j, opts, unc, i)
                        apart = k in APART_KEYS and intervals_apart(ci["a"][k, j], ci["b"][k, j])
                        rej[k][0, j] += p is not None and (p < 0.05 or apart)
                        rej_z[k][j] += p is not None and p < 0.05
                        if k == "roc_auc":
                            continue
                        ex = unc.point_reps["a"][k][0][j] - unc.point_reps["b"][k][0][j]
                        for row, kind in ((1, "boot"), (2, "bayes")):
                            sd = np.sqrt(var["a", kind][k][j] + var["b", kind][k][j])
                            rej[k][row, j] += sd > 0 and abs(ex) / sd > 1.959964
            for k in keys:
                cols = [" / ".join(f"{x / r:.3f}" for x in rej[k][row]) for row in range(3)]
                cols.insert(1, " / ".join(f"{x / r:.3f}" for x in rej_z[k]))
                if k == "roc_auc":
                    cols[1:] = ["-", "-", "-"]
                name = "roc_auc (unpaired DeLong)" if k == "roc_auc" else k
                print(f"| {scen} | {n_pos} / {n_neg} | {name} | {' | '.join(cols)} |")
            sys.stdout.flush()


def verdict_level_paired(r: int, b: int) -> None:
    """False-alarm rate of the public ``paired_metric_test`` at low eta, with and without floor.

    Two runs of the same model (the flip study's null: true difference 0), 200 / 20,000
    examples: "paired" = both scoring the same examples (noise correlation 0.5), the paired
    test; "unpaired" = the two runs' counts on independent test sets. AP and the lowest
    expected cost (C_FP = 1, C_FN = 100) at eta = 1e-4 and 1e-3; share of test sets with
    p < 0.05, for the default test (s.d. floored by each run's Bayesian-draw variance) and
    pROC's plain bootstrap test (``floor=False``), on the same replicates.
    """
    from mlflow_imbalance import RocCounts
    from mlflow_imbalance.stats.compare import paired_metric_test

    etas = (1e-4, 1e-3)
    rng = np.random.default_rng(5)
    y = np.zeros(200 + 20_000, dtype=bool)
    y[:200] = True
    cells = [(k, m, e) for k in ("paired", "unpaired") for m in ("ap", "min_cost") for e in etas]
    rej = {(c, fl): 0 for c in cells for fl in (True, False)}
    for i in range(r):
        sa, sb = flip_scores(rng, y, "null")
        _, sc = flip_scores(rng, y, "null")  # run B on an independent test set
        ca, cb = RocCounts.from_scores(y, sa), RocCounts.from_scores(y, sc)
        for kind, m, e in cells:
            for fl in (True, False):
                if kind == "paired":
                    kw = {"y_true": y, "score_a": sa, "score_b": sb}
                else:
                    kw = {"counts_a": ca, "counts_b": cb}
                t = paired_metric_test(
                    metric=m, prevalence=e, n_boot=b, seed=i, cost_fp=1.0, cost_fn=100.0,
                    floor=fl, **kw,
                )  # fmt: skip
                rej[(kind, m, e), fl] += t.p_value < 0.05
    print(f"\npaired_metric_test, null, R = {r} test sets, B = {b} (MC s.e. ", end="")
    print(f"{np.sqrt(0.05 * 0.95 / r):.3f} at 0.05); default (floored) / plain (floor=False)")
    print("\n| runs | metric | p < 0.05 at eta = 1e-4 | at 1e-3 |\n|---|---|---|---|")
    for kind in ("paired", "unpaired"):
        for m in ("ap", "min_cost"):
            row = [
                f"{rej[(kind, m, e), True] / r:.3f} / {rej[(kind, m, e), False] / r:.3f}"
                for e in etas
            ]
            print(f"| {kind} | {m} | {row[0]} | {row[1]} |")


def verdict_level_report(r: int, b: int) -> None:
    """False-alarm rate of the report's verdict for runs scored on the same examples.

    The verdict's test as the report runs it (``build_report`` on two runs that kept their
    scores): the paired test on the shared replicates, its s.d. floored by the runs' own
    variances less twice their covariance (``report/analysis/paired.py``; the tables' ties use
    the same test). Two runs of the same model on 200 / 20,000 examples, noise correlation
    0.5: ``null`` as in :func:`verdict_level_paired`, and ``saturated``, where each run puts
    each positive, independently with probability 0.1, above every negative (as a signature
    rule does: a run with no negative above its top scores). Criteria: AP, and the lowest
    expected cost (C_FP = 1, C_FN = 100); share of test sets whose verdict at eta = 1e-4 and
    1e-3 calls the runner-up significantly worse (``Verdict.significant``: p < 0.05, or for AP
    the two runs' intervals apart).
    """
    from mlflow_imbalance.report.model import RunData

    etas = (1e-4, 1e-3)
    y = np.zeros(200 + 20_000, dtype=bool)
    y[:200] = True
    print(f"\nthe report's verdict, same model, R = {r} test sets, B = {b} (MC s.e. ", end="")
    print(f"{np.sqrt(0.05 * 0.95 / r):.3f} at 0.05)")
    print("\n| null | criterion | significant at eta = 1e-4 | at 1e-3 |\n|---|---|---|---|")
    for scen in ("null", "saturated"):
        rng = np.random.default_rng([6, len(scen)])
        rej = {(m, e): 0 for m in ("ap", "cost") for e in etas}
        for i in range(r):
            sa, sb = flip_scores(rng, y, "null")
            if scen == "saturated":
                sa = np.where(y & (rng.random(y.size) < 0.1), 10.0 + rng.random(y.size), sa)
                sb = np.where(y & (rng.random(y.size) < 0.1), 10.0 + rng.random(y.size), sb)
            runs = {
                k: RunData(k, RocCounts.from_scores(y, s), digest="shared", scores=(y, s))
                for k, s in (("a", sa), ("b", sb))
            }
            for m in ("ap", "cost"):
                costs = {"cost_fp": 1.0, "cost_fn": 100.0} if m == "cost" else {}
                rep = u_report.build_report(
                    runs, prevalences=list(etas), n_bootstrap=b, seed=i, progress=False,
                    primary_metric="ap", **costs,
                )  # fmt: skip
                for v in rep.verdict:  # as the report decides: z, or AP intervals apart
                    rej[m, v.prevalence] += bool(v.significant)
        for m in ("ap", "cost"):
            print(f"| {scen} | {m} | {rej[m, 1e-4] / r:.3f} | {rej[m, 1e-3] / r:.3f} |")
            sys.stdout.flush()


def cost_coverage(r: int, b: int) -> None:
    """Coverage of the report's lowest-expected-cost interval (the tables' cost cells).

    Through the report's own code (``_Uncertainty.bootstrap`` of a drawn run: counts thinned
    to 80 points, B Bayesian draws, ``min_cost_interval``) on the two models and the first two
    regimes, with C_FP = 1 and C_FN = 1 or 100, at eta = 1e-4, 1e-3, 1e-2, 0.1. Truth: the
    model's lowest expected cost per case, min over its thresholds and flagging nothing (exact
    for the discretised model). Models: the benchmark's binormal (120 score levels) and
    skewed/tied ones, and binormal with 4,000 levels over [-8, 10] ("continuous": the minimum
    is then taken over ~240 thresholds, and at high C_FN the positives' unseen lower tail
    decides it). On a second draw set of the same kind: "no chosen" = ``min_cost_interval``
    without the upper limit of the cost at the chosen threshold (the construction before it),
    "plain" = equal-tailed quantiles shifted onto the exact value. Prints coverage (MC s.e.
    sqrt(c (1 - c) / R)), the share of truths above the interval and the mean width of "now"
    over that of "no chosen".
    """
    from mlflow_imbalance.core import curves as _curves
    from mlflow_imbalance.report.analysis.intervals import _Uncertainty
    from mlflow_imbalance.report.build import _stable_seed
    from mlflow_imbalance.report.options import _options
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        chosen_cost_statistic,
        min_cost_statistic,
    )
    from mlflow_imbalance.stats.headline import BOOTSTRAP_POINTS, thin_for_bootstrap
    from mlflow_imbalance.stats.posterior import min_cost_interval

    etas = np.array([1e-4, 1e-3, 1e-2, 0.1])
    grid = np.logspace(-4, np.log10(0.5), 30)
    print(f"\nlowest expected cost interval, R = {r} test sets, B = {b}; at eta = ")
    print(f"{', '.join(f'{e:g}' for e in etas)} (MC s.e. {np.sqrt(0.05 * 0.95 / r):.3f} at 0.95)")
    print(
        "\n| model | P / N | C_FN | coverage now | no chosen | plain "
        "| truth above: now; no chosen | width now / no chosen |"
    )
    print("|---|---|---|---|---|---|---|---|")
    models = (
        ("binormal", binormal_model(2.0)),
        ("skewed/tied", skewed_model()),
        ("binormal, continuous", binormal_model(2.0, k=4000, low=-8.0, span=8.0)),
    )
    for mname, m in models:
        for n_pos, n_neg in REGIMES[:2]:
            for cfn in (1.0, 100.0):
                t, f = np.r_[0.0, m["T"]], np.r_[0.0, m["F"]]
                truth = np.array(
                    [np.min((1 - e) * f + cfn * e * (1 - t)) for e in etas]
                )  # fmt: skip
                rng = np.random.default_rng(5000 + n_pos)
                hit = np.zeros((3, etas.size))
                above = np.zeros((3, etas.size))
                width = np.zeros((2, etas.size))
                for i, c in enumerate(draw_counts(rng, m, n_pos, n_neg, r)):
                    opts = _options(list(etas), None, "x", 1.0, cfn, 0.95, b, i, None)
                    unc = _Uncertainty(opts, _stable_seed)
                    sweep = {k: np.zeros(grid.size) for k in ("ap", "pr_auc", "max_f1")}
                    ci = unc.bootstrap("a", c, etas, grid, sweep, full=True)
                    lo = np.array([ci["cost", j][0] for j in range(etas.size)])
                    hi = np.array([ci["cost", j][1] for j in range(etas.size)])
                    thin = thin_for_bootstrap(c, BOOTSTRAP_POINTS).counts
                    st = {
                        "cost": min_cost_statistic(thin, etas, 1.0, cfn),
                        "chosen": chosen_cost_statistic(thin, etas, 1.0, cfn),
                    }
                    d = bayesian_statistics(thin, st, b, rng, base_for=("cost",))
                    ex = np.atleast_1d(_curves.optimal_operating_point(c, etas, 1.0, cfn).cost)
                    est = st["cost"].estimate(thin)
                    lo1, hi1 = min_cost_interval(d["cost"], d["cost:base"], est, ex)
                    q = np.quantile(d["cost"], [0.025, 0.975], axis=0)
                    lo0 = np.minimum(np.maximum(q[0] + ex - est, 0.0), ex)
                    hi0 = np.maximum(q[1] + ex - est, ex)
                    for row, (a, z) in enumerate(((lo, hi), (lo1, hi1), (lo0, hi0))):
                        hit[row] += (a <= truth) & (truth <= z)
                        above[row] += truth > z
                    width += [hi - lo, hi1 - lo1]
                cols = [" / ".join(f"{x / r:.3f}" for x in hit[row]) for row in range(3)]
                ab = " / ".join(f"{x / r:.3f}" for x in above[0])
                ab1 = " / ".join(f"{x / r:.3f}" for x in above[1])
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = " / ".join(
                        "—" if not np.isfinite(x) else f"{x:.2f}" for x in width[0] / width[1]
                    )
                print(
                    f"| {mname} | {n_pos} / {n_neg} | {cfn:g} | {cols[0]} | {cols[1]} "
                    f"| {cols[2]} | {ab}; {ab1} | {ratio} |"
                )
                sys.stdout.flush()


#: Models of the regime study (:func:`regime_study`): two with rounded / tied scores, two
#: quasi-continuous (6,000 score levels).
REGIME_MODELS = {
    "binormal, 120 levels": lambda: binormal_model(2.0),
    "skewed/tied": skewed_model,
    "binormal, continuous": continuous_binormal,
    "GB-like mixture, continuous": mixture_model,
}
#: Pointwise grid of the regime study: 23 log-spaced eta in [1e-6, 0.5] (the band's default
#: lower end), where the per-eta coverage and the under-coverage rule's inputs are recorded.
POINT_ETA = np.logspace(-6, np.log10(0.5), 23)


def _draw_set(c: RocCounts, etas: np.ndarray, b: int, seed: int):
    """One Bayesian draw set as the report makes it (counts thinned to BOOTSTRAP_POINTS)."""
    from mlflow_imbalance.stats.bootstrap import bayesian_statistics, metric_statistic
    from mlflow_imbalance.stats.headline import BOOTSTRAP_POINTS, thin_for_bootstrap

    thin = thin_for_bootstrap(c, BOOTSTRAP_POINTS).counts
    st = {key: metric_statistic(thin, key, etas, grid_step=None) for key in METRICS}
    draws = bayesian_statistics(thin, st, b, np.random.default_rng(seed), base_for=("max_f1",))
    est = {key: st[key].estimate(thin) for key in METRICS}
    return draws, est


def _interval(draws, est, exact, cols, etas, key, simultaneous):
    from mlflow_imbalance.stats.headline import recentre
    from mlflow_imbalance.stats.posterior import band_from_draws

    base = draws.get(f"{key}:base")
    band = band_from_draws(
        est[key][cols], draws[key][:, cols], etas, metric=key,
        base=None if base is None else base[:, cols], simultaneous=simultaneous, seed=0,
    )  # fmt: skip
    return recentre(band, exact[key][cols])


def regime_study(r: int, b: int, seed: int = 0) -> None:
    """Coverage of the default bands and headline intervals on rounded AND continuous scores.

    Models :data:`REGIME_MODELS` x regimes P / N = 100 / 10^6, 200 / 20,000, 1,000 / 100,000;
    R test sets each, one Bayesian draw set of B per test set made as the report and the hook
    make it (counts thinned to 80 points per axis, recentred on the exact values). Printed:

    * table 1: simultaneous band coverage over eta in [1e-4, 0.5] (12 log-spaced eta), over
      the band's default range [1e-6, 0.5] (23 eta) and over the report's drawn range
      [test prevalence / 10, 0.5] (12 eta); pointwise (headline) coverage at the test
      prevalence, 1e-3 and test prevalence / 10; each +- MC s.e.;
    * table 2: pointwise coverage on :data:`POINT_ETA` pooled over every cell, by the rule's
      input (:func:`mlflow_imbalance.stats.coverage.undercovers`): coverage where the rule
      flags and where it does not, per metric.

    ``seed`` 0 draws the test sets the docs' table was measured on; any other value draws fresh
    ones (to re-check the rule, chosen on seed 0, on data it was not tuned on).
    """
    from mlflow_imbalance.stats.coverage import rule_inputs, undercovers

    print(
        f"regime study: R = {r} test sets x B = {b} draws per cell (seed {seed}), nominal 0.95; "
        "bands simultaneous over 12 eta in [1e-4, 0.5] / 23 in [1e-6, 0.5] / 12 in "
        "[test/10, 0.5]; headline pointwise at test / 1e-3 / test/10"
    )
    print(
        "\n| model | P / N | metric | band [1e-4, 0.5] | band [1e-6, 0.5] | band [test/10, 0.5] "
        "| headline at test | at 1e-3 | at test/10 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    pooled: list[tuple] = []  # (key, hit (R, M), flagged (R, M), tp (R, M), fp (R, M))
    cell_rows = []
    raw: dict[str, np.ndarray] = {}  # per-eta hits and rule inputs, saved for re-analysis
    for mname, make in REGIME_MODELS.items():
        model = make()
        for n_pos, n_neg in ((100, 1_000_000), (200, 20_000), (1_000, 100_000)):
            t0 = time.perf_counter()
            test = n_pos / (n_pos + n_neg)
            e_a = np.logspace(-4, np.log10(0.5), 12)
            e_r = np.geomspace(test / 10, 0.5, 12)
            e_h = np.array([test, 1e-3, test / 10])
            parts = (e_a, POINT_ETA, e_r, e_h)
            etas = np.concatenate(parts)
            edges = np.cumsum([0, *[p.size for p in parts]])
            cols = [np.arange(edges[i], edges[i + 1]) for i in range(len(parts))]
            truth = true_curves(model, np.array([0.5]), etas, np.array([0.5]), 0.5)
            key0 = [n_pos, n_neg, len(mname)] + ([seed] if seed else [])
            sets = draw_counts(np.random.default_rng(key0), model, n_pos, n_neg, r)
            hits = {key: [[] for _ in parts] for key in METRICS}
            flags = {key: [] for key in METRICS}
            ins = []
            for i, c in enumerate(sets):
                draws, est = _draw_set(c, etas, b, 1000 + i)
                exact = {key: u.metric_values(c, key, etas) for key in METRICS}
                inp = rule_inputs(c, POINT_ETA)
                ins.append(inp)
                for key in METRICS:
                    for p, (cc, ee) in enumerate(zip(cols, parts, strict=True)):
                        lo, hi = _interval(draws, est, exact, cc, ee, key, simultaneous=p in (0, 2))
                        if p == 1:  # the default range: simultaneous AND pointwise
                            lo_s, hi_s = _interval(draws, est, exact, cc, ee, key, True)
                            hs = (lo_s <= truth[key][cc] + 1e-12) & (truth[key][cc] <= hi_s + 1e-12)
                            hits[key][p].append(hs)
                            pw = (lo <= truth[key][cc] + 1e-12) & (truth[key][cc] <= hi + 1e-12)
                            flags[key].append((pw, undercovers(c, key, POINT_ETA)))
                            continue
                        hits[key][p].append(
                            (lo <= truth[key][cc] + 1e-12) & (truth[key][cc] <= hi + 1e-12)
                        )
            for key in METRICS:
                h = [np.asarray(x) for x in hits[key]]
                sim = [_fmt(float(h[p].all(axis=1).mean()), r) for p in range(3)]
                pw = [_fmt(float(x), r) for x in h[3].mean(axis=0)]
                row = f"| {mname} | {n_pos} / {n_neg} | {key} | " + " | ".join(sim + pw) + " |"
                print(row)
                cell_rows.append(row)
                pw_hit = np.array([f[0] for f in flags[key]])
                flg = np.array([np.asarray(f[1], dtype=bool) for f in flags[key]])
                pooled.append((mname, n_pos, key, pw_hit, flg))
                raw[f"{mname}|{n_pos}|{key}|hit"] = pw_hit
            raw[f"{mname}|{n_pos}|tp"] = np.array([x["tp"] for x in ins])
            raw[f"{mname}|{n_pos}|fp"] = np.array([x["fp"] for x in ins])
            print(f"  ({mname} {n_pos} / {n_neg}: {time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
            sys.stdout.flush()
    np.savez_compressed(Path(tempfile.gettempdir()) / "regime_study_raw.npz", eta=POINT_ETA, **raw)
    print("\npointwise coverage on 23 eta in [1e-6, 0.5], pooled over test sets and eta:")
    print("| metric | cells | where flagged (n) | where not flagged (n) | worst unflagged eta "
          "(cell) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for key in METRICS:
        for scope in ("continuous", "all"):
            hf = nf = hn = nn = 0
            worst = (2.0, "")
            for mname, n_pos, k2, pw_hit, flg in pooled:
                if k2 != key or (scope == "continuous" and "continuous" not in mname):
                    continue
                hf += pw_hit[flg].sum()
                nf += flg.sum()
                hn += pw_hit[~flg].sum()
                nn += (~flg).sum()
                col_ok = ~flg.any(axis=0)
                if col_ok.any():
                    cov = pw_hit.mean(axis=0)
                    j = int(np.argmin(np.where(col_ok, cov, 2.0)))
                    if cov[j] < worst[0]:
                        worst = (float(cov[j]), f"{POINT_ETA[j]:.1e}, {mname} P = {n_pos}")
            cf = f"{hf / nf:.3f} ({nf})" if nf else "— (0)"
            cn = f"{hn / nn:.3f} ({nn})" if nn else "— (0)"
            print(f"| {key} | {scope} | {cf} | {cn} | {worst[0]:.3f} ({worst[1]}) |")


#: The studies run by a flag: (function, converters of the positional arguments, defaults).
STUDIES = {
    "--roc": (roc_only, (int, int), (300, 300)),
    "--report-flips": (report_flips, (int,), (300,)),
    "--verdict-paired": (verdict_level_paired, (int, int), (300, 300)),
    "--verdict-report": (verdict_level_report, (int, int), (300, 400)),
    "--verdict": (verdict_level, (int, int), (500, 1000)),
    "--headline": (headline_only, (str, int, int, int), (None, None, None, 1500)),
    "--logit-ap": (logit_interval_screen, (str, int, int, int), (None, None, None, 600)),
    "--flips": (flips, (int, int), (200, 200)),
    "--cost": (cost_coverage, (int, int), (300, 1000)),
    "--regimes": (regime_study, (int, int, int), (300, 200, 0)),
    "--quick": (regime_study, (int, int), (80, 200)),
}


def main() -> None:
    for flag, (fn, kinds, defaults) in STUDIES.items():
        if flag in sys.argv:
            given = [a for a in sys.argv[1:] if a != flag]
            args = [k(v) for k, v in zip(kinds, given, strict=False)]
            args += list(defaults[len(args) :])
            if None in args:
                sys.exit(f"{flag} needs {sum(d is None for d in defaults)} arguments")
            fn(*args)
            return
    r = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    b = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    print(
        f"coverage study: R = {r} test sets x B = {b} draws, nominal 0.95, 12 log-eta in "
        "[1e-4, 0.5]"
    )
    models = (("binormal", binormal_model(2.0)), ("skewed/tied", skewed_model()))
    all_other = []
    print("\n| model | P / N | band | sim (± MC s.e.) | pw min | @1e-4 | w/spread |")
    print("|---|---|---|---|---|---|---|")
    for mname, model in models:
        for n_pos, n_neg in REGIMES:
            t0 = time.perf_counter()
            bands, other = run(model, n_pos, n_neg, r, b)
            for name, cols in bands.items():
                print(f"| {mname} | {n_pos} / {n_neg} | {name} | " + " | ".join(cols) + " |")
            all_other.append((mname, n_pos, n_neg, other, time.perf_counter() - t0))
            sys.stdout.flush()
    print("\n| model | P / N | interval | coverage |")
    print("|---|---|---|---|")
    for mname, n_pos, n_neg, other, dt in all_other:
        for name, val in other.items():
            print(f"| {mname} | {n_pos} / {n_neg} | {name} | {val} |")
        print(f"| {mname} | {n_pos} / {n_neg} | (seconds) | {dt:.0f} |")
    print(
        "\nheadline columns: pointwise coverage at the test prevalence / 1e-3 / 1e-4 "
        "(B = 200, the hook's default)"
    )


if __name__ == "__main__":
    main()
