"""The report as a PDF: the HTML file printed by headless Chromium once its charts are drawn.

Chromium is driven over its DevTools protocol (a minimal WebSocket client on the standard
library, nothing to install but the browser): it loads the report from its file, waits until
every chart's SVG is in the page (Vega draws them after the load event, so a fixed
``--virtual-time-budget`` could print empty frames on a slow machine), fires ``beforeprint``
(the page's print script opens every collapsed section and writes the controls' state as
text) and calls ``Page.printToPDF`` without the browser's header and footer (no date, no file
path). The page is laid out at the printable width of the paper, so the charts are drawn at the
width they print at.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["PAPERS", "ChromiumNotFound", "check_paper", "find_chromium", "print_pdf"]

#: Paper sizes in inches (width, height).
PAPERS: dict[str, tuple[float, float]] = {"letter": (8.5, 11.0), "a4": (210 / 25.4, 297 / 25.4)}
#: Page margins in inches (12 mm), as the report's ``@page`` rule.
MARGIN_IN = 12 / 25.4
#: Environment variable naming the browser binary to use.
CHROMIUM_ENV = "MLFLOW_IMBALANCE_CHROMIUM"
_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
    "msedge",
)
_MAC_APPS = (
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
#: What to tell a user without Chromium.
INSTALL_HINT = (
    "install Chromium (e.g. `apt-get install chromium`, `brew install --cask chromium`) or "
    f"Google Chrome, or set {CHROMIUM_ENV} to the browser's path; or open the HTML report in a "
    "browser and print it to PDF from there (the report has a print layout)"
)
#: True once every chart's SVG is in the page (or a chart has failed: the page says which).
_CHARTS_DRAWN = (
    "(() => { const v = document.querySelectorAll('.vega');"
    " const e = document.getElementById('live-error');"
    " return [...v].every(el => el.querySelector('svg')) ||"
    " !!(e && /failed/.test(e.textContent)); })()"
)


class ChromiumNotFound(RuntimeError):
    """No Chromium-based browser was found to print the PDF with (the message says what to do)."""


def check_paper(paper: Any) -> str:
    """``paper`` as a key of :data:`PAPERS` (case-insensitive).

    Raises:
        ValueError: naming the argument and the accepted values.
    """
    key = str(paper).strip().lower() if isinstance(paper, str) else None
    if key not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(map(repr, PAPERS))}, got {paper!r}")
    return key


def find_chromium() -> str | None:
    """The path of a Chromium-based browser: ``$MLFLOW_IMBALANCE_CHROMIUM``, then the PATH."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if Path(given).exists() else shutil.which(given)
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return next((p for p in _MAC_APPS if Path(p).exists()), None)


def require_chromium() -> str:
    """:func:`find_chromium`, or :class:`ChromiumNotFound` saying how to get one."""
    found = find_chromium()
    if found is None:
        raise ChromiumNotFound(f"no Chromium or Chrome found to print the PDF: {INSTALL_HINT}")
    return found


def print_pdf(
    html_path: str | os.PathLike[str],
    pdf_path: str | os.PathLike[str],
    *,
    paper: str = "letter",
    timeout: float = 120.0,
    browser: str | None = None,
) -> Path:
    """Print a report's HTML file to ``pdf_path`` through headless Chromium.

    Args:
        html_path: the report's HTML file (written by :meth:`Report.save`).
        pdf_path: where to write the PDF (written atomically).
        paper: ``"letter"`` or ``"a4"``.
        timeout: seconds to wait for the browser and the charts.
        browser: the browser binary (default: :func:`find_chromium`).

    Returns:
        The PDF's path.

    Raises:
        ValueError: a bad ``paper``.
        ChromiumNotFound: no browser.
        RuntimeError: the browser failed or timed out (the message says where).
    """
    paper = check_paper(paper)
    binary = browser or require_chromium()
    width, height = PAPERS[paper]
    printable_px = round((width - 2 * MARGIN_IN) * 96)
    url = Path(html_path).resolve().as_uri()
    with _Browser(binary, timeout, printable_px) as page:
        page.load(url)
        page.wait_for(_CHARTS_DRAWN, what="the report's charts to be drawn")
        page.send("Runtime.evaluate", expression="document.fonts.ready", awaitPromise=True)
        # the page's print script opens collapsed sections and writes the controls as text
        page.send("Runtime.evaluate", expression="window.dispatchEvent(new Event('beforeprint'))")
        result = page.send(
            "Page.printToPDF",
            paperWidth=width,
            paperHeight=height,
            marginTop=MARGIN_IN,
            marginBottom=MARGIN_IN,
            marginLeft=MARGIN_IN,
            marginRight=MARGIN_IN,
            printBackground=True,
            displayHeaderFooter=False,
            preferCSSPageSize=False,
        )
    data = base64.b64decode(result["data"])
    target = Path(pdf_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    logger.info("printed %s to %s (%s, %d bytes)", html_path, target, paper, len(data))
    return target


class _Browser:
    """A headless Chromium with one page, driven over DevTools; a context manager."""

    def __init__(self, binary: str, timeout: float, width: int) -> None:
        self.binary, self.timeout, self.width = binary, timeout, width
        self.deadline = time.monotonic() + timeout

    def __enter__(self) -> _Browser:
        self.profile = tempfile.mkdtemp(prefix="mlflow-imbalance-pdf-")
        args = [
            self.binary,
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={self.profile}",
            "--remote-debugging-port=0",
            f"--window-size={self.width},1000",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.insert(2, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        try:
            self.proc = subprocess.Popen(
                args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise ChromiumNotFound(f"could not start {self.binary}: {exc}; {INSTALL_HINT}") from exc
        try:
            self.ws = _WebSocket(self._page_ws_url())
            for domain in ("Page", "Runtime"):
                self.send(f"{domain}.enable")
            self.send(
                "Emulation.setDeviceMetricsOverride",
                width=self.width,
                height=1000,
                deviceScaleFactor=1,
                mobile=False,
            )
        except BaseException:
            self.__exit__()
            raise
        return self

    def _page_ws_url(self) -> str:
        port_file = Path(self.profile) / "DevToolsActivePort"
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited with status {self.proc.returncode}")
            self._check_time("the browser to start")
            time.sleep(0.05)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            pages = [t for t in json.load(resp) if t.get("type") == "page"]
        if not pages:
            raise RuntimeError(f"{self.binary} opened no page")
        return str(pages[0]["webSocketDebuggerUrl"])

    def _check_time(self, what: str) -> None:
        if time.monotonic() > self.deadline:
            raise RuntimeError(f"timed out after {self.timeout:g} s waiting for {what}")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; its result (events are dropped)."""
        return self.ws.call(method, params, self.deadline)

    def load(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.ws.events.clear()
        self.send("Page.navigate", url=url)
        self.ws.wait_event("Page.loadEventFired", self.deadline)

    def wait_for(self, expression: str, what: str) -> None:
        """Poll a JavaScript expression until it is true."""
        while True:
            res = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
            if res.get("result", {}).get("value"):
                return
            self._check_time(what)
            time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)


class _WebSocket:
    """A minimal RFC 6455 client (text frames, client masking) for the DevTools protocol."""

    def __init__(self, url: str) -> None:
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("the browser closed the DevTools connection")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"DevTools handshake refused: {head[:80]!r}")
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise RuntimeError("the browser closed the DevTools connection")
            buf += chunk
        return bytes(buf)

    def _message(self, deadline: float) -> dict[str, Any]:
        data = b""
        while True:
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                b0, b1 = self._exact(2)
            except TimeoutError:
                raise RuntimeError("timed out waiting for the browser") from None
            length = b1 & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._exact(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(length)
            if b0 & 0x0F in (0x8, 0x9, 0xA):  # close, ping, pong: not part of a message
                if b0 & 0x0F == 0x8:
                    raise RuntimeError("the browser closed the DevTools connection")
                continue
            data += payload
            if b0 & 0x80:  # FIN
                return json.loads(data)

    def call(self, method: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = bytes([0x81, 0x80 | n])
        elif n < 65536:
            header = bytes([0x81, 0x80 | 126]) + struct.pack(">H", n)
        else:
            header = bytes([0x81, 0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)
        while True:
            msg = self._message(deadline)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed in the browser: {msg['error']}")
                return dict(msg.get("result", {}))
            self.events.append(msg)

    def wait_event(self, method: str, deadline: float) -> dict[str, Any]:
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        while True:
            msg = self._message(deadline)
            self.events.append(msg)
            if msg.get("method") == method:
                return msg

    def close(self) -> None:
        self.sock.close()
