"""The rows of the report's methods section ("How these numbers are computed").

Each row is ``{"what": ..., "how": ...}``: what a number of the report is and how it is
computed, with the coverage measured for it. :meth:`.intervals._Uncertainty.methods` puts them
in the order shown.
"""

from __future__ import annotations

from typing import Any

from mlflow_imbalance.stats.bootstrap import PSEUDO_NEGATIVES
from mlflow_imbalance.stats.headline import _max_split

#: Measured coverage of the constructions the page uses, nominal 95 %
#: (``benchmarks/bench_band_coverage.py --regimes 300 200``: binormal with 120 score levels,
#: skewed/tied, continuous binormal and a heavy-tailed gradient-boosted-like mixture (6,000
#: levels); P / N = 100 / 10^6, 200 / 20,000, 1,000 / 100,000; R = 300 test sets, B = 200).
#: Quoted in the methods section; update together with docs/statistics.md ("Coverage at a
#: glance"). Where the rule of stats/coverage.py flags, the page marks the band / interval.
MEASURED_COVERAGE = {
    "bands": "simultaneous coverage over η ∈ [1e-4, 0.5] measured 0.91–0.96 (AP), "
    "0.90–0.96 (PR-AUC), 0.91–0.97 (max-F1) over four score models (rounded, tied and "
    "continuous) at 100 / 10⁶, 200 / 20,000 and 1,000 / 100,000 positives / negatives; lowest "
    "with 100 positives among 10⁶ negatives (continuous binormal: 0.91 / 0.90 / 0.92), and "
    "max-F1 down to 0.84 over [1e-6, 0.5] there; the stretches in the measured "
    "under-covering regime are drawn grey and dashed",
    "table": "pointwise coverage at the test prevalence, 1e-3 and test prevalence / 10 "
    "measured 0.90–0.96 (AP), 0.87–0.97 (PR-AUC), 0.78–0.97 (max-F1): lowest with 100 "
    "positives among 10⁶ negatives and, for max-F1, far below the test prevalence; "
    "intervals in the measured under-covering regime are marked ≈",
    "roc": "simultaneous coverage measured 0.933–0.977 over the FPR grid, 0.987–1.000 at FPR = 1/N",
    "cost": "pointwise coverage measured 0.927–1.000 at η = 1e-4 to 0.1, C_FN / C_FP = 1 and "
    "100, discretised and continuous scores; the equal-tailed interval alone 0.827–1.000",
}


def bootstrap_rows(opts: Any, conf: str, resolution: str) -> list[dict[str, str]]:
    """The rows of the bootstrap's numbers: metrics, minimum cost, ROC band, resolution."""
    b, seed = opts.n_bootstrap, opts.seed
    return [
        {
            "what": "AP, PR-AUC, max-F1",
            "how": f"Bayesian count bootstrap, {b} draws per run (seed {seed}): each "
            "draw is a plausible population ROC curve, per-threshold class masses from "
            "a Dirichlet on the observed counts with a Jeffreys pseudo-negative "
            f"({PSEUDO_NEGATIVES}) above the top score and a pseudo-positive "
            f"({PSEUDO_NEGATIVES}) below the lowest, so a draw can hold false "
            "positives the test set did not show (the plain bootstrap cannot, and "
            "under-covers at low η); max-F1 draws are re-centred for the selection "
            "bias of the maximum, and as that correction is partial its intervals "
            f"leave {_max_split(opts.confidence)} (its band likewise, "
            "simultaneously over η). "
            f"Table: {conf} pointwise intervals (equal-tailed for AP and PR-AUC) "
            f"({MEASURED_COVERAGE['table']}), by the logging hook's construction and draws "
            "(seeded by the report's seed alone, so a run's intervals do not depend on the "
            "other runs): the run card's and summary.json's intervals to the digit when the "
            "run was logged with the same replicates, seed, confidence and costs. "
            f"Figures: on the same draws, {conf} simultaneous credible "
            f"bands over η ({MEASURED_COVERAGE['bands']}). Valid at every η of the "
            "range: no interval is withheld.",
        },
        {
            "what": "Minimum expected cost",
            "how": f"{conf} interval of the table's draws: the lowest cost over "
            "thresholds is biased down (a minimum), so the draws are moved by that "
            "bias and α is split as for max-F1, mirrored; united with the "
            "equal-tailed interval, which alone covers where flagging nothing is "
            "optimal; the upper limit is at least that of the cost at the chosen "
            "threshold, held fixed (no selection: the lowest cost is at most it), and at "
            "most the cost of flagging nothing (η·C_FN) or everything ((1−η)·C_FP), which "
            f"the lowest cost never exceeds ({MEASURED_COVERAGE['cost']})",
        },
        {
            "what": "ROC band",
            "how": f"{conf} simultaneous count-bootstrap sup-t band over FPR "
            "(arcsine-sqrt scale, binomial scale floor, Jeffreys pseudo-negative floor "
            f"at low FPR; {MEASURED_COVERAGE['roc']}). PR curves: that band mapped "
            "through eq. 8 (precision is monotone in FPR).",
        },
        {"what": "Bootstrap resolution", "how": resolution},
    ]


def operating_point_row(conf: str) -> dict[str, str]:
    """The methods row of the operating point's precision and recall bounds."""
    return {
        "what": "Precision and recall at the operating point",
        "how": f"the threshold (max-F1 or lowest cost) is chosen on the test set, so a "
        "pointwise interval there is too narrow (0.85–0.94 measured at the max-F1 "
        "point); the bounds hold for whichever threshold a rule picks: Clopper–Pearson "
        f"limits of TPR and FPR at up to 64 candidate thresholds, joint {conf} by "
        "Bonferroni, every other threshold bracketed by its neighbours (TPR and FPR "
        "are monotone), precision from them by eq. 8 (Brabec et al.); conservative "
        "(measured coverage 1.000). The same bounds as the logging hook's",
    }


def roc_auc_row(conf: str) -> dict[str, str]:
    """The methods row of ROC-AUC's DeLong interval and test."""
    return {
        "what": "ROC-AUC",
        "how": f"DeLong variance computed exactly from the counts, {conf} Wald interval "
        "on the logit scale (Clopper–Pearson over disjoint pairs when the variance is "
        "0); no bootstrap. A run is tied with the best when DeLong's test of the "
        "difference (paired on shared examples) is not significant.",
    }


def fixed_threshold_rows(conf: str) -> list[dict[str, str]]:
    """The methods rows of the analytic intervals at a fixed threshold and of adequacy."""
    return [
        {
            "what": "Precision at a fixed threshold",
            "how": f"Koopman score interval ({conf}) for the likelihood ratio TPR/FPR with "
            "the small-FP correction (Brabec et al. eq. 8), one interval for every η; "
            "approximate: its exact coverage, by enumeration, is ≥ 0.94 down to an "
            "expected 0.05 false positives (the sample-size check uses it)",
        },
        {"what": "TPR / FPR at a fixed threshold", "how": f"Clopper–Pearson ({conf})"},
        {
            "what": "Sample-size adequacy",
            "how": "Brabec §5 box: Clopper–Pearson TPR and FPR at √confidence each",
        },
    ]


def comparison_row() -> dict[str, str]:
    """The methods row of the verdict's and the tables' test of two runs."""
    return {
        "what": "Comparing two runs (verdict, ties in the tables)",
        "how": "z = difference of the exact values / its standard deviation, "
        "two-sided normal. Runs that kept their scores on the same examples (the "
        "leading runs): a paired bootstrap, one resample of the shared examples for "
        "every run, metric and η; the standard deviation is the larger of the "
        "replicates' and the one from each run's own variance less twice the "
        "replicates' covariance, so a run with no negative above its top scores keeps "
        "its long lower tail. Other runs: unpaired, each run's variance the larger of "
        "its count-bootstrap and Bayesian-draw variances. Both keep false alarms near "
        "the nominal level with identical models (measured). Two runs whose AP, PR-AUC "
        "or max-F1 intervals do not overlap differ whatever z says: at small η the "
        "replicates are heavy-tailed and z can miss a many-fold difference (this never "
        "added a false alarm in the measurements).",
    }


def coverage_row() -> dict[str, str]:
    """The methods row of where the coverage figures come from."""
    return {
        "what": "Coverage figures",
        "how": "measured by simulation against true curves (binormal with rounded and "
        "with continuous scores, a skewed, heavily tied model and a heavy-tailed "
        "gradient-boosted-like mixture; positives / negatives = 200 / 20,000, "
        "1,000 / 100,000 and 100 / 1,000,000; 300 test sets each), published with "
        "the package's statistics documentation",
    }
