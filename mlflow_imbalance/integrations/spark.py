"""Exact ROC counts of a Spark DataFrame, computed in Spark (extra ``spark``).

:func:`roc_counts_from_spark` gives exactly ``RocCounts.from_scores`` of the same labels and
scores (ties included) without collecting rows, or the table of distinct scores, to the driver:

1. *Validation* (one aggregation grouped by label, map-side combined): missing columns, column
   types, null/NaN/infinite scores, null labels, more than two labels, one class only,
   null/negative/non-finite weights. Each error is a :class:`ValueError` naming the column.
2. *Per-distinct-score table*: ``groupBy(score)`` with the sum of positives and negatives (or of
   their weights). Map-side partial aggregation means the shuffle carries at most one row per
   distinct score per input partition, and a score shared by most rows (a skewed distribution)
   collapses to one row before any shuffle.
3. *Range partitioning* of that table by descending score (a sampling job for the range bounds,
   then a shuffle of the distinct-score table) and a sort within each partition. Partitions now
   hold disjoint, ordered score ranges.
4. *One pass per partition* (``mapInArrow``, vectorised numpy over Arrow batches): cumulative
   sums within the partition, then the lossless compression of
   :meth:`~mlflow_imbalance.core.counts.RocCounts.compress` applied locally -- keep every threshold
   where positives score, the last of each negatives-only run and the partition's last row (a
   superset of the global compression) -- plus one row with the partition's totals.
5. *Driver*: the partition totals give each partition's offset (the counts of all higher score
   ranges); adding them makes the local cumulative sums global, and ``RocCounts.compress`` on
   the result removes the few extra rows kept at partition edges. The driver thus receives the
   compressed counts plus at most two rows per partition.

Why the superset re-compresses to the global result: a row dropped locally is a
negatives-only threshold that is not the last of its run, so its cumulative ``tp`` equals that
of the previous kept row, and the next kept row belongs to the same negatives-only run; the
global keep rule (:func:`mlflow_imbalance.core._kernels._keep_mask`) therefore decides every
kept row the same way with or without the dropped ones.

Integer counts are summed as 64-bit integers, so unweighted results are exact. Weighted sums are
float64 added in Spark's order, which differs from numpy's: results equal ``from_scores`` exactly
whenever the partial sums are exactly representable (integer or dyadic weights, e.g. 0.25), and
otherwise agree to float64 rounding (relative 1e-12 in the tests).

``max_points`` switches to a bounded-error mode for tables with very many distinct scores: see
:func:`roc_counts_from_spark`. :func:`score_counts_from_spark` runs steps 1-5 on unlabeled
scores (every row counted as a "positive", so every distinct score is kept) for
``mlflow_imbalance.log_production_scores``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.production import ScoreCounts
from mlflow_imbalance.core.validation import _default_pos_label, plain
from mlflow_imbalance.integrations._spark_workers import check_spark_workers

try:
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "mlflow_imbalance.integrations.spark needs pyspark and pyarrow: "
        "pip install 'mlflow-imbalance[spark]'"
    ) from exc

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from mlflow_imbalance.tracking import LoggedCounts

logger = logging.getLogger(__name__)

__all__ = ["log_scores_from_spark", "roc_counts_from_spark", "score_counts_from_spark"]

_KIND_POINT = 0
_KIND_TOTAL = 1
#: Relative error of ``percentile_approx`` for the bucket cuts of the bounded mode (its
#: accuracy is raised to at least 20 per quantile).
_QUANTILE_RELATIVE_ERROR = 1e-4


# ---------------------------------------------------------------------------- helpers
def _score_pos_neg(batch: Any, count_dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns (score, pos, neg) of an Arrow record batch as numpy, counts in ``count_dtype``."""
    s = batch.column(0).to_numpy(zero_copy_only=False)
    p = batch.column(1).to_numpy(zero_copy_only=False).astype(count_dtype, copy=False)
    n = batch.column(2).to_numpy(zero_copy_only=False).astype(count_dtype, copy=False)
    return s, p, n


def _quote(name: str) -> str:
    """A column reference that survives dots and backticks in the name."""
    return "`" + name.replace("`", "``") + "`"


def _col(name: str) -> Column:
    return F.col(_quote(name))


def _check_column(df: DataFrame, arg: str, name: Any, allowed: tuple[type, ...], what: str) -> Any:
    """Check that ``name`` is a column of ``df`` of an allowed type; return its data type."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"{arg} must be a column name (a non-empty string), got {name!r}")
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        raise ValueError(f"{arg}={name!r} is not a column of df; its columns are {df.columns!r}")
    dtype = fields[name]
    if not isinstance(dtype, allowed):
        raise ValueError(f"{arg}={name!r} must hold {what}, got Spark type {dtype.simpleString()}")
    return dtype


def _check_partitions(num_partitions: Any) -> None:
    if num_partitions is not None and (int(num_partitions) != num_partitions or num_partitions < 1):
        raise ValueError(
            f"num_partitions must be a positive integer or None, got {plain(num_partitions)!r}"
        )


def _count_if(cond: Column) -> Column:
    return F.sum(F.when(cond, 1).otherwise(0)).cast("long")


def _score_checks(score_col: str) -> list[Column]:
    """Aggregates counting null, NaN and infinite scores (``score_null/_nan/_inf``)."""
    score = _col(score_col).cast("double")
    return [
        _count_if(_col(score_col).isNull()).alias("score_null"),
        _count_if(F.isnan(score)).alias("score_nan"),
        _count_if(F.abs(score) == F.lit(float("inf"))).alias("score_inf"),
    ]


def _raise_bad_scores(score_col: str, rows: list[Any], n_rows: int) -> None:
    """A ValueError naming ``score_col`` when the :func:`_score_checks` of ``rows`` found any."""
    bad = {k: sum(r[k] for r in rows) for k in ("score_null", "score_nan", "score_inf")}
    if any(bad.values()):
        raise ValueError(
            f"score_col={score_col!r} must hold finite scores: found {bad['score_null']} null, "
            f"{bad['score_nan']} NaN and {bad['score_inf']} infinite value(s) among {n_rows} rows"
        )


class _Plan:
    """What validation learnt: the positive-class expression and the class totals."""

    def __init__(self, is_pos: Column, n_pos_rows: int, n_neg_rows: int, weighted: bool):
        self.is_pos = is_pos
        self.n_pos_rows = n_pos_rows
        self.n_neg_rows = n_neg_rows
        self.weighted = weighted


def _labels_as_numpy(values: list[Any], dtype: Any) -> np.ndarray:
    if isinstance(dtype, T.BooleanType):
        return np.array(values, dtype=bool)
    if isinstance(dtype, T.IntegralType):
        return np.array(values, dtype=np.int64)
    if isinstance(dtype, T.FractionalType):
        return np.array([float(v) for v in values], dtype=np.float64)
    return np.array(values, dtype=object)


def _validate(
    df: DataFrame,
    label_col: str,
    score_col: str,
    weight_col: str | None,
    pos_label: Any,
) -> _Plan:
    """One Spark job: every check of ``RocCounts.from_scores``, raised naming the column."""
    label_type = _check_column(
        df,
        "label_col",
        label_col,
        (T.BooleanType, T.NumericType, T.StringType),
        "binary labels (boolean, numeric or string)",
    )
    _check_column(df, "score_col", score_col, (T.NumericType, T.BooleanType), "numeric scores")
    if weight_col is not None:
        _check_column(df, "weight_col", weight_col, (T.NumericType,), "numeric weights")

    inf = float("inf")
    count_if = _count_if
    aggs = [F.count(F.lit(1)).alias("n"), *_score_checks(score_col)]
    if weight_col is not None:
        w = _col(weight_col).cast("double")
        aggs += [
            count_if(_col(weight_col).isNull()).alias("w_null"),
            count_if(F.isnan(w) | (F.abs(w) == F.lit(inf))).alias("w_nonfinite"),
            count_if(w < 0).alias("w_negative"),
            F.min(w).alias("w_min"),
            F.sum(F.when(w > 0, w).otherwise(0.0)).alias("w_sum"),
        ]
    grouped = df.groupBy(_col(label_col).alias("label")).agg(*aggs)
    # At most one null group, one NaN group and two real labels when the labels are valid;
    # a fifth group proves there are more than two labels.
    rows = grouped.limit(5).collect()
    if not rows:
        raise ValueError("df is empty: at least one positive and one negative row are needed")

    def is_nan(v: Any) -> bool:
        return isinstance(v, float) and math.isnan(v)

    real = [r for r in rows if r["label"] is not None and not is_nan(r["label"])]
    if len(real) > 2:
        n_distinct = grouped.filter(
            F.col("label").isNotNull() & ~F.isnan(F.col("label"))
            if isinstance(label_type, T.FractionalType)
            else F.col("label").isNotNull()
        ).count()
        shown = sorted((r["label"] for r in real), key=repr)[:5]
        raise ValueError(
            f"label_col={label_col!r} must be binary: found {n_distinct} distinct labels, "
            f"e.g. {shown!r}"
        )
    n_null = sum(r["n"] for r in rows if r["label"] is None)
    if n_null:
        raise ValueError(f"label_col={label_col!r} contains {n_null} null label(s)")
    n_nan = sum(r["n"] for r in rows if is_nan(r["label"]))
    if n_nan:
        raise ValueError(f"label_col={label_col!r} contains {n_nan} NaN label(s)")
    n_rows = sum(r["n"] for r in rows)
    _raise_bad_scores(score_col, rows, n_rows)
    if weight_col is not None:
        w_null = sum(r["w_null"] for r in rows)
        w_nonfinite = sum(r["w_nonfinite"] for r in rows)
        w_negative = sum(r["w_negative"] for r in rows)
        if w_null or w_nonfinite:
            raise ValueError(
                f"weight_col={weight_col!r} must hold finite weights: found {w_null} null and "
                f"{w_nonfinite} NaN or infinite weight(s) among {n_rows} rows"
            )
        if w_negative:
            smallest = min(r["w_min"] for r in rows)
            raise ValueError(
                f"weight_col={weight_col!r} must be non-negative: {w_negative} negative "
                f"weight(s), smallest {smallest!r}"
            )

    values = [r["label"] for r in real]
    classes = _labels_as_numpy(values, label_type)
    if isinstance(label_type, T.BooleanType) and pos_label in (None, True, 1):
        positive: Any = True
    elif pos_label is None:
        try:
            positive = _default_pos_label(np.unique(classes))
        except ValueError:
            raise ValueError(
                f"label_col={label_col!r} has labels {sorted(values, key=repr)!r}: pass "
                "pos_label to say which one is the positive class (it can be omitted only for "
                "labels in {0, 1}, {-1, 1} or {False, True})"
            ) from None
    else:
        positive = pos_label
        if len(values) == 2 and not any(bool(c == positive) for c in classes):
            raise ValueError(
                f"pos_label={pos_label!r} is not one of the labels in label_col={label_col!r}: "
                f"{sorted(values, key=repr)!r}"
            )
    pos_rows = [r for r, c in zip(real, classes, strict=True) if bool(c == positive)]
    neg_rows = [r for r, c in zip(real, classes, strict=True) if not bool(c == positive)]
    n_pos = sum(r["n"] for r in pos_rows)
    n_neg = sum(r["n"] for r in neg_rows)
    if n_pos == 0 or n_neg == 0:
        which = "positive" if n_pos == 0 else "negative"
        raise ValueError(
            f"label_col={label_col!r} holds only one class ({n_rows} rows, no {which} example): "
            "ROC counts need both positives and negatives"
        )
    if weight_col is not None:
        for which, group in (("positives", pos_rows), ("negatives", neg_rows)):
            if sum(r["w_sum"] for r in group) <= 0:
                raise ValueError(
                    f"weight_col={weight_col!r} gives the {which} a total weight of zero"
                )
    if pos_rows:
        is_pos = _col(label_col) == F.lit(pos_rows[0]["label"])
    else:  # pragma: no cover - excluded by the one-class check above
        is_pos = F.lit(False)
    return _Plan(is_pos, n_pos, n_neg, weight_col is not None)


def _class_columns(
    df: DataFrame, plan: _Plan, score_col: str, weight_col: str | None, with_class: bool = False
) -> DataFrame:
    """``score`` (double), ``pos`` and ``neg`` (0/1 longs, or the row's weight) per row.

    With ``with_class`` a boolean ``is_pos`` column follows.
    """
    score = _col(score_col).cast("double").alias("score")
    if weight_col is None:
        pos = plan.is_pos.cast("long")
        neg = (~plan.is_pos).cast("long")
    else:
        w = _col(weight_col).cast("double")
        pos = F.when(plan.is_pos, w).otherwise(F.lit(0.0))
        neg = F.when(plan.is_pos, F.lit(0.0)).otherwise(w)
    cols = [score, pos.alias("pos"), neg.alias("neg")]
    if with_class:
        cols.append(plan.is_pos.alias("is_pos"))
    return df.select(*cols)


# ---------------------------------------------------------------------------- exact path
def _count_type(weighted: bool) -> str:
    return "double" if weighted else "long"


def _cumulate_partitions(weighted: bool) -> Any:
    """The ``mapInArrow`` function of step 4 (module docstring), for one partition.

    Input: Arrow batches of (``score`` descending and distinct, ``pos``, ``neg``). Output rows
    (``kind``, ``part``, ``score``, ``tp``, ``fp``): kind 0 for the locally compressed points
    with partition-local cumulative counts, kind 1 for the partition's totals; ``part`` is the
    partition's highest score, which identifies it (ranges are disjoint).
    """
    count_dtype = np.float64 if weighted else np.int64
    count_arrow = pa.float64() if weighted else pa.int64()

    def batch(kind: int, part: float, s: np.ndarray, tp: np.ndarray, fp: np.ndarray) -> Any:
        n = s.size
        return pa.RecordBatch.from_arrays(
            [
                pa.array(np.full(n, kind, dtype=np.int32), pa.int32()),
                pa.array(np.full(n, part, dtype=np.float64), pa.float64()),
                pa.array(s, pa.float64()),
                pa.array(tp.astype(count_dtype, copy=False), count_arrow),
                pa.array(fp.astype(count_dtype, copy=False), count_arrow),
            ],
            names=["kind", "part", "score", "tp", "fp"],
        )

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        top: float | None = None
        ctp = count_dtype(0)
        cfp = count_dtype(0)
        pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        for b in batches:
            if b.num_rows == 0:
                continue
            s, p, n = _score_pos_neg(b, count_dtype)
            if top is None:
                top = float(s[0])
            tp = np.cumsum(p)
            tp += ctp
            fp = np.cumsum(n)
            fp += cfp
            ctp, cfp = tp[-1], fp[-1]
            has_pos = p > 0
            keep = has_pos.copy()
            keep[:-1] |= has_pos[1:]
            if pending is not None and has_pos[0]:
                yield batch(_KIND_POINT, top, *pending)
            pending = None
            if not keep[-1]:  # decided by the next row, which may be in the next batch
                pending = (s[-1:], tp[-1:], fp[-1:])
            if keep.any():
                yield batch(_KIND_POINT, top, s[keep], tp[keep], fp[keep])
        if top is None:
            return
        if pending is not None:  # the partition's last row is always kept
            yield batch(_KIND_POINT, top, *pending)
        yield batch(
            _KIND_TOTAL,
            top,
            np.array([top]),
            np.array([ctp], dtype=count_dtype),
            np.array([cfp], dtype=count_dtype),
        )

    return run


def _collect_arrow(df: DataFrame) -> Any:
    """Collect a (small) DataFrame as a pyarrow Table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    return pa.Table.from_pandas(df.toPandas(), preserve_index=False)  # pragma: no cover


def _exact(
    rows: DataFrame, weighted: bool, num_partitions: int | None
) -> tuple[RocCounts, dict[str, int]]:
    return _assemble(_cumulated(rows, weighted, num_partitions), weighted)


def _cumulated(rows: DataFrame, weighted: bool, num_partitions: int | None) -> Any:
    """Steps 2-4 (module docstring) on rows (score, pos, neg): the Arrow table of step 5."""
    table = rows.groupBy("score").agg(F.sum("pos").alias("pos"), F.sum("neg").alias("neg"))
    order = F.col("score").desc()
    if num_partitions is None:
        ranged = table.repartitionByRange(order)
    else:
        ranged = table.repartitionByRange(int(num_partitions), order)
    ranged = ranged.sortWithinPartitions(order)
    ct = _count_type(weighted)
    schema = f"kind int, part double, score double, tp {ct}, fp {ct}"
    return _collect_arrow(ranged.mapInArrow(_cumulate_partitions(weighted), schema))


def _assemble(got: Any, weighted: bool) -> tuple[RocCounts, dict[str, int]]:
    """Driver side of step 5: offsets from partition totals, then the global compression."""
    score, tp, fp, n_pos, n_neg, info = _global_points(got, weighted)
    return RocCounts(score, tp, fp, n_pos, n_neg, weighted=weighted).compress(), info


def _global_points(got: Any, weighted: bool) -> tuple[Any, ...]:
    """Step 5's offsets: (scores descending, global tp, fp, their totals, diagnostics)."""
    count_dtype = np.float64 if weighted else np.int64
    kind = got.column("kind").to_numpy()
    part = got.column("part").to_numpy()
    score = got.column("score").to_numpy()
    tp = got.column("tp").to_numpy().astype(count_dtype, copy=False)
    fp = got.column("fp").to_numpy().astype(count_dtype, copy=False)
    tot = kind == _KIND_TOTAL
    tops = part[tot]
    order = np.argsort(-tops, kind="stable")
    tops = tops[order]
    part_tp = tp[tot][order]
    part_fp = fp[tot][order]
    if tops.size > 1 and not np.all(tops[1:] < tops[:-1]):
        raise RuntimeError("Spark partitions overlap in score; range partitioning failed")
    # Offsets: counts of every partition with a higher score range (exclusive cumulative sum).
    end_tp = np.cumsum(part_tp)
    end_fp = np.cumsum(part_fp)
    off_tp = end_tp - part_tp if not weighted else np.concatenate(([0.0], end_tp[:-1]))
    off_fp = end_fp - part_fp if not weighted else np.concatenate(([0.0], end_fp[:-1]))
    pts = ~tot
    p_score, p_part = score[pts], part[pts]
    idx = np.searchsorted(-tops, -p_part)  # position of each point's partition
    g_tp = off_tp[idx] + tp[pts]
    g_fp = off_fp[idx] + fp[pts]
    o = np.argsort(-p_score, kind="stable")
    info = {"rows_received": int(kind.size), "partitions": int(tops.size)}
    return p_score[o], g_tp[o], g_fp[o], end_tp[-1], end_fp[-1], info


# ---------------------------------------------------------------------------- bounded path
_BUCKET_FIELDS = ("cnt", "pos", "neg", "smin", "smax", "pos_at_max", "neg_at_max")


def _merge_buckets(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Combine two per-bucket summaries of disjoint rows (same bucket layout)."""
    smax = np.maximum(a["smax"], b["smax"])
    a_top = a["smax"] == smax
    b_top = b["smax"] == smax
    out = {
        "cnt": a["cnt"] + b["cnt"],
        "pos": a["pos"] + b["pos"],
        "neg": a["neg"] + b["neg"],
        "smin": np.minimum(a["smin"], b["smin"]),
        "smax": smax,
    }
    for key in ("pos_at_max", "neg_at_max"):
        out[key] = np.where(a_top, a[key], 0) + np.where(b_top, b[key], 0)
    return out


def _empty_buckets(n: int, weighted: bool) -> dict[str, np.ndarray]:
    dt = np.float64 if weighted else np.int64
    return {
        "cnt": np.zeros(n, dtype=np.int64),
        "pos": np.zeros(n, dtype=dt),
        "neg": np.zeros(n, dtype=dt),
        "smin": np.full(n, np.inf),
        "smax": np.full(n, -np.inf),
        "pos_at_max": np.zeros(n, dtype=dt),
        "neg_at_max": np.zeros(n, dtype=dt),
    }


def _bucket_partitions(cuts: np.ndarray, weighted: bool) -> Any:
    """``mapInArrow`` function: per-bucket summaries of one partition's raw rows.

    Bucket ``j`` (0..len(cuts)) holds the scores in ``(cuts[j-1], cuts[j]]`` (``cuts``
    ascending, ``cuts[-1] = -inf``, ``cuts[len] = +inf``). For each bucket: rows, positives,
    negatives, lowest and highest score and the positives/negatives at the highest score.
    """
    n_buckets = cuts.size + 1
    count_dtype = np.float64 if weighted else np.int64
    count_arrow = pa.float64() if weighted else pa.int64()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        acc = _empty_buckets(n_buckets, weighted)
        for b in batches:
            if b.num_rows == 0:
                continue
            s, p, n = _score_pos_neg(b, count_dtype)
            j = np.searchsorted(cuts, s, side="left")
            cur = _empty_buckets(n_buckets, weighted)
            cur["cnt"] = np.bincount(j, minlength=n_buckets).astype(np.int64)
            if weighted:
                cur["pos"] = np.bincount(j, weights=p, minlength=n_buckets)
                cur["neg"] = np.bincount(j, weights=n, minlength=n_buckets)
            else:
                cur["pos"] = np.bincount(j[p > 0], minlength=n_buckets).astype(np.int64)
                cur["neg"] = np.bincount(j[n > 0], minlength=n_buckets).astype(np.int64)
            np.minimum.at(cur["smin"], j, s)
            np.maximum.at(cur["smax"], j, s)
            at_max = s == cur["smax"][j]
            if weighted:
                cur["pos_at_max"] = np.bincount(j[at_max], weights=p[at_max], minlength=n_buckets)
                cur["neg_at_max"] = np.bincount(j[at_max], weights=n[at_max], minlength=n_buckets)
            else:
                cur["pos_at_max"] = np.bincount(j[at_max & (p > 0)], minlength=n_buckets)
                cur["neg_at_max"] = np.bincount(j[at_max & (n > 0)], minlength=n_buckets)
            acc = _merge_buckets(acc, cur)
        keep = acc["cnt"] > 0
        if not keep.any():
            return
        arrays = [pa.array(np.flatnonzero(keep).astype(np.int64), pa.int64())]
        for key in _BUCKET_FIELDS:
            v = acc[key][keep]
            if key == "cnt":
                arrays.append(pa.array(v.astype(np.int64), pa.int64()))
            elif key in ("smin", "smax"):
                arrays.append(pa.array(v.astype(np.float64), pa.float64()))
            else:
                arrays.append(pa.array(v.astype(count_dtype), count_arrow))
        yield pa.RecordBatch.from_arrays(arrays, names=["bucket", *_BUCKET_FIELDS])

    return run


def _combine_partition_buckets(got: Any, n_buckets: int, weighted: bool) -> dict[str, np.ndarray]:
    """Merge the per-partition bucket summaries (one row per partition and bucket)."""
    acc = _empty_buckets(n_buckets, weighted)
    j = got.column("bucket").to_numpy()
    col = {k: got.column(k).to_numpy() for k in _BUCKET_FIELDS}
    for key in ("cnt", "pos", "neg"):
        np.add.at(acc[key], j, col[key].astype(acc[key].dtype, copy=False))
    np.minimum.at(acc["smin"], j, col["smin"])
    np.maximum.at(acc["smax"], j, col["smax"])
    top = col["smax"] == acc["smax"][j]  # partitions holding the bucket's highest score
    for key in ("pos_at_max", "neg_at_max"):
        np.add.at(acc[key], j[top], col[key][top].astype(acc[key].dtype, copy=False))
    return acc


def _counts_from_buckets(acc: dict[str, np.ndarray], weighted: bool) -> RocCounts:
    """Driver side of the bounded mode: one threshold per non-empty bucket, exact error."""
    keep = acc["cnt"] > 0
    sel = {k: v[keep][::-1] for k, v in acc.items()}  # descending score order
    tp = np.cumsum(sel["pos"])
    fp = np.cumsum(sel["neg"])
    n_pos, n_neg = tp[-1], fp[-1]
    # A dropped threshold s of a bucket (smin < s <= smax) is represented by smin, the next
    # lower kept threshold: its TPR rises by the bucket's positives scoring below s, which is
    # largest for s = smax. Hence the exact largest errors below (0 for single-score buckets).
    tpr_err = float(np.max(sel["pos"] - sel["pos_at_max"]) / n_pos)
    fpr_err = float(np.max(sel["neg"] - sel["neg_at_max"]) / n_neg)
    return RocCounts(
        sel["smin"],
        tp,
        fp,
        n_pos,
        n_neg,
        compressed=True,
        max_tpr_error=min(1.0, max(0.0, tpr_err)),
        max_fpr_error=min(1.0, max(0.0, fpr_err)),
        weighted=weighted,
    )


def _bounded(
    rows: DataFrame,
    weighted: bool,
    max_points: int,
    num_partitions: int | None,
    relative_error: float,
) -> tuple[RocCounts, dict[str, int]]:
    """Bounded-error counts with at most ``max_points`` thresholds (see the public docstring)."""
    q = max(1, (max_points - 1) // 2)
    probs = np.linspace(0.0, 1.0, q) if q > 1 else np.array([0.5])
    accuracy = max(20 * q, round(1.0 / relative_error))
    # Weighted rows carry their class in "is_pos" (a zero-weight row has pos = neg = 0).
    is_pos = F.col("is_pos") if weighted else F.col("pos") > 0
    quant = rows.agg(
        F.percentile_approx(
            F.when(is_pos, F.col("score")), F.array(*[F.lit(float(x)) for x in probs]), accuracy
        ).alias("qpos"),
        F.percentile_approx(
            F.when(~is_pos, F.col("score")), F.array(*[F.lit(float(x)) for x in probs]), accuracy
        ).alias("qneg"),
        F.approx_count_distinct("score").alias("distinct"),
    ).collect()[0]
    if quant["distinct"] <= max_points:
        counts, info = _exact(rows.drop("is_pos") if weighted else rows, weighted, num_partitions)
        info["mode"] = 0
        if counts.n_thresholds > max_points:
            counts = counts.reduce(max_points)
        return counts, info
    cuts = np.unique(np.asarray([*(quant["qpos"] or []), *(quant["qneg"] or [])], dtype=float))
    # Buckets are (cuts[j-1], cuts[j]]: a heavily tied score that is a cut is the highest score
    # of its bucket, so it adds no error (see below).
    ct = _count_type(weighted)
    schema = "bucket long, cnt long, " + ", ".join(
        f"{k} {'double' if k in ('smin', 'smax') else ct}" for k in _BUCKET_FIELDS[1:]
    )
    data = rows.select("score", "pos", "neg")
    got = _collect_arrow(data.mapInArrow(_bucket_partitions(cuts, weighted), schema))
    acc = _combine_partition_buckets(got, cuts.size + 1, weighted)
    counts = _counts_from_buckets(acc, weighted)
    return counts, {"rows_received": int(got.num_rows), "partitions": 0, "mode": 1}


# ---------------------------------------------------------------------------- public API
def roc_counts_from_spark(
    df: DataFrame,
    label_col: str,
    score_col: str,
    *,
    pos_label: Any = None,
    weight_col: str | None = None,
    max_points: int | None = None,
    num_partitions: int | None = None,
    _info: dict[str, int] | None = None,
) -> RocCounts:
    """Exact ROC counts of a Spark DataFrame, computed in Spark.

    Equals ``RocCounts.from_scores(labels, scores, pos_label=..., sample_weight=...)`` of the
    collected columns (ties form one threshold, the lossless compression is applied), but only
    the compressed counts reach the driver: see the module docstring for the plan (two shuffles:
    the partially aggregated per-score counts and the range-partitioned distinct-score table).

    Args:
        df: the scored table.
        label_col: binary labels (boolean, numeric or string column).
        score_col: scores, higher meaning more likely positive (numeric; compared as float64,
            exact for float, double and integers up to 2**53).
        pos_label: the positive label; required unless the labels are {0, 1}, {-1, 1} or
            booleans (the rules of ``RocCounts.from_scores``).
        weight_col: optional non-negative, finite sample weights.
        max_points: ``None`` (default) for the exact counts. An integer switches to the
            bounded-error mode for tables with very many distinct scores: when Spark's
            approximate distinct count of the scores is at most ``max_points`` the exact path
            runs (followed by :meth:`RocCounts.reduce` if it still has too many points);
            otherwise ``(max_points - 1) // 2`` approximate quantiles of the positives' scores
            and as many of the negatives' (``percentile_approx``, so each class is split into
            near-equal shares) cut the scores into at most ``max_points`` buckets. Each bucket
            keeps its lowest score as threshold, with the exact counts at it (no raw row is
            shuffled: one pass per partition summarises the buckets). Every dropped threshold
            is represented by the next lower kept one, as in :meth:`RocCounts.reduce`, and the
            realised largest TPR and FPR errors are computed exactly and stored in
            ``max_tpr_error`` / ``max_fpr_error`` (about ``2 / max_points`` per class when its
            scores have few ties).
        num_partitions: number of score ranges of the distinct-score table (default: Spark's
            choice, ``spark.sql.shuffle.partitions`` possibly coalesced by adaptive execution).
        _info: internal; filled with the driver-side diagnostics when given.

    Returns:
        The counts (``compressed=True``; int64 counts, float64 when weighted).

    Raises:
        ValueError: missing column or wrong column type, null/NaN/infinite scores, null or NaN
            labels, more than two labels, one class only, null/negative/non-finite weights,
            positives or negatives of total weight zero; the message names the column.
    """
    if max_points is not None and (int(max_points) != max_points or max_points < 2):
        raise ValueError(f"max_points must be an integer >= 2 or None, got {plain(max_points)!r}")
    _check_partitions(num_partitions)
    check_spark_workers(df.sparkSession)
    plan = _validate(df, label_col, score_col, weight_col, pos_label)
    rows = _class_columns(df, plan, score_col, weight_col)
    if max_points is None:
        counts, info = _exact(rows, plan.weighted, num_partitions)
    else:
        if plan.weighted:  # the class of zero-weight rows, for the per-class quantiles
            rows = _class_columns(df, plan, score_col, weight_col, with_class=True)
        counts, info = _bounded(
            rows, plan.weighted, int(max_points), num_partitions, _QUANTILE_RELATIVE_ERROR
        )
    logger.debug("roc_counts_from_spark: %s; driver received %s", counts, info)
    if _info is not None:
        _info.update(info)
    return counts


def score_counts_from_spark(
    df: DataFrame, score_col: str, *, num_partitions: int | None = None
) -> ScoreCounts:
    """Exact counts of unlabeled scores in a Spark DataFrame, computed in Spark.

    Equals ``ScoreCounts.from_scores`` of the collected column (ties form one threshold) by the
    plan of :func:`roc_counts_from_spark` (one validation aggregate; ``groupBy(score)``, range
    partitioning, per-partition running totals; partition offsets on the driver). The driver
    receives one row per distinct score (the result itself) plus one per partition, never the
    rows. Log it with ``mi.log_production_scores(counts, batch=...)``.

    Args:
        df: the scored production table.
        score_col: scores (numeric; compared as float64).
        num_partitions: see :func:`roc_counts_from_spark`.

    Raises:
        ValueError: missing or non-numeric column, an empty table, null/NaN/infinite scores;
            the message names ``score_col``.
    """
    _check_partitions(num_partitions)
    check_spark_workers(df.sparkSession)
    _check_column(df, "score_col", score_col, (T.NumericType, T.BooleanType), "numeric scores")
    row = df.agg(F.count(F.lit(1)).alias("n"), *_score_checks(score_col)).collect()[0]
    if row["n"] == 0:
        raise ValueError(f"df is empty: score_col={score_col!r} holds no score to count")
    _raise_bad_scores(score_col, [row], row["n"])
    col = _col(score_col).cast("double").alias("score")
    rows = df.select(col, F.lit(1).cast("long").alias("pos"), F.lit(0).cast("long").alias("neg"))
    score, n_above, _, n, _, info = _global_points(_cumulated(rows, False, num_partitions), False)
    logger.debug("score_counts_from_spark: %d thresholds; driver received %s", score.size, info)
    return ScoreCounts(score, n_above, int(n))


def _roc_counts_from_spark(
    df: DataFrame, label_col: str, score_col: str, **options: Any
) -> tuple[RocCounts, dict[str, int]]:
    """:func:`roc_counts_from_spark` (same arguments) plus its diagnostics.

    The diagnostics: rows the driver received, score ranges cumulated separately (partitions)
    and the mode (0 exact, 1 quantile buckets); used by the tests and benchmarks.
    """
    info: dict[str, int] = {}
    return roc_counts_from_spark(df, label_col, score_col, **options, _info=info), info


def log_scores_from_spark(
    df: DataFrame,
    label_col: str,
    score_col: str,
    *,
    name: str = "test",
    pos_label: Any = None,
    weight_col: str | None = None,
    max_points: int | None = None,
    num_partitions: int | None = None,
    prevalences: Any = None,
    costs: Any = None,
    run_id: str | None = None,
    log_figures: bool = True,
    extra_summary: Mapping[str, Any] | None = None,
    tracking_uri: str | None = None,
) -> LoggedCounts:
    """Compute :func:`roc_counts_from_spark` and log the counts to an MLflow run in one call.

    The logging is :func:`mlflow_imbalance.tracking.log_counts` (artifacts under
    ``imbalance/<name>/``, metrics at the given prevalences, figures and card), into the active
    run unless ``run_id`` is given. ``summary.json`` records ``counts_source: "spark"`` under
    ``extra``, plus the columns used.

    Args:
        df: see :func:`roc_counts_from_spark`.
        label_col: see :func:`roc_counts_from_spark`.
        score_col: see :func:`roc_counts_from_spark`.
        name: the evaluation's name in the run (e.g. ``"test"``, ``"holdout_2024"``).
        pos_label: see :func:`roc_counts_from_spark`.
        weight_col: see :func:`roc_counts_from_spark`.
        max_points: see :func:`roc_counts_from_spark`.
        num_partitions: see :func:`roc_counts_from_spark`.
        prevalences: deployment prevalences to log metrics at (see ``log_counts``).
        costs: see ``log_counts``.
        run_id: log into this run instead of the active one.
        log_figures: render the per-run figures.
        extra_summary: more JSON entries for ``summary.json``.
        tracking_uri: see ``log_counts``.

    Returns:
        What was logged (``mlflow_imbalance.tracking.LoggedCounts``).
    """
    from mlflow_imbalance import tracking

    counts = roc_counts_from_spark(
        df,
        label_col,
        score_col,
        pos_label=pos_label,
        weight_col=weight_col,
        max_points=max_points,
        num_partitions=num_partitions,
    )
    extra: dict[str, Any] = {
        "counts_source": "spark",
        "spark_columns": {"label": label_col, "score": score_col, "weight": weight_col},
    }
    extra.update(extra_summary or {})
    return tracking.log_counts(
        counts,
        name=name,
        prevalences=prevalences,
        costs=costs,
        run_id=run_id,
        extra_summary=extra,
        log_figures=log_figures,
        tracking_uri=tracking_uri,
    )
