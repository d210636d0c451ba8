"""The run's one door to the database: labels, claims and lease renewals in one short transaction
at a time, on one worker thread, without blocking the labelling loop.

Opening the DuckDB file costs more than what a judge writes in it (about 20 ms of CPU, 40 ms or
more on a loaded machine, for the instance alone), and while it is open no other process can
read the file: so the writer gathers everything due in one transaction. The loop hands every
label over the moment it exists; it is written at most `every` seconds later (at once when
`size` labels wait), together with the claims released by those labels, the claims the
dispatcher asked for meanwhile (judge/claiming.py), and the renewal of this judge's leases when
one is due (every third of a lease). Whatever arrives during one write goes into the next. A
claim asked for `urgent` (the loop has nothing left to call) is written at once, with whatever
else waits. Labels are also in the judge cache before they get here, so a killed process loses
no paid answer, only the last fraction of a second of rows, which a rerun restores from the
cache.

The loop sends its calls between transactions (`between`: a call waits for the one open, tens
of milliseconds, once per flush at most): a judge stopped right after it sent a call
(suspended, SIGSTOP) then holds no lock on the file unless a write fell due in that instant;
DuckDB would keep that lock from every other process, readers included, until it resumed.

A claim can carry the labels of keys already answered (cache hits): those are written in the
same transaction as the claim, which is then not kept (`claims.claim_in(answered=...)`), so a
run of cache hits is one transaction. A transaction that cannot be written (disk full,
permissions) is a `DatabaseError` that says the answers are in the cache and what to do; the
claims asked for in it fail with it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from judgepool.errors import DatabaseError, JudgepoolError
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, insert_judgments_in

T = TypeVar("T")


@dataclass
class ClaimAsk:
    """Keys to claim in the next transaction (see `claims.claim_in`); `labels` holds the labels
    of keys already answered, written with the claim when it is granted."""

    wanted: list[claims.Wanted]
    labeller: str
    since_id: int
    lease_s: float
    labels: Mapping[str, Sequence[Judgment]] = field(default_factory=dict)
    future: asyncio.Future[claims.Claimed] | None = None


@dataclass
class _Done:
    """What one transaction did (filled on the writer's thread, read on the event loop)."""

    claimed: list[claims.Claimed] = field(default_factory=list)
    renewed: list[str] | None = None


class LabelWriter:
    """Collects labels, releases and claims, and writes them from one worker thread, in order."""

    def __init__(
        self,
        store: Store,
        every: float = 0.5,
        size: int = 32,
        holder: str | None = None,
        lease_s: float | None = None,
    ) -> None:
        self.store = store
        self.every = every
        self.size = size
        self.holder = holder
        self.lease_s = lease_s  # renew the holder's leases every third of it (None: never)
        self.pending: list[Judgment] = []
        self.releases: list[str] = []
        self.asks: list[ClaimAsk] = []
        self.written = 0
        self.transactions = 0
        self.holding: set[str] = set()  # keys this holder claimed and has not released
        self.on_renewed: Callable[[set[str]], None] | None = None
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="judgepool-writer"
        )
        self._wake: asyncio.Event | None = None
        self._quiet: asyncio.Event | None = None  # set while no transaction is open
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._due: float | None = None  # when what waits must be written, at the latest
        self._renew_at = float("inf")
        # the transaction the background task handed to the thread, until it is written
        self._inflight: tuple[concurrent.futures.Future[_Done], list[Judgment], list[str]] | None
        self._inflight = None

    # -- what the loop hands over -----------------------------------------------------------

    def add(self, judgments: Sequence[Judgment], release: Sequence[str] = ()) -> None:
        """Queue labels (checked now, so a bad label fails here and not in a later batch) and
        the claims to release once they are written."""
        self._raise_failure()
        for judgment in judgments:
            judgment.check()
        self.pending.extend(judgments)
        self.releases.extend(release)
        self._due_by(0.0 if len(self.pending) >= self.size else self.every)

    async def claim(self, ask: ClaimAsk, urgent: bool = False) -> claims.Claimed:
        """Claim `ask.wanted` in the next transaction (at once when `urgent`, else within
        `every` seconds, with the labels written meanwhile); what `claims.claim_in` decided."""
        self._raise_failure()
        if self.holder is None:
            raise RuntimeError("claims need a writer with a holder")
        for labels in ask.labels.values():
            for judgment in labels:
                judgment.check()
        ask.future = asyncio.get_running_loop().create_future()
        ask.future.add_done_callback(_seen)  # a failure is raised to the caller, if it waits
        self.asks.append(ask)
        self._due_by(0.0 if urgent else self.every)
        return await ask.future

    def hurry(self) -> None:
        """Write what waits now (the loop waits for a claim asked earlier without urgency)."""
        if self.asks:
            self._due_by(0.0)

    def _due_by(self, seconds: float) -> None:
        due = time.monotonic() + seconds
        if self._due is None or due < self._due:
            self._due = due
            if self._wake is not None:
                self._wake.set()

    def _raise_failure(self) -> None:
        if self._task is not None and self._task.done() and not self._task.cancelled():
            failure = self._task.exception()
            if failure is not None:
                raise failure

    # -- the background task ----------------------------------------------------------------

    def start(self) -> None:
        """Start the background writing (inside the running event loop)."""
        self._wake = asyncio.Event()
        self._quiet = asyncio.Event()
        self._quiet.set()
        if self.holder is not None and self.lease_s is not None:
            self._renew_at = time.monotonic() + self.lease_s / 3
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def between(self) -> None:
        """Wait until no transaction of this writer is open (the loop sends its calls between
        transactions, see the module docstring)."""
        if self._quiet is not None and not self._quiet.is_set():
            await self._quiet.wait()

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """Run `function(*args)` on the writer's thread, after the transactions queued before it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._guarded, function, args)

    def _next_due(self) -> float | None:
        """When the next transaction is due (None: nothing to write, no lease to renew)."""
        renew = self._renew_at if self.holding else None
        times = [t for t in (self._due, renew) if t is not None]
        return min(times) if times else None

    async def _run(self) -> None:
        wake = self._wake
        if wake is None:
            raise RuntimeError("start() first")
        while not self._closed:
            wake.clear()
            due = self._next_due()
            now = time.monotonic()
            if due is None or due > now:
                wait = None if due is None else due - now
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), wait)
                continue
            await self._write_due()

    async def _write_due(self) -> None:
        batch, self.pending = self.pending, []
        releases, self.releases = self.releases, []
        asks, self.asks = self.asks, []
        self._due = None
        now = time.monotonic()
        renew = self.lease_s is not None and now >= self._renew_at and bool(self.holding)
        if renew and self.lease_s is not None:
            self._renew_at = now + self.lease_s / 3
        if not (batch or releases or asks or renew):
            return
        job = self._executor.submit(self._transact, batch, releases, asks, renew)
        self._inflight = (job, batch, releases)
        waited = asyncio.wrap_future(job)
        waited.add_done_callback(_seen)
        quiet = self._quiet
        if quiet is not None:
            quiet.clear()
            waited.add_done_callback(lambda _: quiet.set())
        try:
            # Shielded: when the event loop ends and cancels this task, the transaction stays
            # queued on the writer's thread (never cancelled there); close() waits for it.
            done = await asyncio.shield(waited)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._inflight = None
            self.pending[:0] = batch  # kept for close() to try once more
            self.releases[:0] = releases
            for ask in asks:
                if ask.future is not None and not ask.future.done():
                    ask.future.set_exception(err)
            raise
        self._inflight = None
        for ask, got in zip(asks, done.claimed, strict=True):
            if ask.future is not None and not ask.future.done():
                ask.future.set_result(got)
        if done.renewed is not None and self.on_renewed is not None:
            self.on_renewed(set(done.renewed))

    # -- the writer's thread ----------------------------------------------------------------

    def _transact(
        self,
        batch: list[Judgment],
        releases: list[str],
        asks: list[ClaimAsk],
        renew: bool,
        release_all: bool = False,
    ) -> _Done:
        """One transaction: the labels, the releases, the claims (and the labels of the keys
        already answered), the renewal; the bookkeeping follows its commit."""
        done = _Done()
        holder = self.holder

        def work() -> int:
            written = 0
            with self.store.write() as con:
                written += insert_judgments_in(con, batch)
                if holder is not None and (releases or release_all):
                    claims.release_in(con, holder, None if release_all else releases)
                for ask in asks:
                    if holder is None:
                        raise RuntimeError("claims need a writer with a holder")
                    got = claims.claim_in(
                        con,
                        holder,
                        ask.wanted,
                        ask.labeller,
                        ask.since_id,
                        ask.lease_s,
                        answered=ask.labels.keys(),
                    )
                    answered = [k for k in (*got.mine, *got.taken_over) if k in ask.labels]
                    if answered:  # granted and labelled now: left unclaimed by claim_in
                        labels = [j for k in answered for j in ask.labels[k]]
                        written += insert_judgments_in(con, labels)
                    done.claimed.append(got)
                if renew and holder is not None and self.lease_s is not None:
                    done.renewed = claims.renew_in(con, holder, self.lease_s)
            return written

        written = self._guarded(work, ())
        self.written += written
        self.transactions += 1
        if release_all:
            self.holding.clear()
        self.holding.difference_update(releases)
        for ask, got in zip(asks, done.claimed, strict=True):
            self.holding.update(k for k in (*got.mine, *got.taken_over) if k not in ask.labels)
        return done

    def _guarded(self, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            return function(*args)
        except JudgepoolError:
            raise
        except Exception as err:
            if not _is_environment(err):
                raise
            raise DatabaseError(
                f"cannot write to the database {self.store.path}: {err}",
                "free space on its disk (or fix its permissions), then run the same command "
                "again: answers already paid for come back from the judge cache at no cost",
            ) from err

    def close(self) -> None:
        """Stop the background task, write everything still pending (blocking, in order), and
        release every claim this writer's holder still has, in one last transaction.

        Safe to call from a `finally` while the loop is being cancelled, or after it ended: a
        transaction handed to the worker thread is written first (its labels tried once more if
        it failed), then the rest follows in the same thread. Claims asked for and not yet
        written are dropped (nothing was claimed for them).
        """
        self._closed = True
        if self._task is not None:
            if self._task.done():
                _seen(self._task)  # its failure is the claim's or the pending labels' (below)
            else:
                self._task.cancel()
        batch, self.pending = self.pending, []
        releases, self.releases = self.releases, []
        self.asks = []
        inflight, self._inflight = self._inflight, None
        try:
            if inflight is not None and inflight[0].exception() is not None:  # waits for it
                batch[:0], releases[:0] = inflight[1], inflight[2]  # it failed: once more
            release_all = self.holder is not None and bool(self.holding)
            if batch or releases or release_all:
                self._executor.submit(
                    self._transact, batch, releases, [], False, release_all
                ).result()
        finally:
            self._executor.shutdown(wait=True)
            if self.holder is not None:
                claims.retire(self.holder)


def _seen(done: asyncio.Future[Any]) -> None:
    """Mark a write's outcome as looked at: close() deals with a failure the loop never saw."""
    if not done.cancelled():
        done.exception()


def _is_environment(err: Exception) -> bool:
    """A failure of the machine (disk full, permission, I/O), not of our SQL: DuckDB's I/O and
    out-of-space errors, and the OS's."""
    if isinstance(err, OSError):
        return True
    import duckdb

    if isinstance(err, duckdb.IOException | duckdb.PermissionException):
        return True
    text = str(err).lower()
    return isinstance(err, duckdb.Error) and any(
        words in text for words in ("no space left", "disk is full", "read-only", "permission")
    )
