"""Shared pieces of the report analysis: stage timers, display decimation, ranks."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

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


# ---------------------------------------------------------------------------------- helpers
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
