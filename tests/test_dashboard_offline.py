"""The dashboard in headless Chromium asks nothing of any address but its own server and logs no
console error or warning, on every page: people run it offline and behind firewalls, and an
error in the console hides the one that matters (issue 24: an icon fetched from
fonts.gstatic.com, and two 404s under /runs/_stcore/ on every load)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from judgepool.api.audit import sample
from judgepool.pooling.store.connection import Store
from judgepool.ui.dashboard.server import page_html
from tests.dashboard_browser import browser_page, free_port, serve_dashboard
from tests.dashboard_db import build
from tests.test_dashboard_e2e import chromium

Writer = Callable[[str, str | bytes], Path]
# Each page and what it shows once drawn (the bare URL opens Runs).
PAGES = (
    ("/", "Means with 95% intervals", 1),
    ("/runs", "Means with 95% intervals", 1),
    ("/compare?baseline=base&candidate=cand&query=q6", "Paired differences from base", 1),
    ("/audit", "pairs labelled", 0),
    ("/audit?qid=q1&doc_id=q1-d00", "Save override", 0),
    ("/export", "Download", 0),
)
LOCAL = ("data:", "blob:", "about:")


@pytest.mark.slow
def test_every_page_asks_only_its_own_server_and_logs_no_error(write: Writer) -> None:
    browser = chromium()
    store = build(Store(), write)
    sample(store, 3, seed=2)  # the Audit page opens on its labelling queue
    port = free_port()
    own = f"127.0.0.1:{port}"
    with serve_dashboard(store.path, port), browser_page(browser) as page:
        page.watch()
        for path, text, charts in PAGES:
            page.open(f"http://{own}{path}")
            page.wait_until_drawn(text, charts)
            time.sleep(1.0)  # late requests or errors, if the page made any
            load = page.recorded()
            assert len(load.requests) > 10, f"{path}: the page's requests were not recorded"
            outside = [
                url
                for url in load.requests
                if not url.startswith(LOCAL) and urlsplit(url).netloc != own
            ]
            assert outside == [], f"{path} asked beyond {own}: {outside}"
            assert load.console == [], f"{path} logged: {load.console}"


def test_the_page_html_names_the_server_root_before_streamlit_starts() -> None:
    index = '<html><head><script type="module" src="./static/js/index.js"></script></head>'
    served = page_html(index, "/be</script>")
    script = served.index("window.__streamlit")
    assert script < served.index("./static/js/index.js")  # read before the web page starts
    assert "BACKEND_BASE_URL: window.location.origin + " in served
    assert '</script>"' not in served and "\\u003c/script>" in served  # a path cannot end it
