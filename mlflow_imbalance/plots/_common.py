"""Inputs shared by the plots: run mappings, prevalences, confidence bands and η marks.

Multi-run plots take a mapping ``name -> RocCounts``; a bare :class:`RocCounts` is accepted and
called ``"run"``. Confidence bands are passed as plain tuples ``(x, lower, upper, label[,
valid[, invalid_label]])`` or as any object with ``grid``, ``low``, ``high`` and ``label``
attributes (the stats layer's ``Band``: duck-typed, so the plots need not import it; its
``extra["supported"]`` mask, when present, becomes ``valid``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.core.validation import check_prevalence
from mlflow_imbalance.plots._style import _GREY, _LIGHT, _fmt_eta, _proxy_line


def _is_counts_input(value: Any) -> bool:
    """True for a RocCounts or a non-empty mapping whose values are all RocCounts."""
    if isinstance(value, RocCounts):
        return True
    return (
        isinstance(value, Mapping)
        and len(value) > 0
        and all(isinstance(v, RocCounts) for v in value.values())
    )


def _as_counts_mapping(counts_by_name: Any, arg: str = "counts_by_name") -> dict[str, RocCounts]:
    """Validate ``name -> RocCounts``; a bare RocCounts becomes ``{"run": counts}``."""
    if isinstance(counts_by_name, RocCounts):
        return {"run": counts_by_name}
    if not isinstance(counts_by_name, Mapping):
        raise TypeError(
            f"{arg} must be a mapping name -> RocCounts, got {type(counts_by_name).__name__}"
        )
    if len(counts_by_name) == 0:
        raise ValueError(f"{arg} is empty: give at least one run")
    out: dict[str, RocCounts] = {}
    for name, c in counts_by_name.items():
        if not isinstance(c, RocCounts):
            raise TypeError(f"{arg}[{name!r}] must be a RocCounts, got {type(c).__name__}")
        out[str(name)] = c
    return out


def _prevalence_list(prevalences: Any, arg: str = "prevalences") -> list[float]:
    if prevalences is None:
        return []
    arr = np.atleast_1d(np.asarray(prevalences, dtype=np.float64))
    if arr.ndim != 1:
        raise ValueError(f"{arg} must be a number or a 1-d sequence, got shape {arr.shape}")
    check_prevalence(arr, arg)
    return [float(v) for v in arr]


def _counts_from_predictions(
    y_true: Any, y_score_by_name: Any, *, sample_weight: Any = None, pos_label: Any = None
) -> dict[str, RocCounts]:
    """``name -> RocCounts`` from labels and ``name -> scores`` (a bare score array: ``"run"``)."""
    if isinstance(y_score_by_name, Mapping):
        if len(y_score_by_name) == 0:
            raise ValueError("y_score_by_name is empty: give at least one run's scores")
        scores = {str(k): v for k, v in y_score_by_name.items()}
    else:
        scores = {"run": y_score_by_name}
    return {
        name: RocCounts.from_scores(y_true, s, pos_label=pos_label, sample_weight=sample_weight)
        for name, s in scores.items()
    }


def _float_map(
    values: Any, arg: str, names: Sequence[str] | None = None, ndim: tuple[int, ...] = (1,)
) -> dict[str, np.ndarray]:
    """Validate ``name -> array`` (float64, ``ndim`` dimensions); keys equal ``names`` if given."""
    if not isinstance(values, Mapping) or not values:
        raise ValueError(f"{arg} must be a non-empty mapping name -> array")
    out = {str(k): np.asarray(v, dtype=np.float64) for k, v in values.items()}
    for name, a in out.items():
        if a.ndim not in ndim:
            dims = " or ".join(map(str, ndim))
            raise ValueError(f"{arg}[{name!r}] must have {dims} dimension(s), got {a.ndim}")
    if names is not None and list(out) != list(names):
        raise ValueError(f"{arg} must have the runs {list(names)!r}, got {list(out)!r}")
    return out


def _curve_pairs(
    curves: Any, arg: str, parts: tuple[str, str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Validate ``name -> (x, y)``: a non-empty mapping of 1-d float arrays of one length."""
    x_name, y_name = parts
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(f"{arg} must be a non-empty mapping name -> ({x_name}, {y_name})")
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, value in curves.items():
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"{arg}[{name!r}] must be ({x_name}, {y_name})")
        x = np.asarray(value[0], dtype=np.float64)
        y = np.asarray(value[1], dtype=np.float64)
        if x.ndim != 1 or y.shape != x.shape:
            raise ValueError(
                f"{arg}[{name!r}]: {x_name} and {y_name} must be 1-d of one length, got shapes "
                f"{x.shape} and {y.shape}"
            )
        out[str(name)] = (x, y)
    return out


#: Legend text of the part of a band that is drawn but not claimed (hatched).
BAND_NOT_VALID_LABEL = "hatched: band not valid there"


def _band_tuple(band: Any) -> tuple:
    """A band object (e.g. the stats layer's ``Band``) as ``(x, lower, upper, label, valid)``.

    ``valid`` is ``band.extra["supported"]`` when that is a boolean mask of the grid's length
    (where the band is claimed), else None.
    """
    grid = np.asarray(band.grid, dtype=np.float64)
    extra = getattr(band, "extra", None)
    valid = extra.get("supported") if isinstance(extra, Mapping) else None
    if valid is not None:
        valid = np.asarray(valid)
        if valid.dtype != bool or valid.shape != grid.shape:
            valid = None
    return (grid, band.low, band.high, str(band.label), valid)


def _check_band(band: Any, arg: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, Any, str]:
    """``(x, lower, upper, label[, valid[, invalid_label]])`` -> validated arrays and labels.

    ``valid`` (optional, boolean, aligned with ``x``) marks where the band is claimed; the rest
    is drawn hatched and very light with the legend entry ``invalid_label`` (default
    :data:`BAND_NOT_VALID_LABEL`). Returns ``(x, lower, upper, label, valid or None,
    invalid_label)``. A band object (``grid``, ``low``, ``high``, ``label`` attributes) is
    accepted too, see :func:`_band_tuple`.
    """
    if not isinstance(band, (tuple, list)) and all(
        hasattr(band, a) for a in ("grid", "low", "high", "label")
    ):
        band = _band_tuple(band)
    if not isinstance(band, (tuple, list)) or len(band) not in (4, 5, 6):
        raise ValueError(
            f"{arg} must be a tuple (x, lower, upper, label[, valid[, invalid_label]]), "
            f"got {band!r:.80}"
        )
    x, lo, hi, label = band[:4]
    arrays = []
    for part, value in (("x", x), ("lower", lo), ("upper", hi)):
        a = np.asarray(value, dtype=np.float64)
        if a.ndim != 1:
            raise ValueError(f"{arg} {part} must be one-dimensional, got shape {a.shape}")
        arrays.append(a)
    sizes = {a.size for a in arrays}
    if len(sizes) != 1:
        raise ValueError(
            f"{arg}: x, lower and upper must have one length, got "
            f"{arrays[0].size}, {arrays[1].size}, {arrays[2].size}"
        )
    if not isinstance(label, str) or not label:
        raise ValueError(f"{arg} label must be a non-empty string saying what the band is")
    if np.any(arrays[1] > arrays[2] + 1e-12):
        bad = int(np.sum(arrays[1] > arrays[2] + 1e-12))
        raise ValueError(f"{arg}: lower exceeds upper at {bad} point(s)")
    valid = None
    if len(band) >= 5 and band[4] is not None:
        valid = np.asarray(band[4])
        if valid.dtype != bool or valid.shape != arrays[0].shape:
            raise ValueError(
                f"{arg} valid must be a boolean array of length {arrays[0].size}, got "
                f"dtype {valid.dtype} shape {valid.shape}"
            )
    invalid_label = BAND_NOT_VALID_LABEL
    if len(band) == 6:
        invalid_label = band[5]
        if not isinstance(invalid_label, str) or not invalid_label:
            raise ValueError(f"{arg} invalid_label must be a non-empty string")
    return arrays[0], arrays[1], arrays[2], label, valid, invalid_label


def _check_bands(bands: Any, names: Sequence[str], arg: str = "bands") -> dict[str, tuple]:
    if bands is None:
        return {}
    if not isinstance(bands, Mapping):
        raise TypeError(f"{arg} must be a mapping name -> (x, lower, upper, label)")
    unknown = [k for k in bands if k not in names]
    if unknown:
        raise ValueError(f"{arg} has entries for unknown name(s) {unknown!r}; known: {names!r}")
    return {k: _check_band(v, f"{arg}[{k!r}]") for k, v in bands.items()}


def _draw_bands(ax: Any, bands: dict[str, tuple], styles: Mapping[str, tuple[str, Any]]) -> list:
    """Shade each band in its run's colour; return one legend proxy per distinct band label.

    Where a band's ``valid`` mask is False it is drawn hatched and very light instead (gid
    ``band-invalid:<name>``), with one legend entry per distinct ``invalid_label``; the two
    parts share their boundary point so the band stays continuous.
    """
    from matplotlib.patches import Patch

    labels: list[str] = []
    invalid_labels: list[str] = []
    for name, (x, lo, hi, label, valid, invalid_label) in bands.items():
        color = styles[name][0]
        if valid is None or valid.all():
            ax.fill_between(x, lo, hi, color=color, alpha=0.18, linewidth=0, gid=f"band:{name}")
        else:
            bad = ~valid
            # each part also takes its neighbours so adjacent parts meet
            bad_draw = bad | np.r_[bad[1:], False] | np.r_[False, bad[:-1]]
            if valid.any():
                ax.fill_between(
                    x, lo, hi, where=valid, color=color, alpha=0.18, linewidth=0,
                    gid=f"band:{name}",
                )  # fmt: skip
            ax.fill_between(
                x, lo, hi, where=bad_draw, facecolor="none", edgecolor=color, alpha=0.35,
                hatch="////", linewidth=0, gid=f"band-invalid:{name}",
            )  # fmt: skip
            if invalid_label not in invalid_labels:
                invalid_labels.append(invalid_label)
        if label not in labels:
            labels.append(label)
    out = [Patch(facecolor=_LIGHT, alpha=0.6, label=f"shaded: {lab}") for lab in labels]
    out += [
        Patch(facecolor="none", edgecolor=_GREY, hatch="////", alpha=0.6, label=lab)
        for lab in invalid_labels
    ]
    return out


def _highlight(
    ax: Any,
    test_prevalence: Any,
    deployment_prevalences: Any,
    deployment_range: Any = None,
) -> list:
    """Vertical marks: the test prevalence (dotted grey), deployment ones (dashed dark)."""
    extra = []
    tests = _prevalence_list(test_prevalence, "test_prevalence")
    for eta in tests:
        ax.axvline(eta, color=_GREY, ls=":", lw=1.3, gid="test_prevalence", zorder=2)
    if tests:
        extra.append(
            _proxy_line(
                "test prevalence" + (f" {_fmt_eta(tests[0])}" if len(tests) == 1 else "s"),
                ls=":",
            )
        )
    deps = _prevalence_list(deployment_prevalences, "deployment_prevalences")
    for eta in deps:
        ax.axvline(eta, color="#222222", ls="--", lw=1.1, gid="deployment_prevalence", zorder=2)
    if deps:
        extra.append(
            _proxy_line(
                "deployment prevalence" + (f" {_fmt_eta(deps[0])}" if len(deps) == 1 else "s"),
                color="#222222",
                ls="--",
            )
        )
    if deployment_range is not None:
        lo, hi = _prevalence_list(deployment_range, "deployment_range")
        if not lo < hi:
            raise ValueError(f"deployment_range must be (low, high) with low < high: {lo}, {hi}")
        ax.axvspan(lo, hi, color="#999999", alpha=0.12, lw=0, gid="deployment_range", zorder=0)
        from matplotlib.patches import Patch

        extra.append(Patch(facecolor="#999999", alpha=0.25, label="deployment range"))
    return extra
