r"""Unlabeled production scores, per batch, logged to the run whose model produced them.

:func:`log_production_scores` stores the exact counts of one batch of production scores
(:class:`~mlflow_imbalance.core.production.ScoreCounts`: how many cases score at or above each
distinct score) beside the run's ROC counts, and estimates the deployment prevalence from them
(:func:`~mlflow_imbalance.stats.prevalence.estimate_prevalence`). Under ``imbalance/<name>/``:

- ``production/<batch>.npz``: the counts (format ``mlflow-imbalance/score-counts``,
  docs/format.md), lossless up to :data:`~mlflow_imbalance.core.counts.MAX_STORED_THRESHOLDS`
  distinct scores (beyond: a bounded-error thinning whose error is recorded);
- ``production/<batch>.json``: written **last**, the batch's commit marker: batch label, order,
  size, the estimate (value, interval, method, prior-shift p-value, text) and the manifest
  (sha256 of ``<batch>.npz``, which the loaders verify).

Metrics, one step per batch (step = the batch's order, 0, 1, 2, ... in logging order):
``imb/eta_est <name>``, ``imb/eta_est_low <name>``, ``imb/eta_est_high <name>``,
``imb/prior_shift_p <name>`` and ``imb/prod_n <name>`` (the batch's size).

Atomicity, as :func:`~mlflow_imbalance.tracking.log.log_scores`: everything is validated and
computed in a temporary directory before the store is touched (bad input raises ``ValueError``
naming the argument, and nothing is written); then the counts, the metrics, and the ``.json``
commit marker. A batch whose upload broke before its ``.json`` is invisible to the loaders; a
merged batch whose upload broke half-way fails the manifest check. An HTTP store that does not
answer a short probe raises :class:`~mlflow_imbalance.tracking._store.TrackingServerUnreachable`
at once (the time budget of :mod:`~mlflow_imbalance.tracking._store`).

A batch label is logged once: logging it again raises, unless ``merge=True``, which adds the
new scores to the batch exactly (:func:`~mlflow_imbalance.core.production.merge_score_counts`),
re-estimates and logs the metrics again at the batch's step. One writer per run and name at a
time (two processes choosing the default label at once could pick the same one).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import html
import json
import logging
import math
import re
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance._version import __version__
from mlflow_imbalance.core import format as _format
from mlflow_imbalance.core.counts import MAX_STORED_THRESHOLDS
from mlflow_imbalance.core.production import ScoreCounts, merge_score_counts
from mlflow_imbalance.tracking import _audit_store, _worker, keys
from mlflow_imbalance.tracking._checks import (
    ARTIFACT_ROOT,
    CARD_FILENAME,
    _check_flag,
    _check_name,
    _check_run_target,
    _client,
    _mlflow_exception,
)
from mlflow_imbalance.tracking._store import check_reachable
from mlflow_imbalance.tracking.load import _download, _load_summary, load_counts
from mlflow_imbalance.tracking.runpage import update_run_page
from mlflow_imbalance.tracking.summary import SUMMARY_FILENAME, file_sha256

logger = logging.getLogger(__name__)

__all__ = [
    "ESTIMATE_METRICS",
    "PRODUCTION_DIR",
    "LoggedProduction",
    "list_production_batches",
    "load_production_counts",
    "log_production_scores",
    "production_metric_keys",
]

#: Folder of the production batches inside ``imbalance/<name>/``.
PRODUCTION_DIR = "production"
RECORD_SCHEMA = "mlflow-imbalance/production-batch"
RECORD_SCHEMA_VERSION = 1
#: Largest ``<batch>.json`` the loaders read.
MAX_RECORD_BYTES = 1 << 20
#: Metric stems logged per batch (step = batch order): ``imb/<stem> <name>``.
ESTIMATE_METRICS: dict[str, str] = {
    "eta_est": "estimate",
    "eta_est_low": "low",
    "eta_est_high": "high",
    "prior_shift_p": "prior_shift_p",
}
#: The batch size, logged at the same step.
N_METRIC = "prod_n"

_BATCH_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")  # used with fullmatch


@dataclasses.dataclass(frozen=True, repr=False)
class LoggedProduction:
    """What :func:`log_production_scores` wrote for one batch.

    Attributes:
        run_id: the run holding the counts.
        name: the counts set (``imbalance/<name>/``).
        batch: the batch label (the file name's stem).
        order: the batch's place in logging order: the step of its metrics.
        n: cases in the batch (after a merge: of the merged batch).
        artifact_path: ``imbalance/<name>/production``.
        estimate: the :class:`~mlflow_imbalance.stats.prevalence.PrevalenceEstimate`, or None
            (``estimate=False``, or the counts could not support one: ``record["estimate_note"]``).
        record: the committed ``<batch>.json``.
        metrics: the metrics logged at step ``order``.
    """

    run_id: str
    name: str
    batch: str
    order: int
    n: int
    artifact_path: str
    estimate: Any
    record: dict[str, Any]
    metrics: dict[str, float]

    def __repr__(self) -> str:
        """One line: where the batch went, its size and the estimate."""
        e = self.record.get("estimate")

        def g(v: float | None) -> str:
            return "nan" if v is None else f"{v:.4g}"

        est = "None" if not e else f"{g(e['value'])} [{g(e['interval'][0])}, {g(e['interval'][1])}]"
        return (
            f"LoggedProduction(run_id={self.run_id!r}, name={self.name!r}, batch={self.batch!r}, "
            f"order={self.order}, n={self.n}, estimate={est})"
        )


def production_metric_keys(name: str) -> dict[str, str]:
    """Metric stem -> MLflow key of the per-batch series (``imb/eta_est <name>``, ...)."""
    stems = [*ESTIMATE_METRICS, N_METRIC]
    return {stem: keys.metric_key(name, stem) for stem in stems}


# ---------------------------------------------------------------------------- checks
def _check_batch(batch: Any) -> str | None:
    """The batch label as a safe file-name component (None: the next integer)."""
    if batch is None:
        return None
    if isinstance(batch, bool | np.bool_):
        raise ValueError(f"batch must be a label (string, integer or date), got {batch!r}")
    if isinstance(batch, int | np.integer):
        if not 0 <= int(batch) < 10**100:
            raise ValueError(f"batch must be an integer in [0, 1e100) or a label: {batch!r:.80}")
        return str(int(batch))
    if isinstance(batch, _dt.date) and not isinstance(batch, _dt.datetime):
        return batch.isoformat()
    if not isinstance(batch, str) or not _BATCH_RE.fullmatch(batch) or ".." in batch:
        raise ValueError(
            "batch must be a safe file-name component: 1-100 characters from [A-Za-z0-9_.-], "
            "not starting with '.' or '-', no '..' (e.g. '2026-11-27', 'week-48', 'site_A', "
            f"or an integer or a datetime.date); got {batch!r:.120}"
        )
    return batch


def _check_confidence(confidence: Any) -> float:
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(confidence, bool) or not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r:.80}")
    return value


def _as_score_counts(scores: Any) -> ScoreCounts:
    """Exact counts of ``scores`` (raw scores, or a ``ScoreCounts`` already computed)."""
    if isinstance(scores, ScoreCounts):
        cnt = scores.n_above
        if cnt[-1] != scores.n or cnt[0] < 1 or np.any(cnt[1:] <= cnt[:-1]):
            raise ValueError(
                f"scores is a ScoreCounts that is not exact ({scores!r}): every threshold must "
                "hold at least one case and n_above[-1] must equal n, as "
                "ScoreCounts.from_scores and score_counts_from_spark give"
            )
        return scores
    return ScoreCounts.from_scores(scores)  # ValueError naming `scores` (empty, NaN, ...)


def _bounded(sc: ScoreCounts, max_thresholds: int) -> tuple[ScoreCounts, float]:
    """At most ``max_thresholds`` thresholds: lossless below, else the lowest of each share bin.

    The kept thresholds keep their exact counts; a dropped score ``t`` is then read at the next
    higher kept one (:meth:`ScoreCounts.share_at_or_above`), so its share is understated by at
    most the returned error: the realised maximum, about ``1 / max_thresholds`` (plus the share
    of a heavily tied score).
    """
    k = sc.n_thresholds
    if k <= max_thresholds:
        return sc, 0.0
    cnt = sc.n_above
    bins = np.ceil(cnt * (max_thresholds / sc.n)).astype(np.int64) - 1
    keep = np.ones(k, dtype=bool)
    keep[:-1] = bins[1:] != bins[:-1]
    kept = np.flatnonzero(keep)
    above = np.concatenate(([0], cnt[kept[:-1]]))  # count at the next higher kept threshold
    gap = kept > np.concatenate(([0], kept[:-1] + 1))  # scores dropped just above kept[j]
    err = float(np.max(cnt[kept[gap] - 1] - above[gap], initial=0)) / sc.n
    return ScoreCounts(sc.thresholds[kept], cnt[kept], sc.n), min(1.0, err)


# ---------------------------------------------------------------------------- store
def _prefix(name: str) -> str:
    return f"{ARTIFACT_ROOT}/{name}/{PRODUCTION_DIR}"


def _production_run(client: Any, run_id: str | None) -> str:
    """``run_id``, else the active run (never started: it would hold no counts)."""
    import mlflow

    if run_id is None:
        active = mlflow.active_run()
        if active is None:
            raise ValueError(
                "run_id is None and no run is active: pass run_id= of the run whose model "
                "produced the scores (the run holding its test counts)"
            )
        run_id = active.info.run_id
    run = client.get_run(run_id)  # MlflowException naming the run when unknown
    if run.info.lifecycle_stage != "active":
        raise _mlflow_exception(
            f"run {run_id} is {run.info.lifecycle_stage}; restore it before logging to it"
        )
    return run_id


def _require_counts(client: Any, run_id: str, name: str) -> dict[str, Any]:
    """The run's committed ``summary.json`` of ``name``; a clear error when it has none."""
    from mlflow.exceptions import MlflowException

    try:
        return _load_summary(client, run_id, name)
    except MlflowException as exc:
        if exc.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise
        raise _mlflow_exception(
            f"cannot log production scores with run_id={run_id!r}, name={name!r}: {exc.message} "
            "Production batches are tied to the run's test counts: log them first "
            "(mi.log_scores(y_test, scores_test, name=...)) or pass the run_id/name that has them",
            "RESOURCE_DOES_NOT_EXIST",
        ) from None


def _check_record(record: Any, source: str) -> dict[str, Any]:
    if not isinstance(record, dict) or record.get("schema") != RECORD_SCHEMA:
        raise ValueError(f"{source} is not an mlflow-imbalance production batch record")
    if record.get("schema_version") != RECORD_SCHEMA_VERSION:
        raise ValueError(
            f"{source} has schema_version {record.get('schema_version')!r}; this version reads "
            f"{RECORD_SCHEMA_VERSION} (upgrade the package to read newer records)"
        )
    batch, order, n = record.get("batch"), record.get("order"), record.get("n")
    if not isinstance(batch, str) or _check_batch(batch) != batch:
        raise ValueError(f"{source}: batch {batch!r:.80} is not a valid batch label")
    for key, value, low in (("order", order, 0), ("n", n, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{source}: {key} must be an integer >= {low}, got {value!r:.80}")
    entry = (record.get("files") or {}).get(f"{batch}.npz")
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        raise ValueError(f"{source}: its files manifest does not list {batch}.npz")
    return record


def _committed_labels(client: Any, run_id: str, name: str) -> dict[str, str]:
    """Label -> artifact path of every ``<batch>.json`` (one listing call, nothing read)."""
    out = {}
    for entry in client.list_artifacts(run_id, _prefix(name)):
        fname = entry.path.rsplit("/", 1)[-1]
        if not entry.is_dir and fname.endswith(".json"):
            out[fname.removesuffix(".json")] = entry.path
    return out


def _read_record(client: Any, run_id: str, name: str, label: str, path: str, tmp: str) -> Any:
    """The validated ``<batch>.json`` at ``path``."""
    source = f"run {run_id}: {path}"
    text = _download(client, run_id, path, tmp).read_bytes()
    if len(text) > MAX_RECORD_BYTES:
        raise ValueError(f"{source} is {len(text)} bytes, above the limit of {MAX_RECORD_BYTES}")
    record = _check_record(json.loads(text), source)
    if record["batch"] != label or record.get("name") != name:
        raise ValueError(f"{source} describes batch {record['batch']!r} of another set")
    return record


def _batch_records(client: Any, run_id: str, name: str) -> dict[str, dict[str, Any]]:
    """Committed batches (those with a valid ``<batch>.json``), in batch order."""
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        for label, path in _committed_labels(client, run_id, name).items():
            try:
                out.append(_read_record(client, run_id, name, label, path, tmp))
            except (ValueError, OSError) as exc:
                logger.warning("run %s: ignoring production batch file %s: %s", run_id, path, exc)
    out.sort(key=lambda r: (r["order"], r["batch"]))
    return {r["batch"]: r for r in out}


def _next_order(client: Any, run_id: str, name: str) -> int:
    """One more than the highest step of ``imb/prod_n <name>`` (logged before each marker)."""
    history = client.get_metric_history(run_id, production_metric_keys(name)[N_METRIC])
    return max((int(m.step) for m in history), default=-1) + 1


def _load_batch(
    client: Any, run_id: str, name: str, record: dict[str, Any], tmp: str
) -> tuple[ScoreCounts, float]:
    """A committed batch's counts, verified against its manifest; and its share error."""
    batch = record["batch"]
    fname = f"{batch}.npz"
    entry = record["files"][fname]
    path = f"{_prefix(name)}/{fname}"
    if int(entry.get("bytes", 0)) > _format.MAX_ARCHIVE_BYTES:
        raise ValueError(f"run {run_id}: {path} is listed above {_format.MAX_ARCHIVE_BYTES} bytes")
    data = _download(client, run_id, path, tmp).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise ValueError(
            f"run {run_id}: {path} does not match the manifest of {batch}.json (sha256 "
            f"{digest[:12]}… vs {entry['sha256'][:12]}…): modified, or a merge did not finish"
        )
    fields = _format.decode_score_counts(data, source=f"run {run_id}: {path}")
    if fields["batch"] != batch or fields["n"] != record["n"]:
        raise ValueError(f"run {run_id}: {path} disagrees with {batch}.json (batch label or n)")
    sc = ScoreCounts.from_arrays(fields["thresholds"], fields["n_above"], fields["n"])
    return sc, fields["max_share_error"]


# ---------------------------------------------------------------------------- estimate
def _logged_costs(client: Any, run_id: str, name: str) -> tuple[float, float] | None:
    """The run's logged costs ``(C_FP, C_FN)`` from its ``summary.json`` (None: none logged)."""
    costs = _load_summary(client, run_id, name).get("costs")
    if isinstance(costs, Mapping) and {"fp", "fn"} <= set(costs):
        return float(costs["fp"]), float(costs["fn"])
    return None


def _estimate(
    counts: Any,
    sc: ScoreCounts,
    confidence: float,
    method: str,
    costs: tuple[float, float] | None = None,
) -> tuple[Any, dict[str, Any] | None, str | None]:
    """``(PrevalenceEstimate or None, its JSON entry or None, a note when there is none)``.

    With the run's logged ``costs`` the estimate carries its audit advice where it is wide or
    its check fails (:attr:`PrevalenceEstimate.audit`): the entry's ``audit_budget`` and the
    end of its ``text``, which the card and the run page show.
    """
    from mlflow_imbalance.stats._checks import InsufficientDataError
    from mlflow_imbalance.stats.prevalence import estimate_prevalence

    try:
        est = estimate_prevalence(counts, sc, confidence=confidence, method=method)
    except InsufficientDataError as exc:
        warnings.warn(
            f"mlflow-imbalance: no prevalence estimate for this batch ({exc}); its counts are "
            "logged",
            UserWarning,
            stacklevel=3,
        )
        return None, None, str(exc)
    except ValueError as exc:  # e.g. production scores on another scale than the test scores
        raise ValueError(
            f"{exc} (nothing was logged; estimate=False stores the counts without an estimate)"
        ) from None

    from mlflow_imbalance.stats.robust import with_audit_advice

    est = with_audit_advice(est, counts, sc, costs)

    def num(v: Any) -> float | None:
        return None if v is None or not math.isfinite(float(v)) else float(v)

    misfit = getattr(est, "misfit", None)
    entry = {
        "value": num(est.estimate),
        "interval": [num(est.low), num(est.high)],
        "confidence": num(getattr(est, "confidence", confidence)),
        "method": str(est.method),
        "prior_shift_p": num(est.prior_shift_p),
        "text": str(est.text),
        # diagnostics (PrevalenceEstimate's fields of the same names; misfit as its text)
        "check_passed": bool(getattr(est, "check_passed", True)),
        "check_alpha": num(getattr(est, "check_alpha", None)),
        "at_zero": bool(getattr(est, "at_zero", False)),
        "limited_by_test": bool(getattr(est, "limited_by_test", False)),
        "more_negatives_needed": _int_or_none(getattr(est, "more_negatives_needed", None)),
        "test_share": num(getattr(est, "test_share", None)),
        "misfit": None if misfit is None else str(misfit.text),
        "out_of_range": None if est.out_of_range is None else str(est.out_of_range),
        "n_bins": _int_or_none(getattr(est, "n_bins", None)),
        "estimates": {k: num(v) for k, v in (getattr(est, "estimates", None) or {}).items()},
        "audit_budget": _budget_entry(getattr(est, "audit", None)),
    }
    return est, entry, None


def _budget_entry(b: Any) -> dict[str, Any] | None:
    """The batch JSON's ``audit_budget``: the labels that would settle the run's decision."""
    if b is None or b.labels is None:
        return None
    return {
        "labels": int(b.labels),
        "prevalence_half_width": float(b.half_width),
        "tolerance": float(b.tolerance),
        "precision_half_width": (
            None if b.precision_half_width is None else float(b.precision_half_width)
        ),
        "text": str(b.text),
    }


def _int_or_none(v: Any) -> int | None:
    return None if v is None else int(v)


# ---------------------------------------------------------------------------- public API
def log_production_scores(
    scores: Any,
    *,
    name: str = "test",
    batch: Any = None,
    run_id: str | None = None,
    estimate: bool = True,
    merge: bool = False,
    confidence: float = 0.95,
    method: str = "auto",
    tracking_uri: str | None = None,
) -> LoggedProduction:
    """Log one batch of unlabeled production scores to the run whose model produced them.

    Stores the batch's exact score counts as ``imbalance/<name>/production/<batch>.npz`` and,
    with ``estimate``, the deployment prevalence estimated from them and the run's ROC counts
    of ``name`` (``estimate_prevalence(counts, production)``) as metrics at step = the batch's
    order and in ``<batch>.json`` (the commit marker, written last).

    Args:
        scores: the batch's scores (1-d, finite; list, array or pandas Series), or a
            :class:`~mlflow_imbalance.core.production.ScoreCounts` already computed (e.g.
            :func:`~mlflow_imbalance.integrations.spark.score_counts_from_spark`).
        name: the run's counts set the scores belong to (default ``"test"``): the run must have
            committed ROC counts under it.
        batch: the batch label, a safe file-name component (``[A-Za-z0-9_.-]``, 1-100
            characters, not starting with '.' or '-', no '..'), an integer or a
            ``datetime.date`` (ISO date); None = the next integer (``"0"``, ``"1"``, ...).
        run_id: the run; None = the active run (no run is started: it would hold no counts).
        estimate: estimate the prevalence and log it.
        merge: when ``batch`` is already logged, add these scores to it (exact merge) instead
            of raising.
        confidence: level of the estimate's interval.
        method: passed to ``estimate_prevalence`` (``"auto"``).
        tracking_uri: tracking store; None = MLflow's current one.

    Returns:
        :class:`LoggedProduction` (``batch``, ``order``, ``n``, ``estimate`` or None, ...).

    Raises:
        ValueError: bad input or a batch already logged (naming the argument); nothing is
            written.
        mlflow.exceptions.MlflowException: unknown or deleted run, a run without counts under
            ``name`` (naming ``run_id`` and ``name``), or the store failing.
    """
    name = _check_name(name)
    label = _check_batch(batch)
    do_estimate = _check_flag(estimate, "estimate")
    do_merge = _check_flag(merge, "merge")
    level = _check_confidence(confidence)
    if not isinstance(method, str) or not method:
        raise ValueError(f"method must be a non-empty string, got {method!r:.80}")
    _check_run_target(run_id, tracking_uri)
    sc = _as_score_counts(scores)
    check_reachable(tracking_uri)  # a dead server: one clear error in seconds, not minutes
    _worker.flush()  # the run's counts may still be on their way (autolog, callbacks)
    client = _client(tracking_uri)
    run_id = _production_run(client, run_id)
    _require_counts(client, run_id, name)
    labels = _committed_labels(client, run_id, name)  # no record is read unless merging
    order = _next_order(client, run_id, name)
    parts = 1
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        taken = {b.lower(): b for b in labels}
        if label is None:
            label = str(order)
            while label.lower() in taken:
                label = str(int(label) + 1)
        elif label in labels:
            record = _read_record(client, run_id, name, label, labels[label], tmp)
            if not do_merge:
                raise ValueError(
                    f"batch={label!r} is already logged to run {run_id} under name={name!r} "
                    f"(order {record['order']}, n={record['n']}): pass merge=True to add these "
                    "scores to it, or another batch label"
                )
            if _audit_store.has_plan(client, run_id, name, label):
                raise ValueError(
                    f"batch={label!r} of run {run_id} (name={name!r}) has an audit plan "
                    "(mi.plan_audit): its cases are fixed, so it can no longer be merged into; "
                    "log these scores as another batch"
                )
            old, old_err = _load_batch(client, run_id, name, record, tmp)
            if old_err > 0:
                raise ValueError(
                    f"batch={label!r} was stored thinned (max_share_error={old_err:.3g}): it "
                    "cannot be merged exactly; log these scores as another batch"
                )
            sc = merge_score_counts([old, sc])
            order = record["order"]
            parts = int(record.get("parts", 1)) + 1
        elif label.lower() in taken:
            raise ValueError(
                f"batch={label!r} differs from the logged batch {taken[label.lower()]!r} only in "
                "case (the two files would collide on case-insensitive stores)"
            )
        stored, share_error = _bounded(sc, MAX_STORED_THRESHOLDS)
        entry = note = est = None
        if do_estimate:
            counts = load_counts(run_id, name, tracking_uri=tracking_uri)
            costs = _logged_costs(client, run_id, name)
            est, entry, note = _estimate(counts, sc, level, method, costs)
        return _write_and_upload(
            client, run_id, name, label, order, parts, sc.n, stored, share_error, est, entry,
            note, tmp,
        )  # fmt: skip


def _write_and_upload(
    client: Any,
    run_id: str,
    name: str,
    label: str,
    order: int,
    parts: int,
    n: int,
    stored: ScoreCounts,
    share_error: float,
    est: Any,
    entry: dict[str, Any] | None,
    note: str | None,
    tmp: str,
) -> LoggedProduction:
    """Write ``<batch>.npz`` and ``<batch>.json`` in ``tmp``; upload counts, metrics, marker."""
    import mlflow
    from mlflow.entities import Metric

    data_dir, commit_dir = Path(tmp) / "data", Path(tmp) / "commit"
    data_dir.mkdir()
    commit_dir.mkdir()
    npz = data_dir / f"{label}.npz"
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    meta = {"run_id": run_id, "name": name, "order": order, "parts": parts, "created_at": created}
    _format.save_score_counts(npz, stored, batch=label, meta=meta, max_share_error=share_error)
    npz.chmod(0o644)
    metric_keys = production_metric_keys(name)
    metrics = {metric_keys[N_METRIC]: float(n)}
    if entry is not None:
        values = {
            "estimate": entry["value"],
            "low": entry["interval"][0],
            "high": entry["interval"][1],
            "prior_shift_p": entry["prior_shift_p"],
        }
        for stem, field in ESTIMATE_METRICS.items():
            if values[field] is not None:
                metrics[metric_keys[stem]] = values[field]
    record = {
        "schema": RECORD_SCHEMA,
        "schema_version": RECORD_SCHEMA_VERSION,
        "name": name,
        "batch": label,
        "order": order,
        "run_id": run_id,
        "n": int(n),
        "estimate": entry,
        "estimate_note": note,
        "metrics": metrics,
        "n_thresholds": stored.n_thresholds,
        "max_share_error": share_error,
        "min_score": stored.min_score,
        "max_score": stored.max_score,
        "parts": parts,
        "package_version": __version__,
        "mlflow_version": mlflow.__version__,
        "created_at": created,
        "files": {
            npz.name: {
                "sha256": file_sha256(npz),
                "bytes": npz.stat().st_size,
                "role": "score_counts",
            }
        },
    }
    text = json.dumps(record, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    _check_record(json.loads(text), "the batch record being written")  # never commit a bad one
    (commit_dir / f"{label}.json").write_text(text, encoding="utf-8")

    # ---- only now touch the store: counts, metrics, then the commit marker
    prefix = _prefix(name)
    client.log_artifact(run_id, str(npz), prefix)
    now = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(k, v, now, order) for k, v in metrics.items()])
    client.log_artifact(run_id, str(commit_dir / f"{label}.json"), prefix)
    logger.info("logged production batch %r (n=%d) to run %s (%s)", label, n, run_id, prefix)
    _refresh_card(client, run_id, name, Path(tmp) / "card")
    return LoggedProduction(run_id, name, label, order, int(n), prefix, est, record, metrics)


#: Where the run card holds its production section (``templates/run_card.html.j2``).
CARD_SECTION = ("<!-- production -->", "<!-- /production -->")


def card_section(
    records: Mapping[str, Mapping[str, Any]], audits: Mapping[str, str] | None = None
) -> str:
    """The run card's production section: one sentence per batch, as the report's table row.

    Each sentence is the estimator's own (:attr:`PrevalenceEstimate.text`, the one the report
    shows for that batch), or why the batch has no estimate; an audited batch adds the audit's
    line (``audits``: batch -> :attr:`AuditEstimate.text`). Escaped HTML.
    """
    audits = audits or {}
    items = []
    for label, r in records.items():
        est = r.get("estimate") or {}
        what = est.get("text") or f"no estimate ({r.get('estimate_note') or 'not requested'})"
        flag = "" if est.get("check_passed", True) else ' class="fails"'
        items.append(
            f"<li{flag}><b>batch {html.escape(str(label))}</b> ({int(r['n']):,} cases): "
            f"{html.escape(str(what))}"
            + (f"<br>{html.escape(audits[label])}" if label in audits else "")
            + "</li>"
        )
    return (
        f"{CARD_SECTION[0]}<h2>Deployment prevalence from production</h2>"
        '<p class="muted">Estimated from this run\'s ROC counts and its unlabeled production '
        "scores, assuming only the class balance changed (the prior-shift check tests it).</p>"
        f'<ul class="verdict">{"".join(items)}</ul>{CARD_SECTION[1]}'
    )


def _refresh_card(client: Any, run_id: str, name: str, tmp: Path) -> None:
    """Rewrite the run's card with its production section, and the card's manifest entry.

    The batch is committed before this runs; a failure here only warns (the card then lacks
    the newest batch until the next one is logged).
    """
    prefix = f"{ARTIFACT_ROOT}/{name}"
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        card = Path(_download(client, run_id, f"{prefix}/{CARD_FILENAME}", str(tmp)))
        summary_path = Path(_download(client, run_id, f"{prefix}/{SUMMARY_FILENAME}", str(tmp)))
        text = card.read_text(encoding="utf-8")
        start, end = CARD_SECTION
        records = _batch_records(client, run_id, name)
        audits = _audit_store.card_lines(client, run_id, name)
        section = card_section(records, audits)
        if start in text and end in text:
            text = text[: text.index(start)] + section + text[text.index(end) + len(end) :]
        else:  # a card logged before production sections existed
            text = text.replace("</body>", section + "\n</body>", 1)
        out = tmp / "new" / CARD_FILENAME
        out.parent.mkdir()
        out.write_text(text, encoding="utf-8")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        entry = summary.get("files", {}).get(CARD_FILENAME)
        client.log_artifact(run_id, str(out), prefix)
        if isinstance(entry, dict):  # keep the manifest true to the card as it now is
            entry.update(sha256=file_sha256(out), bytes=out.stat().st_size)
            new_summary = tmp / "new" / SUMMARY_FILENAME
            new_summary.write_text(
                json.dumps(summary, indent=2, allow_nan=False, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
            client.log_artifact(run_id, str(new_summary), prefix)
        # the run's own page: its description's production lines, the card at the root
        update_run_page(client, run_id, name, card=out, production=records)
    except Exception as exc:  # the batch is logged; the card is a view of it
        warnings.warn(
            f"mlflow-imbalance: production batch logged, but run {run_id}'s card was not "
            f"updated ({type(exc).__name__}: {exc})",
            stacklevel=3,
        )


def list_production_batches(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> dict[str, dict[str, Any]]:
    """The committed production batches of a run's counts set, in batch order.

    Returns:
        Batch label -> its ``<batch>.json`` record: ``order`` (the metrics' step), ``n``,
        ``estimate`` (``{"value", "interval", "confidence", "method", "prior_shift_p",
        "text"}`` or None, then ``estimate_note`` says why), ``metrics``, ``created_at``, ...
        Batches whose upload did not finish (no ``.json``) are left out; unreadable records
        are left out with a warning. Empty when the run has none.
    """
    name = _check_name(name)
    _worker.flush()
    return _batch_records(_client(tracking_uri), run_id, name)


def load_production_counts(
    run_id: str, name: str = "test", *, tracking_uri: str | None = None
) -> dict[str, ScoreCounts]:
    """The committed production batches' score counts, in batch order, verified.

    Each ``<batch>.npz`` must match the sha256 of its ``<batch>.json`` manifest and pass every
    check of :func:`~mlflow_imbalance.core.format.decode_score_counts`.

    Returns:
        Batch label -> :class:`~mlflow_imbalance.core.production.ScoreCounts` (empty when the
        run has no batches); ``merge_score_counts(d.values())`` is all production so far.

    Raises:
        ValueError: a batch's file fails its manifest or the format's checks.
    """
    name = _check_name(name)
    _worker.flush()
    client = _client(tracking_uri)
    out: dict[str, ScoreCounts] = {}
    with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
        for label, record in _batch_records(client, run_id, name).items():
            out[label] = _load_batch(client, run_id, name, record, tmp)[0]
    return out
