"""Ranking flips between runs for the report: where the order of two runs swaps with η."""

from __future__ import annotations

import logging
from typing import Any

from mlflow_imbalance.report.analysis._common import (
    FLIP_METRICS,
)

logger = logging.getLogger(__name__)


def _flips(runs, counts, point, opts, rng, chosen, test_prev, progress, feta, fmt, unc, grid):
    """Every pair's flips on AP, PR-AUC and max-F1 from :func:`ranking.flip_table`.

    The curves come from the metrics stage (computed once per run on the report's η grid);
    flip_table only takes differences, brackets sign changes and refines each root with
    Brent's method on the exact metric. Significance: see :meth:`_Uncertainty.significance`.
    """
    out: list[dict[str, Any]] = []
    contradictions: list[str] = []
    from mlflow_imbalance.stats import ranking

    names = [r.name for r in runs]
    by_name = {r.name: r for r in runs}
    keys = tuple(k for k, _ in FLIP_METRICS)
    table = ranking.flip_table(
        counts,
        keys,
        rng,
        grid=grid,
        curves={n: {k: point[n]["sweep"][k] for k in keys} for n in names},
    )
    labels = dict(FLIP_METRICS)
    key_lo = min([*test_prev.values(), *chosen])
    key_hi = max([*test_prev.values(), *chosen])
    # ROC-AUC order against the order at each chosen prevalence (exact values of the table)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            auc_a, auc_b = point[a]["roc_auc"], point[b]["roc_auc"]
            if auc_a == auc_b:
                continue
            for key in keys:
                for j, e in enumerate(chosen):
                    da = float(point[a][key][1 + j]) - float(point[b][key][1 + j])
                    if da != 0 and (auc_a > auc_b) != (da > 0):
                        hi_auc, lo_auc = (a, b) if auc_a > auc_b else (b, a)
                        contradictions.append(
                            f"{hi_auc} has the higher ROC-AUC, but {lo_auc} has the higher "
                            f"{labels[key]} at η = {feta(e)}."
                        )
    sig = unc.significance(table, by_name, point, chosen or sorted(set(test_prev.values())))
    done = 0
    for (a, b, key), fps in table.flips.items():
        label = labels[key]
        auc_a, auc_b = point[a]["roc_auc"], point[b]["roc_auc"]
        for k, eta_star in enumerate(fps):
            # winners just below and above eta* (the table's winner intervals, exact signs)
            w_lo, w_hi = fps.winners[k][2], fps.winners[k + 1][2]
            low_w, low_l = (a, b) if w_lo == "a" else (b, a)
            high_w, high_l = (a, b) if w_hi == "a" else (b, a)
            sg = sig.get((a, b, key, k), {"significant": None, "text": ""})
            major = key_lo < eta_star < key_hi
            roc_txt = ""
            if auc_a != auc_b:
                auc_w = a if auc_a > auc_b else b
                losers = [w for w, side in ((low_w, "below"), (high_w, "above")) if w != auc_w]
                if losers:
                    side = "below" if low_w != auc_w else "above"
                    roc_txt = (
                        f"ROC-AUC ranks {auc_w} first ({fmt(max(auc_a, auc_b))} vs "
                        f"{fmt(min(auc_a, auc_b))}), yet {losers[0]} wins on {label} {side} "
                        f"η* = {feta(eta_star)}."
                    )
            out.append(
                {
                    "a": a,
                    "b": b,
                    "metric": label,
                    "metric_key": key,
                    "eta_value": float(eta_star),
                    "eta": feta(eta_star),
                    "eta_ci": sg.get("eta_ci_text", ""),
                    "low_winner": low_w,
                    "low_loser": low_l,
                    "high_winner": high_w,
                    "high_loser": high_l,
                    "significant": sg.get("significant"),
                    "significance": sg.get("text", ""),
                    "tested": sg.get("tested", False),
                    "roc_contradiction": roc_txt,
                    "major": major,
                    "affects_chosen": major and bool(chosen),
                }
            )
        done += 1
        if progress is not None:
            progress("ranking", done, len(table.flips))
    out.sort(key=lambda f: (not f["major"], not f["significant"], f["eta_value"], f["a"], f["b"]))
    return out, list(dict.fromkeys(contradictions))


# ---------------------------------------------------------------------------------- figures
