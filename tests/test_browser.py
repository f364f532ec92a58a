"""The report in real headless Chromium, driven over the DevTools protocol (stdlib websocket).

Asserts: the page loads with no console errors or exceptions, the only network request is the
file itself, every figure is present and decoded, and a screenshot is written to
``test-artifacts/`` for the test log.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse
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

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
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


@pytest.fixture
def report_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    counts = {}
    for name, sep in (("wide <b>net</b>", 1.2), ("sharp", 1.9)):
        y = rng.random(5000) < 0.05
        counts[name] = mi.RocCounts.from_scores(y, rng.normal(size=y.size) + sep * y)
    rep = mi.build_report(counts, prevalences=[1e-3], n_bootstrap=50, title="browser test")
    return rep.save(tmp_path / "report.html")


def test_report_in_headless_chromium(report_file: Path, tmp_path: Path) -> None:
    binary = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    profile = tmp_path / "profile"
    proc = subprocess.Popen(
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
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "--window-size=1280,900",
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
            assert proc.poll() is None, "chromium exited early"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        dt = DevTools(page["webSocketDebuggerUrl"])
        try:
            dt.send("Page.enable")
            dt.send("Runtime.enable")
            dt.send("Log.enable")
            dt.send("Network.enable")
            dt.events.clear()
            url = report_file.as_uri()
            dt.send("Page.navigate", url=url)
            dt.wait_event("Page.loadEventFired", timeout=60)
            state = dt.send(
                "Runtime.evaluate",
                expression="""JSON.stringify({
                  sections: [...document.querySelectorAll('.figure-section')].map(s =>
                    s.querySelectorAll('img, svg').length),
                  images: [...document.images].map(i => [i.complete, i.naturalWidth]),
                  scripts: document.scripts.length,
                  title: document.title,
                  width: document.documentElement.scrollWidth
                })""",
                returnByValue=True,
            )
            info = json.loads(state["result"]["value"])
            shot = dt.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        finally:
            dt.close()
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    requests = [
        e["params"]["request"]["url"]
        for e in dt.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    external = [u for u in requests if not u.startswith(("data:", url))]
    assert requests and requests[0] == url
    assert not external, external
    errors = [
        e
        for e in dt.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert not errors, errors[:3]
    assert info["scripts"] == 0 and info["title"] == "browser test"
    assert len(info["sections"]) >= 7 and all(n >= 1 for n in info["sections"])
    assert sum(info["sections"]) >= 11
    assert all(ok and w > 0 for ok, w in info["images"]), info["images"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (ARTIFACTS / "report-chromium.png").write_bytes(png)
