"""A judge run's beginning and end: `prepare` (options -> the model, the pool before, the plan,
the judges, the canaries) and `ending` (the stats -> the error the run ended with, if any).

    session = prepare(store, JudgeOptions(model="openai/gpt-4o-mini", max_cost=5))
    run = run_all(store, session, options)         # judge/run/members.py
    problem = ending(run.stats, options)           # None, or the error the run ended with

`models=("openai/a", "openai/b")` (or `num_samples=K`) makes a jury (judge/run/panel.py);
canaries (judge/canaries.py) are planned here unless `canaries=0`. Nothing here prints: the
service api/judge.py calls these for `jp.Database.judge` and `judgepool judge` alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.errors import (
    BudgetExceededError,
    HolesFailedError,
    JudgepoolError,
    NothingLabelledError,
    Param,
    Remedy,
    remedy,
)
from judgepool.judge.options import JudgeOptions
from judgepool.judge.registry import constructor_options
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.canaries import CanaryPlan
    from judgepool.judge.loop_state import LoopStats
    from judgepool.judge.run.plan import Plan
    from judgepool.pooling.pool import PoolSummary


@dataclass(frozen=True)
class Session:
    """A run ready to go: the chosen model (and why, when we chose it), the pool before, the
    plan of holes and requests, and the judge (None when there is no hole to label).

    `members` are the judges that label (the judge alone, or a jury's members, the judge being
    the first); `jury` is the jury's labeller (None: one judge); `canaries` the planted pairs."""

    model: str
    why: str | Remedy | None
    before: PoolSummary
    plan: Plan
    judge: Judge | None
    members: tuple[Judge, ...] = ()
    jury: str | None = None
    canaries: CanaryPlan | None = None

    @property
    def labeller(self) -> str:
        """Whose labels the run writes that count: the jury's, the judge's, else the model."""
        return self.jury or (self.judge.labeller if self.judge is not None else self.model)


def prepare(store: Store, options: JudgeOptions) -> Session:
    """Choose the model(s), read the pool, plan the requests and the canaries, make the judge(s).

    A jury fills its own holes: the pairs with no human label and no label of this jury
    (`labeller` does not apply)."""
    from judgepool.judge.registry import choose_model, make_judge
    from judgepool.judge.run.panel import canaries_for, jury_members
    from judgepool.judge.run.plan import plan_holes
    from judgepool.pooling.pool import pool_summary

    s = options
    members: tuple[Judge, ...] = ()
    jury: str | None = None
    labeller: str | None
    if s.is_jury:
        members, jury = jury_members(s)
        model, why, labeller = members[0].labeller, None, jury
    else:
        model, why = choose_model(s.model or (s.models[0] if s.models else None), s.api_base)
        labeller = s.labeller
    before = pool_summary(store, s.pool_spec(labeller))
    plan = plan_holes(
        store,
        s.depth,
        s.runs,
        s.level,
        labeller,
        s.all_queries,
        s.passage_tokens,
        s.max_chunks,
        s.query_tokens,
    )
    if not plan.holes:
        return Session(model, why, before, plan, None, (), jury)
    if not members:
        members = (make_judge(model, **constructor_options(model, s)),)
    canaries = canaries_for(store, s, members[0], labeller, len(plan.built.requests))
    return Session(model, why, before, plan, members[0], members, jury, canaries)


def ending(stats: LoopStats | None, options: JudgeOptions) -> JudgepoolError | None:
    """The error a finished run ended with, or None when every hole with text got a label.

    A judge error (no key, no quota, a fault) is the run's own; a cap that stopped it is a
    `BudgetExceededError` (6); failed holes are `HolesFailedError` (4), or
    `NothingLabelledError` (5) when nothing was labelled. An interrupt is not an error here:
    `stats.stopped == "interrupted"`."""
    if stats is None:
        return None
    if stats.fatal is not None:
        return stats.fatal
    if stats.stopped == "interrupted":
        return None
    left = stats.outcomes["not_attempted"]
    failed = stats.failed
    why = "; ".join(f"{n} {kind}" for kind, n in stats.failures.most_common())
    failures = f"; {failed} pairs failed ({why})" if failed else ""
    if stats.stopped in ("max-cost", "max-calls"):
        cap = (
            Param("max_cost", options.max_cost)
            if stats.stopped == "max-cost"
            else Param("max_calls", options.max_calls)
        )
        return BudgetExceededError(
            remedy("stopped before exceeding {}: ", cap) + f"{left} pairs not attempted{failures}",
            "raise the cap, or run the same command again to continue",
        )
    if not failed:
        return None
    hint = (
        "see the reasons above; run the same command again to retry them (answers already "
        "received are not paid again)"
    )
    attempted = stats.outcomes["ok"] + failed
    if stats.outcomes["ok"] == 0:
        return NothingLabelledError(
            f"nothing was labelled: all {attempted} pairs attempted failed ({why})", hint
        )
    return HolesFailedError(
        f"{failed} of {attempted} pairs attempted failed and are still holes ({why})", hint
    )
