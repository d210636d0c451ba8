"""End to end in headless Chromium: a Compare link opened while a real judge writes labels shows
the banner, the provisional verdicts, each run's own means, holes marked in the rankings, and the
link itself stays in the address bar; once the judge is done the open page drops the banner."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from judgepool.pooling.store.connection import Store
from tests.dashboard_browser import browser_page, find_chromium, free_port, serve_dashboard
from tests.dashboard_db import build
from tests.dashboard_judge import held_judge
from tests.test_dashboard_e2e import png_size

Writer = Callable[[str, str | bytes], Path]
LINK = [
    ("baseline", "base"),
    ("candidate", "cand"),
    ("candidate", "weak"),
    ("chart", "weak"),
    ("measure", "nDCG@10"),
    ("query", "q2"),
]


def wait_for(page: object, predicate: Callable[[str], bool], what: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = page.text()  # type: ignore[attr-defined]
        if predicate(text):
            return text
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not seen in {timeout} s; the page said: {text[:1500]}")
        time.sleep(0.25)


@pytest.mark.slow
def test_a_compare_link_while_a_judge_writes(write: Writer, tmp_path: Path) -> None:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium on PATH (install it: apt-get install -y chromium)")
    store = build(Store(), write)
    port = free_port()
    shot = tmp_path / "compare-live.png"
    with (
        held_judge(store.path, answered=5) as judge,
        serve_dashboard(store.path, port),
        browser_page(browser, size=(1400, 1600)) as page,
    ):
        page.open(f"http://127.0.0.1:{port}/compare?{urlencode(LINK)}")
        page.wait_until_drawn("Labels being written: 19 holes left in the depth-10 pool")
        text = page.text()
        assert "Comparison refused: 1 run is under the judged@10 gate" in text  # weak
        assert "Holm's correction is over every candidate × measure on this page (2 × 3" in text
        page.click('[data-testid="stCheckbox"] label', "Compare anyway")
        page.wait_until_drawn("Means with 95% intervals", charts=1)
        text = page.text()
        assert (
            "Provisional: a judge is writing labels. Holes in the compared runs' top 10 "
            "now: base 0, cand 0, weak 19." in text
        )
        assert "weak − base: nDCG@10 per query" in text  # the link's chart and measure
        assert "query q2: question q2?" in text  # the link's query, its rankings open
        assert "No hole in its top 10: every doc has a label." in text  # base
        assert re.search(r"\d holes? in its top 10 \(ranks? [\d, ]+\): unlabelled", text)
        assert "▲ / ▼: significantly better / worse than the baseline base" in text
        query = parse_qs(urlsplit(page.evaluate("location.href")).query)
        assert query == {
            "level": ["chunk"],
            "baseline": ["base"],
            "candidate": ["cand", "weak"],
            "chart": ["weak"],
            "measure": ["nDCG@10"],
            "query": ["q2"],
        }, json.dumps(query)
        page.click_table_row(-1, 9)  # weak's 10th doc for q2: its text, on demand
        wait_for(page, lambda t: "passage 14 about q2" in t, "the doc's text", 30)
        page.screenshot(shot)
        code, err = judge.finish()
        assert code == 0, err
        # Live refresh (every 5 s) redraws the open page: the banner goes, the figures stay.
        text = wait_for(
            page,
            lambda t: (
                "Labels being written" not in t
                and "Provisional:" not in t
                and "Means with 95% intervals" in t
            ),
            "the page after the judge ended",
            30,
        )
        # weak's holes are all labelled now: the gate lets the comparison through, unforced.
        assert "Comparison refused" not in text and "UNRELIABLE" not in text
    assert png_size(shot) == (1400, 1600)
