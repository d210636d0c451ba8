"""`judgepool judge` as a user runs it: dry run, a run and its summary, caps, Ctrl-C, kill -9.

The subprocess tests start the real console entry point against the fake server (in this
process, so its call counts survive the kill) and check that a rerun pays only for what was
lost: the calls in flight at the moment of the kill, which is computed exactly from the cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.fixtures_servers import FAKE_KEY
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb", doc_qrels=True)


def judge_args(fake: FakeOpenAI, *extra: str) -> list[str]:
    """The judge command on the fake server; canaries off (their own tests: test_canaries.py),
    so that calls count the holes' texts."""
    return [
        "judge",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
        *extra,
    ]


def ok_labels(store: Store, level: str = "chunk") -> list[tuple[str, str, int, dict[str, Any]]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT qid, doc_id, grade, provenance FROM judgments WHERE source = 'judge' "
            "AND status = 'ok' AND level = ? ORDER BY id",
            [level],
        ).fetchall()
    return [(q, d, g, json.loads(p)) for q, d, g, p in rows]


def dry_table(out: str) -> dict[str, list[str]]:
    """The dry-run table's rows by their first cell."""
    return {line.split("  ")[0]: line.split() for line in out.splitlines()}


def test_dry_run_forecasts_without_calling(store: Store, fake: FakeOpenAI, cli: Cli) -> None:
    result = cli(*judge_args(fake, "--dry-run"))
    assert result.code == 0, result.err
    lines = dry_table(result.out)
    assert lines["holes"][-1] == "8"
    assert lines["without text"][2] == "1"
    assert lines["already in the cache"][4] == "0"
    assert lines["to judge"][2:4] == ["7", "6"]  # 7 pairs, 6 calls
    assert "estimated cost: unknown" in result.out and "--max-calls" in result.out
    assert fake.calls == 0
    assert "openai/fake-model@relevance-v1" in result.err


def test_a_run_prints_status_grades_and_judged_before_and_after(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    result = cli(*judge_args(fake, "--concurrency", "3"))
    assert result.code == 0, result.err
    assert fake.calls == 6
    out = result.out
    assert "6 calls (0 answered 429, 0 retries)" in out
    assert "1 sharing a text already paid for" in out
    status = dict(
        line.split() for line in out.splitlines() if line.split()[:1] in (["ok"], ["no_text"])
    )
    assert status == {"ok": "7", "no_text": "1"}
    grades = Counter(EXPECTED.values())
    for grade, count in grades.items():
        assert f"{grade:>5}  {count:>5}" in out
    # run A: q1 1/4, q2 1/3, q3 1/2 labelled before; after, only c9 (no text) is missing
    assert "judged@10 before" in out
    run_a = next(line.split() for line in out.splitlines() if line.startswith("A "))
    assert run_a[1:] == ["0.361", "0.889", "1"]
    dry = cli(*judge_args(fake, "--dry-run"))
    assert dry_table(dry.out)["holes"][-1] == "1" and fake.calls == 6
    assert FAKE_KEY not in result.out + result.err + dry.out + dry.err


def test_doc_level_labels_documents_with_the_chunks_shown(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    result = cli(*judge_args(fake, "--level", "doc"))
    assert result.code == 0, result.err
    labels = {(q, d): (g, p) for q, d, g, p in ok_labels(store, "doc")}
    assert set(labels) == {("q1", "P1"), ("q1", "P2"), ("q1", "P4"), ("q1", "P5"), ("q3", "P8")}
    grade, provenance = labels[("q1", "P1")]
    assert [s["doc_id"] for s in provenance["shown"]] == ["c1", "c2"]
    # the fake grades by the first mark in the text shown: c1's
    assert grade == 3
    # P4 and P5 show the same text (c5, c6): one call for both, 4 calls for 5 documents
    assert fake.calls == 4


def test_caps_stop_cleanly_with_a_clear_message(store: Store, fake: FakeOpenAI, cli: Cli) -> None:
    result = cli(*judge_args(fake, "--max-calls", "2", "--concurrency", "1"))
    assert result.code == 6  # a cap stopped it: distinct from errors (1) and failures (4, 5)
    assert "stopped before exceeding --max-calls 2: 5 pairs not attempted" in result.err
    assert fake.calls == 2 and len(ok_labels(store)) == 2
    refused = cli(*judge_args(fake, "--max-cost", "1"))
    assert refused.code == 2 and "price is unknown" in refused.err and fake.calls == 2


def test_choosing_the_model(
    store: Store, cli: Cli, monkeypatch: pytest.MonkeyPatch, write: Writer
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    paid = cli("judge", "--dry-run")
    assert paid.code == 2
    assert "ANTHROPIC_API_KEY is set but no --model was given" in paid.err
    assert FAKE_KEY not in paid.err
    wrong = cli("judge", "--model", "offline", "--api-base", "http://127.0.0.1:1/v1")
    assert wrong.code == 2 and "--api-base apply to LLM judges" in wrong.err
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    ingest_qrels(store, write("more-qrels.txt", "q1 0 c2 2\n"))  # run B's top 1 is all judged
    free = cli("judge", "--dry-run", "--run", "B", "--depth", "1")
    assert "using the offline judge" in free.err and "no provider key" in free.err
    assert free.code == 0 and "no holes" in free.out


def _start(fake: FakeOpenAI, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", *judge_args(fake, "--concurrency", "2", *extra)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def _wait_for_calls(fake: FakeOpenAI, process: subprocess.Popen[str], calls: int) -> None:
    deadline = time.monotonic() + 60
    while fake.calls < calls:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"judge exited or stalled: {process.communicate()}")
        time.sleep(0.01)


@pytest.mark.slow
def test_kill_9_then_rerun_pays_only_for_the_calls_in_flight(
    store: Store, fake: FakeOpenAI, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEPOOL_CLAIM_LEASE", "2")  # the rerun takes the dead one's claims
    fake.latency = 0.4
    process = _start(fake)
    _wait_for_calls(fake, process, 3)  # the first two answered, the next two in flight
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    first_calls = fake.calls
    with JudgeCache() as cache:
        recorded = len(cache)  # answers the killed process got and kept
    lost = first_calls - recorded
    assert 0 <= lost <= 2  # at most the calls in flight (--concurrency 2)
    fake.latency = 0.0
    result = cli(*judge_args(fake))
    assert result.code == 0, result.err
    assert fake.calls == 6 + lost  # every distinct text paid once, plus what the kill lost
    labels = ok_labels(store)
    assert Counter((q, d) for q, d, _, _ in labels) == Counter(
        {
            ("q1", d)
            if d in ("c1", "c2", "c3", "c5", "c6")
            else ("q2" if d == "c7" else "q3", d): 1
            for d in EXPECTED
        }
    )
    assert {d: g for _, d, g, _ in labels} == EXPECTED


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_rerun_resumes(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    fake.latency = 0.4
    process = _start(fake)
    _wait_for_calls(fake, process, 3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted:" in err and "run the same command again to resume" in err
    assert "status" in out and "not_attempted" in out
    with JudgeCache() as cache:
        recorded = len(cache)
    paid = [p for _, _, _, p in ok_labels(store) if not p.get("cache")]
    assert len(paid) == recorded >= 2  # everything answered was written before exiting
    first_calls = fake.calls
    fake.latency = 0.0
    result = cli(*judge_args(fake))
    assert result.code == 0, result.err
    assert fake.calls == 6 + (first_calls - recorded)
    assert {d: g for _, d, g, _ in ok_labels(store)} == EXPECTED
