"""A whole judge run: every member labels the holes, then the canaries, then a jury combines,
and the run is recorded (judge/run/record.py). What the service api/judge.py (behind
`judgepool judge` and `jp.Database.judge`) calls after `session.prepare`:

    session = prepare(store, options)
    result = run_all(store, session, options)     # JudgeRun: holes, members, canaries, jury

The members (one judge, or a jury's) run one after another through the same labelling loop,
cache and claims, the holes first: a cap (`--max-cost`, `--max-calls`) covers the whole run,
each loop getting what the ones before it left, and a stop (a cap, Ctrl-C, an error) ends the
run there. The canaries run after the holes (they never delay or crowd out the labels asked
for) through the same loop, with purpose `canary`; when a cap or a stop came first they are not
run, and the result says so. `stats` is what the CLI's summary and exit code read: the single
judge's loop, or for a jury the combined view (pairs by the jury's outcome, calls and cost of
every member). A calibration reuses the canary part (`canaries_after`) and `record`.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from judgepool.judge.cache import JudgeCache
from judgepool.judge.canaries import canary_report
from judgepool.judge.jury import JuryResult, combine_run
from judgepool.judge.loop import LabellingLoop
from judgepool.judge.loop_state import LoopOptions, LoopStats
from judgepool.judge.requests import Built
from judgepool.judge.run.plan import Forecast, Plan, forecast
from judgepool.judge.run.record import record
from judgepool.judge.run.result import Bars, JudgeRun, MemberRun
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import label_mark

if TYPE_CHECKING:
    from judgepool.judge.base import Judge
    from judgepool.judge.options import JudgeOptions
    from judgepool.judge.run.session import Session


def _left(options: JudgeOptions, spent: list[LoopStats]) -> LoopOptions | None:
    """The loop options with what the earlier loops left of the caps (None: nothing left)."""
    cost = sum(s.cost + s.charged for s in spent)
    calls = sum(s.calls for s in spent)
    max_cost = None if options.max_cost is None else options.max_cost - cost
    max_calls = None if options.max_calls is None else options.max_calls - calls
    if (max_cost is not None and max_cost <= 0) or (max_calls is not None and max_calls <= 0):
        return None
    return LoopOptions(
        concurrency=options.concurrency,
        max_cost=max_cost,
        max_calls=max_calls,
        retries=options.retries,
        timeout=options.timeout,
    )


def _capped(options: JudgeOptions, total: int) -> LoopStats:
    """The stats of a loop a cap left no room for: nothing attempted."""
    stats = LoopStats(total=total)
    stats.outcomes["not_attempted"] = total
    stats.stopped = "max-cost" if options.max_cost is not None else "max-calls"
    return stats


def _loop(
    store: Store,
    judge: Judge,
    cache: JudgeCache,
    limits: LoopOptions,
    built: Built,
    since: int,
    bars: Bars | None,
    what: str,
) -> LoopStats:
    bar = bars(what, len(built.requests) + len(built.skipped)) if bars is not None else None
    loop = LabellingLoop(store, judge, cache, limits, bar)
    return loop.run(built.requests, built.skipped, since)


def _ended(stats: LoopStats) -> bool:
    return stats.stopped is not None or stats.fatal is not None


def _answered(stats: LoopStats | None) -> bool:
    """Whether the judge gave an answer (paid or from the cache) to some hole of the run."""
    return stats is not None and stats.outcomes["ok"] + stats.outcomes["unparsed"] > 0


def _jury_stats(plan: Plan, runs: Sequence[MemberRun], result: JuryResult) -> LoopStats:
    """The jury's view of the holes: pairs by the jury's outcome; calls, cost and tokens of
    every member; failures named by member."""
    stats = LoopStats(total=len(plan.holes))
    member_stats = [m.stats for m in runs if m.stats is not None]
    for name in (
        "calls",
        "rate_limited",
        "retried",
        "cached",
        "shared",
        "unanswered",
        "unpriced_calls",
        "tokens_in",
        "tokens_out",
        "taken_over",
        "labels_written",
    ):
        setattr(stats, name, sum(getattr(s, name) for s in member_stats))
    for name in ("cost", "charged", "prepare_s", "elapsed_s"):
        setattr(stats, name, sum(getattr(s, name) for s in member_stats))
    stats.other_judges = max((s.other_judges for s in member_stats), default=0)
    for run in runs:
        if run.stats is None:
            continue
        for why, n in run.stats.failures.items():
            stats.failures[f"{run.labeller}: {why}"] += n
            example = run.stats.failure_examples.get(why, why)
            stats.failure_examples.setdefault(
                f"{run.labeller}: {why}", f"{run.labeller}: {example}"
            )
        if stats.stopped is None and run.stats.stopped is not None:
            stats.stopped = run.stats.stopped
        stats.fatal = stats.fatal or run.stats.fatal
    no_text = len(plan.built.skipped)
    stats.outcomes["ok"] = result.ok
    stats.outcomes["error"] = result.failed
    stats.outcomes["no_text"] = no_text
    left = stats.total - result.ok - result.failed - no_text
    if left:
        stats.outcomes["not_attempted"] = left
    stats.grades = Counter(result.grades)
    stats.done = stats.total - left
    return stats


def run_all(
    store: Store, session: Session, options: JudgeOptions, bars: Bars | None = None
) -> JudgeRun:
    """Label the holes with every member, then the canaries; combine (a jury); record the run."""
    labeller = session.jury or (session.judge.labeller if session.judge else session.model)
    if session.judge is None:
        return JudgeRun(labeller, None)
    run = JudgeRun(
        labeller,
        None,
        canary_plan=session.canaries,
        label_mark=session.plan.label_mark,
        session=secrets.token_hex(8),
    )
    started = utcnow()
    plan = session.plan
    spent: list[LoopStats] = []
    with JudgeCache() as cache:
        for judge in session.members:
            member = MemberRun(judge.labeller)
            run.members.append(member)
            limits = _left(options, spent)
            if limits is None:
                member.stats = _capped(options, len(plan.holes))
                break
            member.stats = _loop(
                store, judge, cache, limits, plan.built, plan.label_mark, bars, judge.labeller
            )
            spent.append(member.stats)
            if _ended(member.stats):
                break
        stopped = any(m.stats is None or _ended(m.stats) for m in run.members)
        stopped = stopped or len(run.members) < len(session.members)
        canaries = session.canaries
        if canaries is not None and canaries.requests:
            if stopped:
                run.canary_note = "not run: the run stopped before the holes were done"
            elif not plan.built.requests:
                run.canary_note = "not planted: no hole to judge in this run"
            elif not all(_answered(m.stats) for m in run.members):
                # every hole was held by a batch or another judge, or failed: a canary checks
                # answers, and there was none to check
                run.canary_note = "not planted: the judge answered no hole in this run"
            else:
                run_canaries(store, session, options, run, cache, spent, bars)
    fatal = next((m.stats.fatal for m in run.members if m.stats and m.stats.fatal), None)
    try:
        if session.jury is not None:
            _combine(store, session, options, run)
        else:
            run.stats = run.members[0].stats
            run.canaries = run.members[0].canaries
        record(store, session, options, run, started)
    except Exception:
        # A run that already stopped on an error (a full disk under the database) reports that
        # error, with what to do; combining and the record are what could not be written then.
        if fatal is None:
            raise
        if run.stats is None:
            run.stats = _jury_stats(plan, run.members, JuryResult(session.jury or "", ""))
    return run


def _combine(store: Store, session: Session, options: JudgeOptions, run: JudgeRun) -> None:
    """The jury's labels of the holes (and of the canaries, when they ran) and its check."""
    plan, canaries = session.plan, session.canaries
    jury = session.jury or ""
    members = [m.labeller for m in session.members]
    run.jury = combine_run(
        store,
        members,
        jury,
        options.combine,
        plan.built.requests,
        plan.label_mark,
        plan.built.skipped,
    )
    run.stats = _jury_stats(plan, run.members, run.jury)
    if canaries is not None and canaries.requests and run.canary_note is None:
        mark = run.canaries_mark
        run.jury_canaries = combine_run(
            store, members, jury, options.combine, canaries.requests, mark
        )
        run.canaries = canary_report(store, jury, canaries, mark, options.canary_threshold)


def run_canaries(
    store: Store,
    session: Session,
    options: JudgeOptions,
    run: JudgeRun,
    cache: JudgeCache,
    spent: list[LoopStats],
    bars: Bars | None,
) -> None:
    """Every member's loop over the canaries (what `spent` used counts against the caps), then
    each member's canary check."""
    plan = session.canaries
    if plan is None:
        return
    mark = label_mark(store)
    run.canaries_mark = mark
    built = Built(plan.requests, [])
    for judge, member in zip(session.members, run.members, strict=True):
        limits = _left(options, spent)
        if limits is None:
            run.canary_note = "stopped: the cap left no room for them"
            break
        member.canary_stats = _loop(
            store, judge, cache, limits, built, mark, bars, f"canaries {judge.labeller}"
        )
        spent.append(member.canary_stats)
        if _ended(member.canary_stats):
            why = member.canary_stats.stopped or "error"
            run.canary_note = f"stopped ({why}) before every canary was answered"
            # An error that needs the user, or Ctrl-C, ends the whole run as it would have
            # during the holes; a cap that leaves no room for canaries does not.
            main = member.stats
            if main is not None:
                main.fatal = main.fatal or member.canary_stats.fatal
                if why == "interrupted":
                    main.stopped = main.stopped or why
            break
    for member in run.members:
        if member.canary_stats is not None:
            member.canaries = canary_report(
                store, member.labeller, plan, mark, options.canary_threshold
            )


def canaries_after(
    store: Store,
    session: Session,
    options: JudgeOptions,
    stats: LoopStats,
    bars: Bars | None = None,
    what: str = "pairs",
) -> JudgeRun:
    """The canaries of a run whose own pairs one judge has labelled (`stats`: `calibrate`'s
    loop): run as `judge` runs them, after those pairs and within what they left of the caps,
    and not at all when that loop stopped. Not recorded: see `record`."""
    judge = session.judge
    labeller = judge.labeller if judge is not None else session.model
    run = JudgeRun(
        labeller,
        stats,
        [MemberRun(labeller, stats)],
        canary_plan=session.canaries,
        label_mark=session.plan.label_mark,
        session=secrets.token_hex(8),
    )
    plan = session.canaries
    if judge is None or plan is None or not plan.requests:
        return run
    if _ended(stats):
        run.canary_note = f"not run: the run stopped before the {what} were done"
        return run
    with JudgeCache() as cache:
        run_canaries(store, session, options, run, cache, [stats], bars)
    run.canaries = run.members[0].canaries
    return run


def dry_runs(store: Store, session: Session) -> list[tuple[str, Forecast, Forecast | None]]:
    """Per member: the forecast of the holes and of the canaries (None: no canary)."""
    plan = session.plan
    found = []
    with JudgeCache() as cache:
        for judge in session.members:
            holes = forecast(store, judge, plan, cache)
            canaries = None
            if session.canaries is not None and session.canaries.requests:
                fake = replace(plan, holes=[], built=Built(session.canaries.requests, []))
                canaries = forecast(store, judge, fake, cache)
            found.append((judge.labeller, holes, canaries))
    return found
