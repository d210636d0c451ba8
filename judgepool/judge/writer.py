"""Labels to the database in short batches while the loop runs, without blocking it.

The loop hands every label over the moment it exists; a background task writes what has
accumulated every `every` seconds (sooner once `size` labels wait), in a worker thread, one
short transaction at a time, so the dashboard and other readers get the file between batches.
Batches grow by themselves when labels arrive fast (cache hits): whatever arrived during one
write goes into the next. Labels are also in the judge cache before they get here, so a killed
process loses no paid answer, only the last fraction of a second of rows, which a rerun
restores from the cache.

The worker thread is the run's one door to the database: claims (judge/claiming.py) go through
`call`, in order with the label batches, and each batch releases the claims of the groups it
finishes in the same transaction. A batch that cannot be written (disk full, permissions) is a
`DatabaseError` that says the answers are in the cache and what to do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from judgepool.errors import DatabaseError, JudgepoolError
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments

T = TypeVar("T")


class LabelWriter:
    """Collects `Judgment`s and writes them in batches from one worker thread, in order."""

    def __init__(
        self, store: Store, every: float = 0.5, size: int = 32, holder: str | None = None
    ) -> None:
        self.store = store
        self.every = every
        self.size = size
        self.holder = holder
        self.pending: list[Judgment] = []
        self.releases: list[str] = []
        self.written = 0
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="judgepool-writer"
        )
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # the batch the background task handed to the thread, until it is written
        self._inflight: tuple[concurrent.futures.Future[None], list[Judgment], list[str]] | None
        self._inflight = None

    def add(self, judgments: Sequence[Judgment], release: Sequence[str] = ()) -> None:
        """Queue labels (checked now, so a bad label fails here and not in a later batch) and
        the claims to release once they are written."""
        if self._task is not None and self._task.done() and not self._task.cancelled():
            failure = self._task.exception()
            if failure is not None:
                raise failure
        for judgment in judgments:
            judgment.check()
        self.pending.extend(judgments)
        self.releases.extend(release)
        if self._wake is not None and len(self.pending) >= self.size:
            self._wake.set()

    def start(self) -> None:
        """Start the background flushing (inside the running event loop)."""
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """Run `function(*args)` on the writer's thread, after the batches queued before it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._guarded, function, args)

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

    def _write(self, batch: list[Judgment], releases: list[str]) -> None:
        release = (self.holder, releases) if self.holder is not None else None
        self.written += self._guarded(write_judgments, (self.store, batch, release))

    async def _run(self) -> None:
        while not self._closed:
            if self._wake is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.every)
                self._wake.clear()
            if self.pending or self.releases:
                batch, self.pending = self.pending, []
                releases, self.releases = self.releases, []
                job = self._executor.submit(self._write, batch, releases)
                self._inflight = (job, batch, releases)
                waited = asyncio.wrap_future(job)
                waited.add_done_callback(_seen)
                try:
                    # Shielded: when the event loop ends and cancels this task, the batch stays
                    # queued on the writer's thread (never cancelled there); close() waits for it.
                    await asyncio.shield(waited)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self._inflight = None
                    self.pending[:0] = batch  # kept for close() to try once more
                    self.releases[:0] = releases
                    raise
                self._inflight = None

    def close(self) -> None:
        """Stop the background task, write everything still pending (blocking, in order), and
        release every claim this writer's holder still has.

        Safe to call from a `finally` while the loop is being cancelled, or after it ended: a
        batch handed to the worker thread is written first (tried once more if it failed),
        then the rest follows in the same thread.
        """
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        batch, self.pending = self.pending, []
        releases, self.releases = self.releases, []
        inflight, self._inflight = self._inflight, None
        try:
            if inflight is not None and inflight[0].exception() is not None:  # waits for it
                batch[:0], releases[:0] = inflight[1], inflight[2]  # it failed: once more
            if batch or releases:
                self._executor.submit(self._write, batch, releases).result()
            if self.holder is not None:
                self._executor.submit(
                    self._guarded, claims.release, (self.store, self.holder)
                ).result()
        finally:
            self._executor.shutdown(wait=True)
            if self.holder is not None:
                claims.retire(self.holder)


def _seen(done: asyncio.Future[None]) -> None:
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
