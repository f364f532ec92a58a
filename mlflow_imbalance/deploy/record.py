"""The decision as the registry holds it: tag keys, the record, and finding a model version.

One schema (docs/format.md, "Registered decisions"): a model version registered by
:func:`~mlflow_imbalance.deploy.register.register_decision` carries tags
``mlflow_imbalance.decision.*`` (every value at most :data:`MAX_TAG_BYTES` bytes), the same
facts in its description (Markdown), and its source run (the *decision run*) holds
``decision/decision.json`` (the whole record, the compared runs included) and, when given, the
report. :func:`~mlflow_imbalance.deploy.check.check_decision` adds
``mlflow_imbalance.check.*`` tags and the decision run's ``checks/<batch>.json`` files.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "CHECK_PREFIX",
    "DECISION_JSON",
    "MAX_TAG_BYTES",
    "PREFIX",
    "SCHEMA",
    "DecisionRecord",
    "parse_model",
    "record_from_tags",
]

SCHEMA = "mlflow-imbalance/decision"
SCHEMA_VERSION = 1
#: Tag key prefix of the decision (model version and decision run).
PREFIX = "mlflow_imbalance.decision."
#: Tag key prefix of the latest check.
CHECK_PREFIX = "mlflow_imbalance.check."
#: MLflow guarantees tag values up to this many bytes.
MAX_TAG_BYTES = 5000
#: The whole record in the decision run.
DECISION_JSON = "decision/decision.json"
#: The report (when given) in the decision run.
REPORT_HTML = "decision/report.html"
#: One check result per production batch, in the decision run.
CHECKS_DIR = "checks"

_MODEL_RE = re.compile(r"(?:models:/)?([^/@]+)(?:@([A-Za-z0-9_\-]+)|/(\d+))")


@dataclass(frozen=True)
class DecisionRecord:
    """One registered decision: what to deploy, for which η, by which rule.

    Attributes:
        run_id: the winning run (whose model is served and whose production batches are
            checked).
        run: its name in the report.
        threshold: predict positive when ``score >= threshold``.
        response: what the score is (``"predict_proba[:, 1]"``, ``"decision_function"``,
            ``"output[:, 1]"``, ...).
        prevalence: the η it was decided at (point estimate or typed).
        prevalence_low: the range of η it was decided over (lower end).
        prevalence_high: its upper end.
        source: ``"typed"``, ``"estimated"``, ``"range"`` or ``"given"`` (register_decision's
            keyword arguments).
        batch: the production batch an estimated decision was about ("" otherwise).
        criterion: ``"cost"`` or the metric (``"ap"``, ...).
        cost_fp: C_FP (None without costs).
        cost_fn: C_FN (None without costs).
        regret: the decision's worst-case regret over its range when decided (per case).
        tolerance: τ, the regret per case a check accepts (None without costs).
        counts_name: the counts set of the runs (``imbalance/<name>/``).
        compared: the runs it was chosen among, ``[{"name", "run_id"}, ...]``.
        batch_order_at: highest production batch order of the winning run at registration
            (-1: none); checks read the batches after it.
        source_model_uri: the run's model the decision model wraps.
        decision_run_id: the run holding the decision model.
        created_at: UTC ISO time of registration.
        hash: digest of the decision (same decision -> same hash).
    """

    run_id: str
    run: str
    threshold: float
    response: str
    prevalence: float
    prevalence_low: float
    prevalence_high: float
    source: str
    batch: str
    criterion: str
    cost_fp: float | None
    cost_fn: float | None
    regret: float | None
    tolerance: float | None
    counts_name: str
    compared: tuple[dict[str, Any], ...] = ()
    batch_order_at: int = -1
    source_model_uri: str = ""
    decision_run_id: str = ""
    created_at: str = ""
    hash: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ derived
    @property
    def has_costs(self) -> bool:
        """True when the decision was made by expected cost."""
        return self.cost_fp is not None and self.cost_fn is not None

    def digest(self) -> str:
        """The decision's hash: what is served and what it was decided for (not when)."""
        key = {
            "run_id": self.run_id,
            "threshold": repr(float(self.threshold)),
            "response": self.response,
            "eta": [repr(self.prevalence), repr(self.prevalence_low), repr(self.prevalence_high)],
            "criterion": self.criterion,
            "costs": [self.cost_fp, self.cost_fn],
            "tolerance": self.tolerance,
            "counts_name": self.counts_name,
            "compared": sorted(str(c.get("run_id")) for c in self.compared),
            "source_model_uri": self.source_model_uri,
        }
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly (``decision.json``)."""
        out = asdict(self)
        out["compared"] = [dict(c) for c in self.compared]
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **out}

    def tags(self) -> dict[str, str]:
        """The version tags (each value ≤ :data:`MAX_TAG_BYTES` bytes)."""
        values: dict[str, Any] = {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "hash": self.hash,
            "run_id": self.run_id,
            "run": self.run,
            "threshold": repr(float(self.threshold)),
            "rule": "score >= threshold",
            "response": self.response,
            "prevalence": repr(float(self.prevalence)),
            "prevalence_low": repr(float(self.prevalence_low)),
            "prevalence_high": repr(float(self.prevalence_high)),
            "source": self.source,
            "batch": self.batch,
            "criterion": self.criterion,
            "cost_fp": "" if self.cost_fp is None else repr(float(self.cost_fp)),
            "cost_fn": "" if self.cost_fn is None else repr(float(self.cost_fn)),
            "regret": "" if self.regret is None else repr(float(self.regret)),
            "tolerance": "" if self.tolerance is None else repr(float(self.tolerance)),
            "counts_name": self.counts_name,
            "compared_count": len(self.compared),
            "compared": DECISION_JSON,
            "batch_order_at": self.batch_order_at,
            "source_model_uri": self.source_model_uri,
            "decision_run_id": self.decision_run_id,
            "created_at": self.created_at,
        }
        return {PREFIX + k: clip_tag(str(v)) for k, v in values.items()}

    def description(self) -> str:
        """The version's description (Markdown; user text escaped)."""
        eta = (
            f"η = {self.prevalence:.6g}"
            if self.prevalence_low == self.prevalence_high
            else f"η = {self.prevalence:.6g}, decided over [{self.prevalence_low:.6g}, "
            f"{self.prevalence_high:.6g}]"
        )
        crit = (
            f"expected cost with C_FP = {self.cost_fp:g}, C_FN = {self.cost_fn:g}"
            if self.has_costs
            else f"criterion {md_escape(self.criterion)} (no costs: no regret to check)"
        )
        names = ", ".join(md_escape(c.get("name", "")) for c in self.compared[:10])
        more = f" and {len(self.compared) - 10} more" if len(self.compared) > 10 else ""
        lines = [
            f"**Decision (mlflow-imbalance):** flag a case when `{self.response}` "
            f"≥ {float(self.threshold)!r} (run {md_escape(self.run)}, `{self.run_id}`).",
            "",
            f"- decided for {eta} ({md_escape(self.source)}"
            + (f", batch {md_escape(self.batch)}" if self.batch else "")
            + ")",
            f"- by {crit}",
            "- worst-case regret over that range: "
            + ("n/a" if self.regret is None else f"{self.regret:.6g} per case"),
            "- tolerance τ of the check: "
            + ("n/a" if self.tolerance is None else f"{self.tolerance:.6g} per case"),
            f"- chosen among {len(self.compared)} run(s): {names}{more} (all in `{DECISION_JSON}`)",
            f"- registered {self.created_at}; re-check with "
            "`mlflow-imbalance check --model <name>@<alias>`",
        ]
        return clip_tag("\n".join(lines))


# ------------------------------------------------------------------------- helpers
def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def clip_tag(text: str, limit: int = MAX_TAG_BYTES) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes (ending in "…" when cut)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"


def md_escape(text: Any) -> str:
    """``text`` safe in Markdown and HTML (MLflow renders descriptions as Markdown)."""
    out = re.sub(r"[\x00-\x1f\x7f]", " ", str(text))
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", out)


def parse_model(model: Any) -> tuple[str, str | None, str | None]:
    """``(name, alias, version)`` of a model version's name.

    Accepted: ``"models:/fraud@champion"``, ``"fraud@champion"``, ``"models:/fraud/3"``,
    ``"fraud/3"``.

    Raises:
        ValueError: naming the argument and its value otherwise.
    """
    m = _MODEL_RE.fullmatch(model.strip()) if isinstance(model, str) else None
    if m is None or not m.group(1).strip():
        raise ValueError(
            "model must name a registered model version as 'models:/NAME@ALIAS', 'NAME@ALIAS', "
            f"'models:/NAME/VERSION' or 'NAME/VERSION'; got {model!r:.120}"
        )
    return m.group(1), m.group(2), m.group(3)


def _num(tags: Mapping[str, str], key: str, where: str, required: bool = True) -> float | None:
    text = tags.get(PREFIX + key, "")
    if text == "" and not required:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"{where}: tag {PREFIX + key} is {text!r:.60}, not a finite number")
    return value


def record_from_tags(tags: Mapping[str, str], where: str) -> DecisionRecord:
    """The :class:`DecisionRecord` of a model version's tags (``compared`` not included).

    Raises:
        ValueError: ``where`` (e.g. "model version fraud/3") carries no decision, or one this
            version cannot read.
    """
    if tags.get(PREFIX + "schema") != SCHEMA:
        raise ValueError(
            f"{where} carries no mlflow-imbalance decision (tag {PREFIX}schema is missing): "
            "register one with mlflow_imbalance.register_decision"
        )
    version = tags.get(PREFIX + "schema_version", "")
    if version != str(SCHEMA_VERSION):
        raise ValueError(
            f"{where} has decision schema_version {version!r:.20}; this version reads "
            f"{SCHEMA_VERSION} (upgrade mlflow-imbalance)"
        )
    try:
        order = int(tags.get(PREFIX + "batch_order_at", "-1"))
    except ValueError:
        raise ValueError(f"{where}: tag {PREFIX}batch_order_at is not an integer") from None
    return DecisionRecord(
        run_id=tags.get(PREFIX + "run_id", ""),
        run=tags.get(PREFIX + "run", ""),
        threshold=_num(tags, "threshold", where),  # type: ignore[arg-type]
        response=tags.get(PREFIX + "response", ""),
        prevalence=_num(tags, "prevalence", where),  # type: ignore[arg-type]
        prevalence_low=_num(tags, "prevalence_low", where),  # type: ignore[arg-type]
        prevalence_high=_num(tags, "prevalence_high", where),  # type: ignore[arg-type]
        source=tags.get(PREFIX + "source", ""),
        batch=tags.get(PREFIX + "batch", ""),
        criterion=tags.get(PREFIX + "criterion", ""),
        cost_fp=_num(tags, "cost_fp", where, required=False),
        cost_fn=_num(tags, "cost_fn", where, required=False),
        regret=_num(tags, "regret", where, required=False),
        tolerance=_num(tags, "tolerance", where, required=False),
        counts_name=tags.get(PREFIX + "counts_name", "test"),
        batch_order_at=order,
        source_model_uri=tags.get(PREFIX + "source_model_uri", ""),
        decision_run_id=tags.get(PREFIX + "decision_run_id", ""),
        created_at=tags.get(PREFIX + "created_at", ""),
        hash=tags.get(PREFIX + "hash", ""),
    )
