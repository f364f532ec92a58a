"""The run's own page answers (issue 38): the description block and the card at the root.

On a real SQLite store: ``log_scores``, autolog's background worker and
``log_production_scores`` each rewrite their part of one delimited block in the run's
description (``mlflow.note.content``) in place, keeping what the user wrote before and after it
byte for byte; the block holds the decision at each logged prevalence, the headline metrics with
their intervals (the numbers of ``summary.json``), the production estimates and where the card
is; the description stays within MLflow's 8,000-character limit by shortening the block, never
the user's text; user text cannot inject Markdown or HTML. A copy of each set's card sits at
the artifact root, outside the set's manifest (the counts still verify).
"""

from __future__ import annotations

import re

import mlflow
import numpy as np
import pytest
import sklearn.metrics
from mlflow.tracking import MlflowClient

import mlflow_imbalance as mi
from mlflow_imbalance.tracking import autologging, keys, runpage


def _data(seed: int = 0, n: int = 4000):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.05
    return y, np.round(rng.normal(size=n) + 1.5 * y, 3)


def _note(run_id: str) -> str:
    return MlflowClient().get_run(run_id).data.tags.get(runpage.NOTE_TAG, "")


def test_description_block_replaced_in_place_around_the_users_text(tracking_uri):
    y, s = _data()
    before = "My *notes* before.\n\nSecond paragraph."
    with mlflow.start_run(description=before) as run:
        rid = run.info.run_id
        logged = mi.log_scores(y, s, prevalences=[1e-3], costs=(1, 100), log_figures=False)
        note = _note(rid)
        assert note.startswith(before + "\n\n" + runpage.BLOCK_START)
        assert note.endswith(runpage.BLOCK_END)
        # the user writes below the block in the UI; the next updates keep it
        after = "\n\nAdded later by hand: <b>keep me</b>."
        MlflowClient().set_tag(rid, runpage.NOTE_TAG, note + after)
        mi.log_production_scores(np.random.default_rng(1).normal(size=3000), batch="2026-w48")
        copy = MlflowClient().download_artifacts(rid, runpage.card_copy_name("test"))
        assert "2026-w48" in open(copy, encoding="utf-8").read()  # refreshed with the batch
        mi.log_scores(y, s + 0.5 * y, prevalences=[1e-3], costs=(1, 100), log_figures=False)
    note = _note(rid)
    assert note.startswith(before + "\n\n" + runpage.BLOCK_START), note[:200]
    assert note.endswith(runpage.BLOCK_END + after)
    assert note.count(runpage.BLOCK_START) == 1 and note.count("counts `test`") == 1
    # the numbers are the summary's: the decision's threshold and the intervals at η = 1e-3
    summary = mi.load_summary(rid)
    row = next(r for r in summary["headline"]["at_prevalence"] if r["prevalence"] == 1e-3)
    mc = row["min_cost"]
    plain = note.replace("\\", "")  # Markdown's escapes
    assert f"threshold {mc['threshold']:.4g}" in plain
    lo, hi = row["ap"]["interval"]
    assert f"AP {row['ap']['value']:.3g} [{lo:.3g}, {hi:.3g}]" in plain
    assert "At η = 0.001 (deployment)" in plain and "ROC-AUC" in plain
    # the production estimate is in it, after the re-logging of the set too
    batch = mi.list_production_batches(rid)["2026-w48"]
    assert "batch 2026-w48 (3,000 cases)" in plain
    assert batch["estimate"]["text"] in plain
    # the card's copy at the root, outside the manifest; the counts still verify
    root = {a.path for a in MlflowClient().list_artifacts(rid)}
    assert runpage.card_copy_name("test") in root
    assert runpage.card_copy_name("test") not in summary["files"]
    assert mi.load_counts(rid).n_pos == logged.summary["n_pos"]
    copy = MlflowClient().download_artifacts(rid, runpage.card_copy_name("test"))
    card = MlflowClient().download_artifacts(rid, "imbalance/test/card.html")
    assert open(copy, "rb").read() == open(card, "rb").read()
    link = keys.run_view_path(run.info.experiment_id, rid, runpage.card_copy_name("test"))
    assert f"]({link})" in note and "workflowType=machine_learning" in link


def test_autolog_worker_updates_the_description(tracking_uri):
    y, s = _data(2, n=600)
    mi.autolog(log_figures=False)
    try:
        with mlflow.start_run(description="Trained by the nightly job.") as run:
            sklearn.metrics.roc_auc_score(y, s)
        mi.flush()
    finally:
        mi.autolog(disable=True)
        autologging._captures.clear()
    note = _note(run.info.run_id)
    assert note.startswith("Trained by the nightly job.\n\n" + runpage.BLOCK_START)
    assert "counts `test`" in note and "Decision at each logged prevalence" in note


def test_description_stays_within_mlflows_limit_and_the_users_text_is_kept(tracking_uri):
    y, s = _data(3, n=1500)
    user = "x" * 6500
    with mlflow.start_run(description=user) as run:
        for k in range(4):
            mi.log_scores(y, s, name=f"set{k}", prevalences=[1e-2, 1e-3, 1e-4], log_figures=False)
    note = _note(run.info.run_id)
    assert len(note) <= 8000 and note.startswith(user + "\n\n" + runpage.BLOCK_START)
    assert note.endswith(runpage.BLOCK_END) and "shortened to MLflow's description limit" in note
    # no room at all: the user's text is left alone, the block is not written
    assert runpage.merge_note("y" * 7990, "set:a", "text\n") == "y" * 7990


def test_merge_note_keeps_sections_apart_and_escapes_user_text():
    note = runpage.merge_note("", "set:a", "A\n")
    note = runpage.merge_note(note, "set:b", "B\n")
    note = runpage.merge_note(note, "production:a", "PA\n")
    note = runpage.merge_note(note, "set:a", "A2\n")
    keys_in_order = re.findall(r"<!-- mlflow-imbalance:(\S+) -->", note)
    assert keys_in_order == ["start", "set:a", "production:a", "set:b", "end"]
    assert "A2" in note and "\nA\n" not in note
    assert runpage.merge_note(runpage.merge_note(note, "set:b", ""), "production:a", "")
    # text from outside the package cannot make links, images or tags
    evil = "run](javascript:alert(1)) <img src=x onerror=alert(1)> ![x](y) *b* `c`"
    section = runpage.production_section(
        "test", {"w1": {"n": 5, "estimate": {"text": evil}}}
    )  # fmt: skip
    assert "<img" not in section and "](javascript" not in section and "![" not in section
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in section


@pytest.mark.parametrize("uri", ["http://127.0.0.1:5000/", "sqlite:///mlflow.db"])
def test_run_links_open_the_model_training_view(uri):
    assert keys.run_view_url(uri, "3", "abc") == (
        "http://127.0.0.1:5000/#/experiments/3/runs/abc?workflowType=machine_learning"
    )
    assert keys.run_view_url(uri, 3, "abc", "imbalance_card_test.html").endswith(
        "/runs/abc/artifactPath/imbalance_card_test.html?workflowType=machine_learning"
    )
