"""Does the decision depend on η? The criterion's winner across prevalences, and its flips.

The report decides by ONE criterion (the lowest expected cost when costs are given, else the
primary metric). Its flip warnings speak of that criterion only:

- the **winner map**: which run is best by the criterion on each stretch of the report's η
  range, and the η* where that changes (a sign change of the two runs' criterion difference on
  the report's grid, refined with Brent's method on the exact values);
- a boundary **changes the verdict** at a chosen η when the winners at the test prevalence
  and that η differ (the test-set winner would be the wrong pick there) and it is where the
  chosen η's winner stops being best, walking towards the test prevalence (crossings further
  on, between other runs, cancel out); likewise between two chosen prevalences with
  different winners;
- it is **significant** when the verdict's own test says so: the winner at the chosen η
  beats the test-prevalence winner there (the same test, and so the same p-value, the verdict
  reports when that run is its runner-up). Inside the deployment range both ends must hold.

Flips of the other metrics (AP, PR-AUC, max-F1 when the criterion is cost) never change the
verdict; the report collapses them into one line counted in distinct run pairs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

__all__ = ["Anchor", "DecisionFlip", "WinnerMap", "decision_flips", "winner_map"]


@dataclass(frozen=True)
class Anchor:
    """A prevalence the report decides at (or the test prevalence) and its winner there."""

    eta: float
    winner: str
    is_test: bool = False


@dataclass
class DecisionFlip:
    """One boundary of the winner map: below ``eta`` ``below`` wins, above it ``above``.

    Attributes:
        eta: η* where the criterion's winner changes.
        below: the best run just below η*.
        above: the best run just above η*.
        changes_at: the chosen prevalences whose verdict differs from the test-prevalence
            winner because of this boundary (η values), plus ``within`` pairs.
        within: ``(η_i, η_j)`` pairs of chosen prevalences with different winners that this
            boundary separates.
        significant: True / False from the verdict's tests; None when untested or when the
            boundary changes no verdict.
        tests: one line per test behind ``significant`` (run, other, η, p).
    """

    eta: float
    below: str
    above: str
    changes_at: list[float] = field(default_factory=list)
    within: list[tuple[float, float]] = field(default_factory=list)
    significant: bool | None = None
    tests: list[str] = field(default_factory=list)

    @property
    def changes_verdict(self) -> bool:
        """True when the boundary lies between an anchor and a chosen η with another winner."""
        return bool(self.changes_at or self.within)


@dataclass(frozen=True)
class WinnerMap:
    """The criterion's best run on each stretch of the η grid, with the boundaries."""

    segments: list[tuple[float, float, str]]
    flips: list[DecisionFlip]

    def winner_at(self, eta: float) -> str:
        """The run best by the criterion at ``eta`` (within the map's grid resolution)."""
        for lo, hi, w in self.segments:
            if lo <= eta <= hi:
                return w
        return self.segments[0][2] if eta < self.segments[0][0] else self.segments[-1][2]


def winner_map(
    names: Sequence[str],
    grid: np.ndarray,
    curves: Mapping[str, np.ndarray],
    exact: Callable[[str, float], float],
    lower_is_better: bool,
) -> WinnerMap:
    """The best run by the criterion at every grid η, and where that changes.

    Args:
        names: the runs compared, in the report's order (ties go to the earlier one).
        grid: increasing prevalences.
        curves: each run's criterion on ``grid``.
        exact: ``(run, η) -> criterion value``, exact, for refining the boundaries.
        lower_is_better: True for expected cost.

    Returns:
        :class:`WinnerMap`; a boundary closer than one grid step to another may be missed (as
        :func:`mlflow_imbalance.stats.ranking.flip_table`).
    """
    values = np.vstack([np.asarray(curves[n], dtype=float) for n in names])
    values = np.where(np.isfinite(values), values, np.inf if lower_is_better else -np.inf)
    best = np.argmin(values, axis=0) if lower_is_better else np.argmax(values, axis=0)
    change = np.flatnonzero(best[1:] != best[:-1])
    flips: list[DecisionFlip] = []
    segments: list[tuple[float, float, str]] = []
    start = float(grid[0])
    for i in change:
        a, b = names[int(best[i])], names[int(best[i + 1])]
        lo, hi = math.log(float(grid[i])), math.log(float(grid[i + 1]))

        def diff(x: float, a: str = a, b: str = b) -> float:
            e = math.exp(x)
            return exact(a, e) - exact(b, e)

        try:
            d_lo, d_hi = diff(lo), diff(hi)
            root = brentq(diff, lo, hi, xtol=1e-10) if d_lo * d_hi < 0 else 0.5 * (lo + hi)
        except (ValueError, RuntimeError):  # no clean sign change: the grid's midpoint
            root = 0.5 * (lo + hi)
        eta = math.exp(root)
        flips.append(DecisionFlip(eta=eta, below=a, above=b))
        segments.append((start, eta, a))
        start = eta
    segments.append((start, float(grid[-1]), names[int(best[-1])]))
    return WinnerMap(segments, flips)


def decision_flips(
    wmap: WinnerMap,
    anchors: Sequence[Anchor],
    test: Callable[[str, str, float], tuple[bool | None, str]],
    feta: Callable[[float], str],
) -> list[DecisionFlip]:
    """Mark the boundaries of ``wmap`` that change the verdict, and test them.

    Args:
        wmap: the winner map over the report's η range.
        anchors: the test prevalence (``is_test``; at most one) and the chosen prevalences,
            each with the criterion's exact winner there (the verdict's run).
        test: ``(run, other, η) -> (significant or None when untested, one line)``: the
            verdict's test of ``run`` minus ``other`` on the criterion at η.
        feta: prevalence formatter.

    Returns:
        The boundaries of ``wmap`` (the same objects) with ``changes_at``, ``within``,
        ``significant`` and ``tests`` filled in.
    """
    test_anchor = next((a for a in anchors if a.is_test), None)
    chosen = sorted((a for a in anchors if not a.is_test), key=lambda a: a.eta)
    cache: dict[tuple[str, str, float], tuple[bool | None, str]] = {}

    def verdict_test(run: str, other: str, eta: float) -> bool | None:
        if (run, other, eta) not in cache:
            cache[(run, other, eta)] = test(run, other, eta)
        return cache[(run, other, eta)][0]

    def describe(run: str, other: str, eta: float) -> str:
        return f"{run} vs {other} at η = {feta(eta)}: {cache[(run, other, eta)][1]}"

    results: dict[int, list[bool | None]] = {}

    def first_boundary(frm: float, to: float) -> DecisionFlip | None:
        """The boundary where the winner at ``frm`` stops being best, walking towards ``to``."""
        lo, hi = sorted((frm, to))
        inside = [f for f in wmap.flips if lo < f.eta < hi]
        return min(inside, key=lambda f: abs(math.log(f.eta / frm)), default=None)

    if test_anchor is not None:
        for a in chosen:
            f = first_boundary(a.eta, test_anchor.eta) if a.winner != test_anchor.winner else None
            if f is not None:
                f.changes_at.append(a.eta)
                results.setdefault(id(f), []).append(
                    verdict_test(a.winner, test_anchor.winner, a.eta)
                )
                f.tests.append(describe(a.winner, test_anchor.winner, a.eta))
    for a, b in itertools.pairwise(chosen):
        f = first_boundary(a.eta, b.eta) if a.winner != b.winner else None
        if f is not None:
            f.within.append((a.eta, b.eta))
            both = [
                verdict_test(a.winner, b.winner, a.eta),
                verdict_test(b.winner, a.winner, b.eta),
            ]
            f.tests += [describe(a.winner, b.winner, a.eta), describe(b.winner, a.winner, b.eta)]
            results.setdefault(id(f), []).append(
                None if None in both and False not in both else all(x is True for x in both)
            )
    for f in wmap.flips:
        r = results.get(id(f))
        if r:
            f.significant = (
                True if any(x is True for x in r) else None if any(x is None for x in r) else False
            )
    return wmap.flips
