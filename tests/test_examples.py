"""The examples run end to end, as a user runs them: a fresh process in an empty directory."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
def test_digits_example_compares_every_entry_point(digits_run, request):
    """``examples/digits.py`` in a fresh process and an empty directory (conftest's
    ``digits_run``, started at collection): every entry point compared, the verdict over the
    production batch's range, the report's first screen in Chromium."""
    pytest.importorskip("xgboost")
    pytest.importorskip("lightgbm")
    done = digits_run.result(timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = digits_run.dir / "digits-report.html"
    assert report.is_file()
    out = done.stdout
    assert "Compared 4 runs: " in out, out
    for run in ("(log_scores)", "(autolog)", "lightgbm (callback)", "xgboost (callback)"):
        assert run in out.split("Compared 4 runs: ")[1].splitlines()[0], (run, out)
    # none left out, none read from another counts name than "test"
    assert "Skipped runs: 0\n" in out and "Notes: 0\n" in out, out
    assert "At η = 1e-4: ship " in out and "At η = 0.001: ship " in out, out
    # issue 37: two unlabeled production batches; the verdict is first decided over what the
    # latest batch's estimates allow (a range from 0: about 300 images, 3 of them 8s), and a
    # range verdict names its decision, its worst case and the point estimate's numbers
    assert out.count("estimated share of 8s ") == 8, out
    first = out.split("Verdict:\n")[1].splitlines()[0].strip()
    assert first.startswith("Over η between 0 and "), first
    assert "(batch 2026-w48" in out or "batch 2026-w48" in first, first
    assert ("the best decision at every η in that range" in first) or (
        "it loses at most" in first
    ), first
    # the first screen, on real data, in Chromium (as the quick start's in test_browser.py)
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("chromium not installed: the digits report's first screen is not checked")
    from test_browser import ARTIFACTS, assert_first_screen

    browser = request.getfixturevalue("browser")  # one Chromium, after the example has run
    shots = assert_first_screen(report, browser)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for w, png in shots.items():
        (ARTIFACTS / f"digits-report-{w}.png").write_bytes(png)
