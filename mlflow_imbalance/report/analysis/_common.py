"""Shared pieces of the report analysis: stage timers, display decimation, ranks, hulls."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core import curves as _curves
from mlflow_imbalance.core import metrics as _metrics
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats.bands import f1_band
from mlflow_imbalance.stats.headline import thin_for_bootstrap

logger = logging.getLogger(__name__)


FLIP_METRICS: tuple[tuple[str, str], ...] = (
    ("ap", "AP"),
    ("pr_auc", "PR-AUC"),
    ("max_f1", "max-F1"),
)
_METRIC_FN = {
    "ap": _metrics.average_precision,
    "pr_auc": _metrics.pr_auc,
    "max_f1": _metrics.max_f1,
}
#: Points per curve drawn in figures (a display-only decimation, see :func:`draw_counts`).
DRAW_POINTS = 1500
#: Relative half-width of the precision interval accepted as adequate (Brabec §5: ±10 %).
ADEQUACY_TOLERANCE = 0.1


# ---------------------------------------------------------------------------------- hulls
#: The ROC convex hulls of one build, by counts object (see :func:`hull_cache`).
_HULLS: contextvars.ContextVar[dict[int, tuple[RocCounts, Any]] | None] = contextvars.ContextVar(
    "mlflow_imbalance_report_hulls", default=None
)


@contextlib.contextmanager
def hull_cache() -> Iterator[None]:
    """While the block runs, :func:`hull` computes each run's convex hull once.

    ``build_report`` runs the whole analysis (``build_context``) inside it: the points,
    intervals, verdict, winner map and charts all ask for the same runs' hulls (the winner
    map's root finding once per evaluation), which were computed afresh each time (~300 hulls
    of full-resolution counts at 20 runs). The cache lives in a context variable, so
    concurrent builds do not share it.
    """
    token = _HULLS.set({})
    try:
        yield
    finally:
        _HULLS.reset(token)


def hull(c: RocCounts) -> Any:
    """``convex_hull(c)``, computed once per counts object inside :func:`hull_cache`."""
    cache = _HULLS.get()
    if cache is None:
        return _curves.convex_hull(c)
    hit = cache.get(id(c))
    if hit is None or hit[0] is not c:  # the object is held, so its id is not reused
        hit = cache[id(c)] = (c, _curves.convex_hull(c))
    return hit[1]


def cost_point(c: RocCounts, eta: Any, opts: Any) -> Any:
    """``optimal_operating_point(c, eta, opts.cost_fp, opts.cost_fn)`` on the cached hull."""
    return _curves.optimal_operating_point(c, eta, opts.cost_fp, opts.cost_fn, hull=hull(c))


# ---------------------------------------------------------------------------------- helpers
#: The statistics whose table intervals back a difference when they do not overlap
#: (:func:`intervals_apart`): their coverage is measured (docs/statistics.md). Not the
#: expected cost: at small η its interval sits against the flag-nothing cap η·C_FN and is
#: too narrow there -- with the rule, equal models differed in 6.2% of test sets at η = 1e-4.
APART_KEYS = ("ap", "pr_auc", "max_f1")


def intervals_apart(a: Any, b: Any) -> bool:
    """Do the intervals ``a = (low, high)`` and ``b`` not overlap (both given and finite)?

    The report's difference tests (verdict and tables) call two runs different when their
    z-test does *or* their intervals are apart. Two valid level-(1 - α) intervals that do not
    overlap reject equality of the two values at level ≤ α per direction (the common value
    would lie outside at least one of them, each missed with probability ≤ α/2 on that side).
    Without this the z-test, whose variance comes from heavy-tailed replicates at small η,
    called "tied" runs whose intervals were far apart (AP 0.023 [0.0082, 0.044] against
    3.2e-4 [2.7e-4, 3.8e-4] at η = 1e-4). Used for :data:`APART_KEYS` only; in the level
    study of docs/statistics.md it added no false alarm for them with equal models.
    """
    if a is None or b is None or None in (*a, *b):
        return False
    alo, ahi, blo, bhi = (float(x) for x in (*a, *b))
    if not np.all(np.isfinite((alo, ahi, blo, bhi))):
        return False
    return alo > bhi or blo > ahi


#: Fewest positives and fewest negatives a run needs before the report tests it against
#: another run (verdict, ties in the tables, flips). With fewer, its bootstrap resamples are
#: nearly all alike (one negative: every resample holds it or not), their variance says
#: nothing, and a z-test on it can call a 4-example run "significantly better"; such a run
#: keeps its exact values and its (wide) Bayesian intervals and is not tested.
MIN_TEST_CLASS = 10


def too_small_to_test(name: str, c: RocCounts) -> str:
    """Why run ``name`` is not tested against others ("" when it can be): class sizes."""
    if c.weighted:
        return ""  # weighted runs are never tested; the weighted note says why
    small = [
        f"{int(k)} {what}{'' if k == 1 else 's'}"
        for k, what in ((c.n_pos, "positive"), (c.n_neg, "negative"))
        if k < MIN_TEST_CLASS
    ]
    if not small:
        return ""
    return (
        f"{name} has only {' and '.join(small)}; a test needs at least {MIN_TEST_CLASS} of each "
        "class"
    )


class _Timer:
    def __init__(self, timings: dict[str, float], cpu: dict[str, float] | None = None) -> None:
        self.timings = timings
        self.cpu = {} if cpu is None else cpu

    def stage(self, name: str) -> _Stage:
        return _Stage(self.timings, self.cpu, name)


class _Stage:
    """Wall (perf_counter) and CPU (process_time, all threads) seconds of one stage."""

    def __init__(self, timings: dict[str, float], cpu: dict[str, float], name: str) -> None:
        self.timings, self.cpu, self.name = timings, cpu, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()
        self.c0 = time.process_time()

    def __exit__(self, *exc: Any) -> None:
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.t0
        self.cpu[self.name] = self.cpu.get(self.name, 0.0) + time.process_time() - self.c0


def draw_counts(c: RocCounts, max_points: int = DRAW_POINTS) -> RocCounts:
    """Counts thinned for drawing only (numbers in tables always use the full counts).

    :func:`uncertainty.thin_for_bootstrap` at ``max_points`` bins per axis (``TPR + FPR`` for
    linear axes, ``log10 FPR`` for the log-FPR ROC and low-η PR curves, ``TPR``), so the drawn
    curve moves less than about ``1/max_points`` of an axis between kept points on every
    figure; the bootstrap uses the same thinning at :data:`BOOT_POINTS`.
    """
    return thin_for_bootstrap(c, max_points).counts


def _f1_box(c: RocCounts, threshold: float, eta: float, conf: float) -> tuple[float, float]:
    """F1 at ``threshold`` and ``eta`` with its Clopper-Pearson box interval (exact)."""
    band = f1_band(c, threshold, [eta], confidence=conf)
    return float(band.low[0]), float(band.high[0])


def _rank(values: Sequence[float], higher_better: bool = True) -> list[int | None]:
    """Competition ranks (1 = best; equal values share a rank); None for NaN."""
    v = np.asarray(values, dtype=float)
    out: list[int | None] = []
    for x in v:
        if not np.isfinite(x):
            out.append(None)
            continue
        better = v > x if higher_better else v < x
        out.append(1 + int(np.sum(better & np.isfinite(v))))
    return out


def _method_name(obj: Any, default: str) -> str:
    for attr in ("method", "label", "description"):
        val = getattr(obj, attr, None)
        if isinstance(val, str) and val:
            return val
    return default


# ---------------------------------------------------------------------------------- context
def _fmt_e(x: float) -> str:
    x = float(x)
    if x >= 1e-3:
        return f"{x:.3g}"
    mant, exp = f"{x:.2e}".split("e")
    return f"{mant.rstrip('0').rstrip('.')}e{int(exp)}"
