"""`judgepool ui`: a taken port or a foreign host is refused before anything is announced, and
every page has its own URL (issue 11.20).

Before, on a taken port it announced its URL, then exited 1 with no `error:` line; /runs showed
Streamlit's 'Page not found' (the default page is served at the bare URL only).
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_browser import browser_page, find_chromium, free_port, serve_dashboard

Cli = Callable[..., CliResult]


def test_a_taken_port_is_refused_with_what_to_do(store: Store, cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("ui", "--port", str(port))
    assert done.code != 0
    assert "judgepool dashboard on" not in done.out  # nothing announced that will not be there
    (line,) = [x for x in done.err.splitlines() if x.startswith("error: ")]
    problem, fix = line.split(" — ", 1)
    assert f"port {port} on 127.0.0.1 is taken" in problem
    assert "--port" in fix


def test_an_address_of_another_machine_is_refused(store: Store, cli: Cli) -> None:
    done = cli("ui", "--host", "192.0.2.1", "--port", str(free_port()))  # TEST-NET-1
    assert done.code != 0
    assert "192.0.2.1 is not an address of this machine" in done.err
    assert "--host 127.0.0.1" in done.err.split(" — ", 1)[1]


def test_a_host_that_does_not_resolve_is_refused(store: Store, cli: Cli) -> None:
    done = cli("ui", "--host", "no-such-host.invalid", "--port", str(free_port()))
    assert done.code != 0
    assert "cannot find host 'no-such-host.invalid'" in done.err and " — " in done.err


@pytest.mark.slow
def test_every_page_opens_at_its_own_url(store: Store) -> None:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium on PATH (install it: apt-get install -y chromium)")
    port = free_port()
    pages = {
        "": "Means with 95% intervals",  # the bare URL opens Runs
        "runs": "Means with 95% intervals",
        "compare": "Paired differences from base",
        "audit": "Label queue",
        "export": "The same file from the command line",
    }
    with serve_dashboard(store.path, port), browser_page(browser) as page:
        for path, marker in pages.items():
            page.open(f"http://127.0.0.1:{port}/{path}")
            page.wait_until_drawn(marker, timeout=60)
            text = page.text()
            assert "Page not found" not in text, (path, text[:500])
