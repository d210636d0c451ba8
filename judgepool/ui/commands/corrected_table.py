"""The judge-corrected part of `compare` and `eval` tables (metrics/corrected.py): the plain and
the corrected interval side by side with the verdict, or, before an audit, why there is none, the
command that starts one and how many audited queries it would take."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judgepool.reports.command_line import command_line
from judgepool.ui.format import echo_table

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.corrected import Corrected, Trust
    from judgepool.metrics.evaluate import EvaluationFigures

Interval = tuple[float, float]


def _ci(value: float | None, ci: Interval | None, signed: bool) -> str:
    if value is None or ci is None:
        return "–"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{f.format(value)} [{f.format(ci[0])}, {f.format(ci[1])}]"


class _Notes:
    """Why a figure has no corrected interval, said once under the table: the cell says `note N`
    (a reason is a sentence, up to ~150 characters, and one in a row stretches the whole table)."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}

    def cell(self, reason: str | None) -> str:
        if not reason:
            return "–"
        number = self.reasons.setdefault(reason, len(self.reasons) + 1)
        return f"none, note {number}"

    def echo(self) -> None:
        for reason, number in self.reasons.items():
            click.echo(f"note {number}: {reason}")


def _audited(trust: Trust) -> str:
    s = trust.sample
    drawn = "" if s is None else f" of audit sample #{s.id} ({len(s.qids)} drawn, seed {s.seed})"
    return f"{len(trust.audited)} audited queries{drawn}"


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
        f"judge-corrected, on {_audited(trust)}: the plain interval trusts the judge's labels, "
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
        table, notes = [], _Notes()
        for d, c in rows:
            e = None if c is None else c.estimate
            if e is None or e.ci is None:
                why = notes.cell(None if e is None else e.reason)
                table.append((d.candidate, d.measure, _ci(d.delta, d.ci95, True), why, "", "", ""))
                continue
            table.append(
                (
                    d.candidate,
                    d.measure,
                    _ci(d.delta, d.ci95, True),
                    _ci(e.estimate, e.ci, True),
                    f"{e.audited}/{e.of}",
                    f"{e.lam:.2f}",
                    (c.verdict or "–") if c is not None else "–",
                )
            )
        echo_table(
            ("candidate", "measure", "plain", "judge-corrected", "audited", "lambda", "verdict"),
            table,
            right=(4, 5),
        )
        notes.echo()
        click.echo(
            "verdict: robust = both 95% intervals exclude 0 on the same side, or both include "
            "it; judge-dependent = the judge's errors could decide it"
        )
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
            e = trust.means[run, m].estimate
            plain = _ci(ev.summaries[run].mean[m], ev.summaries[run].ci95[m], False)
            if e.ci is None:
                table.append((run, m, plain, notes.cell(e.reason), "", ""))
            else:
                table.append(
                    (
                        run,
                        m,
                        plain,
                        _ci(e.estimate, e.ci, False),
                        f"{e.audited}/{e.of}",
                        f"{e.lam:.2f}",
                    )
                )
        echo_table(
            ("run", "measure", "plain", "judge-corrected", "audited", "lambda"), table, right=(4, 5)
        )
        notes.echo()
    _forecasts([(run, m, trust.means[run, m]) for run, m in keys])
