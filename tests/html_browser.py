"""Open a static HTML file in headless Chromium and record what it did: the requests it made,
its console messages and uncaught errors, its text and how many SVG charts it drew.

Drives Chromium over the DevTools protocol like tests/dashboard_browser.py (whose flags and
helpers it reuses), but keeps the protocol's events instead of skipping them: Network, Runtime
and Log are enabled before the page loads, so a fetch, a console error or a refused resource
shows up. Used by tests/test_report_golden.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.dashboard_browser import CHROMIUM_FLAGS, DevTools, _wait_http, free_port


@dataclass
class PageLoad:
    """What a page did while it loaded."""

    text: str = ""
    svgs: int = 0
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)  # errors and warnings, with their text
    events: list[str] = field(default_factory=list)


def _record(load: PageLoad, event: dict[str, Any]) -> None:
    method, params = event.get("method", ""), event.get("params", {})
    load.events.append(method)
    if method == "Network.requestWillBeSent":
        load.requests.append(str(params["request"]["url"]))
    elif method == "Runtime.consoleAPICalled" and params.get("type") in (
        "error",
        "warning",
        "assert",
    ):
        load.console.append(f"console.{params['type']}: {params.get('args')}")
    elif method == "Runtime.exceptionThrown":
        load.console.append(f"exception: {params.get('exceptionDetails')}")
    elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
        load.console.append(f"log: {params['entry'].get('text')}")


def load_file(browser: str, path: Path, settle: float = 1.5) -> PageLoad:
    """Open `path` (file://) in a fresh headless Chromium; return what the page did."""
    from websockets.sync.client import connect

    port = free_port()
    load = PageLoad()
    with tempfile.TemporaryDirectory(prefix="judgepool-html-", ignore_cleanup_errors=True) as prof:
        chrome = subprocess.Popen(
            [
                browser,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={prof}",
                f"--remote-debugging-port={port}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            version = json.loads(_wait_http(f"http://127.0.0.1:{port}/json/version", 30))
            with connect(version["webSocketDebuggerUrl"], max_size=64 * 2**20) as ws:
                tab = DevTools(ws, keep_events=True)
                target = tab.call("Target.createTarget", url="about:blank")["targetId"]
                session = tab.call("Target.attachToTarget", targetId=target, flatten=True)[
                    "sessionId"
                ]
                for domain in ("Network", "Runtime", "Log", "Page"):
                    tab.call(f"{domain}.enable", session)
                tab.call("Page.navigate", session, url=path.resolve().as_uri())
                deadline = time.monotonic() + 30
                while not any(e.get("method") == "Page.loadEventFired" for e in tab.seen):
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{path} did not finish loading")
                    time.sleep(0.1)
                    tab.call("Runtime.evaluate", session, expression="1")  # reads the events
                time.sleep(settle)  # late requests or errors, if the page made any
                said = "[document.body.innerText, document.querySelectorAll('svg').length]"
                found = tab.call("Runtime.evaluate", session, returnByValue=True, expression=said)[
                    "result"
                ]["value"]
                load.text, load.svgs = str(found[0]), int(found[1])
                for event in tab.seen:
                    _record(load, event)
        finally:
            chrome.terminate()
            try:
                chrome.wait(timeout=10)
            except subprocess.TimeoutExpired:
                chrome.kill()
                chrome.wait()
            with suppress(ProcessLookupError):  # helpers of the browser we started, if any
                os.killpg(chrome.pid, signal.SIGKILL)
    return load
