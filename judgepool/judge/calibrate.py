"""Re-judging pairs people labelled, through the judge run's own machinery (judge/session.py).

    session = prepare_calibration(store, settings, sample=200, seed=1)
    forecast = dry_run(store, session)                 # judge.session.dry_run: no call
    stats = run_calibration(store, session, settings)  # the labelling loop, purpose 'calibration'
    check = calibration_canaries(store, session, settings, stats)  # then the canaries

The sampled pairs (pooling/audit/calibration_pairs.py) become requests exactly as holes do (the same
texts, cut to the same budgets, hence the same cache keys: a pair whose text the judge already
answered costs nothing), and the labelling loop labels them with the same cache, claims,
concurrency, retries, caps and provenance as `judgepool judge`, writing labels with purpose
`calibration` (never effective, never exported). Then, as in every `judge` run, the canaries
(judge/canaries.py, planned from the pool's queries by judge/panel.py's `canaries_for`) run through
judge/judge_run.py's own code, after the sample and within what it left of the caps;
judge_run.record records the check in judge_runs (command `calibrate`), so a judge fooled here is
marked in every report that uses its labels. Nothing here computes a figure (metrics/calibration.py
does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.errors import Call, Param, Placeholder, UsageError, remedy
from judgepool.judge.session import JudgeSettings, Session
from judgepool.judge.settings import judge_options
from judgepool.pooling.audit.calibration_pairs import (
    HumanPair,
    Population,
    population,
    stratified_sample,
)
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.judge.judge_run import Bars, JudgeRun
    from judgepool.judge.loop_state import LoopStats, ProgressSink

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
    store: Store, settings: JudgeSettings, sample: int = 200, seed: int = 1
) -> CalibrationSession:
    """Choose the model, draw the sample, build its requests, make the judge and plan the
    canaries (none with `settings.canaries == 0`)."""
    from judgepool.judge.backfill import Plan
    from judgepool.judge.panel import canaries_for
    from judgepool.judge.registry import choose_model, make_judge
    from judgepool.judge.requests import build_requests
    from judgepool.pooling.pool import Hole, pool_summary
    from judgepool.pooling.store.judgments import label_mark

    s = settings
    model, why = choose_model(s.model, s.api_base)
    options = judge_options(model, s)
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
    before = pool_summary(store, s.depth, None, s.level, s.labeller)
    judge = make_judge(model, **options)
    canaries = canaries_for(store, s, judge, None)
    session = Session(model, why, before, plan, judge, (judge,), None, canaries)
    return CalibrationSession(session, found, drawn, seed, sample)


def run_calibration(
    store: Store,
    prepared: CalibrationSession,
    settings: JudgeSettings,
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
    options = LoopOptions(
        concurrency=settings.concurrency,
        max_cost=settings.max_cost,
        max_calls=settings.max_calls,
        retries=settings.retries,
        timeout=settings.timeout,
        purpose=PURPOSE,
    )
    with JudgeCache() as cache:
        loop = LabellingLoop(store, judge, cache, options, progress)
        return loop.run(plan.built.requests, plan.built.skipped, plan.label_mark)


def calibration_canaries(
    store: Store,
    prepared: CalibrationSession,
    settings: JudgeSettings,
    stats: LoopStats,
    bars: Bars | None = None,
) -> JudgeRun:
    """The canary check of a calibration, run as `judgepool judge` runs it (none when the
    calibration's loop stopped, or with no canary planned); record it with judge_run.record."""
    from judgepool.judge.judge_run import canaries_after

    return canaries_after(store, prepared.session, settings, stats, bars, "sampled pairs")
