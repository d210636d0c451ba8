"""The judge-corrected part of `compare` and `eval` tables (metrics/corrected.py): the plain and
the corrected interval side by side with the verdict, or, before an audit, why there is none, the
command that starts one and how many audited queries it would take."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judgepool.reports.command_line import command_line
from judgepool.reports.trust_text import (
    CLIPPED_NOTE,
    VERDICT_LEGEND,
    any_clipped,
    audit_size,
    corrected_cell,
    interval,
    verdict_lines,
    verdict_word,
)
from judgepool.ui.format import echo_table

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.corrected import Corrected, Trust
    from judgepool.metrics.evaluate import EvaluationFigures

Interval = tuple[float, float]


class _Notes:
    """Why a figure has no corrected interval, said once under the table: the cell says `note N`
    (a reason is a sentence, up to ~150 characters, and one in a row stretches the whole table)."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}

    def cell(self, found: Corrected | None, signed: bool) -> str:
        """The corrected cell, or `none, note N` when a reason stands in for the interval."""
        reason = None if found is None or found.estimate.ci is not None else found.estimate.reason
        if reason is None:
            return corrected_cell(found, signed)
        number = self.reasons.setdefault(reason, len(self.reasons) + 1)
        return f"none, note {number}"

    def echo(self) -> None:
        for reason, number in self.reasons.items():
            click.echo(f"note {number}: {reason}")


def _forecasts(rows: list[tuple[str, str, Corrected]]) -> None:
    wanted = [(a, b, c.forecast) for a, b, c in rows if c.forecast is not None]
    if not wanted:
        return
    basis = wanted[0][2].basis if wanted[0][2] is not None else ""
    click.echo(
        "audited queries that would bring each judge-corrected interval to twice the plain "
        f"interval's width ({basis}):"
    )
    table = [
        (a, b, f"{f.width:.3f}", f"about {f.queries}" if f.queries else "out of reach")
        for a, b, f in wanted
        if f is not None
    ]
    echo_table(("", "measure", "width", "audited queries"), table, right=(2,))
    reasons = dict.fromkeys(f.reason for _, _, f in wanted if f is not None and f.reason)
    for reason in reasons:
        click.echo(f"out of reach: {reason}")


def _intro(trust: Trust) -> bool:
    """The heading; False (after saying why and what to run) when no figure is corrected."""
    click.echo("")
    if trust.reason is not None:
        click.echo(f"judge-corrected intervals: none yet — {trust.reason}")
        if trust.command is not None:
            verb = "draw one with" if trust.sample is None else "see what is left with"
            click.echo(f"{verb}: {command_line(trust.command)}")
        return False
    click.echo(
        f"judge-corrected, on {audit_size(trust)}: the plain interval trusts the judge's labels, "
        "the corrected one checks them against the audit"
    )
    click.echo(f"({trust.method})")
    return True


def corrected_deltas(cmp: ComparisonFigures) -> None:
    """After the differences table: each difference's corrected interval and verdict."""
    trust = cmp.corrected
    if trust is None or not cmp.deltas:
        return
    rows = [(d, trust.deltas.get((d.candidate, d.measure))) for d in cmp.deltas]
    shown = _intro(trust)
    if shown:
        notes = _Notes()
        table = [
            (
                d.candidate,
                d.measure,
                interval(d.delta, d.ci95, True),
                notes.cell(c, True),
                ""
                if c is None or c.estimate.ci is None
                else f"{c.estimate.audited}/{c.estimate.of}",
                "" if c is None or c.estimate.lam is None else f"{c.estimate.lam:.2f}",
                verdict_word(c),
            )
            for d, c in rows
        ]
        echo_table(
            ("candidate", "measure", "plain", "judge-corrected", "audited", "lambda", "verdict"),
            table,
            right=(4, 5),
        )
        notes.echo()
        for line in verdict_lines([(d.candidate, d.measure, c) for d, c in rows]):
            click.echo(line)
        click.echo(VERDICT_LEGEND)
        if any_clipped([c for _, c in rows]):
            click.echo(CLIPPED_NOTE)
    _forecasts([(d.candidate, d.measure, c) for d, c in rows if c is not None])


def corrected_means(ev: EvaluationFigures) -> None:
    """After the runs table of `eval`: each mean's corrected interval."""
    trust = ev.corrected
    if trust is None:
        return
    keys = [(run, str(m)) for run in ev.runs for m in ev.measures if (run, str(m)) in trust.means]
    shown = _intro(trust)
    if shown:
        table, notes = [], _Notes()
        for run, m in keys:
            c = trust.means[run, m]
            e = c.estimate
            plain = interval(ev.summaries[run].mean[m], ev.summaries[run].ci95[m], False)
            size = "" if e.ci is None else f"{e.audited}/{e.of}"
            lam = "" if e.ci is None or e.lam is None else f"{e.lam:.2f}"
            table.append((run, m, plain, notes.cell(c, False), size, lam))
        echo_table(
            ("run", "measure", "plain", "judge-corrected", "audited", "lambda"), table, right=(4, 5)
        )
        notes.echo()
        if any_clipped([trust.means[k] for k in keys]):
            click.echo(CLIPPED_NOTE)
    _forecasts([(run, m, trust.means[run, m]) for run, m in keys])
