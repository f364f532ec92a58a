"""The report's numbers: loaded runs → a plain template context (no MLflow, no HTML here).

Every number comes from :mod:`mlflow_imbalance.core` (exact functions of the counts at η), every
interval, band, flip point and significance test from :mod:`mlflow_imbalance.stats`. These
modules only choose what to compute, time the stages and shape the results for the templates
(strings stay raw: jinja2 autoescapes them).

``context`` drives the stages; ``verdict`` (which run to ship), ``tables``, ``flips``,
``charts`` (data embedded in the page and Vega-Lite specs) and ``intervals`` each build one
part of the context; ``_common`` holds the timers and display helpers they share.
"""
