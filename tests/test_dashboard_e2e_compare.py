"""The Compare page in headless Chromium at 1440 x 900 (skipped without Chromium): no table is
cut off. Issue 24: the means table's bounds columns ran past the page's edge at 1440 px."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from tests.dashboard_browser import browser_page, free_port, serve_dashboard
from tests.dashboard_db import build
from tests.test_dashboard_e2e import chromium

Writer = Callable[[str, str | bytes], Path]
# Each table's scrolled width and its visible width (px).
WIDTHS = """JSON.stringify([...document.querySelectorAll('[data-testid="stDataFrame"]')]
  .map(e => e.querySelector('.dvn-scroller')).filter(s => s !== null)
  .map(s => [s.scrollWidth, s.clientWidth]))"""


@pytest.mark.slow
def test_no_table_of_compare_is_cut_at_1440_px(write: Writer) -> None:
    import json

    browser = chromium()
    store = build(Store(), write)
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(browser, (1440, 900)) as page:
        page.open(f"http://127.0.0.1:{port}/compare?baseline=base&candidate=cand")
        page.wait_until_drawn("Paired differences from base", charts=1)
        widths = json.loads(str(page.evaluate(WIDTHS)))
        assert len(widths) >= 3, widths  # means, bounds, differences (was 1031 > 978 px)
        assert all(scrolled <= shown for scrolled, shown in widths), widths
