"""``autolog()``: capture binary scores passed to scikit-learn's ranking metrics in a run.

While enabled, the patched ``sklearn.metrics`` functions and Display classmethods log what they
were given with :func:`mlflow_imbalance.tracking.log.log_scores` (see :func:`autolog`). Also
:func:`_log_safely`, the never-raising logging call of the training callbacks and plugins.

(Named ``autologging`` so that the module does not share its name with the :func:`autolog`
function that :mod:`mlflow_imbalance.tracking` re-exports.)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    check_same_length,
    check_scores,
    check_weights,
)
from mlflow_imbalance.tracking import _worker
from mlflow_imbalance.tracking._checks import (
    _check_costs,
    _check_name,
    _check_prevalences,
    _renamed_arguments,
    _resolve_keep_scores,
)
from mlflow_imbalance.tracking._store import (
    fail_fast_http,
    is_dead,
    mark_dead,
    resolve_uri,
    store_failure,
)
from mlflow_imbalance.tracking.headline import DEFAULT_N_BOOTSTRAP
from mlflow_imbalance.tracking.log import (
    LoggedCounts,
    PendingLog,
    _log_scores,
    _names_logged,
    log_scores,
)
from mlflow_imbalance.tracking.summary import labels_digest, scores_digest

logger = logging.getLogger(__name__)

__all__ = ["autolog"]

_AUTOLOG_FUNCTIONS = (
    "roc_auc_score",
    "average_precision_score",
    "roc_curve",
    "precision_recall_curve",
    "det_curve",
)
_AUTOLOG_DISPLAYS = ("RocCurveDisplay", "PrecisionRecallDisplay")


@dataclasses.dataclass
class _AutologConfig:
    enabled: bool = False
    silent: bool = False
    log_figures: bool = True
    keep_scores: Any = "auto"
    prevalences: Any = None
    costs: Any = None
    max_captures_per_run: int = 20
    name: str = "test"


_config = _AutologConfig()
_lock = threading.RLock()
_local = threading.local()
#: run id -> {capture digest: name}
_captures: dict[str, dict[str, str]] = {}
#: (id of owner, attribute name) -> (owner, attribute name, replaced object, our wrapper)
_patches: dict[tuple[int, str], tuple[Any, str, Any, Any]] = {}


#: one-time warnings already given in this process (keys such as "outside-run")
_warned_once: set[str] = set()


def _warn(message: str) -> None:
    """One user-visible warning (a ``UserWarning``; the log gets it at debug level only)."""
    logger.debug(message)
    if _config.silent:
        return
    warnings.warn(message, UserWarning, stacklevel=4)


def _warn_once(key: str, message: str) -> None:
    with _lock:
        if key in _warned_once:
            return
        _warned_once.add(key)
    _warn(message)


def _log_with_budget(
    run_id: str, tracking_uri: str | None, source: str, call: Callable[[], Any]
) -> tuple[Any, str | None]:
    """Run a logging ``call`` within the dead-server time budget.

    Returns ``(result, None)``; or ``(None, message)`` when the store is (or was earlier in this
    run) unreachable, the message being set only the first time, for one warning per run.
    Other errors propagate.
    """
    uri = resolve_uri(tracking_uri)
    if is_dead(uri, run_id):
        logger.debug(
            "%s: tracking store %s unreachable earlier in run %s; skipped", source, uri, run_id
        )
        return None, None
    try:
        with fail_fast_http():
            return call(), None
    except Exception as exc:
        reason = store_failure(uri, exc)
        if reason is None:
            raise
        first = mark_dead(uri, run_id, reason)
        return None, _dead_message(source, uri, reason, run_id) if first else None


def _dead_message(source: str, uri: str, reason: str, run_id: str) -> str:
    return (
        f"mlflow-imbalance {source}: could not log scores: tracking server {uri} is "
        f"unreachable ({reason}); later captures of run {run_id} are skipped without "
        "waiting. Start the server (mlflow server ...) or log to a local store "
        "(sqlite:///mlflow.db)"
    )


def _in_background(
    source: str,
    tracking_uri: str | None,
    warn: Callable[[str], None],
    on_failure: Callable[[], None] | None = None,
) -> Callable[..., None]:
    """A ``defer`` for :func:`~mlflow_imbalance.tracking.log._log_scores`: the worker finishes.

    The training thread has computed the counts and checked the store; the returned function
    queues the rest (intervals, figures, card, upload) on the background thread
    (:mod:`~mlflow_imbalance.tracking._worker`), under the same dead-server budget, and turns a
    failure there into the same warning the synchronous path gives (never silent).
    """
    uri = resolve_uri(tracking_uri)

    def defer(run_id: str, finish: Callable[[], Any], pending: Any) -> None:
        def job() -> None:
            message = None
            try:
                if is_dead(uri, run_id):
                    logger.debug("%s: store %s unreachable earlier; skipped", source, uri)
                else:
                    with fail_fast_http():
                        finish()
            except Exception as exc:
                reason = store_failure(uri, exc)
                if reason is None:
                    message = f"mlflow-imbalance {source}: could not log scores: {exc!r}"
                    logger.debug(message, exc_info=True)
                elif mark_dead(uri, run_id, reason):
                    message = _dead_message(source, uri, reason, run_id)
            finally:
                if not pending.done():
                    pending._set(None)
                    if on_failure is not None:
                        on_failure()
            if message:
                warn(message)

        _worker.submit(run_id, job)

    return defer


@contextmanager
def _reentry_guard() -> Iterator[bool]:
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield depth == 0
    finally:
        _local.depth = depth


_SCORE_ARGS = ("y_score", "probas_pred", "y_pred", "y_score_pred")


def _extract(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """``y_true``, ``y_score``, ``sample_weight``, ``pos_label`` of a metric/Display call."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except TypeError:
        return None
    a = dict(bound.arguments)
    a.pop("cls", None)
    extra_kwargs = a.pop("kwargs", None) or {}
    a.update(extra_kwargs)
    y_true = a.get("y_true")
    y_score = None
    for key in _SCORE_ARGS:
        value = a.get(key)
        if value is not None and not (isinstance(value, str) and value == "deprecated"):
            y_score = value
            break
    if y_true is None or y_score is None:
        return None
    return {
        "y_true": y_true,
        "y_score": y_score,
        "sample_weight": a.get("sample_weight"),
        "pos_label": a.get("pos_label"),
    }


def _inside_mlflow_sklearn_training() -> bool:
    """True inside a fit patched by ``mlflow.sklearn.autolog`` (its own training metrics)."""
    import sys

    if "mlflow.sklearn" not in sys.modules:
        return False
    try:
        from mlflow.sklearn import _SklearnTrainingSession

        return bool(_SklearnTrainingSession.is_active())
    except Exception:  # pragma: no cover - MLflow internals moved
        return False


def _capture(source: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Log one captured call; every failure becomes a warning (never reaches the user)."""
    import mlflow

    try:
        run = mlflow.active_run()
        if run is None:
            _warn_once(
                "outside-run",
                f"mlflow-imbalance autolog: {source} was called outside an active MLflow run, "
                "so its scores were not logged (this warning is shown once). Evaluate inside "
                "`with mlflow.start_run():` — mlflow.sklearn.autolog ends the run it starts "
                "when fit() returns; reopen it with mlflow.start_run(run_id=...)",
            )
            return
        if _inside_mlflow_sklearn_training():
            return
        info = _extract(fn, args, kwargs)
        if info is None:
            logger.debug("autolog: %s call without y_true/y_score; skipped", source)
            return
        y = as_1d_array(info["y_true"], "y_true")
        s_raw = np.asarray(
            info["y_score"].to_numpy() if hasattr(info["y_score"], "to_numpy") else info["y_score"]
        )
        if s_raw.ndim != 1 and not (s_raw.ndim == 2 and 1 in s_raw.shape):
            logger.debug(
                "autolog: %s with %d-d scores (multiclass/multilabel); skipped", source, s_raw.ndim
            )
            return
        labels = np.unique(y)
        if labels.size != 2:
            logger.debug("autolog: %s with %d classes; skipped", source, labels.size)
            return
        pos_label = info["pos_label"]
        if pos_label is None or not np.any(labels == pos_label):
            pos_label = (
                None
                if labels.dtype.kind in "biuf" and set(labels.tolist()) <= {-1, 0, 1}
                else labels[-1]
            )
        s = check_scores(s_raw.reshape(-1), "y_score")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, pos_label, name="y_true")
        w = check_weights(info["sample_weight"], y.size)
        digest = hashlib.sha256(
            (labels_digest(is_pos, w) + scores_digest(s)).encode("ascii")
        ).hexdigest()
        run_id = run.info.run_id
        if is_dead(resolve_uri(None), run_id):
            logger.debug("autolog: tracking store unreachable earlier in run %s; skipped", run_id)
            return
        with _lock:
            seen = _captures.setdefault(run_id, {})
            if digest in seen:
                logger.debug("autolog: %s repeats capture %r; skipped", source, seen[digest])
                return
            full = len(seen) >= _config.max_captures_per_run
            if not full:
                name = _capture_name(_config.name, set(seen.values()) | _names_logged(run_id))
                seen[digest] = name
        if full:
            _warn_once(
                f"full:{run_id}",
                f"mlflow-imbalance autolog: run {run_id} already has "
                f"{_config.max_captures_per_run} captures (max_captures_per_run); later ones "
                "are not logged (raise it with mi.autolog(max_captures_per_run=...))",
            )
            return

        def forget() -> None:  # a failed capture may be logged again later
            with _lock:
                _captures.get(run_id, {}).pop(digest, None)

        try:
            logged, message = _log_with_budget(
                run_id,
                None,
                "autolog",
                lambda: _log_scores(
                    is_pos,
                    s,
                    name=name,
                    sample_weight=w,
                    run_id=run_id,
                    prevalences=_config.prevalences,
                    costs=_config.costs,
                    keep_scores=_config.keep_scores,
                    log_figures=_config.log_figures,
                    extra_summary={"source": "autolog", "captured_from": source},
                    pos_label=None,
                    tracking_uri=None,
                    n_bootstrap=DEFAULT_N_BOOTSTRAP,
                    seed=0,
                    defer=_in_background("autolog", None, _warn, forget),
                ),
            )
        except BaseException:
            with _lock:
                _captures.get(run_id, {}).pop(digest, None)
            raise
        if logged is None:
            with _lock:
                _captures.get(run_id, {}).pop(digest, None)
            if message:
                _warn(message)
    except Exception as exc:
        _warn(f"mlflow-imbalance autolog: could not log scores from {source}: {exc!r}")


def _capture_name(base: str, taken: set[str]) -> str:
    """The first of ``base``, ``base_2``, ``base_3``, ... not in ``taken``.

    ``taken``: this run's earlier captures and the sets this process logged into the run
    (e.g. an explicit ``log_scores(name="test")``), which a capture must not replace.
    """
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def _make_function_wrapper(original: Callable[..., Any], source: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _reentry_guard() as outermost:
            result = original(*args, **kwargs)
            if outermost and _config.enabled and wrapper._mlflow_imbalance_active:
                _capture(source, original, args, kwargs)
        return result

    wrapper._mlflow_imbalance_active = True  # type: ignore[attr-defined]
    wrapper._mlflow_imbalance_original = original  # type: ignore[attr-defined]
    return wrapper


def _make_classmethod_wrapper(cls: type, attr: str, source: str) -> Any:
    original = cls.__dict__[attr]  # the classmethod object
    func = original.__func__

    @functools.wraps(func)
    def wrapper(klass: type, *args: Any, **kwargs: Any) -> Any:
        # from_estimator computes the scores and hands them to cls.from_predictions: it does
        # not capture itself but lets that nested call capture, under its own name.
        delegated = getattr(_local, "delegate", None)
        with _reentry_guard() as outermost:
            if attr == "from_estimator":
                if not outermost:
                    return func(klass, *args, **kwargs)
                _local.delegate = source
                try:
                    return func(klass, *args, **kwargs)
                finally:
                    _local.delegate = None
            if delegated is not None:
                _local.delegate = None  # consumed by this call only
            result = func(klass, *args, **kwargs)
            if (
                (outermost or delegated is not None)
                and _config.enabled
                and wrapper._mlflow_imbalance_active
            ):
                _capture(delegated or source, func, (klass, *args), kwargs)
        return result

    wrapper._mlflow_imbalance_active = True  # type: ignore[attr-defined]
    return classmethod(wrapper), wrapper, original


def _wrapper_of(obj: Any) -> Any:
    inner = obj.__func__ if isinstance(obj, classmethod) else obj
    return inner if hasattr(inner, "_mlflow_imbalance_active") else None


def _patch_estimator_displays(sk_metrics: Any) -> None:
    for cls_name in _AUTOLOG_DISPLAYS:
        cls = getattr(sk_metrics, cls_name, None)
        if cls is None:
            continue
        # from_estimator calls cls.from_predictions, so one patch captures both
        # (the re-entry guard keeps the capture single).
        for attr in ("from_predictions", "from_estimator"):
            key = (id(cls), attr)
            current = cls.__dict__.get(attr)
            if current is None or not isinstance(current, classmethod):
                continue
            existing = _wrapper_of(current)
            if existing is not None:
                existing._mlflow_imbalance_active = True
                continue
            new, inner, original = _make_classmethod_wrapper(cls, attr, f"{cls_name}.{attr}")
            setattr(cls, attr, new)
            _patches[key] = (cls, attr, original, inner)


def _patch() -> None:
    import sklearn.metrics as sk_metrics

    for fname in _AUTOLOG_FUNCTIONS:
        current = getattr(sk_metrics, fname, None)
        if current is None:
            continue
        existing = _find_our_wrapper(current)
        if existing is not None:
            existing._mlflow_imbalance_active = True
            continue
        wrapper = _make_function_wrapper(current, f"sklearn.metrics.{fname}")
        setattr(sk_metrics, fname, wrapper)
        _patches[(id(sk_metrics), fname)] = (sk_metrics, fname, current, wrapper)
    _patch_estimator_displays(sk_metrics)


def _find_our_wrapper(fn: Any) -> Any:
    """Our wrapper, also when another patcher (mlflow.sklearn.autolog) wrapped it since."""
    seen = 0
    while fn is not None and seen < 10:
        if hasattr(fn, "_mlflow_imbalance_active"):
            return fn
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    return None


#: Module-name prefixes never scanned for stale imports (libraries, not user code).
_LIBRARY_PREFIXES = (
    "sklearn",
    "mlflow",
    "mlflow_imbalance",
    "scipy",
    "numpy",
    "pandas",
    "xgboost",
    "lightgbm",
    "_pytest",
    "pytest",
    "imblearn",
)


def _stale_imports(caller: Any = None) -> list[str]:
    """Names still bound to an unpatched metric: imported before autolog(), never captured.

    ``module.name`` for user modules, ``name (in function)`` for locals of the caller.
    """
    import sys

    import sklearn.metrics as sk_metrics

    originals = {
        id(entry[2]): attr
        for (owner_id, attr), entry in _patches.items()
        if owner_id == id(sk_metrics)
    }
    if not originals:
        return []
    found = []
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or mod_name.startswith(_LIBRARY_PREFIXES):
            continue
        namespace = getattr(mod, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for var, value in list(namespace.items()):
            if id(value) in originals and callable(value):
                found.append(f"{mod_name}.{var}")
    if caller is not None and caller.f_locals is not caller.f_globals:
        for var, value in list(caller.f_locals.items()):
            if id(value) in originals and callable(value):
                found.append(f"{var} (in {caller.f_code.co_name})")
    return sorted(set(found))


def _unpatch() -> None:
    for key, (owner, attr, original, wrapper) in list(_patches.items()):
        current = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr)
        if current is wrapper or _wrapper_of(current) is wrapper:
            setattr(owner, attr, original)
            del _patches[key]
        else:
            # someone (e.g. mlflow.sklearn.autolog) patched on top of us: removing our wrapper
            # would remove theirs too, so leave it in place but inactive.
            wrapper._mlflow_imbalance_active = False


def autolog(
    disable: bool = False,
    silent: bool = False,
    *,
    log_figures: bool = True,
    keep_scores: bool | int | str = "auto",
    prevalences: Any = None,
    costs: Any = None,
    max_captures_per_run: int = 20,
    name: str = "test",
    **renamed: Any,
) -> None:
    """Capture binary scores passed to scikit-learn's ranking metrics inside an active run.

    While enabled, calls of ``sklearn.metrics.roc_auc_score``, ``average_precision_score``,
    ``roc_curve``, ``precision_recall_curve``, ``det_curve`` and of
    ``RocCurveDisplay``/``PrecisionRecallDisplay`` ``.from_predictions``/``.from_estimator``
    made inside an active MLflow run are logged with :func:`log_scores` at capture time, under
    ``name`` (``"test"``, as every entry point: the set is whatever data was scored), then
    ``test_2``, ``test_3``, ... for further distinct captures in the run (identical captures —
    same labels, scores and weights — are logged once per run). A name this process already
    logged into the run (e.g. an explicit ``log_scores(name="test")``) is skipped; the
    summary's ``source`` is ``"autolog"`` and ``captured_from`` names the call.
    Multiclass/multilabel calls and calls outside a run are ignored. The user's call always
    returns sklearn's own result; a logging failure (bad data, unreachable server) becomes a
    warning (a debug log when ``silent``).

    Limitation: functions are patched as attributes of ``sklearn.metrics`` (as
    ``mlflow.sklearn.autolog`` does), so a name bound with ``from sklearn.metrics import
    roc_auc_score`` *before* ``autolog()`` keeps the unpatched function; call ``autolog()``
    first or call through the module (``metrics.roc_auc_score``). The Display classmethods are
    patched on the classes themselves and are captured however they were imported.

    Works alongside ``mlflow.sklearn.autolog()`` in either order; the metric calls it makes for
    its own training metrics inside a patched ``fit`` are not captured (training-set scores).

    Args:
        disable: True removes the patches (or deactivates them when another library has
            wrapped them since).
        silent: suppress warnings and info logs from autologging.
        log_figures: render figures for captured scores (costs most of the logging time).
        keep_scores: passed to :func:`log_scores`.
        prevalences: passed to :func:`log_scores`.
        costs: passed to :func:`log_scores`.
        max_captures_per_run: most distinct captures logged per run.
        name: name of the first capture's counts set in a run (``imbalance/<name>/``).
        **renamed: old spellings, accepted with a ``FutureWarning``: ``prevalence=`` (now
            ``prevalences=``), ``cost_fp=`` / ``cost_fn=`` (now ``costs=``).
    """
    if renamed:
        prevalences, costs = _renamed_arguments(renamed, prevalences, costs, "autolog")
    with _lock:
        if disable:
            _config.enabled = False
            _config.silent = silent
            _unpatch()
            return
        # validate now, so bad options fail at autolog() and not silently at capture time
        _check_prevalences(prevalences)
        _check_costs(costs)
        _check_name(name)
        _resolve_keep_scores(keep_scores, 0)
        if int(max_captures_per_run) < 1:
            raise ValueError(f"max_captures_per_run must be >= 1, got {max_captures_per_run!r}")
        _config.enabled = True
        _config.silent = silent
        _config.log_figures = log_figures
        _config.keep_scores = keep_scores
        _config.prevalences = prevalences
        _config.costs = costs
        _config.max_captures_per_run = int(max_captures_per_run)
        _config.name = name
        try:
            _patch()
        except ImportError:
            _warn("mlflow-imbalance autolog: scikit-learn is not installed; nothing to patch")
            return
        import sys

        _warned_once.clear()  # each autolog() call may warn once again
        stale = _stale_imports(sys._getframe(1))
        if stale:
            _warn(
                "mlflow-imbalance autolog: "
                + ", ".join(stale[:5])
                + (" ..." if len(stale) > 5 else "")
                + " were imported from sklearn.metrics before autolog() and will NOT be "
                "captured. Call mi.autolog() before `from sklearn.metrics import ...`, or call "
                "through the module (sklearn.metrics.roc_auc_score(...))"
            )
        if not silent:
            logger.info("mlflow-imbalance autologging enabled for scikit-learn ranking metrics")


# ------------------------------------------------------------------------------ callbacks


def _log_safely(
    y_true: Any,
    y_score: Any,
    *,
    source: str,
    strict: bool = False,
    background: bool = True,
    **kwargs: Any,
) -> LoggedCounts | PendingLog | None:
    """:func:`log_scores` for training callbacks and plugins: failures warn, never raise.

    A failure (bad validation data, unreachable tracking server, ...) is logged and warned about
    and None is returned, so the user's training finishes; ``strict=True`` re-raises instead.
    With ``background`` (and not ``strict``), the counts are computed and the store checked on
    the calling thread, and the rest is finished by the background worker: a
    :class:`~mlflow_imbalance.tracking.log.PendingLog` is returned (its failures warn too).
    """
    import mlflow

    try:
        run_id = kwargs.get("run_id")
        if run_id is None and not strict:
            active = mlflow.active_run()
            run_id = active.info.run_id if active is not None else None
        if strict:
            return log_scores(y_true, y_score, **kwargs)
        logged, message = _log_with_budget(
            str(run_id),
            kwargs.get("tracking_uri"),
            source,
            (lambda: _log_scores(y_true, y_score, **_defaults(kwargs), defer=_in_background(
                source, kwargs.get("tracking_uri"), _warn_always))) if background
            else (lambda: log_scores(y_true, y_score, **kwargs)),
        )  # fmt: skip
    except Exception as exc:
        if strict:
            raise
        message = f"mlflow-imbalance {source}: could not log scores: {exc}"
        logger.debug(message, exc_info=True)
        warnings.warn(message, UserWarning, stacklevel=3)
        return None
    if message:
        logger.debug(message)
        warnings.warn(message, UserWarning, stacklevel=3)
    return logged


def _warn_always(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=2)


def _defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` of :func:`log_scores` completed with its defaults (for ``_log_scores``)."""
    params = inspect.signature(log_scores).parameters
    unknown = set(kwargs) - set(params)
    if unknown:
        raise TypeError(f"log_scores() got unexpected keyword arguments {sorted(unknown)}")
    full = {k: p.default for k, p in params.items() if p.kind is p.KEYWORD_ONLY}
    full.update(kwargs)
    return full
