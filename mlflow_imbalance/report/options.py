"""Report options validated once, at the public boundary, into a frozen ReportOptions."""

from __future__ import annotations

import dataclasses
import logging
import math
import numbers
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

#: Most prevalences one report evaluates (each gets a verdict, a table and intervals): given
#: explicitly, more are refused; taken from the runs' summaries, the rest are dropped (a
#: summary listing 3,000 prevalences made a 3-run report take 196 s).
MAX_REPORT_PREVALENCES = 32
#: Largest ``n_bootstrap`` of a report (replicates are held in memory per run and prevalence).
MAX_N_BOOTSTRAP = 100_000

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
    # the cheap scalar options first: every check runs before any work or allocation
    _check_scalars(name, primary_metric, confidence, n_bootstrap, seed, title)
    if prevalences is None or prevalences is Ellipsis:
        etas: tuple[float, ...] = ()
    else:
        if isinstance(prevalences, (str, bytes)):
            raise ValueError(
                f"prevalences must be a number or a sequence of numbers, got the string "
                f"{prevalences!r}"
            )
        n_given = _length(prevalences)
        if n_given > MAX_REPORT_PREVALENCES:
            raise ValueError(
                f"prevalences holds {n_given} values; a report evaluates at most "
                f"{MAX_REPORT_PREVALENCES} (each gets its own verdict and table); use "
                "prevalence_range= for the range drawn on the η axes"
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


def _length(values: Any) -> int:
    """How many values ``values`` holds, without converting it (1 for a scalar)."""
    size = getattr(values, "size", None)
    if isinstance(size, int):
        return size
    try:
        return len(values)
    except TypeError:
        return 1


def _whole(value: Any) -> int | None:
    """``value`` as an int when it is a real, finite, whole number (not a bool), else None."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return None
    if not math.isfinite(value) or int(value) != value:
        return None
    return int(value)


def _check_scalars(
    name: Any, primary_metric: Any, confidence: Any, n_bootstrap: Any, seed: Any, title: Any
) -> None:
    """The scalar options of ``build_report``, each refused with its name before any work."""
    if not isinstance(primary_metric, str) or primary_metric not in PRIMARY_METRICS:
        raise ValueError(
            f"primary_metric must be one of {sorted(PRIMARY_METRICS)}, got {primary_metric!r:.80}"
        )
    if (
        isinstance(confidence, bool | np.bool_)
        or not isinstance(confidence, numbers.Real)
        or not 0.5 <= confidence < 1
    ):
        raise ValueError(f"confidence must lie in [0.5, 1) (a number), got {confidence!r:.80}")
    n_boot = _whole(n_bootstrap)
    if n_boot is None or n_boot < 0:
        raise ValueError(
            f"n_bootstrap must be a non-negative integer (0 turns the bootstrap off), got "
            f"{n_bootstrap!r:.80}"
        )
    if 0 < n_boot < 50:
        raise ValueError(f"n_bootstrap must be 0 (off) or at least 50, got {n_bootstrap!r}")
    if n_boot > MAX_N_BOOTSTRAP:
        raise ValueError(f"n_bootstrap must be at most {MAX_N_BOOTSTRAP}, got {n_bootstrap!r}")
    s = _whole(seed)
    if s is None or s < 0:
        raise ValueError(
            f"seed must be a non-negative integer (the report is deterministic given its "
            f"seed), got {seed!r:.80}"
        )
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r:.80}")
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title must be a string or None, got {type(title).__name__}")


def _cap_prevalences(counted: dict[float, int]) -> tuple[list[float], list[float]]:
    """At most :data:`MAX_REPORT_PREVALENCES` of the runs' prevalences: (kept, dropped).

    Those logged by the most runs are kept first; among equally common ones, an evenly spaced
    selection over their sorted values (so a long list keeps its range, not its low end).
    """
    if len(counted) <= MAX_REPORT_PREVALENCES:
        return sorted(counted), []
    kept: list[float] = []
    for n in sorted(set(counted.values()), reverse=True):
        room = MAX_REPORT_PREVALENCES - len(kept)
        if room <= 0:
            break
        group = sorted(v for v, k in counted.items() if k == n)
        if len(group) > room:
            idx = np.unique(np.round(np.linspace(0, len(group) - 1, room)).astype(int))
            group = [group[i] for i in idx]
        kept += group
    keep = set(kept)
    return sorted(keep), sorted(v for v in counted if v not in keep)


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
        counted: dict[float, int] = {}
        for s in summaries:
            logged = (s or {}).get("prevalences") or ()
            if not isinstance(logged, list | tuple):
                continue
            run_etas = {
                float(v)
                for v in logged
                if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1
            }
            for v in run_etas:
                counted[v] = counted.get(v, 0) + 1
        etas, dropped = _cap_prevalences(counted)
        if dropped:
            shown = ", ".join(f"{v:g}" for v in dropped[:10])
            more = f" and {len(dropped) - 10} more" if len(dropped) > 10 else ""
            logger.warning(
                "the runs logged %d prevalences; the report evaluates at most %d (those logged "
                "by the most runs, spread over the range) and dropped %d: %s%s. Pass "
                "prevalences= (--prevalence) to choose them",
                len(counted), MAX_REPORT_PREVALENCES, len(dropped), shown, more,
            )  # fmt: skip
        if etas:
            changes["prevalences"] = tuple(etas)
            changes["prevalences_source"] = "runs"
            changes["prevalences_dropped"] = tuple(dropped)
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


def check_decide_over(value: Any) -> tuple[float, float] | None:
    """``decide_over``: ``(low, high)`` or ``"low:high"`` with ``0 <= low < high < 1``.

    Raises:
        ValueError: naming ``decide_over`` and the value.
    """
    if value is None:
        return None
    want = "(low, high) or 'LOW:HIGH' with 0 <= low < high < 1 (e.g. 1e-3:1e-2)"
    try:
        if isinstance(value, str):
            parts = value.replace(",", ":").split(":")
            if len(parts) != 2:
                raise ValueError
            lo, hi = float(parts[0]), float(parts[1])
        else:
            if isinstance(value, (bytes, bool)) or len(value) != 2:
                raise ValueError
            if any(isinstance(x, (str, bytes, bool)) for x in value):
                raise ValueError
            lo, hi = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        raise ValueError(f"decide_over must be {want}, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi < 1):
        raise ValueError(f"decide_over must be {want}, got {value!r}")
    return float(lo), float(hi)


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
