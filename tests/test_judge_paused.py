"""A judge whose process is paused longer than its claims' lease (a starved process on a busy
machine; SIGSTOP here) loses no paid answer, and what it prints is what the database holds
(issue 22.1): alone, with a second judge that takes its expired claims over meanwhile, and
paused again and again while it works.

The judges are real `judgepool judge` processes with a 2-second lease
(JUDGEPOOL_CLAIM_LEASE) against the fake server in this process, whose counts are exact across
both judges.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store
from tests.fake_openai import FakeOpenAI
from tests.fixtures_servers import FAKE_KEY
from tests.test_judge_claims import DOCS, QUERIES, Writer, big_collection, start

HOLES = QUERIES * DOCS
LEASE = 2.0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv(claims.ENV_LEASE, str(LEASE))
    with FakeOpenAI(latency=0.4) as server:
        yield server


def _judge(fake: FakeOpenAI) -> subprocess.Popen[str]:
    return start(fake, "--concurrency", "4", "--depth", str(DOCS), "--all-queries")


def _wait_calls(fake: FakeOpenAI, judge: subprocess.Popen[str], calls: int) -> None:
    deadline = time.monotonic() + 120
    while fake.calls < calls:
        assert judge.poll() is None and time.monotonic() < deadline, judge.communicate()
        time.sleep(0.01)


def _pause(judge: subprocess.Popen[str], seconds: float) -> None:
    """Freeze the process (no thread of it runs: no renewal, no write) for `seconds`."""
    judge.send_signal(signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        judge.send_signal(signal.SIGCONT)


def _printed_ok(out: str) -> int:
    """The `ok` row of the judge's status table (pairs it says it labelled)."""
    found = re.search(r"^ok\s+(\d+)\s*$", out, re.MULTILINE)
    return int(found.group(1)) if found else 0


def _stored(store: Store) -> tuple[int, int, int]:
    """(ok label rows, distinct pairs with an ok label, ok rows of a paid call: no cache hit)."""
    with store.read() as con:
        row = con.execute(
            "SELECT count(*), count(DISTINCT (qid, doc_id)), "
            "count(*) FILTER (WHERE json_extract(provenance, '$.cache') IS NULL) "
            "FROM judgments WHERE source = 'judge' AND purpose = 'label' AND status = 'ok'"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def _finish(*judges: subprocess.Popen[str]) -> list[str]:
    outs = []
    for judge in judges:
        out, err = judge.communicate(timeout=300)
        assert judge.returncode == 0, err
        outs.append(out)
    return outs


def _check(store: Store, fake: FakeOpenAI, outs: list[str]) -> None:
    rows, pairs, paid = _stored(store)
    assert pairs == HOLES  # every hole labelled
    assert sum(_printed_ok(out) for out in outs) == rows  # printed = stored
    assert paid == fake.statuses[200]  # every answer paid for is in the database
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM claims").fetchone() == (0,)


@pytest.mark.slow
def test_a_judge_paused_past_its_lease_alone_loses_nothing(
    tmp_path: Path, write: Writer, fake: FakeOpenAI
) -> None:
    store = big_collection(Store(tmp_path / "test.duckdb"), write)
    judge = _judge(fake)
    _wait_calls(fake, judge, 8)
    _pause(judge, 3 * LEASE)  # its claims' leases run out while it cannot renew them
    _check(store, fake, _finish(judge))
    assert fake.statuses[200] == HOLES  # alone: nobody took a claim over, nothing paid twice


@pytest.mark.slow
def test_a_judge_paused_past_its_lease_while_another_takes_over_loses_nothing(
    tmp_path: Path, write: Writer, fake: FakeOpenAI
) -> None:
    store = big_collection(Store(tmp_path / "test.duckdb"), write)
    first = _judge(fake)
    _wait_calls(fake, first, 8)
    second = _judge(fake)
    _wait_calls(fake, second, fake.calls + 8)  # both are calling
    # Frozen past its lease: the second judge takes its claims over (it waits for the file
    # meanwhile when the freeze caught the first inside a transaction: DuckDB's lock).
    _pause(first, 3 * LEASE)
    _check(store, fake, _finish(first, second))


@pytest.mark.slow
def test_a_judge_paused_again_and_again_prints_what_it_stored(
    tmp_path: Path, write: Writer, fake: FakeOpenAI
) -> None:
    store = big_collection(Store(tmp_path / "test.duckdb"), write)
    judge = _judge(fake)
    _wait_calls(fake, judge, 4)
    for _ in range(6):  # a starved process: frozen past its lease, a moment of work, again
        if judge.poll() is not None:
            break
        _pause(judge, LEASE * 1.5)
        time.sleep(0.5)
    _check(store, fake, _finish(judge))
