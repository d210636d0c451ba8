"""Which group the loop may pay for next: claims in the database, so two judges never pay twice.

The loop asks `Dispatcher.next()` for a group to call. The dispatcher claims groups ahead of the
calls, a stock at a time (pooling/store/claims.py), through the label writer (judge/writer.py),
which writes a claim in the same transaction as the labels that wait: a call is taken from the
stock without waiting for the database, and the stock is topped up while it lasts (about a
second of calls at the rate the judge is going, at least twice --concurrency), so that claims
cost no transaction of their own and none is opened in step with the calls. Only when the stock
is empty does the loop wait for a claim (asked `urgent`: written at once). The dispatcher hands
out the groups it got and sets aside the ones another judge holds. Pairs an open provider batch
holds (`batch:ID`, judge --batch) are not waited for: the batch answers them within its window,
so they are reported and left to it.
When nothing else is left it waits for the other judges' claims, polling: a claim that
disappears with labels behind it was done by the other judge (counted, nothing written); one that
disappears without labels (the other judge stopped first), or whose lease ran out (the other judge
died), is claimed and done here. While the run lasts, the writer renews this judge's leases every
third of a lease, releases each claim with the labels it paid for, and every claim left at the
end. A renewal that finds a claim of the stock gone (this judge was paused past its lease, and
another took the claim over) puts that group back to be claimed again, so that it is waited for
instead of paid twice.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from judgepool.errors import JudgepoolError
from judgepool.judge.base import JudgeRequest
from judgepool.judge.writer import ClaimAsk, LabelWriter
from judgepool.pooling.store import claims
from judgepool.pooling.store.judgments import Judgment


@dataclass
class Group:
    """Requests with one cache key: one call answers them all."""

    key: str
    requests: list[JudgeRequest]
    worst_cost: float | None = None
    entry: dict[str, Any] | None = field(default=None, repr=False)  # a cache hit, when known

    def wanted(self) -> claims.Wanted:
        pairs = tuple((r.qid, r.doc_id) for r in self.requests)
        return claims.Wanted(self.key, pairs, self.requests[0].level)


class Dispatcher:
    """Hands out groups this judge holds the claim of (see the module docstring)."""

    def __init__(
        self,
        writer: LabelWriter,
        labeller: str,
        since_id: int,
        lease_s: float,
        batch: int,
        elsewhere: Callable[[Group], None],
        notify: Callable[[str], None] | None = None,
        in_batch: Callable[[Group], None] | None = None,
    ) -> None:
        self.writer = writer
        self.labeller = labeller
        self.since_id = since_id
        self.lease_s = lease_s
        self.batch = max(1, batch)  # the loop's concurrency: the least stock worth holding
        self.elsewhere = elsewhere  # told about each group another judge has labelled
        self.notify = notify  # told, once, that the run waits for another judge's claims
        self.in_batch = in_batch  # told about each group an open batch holds (not waited for)
        self.batches: set[str] = set()  # batch holders seen holding something we wanted
        self._told = False
        self.poll_s = min(2.0, max(0.1, lease_s / 10))
        self.pending: deque[Group] = deque()
        self.ready: deque[Group] = deque()
        self.waiting: dict[str, Group] = {}
        self.others: set[str] = set()  # holders seen holding something we wanted
        self.taken_over = 0  # pairs whose claim had expired (its judge died) and we took
        self.lost = 0  # groups of the stock whose claim another judge took over meanwhile
        self.until: datetime | None = None  # the latest lease end seen on a claim held elsewhere
        self._handed: deque[float] = deque()  # when groups were handed out, the last 2 s
        self._refill: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        writer.on_renewed = self.renewed

    def add(self, groups: Sequence[Group]) -> None:
        self.pending.extend(groups)

    async def claim(
        self,
        groups: Sequence[Group],
        urgent: bool = True,
        labels: Mapping[str, Sequence[Judgment]] | None = None,
    ) -> list[Group]:
        """Claim `groups`; returns the ones this judge holds (in order), sets aside the ones
        held elsewhere, and reports the ones another judge has already labelled. `labels`: the
        labels of groups already answered (cache hits), written with their claim, which is
        released at once (see judge/writer.py)."""
        if not groups:
            return []
        by_key = {g.key: g for g in groups}
        ask = ClaimAsk(
            [g.wanted() for g in groups], self.labeller, self.since_id, self.lease_s, labels or {}
        )
        result = await self.writer.claim(ask, urgent)
        for key in result.labelled:
            self.elsewhere(by_key[key])
        for key, (holder, until) in result.held.items():
            if self.in_batch is not None and claims.is_batch(holder):
                self.batches.add(holder)
                self.in_batch(by_key[key])
                continue
            self.waiting[key] = by_key[key]
            self.others.add(holder)
            self.until = max(self.until, until) if self.until is not None else until
        self.taken_over += sum(len(by_key[k].requests) for k in result.taken_over)
        mine = set(result.mine) | set(result.taken_over)
        return [g for g in groups if g.key in mine]

    async def next(self, stopping: Callable[[], bool]) -> Group | None:
        """The next group to call, or None when none is left (or the run is stopping)."""
        while not stopping():
            if self._failure is not None:
                raise self._failure
            if self.ready:
                group = self.ready.popleft()
                self._top_up()
                return group
            if self.pending or self._refill is not None:
                await self._refilled()
                continue
            if not self.waiting:
                return None
            self._tell()
            await asyncio.sleep(self.poll_s)
            if stopping():
                return None
            held, self.waiting = list(self.waiting.values()), {}
            self.ready.extend(await self.claim(held))
        return None

    # -- the stock --------------------------------------------------------------------------

    def _rate(self) -> float:
        """Groups handed out per second over the last two seconds (over the time since the
        first one, when the run is younger: the rate is known within half a second)."""
        now = time.monotonic()
        while self._handed and self._handed[0] < now - 2.0:
            self._handed.popleft()
        if not self._handed:
            return 0.0
        return len(self._handed) / max(0.5, now - self._handed[0])

    def _low(self) -> int:
        """Top the stock up below this: what the calls use before the writer's next write."""
        return max(self.batch, math.ceil(self._rate() * 1.5 * self.writer.every))

    def _chunk(self) -> int:
        """Groups to claim in one go: up to about a second of calls above the low mark; at the
        start, before any call, --concurrency only (the first call can be slow to go out, with
        litellm's first imports, and a stock claimed then would age without use)."""
        if not self._handed:
            return self.batch
        return self._low() + max(self.batch, math.ceil(self._rate() * 2 * self.writer.every))

    def _top_up(self) -> None:
        self._handed.append(time.monotonic())
        if self._refill is None and self.pending and len(self.ready) < self._low():
            self._start_refill(urgent=False)

    def _start_refill(self, urgent: bool) -> asyncio.Task[None]:
        count = min(len(self.pending), max(1, self._chunk() - len(self.ready)))
        groups = [self.pending.popleft() for _ in range(count)]
        task = asyncio.get_running_loop().create_task(self._claim_stock(groups, urgent))
        task.add_done_callback(self._refill_done)
        self._refill = task
        return task

    async def _claim_stock(self, groups: list[Group], urgent: bool) -> None:
        self.ready.extend(await self.claim(groups, urgent))

    def _refill_done(self, task: asyncio.Task[None]) -> None:
        if self._refill is task:
            self._refill = None
        if not task.cancelled() and task.exception() is not None:
            self._failure = self._failure or task.exception()

    async def _refilled(self) -> None:
        """Wait for the stock's refill (started now when none is under way), written at once."""
        task = self._refill
        if task is None:
            task = self._start_refill(urgent=True)
        else:
            self.writer.hurry()
        await asyncio.wait([task])
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            if isinstance(error, JudgepoolError):
                raise error
            raise RuntimeError("claiming the stock failed") from error

    def renewed(self, held: set[str]) -> None:
        """After a renewal: a group of the stock whose claim is no longer this judge's (taken
        over while this judge was paused past its lease) goes back to be claimed again."""
        lost = [g for g in self.ready if g.key not in held]
        if not lost:
            return
        self.lost += len(lost)
        self.ready = deque(g for g in self.ready if g.key in held)
        self.pending.extendleft(reversed(lost))

    def _tell(self) -> None:
        if self._told or self.notify is None:
            return
        self._told = True
        pairs = sum(len(g.requests) for g in self.waiting.values())
        until = f" by {self.until:%H:%M:%S} UTC" if self.until is not None else ""
        self.notify(
            f"waiting for {pairs} pairs claimed by another judge on this database "
            f"({', '.join(sorted(self.others))}): it is labelling them now, or it stopped and "
            f"its claims expire{until}, then this judge takes them over"
        )

    @property
    def left(self) -> int:
        """Pairs not handed out yet (still pending, ready, or held by another judge)."""
        groups = [*self.pending, *self.ready, *self.waiting.values()]
        return sum(len(g.requests) for g in groups)
