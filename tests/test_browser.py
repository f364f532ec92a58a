"""The report in real headless Chromium, driven over the DevTools protocol (stdlib websocket).

Asserts: the page loads with no console errors, exceptions or CSP violations; the only network
request is the file itself (and the page works with the network emulated offline); the charts
render; the verdict names the run with the lowest expected cost computed independently here;
typing a prevalence into ``#prevalence`` updates the live verdict and the displayed precision
to the Python value at that η; nothing overflows sideways at 1000 px. Screenshots go to
``test-artifacts/`` for the test log. One Chromium serves the module (conftest's ``browser``):
each test sets its viewport with ``browser.at(width, height)`` and loads its page anew.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mlflow_imbalance as mi

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() or shutil.which("chromium")), reason="chromium not installed"
    ),
]
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).parent.parent / "test-artifacts"))


class DevTools:
    """A minimal RFC 6455 client (text frames, client masking) for the DevTools protocol."""

    def __init__(self, ws_url: str) -> None:
        u = urllib.parse.urlparse(ws_url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (
            f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.next_id = 0
        self.events: list[dict] = []

    def _recv_exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("devtools socket closed")
            buf += chunk
        return buf

    def _recv_message(self) -> dict:
        data = b""
        while True:
            b0, b1 = self._recv_exact(2)
            length = b1 & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._recv_exact(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._recv_exact(8))[0]
            data += self._recv_exact(length)
            if b0 & 0x80:  # FIN
                return json.loads(data)

    def send(self, method: str, session_id: str | None = None, **params) -> dict:
        """One command; to an attached target (flat session) when ``session_id`` is given."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session_id is not None:
            message["sessionId"] = session_id
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)
        while True:
            msg = self._recv_message()
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        while time.monotonic() < deadline:
            msg = self._recv_message()
            self.events.append(msg)
            if msg.get("method") == method:
                return msg
        raise TimeoutError(method)

    def close(self) -> None:
        self.sock.close()


class Chromium:
    """A headless Chromium with one page, driven over DevTools; a context manager."""

    def __init__(self, tmp_path: Path, width: int = 1280, height: int = 900) -> None:
        self.tmp_path, self.width, self.height = tmp_path, width, height

    def __enter__(self) -> Chromium:
        binary = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
        profile = self.tmp_path / f"profile-{self.width}"
        # a profile reused by a later browser in the same test: its old port file would be read
        # before the new browser writes its own
        (profile / "DevToolsActivePort").unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            port_file = profile / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
                assert self.proc.poll() is None, "chromium exited early"
                assert time.monotonic() < deadline, "chromium did not open its DevTools port"
                time.sleep(0.1)
            port = int(port_file.read_text().splitlines()[0])
            import urllib.request

            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                page = next(t for t in json.load(r) if t["type"] == "page")
            self.dt = DevTools(page["webSocketDebuggerUrl"])
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.dt.send(f"{domain}.enable")
            self.resize(self.width, self.height)
        except BaseException:
            self.__exit__()
            raise
        return self

    @contextlib.contextmanager
    def at(self, width: int, height: int) -> Iterator[Chromium]:
        """This (module's) browser for one more page: the viewport ``width`` x ``height``,
        screen media, the pointer at the corner; ``with browser.at(w, h) as page:``, then
        :meth:`open` loads the page anew. The browser stays open after the block."""
        self.resize(width, height)
        self.dt.send("Emulation.setEmulatedMedia", media="")
        self.dt.send("Input.dispatchMouseEvent", type="mouseMoved", x=0, y=0)
        yield self

    def resize(self, width: int, height: int | None = None) -> None:
        """Change the viewport in place (one browser serves several widths)."""
        self.width, self.height = width, height or self.height
        self.dt.send(
            "Emulation.setDeviceMetricsOverride",
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def open(self, path: Path, offline: bool = True) -> str:
        """Load a file (network emulated offline unless told otherwise) and wait for charts."""
        if offline:
            self.dt.send(
                "Network.emulateNetworkConditions",
                offline=True,
                latency=0,
                downloadThroughput=-1,
                uploadThroughput=-1,
            )
        self.dt.events.clear()
        url = path.as_uri()
        self.dt.send("Page.navigate", url=url)
        self.dt.wait_event("Page.loadEventFired", timeout=60)
        self.wait("document.querySelectorAll('.vega svg').length === "
                  "document.querySelectorAll('.vega').length")  # fmt: skip
        return url

    def eval(self, expression: str):
        res = self.dt.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in res:
            raise AssertionError(res["exceptionDetails"])
        return res["result"].get("value")

    def wait(self, expression: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.eval(f"Boolean({expression})"):
            assert time.monotonic() < deadline, f"timed out waiting for {expression}"
            time.sleep(0.1)

    def screenshot(self, full: bool = False) -> bytes:
        params = {"format": "png"}
        if full:
            h = int(self.eval("document.documentElement.scrollHeight"))
            params.update(
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": self.width, "height": h, "scale": 1},
            )
        return base64.b64decode(self.dt.send("Page.captureScreenshot", **params)["data"])

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.dt.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def errors(self) -> list[dict]:
        return [
            e
            for e in self.dt.events
            if e.get("method") == "Runtime.exceptionThrown"
            or (
                e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error"
            )
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
        ]

    def __exit__(self, *exc) -> None:
        dt = getattr(self, "dt", None)
        if dt is not None:
            dt.close()
        os.killpg(self.proc.pid, 15)
        self.proc.wait(timeout=30)


def _scores():
    """Three runs on one test set; costs make the cheapest run differ from the best-AP run."""
    rng = np.random.default_rng(0)
    y = rng.random(8000) < 0.05
    runs = {
        "wide <b>net</b>": rng.normal(size=y.size) + 1.3 * y,
        "sharp": np.where(y & (rng.random(y.size) < 0.3), 4.0, 0.0) + rng.normal(size=y.size),
        "middle": rng.normal(size=y.size) + 1.0 * y,
    }
    return y, runs


def _lowest_cost_run(y, runs, eta, cost_fp, cost_fn):
    """Independent reference: min over thresholds of the expected cost, with scikit-learn."""
    from sklearn.metrics import roc_curve

    best = {}
    for name, s in runs.items():
        fpr, tpr, _ = roc_curve(y, s)  # includes (0, 0) and (1, 1)
        best[name] = float(np.min((1 - eta) * cost_fp * fpr + eta * cost_fn * (1 - tpr)))
    return min(best, key=best.get), best


def _precision_at_cost_optimum(y, s, eta, cost_fp, cost_fn):
    """Precision at eta of the cost-optimal threshold (scikit-learn ROC, reweighted by eta)."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    cost = (1 - eta) * cost_fp * fpr + eta * cost_fn * (1 - tpr)
    i = int(np.flatnonzero(cost == cost.min())[0])  # lowest FPR among ties
    return eta * tpr[i] / (eta * tpr[i] + (1 - eta) * fpr[i])


def _cost_optimal_index(c, y, s, eta, cost_fp, cost_fn) -> int:
    """Index into ``c`` of the cost-optimal threshold found with scikit-learn's ROC."""
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    cost = (1 - eta) * cost_fp * fpr + eta * cost_fn * (1 - tpr)
    t = thr[int(np.flatnonzero(cost == cost.min())[0])]  # lowest FPR among ties
    k = int(np.searchsorted(-c.thresholds, -t))
    assert c.thresholds[k] == t
    return k


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> tuple[Path, dict]:
    y, runs = _scores()
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in runs.items()}
    rep = mi.build_report(
        counts, prevalences=[1e-3, 1e-2], costs={"fp": 1, "fn": 200}, n_bootstrap=60,
        title="browser test", progress=False,
    )  # fmt: skip
    path = rep.save(tmp_path_factory.mktemp("report") / "report.html")
    return path, {"y": y, "runs": runs, "report": rep}


def test_report_in_headless_chromium(report_file, browser) -> None:
    path, ref = report_file
    y, runs = ref["y"], ref["runs"]
    with browser.at(1000, 900) as page:
        url = page.open(path)
        info = page.eval("""JSON.stringify({
          charts: document.querySelectorAll('.vega').length,
          drawn: [...document.querySelectorAll('.vega svg')].map(s => s.querySelectorAll(
            'path, line').length),
          scripts: [...document.scripts].map(s => [s.type, s.src]),
          title: document.title,
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          tableOverflow: [...document.querySelectorAll('.table-wrap')].map(e =>
            e.scrollWidth - e.clientWidth),
          fontMin: Math.min(...[...document.querySelectorAll('.vega svg text')].map(t =>
            parseFloat(getComputedStyle(t).fontSize))),
          widths: [...document.querySelectorAll('figure.chart')].map(f =>
            Math.round(f.getBoundingClientRect().width)),
          verdicts: [...document.querySelectorAll('#verdict [data-prevalence]')].map(e =>
            [Number(e.dataset.prevalence), e.dataset.run, e.textContent]),
          error: document.getElementById('live-error').textContent
        })""")  # fmt: skip
        info = json.loads(info)
        shot = page.screenshot()
        # the prevalence control: type eta into the box, dispatch input
        eta = 3e-3
        page.eval(
            f"(() => {{ const b = document.getElementById('prevalence'); b.value = '{eta}'; "
            "b.dispatchEvent(new Event('input', {bubbles: true})); })()"
        )
        live = json.loads(page.eval("""JSON.stringify({
          run: document.getElementById('verdict-live').dataset.run,
          eta: Number(document.getElementById('verdict-live').dataset.prevalence),
          rows: [...document.querySelectorAll('#live-table tbody tr')].map(r => [r.dataset.run,
            ['precision', 'recall'].map(c => { const td = r.querySelector('[data-col=' + c + ']');
              const ci = td.querySelector('.ci');
              return [td.firstChild.textContent, ci ? ci.textContent : null]; })]),
          text: document.querySelector('#verdict-live .live-text').textContent,
          slider: Number(document.getElementById('prevalence-slider').value)
        })"""))  # fmt: skip
        errors = page.errors()
        requests = page.requests()
    # nothing but the file itself was requested (and the page ran offline)
    assert requests and requests[0] == url
    assert not [u for u in requests if not u.startswith(("data:", url))], requests
    assert not errors, errors[:3]
    assert info["error"] == ""
    assert info["title"] == "browser test"
    # scripts: inline only (data blocks, the Vega bundle, the page's own, its print script)
    assert all(src == "" for _, src in info["scripts"]) and len(info["scripts"]) == 5
    assert info["charts"] >= 3 and all(n > 10 for n in info["drawn"]), info["drawn"]
    assert info["fontMin"] >= 11, info["fontMin"]
    assert len(set(info["widths"])) == 1, info["widths"]  # every chart the same width
    # no horizontal overflow at 1000 px
    assert info["innerWidth"] == 1000
    assert info["scrollWidth"] <= info["innerWidth"], info["scrollWidth"]
    # ... and no table scrolls sideways inside its box either
    assert info["tableOverflow"] and max(info["tableOverflow"]) <= 0, info["tableOverflow"]
    # the verdict names the run with the lowest expected cost (independent computation)
    assert [v[0] for v in info["verdicts"]] == [1e-3, 1e-2]
    for eta_v, run, text in info["verdicts"]:
        want, _ = _lowest_cost_run(y, runs, eta_v, 1, 200)
        assert run == want and want in text, (eta_v, run, want)
    # the live control: verdict and precision at the typed eta equal Python's
    want, _ = _lowest_cost_run(y, runs, eta, 1, 200)
    assert live["eta"] == eta and live["run"] == want
    assert abs(live["slider"] - np.log10(eta)) <= 0.005  # the slider follows (step 0.01)
    shown = dict(live["rows"])
    assert set(shown) == set(runs)
    for name, s in runs.items():
        py = _precision_at_cost_optimum(y, s, eta, 1, 200)
        (prec, prec_ci), (_, rec_ci) = shown[name]
        assert float(prec) == pytest.approx(float(f"{py:.3g}"), rel=1e-12), (name, py)
        # the intervals are the verdict's construction (valid after choosing the threshold)
        # at the page's operating point: Python's selected_point_interval there
        c = mi.RocCounts.from_scores(y, s)
        k = _cost_optimal_index(c, y, s, eta, 1, 200)
        sp = mi.uncertainty.selected_point_interval(c, k, eta)
        for text, lo, hi in (
            (prec_ci, sp.precision_low, sp.precision_high),
            (rec_ci, sp.recall_low, sp.recall_high),
        ):
            got = [float(x) for x in text.strip("[]").split(",")]
            assert got == [pytest.approx(float(f"{v:.3g}"), rel=1e-12) for v in (lo, hi)], (
                name, text, lo, hi,
            )  # fmt: skip
        if name == want:  # the live sentence carries the same intervals
            assert f"precision {prec} {prec_ci}, recall" in live["text"], live["text"]
            assert rec_ci in live["text"], live["text"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    (ARTIFACTS / "report-chromium.png").write_bytes(shot)


def test_tables_fit_a_narrow_window(report_file, browser) -> None:
    """At 800 px every column of the per-prevalence tables (six, with costs) is in view
    without sideways scrolling: the "best" badge gives way to the green cell and its "#1";
    run names wrap. The run column is sticky for wider tables."""
    path, _ = report_file
    with browser.at(800, 900) as page:
        page.open(path)
        info = json.loads(page.eval("""JSON.stringify({
          page: document.documentElement.scrollWidth - window.innerWidth,
          tables: [...document.querySelectorAll('.table-wrap')].map(e =>
            [e.closest('section').id, e.scrollWidth - e.clientWidth]),
          columns: [...document.querySelectorAll('.ptable table.summary thead')].map(h =>
            h.querySelectorAll('th').length),
          badges: [...document.querySelectorAll('.ptable td .badge.ok')].map(b =>
            getComputedStyle(b).display),
          sticky: getComputedStyle(document.querySelector('.ptable tbody th.name')).position
        })"""))  # fmt: skip
        assert not page.errors(), page.errors()[:2]
    assert info["page"] <= 0, info["page"]
    assert info["columns"] and min(info["columns"]) == 7, info["columns"]  # run + 6 metrics
    assert info["tables"] and max(o for _, o in info["tables"]) <= 0, info["tables"]
    assert info["badges"] and set(info["badges"]) == {"none"}
    assert info["sticky"] == "sticky"


def test_run_card_tables_fit_a_narrow_window(tracking_uri, tmp_path: Path, browser) -> None:
    """The run card (what MLflow's artifact pane shows) at 800 px: the metrics table's eight
    columns, each value with its interval (the lowest cost's too), fit without sideways
    scrolling; headers wrap instead. At 1400 px nothing wraps (the headers stay one line).
    With a production batch logged (issue 33) the card shows its estimate's sentence, in
    view, at both widths (screenshots kept with the test artifacts)."""
    import mlflow
    from mlflow.tracking import MlflowClient

    rng = np.random.default_rng(3)
    y = rng.random(20000) < 0.02
    with mlflow.start_run(run_name="card width") as run:
        mi.log_scores(y, rng.normal(size=y.size) + 2.2 * y, prevalences=[1e-2, 1e-3, 1e-4],
                      costs=(1, 100))  # fmt: skip
    pos = rng.random(50_000) < 0.005
    prod = mi.log_production_scores(rng.normal(size=pos.size) + 2.2 * pos, batch="w1",
                                    run_id=run.info.run_id)  # fmt: skip
    local = Path(
        MlflowClient().download_artifacts(run.info.run_id, "imbalance/test", str(tmp_path))
    )
    probe = """JSON.stringify({
      page: document.documentElement.scrollWidth - window.innerWidth,
      tables: [...document.querySelectorAll('.table-wrap')].map(e => e.scrollWidth - e.clientWidth),
      columns: document.querySelector('.table-wrap thead tr').children.length,
      cis: document.querySelector('.table-wrap tbody tr').querySelectorAll('.ci').length,
      production: (() => { const all = [...document.querySelectorAll('h2')].map(h =>
        h.textContent);
        return all.includes('Deployment prevalence from production') ? document.body.innerText
          : ''; })(),
      lines: (() => { const r = document.createRange();
        r.selectNodeContents(document.querySelector('.table-wrap thead th:nth-child(6)'));
        return r.getClientRects().length; })()
    })"""  # fmt: skip
    got = {}
    for width in (800, 1400):
        with browser.at(width, 900) as page:
            page.open(local / "card.html")
            got[width] = json.loads(page.eval(probe))
            assert not page.errors(), page.errors()[:2]
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"card-production-{width}.png").write_bytes(page.screenshot(full=True))
    for width, info in got.items():
        assert info["page"] <= 0 and max(info["tables"]) <= 0, (width, info)
        assert info["columns"] == 8 and info["cis"] == 6, (width, info)  # 5 metrics + cost
    assert got[800]["lines"] == 2 and got[1400]["lines"] == 1  # "precision at max F1" wraps
    for info in got.values():  # the estimator's own sentence, as the report's row shows it
        assert f"batch w1 (50,000 cases): {prod.estimate.text}" in info["production"]


def test_live_bounds_bracket_the_point_by_its_integer_counts(tmp_path: Path, browser) -> None:
    """Sweep η through the live control on a run whose counts do not survive ``TPR * n_pos`` in
    floating point (1,877 positives; scores on a 0.25 grid, so every threshold is a candidate
    or next to one): at every η the page's precision and recall intervals equal Python's
    ``selected_point_interval`` at the page's operating point. Guarded: the sweep visits points
    where bracketing by the float products instead of the integer counts gives other bounds.
    Built without bootstrap replicates (``n_bootstrap=0``): the control must not feed the PR
    chart a band its spec does not declare (it threw "Unrecognized data set" there), and no
    "Bands" control is offered."""
    from mlflow_imbalance.stats.decision import candidate_limits

    rng = np.random.default_rng(1)
    n_pos, n_neg = 1877, 50000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    s = np.floor(np.r_[rng.normal(2.0, 1, n_pos), rng.normal(0, 1, n_neg)] / 0.25) * 0.25
    c = mi.RocCounts.from_scores(y, s)
    lim = candidate_limits(c)
    rep = mi.build_report(
        {"grid": c},
        prevalences=[1e-3],
        costs={"fp": 1, "fn": 200},
        n_bootstrap=0,
        prevalence_range=(1e-5, 0.5),
        progress=False,
    )  # the sweep below stays inside the control's range (outside it the control clamps)
    path = rep.save(tmp_path / "report.html")
    etas = np.geomspace(1e-5, 0.5, 60)
    with browser.at(1000, 900) as page:
        page.open(path)
        shown = json.loads(page.eval(
            "JSON.stringify(" + json.dumps([float(e) for e in etas]) + ".map(eta => {"
            " const b = document.getElementById('prevalence'); b.value = String(eta);"
            " b.dispatchEvent(new Event('input', {bubbles: true}));"
            " const r = document.querySelector('#live-table tbody tr');"
            " return ['threshold', 'precision', 'recall'].map(k => {"
            "   const td = r.querySelector('[data-col=' + k + ']'), ci = td.querySelector('.ci');"
            "   return [td.firstChild.textContent, ci ? ci.textContent : null]; }); }))"
        ))  # fmt: skip
        assert not page.errors(), json.dumps(page.errors()[:2])[:3000]
        # no band is drawn, so the page offers no "Bands" control
        assert page.eval("document.querySelectorAll('select.bands').length") == 0
    visited = set()
    for eta, ((thr, _), (_, prec_ci), (_, rec_ci)) in zip(etas, shown, strict=True):
        (k,) = np.flatnonzero(c.thresholds == float(thr))  # thresholds are multiples of 0.25
        visited.add(int(k))
        sp = mi.uncertainty.selected_point_interval(c, int(k), float(eta), limits=lim)
        for text, lo, hi in (
            (prec_ci, sp.precision_low, sp.precision_high),
            (rec_ci, sp.recall_low, sp.recall_high),
        ):
            got = [float(x) for x in text.strip("[]").split(",")]
            assert got == [pytest.approx(float(f"{v:.3g}"), rel=1e-12) for v in (lo, hi)], (
                eta, thr, text, lo, hi,
            )  # fmt: skip
    # the sweep reaches points where float products (what the page used before) bracket wrongly
    floats = {
        k for k in visited
        if lim.bracket(float(c.tp[k]), float(c.fp[k]))
        != lim.bracket(c.tp[k] / n_pos * n_pos, c.fp[k] / n_neg * n_neg)
    }  # fmt: skip
    assert floats, sorted(visited)


def test_csp_allows_inline_only(report_file) -> None:
    """The Content-Security-Policy meta tag: inline scripts/styles, data: images, no network."""
    path, _ = report_file
    html = path.read_text(encoding="utf-8")
    import re

    m = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert m, "no CSP meta tag"
    import html as _html

    policy = _html.unescape(m.group(1))
    csp = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'unsafe-inline'"]  # no eval, no URL
    assert csp["style-src"] == ["'unsafe-inline'"]
    assert csp["img-src"] == ["data:"]


def test_live_numbers_are_formatted_as_the_tables(tmp_path: Path, browser) -> None:
    """The live table's formatters (templates/_live.js.j2) and the static tables' and verdict's
    (Python ``_fmt``, ``count``) give the same text, so a number reads the same in both views
    (the live one printed '9264' and '1.235e5' where the tables print '9,264' and '123,457').
    Exact decimal ties are rounded to even as Python does (JS rounds them up: 1234.5 read
    '1,235' live and '1,234' in the table)."""
    import re

    from mlflow_imbalance.report import template_dir
    from mlflow_imbalance.report.analysis.verdict import count
    from mlflow_imbalance.report.render import _fmt, _fmt_eta, _fmt_int

    js = (template_dir() / "_live.js.j2").read_text(encoding="utf-8")
    funcs = []
    for name in ("pyRound", "roundSig", "fmt", "fmtInt", "fmtEta"):
        m = re.search(rf"\n  function {name}\(.*?\n  \}}\n", js, re.S)
        assert m, f"{name}() not found in the page script"
        funcs.append(m.group(0))
    cases = [
        (9264.3, 4), (9999.7, 4), (999.96, 3), (123456.4, 4), (0.12345, 4), (12.5, 3),
        (0.00012, 4), (2e9 + 0.5, 4), (0.0424, 3), (0.8637218, 4), (6426.0, 4), (0.0, 4),
        (-0.25, 3), (31.4159, 4), (1.5e-7, 3), (9.99999e-4, 3), (9.99949e8, 4),
        # exact ties (binary fractions): to even, as Python
        (1234.5, 4), (1235.5, 4), (0.0078125, 4), (12344.5, 4), (1_234_500_000.0, 4),
        (-0.125, 2), (0.375, 2), (2.5, 1), (0.5, 1), (1e-20, 3), (3.5e22, 3),
    ]  # fmt: skip
    # and many more: binary fractions (ties at some digit), and plain doubles over 18 decades
    rng = np.random.default_rng(11)
    ties = rng.integers(1, 10**6, 300) * 2.0 ** -rng.integers(0, 22, 300)
    plain = 10.0 ** rng.uniform(-8, 10, 300) * rng.choice([-1, 1], 300)
    cases += [(float(x), int(d)) for x, d in zip(ties, rng.integers(1, 5, 300), strict=True)]
    cases += [(float(x), int(d)) for x, d in zip(plain, rng.integers(1, 5, 300), strict=True)]
    counts = [12.5, 13.5, -12.5, 0.25, 0.35, 2.5, 9.95, 10.0, 1234567.5, 0.04, 0.0]
    counts += [float(x) for x in ties[:100] / 64] + [float(x) for x in plain[:100]]
    # prevalences as the live verdict writes them (0.3125 is a tie at 3 digits: "0.312")
    etas = [0.3125, 0.1875, 0.5, 1e-3, 9.9996e-4, 2.5e-4, 1.25e-5, 0.0736, 0.0123456]
    etas += [float(x) for x in 10.0 ** rng.uniform(-6, np.log10(0.5), 200)]
    page_html = tmp_path / "fmt.html"
    page_html.write_text(f"<!doctype html><script>{''.join(funcs)}</script>", encoding="utf-8")
    with browser.at(800, 600) as page:
        page.open(page_html)
        got = json.loads(
            page.eval(f"JSON.stringify({json.dumps(cases)}.map(c => fmt(c[0], c[1])))")
        )
        got_counts = json.loads(page.eval(f"JSON.stringify({json.dumps(counts)}.map(fmtInt))"))
        got_etas = json.loads(page.eval(f"JSON.stringify({json.dumps(etas)}.map(fmtEta))"))
    assert got == [_fmt(x, d) for x, d in cases]
    assert got_counts == [count(x, _fmt_int) for x in counts]
    assert got_etas == [_fmt_eta(x) for x in etas]


def test_live_verdict_says_when_the_winner_is_not_shown_to_beat_chance(
    tmp_path: Path, browser
) -> None:
    """The live verdict carries the report verdict's chance sentence at the same η (scores
    independent of the labels: precision η at every threshold) and none for a real model."""
    rng = np.random.default_rng(5)
    y = rng.random(6000) < 0.03
    for scores, expect in (
        ({"noise": rng.normal(size=y.size)}, "At this threshold its alerts are not shown"),
        ({"good": rng.normal(size=y.size) + 2.5 * y}, None),
    ):
        counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
        rep = mi.build_report(counts, prevalences=[0.02], n_bootstrap=0, progress=False)
        (v,) = rep.verdict
        path = rep.save(tmp_path / f"{next(iter(scores))}.html")
        with browser.at(1000, 800) as page:
            page.open(path)
            page.eval(
                "(() => { const b = document.getElementById('prevalence'); b.value = '0.5'; "
                "b.dispatchEvent(new Event('input', {bubbles: true})); b.value = '0.02'; "
                "b.dispatchEvent(new Event('input', {bubbles: true})); })()"
            )
            live = page.eval("document.querySelector('#verdict-live .live-text').textContent")
            errors = page.errors()
        assert not errors, errors[:3]
        if expect is None:
            assert v.chance == "" and "at random" not in live and "flags every case" not in live
        else:
            assert v.chance == "interval"
            sentence = v.text[v.text.index(expect) :].split(" Runner-up")[0]
            assert sentence in live, (sentence, live)


#: Visible words (tokens with a letter) before the first chart: a reviewer reads them in a minute.
WORDS_BEFORE_FIRST_CHART = r"""(() => {
  const first = document.querySelector('.vega');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const words = [];
  while (walker.nextNode()) {
    const n = walker.currentNode;
    if (first.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING) break;
    const el = n.parentElement;
    if (!el || el.closest('script,style') || !el.checkVisibility({checkVisibilityCSS: true})) {
      continue;
    }
    words.push(...n.textContent.split(/\s+/).filter(w => /\p{L}/u.test(w)));
  }
  return words;
})()"""
#: Where the first chart starts (px from the top of the page).
FIRST_CHART_TOP = "document.querySelector('.vega').getBoundingClientRect().top + window.scrollY"
#: Tables wider than their box (they would scroll sideways) and cells hidden by the layout.
TABLES_THAT_SCROLL = r"""(() => ({
  wide: [...document.querySelectorAll('.table-wrap')]
    .filter(w => w.scrollWidth > w.clientWidth + 1 && w.checkVisibility())
    .map(w => (w.querySelector('table') || w).className),
  hidden: [...document.querySelectorAll('table th, table td')]
    .filter(c => getComputedStyle(c).display === 'none').length,
}))()"""


def assert_first_screen(path: Path, browser: Chromium) -> dict[int, bytes]:
    """Issue 37's first screen, in Chromium: at 1400 px at most 150 visible words before the
    first chart and that chart within the first 900 px; at 800 px nothing scrolls sideways, no
    table scrolls inside its box and no table cell is hidden to get there. Screenshots back."""
    shots = {}
    with browser.at(1400, 900) as page:
        page.open(path)
        words = page.eval(WORDS_BEFORE_FIRST_CHART)
        assert len(words) <= 150, (len(words), " ".join(words))
        assert page.eval(FIRST_CHART_TOP) <= 900, page.eval(FIRST_CHART_TOP)
        shots[1400] = page.screenshot(full=True)
    with browser.at(800, 1000) as page:
        page.open(path)
        assert page.eval("document.documentElement.scrollWidth") <= 800
        tables = page.eval(TABLES_THAT_SCROLL)
        assert tables == {"wide": [], "hidden": 0}, tables
        shots[800] = page.screenshot(full=True)
    return shots


def test_quick_start_report_reads_in_a_minute_and_agrees_with_its_verdict(
    quickstart_run, browser, request
) -> None:
    """The README's quick start, run as a user runs it: its report has at most 150 words before
    the first chart (visible text; collapsed details do not count), and no callout contradicts
    the verdict -- the decision criterion (expected cost, computed here from each run's counts
    independently of the report: the minimum over the ROC points of (1-η)·C_FP·FPR +
    η·C_FN·(1-TPR), Maxion & Roberts §5) names the same winner at the test prevalence and at every
    chosen η, so the page may not warn that the winner depends on the prevalence. The
    prevalence control refuses text that is no prevalence and clamps one outside its range,
    saying so. Screenshots at 1400 and 800 px are kept with the test artifacts. (The script
    runs in its own empty directory, started at collection: conftest's ``quickstart_run``.)"""
    res = quickstart_run.result(timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    path = quickstart_run.dir / "report.html"
    html = path.read_text(encoding="utf-8")
    import mlflow

    before = mlflow.get_tracking_uri()
    request.addfinalizer(lambda: mlflow.set_tracking_uri(before))  # no global left behind
    mlflow.set_tracking_uri(quickstart_run.tracking_uri)
    exp = ["mlflow-imbalance-quickstart"]
    runs = mlflow.search_runs(experiment_names=exp, output_format="list")
    winners = {}
    for eta in (1e-4, 1e-3, None):
        cost = {}
        for r in runs:
            c = mi.load_counts(r.info.run_id)
            e = c.prevalence if eta is None else eta
            t = np.r_[0.0, c.tp / c.n_pos]
            f = np.r_[0.0, c.fp / c.n_neg]
            cost[r.info.run_name] = float(np.min((1 - e) * f + e * 100 * (1 - t)))
        winners[eta] = min(cost, key=cost.get)
    assert len(set(winners.values())) == 1, winners  # the quick start's one answer
    assert "depends on the prevalence" not in html and "may depend" not in html
    # the production batch: the verdict is also given at its estimate, which the header shows
    # beside the title's truth (0.002), and whose interval must hold it at this size
    est = mi.list_production_batches(runs[0].info.run_id)["2026-w48"]["estimate"]
    assert est["interval"][0] <= 0.002 <= est["interval"][1]
    assert "η estimated from production:" in html and "truly 0.002" in html
    shots = assert_first_screen(path, browser)
    with browser.at(1400, 1000) as page:
        page.open(path)

        def typed(value: str, event: str = "change") -> dict:
            return json.loads(page.eval(
                f"(() => {{ const b = document.getElementById('prevalence'); b.value = '{value}';"
                f" b.dispatchEvent(new Event('{event}', {{bubbles: true}}));"
                " return JSON.stringify({box: b.value, invalid: b.getAttribute('aria-invalid'),"
                " error: document.getElementById('live-error').textContent,"
                " eta: Number(document.getElementById('verdict-live').dataset.prevalence)}); })()"
            ))  # fmt: skip

        hi = float(page.eval("document.getElementById('prevalence').dataset.max"))
        bad = typed("abc")
        assert bad["invalid"] == "true" and "is not a prevalence" in bad["error"], bad
        clamped = typed("0.6")
        assert clamped["eta"] == hi and clamped["box"] == str(hi), clamped
        assert "outside this report's range" in clamped["error"] and clamped["invalid"] is None
        fine = typed("1e-3")
        assert fine["eta"] == 1e-3 and fine["error"] == "", fine
        # each run's production estimate: one click puts the control there (3 significant
        # digits, as the verdict); an estimate of 0 jumps to its upper limit and says so
        jumps = json.loads(page.eval(
            "JSON.stringify([...document.querySelectorAll('button.jump')].map(b => { b.click();"
            " return [b.closest('tr').querySelector('th').textContent, b.title,"
            " Number(document.getElementById('verdict-live').dataset.prevalence)]; }))"
        ))  # fmt: skip
        logged = {
            r.info.run_name: mi.list_production_batches(r.info.run_id)["2026-w48"]["estimate"]
            for r in runs
        }
        assert sorted(name for name, *_ in jumps) == sorted(logged)
        for name, title, at in jumps:
            e = logged[name]
            if e["value"] > 0:
                assert at == float(f"{e['value']:.3g}") and "upper limit" not in title
            else:
                assert at == float(f"{e['interval'][1]:.3g}") and "upper limit" in title
        assert any(logged[n]["value"] == 0 for n, *_ in jumps)  # the quick start has one at 0
        assert not page.errors(), page.errors()[:2]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for w, png in shots.items():
        (ARTIFACTS / f"quickstart-report-{w}.png").write_bytes(png)


def test_production_batches_drift_chart_and_jump_to_each_estimate(tmp_path: Path, browser) -> None:
    """Issue 33 in the browser: two runs, each with two unlabeled production batches drawn under
    prior shift at η = 0.002 and 0.02 (continuous binormal scores). The per-batch table lists
    every (run, batch) with an estimate whose interval holds the truth, the drift chart is
    drawn, and clicking a batch's estimate moves the live control there: the live verdict's η is
    the button's, and its run is the one of lowest expected cost at that η, computed here with
    scikit-learn's ROC. Nothing overflows sideways at 1400 or 800 px (screenshots kept)."""
    rng = np.random.default_rng(33)
    mus = {"steady": 2.0, "spiky": 1.4}
    n_pos, n_neg = 400, 40_000
    y = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    scores = {k: rng.normal(size=y.size) + mu * y for k, mu in mus.items()}
    counts = {k: mi.RocCounts.from_scores(y, s) for k, s in scores.items()}
    truth = {"2026-w47": 0.002, "2026-w48": 0.02}
    production = {}
    for k, mu in mus.items():
        production[k] = {}
        for batch, eta in truth.items():
            pos = rng.random(200_000) < eta
            production[k][batch] = rng.normal(size=pos.size) + mu * pos
    rep = mi.build_report(
        counts, production=production, prevalences=[1e-3], costs={"fp": 1, "fn": 100},
        n_bootstrap=0, progress=False,
    )  # fmt: skip
    rows = rep.context["deployment"]["rows"]
    assert sorted((r["run"], r["batch"]) for r in rows) == sorted(
        (k, b) for k in mus for b in truth
    )
    for r in rows:  # the estimator's own intervals hold the truth here (400 / 40,000, N = 2e5)
        assert r["low"] <= truth[r["batch"]] <= r["high"], r
    path = rep.save(tmp_path / "report.html")
    shots = {}
    with browser.at(1400, 1000) as page:
        page.open(path)
        drift = page.eval(
            "(() => { const c = document.querySelector('#chart-drift svg');"
            " return c ? c.querySelectorAll('path, line, circle').length : -1; })()"
        )
        assert drift > 4, drift
        jumps = json.loads(page.eval(
            "JSON.stringify([...document.querySelectorAll('button.jump')].map(b => {"
            " b.click(); const v = document.getElementById('verdict-live');"
            " return [b.dataset.eta, Number(v.dataset.prevalence), v.dataset.run,"
            " document.getElementById('prevalence').value,"
            " v.querySelector('.live-text').textContent]; }))"
        ))  # fmt: skip
        assert len(jumps) == len(rows)
        for row, (want, eta, run, box, text) in zip(rows, jumps, strict=True):
            # the control lands on the estimate as the verdict rounds it (3 significant digits)
            assert eta == float(f"{row['estimate']:.3g}") == float(want) == float(box), (row, box)
            best, _ = _lowest_cost_run(y, scores, eta, 1, 100)
            assert run == best, (eta, run, best)
            if row["chosen"]:  # the live verdict there is the printed one's at the estimate
                assert rep.verdict[0].source == "estimated"  # decided over a range (issue 37)
                v = rep.verdict[0].at_estimate  # the decision at the point estimate alone
                assert v.prevalence == eta and v.run == run
                per = v.text[v.text.index("Per 10,000 cases:") :].split(" Runner-up")[0]
                assert per in text, (per, text)
        assert not page.errors(), page.errors()[:2]
        shots[1400] = page.screenshot(full=True)
        page.resize(800)
        page.open(path)
        assert page.eval("document.documentElement.scrollWidth") <= 800
        shots[800] = page.screenshot(full=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for w, png in shots.items():
        (ARTIFACTS / f"production-report-{w}.png").write_bytes(png)
