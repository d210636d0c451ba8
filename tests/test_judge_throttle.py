"""The throttle's AIMD window, Retry-After pauses and pacing; the budget's reservations; backoff."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from judgepool.errors import UsageError
from judgepool.judge.budget import Budget
from judgepool.judge.throttle import Throttle, backoff_delay


def test_a_wave_of_429s_cuts_the_window_once() -> None:
    throttle = Throttle(10, decrease=0.5)
    sent = time.monotonic()
    for _ in range(5):  # five calls sent together, all answered 429
        throttle.rate_limited_at(sent, retry_after=0.0)
    assert (throttle.window, throttle.cuts, throttle.rate_limited) == (5.0, 1, 5)
    throttle.rate_limited_at(time.monotonic(), retry_after=0.0)  # a call sent after the cut
    assert (throttle.window, throttle.cuts) == (2.5, 2)
    for _ in range(10):
        throttle.rate_limited_at(time.monotonic(), retry_after=0.0)
    assert throttle.window == 1.0  # never below one call


def test_a_429_with_limits_left_pauses_but_does_not_cut_the_window() -> None:
    throttle = Throttle(10, decrease=0.5)
    throttle.rate_limited_at(time.monotonic(), retry_after=0.2, exhausted=False)
    assert (throttle.window, throttle.cuts, throttle.rate_limited) == (10.0, 0, 1)
    assert throttle.paused_until > time.monotonic()  # its Retry-After still holds new calls
    throttle.rate_limited_at(time.monotonic(), retry_after=0.0, exhausted=None)  # no headers
    throttle.rate_limited_at(time.monotonic(), retry_after=0.0, exhausted=True)
    assert throttle.cuts == 2 and throttle.window == 2.5


def test_successes_grow_the_window_by_a_share_of_itself_per_second() -> None:
    throttle = Throttle(10, decrease=0.5, growth=0.02)
    throttle.rate_limited_at(time.monotonic(), None)
    assert throttle.window == 5.0
    # at 200 ms a call and 5 in flight, one second brings 25 successes: +2% of the window
    for _ in range(25):
        throttle.succeeded(0.2)
    assert throttle.window == pytest.approx(5.0 + 25 * 0.02 * 0.2)
    for _ in range(100_000):
        throttle.succeeded(0.2)
    assert throttle.window == 10.0  # capped at --concurrency


def test_retry_after_pauses_new_calls() -> None:
    async def scenario() -> tuple[float, float]:
        throttle = Throttle(4)
        first = await throttle.acquire()
        throttle.release()
        throttle.rate_limited_at(first, retry_after=0.3)
        second = await throttle.acquire()
        return first, second

    first, second = asyncio.run(scenario())
    assert second - first >= 0.29


def test_the_window_bounds_calls_in_flight() -> None:
    async def scenario() -> int:
        throttle = Throttle(3)
        peak = 0
        live = 0

        async def call() -> None:
            nonlocal peak, live
            await throttle.acquire()
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0.01)
            live -= 1
            throttle.release()

        await asyncio.gather(*(call() for _ in range(20)))
        return peak

    assert asyncio.run(scenario()) == 3


def test_a_fractional_window_paces_dispatches() -> None:
    """Window 1.5 at 100 ms latency: one dispatch every 67 ms, not two at once."""

    async def scenario() -> list[float]:
        throttle = Throttle(4)
        throttle.window = 1.5
        throttle.latency = 0.1
        times = []
        for _ in range(4):
            times.append(await throttle.acquire())
            throttle.release()
        return times

    times = asyncio.run(scenario())
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(gap >= 0.066 for gap in gaps), gaps


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    for failures, low, high in ((1, 0.25, 0.5), (2, 0.5, 1.0), (3, 1.0, 2.0), (10, 10.0, 20.0)):
        delays = [backoff_delay(failures) for _ in range(200)]
        assert all(low <= d <= high for d in delays)
        assert len(set(delays)) > 100  # jittered


def test_budget_reserves_worst_cases_and_settles_real_costs() -> None:
    budget = Budget(max_cost=1.0, max_calls=3)
    first = budget.reserve(0.4)
    second = budget.reserve(0.4)
    assert first is not None and second is not None
    assert budget.reserve(0.4) is None and budget.refused == "max-cost"  # 1.2 > 1.0
    budget.settle(first, 0.1)
    third = budget.reserve(0.4)  # 0.1 spent + 0.4 + 0.4 reserved
    assert third is not None
    assert budget.reserve(0.0) is None and budget.refused == "max-calls"
    budget.settle(second, None)
    budget.settle(third, 0.2, "answered")
    assert (budget.cost, budget.unpriced_calls, budget.in_flight) == (pytest.approx(0.3), 1, 0)


def test_budget_charges_a_request_with_no_answer_at_its_worst_case() -> None:
    budget = Budget(max_cost=1.0)
    timed_out = budget.reserve(0.4)
    refused = budget.reserve(0.4)
    assert timed_out is not None and refused is not None
    budget.settle(timed_out, None, "unanswered")  # it may have run: stays at 0.4
    budget.settle(refused, None, "refused")  # an HTTP 429 / 5xx came back: nothing to pay
    assert (budget.cost, budget.charged, budget.unanswered) == (0.0, pytest.approx(0.4), 1)
    assert budget.reserve(0.4) is not None  # 0.4 charged + 0.4
    assert budget.reserve(0.4) is None and budget.refused == "max-cost"  # 0.4 + 0.4 + 0.4 > 1


def test_budget_refuses_a_cost_cap_it_cannot_check() -> None:
    with pytest.raises(UsageError, match="price is unknown"):
        Budget(max_cost=5.0, priced=False)
    Budget(max_calls=5, priced=False)  # calls can always be capped
