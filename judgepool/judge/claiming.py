"""Which group the loop may pay for next: claims in the database, so two judges never pay twice.

The loop asks `Dispatcher.next()` for a group to call. The dispatcher claims groups a few at a
time (pooling/store/claims.py: one short write transaction, run on the label writer's thread so that
database work stays in one place and in order), hands out the ones it got, and sets aside the
ones another judge holds. Pairs an open provider batch holds (`batch:ID`, judge --batch) are
not waited for: the batch answers them within its window, so they are reported and left to it.
When nothing else is left it waits for the other judges' claims, polling: a claim that
disappears with labels behind it was done by the other judge (counted, nothing written); one that
disappears without labels (the other judge stopped first), or whose lease ran out (the other judge
died), is claimed and done here. While the run lasts, a background task renews this judge's
leases every third of a lease; the writer releases each claim with the labels it paid for, and
every claim left at the end.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from judgepool.judge.base import JudgeRequest
from judgepool.judge.writer import LabelWriter
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store


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
        store: Store,
        writer: LabelWriter,
        holder: str,
        labeller: str,
        since_id: int,
        lease_s: float,
        batch: int,
        elsewhere: Callable[[Group], None],
        notify: Callable[[str], None] | None = None,
        in_batch: Callable[[Group], None] | None = None,
    ) -> None:
        self.store = store
        self.writer = writer
        self.holder = holder
        self.labeller = labeller
        self.since_id = since_id
        self.lease_s = lease_s
        self.batch = max(1, batch)
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
        self.until: datetime | None = None  # the latest lease end seen on a claim held elsewhere

    def add(self, groups: Sequence[Group]) -> None:
        self.pending.extend(groups)

    async def claim(self, groups: Sequence[Group]) -> list[Group]:
        """Claim `groups` now; returns the ones this judge holds (in order), sets aside the
        ones held elsewhere, and reports the ones another judge has already labelled."""
        if not groups:
            return []
        by_key = {g.key: g for g in groups}
        result = await self.writer.call(
            claims.claim,
            self.store,
            self.holder,
            [g.wanted() for g in groups],
            self.labeller,
            self.since_id,
            self.lease_s,
        )
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
            if self.ready:
                return self.ready.popleft()
            if self.pending:
                count = min(self.batch, len(self.pending))
                batch = [self.pending.popleft() for _ in range(count)]
                self.ready.extend(await self.claim(batch))
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

    async def keep_renewed(self) -> None:
        """Renew this judge's leases every third of a lease until cancelled."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            await self.writer.call(claims.renew, self.store, self.holder, self.lease_s)
