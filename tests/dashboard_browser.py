"""Drive the real dashboard in headless Chromium: start `judgepool ui`, wait, take a screenshot.

`serve_dashboard` starts `judgepool --db DB ui --port PORT` in its own process group and waits
for Streamlit's health endpoint; `capture` opens a page in headless Chromium through the
DevTools protocol (a websocket, `websockets` ships with Streamlit), waits until a JavaScript
condition holds (the page's figures are drawn and no script run is in progress), and saves a PNG.
Used by tests/test_dashboard_e2e.py and docs/make_screenshot.py.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The browser `judgepool doctor` reports is the one these tests drive.
from judgepool.api.doctor import find_chromium as find_chromium

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--mute-audio",
)
# Drawn = the page's text is there, Streamlit is not running a script, no element is still a
# loading placeholder, every visible chart is painted.
DRAWN = """(() => {
  const text = document.body ? document.body.innerText : "";
  const running = [...document.querySelectorAll('[data-testid="stStatusWidget"]')]
    .some(e => /Running|Connecting/i.test(e.innerText));
  const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter(c => c.offsetParent !== null);  // a chart in a tab not shown is never painted
  const painted = charts.every(c => c.querySelector("canvas, svg"));
  const loading = document.querySelector('[data-testid="stSkeleton"]');
  return text.includes(%s) && !running && !loading && charts.length >= %d && painted;
})()"""


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                return str(reply.read().decode())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@dataclass
class Served:
    """A running `judgepool ui`; `output` is what it printed, filled in once it stopped."""

    process: subprocess.Popen[str]
    output: str = ""


@contextmanager
def serve_dashboard(db: Path, port: int, timeout: float = 60, cwd: Path = REPO) -> Iterator[Served]:
    """`judgepool --db DB ui --port PORT` in `cwd`, ready to answer; stopped (SIGTERM) on exit."""
    server = subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", "--db", str(db), "ui", "--port", str(port)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    served = Served(server)
    try:
        _wait_http(f"http://127.0.0.1:{port}/_stcore/health", timeout)
        yield served
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            served.output = server.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)  # the group we created: us and our server
            served.output = server.communicate()[0]


class DevTools:
    """One DevTools connection: a command waits for its own reply; the events that arrive in
    between are kept in `seen` when `keep_events` (tests/html_browser.py reads them), else
    skipped."""

    def __init__(self, ws: Any, keep_events: bool = False) -> None:
        self.ws = ws
        self.next_id = 0
        self.keep_events = keep_events
        self.seen: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            if self.keep_events:
                self.seen.append(reply)


class BrowserPage(DevTools):
    """One tab of headless Chromium, driven over the DevTools protocol."""

    def __init__(self, ws: Any, size: tuple[int, int]) -> None:
        super().__init__(ws)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            self.session,
            width=size[0],
            height=size[1],
            deviceScaleFactor=1,
            mobile=False,
        )

    def watch(self) -> None:
        """From now on keep the page's requests, console messages and errors (`recorded`)."""
        self.keep_events = True
        for domain in ("Network", "Runtime", "Log"):
            self.call(f"{domain}.enable", self.session)

    def recorded(self) -> Any:
        """What the page did since `watch` (or the last `recorded`): a tests.html_browser
        PageLoad with its requests and console errors and warnings; the record starts again."""
        from tests.html_browser import PageLoad, _record

        self.evaluate("1")  # reads the events that arrived meanwhile
        load = PageLoad()
        for event in self.seen:
            _record(load, event)
        self.seen.clear()
        return load

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        found = self.call(
            "Runtime.evaluate", self.session, expression=expression, returnByValue=True
        )
        return found.get("result", {}).get("value")

    def open(self, url: str) -> None:
        """Navigate to `url` (returns at once; use `wait_until_drawn`)."""
        self.call("Page.navigate", self.session, url=url)

    def wait_until_drawn(self, text: str, charts: int = 0, timeout: float = 60) -> None:
        """Wait until the page shows `text`, `charts` painted charts and no run in progress."""
        check = DRAWN % (json.dumps(text), charts)
        deadline = time.monotonic() + timeout
        while self.evaluate(check) is not True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page did not show {text!r} in {timeout} s")
            time.sleep(0.25)

    def press(self, key: str) -> None:
        """Type one key (a letter or digit) as a person would, on whatever has the focus."""
        code = f"Digit{key}" if key.isdigit() else f"Key{key.upper()}"
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                self.session,
                type=kind,
                key=key,
                code=code,
                text=key if kind == "keyDown" else "",
                windowsVirtualKeyCode=ord(key.upper()),
            )

    def click(self, selector: str, containing: str) -> None:
        """Click, with the mouse as a person does, the first `selector` element whose text has
        `containing` (scrolled into view first)."""
        found = self.evaluate(
            f"""(() => {{
              const el = [...document.querySelectorAll({json.dumps(selector)})]
                .find(e => e.innerText.includes({json.dumps(containing)}));
              if (!el) return null;
              el.scrollIntoView({{block: "center"}});
              const r = el.getBoundingClientRect();
              return [r.left + Math.min(12, r.width / 2), r.top + r.height / 2];
            }})()"""
        )
        if not found:
            raise LookupError(f"no {selector} with {containing!r} on the page")
        self.click_at(*found)

    def click_at(self, x: float, y: float) -> None:
        """A left click of the mouse at viewport coordinates (x, y)."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                self.session,
                type=kind,
                x=x,
                y=y,
                button="left",
                clickCount=1,
            )

    def click_table_row(self, table: int, row: int) -> None:
        """Click the selection box of row `row` (0 = first) of the page's `table`-th dataframe
        (negative: from the end). Streamlit draws tables on a canvas, rows 35 px high under a
        35 px header, the selection boxes in the first 30 px."""
        found = self.evaluate(
            f"""(() => {{
              const all = [...document.querySelectorAll('[data-testid="stDataFrame"]')];
              const el = all.at({int(table)});
              if (!el) return null;
              el.scrollIntoView({{block: "center"}});
              const r = el.getBoundingClientRect();
              return [r.left + 15, r.top + 35 + 35 * {int(row)} + 17];
            }})()"""
        )
        if not found:
            raise LookupError(f"no dataframe number {table} on the page")
        self.click_at(*found)

    def text(self) -> str:
        """The page's visible text."""
        return str(self.evaluate("document.body.innerText"))

    def screenshot(self, out: Path) -> None:
        """Save what the viewport shows as a PNG."""
        time.sleep(0.5)  # let the last paint settle (fonts, chart transitions)
        shot = self.call("Page.captureScreenshot", self.session, format="png")
        out.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def browser_page(browser: str, size: tuple[int, int] = (1400, 1000)) -> Iterator[BrowserPage]:
    """Headless Chromium with a fresh profile, one tab; closed (with its helpers) on exit."""
    from websockets.sync.client import connect

    port = free_port()
    with tempfile.TemporaryDirectory(
        prefix="judgepool-chromium-", ignore_cleanup_errors=True
    ) as profile:
        chrome = subprocess.Popen(
            [
                browser,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--remote-debugging-port={port}",
                f"--window-size={size[0]},{size[1]}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            version = json.loads(_wait_http(f"http://127.0.0.1:{port}/json/version", 30))
            with connect(version["webSocketDebuggerUrl"], max_size=64 * 2**20) as ws:
                yield BrowserPage(ws, size)
        finally:
            chrome.terminate()
            try:
                chrome.wait(timeout=10)
            except subprocess.TimeoutExpired:
                chrome.kill()
                chrome.wait()
            with suppress(ProcessLookupError):  # helpers of the browser we started, if any left
                os.killpg(chrome.pid, signal.SIGKILL)


def capture(
    browser: str,
    url: str,
    out: Path,
    wait_for_text: str,
    charts: int = 0,
    size: tuple[int, int] = (1400, 1000),
    timeout: float = 60,
) -> str:
    """Open `url`, wait until `wait_for_text` and `charts` charts are drawn, save a PNG to `out`;
    returns the page's visible text."""
    with browser_page(browser, size) as page:
        page.open(url)
        page.wait_until_drawn(wait_for_text, charts, timeout)
        page.screenshot(out)
        return page.text()
