"""Where the AP, PR-AUC and max-F1 intervals and bands were measured to under-cover.

One rule, shared by the logging hook (``summary.json``'s headline rows), the run card and the
report (bands drawn hatched, table intervals marked): :func:`undercovers`. It is derived from
``benchmarks/bench_band_coverage.py --regimes`` (docs/statistics.md, "Coverage at a glance"),
where the measured coverage on each side of it is printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts

__all__ = [
    "MEASURED",
    "RULE_AP_MAX_TP",
    "RULE_AP_MIN_FP",
    "RULE_F1_MAX_EXPECTED",
    "RULE_F1_MAX_TP",
    "rule_inputs",
    "undercover_caption",
    "undercover_text",
    "undercovers",
]

#: AP and PR-AUC: flagged where fewer than this many test positives ...
RULE_AP_MAX_TP = 12
#: ... and at least this many test negatives score at or above the max-F1 threshold at eta:
#: a handful of positives among the top negatives decide the metric, and the draws cannot move
#: a positive past the negatives it was seen below (docs/statistics.md).
RULE_AP_MIN_FP = 3
#: max-F1: flagged where fewer than this many test positives score at or above its threshold ...
RULE_F1_MAX_TP = 30
#: ... and eta * n_neg (the positives expected among as many cases as the test set has
#: negatives) is below this: the maximum is then an extrapolation beyond the top scores seen.
RULE_F1_MAX_EXPECTED = 30
#: Measured pointwise coverage (nominal 95 %) where the rule flags / does not, pooled over the
#: regime study's 4 models x 3 regimes x 23 eta in [1e-6, 0.5] x 300 test sets
#: (``bench_band_coverage.py --regimes 300 200``; docs/statistics.md).
MEASURED = {
    "ap": {"flagged": 0.924, "unflagged": 0.947},
    "pr_auc": {"flagged": 0.896, "unflagged": 0.948},
    "max_f1": {"flagged": 0.835, "unflagged": 0.949},
}


def rule_inputs(counts: RocCounts, prevalences: Any) -> dict[str, np.ndarray]:
    """The rule's inputs at each prevalence: the counts at the max-F1 threshold there.

    Returns ``{"tp": (M,), "fp": (M,)}``: test positives and negatives scoring at or above the
    threshold that maximises F1 at each eta (the first such threshold from the top).
    """
    eta = np.atleast_1d(np.asarray(prevalences, dtype=float))
    tp = np.asarray(counts.tp, dtype=float)
    fp = np.asarray(counts.fp, dtype=float)
    if counts.n_pos <= 0 or counts.n_neg <= 0 or tp.size == 0:
        z = np.zeros(eta.size)
        return {"tp": z, "fp": z}
    t = tp / float(counts.n_pos)
    f = fp / float(counts.n_neg)
    o = (eta / (1.0 - eta))[:, None]
    f1 = 2.0 * o * t[None, :] / (o + o * t[None, :] + f[None, :])
    k = np.argmax(f1, axis=1)
    return {"tp": tp[k], "fp": fp[k]}


def undercovers(
    counts: RocCounts,
    metric: str,
    prevalences: Any,
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Is ``metric``'s interval / band at each prevalence in the measured under-covering regime?

    With ``tp``, ``fp`` the test positives and negatives at or above the threshold that
    maximises F1 at eta (:func:`rule_inputs`):

    * AP, PR-AUC: ``tp < RULE_AP_MAX_TP`` and ``fp >= RULE_AP_MIN_FP`` (a handful of positives
      among many negatives decide the metric);
    * max-F1: ``tp < RULE_F1_MAX_TP`` and ``eta * n_neg < RULE_F1_MAX_EXPECTED`` (the maximum
      extrapolates beyond the top scores seen).

    Other metrics and weighted counts (no intervals): all False. Vectorised over
    ``prevalences``; returns a bool array of the same length. ``inputs``:
    ``rule_inputs(counts, prevalences)`` when the caller has them (they do not depend on the
    metric: one call serves all three).
    """
    eta = np.atleast_1d(np.asarray(prevalences, dtype=float))
    if metric not in MEASURED or counts.weighted:
        return np.zeros(eta.size, dtype=bool)
    inp = rule_inputs(counts, eta) if inputs is None else inputs
    if metric == "max_f1":
        return (inp["tp"] < RULE_F1_MAX_TP) & (eta * counts.n_neg < RULE_F1_MAX_EXPECTED)
    return (inp["tp"] < RULE_AP_MAX_TP) & (inp["fp"] >= RULE_AP_MIN_FP)


_NAMES = {"ap": "AP", "pr_auc": "PR-AUC", "max_f1": "max-F1"}


def undercover_text(counts: RocCounts, metric: str, eta: float) -> str:
    """The reason, in one sentence, for a flagged ``(metric, eta)``; "" when not flagged."""
    if not bool(undercovers(counts, metric, [eta])[0]):
        return ""
    inp = rule_inputs(counts, [eta])
    tp, fp = int(inp["tp"][0]), int(inp["fp"][0])
    cov = MEASURED[metric]["flagged"]
    return (
        f"{_NAMES[metric]} at η = {eta:.3g} rests on {tp} test positives (and {fp} negatives) "
        f"above the threshold that decides it; such intervals covered {cov:.2f} in simulation "
        "(nominal 0.95): read it as narrower than it is"
    )


def undercover_caption(runs: list[str], eta_max: float | None) -> str:
    """The report's one caption line for the marked bands and intervals."""
    where = f" (bands up to η = {eta_max:.2g})" if eta_max is not None else ""
    who = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
    return (
        f"Grey dashed band stretches and intervals marked ≈ ({who}){where}: fewer than "
        f"{RULE_AP_MAX_TP} test positives (AP, PR-AUC; {RULE_F1_MAX_TP} for max-F1) score above "
        "the threshold that decides the metric there; in simulation such intervals covered "
        f"{MEASURED['ap']['flagged']:.2f} (AP), {MEASURED['pr_auc']['flagged']:.2f} (PR-AUC), "
        f"{MEASURED['max_f1']['flagged']:.2f} (max-F1) instead of 0.95: read them as narrower "
        "than they are"
    )
