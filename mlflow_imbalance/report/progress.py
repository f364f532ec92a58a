"""Progress of a report build: tqdm bars in a terminal or notebook, plain lines otherwise.

:func:`progress_callback` turns ``build_report``'s ``progress`` argument into the
``(stage, done, total)`` callback the stages call:

- ``None`` (default): tqdm bars when stderr is a terminal or the code runs in a notebook
  kernel; otherwise one plain line per finished stage on stderr (CI logs stay readable);
- ``True``: tqdm bars even when stderr is not a terminal;
- ``False``: silent;
- a callable ``(stage, done, total)``: used as is.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import Any, ClassVar

logger = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


class _Bars:
    """One tqdm bar per stage (``tqdm.auto`` in a notebook); closed when the stage changes."""

    LABELS: ClassVar[dict[str, str]] = {
        "load": "Loading runs",
        "metrics": "Metrics at η",
        "bootstrap": "Bootstrap",
        "ranking": "Ranking flips",
        "verdict": "Verdict",
        "charts": "Charts",
    }

    def __init__(self, notebook: bool) -> None:
        if notebook:
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm
        self._tqdm = tqdm
        self.bar: Any = None
        self.stage: str | None = None
        self.done = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.stage, self.done = stage, 0
            self.bar = self._tqdm(
                total=total,
                desc=f"{self.LABELS.get(stage, stage):14s}",
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
            )
        if self.bar is not None:
            self.bar.update(done - self.done)
            self.done = done
            if done >= total:
                self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
            self.stage = None


class _Lines:
    """One plain line per finished stage on stderr (not a terminal: no bars)."""

    def __init__(self) -> None:
        self.t0: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        t = self.t0.setdefault(stage, time.perf_counter())
        if done >= total:
            sys.stderr.write(
                f"mlflow-imbalance report: {_Bars.LABELS.get(stage, stage).lower()} "
                f"{done}/{total} done ({time.perf_counter() - t:.1f} s)\n"
            )
            sys.stderr.flush()

    def close(self) -> None:
        pass


class _Callable:
    def __init__(self, fn: ProgressFn) -> None:
        self.fn = fn

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.fn(stage, done, total)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()


class _Silent:
    def __call__(self, stage: str, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_callback(progress: bool | ProgressFn | None) -> Any:
    """The ``(stage, done, total)`` callback for ``build_report(progress=...)``; has ``close()``.

    Args:
        progress: None (auto: bars in a terminal or notebook, plain lines otherwise), True
            (bars), False (silent) or a callable ``(stage, done, total)``.

    Raises:
        TypeError: anything else.
    """
    if progress is False:
        return _Silent()
    if progress is None:
        notebook = _in_notebook()
        tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        return _Bars(notebook) if (tty or notebook) else _Lines()
    if progress is True:
        return _Bars(_in_notebook())
    if callable(progress):
        return _Callable(progress)
    raise TypeError(
        f"progress must be None, True, False or a callable (stage, done, total), got "
        f"{type(progress).__name__}"
    )
