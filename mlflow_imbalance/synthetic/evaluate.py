"""Evaluation without positives: scores on synthesised positives → counts, costs, logging."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_cost, check_max_fpr
from mlflow_imbalance.synthetic._checks import (
    _DEFAULT_CHUNK,
    _check_positive_int,
)
from mlflow_imbalance.synthetic.generate import (
    _NAME_BAD,
    SyntheticPositives,
    synthesize_positives,
)

logger = logging.getLogger(__name__)


def _safe_names(feature_names: Sequence[str], prefix: str) -> dict[str, str]:
    """Feature name -> logging name ``<prefix>_<feature>`` restricted to ``[A-Za-z0-9_.-]``."""
    out: dict[str, str] = {}
    used = {f"{prefix}_all"}
    for i, fname in enumerate(feature_names):
        base = _NAME_BAD.sub("_", fname).strip(".-") or f"x{i}"
        while ".." in base:
            base = base.replace("..", ".")
        cand = f"{prefix}_{base}"[:100]
        if cand in used:
            cand = f"{prefix}_{i}_{base}"[:100]
        used.add(cand)
        out[fname] = cand
    return out


@dataclass(eq=False)
class SyntheticEvaluation:
    """ROC analysis of one detector on negatives plus synthesised positives (Cataltepe et al.).

    Attributes:
        overall: counts of all synthesised positives against all negatives.
        per_feature: feature name -> counts of the positives that perturb that feature against
            all negatives (the paper's per-sensor ROC curves, §II). Features without any
            positive are left out (listed in ``features_without_positives``).
        synthesis: the :class:`SyntheticPositives` used.
        negative_scores, positive_scores: the detector's scores (higher = more anomalous).
        cost_fn, cost_fp: the paper's ``C_n`` (missed fault) and ``C_p`` (false alarm).
        max_fpr: the operating region searched: thresholds with FPR at most this.
        cost: the paper's cost averaged over features at the best common alarm threshold:
            ``min_t mean_i [C_n (1 - TPR_i(t)) + C_p FPR(t)]`` over thresholds ``t`` with
            ``FPR(t) <= max_fpr`` (``t = +inf``, never alarming, included, costing ``C_n``).
        cost_threshold: that threshold ``t*``; an alarm is raised when ``score >= t*``.
        cost_fpr, cost_tpr: FPR and feature-averaged TPR at ``t*``.
        feature_cost: feature name -> ``C_n (1 - TPR_i(t*)) + C_p FPR(t*)``.
        feature_min_cost: feature name -> ``min_t`` of the same within the region, each feature
            at its own best threshold (what a detector with one alarm threshold per sensor,
            the paper's auto-associative models, could reach).
    """

    overall: RocCounts
    per_feature: dict[str, RocCounts]
    synthesis: SyntheticPositives
    negative_scores: np.ndarray
    positive_scores: np.ndarray
    cost_fn: float
    cost_fp: float
    max_fpr: float
    cost: float
    cost_threshold: float
    cost_fpr: float
    cost_tpr: float
    feature_cost: dict[str, float]
    feature_min_cost: dict[str, float]
    features_without_positives: tuple[str, ...] = ()

    @property
    def mean_feature_min_cost(self) -> float:
        """Average over features of ``feature_min_cost``."""
        return float(np.mean(list(self.feature_min_cost.values())))

    def summary(self) -> dict[str, Any]:
        """JSON-ready description: how the positives were made and the costs."""
        syn = self.synthesis
        return {
            "positives": "synthesized",
            "method": "Cataltepe et al., ROC without positive examples (sec. III)",
            "thresholds": dict(zip(syn.feature_names, syn.thresholds.tolist(), strict=True)),
            "n_faulty_features": syn.n_faulty_features,
            "n_candidates": syn.n_candidates,
            "n_positives": len(syn),
            "n_negatives": int(self.negative_scores.size),
            "positives_per_feature": syn.counts_per_feature(),
            "cost_fn": self.cost_fn,
            "cost_fp": self.cost_fp,
            "max_fpr": self.max_fpr,
            "cost": self.cost,
            "cost_threshold": None if math.isinf(self.cost_threshold) else self.cost_threshold,
            "cost_fpr": self.cost_fpr,
            "cost_tpr": self.cost_tpr,
            "feature_cost": self.feature_cost,
            "feature_min_cost": self.feature_min_cost,
        }

    def log(
        self,
        *,
        prefix: str = "synthetic",
        run_id: str | None = None,
        prevalences: Any = None,
        log_figures: bool = True,
        tracking_uri: str | None = None,
    ) -> dict[str, Any]:
        """Log the counts with the hook, one set per feature plus all positives together.

        Names are ``<prefix>_<feature>`` (characters outside ``[A-Za-z0-9_.-]`` become ``_``)
        and ``<prefix>_all``. Every set's ``summary.json`` carries ``"positives":
        "synthesized"`` plus the synthesis description (:meth:`summary`), so the report can
        mark them. The costs are logged as metrics ``imbalance/<name>/synthetic_cost`` (at the
        common threshold ``t*``) and ``imbalance/<prefix>_all/synthetic_cost``.

        Args:
            prefix: name prefix of the logged sets.
            run_id: the run (None = the active run; one is started if none is).
            prevalences: passed to :func:`mlflow_imbalance.tracking.log_counts`.
            log_figures: passed on as well.
            tracking_uri: passed on as well.

        Returns:
            Logged name -> :class:`mlflow_imbalance.tracking.LoggedCounts`.
        """
        from mlflow_imbalance import tracking

        names = _safe_names(list(self.per_feature), prefix)
        base = self.summary()
        logged: dict[str, Any] = {}
        all_name = f"{prefix}_all"
        sets = [(all_name, self.overall, None)] + [
            (names[f], c, f) for f, c in self.per_feature.items()
        ]
        for name, counts, feature in sets:
            extra = dict(base)
            extra["synthetic_feature"] = feature
            if feature is not None:
                extra["feature_cost_at_common_threshold"] = self.feature_cost[feature]
            logged[name] = tracking.log_counts(
                counts,
                name=name,
                run_id=run_id,
                prevalences=prevalences,
                extra_summary=extra,
                log_figures=log_figures,
                tracking_uri=tracking_uri,
            )
            run_id = logged[name].run_id
        client = tracking._client(tracking_uri)
        client.log_metric(run_id, tracking.metric_key(all_name, "synthetic_cost"), self.cost)
        for f, value in self.feature_cost.items():
            client.log_metric(run_id, tracking.metric_key(names[f], "synthetic_cost"), value)
        return logged


def _score(score_fn: Callable[[Any], Any], data: Any, n: int, what: str) -> np.ndarray:
    out = np.asarray(score_fn(data))
    if out.ndim == 2 and 1 in out.shape:
        out = out.reshape(-1)
    if out.ndim != 1 or out.size != n:
        raise ValueError(
            f"score_fn must return one score per row: got shape {out.shape} for {n} {what}"
        )
    if not np.issubdtype(out.dtype, np.number) or np.issubdtype(out.dtype, np.complexfloating):
        raise ValueError(f"score_fn returned dtype {out.dtype} for the {what}; scores must be real")
    out = out.astype(np.float64)
    if not np.isfinite(out).all():
        raise ValueError(
            f"score_fn returned {int((~np.isfinite(out)).sum())} NaN/infinite score(s) "
            f"for the {what}"
        )
    return out


def _region_costs(
    tpr: np.ndarray, fpr: np.ndarray, cost_fn: float, cost_fp: float, max_fpr: float
) -> np.ndarray:
    """Cost at the origin then at every point; +inf outside the region FPR <= max_fpr."""
    t = np.concatenate(([0.0], tpr))
    f = np.concatenate(([0.0], fpr))
    cost = cost_fn * (1.0 - t) + cost_fp * f
    cost[f > max_fpr * (1 + 1e-12)] = np.inf
    return cost


def evaluate_without_positives(
    score_fn: Callable[[Any], Any],
    X_validation: Any,
    thresholds: Any,
    *,
    cost_fn: float = 1.0,
    cost_fp: float = 1.0,
    max_fpr: float = 1.0,
    directions: str | Sequence[str] | Mapping[str, str] = "both",
    reference: Any = None,
    feature_weights: Any = None,
    n_faulty_features: int = 1,
    n_fault_sets: int | None = None,
    rng: int | np.random.Generator | None = None,
    chunk_size: int = _DEFAULT_CHUNK,
    batch_size: int = _DEFAULT_CHUNK,
) -> SyntheticEvaluation:
    """Evaluate a detector on clean data extended with synthesised positives (Cataltepe §III).

    The extended validation set is ``X_validation`` (negatives) plus the positives of
    :func:`synthesize_positives`. ``score_fn`` scores every row independently (higher = more
    anomalous; e.g. ``lambda X: -model.score_samples(X)`` for scikit-learn novelty
    detectors); positives are scored in batches of ``batch_size`` rows, in the same type as
    ``X_validation`` (DataFrame with its columns, or array).

    Cost (the paper's §II: ``Cost(FP, TP) = C_n (1 - TP) + C_p FP``, rates, no prevalence).
    The positives sit exactly at the analyst's fault thresholds, so every ROC point is "at the
    thresholds"; the paper compares detectors by this cost averaged over features (sensors)
    near the analyst's operating region. A single-score detector has one alarm threshold, so
    ``cost`` is the minimum over a *common* threshold ``t`` of the feature average
    ``mean_i [C_n (1 - TPR_i(t)) + C_p FPR(t)]`` restricted to ``FPR(t) <= max_fpr`` (the
    false-alarm budget; ``t = +inf`` is always allowed). Averaging the TPRs of features
    equals the TPR of positives weighted ``1/P_i`` (``P_i`` = positives of feature ``i``),
    so one sweep over the sorted scores finds it exactly. Features without positives are
    left out of the average. ``feature_min_cost`` gives each feature its own best threshold.

    Args:
        score_fn: callable mapping a batch of rows to one finite score per row.
        X_validation: clean (all-negative) validation data, array or DataFrame.
        thresholds: the analyst's fault thresholds ``d_i`` (see :func:`synthesize_positives`).
        cost_fn: ``C_n``, the cost of a missed fault (false negative rate).
        cost_fp: ``C_p``, the cost of a false alarm (false positive rate).
        max_fpr: operating region: only thresholds with FPR at most this, in (0, 1].
        directions: see :func:`synthesize_positives`.
        reference: see :func:`synthesize_positives`.
        feature_weights: see :func:`synthesize_positives`.
        n_faulty_features: see :func:`synthesize_positives`.
        n_fault_sets: see :func:`synthesize_positives`.
        rng: see :func:`synthesize_positives`.
        chunk_size: see :func:`synthesize_positives`.
        batch_size: rows per ``score_fn`` call for the positives.

    Returns:
        :class:`SyntheticEvaluation` with the overall and per-feature counts and the costs.

    Raises:
        ValueError: on invalid input (see :func:`synthesize_positives`), bad costs or
            ``max_fpr``, when every candidate is excluded, or when ``score_fn`` returns the
            wrong number of scores or non-finite ones.
    """
    if not callable(score_fn):
        raise ValueError(f"score_fn must be callable, got {type(score_fn).__name__}")
    c_n = check_cost(cost_fn, "cost_fn", allow_zero=True)
    c_p = check_cost(cost_fp, "cost_fp", allow_zero=True)
    region = check_max_fpr(max_fpr)
    batch_size = _check_positive_int(batch_size, "batch_size")
    syn = synthesize_positives(
        X_validation,
        thresholds,
        directions=directions,
        reference=reference,
        feature_weights=feature_weights,
        n_faulty_features=n_faulty_features,
        n_fault_sets=n_fault_sets,
        rng=rng,
        chunk_size=chunk_size,
    )
    if len(syn) == 0:
        raise ValueError(
            f"every one of the {syn.n_candidates} candidate positives was excluded: the "
            "thresholds are too small compared with the spacing of the validation data"
        )
    neg = _score(score_fn, X_validation, syn._X.shape[0], "rows of X_validation")
    pos = np.empty(len(syn))
    for sl, batch in syn.batches(batch_size):
        pos[sl] = _score(score_fn, batch, sl.stop - sl.start, "synthesised positives")

    n_neg, n_pos = neg.size, pos.size
    scores = np.concatenate((neg, pos))
    labels = np.concatenate((np.zeros(n_neg, dtype=bool), np.ones(n_pos, dtype=bool)))
    overall = RocCounts._from_validated(labels, scores, None, compress=True)

    feats = syn._features_2d()
    k = len(syn.feature_names)
    p_i = np.bincount(feats.reshape(-1), minlength=k)
    present = p_i > 0
    empty = tuple(n for n, ok in zip(syn.feature_names, present, strict=True) if not ok)
    if empty:
        logger.warning("no synthesised positive for feature(s) %s; left out of the cost", empty)
    per_feature: dict[str, RocCounts] = {}
    feature_min_cost: dict[str, float] = {}
    for i in np.flatnonzero(present):
        mask = np.any(feats == i, axis=1)
        sub = np.concatenate((neg, pos[mask]))
        lab = np.concatenate((np.zeros(n_neg, dtype=bool), np.ones(int(mask.sum()), dtype=bool)))
        c = RocCounts._from_validated(lab, sub, None, compress=True)
        per_feature[syn.feature_names[i]] = c
        feature_min_cost[syn.feature_names[i]] = float(
            np.min(_region_costs(c.tpr, c.fpr, c_n, c_p, region))
        )

    # Feature-averaged TPR at a common threshold = TPR of positives weighted 1/P_i (summed over
    # the features a positive perturbs), normalised by the number of features present.
    inv = np.where(present, 1.0 / np.maximum(p_i, 1), 0.0)
    w_pos = inv[feats].sum(axis=1)
    weights = np.concatenate((np.ones(n_neg), w_pos))
    balanced = RocCounts._from_validated(labels, scores, weights, compress=True)
    n_present = int(present.sum())
    mean_tpr = balanced.tp / n_present
    fpr = balanced.fp / n_neg
    costs = _region_costs(mean_tpr, fpr, c_n, c_p, region)
    best = int(np.argmin(costs))  # first minimum = highest threshold (fewest alarms)
    thr = math.inf if best == 0 else float(balanced.thresholds[best - 1])
    best_fpr = 0.0 if best == 0 else float(fpr[best - 1])
    best_tpr = 0.0 if best == 0 else float(mean_tpr[best - 1])
    fp_at = float(np.count_nonzero(neg >= thr)) / n_neg
    feature_cost = {}
    for i in np.flatnonzero(present):
        mask = np.any(feats == i, axis=1)
        tpr_i = float(np.count_nonzero(pos[mask] >= thr)) / int(mask.sum())
        feature_cost[syn.feature_names[i]] = c_n * (1.0 - tpr_i) + c_p * fp_at
    return SyntheticEvaluation(
        overall=overall,
        per_feature=per_feature,
        synthesis=syn,
        negative_scores=neg,
        positive_scores=pos,
        cost_fn=c_n,
        cost_fp=c_p,
        max_fpr=region,
        cost=float(costs[best]),
        cost_threshold=thr,
        cost_fpr=best_fpr,
        cost_tpr=best_tpr,
        feature_cost=feature_cost,
        feature_min_cost=feature_min_cost,
        features_without_positives=empty,
    )
