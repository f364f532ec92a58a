"""The report's callouts under the verdict: short, about the decision first, one line each.

The first callout answers "does the decision depend on η?" for the decision criterion only
(:mod:`mlflow_imbalance.report.analysis.decision`); flips of other metrics never raise it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlflow_imbalance.report.analysis._common import ADEQUACY_TOLERANCE
from mlflow_imbalance.report.analysis.decision import Anchor, DecisionFlip

__all__ = ["data_notes", "decision_note", "names_short"]


def names_short(names: Any, limit: int = 4) -> str:
    """``a, b, c and 2 more``."""
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _note(level: str, title: str, text: str) -> dict[str, str]:
    return {"level": level, "title": title, "text": text}


def decision_note(
    flips: Sequence[DecisionFlip],
    anchors: Sequence[Anchor],
    criterion: str,
    thresholds: dict[tuple[str, float], float],
    feta: Callable[[float], str],
    fmt: Callable[..., str],
) -> dict[str, str] | None:
    """The callout about the decision across prevalences (None with one run or one anchor).

    Args:
        flips: the winner map's boundaries, marked by
            :func:`~mlflow_imbalance.report.analysis.decision.decision_flips`.
        anchors: the test prevalence (if one is shared) and the chosen prevalences.
        criterion: the criterion's label ("expected cost", "AP", …).
        thresholds: ``(run, η) -> operating threshold`` at each anchor.
        feta: prevalence formatter.
        fmt: number formatter.
    """
    test = next((a for a in anchors if a.is_test), None)
    chosen = [a for a in anchors if not a.is_test]
    changing = [f for f in flips if f.changes_verdict]
    if changing:

        def at(a: Anchor) -> str:
            return f"the test prevalence ({feta(a.eta)})" if a.is_test else feta(a.eta)

        listing = "; ".join(f"{a.winner} at {at(a)}" for a in sorted(anchors, key=lambda a: a.eta))
        where = f"Best by {criterion}: {listing}"
        if any(f.significant for f in changing):
            return _note(
                "danger",
                "The decision depends on the prevalence.",
                f"{where} (significant). Decide at the deployment prevalence, as the verdict "
                "does; the test-set ranking does not carry over.",
            )
        if any(f.significant is None for f in changing):
            return _note(
                "danger",
                "The decision may depend on the prevalence.",
                f"{where} (not tested). Decide at the deployment prevalence, as the verdict does.",
            )
        # a tie needs no action: the title says it, the where is one click away
        return {
            **_note(
                "warning",
                "The winner changes within noise.",
                f"{where}; each change is a statistical tie (not significant).",
            ),
            "fold": True,
        }
    winners = {a.winner for a in anchors}
    if len(anchors) < 2 or len(winners) != 1:
        return None
    (w,) = winners
    at = "the test prevalence and every chosen η" if test is not None else "every chosen η"
    text = f"{w}, by {criterion}, at {at}."
    thr = {a.eta: thresholds.get((w, a.eta)) for a in anchors}
    if test is not None and chosen and any(thr[a.eta] != thr[test.eta] for a in chosen):
        text += (
            f" Its threshold changes with η ({fmt(thr[test.eta], 4)} at the test prevalence): "
            "deploy the verdict's for your η."
        )
    return _note("ok", "Same winner at every η asked:", text)


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def data_notes(
    runs: Sequence[Any],
    skipped: Sequence[Any],
    small: Sequence[str],
    digests: Sequence[Any],
    chosen: Sequence[float],
    counts_name: str,
) -> list[dict[str, str]]:
    """Callouts about the data: skipped, synthesised, reduced, weighted runs, small test sets."""
    out: list[dict[str, str]] = []
    if skipped:
        out.append(
            _note(
                "warning",
                f"{len(skipped)} run(s) skipped.",
                "They have no usable counts named “" + counts_name + "”; reasons under “Runs”.",
            )
        )
    if len(digests) > 1:
        out.append(
            _note(
                "warning",
                "Runs were evaluated on different test sets.",
                "Their label digests differ (see “Runs”); compare them with caution.",
            )
        )
    synth = [r.name for r in runs if r.synthesized]
    if synth:
        out.append(
            _note(
                "warning",
                "Synthesised positives.",
                f"Positives of {names_short(synth, 8)} were synthesised from negatives "
                "(Cataltepe et al.): TPR, precision and every PR number of these runs estimate "
                "detection of the synthetic anomalies, not of real positives.",
            )
        )
    if small:
        out.append(
            {
                **_note(
                    "warning",
                    "Small test set:",
                    f"precision at a chosen η is uncertain by over ±{ADEQUACY_TOLERANCE:.0%} for "
                    + (
                        "every run." if len(small) == len(runs) > 1 else f"{names_short(small, 3)}."
                    ),
                ),
                "fold": True,  # the title says it; which runs and how much, one click away
            }
        )
    inexact = [r.name for r in runs if not r.counts.is_exact]
    if inexact:
        out.append(
            _note(
                "info",
                "Reduced counts.",
                f"Counts of {names_short(inexact, 8)} were reduced with a bounded error (max "
                "TPR/FPR error recorded in the file); their numbers are approximate.",
            )
        )
    weighted = [r.name for r in runs if r.counts.weighted]
    if weighted:
        out.append(
            _note(
                "info",
                "Weighted counts.",
                names_short(weighted, 8)
                + (" carries" if len(weighted) == 1 else " carry")
                + " sample weights: every metric is exact, but intervals, bands and tests need "
                "whole-number counts, so these numbers are point estimates only.",
            )
        )
    if not chosen:
        out.append(
            _note(
                "info",
                "No deployment prevalence chosen.",
                "Pass prevalences (--prevalence) to see every number at the prevalence the "
                "model will meet.",
            )
        )
    return out
