"""The report printed to PDF reads as on screen (issue 38), in real headless Chromium.

A quick-start-like report (four runs logged to a real SQLite store, costs and two deployment
prevalences logged with them, one unlabeled production batch each, so three verdicts of which
two are collapsed on screen) is printed by ``build_report(..., pdf=...)``, i.e. Chromium's
DevTools ``Page.printToPDF``, at Letter and at A4. The PDF's text, read with pypdf and compared
after Unicode NFKC and whitespace normalisation (PDF text has ligatures and split lines):

- holds every verdict's full sentence (``report.verdict[i].text``) and every line of every
  verdict box, collapsed or not, as the page shows it (Chromium leaves a closed
  ``<details>``'s content out of a printout unless the print styles or script open it), and
  the runs table's collapsed details;
- holds none of the interactive controls' labels ("Runs drawn", the bands drop-down, the
  legend's "click to hide / show", "Click an estimate"), but the prevalence the page shows;
- has no browser header or footer (no file path), the paper size asked for and at most
  ``MAX_PAGES`` pages.

In print media at the printable width no table, chart or figure is wider than the page and no
text is smaller than 7 pt; a table row is never split (``break-inside: avoid``) and header rows
repeat (``display: table-header-group``), read from the computed styles.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import mlflow
import numpy as np
import pytest

import mlflow_imbalance as mi
from mlflow_imbalance.report import pdf as report_pdf

pypdf = pytest.importorskip("pypdf")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(report_pdf.find_chromium() is None, reason="chromium not installed"),
]

#: The four-run report prints on 9-10 Letter pages; a layout that splits every table row or
#: leaves a page per chart would need more.
MAX_PAGES = 12
#: Control labels that must not be printed (issue 38).
CONTROL_LABELS = ("Runs drawn", "click to hide", "Click an estimate", "to hide or show it")
BANDS_DROPDOWN = re.compile(r"Bands:\s*(all runs|winner and runner-up|none)\b")
POINTS_PER_INCH = 72


def _normal(text: str) -> str:
    # a line break after a hyphen ("half-\nwidth") comes out of the PDF as "half- width"
    return re.sub(r"-\s+", "-", " ".join(unicodedata.normalize("NFKC", text).split()))


def _pdf_text(path: Path) -> tuple[str, list]:
    reader = pypdf.PdfReader(str(path))
    return _normal(" ".join(p.extract_text() or "" for p in reader.pages)), list(reader.pages)


def _model(kind: str, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Scores of four kinds of model: a sharp rule on a fifth of the positives, two broad ones."""
    n = y.size
    if kind == "signature-rule":
        return np.where(y & (rng.random(n) < 0.22), 3.5, 0.0) + 0.6 * rng.normal(size=n)
    mu = {"gradient-boosting": 2.2, "logistic": 1.5, "naive-bayes": 1.0}[kind]
    return np.round(rng.normal(size=n) + mu * y, 3)


@pytest.fixture(scope="module")
def printed(tmp_path_factory, _template_tracking_db):
    """The report and its PDFs at Letter (through build_report) and A4 (through print_pdf).
    The SQLite store starts as a copy of conftest's migrated template (no schema migration)."""
    import shutil

    from mlflow.tracking import _tracking_service

    root = tmp_path_factory.mktemp("print")
    shutil.copyfile(_template_tracking_db, root / "mlflow.db")
    previous = _tracking_service.utils._tracking_uri
    mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
    try:
        exp = mlflow.create_experiment("print-test", artifact_location=str(root / "mlruns"))
        rng = np.random.default_rng(38)
        y = rng.random(20_000) < 0.07
        y_prod = rng.random(30_000) < 0.002
        ids = []
        for kind in ("signature-rule", "gradient-boosting", "logistic", "naive-bayes"):
            with mlflow.start_run(experiment_id=exp, run_name=kind) as run:
                mi.log_scores(
                    y, _model(kind, y, rng), prevalences=[1e-3, 1e-4], costs=(1, 100),
                    log_figures=False,
                )  # fmt: skip
                mi.log_production_scores(_model(kind, y_prod, rng), batch="2026-w48")
            ids.append(run.info.run_id)
        html, letter = root / "report.html", root / "report.pdf"
        report = mi.build_report(
            ids, n_bootstrap=100, output=html, pdf=letter, paper="letter", progress=False,
            title="Print test: which model?",
        )  # fmt: skip
    finally:
        mlflow.set_tracking_uri(previous)
    a4 = report_pdf.print_pdf(html, root / "report-a4.pdf", paper="a4")
    return report, html, {"letter": letter, "a4": a4}


def test_printed_report_holds_every_verdict_and_no_control(printed, browser) -> None:
    report, html, pdfs = printed
    assert len(report.verdict) == 3  # the estimated η and the two logged ones
    # on screen: the lines of every verdict box (two of them collapsed) and the runs table's
    # collapsed details, as the page shows them once opened
    with browser.at(1280, 900) as page:
        page.open(html)
        assert page.eval("document.querySelectorAll('.verdict-item details:not([open])').length")
        lines = page.eval(
            "(() => { document.querySelectorAll('details').forEach(d => d.open = true);"
            " return [...document.querySelectorAll('.verdict-item .verdict-why,"
            " .verdict-item .verdict-facts li, #runs td.text dl.kv dt')]"
            ".map(e => e.innerText); })()"
        )
        shown_eta = page.eval("document.querySelector('.eta-now').textContent")
    assert len(lines) >= 3 * 4, lines
    for paper, path in pdfs.items():
        text, pages = _pdf_text(path)
        for v in report.verdict:
            assert _normal(v.text) in text, (paper, v.text)
        for line in lines:
            assert _normal(line) in text, (paper, line)
        for label in CONTROL_LABELS:
            assert label.lower() not in text.lower(), (paper, label)
        assert not BANDS_DROPDOWN.search(text), (paper, BANDS_DROPDOWN.search(text))
        assert f"Shown at prevalence η = {shown_eta}" in text, paper
        # no browser header or footer: no file path, no URL of the file
        assert "file:" not in text and str(html.parent) not in text, paper
        assert 1 <= len(pages) <= MAX_PAGES, (paper, len(pages))
        width, height = report_pdf.PAPERS[paper]
        box = pages[0].mediabox
        assert float(box.width) == pytest.approx(width * POINTS_PER_INCH, abs=1)
        assert float(box.height) == pytest.approx(height * POINTS_PER_INCH, abs=1)


PRINT_LAYOUT = """(() => {
  const body = document.body.getBoundingClientRect(), out = {wide: [], small: [], rows: []};
  const visible = e => e.getClientRects().length > 0;
  for (const e of document.querySelectorAll('table, figure, .vega svg, .table-wrap')) {
    if (visible(e) && e.getBoundingClientRect().right > body.right + 1) {
      out.wide.push(e.tagName + '.' + e.className + ' ' + e.getBoundingClientRect().right);
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || !visible(el) || el.closest('svg')) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < 7 * 96 / 72 - 0.01) out.small.push(el.tagName + '.' + el.className + ' ' + px);
  }
  out.svgText = Math.min(...[...document.querySelectorAll('.vega svg')].map(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return Math.min(...[...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
      .map(t => parseFloat(getComputedStyle(t).fontSize) * scale));
  }));
  out.trBreak = [...new Set([...document.querySelectorAll('tr')]
    .map(r => getComputedStyle(r).breakInside))];
  out.thead = [...new Set([...document.querySelectorAll('thead')]
    .map(h => getComputedStyle(h).display))];
  // a production estimate's button prints as its number: plain text, no box
  out.controls = [...document.querySelectorAll('.run-toggles, .control, button, select, input')]
    .filter(e => visible(e) && !(e.matches('button.jump') &&
      getComputedStyle(e).borderTopStyle === 'none'))
    .map(e => e.tagName + '.' + e.className);
  return JSON.stringify(out);
})()"""


@pytest.mark.parametrize("paper", ["letter", "a4"])
def test_print_layout_fits_the_page(printed, browser, paper: str) -> None:
    import json

    _, html, _ = printed
    width = round((report_pdf.PAPERS[paper][0] - 2 * report_pdf.MARGIN_IN) * 96)
    with browser.at(width, 1000) as page:
        page.open(html)
        page.dt.send("Emulation.setEmulatedMedia", media="print")
        page.eval("window.dispatchEvent(new Event('beforeprint'))")
        got = json.loads(page.eval(PRINT_LAYOUT))
    assert not got["wide"], got["wide"][:5]
    assert not got["small"], got["small"][:5]
    assert got["svgText"] >= 7 * 96 / 72 - 0.01, got["svgText"]
    assert got["trBreak"] == ["avoid"], got["trBreak"]
    assert got["thead"] == ["table-header-group"], got["thead"]
    assert got["controls"] == [], got["controls"]


def test_bad_paper_and_no_browser_are_named(tmp_path: Path, monkeypatch) -> None:
    counts = {"a": mi.RocCounts.from_scores([0, 1, 0, 1], [0.1, 0.9, 0.3, 0.6])}
    with pytest.raises(ValueError, match=r"paper must be one of 'letter', 'a4', got 'a5'"):
        mi.build_report(counts, pdf=tmp_path / "r.pdf", paper="a5", progress=False)
    # a browser that is not there: refused before any work, saying how to get one
    monkeypatch.setenv(report_pdf.CHROMIUM_ENV, str(tmp_path / "no-such-browser"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(report_pdf.ChromiumNotFound, match=r"install Chromium.*print it to PDF"):
        mi.build_report(counts, pdf=tmp_path / "r.pdf", progress=False)
    assert not (tmp_path / "r.pdf").exists()


def test_cli_pdf(printed, tmp_path: Path, monkeypatch) -> None:
    """``report --pdf`` writes the PDF beside the HTML; without a browser it exits 2 first."""
    from click.testing import CliRunner

    from mlflow_imbalance.report.cli import main

    report, html, _ = printed
    uri = f"sqlite:///{html.parent / 'mlflow.db'}"
    out, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    args = ["report", "--experiment", "print-test", "--tracking-uri", uri, "--bootstrap", "0",
            "-o", str(out), "--pdf", str(pdf), "--paper", "A4", "--quiet"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    text, pages = _pdf_text(pdf)
    assert out.exists() and float(pages[0].mediabox.height) == pytest.approx(842, abs=1)
    assert "ship" in text and report.verdict[0].run in text
    monkeypatch.setenv(report_pdf.CHROMIUM_ENV, str(tmp_path / "no-such-browser"))
    pdf.unlink()
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    assert "--pdf" in res.output and "apt-get install chromium" in res.output
    assert "print it to PDF" in res.output and not pdf.exists()
