"""The interactive part of the report: data embedded in the page and Vega-Lite chart specs.

Nothing here draws: the page's script recomputes every η-dependent number from the embedded
ROC data when the reader moves the prevalence control, and Vega-Lite (inlined, see
:func:`mlflow_imbalance.report.render.vega_bundle`) draws the charts.

What each run embeds (numbers rounded to 6-7 significant digits, integer counts exact):

- ``hull``: the ROC convex hull vertices as integer counts (TP, FP) and thresholds. Expected
  cost is linear and F1 at η linear-fractional in (TPR, FPR), so their optimum over all
  thresholds is attained at a hull vertex: the page computes the cost-optimal and the max-F1
  operating points at any η exactly;
- ``sweep``: the criterion metric (AP / PR-AUC) on the report's log-η grid, interpolated
  linearly in log η by the page (the ranking of AP / PR-AUC between grid points);
- ``limits``: the simultaneous TPR and FPR limits at the candidate thresholds
  (:func:`mlflow_imbalance.stats.decision.candidate_limits`, with their integer counts): the
  page brackets the operating point it finds at any η between them, as
  :func:`~mlflow_imbalance.stats.decision.selected_point_interval` does, so its precision and
  recall intervals are the verdict's, valid although the threshold is chosen on the test set;
- for the leading runs only (the ones drawn): the ROC curve thinned for drawing, its ROC band,
  the PR band's FPR bounds at each recall (:func:`mlflow_imbalance.stats.bands.pr_band_from_roc`
  maps them to precision at any η, exactly as in Python) and the sweep bands.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.report.analysis._common import draw_counts, hull

logger = logging.getLogger(__name__)

#: ROC points per leading run embedded for drawing (PR and ROC curves).
DRAW_POINTS = 250
#: Runs drawn in the charts and listed first in the tables (the rest one click away).
MAX_LEAD = 10
#: Runs whose bands are drawn at first when more are charted: the first verdict's winner and
#: runner-up (:func:`~mlflow_imbalance.report.analysis.views.band_runs`); the page's "Bands"
#: control shows all, those two, or none. Overlapping bands of more runs read as one slab.
BAND_RUNS = 2
#: Recall grid of the PR bands embedded in the page.
PR_BAND_RECALL = np.linspace(0.01, 1.0, 100)
_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
#: Text of every chart at least this size (px).
FONT = 12


def _r(arr: Any, digits: int = 6) -> list[Any]:
    """Array → list of floats rounded to ``digits`` significant digits (None for NaN/inf)."""
    a = np.asarray(arr, dtype=float).ravel()
    if a.size == 0:
        return []
    s = np.char.mod(f"%.{digits}g", a)
    out = s.astype(float)
    return [float(x) if math.isfinite(x) else None for x in out.tolist()]


def _hull(c: Any) -> dict[str, Any]:
    h = hull(c)
    tp = h.tpr * c.n_pos
    fp = h.fpr * c.n_neg
    if not c.weighted:
        tp, fp = np.round(tp).astype(np.int64).tolist(), np.round(fp).astype(np.int64).tolist()
    else:
        tp, fp = _r(tp, 9), _r(fp, 9)
    return {"tp": tp, "fp": fp, "thr": _r(h.thresholds, 7)}


def payload(
    runs: Sequence[Any],
    lead: Sequence[str],
    swatch: Mapping[str, str],
    point: Mapping[str, Mapping[str, Any]],
    grid: np.ndarray,
    unc: Any,
    opts: Any,
    criterion: str,
    chosen: Sequence[float],
    test_prev: Sequence[float],
    flips: Sequence[Mapping[str, Any]],
    links: Mapping[str, str],
) -> dict[str, Any]:
    """The JSON object the page's script reads (``<script type="application/json">``).

    ``swatch`` is each run's CSS background for its colour key (:func:`swatches`).
    """
    lead_set = set(lead)
    out_runs = []
    for r in runs:
        item = _run_item(r, point[r.name], swatch, lead_set, unc, criterion, links)
        if r.name in lead_set:
            item.update(_drawn(r.name, r.counts, point[r.name], unc))
        out_runs.append(item)
    drawn = [np.asarray(it[k]["f"]) for it in out_runs for k in ("curve", "roc_band") if k in it]
    return {
        "roc_axis": list(roc_log_axis(drawn)),
        "criterion": criterion,
        "cost_fp": opts.cost_fp,
        "cost_fn": opts.cost_fn,
        "confidence": opts.confidence,
        "grid": _r(grid),
        "chosen": [float(e) for e in chosen],
        "test": sorted({float(e) for e in test_prev}),
        "flips": _flip_marks(flips),
        "runs": out_runs,
    }


def _run_item(
    r: Any,
    p: Mapping[str, Any],
    swatch: Mapping[str, str],
    lead_set: set[str],
    unc: Any,
    criterion: str,
    links: Mapping[str, str],
) -> dict[str, Any]:
    """What every run embeds: counts, hull, ROC-AUC, criterion sweep and candidate limits."""
    c = r.counts
    item: dict[str, Any] = {
        "name": r.name,
        "color": swatch[r.name],
        "lead": r.name in lead_set,
        "n_pos": float(c.n_pos),
        "n_neg": float(c.n_neg),
        "hull": _hull(c),
        "roc_auc": float(p["roc_auc"]),
        "link": links.get(r.name, ""),
    }
    if criterion in ("ap", "pr_auc"):
        item["sweep"] = _r(p["sweep"][criterion])
    lim = unc.candidate_limits(r.name, c) if unc is not None else None
    if lim is not None:
        item["limits"] = _limits(lim)
    return item


def _limits(lim: Any) -> dict[str, Any]:
    """The candidate thresholds' integer counts and simultaneous TPR / FPR limits."""
    return {
        "tp": np.round(lim.tp).astype(np.int64).tolist(),
        "fp": np.round(lim.fp).astype(np.int64).tolist(),
        "tlo": _r(lim.tpr_low, 9), "thi": _r(lim.tpr_high, 9),
        "flo": _r(lim.fpr_low, 9), "fhi": _r(lim.fpr_high, 9),
    }  # fmt: skip


def _drawn(name: str, c: Any, p: Mapping[str, Any], unc: Any) -> dict[str, Any]:
    """What a leading (drawn) run adds: its thinned curve, ROC / PR bands, sweeps and bands."""
    d = draw_counts(c, DRAW_POINTS)
    out: dict[str, Any] = {
        "curve": {
            "f": _r(np.r_[0.0, d.fpr]),
            "t": _r(np.r_[0.0, d.tpr]),
            "thr": _r(np.r_[np.inf, d.thresholds], 6),
        }
    }
    rb = unc.roc_bands.get(name) if unc is not None else None
    if rb is not None:
        out.update(_roc_pr_bands(rb))
    out["sweeps"] = {k: _r(p["sweep"][k]) for k in ("ap", "pr_auc", "max_f1") if k in p["sweep"]}
    if "cost_sweep" in p:
        out["sweeps"]["cost"] = _r(p["cost_sweep"])
    out["sweep_bands"] = _sweep_bands(name, unc)
    return out


def _roc_pr_bands(rb: Any) -> dict[str, Any]:
    """The ROC band, and the PR band's FPR bounds at each recall of :data:`PR_BAND_RECALL`."""
    from mlflow_imbalance.stats.bands import pr_band_from_roc

    pb = pr_band_from_roc(rb, 0.5, PR_BAND_RECALL)
    f_lo, f_hi = pb.extra["fpr_bounds"]
    return {
        "roc_band": {"f": _r(rb.grid), "lo": _r(rb.low), "hi": _r(rb.high)},
        "pr_band": {"r": _r(PR_BAND_RECALL), "flo": _r(f_lo), "fhi": _r(f_hi)},
    }


def _sweep_bands(name: str, unc: Any) -> dict[str, Any]:
    """The run's AP / PR-AUC / max-F1 bands against η, by metric (those it has)."""
    bands = {}
    for k in ("ap", "pr_auc", "max_f1"):
        b = (unc.bands_for(k) or {}).get(name) if unc is not None else None
        if b is not None:
            bands[k] = {"eta": _r(b[0]), "lo": _r(b[1]), "hi": _r(b[2])}
            flagged = getattr(unc, "undercover_bands", {}).get((k, name))
            if flagged is not None and len(flagged):
                # the stretch in the measured under-covering regime (stats/coverage.py): its
                # own data set ("sweepband_<k>_undercovers"), drawn grey and dashed over the band
                eta = np.asarray(b[0], dtype=float)
                sel = np.isin(eta, np.asarray(flagged, dtype=float))
                bands[f"{k}_undercovers"] = {
                    "eta": _r(eta[sel]),
                    "lo": _r(np.asarray(b[1])[sel]),
                    "hi": _r(np.asarray(b[2])[sel]),
                }
    return bands


def _flip_marks(flips: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The first 200 flips as the page marks them: η, label and metric key."""
    return [
        {
            "eta": f["eta_value"],
            "label": f"{f['metric']}: {f['a']} ⇄ {f['b']}",
            "metric": f["metric_key"],
        }
        for f in flips[:200]
    ]


def to_script_json(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``<``, ``>``, ``&`` raw)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# ---------------------------------------------------------------------------------- specs
def _config() -> dict[str, Any]:
    return {
        "font": "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif",
        "axis": {
            "labelFontSize": FONT,
            "titleFontSize": FONT,
            "titleFontWeight": "normal",
            "labelOverlap": "greedy",
            "labelSeparation": 6,
        },
        "legend": {
            "labelFontSize": FONT,
            "titleFontSize": FONT,
            "orient": "bottom",
            "columns": 3,
            "labelLimit": 260,
            "symbolStrokeWidth": 3,
        },
        # the parenthetical goes to a subtitle line: one long line was cut off at ~1000 px
        "title": {
            "fontSize": FONT + 1,
            "anchor": "start",
            "subtitleFontSize": FONT,
            "subtitleColor": "#57606a",
        },
        "view": {"stroke": "#d0d7de"},
        "customFormatTypes": True,
    }


#: The run name in tooltips. Through a custom format (``miText``, registered by the page's
#: script: the value as text) because Vega-Lite 6's nearest-point (Voronoi) tooltips read a
#: nominal field without a format from the Voronoi cell instead of the point and show
#: "undefined" (vega/vega-lite#9707); formatted fields are read from the point.
_RUN_TOOLTIP = {
    "field": "run",
    "type": "nominal",
    "title": "run",
    "format": "",
    "formatType": "miText",
}


# Hiding runs. Every chart has a ``hidden`` parameter: the names of the runs the reader hid by
# clicking a legend entry. The page's script owns that list and sets it in every chart (a run
# hidden in one legend is hidden in all charts); Vega-Lite's legend-bound selection is not used
# because it fades the legend entries that are *not* clicked and is local to one chart.
_HIDDEN = "indexof(hidden, datum.run) >= 0"
# ``nobands``: the runs whose bands the reader turned off (the "Bands" control; by default the
# bands of all but the BAND_RUNS leading runs when more are drawn: overlapping bands read as one).
_PARAMS = [{"name": "hidden", "value": []}, {"name": "nobands", "value": []}]
_OPACITY = {"condition": {"test": _HIDDEN, "value": 0.05}, "value": 1}
_BAND_OPACITY = {
    "condition": {"test": _HIDDEN + " || indexof(nobands, datum.run) >= 0", "value": 0.0},
    "value": 0.13,
}
#: Hidden runs give no tooltips and do not capture the nearest-point hover.
_SHOWN_ONLY = [{"filter": "indexof(hidden, datum.run) < 0"}]
# Legend entries are clickable (``interactive``; the page listens for clicks on them) and a
# hidden run's entry is faded. ``datum.value`` is the entry's run name.
_ENTRY = {
    "interactive": True,
    "update": {
        "opacity": {"signal": "indexof(hidden, datum.value) >= 0 ? 0.35 : 1"},
        "cursor": {"value": "pointer"},
    },
}
_LEGEND_ENCODE = {"symbols": _ENTRY, "labels": _ENTRY}


def _color(lead: Sequence[str], colors: Mapping[str, str]) -> dict[str, Any]:
    return {
        "field": "run",
        "type": "nominal",
        "title": "run (click to hide / show)",
        "scale": {"domain": list(lead), "range": [colors[n] for n in lead]},
        "legend": {"symbolType": "stroke", "encode": _LEGEND_ENCODE},
    }


def _base(title: str, subtitle: str, height: int = 300) -> dict[str, Any]:
    return {
        "$schema": _SCHEMA,
        "title": {"text": title, "subtitle": subtitle},
        "width": "container",
        "height": height,
        "autosize": {"type": "fit-x", "contains": "padding"},
        "params": _PARAMS,
        "config": _config(),
    }


#: Dash pattern and swatch stripe (px) by how often a colour has already been used.
_REPEATS = (([1, 0], 0), ([6, 3], 4), ([2, 2], 2), ([8, 2, 2, 2], 6))


def _repeats(lead: Sequence[str], colors: Mapping[str, str]) -> list[int]:
    """Per leading run: how many earlier runs have its colour (more runs than the palette)."""
    seen: dict[str, int] = {}
    out = []
    for n in lead:
        out.append(seen.get(colors[n], 0) % len(_REPEATS))
        seen[colors[n]] = seen.get(colors[n], 0) + 1
    return out


def _dash(lead: Sequence[str], colors: Mapping[str, str]) -> dict[str, Any] | None:
    """Dashed lines for runs whose colour repeats, or None when every colour is distinct.

    Same field and title as :func:`_color`, so Vega-Lite merges both into one legend.
    """
    rep = _repeats(lead, colors)
    if not any(rep):
        return None
    return {
        "field": "run",
        "type": "nominal",
        "title": "run (click to hide / show)",
        "scale": {"domain": list(lead), "range": [_REPEATS[k][0] for k in rep]},
        "legend": {"symbolType": "stroke", "encode": _LEGEND_ENCODE},
    }


def swatches(lead: Sequence[str], colors: Mapping[str, str]) -> dict[str, str]:
    """CSS ``background`` of each run's swatch in the tables and controls.

    Its colour, striped for a run drawn dashed (its colour repeats an earlier run's).
    """
    out = dict(colors)
    for n, k in zip(lead, _repeats(lead, colors), strict=True):
        if k:
            w = _REPEATS[k][1]
            out[n] = f"repeating-linear-gradient(90deg, {colors[n]} 0 {w}px, #fff {w}px {w + 2}px)"
    return out


def _curve_layers(
    lead: Sequence[str],
    colors: Mapping[str, str],
    data: str,
    x: dict[str, Any],
    y: dict[str, Any],
    band: str | None,
    tooltip: list[dict[str, Any]],
    step: bool = True,
) -> list[dict[str, Any]]:
    """The layers of one curve per run: its band (when ``band`` names data), line and hover."""
    color = _color(lead, colors)
    layers: list[dict[str, Any]] = []
    if band is not None:
        layers.append(_band_layer(band, x, y, color, step))
    layers.append(_line_layer(data, x, y, color, _dash(lead, colors)))
    layers.append(_hover_layer(data, x, y, tooltip))
    return layers


def _band_layer(
    band: str, x: dict[str, Any], y: dict[str, Any], color: dict[str, Any], step: bool
) -> dict[str, Any]:
    """The shaded band between the ``lo`` and ``hi`` fields of data ``band``."""
    return {
        "data": {"name": band},
        "mark": {"type": "area", "interpolate": "step-after" if step else "linear"},
        "encoding": {
            "x": {**x, "field": "x"},
            "y": {**y, "field": "lo"},
            "y2": {"field": "hi"},
            # no legend=None here (it would suppress the runs' legend in the layered
            # chart) and fillOpacity, not opacity (the legend's stroke symbols keep
            # full opacity)
            "color": color,
            "fillOpacity": _BAND_OPACITY,
        },
    }


def _line_layer(
    data: str,
    x: dict[str, Any],
    y: dict[str, Any],
    color: dict[str, Any],
    dash: dict[str, Any] | None,
) -> dict[str, Any]:
    """The runs' lines (dashed where a colour repeats); this layer makes the legend."""
    return {
        "data": {"name": data},
        "mark": {"type": "line", "strokeWidth": 2, "clip": True},
        "encoding": {
            "x": {**x, "field": "x"},
            "y": {**y, "field": "y"},
            "color": color,
            **({"strokeDash": dash} if dash else {}),
            # strokeOpacity, not opacity: a conditional opacity on the layer that makes
            # the legend replaces the legend's own encoding (clickable, faded when hidden)
            "strokeOpacity": _OPACITY,
            "order": {"field": "i", "type": "quantitative"},
        },
    }


def _hover_layer(
    data: str, x: dict[str, Any], y: dict[str, Any], tooltip: list[dict[str, Any]]
) -> dict[str, Any]:
    """Invisible points of the shown runs that give the nearest point's tooltip."""
    return {
        "data": {"name": data},
        "mark": {"type": "point", "opacity": 0, "size": 60, "clip": True},
        "transform": _SHOWN_ONLY,
        "params": [
            {
                "name": f"hover_{data}",
                "select": {
                    "type": "point",
                    "on": "pointerover",
                    "nearest": True,
                    "clear": "pointerout",
                },
            }
        ],
        "encoding": {
            "x": {**x, "field": "x"},
            "y": {**y, "field": "y"},
            "tooltip": tooltip,
        },
    }


def roc_log_axis(fprs: Sequence[np.ndarray]) -> tuple[float, float]:
    """``(x_zero, x_min)`` of the ROC chart's log FPR axis for the FPR values it draws.

    ``x_min`` is the decade at or below the smallest positive FPR drawn (curves and ROC
    bands); FPR = 0 (positives above every negative) is drawn at ``x_zero``, left of it past
    a break, with the tick label "0" -- as in the run's preview figure
    (:func:`mlflow_imbalance.plots._style._log_axis_with_zero`).
    """
    from mlflow_imbalance.plots._style import _log_floor, _zero_position

    x_min = _log_floor([float(np.min(f[f > 0])) for f in fprs if np.any(f > 0)])
    return _zero_position(x_min), x_min


def _roc_x_axis(roc_axis: tuple[float, float] | None) -> dict[str, Any]:
    """The ROC chart's x encoding: log FPR with its own "0" tick when ``roc_axis`` is given."""
    x: dict[str, Any] = {"type": "quantitative", "title": "false-positive rate (log)"}
    if roc_axis is None:
        return {**x, "scale": {"type": "log"}}
    from mlflow_imbalance.plots._style import _decade_ticks

    x_zero, x_min = roc_axis
    decades = _decade_ticks(x_min, max_ticks=9)
    label = f"datum.value < {x_min * 0.99!r} ? '0' : format(datum.value, '~g')"
    return {
        **x,
        "scale": {"type": "log", "domain": [x_zero, 1.0]},
        "axis": {"values": [x_zero, *decades], "labelExpr": label},
    }


def specs(
    lead: Sequence[str],
    colors: Mapping[str, str],
    criterion: str,
    criterion_label: str,
    eta_range: tuple[float, float],
    has_bands: bool,
    costs_given: bool,
    roc_axis: tuple[float, float] | None = None,
) -> dict[str, dict[str, Any]]:
    """Vega-Lite specs of the charts, by element id; the page's script fills their data.

    ``roc_axis``: ``(x_zero, x_min)`` from :func:`roc_log_axis`; the ROC chart then draws
    FPR = 0 at ``x_zero`` on a tick labelled "0", past a break mark.
    """
    out: dict[str, dict[str, Any]] = {
        "chart-pr": _pr_spec(lead, colors, has_bands),
        "chart-roc": _roc_spec(lead, colors, has_bands, roc_axis),
    }
    for k in _sweep_keys(criterion, costs_given):
        out[f"chart-sweep-{k}"] = _sweep_spec(k, criterion, lead, colors, eta_range, has_bands)
    del criterion_label
    columns = _legend_columns(lead)
    for sp in out.values():
        sp["config"]["legend"]["columns"] = columns
    return out


_Q = "quantitative"


def _pr_spec(lead: Sequence[str], colors: Mapping[str, str], has_bands: bool) -> dict[str, Any]:
    """The precision-recall chart at the current prevalence (live), with the operating points."""
    x = {"type": _Q, "title": "recall", "scale": {"domain": [0, 1]}}
    # square-root axis: at low η precision stays near 0, where a linear axis flattens every curve
    y = {
        "type": _Q,
        "title": "precision (square-root axis)",
        "scale": {"type": "sqrt", "domain": [0, 1]},
        "axis": {"values": [0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1], "format": "~g"},
    }
    pr = _base("Precision–recall at the chosen η", "moves with the prevalence control")
    pr["layer"] = _curve_layers(
        lead,
        colors,
        "pr",
        x,
        y,
        "prband" if has_bands else None,
        [
            _RUN_TOOLTIP,
            {"field": "x", "type": _Q, "title": "recall", "format": ".3f"},
            {"field": "y", "type": _Q, "title": "precision", "format": ".4~g"},
            {"field": "thr", "type": _Q, "title": "threshold", "format": ".4~g"},
        ],
    )
    pr["layer"].append(_op_layer(lead, colors, x, y))
    return pr


def _op_layer(
    lead: Sequence[str], colors: Mapping[str, str], x: dict[str, Any], y: dict[str, Any]
) -> dict[str, Any]:
    """The PR chart's layer of operating points (diamonds, one per run and point)."""
    return {
        "data": {"name": "op"},
        "transform": _SHOWN_ONLY,
        "mark": {
            "type": "point",
            "filled": True,
            "size": 90,
            "shape": "diamond",
            "stroke": "#000",
            "strokeWidth": 0.8,
        },
        "encoding": {
            "x": {**x, "field": "x"},
            "y": {**y, "field": "y"},
            "color": _color(lead, colors),
            "tooltip": [
                _RUN_TOOLTIP,
                {"field": "what", "type": "nominal", "title": "point"},
                {"field": "x", "type": _Q, "title": "recall", "format": ".3f"},
                {"field": "y", "type": _Q, "title": "precision", "format": ".4~g"},
            ],
        },
    }


def _roc_spec(
    lead: Sequence[str],
    colors: Mapping[str, str],
    has_bands: bool,
    roc_axis: tuple[float, float] | None,
) -> dict[str, Any]:
    """The ROC chart on a log FPR axis (prevalence-free), with its axis break when given."""
    xr = _roc_x_axis(roc_axis)
    yr = {"type": _Q, "title": "true-positive rate (recall)", "scale": {"domain": [0, 1]}}
    roc = _base("ROC, log FPR", "prevalence-free; the low-FPR end decides precision at small η")
    roc["layer"] = _curve_layers(
        lead,
        colors,
        "roc",
        xr,
        yr,
        "rocband" if has_bands else None,
        [
            _RUN_TOOLTIP,
            {"field": "fpr", "type": _Q, "title": "FPR", "format": ".3~e"},
            {"field": "y", "type": _Q, "title": "TPR", "format": ".3f"},
            {"field": "thr", "type": _Q, "title": "threshold", "format": ".4~g"},
        ],
    )
    if roc_axis is not None:
        roc["layer"].append(_axis_break(roc_axis, xr, yr))
    return roc


def _axis_break(
    roc_axis: tuple[float, float], xr: dict[str, Any], yr: dict[str, Any]
) -> dict[str, Any]:
    """The break mark between "0" and the first decade: two strokes across the axis line."""
    mid = roc_axis[1] * 10.0 ** (-0.5 * math.log10(roc_axis[1] / roc_axis[0]))
    return {
        "data": {"values": [{"x": mid, "y": 0.0}]},
        "mark": {"type": "text", "text": "//", "fontSize": 13, "fontWeight": "bold",
                 "color": "#444444", "baseline": "middle", "clip": False},
        "encoding": {"x": {**xr, "field": "x"}, "y": {**yr, "field": "y"}},
    }  # fmt: skip


def _sweep_keys(criterion: str, costs_given: bool) -> list[str]:
    """The metrics charted against η: the criterion (AP under ROC-AUC) and one for contrast."""
    keys = [criterion] if criterion != "roc_auc" else ["ap"]
    if costs_given and "ap" not in keys:
        keys.append("ap")
    else:
        # the criterion's chart (AP under ROC-AUC, which does not move with η) sits by the PR
        # chart in the live section; the evidence beside the ROC chart is the other kind of
        # metric: max-F1 (one threshold) for an area, AP for max-F1
        keys.append("ap" if criterion == "max_f1" else "max_f1")
    return keys


#: Axis titles of the charts against η.
_SWEEP_LABELS = {
    "cost": "Expected cost",
    "ap": "AP",
    "pr_auc": "PR-AUC",
    "max_f1": "max-F1",
}


def _sweep_spec(
    k: str,
    criterion: str,
    lead: Sequence[str],
    colors: Mapping[str, str],
    eta_range: tuple[float, float],
    has_bands: bool,
) -> dict[str, Any]:
    """The chart of metric ``k`` against η: chosen η rules, flip ticks, curves and current η."""
    xe = {
        "type": _Q,
        "title": "prevalence η (log)",
        "scale": {"type": "log", "domain": [eta_range[0], eta_range[1]]},
    }
    ye = {"type": _Q, "title": _SWEEP_LABELS[k]}
    if k == "cost":
        ye["scale"] = {"type": "log"}
    ticks = "the best run changes" if k == criterion else "two runs swap order"
    sp = _base(f"{_SWEEP_LABELS[k]} against η", f"dashed: chosen η; red ticks: {ticks}", 280)
    sp["layer"] = [
        *_eta_marks(k, xe),
        *_curve_layers(
            lead,
            colors,
            f"sweep_{k}",
            xe,
            ye,
            f"sweepband_{k}" if has_bands and k != "cost" else None,
            [
                _RUN_TOOLTIP,
                {"field": "x", "type": _Q, "title": "η", "format": ".3~e"},
                {"field": "y", "type": _Q, "title": _SWEEP_LABELS[k], "format": ".4~g"},
            ],
            step=False,
        ),
        *([_undercover_layer(k, xe, ye)] if has_bands and k != "cost" else []),
        {
            "data": {"name": "cur"},
            # the text colour, not the page's blue accent: a blue rule read as a run's
            # curve (the palette has a blue) and stayed when that run was hidden
            "mark": {"type": "rule", "color": "#1b1f24", "strokeWidth": 2},
            "encoding": {"x": {**xe, "field": "eta"}},
        },
    ]
    return _per_cases_unit(sp) if k == "cost" else sp


def _per_cases_unit(sp: dict[str, Any]) -> dict[str, Any]:
    """The expected-cost chart in the unit of the η in effect, as the verdict and tables.

    Per ``per`` cases (10,000 or 1,000,000: :func:`~mlflow_imbalance.stats.decision.per_cases`);
    the page sets the ``per`` parameter with the prevalence control; the data stay per case.
    """
    sp["params"] = [*sp["params"], {"name": "per", "value": 10_000}]
    for layer in sp["layer"]:
        if layer.get("data", {}).get("name") != "sweep_cost":
            continue
        layer["transform"] = [
            {"calculate": "datum.y * per", "as": "yc"},
            *layer.get("transform", []),
        ]
        enc = layer["encoding"]
        # SI labels (200k, 1M): the axis keeps its width when the unit changes
        axis = {"title": {"expr": _PER_TITLE}, "format": "~s"}
        enc["y"] = {**enc["y"], "field": "yc", "axis": axis}
        for tip in enc.get("tooltip", []):
            if tip.get("field") == "y":
                tip.update(field="yc", title="expected cost (the axis's unit)")
    return sp


_PER_TITLE = "'Expected cost per ' + format(per, ',') + ' cases'"


def _undercover_layer(k: str, xe: dict[str, Any], ye: dict[str, Any]) -> dict[str, Any]:
    """The band's stretch in the measured under-covering regime, grey with a dashed outline.

    Data ``sweepband_<k>_undercovers`` (empty unless :func:`_sweep_bands` flagged a stretch;
    rule: :func:`mlflow_imbalance.stats.coverage.undercovers`); the methods' caption line says
    why. Hidden with the run's band (the "Bands" control, hidden runs).
    """
    return {
        "data": {"name": f"sweepband_{k}_undercovers"},
        "mark": {
            "type": "area",
            "interpolate": "linear",
            "color": "#6b7280",
            "stroke": "#374151",
            "strokeDash": [3, 3],
            "strokeWidth": 1,
        },
        "encoding": {
            "x": {**xe, "field": "x"},
            "y": {**ye, "field": "lo"},
            "y2": {"field": "hi"},
            "fillOpacity": {**_BAND_OPACITY, "value": 0.3},
            "strokeOpacity": {**_BAND_OPACITY, "value": 0.8},
            "tooltip": [
                _RUN_TOOLTIP,
                {
                    "field": "x",
                    "type": _Q,
                    "title": "η (band likely too narrow here)",
                    "format": ".3~e",
                },
            ],
        },
    }


def _eta_marks(k: str, xe: dict[str, Any]) -> list[dict[str, Any]]:
    """The layers under a chart against η: dashed rules at the chosen η, red flip ticks."""
    return [
        {
            "data": {"name": "rules"},
            "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#57606a"},
            "encoding": {
                "x": {**xe, "field": "eta"},
                "tooltip": [{"field": "label", "type": "nominal"}],
            },
        },
        {
            "data": {"name": f"flips_{k}"},
            "mark": {
                "type": "tick",
                "color": "#a40e26",
                "thickness": 2,
                "size": 14,
                "orient": "vertical",
            },
            "encoding": {
                "x": {**xe, "field": "eta"},
                "y": {"value": 0},
                "tooltip": [
                    {"field": "label", "type": "nominal", "title": "flip"},
                    {"field": "eta", "type": _Q, "title": "η*", "format": ".3~e"},
                ],
            },
        },
    ]


def _legend_columns(lead: Sequence[str]) -> int:
    """Legend columns by the longest run name: three columns of long names ran off the chart."""
    longest = max((len(n) for n in lead), default=0)
    return 3 if longest <= 18 else 2 if longest <= 32 else 1
