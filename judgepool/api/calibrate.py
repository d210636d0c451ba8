"""The calibrate verb: re-judge pairs people labelled and report how the judge agrees with them,
as `jp.Database.calibrate` and `judgepool calibrate` both do it.

    report = calibrate(store, JudgeOptions(model="openai/gpt-4o-mini"), sample=200, seed=1)

The pieces: pooling/audit/calibration_pairs.py (the sample, the stored runs),
judge/run/calibration.py (re-judging through the judge run's loop, then its canaries),
metrics/calibration.py (the figures). Nothing here prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from judgepool.api.progress import Progress
from judgepool.defaults import CALIBRATION_SAMPLE, DRAW_SEED
from judgepool.judge.options import JudgeOptions
from judgepool.pooling.store.connection import Store, utcnow

if TYPE_CHECKING:
    from judgepool.errors import JudgepoolError
    from judgepool.judge.canaries import CanaryReport
    from judgepool.judge.loop_state import LoopStats
    from judgepool.judge.run.plan import Forecast
    from judgepool.judge.run.result import JudgeRun
    from judgepool.metrics.calibration import CalibrationFigures


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
    options: JudgeOptions,
    *,
    sample: int = CALIBRATION_SAMPLE,
    seed: int = DRAW_SEED,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> CalibrationReport:
    """Re-judge a seeded, grade-stratified sample of pooled human-labelled pairs and report how
    the judge agrees (a dry run forecasts the calls and cost instead); then the canaries, as
    `judge` plants them (`options.canaries`, 0: none), recorded in judge_runs. A judge that
    cannot run on the sample raises; a cap that stopped it, failed pairs, or an error during
    the canaries are in `problem`, the figures are of what was graded. `progress` makes the
    bars of the sample's loop and of the canaries'."""
    from judgepool.judge.run.calibration import (
        calibration_canaries,
        prepare_calibration,
        run_calibration,
    )
    from judgepool.judge.run.members import dry_runs
    from judgepool.judge.run.record import record
    from judgepool.judge.run.session import ending
    from judgepool.metrics.calibration import GRADES, calibration_figures
    from judgepool.pooling.audit.calibration_pairs import (
        CalibrationRun,
        calibration_labels,
        record_run,
    )

    prepared = prepare_calibration(store, options, sample, seed)
    judge = prepared.session.judge
    described = judge.describe() if judge is not None else {}
    base = CalibrationReport(
        run_id=None,
        labeller=prepared.labeller,
        model=prepared.session.model,
        prompt_hash=_prompt_hash(described),
        level=options.level,
        depth=options.depth,
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
    shown = progress or Progress()
    started = utcnow()
    stats = run_calibration(store, prepared, options, shown.bar(None, len(prepared.sample)))
    if stats.fatal is not None:
        raise stats.fatal
    check = calibration_canaries(store, prepared, options, stats, shown.bar)
    mark = prepared.session.plan.label_mark
    found = calibration_labels(store, prepared.sample, options.level, prepared.labeller, mark)
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
        problem=ending(stats, options),
        check=check,
    )
    record(
        store,
        prepared.session,
        options,
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
            options.level,
            options.depth,
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
