r"""Log ROC counts, metrics, figures and a card into an MLflow run: :func:`log_scores`.

What :func:`log_scores` / :func:`log_counts` put into a run is listed in
:mod:`mlflow_imbalance.tracking`. The numbers come from
:mod:`mlflow_imbalance.tracking.headline`, the figures and card from
:mod:`mlflow_imbalance.tracking.card`, the ``summary.json`` schema from
:mod:`mlflow_imbalance.tracking.summary`; this module validates, writes the files in a temporary
directory and uploads them (data files, metrics, then ``summary.json`` as the commit marker).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import logging
import math
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance._version import __version__
from mlflow_imbalance.core.counts import RocCounts, _count_scores
from mlflow_imbalance.core.format import COUNTS_FILENAME
from mlflow_imbalance.core.validation import (
    as_1d_array,
    binarize_labels,
    check_same_length,
    check_scores,
    check_weights,
)
from mlflow_imbalance.tracking import keys
from mlflow_imbalance.tracking._checks import (
    ARTIFACT_ROOT,
    CARD_FILENAME,
    SCORES_FILENAME,
    Scores,
    _check_costs,
    _check_extra,
    _check_log_options,
    _check_name,
    _check_prevalences,
    _client,
    _renamed_arguments,
    _resolve_keep_scores,
    _resolve_run,
    _swap_hint,
    _warn_hard_labels,
    _warn_small_set,
)
from mlflow_imbalance.tracking._store import bounded_store, check_reachable
from mlflow_imbalance.tracking._timing import _now, _Timer, last_timings
from mlflow_imbalance.tracking.card import _render_card, _render_figures, _verdict
from mlflow_imbalance.tracking.headline import DEFAULT_N_BOOTSTRAP, _check_bootstrap, _headline
from mlflow_imbalance.tracking.runpage import update_run_page
from mlflow_imbalance.tracking.summary import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    SUMMARY_FILENAME,
    file_sha256,
    labels_digest,
    scores_digest,
    summary_from_json,
    summary_to_json,
)

logger = logging.getLogger(__name__)

__all__ = ["LoggedCounts", "log_counts", "log_scores"]


@dataclasses.dataclass(frozen=True, repr=False)
class LoggedCounts:
    """What :func:`log_scores` / :func:`log_counts` wrote: where, and the committed summary."""

    run_id: str
    name: str
    artifact_path: str
    summary: dict[str, Any]
    metrics: dict[str, float]

    def __repr__(self) -> str:
        """One short line: where the counts went and their size (the summary is not shown)."""
        s = self.summary
        return (
            f"LoggedCounts(run_id={self.run_id!r}, name={self.name!r}, "
            f"artifact_path={self.artifact_path!r}, n_pos={s.get('n_pos')!r}, "
            f"n_neg={s.get('n_neg')!r}, n_thresholds={s.get('n_thresholds')!r}, "
            f"metrics=<{len(self.metrics)}>)"
        )


class PendingLog:
    """A logging call handed to the background thread (autolog captures, callbacks).

    ``run_id``, ``name`` and ``artifact_path`` are known at once; :meth:`result` waits for the
    upload and returns the :class:`LoggedCounts` (None when the background part failed, which
    was warned about).
    """

    def __init__(self, run_id: str, name: str, artifact_path: str) -> None:
        import threading

        self.run_id = run_id
        self.name = name
        self.artifact_path = artifact_path
        self._done = threading.Event()
        self._result: LoggedCounts | None = None

    def _set(self, result: LoggedCounts | None) -> None:
        self._result = result
        self._done.set()

    def done(self) -> bool:
        """Whether the background part has finished (or failed)."""
        return self._done.is_set()

    def result(self, timeout: float | None = None) -> LoggedCounts | None:
        """The :class:`LoggedCounts` once uploaded (waits up to ``timeout`` s; None if failed)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"logging {self.name!r} to run {self.run_id} has not finished")
        return self._result

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return f"PendingLog(run_id={self.run_id!r}, name={self.name!r}, {state})"


def log_scores(
    y_true: Any,
    y_score: Any,
    *,
    name: str = "test",
    prevalences: Any = None,
    costs: Any = None,
    run_id: str | None = None,
    keep_scores: bool | int | str = "auto",
    pos_label: Any = None,
    sample_weight: Any = None,
    log_figures: bool = True,
    extra_summary: Mapping[str, Any] | None = None,
    tracking_uri: str | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    seed: int | None = 0,
    **renamed: Any,
) -> LoggedCounts:
    """Log the ROC counts of scores, with metrics, figures and a card, into an MLflow run.

    Args:
        y_true: binary labels (bool, int, float or str; list, array or pandas Series).
        y_score: scores, higher meaning more likely positive (finite).
        name: the set's name (``"test"``, the default of every entry point, whatever data
            was scored: validation or test): artifacts go to ``imbalance/<name>/``, metric
            keys end with it (``imb/ap 1e-4 <name>``); ``[A-Za-z0-9_.-]``, up to 100
            characters.
        prevalences: prevalences of interest (deployment η), in (0, 1); None =
            :data:`DEFAULT_PREVALENCES`; ``[]`` = only the test prevalence; at most
            :data:`~mlflow_imbalance.tracking._checks.MAX_LOGGED_PREVALENCES` (32).
        costs: None, ``(cost_fp, cost_fn)`` or ``{"fp": .., "fn": ..}``: adds the lowest
            expected cost and its threshold at each prevalence (metrics
            ``imb/min_cost_per_10k`` / ``imb/min_cost_per_1m`` and ``imb/cost_threshold``) and
            sets the figures' iso-performance lines.
        run_id: the run to log into (it may be finished); None = the active run (one is started
            if none is active, as ``mlflow.log_metric`` does).
        keep_scores: also store the raw labels and scores (``scores.npz``) for pairing: "auto"
            keeps them up to :data:`KEEP_SCORES_AUTO_LIMIT` examples; True/False; or an int
            limit.
        pos_label: the positive label, needed unless labels are {0,1}, {-1,1} or bools.
        sample_weight: optional non-negative weights (counts become weight sums; no intervals).
        log_figures: render the PNG figures (and embed them in the card).
        extra_summary: extra JSON entries for ``summary.json`` (see :func:`log_counts`); at
            most 32 levels deep and 1 MiB as JSON, checked before anything is computed.
        tracking_uri: tracking server/store; None = MLflow's current one. Every call to it is
            bounded: a 2 s reachability probe, then 5 s per HTTP request with one retry
            (environment variable ``MLFLOW_IMBALANCE_STORE_TIMEOUT``: seconds per request,
            ``0`` / ``off`` for MLflow's own retry settings).
        n_bootstrap: count-bootstrap replicates for the AP / PR-AUC / max-F1 intervals
            (:data:`DEFAULT_N_BOOTSTRAP`; 0 = no bootstrap intervals; else at least
            :data:`MIN_N_BOOTSTRAP`). ROC-AUC uses DeLong's variance and needs none.
        seed: seed of the bootstrap (recorded in ``summary.json``); None draws a fresh one,
            which is recorded too.
        **renamed: old spellings, accepted with a ``FutureWarning``: ``prevalence=`` (now
            ``prevalences=``), ``cost_fp=`` / ``cost_fn=`` (now ``costs=``).

    Returns:
        :class:`LoggedCounts` with the run id, artifact path and the committed summary.

    Warns:
        UserWarning: once, when the set has fewer than 10 positives or 10 negatives: it is
            logged, but the report will not test it against other runs.

    Raises:
        ValueError: on bad input (naming the argument), before anything is logged.
        mlflow.exceptions.MlflowException: unknown or deleted run, or the store failing; a
            tracking server that dies during the call gives one error naming its URI within
            the time budget above, and nothing is committed (``summary.json``, the commit
            marker, is uploaded last).
    """
    if renamed:
        prevalences, costs = _renamed_arguments(renamed, prevalences, costs, "log_scores")
    return _log_scores(  # type: ignore[return-value]
        y_true,
        y_score,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        keep_scores=keep_scores,
        pos_label=pos_label,
        sample_weight=sample_weight,
        log_figures=log_figures,
        extra_summary=extra_summary,
        tracking_uri=tracking_uri,
        n_bootstrap=n_bootstrap,
        seed=seed,
        defer=None,
    )


def _log_scores(
    y_true: Any,
    y_score: Any,
    *,
    name: str,
    prevalences: Any,
    costs: Any,
    run_id: str | None,
    keep_scores: bool | int | str,
    pos_label: Any,
    sample_weight: Any,
    log_figures: bool,
    extra_summary: Mapping[str, Any] | None,
    tracking_uri: str | None,
    n_bootstrap: int,
    seed: int | None,
    defer: Any,
) -> LoggedCounts | PendingLog:
    """:func:`log_scores`; with ``defer``, everything after the counts runs in the worker."""
    _check_log_options(
        name=name,
        prevalences=prevalences,
        costs=costs,
        extra_summary=extra_summary,
        log_figures=log_figures,
        n_bootstrap=n_bootstrap,
        seed=seed,
        run_id=run_id,
        tracking_uri=tracking_uri,
    )
    y = as_1d_array(y_true, "y_true")
    # float32 stays float32; int64 beyond 2**53 is exact or refused (never silently merged)
    s, s_lo, s_hi = _count_scores(y_score, "y_score")
    check_same_length([y, s], ["y_true", "y_score"])
    try:
        is_pos = binarize_labels(y, pos_label, name="y_true")
    except ValueError as exc:
        hint = _swap_hint(y, y_score)
        if not hint:
            raise
        raise ValueError(f"{exc}{hint}") from None
    w = check_weights(sample_weight, y.size)
    keep = _resolve_keep_scores(keep_scores, int(y.size))
    _warn_hard_labels(s)
    timer = _Timer()
    with timer.part("counts"):
        counts = RocCounts._from_validated(is_pos, s, w, compress=True, bounds=(s_lo, s_hi))
    if defer is None:  # an explicit call (autolog and the callbacks capture many sets)
        _warn_small_set(counts, name, "log_scores", stacklevel=4)
    internal = {"y_true_digest": labels_digest(is_pos, w), "n_examples": int(y.size)}
    return _log(
        counts,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        scores=Scores(is_pos, s, w) if keep else None,
        extra_summary=extra_summary,
        internal=internal,
        log_figures=log_figures,
        tracking_uri=tracking_uri,
        n_bootstrap=n_bootstrap,
        seed=seed,
        timer=timer,
        defer=defer,
    )


def log_counts(
    counts: RocCounts,
    *,
    name: str = "test",
    prevalences: Any = None,
    costs: Any = None,
    run_id: str | None = None,
    scores: Any = None,
    extra_summary: Mapping[str, Any] | None = None,
    log_figures: bool = True,
    tracking_uri: str | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    seed: int | None = 0,
    **renamed: Any,
) -> LoggedCounts:
    """Log already-computed counts (Spark, accumulators, synthetic positives) into a run.

    Same artifacts and metrics as :func:`log_scores`. ``y_true_digest`` is None unless
    ``scores`` are given.

    Args:
        counts: the counts to log.
        name: see :func:`log_scores`.
        prevalences: see :func:`log_scores`.
        costs: see :func:`log_scores`.
        run_id: see :func:`log_scores`.
        scores: optional ``(y_true, y_score[, sample_weight])`` to store as ``scores.npz``; they
            must reproduce ``n_pos`` and ``n_neg`` of ``counts``.
        extra_summary: JSON entries recorded in ``summary.json`` under ``extra`` and, when the
            key is not a schema key, at the top level too (e.g. ``{"positives": "synthesized"}``).
        log_figures: render the figures and embed them in the card.
        tracking_uri: see :func:`log_scores`.
        n_bootstrap: see :func:`log_scores`.
        seed: see :func:`log_scores`.
        **renamed: see :func:`log_scores`.

    Returns:
        :class:`LoggedCounts`.
    """
    if renamed:
        prevalences, costs = _renamed_arguments(renamed, prevalences, costs, "log_counts")
    if not isinstance(counts, RocCounts):
        raise TypeError(f"counts must be a RocCounts, got {type(counts).__name__}")
    _check_log_options(
        name=name,
        prevalences=prevalences,
        costs=costs,
        extra_summary=extra_summary,
        log_figures=log_figures,
        n_bootstrap=n_bootstrap,
        seed=seed,
        run_id=run_id,
        tracking_uri=tracking_uri,
    )
    internal: dict[str, Any] = {"y_true_digest": None, "n_examples": None}
    kept = None
    if scores is not None:
        if not isinstance(scores, tuple | list) or len(scores) not in (2, 3):
            raise ValueError("scores must be (y_true, y_score) or (y_true, y_score, sample_weight)")
        y = as_1d_array(scores[0], "scores[0] (y_true)")
        s = check_scores(scores[1], "scores[1] (y_score)")
        check_same_length([y, s], ["y_true", "y_score"])
        is_pos = binarize_labels(y, None if y.dtype == bool else _pos_of(y), name="y_true")
        w = check_weights(scores[2] if len(scores) == 3 else None, y.size)
        n_pos = float(is_pos.sum() if w is None else w[is_pos].sum())
        n_neg = float((~is_pos).sum() if w is None else w[~is_pos].sum())
        if not (math.isclose(n_pos, counts.n_pos) and math.isclose(n_neg, counts.n_neg)):
            raise ValueError(
                f"scores hold n_pos={n_pos:g}, n_neg={n_neg:g} but counts have "
                f"n_pos={counts.n_pos:g}, n_neg={counts.n_neg:g}"
            )
        kept = Scores(is_pos, s, w)
        internal = {"y_true_digest": labels_digest(is_pos, w), "n_examples": int(y.size)}
    _warn_small_set(counts, name, "log_counts", stacklevel=3)
    return _log(
        counts,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        scores=kept,
        extra_summary=extra_summary,
        internal=internal,
        log_figures=log_figures,
        tracking_uri=tracking_uri,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )


def _pos_of(y: np.ndarray) -> Any:
    """Positive label of stored scores: 1/True when present, else the larger of two labels."""
    labels = np.unique(y)
    return 1 if np.any(labels == 1) else labels[-1]


#: A member is deflated only when deflating its first bytes saves at least this share: zlib
#: (level 1) runs at ~30-40 MB/s on data it shrinks by less (0.22 s for 10^6 float64 scores
#: that deflate to 60 %), and at 70-400 MB/s on data it halves (labels, rounded scores).
_DEFLATE_MIN_SAVING = 0.5
_DEFLATE_PROBE_BYTES = 1 << 18


def _worth_deflating(arr: np.ndarray) -> bool:
    """Whether deflate (level 1) shrinks a sample of ``arr``'s bytes by a useful amount."""
    import zlib

    sample = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)[:_DEFLATE_PROBE_BYTES]
    if sample.size == 0:
        return False
    return len(zlib.compress(sample.tobytes(), 1)) <= (1 - _DEFLATE_MIN_SAVING) * sample.size


def _write_scores(path: Path, scores: Scores) -> None:
    """Write ``scores.npz``: a zip of ``.npy`` members (``numpy.load`` reads it as an npz).

    Each member is deflated (level 1) only when a probe of its first 256 KiB shows deflate at
    least halves it: labels and rounded or low-entropy scores shrink a lot, and fast, whereas the
    mantissas of continuous scores are nearly incompressible and partly redundant ones (float64
    holding float32 values plus an offset: 60 %) deflate slowly; deflating them would cost most
    of the hook's time for a third of the size at best (they are stored). Scores that are
    exactly float32 (most model outputs) are stored as float32, losslessly; labels as bool.
    """
    import zipfile

    s = np.asarray(scores.y_score, dtype=np.float64)
    # only scores within float32's range can be float32 (casting 1e300 overflows to inf)
    fits = np.abs(s).max(initial=0.0) <= np.finfo(np.float32).max
    s32 = s.astype(np.float32) if fits else s
    arrays = {
        "y_true": np.asarray(scores.y_true, dtype=bool),
        "y_score": s32 if fits and np.array_equal(s32, s) else s,
    }
    if scores.sample_weight is not None:
        arrays["sample_weight"] = np.asarray(scores.sample_weight, dtype=np.float64)
    with zipfile.ZipFile(path, "w") as zf:
        for key, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            # ZipFile.open(name, "w") takes the archive's current method for the new member
            deflate = _worth_deflating(arr)
            zf.compression = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            zf.compresslevel = 1 if deflate else None
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)


#: run id -> names of the sets logged into it by this process (autolog skips them).
_logged_names: dict[str, set[str]] = {}


def _names_logged(run_id: str) -> set[str]:
    """Names of the counts sets this process has logged (or queued) into ``run_id``."""
    return set(_logged_names.get(run_id, ()))


def _log(
    counts: RocCounts,
    *,
    name: str,
    prevalences: Any,
    costs: Any,
    run_id: str | None,
    scores: Scores | None,
    extra_summary: Mapping[str, Any] | None,
    internal: dict[str, Any],
    log_figures: bool,
    tracking_uri: str | None,
    n_bootstrap: Any = DEFAULT_N_BOOTSTRAP,
    seed: Any = 0,
    timer: _Timer | None = None,
    defer: Callable[[str, Callable[[], LoggedCounts], PendingLog], None] | None = None,
) -> LoggedCounts | PendingLog:
    """Check the options, resolve the run; then write and upload, or hand that to ``defer``."""
    timer = timer or _Timer()
    name = _check_name(name)
    etas = _check_prevalences(prevalences)
    cost = _check_costs(costs)
    extra = _check_extra(extra_summary)
    n_boot, seed = _check_bootstrap(n_bootstrap, seed)
    check_reachable(tracking_uri)  # a dead server: one clear error in seconds, not minutes
    with bounded_store(tracking_uri, "; nothing was logged"):  # dying after the probe
        client = _client(tracking_uri)
        run_id = _resolve_run(client, run_id)
        run_name = client.get_run(run_id).info.run_name  # the card's title
    artifact_path = f"{ARTIFACT_ROOT}/{name}"
    _logged_names.setdefault(run_id, set()).add(name)  # set.add is atomic under the GIL
    if defer is not None:
        # the training thread stops here: the counts are computed; the rest runs in the worker
        if scores is not None:  # the caller may reuse its buffers once we return
            scores = Scores(*(None if a is None else np.array(a, copy=True) for a in scores))
        pending = PendingLog(run_id, name, artifact_path)

        def finish() -> LoggedCounts:
            result = _write_and_upload(
                counts, client=client, run_id=run_id, run_name=run_name, name=name,
                artifact_path=artifact_path, etas=etas, cost=cost, extra=extra, n_boot=n_boot,
                seed=seed, scores=scores, internal=internal, log_figures=log_figures,
                timer=_Timer(), tracking_uri=tracking_uri,
            )  # fmt: skip
            pending._set(result)
            return result

        defer(run_id, finish, pending)
        return pending
    return _write_and_upload(
        counts, client=client, run_id=run_id, run_name=run_name, name=name,
        artifact_path=artifact_path, etas=etas, cost=cost, extra=extra, n_boot=n_boot, seed=seed,
        scores=scores, internal=internal, log_figures=log_figures, timer=timer,
        tracking_uri=tracking_uri,
    )  # fmt: skip


def _write_and_upload(
    counts: RocCounts,
    *,
    client: Any,
    run_id: str,
    run_name: str | None,
    name: str,
    artifact_path: str,
    etas: list[float],
    cost: dict[str, float] | None,
    extra: dict[str, Any],
    n_boot: int,
    seed: Any,
    scores: Scores | None,
    internal: dict[str, Any],
    log_figures: bool,
    timer: _Timer,
    tracking_uri: str | None = None,
) -> LoggedCounts:
    """Compute the numbers, render figures and card in a temporary directory, then upload.

    The upload runs within the dead-server budget (:func:`~._store.bounded_store`): a server
    dying mid-upload raises one error naming the URI in seconds; ``summary.json``, the commit
    marker, goes last, so nothing half-written is ever read as committed.
    """
    import mlflow
    from mlflow.entities import Metric, RunTag

    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        data_dir = Path(tmp) / "data"
        commit_dir = Path(tmp) / "commit"
        data_dir.mkdir()
        commit_dir.mkdir()
        with timer.part("metrics"):
            headline, series = _headline(
                counts, name, etas, cost, n_boot=n_boot, seed=seed, timer=timer
            )
            flat = keys.flat_metrics(name, headline)
            steps = keys.sweep_metrics(name, series)
        for table in (timer.parts, timer.cpu):  # report the intervals apart from the metrics
            table["metrics"] -= table.get("intervals", 0.0)
        # lossless up to MAX_STORED_THRESHOLDS, then the bounded-error reduction (its error is
        # recorded in the file): whatever is logged always loads back
        counts.bounded().save(data_dir / COUNTS_FILENAME)
        (data_dir / COUNTS_FILENAME).chmod(0o644)
        roles = {COUNTS_FILENAME: "counts"}
        scores_info = None
        pending = None
        pool = None
        if scores is not None:
            # zlib and sha256 release the GIL: write the scores in a thread while the figures
            # render in this one (the two are the largest parts of the hook).
            from concurrent.futures import ThreadPoolExecutor

            def write_scores() -> tuple[str, float]:
                t0 = _now()
                _write_scores(data_dir / SCORES_FILENAME, scores)
                return scores_digest(scores.y_score), _now() - t0

            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mlflow-imbalance")
            pending = pool.submit(write_scores)
        try:
            figures: dict[str, str] = {}
            if log_figures:
                with timer.part("figures"):
                    figures = _render_figures(counts, name, etas, cost, data_dir)
                roles.update({f: "figure" for f in figures.values()})
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        if pending is not None:
            digest, seconds = pending.result()
            timer.parts["scores (in parallel)"] = seconds
            roles[SCORES_FILENAME] = "scores"
            scores_info = {"file": SCORES_FILENAME, "n": int(scores.y_score.size), "digest": digest}
        # summary.json reads top-down: what it is and the headline first, the manifest last
        summary: dict[str, Any] = {
            "schema": SCHEMA_NAME,
            "schema_version": SCHEMA_VERSION,
            "name": name,
            "run_name": run_name,
            "run_id": run_id,
            "test_prevalence": float(counts.prevalence),
            "n_pos": counts.n_pos,
            "n_neg": counts.n_neg,
            "prevalences": etas,
            "costs": cost,
            "headline": headline,
            "sweep": series,
            "n_examples": internal.get("n_examples"),
            "n_thresholds": counts.n_thresholds,
            "weighted": counts.weighted,
            "compressed": counts.compressed,
            "max_tpr_error": counts.max_tpr_error,
            "max_fpr_error": counts.max_fpr_error,
            "y_true_digest": internal.get("y_true_digest"),
            "package_version": __version__,
            "mlflow_version": mlflow.__version__,
            "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "figures": figures,
            "card": None,
            "scores": scores_info,
            "extra": extra,
        }
        for key, value in extra.items():
            summary.setdefault(key, value)
        with timer.part("card"):
            card = _render_card(summary, data_dir, figures)
            (data_dir / CARD_FILENAME).write_text(card, encoding="utf-8")
        roles[CARD_FILENAME] = "card"
        summary["card"] = CARD_FILENAME
        summary["files"] = {  # the manifest: the last key, after any extra entries
            fname: {
                "sha256": file_sha256(data_dir / fname),
                "bytes": (data_dir / fname).stat().st_size,
                "role": role,
            }
            for fname, role in roles.items()
        }
        text = summary_to_json(summary)
        summary_from_json(text, source="the summary being written")  # never commit an invalid one
        (commit_dir / SUMMARY_FILENAME).write_text(text, encoding="utf-8")

        # ---- only now touch the store: data files, metrics, then the commit marker
        uncommitted = (
            f"; nothing was committed to run {run_id} (summary.json, the commit marker, was "
            "not written)"
        )
        with timer.part("upload"), bounded_store(tracking_uri, uncommitted):
            client.log_artifacts(run_id, str(data_dir), artifact_path=artifact_path)
            import time

            now = int(time.time() * 1000)
            # single values at step 0; the sweep under its own keys, steps in ascending η
            batch = [Metric(k, float(v), now, 0) for k, v in flat.items()]
            batch.extend(Metric(k, v, now, step) for k, v, step in steps)
            tags = [RunTag(k, v) for k, v in keys.constant_tags(name, summary).items()]
            for i in range(0, max(len(batch), 1), 1000):
                client.log_batch(run_id, metrics=batch[i : i + 1000], tags=tags if i == 0 else [])
            client.log_artifact(run_id, str(commit_dir / SUMMARY_FILENAME), artifact_path)
        # the run's own page: the summary in its description, the card at the artifact root
        with timer.part("run page"), bounded_store(tracking_uri, ""):
            update_run_page(
                client, run_id, name, card=data_dir / CARD_FILENAME, summary=summary,
                decisions=_verdict(summary),
            )  # fmt: skip
    last_timings.parts = dict(timer.parts)
    last_timings.cpu = dict(timer.cpu)
    logger.info("logged counts %r to run %s (%s)", name, run_id, artifact_path)
    return LoggedCounts(run_id, name, artifact_path, summary, flat)
