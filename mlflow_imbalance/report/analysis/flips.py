"""Ranking flips for the report: the decision criterion's, then the other metrics' in one line.

The decision's flips (where the criterion's winner changes, and whether that changes the
verdict) come from :mod:`mlflow_imbalance.report.analysis.decision`. This module shapes them for
the page and adds the flips of the metrics the decision does not use (AP, PR-AUC, max-F1 under
the cost criterion; the two others under a metric criterion), counted in distinct run pairs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mlflow_imbalance.report.analysis._common import FLIP_METRICS
from mlflow_imbalance.report.analysis.decision import DecisionFlip

logger = logging.getLogger(__name__)

__all__ = ["decision_rows", "metric_flips", "other_flips_summary", "roc_auc_pairs"]

_LABELS = dict(FLIP_METRICS)


def metric_flips(
    runs: Sequence[Any],
    point: Mapping[str, Mapping[str, Any]],
    opts: Any,
    rng: tuple[float, float],
    anchors: Sequence[float],
    unc: Any,
    grid: Any,
    feta: Callable[[float], str],
    progress: Callable[[str, int, int], None] | None,
) -> list[dict[str, Any]]:
    """Every pair's flips on AP, PR-AUC and max-F1 (:func:`ranking.flip_table`), tested.

    The curves come from the metrics stage (computed once per run on the report's η grid);
    flip_table only takes differences, brackets sign changes and refines each root with
    Brent's method on the exact metric. Significance: :meth:`_Uncertainty.significance`.
    """
    from mlflow_imbalance.stats import ranking

    names = [r.name for r in runs]
    keys = tuple(k for k, _ in FLIP_METRICS)
    table = ranking.flip_table(
        {r.name: r.counts for r in runs},
        keys,
        rng,
        grid=grid,
        curves={n: {k: point[n]["sweep"][k] for k in keys} for n in names},
    )
    sig = unc.significance(table, {r.name: r for r in runs}, point, anchors)
    out: list[dict[str, Any]] = []
    for done, ((a, b, key), fps) in enumerate(table.flips.items(), start=1):
        for k, eta_star in enumerate(fps):
            w_lo = a if fps.winners[k][2] == "a" else b
            sg = sig.get((a, b, key, k), {"significant": None, "text": ""})
            ci = sg.get("eta_ci")
            out.append(
                {
                    "a": a,
                    "b": b,
                    "metric": _LABELS[key],
                    "metric_key": key,
                    "eta_value": float(eta_star),
                    "eta": feta(eta_star),
                    "eta_ci": sg.get("eta_ci_text", ""),
                    "low_winner": w_lo,
                    "significant": sg.get("significant"),
                    "significance": sg.get("text", ""),
                    # within noise over the whole range: summarised, not listed
                    "whole_range": sg.get("significant") is False
                    and (ci is None or (ci[0] <= rng[0] * 1.0001 and ci[1] >= rng[1] / 1.0001)),
                }
            )
        if progress is not None:
            progress("ranking", done, len(table.flips))
    out.sort(key=lambda f: (not f["significant"], f["eta_value"], f["a"], f["b"]))
    return out


def decision_rows(
    flips: Sequence[DecisionFlip], criterion: str, feta: Callable[[float], str]
) -> list[dict[str, Any]]:
    """The winner map's boundaries as rows of the flips table (the decision's own flips)."""
    rows = []
    for f in flips:
        at = [f"η = {feta(e)}" for e in f.changes_at] + [
            f"between {feta(lo)} and {feta(hi)}" for lo, hi in f.within
        ]
        rows.append(
            {
                "a": f.below,
                "b": f.above,
                "metric": criterion,
                "metric_key": "criterion",
                "eta_value": float(f.eta),
                "eta": feta(f.eta),
                "low_winner": f.below,
                "high_winner": f.above,
                "changes": ", ".join(at),
                "significant": f.significant,
                "significance": "; ".join(f.tests),
            }
        )
    return rows


def other_flips_summary(
    flips: Sequence[Mapping[str, Any]], criterion_key: str, criterion: str
) -> dict[str, Any]:
    """One line for the flips of the metrics the decision does not use.

    ``{"text", "listed", "n_summarised"}``: "AP and PR-AUC rank 2 run pairs differently
    across the range; the decision uses expected cost." Flips within noise whose η* interval
    spans the whole range are counted, not listed.
    """
    others = [f for f in flips if f["metric_key"] != criterion_key]
    if not others:
        return {"text": "", "listed": [], "n_summarised": 0}
    present = {f["metric"] for f in others}
    metrics = [label for _, label in FLIP_METRICS if label in present]
    pairs = {frozenset((f["a"], f["b"])) for f in others}
    what = metrics[0] if len(metrics) == 1 else ", ".join(metrics[:-1]) + " and " + metrics[-1]
    n = len(pairs)
    listed = [f for f in others if not f["whole_range"]]
    return {
        "text": f"{what} {'ranks' if len(metrics) == 1 else 'rank'} {n} run "
        f"pair{'s' if n != 1 else ''} differently across the range; the decision uses "
        f"{criterion}.",
        "listed": listed,
        "n_summarised": len(others) - len(listed),
    }


def roc_auc_pairs(
    names: Sequence[str],
    point: Mapping[str, Mapping[str, Any]],
    key: str,
    chosen: Sequence[float],
    criterion: str,
    feta: Callable[[float], str],
    fmt: Callable[..., str],
) -> list[str]:
    """Distinct run pairs that ROC-AUC orders the other way from the criterion at a chosen η.

    One line per pair (the first chosen η where it happens), not one per metric and η.
    """
    if key == "roc_auc":
        return []
    sign = -1.0 if key == "cost" else 1.0  # higher is better after the sign
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            auc_a, auc_b = point[a]["roc_auc"], point[b]["roc_auc"]
            if auc_a == auc_b:
                continue
            hi, lo = (a, b) if auc_a > auc_b else (b, a)
            for j, e in enumerate(chosen):
                d = sign * (float(point[lo][key][1 + j]) - float(point[hi][key][1 + j]))
                if d > 0:
                    out.append(
                        f"{hi} has the higher ROC-AUC ({fmt(point[hi]['roc_auc'])} vs "
                        f"{fmt(point[lo]['roc_auc'])}), but {lo} is better by {criterion} at "
                        f"η = {feta(e)}."
                    )
                    break
    return out
