"""What the library's calls return: the pool, an evaluation, a comparison, a judge run.

Each result keeps the full object the computation produced (`.result`, the same one the CLI
prints from) and shows its tables as polars DataFrames, built when first asked for. A value that
does not exist (a mean over no query, a query left out of a measure) is null, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from judgepool.errors import JudgepoolError
    from judgepool.judge.loop_state import LoopStats
    from judgepool.judge.run.result import JudgeRun
    from judgepool.metrics.compare import ComparisonFigures as CompareResult
    from judgepool.metrics.evaluate import EvaluationFigures as EvaluateResult
    from judgepool.metrics.groups import Groups
    from judgepool.metrics.judges import JudgesAgreement
    from judgepool.metrics.verdicts import CompareReport
    from judgepool.pooling.pool import PoolSummary


def _frame(rows: list[dict[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=schema, orient="row")


@dataclass(frozen=True)
class Pool:
    """The pool of some runs at a depth: judged@depth and holes per run, and the holes."""

    result: PoolSummary
    _holes: Any = field(repr=False)  # the Arrow table of pooling.pool.holes_table

    @property
    def level(self) -> str:
        """chunk or doc."""
        return self.result.level

    @property
    def depth(self) -> int:
        """The pool's depth."""
        return self.result.depth

    @cached_property
    def summary(self) -> pl.DataFrame:
        """One row per run: run, queries, missing_queries, judged, holes."""
        import polars as pl

        rows = [
            {
                "run": r.run,
                "queries": r.queries,
                "missing_queries": r.missing_queries,
                "judged": r.judged,
                "holes": r.holes,
            }
            for r in self.result.runs
        ]
        return _frame(
            rows,
            {
                "run": pl.String,
                "queries": pl.Int64,
                "missing_queries": pl.Int64,
                "judged": pl.Float64,
                "holes": pl.Int64,
            },
        )

    @cached_property
    def holes(self) -> pl.DataFrame:
        """One row per hole: qid, doc_id, best_rank, runs (list), has_text, has_query_text."""
        import polars as pl

        frame = pl.from_arrow(self._holes)
        if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table always converts
            raise TypeError("the holes did not convert to a DataFrame")
        return frame


@dataclass(frozen=True)
class Evaluation:
    """Measures of runs: per-run means with 95% intervals, and every per-query value."""

    result: EvaluateResult
    by_group: Groups | None = None  # `by="group"`: the figures of each query group

    @property
    def measures(self) -> list[str]:
        """The measures' names, as ir-measures prints them."""
        return [str(m) for m in self.result.measures]

    @cached_property
    def summary(self) -> pl.DataFrame:
        """One row per run and measure: run, measure, mean, ci_low, ci_high, n, engine."""
        import polars as pl

        ev = self.result
        rows = []
        for run in ev.runs:
            s = ev.summaries[run]
            for name in self.measures:
                ci = s.ci95[name]
                rows.append(
                    {
                        "run": run,
                        "measure": name,
                        "mean": s.mean[name],
                        "ci_low": None if ci is None else ci[0],
                        "ci_high": None if ci is None else ci[1],
                        "n": ev.n(name),
                        "engine": ev.engines.get(name, "judgepool"),
                    }
                )
        return _frame(
            rows,
            {
                "run": pl.String,
                "measure": pl.String,
                "mean": pl.Float64,
                "ci_low": pl.Float64,
                "ci_high": pl.Float64,
                "n": pl.Int64,
                "engine": pl.String,
            },
        )

    @cached_property
    def per_query(self) -> pl.DataFrame:
        """One row per run, query and measure: run, qid, measure, value (null: no value)."""
        import polars as pl

        ev = self.result
        rows = [
            {"run": run, "qid": qid, "measure": name, "value": value}
            for run in ev.runs
            for qid, values in ev.per_query(run).items()
            for name, value in values.items()
        ]
        return _frame(
            rows, {"run": pl.String, "qid": pl.String, "measure": pl.String, "value": pl.Float64}
        )

    @cached_property
    def runs(self) -> pl.DataFrame:
        """One row per run: run, judged (judged@k), holes (in the top k), missing (queries the
        run returned nothing for, scored 0)."""
        import polars as pl

        ev = self.result
        rows = [
            {
                "run": run,
                "judged": ev.summaries[run].judged,
                "holes": ev.summaries[run].holes,
                "missing": ev.summaries[run].missing,
            }
            for run in ev.runs
        ]
        return _frame(
            rows, {"run": pl.String, "judged": pl.Float64, "holes": pl.Int64, "missing": pl.Int64}
        )

    @cached_property
    def groups(self) -> pl.DataFrame:
        """`by="group"`: one row per group, run and measure (n, mean, ci_low, ci_high,
        too_small); empty without `by`."""
        from judgepool.api.ci_results import group_means_frame
        from judgepool.metrics.groups import Groups

        return group_means_frame(self.by_group or Groups((), {}, 0, ()))

    @cached_property
    def corrected(self) -> pl.DataFrame:
        """Judge-corrected means (metrics/corrected.py), one row per run and measure: run,
        measure, estimate, ci_low, ci_high, audited, of, lambda, reason (empty when no judge
        label is among the effective labels)."""
        from judgepool.reports.corrected_frames import mean_rows

        return _frame(*mean_rows(self.result))

    def to_json(self) -> dict[str, Any]:
        """The same JSON object `judgepool eval --format json` prints."""
        from judgepool.reports.ci import groups_json
        from judgepool.reports.data import evaluation_json

        extra = None if self.by_group is None else {"groups": groups_json(self.by_group)}
        return evaluation_json(self.result, extra)


@dataclass(frozen=True)
class Comparison:
    """Candidates against a baseline: paired differences with intervals, p and Holm p; with
    `fail_on` the rules' outcome, with `by="group"` the groups, and the reports."""

    result: CompareResult
    report: CompareReport  # the verdicts, rules, groups and label sources

    @cached_property
    def evaluation(self) -> Evaluation:
        """The evaluation of every compared run (means, intervals, per-query values)."""
        return Evaluation(self.result.evaluation)

    @cached_property
    def deltas(self) -> pl.DataFrame:
        """One row per candidate and measure: candidate, measure, n, delta, ci_low, ci_high, p,
        p_holm, significant, unreliable (forced past the gate)."""
        import polars as pl

        rows = [
            {
                "baseline": d.baseline,
                "candidate": d.candidate,
                "measure": d.measure,
                "n": d.n,
                "delta": d.delta,
                "ci_low": None if d.ci95 is None else d.ci95[0],
                "ci_high": None if d.ci95 is None else d.ci95[1],
                "p": d.p,
                "p_holm": d.p_holm,
                "significant": d.significant,
                "unreliable": d.unreliable,
            }
            for d in self.result.deltas
        ]
        return _frame(
            rows,
            {
                "baseline": pl.String,
                "candidate": pl.String,
                "measure": pl.String,
                "n": pl.Int64,
                "delta": pl.Float64,
                "ci_low": pl.Float64,
                "ci_high": pl.Float64,
                "p": pl.Float64,
                "p_holm": pl.Float64,
                "significant": pl.Boolean,
                "unreliable": pl.Boolean,
            },
        )

    @cached_property
    def refused(self) -> pl.DataFrame:
        """The runs under the judged@k gate: run, judged, holes (empty when none is)."""
        import polars as pl

        rows = [{"run": r.run, "judged": r.judged, "holes": r.holes} for r in self.result.refused]
        return _frame(rows, {"run": pl.String, "judged": pl.Float64, "holes": pl.Int64})

    @property
    def unreliable(self) -> bool:
        """Forced past the gate: some difference involves a run under it."""
        return self.result.unreliable

    @cached_property
    def corrected(self) -> pl.DataFrame:
        """Judge-corrected differences beside the plain ones (metrics/corrected.py), one row per
        candidate and measure: candidate, measure, delta, ci_low, ci_high (plain), estimate,
        ppi_low, ppi_high, audited, of, lambda, verdict (robust / judge-biased / too small to
        tell), shift (plain - corrected), clipped, reason (empty when no judge label is among
        the effective labels)."""
        from judgepool.reports.corrected_frames import delta_rows

        return _frame(*delta_rows(self.result))

    def to_json(self) -> dict[str, Any]:
        """The same JSON object `judgepool compare --format json` prints."""
        from judgepool.reports.ci import report_json_extra
        from judgepool.reports.data import comparison_json

        return comparison_json(self.result, report_json_extra(self.report))

    @property
    def verdicts(self) -> dict[str, str]:
        """candidate -> better, worse, mixed, no significant difference or refused."""
        return {v.candidate: v.word for v in self.report.verdicts}

    @property
    def failed_rules(self) -> list[str]:
        """The `fail_on` rules some candidate broke (empty: none, or no rule given)."""
        rules = self.report.rules
        return [] if rules is None else list(rules.failed_rules)

    @property
    def exit_code(self) -> int:
        """What `judgepool compare` with the same options exits with: 0, 3 (refused by or forced
        past the gate, with rules), 4 (a rule failed)."""
        return self.report.exit_code

    def raise_for_rules(self) -> None:
        """Raise what the CLI exits with (`RuleFailedError`, or the gate's refusal), if any."""
        error = self.report.error()
        if error is not None:
            raise error

    @cached_property
    def groups(self) -> pl.DataFrame:
        """`by="group"`: one row per group, candidate and measure (n, delta, ci_low, ci_high, p,
        p_holm over every group comparison, significant, too_small, unreliable)."""
        from judgepool.api.ci_results import group_deltas_frame
        from judgepool.metrics.groups import Groups

        return group_deltas_frame(self.report.groups or Groups((), {}, 0, ()))

    def to_markdown(self) -> str:
        """The report `judgepool compare --format markdown` prints (a PR comment, a CI step
        summary)."""
        from judgepool.reports.markdown import to_markdown

        return to_markdown(self.report)

    def to_html(self, name: str = "report.html") -> str:
        """The self-contained HTML report `judgepool report --html` writes (`name`: the file
        name its reproducing command shows)."""
        from judgepool.reports.html import to_html

        return to_html(self.report, name)


@dataclass(frozen=True)
class JudgeReport:
    """What a judge run did: pairs by outcome and grade, calls, cost, judged@depth before/after."""

    labeller: str
    holes: int
    stats: LoopStats | None  # None when there was nothing to label
    before: Pool
    after: Pool
    problem: JudgepoolError | None = None  # how the run fell short (the CLI's exit code), if it did
    run: JudgeRun | None = field(default=None, repr=False)  # members, jury, canaries
    agreement: JudgesAgreement | None = field(default=None, repr=False)  # a jury's members

    @property
    def fatal(self) -> JudgepoolError | None:
        """The error that stopped the judge (no key, no quota, a fault), None when none did."""
        return None if self.stats is None else self.stats.fatal

    @property
    def fooled(self) -> bool:
        """The canary check of the labels that count after this run was fooled."""
        report = None if self.run is None else self.run.canaries
        return report is not None and report.fooled

    @cached_property
    def canaries(self) -> pl.DataFrame:
        """One row per canary and judge: labeller, qid, doc_id, kind, source_doc, status,
        grade, fooled (graded >= 2); empty when the run planted none."""
        import polars as pl

        reports = [] if self.run is None else [m.canaries for m in self.run.members]
        if self.run is not None and self.run.jury is not None:
            reports.append(self.run.canaries)
        rows = [
            {
                "labeller": r.labeller,
                "qid": p.qid,
                "doc_id": p.doc_id,
                "kind": p.kind,
                "source_doc": p.source_doc,
                "status": p.status,
                "grade": p.grade,
                "fooled": p.fooled,
            }
            for r in reports
            if r is not None
            for p in r.pairs
        ]
        return _frame(
            rows,
            {
                "labeller": pl.String,
                "qid": pl.String,
                "doc_id": pl.String,
                "kind": pl.String,
                "source_doc": pl.String,
                "status": pl.String,
                "grade": pl.Int64,
                "fooled": pl.Boolean,
            },
        )

    @property
    def ok(self) -> bool:
        """Every hole with text got a label: no failure, no cap, no interrupt."""
        return self.problem is None and (self.stats is None or self.stats.stopped is None)

    @property
    def outcomes(self) -> dict[str, int]:
        """Pairs by final outcome: ok, unparsed, error, no_text, not_attempted."""
        return {} if self.stats is None else dict(self.stats.outcomes)

    @property
    def grades(self) -> dict[int, int]:
        """Pairs by grade (ok labels)."""
        return {} if self.stats is None else dict(self.stats.grades)

    @property
    def calls(self) -> int:
        """Requests sent (retries included)."""
        return 0 if self.stats is None else self.stats.calls

    @property
    def cost(self) -> float:
        """Money spent, from litellm's price map (0 for a local or offline judge)."""
        return 0.0 if self.stats is None else self.stats.cost

    @property
    def stopped(self) -> str | None:
        """Why the run stopped early (a cap, an interrupt), None when it finished."""
        return None if self.stats is None else self.stats.stopped

    @cached_property
    def judged(self) -> pl.DataFrame:
        """One row per run: run, judged_before, judged_after, holes_left."""
        import polars as pl

        rows = [
            {
                "run": b.run,
                "judged_before": b.judged,
                "judged_after": a.judged,
                "holes_left": a.holes,
            }
            for b, a in zip(self.before.result.runs, self.after.result.runs, strict=True)
        ]
        return _frame(
            rows,
            {
                "run": pl.String,
                "judged_before": pl.Float64,
                "judged_after": pl.Float64,
                "holes_left": pl.Int64,
            },
        )
