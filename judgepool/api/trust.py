"""The trust loop as library calls: calibrate a judge, draw an audit sample, follow the audit.

    report = calibrate(store, JudgeSettings(model="openai/gpt-4o-mini"), sample=200, seed=1)
    drawn = draw_audit(store, queries=15, seed=1, level="doc")
    listing = audit_listing(store, level="doc")      # what a person must label, with texts
    status = audit_status(store, level="doc")        # queries audited, pairs labelled / left

`jp.Database.calibrate / audit_sample / audit_pairs / audit_status` and the `judgepool calibrate`
and `judgepool audit` commands call these. The pieces: pooling/audit/calibration_pairs.py and
pooling/audit/samples.py (the database), judge/calibrate.py (re-judging through the judge's
loop), metrics/calibration.py (the figures). Judge-corrected intervals: metrics/corrected.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from judgepool.pooling.store.connection import Store, utcnow

if TYPE_CHECKING:
    from judgepool.errors import JudgepoolError
    from judgepool.judge.backfill import Forecast
    from judgepool.judge.canaries import CanaryReport
    from judgepool.judge.judge_run import Bars, JudgeRun
    from judgepool.judge.loop_state import LoopStats, ProgressSink
    from judgepool.judge.session import JudgeSettings
    from judgepool.metrics.calibration import CalibrationFigures
    from judgepool.pooling.audit.samples import AuditSample, Drawn, QueryProgress


@dataclass(frozen=True)
class CalibrationReport:
    """What a calibration found (or, for a dry run, would do)."""

    run_id: int | None  # the calibration_runs row (None: dry run)
    labeller: str
    model: str
    prompt_hash: str | None
    level: str
    depth: int
    seed: int
    asked: int
    pool_counts: list[int]  # human-labelled pooled pairs per grade (0-3)
    excluded: int  # pooled human labels with a grade outside 0-3
    sample_counts: list[int]  # drawn per grade
    figures: CalibrationFigures | None  # None: dry run, or no pair graded
    failures: dict[str, int] = field(default_factory=dict)  # unparsed / error / no_text
    not_attempted: int = 0
    cost: float = 0.0
    calls: int = 0
    cached: int = 0
    stats: LoopStats | None = field(default=None, repr=False)
    forecast: Forecast | None = field(default=None, repr=False)
    problem: JudgepoolError | None = None  # a cap or failures: the CLI's exit code
    check: JudgeRun | None = field(default=None, repr=False)  # the canaries, as `judge` runs them
    canary_forecast: Forecast | None = field(default=None, repr=False)  # dry run, None: none
    judge_run_id: int | None = None  # the judge_runs row with the canary check

    @property
    def pairs(self) -> int:
        return sum(self.sample_counts)

    @property
    def canaries(self) -> CanaryReport | None:
        """The judge's canary check (None: none planted, or not run)."""
        return None if self.check is None else self.check.canaries

    @property
    def fooled(self) -> bool:
        """Some kind of canary was graded >= 2 more often than the threshold: the judge is
        marked fooled by canaries in every report that uses its labels."""
        return self.canaries is not None and self.canaries.fooled

    def canaries_json(self) -> dict[str, Any] | None:
        """The canary check: planted pairs, calls and cost, per kind the share graded >= 2."""
        run = self.check
        plan = None if run is None else run.canary_plan
        if run is None or plan is None:
            return None
        report = run.canaries
        kinds = report.kinds if report is not None else ()
        return {
            "planted": len(plan.requests),
            "queries": len(plan.queries) - len(plan.without_source),
            "without_source": list(plan.without_source),
            "seed": plan.seed,
            "calls": run.canary_calls,
            "cost": run.canary_cost,
            "threshold": None if report is None else report.threshold,
            "fooled": self.fooled,
            "rates": {k.kind: k.rate for k in kinds},
            "kinds": {
                k.kind: {"pairs": k.pairs, "graded": k.graded, "fooled": k.fooled} for k in kinds
            },
            "note": run.canary_note,
            "judge_run": self.judge_run_id,
        }

    def to_json(self) -> dict[str, Any]:
        """The figures as stored in the database (calibration_runs.figures)."""
        return {
            "pool_counts": self.pool_counts,
            "excluded": self.excluded,
            "sample_counts": self.sample_counts,
            "figures": None if self.figures is None else self.figures.to_json(),
            "failures": self.failures,
            "not_attempted": self.not_attempted,
            "cost": self.cost,
            "calls": self.calls,
            "cached": self.cached,
            "canaries": self.canaries_json(),
        }


def _prompt_hash(described: dict[str, Any]) -> str | None:
    template = described.get("template")
    if isinstance(template, dict) and template.get("hash"):
        return str(template["hash"])
    return None


def calibrate(
    store: Store,
    settings: JudgeSettings,
    sample: int = 200,
    seed: int = 1,
    dry_run: bool = False,
    progress: ProgressSink | None = None,
    bars: Bars | None = None,
) -> CalibrationReport:
    """Re-judge a seeded, grade-stratified sample of pooled human-labelled pairs and report how
    the judge agrees (a dry run forecasts the calls and cost instead); then the canaries, as
    `judge` plants them (`settings.canaries`, 0: none), recorded in judge_runs. A judge that
    cannot run on the sample raises; a cap that stopped it, failed pairs, or an error during
    the canaries are in `problem`, the figures are of what was graded. `progress` shows the
    sample's loop, `bars` makes the canaries' bar."""
    from judgepool.judge.calibrate import (
        calibration_canaries,
        prepare_calibration,
        run_calibration,
    )
    from judgepool.judge.judge_run import dry_runs, record
    from judgepool.judge.session import ending
    from judgepool.metrics.calibration import GRADES, calibration_figures
    from judgepool.pooling.audit.calibration_pairs import (
        CalibrationRun,
        calibration_labels,
        record_run,
    )

    prepared = prepare_calibration(store, settings, sample, seed)
    judge = prepared.session.judge
    described = judge.describe() if judge is not None else {}
    base = CalibrationReport(
        run_id=None,
        labeller=prepared.labeller,
        model=prepared.session.model,
        prompt_hash=_prompt_hash(described),
        level=settings.level,
        depth=settings.depth,
        seed=seed,
        asked=sample,
        pool_counts=prepared.population.counts(),
        excluded=prepared.population.excluded,
        sample_counts=[sum(1 for p in prepared.sample if p.grade == g) for g in GRADES],
        figures=None,
    )
    if dry_run:
        ((_, pairs, canaries),) = dry_runs(store, prepared.session)
        return replace(base, forecast=pairs, canary_forecast=canaries)
    started = utcnow()
    stats = run_calibration(store, prepared, settings, progress)
    if stats.fatal is not None:
        raise stats.fatal
    check = calibration_canaries(store, prepared, settings, stats, bars)
    mark = prepared.session.plan.label_mark
    found = calibration_labels(store, prepared.sample, settings.level, prepared.labeller, mark)
    graded = [
        (p.grade, found[p.qid, p.doc_id].grade)
        for p in prepared.sample
        if (p.qid, p.doc_id) in found and found[p.qid, p.doc_id].status == "ok"
    ]
    figures = None
    if graded:
        human = [h for h, _ in graded]
        figures = calibration_figures(human, [int(j or 0) for _, j in graded], base.pool_counts)
    report = replace(
        base,
        figures=figures,
        failures=dict(Counter(lab.status for lab in found.values() if lab.status != "ok")),
        not_attempted=len(prepared.sample) - len(found),
        cost=stats.cost,
        calls=stats.calls,
        cached=stats.cached,
        stats=stats,
        problem=ending(stats, settings),
        check=check,
    )
    record(
        store,
        prepared.session,
        settings,
        check,
        started,
        "calibrate",
        {"sample": sample, "seed": seed},
    )
    report = replace(report, judge_run_id=check.records[-1] if check.records else None)
    run_id = record_run(
        store,
        CalibrationRun(
            0,
            "",
            settings.level,
            settings.depth,
            prepared.labeller,
            prepared.session.model,
            report.prompt_hash,
            seed,
            sample,
            len(prepared.sample),
            mark,
            report.to_json(),
        ),
    )
    return replace(report, run_id=run_id)


def draw_audit(
    store: Store,
    queries: int,
    seed: int = 1,
    depth: int = 10,
    runs: tuple[str, ...] = (),
    level: str = "chunk",
    labeller: str | None = None,
    replace: bool = False,
) -> Drawn:
    """Draw (or resize) the audit sample at `level` (pooling.audit.samples.draw_sample)."""
    from judgepool.pooling.audit.samples import draw_sample

    return draw_sample(store, queries, seed, depth, runs, level, labeller, replace)


@dataclass(frozen=True)
class ListedPair:
    """A pair of the audit sample to show a person (the judge's grade is not in it: blind)."""

    qid: str
    doc_id: str
    query: str | None
    passage: str | None
    human_grade: int | None
    judge_grade: int = field(repr=False, default=-1)  # for the queue, revealed after grading


def current_sample(store: Store, level: str) -> AuditSample:
    """The audit sample in use at `level`, or an error that says how to draw one."""
    from judgepool.errors import Call, UsageError, remedy
    from judgepool.pooling.audit.samples import latest_sample

    sample = latest_sample(store, level)
    if sample is None:
        raise UsageError(
            f"no audit sample at the {level} level yet",
            remedy("draw one: {}", Call.of("audit_sample", queries=15, level=level)),
        )
    return sample


def audit_listing(store: Store, level: str = "chunk", everything: bool = False) -> list[ListedPair]:
    """The judge-labelled pairs of the audit sample's queries in its pool, with query and
    passage text, in the sample's order: those still without a human label (all of them with
    `everything`)."""
    from judgepool.pooling.audit.samples import pairs_to_audit, texts_of

    sample = current_sample(store, level)
    pairs = [p for p in pairs_to_audit(store, sample) if everything or p.human_grade is None]
    queries, passages = texts_of(store, sample, pairs)
    return [
        ListedPair(
            p.qid,
            p.doc_id,
            queries.get(p.qid),
            passages.get((p.qid, p.doc_id)),
            p.human_grade,
            p.judge_grade,
        )
        for p in pairs
    ]


@dataclass(frozen=True)
class AuditStatus:
    """Progress of the audit sample in use."""

    sample: AuditSample
    queries: list[QueryProgress]

    @property
    def audited(self) -> int:
        return sum(q.audited for q in self.queries)

    @property
    def pairs(self) -> int:
        return sum(q.pairs for q in self.queries)

    @property
    def labelled(self) -> int:
        return sum(q.labelled for q in self.queries)


def audit_status(store: Store, level: str = "chunk") -> AuditStatus:
    """Queries fully audited and pairs labelled / left, per query of the sample in use."""
    from judgepool.pooling.audit.samples import progress

    sample = current_sample(store, level)
    return AuditStatus(sample, progress(store, sample))
