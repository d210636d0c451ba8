"""One group's calls to the judge: budget, throttle, timeout, retries, and what each outcome means.

Only what a retry can cure is retried: a rate limit (after the server's Retry-After, up to
`rate_limit_retries`), a 5xx, a timeout or a lost connection (jittered exponential backoff, up
to `retries`), and an unparsed answer (once). A request the provider refuses on its own merits
(`RequestRejected`: over the context window, a content filter) labels the pair `error` with the
reason, at once. An error that would fail every request (`JudgeError`: a refused key, no quota,
an unknown model) propagates: the loop stops the whole run on it.

A server that is down is not retried pair after pair: once `DEAD_AFTER` calls in a row (or two
rounds of the concurrency, when more) failed to connect with no answer of any kind from the
server in between, the run stops with an error that names the address and what to check (a
dead server otherwise cost every hole its full retries, minutes, before saying anything).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Protocol

from judgepool.errors import JudgeError, JudgepoolError, Param, remedy
from judgepool.judge.base import (
    JudgeAnswer,
    JudgeRequest,
    RequestRejected,
    TransientJudgeFailure,
)
from judgepool.judge.budget import Outcome, Reservation
from judgepool.judge.cache import CACHE_FAULTS
from judgepool.judge.provenance import now_iso, storable
from judgepool.judge.throttle import Throttle, backoff_delay

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.budget import Budget
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.claiming import Group
    from judgepool.judge.loop_state import LoopOptions, LoopStats
    from judgepool.judge.provenance import LabelMaker
    from judgepool.judge.writer import LabelWriter


class LoopHost(Protocol):
    """What the calls need from the labelling loop that drives them (judge/loop.py)."""

    options: LoopOptions
    stats: LoopStats
    judge: Judge
    cache: JudgeCache
    labels: LabelMaker
    writer: LabelWriter
    budget: Budget

    def finish(self, group: Group, outcome: str, grade: int | None = None) -> None: ...

    def failed(self, group: Group, outcome: str, why: str, message: str) -> None: ...

    def cache_fault(self, err: Exception, doing: str) -> None: ...

    def stop(self, reason: str) -> None: ...

    def fail_run(self, error: JudgepoolError, reason: str) -> None: ...

    async def backoff(self, seconds: float) -> None: ...


#: Connection failures in a row, with no answer in between, after which the server is down.
DEAD_AFTER = 5


_HOW = {
    "rate_limit": "still rate-limited (HTTP 429)",
    "server": "server error",
    "timeout": "no answer in time",
    "connection": "connection failed or cut off",
    "context_window": "prompt longer than the model's context window",
    "content_policy": "refused by the provider's content filter",
}


def failure_text(kind: str, message: str, attempts: int) -> str:
    """`kind (what it means) after N attempts: message` for summaries and notes."""
    what = _HOW.get(kind, kind)
    tries = f" after {attempts} attempt{'' if attempts == 1 else 's'}"
    return f"{kind} ({what}){tries}: {message}"


class Caller:
    """Calls the judge for the groups the loop hands it, in the loop's event loop."""

    def __init__(self, loop: LoopHost) -> None:
        self.loop = loop
        self.options = loop.options
        self.throttle = Throttle(loop.options.concurrency)
        self._settled = asyncio.Event()
        self.unreachable = 0  # connection failures since the server last answered anything
        self.dead_after = max(DEAD_AFTER, 2 * loop.options.concurrency)

    async def work(self, group: Group) -> None:
        """Ask the judge for one group until an answer, a final failure, or a stop."""
        stats, throttle = self.loop.stats, self.throttle
        request = group.requests[0]
        attempts = transient = rate_limits = unparsed = 0
        while True:
            reservation = await self._reserve(group)
            if reservation is None:
                return
            await self.loop.writer.between()  # never while this judge holds the file
            sent_at = await throttle.acquire()
            if stats.stopped is not None:
                throttle.release()
                self._settle(reservation, None, "refused")
                return
            attempts += 1
            stats.calls += 1
            stats.retried += attempts > 1  # counted when sent: a cap may refuse the retry
            answer, failure = await self._attempt(request, reservation)
            if isinstance(failure, RequestRejected):
                self._record_error(group, failure.kind, str(failure), attempts)
                return
            if failure is not None and failure.kind == "connection":
                self.unreachable += 1
                if self.unreachable >= self.dead_after:
                    self._unreachable(str(failure))
                    return
            elif failure is None or failure.kind != "timeout":
                self.unreachable = 0  # the server answered (an answer, a 429, a 5xx, a refusal)
            if failure is not None:
                if failure.kind == "rate_limit":
                    throttle.rate_limited_at(sent_at, failure.retry_after, failure.exhausted)
                    stats.rate_limited += 1
                    rate_limits += 1
                    if rate_limits > self.options.rate_limit_retries:
                        self._record_error(group, "rate_limit", str(failure), attempts)
                        return
                else:
                    transient += 1
                    if transient > self.options.retries:
                        self._record_error(group, failure.kind, str(failure), attempts)
                        return
                    await self.loop.backoff(backoff_delay(transient, self.options.backoff_base))
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

    def _unreachable(self, message: str) -> None:
        """Stop the run: the judge's server refused or dropped every recent connection."""
        if self.loop.stats.fatal is not None:
            return
        where = _address(self.loop.judge)
        self.loop.fail_run(
            JudgeError(
                f"cannot reach the judge at {where}: {self.unreachable} calls in a row failed "
                f"to connect, with no answer from it in between ({message[:300]}); the run "
                "stopped there, and the holes not labelled are left for the next run",
                remedy(
                    "check that the server is running and listening at that address (the "
                    "model's {}, or the provider's status and your network or proxy), then run "
                    "the same command again",
                    Param("api_base", None),
                ),
            ),
            "unreachable",
        )

    def _count(self, group: Group, answer: JudgeAnswer) -> None:
        if answer.status == "ok":
            self.loop.stats.shared += len(group.requests) - 1
            self.loop.finish(group, "ok", answer.grade)
        else:
            problem = str(answer.provenance.get("parse_problem") or "no grade")
            self.loop.failed(
                group,
                answer.status,
                "unparsed",
                f"unparsed (the answer had no single grade 0-3): {problem}; the raw answers "
                "are stored",
            )

    def _record_answer(self, group: Group, answer: JudgeAnswer, attempt: int, final: bool) -> None:
        """Cache an ok answer, then queue its labels; count the group once it is final.

        The labels are queued whatever the cache says: a cache that cannot store (disk full)
        stops the run, but never loses an answer that was paid for.
        """
        loop = self.loop
        answer = storable(answer)
        judged_at = now_iso()
        if answer.status == "ok":
            try:
                loop.cache.put(group.key, loop.labels.cache_entry(answer, judged_at))
            except CACHE_FAULTS as err:
                loop.cache_fault(err, "storing an answer")
        labels = loop.labels.answered(group.requests, group.key, answer, attempt, judged_at)
        loop.writer.add(labels, release=[group.key] if final else [])
        if final:
            self._count(group, answer)

    def _record_error(self, group: Group, kind: str, message: str, attempts: int) -> None:
        loop = self.loop
        labels = loop.labels.failed(group.requests, group.key, kind, message, attempts)
        loop.writer.add(labels, release=[group.key])
        loop.failed(group, "error", kind, failure_text(kind, labels[0].note or message, attempts))

    def _settle(self, reservation: Reservation, cost: float | None, outcome: Outcome) -> None:
        self.loop.budget.settle(reservation, cost, outcome)
        self._settled.set()

    async def _reserve(self, group: Group) -> Reservation | None:
        """A budget reservation for one attempt; None once a cap (or a stop) ends the run."""
        budget, stats = self.loop.budget, self.loop.stats
        while stats.stopped is None:
            reservation = budget.reserve(group.worst_cost)
            if reservation is not None:
                return reservation
            if budget.in_flight == 0:
                self.loop.stop(budget.refused or "budget")
                return None
            self._settled.clear()
            await self._settled.wait()  # a call in flight may leave room when it settles
        return None

    async def _attempt(
        self, request: JudgeRequest, reservation: Reservation
    ) -> tuple[JudgeAnswer | None, TransientJudgeFailure | RequestRejected | None]:
        """One call: its answer, or the failure to act on. Fatal errors propagate; a request
        with no readable answer stays charged at its worst case."""
        try:
            answer = await asyncio.wait_for(self.loop.judge.judge(request), self.options.timeout)
        except TimeoutError:
            self._settle(reservation, None, "unanswered")
            return None, TransientJudgeFailure("timeout", f"no answer in {self.options.timeout} s")
        except TransientJudgeFailure as failure:
            self._settle(reservation, None, "unanswered" if failure.unanswered else "refused")
            return None, failure
        except RequestRejected as failure:
            self._settle(reservation, None, "refused")
            return None, failure
        except BaseException:
            self._settle(reservation, None, "unanswered")
            raise
        finally:
            self.throttle.release()
        return answer, None

    def _account(self, answer: JudgeAnswer, reservation: Reservation) -> None:
        stats = self.loop.stats
        if answer.cost is not None:
            stats.cost += answer.cost
        else:
            stats.unpriced_calls += 1
        stats.tokens_in += answer.tokens_in or 0
        stats.tokens_out += answer.tokens_out or 0
        # A priced model that reported no usage is charged its worst case against the cap.
        charged = answer.cost
        if charged is None and self.options.max_cost is not None:
            charged = reservation.cost
        self._settle(reservation, charged, "answered")


def _address(judge: Judge) -> str:
    """Where the judge's calls go: its --api-base, else its model's provider."""
    inner = getattr(judge, "inner", judge)
    settings = getattr(inner, "settings", None)
    base = getattr(settings, "api_base", None)
    if base:
        return str(base)
    model = getattr(settings, "model", None)
    return f"the provider of {model}" if model else judge.labeller
