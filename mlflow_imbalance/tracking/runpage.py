r"""The run's own page answers: a summary in the run's description and the card one click away.

MLflow's run page shows the run's description, the tag ``mlflow.note.content`` (Markdown), at
the top of its overview. Every update of a counts set (:func:`~mlflow_imbalance.log_scores`,
autolog's worker, the callbacks, :func:`~mlflow_imbalance.log_production_scores`) rewrites one
delimited block in it::

    <!-- mlflow-imbalance:start -->
    <!-- mlflow-imbalance:set:test -->
    ... the decision at each logged prevalence, headline metrics with intervals, the card ...
    <!-- mlflow-imbalance:production:test -->
    ... one line per production batch ...
    <!-- mlflow-imbalance:end -->

in place: whatever the user wrote before or after the block is kept byte for byte, and each
set's sections are replaced by key (a set's production lines survive its re-logging, and the
other sets' sections are untouched). The description stays within MLflow's tag-value limit
(8,000 characters): the block is shortened, never the user's text. Every user-controlled
string in it (batch labels, estimator text) is escaped so it cannot inject Markdown or HTML.

A copy of each set's card is logged at the run's artifact root as
``imbalance_card_<name>.html`` (outside the set's folder and its manifest), the first thing in
the run's Artifacts tab.
"""

from __future__ import annotations

import logging
import re
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlflow_imbalance._numbers import fmt_eta, fmt_number
from mlflow_imbalance.tracking.keys import run_view_path

logger = logging.getLogger(__name__)

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "NOTE_TAG",
    "card_copy_name",
    "merge_note",
    "production_section",
    "set_section",
    "update_run_page",
]

#: The run's description tag (Markdown, shown on the run's overview page).
NOTE_TAG = "mlflow.note.content"
BLOCK_START = "<!-- mlflow-imbalance:start -->"
BLOCK_END = "<!-- mlflow-imbalance:end -->"
_KEY = re.compile(r"<!-- mlflow-imbalance:((?:set|production):[A-Za-z0-9_.-]+) -->\n?")
_TRUNCATED = "\n\n*… shortened to MLflow's description limit: the card has every number.*\n"
#: One writer at a time per process (autolog's worker and the caller's thread).
_LOCK = threading.Lock()


def _max_chars() -> int:
    try:
        from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

        return int(MAX_TAG_VAL_LENGTH)
    except (ImportError, AttributeError, ValueError, TypeError):  # pragma: no cover
        return 8000


def card_copy_name(name: str) -> str:
    """The artifact-root copy of a set's card: ``imbalance_card_<name>.html``."""
    return f"imbalance_card_{name}.html"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#!|~])")


def md_text(value: Any) -> str:
    """User text made inert in Markdown: HTML-escaped, punctuation backslash-escaped, one line."""
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _fmt(x: Any, digits: int = 4) -> str:
    return fmt_number(x, digits)


def _with_ci(point: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not point or point.get("value") is None:
        return "—"
    text = _fmt(point["value"], digits)
    iv = point.get("interval")
    return f"{text} [{_fmt(iv[0], 3)}, {_fmt(iv[1], 3)}]" if iv else text


def set_section(
    summary: Mapping[str, Any], decisions: list[str], card_link: str | None = None
) -> str:
    """The Markdown of one counts set: decisions, headline metrics with intervals, the card.

    Args:
        summary: the set's ``summary.json``.
        decisions: one sentence per logged prevalence (the card's verdict lines).
        card_link: a link to the card's artifact-root copy in the MLflow UI, or None.
    """
    name = str(summary["name"])
    h = summary["headline"]
    conf = h.get("confidence", 0.95)
    card = card_copy_name(name)
    where = f"[{md_text(card)}]({card_link})" if card_link else f"`{card}`"
    lines = [
        f"#### mlflow-imbalance · counts `{name}`",
        "",
        f"Run card: {where} (Artifacts, top level) · {int(summary['n_pos']):,} positives, "
        f"{int(summary['n_neg']):,} negatives (test prevalence "
        f"{fmt_eta(float(summary['test_prevalence']))}). Decision at each logged prevalence:",
        "",
    ]
    lines += [f"- {md_text(d)}" for d in decisions]
    metrics = [f"ROC-AUC {_with_ci(h.get('roc_auc'))}"]
    for row in h.get("at_prevalence", ()):
        where = "test" if row.get("is_test_prevalence") else fmt_eta(float(row["prevalence"]))
        metrics.append(
            f"η = {where}: AP {_with_ci(row.get('ap'))}, max-F1 {_with_ci(row.get('max_f1'))}"
        )
    lines += [
        "",
        f"Headline metrics ({float(conf):.0%} intervals): " + md_text("; ".join(metrics)),
        "",
        f"Also `imbalance/{name}/card.html`; compare runs with `mlflow-imbalance report`.",
    ]
    return "\n".join(lines) + "\n"


def production_section(name: str, records: Mapping[str, Mapping[str, Any]]) -> str:
    """The Markdown lines of a set's production batches: each batch's estimate of η."""
    if not records:
        return ""
    lines = [
        f"Production batches (`{name}`), deployment prevalence estimated from unlabeled scores:"
    ]
    lines.append("")
    for label, r in records.items():
        est = r.get("estimate") or {}
        what = est.get("text") or f"no estimate ({r.get('estimate_note') or 'not requested'})"
        lines.append(f"- batch {md_text(label)} ({int(r.get('n', 0)):,} cases): {md_text(what)}")
    return "\n".join(lines) + "\n"


def _split(note: str) -> tuple[str, dict[str, str] | None, str]:
    """``(before, {key: section}, after)`` of a description; None when it holds no block."""
    start, end = note.find(BLOCK_START), note.find(BLOCK_END)
    if start < 0 or end < start:
        return note, None, ""
    inner = note[start + len(BLOCK_START) : end]
    sections: dict[str, str] = {}
    marks = list(_KEY.finditer(inner))
    for i, m in enumerate(marks):
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(inner)
        sections[m.group(1)] = inner[m.end() : stop].strip("\n") + "\n"
    return note[:start], sections, note[end + len(BLOCK_END) :]


def merge_note(current: str | None, key: str, section: str, limit: int | None = None) -> str:
    """The description with one section of the block replaced, everything around it kept.

    ``key`` is ``set:<name>`` or ``production:<name>``; an empty ``section`` removes it. A new
    block is appended after the user's text (a blank line between). The result is at most
    ``limit`` characters (MLflow's tag limit by default): the block is shortened from its end,
    with a note, never the text outside it; with no room at all for a block, the description
    is returned unchanged.
    """
    limit = _max_chars() if limit is None else limit
    note = current or ""
    before, sections, after = _split(note)
    if sections is None:
        sections = {}
        before = note + ("\n\n" if note.strip() else "")
    if section.strip():
        if key not in sections and key.startswith("production:"):
            # right after its set's section
            own = "set:" + key.split(":", 1)[1]
            ordered: dict[str, str] = {}
            for k, v in sections.items():
                ordered[k] = v
                if k == own:
                    ordered[key] = section
            sections = ordered if key in ordered else {**sections, key: section}
        else:
            sections[key] = section
    else:
        sections.pop(key, None)
    if not sections:
        return (before.rstrip("\n") + after).strip("\n") if before or after else ""
    inner = "".join(f"\n<!-- mlflow-imbalance:{k} -->\n{v}" for k, v in sections.items())
    room = limit - len(before) - len(after) - len(BLOCK_START) - len(BLOCK_END) - 1
    if room < len(_TRUNCATED) + 40:
        logger.warning("run description too long for mlflow-imbalance's summary: left as it was")
        return note
    if len(inner) > room:
        cut = inner[: room - len(_TRUNCATED)]
        cut = cut[: cut.rfind("\n")] if "\n" in cut else cut  # whole lines only
        inner = cut + _TRUNCATED
    return f"{before}{BLOCK_START}{inner}\n{BLOCK_END}{after}"


def update_run_page(
    client: Any,
    run_id: str,
    name: str,
    *,
    card: Path | None = None,
    summary: Mapping[str, Any] | None = None,
    decisions: list[str] | None = None,
    production: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Log the card's artifact-root copy and rewrite the run's description block.

    Args:
        client: an ``MlflowClient``.
        run_id: the run.
        name: the counts set.
        card: the set's card file, copied to ``imbalance_card_<name>.html`` at the root.
        summary: with ``decisions``: rewrite the set's section.
        decisions: the decision sentence per logged prevalence.
        production: ``{batch: record}``: rewrite the set's production section.

    Never raises: the counts are committed before this runs; a failure warns (the run page
    then lacks the newest summary until the next update).
    """
    try:
        if card is not None:
            import shutil
            import tempfile

            with tempfile.TemporaryDirectory(prefix="mlflow-imbalance-") as tmp:
                copy = Path(tmp) / card_copy_name(name)
                shutil.copyfile(card, copy)
                client.log_artifact(run_id, str(copy))
        with _LOCK:
            run = client.get_run(run_id)
            note = run.data.tags.get(NOTE_TAG)
            new = note or ""
            if summary is not None and decisions is not None:
                link = run_view_path(run.info.experiment_id, run_id, card_copy_name(name))
                new = merge_note(new, f"set:{name}", set_section(summary, decisions, link))
            if production is not None:
                new = merge_note(new, f"production:{name}", production_section(name, production))
            if new != (note or ""):
                client.set_tag(run_id, NOTE_TAG, new)
    except Exception as exc:
        message = (
            f"mlflow-imbalance: counts {name!r} logged, but run {run_id}'s page (description, "
            f"card copy) was not updated ({type(exc).__name__}: {exc})"
        )
        logger.warning(message)
        warnings.warn(message, UserWarning, stacklevel=3)
