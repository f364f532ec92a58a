"""Spark's Python workers: check once per application that they can run our Arrow functions."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["check_spark_workers"]


#: SparkContexts (by application id) whose Python workers passed :func:`check_spark_workers`.
_WORKERS_OK: set[str] = set()


def check_spark_workers(spark: Any) -> None:
    """Check once per Spark application that its Python workers can run our Arrow functions.

    A worker started with another interpreter than the driver's (``PYSPARK_PYTHON`` unset or
    pointing elsewhere) typically lacks pyarrow or numpy and would fail deep inside a task with
    ``ModuleNotFoundError``. One tiny job asks a worker which interpreter it runs and what it
    can import; the probe is pickled by value, so it runs even where this package is absent.

    Raises:
        RuntimeError: one message naming the worker's interpreter, what it misses, and
            ``PYSPARK_PYTHON``.
    """
    sc = spark.sparkContext
    key = str(sc.applicationId)
    if key in _WORKERS_OK:
        return

    def probe(_: Any) -> tuple[str, str, list[str]]:
        import importlib.util
        import sys as _sys

        missing = [m for m in ("numpy", "pyarrow") if importlib.util.find_spec(m) is None]
        return _sys.executable, f"{_sys.version_info[0]}.{_sys.version_info[1]}", missing

    driver = f"{sys.executable} (Python {sys.version_info[0]}.{sys.version_info[1]})"
    fix = (
        f"set PYSPARK_PYTHON to the driver's interpreter ({sys.executable}) before the "
        "SparkSession is created (e.g. os.environ['PYSPARK_PYTHON'] = sys.executable), or "
        "install numpy and pyarrow for the workers' interpreter"
    )
    try:
        exe, version, missing = sc.parallelize([0], 1).map(probe).collect()[0]
    except Exception as exc:  # the worker could not even start or unpickle the probe
        first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        raise RuntimeError(
            f"Spark's Python workers failed to start a task ({first.strip()[:300]}); the driver "
            f"runs {driver}: {fix}"
        ) from None
    if missing:
        raise RuntimeError(
            f"Spark's Python workers run {exe} (Python {version}), which cannot import "
            f"{', '.join(missing)}; the driver runs {driver}: {fix}"
        )
    _WORKERS_OK.add(key)
