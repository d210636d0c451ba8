"""Labels to the database in short batches while the loop runs, without blocking it.

The loop hands every label over the moment it exists; a background task writes what has
accumulated every `every` seconds (sooner once `size` labels wait), in a worker thread, one
short transaction at a time, so the dashboard and other readers get the file between batches.
Batches grow by themselves when labels arrive fast (cache hits): whatever arrived during one
write goes into the next. Labels are also in the judge cache before they get here, so a killed
process loses no paid answer, only the last fraction of a second of rows, which a rerun
restores from the cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Sequence

from judgepool.pooling.labels import Judgment, write_judgments
from judgepool.pooling.store import Store


class LabelWriter:
    """Collects `Judgment`s and writes them in batches from one worker thread, in order."""

    def __init__(self, store: Store, every: float = 0.5, size: int = 32) -> None:
        self.store = store
        self.every = every
        self.size = size
        self.pending: list[Judgment] = []
        self.written = 0
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="judgepool-writer"
        )
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def add(self, judgments: Sequence[Judgment]) -> None:
        """Queue labels (checked now, so a bad label fails here and not in a later batch)."""
        if self._task is not None and self._task.done() and not self._task.cancelled():
            failure = self._task.exception()
            if failure is not None:
                raise failure
        for judgment in judgments:
            judgment.check()
        self.pending.extend(judgments)
        if self._wake is not None and len(self.pending) >= self.size:
            self._wake.set()

    def start(self) -> None:
        """Start the background flushing (inside the running event loop)."""
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def _write(self, batch: list[Judgment]) -> None:
        self.written += write_judgments(self.store, batch)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closed:
            if self._wake is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.every)
                self._wake.clear()
            if self.pending:
                batch, self.pending = self.pending, []
                try:
                    await loop.run_in_executor(self._executor, self._write, batch)
                except Exception:
                    self.pending[:0] = batch  # kept for close() to try once more
                    raise

    def close(self) -> None:
        """Stop the background task and write everything still pending (blocking, in order).

        Safe to call from a `finally` while the loop is being cancelled: a batch the worker
        thread is already writing completes first, then the rest follows in the same thread.
        """
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        batch, self.pending = self.pending, []
        if batch:
            self._executor.submit(self._write, batch).result()
        self._executor.shutdown(wait=True)
