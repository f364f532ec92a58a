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
    cost_point,
    too_small_to_test,
)
from mlflow_imbalance.report.analysis.draws import draw_statistics, live_cost_grid, live_limits
from mlflow_imbalance.report.analysis.methods_section import (
    bootstrap_rows,
    comparison_row,
    coverage_row,
    fixed_threshold_rows,
    operating_point_row,
    roc_auc_row,
)
from mlflow_imbalance.report.analysis.paired import SharedReplicates
from mlflow_imbalance.stats.auc import roc_auc_interval
from mlflow_imbalance.stats.bands import (
    band_from_replicates,
    p3_band,
    pr_band_from_roc,
)
from mlflow_imbalance.stats.bootstrap import (
    bootstrap_counts,
    bootstrap_statistics,
    metric_statistic,
)
from mlflow_imbalance.stats.coverage import (
    rule_inputs,
    undercover_caption,
    undercover_text,
    undercovers,
)
from mlflow_imbalance.stats.decision import (
    CandidateLimits,
    candidate_limits,
    selected_point_interval,
)
from mlflow_imbalance.stats.headline import (
    BOOTSTRAP_POINTS,
    HeadlineIntervals,
    headline_intervals,
    recentre,
    thin_for_bootstrap,
)
from mlflow_imbalance.stats.intervals import precision_interval
from mlflow_imbalance.stats.posterior import band_from_draws
from mlflow_imbalance.stats.sample_size import expected_rate_cv, required_sample_size

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- uncertainty
#: Thresholds kept (per log-aware bin family) in the counts that the bootstrap resamples
#: (:func:`uncertainty.thin_for_bootstrap`; the logging hook uses the same
#: :data:`~mlflow_imbalance.stats.headline.BOOTSTRAP_POINTS`, chosen by measurement): every
#: run's Bayesian draws are the hook's, on these counts.
BOOT_POINTS = BOOTSTRAP_POINTS
#: Prevalences of the Bayesian bands drawn in the metric-vs-η figures and of the flip tests (a
#: subset of the report's η grid, log-spaced; the curves are smooth in log η, so the band is
#: drawn there and the browser interpolates in log η).
BAND_GRID = 30
#: Count-bootstrap replicates per drawn run for the unpaired flip tests (the construction and
#: replicate number of ``bench_band_coverage.py --flips``, whose level and power it has).
FLIP_BOOTSTRAP = 200
#: Count-bootstrap replicates of a run outside the leading ones for the verdict's and the
#: tables' unpaired tests (they only need the variance of its estimate: its s.d. to ±5 % at
#: 200; a leading run reuses all of its ROC band's replicates).
REST_TEST_BOOTSTRAP = 200
#: Pair/metric comparisons whose flips get a significance test (nearest the deployment
#: prevalences first); unpaired tests reuse the shared replicates and cost milliseconds.
MAX_SIGNIFICANCE = 100
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
    intervals: the draws then estimate the *spread*, and every band and interval is
    re-centred (:func:`uncertainty.recentre`, logit scale) on the exact estimate from the full
    counts. AP, PR-AUC and max-F1 (table intervals, bands against η, the tests' variances),
    minimum cost (table intervals, the live verdict's limits) and the ROC band's low-FPR floor
    come from ONE set of Bayesian count-bootstrap draws per run -- the logging hook's draws
    (:func:`~mlflow_imbalance.stats.headline.headline_intervals`, seeded by the report's seed),
    the construction of :func:`uncertainty.prevalence_band`, given at every η (stretches in a
    measured under-covering regime are marked, :mod:`stats.coverage`); the ROC band keeps its
    count-bootstrap sup-t construction (:func:`uncertainty.roc_band`), whose replicates also
    serve the flip tests and the tests' variances. Measured (``benchmarks/bench_report.py``,
    B = 1000; docs/architecture.md). ROC-AUC intervals are DeLong's
    (:func:`uncertainty.roc_auc_interval`): exact from the counts, no bootstrap needed.
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
        self.kernel_error = 0.0
        #: per leading run (with costs), ``(prevalences, low, high)`` of its lowest expected
        #: cost on :func:`live_cost_grid`, from its draws (:meth:`live_cost_limits`)
        self._live_cost: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.replicates: dict[str, dict[str, tuple]] = {}
        self._flip_source: dict[str, tuple[RocCounts, np.ndarray, np.ndarray]] = {}
        self.roc_bands: dict[str, Any] = {}
        self._selected_cache: dict[tuple, tuple] = {}
        self._limits_cache: dict[str, CandidateLimits] = {}
        #: per run and statistic, ``(exact values, variance of the estimate)`` at the run's
        #: table prevalences (the larger of the count-bootstrap and the Bayesian-draw
        #: variance): the verdict's and the tables' unpaired tests use them
        self.point_reps: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        #: paired replicates of the leading runs scored on the same examples (set by the
        #: context before the verdict): the verdict's and the tables' paired tests use them
        self.shared: SharedReplicates | None = None
        self._precision_cache: dict[tuple[float, ...], tuple[float, float]] = {}
        #: the measured under-coverage rule (stats/coverage.py), shared with the hook and the
        #: card: per (run, metric, j) of the table's prevalences the reason of a flagged
        #: interval (also in the run's bootstrap dict under ``("undercovers", metric, j)``),
        #: per (metric, run) the band-grid η flagged (drawn hatched by charts.py)
        self.undercover: dict[tuple[str, str, int], str] = {}
        self.undercover_bands: dict[tuple[str, str], np.ndarray] = {}

    def _thinning_text(self) -> str:
        return (
            f"each run's counts are thinned to ≈{BOOT_POINTS} thresholds per axis (TPR, TPR+FPR "
            f"and log FPR: between kept thresholds TPR moves < 1/{BOOT_POINTS}, FPR < "
            f"2/{BOOT_POINTS} and log10 FPR < 1/{BOOT_POINTS} of its range) before resampling, "
            "as the logging hook's; "
            f"thinning moved the AP / PR-AUC / max-F1 estimates by at most "
            f"{_fmt_e(self.thin_shift)} (largest over runs and band η), and every band and "
            "interval is re-centred on the exact value from the full counts; the AP and PR-AUC "
            f"kernels add at most {_fmt_e(max(self.kernel_error, 1e-300))} (linear deposit on a "
            "log-ratio grid, Simpson per ROC segment)"
        )

    @property
    def bands_note(self) -> str:
        """What the shaded bands are (rendered in the methods section)."""
        b, conf = self.opts.n_bootstrap, self.opts.confidence
        if not b:
            return "Bootstrap disabled (--bootstrap 0): only the analytic P³ bands are drawn."
        return (
            f"Shaded: {conf:.0%} bands. AP, PR-AUC and max-F1 against η: simultaneous credible "
            f"bands of the Bayesian count bootstrap ({b} draws per run; see “AP, PR-AUC, "
            "max-F1” above), valid at every η of the range, computed and drawn on "
            f"{BAND_GRID} log-spaced η (the curves themselves on the full grid). ROC: "
            "count-bootstrap sup-t band over FPR. Each PR band is that ROC band mapped "
            "through eq. 8 (valid at every recall and η at once). P³ bands come from one "
            "Koopman likelihood-ratio interval and hold at every η at once."
        )

    @property
    def flips_note(self) -> str:
        """How flips were tested, and which were not (rendered in the flips section)."""
        text = (
            "Significance: an intersection-union test on the difference D(η) = M_A(η) − "
            f"M_B(η) over {BAND_GRID} log-spaced η of the range: a flip is significant when a "
            "one-sided bootstrap max test shows D > 0 somewhere on one side of it and D < 0 "
            "somewhere on the other. Paired (same examples) when both runs kept their scores "
            f"on the same test set (at most {MAX_PAIRED} paired comparisons, count bootstrap "
            "of the shared examples); otherwise unpaired from each run's own count-bootstrap "
            f"replicates ({FLIP_BOOTSTRAP} per run), which is conservative for positively "
            "correlated scores (measured at 200 positives: false alarms 0.027 where D is 0 on "
            "one side, power 0.64 for a real crossing). Budget: "
            f"{MAX_SIGNIFICANCE} pair/metric "
            "comparisons, those with flips nearest the deployment prevalences first."
        )
        if self.untested:
            text += (
                f" {self.untested} flip(s) beyond the budget were not tested (marked “Not tested”)."
            )
        return text

    @property
    def undercover_note(self) -> str:
        """One line saying which bands / intervals are marked and why ("" when none is)."""
        if not (self.undercover or self.undercover_bands):
            return ""
        runs = sorted({r for r, _, _ in self.undercover} | {r for _, r in self.undercover_bands})
        top = [float(np.max(v)) for v in self.undercover_bands.values()]
        return undercover_caption(runs, max(top) if top else None)

    def methods(self) -> list[dict[str, str]]:
        """The methods section's rows (``what``, ``how``), in the order they are shown."""
        conf = f"{self.opts.confidence:.0%}"
        boot = (
            bootstrap_rows(self.opts, conf, self._thinning_text()) if self.opts.n_bootstrap else []
        )
        return [
            operating_point_row(conf),
            roc_auc_row(conf),
            *boot[:2],  # AP, PR-AUC and max-F1; minimum expected cost
            *fixed_threshold_rows(conf),
            *boot[2:],  # the ROC band; the bootstrap's resolution
            comparison_row(),
            coverage_row(),
            *(
                [{"what": "Marked ≈ / grey dashed", "how": self.undercover_note, "caption": "1"}]
                if self.undercover_note
                else []
            ),
        ]

    def _seed(self, *parts: str) -> np.random.Generator:
        return np.random.default_rng(self.seed_for(self.opts.seed, *parts))

    def candidate_limits(self, name: str, c: RocCounts) -> CandidateLimits | None:
        """The run's simultaneous TPR/FPR limits at the candidate thresholds (memoised).

        They serve the operating point at every prevalence: the verdict and tables here, and
        the page's prevalence control, which embeds them. None for weighted counts.
        """
        if c.weighted:
            return None
        hit = self._limits_cache.get(name)
        if hit is None:
            hit = self._limits_cache[name] = candidate_limits(c, self.opts.confidence)
        return hit

    def selected_interval(
        self, name: str, c: RocCounts, threshold: float, eta: float
    ) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """Precision and recall bounds at the operating point, valid after its choice (memoised).

        The operating point (max-F1 or lowest-cost threshold) is chosen on these counts, so a
        pointwise interval there under-covers (0.85-0.94 measured at the max-F1 point);
        :func:`~mlflow_imbalance.stats.decision.selected_point_interval` bounds TPR and FPR at
        every threshold at once (the logging hook's intervals too, so card and report agree).
        None for weighted counts or a threshold that flags nothing.
        """
        if c.weighted or not math.isfinite(float(threshold)):
            return None
        key = (name, float(threshold), float(eta))
        hit = self._selected_cache.get(key)
        if hit is None:
            k = int(np.searchsorted(-c.thresholds, -float(threshold)))
            lim = self.candidate_limits(name, c)
            sp = selected_point_interval(c, k, float(eta), self.opts.confidence, limits=lim)
            hit = self._selected_cache[key] = (
                (float(sp.precision_low), float(sp.precision_high)),
                (float(sp.recall_low), float(sp.recall_high)),
            )
        return hit

    def precision_interval(self, tp, fp, n_pos, n_neg, eta):
        """Koopman interval of precision at an operating point (memoised).

        The table and the adequacy check ask for the same point.
        """
        key = (float(tp), float(fp), float(n_pos), float(n_neg), float(eta))
        hit = self._precision_cache.get(key)
        if hit is None:
            iv = precision_interval(tp, fp, n_pos, n_neg, eta, confidence=self.opts.confidence)
            hit = self._precision_cache[key] = (float(iv.low), float(iv.high))
        return hit

    def bootstrap(
        self, name, c, etas, grid, sweep, full: bool = True
    ) -> dict[tuple, tuple[float, float]]:
        """Table intervals, figure bands and the tests' variances from ONE Bayesian draw set.

        One :func:`~mlflow_imbalance.stats.headline.headline_intervals` call per run -- the
        logging hook's function, draws and seed (:meth:`table_intervals`) -- gives the intervals
        printed in the tables and the verdict (so they equal the run card's and
        ``summary.json``'s under the same settings) and, on the same draws, every other
        Bayesian statistic of the run: AP / PR-AUC / max-F1 at the table's prevalences (the
        Bayesian half of the verdict's and the tables' test variances) and, when ``full``, on
        the band grid (simultaneous credible bands, exactly the construction of
        :func:`~mlflow_imbalance.stats.prevalence_bands.prevalence_band`), the ROC band's
        low-FPR floor and, with costs, the live verdict's cost limits
        (:meth:`live_cost_limits`). The draws of a run depend on its counts and the report's
        B and seed only. The count-bootstrap replicates (the other half of the test variances;
        when ``full`` also the ROC band's and the unpaired flip tests') come from the run's
        own stream (``seed_for(seed, run, ...)``). The ROC band itself stays the count-bootstrap
        sup-t band of :func:`~mlflow_imbalance.stats.bands.roc_band`. ROC-AUC gets DeLong's
        interval (also without bootstrap; not for weighted counts). With ``full=False`` (runs
        not drawn and not in the flip table) only the table's prevalences are drawn: their
        intervals and the tests' variances.
        """
        out: dict[tuple, tuple[float, float]] = {}
        auc = roc_auc_interval(c, self.opts.confidence)  # DeLong: exact, nearly free
        if auc.available:
            out[("roc_auc", None)] = (float(auc.low), float(auc.high))
        b = self.opts.n_bootstrap
        if not b or c.weighted:  # weighted: point estimates only (one note for all runs)
            return out
        thin = thin_for_bootstrap(c, BOOT_POINTS).counts  # the hook's (table_intervals')
        etas = np.asarray(etas, dtype=float)
        grid = np.asarray(grid, dtype=float)
        bidx = band_indices(grid.size)
        bgrid = grid[bidx]
        live = live_cost_grid(grid) if full and self.opts.costs_given else None
        extra, extra_base, tests_stat = draw_statistics(thin, etas, bgrid, live, full, self.opts)
        if full:
            roc_reps, tests = self._count_bootstrap(
                name, thin, extra["roc"], tests_stat, b, self._seed(name, "shared")
            )
        else:
            tests = bootstrap_statistics(
                thin, tests_stat, min(b, REST_TEST_BOOTSTRAP), self._seed(name, "tests")
            )
        table = self.table_intervals(c, etas, extra=extra, extra_base_for=extra_base)
        draws = table.draws
        # the under-coverage rule's inputs, once for the three metrics
        rule = rule_inputs(c, np.concatenate([etas, bgrid]) if full else etas)
        rule_t = {k: v[: etas.size] for k, v in rule.items()}
        rule_b = {k: v[etas.size :] for k, v in rule.items()}
        for key, _ in FLIP_METRICS:
            out.update(self._table_intervals(name, c, key, table, tests, etas, rule_t))
            if full:
                st = extra[f"band:{key}"]
                self.kernel_error = max(self.kernel_error, st.max_error)
                exact_b = np.asarray(sweep[key], dtype=float)[bidx]
                self._figure_band(
                    name, key, st.estimate(thin), draws[f"band:{key}"],
                    draws.get(f"band:{key}:base"), bgrid, exact_b,
                )  # fmt: skip
                flag = undercovers(c, key, bgrid, inputs=rule_b)
                if flag.any():
                    self.undercover_bands[(key, name)] = bgrid[flag]
        out.update(self._cost_intervals(name, c, table, tests, etas))
        if full:
            self._roc_pr_bands(name, c, thin, extra["roc"], draws["roc"], roc_reps)
        if live is not None:
            self._live_cost[name] = live_limits(c, thin, live, extra["live:cost"], draws, self.opts)
        return out

    def live_cost_limits(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(prevalences, low, high)`` of a leading run's lowest expected cost (live verdict).

        :func:`~mlflow_imbalance.stats.robust.lowest_cost_limits` on :func:`live_cost_grid`
        with the report's costs, B, seed and confidence, value for value, from the draws the
        run's table intervals were made from (that function draws them again). None for a run
        without them (not leading, no costs or replicates, weighted counts, or its intervals
        failed).
        """
        return self._live_cost.get(name)

    def _count_bootstrap(
        self, name: str, thin: RocCounts, roc_stat: Any, pt: Mapping[str, Any], b: int, gen: Any
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(ROC replicates, the tests' replicates by statistic)`` of one drawn run.

        The ROC band's count-bootstrap replicates, which also give the tests' replicates; the
        first FLIP_BOOTSTRAP of them also give the unpaired flip tests theirs (kept for
        :meth:`flip_replicates`): the construction of flip_significance, whose level is
        measured (median-centred Bayesian draws were not valid for this test:
        docs/statistics.md).
        """
        roc_parts: list[np.ndarray] = []
        pt_parts: dict[str, list[np.ndarray]] = {key: [] for key in pt}
        kept: list[tuple[np.ndarray, np.ndarray]] = []
        need = min(b, FLIP_BOOTSTRAP)
        for tp_r, fp_r in bootstrap_counts(thin, b, gen):
            tpf, fpf = tp_r.astype(float), fp_r.astype(float)
            roc_parts.append(roc_stat(tpf, fpf))
            for key, st in pt.items():
                pt_parts[key].append(np.asarray(st(tpf, fpf), dtype=float))
            k = min(need, tpf.shape[0])
            if k > 0:
                kept.append((tpf[:k].copy(), fpf[:k].copy()))
                need -= k
        # the flip metrics are evaluated on them only for the runs and metrics tested
        self._flip_source[name] = (
            thin,
            np.concatenate([t for t, _ in kept], axis=0),
            np.concatenate([f for _, f in kept], axis=0),
        )
        tests = {key: np.concatenate(v, axis=0) for key, v in pt_parts.items()}
        return np.concatenate(roc_parts, axis=0), tests

    def table_intervals(
        self,
        c: RocCounts,
        etas: np.ndarray,
        extra: Mapping[str, Any] | None = None,
        extra_base_for: tuple[str, ...] = (),
    ) -> HeadlineIntervals:
        """A run's table intervals at ``etas``: the logging hook's construction and draws.

        :func:`~mlflow_imbalance.stats.headline.headline_intervals` -- the function behind the
        run card's and ``summary.json``'s intervals -- with the report's replicates, seed,
        confidence and costs: AP, PR-AUC and max-F1 (pointwise equal-tailed, max-F1 re-centred
        for its selection bias) and the lowest expected cost (:func:`~mlflow_imbalance.stats.
        posterior.min_cost_interval`, capped at the cost of flagging nothing or everything),
        from one Bayesian count-bootstrap draw set on the counts thinned to
        :data:`BOOT_POINTS` per axis, seeded by the report's seed alone. So the intervals of a
        run depend on that run's counts and the settings only (not on the other runs, their
        order, or whether the run is drawn), every η's interval is the same whichever other η
        are asked (pointwise: one draw set, a column per η), and a run logged with the same
        ``n_bootstrap``, seed, confidence and costs gets the card's numbers, to the digit.
        ``extra`` statistics of the thinned counts (:meth:`bootstrap`'s bands, ROC floor and
        live cost limits) are evaluated on the same draws, which they do not change
        (``HeadlineIntervals.draws``).
        """
        o = self.opts
        exact = {key: np.atleast_1d(_METRIC_FN[key](c, etas)) for key, _ in FLIP_METRICS}
        exact["cost"] = np.atleast_1d(cost_point(c, etas, o).cost)
        return headline_intervals(
            c, etas, exact=exact, n_boot=o.n_bootstrap, seed=o.seed, confidence=o.confidence,
            points=BOOT_POINTS, costs=(o.cost_fp, o.cost_fn), extra=extra,
            extra_base_for=extra_base_for,
        )  # fmt: skip

    def _table_intervals(
        self, name, c, key, table, tests, etas, rule
    ) -> dict[tuple, tuple[float, float]]:
        """``{(key, j): (low, high)}``: the run's :meth:`table_intervals` of ``key``.

        Also records the run's exact values and the variance of its estimate (the larger of
        its count-bootstrap replicates' ``tests`` and its Bayesian draws', the table's) for the
        verdict's and the tables' tests (``point_reps``), and the measured under-coverage flags
        (``rule``: the rule's inputs at ``etas``).
        """
        ne = etas.size
        exact = np.atleast_1d(_METRIC_FN[key](c, etas)).astype(float)
        low, high = table.intervals[key].T
        self.point_reps.setdefault(name, {})[key] = (
            exact,
            np.maximum(
                np.var(tests[key], axis=0, ddof=1), np.var(table.draws[key], axis=0, ddof=1)
            ),
        )
        out: dict[tuple, Any] = {(key, j): (float(low[j]), float(high[j])) for j in range(ne)}
        for j in np.flatnonzero(undercovers(c, key, etas, inputs=rule)):
            why = undercover_text(c, key, float(etas[j]))
            self.undercover[(name, key, int(j))] = why
            out[("undercovers", key, int(j))] = why
        return out

    def _figure_band(self, name, key, est_thin, draws, base, bgrid, exact_b) -> None:
        """Store the simultaneous credible band of ``key`` over the band grid (the figures').

        The band of prevalence_band from the draws ``draws`` (``base``: the same without the
        pseudo-negative, max-F1's) on the band grid, re-centred on the exact curve ``exact_b``;
        also records how far thinning moved the estimate, and the run's exact curve for the
        flip tests.
        """
        band = band_from_draws(
            est_thin, draws, bgrid, metric=key, base=base, confidence=self.opts.confidence,
            seed=self.opts.seed,
        )  # fmt: skip
        low, high = recentre(band, exact_b)
        label = f"{band.label}, on {bgrid.size} log-spaced η"
        self._bands.setdefault((key, None), {})[name] = (bgrid, low, high, label)
        shift = exact_b - est_thin
        self.thin_shift = max(self.thin_shift, float(np.max(np.abs(shift))))
        self.replicates.setdefault(name, {})[key] = (bgrid, exact_b, None)

    def _cost_intervals(self, name, c, table, tests, etas) -> dict[tuple, tuple[float, float]]:
        """``{("cost", j): (low, high)}``: the minimum expected cost's intervals at the table's η.

        The run's :meth:`table_intervals` (the lowest cost over thresholds is biased down,
        which :func:`~mlflow_imbalance.stats.posterior.min_cost_interval` allows for); records
        the exact values and the variance of the estimate for the tests, as
        :meth:`_table_intervals`.
        """
        exact = np.atleast_1d(cost_point(c, etas, self.opts).cost)
        lo_v, hi_v = table.intervals["cost"].T
        var = np.maximum(
            np.var(tests["cost"], axis=0, ddof=1), np.var(table.draws["cost"], axis=0, ddof=1)
        )
        self.point_reps.setdefault(name, {})["cost"] = (exact, var)
        return {("cost", j): (float(lo_v[j]), float(hi_v[j])) for j in range(etas.size)}

    def _roc_pr_bands(self, name, c, thin, roc, roc_draws, roc_reps) -> None:
        """Store the run's ROC band and its PR bands at the test and every chosen prevalence.

        The ROC band: count-bootstrap sup-t with the binomial (Jeffreys) scale floor for TPR
        and the low-FPR floor from the Bayesian draws ``roc_draws``: the band of
        uncertainty.roc_band (whose coverage tests/test_band_coverage.py checks). The PR bands
        come from it (Brabec eq. 8 is monotone in FPR): simultaneous over recall AND prevalence.
        """
        est_roc = roc.estimate(thin)
        g_est = np.arcsin(np.sqrt(np.clip(est_roc, 0.0, 1.0)))
        q16 = np.quantile(np.arcsin(np.sqrt(np.clip(roc_draws, 0.0, 1.0))), 0.158655, axis=0)
        rb = band_from_replicates(
            est_roc,
            roc_reps,
            roc.grid,
            grid_name="fpr",
            metric="roc",
            confidence=self.opts.confidence,
            rate_n=thin.n_pos,
            min_scale=(np.maximum(g_est - q16, 0.0), 0.0),
            method="count bootstrap asymmetric sup-t over FPR grid (arcsine-sqrt scale, binomial "
            "scale floor, Jeffreys pseudo-negative floor at low FPR)",
        )
        self._bands.setdefault(("roc", None), {})[name] = (rb.grid, rb.low, rb.high, rb.label)
        self.roc_bands[name] = rb
        for e in [None, *self.opts.prevalences]:
            pb = pr_band_from_roc(rb, c.prevalence if e is None else e)
            label = f"{rb.confidence:.0%} simultaneous band (ROC band mapped through eq. 8)"
            self._bands.setdefault(("pr", e), {})[name] = (pb.grid, pb.low, pb.high, label)

    def flip_replicates(self, name: str, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(band grid, exact curve, replicates)`` of ``key`` for the unpaired flip tests.

        The metric on the run's first :data:`FLIP_BOOTSTRAP` count-bootstrap replicates (kept
        by :meth:`bootstrap`), shifted onto the exact curve; evaluated once, when first asked.
        """
        grid, exact, reps = self.replicates[name][key]
        if reps is None:
            thin, tpf, fpf = self._flip_source[name]
            st = metric_statistic(thin, key, grid)
            reps = st(tpf, fpf) - st.estimate(thin) + exact
            self.replicates[name][key] = (grid, exact, reps)
        return grid, exact, reps

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
        # the false positives behind the width have their own column
        text = "" if ok or math.isfinite(rel) else "no precision estimate"
        return {
            "rel_width": rel,
            "fp": float(fp),
            "need_neg": need_neg,
            "need_pos": need_pos,
            "ok": ok,
            "text": text,
        }

    def support_caption(self, key: str = "ap") -> str:
        """What the metric-vs-η band of ``key`` is (figure caption)."""
        if not self.opts.n_bootstrap:
            return ""
        return (
            "Band: simultaneous credible band of the Bayesian count bootstrap, valid at every "
            "η of the range (see “How these numbers are computed”)."
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
        out: dict[tuple, dict[str, Any]] = {}
        flips = table.all_flips()
        if not flips:
            return out
        n_paired = 0
        for rank, (a, b, key) in enumerate(_nearest_first(flips, anchors)):
            fps = table.flips[(a, b, key)]
            ra, rb = runs[a], runs[b]
            why = self._why_untested(a, ra.counts, b, rb.counts, rank, len(fps))
            if why:
                for k in range(len(fps)):
                    out[(a, b, key, k)] = {"significant": None, "text": why}
                continue
            paired = _same_examples(ra, rb)
            budget_left = n_paired < MAX_PAIRED
            n_paired += int(paired and budget_left)
            res, extra = self._flip_test(a, b, key, ra, rb, fps, paired, budget_left)
            self.n_sig += 1
            entries = _flip_entries(res, fps, a, self.opts.confidence, extra)
            for k, entry in enumerate(entries):
                out[(a, b, key, k)] = entry
        return out

    def _why_untested(
        self, a: str, ca: RocCounts, b: str, cb: RocCounts, rank: int, n_flips: int
    ) -> str:
        """Why the ``rank``-th comparison, runs ``a`` and ``b``, goes untested ("" if tested).

        Counts the flips beyond the budget (:attr:`untested`).
        """
        if not self.opts.n_bootstrap:
            return "Not tested: bootstrap off."
        if ca.weighted or cb.weighted:
            return "Not tested: weighted counts."
        small = too_small_to_test(a, ca) or too_small_to_test(b, cb)
        if small:
            return f"Not tested: {small}."
        if rank >= MAX_SIGNIFICANCE:
            self.untested += n_flips
            return (
                f"Not tested: beyond the budget of {MAX_SIGNIFICANCE} pair/metric comparisons, "
                "which go to the flips nearest the deployment prevalences first."
            )
        return ""

    def _flip_test(self, a, b, key, ra, rb, fps, paired: bool, budget_left: bool):
        """``(result, note)``: the paired test when ``paired`` and in budget, else unpaired.

        The note says when a paired test failed or was skipped ("" otherwise).
        """
        bgrid = self.replicates[a][key][0]  # the band grid (replicates: unpaired only)
        res, extra = None, ""
        if paired and budget_left:
            res, extra = self._paired_flip_test(a, b, key, ra, rb, bgrid)
        elif paired:
            extra = (
                f" Paired test skipped (budget of {MAX_PAIRED} paired comparisons); the "
                "unpaired test is conservative."
            )
        if res is None:
            res = self._unpaired_flip_test(a, b, key, fps)
        return res, extra

    def _paired_flip_test(self, a, b, key, ra, rb, bgrid) -> tuple[Any, str]:
        """``(result, "")`` of the paired bootstrap on the shared examples; ``(None, why)``."""
        from mlflow_imbalance.stats.flip_significance import flip_significance

        try:
            res = flip_significance(
                metric=key,
                prevalences=bgrid,
                y_true=ra.scores[0],
                score_a=ra.scores[1],
                score_b=rb.scores[1],
                n_boot=self.opts.n_bootstrap,
                confidence=self.opts.confidence,
                seed=self._seed(a, b, key, "flip"),
            )
        except (ValueError, TypeError) as exc:
            return None, f" (paired test failed: {exc}; unpaired used)"
        return res, ""

    def _unpaired_flip_test(self, a: str, b: str, key: str, fps: Any) -> Any:
        """The unpaired test of the flips ``fps`` from each run's own count-bootstrap replicates."""
        from mlflow_imbalance.stats.flip_significance import flip_significance_from_replicates

        bgrid, ex_a, rep_a = self.flip_replicates(a, key)
        _, ex_b, rep_b = self.flip_replicates(b, key)
        inside = [e for e in fps if bgrid[0] < e < bgrid[-1]]
        return flip_significance_from_replicates(
            ex_a - ex_b,
            rep_a - rep_b,
            bgrid,
            inside,
            metric=key,
            confidence=self.opts.confidence,
            paired=False,
            note="unpaired: each run's own count-bootstrap replicates; conservative for "
            "positively correlated scores",
        )


def _nearest_first(flips: Any, anchors: Any) -> list[tuple[str, str, str]]:
    """The ``(a, b, metric)`` comparisons holding ``flips``, nearest (log η) an anchor first."""
    log_anchor = np.log(np.asarray(anchors, dtype=float))

    def dist(eta: float) -> float:
        return float(np.min(np.abs(log_anchor - math.log(eta))))

    ranked = sorted(flips, key=lambda f: (dist(f[3]), f[3], f[0], f[1]))
    return list(dict.fromkeys((a, b, key) for a, b, key, _ in ranked))


def _same_examples(ra: Any, rb: Any) -> bool:
    """Did both runs keep their scores on the same examples (a paired test is possible)?"""
    return (
        ra.digest is not None
        and ra.digest == rb.digest
        and ra.scores is not None
        and rb.scores is not None
        and np.array_equal(np.asarray(ra.scores[0]), np.asarray(rb.scores[0]))
    )


def _flip_entries(res: Any, fps: Any, a: str, conf: float, extra: str) -> list[dict[str, Any]]:
    """Per flip of ``fps``: significant or not, its η interval and the text (from ``res``)."""
    how = (
        "paired bootstrap on the shared examples"
        if res.paired
        else "unpaired bootstrap (conservative)"
    )
    p_text = (
        f" P({a} better) ranges {float(np.min(res.prob_a_better)):.2f}–"
        f"{float(np.max(res.prob_a_better)):.2f} over the range."
    )
    out = []
    for eta_star in fps:
        if not len(res.flips):
            out.append(
                {
                    "significant": False,
                    "tested": True,
                    "text": "The bootstrap band of D(η) finds no clear crossing: the flip "
                    "is within noise. " + res.note + extra,
                }
            )
            continue
        i = int(np.argmin(np.abs(np.log(np.asarray(res.flips)) - math.log(eta_star))))
        sig = bool(res.significant[i])
        lo, hi = res.flip_intervals[i]
        out.append(
            {
                "significant": sig,
                "tested": True,
                "eta_ci_text": f"[{_fmt_e(lo)}, {_fmt_e(hi)}]",
                "eta_ci": (float(lo), float(hi)),
                "text": ("Significant" if sig else "Not significant")
                + f" at {conf:.0%} ({how}, {res.n_boot} replicates)."
                + p_text
                + (" " + res.note if res.note else "")
                + extra,
            }
        )
    return out
