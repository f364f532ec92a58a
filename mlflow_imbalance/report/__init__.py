"""Runs → one self-contained HTML report comparing them across prevalences.

The report answers "which model should we ship for the prevalence we will really see, and how
sure are we?". Its modules follow the data flow:

- :mod:`.options` validates the options once, at the public boundary (:class:`ReportOptions`);
- :mod:`.inputs` turns the accepted inputs into :class:`RunData` records (mappings of counts,
  ``roc_counts.npz`` files, or MLflow runs through :mod:`.load`, the report's only route to
  MLflow, which reads through :mod:`mlflow_imbalance.tracking`);
- :mod:`.analysis` computes the verdict and every number, interval, flip and chart spec into a
  plain context;
- :mod:`.render` formats and renders it with autoescaped jinja2 templates, inlining the
  Vega-Lite library and the data the page's prevalence control recomputes from;
- :mod:`.build` is :func:`build_report`, timing each stage (:mod:`.progress`: tqdm bars or
  plain lines); :mod:`.cli` is the command line.
"""

from __future__ import annotations

from mlflow_imbalance.report.build import build_report
from mlflow_imbalance.report.inputs import load_counts_files
from mlflow_imbalance.report.model import Report, ReportOptions, RunData, SkippedRun, Verdict
from mlflow_imbalance.report.render import (
    figure_to_data_uri,
    render_html,
    strip_timestamp,
    template_dir,
)

__all__ = [
    "Report",
    "ReportOptions",
    "RunData",
    "SkippedRun",
    "Verdict",
    "build_report",
    "figure_to_data_uri",
    "load_counts_files",
    "render_html",
    "strip_timestamp",
    "template_dir",
]
