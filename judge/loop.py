"""The labelling loop: requests -> cache or judge -> labels with provenance, as soon as they exist.

For a list of requests (and the holes skipped for want of text) the loop:
1. calls `judge.prepare(store, requests)` (no database connection is held meanwhile);
2. writes a `no_text` label for each skipped hole (once per labeller);
3. groups requests by cache key (same content = one call, whatever the ids) and writes every
   cache hit at once as a label carrying its original provenance (cost 0: nothing was paid);
4. asks the judge for the rest with asyncio: bounded, AIMD-adapted concurrency (throttle.py),
   Retry-After pauses, jittered exponential backoff for 5xx / timeouts / connection errors
   (bounded by `retries`), a per-call timeout, one more call after an unparsed answer, and
   budget caps reserved before each call (budget.py);
5. puts each `ok` answer in the cache and hands every label to the writer (writer.py) the moment
   it exists. Ctrl-C or SIGTERM stops dispatching, cancels the calls in flight and writes what
   is done; a killed process loses only the calls in flight. Running again resumes.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judgepool.judge.base import (
    Judge,
    JudgeAnswer,
    JudgeRequest,
    RequestRejected,
    TransientJudgeFailure,
)
from judgepool.judge.budget import Budget, Reservation
from judgepool.judge.cache import JudgeCache, usable_entry
from judgepool.judge.provenance import LabelMaker, now_iso
from judgepool.judge.requests import Skipped
from judgepool.judge.throttle import Throttle, backoff_delay
from judgepool.judge.writer import LabelWriter
from judgepool.pooling.errors import JudgeError
from judgepool.pooling.store import Store


@dataclass(frozen=True)
class LoopOptions:
    """How hard to push the judge, and when to stop."""

    concurrency: int = 8
    max_cost: float | None = None
    max_calls: int | None = None
    retries: int = 4
    rate_limit_retries: int = 20
    unparsed_retries: int = 1
    timeout: float = 60.0
    backoff_base: float = 0.5
    flush_every: float = 0.5
    flush_size: int = 32


@dataclass
class LoopStats:
    """Live counters (read by the progress bar) and, at the end, the run's summary.

    `outcomes` counts pairs by final outcome: ok, unparsed, error, no_text, not_attempted (a cap
    or an interrupt stopped before it). `cached` counts pairs answered from the cache, `shared`
    pairs whose text another pair of this run already paid for. `prepare_s` is the judge's
    preparation (importing litellm, loading a model), `elapsed_s` the labelling after it.
    """

    total: int
    done: int = 0
    cached: int = 0
    shared: int = 0
    calls: int = 0
    rate_limited: int = 0
    retried: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    labels_written: int = 0
    grades: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    stopped: str | None = None
    fatal: JudgeError | None = None
    prepare_s: float = 0.0
    elapsed_s: float = 0.0


class ProgressSink(Protocol):
    """Something that shows progress (judge/progress.py); told after every finished pair."""

    def update(self, stats: LoopStats, advanced: int) -> None: ...

    def close(self) -> None: ...


@dataclass
class _Group:
    key: str
    requests: list[JudgeRequest]
    worst_cost: float | None = None


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
        self.labels = LabelMaker(self.labeller, {})
        self.stats = LoopStats(total=0)
        self.budget = Budget(self.options.max_cost, self.options.max_calls)
        self.throttle: Throttle | None = None
        self.writer = LabelWriter(store, self.options.flush_every, self.options.flush_size)
        self._main: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # made anew in each event loop (_judge_all)
        self._bug: BaseException | None = None

    # -- labels ---------------------------------------------------------------------------

    def _finish(self, requests: Sequence[JudgeRequest], outcome: str, grade: int | None) -> None:
        self.stats.outcomes[outcome] += len(requests)
        if grade is not None:
            self.stats.grades[grade] += len(requests)
        self.stats.done += len(requests)
        if self.progress is not None:
            self.progress.update(self.stats, len(requests))

    def _record_answer(self, group: _Group, answer: JudgeAnswer, attempt: int, final: bool) -> None:
        """Cache an ok answer, then queue its labels; count the group once it is final."""
        judged_at = now_iso()
        if answer.status == "ok":
            self.cache.put(group.key, self.labels.cache_entry(answer, judged_at))
        self.writer.add(self.labels.answered(group.requests, group.key, answer, attempt, judged_at))
        if final:
            if answer.status == "ok":
                self.stats.shared += len(group.requests) - 1
            self._finish(group.requests, answer.status, answer.grade)

    def _record_error(self, group: _Group, kind: str, message: str, attempts: int) -> None:
        self.writer.add(self.labels.failed(group.requests, group.key, kind, message, attempts))
        self._finish(group.requests, "error", None)

    # -- the run --------------------------------------------------------------------------

    def run(self, requests: Sequence[JudgeRequest], skipped: Sequence[Skipped] = ()) -> LoopStats:
        """Label everything; returns the stats (`fatal` set when a judge error stopped it)."""
        self.stats = LoopStats(total=len(requests) + len(skipped))
        loading = time.monotonic()
        if requests:
            self.judge.prepare(self.store, requests)
        started = time.monotonic()
        self.stats.prepare_s = started - loading
        self.labels = LabelMaker(self.labeller, self.judge.describe())
        groups: dict[str, _Group] = {}
        for request in requests:
            key = self.judge.cache_key(request)
            groups.setdefault(key, _Group(key, [])).requests.append(request)
        immediate = self.labels.no_text(self.store, skipped)
        if skipped:
            self.stats.outcomes["no_text"] += len(skipped)
            self.stats.done += len(skipped)
        hits = self.cache.get_many(list(groups))
        for key, entry in hits.items():
            if not usable_entry(entry):
                continue  # a foreign or damaged entry: ask again (and overwrite it)
            group = groups.pop(key)
            immediate.extend(self.labels.cached(group.requests, key, entry))
            self.stats.cached += len(group.requests)
            self._finish(group.requests, "ok", entry["answer"].get("grade"))
        self.writer.add(immediate)
        todo = list(groups.values())
        if todo and self.options.max_cost is not None:
            self._price(todo)
        try:
            if todo:
                asyncio.run(self._judge_all(todo))
        finally:
            self.writer.close()
            self.stats.labels_written = self.writer.written
            not_attempted = self.stats.total - self.stats.done
            if not_attempted:
                self.stats.outcomes["not_attempted"] = not_attempted
            self.stats.elapsed_s = time.monotonic() - started
            if self.progress is not None:
                self.progress.close()
        return self.stats

    def _price(self, todo: list[_Group]) -> None:
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
        if isinstance(error, JudgeError):
            self.stats.fatal = self.stats.fatal or error
            self._stop("judge error")
        else:
            self._bug = self._bug or error
            self._stop("error")
        for other in tasks:
            other.cancel()

    def _stop(self, reason: str) -> None:
        if self.stats.stopped is None:
            self.stats.stopped = reason

    def _interrupt(self) -> None:
        """Ctrl-C / SIGTERM: stop dispatching and cancel the calls in flight (a second signal
        while that cleanup runs is ignored, so it cannot interrupt the final writes)."""
        if self.stats.stopped == "interrupted":
            return
        self._stop("interrupted")
        if self._main is not None:
            self._main.cancel()

    async def _judge_all(self, todo: list[_Group]) -> None:
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        self.throttle = Throttle(self.options.concurrency)
        self._settled = asyncio.Event()
        self.writer.start()
        handled: list[tuple[signal.Signals, Any]] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._interrupt)
                handled.append((sig, previous))
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread, or no signals here: Ctrl-C raises instead
        live = asyncio.Semaphore(self.options.concurrency)
        tasks: set[asyncio.Task[None]] = set()
        try:
            for group in todo:
                await live.acquire()
                if self.stats.stopped is not None:
                    live.release()
                    break
                task = loop.create_task(self._work(group))
                tasks.add(task)
                task.add_done_callback(lambda t: self._done(tasks, live, t))
            while tasks:
                await asyncio.wait(list(tasks))
        except asyncio.CancelledError:
            self._stop("interrupted")
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

    async def _work(self, group: _Group) -> None:
        """Ask the judge for one group until an answer, a final failure, or a stop."""
        throttle = self.throttle
        if throttle is None:
            raise RuntimeError("_work runs inside _judge_all")
        request = group.requests[0]
        attempts = transient = rate_limits = unparsed = 0
        while True:
            reservation = await self._reserve(group)
            if reservation is None:
                return
            sent_at = await throttle.acquire()
            if self.stats.stopped is not None:
                throttle.release()
                self._settle(reservation, None, answered=False)
                return
            attempts += 1
            self.stats.calls += 1
            answer, failure = await self._attempt(request, reservation, throttle)
            if isinstance(failure, RequestRejected):
                self._record_error(group, failure.kind, str(failure), attempts)
                return
            if failure is not None:
                if failure.kind == "rate_limit":
                    throttle.rate_limited_at(sent_at, failure.retry_after)
                    self.stats.rate_limited += 1
                    rate_limits += 1
                    if rate_limits > self.options.rate_limit_retries:
                        self._record_error(group, "rate_limit", str(failure), attempts)
                        return
                else:
                    transient += 1
                    if transient > self.options.retries:
                        self._record_error(group, failure.kind, str(failure), attempts)
                        return
                    await asyncio.sleep(backoff_delay(transient, self.options.backoff_base))
                self.stats.retried += 1
                continue
            if answer is None:
                raise RuntimeError("an attempt gave neither an answer nor a failure")
            throttle.succeeded(time.monotonic() - sent_at)
            self._account(answer, reservation)
            retry = answer.status == "unparsed" and unparsed < self.options.unparsed_retries
            self._record_answer(group, answer, attempts, final=not retry)
            if not retry:
                return
            unparsed += 1
            self.stats.retried += 1

    def _settle(self, reservation: Reservation, cost: float | None, answered: bool = True) -> None:
        self.budget.settle(reservation, cost, answered)
        self._settled.set()

    async def _reserve(self, group: _Group) -> Reservation | None:
        """A budget reservation for one attempt; None once a cap (or a stop) ends the run."""
        while self.stats.stopped is None:
            reservation = self.budget.reserve(group.worst_cost)
            if reservation is not None:
                return reservation
            if self.budget.in_flight == 0:
                self._stop(self.budget.refused or "budget")
                return None
            self._settled.clear()
            await self._settled.wait()  # a call in flight may leave room when it settles
        return None

    async def _attempt(
        self, request: JudgeRequest, reservation: Reservation, throttle: Throttle
    ) -> tuple[JudgeAnswer | None, TransientJudgeFailure | RequestRejected | None]:
        """One call: its answer, or the failure to act on. Fatal errors propagate."""
        try:
            answer = await asyncio.wait_for(self.judge.judge(request), self.options.timeout)
        except TimeoutError:
            self._settle(reservation, None, answered=False)
            return None, TransientJudgeFailure("timeout", f"no answer in {self.options.timeout} s")
        except (TransientJudgeFailure, RequestRejected) as failure:
            self._settle(reservation, None, answered=False)
            return None, failure
        except BaseException:
            self._settle(reservation, None, answered=False)
            raise
        finally:
            throttle.release()
        return answer, None

    def _account(self, answer: JudgeAnswer, reservation: Reservation) -> None:
        if answer.cost is not None:
            self.stats.cost += answer.cost
        else:
            self.stats.unpriced_calls += 1
        self.stats.tokens_in += answer.tokens_in or 0
        self.stats.tokens_out += answer.tokens_out or 0
        # A priced model that reported no usage is charged its worst case against the cap.
        charged = answer.cost
        if charged is None and self.options.max_cost is not None:
            charged = reservation.cost
        self._settle(reservation, charged)
