"""The batch calls of `jp.Database`: send holes as provider batches, list, collect, cancel them.

    db = jp.open("eval.duckdb")
    sent = db.submit_batch("openai/gpt-4o-mini", depth=10)   # half price, answers within 24 h
    sent.batches                                             # polars: their ids and status
    db.batches()                                             # every batch, open ones refreshed
    done = db.collect_batches()                              # labels of the finished ones
    done.open                                                # still running: come back by `due`
    db.cancel_batch("batch_abc")

The same functions as `judgepool judge --batch | --batch-status | --batch-collect |
--batch-cancel` (judge/batch/session.py). Each works inside a running event loop (Jupyter): the
work then runs on a thread of its own and the call waits for it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from judgepool.batch_results import BatchCollection, BatchSubmission, batch_frame
from judgepool.names import names_of
from judgepool.pooling.errors import UsageError

if TYPE_CHECKING:
    import polars as pl

    from judgepool.pooling.store import Store

T = TypeVar("T")


def _off_loop(work: Callable[[], T]) -> T:
    """`work()`, on a thread of its own when this thread runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    found: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            found.append(work())
        except BaseException as err:  # handed back to the caller's thread below
            failed.append(err)

    worker = threading.Thread(target=run, name="judgepool-batch")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return found[0]


class BatchMethods:
    """Mixed into `jp.Database` (which provides `store`)."""

    store: Store

    def submit_batch(
        self,
        model: str | None = None,
        depth: int = 10,
        runs: str | Sequence[str] | None = None,
        level: str = "chunk",
        labeller: str | None = None,
        *,
        dry_run: bool = False,
        wait: bool = False,
        poll: float = 30.0,
        progress: bool = False,
        **limits: Any,
    ) -> BatchSubmission:
        """Send the holes of the pool to `model`'s batch API (about half the online price,
        answered within 24 h), as `judgepool judge --batch`: the same requests and cache keys
        as `judge`; pairs in the cache are labelled at once, pairs an open batch or a running
        judge holds are left to it. Returns what was sent (`dry_run=True`: what would be, with
        batch and online prices, and nothing sent or written). With `wait=True` it waits for
        the batches and collects them (`.collection`).

        `limits` are the judge options that apply to a batch: api_base, all_queries, max_cost,
        max_calls, temperature, max_tokens, template, passage_tokens, query_tokens, max_chunks.
        A provider with no batch API here (anthropic, bedrock, the offline judge) raises
        `JudgeError` / `UsageError` saying to call `judge` instead.
        """
        from judgepool.judge.batch import session
        from judgepool.judge.session import JudgeSettings

        unknown = sorted(set(limits) - _BATCH_LIMITS)
        if unknown:
            raise UsageError(f"unknown batch option(s): {', '.join(unknown)}",
                             "see help(jp.Database.submit_batch) for the options")
        names = tuple(names_of(runs))
        settings = JudgeSettings(model=model, depth=depth, runs=names, level=level,
                                 labeller=labeller, **limits)

        def work() -> BatchSubmission:
            if dry_run:
                return BatchSubmission(session.dry_run(self.store, settings))
            found = session.submit(self.store, settings)
            collection = None
            if wait and found.sent:
                collection = BatchCollection(session.collect(
                    self.store, settings.api_base, wait=True, poll=poll, progress=progress,
                    names=[r.local_id for r in found.sent]))
            return BatchSubmission(found, found.problem(settings), collection)

        return _off_loop(work)

    def batches(self, refresh: bool = True, api_base: str | None = None) -> pl.DataFrame:
        """Every batch of this database, oldest first: batch_id, local_id, status, model,
        labeller, requests, completed, failed, pairs, created_at, due, collected_at,
        last_error. `refresh` asks the provider about the open ones first (needs the key)."""
        from judgepool.judge.batch import session

        return _off_loop(lambda: batch_frame(session.status(self.store, api_base, refresh)))

    def collect_batches(
        self,
        *,
        wait: bool = False,
        retry_failed: bool = False,
        poll: float = 30.0,
        api_base: str | None = None,
        progress: bool = False,
        max_cost: float | None = None,
        max_calls: int | None = None,
    ) -> BatchCollection:
        """Write the labels of every finished batch, as `judgepool judge --batch-collect`: a
        second call writes nothing; batches still running are left (`.open`, with when they
        are due), or waited for with `wait=True`. `retry_failed` sends the pairs that failed
        (error, expired, unparsed) again as new batches (`max_cost` / `max_calls` cap them).
        Pairs that failed are in `.problem` (never silently 0)."""
        from judgepool.judge.batch import session
        from judgepool.judge.session import JudgeSettings

        caps = JudgeSettings(max_cost=max_cost, max_calls=max_calls)
        return _off_loop(lambda: BatchCollection(session.collect(
            self.store, api_base, retry_failed, wait, poll, progress=progress, caps=caps)))

    def cancel_batch(self, batch_id: str, api_base: str | None = None) -> pl.DataFrame:
        """Ask the provider to stop a batch (its id, or judgepool's local id); what it answered
        first is collected by `collect_batches`. Returns its row (empty when it had never been
        created and was dropped: its pairs are holes again)."""
        from judgepool.judge.batch import session

        row = _off_loop(lambda: session.cancel(self.store, batch_id, api_base))
        return batch_frame([row] if row is not None else [])


_BATCH_LIMITS = frozenset({"api_base", "all_queries", "max_cost", "max_calls", "temperature",
                           "max_tokens", "template", "passage_tokens", "query_tokens",
                           "max_chunks"})
