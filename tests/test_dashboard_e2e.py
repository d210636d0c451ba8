"""End to end: `judgepool ui` as a real server on a free port, the Compare page in headless
Chromium (skipped, with the reason, when no Chromium is installed), plus the command itself."""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.ui.commands.serve import streamlit_command
from tests.conftest import CliResult
from tests.dashboard_browser import (
    browser_page,
    capture,
    find_chromium,
    free_port,
    serve_dashboard,
)
from tests.dashboard_db import build

Writer = Callable[[str, str | bytes], Path]
Cli = Callable[..., CliResult]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", header[16:24])


def chromium() -> str:
    """The browser binary, or a skip that says how to get one."""
    browser = find_chromium()
    if browser is None:
        pytest.skip(
            "no Chromium on PATH (install it: apt-get install -y chromium, or set "
            "JUDGEPOOL_CHROMIUM to the browser binary)"
        )
    return browser


@pytest.mark.slow
def test_compare_page_in_headless_chromium(write: Writer, tmp_path: Path) -> None:
    browser = chromium()
    store = build(Store(), write)
    port = free_port()
    shot = tmp_path / "compare.png"
    with serve_dashboard(store.path, port) as served:
        url = f"http://127.0.0.1:{port}/compare?baseline=base&candidate=cand&query=q6"
        text = capture(browser, url, shot, "Paired differences from base", charts=1)
    assert served.process.returncode is not None  # stopped with the context
    assert "cand − base: nDCG@10 per query (4 wins, 1 loss)" in text
    assert "chunk level · k=10 · any judge" in text
    assert "query q6: question q6?" in text
    assert png_size(shot) == (1400, 1000) and shot.stat().st_size > 20_000


@pytest.mark.slow
def test_an_open_page_shows_labels_written_by_another_process(write: Writer) -> None:
    """The server is one process, this test another: labels it writes appear without a reload."""
    browser = chromium()
    store = build(Store(), write)
    port = free_port()
    with serve_dashboard(store.path, port), browser_page(browser) as page:
        page.open(f"http://127.0.0.1:{port}/")
        page.wait_until_drawn("Means with 95% intervals", charts=1)
        assert "(24 in the pool of 90 pairs)" in page.text()
        holes = [(f"q{q}", f"q{q}-d{n}") for q in range(1, 7) for n in range(11, 15)]
        write_judgments(store, [Judgment(q, d, 1, "judge", "writer") for q, d in holes])
        written = time.monotonic()
        while "(0 in the pool of 90 pairs)" not in page.text():
            assert time.monotonic() - written < 30, "the open page never showed the new labels"
            time.sleep(0.25)
        # Live refresh reruns the page every 5 s: the labels show within one period (+ render).
        assert time.monotonic() - written < 12
        assert "under the Judged@10 gate" not in page.text()


def test_ui_binds_to_localhost_headless_without_telemetry() -> None:
    command = streamlit_command("127.0.0.1", 8765)
    options = dict(zip(command[6::2], command[7::2], strict=True))
    assert command[1:5] == ["-P", "-m", "streamlit", "run"]
    assert command[5].endswith("ui/dashboard_server.py")
    assert options == {
        "--server.address": "127.0.0.1",
        "--server.port": "8765",
        "--server.headless": "true",
        "--server.fileWatcherType": "none",
        "--browser.gatherUsageStats": "false",
        "--client.toolbarMode": "viewer",
    }


def test_ui_without_a_database_says_how_to_make_one(cli: Cli) -> None:
    done = cli("ui", "--port", "8765")
    assert done.code == 1
    assert "no database at" in done.err and "judgepool ingest" in done.err


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on `port`, from the kernel's tables (Linux)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


@pytest.mark.slow
def test_ui_listens_on_127_0_0_1_only(write: Writer) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs Linux's /proc/net/tcp to see which address a server listens on")
    store = build(Store(), write)
    port = free_port()
    with serve_dashboard(store.path, port) as served:
        listening = listening_addresses(port)
    assert listening == {"0100007F"}  # 127.0.0.1, little-endian hex; not 0.0.0.0 nor ::
    assert f"http://127.0.0.1:{port}" in served.output
