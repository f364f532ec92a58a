"""The per-run figures and the one-run HTML card (``card.html``) of a logged counts set.

The figures come from :func:`mlflow_imbalance.plots.preview_figures` (PNG at :data:`FIGURE_DPI`,
sized for MLflow's artifact preview pane); the card is the ``run_card.html.j2`` template rendered
from the summary, self-contained (inline CSS, figures as data-URI PNG, no script, no links to
local documentation) so the MLflow UI previews it. Its title names the run; a short verdict
(:func:`_verdict`) says in words what the numbers mean at each prevalence.
"""

from __future__ import annotations

import base64
import functools
import logging
import math
import warnings
from pathlib import Path
from typing import Any

from mlflow_imbalance._numbers import fmt_eta, fmt_number
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.stats.decision import chance_level, per_cases

logger = logging.getLogger(__name__)

__all__ = ["FIGURE_DPI"]

#: Resolution of the per-run PNG figures (written into the PNG, so viewers size them right).
FIGURE_DPI = 100


def _render_figures(
    c: RocCounts, name: str, prevalences: list[float], costs: dict[str, float] | None, out: Path
) -> dict[str, str]:
    """Write the per-run PNGs into ``out``; ``{key: filename}``. Empty if plotting is missing."""
    try:
        from mlflow_imbalance import plots
    except ImportError as exc:  # pragma: no cover - plots ships with the package
        logger.warning("figures skipped: mlflow_imbalance.plots unavailable (%s)", exc)
        return {}
    cfp, cfn = (costs["fp"], costs["fn"]) if costs else (1.0, 1.0)
    files: dict[str, str] = {}
    try:
        # the cost curve only when costs were given: at 1:1 it says little the others do not
        kinds = [k for k in plots.PREVIEW_KINDS if costs or k != "cost"]
        figs = plots.preview_figures(
            c, prevalences=prevalences, cost_fp=cfp, cost_fn=cfn, name=name, kinds=kinds
        )
        for key, fig in figs.items():
            fname = f"{key}.png"
            (out / fname).write_bytes(plots.figure_to_png(fig, dpi=FIGURE_DPI, close=True))
            files[key] = fname
    except Exception as exc:  # figures are a convenience: never lose the counts over them
        message = f"mlflow-imbalance: figures for {name!r} skipped, drawing failed: {exc!r}"
        logger.warning(message)
        warnings.warn(message, UserWarning, stacklevel=4)
        for fname in files.values():
            (out / fname).unlink(missing_ok=True)
        return {}
    return files


_FIGURE_TITLES = {
    "pr": "Precision–recall at the test prevalence and each prevalence of interest. Precision "
    "falls with η at every threshold: the same model and threshold give far more false alarms "
    "per catch when positives are rarer.",
    "roc": "ROC curve on a logarithmic false-positive-rate axis, with its convex hull. At low "
    "prevalence only the left part (FPR well below 1 %) is usable; the dots are the max-F1 "
    "operating point at each prevalence. FPR = 0 (positives above every negative) has its own "
    "tick at the left, past the break in the axis.",
    "cost": "Cost curve: normalised expected cost of the best threshold at each probability "
    "cost PC(+), against always answering negative or positive. Where it touches a diagonal the "
    "model is no better than the trivial answer; vertical lines mark each prevalence.",
}


def _template_env() -> Any:
    import jinja2

    # the wheel ships templates/ as mlflow_imbalance/templates; a source tree keeps it at the top
    package = Path(__file__).resolve().parent.parent
    dirs = [d for d in (package / "templates", package.parent / "templates") if d.is_dir()]
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(d) for d in dirs]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


#: Numbers and prevalences are written as in the report (:mod:`mlflow_imbalance._numbers`).
_fmt = fmt_number


def _fmt_threshold(value: Any) -> str:
    """A threshold as the verdict writes it (4 significant digits); +inf: "none (flag nothing)"."""
    if value is not None and math.isinf(float(value)) and float(value) > 0:
        return "none (flag nothing)"
    return _fmt(value, 4)


@functools.lru_cache(maxsize=1)
def _card_template() -> Any:
    """The compiled card template, once per process (compiling it cost ~25 ms a call)."""
    env = _template_env()
    env.filters["fmt"] = _fmt
    env.filters["threshold"] = _fmt_threshold
    return env.get_template("run_card.html.j2")


def _render_card(summary: dict[str, Any], figure_dir: Path, figures: dict[str, str]) -> str:
    template = _card_template()
    images = [
        {
            "key": key,
            "title": _FIGURE_TITLES.get(key, key),
            "src": "data:image/png;base64,"
            + base64.b64encode((figure_dir / fname).read_bytes()).decode("ascii"),
        }
        for key, fname in figures.items()
    ]
    title = summary.get("run_name") or summary.get("run_id") or "run"
    return template.render(s=summary, figures=images, title=title, verdict=_verdict(summary))


_eta_text = fmt_eta


def _count(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 or x == 0 else f"{x:.1f}"


def _verdict(summary: dict[str, Any]) -> list[str]:
    """One sentence per prevalence, in the words of the report's verdict, for one run.

    The operating point is the lowest-expected-cost threshold when costs were given, else the
    max-F1 threshold; its alerts and caught positives are given per 10,000 (or 10^6) cases.
    """
    out = []
    costs = summary.get("costs")
    for row in summary["headline"]["at_prevalence"]:
        eta = float(row["prevalence"])
        per = per_cases(eta)
        if costs and row.get("min_cost"):
            mc = row["min_cost"]
            thr, tpr, fpr = mc["threshold"], mc["tpr"], mc["fpr"]
            cis = (_ci(mc.get("precision")), _ci(mc.get("recall")))
            p_iv = (mc.get("precision") or {}).get("interval")
            rule = _cost_rule(mc, costs)
        else:
            thr, tpr = row["max_f1_threshold"], row["recall_at_max_f1"]["value"]
            prec = row["precision_at_max_f1"]["value"]
            # FPR from precision = ηTPR / (ηTPR + (1−η)FPR)
            fpr = eta * tpr * (1 - prec) / (prec * (1 - eta)) if prec > 0 else 0.0
            rule = f"highest F1, {_fmt(row['max_f1']['value'])}"
            cis = (_ci(row["precision_at_max_f1"]), _ci(row["recall_at_max_f1"]))
            p_iv = row["precision_at_max_f1"].get("interval")
        caught = per * eta * tpr
        alerts = caught + per * (1 - eta) * fpr
        where = "the test prevalence" if row["is_test_prevalence"] else "deployment"
        trivial = _not_shown(row, eta, costs, per) if costs else ""
        if trivial:
            out.append(f"At η = {_eta_text(eta)} ({where}): {trivial}")
            continue
        if math.isinf(float(thr)) or alerts <= 0:
            out.append(
                f"At η = {_eta_text(eta)} ({where}): flag nothing: no threshold beats "
                f"answering every case negative ({rule})."
            )
            continue
        precision = caught / alerts
        text = (
            f"At η = {_eta_text(eta)} ({where}): threshold {_fmt(thr, 4)} ({rule}). "
            f"Per {per:,} cases: {_count(alerts)} alerts, {_count(caught)} of "
            f"{_count(per * eta)} positives caught; precision {_fmt(precision, 3)}{cis[0]}, "
            f"recall {_fmt(tpr, 3)}{cis[1]}."
        )
        chance = chance_level(tpr, fpr, float(p_iv[0]) if p_iv else None, eta)  # as the report
        if chance == "all":
            text += " Its threshold flags every case: no model is needed to do that."
        elif chance == "interval":
            text += (
                " At this threshold its alerts are not shown to be more precise than flagging "
                f"as many cases at random: precision{cis[0]} reaches η = {_eta_text(eta)}."
            )
        out.append(text)
    return out


def _not_shown(row: dict[str, Any], eta: float, costs: dict[str, float], per: int) -> str:
    """The report's rule for one run: flag nothing / everything where no threshold beats it.

    Where the run's lowest-cost interval reaches the better trivial decision's cost (as
    report/analysis/robust.py decides); else "".
    """
    mc = row.get("min_cost") or {}
    iv = mc.get("expected_cost_interval")
    if not iv or not math.isfinite(float(mc.get("threshold", math.nan))):
        return ""
    nothing, every = eta * float(costs["fn"]), (1 - eta) * float(costs["fp"])
    cost, kind = (nothing, "nothing") if nothing <= every else (every, "everything")
    if float(iv[1]) < cost:
        return ""
    return (
        f"flag {kind} (no threshold is shown to beat flagging {kind}: "
        f"{_cost_rule(mc, costs)}, an interval that reaches flagging {kind}'s "
        f"{_fmt(cost * per)})."
    )


def _cost_rule(mc: dict[str, Any], costs: dict[str, float]) -> str:
    """The report verdict's words for the lowest expected cost, per ``per_cases(η)`` cases.

    ``lowest expected cost, 409 [385, 433] per 10,000 cases with C_FP = 1, C_FN = 100``: the
    value is ``min_cost.expected_cost_per_cases`` of the summary, the value of the MLflow key
    ``imb/min_cost_per_10k <η> <name>``.
    """
    interval = {"interval": mc.get("expected_cost_per_cases_interval")}
    return (
        f"lowest expected cost, {_fmt(mc['expected_cost_per_cases'])}{_ci(interval)} per "
        f"{int(mc['per_cases']):,} cases with C_FP = {_fmt(costs['fp'])}, "
        f"C_FN = {_fmt(costs['fn'])}"
    )


def _ci(point: dict[str, Any] | None) -> str:
    """`` [lo, hi]`` of a summary number's interval (3 significant digits), or ""."""
    iv = (point or {}).get("interval")
    if not iv:
        return ""
    return f" [{_fmt(iv[0], 3)}, {_fmt(iv[1], 3)}]"
