"""The label writer loses nothing when the labelling loop's event loop ends (design decision 3:
every label is written as soon as it exists, a rerun pays only for calls in flight).

`asyncio.run` ends by cancelling the writer's background task. A batch that task had already
handed to the writer's thread, still queued there behind other work, was cancelled with it and
never written (seen as runs whose paid answers were missing from the database on a loaded
machine); it must be written before `close` returns. And it writes labels, claims and lease
renewals together, at most one transaction per flush interval (issue 23.3).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from judgepool.judge.base import JudgeRequest
from judgepool.judge.cache import JudgeCache
from judgepool.judge.claiming import Dispatcher, Group
from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.judge.loop import LoopOptions
from judgepool.judge.run.plan import backfill, plan_holes
from judgepool.judge.writer import LabelWriter
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import collection_copy
from tests.test_judge_claims import DOCS, QUERIES, Writer, big_collection


def _rows(store: Store) -> list[tuple[object, ...]]:
    with store.read() as con:
        return con.execute(
            "SELECT qid, doc_id, grade, labeller FROM judgments WHERE source = 'judge'"
        ).fetchall()


def test_a_batch_queued_when_the_loop_ends_is_written_by_close(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    store = collection_copy(tmp_path_factory, tmp_path / "writer.duckdb")
    writer = LabelWriter(store, every=0.01)
    busy = threading.Event()

    async def labelling() -> None:
        writer.start()
        # the writer's one thread is busy (as with a claim being written): the next batch queues
        blocking = asyncio.ensure_future(writer.call(busy.wait))
        writer.add([Judgment("q1", "c1", 2, "judge", "test-judge")])
        await asyncio.sleep(0.2)  # the background task takes the batch and waits for the thread
        assert not blocking.done()

    asyncio.run(labelling())  # ends by cancelling the background task
    busy.set()
    writer.close()
    assert _rows(store) == [("q1", "c1", 2, "test-judge")]
    assert writer.written == 1


def test_labels_claims_and_renewals_share_one_transaction_per_flush(
    tmp_path: Path, write: Writer, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23.3: opening the database costs ~20 ms of CPU and locks every other process out,
    so a judge writes its labels, the claims it takes ahead of its calls and its lease renewals
    together, at most once per flush interval (plus the first claim and the last write) rather
    than once per claim batch and once per label batch (about 40 transactions here before)."""
    monkeypatch.setenv(claims.ENV_LEASE, "1.5")  # renewals every 0.5 s, in the same writes
    store = big_collection(Store(tmp_path / "test.duckdb"), write)
    fake.latency = 0.1
    judge = LLMJudge(LLMSettings("openai/fake-model", api_base=fake.api_base))
    options = LoopOptions(concurrency=4, flush_every=0.5)
    plan = plan_holes(store, depth=DOCS, all_queries=True)
    with JudgeCache() as cache:
        stats = backfill(store, judge, plan, options, cache)
    assert stats.outcomes["ok"] == fake.calls == QUERIES * DOCS  # one call per hole
    assert stats.labels_written == QUERIES * DOCS
    # One per flush, plus the first claim, the last write and a claim asked at once when the
    # stock ran dry (a few more on a loaded machine: 14 in a 5.4 s run once); main took 63.
    assert stats.transactions <= stats.elapsed_s / options.flush_every + 6, stats
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM claims").fetchone() == (0,)


def test_a_renewal_puts_back_the_stock_another_judge_took_over(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A judge paused past its lease finds, at its next renewal, that another judge took over
    claims of its stock (groups claimed ahead, not called yet): those go back to be claimed
    again (then waited for, as another judge's), instead of being paid for twice."""
    store = collection_copy(tmp_path_factory, tmp_path / "renew.duckdb")
    holder, other = claims.new_holder(), claims.new_holder()
    writer = LabelWriter(store, every=0.05, holder=holder, lease_s=0.6)  # renews every 0.2 s
    groups = [
        Group(f"k{i}", [JudgeRequest("q1", f"c{i}", "chunk", "a query", "a passage", ())])
        for i in (1, 2, 3)
    ]
    dispatcher = Dispatcher(writer, "test-judge", 0, 0.6, 3, lambda g: None)

    async def paused_then_renewed() -> tuple[list[str], list[str], int]:
        writer.start()
        dispatcher.add(groups)
        first = await dispatcher.next(lambda: False)  # claims all three, hands out one
        assert first is not None and [g.key for g in dispatcher.ready] == ["k2", "k3"]
        # this judge is paused past its lease meanwhile: another takes k2 over
        with store.write() as con:
            con.execute("UPDATE claims SET expires_at = '2000-01-01' WHERE key = 'k2'")
            taken = claims.claim_in(con, other, [groups[1].wanted()], "test-judge", 0, 60)
        assert taken.taken_over == ["k2"]
        await asyncio.sleep(0.5)  # a renewal (every 0.2 s) finds k2 gone
        return (
            [g.key for g in dispatcher.ready],
            [g.key for g in dispatcher.pending],
            writer.transactions,
        )

    ready, pending, _ = asyncio.run(paused_then_renewed())
    writer.close()
    assert (ready, pending, dispatcher.lost) == (["k3"], ["k2"], 1)
    with store.read() as con:
        rows = con.execute("SELECT key, holder FROM claims ORDER BY key").fetchall()
    assert rows == [("k2", other)]  # this judge's claims released at the end, not the other's
