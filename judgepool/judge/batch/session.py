"""Batch judging as the library and `judgepool judge --batch...` both do it. Nothing here prints.

    dry_run(store, settings)                    # Submission: files, batch and online prices
    submitted = submit(store, settings)         # Submission: the batches sent (ids in .sent)
    status(store)                               # every batch, open ones asked about first
    collected = collect(store)                  # Collection: labels written, batches still open
    cancel(store, "batch_abc")                  # the provider stops it; collect what it did

Every call that talks to the provider first adopts batches a killed process created but did not
record (judge/batch/send.py); `submit` also finishes, or drops and plans again, the sends such a
process left halfway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.judge.batch.collect import CANCELLED, Collection, collect_one
from judgepool.judge.batch.provider import BatchProviderError
from judgepool.judge.batch.send import Clients, orphaned, progress_of, recover
from judgepool.judge.batch.settings import batch_judge, restored
from judgepool.judge.batch.submit import Pair, Submission, forecast, plan, send_holes
from judgepool.judge.batch.wait import WaitSink, wait_for
from judgepool.judge.options import BATCH_POLL
from judgepool.pooling.pool import PoolSpec, pool_summary
from judgepool.pooling.store import batches
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.options import JudgeOptions

Notify = Callable[[str], None]
#: Makes what shows a wait for batches: (the batches' requests) -> a sink.
Waiting = Callable[[int], WaitSink]
_SEE_BATCHES = remedy("see the batches with: {}", Call.of("batches"))


def dry_run(store: Store, settings: JudgeOptions) -> Submission:
    """What `submit` would send now (no call, no key needed, nothing written)."""
    return forecast(store, plan(store, settings), settings)


def submit(store: Store, settings: JudgeOptions, notify: Notify | None = None) -> Submission:
    """Label what needs no request, then send the rest of the holes as batches."""
    from judgepool.judge.registry import choose_model

    model, _ = choose_model(settings.model, settings.api_base)
    problem = batch_judge(model, settings).readiness()
    if problem is not None:
        raise problem

    async def go() -> Submission:
        clients = Clients(settings.api_base)
        try:
            return await send_holes(store, settings, clients, notify)
        finally:
            await clients.aclose()

    return asyncio.run(go())


def _mine(rows: list[batches.BatchRow], names: list[str] | None) -> list[batches.BatchRow]:
    if not names:
        return rows
    return [r for r in rows if r.local_id in names or r.batch_id in names]


def status(
    store: Store, api_base: str | None = None, refresh: bool = True
) -> list[batches.BatchRow]:
    """Every batch of the database, oldest first; with `refresh`, the provider is asked first
    about those still open (and about orphans a killed process created, which are adopted)."""
    if refresh:

        async def go() -> None:
            clients = Clients(api_base)
            try:
                rows = batches.list_batches(store, uncollected=True)
                await recover(store, clients, rows, adopt_only=True)
                for row in batches.list_batches(store, uncollected=True):
                    if row.batch_id is not None and not row.finished:
                        found = await clients.of(row).retrieve(row.batch_id)
                        batches.record_progress(store, row.local_id, progress_of(found))
            finally:
                await clients.aclose()

        asyncio.run(go())
    return batches.list_batches(store)


def collect(
    store: Store,
    api_base: str | None = None,
    retry_failed: bool = False,
    wait: bool = False,
    poll: float = BATCH_POLL,
    names: list[str] | None = None,
    waiting: Waiting | None = None,
    caps: JudgeOptions | None = None,
    notify: Notify | None = None,
) -> Collection:
    """Collect every finished batch (or those named); with `wait`, wait for the open ones
    first (shown by what `waiting` makes); with `retry_failed`, send what failed again as new
    batches (`caps`' --max-cost and --max-calls apply to them), and with `wait` too, wait for
    those new batches and collect them."""

    async def go() -> Collection:
        clients = Clients(api_base)
        try:
            return await _collect(
                store, clients, retry_failed, wait, poll, names, waiting, caps, notify
            )
        finally:
            await clients.aclose()

    return asyncio.run(go())


async def _collect(
    store: Store,
    clients: Clients,
    retry_failed: bool,
    wait: bool,
    poll: float,
    names: list[str] | None,
    waiting: Waiting | None,
    caps: JudgeOptions | None,
    notify: Notify | None,
) -> Collection:
    result = Collection()
    rows = _mine(batches.list_batches(store, uncollected=True), names)
    result.adopted, _ = await recover(store, clients, rows, adopt_only=True)
    rows = _mine(batches.list_batches(store, uncollected=True), names)
    result.unsent = [r for r in rows if r.batch_id is None]
    created = [r for r in rows if r.batch_id is not None]
    for row in created:
        if not row.finished and row.batch_id is not None:
            found = await clients.of(row).retrieve(row.batch_id)
            batches.record_progress(store, row.local_id, progress_of(found))
    created = [
        r
        for r in _mine(batches.list_batches(store, uncollected=True), names)
        if r.batch_id is not None
    ]
    if wait and any(not r.finished for r in created):
        created = await _wait(store, clients, created, poll, waiting)
    pools = _pools([r for r in created if r.finished])
    before = [pool_summary(store, key) for key in pools]
    await _collect_finished(store, clients, created, result)
    if retry_failed:
        result.retried = await _retry(store, clients, caps, notify)
        if wait:  # --wait covers the batches the retry just sent: wait for them and collect
            sent = {row.local_id for found in result.retried for row in found.sent}
            fresh = [
                r
                for r in batches.list_batches(store, uncollected=True)
                if r.local_id in sent and r.batch_id is not None
            ]
            if fresh:
                fresh = await _wait(store, clients, fresh, poll, waiting)
                await _collect_finished(store, clients, fresh, result)
    result.judged = [(b, pool_summary(store, key)) for b, key in zip(before, pools, strict=True)]
    return result


async def _wait(
    store: Store,
    clients: Clients,
    rows: list[batches.BatchRow],
    poll: float,
    waiting: Waiting | None,
) -> list[batches.BatchRow]:
    """`rows` once finished (or given up on), with the progress bar `waiting` makes, if any."""
    bar = waiting(sum(r.requests for r in rows)) if waiting is not None else None
    try:
        return await wait_for(store, clients, rows, poll, bar)
    finally:
        if bar is not None:
            bar.close()


async def _collect_finished(
    store: Store, clients: Clients, rows: list[batches.BatchRow], result: Collection
) -> None:
    """Collect each finished batch of `rows` into `result`; the others are listed as open."""
    for row in rows:
        if row.finished:
            await collect_one(store, clients.of(row), row, result)
        else:
            result.open.append(row)


def _pools(rows: list[batches.BatchRow]) -> list[PoolSpec]:
    """The distinct pools (depth, runs, level, labeller, all_queries) `rows` were planned on."""
    found: list[PoolSpec] = []
    for row in rows:
        s = row.settings
        key = PoolSpec(
            depth=s.get("depth", 10),
            runs=tuple(s.get("runs") or ()),
            level=s.get("level", "chunk"),
            labeller=s.get("labeller"),
            all_queries=bool(s.get("all_queries")),
        )
        if key not in found:
            found.append(key)
    return found


async def _retry(
    store: Store, clients: Clients, caps: JudgeOptions | None, notify: Notify | None
) -> list[Submission]:
    """Send the pairs collected batches left failed (error, expired, missing, unparsed) and
    that are still holes, as new batches with the settings they were first sent with."""
    rows = {r.local_id: r for r in batches.list_batches(store)}
    groups: dict[str, tuple[batches.BatchRow, set[Pair]]] = {}
    for local_id, qid, doc_id, level, kind in batches.failed_pairs(store):
        if kind == CANCELLED:
            continue
        row = rows[local_id]
        key = repr(sorted(row.settings.items()))
        groups.setdefault(key, (row, set()))[1].add((qid, doc_id, level))
    sent = []
    for row, pairs in groups.values():
        settings = restored(row.settings, clients.api_base, f"batch {row.name}")
        if caps is not None:
            settings = replace(settings, max_cost=caps.max_cost, max_calls=caps.max_calls)
        problem = batch_judge(settings.model or row.model, settings).readiness()
        if problem is not None:
            raise problem
        sent.append(await send_holes(store, settings, clients, notify, only=pairs))
    return sent


def cancel(store: Store, name: str, api_base: str | None = None) -> batches.BatchRow | None:
    """Ask the provider to stop batch `name` (its id or judgepool's local id); returns it as
    recorded now, or None when it was never created and has been dropped (its pairs are holes
    again). What it answered before stopping is collected by `collect`."""
    row = batches.find(store, name)
    if row is None:
        raise UsageError(f"no batch {name!r} in {store.path}", _SEE_BATCHES, value=name)
    if row.collected_at is not None:
        raise UsageError(
            f"batch {row.name} was collected already: nothing to cancel", _SEE_BATCHES, value=name
        )

    async def go() -> batches.BatchRow | None:
        clients = Clients(api_base)
        try:
            current = row
            if current.batch_id is None:
                if not orphaned(current):
                    raise UsageError(
                        f"batch {current.name} is being sent by a running judgepool "
                        f"({current.submitter})",
                        "wait for it to finish sending, or stop it, then cancel again",
                    )
                await recover(store, clients, [current], adopt_only=False)
                again = batches.find(store, current.local_id)
                if again is None:
                    return None
                current = again
            batch_id = _cancellable(current)
            client = clients.of(current)
            try:
                stopped = await client.cancel(batch_id)
            except BatchProviderError as err:
                if err.kind != "rejected":
                    raise
                # most often it finished (or began cancelling) after we last looked: say so
                batches.record_progress(
                    store, current.local_id, progress_of(await client.retrieve(batch_id))
                )
                now = batches.find(store, current.local_id)
                if now is not None:
                    _cancellable(now)
                raise
            batches.record_progress(store, current.local_id, progress_of(stopped))
            return batches.find(store, current.local_id)
        finally:
            await clients.aclose()

    return asyncio.run(go())


def _cancellable(row: batches.BatchRow) -> str:
    """The provider's id of a batch that can be cancelled; refuses one that has finished or is
    being cancelled, saying what to do."""
    if row.status == "cancelling":
        raise UsageError(
            f"batch {row.name} is being cancelled already: nothing to cancel",
            remedy(
                "collect what it answered once it stops with: {} (add {} to wait for it)",
                Call.of("collect_batches"),
                Param("wait"),
            ),
        )
    if row.finished or row.batch_id is None:
        raise UsageError(
            f"batch {row.name} is {row.status}: nothing to cancel",
            remedy("collect it with: {}", Call.of("collect_batches")),
        )
    return row.batch_id
