"""The dashboard stays usable while another process labels the same database (two real processes).

A writer process appends labels in short transactions (as `judgepool judge` does) while this
process keeps re-running the Runs page and reading the database fingerprint: no read may fail
or show an error, the label count only goes up, and the page shows the progress.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.pooling.store.connection import Store
from tests.dashboard_db import build, frames, open_page, texts_of
from tests.fake_openai import FakeOpenAI

Writer = Callable[[str, str | bytes], Path]
REPO = Path(__file__).resolve().parent.parent

# Labels weak's 24 holes one per transaction, each transaction with 30 more (repeat) labels,
# pausing 250 ms between transactions (the judge's batch writer pauses 50 ms; slower here so that
# the page, re-run about once a second on a loaded machine, sees several counts); then exits.
LABELLER = """
import sys, time
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.pooling.store.connection import Store
store = Store(sys.argv[1])
holes = [(f"q{q}", f"q{q}-d{n}") for n in range(11, 15) for q in range(1, 7)]
print("writing", flush=True)
for batch_no, (qid, doc_id) in enumerate(holes):
    batch = [Judgment(f"q{q}", f"q{q}-d0{n}", 1, "judge", "writer") for q in range(1, 7)
             for n in range(5)]
    batch.append(Judgment(qid, doc_id, 2, "judge", "writer", provenance={"batch": batch_no}))
    write_judgments(store, batch)
    time.sleep(0.25)
print("done", flush=True)
"""


def judged_of(at: Any, run: str) -> float:
    (table,) = frames(at, "Judged@10")
    return float(table[table["run"] == run]["Judged@10"].iloc[0])


def watch(
    at: Any, db: str, seconds: float, done: Callable[[], bool], pause: float = 0.0
) -> dict[str, Any]:
    """Re-run the page and read the fingerprint for `seconds` (or until `done`), pausing
    `pause` seconds between rounds (0: as fast as possible, far more often than a browser)."""
    from judgepool.ui.dashboard.data import db_version

    seen: dict[str, Any] = {"counts": [], "judged": [], "stall": 0.0, "problems": [], "reads": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end and not done():
        started = time.monotonic()
        version = db_version(db)
        seen["stall"] = max(seen["stall"], time.monotonic() - started)
        seen["reads"] += 1
        seen["counts"].append(int(version[1]) if version else -1)
        at.run()
        seen["problems"] += [str(e.value) for e in at.exception] + texts_of(at, "error")
        seen["problems"] += [i for i in texts_of(at, "info") if "busy" in i]
        seen["judged"].append(judged_of(at, "weak"))
        time.sleep(pause)
    return seen


@pytest.mark.slow
def test_the_dashboard_reads_while_another_process_writes(store_path: Path) -> None:
    at = open_page("runs")
    assert judged_of(at, "weak") == 0.6
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(LABELLER), str(store_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        seen = watch(at, str(store_path), 60.0, lambda: writer.poll() is not None)
        out, err = writer.communicate(timeout=60)
    finally:
        writer.kill()
        writer.communicate()
    assert writer.returncode == 0, err
    assert seen["problems"] == []
    counts, judged = seen["counts"], seen["judged"]
    assert counts == sorted(counts) and len(set(counts)) >= 3, counts
    assert judged == sorted(judged) and judged[-1] > judged[0], judged
    assert seen["stall"] < 5.0  # typically well under a second (see the module docstring)
    at.run()  # after the writer: the page shows every label it wrote
    assert judged_of(at, "weak") == 1.0
    assert out.split()[-1] == "done"
    with Store(store_path).read() as con:
        assert con.execute("SELECT count(*) FROM judgments").fetchone() == (91 + 24 * 31,)


@pytest.mark.slow
def test_the_dashboard_follows_a_real_judge_run(store_path: Path) -> None:
    """`judgepool judge` (the real loop, litellm, batched writes) against a fake provider."""
    at = open_page("runs")
    with FakeOpenAI(latency=0.05) as fake:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-key"}
        judge = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "judgepool.ui.cli",
                "--db",
                str(store_path),
                "judge",
                "--model",
                "openai/fake-model",
                "--api-base",
                fake.api_base,
                "--concurrency",
                "2",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            seen = watch(at, str(store_path), 60.0, lambda: judge.poll() is not None, 0.2)
            _, err = judge.communicate(timeout=60)
        finally:
            judge.kill()
            judge.communicate()
    assert judge.returncode == 0, err
    assert seen["problems"] == []
    counts, judged = seen["counts"], seen["judged"]
    assert counts == sorted(counts) and len(set(counts)) >= 2, counts
    assert judged == sorted(judged)
    at.run()
    assert judged_of(at, "weak") == 1.0  # the judge filled weak's 24 holes


@pytest.fixture
def store_path(write: Writer) -> Path:
    return build(Store(), write).path


HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.readline()
con.close()
"""


@pytest.mark.slow
def test_a_writer_holding_the_file_too_long_is_a_notice_then_the_page_recovers(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page("runs")
    monkeypatch.setenv("JUDGEPOOL_LOCK_TIMEOUT", "0.3")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(store_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        at.run()
        assert not at.exception and not texts_of(at, "error")
        assert any("busy" in i and "figures of the last read" in i for i in texts_of(at, "info"))
        assert judged_of(at, "weak") == 0.6  # the last figures stay on screen (from the cache)
    finally:
        holder.communicate("\n", timeout=30)
    at.run()  # the holder let go: the figures are back
    assert not texts_of(at, "info") and judged_of(at, "weak") == 0.6
