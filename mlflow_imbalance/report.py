"""Runs → report context → one self-contained HTML file (the model-review report).

The report answers "which model should we ship for the prevalence we will really see, and how
sure are we?". It is built in four stages, each timed (:attr:`Report.timings`):

1. **load** – inputs become :class:`RunData` records. Mappings ``name -> RocCounts`` and paths to
   ``roc_counts.npz`` files need no tracking server; MLflow run ids or ``Run`` objects go through
   the thin loader layer :mod:`mlflow_imbalance._loading` (the only place that touches MLflow —
   this module never imports it). Runs without (valid) counts become :class:`SkippedRun`.
2. **metrics / bootstrap** – exact point metrics at every chosen prevalence η (Brabec et al.
   2020, eq. 8, via :mod:`mlflow_imbalance.metrics`), analytic intervals for rates and precision
   and count-bootstrap intervals and bands (:mod:`mlflow_imbalance.uncertainty`).
3. **ranking** – flip points η* for every pair and metric with their significance
   (:mod:`mlflow_imbalance.ranking`).
4. **figures / render** – matplotlib figures from :mod:`mlflow_imbalance.plots` embedded as
   data-URI SVG (PNG when an SVG would be too large), and jinja2 templates with autoescaping, so
   every user-controlled string (run names, params, tags, experiment) is escaped.

The output holds no script at all and loads nothing from any URL: it is readable offline, when
printed, and inside the MLflow UI's sandboxed artifact preview. Given the same inputs and seed it
is byte-identical except for the single ``Generated …`` timestamp line.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html as _html
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts

logger = logging.getLogger(__name__)

__all__ = [
    "Report",
    "ReportOptions",
    "RunData",
    "SkippedRun",
    "build_report",
    "load_counts_files",
    "render_html",
    "template_dir",
]

ProgressFn = Callable[[str, int, int], None]

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

_TIMESTAMP_PREFIX = "Generated "


# ---------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class RunData:
    """One run as the report sees it: loaded counts plus what is shown about the run.

    Attributes:
        name: display name (run name, file name or mapping key); escaped when rendered.
        counts: the run's ROC counts.
        run_id: MLflow run id, when the counts came from a run.
        summary: the run's ``summary.json`` (may be empty).
        params: run params shown in the runs table.
        tags: user tags shown in the runs table.
        digest: digest of the test labels (runs with equal digests share a test set).
        scores: optional ``(y_true, y_score)`` of the test set, for paired comparisons.
        source: where the counts came from (for the runs table).
    """

    name: str
    counts: RocCounts
    run_id: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, Any] = field(default_factory=dict)
    digest: str | None = None
    scores: tuple[Any, Any] | None = None
    source: str = ""

    @property
    def synthesized(self) -> bool:
        """True when the run's positives were synthesised from negatives (Cataltepe et al.)."""
        pos = self.summary.get("positives") if isinstance(self.summary, Mapping) else None
        return str(pos).lower() in {"synthesized", "synthesised", "synthetic"}


@dataclass(frozen=True)
class SkippedRun:
    """A run left out of the report, with the reason shown to the reader."""

    name: str
    reason: str
    run_id: str | None = None


@dataclass(frozen=True)
class ReportOptions:
    """Validated options of one report (see :func:`build_report` for their meaning)."""

    prevalences: tuple[float, ...] = ()
    prevalence_range: tuple[float, float] | None = None
    name: str = "test"
    cost_fp: float = 1.0
    cost_fn: float = 1.0
    confidence: float = 0.95
    n_bootstrap: int = 1000
    seed: int = 0
    title: str | None = None
    n_grid: int = 200


class Report:
    """A rendered report: the HTML string plus what it was built from.

    Attributes:
        html: the complete, self-contained HTML document.
        context: the template context (numbers, flips, figures) for programmatic use.
        timings: wall seconds per stage (load, metrics, bootstrap, ranking, figures, render).
        cpu_timings: CPU seconds (``time.process_time``, all threads) per stage.
        skipped: runs that could not be included, with reasons.
    """

    def __init__(
        self,
        html: str,
        context: Mapping[str, Any],
        timings: Mapping[str, float],
        skipped: Sequence[SkippedRun] = (),
        path: Path | None = None,
    ) -> None:
        self.html = html
        self.context = dict(context)
        self.timings = dict(timings)
        self.cpu_timings: dict[str, float] = {}
        self.skipped = list(skipped)
        self.path = path

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML to ``path`` (UTF-8, atomically) and return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        tmp.write_text(self.html, encoding="utf-8")
        os.replace(tmp, target)
        self.path = target
        return target

    def _repr_html_(self) -> str:
        """Notebook display: the report in a sandboxed iframe, so its CSS cannot leak out."""
        doc = _html.escape(self.html, quote=True)
        return (
            f'<iframe srcdoc="{doc}" sandbox style="width:100%;height:900px;border:1px solid '
            '#d0d7de;border-radius:6px" title="mlflow-imbalance report"></iframe>'
        )

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        runs = len(self.context.get("runs", ()))
        return f"Report(runs={runs}, skipped={len(self.skipped)}, bytes={len(self.html)}{where})"


# ---------------------------------------------------------------------------------- formatting
def _fmt(x: Any, digits: int = 4) -> str:
    """A number for the table: ``digits`` significant digits, '—' for missing/NaN."""
    if x is None:
        return "—"
    x = float(x)
    if not math.isfinite(x):
        return "—" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}"
    return _fmt_sci(x, digits - 1)


def _fmt_sci(x: float, digits: int = 2) -> str:
    mant, exp = f"{x:.{digits}e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}"


def _fmt_eta(x: float) -> str:
    """A prevalence: plain for ≥ 0.001, otherwise ``1e-4`` / ``2.5e-5`` style."""
    x = float(x)
    if x >= 1e-3:
        return f"{x:.3g}"
    return _fmt_sci(x, 2)


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


# ---------------------------------------------------------------------------------- templates
def template_dir() -> Path:
    """Directory of the jinja2 templates.

    The wheel ships the repository's top-level ``templates/`` as ``mlflow_imbalance/templates``
    (hatch ``force-include``); an editable install falls back to the repository copy.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "report.html.j2").is_file():
            return candidate
    raise FileNotFoundError(
        "report templates not found: looked in "
        f"{here / 'templates'} and {here.parent / 'templates'} (broken installation?)"
    )


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
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
    return env


def render_html(context: Mapping[str, Any]) -> str:
    """Render the report template with ``context`` (autoescaping on)."""
    return _environment().get_template("report.html.j2").render(**context)


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
            except (OSError, ValueError, TypeError) as exc:
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
    runs_or_counts: Any, name: str, progress: ProgressFn | None
) -> tuple[list[RunData], list[SkippedRun], str | None]:
    """Normalise the accepted inputs to RunData records (see :func:`build_report`)."""
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
        from mlflow_imbalance import _loading  # lazily: the only route to MLflow

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


def _options(
    prevalences: Any,
    prevalence_range: Any,
    name: str,
    cost_fp: float,
    cost_fn: float,
    confidence: float,
    n_bootstrap: int,
    seed: int,
    title: str | None,
) -> ReportOptions:
    from mlflow_imbalance.core.validation import check_prevalence

    if prevalences is None or prevalences is Ellipsis:
        etas: tuple[float, ...] = ()
    else:
        arr = check_prevalence(np.atleast_1d(np.asarray(prevalences, dtype=float)), "prevalences")
        if arr.ndim != 1:
            raise ValueError(
                f"prevalences must be a number or a 1-d sequence, got shape {arr.shape}"
            )
        etas = tuple(sorted({float(x) for x in arr}))
    rng = None
    if prevalence_range is not None:
        if isinstance(prevalence_range, str):
            prevalence_range = _parse_range(prevalence_range)
        lo_hi = check_prevalence(np.asarray(prevalence_range, dtype=float), "prevalence_range")
        if lo_hi.shape != (2,) or not lo_hi[0] < lo_hi[1]:
            raise ValueError(
                f"prevalence_range must be (low, high) with low < high, got {prevalence_range!r}"
            )
        rng = (float(lo_hi[0]), float(lo_hi[1]))
    for arg, v in (("cost_fp", cost_fp), ("cost_fn", cost_fn)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{arg} must be a positive finite number, got {v!r}")
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1):
        raise ValueError(f"confidence must lie in [0.5, 1), got {confidence!r}")
    if int(n_bootstrap) != n_bootstrap or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a non-negative integer, got {n_bootstrap!r}")
    if 0 < n_bootstrap < 50:
        raise ValueError(f"n_bootstrap must be 0 (off) or at least 50, got {n_bootstrap!r}")
    if int(seed) != seed:
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return ReportOptions(
        prevalences=etas,
        prevalence_range=rng,
        name=name,
        cost_fp=float(cost_fp),
        cost_fn=float(cost_fn),
        confidence=float(confidence),
        n_bootstrap=int(n_bootstrap),
        seed=int(seed),
        title=title,
    )


def _parse_range(text: str) -> tuple[float, float]:
    """``"1e-5:1e-2"`` → (1e-5, 1e-2)."""
    parts = text.replace(",", ":").split(":")
    if len(parts) != 2:
        raise ValueError(f"prevalence_range must look like LOW:HIGH (e.g. 1e-5:1e-2), got {text!r}")
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(
            f"prevalence_range must look like LOW:HIGH (e.g. 1e-5:1e-2), got {text!r}"
        ) from None


# ---------------------------------------------------------------------------------- entry point
def build_report(
    runs_or_counts: Any,
    *,
    prevalences: float | Sequence[float] | None = None,
    prevalence_range: tuple[float, float] | str | None = None,
    name: str = "test",
    cost_fp: float = 1.0,
    cost_fn: float = 1.0,
    confidence: float = 0.95,
    n_bootstrap: int = 1000,
    seed: int = 0,
    output: str | os.PathLike[str] | None = None,
    title: str | None = None,
    experiment: str | None = None,
    progress: ProgressFn | None = None,
    skipped: Sequence[SkippedRun] = (),
) -> Report:
    """Build the HTML report comparing runs across prevalences.

    Args:
        runs_or_counts: MLflow run ids or ``mlflow.entities.Run`` objects (loaded through
            :mod:`mlflow_imbalance.tracking`, needs a tracking store), a mapping
            ``name -> RocCounts``, :class:`RunData` records, or paths to ``roc_counts.npz``
            files / directories holding one (no tracking server at all).
        prevalences: deployment prevalence(s) η of interest; each gets its own columns in the
            summary table and its own PR/B-ROC figures. None: the test prevalence only.
        prevalence_range: ``(low, high)`` or ``"low:high"``: the η range searched for ranking
            flips and drawn on the η axes. Default: spans the test and chosen prevalences with a
            decade of margin each side, within [1e-6, 0.5].
        name: the counts name runs were logged under (``imbalance/<name>/``).
        cost_fp: cost of one false positive (iso-performance lines, expected cost).
        cost_fn: cost of one false negative.
        confidence: level of every interval and band.
        n_bootstrap: count-bootstrap replicates for metric intervals and bands (0 disables them;
            analytic rate and precision intervals remain).
        seed: seed of the bootstrap; the report is deterministic given inputs and seed.
        output: when given, the HTML is also written there.
        title: the report's title (default: from the experiment name).
        experiment: experiment name shown in the header (the loader fills it for run ids).
        progress: callback ``(stage, done, total)`` for progress bars.
        skipped: runs already known to be skipped (e.g. by the CLI's search), listed as such.

    Returns:
        The :class:`Report` (``.html``, ``.save(path)``, ``_repr_html_`` for notebooks).

    Raises:
        ValueError: bad options (named), or no run with valid counts at all.
    """
    opts = _options(
        prevalences, prevalence_range, name, cost_fp, cost_fn, confidence, n_bootstrap, seed, title
    )
    timings: dict[str, float] = {}
    cpu: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    runs, skipped_now, exp_loaded = _collect(runs_or_counts, name, progress)
    timings["load"] = time.perf_counter() - t0
    cpu["load"] = time.process_time() - c0
    all_skipped = [*skipped, *skipped_now]
    if not runs:
        reasons = "; ".join(f"{s.name}: {s.reason}" for s in all_skipped[:5]) or "no input"
        raise ValueError(f"runs_or_counts holds no run with valid counts ({reasons})")
    runs = _unique_names(runs)
    from mlflow_imbalance import _analysis

    context = _analysis.build_context(
        runs,
        all_skipped,
        opts,
        experiment=experiment or exp_loaded,
        progress=progress,
        timings=timings,
        palette=PALETTE,
        formatters={"fmt": _fmt, "eta": _fmt_eta, "int": _fmt_int, "ci": _fmt_ci},
        seed_for=_stable_seed,
        cpu_timings=cpu,
    )
    context["generated_at"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    t0, c0 = time.perf_counter(), time.process_time()
    html = render_html(context)
    timings["render"] = time.perf_counter() - t0
    cpu["render"] = time.process_time() - c0
    report = Report(html, context, timings, all_skipped)
    report.cpu_timings = cpu
    if output is not None:
        report.save(output)
    return report


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
