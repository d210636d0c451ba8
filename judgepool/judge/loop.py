"""The labelling loop: requests -> cache or judge -> labels with provenance, as soon as they exist.

For a list of requests (and the holes skipped for want of text) the loop:
1. checks that the judge can run (`readiness`: the LLM judge's key), then calls
   `judge.prepare(store, requests)` (no database connection is held meanwhile);
2. writes a `no_text` label for each skipped hole (once per labeller, even with two judges);
3. groups requests by cache key (same content = one call, whatever the ids); claims every group
   before labelling it (judge/claiming.py: another judge on this database never pays for it
   too) and writes each cache hit as a label carrying its original provenance (cost 0), the
   cache hits known at the start in the same transaction as their claims;
4. asks the judge for the rest with asyncio (judge/calls.py: bounded, AIMD-adapted concurrency,
   Retry-After pauses, bounded retries of rate limits, 5xx, timeouts and lost connections only,
   budget caps reserved before each call), looking in the cache once more right before each call;
5. puts each `ok` answer in the cache and hands every label to the writer (writer.py) the moment
   it exists, with secrets masked and long answers capped (provenance.storable). Ctrl-C or
   SIGTERM stops dispatching, cancels the calls in flight and writes what is done; a killed
   process loses only the calls in flight, and its claims come free after one lease. Running
   again resumes.

A failure that retrying cannot fix (a refused key, no quota, an unknown model) stops the run at
once (`stats.fatal`); one that concerns one request (a prompt over the context window) labels
that pair `error` with the reason and the run goes on.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Sequence
from typing import Any

from judgepool.errors import JudgeError, JudgepoolError
from judgepool.judge.base import Judge, JudgeRequest
from judgepool.judge.budget import Budget
from judgepool.judge.cache import CACHE_FAULTS, JudgeCache, usable_entry
from judgepool.judge.calls import Caller
from judgepool.judge.claiming import Dispatcher, Group
from judgepool.judge.loop_state import LoopOptions, LoopStats, ProgressSink
from judgepool.judge.provenance import LabelMaker
from judgepool.judge.requests import Skipped
from judgepool.judge.writer import LabelWriter
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, label_mark, write_judgments

__all__ = ["LabellingLoop", "LoopOptions", "LoopStats", "ProgressSink"]


class LabellingLoop:
    """One labelling run of one judge over a list of requests (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        judge: Judge,
        cache: JudgeCache,
        options: LoopOptions | None = None,
        progress: ProgressSink | None = None,
    ) -> None:
        self.store = store
        self.judge = judge
        self.cache = cache
        self.options = options or LoopOptions()
        self.progress = progress
        self.labeller = judge.labeller
        self.labels = LabelMaker(self.labeller, {}, self.options.purpose)
        self.stats = LoopStats(total=0)
        self.budget = Budget(self.options.max_cost, self.options.max_calls)
        self.holder = claims.new_holder()
        self.lease = self.options.lease or claims.lease_seconds()
        self.writer = LabelWriter(
            store, self.options.flush_every, self.options.flush_size, self.holder, self.lease
        )
        self.dispatcher: Dispatcher | None = None
        self._main: asyncio.Task[None] | None = None
        self._live: asyncio.Semaphore | None = None  # the groups being worked on, at most
        self._bug: BaseException | None = None

    # -- outcomes -------------------------------------------------------------------------

    def finish(self, group: Group, outcome: str, grade: int | None = None) -> None:
        """Count a group's pairs as done with `outcome`, and tell the progress bar."""
        count = len(group.requests)
        self.stats.outcomes[outcome] += count
        if grade is not None:
            self.stats.grades[grade] += count
        self.stats.done += count
        if self.progress is not None:
            self.progress.update(self.stats, count)

    def failed(self, group: Group, outcome: str, why: str, message: str) -> None:
        """Count a group that ended `error` or `unparsed`, and why (one example message)."""
        self.stats.failures[why] += len(group.requests)
        self.stats.failure_examples.setdefault(why, message)
        self.finish(group, outcome)

    def _elsewhere(self, group: Group) -> None:
        self.finish(group, "by_other_judge")

    def _in_batch(self, group: Group) -> None:
        self.finish(group, "in_batch")  # an open provider batch answers it (judge --batch)

    def fail_run(self, error: JudgepoolError, reason: str) -> None:
        """Stop the run with an error the user must act on (reported after the cleanup)."""
        self.stats.fatal = self.stats.fatal or error
        self.stop(reason)

    def stop(self, reason: str) -> None:
        if self.stats.stopped is None:
            self.stats.stopped = reason

    def cache_fault(self, err: Exception, doing: str) -> None:
        """The cache's disk failed (full, read-only): stop dispatching; what is answered still
        goes to the database, and the run ends with an error saying so."""
        self.fail_run(
            JudgeError(
                f"the judge cache at {self.cache.directory} failed while {doing}: {err}; "
                "every answer received was written to the database, nothing paid was lost, "
                "and no new call was sent after it",
                "free space on that disk or make the folder writable (or point "
                "JUDGEPOOL_CACHE_DIR at a folder with room), then run the same command again",
            ),
            "cache",
        )

    def cached_entry(self, key: str) -> dict[str, Any] | None:
        """The usable cache entry for `key` right now, or None (a cache fault stops the run)."""
        try:
            entry = self.cache.get(key)
        except CACHE_FAULTS as err:
            self.cache_fault(err, "reading an answer")
            return None
        return entry if entry is not None and usable_entry(entry) else None

    async def _cached_first(self, groups: Sequence[Group], dispatcher: Dispatcher) -> None:
        """The groups whose answer was in the cache when the run began: claimed and labelled
        in one transaction (the claims released with their labels); counted once written."""
        if not groups:
            return
        labels: dict[str, list[Judgment]] = {}
        for group in groups:
            if group.entry is None:
                raise RuntimeError("_cached_first needs groups with a cache entry")
            labels[group.key] = self.labels.cached(group.requests, group.key, group.entry)
        for group in await dispatcher.claim(groups, labels=labels):
            if group.entry is not None:
                self.stats.cached += len(group.requests)
                self.finish(group, "ok", group.entry["answer"].get("grade"))

    def from_cache(self, groups: Sequence[Group]) -> None:
        """Labels for groups whose answer is in the cache (this judge holds their claims)."""
        labels = []
        for group in groups:
            if group.entry is None:
                raise RuntimeError("from_cache needs groups with a cache entry")
            labels.extend(self.labels.cached(group.requests, group.key, group.entry))
            self.stats.cached += len(group.requests)
            self.finish(group, "ok", group.entry["answer"].get("grade"))
        self.writer.add(labels, release=[g.key for g in groups])

    # -- the run --------------------------------------------------------------------------

    def run(
        self,
        requests: Sequence[JudgeRequest],
        skipped: Sequence[Skipped] = (),
        since_id: int | None = None,
    ) -> LoopStats:
        """Label everything; returns the stats (`fatal` set when an error stopped it).

        `since_id`: the highest judgment id when the holes were listed (labels written after it
        by this labeller, on pairs not claimed, were written by another judge meanwhile).
        """
        self.stats = LoopStats(total=len(requests) + len(skipped))
        since = label_mark(self.store) if since_id is None else since_id
        loading = time.monotonic()
        readiness = getattr(self.judge, "readiness", None)  # optional hook (see judge.base)
        problem = readiness() if readiness is not None else None
        if problem is not None:
            raise problem
        if requests:
            if hasattr(self.judge, "note"):  # optional hooks (see judge.base)
                self.judge.note = getattr(self.progress, "preparing", None)
            self.judge.prepare(self.store, requests)
        started = time.monotonic()
        self.stats.prepare_s = started - loading
        self.labels = LabelMaker(self.labeller, self.judge.describe(), self.options.purpose)
        groups: dict[str, Group] = {}
        for request in requests:
            key = self.judge.cache_key(request)
            groups.setdefault(key, Group(key, [])).requests.append(request)
        if skipped:
            marks = self.labels.no_text(skipped)
            self.stats.labels_written += write_judgments(self.store, marks, unless_marked=True)
            self.stats.outcomes["no_text"] += len(skipped)
            self.stats.done += len(skipped)
        try:
            hits = self.cache.get_many(list(groups))
        except CACHE_FAULTS as err:
            raise JudgeError(
                f"cannot read the judge cache at {self.cache.directory}: {err}",
                "check the folder's disk and permissions (or point JUDGEPOOL_CACHE_DIR "
                "elsewhere), then run the same command again",
            ) from err
        for key, entry in hits.items():
            if usable_entry(entry):  # a foreign or damaged entry: ask again (and overwrite it)
                groups[key].entry = entry
        todo = list(groups.values())
        if any(g.entry is None for g in todo) and self.options.max_cost is not None:
            self._price([g for g in todo if g.entry is None])
        self.dispatcher = Dispatcher(
            self.writer,
            self.labeller,
            since,
            self.lease,
            max(self.options.concurrency, 1),
            self._elsewhere,
            self.progress.note if self.progress is not None else None,
            self._in_batch,
        )
        try:
            if todo:
                asyncio.run(self._judge_all(todo))
        finally:
            try:
                self.writer.close()
            except JudgepoolError as err:
                self.fail_run(err, "database")
            self.stats.labels_written += self.writer.written
            self.stats.taken_over = self.dispatcher.taken_over
            self.stats.transactions = self.writer.transactions
            self.stats.other_judges = len(self.dispatcher.others)
            self.stats.batches = sorted(self.dispatcher.batches)
            self.stats.charged = self.budget.charged
            self.stats.unanswered = self.budget.unanswered
            not_attempted = self.stats.total - self.stats.done
            if not_attempted:
                self.stats.outcomes["not_attempted"] = not_attempted
            self.stats.elapsed_s = time.monotonic() - started
            if self.progress is not None:
                self.progress.close()
        return self.stats

    def _price(self, todo: list[Group]) -> None:
        """Worst-case cost per call, needed only under --max-cost; refuses unpriced models."""
        for group in todo:
            estimate = self.judge.estimate(group.requests[:1])
            group.worst_cost = estimate.max_cost if estimate.max_cost is not None else estimate.cost
        priced = all(g.worst_cost is not None for g in todo)
        self.budget = Budget(self.options.max_cost, self.options.max_calls, priced=priced)

    def _done(
        self, tasks: set[asyncio.Task[None]], live: asyncio.Semaphore, task: asyncio.Task[None]
    ) -> None:
        """A finished task frees its place; a failed one stops the run (every task's error is
        looked at here, so none is lost and none goes unreported)."""
        tasks.discard(task)
        live.release()
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            return
        if isinstance(error, JudgepoolError):
            self.fail_run(error, "judge error" if isinstance(error, JudgeError) else "database")
        else:
            self._bug = self._bug or error
            self.stop("error")
        for other in tasks:
            other.cancel()

    def _interrupt(self) -> None:
        """Ctrl-C / SIGTERM: stop dispatching and cancel the calls in flight (a second signal
        while that cleanup runs is ignored, so it cannot interrupt the final writes)."""
        if self.stats.stopped == "interrupted":
            return
        self.stop("interrupted")
        if self._main is not None:
            self._main.cancel()

    async def backoff(self, seconds: float) -> None:
        """Wait out a retry's backoff (after a 500, a timeout) without holding a place: another
        group is called meanwhile, so one failing call does not stall a worker's share."""
        live = self._live
        if live is None:
            await asyncio.sleep(seconds)
            return
        live.release()
        try:
            await asyncio.sleep(seconds)
        finally:
            # shielded: cancelled here, the place is still taken back once free, and `_done`
            # gives it back when this task ends, so the count stays right
            await asyncio.shield(live.acquire())

    async def _judge_all(self, todo: list[Group]) -> None:
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        caller = Caller(self)
        dispatcher = self.dispatcher
        if dispatcher is None:
            raise RuntimeError("_judge_all runs inside run()")
        self.writer.start()
        handled: list[tuple[signal.Signals, Any]] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._interrupt)
                handled.append((sig, previous))
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread, or no signals here: Ctrl-C raises instead
        live = asyncio.Semaphore(max(1, self.options.concurrency))
        self._live = live
        tasks: set[asyncio.Task[None]] = set()
        try:
            await self._cached_first([g for g in todo if g.entry is not None], dispatcher)
            dispatcher.add([g for g in todo if g.entry is None])
            while self.stats.stopped is None:
                await live.acquire()
                group = await dispatcher.next(lambda: self.stats.stopped is not None)
                if group is None or self.stats.stopped is not None:
                    live.release()
                    break
                group.entry = group.entry or self.cached_entry(group.key)  # right before a call
                if group.entry is not None or self.stats.stopped is not None:
                    if group.entry is not None:
                        self.from_cache([group])
                    live.release()
                    continue
                task = loop.create_task(caller.work(group))
                tasks.add(task)
                task.add_done_callback(lambda t: self._done(tasks, live, t))
            while tasks:
                await asyncio.wait(list(tasks))
        except asyncio.CancelledError:
            self.stop("interrupted")
        except JudgepoolError as err:  # a claim could not be written
            self.fail_run(err, "database")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            closer = getattr(self.judge, "aclose", None)  # optional hook (see judge.base)
            if closer is not None:
                await closer()
            for sig, previous in handled:
                loop.remove_signal_handler(sig)
                signal.signal(sig, previous)
        if self._bug is not None:
            raise self._bug  # not a judge failure: a bug, shown as such after the cleanup
