"""The trust state as words, the same in every output (the table, markdown, HTML, the dashboard):
the judges canaries fooled, the audit's size and design, each corrected interval and its verdict.
Rendering only: the figures come from metrics/corrected.py and metrics/trust_verdict.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judgepool.metrics.corrected import Corrected, Trust
    from judgepool.metrics.verdicts import CompareReport
    from judgepool.pooling.store.judge_runs import JudgeRunRow

Interval = tuple[float, float]

VERDICT_LEGEND = (
    "verdict: robust = the audit bounds the judge's error on these queries within the plain "
    "interval (read the plain one); judge-biased = the audit shows the judge's errors moved the "
    "figure, by the shift given (read the corrected one); too small to tell = the audit found no "
    "such error but cannot confirm the plain interval yet"
)
CLIPPED_NOTE = "* an end cut to the measure's possible range"


def audit_size(trust: Trust) -> str:
    """`3 audited queries of audit sample #1 (3 drawn, uniform design, seed 2)`."""
    s = trust.sample
    if s is None:
        return f"{len(trust.audited)} audited queries"
    drawn = f" of audit sample #{s.id} ({len(s.qids)} drawn, {s.design} design, seed {s.seed})"
    return f"{len(trust.audited)} audited queries{drawn}"


def interval(value: float | None, ci: Interval | None, signed: bool) -> str:
    """`+0.338 [+0.063, +0.613]` (unsigned for means), `–` without a value."""
    if value is None or ci is None:
        return "–"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{f.format(value)} [{f.format(ci[0])}, {f.format(ci[1])}]"


def corrected_cell(found: Corrected | None, signed: bool) -> str:
    """The corrected estimate and interval, `*` when clipped; the reason when there is none."""
    if found is None:
        return "–"
    e = found.estimate
    if e.ci is None:
        return e.reason or "–"
    clipped = found.ratio is not None and found.ratio.clipped
    return interval(e.estimate, e.ci, signed) + (" *" if clipped else "")


def verdict_word(found: Corrected | None) -> str:
    return "–" if found is None or found.verdict is None else found.verdict.word


def verdict_lines(rows: Sequence[tuple[str, str, Corrected | None]]) -> list[str]:
    """`cand nDCG@10: judge-biased: the judge's errors moved the figure by ...` for every
    verdict that is not `robust` (those need a sentence)."""
    return [
        f"{who} {measure}: {c.verdict.sentence()}"
        for who, measure, c in rows
        if c is not None and c.verdict is not None and c.verdict.word != "robust"
    ]


def any_clipped(found: Sequence[Corrected | None]) -> bool:
    return any(c is not None and c.ratio is not None and c.ratio.clipped for c in found)


def fooled_line(row: JudgeRunRow) -> str:
    """One judge canaries fooled, as every report says it."""
    rates = ", ".join(
        f"{kind} {'–' if r is None else f'{r:.0%}'}" for kind, r in row.rates().items()
    )
    return (
        f"FOOLED BY CANARIES: judge {row.labeller} (judge run {row.id}, "
        f"{row.started_at:%Y-%m-%d}) graded canaries of true grade 0 as relevant: {rates} "
        f"(threshold {(row.canary_threshold or 0):.0%}); its labels count here"
    )


@dataclass(frozen=True)
class TrustSection:
    """What markdown and HTML reports say of the trust state (`trust_section`)."""

    fooled: list[str]  # one line per judge canaries fooled
    summary: str  # the audit's size and design, or why there is no corrected figure
    command: str | None  # what to run next, when there is no corrected figure
    headers: tuple[str, ...]
    rows: list[list[str]]  # per difference: the plain and corrected intervals and the verdict
    notes: list[str]  # the verdicts' sentences, the legend, the clipping note


def trust_section(report: CompareReport) -> TrustSection | None:
    """The trust state of a comparison, or None when no judge label counts and none is fooled."""
    from judgepool.reports.command_line import command_line

    cmp = report.comparison
    trust = cmp.corrected
    fooled = [fooled_line(row) for row in cmp.evaluation.fooled]
    if trust is None and not fooled:
        return None
    headers = ("candidate", "measure", "plain", "judge-corrected", "audited", "verdict")
    if trust is None:
        return TrustSection(fooled, "no judge label counts here", None, headers, [], [])
    if trust.reason is not None:
        command = None if trust.command is None else command_line(trust.command)
        summary = f"judge-corrected intervals: none yet — {trust.reason}"
        return TrustSection(fooled, summary, command, headers, [], [])
    found = [(d, trust.deltas.get((d.candidate, d.measure))) for d in cmp.deltas]
    rows = [
        [
            d.candidate,
            d.measure,
            interval(d.delta, d.ci95, True),
            corrected_cell(c, True),
            "" if c is None or c.estimate.ci is None else f"{c.estimate.audited}/{c.estimate.of}",
            verdict_word(c),
        ]
        for d, c in found
    ]
    notes = [*verdict_lines([(d.candidate, d.measure, c) for d, c in found]), VERDICT_LEGEND]
    if any_clipped([c for _, c in found]):
        notes.append(CLIPPED_NOTE)
    summary = (
        f"judge-corrected, on {audit_size(trust)}: the plain interval trusts the judge's "
        f"labels, the corrected one checks them against the audit ({trust.method})"
    )
    return TrustSection(fooled, summary, None, headers, rows, notes)
