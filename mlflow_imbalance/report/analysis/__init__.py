"""The report's numbers: loaded runs → a plain template context (no MLflow, no HTML here).

Every number comes from :mod:`mlflow_imbalance.core` (exact functions of the counts at η), every
interval, band, flip point and significance test from :mod:`mlflow_imbalance.stats`. These
modules only choose what to compute, time the stages and shape the results for the templates
(strings stay raw: jinja2 autoescapes them).

``context`` drives the stages, each isolating runs: ``point`` (exact metrics per run),
``deployment`` (η estimated from production batches), ``intervals`` (bands and intervals;
``methods_section`` the "how computed" rows), ``verdict`` (which run to ship), ``decision``
(does the criterion's winner change with η), ``flips`` (the other metrics' flips), ``charts``
(data embedded in the page and Vega-Lite specs), ``tables``, ``notes`` (the callouts) and
``views`` (header, verdict and run rows); ``_common`` holds the timers and helpers they share.
"""
