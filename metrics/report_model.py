"""The JSON report of `eval` and `compare`, as pydantic models: the one definition of its shape.

`metrics.report` builds every JSON object through `Report`, so what is printed always validates;
`docs/report.schema.json` is `Report.model_json_schema()`, published for programs that read the
report (a test checks that the file is up to date). A value that does not exist (a mean over no
query, a query left out of a measure) is null, never 0. Field names are the report's keys.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Pair = tuple[float | None, float | None]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunReport(_Strict):
    """One run: judged@k, holes, and per measure its mean, 95% interval and per-query values."""

    queries: int = Field(description="evaluation-set queries")
    missing: int = Field(description="evaluation-set queries the run returned nothing for (0)")
    judged: float = Field(description="judged@k, the share of the top k that is labelled")
    holes: int = Field(description="unlabelled docs in the run's top k")
    n: dict[str, int] = Field(description="measure -> queries in its mean")
    mean: dict[str, float | None]
    ci95: dict[str, Pair | None] = Field(description="measure -> percentile bootstrap interval")
    bounds: dict[str, Pair] | None = Field(
        description="measure -> [every hole grade 0, every hole the top grade]; null: no hole"
    )
    per_query: dict[str, dict[str, float | None]] = Field(description="qid -> measure -> value")


class DeltaReport(_Strict):
    """One paired comparison: candidate - baseline on one measure."""

    baseline: str
    candidate: str
    measure: str
    n: int = Field(description="queries the difference is over")
    delta: float | None
    ci95: Pair | None = Field(description="paired bootstrap interval of the difference")
    p: float | None = Field(description="paired randomisation (sign-flip) p-value")
    p_holm: float | None = Field(description="Holm-adjusted over every comparison of the call")
    significant: bool
    unreliable: bool = Field(description="forced past the gate: a run under it is involved")


class RefusedReport(_Strict):
    """A run under the judged@k gate."""

    run: str
    judged: float
    holes: int
    missing: int


class FooledReport(_Strict):
    """A judge whose labels count in this report and whose canary check was fooled."""

    labeller: str
    judge_run: int = Field(description="the judge run whose canary check counts (its id)")
    started_at: str
    threshold: float = Field(description="a kind's share graded >= 2 above this is fooled")
    canaries: int = Field(description="canaries planted in that run")
    graded: int = Field(description="canaries that got a grade")
    rates: dict[str, float | None] = Field(
        description="kind (stuffing, instruction, fence) -> share of its canaries graded >= 2"
    )


class JudgeDeltaReport(_Strict):
    """A candidate against the baseline under one judge."""

    candidate: str
    measure: str
    delta: float | None
    ci95: Pair | None
    p_holm: float | None
    significant: bool


class JudgeRankingReport(_Strict):
    """The runs under one judge (`compare --by-judge`)."""

    labeller: str
    means: dict[str, float | None]
    ranks: dict[str, int | None] = Field(description="1 = best; equal means share a rank")
    judged: dict[str, float] = Field(description="run -> judged@k with this judge's labels")
    under_gate: list[str]
    fooled_by_canaries: bool
    comparisons: list[JudgeDeltaReport]


class TauReport(_Strict):
    """Kendall's tau-b between two judges' rankings of the runs."""

    first: str
    second: str
    tau: float | None


class ByJudgeReport(_Strict):
    """The ranking of the compared runs under each judge, and whether the verdict depends on it."""

    measure: str
    baseline: str | None
    runs: list[str]
    judges: list[JudgeRankingReport]
    kendall_tau: list[TauReport]
    same_order: bool
    verdicts_agree: bool


class Report(_Strict):
    """The whole report (`eval`: no comparisons and no gate; `compare`: both)."""

    level: Literal["chunk", "doc"]
    judge: str | None = Field(description="the judge whose labels count (null: any judge)")
    k: int = Field(description="the cutoff of judged@k and the holes")
    queries: int = Field(description="queries in the evaluation set")
    average: Literal["defined", "trec_eval"]
    averaged: dict[str, int] = Field(description="measure -> queries in its mean")
    left_out: dict[str, list[str]] = Field(description="measure -> queries not in its mean")
    engines: dict[str, str] = Field(description="measure -> judgepool or ir-measures (provider)")
    runs: dict[str, RunReport]
    comparisons: list[DeltaReport]
    refused: list[RefusedReport]
    unreliable: bool
    gate: float | None
    judge_command: str | None = Field(description="the command that fills the holes, if any")
    warnings: list[str]
    fooled_by_canaries: list[FooledReport] = Field(
        default_factory=list,
        description="judges whose labels count here and whose latest canary check was fooled",
    )
    by_judge: ByJudgeReport | None = Field(
        default=None, description="`compare --by-judge`: the runs ranked under each judge"
    )
