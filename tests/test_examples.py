"""The examples run end to end, as a user runs them: a fresh process in an empty directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
def test_digits_example_compares_every_entry_point(tmp_path):
    pytest.importorskip("xgboost")
    pytest.importorskip("lightgbm")
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "digits.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "digits-report.html").is_file()
    out = done.stdout
    assert "Compared 4 runs: " in out, out
    for run in ("(log_scores)", "(autolog)", "lightgbm (callback)", "xgboost (callback)"):
        assert run in out.split("Compared 4 runs: ")[1].splitlines()[0], (run, out)
    # none left out, none read from another counts name than "test"
    assert "Skipped runs: 0\n" in out and "Notes: 0\n" in out, out
    assert "At η = 1e-4: ship " in out and "At η = 0.001: ship " in out, out
