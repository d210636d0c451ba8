"""What a judge run did (`JudgeRun`: the holes' stats, every member's part, the jury, the
canaries) and how it shows progress (`Bars`), apart from the code that runs it
(judge/run/members.py) and records it (judge/run/record.py), which both read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgepool.judge.loop_state import LoopStats, ProgressSink

if TYPE_CHECKING:
    from judgepool.judge.canaries import CanaryPlan, CanaryReport
    from judgepool.judge.jury import JuryResult

#: Makes the progress bar of one loop: (what it labels, None: the run's own pairs; pairs) -> a
#: sink, or None for none. The judge draws nothing itself: the caller's sink shows progress.
Bars = Callable[[str | None, int], ProgressSink | None]


@dataclass
class MemberRun:
    """One judge's part: its loop over the holes and over the canaries, and its canary check."""

    labeller: str
    stats: LoopStats | None = None
    canary_stats: LoopStats | None = None
    canaries: CanaryReport | None = None


@dataclass
class JudgeRun:
    """What a run did (see the module docstring); `labeller` is whose labels count after it."""

    labeller: str
    stats: LoopStats | None
    members: list[MemberRun] = field(default_factory=list)
    jury: JuryResult | None = None
    jury_canaries: JuryResult | None = None
    canaries: CanaryReport | None = None
    canary_plan: CanaryPlan | None = None
    canary_note: str | None = None
    label_mark: int = 0
    canaries_mark: int = 0
    session: str = ""
    records: list[int] = field(default_factory=list)

    @property
    def canary_cost(self) -> float:
        return sum(m.canary_stats.cost for m in self.members if m.canary_stats is not None)

    @property
    def canary_calls(self) -> int:
        return sum(m.canary_stats.calls for m in self.members if m.canary_stats is not None)
