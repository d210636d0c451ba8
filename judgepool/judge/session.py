"""One judge run as the library and `judgepool judge` both do it: settings -> plan -> run -> ending.

    settings = JudgeSettings(model="openai/gpt-4o-mini", depth=10, max_cost=5)
    session = prepare(store, settings)            # the model, the pool before, the plan, the judge
    result = run_all(store, session, settings)    # holes, canaries, a jury (judge/judge_run.py)
    problem = ending(result.stats, settings)      # None, or the error the run ended with

`models=("openai/a", "openai/b")` (or `num_samples=K`) makes a jury (judge/jury.py); canaries
(judge/canaries.py) are planned here unless `canaries=0`. `run` labels the holes with the one
judge only (no canary, no jury, no record): what a caller that wants the bare loop uses.

The CLI prints around these calls and exits with `problem.exit_code`; the library returns the
report with `problem` attached (jp.Database.judge). Nothing here prints.
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
    UsageError,
    remedy,
)
from judgepool.judge.settings import JudgeSettings as JudgeSettings
from judgepool.judge.settings import judge_options
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.backfill import Forecast, Plan
    from judgepool.judge.base import Judge
    from judgepool.judge.canaries import CanaryPlan
    from judgepool.judge.loop_state import LoopStats, ProgressSink
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


def prepare(store: Store, settings: JudgeSettings) -> Session:
    """Choose the model(s), read the pool, plan the requests and the canaries, make the judge(s).

    A jury fills its own holes: the pairs with no human label and no label of this jury
    (`--judge` does not apply)."""
    from judgepool.judge.backfill import plan_holes
    from judgepool.judge.panel import canaries_for, jury_members
    from judgepool.judge.registry import choose_model, make_judge
    from judgepool.pooling.pool import pool_summary

    s = settings
    members: tuple[Judge, ...] = ()
    jury: str | None = None
    labeller: str | None
    if len(s.models) > 1 or s.num_samples > 1:
        members, jury = jury_members(s)
        model, why, labeller = members[0].labeller, None, jury
    else:
        model, why = choose_model(s.model or (s.models[0] if s.models else None), s.api_base)
        labeller = s.labeller
    before = pool_summary(store, s.depth, s.runs, s.level, labeller, s.all_queries)
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
        members = (make_judge(model, **judge_options(model, s)),)
    canaries = canaries_for(store, s, members[0], labeller)
    return Session(model, why, before, plan, members[0], members, jury, canaries)


def dry_run(store: Store, session: Session) -> Forecast:
    """What the run would do (holes, cache hits, tokens, cost), without a call or a key."""
    from judgepool.judge.backfill import forecast
    from judgepool.judge.cache import JudgeCache

    if session.judge is None:
        raise UsageError("there is no hole to forecast", "nothing to do: every pair is labelled")
    with JudgeCache() as cache:
        return forecast(store, session.judge, session.plan, cache)


def run(
    store: Store,
    session: Session,
    settings: JudgeSettings,
    progress: ProgressSink | None = None,
) -> LoopStats | None:
    """Label the plan's holes (None when there was none); see judge/loop.py."""
    from judgepool.judge.backfill import backfill
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.loop_state import LoopOptions

    if session.judge is None:
        return None
    options = LoopOptions(
        concurrency=settings.concurrency,
        max_cost=settings.max_cost,
        max_calls=settings.max_calls,
        retries=settings.retries,
        timeout=settings.timeout,
    )
    with JudgeCache() as cache:
        return backfill(store, session.judge, session.plan, options, cache, progress)


def ending(stats: LoopStats | None, settings: JudgeSettings) -> JudgepoolError | None:
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
            Param("max_cost", settings.max_cost)
            if stats.stopped == "max-cost"
            else Param("max_calls", settings.max_calls)
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
