"""Thin integrations of mlflow-imbalance with other frameworks.

Each submodule imports its framework at import time, so import only the one you use; importing
this package itself imports no framework.

* :mod:`mlflow_imbalance.integrations.spark` -- exact ROC counts of a Spark DataFrame
  (:func:`~mlflow_imbalance.integrations.spark.roc_counts_from_spark`), computed in Spark; the
  driver receives only the compressed counts (extra ``spark``).
"""
