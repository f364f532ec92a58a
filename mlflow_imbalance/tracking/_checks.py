r"""Names, keys and argument checks shared by the tracking modules (validated once, up front).

The artifact layout (``imbalance/<name>/`` and its file names; metric keys and
:func:`eta_label` live in :mod:`mlflow_imbalance.tracking.keys`), the checks of ``name``,
``prevalences``, ``costs``, ``keep_scores`` and ``extra_summary`` that run before anything is
logged, the run resolution and the :class:`Scores` record that logging and loading share.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from mlflow_imbalance.core.validation import check_costs, check_nesting, check_prevalence
from mlflow_imbalance.tracking.keys import eta_label, metric_key
from mlflow_imbalance.tracking.summary import summary_to_json

logger = logging.getLogger(__name__)

__all__ = [
    "ARTIFACT_ROOT",
    "CARD_FILENAME",
    "DEFAULT_PREVALENCES",
    "KEEP_SCORES_AUTO_LIMIT",
    "MAX_EXTRA_BYTES",
    "MAX_EXTRA_DEPTH",
    "MAX_LOGGED_PREVALENCES",
    "MIN_TEST_CLASS",
    "SCORES_FILENAME",
    "Scores",
    "eta_label",
    "metric_key",
]

ARTIFACT_ROOT = "imbalance"
SCORES_FILENAME = "scores.npz"
CARD_FILENAME = "card.html"
#: ``keep_scores="auto"`` keeps the raw scores of at most this many examples (about 9 MB raw,
#: typically 4–8 MB compressed); larger test sets keep only the counts.
KEEP_SCORES_AUTO_LIMIT = 1_000_000
#: Prevalences of interest used when ``prevalences=None``: three decades typical of fraud,
#: intrusion and screening work.
DEFAULT_PREVALENCES: tuple[float, ...] = (1e-2, 1e-3, 1e-4)

#: Most prevalences one ``log_scores`` / ``log_counts`` call logs: each adds a row of headline
#: numbers with bootstrap intervals and four metrics (1,000 prevalences made 4,007 metrics).
MAX_LOGGED_PREVALENCES = 32
#: Deepest nesting of ``extra_summary`` (a mapping inside a mapping ... counts one level each).
MAX_EXTRA_DEPTH = 32
#: Largest ``extra_summary``, as the JSON written into ``summary.json`` (1 MiB).
MAX_EXTRA_BYTES = 1 << 20
#: The report tests a run against others only with at least this many positives and negatives
#: (``report/analysis/_common.py: MIN_TEST_CLASS``, which tracking may not import).
MIN_TEST_CLASS = 10

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")  # used with fullmatch: no "$"


class Scores(NamedTuple):
    """Raw scores kept with a run: labels (True = positive), scores and optional weights."""

    y_true: np.ndarray
    y_score: np.ndarray
    sample_weight: np.ndarray | None


def _mlflow_exception(message: str, code: str = "INVALID_PARAMETER_VALUE") -> Exception:
    from mlflow.exceptions import MlflowException
    from mlflow.protos import databricks_pb2

    return MlflowException(message, error_code=getattr(databricks_pb2, code))


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or ".." in name:
        raise ValueError(
            f"name must be 1-100 characters from [A-Za-z0-9_.-] (not starting with '.' or '-', "
            f"no '..'), usable as a folder and a metric-name component; got {name!r}"
        )
    return name


def _check_prevalences(prevalences: Any) -> list[float]:
    if prevalences is None:
        prevalences = DEFAULT_PREVALENCES
    if isinstance(prevalences, str | bytes | bool | np.bool_) or (
        isinstance(prevalences, np.ndarray) and prevalences.dtype.kind not in "iuf"
    ):
        raise ValueError(
            f"prevalences must be a number or a sequence of numbers, got {prevalences!r:.80}"
        )
    if isinstance(prevalences, int | float | np.floating):
        prevalences = [prevalences]
    size = getattr(prevalences, "size", None)
    if size is None:
        try:
            size = len(prevalences)
        except TypeError:
            size = 0  # an iterator: converted below, counted after
    if size > MAX_LOGGED_PREVALENCES:
        raise ValueError(_too_many_prevalences(size))
    try:
        if any(isinstance(p, str | bytes | bool | np.bool_) for p in prevalences):
            raise TypeError
        arr = np.asarray(prevalences, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(
            f"prevalences must be a number or a sequence of numbers, got {prevalences!r:.80}"
        ) from None
    if arr.size > MAX_LOGGED_PREVALENCES:
        raise ValueError(_too_many_prevalences(arr.size))
    check_prevalence(arr, "prevalences")
    out = sorted({float(v) for v in arr}, reverse=True)
    labels = [eta_label(v) for v in out]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"prevalences {out!r} contain values equal to 4 significant digits; "
            "they would share a metric name"
        )
    return out


def _too_many_prevalences(n: int) -> str:
    return (
        f"prevalences holds {n} values; at most {MAX_LOGGED_PREVALENCES} are logged (each adds "
        "a row of intervals and metrics to the run); the report evaluates any other prevalence "
        "from the counts: build_report(..., prevalences=...)"
    )


def _check_costs(costs: Any) -> dict[str, float] | None:
    """``{"fp": .., "fn": ..}`` or None (:func:`~mlflow_imbalance.core.validation.check_costs`)."""
    pair = check_costs(costs)
    return None if pair is None else {"fp": pair[0], "fn": pair[1]}


def _resolve_keep_scores(keep_scores: Any, n: int) -> bool:
    if keep_scores == "auto":
        return n <= KEEP_SCORES_AUTO_LIMIT
    if isinstance(keep_scores, bool):
        return keep_scores
    if isinstance(keep_scores, int) and keep_scores >= 0:
        return n <= keep_scores
    raise ValueError(
        f"keep_scores must be 'auto', True, False or a maximum number of examples, "
        f"got {keep_scores!r}"
    )


def _check_extra(extra: Any) -> dict[str, Any]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
        raise ValueError(f"extra_summary must be a mapping with string keys, got {extra!r:.200}")
    out = dict(extra)
    # depth first, iteratively: a deeply nested value must not reach the recursive encoder
    check_nesting(out, "extra_summary", max_depth=MAX_EXTRA_DEPTH)
    try:
        size = len(summary_to_json(out).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"extra_summary must be JSON-serialisable: {exc}") from None
    if size > MAX_EXTRA_BYTES:
        raise ValueError(
            f"extra_summary is {size} bytes as JSON, above the limit of {MAX_EXTRA_BYTES} "
            "(1 MiB): log large data as an artifact (mlflow.log_dict) and keep a reference"
        )
    return out


def _client(tracking_uri: str | None = None) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def _store_uri(client: Any) -> str:
    """The tracking URI of ``client`` (for messages)."""
    uri = getattr(getattr(client, "_tracking_client", None), "tracking_uri", None)
    if uri:
        return str(uri)
    import mlflow

    return str(mlflow.get_tracking_uri())


def _get_run(client: Any, run_id: str) -> Any:
    """``client.get_run``, with "run 'abc' not found in the tracking store <uri>" when unknown.

    MLflow's own message depends on the store (an SQL error on some); a store failing (not a
    4xx answer) propagates unchanged.
    """
    from mlflow.exceptions import MlflowException

    try:
        return client.get_run(run_id)
    except MlflowException as exc:
        if exc.get_http_status_code() not in (400, 404):
            raise
        raise _mlflow_exception(
            f"run {run_id!r} not found in the tracking store {_store_uri(client)}",
            "RESOURCE_DOES_NOT_EXIST",
        ) from None


def _require_run(client: Any, run_id: str) -> None:
    """Raise the "not found" error of :func:`_get_run` when the run does not exist."""
    _get_run(client, run_id)


def _check_run_target(run_id: Any, tracking_uri: Any) -> None:
    """Check ``run_id`` / ``tracking_uri`` before anything is computed or written.

    A ``tracking_uri`` without ``run_id`` and without an active run would start a run in
    MLflow's *current* store, not in ``tracking_uri``: refused.
    """
    import mlflow

    if run_id is not None and (not isinstance(run_id, str) or not run_id.strip()):
        raise ValueError(f"run_id must be a non-empty string or None, got {run_id!r:.80}")
    if tracking_uri is not None and (not isinstance(tracking_uri, str) or not tracking_uri):
        raise ValueError(f"tracking_uri must be a non-empty string or None, got {tracking_uri!r}")
    if run_id is None and tracking_uri is not None and mlflow.active_run() is None:
        raise ValueError(
            f"tracking_uri={tracking_uri!r} was given without run_id and no run is active: "
            "pass run_id= of a run in that store, or call mlflow.set_tracking_uri(...) and "
            "log inside mlflow.start_run()"
        )


def _check_flag(value: Any, name: str) -> bool:
    """A strict bool option (``"no"`` or ``0.5`` are refused, not coerced)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r:.80}")


def _resolve_run(client: Any, run_id: str | None) -> str:
    """The run to log into: ``run_id`` (any status, not deleted), else the active run.

    With neither, a run is started, as ``mlflow.log_metric`` does.
    """
    import mlflow

    if run_id is None:
        active = mlflow.active_run()
        if active is None:
            active = mlflow.start_run()
            logger.info("no active run: started run %s to log into", active.info.run_id)
        run_id = active.info.run_id
    if not isinstance(run_id, str) or not run_id:
        raise ValueError(f"run_id must be a non-empty string, got {run_id!r}")
    run = _get_run(client, run_id)  # raises MlflowException when unknown or unreachable
    if run.info.lifecycle_stage != "active":
        raise _mlflow_exception(
            f"run {run_id} is {run.info.lifecycle_stage}; restore it before logging to it"
        )
    return run_id


def _check_log_options(
    *,
    name: Any,
    prevalences: Any,
    costs: Any,
    extra_summary: Any,
    log_figures: Any,
    n_bootstrap: Any,
    seed: Any,
    run_id: Any,
    tracking_uri: Any,
) -> None:
    """Every option of ``log_scores`` / ``log_counts``, checked before any work is done."""
    from mlflow_imbalance.tracking._store import request_timeout
    from mlflow_imbalance.tracking.headline import _check_bootstrap  # headline imports us

    request_timeout()  # MLFLOW_IMBALANCE_STORE_TIMEOUT, named when malformed
    _check_name(name)
    _check_prevalences(prevalences)
    _check_costs(costs)
    _check_extra(extra_summary)
    _check_flag(log_figures, "log_figures")
    _check_bootstrap(n_bootstrap, 0 if seed is None else seed)
    _check_run_target(run_id, tracking_uri)


#: Other spellings of the options (the report's ``cost_fp`` / ``cost_fn``, a singular
#: ``prevalence``): accepted by every entry point with a FutureWarning naming the new one.
_RENAMED = {"prevalence": "prevalences", "cost_fp": "costs", "cost_fn": "costs"}


def _renamed_options(options: Mapping[str, Any], where: str, stacklevel: int = 3) -> dict[str, Any]:
    """``options`` with the old spellings turned into ``prevalences=`` / ``costs=``.

    ``prevalence=x`` becomes ``prevalences=x``; ``cost_fp=a, cost_fn=b`` become
    ``costs={"fp": a, "fn": b}`` (a missing one counts 1). Each old spelling warns once per call
    with a ``FutureWarning`` naming the new one. Giving both spellings of one option is refused.

    Args:
        options: keyword arguments as given.
        where: the entry point, for the messages (e.g. ``"log_scores"``).
        stacklevel: of the warnings (3: the caller of the function calling this one).

    Raises:
        ValueError: when an option is given in both spellings.
    """
    import warnings

    old = [k for k in options if k in _RENAMED]
    if not old:
        return dict(options)
    out = {k: v for k, v in options.items() if k not in _RENAMED}
    if "prevalence" in options:
        if "prevalences" in options:
            raise ValueError(
                f"{where}: give prevalences= only (prevalence= is its old spelling), got both "
                f"prevalence={options['prevalence']!r:.60} and "
                f"prevalences={options['prevalences']!r:.60}"
            )
        warnings.warn(
            f"{where}(prevalence=...) is deprecated; use prevalences=... (one number or a list)",
            FutureWarning,
            stacklevel=stacklevel,
        )
        out["prevalences"] = options["prevalence"]
    if options.get("cost_fp") is not None or options.get("cost_fn") is not None:
        if options.get("costs") is not None:
            raise ValueError(
                f"{where}: give costs= only (cost_fp= / cost_fn= are its old spelling), got "
                f"both costs={options['costs']!r:.60} and cost_fp/cost_fn"
            )
        fp, fn = options.get("cost_fp"), options.get("cost_fn")
        fp, fn = (1.0 if fp is None else fp), (1.0 if fn is None else fn)  # as build_report
        warnings.warn(
            f"{where}(cost_fp=..., cost_fn=...) is deprecated; use costs={{'fp': {fp!r:.20}, "
            f"'fn': {fn!r:.20}}}",
            FutureWarning,
            stacklevel=stacklevel,
        )
        out["costs"] = {"fp": fp, "fn": fn}
    return out


def _renamed_arguments(
    renamed: Mapping[str, Any], prevalences: Any, costs: Any, where: str
) -> tuple[Any, Any]:
    """``(prevalences, costs)`` of a function taking ``**renamed`` old spellings.

    For :func:`~mlflow_imbalance.tracking.log.log_scores`, ``log_counts`` and ``autolog``: any
    keyword other than the old spellings of :data:`_RENAMED` is a ``TypeError``, as Python's.
    """
    unknown = sorted(set(renamed) - set(_RENAMED))
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {unknown}")
    given = {k: v for k, v in (("prevalences", prevalences), ("costs", costs)) if v is not None}
    out = _renamed_options({**given, **renamed}, where, stacklevel=4)
    return out.get("prevalences"), out.get("costs")


def _swap_hint(y: np.ndarray, s: Any) -> str:
    """A hint appended to a label error when ``y_true`` and ``y_score`` look swapped."""
    try:
        scores = np.asarray(s).reshape(-1)
        if scores.size and scores.dtype.kind in "biuf" and np.unique(scores[:100_000]).size <= 2:
            return (
                " (y_score holds at most two distinct values: were y_true and y_score passed "
                "in the wrong order? The call is log_scores(y_true, y_score))"
            )
    except (TypeError, ValueError):
        pass
    return ""


def _warn_small_set(counts: Any, name: str, source: str, stacklevel: int = 3) -> bool:
    """Warn (once per call) when the report will not test this set; True when it warned.

    The set is valid and is logged; the report shows its exact values with wide intervals but
    never tests it against other runs (fewer than :data:`MIN_TEST_CLASS` positives or
    negatives). Weighted sets are never tested (nor warned about here).
    """
    import warnings

    if counts.weighted:
        return False
    small = [
        f"{int(k)} {what}{'' if k == 1 else 's'}"
        for k, what in ((counts.n_pos, "positive"), (counts.n_neg, "negative"))
        if k < MIN_TEST_CLASS
    ]
    if not small:
        return False
    warnings.warn(
        f"mlflow-imbalance {source}: set {name!r} has only {' and '.join(small)} "
        f"(n_pos={int(counts.n_pos)}, n_neg={int(counts.n_neg)}); it is logged, but its "
        "intervals will be very wide and the report will not test it against other runs "
        f"(a test needs at least {MIN_TEST_CLASS} positives and {MIN_TEST_CLASS} negatives)",
        UserWarning,
        stacklevel=stacklevel,
    )
    return True


def _warn_hard_labels(s: np.ndarray, source: str = "log_scores") -> bool:
    """Warn (once per call) when scores are hard 0/1 predictions; True when they are."""
    import warnings

    if s.size == 0 or np.unique(s[:1000]).size > 2:  # the usual case, decided at once
        return False
    lo, hi = s.min(), s.max()
    if not np.all((s == lo) | (s == hi)):  # O(n), no sort
        return False
    warnings.warn(
        f"mlflow-imbalance {source}: y_score holds at most two distinct values (hard labels?): "
        "the ROC has a single operating point. Pass scores instead, e.g. "
        "model.predict_proba(X)[:, 1] or decision_function(X)",
        UserWarning,
        stacklevel=3,
    )
    return True
