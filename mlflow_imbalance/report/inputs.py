"""Accepted inputs → RunData records: counts mappings, .npz files, MLflow runs (via ``load``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.report.model import (
    ProgressFn,
    RunData,
    SkippedRun,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- output
def check_output_path(output: str | os.PathLike[str] | None, option: str = "output") -> Path | None:
    """Check that the report can be written to ``output`` before any work is done.

    Raises:
        ValueError: naming ``option``: ``output`` is a directory, its directory does not exist
            or is not writable, or it is not a path.
    """
    if output is None:
        return None
    if not isinstance(output, str | os.PathLike) or not str(output):
        raise ValueError(f"{option} must be a file path or None, got {output!r}")
    target = Path(output)
    if target.is_dir():
        raise ValueError(f"{option} {str(target)!r} is a directory; give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(
            f"{option} {str(target)!r} cannot be written: the directory {str(parent)!r} does not "
            "exist"
        )
    if not os.access(parent, os.W_OK):
        raise ValueError(
            f"{option} {str(target)!r} cannot be written: the directory {str(parent)!r} is not "
            "writable"
        )
    return target


# ---------------------------------------------------------------------------------- inputs
def load_counts_files(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[RunData], list[SkippedRun]]:
    """Runs from ``roc_counts.npz`` files (or directories holding one), no MLflow needed.

    A ``summary.json`` next to a counts file is read for the digest and the "positives" flag.
    The display name is the file's stem, or the directory's name for a file called
    ``roc_counts.npz``; unreadable or invalid files are skipped with the reason.
    """
    import json

    loaded: list[RunData] = []
    skipped: list[SkippedRun] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            p = p / "roc_counts.npz"
        label = _label_for_path(p)
        try:
            counts = RocCounts.load(p)
        except (OSError, ValueError) as exc:
            skipped.append(SkippedRun(name=label, reason=f"{type(exc).__name__}: {exc}"))
            continue
        summary: dict[str, Any] = {}
        sidecar = p.with_name("summary.json")
        if sidecar.is_file():
            try:
                summary = dict(json.loads(sidecar.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError, RecursionError) as exc:
                logger.warning("%s unreadable, ignored: %s", sidecar, exc)
        digest = next(
            (
                str(summary[k])
                for k in ("digest", "y_true_digest", "labels_digest")
                if summary.get(k)
            ),
            None,
        )
        loaded.append(
            RunData(name=label, counts=counts, summary=summary, digest=digest, source=f"file {p}")
        )
    return loaded, skipped


def _label_for_path(p: Path) -> str:
    if p.stem != "roc_counts" or p.parent.name in ("", "."):
        return p.stem
    parts = [x for x in p.parent.parts if x not in ("/", "imbalance")]
    return "/".join(parts[-2:]) if parts else p.stem


def _looks_like_path(item: Any) -> bool:
    if isinstance(item, os.PathLike):
        return True
    if isinstance(item, str):
        return item.endswith(".npz") or os.sep in item or Path(item).exists()
    return False


def _collect(
    runs_or_counts: Any, name: str | None, progress: ProgressFn | None
) -> tuple[list[RunData], list[SkippedRun], str | None]:
    """Normalise the accepted inputs to RunData records (see :func:`build_report`).

    ``name`` None reads MLflow runs under the default name, or a run's only set
    (:func:`~mlflow_imbalance.report.load.load_runs`).
    """
    if isinstance(runs_or_counts, RocCounts):
        return [RunData(name="run", counts=runs_or_counts, source="RocCounts")], [], None
    if isinstance(runs_or_counts, Mapping):
        loaded, skipped = [], []
        for key, value in runs_or_counts.items():
            if isinstance(value, RocCounts):
                loaded.append(RunData(name=str(key), counts=value, source="RocCounts"))
            elif isinstance(value, RunData):
                loaded.append(value)
            elif _looks_like_path(value):
                got, bad = load_counts_files([value])
                loaded += [RunData(**{**r.__dict__, "name": str(key)}) for r in got]
                skipped += [SkippedRun(name=str(key), reason=s.reason) for s in bad]
            else:
                raise TypeError(
                    f"runs_or_counts[{key!r}] must be RocCounts, RunData or a path, got "
                    f"{type(value).__name__}"
                )
        return loaded, skipped, None
    if isinstance(runs_or_counts, (str, os.PathLike)):
        runs_or_counts = [runs_or_counts]
    try:
        items = list(runs_or_counts)
    except TypeError:
        raise TypeError(
            "runs_or_counts must be run ids, mlflow Run objects, a mapping name -> RocCounts or "
            f"paths to roc_counts.npz files, got {type(runs_or_counts).__name__}"
        ) from None
    loaded: list[RunData] = []
    skipped: list[SkippedRun] = []
    run_refs: list[Any] = []
    order: list[tuple[str, int]] = []
    experiment = None
    for i, item in enumerate(items):
        if isinstance(item, RunData):
            order.append(("direct", len(loaded)))
            loaded.append(item)
        elif isinstance(item, RocCounts):
            order.append(("direct", len(loaded)))
            loaded.append(RunData(name=f"run {i + 1}", counts=item, source="RocCounts"))
        elif _looks_like_path(item):
            got, bad = load_counts_files([item])
            loaded += got
            skipped += bad
        elif isinstance(item, str) or hasattr(item, "info"):
            run_refs.append(item)
        else:
            raise TypeError(
                f"runs_or_counts[{i}] is a {type(item).__name__}: expected a run id, an mlflow "
                "Run, a RocCounts, a RunData or a path to a roc_counts.npz file"
            )
    if run_refs:
        from mlflow_imbalance.report import load as _loading  # lazily: the only route to MLflow

        got, bad, experiment = _loading.load_runs(run_refs, name=name, progress=progress)
        loaded += got
        skipped += bad
    return loaded, skipped, experiment


def _unique_names(runs: list[RunData]) -> list[RunData]:
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        n = seen.get(r.name, 0)
        seen[r.name] = n + 1
        if n:
            label = f"{r.name} ({r.run_id[:8]})" if r.run_id else f"{r.name} ({n + 1})"
            r = RunData(**{**r.__dict__, "name": label})
        out.append(r)
    return out
