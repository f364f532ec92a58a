"""An audit plan over a Spark DataFrame of production scores, keyed by an id column.

:func:`plan_audit_spark` is :func:`mlflow_imbalance.tracking.audit.plan_audit` for a batch that
lives in Spark: row positions mean nothing there, so the plan names the cases by ``id_col``.
The batch's exact counts come from
:func:`~mlflow_imbalance.integrations.spark.score_counts_from_spark` (checked against the logged
batch), the design from :func:`~mlflow_imbalance.stats.audit.design_audit`, and the sample is
drawn inside Spark by Bernoulli trials: each row of stratum ``h`` is kept with probability
``pi_h = n_h / N_h`` (``rand(seed) < pi_h``). The realised sample sizes ``m_h`` are random, so
the plan stores them as the design's allocation and the estimates are Horvitz-Thompson for the
realised sample: given ``m_h``, a Bernoulli sample of a stratum is a simple random sample of that
size (Särndal, Swensson & Wretman 1992, §3.3 and §7.10: conditioning on the realised size), so
each labelled case weighs ``N_h / m_h``. The driver receives only the sampled ids (about
``budget`` rows) and one aggregate row.
"""

from __future__ import annotations

import logging
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.integrations.spark import score_counts_from_spark
from mlflow_imbalance.stats.audit import AuditDesign
from mlflow_imbalance.tracking.audit import AuditPlan, _check_seed, _prepare, _store_plan

try:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "mlflow_imbalance.integrations.spark_audit needs pyspark: "
        "pip install 'mlflow-imbalance[spark]'"
    ) from exc

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

logger = logging.getLogger(__name__)

__all__ = ["plan_audit_spark"]

_ID_TYPES = (T.IntegralType, T.StringType)


def _by_stratum(score: Column, cuts: np.ndarray, values: list[Any]) -> Column:
    """``values[h]`` for the stratum ``h`` of ``score`` (the number of cuts above it)."""
    expr = F.when(score >= F.lit(float(cuts[0])), F.lit(values[0]))
    for h in range(1, cuts.size):
        expr = expr.when(score >= F.lit(float(cuts[h])), F.lit(values[h]))
    return expr.otherwise(F.lit(values[cuts.size]))


def plan_audit_spark(
    df: DataFrame,
    score_col: str,
    id_col: str,
    budget: int = 300,
    *,
    batch: Any,
    run_id: str | None = None,
    name: str = "test",
    threshold: float | None = None,
    seed: int | None = 0,
    focus: str = "balanced",
    tracking_uri: str | None = None,
) -> AuditPlan:
    """Plan an audit of a logged production batch held in a Spark DataFrame.

    Args:
        df: the batch's scored production table (the rows that were logged, e.g. with
            ``log_production_scores(score_counts_from_spark(df, score_col), batch=...)``).
        score_col: the score column.
        id_col: a non-null, unique key column (integer or string): ``plan.indices`` are its
            values, and ``log_audit_labels`` takes labels keyed by them.
        budget: expected cases to label (Bernoulli sampling: the realised number varies).
        batch: the batch label given to ``log_production_scores``.
        run_id: the run; None = the active run.
        name: the run's counts set (default ``"test"``).
        threshold: the decision threshold (None: as
            :func:`~mlflow_imbalance.tracking.audit.plan_audit`).
        seed: the seed of Spark's ``rand`` (None: fresh entropy, recorded in the plan).
        focus: what the plan is for (as :func:`~mlflow_imbalance.tracking.audit.plan_audit`).
        tracking_uri: tracking store; None = MLflow's current one.

    Returns:
        The stored :class:`~mlflow_imbalance.tracking.audit.AuditPlan` (``sampling ==
        "bernoulli"``; ``plan.design.allocation`` holds the realised sizes).

    Raises:
        ValueError: a missing, null or duplicated ``id_col``, a bad ``score_col``, and every
            error of ``plan_audit`` (naming the argument and value); nothing is written.
    """
    if not isinstance(id_col, str) or id_col not in df.columns:
        raise ValueError(f"id_col={id_col!r:.80} is not a column of df (columns: {df.columns})")
    if not isinstance(df.schema[id_col].dataType, _ID_TYPES):
        raise ValueError(
            f"id_col={id_col!r} must hold integers or strings, got "
            f"{df.schema[id_col].dataType.simpleString()}"
        )
    seed_v = _check_seed(seed)
    sc = score_counts_from_spark(df, score_col)
    idc = F.col(f"`{id_col}`")
    row = df.agg(F.count(idc).alias("ids"), F.countDistinct(idc).alias("distinct")).collect()[0]
    if row["ids"] != sc.n or row["distinct"] != sc.n:
        raise ValueError(
            f"id_col={id_col!r} must be a non-null, unique key: {sc.n - row['ids']:,} nulls and "
            f"{row['ids'] - row['distinct']:,} duplicates among {sc.n:,} rows"
        )
    ctx = _prepare(sc, budget, batch, run_id, name, threshold, tracking_uri, focus)
    design: AuditDesign = ctx["design"]
    score = F.col(f"`{score_col}`").cast("double")
    pi = [float(v) for v in design.inclusion_probability]
    stratum = _by_stratum(score, design.cuts, list(range(design.n_strata)))
    keep = F.rand(seed_v % (2**63)) < _by_stratum(score, design.cuts, pi)
    rows = df.where(keep).select(idc.alias("id"), stratum.alias("stratum")).collect()
    ids = [r["id"] for r in rows]
    strata = np.asarray([int(r["stratum"]) for r in rows], dtype=np.int64)
    for v in ids[:1]:
        if not isinstance(v, numbers.Integral | str):
            raise ValueError(f"id_col={id_col!r} values must be integers or strings, got {v!r}")
    order = np.argsort(strata, kind="stable")
    ids = [ids[i] for i in order]
    strata = strata[order]
    realised = np.bincount(strata, minlength=design.n_strata).astype(np.int64)
    if realised.sum() == 0:
        raise ValueError(f"budget={budget} drew no case (Bernoulli sampling); raise the budget")
    sample_design = AuditDesign(
        threshold=design.threshold,
        cuts=design.cuts,
        n_cases=design.n_cases,
        allocation=realised,
        above=design.above,
        prior_rate=design.prior_rate,
        prevalence_guess=design.prevalence_guess,
        budget=int(realised.sum()),
        focus=design.focus,
    )
    logger.info("Spark audit plan: %d cases drawn for a budget of %d", realised.sum(), budget)
    return _store_plan(ctx, sample_design, ids, strata, seed_v, "bernoulli")
