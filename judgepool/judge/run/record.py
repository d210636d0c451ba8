"""A judge run's record in judge_runs (pooling/store/judge_runs.py): one row per judge and the
jury's, with what it was told and did and its canary check, which marks every report that uses
the judge's labels. Written at the end of `run_all` (judge/run/members.py) and of a calibration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgepool.judge.loop_state import LoopStats
from judgepool.judge.run.result import JudgeRun
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import JudgeRunRow, record_judge_run

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.options import JudgeOptions
    from judgepool.judge.run.session import Session


def _describe(judge: Judge) -> dict[str, Any]:
    described = judge.describe()
    return {
        k: described.get(k)
        for k in ("model", "template", "parameters", "sample", "judge")
        if k in described
    }


def _outcome(stats: LoopStats | None, canary_stats: LoopStats | None) -> dict[str, Any]:
    if stats is None:
        return {}
    out: dict[str, Any] = {
        "outcomes": dict(stats.outcomes),
        "calls": stats.calls,
        "cost": stats.cost,
        "tokens_in": stats.tokens_in,
        "tokens_out": stats.tokens_out,
        "stopped": stats.stopped,
    }
    if canary_stats is not None:
        out["canary_calls"] = canary_stats.calls
        out["canary_cost"] = canary_stats.cost
    return out


def record(
    store: Store,
    session: Session,
    options: JudgeOptions,
    run: JudgeRun,
    started: Any,
    command: str = "judge",
    extra: dict[str, Any] | None = None,
) -> None:
    """Record the run in judge_runs (one row per judge, and the jury's): what it was told and
    did, and its canary check, which marks every report that uses the judge's labels."""
    common = {
        "depth": options.depth,
        "runs": list(options.runs),
        "level": options.level,
        "all_queries": options.all_queries,
        "combine": options.combine,
        "num_samples": options.num_samples,
        "canaries_per_query": options.canaries,
        "canary_queries": options.canary_queries,
        "canary_seed": options.canary_seed,
        "members": [m.labeller for m in session.members],
        **(extra or {}),
    }
    threshold = options.canary_threshold
    jury = session.jury is not None
    for judge, member in zip(session.members, run.members, strict=False):
        report = member.canaries
        run.records.append(
            record_judge_run(
                store,
                JudgeRunRow(
                    session=run.session,
                    command=command,
                    labeller=member.labeller,
                    role="member" if jury else "judge",
                    level=options.level,
                    started_at=started,
                    settings={**common, **_describe(judge)},
                    outcome=_outcome(member.stats, member.canary_stats),
                    kinds=report.kinds if report is not None else (),
                    canary_threshold=threshold,
                ),
            )
        )
    if jury and run.jury is not None:
        report = run.canaries
        run.records.append(
            record_judge_run(
                store,
                JudgeRunRow(
                    session=run.session,
                    command=command,
                    labeller=run.labeller,
                    role="jury",
                    level=options.level,
                    started_at=started,
                    settings=common,
                    outcome={**_outcome(run.stats, None), "ties": run.jury.ties},
                    kinds=report.kinds if report is not None else (),
                    canary_threshold=threshold,
                ),
            )
        )
