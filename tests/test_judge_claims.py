"""Two judges on one database never pay for one answer twice: claims with leases (issue 11.7).

The concurrency tests start real `judgepool judge` processes against the fake server in this
process, so its counts are exact across both judges; the fake holds the first answers until
both judges have calls in flight, so the two really run at the same time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.judge.litellm_env import load_litellm
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import Judgment, label_mark, write_judgments
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
QUERIES, DOCS = 6, 20  # 120 holes, 120 distinct texts


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


def start(fake: FakeOpenAI, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", *judge_args(fake, *extra)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def llm_labels(store: Store) -> list[tuple[str, str, str, int | None]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT qid, doc_id, status, grade FROM judgments WHERE source = 'judge' ORDER BY id"
        ).fetchall()
    return [(str(q), str(d), str(s), g) for q, d, s, g in rows]


def claim_rows(store: Store) -> list[tuple[str, str]]:
    with store.read() as con:
        rows = con.execute("SELECT key, holder FROM claims").fetchall()
    return [(str(k), str(h)) for k, h in rows]


def big_collection(store: Store, write: Writer) -> Store:
    """QUERIES queries x DOCS docs, each doc retrieved by one run at depth DOCS: all holes."""
    ingest_queries(
        store, write("topics.tsv", "".join(f"q{q}\tquestion number {q}\n" for q in range(QUERIES)))
    )
    docs = [
        json.dumps({"doc_id": f"d{q}-{d}", "text": f"passage {d} for {q} [[grade={d % 4}]]"})
        for q in range(QUERIES)
        for d in range(DOCS)
    ]
    ingest_docs(store, write("docs.jsonl", "\n".join(docs) + "\n"))
    run = [f"q{q} Q0 d{q}-{d} {d + 1} {DOCS - d} A" for q in range(QUERIES) for d in range(DOCS)]
    ingest_run(store, write("A.trec", "\n".join(run) + "\n"))
    return store


def test_claims_hold_expire_and_release_with_the_labels(tmp_path: Path, write: Writer) -> None:
    store = big_collection(Store(tmp_path / "claims.duckdb"), write)
    mark = label_mark(store)
    one, two = claims.new_holder(), claims.new_holder()
    batch = claims.new_holder("batch", "batch_abc123")
    assert batch == "batch:batch_abc123" and one != two and one.startswith("judge:")
    wanted = [claims.Wanted(f"k{i}", ((f"q{i}", f"d{i}-0"),), "chunk") for i in range(3)]
    first = claims.claim(store, one, wanted[:2], "L", mark, 60)
    assert first.mine == ["k0", "k1"] and not first.held
    second = claims.claim(store, two, wanted, "L", mark, 60)
    assert second.mine == ["k2"] and set(second.held) == {"k0", "k1"}
    assert second.held["k0"][0] == one
    # the batch holds k2 under its batch id; nobody else gets it
    assert claims.claim(store, batch, wanted[2:], "L", mark, 3600).held["k2"][0] == two
    # one writes k0's label and releases k0 in the same transaction: two then sees it done
    label = Judgment("q0", "d0-0", 2, "judge", "L")
    write_judgments(store, [label], release=(one, ["k0"]))
    third = claims.claim(store, two, wanted[:2], "L", mark, 60)
    assert third.labelled == ["k0"] and list(third.held) == ["k1"]
    # a released claim with no label behind it is free again
    claims.release(store, one, ["k1"])
    assert claims.claim(store, two, wanted[1:2], "L", mark, 60).mine == ["k1"]
    # a claim whose lease ran out is taken over, whatever its labels
    with store.write() as con:
        con.execute(
            "UPDATE claims SET expires_at = ? WHERE key = 'k1'", [utcnow() - timedelta(seconds=1)]
        )
    assert claims.claim(store, one, wanted[1:2], "L", mark, 60).taken_over == ["k1"]
    assert claims.renew(store, two, 60) == 1  # k2 only: k1 was taken over
    # a holder on this machine whose process is gone is dead at once, whatever its lease
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ghost = one.rsplit(":", 2)[0] + f":{gone}:dead"
    assert claims.holder_is_dead(ghost) and not claims.holder_is_dead(one)
    assert not claims.holder_is_dead(batch) and not claims.holder_is_dead("judge:elsewhere:1:2:x")
    with store.write() as con:
        con.execute("UPDATE claims SET holder = ? WHERE key = 'k1'", [ghost])
    assert claims.claim(store, two, wanted[1:2], "L", mark, 60).taken_over == ["k1"]
    claims.release(store, two, ["k1"])
    claims.release(store, one)
    assert sorted(claim_rows(store)) == [("k2", two)]
    assert claims.holders(store)[0][:2] == (two, 1)


def test_a_bad_lease_setting_is_refused_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    fake: FakeOpenAI,
    cli: Cli,
) -> None:
    collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    monkeypatch.setenv(claims.ENV_LEASE, "soon")
    result = cli(*judge_args(fake))
    assert result.code == 2 and fake.calls == 0
    assert "error: JUDGEPOOL_CLAIM_LEASE='soon' is not a number" in result.err
    assert "set JUDGEPOOL_CLAIM_LEASE to e.g. 60" in result.err


def _summary(out: str) -> tuple[int, int]:
    """(calls, pairs left to the other judge) from a judge's summary."""
    calls = int(re.search(r"\): (\d+) calls", out).group(1))  # type: ignore[union-attr]
    left = re.search(r"(\d+) pairs were left to another judge", out)
    return calls, int(left.group(1)) if left else 0


@pytest.mark.slow
def test_two_judges_started_together_pay_for_each_text_once(
    tmp_path: Path, write: Writer, fake: FakeOpenAI
) -> None:
    store = big_collection(Store(tmp_path / "test.duckdb"), write)
    holes = QUERIES * DOCS
    concurrency = 4
    both_running = threading.Event()

    def reply(request: FakeRequest) -> Reply:
        # hold the first answers until both judges have calls in flight: one judge alone
        # never has more than `concurrency` requests open
        if fake.calls >= 2 * concurrency:
            both_running.set()
        both_running.wait(60)
        return default_reply(request)

    fake.reply = reply
    fake.latency = 0.02
    judges = [
        start(fake, "--concurrency", str(concurrency), "--depth", str(DOCS), "--all-queries")
        for _ in range(2)
    ]
    results = [j.communicate(timeout=240) for j in judges]
    for judge, (_, err) in zip(judges, results, strict=True):
        assert judge.returncode == 0, err
    assert both_running.is_set(), results
    # every text paid exactly once (the target was at most holes + 2 x concurrency)
    assert fake.calls == holes
    assert set(fake.by_passage.values()) == {1}
    labels = llm_labels(store)
    assert len(labels) == holes  # every hole labelled once: no second row for any pair
    assert Counter((q, d) for q, d, _, _ in labels).most_common(1)[0][1] == 1
    assert {s for _, _, s, _ in labels} == {"ok"}
    (calls_a, left_a), (calls_b, left_b) = (_summary(out) for out, _ in results)
    assert calls_a >= concurrency and calls_b >= concurrency and calls_a + calls_b == holes
    assert (left_a, left_b) == (calls_b, calls_a)  # each left the other's pairs to it
    assert claim_rows(store) == []  # every claim released with its labels


def _interrupt_a_judge(fake: FakeOpenAI, how: signal.Signals) -> subprocess.Popen[str]:
    """Start a judge, then kill or freeze it with two answers in and more calls in flight."""
    fake.latency = 0.5
    first = start(fake, "--concurrency", "2")
    deadline = time.monotonic() + 60
    while fake.calls < 3:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.01)
    first.send_signal(how)
    return first


def _check_taken_over(
    store: Store,
    result: CliResult,
    held: list[tuple[str, str]],
    fake: FakeOpenAI,
    stopped_calls: int,
    recorded: int,
) -> None:
    assert result.code == 0, result.err
    taken = int(re.search(r"(\d+) pairs were taken over", result.out).group(1))  # type: ignore[union-attr]
    assert taken >= len(held)
    # every distinct text paid once, plus what the stop lost (answers not in the cache)
    assert fake.calls == 6 + (stopped_calls - recorded)
    labels = [(q, d, g) for q, d, s, g in llm_labels(store) if s == "ok"]
    assert Counter((q, d) for q, d, _ in labels).most_common(1)[0][1] == 1
    assert {d: g for _, d, g in labels} == EXPECTED
    assert claim_rows(store) == []


@pytest.mark.slow
def test_a_killed_judges_claims_are_taken_over_at_once_on_its_machine(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    fake: FakeOpenAI,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    monkeypatch.setenv(claims.ENV_LEASE, "600")  # the lease would keep them for 10 minutes
    first = _interrupt_a_judge(fake, signal.SIGKILL)
    first.communicate(timeout=30)
    held = claim_rows(store)
    assert held and {h for _, h in held} == {held[0][1]}  # the dead judge's claims remain
    killed_calls = fake.calls
    with JudgeCache() as cache:
        recorded = len(cache)
    fake.latency = 0.0
    started = time.monotonic()
    result = cli(*judge_args(fake))
    assert time.monotonic() - started < 60 and "waiting for" not in result.err
    _check_taken_over(store, result, held, fake, killed_calls, recorded)


@pytest.mark.slow
def test_a_stuck_judges_claims_are_taken_over_after_the_lease(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    fake: FakeOpenAI,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    monkeypatch.setenv(claims.ENV_LEASE, "15")  # outlives the second judge's start
    # The second judge runs in this process: litellm imported now, not while the lease runs
    # (a cold import took over 15 s on a starved machine, and the leases expired before it).
    load_litellm()
    first = _interrupt_a_judge(fake, signal.SIGSTOP)  # alive, but renews nothing
    try:
        held = claim_rows(store)
        assert held
        stopped_calls = fake.calls
        with JudgeCache() as cache:
            recorded = len(cache)
        fake.latency = 0.0
        result = cli(*judge_args(fake))
        assert "waiting for" in result.err and held[0][1] in result.err
        assert "expire by" in result.err
        _check_taken_over(store, result, held, fake, stopped_calls, recorded)
    finally:
        first.kill()
        first.communicate(timeout=30)
