"""Intervals, bands, adequacy and flip significance as the report uses them."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.report.analysis._common import (
    _METRIC_FN,
    ADEQUACY_TOLERANCE,
    FLIP_METRICS,
    _fmt_e,
)
from mlflow_imbalance.stats.auc import roc_auc_interval
from mlflow_imbalance.stats.bands import (
    MIN_FP_SUPPORT,
    _fp_support_eta,
    band_from_replicates,
    p3_band,
    pr_band_from_roc,
    roc_low_fpr_floor,
)
from mlflow_imbalance.stats.bootstrap import (
    bootstrap_statistics,
    metric_statistic,
    min_cost_statistic,
    roc_statistic,
)
from mlflow_imbalance.stats.headline import recentre, thin_for_bootstrap
from mlflow_imbalance.stats.intervals import precision_interval
from mlflow_imbalance.stats.prevalence_bands import prevalence_band_from_roc
from mlflow_imbalance.stats.sample_size import expected_rate_cv, required_sample_size

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- uncertainty
#: Thresholds kept (per log-aware bin family) in the counts that the bootstrap resamples
#: (:func:`uncertainty.thin_for_bootstrap`; the logging hook uses the same 200).
BOOT_POINTS = 200
#: The same for runs outside the leading ones (not drawn, not compared pairwise): only their
#: table intervals and verdict replicates come from the bootstrap, which estimates the spread.
BOOT_POINTS_REST = 60
#: Prevalences of the bootstrap bands drawn in the metric-vs-η figures (a subset of the
#: report's η grid, log-spaced; the curves are smooth in log η, so the band is drawn there).
BAND_GRID = 50
#: Metric-vs-eta bands taken from the ROC band (:func:`uncertainty.prevalence_band_from_roc`):
#: PR-AUC and max-F1 are monotone in the ROC curve, so the mapped band is simultaneous over eta
#: with no false-positive support condition. AP keeps its bootstrap band (its ROC-mapped bound
#: is valid but 0.35-0.5 wide at eta = 0.5 in the binormal study; docs/statistics.md).
ROC_MAPPED_BANDS = ("pr_auc", "max_f1")
#: Legend label of those bands.
ROC_MAPPED_LABEL = "ROC band mapped (simultaneous over η; conservative)"
#: Legend entry of the part of an AP band that is not claimed.
NOT_VALID_LABEL = f"hatched: band not valid (< {MIN_FP_SUPPORT} FP support it)"
#: Pair/metric comparisons whose flips get a significance test (nearest the deployment
#: prevalences first); unpaired tests reuse the shared replicates and cost milliseconds.
MAX_SIGNIFICANCE = 100
#: Prevalences of the PR-AUC replicates (flip tests only: its band against η is the mapped ROC
#: band). PR-AUC's bootstrap kernel costs about linearly in them, and it was half the
#: bootstrap stage of a drawn run at 50.
PR_AUC_TEST_GRID = 20
#: Of those, comparisons that may use the (costlier, O(B n)) paired bootstrap of raw scores.
MAX_PAIRED = 12


def band_indices(n: int, num: int = BAND_GRID) -> np.ndarray:
    """Indices of about ``num`` evenly spread points of an ``n``-point grid, ends included."""
    return np.unique(np.round(np.linspace(0, n - 1, min(num, n))).astype(np.int64))


class _Uncertainty:
    """Intervals, bands and flip significance from :mod:`uncertainty` and :mod:`ranking`.

    Bootstrap work runs on counts thinned by :func:`uncertainty.thin_for_bootstrap` to about
    ``3 * BOOT_POINTS`` thresholds (log-FPR aware, so the low-FPR region that decides precision
    at small η keeps its resolution) -- the same thinning as the logging hook's headline
    intervals: the bootstrap then estimates the *spread*, and every band and interval is
    re-centred (:func:`uncertainty.recentre`, logit scale) on the exact estimate from the full
    counts. This keeps a report of 20 runs of 10^6 scores with 1000 replicates within seconds.
    ROC-AUC intervals are DeLong's (:func:`uncertainty.roc_auc_interval`): exact from the
    counts, no bootstrap needed.
    """

    rate_method = "clopper-pearson"

    def __init__(self, opts: Any, seed_for: Callable[..., np.random.SeedSequence]) -> None:
        self.opts = opts
        self.seed_for = seed_for
        self.notes: list[dict[str, str]] = []
        self._bands: dict[tuple, dict[str, tuple]] = {}
        self.band_labels: set[str] = set()
        self.n_sig = 0
        self.untested = 0
        self.thin_shift = 0.0
        self.n_rest = 0
        self.kernel_error = 0.0
        self.replicates: dict[str, dict[str, tuple]] = {}
        self.roc_bands: dict[str, Any] = {}
        self.support: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        #: per run and statistic, ``(exact values, replicates shifted onto them)`` at the
        #: run's table prevalences: the verdict's unpaired tests use them
        self.point_reps: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}

    def _thinning_text(self) -> str:
        return (
            f"each run's counts are thinned to ≈{BOOT_POINTS} thresholds per axis (TPR, TPR+FPR "
            f"and log FPR: between kept thresholds TPR moves < 1/{BOOT_POINTS}, FPR < "
            f"2/{BOOT_POINTS} and log10 FPR < 1/{BOOT_POINTS} of its range) before resampling"
            + (
                f" (≈{BOOT_POINTS_REST} for the {self.n_rest} runs outside the leading ones, "
                "whose table intervals only need the spread)"
                if self.n_rest
                else ""
            )
            + "; "
            f"thinning moved the AP / PR-AUC / max-F1 estimates by at most "
            f"{_fmt_e(self.thin_shift)} (largest over runs and band η), and every band and "
            "interval is re-centred on the exact value from the full counts; the AP and PR-AUC "
            f"kernels add at most {_fmt_e(max(self.kernel_error, 1e-300))} (linear deposit on a "
            "log-ratio grid, Simpson per ROC segment)"
        )

    @property
    def bands_note(self) -> str:
        """What the shaded bands are (rendered above the figures)."""
        b, conf = self.opts.n_bootstrap, self.opts.confidence
        if not b:
            return "Bootstrap disabled (--bootstrap 0): only the analytic P³ bands are drawn."
        return (
            f"Shaded: {conf:.0%} bands. ROC and metric-vs-η bands are simultaneous bootstrap "
            f"sup-t bands over their grid, all from one set of {b} count-bootstrap replicates per "
            "run; each PR band is the ROC band mapped through eq. 8 (valid at every recall and "
            "η at once), and so are the PR-AUC and max-F1 bands against η (the ROC band's "
            "envelope curves evaluated at every η: simultaneous over η, conservative, valid "
            "without false-positive support). The AP band (bootstrap sup-t) is not valid where "
            f"fewer than {MIN_FP_SUPPORT} false positives carry the estimate (drawn "
            f"hatched). Metric-vs-η bands are computed and drawn on {BAND_GRID} "
            "log-spaced η (the curves are smooth in log η), the curves themselves on the full "
            f"grid. Bootstrap resolution: {self._thinning_text()}. P³ bands come from one "
            "Koopman likelihood-ratio interval and hold at every η at once."
        )

    @property
    def flips_note(self) -> str:
        """How flips were tested, and which were not (rendered in the flips section)."""
        text = (
            "Significance: a bootstrap band for the difference D(η) = M_A(η) − M_B(η), "
            f"simultaneous over {BAND_GRID} log-spaced η of the range ({PR_AUC_TEST_GRID} for "
            "PR-AUC); a flip is significant "
            "only when the band excludes 0 with opposite signs on both sides. Paired (same "
            "examples) when both runs kept their scores on the same test set (at most "
            f"{MAX_PAIRED} paired comparisons); otherwise unpaired from each run's shared "
            "replicates, which is conservative for positively correlated scores. Budget: "
            f"{MAX_SIGNIFICANCE} pair/metric comparisons, those with flips nearest the "
            "deployment prevalences first."
        )
        if self.untested:
            text += (
                f" {self.untested} flip(s) beyond the budget were not tested (marked “Not tested”)."
            )
        return text

    def methods(self) -> list[dict[str, str]]:
        conf = f"{self.opts.confidence:.0%}"
        out = [
            {
                "what": "Precision at an operating point",
                "how": f"Koopman score interval ({conf}) for the likelihood ratio TPR/FPR, "
                "valid at every η at once (Brabec et al. eq. 8)",
            },
            {"what": "TPR / FPR", "how": f"Clopper–Pearson ({conf})"},
            {
                "what": "Sample-size adequacy",
                "how": "Brabec §5 box: Clopper–Pearson TPR and FPR at √confidence each",
            },
        ]
        if self.opts.n_bootstrap:
            m = MIN_FP_SUPPORT
            bad = self.unsupported()
            out.append(
                {
                    "what": "Bands",
                    "how": f"ROC: {conf} simultaneous bootstrap sup-t band with a binomial "
                    "(Jeffreys) scale floor for TPR. PR curves: that ROC band mapped through "
                    "eq. 8 (precision is monotone in FPR), so one band holds at every recall and "
                    "every η at once. PR-AUC and max-F1 against η: the same ROC band's lower and "
                    "upper envelope curves evaluated at each η (both metrics are monotone in the "
                    f"ROC curve): {ROC_MAPPED_LABEL}, valid at every η. AP against η: {conf} "
                    f"simultaneous sup-t band, NOT valid where fewer than {m} false positives "
                    "carry the estimate (drawn hatched). The table's AP / PR-AUC / max-F1 "
                    "intervals are bootstrap percentiles and print “interval not valid” there"
                    + (
                        ": " + "; ".join(f"{n} for η ≤ {_fmt_e(e)}" for n, e in bad.items())
                        if bad
                        else ": valid over the whole range here"
                    )
                    + ".",
                }
            )
            out.append({"what": "Bootstrap resolution", "how": self._thinning_text()})
            out.insert(
                1,
                {
                    "what": "AP, PR-AUC, max-F1, min cost",
                    "how": f"{conf} percentile intervals of a stratified count bootstrap "
                    f"({self.opts.n_bootstrap} replicates, seed {self.opts.seed}), pointwise",
                },
            )
        out.insert(
            1,
            {
                "what": "ROC-AUC",
                "how": f"DeLong variance computed exactly from the counts, {conf} Wald interval "
                "on the logit scale (Clopper–Pearson over disjoint pairs when the variance is "
                "0); no bootstrap. Runs whose intervals overlap the best run's are marked as "
                "ties.",
            },
        )
        return out

    def _seed(self, *parts: str) -> np.random.Generator:
        return np.random.default_rng(self.seed_for(self.opts.seed, *parts))

    def precision_interval(self, tp, fp, n_pos, n_neg, eta):
        iv = precision_interval(tp, fp, n_pos, n_neg, eta, confidence=self.opts.confidence)
        return float(iv.low), float(iv.high)

    def bootstrap(
        self, name, c, etas, grid, sweep, full: bool = True
    ) -> dict[tuple, tuple[float, float]]:
        """Table intervals, figure bands and flip-test replicates from ONE replicate set.

        One :func:`uncertainty.bootstrap_statistics` call per run (seeded per run) feeds every
        statistic: AP / PR-AUC / max-F1 at the table's prevalences (pointwise percentile
        intervals) and on the band grid (sup-t bands, and the replicates the flip tests
        reuse), minimum cost (percentile), the ROC band and the PR bands. ROC-AUC gets
        DeLong's interval (also without bootstrap; not for weighted counts). With
        ``full=False`` (runs not drawn and not in the flip table) only the table's
        prevalences are resampled: their intervals and the verdict's replicates.
        """
        out: dict[tuple, tuple[float, float]] = {}
        conf = self.opts.confidence
        auc = roc_auc_interval(c, conf)  # DeLong: exact from the counts, nearly free
        if auc.available:
            out[("roc_auc", None)] = (float(auc.low), float(auc.high))
        b = self.opts.n_bootstrap
        if not b or c.weighted:
            if b and c.weighted:
                self.notes.append(
                    {
                        "level": "info",
                        "title": "No bootstrap for weighted counts.",
                        "text": f"{name}: the count bootstrap needs integer counts.",
                    }
                )
            return out
        thin = thin_for_bootstrap(c, BOOT_POINTS if full else BOOT_POINTS_REST).counts
        self.n_rest += 0 if full else 1
        etas = np.asarray(etas, dtype=float)
        grid = np.asarray(grid, dtype=float)
        bidx = band_indices(grid.size)
        bgrid = grid[bidx]
        kidx = {
            key: band_indices(grid.size, PR_AUC_TEST_GRID if key == "pr_auc" else BAND_GRID)
            for key, _ in FLIP_METRICS
        }
        cfp, cfn = self.opts.cost_fp, self.opts.cost_fn
        stats: dict[str, Any] = {
            key: metric_statistic(
                thin, key, np.concatenate([etas, grid[kidx[key]]]) if full else etas
            )
            for key, _ in FLIP_METRICS
        }
        stats["cost"] = min_cost_statistic(thin, etas, cfp, cfn)
        if full:
            stats["roc"] = roc_statistic(thin)
        pr_etas = [None, *self.opts.prevalences]
        gen = self._seed(name, "shared")
        reps = bootstrap_statistics(thin, stats, b, gen)
        # false positives carrying AP / PR-AUC / max-F1 at each eta (full counts): the sup-t
        # bands and percentile intervals are claimed only where >= MIN_FP_SUPPORT
        fp_tab = _fp_support_eta(c, etas)
        fp_band = _fp_support_eta(c, bgrid)
        sup_band = fp_band >= MIN_FP_SUPPORT
        for j in range(etas.size):
            out[("fp_support", j)] = (float(fp_tab[j]), float(fp_tab[j]))
        self.support[name] = (bgrid, fp_band)
        ne = etas.size
        a = (1 - conf) / 2
        exact_band: dict[str, np.ndarray] = {}
        for key, _ in FLIP_METRICS:
            st = stats[key]
            self.kernel_error = max(self.kernel_error, st.max_error)
            est_thin = st.estimate(thin)
            r = reps[key]
            # table: pointwise percentile intervals, re-centred (logit) on the exact values
            exact = np.atleast_1d(_METRIC_FN[key](c, etas)).astype(float)
            band = band_from_replicates(
                est_thin[:ne], r[:, :ne], etas, confidence=conf, simultaneous=False
            )
            low, high = recentre(band, exact)
            for j in range(ne):
                out[(key, j)] = (float(low[j]), float(high[j]))
            self.point_reps.setdefault(name, {})[key] = (exact, r[:, :ne] + (exact - est_thin[:ne]))
            if not full:
                continue
            exact_b = np.asarray(sweep[key], dtype=float)[bidx]
            exact_band[key] = exact_b
            if key not in ROC_MAPPED_BANDS:
                # figures: sup-t band over the coarse log-eta grid, re-centred on the exact curve
                band = band_from_replicates(
                    est_thin[ne:],
                    r[:, ne:],
                    bgrid,
                    metric=key,
                    confidence=conf,
                    seed=self.opts.seed,
                )
                low, high = recentre(band, exact_b)
                label = f"{band.label}, on {bgrid.size} log-spaced η"
                self._bands.setdefault((key, None), {})[name] = (
                    bgrid,
                    low,
                    high,
                    label,
                    sup_band,
                    NOT_VALID_LABEL,
                )
            exact_r = np.asarray(sweep[key], dtype=float)[kidx[key]]
            shift = exact_r - est_thin[ne:]
            self.thin_shift = max(self.thin_shift, float(np.max(np.abs(shift))))
            # flip tests: this run's replicates on its test grid, shifted onto the exact curve
            self.replicates.setdefault(name, {})[key] = (
                grid[kidx[key]],
                exact_r,
                r[:, ne:] + shift,
            )
        # minimum expected cost: percentile, shifted onto the exact values
        exact = np.atleast_1d(_curves.optimal_operating_point(c, etas, cfp, cfn).cost)
        est_thin = stats["cost"].estimate(thin)
        lo_v = np.maximum(0.0, exact + np.quantile(reps["cost"], a, axis=0) - est_thin)
        hi_v = exact + np.quantile(reps["cost"], 1 - a, axis=0) - est_thin
        for j in range(ne):
            out[("cost", j)] = (float(lo_v[j]), float(hi_v[j]))
        self.point_reps.setdefault(name, {})["cost"] = (exact, reps["cost"] + (exact - est_thin))
        if not full:
            return out
        # ROC band: sup-t with the binomial (Jeffreys) scale floor for TPR, exactly the band of
        # uncertainty.roc_band (whose coverage tests/test_band_coverage.py checks)
        # (and its Jeffreys pseudo-negative floor at low FPR, drawn from the same generator)
        rb = band_from_replicates(
            stats["roc"].estimate(thin),
            reps["roc"],
            stats["roc"].grid,
            grid_name="fpr",
            metric="roc",
            confidence=conf,
            rate_n=thin.n_pos,
            min_scale=(roc_low_fpr_floor(thin, stats["roc"].grid, b, gen), 0.0),
            method="count bootstrap asymmetric sup-t over FPR grid (arcsine-sqrt scale, binomial "
            "scale floor, Jeffreys pseudo-negative floor at low FPR)",
        )
        self._bands.setdefault(("roc", None), {})[name] = (rb.grid, rb.low, rb.high, rb.label)
        self.roc_bands[name] = rb
        # PR-AUC and max-F1 against eta from the ROC band's envelope curves (both monotone in
        # the ROC curve): simultaneous over eta, no false-positive support needed, no hatching
        for key in ROC_MAPPED_BANDS:
            mb = prevalence_band_from_roc(rb, bgrid, key, estimate=exact_band[key])
            label = f"{rb.confidence:.0%} band, {ROC_MAPPED_LABEL}, on {bgrid.size} log-spaced η"
            self._bands.setdefault((key, None), {})[name] = (bgrid, mb.low, mb.high, label)
        # PR bands at every prevalence from the ROC band (Brabec eq. 8 is monotone in FPR):
        # simultaneous over recall AND prevalence, no false-positive support needed
        for e in pr_etas:
            pb = pr_band_from_roc(rb, c.prevalence if e is None else e)
            label = f"{rb.confidence:.0%} simultaneous band (ROC band mapped through eq. 8)"
            self._bands.setdefault(("pr", e), {})[name] = (pb.grid, pb.low, pb.high, label)
        return out

    def p3_band(self, name: str, c: RocCounts, tp: float, fp: float, grid: np.ndarray) -> None:
        band = p3_band(tp, fp, c.n_pos, c.n_neg, grid, confidence=self.opts.confidence)
        self._bands.setdefault(("p3", None), {})[name] = (
            band.grid,
            band.low,
            band.high,
            band.label,
        )

    def adequacy(self, c, tp, fp, eta):
        """Brabec §5 at the operating point: relative width and the test-set size needed."""
        if c.weighted or tp <= 0:
            return None
        fpr = float(fp) / c.n_neg
        tpr = float(tp) / c.n_pos
        prec = float(_curves.p3_curve(tpr, fpr, float(eta)))
        lo, hi = self.precision_interval(tp, fp, c.n_pos, c.n_neg, eta)
        rel = (hi - lo) / 2 / prec if prec > 0 else math.inf
        need_neg = need_pos = None
        fpr_eff = fpr if fpr > 0 else 1.0 / c.n_neg
        try:
            need = required_sample_size(
                min(tpr, 1.0), min(fpr_eff, 0.5), ADEQUACY_TOLERANCE, self.opts.confidence
            )
            need_neg, need_pos = need.n_neg, need.n_pos
        except ValueError:
            pass
        ok = rel <= ADEQUACY_TOLERANCE
        text = (
            ""
            if ok
            else (
                f"{fp:.0f} false positive{'' if fp == 1 else 's'} at this point: precision is "
                f"known only to ±{rel:.0%}."
                if math.isfinite(rel)
                else "no precision estimate"
            )
        )
        return {
            "rel_width": rel,
            "need_neg": need_neg,
            "need_pos": need_pos,
            "ok": ok,
            "text": text,
        }

    def unsupported(self) -> dict[str, float]:
        """Per run, the largest band η at which fewer than MIN_FP_SUPPORT FPs carry AP.

        The table's AP / PR-AUC / max-F1 percentile intervals are not valid there either.
        """
        out = {}
        for name, (bgrid, fp) in self.support.items():
            bad = fp < MIN_FP_SUPPORT
            if bad.any():
                out[name] = float(bgrid[bad].max())
        return out

    def support_caption(self, key: str = "ap") -> str:
        """Where the metric-vs-η band of ``key`` is not valid, and why (figure caption)."""
        if not self.opts.n_bootstrap:
            return ""
        if key in ROC_MAPPED_BANDS:
            return (
                f"Band: the ROC band mapped to η ({ROC_MAPPED_LABEL}); valid at every η, with "
                "no false-positive support needed (docs/statistics.md)."
            )
        bad = self.unsupported()
        m = MIN_FP_SUPPORT
        if not bad:
            return f"Bands valid over the whole range (≥ {m} false positives carry every point)."
        where = "; ".join(f"{n}: η ≤ {_fmt_e(e)}" for n, e in bad.items())
        return (
            f"Hatched, very light: band NOT valid — fewer than {m} false positives carry the "
            f"estimate there ({where}); the estimate is biased upwards and the bootstrap cannot "
            "create unseen false positives (docs/statistics.md, “Coverage”). Use the P³ band "
            "(exact) for low-η claims."
        )

    def bands_for(self, key, eta=None):
        return self._bands.get((key, eta)) or None

    def sample_size_curves(self, counts: Mapping[str, RocCounts]) -> dict[str, tuple]:
        """Relative half-width (CV) of the FPR interval against FPR, per run (Brabec §5)."""
        out = {}
        for name, c in counts.items():
            if c.weighted:
                continue
            fpr = np.geomspace(max(1.0 / c.n_neg, 1e-7), 0.5, 60)
            out[name] = (fpr, expected_rate_cv(fpr, c.n_neg, self.opts.confidence))
        return out

    def significance(self, table, runs, point, anchors) -> dict[tuple, dict[str, Any]]:
        """Bootstrap significance of every flip of ``table``, within a documented budget.

        Flips are ordered by their distance (in log η) to the nearest deployment prevalence
        (the test prevalence when none is chosen), and the pair/metric comparisons holding
        them are tested in that order, up to :data:`MAX_SIGNIFICANCE` comparisons. Unpaired
        tests reuse each run's shared replicates (``reps_A - reps_B``: no new resampling);
        a paired test (both runs' raw scores on the same examples) draws its own paired
        resamples and is limited to :data:`MAX_PAIRED` comparisons, the rest falling back to
        the unpaired test with a note. Flips beyond the budget say so.
        """
        from mlflow_imbalance.stats.flip_significance import (
            flip_significance,
            flip_significance_from_replicates,
        )

        out: dict[tuple, dict[str, Any]] = {}
        flips = table.all_flips()
        if not flips:
            return out
        n_boot = self.opts.n_bootstrap
        log_anchor = np.log(np.asarray(anchors, dtype=float))

        def dist(eta: float) -> float:
            return float(np.min(np.abs(log_anchor - math.log(eta))))

        ranked = sorted(flips, key=lambda f: (dist(f[3]), f[3], f[0], f[1]))
        order = list(dict.fromkeys((a, b, key) for a, b, key, _ in ranked))
        conf = self.opts.confidence
        n_paired = 0
        for rank, (a, b, key) in enumerate(order):
            fps = table.flips[(a, b, key)]
            ra, rb = runs[a], runs[b]

            def each(d: dict[str, Any], fps=fps, a=a, b=b, key=key) -> None:
                for k in range(len(fps)):
                    out[(a, b, key, k)] = dict(d)

            if not n_boot:
                each({"significant": None, "text": "Not tested: bootstrap off."})
                continue
            if ra.counts.weighted or rb.counts.weighted:
                each({"significant": None, "text": "Not tested: weighted counts."})
                continue
            if rank >= MAX_SIGNIFICANCE:
                self.untested += len(fps)
                each(
                    {
                        "significant": None,
                        "text": f"Not tested: beyond the budget of {MAX_SIGNIFICANCE} "
                        "pair/metric comparisons, which go to the flips nearest the deployment "
                        "prevalences first.",
                    }
                )
                continue
            paired = (
                ra.digest is not None
                and ra.digest == rb.digest
                and ra.scores is not None
                and rb.scores is not None
                and np.array_equal(np.asarray(ra.scores[0]), np.asarray(rb.scores[0]))
            )
            extra = ""
            res = None
            bgrid, ex_a, rep_a = self.replicates[a][key]
            if paired and n_paired < MAX_PAIRED:
                n_paired += 1
                try:
                    res = flip_significance(
                        metric=key,
                        prevalences=bgrid,
                        y_true=ra.scores[0],
                        score_a=ra.scores[1],
                        score_b=rb.scores[1],
                        n_boot=n_boot,
                        confidence=conf,
                        seed=self._seed(a, b, key, "flip"),
                    )
                except (ValueError, TypeError) as exc:
                    extra = f" (paired test failed: {exc}; unpaired used)"
            elif paired:
                extra = (
                    f" Paired test skipped (budget of {MAX_PAIRED} paired comparisons); the "
                    "unpaired test is conservative."
                )
            if res is None:
                _, ex_b, rep_b = self.replicates[b][key]
                inside = [e for e in fps if bgrid[0] < e < bgrid[-1]]
                res = flip_significance_from_replicates(
                    ex_a - ex_b,
                    rep_a - rep_b,
                    bgrid,
                    inside,
                    metric=key,
                    confidence=conf,
                    paired=False,
                    note="unpaired: each run's own count-bootstrap replicates (shared with its "
                    "intervals and bands); conservative for positively correlated scores",
                )
            self.n_sig += 1
            how = (
                "paired bootstrap on the shared examples"
                if res.paired
                else "unpaired bootstrap (conservative)"
            )
            p_text = (
                f" P({a} better) ranges {float(np.min(res.prob_a_better)):.2f}–"
                f"{float(np.max(res.prob_a_better)):.2f} over the range."
            )
            for k, eta_star in enumerate(fps):
                if not len(res.flips):
                    out[(a, b, key, k)] = {
                        "significant": False,
                        "tested": True,
                        "text": "The bootstrap band of D(η) finds no clear crossing: the flip "
                        "is within noise. " + res.note + extra,
                    }
                    continue
                i = int(np.argmin(np.abs(np.log(np.asarray(res.flips)) - math.log(eta_star))))
                sig = bool(res.significant[i])
                lo, hi = res.flip_intervals[i]
                out[(a, b, key, k)] = {
                    "significant": sig,
                    "tested": True,
                    "eta_ci_text": f"[{_fmt_e(lo)}, {_fmt_e(hi)}]",
                    "text": ("Significant" if sig else "Not significant")
                    + f" at {conf:.0%} ({how}, {res.n_boot} replicates)."
                    + p_text
                    + (" " + res.note if res.note else "")
                    + extra,
                }
        return out
