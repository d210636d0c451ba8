"""The judge verb: fill the holes of a pool with a judge (an LLM via litellm, or offline), as
`jp.Database.judge` and `judgepool judge` both do it.

    report = judge(store, JudgeOptions(model="openai/gpt-4o-mini", max_cost=5))
    forecast = judge(store, options, dry_run=True)      # holes, cache hits, cost: no call, no key

One service for the library and the command line: it prepares the run (judge/run/session.py:
the model, the pool before, the plan, the judges, the canaries), tells `progress` what it is
about to do (`JudgeProgress.planned`, before any call), then forecasts it (a dry run) or runs
every member, the canaries and a jury (judge/run/members.py), and returns what happened with
judged@depth before and after. A run that fell short (failed holes, a cap, a judge error) says
so in the report's `problem`; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

from judgepool.api.progress import Progress
from judgepool.api.results import JudgeReport, Pool
from judgepool.errors import Remedy
from judgepool.judge.canaries import CanaryReport
from judgepool.judge.loop_state import LoopStats
from judgepool.judge.options import JUDGE_DEFAULTS, Combine, Effort, JudgeOptions
from judgepool.judge.run.plan import Forecast
from judgepool.judge.run.result import JudgeRun, MemberRun
from judgepool.pooling.pool import PoolSummary
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.run.session import Session
    from judgepool.metrics.judges import JudgesAgreement

__all__ = [
    "JUDGE_DEFAULTS",
    "CanaryReport",
    "Combine",
    "Effort",
    "Forecast",
    "JudgeForecast",
    "JudgeOptions",
    "JudgeProgress",
    "JudgeReport",
    "JudgeRun",
    "JudgeStart",
    "LoopStats",
    "MemberRun",
    "PoolSummary",
    "judge",
]


@dataclass(frozen=True)
class JudgeStart:
    """What a run is about to do, told before any call: the model (and `why` it was chosen, when
    none was named), the judge or jury that labels (None: there is no hole), the holes at
    `depth`, and a reasoning model's decoding (`reasoning`)."""

    model: str
    why: str | Remedy | None
    labeller: str | None
    holes: int
    depth: int
    level: str
    runs: int
    reasoning: str | Remedy | None = None


class JudgeProgress(Progress):
    """`Progress` for a judge run: also told the run's plan once it is prepared (the CLI prints
    it; the library keeps quiet)."""

    def planned(self, start: JudgeStart) -> None:
        """The run is prepared: `start` says what it will do."""


@dataclass(frozen=True)
class JudgeForecast:
    """What a run would do (a dry run: no call, no key needed, nothing written).

    `forecast` is the first judge's for the holes (None: no hole); `checks` has, per judge,
    its holes' forecast and its canaries' (None: no canary); `max_tokens` is the output cap
    per call the judge would ask for."""

    start: JudgeStart
    before: Pool
    forecast: Forecast | None = None
    checks: tuple[tuple[str, Forecast, Forecast | None], ...] = ()
    max_tokens: int | None = None


def _pool(store: Store, summary: PoolSummary, options: JudgeOptions) -> Pool:
    """The pool a summary was read from, with its holes."""
    from judgepool.pooling.pool import holes_table

    return Pool(summary, holes_table(store, options.pool_spec(summary.labeller)))


def _start(session: Session, options: JudgeOptions) -> JudgeStart:
    judge = session.judge
    return JudgeStart(
        model=session.model,
        why=session.why,
        labeller=None if judge is None else session.labeller,
        holes=len(session.plan.holes),
        depth=options.depth,
        level=options.level,
        runs=len(session.before.runs),
        reasoning=getattr(judge, "decoding_note", None) if judge is not None else None,
    )


def _dry_run(store: Store, session: Session, start: JudgeStart, before: Pool) -> JudgeForecast:
    from judgepool.judge.run.members import dry_runs

    if session.judge is None:
        return JudgeForecast(start, before)
    checks = tuple(dry_runs(store, session))
    chosen = session.judge.describe().get("parameters", {})
    max_out = chosen.get("max_tokens") or chosen.get("max_completion_tokens")
    return JudgeForecast(start, before, checks[0][1], checks, max_out)


@overload
def judge(
    store: Store,
    options: JudgeOptions,
    *,
    dry_run: Literal[False] = False,
    progress: JudgeProgress | None = None,
) -> JudgeReport: ...


@overload
def judge(
    store: Store,
    options: JudgeOptions,
    *,
    dry_run: Literal[True],
    progress: JudgeProgress | None = None,
) -> JudgeForecast: ...


def judge(
    store: Store,
    options: JudgeOptions,
    *,
    dry_run: bool = False,
    progress: JudgeProgress | None = None,
) -> JudgeReport | JudgeForecast:
    """Label the holes of the pool `options` describe (see the module docstring); with
    `dry_run`, what it would do. A judge that cannot even start (an unknown model, options that
    contradict) raises; what stopped a run that started is the report's `problem`."""
    from judgepool.judge.run.members import run_all
    from judgepool.judge.run.session import ending, prepare
    from judgepool.pooling.pool import pool_summary

    shown = progress or JudgeProgress()
    session = prepare(store, options)
    start = _start(session, options)
    shown.planned(start)
    before = _pool(store, session.before, options)
    if dry_run:
        return _dry_run(store, session, start, before)
    run = run_all(store, session, options, shown.bar if session.judge is not None else None)
    counted = session.before.labeller  # a jury's holes: the pairs it did not label
    after = pool_summary(store, options.pool_spec(counted))
    return JudgeReport(
        labeller=run.labeller,
        holes=start.holes,
        stats=run.stats,
        before=before,
        after=_pool(store, after, options),
        problem=ending(run.stats, options),
        run=run,
        agreement=_agreement(store, run, options) if run.jury is not None else None,
    )


def _agreement(store: Store, run: JudgeRun, options: JudgeOptions) -> JudgesAgreement:
    """How much a jury's members agree on the pairs this run graded."""
    from judgepool.metrics.judges import judges_agreement

    names = [m.labeller for m in run.members]
    return judges_agreement(store, options.level, names, since_id=run.label_mark)
