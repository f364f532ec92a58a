"""Report options validated once, at the public boundary, into a frozen ReportOptions."""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core.validation import check_cost, check_costs, check_prevalence
from mlflow_imbalance.report.model import (
    ReportOptions,
)

logger = logging.getLogger(__name__)

#: The counts name every entry point logs under by default (``imbalance/test/``).
DEFAULT_NAME = "test"

#: Primary metrics the verdict can rank by when no costs are given (key -> label).
PRIMARY_METRICS: dict[str, str] = {
    "ap": "AP",
    "pr_auc": "PR-AUC",
    "max_f1": "max-F1",
    "roc_auc": "ROC-AUC",
}


def resolve_costs(
    costs: Any, cost_fp: Any = None, cost_fn: Any = None, *, stacklevel: int = 3
) -> tuple[Any, Any]:
    """``build_report``'s ``costs=`` and its deprecated ``cost_fp=`` / ``cost_fn=`` → one pair.

    ``costs`` is spelled as in :func:`~mlflow_imbalance.log_scores`: None, ``(cost_fp,
    cost_fn)`` or ``{"fp": .., "fn": ..}`` (checked by
    :func:`~mlflow_imbalance.core.validation.check_costs`). The old keywords still work, with a
    :class:`FutureWarning` naming the new spelling (scikit-learn's convention for deprecations
    users must see); a cost left out of the old pair stays None (it defaults to 1 when the
    other is given, as before).

    Args:
        costs: the new argument.
        cost_fp: deprecated: cost of one false positive.
        cost_fn: deprecated: cost of one false negative.
        stacklevel: passed to :func:`warnings.warn` (the user's call of ``build_report``).

    Returns:
        ``(cost_fp, cost_fn)``, each None when not given (checked again by :func:`_options`).

    Raises:
        ValueError: ``costs`` together with ``cost_fp`` / ``cost_fn``, or invalid ``costs``.
    """
    old = {
        k: getattr(v, "item", lambda v=v: v)()  # numpy scalars shown as plain numbers
        for k, v in (("cost_fp", cost_fp), ("cost_fn", cost_fn))
        if v is not None
    }
    if old:
        given = ", ".join(f"{k}={v!r}" for k, v in old.items())
        if costs is not None:
            raise ValueError(
                f"give the costs once: costs={costs!r} or the deprecated {given}, not both"
            )
        spelled = {"fp": old.get("cost_fp", 1), "fn": old.get("cost_fn", 1)}
        warnings.warn(
            f"build_report({given}) is deprecated and will be removed in a future release; "
            f"pass costs={spelled!r} (the spelling of log_scores) instead",
            FutureWarning,
            stacklevel=stacklevel,
        )
        return cost_fp, cost_fn
    pair = check_costs(costs, "costs")
    return (None, None) if pair is None else pair


def _options(
    prevalences: Any,
    prevalence_range: Any,
    name: str,
    cost_fp: float | None,
    cost_fn: float | None,
    confidence: float,
    n_bootstrap: int,
    seed: int,
    title: str | None,
    primary_metric: str = "ap",
    costs_checked: bool = False,
) -> ReportOptions:
    """Check every option of :func:`~mlflow_imbalance.report.build.build_report` once.

    Returns:
        The frozen :class:`ReportOptions` that the analysis trusts without re-checking.

    Raises:
        ValueError: naming the option and the offending value.
    """
    if prevalences is None or prevalences is Ellipsis:
        etas: tuple[float, ...] = ()
    else:
        if isinstance(prevalences, (str, bytes)):
            raise ValueError(
                f"prevalences must be a number or a sequence of numbers, got the string "
                f"{prevalences!r}"
            )
        try:
            raw = np.atleast_1d(np.asarray(prevalences, dtype=float))
        except (TypeError, ValueError):
            raise ValueError(
                f"prevalences must be a number or a sequence of numbers, got {prevalences!r}"
            ) from None
        arr = check_prevalence(raw, "prevalences")
        if arr.ndim != 1:
            raise ValueError(
                f"prevalences must be a number or a 1-d sequence, got shape {arr.shape}"
            )
        etas = tuple(sorted({float(x) for x in arr}))
    rng = None
    if prevalence_range is not None:
        if isinstance(prevalence_range, str):
            prevalence_range = _parse_range(prevalence_range)
        lo_hi = check_prevalence(np.asarray(prevalence_range, dtype=float), "prevalence_range")
        if lo_hi.shape != (2,) or not lo_hi[0] < lo_hi[1]:
            raise ValueError(
                f"prevalence_range must be (low, high) with low < high, got {prevalence_range!r}"
            )
        rng = (float(lo_hi[0]), float(lo_hi[1]))
    costs_given = cost_fp is not None or cost_fn is not None
    cost_fp = 1.0 if cost_fp is None else cost_fp
    cost_fn = 1.0 if cost_fn is None else cost_fn
    for arg, v in (("cost_fp", cost_fp), ("cost_fn", cost_fn)):
        if isinstance(v, (str, bytes, bool)):
            raise ValueError(f"{arg} must be a positive finite number, got {v!r}")
    if not costs_checked:  # costs= was checked once already, by resolve_costs
        cost_fp = check_cost(cost_fp, "cost_fp")
        cost_fn = check_cost(cost_fn, "cost_fn")
    if primary_metric not in PRIMARY_METRICS:
        raise ValueError(
            f"primary_metric must be one of {sorted(PRIMARY_METRICS)}, got {primary_metric!r}"
        )
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1):
        raise ValueError(f"confidence must lie in [0.5, 1), got {confidence!r}")
    if int(n_bootstrap) != n_bootstrap or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a non-negative integer, got {n_bootstrap!r}")
    if 0 < n_bootstrap < 50:
        raise ValueError(f"n_bootstrap must be 0 (off) or at least 50, got {n_bootstrap!r}")
    if int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return ReportOptions(
        prevalences=etas,
        prevalence_range=rng,
        name=name,
        cost_fp=float(cost_fp),
        cost_fn=float(cost_fn),
        costs_given=costs_given,
        primary_metric=primary_metric,
        confidence=float(confidence),
        n_bootstrap=int(n_bootstrap),
        seed=int(seed),
        title=title,
        prevalences_source="argument" if etas else "",
        costs_source="argument" if costs_given else "",
    )


def with_run_defaults(opts: ReportOptions, summaries: Sequence[Any]) -> ReportOptions:
    """Fill prevalences and costs the caller left out from what the runs logged.

    With no ``prevalences`` the report uses the union of the prevalences logged with the runs
    (``summary.json`` ``prevalences``); with no costs, the costs logged with the runs (the most
    common pair when runs disagree). Values that are not valid are ignored.

    Args:
        opts: the validated options.
        summaries: each run's ``summary.json`` mapping (may be empty).

    Returns:
        The options with the defaults filled and ``prevalences_source`` /
        ``costs_source`` set to ``"runs"`` where they came from the runs.
    """
    changes: dict[str, Any] = {}
    if not opts.prevalences:
        etas: set[float] = set()
        for s in summaries:
            for v in (s or {}).get("prevalences") or ():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1:
                    etas.add(float(v))
        if etas:
            changes["prevalences"] = tuple(sorted(etas))
            changes["prevalences_source"] = "runs"
    if not opts.costs_given:
        pairs: dict[tuple[float, float], int] = {}
        for s in summaries:
            c = (s or {}).get("costs")
            if isinstance(c, dict) and {"fp", "fn"} <= set(c):
                try:
                    fp, fn = float(c["fp"]), float(c["fn"])
                except (TypeError, ValueError):
                    continue
                if all(math.isfinite(x) and x > 0 for x in (fp, fn)):
                    pairs[(fp, fn)] = pairs.get((fp, fn), 0) + 1
        if pairs:
            (fp, fn), _ = max(pairs.items(), key=lambda kv: (kv[1], -kv[0][1]))
            changes.update(
                cost_fp=fp,
                cost_fn=fn,
                costs_given=True,
                costs_source="runs" if len(pairs) == 1 else "runs (most common of several)",
            )
    return dataclasses.replace(opts, **changes) if changes else opts


def _parse_range(text: str) -> tuple[float, float]:
    """``"1e-5:1e-2"`` → (1e-5, 1e-2)."""
    parts = text.replace(",", ":").split(":")
    if len(parts) != 2:
        raise ValueError(f"prevalence_range must look like LOW:HIGH (e.g. 1e-5:1e-2), got {text!r}")
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(
            f"prevalence_range must look like LOW:HIGH (e.g. 1e-5:1e-2), got {text!r}"
        ) from None
