"""Admission control for judge calls: an AIMD concurrency window, Retry-After pauses, backoff.

Providers answer too many requests with 429 and usually say how long to wait (Retry-After, or
OpenAI's retry-after-ms). The throttle turns that into two things: a pause of all new calls until
the server's time has passed, and a multiplicative cut of the concurrency window (once per wave:
only a 429 for a call sent after the last cut counts, so one wave of 429s cuts once). Successes
grow the window again, slowly (by `growth`, 2% by default, of itself per second), up to the
--concurrency the user gave: a small cut and a slow climb keep the rate close under the server's
limit with few 429s, instead of the deep sawtooth a halving would give.

A 429 whose rate-limit headers say no limit is used up (OpenAI's and Anthropic's
`...ratelimit-remaining...` all above 0: the provider refused the call for another reason, an
overload or a fault) pauses new calls for its Retry-After but does not cut the window: a few
such 429s must not shrink a window that the real limit does not. A 429 with no such headers
counts as the limit, as before.

The window is fractional: it admits a call only while fewer than ceil(window) are in flight, and
spaces dispatches by latency / window, so a window of 2.6 runs at 2.6 calls per call latency
instead of being rounded to 2 or 3 (at 200 ms per call and 10 calls/s allowed, that is the
difference between 10 and 15 calls/s).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable

#: A 429 with no Retry-After pauses new calls this long (seconds) before backoff applies.
DEFAULT_PAUSE = 1.0


def backoff_delay(failures: int, base: float = 0.5, cap: float = 20.0) -> float:
    """Exponential backoff with jitter: about base * 2**(failures-1), between half and all of it."""
    ceiling = min(cap, base * 2.0 ** max(0, failures - 1))
    return ceiling * (0.5 + 0.5 * random.random())


class Throttle:
    """Hands out call slots; told about every call's outcome, it adapts how many it hands out."""

    def __init__(
        self,
        maximum: int,
        decrease: float = 0.9,
        growth: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if maximum < 1:
            raise ValueError("the concurrency maximum must be at least 1")
        self.maximum = maximum
        self.window = float(maximum)
        self.decrease = decrease
        self.growth = growth
        self.clock = clock
        self.active = 0
        self.paused_until = 0.0
        self.last_cut = float("-inf")
        self.last_dispatch = float("-inf")
        self.latency = 0.0
        self.rate_limited = 0
        self.cuts = 0
        self._waiters: list[asyncio.Future[None]] = []

    def _spacing(self) -> float:
        """Seconds between dispatches that keep `window` calls per latency (0 when unthrottled)."""
        if self.window >= self.maximum or self.latency <= 0:
            return 0.0
        return self.latency / self.window

    async def acquire(self) -> float:
        """Wait for a slot; returns the dispatch time (give it back to `rate_limited_at`)."""
        while True:
            now = self.clock()
            ready_at = max(self.paused_until, self.last_dispatch + self._spacing())
            if now < ready_at:
                await asyncio.sleep(ready_at - now)
                continue
            if self.active < max(1, math.ceil(self.window)):
                self.active += 1
                self.last_dispatch = now
                return now
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def release(self) -> None:
        """Give a slot back after every attempt, whatever its outcome (synchronous, so it is
        safe in a `finally` of a cancelled task)."""
        self.active -= 1
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def succeeded(self, latency: float) -> None:
        """A call was answered: learn its latency and grow the window a little.

        One success per latency/window seconds, each adding growth * latency, grows the window by
        `growth` of itself per second whatever the latency (50 ms minimum, so instant answers grow
        it too).
        """
        self.latency = latency if self.latency <= 0 else 0.9 * self.latency + 0.1 * latency
        step = self.growth * max(self.latency, 0.05)
        self.window = min(float(self.maximum), self.window + step)

    def rate_limited_at(
        self, sent_at: float, retry_after: float | None, exhausted: bool | None = None
    ) -> None:
        """A call sent at `sent_at` got a 429: pause new calls, and cut the window once per wave
        unless the 429 says no rate limit is used up (`exhausted` False, see the module
        docstring)."""
        now = self.clock()
        self.rate_limited += 1
        pause = retry_after if retry_after is not None else DEFAULT_PAUSE
        self.paused_until = max(self.paused_until, now + max(0.0, pause))
        if exhausted is not False and sent_at >= self.last_cut:
            self.window = max(1.0, self.window * self.decrease)
            self.last_cut = now
            self.cuts += 1
