"""The JSON report of `eval` and `compare`, as pydantic models: the one definition of its shape.

`reports.data` writes every JSON object in this shape directly (the models are not run by the
commands: pydantic would be a third of `eval`'s start-up), and the tests pass every report they
print through `Report`, which must give back the very same text (tests/report_shape.py).
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
    ppi: dict[str, PPIReport | None] | None = Field(
        default=None, description="measure -> judge-corrected mean; null: no judge label"
    )


class PPIReport(BaseModel):
    """A judge-corrected estimate (PPI++ ratio estimator on the audited queries,
    metrics/corrected.py and metrics/ppi_ratio.py)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True
    )

    estimate: float
    ci95: tuple[float, float] = Field(
        description="95% interval for queries drawn like these (t, Welch-Satterthwaite df)"
    )
    audited: int = Field(description="audited queries used (n)")
    of: int = Field(description="queries of the evaluation set the estimate speaks for (N)")
    lam: float = Field(alias="lambda", description="weight of the judge's values, 0..1")
    judge: float | None = Field(
        default=None, description="the judge's own figure over the same queries (no audit)"
    )
    audit_ci95: tuple[float, float] | None = Field(
        default=None, description="95% interval for these N queries (the audit design's alone)"
    )
    df: float | None = Field(default=None, description="degrees of freedom of the t quantile")
    clipped: bool = Field(
        default=False, description="an end was cut to the measure's possible range"
    )


class VerdictReport(_Strict):
    """What the audit says of the plain interval (metrics/trust_verdict.py)."""

    word: Literal["robust", "judge-biased", "too small to tell"]
    shift: float = Field(description="plain - corrected: how far the judge's errors moved it")
    shift_ci95: tuple[float, float] | None = Field(
        description="the audit's 95% interval for that shift"
    )
    sentence: str = Field(description="the verdict as the reports print it")
    needed: int | None = Field(
        description="too small to tell: audited queries that would tell (null: unknown)"
    )


class ForecastReport(_Strict):
    """Without a corrected interval: how many audited queries would reach `width`."""

    queries: int | None = Field(description="audited queries needed; null: see reason")
    width: float = Field(description="the width aimed at (twice the plain interval's)")
    basis: str
    reason: str | None


class SampleReport(_Strict):
    """The audit sample in use: queries drawn at random from the evaluation set."""

    id: int
    seed: int
    queries: int = Field(description="queries drawn")
    evaluation_set: int = Field(description="queries of the evaluation set when drawn")
    inclusion_probability: float = Field(description="n / N (a weighted draw: on average)")
    design: Literal["uniform", "weighted"] = Field(
        default="uniform", description="uniform, or weighted by the judge's uncertainty"
    )


class AuditReport(_Strict):
    """Whether the judge's labels were checked: present whenever judge labels are effective."""

    judge_labels: int = Field(description="effective labels that are a judge's")
    sample: SampleReport | None
    audited: list[str] = Field(description="evaluation-set queries fully audited now")
    queries: int = Field(description="queries in the evaluation set")
    method: str
    reason: str | None = Field(description="why no figure has a corrected interval")
    command: str | None = Field(description="what to run next (audit sample / audit status)")


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
    ppi: PPIReport | None = Field(default=None, description="judge-corrected difference")
    ppi_reason: str | None = Field(default=None, description="why ppi is null")
    ppi_forecast: ForecastReport | None = Field(default=None, description="when ppi is null")
    verdict: Literal["robust", "judge-biased", "too small to tell"] | None = Field(
        default=None,
        description="robust: the audit bounds the judge's error within the plain interval; "
        "judge-biased: the judge's errors moved the figure; too small to tell: neither",
    )
    verdict_detail: VerdictReport | None = Field(
        default=None, description="the verdict's shift, interval and sentence"
    )


class RefusedReport(_Strict):
    """A run under the judged@k gate."""

    run: str
    judged: float
    holes: int
    missing: int


class BreachReport(_Strict):
    """A comparison that breaks a --fail-on rule."""

    rule: str
    candidate: str
    measure: str
    delta: float
    ci95: Pair | None
    p_holm: float


class FailOnReport(_Strict):
    """`compare --fail-on`: the rules, the measures each watches, and which failed."""

    rules: list[str]
    watched: dict[str, list[str]] = Field(description="rule -> the measures it watches")
    failed_rules: list[str] = Field(description="the rules at least one comparison broke")
    breaches: list[BreachReport]
    unreliable: bool = Field(description="forced past the gate: decided nothing (exit 3)")
    exit_code: int = Field(description="0 every rule held, 3 refused or forced, 4 a rule failed")


class GroupMeanReport(_Strict):
    """One run's mean on one measure over one group's queries."""

    group: str
    run: str
    measure: str
    n: int
    mean: float | None
    ci95: Pair | None
    too_small: bool | None = Field(
        description="half the interval at least the spread of the runs' overall means, or "
        "under 2 queries; null: one run, no effect to resolve"
    )


class GroupDeltaReport(_Strict):
    """One paired difference over one group's queries."""

    group: str
    baseline: str
    candidate: str
    measure: str
    n: int
    delta: float | None
    ci95: Pair | None
    p: float | None
    p_holm: float | None = Field(description="Holm over every group x candidate x measure test")
    significant: bool
    too_small: bool | None = Field(
        description="half the interval at least |the overall delta|, or under 2 queries; "
        "null: an overall delta of 0, no effect to resolve"
    )
    unreliable: bool


class GroupsReport(_Strict):
    """`--by group`: the figures of every query group."""

    by: Literal["group"]
    queries: dict[str, int] = Field(description="group -> its evaluation-set queries")
    ungrouped: int = Field(description="evaluation-set queries in no group")
    means: list[GroupMeanReport]
    comparisons: list[GroupDeltaReport]
    tests: int = Field(description="the size of the groups' Holm family")


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
    verdicts: dict[str, str] | None = Field(
        default=None,
        description="compare: candidate -> better, worse, mixed, no significant difference or "
        "refused",
    )
    fail_on: FailOnReport | None = Field(default=None, description="compare's fail_on rules")
    groups: GroupsReport | None = Field(default=None, description="by query group (by=group)")
    audit: AuditReport | None = Field(
        default=None, description="the judge-corrected side; null: no judge label is effective"
    )
    fooled_by_canaries: list[FooledReport] = Field(
        default_factory=list,
        description="judges whose labels count here and whose latest canary check was fooled",
    )
    by_judge: ByJudgeReport | None = Field(
        default=None, description="compare by judge: the runs ranked under each judge"
    )
