"""The label writer loses nothing when the labelling loop's event loop ends (design decision 3:
every label is written as soon as it exists, a rerun pays only for calls in flight).

`asyncio.run` ends by cancelling the writer's background task. A batch that task had already
handed to the writer's thread, still queued there behind other work, was cancelled with it and
never written (seen as runs whose paid answers were missing from the database on a loaded
machine); it must be written before `close` returns.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from judgepool.judge.writer import LabelWriter
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment
from tests.judge_fixtures import collection_copy


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
