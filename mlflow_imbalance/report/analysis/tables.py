"""The summary and sample-size adequacy tables of the report context."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scipy import stats as _sps

from mlflow_imbalance.report.analysis._common import APART_KEYS, _rank, intervals_apart
from mlflow_imbalance.report.analysis.paired import SharedReplicates
from mlflow_imbalance.stats.decision import per_cases

logger = logging.getLogger(__name__)


_COLS = (
    ("ap", "AP", "average precision at η (step interpolation)"),
    ("pr_auc", "PR-AUC", "area under the PR curve at η (ROC-segment interpolation)"),
    ("max_f1", "max-F1", "largest F1 over thresholds at η"),
    (
        "precision",
        "Precision",
        "precision at the operating point at η (bounds valid after its choice)",
    ),
    ("recall", "Recall", "recall (TPR) at the operating point (bounds valid after its choice)"),
)


def _cell_values(p: Mapping[str, Any], key: str, j: int) -> tuple[float, Any, Any]:
    if key == "precision":
        lo, hi = p["op_precision_ci"][j] or (None, None)
        return float(p["op_precision"][j]), lo, hi
    if key == "recall":
        lo, hi = p["op_recall_ci"][j] or (None, None)
        return float(p["op_tpr"][j]), lo, hi
    if key == "cost":
        ci = p["boot"].get(("cost", j))
        return float(p["cost"][j]), *(ci or (None, None))
    ci = p["boot"].get((key, j))
    return float(p[key][j]), *(ci or (None, None))


def _not_worse(
    reps, a: str, b: str, key: str, j: int, conf: float, shared: SharedReplicates | None = None
) -> bool | None:
    """Is run ``a`` not significantly different from the best run ``b`` on ``key`` at η_j?

    Runs scored on the same examples (``shared`` holds paired replicates of both): a paired
    test, z = difference of the exact values / s.d. of the difference from the paired
    replicates, floored by the runs' own variances less twice their covariance
    (:meth:`~mlflow_imbalance.report.analysis.paired.SharedReplicates.difference_sd`), as
    the verdict. Otherwise the verdict's unpaired test: z = difference / sqrt(var_a + var_b),
    each run's variance the larger of its count-bootstrap and Bayesian-draw variances
    (``reps[run][key] = (exact values, variances)``). Two-sided normal at level ``1 - conf``;
    the measured levels are in docs/statistics.md. None when either run has no variance there
    (then the caller falls back to interval overlap).
    """
    if not reps or a not in reps or b not in reps or key not in reps[a] or key not in reps[b]:
        return None
    ea, va = reps[a][key]
    eb, vb = reps[b][key]
    if j >= va.size or j >= vb.size:
        return None
    diff = float(ea[j] - eb[j])
    sd = None if shared is None else shared.difference_sd(a, b, key, j, va[j], vb[j])
    if sd is None:  # not on shared examples: the unpaired test
        sd = math.sqrt(float(va[j]) + float(vb[j]))
    if not sd > 0:
        return diff == 0
    return bool(2 * _sps.norm.sf(abs(diff / sd)) >= 1 - conf)


def _trivial(p: Mapping[str, Any], j: int) -> str:
    """``"all"`` / ``"none"``: the run's operating point at η_j flags every case / none.

    There precision and recall are the prevalence and 1 (or undefined and 0) whatever the
    model, so the tables do not rank them; ``""`` otherwise.
    """
    t, f = float(p["op_tpr"][j]), float(p["op_fpr"][j])
    if t >= 1.0 and f >= 1.0:
        return "all"
    if t <= 0.0 and f <= 0.0:
        return "none"
    return ""


#: What a trivial operating point's precision and recall cells say instead of a rank.
_TRIVIAL_NOTE = {"all": "flags all", "none": "flags none"}


def _no_winner(cells: list[dict[str, Any]]) -> None:
    """Drop the "best" of a column whose every other run is tied with its best, in place.

    The top cell(s) lose the badge and shading and read "#1=" like the rest: the leader's lead
    is not supported by the data (e.g. a precision of 1 from a handful of cases, interval
    [1e-4, 1], at η = 1e-4).
    """
    if len(cells) < 2 or not any(c["best"] for c in cells):
        return
    if not all(c["tie"] for c in cells if not c["best"]):
        return
    for c in cells:
        if c["best"]:
            kept = [k for k in c["classes"].split() if k != "best"]
            c.update(best=False, tie=True, classes=" ".join([*kept, "tie"]))


def _verdict_at(verdicts: Any, eta: float) -> Any:
    """The verdict at prevalence ``eta`` (None when the report has none there)."""
    for v in verdicts or ():
        if math.isclose(float(v.prevalence), eta, rel_tol=1e-12):
            return v
    return None


@dataclass(frozen=True)
class _At:
    """One table's prevalence: its column ``j`` in each run's values, and what the cells need."""

    j: int
    order: list[str]  # the rows, best first by the criterion
    verdict: Any  # the verdict at this prevalence (None when there is none)
    per: int  # expected cost is printed per this many cases
    trivial: dict[str, str]  # per run, :func:`_trivial` at this prevalence


def _tables(
    runs, point, chosen, colors, fmt, feta, fci, opts, orders, verdicts, lead, reps=None,
    shared=None,
):  # fmt: skip
    """One table per prevalence (deployment prevalences first), runs as rows, best first.

    A run is marked tied with the best (``#k=``) when the verdict's test finds no significant
    difference (AP, PR-AUC, max-F1, expected cost): paired for runs scored on the same
    examples (``shared``: :class:`~mlflow_imbalance.report.analysis.paired.SharedReplicates`),
    unpaired otherwise; for precision and recall, which have analytic intervals and no draws,
    when the intervals overlap. The one cell the verdict itself tests -- its runner-up in the
    criterion's column at its prevalence -- takes the verdict's own result, so the table never
    calls "tied" what the verdict calls significantly different, or the reverse.
    """
    cols, crit = _table_columns(opts)
    names = [r.name for r in runs]
    by_name = {r.name: r for r in runs}
    lead_set = set(lead)
    out = []
    order_j = [*[(1 + i, e, "deployment") for i, e in enumerate(chosen)], (0, None, "test")]
    for j, eta, kind in order_j:
        order = _row_order(names, point, crit, j, eta, orders)
        ref_eta = eta if eta is not None else float(point[names[0]]["etas"][0])
        trivial = {n: _trivial(point[n], j) for n in order}
        at = _At(j, order, _verdict_at(verdicts, ref_eta), per_cases(ref_eta), trivial)
        cell_rows: dict[str, list[dict[str, Any]]] = {n: [] for n in order}
        for key, _, _ in cols:
            cells = _column_cells(key, crit, at, point, fmt, fci, opts, reps, shared)
            for n, cell in zip(order, cells, strict=True):
                cell_rows[n].append(cell)
        rows = [
            _row(by_name[n], k, point[n], at, colors, lead_set, cell_rows[n], fmt)
            for k, n in enumerate(order)
        ]
        out.append(
            {
                "id": f"t-{j}",
                "kind": kind,
                "eta_value": repr(float(ref_eta)),
                "label": (
                    f"η = {feta(eta)}" if eta is not None else f"Test prevalence ({feta(ref_eta)})"
                ),
                "columns": _header(cols, crit, at.per),
                "rows": rows,
                "n_hidden": sum(1 for r in rows if not r["shown"]),
                "footnotes": [],
            }
        )
    return out


def _table_columns(opts: Any) -> tuple[list[tuple[str, str, str]], str]:
    """``(columns, criterion key)``: the tables' columns, the criterion's first."""
    cols = list(_COLS)
    if opts.costs_given:
        cols.append(("cost", "Exp. cost", "lowest expected cost at η, per N cases"))
    crit = "cost" if opts.costs_given else opts.primary_metric
    # the criterion's column first: the one the runs are ordered by, visible at any width
    cols.sort(key=lambda c: c[0] != crit)
    return cols, crit


def _row_order(names, point, crit, j, eta, orders) -> list[str]:
    """The runs best first at η_j: the verdict's order when it has one, else by the criterion."""
    if eta is not None and eta in orders:
        order = list(orders[eta])  # a run the verdict left out still gets its row, last
        return order + [n for n in names if n not in order]
    vals = {
        n: (point[n]["roc_auc"] if crit == "roc_auc" else float(point[n][crit][j])) for n in names
    }
    sign = 1 if crit == "cost" else -1
    return sorted(names, key=lambda n: (sign * vals[n], n))  # exact ties by name


def _header(cols, crit: str, per: int) -> list[dict[str, Any]]:
    """The table's column headers (expected cost labelled per ``per`` cases)."""
    columns = []
    for key, label, title in cols:
        lab = f"{label} per {per:,}" if key == "cost" else label
        columns.append({"key": key, "label": lab, "title": title, "criterion": key == crit})
    return columns


def _column_cells(key, crit, at: _At, point, fmt, fci, opts, reps, shared) -> list[dict]:
    """The cells of column ``key``, one per run in ``at.order``: value, interval, rank, tie."""
    order, j = at.order, at.j
    vals = [_cell_values(point[n], key, j) for n in order]
    higher = key != "cost"
    unranked = [key in ("precision", "recall") and bool(at.trivial[n]) for n in order]
    v = [math.nan if skip else x[0] for x, skip in zip(vals, unranked, strict=True)]
    ranks = _rank(v, higher_better=higher)
    finite = [i for i, x in enumerate(v) if math.isfinite(x)]
    best_i = None
    if finite:
        best_i = (max if higher else min)(finite, key=lambda i: v[i])
    best = None if best_i is None else order[best_i]
    best_ci = None if best_i is None else vals[best_i][1:]
    cells = []
    for i, n in enumerate(order):
        val, lo, hi = vals[i]
        is_best = best_i is not None and ranks[i] == 1 and len(order) > 1
        skip = unranked[i] or is_best  # no test against the best
        tested = _tested(key, n, best, skip, at, opts.confidence, reps, shared)
        tie = _tie(tested, key, higher, (lo, hi), best_ci, skip)
        classes = []
        if key == crit:
            classes.append("crit")
        if is_best:
            classes.append("best")
        elif tie:
            classes.append("tie")
        scale = at.per if key == "cost" else 1
        cells.append(
            {
                "value": fmt(val * scale, 4),
                "ci": fci(None if lo is None else lo * scale, None if hi is None else hi * scale),
                "rank": ranks[i] if len(order) > 1 else None,
                "best": is_best,
                "tie": tie,
                "classes": " ".join(classes),
                "note": _TRIVIAL_NOTE[at.trivial[n]] if unranked[i] else "",
                # in a measured under-covering regime (stats.coverage): the reason, else ""
                "undercovers": point[n]["boot"].get(("undercovers", key, j)) or "",
            }
        )
    _no_winner(cells)
    return cells


def _verdict_tests(verdict: Any, key: str, best: str | None, n: str) -> bool:
    """Is this the one cell the verdict itself tests (its runner-up, the criterion's column)?"""
    return (
        verdict is not None
        and verdict.significant is not None
        and key == verdict.criterion_key
        and best is not None
        and best == verdict.run
        and n == verdict.runner_up
    )


def _tested(key, n, best, skip, at: _At, conf, reps, shared) -> bool | None:
    """Is run ``n`` not significantly different from ``best``? None when not tested.

    The verdict's own result in the one cell it tests; ``skip``: an unranked cell or the best.
    """
    if _verdict_tests(at.verdict, key, best, n):
        return not at.verdict.significant  # the verdict's own test
    if skip or best is None:
        return None
    return _not_worse(reps, n, best, key, at.j, conf, shared)


def _tie(tested, key, higher, ci, best_ci, skip) -> bool:
    """Is the cell tied with the best: by the test when ``tested``, else by overlapping intervals.

    Never "tied" with the best when the two intervals are apart (as the verdict:
    :func:`~mlflow_imbalance.report.analysis._common.intervals_apart`). ``skip``: an unranked
    cell or the best itself, untested: not tied.
    """
    if tested is not None:
        return tested and not (key in APART_KEYS and intervals_apart(ci, best_ci))
    lo, hi = ci
    if skip or best_ci is None or lo is None or hi is None:
        return False
    b_lo, b_hi = best_ci
    if b_lo is not None and b_hi is not None:
        return (hi >= b_lo) if higher else (lo <= b_hi)
    return False


def _row(r, k, p, at: _At, colors, lead_set, cells, fmt) -> dict[str, Any]:
    """Run ``r``'s row (``k``-th best) at the table's prevalence: its cells and operating point."""
    n = r.name
    return {
        "name": n,
        "color": colors[n],
        "synthesized": r.synthesized,
        "lead": n in lead_set,
        "shown": k < 12 or n in lead_set,
        "cells": cells,
        "op": _op_text(p, at.j, at.trivial[n], fmt),
    }


def _op_text(p: Mapping[str, Any], j: int, trivial: str, fmt: Any) -> str:
    """The run's operating point at η_j in words: its threshold and false positives."""
    fp_op = float(p["op_fp"][j])
    thr = float(p["op_threshold"][j])
    if not math.isfinite(thr) or trivial == "none":
        return "flags nothing (0 false positives at this point)"
    if trivial == "all":
        return (
            f"threshold {fmt(thr, 4)}: flags every case ({fmt(fp_op, 6)} "
            "false positives, every negative)"
        )
    return (
        f"threshold {fmt(thr, 4)}, {fmt(fp_op, 6)} false positive"
        f"{'' if fp_op == 1 else 's'} at this point"
    )


def _roc_rows(runs, point, colors, fmt, fci, unc, conf) -> list[dict[str, Any]]:
    """ROC-AUC per run with DeLong's interval; a tie with the best run by DeLong's test."""
    from mlflow_imbalance.report.analysis.verdict import _paired
    from mlflow_imbalance.stats.compare import delong_test, delong_test_unpaired

    names = [r.name for r in runs]
    vals = [point[n]["roc_auc"] for n in names]
    ranks = _rank(vals)
    best_i = int(max(range(len(vals)), key=lambda i: vals[i]))
    best = runs[best_i]
    rows = []
    for i, r in enumerate(runs):
        lo, hi = point[r.name]["boot"].get(("roc_auc", None)) or (None, None)
        is_best = ranks[i] == 1 and len(runs) > 1
        tie, p_txt = False, ""
        if not is_best and len(runs) > 1 and not (r.counts.weighted or best.counts.weighted):
            try:
                if _paired(best, r):
                    t = delong_test(best.scores[0], best.scores[1], r.scores[1], confidence=conf)
                else:
                    t = delong_test_unpaired(best.counts, r.counts, confidence=conf)
                tie = not t.significant()
                p_txt = f"p = {t.p_value:.3g} ({'paired' if t.paired else 'unpaired'} DeLong)"
            except ValueError as exc:
                p_txt = f"not tested: {exc}"
        rows.append(
            {
                "name": r.name,
                "color": colors[r.name],
                "value": fmt(vals[i]),
                "ci": fci(lo, hi),
                "rank": ranks[i] if len(runs) > 1 else None,
                "best": is_best,
                "tie": tie,
                "classes": "best" if is_best else ("tie" if tie else ""),
                "test": p_txt,
            }
        )
    _no_winner(rows)
    return rows


# ---------------------------------------------------------------------------------- adequacy
def _adequacy_rows(runs, point, chosen, feta, fmt, fint) -> list[dict[str, Any]]:
    rows = []
    for r in runs:
        p = point[r.name]
        for j, eta in enumerate(p["etas"]):
            a = p["adequacy"][j]
            if a is None:
                continue
            rows.append(
                {
                    "run": r.name,
                    "eta": feta(eta) + (" (test)" if j == 0 else ""),
                    "op": f"TPR {fmt(p['op_tpr'][j], 3)}, FPR {fmt(p['op_fpr'][j], 3)}",
                    "precision": fmt(p["op_precision"][j], 3),
                    "rel_width": f"±{a['rel_width']:.1%}" if math.isfinite(a["rel_width"]) else "∞",
                    "fp": fint(a["fp"]),
                    "n_neg": fint(r.counts.n_neg),
                    "need_neg": fint(a["need_neg"]) if a.get("need_neg") is not None else "—",
                    "n_pos": fint(r.counts.n_pos),
                    "need_pos": fint(a["need_pos"]) if a.get("need_pos") is not None else "—",
                    "ok": bool(a["ok"]),
                    "text": a.get("text", ""),
                }
            )
    return rows


# ---------------------------------------------------------------------------------- flips
