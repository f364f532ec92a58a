"""The tracking store and model registry, as registering and checking use them.

A URI MLflow has no store for (``bogus://x``) is one :class:`ValueError` naming it, before
MLflow's own registry exception can surface unexplained; an HTTP store is probed with the time
budget of :mod:`mlflow_imbalance.tracking._store` (``MLFLOW_IMBALANCE_STORE_TIMEOUT``).
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

from mlflow_imbalance.deploy.record import (
    DECISION_JSON,
    DecisionRecord,
    parse_model,
    record_from_tags,
)
from mlflow_imbalance.tracking._store import check_reachable, resolve_uri

logger = logging.getLogger(__name__)

#: Largest ``decision.json`` read back.
MAX_RECORD_BYTES = 4 << 20


def usable_uri(tracking_uri: str | None, *, must_exist: bool = False) -> str:
    """The tracking URI, checked: MLflow has stores for its scheme, an HTTP server answers.

    Args:
        tracking_uri: the URI (None: MLflow's current one).
        must_exist: a ``sqlite:`` file must exist already (read commands create nothing).

    Raises:
        ValueError: naming the URI when MLflow cannot use it.
        TrackingServerUnreachable: an HTTP server that does not answer.
    """
    from mlflow.tracking._model_registry.utils import _get_store_registry
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    uri = resolve_uri(tracking_uri)
    for what, registry in (
        ("tracking", _tracking_store_registry),
        ("model registry", _get_store_registry()),
    ):
        try:
            registry.get_store_builder(uri)
        except Exception as exc:
            raise ValueError(
                f"tracking URI {uri!r:.200} cannot be used: MLflow has no {what} store for it "
                f"({type(exc).__name__}); use e.g. sqlite:///mlflow.db or http://HOST:PORT"
            ) from None
    if must_exist and uri.startswith("sqlite:///"):
        path = Path(uri.removeprefix("sqlite:///").split("?", 1)[0])
        if not path.is_file():
            raise ValueError(f"tracking URI {uri!r:.200}: no such SQLite file {str(path)!r}")
    check_reachable(uri)
    return uri


def client(uri: str) -> Any:
    """An ``MlflowClient`` for ``uri`` (tracking and registry)."""
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def model_version(c: Any, model: str) -> Any:
    """The ``ModelVersion`` that ``model`` names (``models:/fraud@champion``, ``fraud/3``).

    Raises:
        ValueError: naming ``model`` when no such registered model, alias or version exists.
    """
    from mlflow.exceptions import MlflowException

    name, alias, version = parse_model(model)
    try:
        if alias is not None:
            return c.get_model_version_by_alias(name, alias)
        return c.get_model_version(name, version)
    except MlflowException as exc:
        if "RESOURCE_DOES_NOT_EXIST" in str(getattr(exc, "error_code", "")) or "not found" in (
            str(exc).lower()
        ):
            what = f"alias {alias!r}" if alias is not None else f"version {version}"
            raise ValueError(
                f"model {model!r:.200}: registered model {name!r:.100} has no {what} "
                f"(or does not exist) in this registry"
            ) from None
        raise


def version_label(mv: Any) -> str:
    """``"fraud/3"``."""
    return f"{mv.name}/{mv.version}"


def read_record(c: Any, mv: Any) -> DecisionRecord:
    """The decision of model version ``mv``, its compared runs read from ``decision.json``.

    Raises:
        ValueError: the version carries no decision, or its record cannot be read.
    """
    where = f"model version {version_label(mv)}"
    rec = record_from_tags(dict(mv.tags or {}), where)
    compared: tuple[dict[str, Any], ...] = ()
    if rec.decision_run_id:
        try:
            with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
                path = Path(c.download_artifacts(rec.decision_run_id, DECISION_JSON, tmp))
                if path.stat().st_size > MAX_RECORD_BYTES:
                    raise ValueError(f"{DECISION_JSON} is above {MAX_RECORD_BYTES} bytes")
                data = json.loads(path.read_text(encoding="utf-8"))
            compared = tuple(
                {"name": str(r.get("name", "")), "run_id": r.get("run_id")}
                for r in data.get("compared", ())
                if isinstance(r, dict)
            )
        except Exception as exc:  # the decision itself is in the tags; say what is missing
            raise ValueError(
                f"{where}: cannot read {DECISION_JSON} of decision run {rec.decision_run_id} "
                f"({type(exc).__name__}: {exc})"
            ) from None
    if not compared:
        compared = ({"name": rec.run, "run_id": rec.run_id},)
    from dataclasses import replace

    return replace(rec, compared=compared)
