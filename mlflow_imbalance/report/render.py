"""Formatting, jinja2 rendering and figure embedding (autoescaped; nothing loaded from a URL)."""

from __future__ import annotations

import base64
import functools
import hashlib
import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance._csp import CONTENT_SECURITY_POLICY
from mlflow_imbalance._numbers import fmt_eta, fmt_number, fmt_sci

logger = logging.getLogger(__name__)

_TIMESTAMP_PREFIX = "Generated "


#: Colour-blind friendly palette (Okabe–Ito, then tab10) shared by the table and the figures.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#F0E442",
    "#8c564b",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#9467bd",
    "#d62728",
    "#2ca02c",
    "#1f77b4",
    "#ff7f0e",
    "#e377c2",
    "#aec7e8",
    "#98df8a",
)

#: Largest inline SVG before a figure is embedded as PNG instead (bytes).
MAX_SVG_BYTES = 350_000
#: Points per curve handed to the figure functions (bounded-error reduction for drawing only).
DRAW_POINTS = 2000


# ---------------------------------------------------------------------------------- formatting
_fmt = fmt_number
_fmt_sci = fmt_sci
_fmt_eta = fmt_eta


def _fmt_int(x: Any) -> str:
    x = float(x)
    if not math.isfinite(x):
        return "—"
    if x == round(x):
        return f"{round(x):,}"
    return f"{x:,.1f}"


def _fmt_ci(lo: Any, hi: Any) -> str:
    if lo is None or hi is None:
        return ""
    if not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return ""
    return f"[{_fmt(lo, 3)}, {_fmt(hi, 3)}]"


def _stable_seed(seed: int, *parts: str) -> np.random.SeedSequence:
    """A seed sequence derived from the user's seed and stable strings (not ``hash()``)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return np.random.SeedSequence([int(seed), *np.frombuffer(digest[:16], dtype="<u4").tolist()])


# ---------------------------------------------------------------------------------- scripts
def _csp() -> str:
    """The page's Content-Security-Policy (one constant for the report and the run card).

    Vega runs with its CSP-safe expression interpreter, so no ``unsafe-eval`` is needed.
    """
    return CONTENT_SECURITY_POLICY


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlflow-imbalance"


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """The Vega, Vega-Lite and Vega-Embed JavaScript bundle (~0.9 MB) inlined in every report.

    From ``vl_convert.javascript_bundle()`` (vl-convert-python ships the libraries; nothing is
    downloaded). Building it costs ~2.4 s of CPU, so it is cached in memory and on disk
    (``$XDG_CACHE_HOME/mlflow-imbalance/``, keyed by the vl-convert version); a cache that
    cannot be written is only a slower next build.
    """
    import vl_convert

    version = getattr(vl_convert, "__version__", "unknown")
    path = _cache_dir() / f"vega-bundle-{version}.js"
    try:
        text = path.read_text(encoding="utf-8")
        if text.rstrip().endswith(";") and len(text) > 100_000:
            return text
    except OSError:
        pass
    text = vl_convert.javascript_bundle()
    if "</script" in text.lower():  # cannot happen with the shipped bundle; never inline it then
        raise RuntimeError("the Vega bundle contains '</script' and cannot be inlined")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        logger.debug("could not cache the Vega bundle at %s: %s", path, exc)
    return text


# ---------------------------------------------------------------------------------- templates
def template_dir() -> Path:
    """Directory of the jinja2 templates.

    The wheel ships the repository's top-level ``templates/`` as ``mlflow_imbalance/templates``
    (hatch ``force-include``); an editable install falls back to the repository copy.
    """
    package = Path(__file__).resolve().parent.parent
    candidates = (package / "templates", package.parent / "templates")
    for candidate in candidates:
        if (candidate / "report.html.j2").is_file():
            return candidate
    raise FileNotFoundError(
        "report templates not found: looked in "
        f"{candidates[0]} and {candidates[1]} (broken installation?)"
    )


def _environment() -> Any:
    """The jinja2 environment of the templates in :func:`template_dir` (one per directory).

    Kept for the process, so each template is parsed and compiled once, not at every build
    (jinja2 still reloads a template whose file changed).
    """
    return _environment_for(str(template_dir()))


@functools.lru_cache(maxsize=4)
def _environment_for(directory: str) -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "j2", "htm", "xml"), default_for_string=True, default=True
        ),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = _fmt
    env.filters["eta"] = _fmt_eta
    env.filters["log10"] = lambda x: f"{math.log10(float(x)):.4f}"
    return env


def render_html(context: Mapping[str, Any]) -> str:
    """Render the report template with ``context`` (autoescaping on).

    The embedded data and chart specs go in as JSON with ``<``, ``>`` and ``&`` escaped
    (:func:`~mlflow_imbalance.report.analysis.charts.to_script_json`), so no user string can
    close a script element; the Vega bundle is the library's own text.
    """
    from markupsafe import Markup

    from mlflow_imbalance.report.analysis.charts import to_script_json

    ctx = dict(context)
    ctx["csp"] = _csp()
    ctx["data_json"] = Markup(to_script_json(context.get("data", {})))
    ctx["specs_json"] = Markup(to_script_json(context.get("specs", {})))
    ctx["vega_js"] = Markup(vega_bundle()) if context.get("specs") else Markup("")
    return _environment().get_template("report.html.j2").render(**ctx)


def strip_timestamp(html: str) -> str:
    """The HTML without its one timestamp line (for determinism checks)."""
    return "\n".join(
        line for line in html.splitlines() if f'class="timestamp">{_TIMESTAMP_PREFIX}' not in line
    )


def figure_to_data_uri(
    fig: Any, *, max_svg_bytes: int = MAX_SVG_BYTES, dpi: int = 110
) -> tuple[str, str]:
    """Encode a matplotlib figure as a deterministic data URI; returns ``(uri, "svg"|"png")``.

    SVG (text stays text, scales for print) unless it would exceed ``max_svg_bytes``; then PNG.
    SVG ids are salted with a constant and the date metadata is dropped, so the same figure gives
    the same bytes on every build.
    """
    from mlflow_imbalance import plots

    svg = plots.figure_to_svg(fig).encode("utf-8")
    if len(svg) <= max_svg_bytes:
        return f"data:image/svg+xml;base64,{base64.b64encode(svg).decode('ascii')}", "svg"
    png = plots.figure_to_png(fig, dpi=dpi)
    return f"data:image/png;base64,{base64.b64encode(png).decode('ascii')}", "png"
