"""Re-judging pairs people labelled, through the judge run's own machinery (judge/run/).

    prepared = prepare_calibration(store, options, sample=200, seed=1)
    dry_runs(store, prepared.session)                  # judge/run/members.py: no call
    stats = run_calibration(store, prepared, options)  # the labelling loop, purpose 'calibration'
    check = calibration_canaries(store, prepared, options, stats)  # then the canaries

The sampled pairs (pooling/audit/calibration_pairs.py) become requests exactly as holes do (the same
texts, cut to the same budgets, hence the same cache keys: a pair whose text the judge already
answered costs nothing), and the labelling loop labels them with the same cache, claims,
concurrency, retries, caps and provenance as `judgepool judge`, writing labels with purpose
`calibration` (never effective, never exported). Then, as in every `judge` run, the canaries
(judge/canaries.py, planned from the pool's queries by judge/run/panel.py's `canaries_for`) run
through judge/run/members.py's own code, after the sample and within what it left of the caps;
judge/run/record.py records the check in judge_runs (command `calibrate`), so a judge fooled here is
marked in every report that uses its labels. Nothing here computes a figure (metrics/calibration.py
does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.errors import Call, Param, Placeholder, UsageError, remedy
from judgepool.judge.options import JudgeOptions
from judgepool.judge.registry import constructor_options
from judgepool.judge.run.session import Session
from judgepool.pooling.audit.calibration_pairs import (
    HumanPair,
    Population,
    population,
    stratified_sample,
)
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.loop_state import LoopStats, ProgressSink
    from judgepool.judge.run.result import Bars, JudgeRun

PURPOSE = "calibration"


@dataclass(frozen=True)
class CalibrationSession:
    """A calibration ready to run: the judge session (model, plan, judge) and the sample."""

    session: Session
    population: Population
    sample: list[HumanPair]
    seed: int
    size: int  # asked for

    @property
    def labeller(self) -> str:
        judge = self.session.judge
        return judge.labeller if judge is not None else self.session.model


def prepare_calibration(
    store: Store, options: JudgeOptions, sample: int = 200, seed: int = 1
) -> CalibrationSession:
    """Choose the model, draw the sample, build its requests, make the judge and plan the
    canaries (none with `options.canaries == 0`)."""
    from judgepool.judge.registry import choose_model, make_judge
    from judgepool.judge.requests import build_requests
    from judgepool.judge.run.panel import canaries_for
    from judgepool.judge.run.plan import Plan
    from judgepool.pooling.pool import Hole, PoolSpec, pool_summary
    from judgepool.pooling.store.judgments import check_level, label_mark

    s = options
    model, why = choose_model(s.model, s.api_base)
    made = constructor_options(model, s)
    found = population(store, s.depth, s.level)
    if not found.pairs:
        raise UsageError(
            f"no pair in the pool at depth {s.depth} ({s.level} level) has a human label of "
            "grade 0-3: there is nothing to calibrate the judge against",
            remedy(
                "ingest human labels (`{}`), or check {} and {}",
                Call.of("ingest_qrels", Placeholder("FILE")),
                Param("level", s.level),
                Param("depth", s.depth),
            ),
        )
    drawn = stratified_sample(found.pairs, sample, seed)
    mark = label_mark(store)
    holes = [Hole(p.qid, p.doc_id, 0, (), True, True) for p in drawn]
    built = build_requests(
        store, holes, s.level, None, s.passage_tokens, s.max_chunks, s.query_tokens
    )
    plan = Plan(s.level, s.depth, (), holes, built, s.passage_tokens, mark)
    before = pool_summary(
        store, PoolSpec(depth=s.depth, level=check_level(s.level), labeller=s.labeller)
    )
    judge = make_judge(model, **made)
    canaries = canaries_for(store, s, judge, None, len(built.requests))
    session = Session(model, why, before, plan, judge, (judge,), None, canaries)
    return CalibrationSession(session, found, drawn, seed, sample)


def run_calibration(
    store: Store,
    prepared: CalibrationSession,
    options: JudgeOptions,
    progress: ProgressSink | None = None,
) -> LoopStats:
    """Label the sample with purpose `calibration` (judge/loop.py; caps, claims and cache as
    `judgepool judge`). A judge error that stops the run is in `stats.fatal`."""
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.loop import LabellingLoop
    from judgepool.judge.loop_state import LoopOptions

    judge, plan = prepared.session.judge, prepared.session.plan
    if judge is None:  # pragma: no cover - prepare_calibration always makes a judge
        raise UsageError("no judge to calibrate", remedy("name one with {}", Param("model", None)))
    limits = LoopOptions(
        concurrency=options.concurrency,
        max_cost=options.max_cost,
        max_calls=options.max_calls,
        retries=options.retries,
        timeout=options.timeout,
        purpose=PURPOSE,
    )
    with JudgeCache() as cache:
        loop = LabellingLoop(store, judge, cache, limits, progress)
        return loop.run(plan.built.requests, plan.built.skipped, plan.label_mark)


def calibration_canaries(
    store: Store,
    prepared: CalibrationSession,
    options: JudgeOptions,
    stats: LoopStats,
    bars: Bars | None = None,
) -> JudgeRun:
    """The canary check of a calibration, run as `judgepool judge` runs it (none when the
    calibration's loop stopped, or with no canary planned); record it with judge/run/record.py."""
    from judgepool.judge.run.members import canaries_after

    return canaries_after(store, prepared.session, options, stats, bars, "sampled pairs")
