"""The logging hook's structure (issue 14) and safe figures (issue 13): no timings here.

What runs on which thread (autolog and callbacks: counts on the training thread, the rest on the
one background worker), that no artist of a figure is drawn twice (and that a figure's frame
is drawn once per process), that pending logs are flushed at run
end, on ``mi.flush()``, before a capture in another run and at interpreter exit, that background
failures warn, that styling never touches ``rcParams`` (also while 4 threads draw), and that user
strings are drawn as literal text (no mathtext). Real SQLite tracking stores.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
import warnings

import matplotlib
import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance import plots, tracking
from mlflow_imbalance.core.counts import RocCounts
from mlflow_imbalance.plots import _static
from mlflow_imbalance.tracking import _worker, autologging

WORKER = "mlflow-imbalance-log"


@pytest.fixture
def autolog_off():
    yield
    mi.autolog(disable=True)
    mi.flush()
    autologging._captures.clear()
    autologging._warned_once.clear()


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    return y, rng.normal(size=n) + 1.2 * y


@pytest.fixture
def spy(monkeypatch):
    """Record the thread of every counts computation, figure set, PNG encoding and upload."""
    seen: dict[str, list[str]] = {"counts": [], "figures": [], "png": [], "upload": []}
    drawn: list[object] = []  # the figures themselves: ids stay unique while they are kept

    def wrap(owner, attr, key):
        original = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            seen[key].append(threading.current_thread().name)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, attr, wrapper)

    original_from_validated = RocCounts._from_validated.__func__

    def from_validated(cls, *args, **kwargs):
        seen["counts"].append(threading.current_thread().name)
        return original_from_validated(cls, *args, **kwargs)

    monkeypatch.setattr(RocCounts, "_from_validated", classmethod(from_validated))
    wrap(plots, "preview_figures", "figures")
    wrap(plots, "figure_to_png", "png")
    wrap(MlflowClient, "log_artifacts", "upload")

    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    painted: list[tuple[str, object]] = []  # (class, artist) of every visible artist drawn

    original_draw = Figure.draw

    def draw(self, renderer):
        drawn.append(self)
        return original_draw(self, renderer)

    monkeypatch.setattr(Figure, "draw", draw)
    for cls in (Axis, Legend, Line2D, Text):

        def paint(self, renderer, *args, _original=cls.draw, _kind=cls.__name__, **kwargs):
            if self.get_visible():
                painted.append((_kind, self))
            return _original(self, renderer, *args, **kwargs)

        monkeypatch.setattr(cls, "draw", paint)
    _static._clear_backgrounds()  # the first figure of each kind draws its frame
    seen["drawn"] = drawn  # type: ignore[assignment]
    seen["painted"] = painted  # type: ignore[assignment]
    return seen


def _drawn_once(spy, n_figures):
    """Each logged figure was drawn, and no artist of it was painted twice."""
    drawn = [id(f) for f in spy["drawn"]]
    painted = [id(a) for _, a in spy["painted"]]
    assert len(set(drawn)) == n_figures
    # at most two passes per figure (its frame when not cached yet, then the rest)
    assert all(drawn.count(f) <= 2 for f in set(drawn))
    assert len(painted) == len(set(painted)) and painted  # nothing painted twice
    return [kind for kind, _ in spy["painted"]].count("Axis")


def test_autolog_counts_on_training_thread_rest_on_worker(tracking_uri, autolog_off, spy):
    import sklearn.metrics

    y, s = _data()
    mi.autolog(prevalences=[1e-3], costs=(1, 10))
    with mlflow.start_run() as run:
        sklearn.metrics.roc_auc_score(y, s)
        main = threading.current_thread().name
        assert spy["counts"] == [main]  # the one sort of the scores: on the training thread
    # leaving the run flushed the worker: everything is in the store now
    assert _worker.pending() == 0
    assert spy["figures"] == [WORKER]
    assert spy["png"] == [WORKER] * 3  # pr, roc, cost
    assert spy["upload"] == [WORKER]
    assert _drawn_once(spy, 3) == 6  # pr, roc, cost: the frame (x and y Axis) drawn once
    summary = mi.list_counts(run.info.run_id)["test"]
    assert sorted(summary["figures"]) == ["cost", "pr", "roc"]
    assert mi.load_counts(run.info.run_id, "test").n_pos == int(y.sum())


def test_explicit_log_scores_stays_synchronous(tracking_uri, spy):
    y, s = _data()
    with mlflow.start_run():
        logged = mi.log_scores(y, s, prevalences=[1e-3])
    assert isinstance(logged, tracking.LoggedCounts)
    main = threading.current_thread().name
    assert spy["counts"] == [main] and spy["figures"] == [main] and spy["upload"] == [main]
    assert spy["png"] == [main, main]  # pr and roc; no costs, no cost curve
    assert _drawn_once(spy, 2) == 4  # x and y Axis of each figure, once (not cached yet)
    spy["drawn"].clear()
    spy["painted"].clear()
    with mlflow.start_run():
        mi.log_scores(y, s + 0.5, prevalences=[1e-3], name="again")
    # the second time the frames' pixels are reused: no Axis drawn at all
    assert _drawn_once(spy, 2) == 0


def test_callback_returns_pending_log_and_flush_waits(tracking_uri, spy):
    y, s = _data()
    with mlflow.start_run() as run:
        pending = autologging._log_safely(y, s, source="test callback", name="validation")
        assert isinstance(pending, tracking.PendingLog)
        assert pending.run_id == run.info.run_id and pending.name == "validation"
        assert mi.flush(timeout=60) is True
        assert pending.done()
        logged = pending.result(timeout=0)
        assert isinstance(logged, tracking.LoggedCounts)
        assert logged.summary["n_pos"] == int(y.sum())
    assert spy["counts"] == [threading.current_thread().name]
    assert spy["figures"] == [WORKER]


def test_background_failure_warns_and_is_not_silent(tracking_uri, monkeypatch):
    y, s = _data()

    def broken(self, *args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(MlflowClient, "log_artifacts", broken)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        with mlflow.start_run() as run:
            pending = autologging._log_safely(y, s, source="test callback", log_figures=False)
        assert pending is not None and pending.result(timeout=60) is None
    ours = [str(r.message) for r in records if "mlflow-imbalance" in str(r.message)]
    assert len(ours) == 1 and "test callback: could not log scores" in ours[0]
    assert "disk full" in ours[0]
    assert mi.list_counts(run.info.run_id) == {}


def test_log_in_another_run_waits_for_the_previous_runs_logs(tracking_uri, monkeypatch):
    y, s = _data()
    original_upload = MlflowClient.log_artifacts
    release = threading.Event()

    def slow_upload(self, *args, **kwargs):  # the first run's upload waits until released
        release.wait(60)
        return original_upload(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_artifacts", slow_upload)
    at_put: list[int] = []
    original_put = _worker._queue.put

    def put(item, *args, **kwargs):
        at_put.append(_worker.pending())
        if len(at_put) == 1:
            threading.Timer(0.5, release.set).start()
        return original_put(item, *args, **kwargs)

    monkeypatch.setattr(_worker._queue, "put", put)
    client = MlflowClient()
    first = client.create_run("0").info.run_id
    second = client.create_run("0").info.run_id
    kw = {"source": "test callback", "log_figures": False, "n_bootstrap": 0}
    p1 = autologging._log_safely(y, s, run_id=first, **kw)
    assert not p1.done()  # queued, waiting in its upload
    p2 = autologging._log_safely(y, s, run_id=second, **kw)
    assert at_put == [0, 0]  # the second run's job was queued only after the first finished
    assert p1.done()
    assert mi.flush(timeout=60) and p2.result(timeout=0) is not None
    assert list(mi.list_counts(first)) == ["test"] and list(mi.list_counts(second)) == ["test"]


def test_pending_logs_are_flushed_at_interpreter_exit(tracking_uri, tmp_path):
    script = textwrap.dedent(
        f"""
        import mlflow, numpy as np, sklearn.metrics
        import mlflow_imbalance as mi
        mlflow.set_tracking_uri({tracking_uri!r})
        mi.autolog(log_figures=False)
        run = mlflow.start_run()
        rng = np.random.default_rng(0)
        y = (rng.random(3000) < 0.1).astype(int)
        sklearn.metrics.roc_auc_score(y, rng.normal(size=y.size) + y)
        print(run.info.run_id)
        # no end_run, no flush: the interpreter exits with the log still queued
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip().splitlines()[-1]
    assert mi.load_counts(run_id, "test").n_pos > 0


# --------------------------------------------------------------------------- styling, text
def _counts(seed=0):
    y, s = _data(n=5000, seed=seed)
    return RocCounts.from_scores(y, s)


def test_drawing_from_four_threads_never_changes_rcparams():
    from matplotlib.figure import Figure

    before = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
    counts = [_counts(i) for i in range(4)]
    stop = threading.Event()
    errors: list[BaseException] = []
    start = threading.Barrier(5)

    def work(i: int) -> None:
        try:
            start.wait()
            for _ in range(3):
                figs = plots.preview_figures(counts[i], prevalences=[1e-3], cost_fp=1, cost_fn=5)
                figs["roc_display"] = plots.RocDisplay.from_counts({f"r{i}": counts[i]}).figure_
                for fig in figs.values():
                    plots.figure_to_png(fig, close=True)
                plots.figure_to_svg(plots.RocDisplay.from_counts({"a": counts[i]}).figure_)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    start.wait()
    changes: set[str] = set()
    reads = 0
    deadline = time.monotonic() + 300
    while any(t.is_alive() for t in threads):  # the main thread reads rcParams meanwhile
        now = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
        changes |= {k for k in before if before[k] != now[k]}
        reads += 1
        # leave the GIL to the drawing threads (matplotlib serialises figure draws with one
        # class-wide lock, so a tight loop here would starve them)
        time.sleep(0.01)
        assert time.monotonic() < deadline, "drawing threads did not finish"
    for t in threads:
        t.join()
    stop.set()
    assert errors == []
    assert reads > 0 and sorted(changes) == []
    assert isinstance(Figure, type)


@pytest.mark.parametrize("name", [r"$\frac{$", "$x^2$", "a$b", "$$"])
def test_user_strings_are_literal_text(name):
    c = _counts()
    figs = plots.preview_figures(c, prevalences=[1e-3], cost_fp=1, cost_fn=5, name=name)
    disp = plots.RocDisplay.from_counts({name: c, "other": _counts(1)})
    figs["display"] = disp.figure_
    for key, fig in figs.items():
        png = plots.figure_to_png(fig)  # would raise ValueError (mathtext) for "$\frac{$"
        assert png.startswith(b"\x89PNG")
        texts = [t for ax in fig.axes for t in (ax._left_title, *ax.get_legend().get_texts())]
        shown = [t for t in texts if name in t.get_text()]
        assert shown, key
        for t in shown:
            assert t.get_parse_math() is False
            assert t._preprocess_math(t.get_text()) == (t.get_text(), False)  # no mathtext
    svg = plots.figure_to_svg(disp.figure_)
    assert "<svg" in svg
    # the plot functions the report uses, on axes it made
    ax = plots.new_axes()
    plots.plot_roc({name: c}, ax=ax)
    assert any(name in t.get_text() for t in ax.get_legend().get_texts())
    assert plots.figure_to_svg(ax.figure).startswith("<svg")


def test_users_own_mathtext_elsewhere_is_left_alone():
    from matplotlib.figure import Figure

    fig = Figure()
    mine, ours = fig.subplots(1, 2)
    mine.set_title(r"$\alpha$")
    plots.RocDisplay.from_counts({"run": _counts()}, ax=ours)
    assert mine.title.get_parse_math() is True  # only the axes we drew on are made literal


def test_run_named_like_mathtext_logs_its_figures(tracking_uri):
    y, s = _data()
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        with mlflow.start_run(run_name=r"$\frac{$ $x^2$") as run:
            logged = mi.log_scores(y, s, prevalences=[1e-3], costs=(1, 5))
    assert not [r for r in records if "figures" in str(r.message)]
    assert sorted(logged.summary["figures"]) == ["cost", "pr", "roc"]
    card = MlflowClient().download_artifacts(run.info.run_id, "imbalance/test/card.html")
    with open(card, encoding="utf-8") as fh:
        assert r"$\frac{$ $x^2$" in fh.read()
