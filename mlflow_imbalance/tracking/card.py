"""The per-run figures and the one-run HTML card (``card.html``) of a logged counts set.

The figures come from :func:`mlflow_imbalance.plots.run_figures` (PNG, :data:`FIGURE_DPI`); the
card is the ``run_card.html.j2`` template rendered from the summary, self-contained (inline CSS,
figures as data-URI PNG, no script) so the MLflow UI previews it.
"""

from __future__ import annotations

import base64
import logging
import math
import warnings
from pathlib import Path
from typing import Any

from mlflow_imbalance.core.counts import RocCounts

logger = logging.getLogger(__name__)

__all__ = ["FIGURE_DPI"]

#: Resolution of the per-run PNG figures (modest: they are previews; the report redraws).
FIGURE_DPI = 72


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
        figs = plots.run_figures(c, prevalences=prevalences, cost_fp=cfp, cost_fn=cfn, name=name)
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
    "roc": "ROC curve with convex hull",
    "roc_log": "ROC curve, logarithmic false-positive rate",
    "pr": "Precision-recall at the test and chosen prevalences",
    "p3": "P³: precision of the max-F1 point across prevalence",
    "broc": "B-ROC",
    "cost": "Cost curve",
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


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    v = float(value)
    if not math.isfinite(v):
        return "–"
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
        mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    return f"{v:.{digits}g}"


def _render_card(summary: dict[str, Any], figure_dir: Path, figures: dict[str, str]) -> str:
    env = _template_env()
    env.filters["fmt"] = _fmt
    template = env.get_template("run_card.html.j2")
    images = [
        {
            "key": key,
            "title": _FIGURE_TITLES.get(key, key),
            "src": "data:image/png;base64,"
            + base64.b64encode((figure_dir / fname).read_bytes()).decode("ascii"),
        }
        for key, fname in figures.items()
    ]
    return template.render(s=summary, figures=images)
