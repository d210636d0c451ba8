"""Spending caps (--max-cost in USD, --max-calls) that stop the work before they would be exceeded.

Every request reserves, before it is sent, one call and its worst-case cost (input tokens with a
margin, output at the --max-tokens cap). How it settles depends on what came back:
- an answer: its real cost (a priced model that reported no usage stays at its worst case);
- an HTTP error status (429, 5xx, a refused request): nothing, the provider did not run it;
- nothing readable (a timeout, an answer cut off, a lost connection): the provider may have run
  and billed it, and we will never know its usage, so it stays charged at its worst case.
A reservation that would take calls or cost past a cap is refused; the loop then waits for the
calls in flight to settle (their real cost is usually far below the worst case) and stops
dispatching once a reservation is refused with nothing in flight. What is spent, charged and in
flight can never pass the cap, as far as the token counts hold. A model with no known price has
cost None: only --max-calls can cap it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judgepool.errors import Param, Placeholder, UsageError, remedy

#: How a request ended, for its reservation (see the module docstring).
Outcome = Literal["answered", "refused", "unanswered"]


@dataclass
class Reservation:
    """What one attempt holds until its answer comes back."""

    cost: float


class Budget:
    """Calls and USD spent, charged, reserved, and the caps; `refused` names the cap that
    refused last."""

    def __init__(
        self, max_cost: float | None = None, max_calls: int | None = None, priced: bool = True
    ) -> None:
        if max_cost is not None and max_cost < 0:
            raise UsageError(
                remedy("{} is negative", Param("max_cost", max_cost)),
                "give a cap of 0 or more USD",
                value=max_cost,
            )
        if max_calls is not None and max_calls < 0:
            raise UsageError(
                remedy("{} is negative", Param("max_calls", max_calls)),
                "give a cap of 0 or more",
                value=max_calls,
            )
        if max_cost is not None and not priced:
            raise UsageError(
                remedy(
                    "{} cannot cap this model: its price is unknown (a local server or a model "
                    "missing from litellm's price map)",
                    Param("max_cost", None),
                ),
                remedy("cap it with {} instead", Param("max_calls", Placeholder("N"))),
                value=max_cost,
            )
        self.max_cost = max_cost
        self.max_calls = max_calls
        self.calls = 0
        self.cost = 0.0
        self.charged = 0.0  # worst cases of requests sent that never got a readable answer
        self.unanswered = 0
        self.unpriced_calls = 0
        self.reserved_cost = 0.0
        self.in_flight = 0
        self.refused: str | None = None

    @property
    def committed(self) -> float:
        """USD that counts against the cap now: spent, charged at worst case, and reserved."""
        return self.cost + self.charged + self.reserved_cost

    def reserve(self, worst_cost: float | None) -> Reservation | None:
        """Hold one call and its worst cost, or None (`refused` names the cap) if a cap forbids
        it now. A refusal while other calls are in flight may pass once they settle."""
        self.refused = None
        if self.max_calls is not None and self.calls + 1 > self.max_calls:
            self.refused = "max-calls"
            return None
        worst = worst_cost or 0.0
        if self.max_cost is not None and self.committed + worst > self.max_cost:
            self.refused = "max-cost"
            return None
        self.calls += 1
        self.in_flight += 1
        self.reserved_cost += worst
        return Reservation(worst)

    def settle(
        self, reservation: Reservation, cost: float | None, outcome: Outcome = "answered"
    ) -> None:
        """Replace a reservation by what the request cost (see the module docstring); `cost`
        is the answer's real cost (None: unknown), used when `outcome` is `answered`."""
        self.in_flight -= 1
        self.reserved_cost = max(0.0, self.reserved_cost - reservation.cost)
        if outcome == "unanswered":
            self.charged += reservation.cost
            self.unanswered += 1
        elif outcome == "answered":
            if cost is not None:
                self.cost += cost
            else:
                self.unpriced_calls += 1
