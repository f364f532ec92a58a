"""Wall-clock and process-CPU timing of one logging call (read by benchmarks/bench_logging.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["last_timings"]


def _now() -> float:
    import time

    return time.perf_counter()


class _Timer:
    """Wall-clock and process-CPU split of one logging call (read by bench_logging.py)."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def part(self, key: str) -> Iterator[None]:
        import time

        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.parts[key] = self.parts.get(key, 0.0) + time.perf_counter() - t0
            self.cpu[key] = self.cpu.get(key, 0.0) + time.process_time() - c0


#: Timings of the last logging call in this thread: ``parts`` (wall) and ``cpu`` (process CPU),
#: {"counts", "metrics", "intervals", "figures", "card", "upload"} -> seconds (counts = the
#: from_scores part measured by the caller, when any; "metrics" excludes "intervals").
last_timings = threading.local()
