"""The dashboard's times as a person sees them, in headless Chromium: from navigation to the
page's content drawn, and from a key press in the labelling queue to the next pair on screen and
listening (part of bench/bench_dashboard.py).

AppTest times (the rest of the bench) measure the server alone; a browser adds the page's own
start, the websocket, the drawing. Issue 24 found first loads of 9-16 s in Chromium while
README said 0.85-1.02 s. Targets (issue 24, an idle 2-core machine, TREC DL 2019): every page's
first load <= 2 s, <= 3 s while a judge writes; a grade redraws the queue in <= 0.5 s.

A first load is a new browser session (about:blank, then the page's URL): the server's Python
process and its caches are warm after the first visit, as they are for a person who opens a
second tab; the very first visit after the server started is reported apart (`cold_s`).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.dashboard_browser import DRAWN, BrowserPage, browser_page, free_port, serve_dashboard

# Each page, a text it shows once drawn and its charts (the marker is there before the script
# ends; DRAWN also waits until no script runs and nothing is a loading placeholder).
PAGES = (
    ("runs", "/runs", "Means with 95% intervals", 1),
    ("compare", "/compare", "Baseline", 0),
    ("audit", "/audit", "pairs labelled", 0),
    ("export", "/export", "Download", 0),
)
FIRST_LOADS = 3
FINISHED = "Every pair of the audit sample has a human label"
# The queue's open pair once its keys listen for it ("q · doc"), else null.
READY = """(() => {
  const h = [...document.querySelectorAll("h3")].map(e => e.innerText.trim())
    .filter(t => / · /.test(t));
  const keys = window.__judgepoolQueueKeys;
  const listening = keys && keys.pair ? keys.pair.join(" · ") : null;
  return h.length && listening === h[0] ? h[0] : null;
})()"""


def _until(page: BrowserPage, expression: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while page.evaluate(expression) in (None, False):
        if time.monotonic() > deadline:
            shown = page.text()[-1500:]
            raise SystemExit(f"timed out after {timeout} s waiting for {expression!r}; {shown}")
        time.sleep(0.02)


def first_load(page: BrowserPage, base: str, path: str, text: str, charts: int) -> float:
    """Seconds from navigation to `path` (a new session) until its content is drawn."""
    page.open("about:blank")
    _until(page, "location.href === 'about:blank'")
    started = time.monotonic()
    page.open(base + path)
    _until(page, DRAWN % (json.dumps(text), charts))
    return time.monotonic() - started


def page_loads(page: BrowserPage, base: str, cold: bool) -> dict[str, dict[str, Any]]:
    """Each page's first loads: the very first one apart when `cold`, then the median."""
    out: dict[str, dict[str, Any]] = {}
    for name, path, text, charts in PAGES:
        found: dict[str, Any] = {}
        if cold:
            found["cold_s"] = round(first_load(page, base, path, text, charts), 3)
        times = [first_load(page, base, path, text, charts) for _ in range(FIRST_LOADS)]
        found["first_load_median_s"] = round(statistics.median(times), 3)
        found["first_load_max_s"] = round(max(times), 3)
        out[name] = found
        print(f"browser {name:8s} {found}", flush=True)
    return out


def queue_redraws(page: BrowserPage, base: str, grades: int) -> dict[str, float]:
    """Key press to the next pair on screen and listening, over `grades` grades (keyboard)."""
    page.open("about:blank")
    page.open(base + "/audit")
    done = f"document.body.innerText.includes({json.dumps(FINISHED)})"
    _until(page, f"({READY}) || ({done})")
    if page.evaluate(done):
        raise SystemExit("the audit sample has no pair left to grade: nothing to measure")
    waits = []
    for n in range(grades):
        shown = page.evaluate(READY)
        started = time.monotonic()
        page.press(str(n % 4))
        moved = f"(() => {{ const r = {READY.strip()}; return r && r !== {json.dumps(shown)}; }})()"
        _until(page, f"({moved}) || ({done})")
        waits.append(time.monotonic() - started)
        if page.evaluate(done):
            break
    waits.sort()
    found = {
        "grades": len(waits),
        "median_s": round(statistics.median(waits), 3),
        "max_s": round(waits[-1], 3),
        "pairs_per_min_at_zero_reading": round(60 / statistics.mean(waits), 1),
    }
    print(f"browser queue redraw {found}", flush=True)
    return found


@contextmanager
def dashboard(browser: str, db: Path) -> Iterator[tuple[BrowserPage, str]]:
    """`judgepool ui` on `db` and one Chromium tab (1440 x 900)."""
    port = free_port()
    with serve_dashboard(db, port), browser_page(browser, (1440, 900)) as page:
        yield page, f"http://127.0.0.1:{port}"
