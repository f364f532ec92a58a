"""Small pieces of the report's context shaped for the templates: header, verdict, runs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mlflow_imbalance.report.analysis._common import ADEQUACY_TOLERANCE
from mlflow_imbalance.report.analysis.charts import BAND_RUNS
from mlflow_imbalance.report.analysis.notes import names_short
from mlflow_imbalance.report.analysis.verdict import chance_text, count, p_value_text

__all__ = [
    "MAX_TABLE_ROWS",
    "adequacy_note",
    "band_runs",
    "digest_groups",
    "header",
    "run_row",
    "verdict_view",
]

#: Rows of a per-prevalence table shown before "show all runs".
MAX_TABLE_ROWS = 12

_LABEL = {"ap": "AP", "pr_auc": "PR-AUC", "max_f1": "max-F1", "roc_auc": "ROC-AUC",
          "cost": "expected cost"}  # fmt: skip


def header(
    runs: Sequence[Any],
    opts: Any,
    experiment: str | None,
    test_prev: Mapping[str, float],
    chosen: Sequence[float],
    fmt: Any,
    feta: Any,
) -> dict[str, Any]:
    """The page's title and set-up: prevalences, criterion, operating point, uncertainty."""
    from mlflow_imbalance._version import __version__

    cost_rule = opts.costs_given
    key = "cost" if cost_rule else opts.primary_metric
    names = [r.name for r in runs]
    title = opts.title or (f"Imbalance report: {experiment}" if experiment else "Imbalance report")
    return {
        "title": title,
        "experiment": experiment,
        "counts_name": opts.name,
        "version": __version__,
        "test_prevalences": [
            f"{feta(e)} ({names_short(n for n in names if test_prev[n] == e)})"
            for e in sorted(set(test_prev.values()))
        ],
        "test_prevalence_short": (
            feta(next(iter(test_prev.values())))
            if len(set(test_prev.values())) == 1
            else f"{feta(min(test_prev.values()))}–{feta(max(test_prev.values()))}"
        ),
        "deployment_prevalences": [feta(e) for e in chosen],
        "prevalences_source": opts.prevalences_source,
        "costs_given": cost_rule,
        "costs_source": opts.costs_source,
        "cost_fp": fmt(opts.cost_fp),
        "cost_fn": fmt(opts.cost_fn),
        "criterion": "lowest expected cost" if cost_rule else f"highest {_LABEL[key]}",
        "criterion_key": key,
        "criterion_label": _LABEL[key],
        "op_rule": (
            f"the cost-optimal threshold (C_FP = {fmt(opts.cost_fp)}, C_FN = {fmt(opts.cost_fn)})"
            if cost_rule
            else "the max-F1 threshold"
        ),
        "n_bootstrap": opts.n_bootstrap,
        "seed": opts.seed,
    }


def band_runs(lead: Sequence[str], verdicts: Sequence[Any]) -> list[str]:
    """Runs whose bands show at first: the first verdict's winner and runner-up.

    The live control opens at that verdict's η; the other runs' bands are one choice away in
    the page's "Bands" control.
    """
    wanted = [n for v in verdicts[:1] for n in (v.run, v.runner_up) if n is not None]
    out = [n for n in dict.fromkeys(wanted) if n in set(lead)]
    return out or list(lead[:BAND_RUNS])


def _scaled(x: float | None, v: Any) -> float | None:
    """A criterion value as the verdict prints it: expected cost per ``v.per`` cases."""
    return None if x is None else x * (v.per if v.criterion_key == "cost" else 1)


def verdict_view(
    v: Any, fmt: Any, feta: Any, fint: Any, fci: Any, alpha_conf: float
) -> dict[str, Any]:
    """A :class:`Verdict` shaped for the template (numbers formatted, raw η kept)."""
    per = fint(v.per)
    inf_thr = math.isinf(v.threshold) and v.threshold > 0
    return {
        "eta_value": repr(float(v.prevalence)),
        "eta": feta(v.prevalence),
        "run": v.run,
        "criterion": v.criterion,
        "value": fmt(_scaled(v.value, v)),  # as the tables write the criterion
        "value_unit": f"per {per} cases" if v.criterion_key == "cost" else "",
        "threshold": "none (flag nothing)" if inf_thr else fmt(v.threshold, 4),
        "run_attr": v.run or "",
        "per": per,
        "alerts": count(v.alerts, fint),
        "caught": count(v.caught, fint),
        "positives": count(v.per * v.prevalence, fint),
        "missed": count(v.missed, fint),
        "precision": fmt(v.precision, 3),
        "precision_ci": fci(v.precision_low, v.precision_high),
        "recall": fmt(v.recall, 3),
        "recall_ci": fci(v.recall_low, v.recall_high),
        "value_ci": fci(*(_scaled(x, v) for x in (v.value_low, v.value_high))),
        "runner_up": v.runner_up,
        "runner_up_ci": fci(*(_scaled(x, v) for x in (v.runner_up_low, v.runner_up_high))),
        "runner_up_value": (
            None if v.runner_up_value is None else fmt(_scaled(v.runner_up_value, v))
        ),
        "significant": v.significant,
        "intervals_apart": v.intervals_apart,
        "p": (None if v.p_value is None else p_value_text(v.p_value, 1 - alpha_conf)),
        "test": v.test,
        "more_data": v.more_data,
        "disagree": v.disagree,
        "chance": v.chance,
        "chance_text": chance_text(
            v.chance, feta(v.prevalence), fci(v.precision_low, v.precision_high)
        ),
        "text": v.text,
        "source": "",  # "estimated from production batch …" at the estimated η
        **_decision_view(v, fmt, feta, fint, fci),
    }


def _decision_view(v: Any, fmt: Any, feta: Any, fint: Any, fci: Any) -> dict[str, Any]:
    """The verdict's decision (run, nothing, everything, none judged) and its range of η."""
    from mlflow_imbalance.report.analysis.robust import action_text

    lo, hi = float(v.prevalence_low), float(v.prevalence_high)
    ranged = hi > lo
    per = fint(v.per)

    def end(f: Any) -> dict[str, str]:
        e = float(f["prevalence"])
        return {
            "eta": feta(e) if e > 0 else "0",
            "none": not e > 0,  # no positives at η = 0: every alert is false
            "alerts": count(f["alerts"], fint),
            "caught": count(f["caught"], fint),
            "positives": count(v.per * e, fint),
            "precision": "–" if math.isnan(f["precision"]) else fmt(f["precision"], 3),
        }

    at = v.at_estimate
    differs = at is not None and (at.decision, at.run, at.threshold if at.decision == "run"
                                  else None) != (v.decision, v.run, v.threshold
                                                 if v.decision == "run" else None)  # fmt: skip
    return {
        "decision": v.decision,
        "action": action_text(v, fmt),
        "range": f"{feta(lo) if lo > 0 else '0'} – {feta(hi)}" if ranged else "",
        "regret": (None if v.regret is None else fmt(float(v.regret) * v.per)),
        "regret_unit": f"per {per} cases",
        "ends": [end(v.at_low), end(v.at_high)] if ranged and v.at_low else [],
        "at_estimate": (
            f"threshold {fmt(at.threshold, 4)}"
            if differs and at.decision == v.decision == "run" and at.run == v.run
            else action_text(at, fmt)
            if differs
            else ""
        ),
        "drift": v.drift,
        "audit_text": v.audit_text,
        "audit_labels": None if v.audit_labels is None else fint(v.audit_labels),
        # the threshold to pass: plan_audit's default is the run's at its logged prevalence
        "audit_threshold": None if v.audit_threshold is None else f"{v.audit_threshold:.6g}",
        "why": v.test if v.decision in ("nothing", "everything") else "",
        "not_judged": list(v.not_judged),
        "batch": v.batch,
    }


def run_row(r: Any, color: str, fint: Any, feta: Any, links: Mapping[str, str]) -> dict[str, Any]:
    """One row of the "Runs" table."""
    c = r.counts
    return {
        "name": r.name,
        "color": color,
        "run_id": r.run_id,
        "link": links.get(r.name, ""),
        "n_pos": fint(c.n_pos),
        "n_neg": fint(c.n_neg),
        "prevalence": feta(c.prevalence),
        "n_thresholds": fint(c.n_thresholds),
        "digest": (r.digest[:16] if r.digest else None),
        "source": r.source,
        "synthesized": r.synthesized,
        "params": sorted((str(k), str(v)) for k, v in r.params.items()),
        "tags": sorted((str(k), str(v)) for k, v in r.tags.items()),
    }


def digest_groups(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """Runs grouped by the digest of their test labels (empty when no run has one)."""
    groups: dict[str, list[str]] = {}
    for r in runs:
        groups.setdefault(r.digest[:16] if r.digest else "unknown", []).append(r.name)
    if len(groups) == 1 and "unknown" in groups:
        return []
    return [{"digest": k, "runs": v} for k, v in groups.items()]


def adequacy_note(op_rule: str, conf: float) -> str:
    """The sample-size table's caption (Brabec et al. 2020, §5)."""
    return (
        f"Brabec et al. (2020) §5: precision at η rests on TPR and FPR at the operating point "
        f"({op_rule}). “± relative”: half-width of the {conf:.0%} Koopman precision interval "
        f"over the estimate (adequate up to {ADEQUACY_TOLERANCE:.0%}); k false positives pin "
        "FPR down to about ±2/√k. “Needed”: the test-set size at which the precision band is "
        f"at most {ADEQUACY_TOLERANCE:g} wide at every η (uncertainty.required_sample_size)."
    )
