"""The tables `judgepool eval` and `judgepool compare` print for people: the runs' means with
their intervals and the gate's judged@k, the bounds, the per-query values and the differences;
with the notes that say which queries were averaged and how the intervals were made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from judgepool.defaults import GATE
from judgepool.errors import counted
from judgepool.reports.sentences import in_order, p_value
from judgepool.ui.commands.corrected_table import corrected_deltas
from judgepool.ui.format import echo_table, fmt_float

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.evaluate import EvaluationFigures


def _ci(mean: float | None, ci: tuple[float, float] | None, shown: str | None = None) -> str:
    if mean is None:
        return "–"
    low, high = (fmt_float(ci[0]), fmt_float(ci[1])) if ci else ("–", "–")
    return f"{shown or f'{mean:.3f}'} [{low}, {high}]"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def header(ev: EvaluationFigures) -> str:
    """What the figures are over: level, k, whose labels, the evaluation set."""
    who = "any judge" if ev.labeller is None else f"judge {ev.labeller}"
    labels = f"human labels + {who}"
    return (
        f"{ev.level} level, k={ev.k}, {labels}; evaluation set: {len(ev.qids)} queries "
        "with at least one effective label (a run that misses one scores 0 on it)"
    )


def _averaged_note(ev: EvaluationFigures) -> str:
    if ev.average == "trec_eval":
        counts = ", ".join(f"{m} {ev.n(str(m))}" for m in ev.measures)
        zeroed = [f"{m} {ev.zeroed(str(m))}" for m in ev.measures if ev.zeroed(str(m))]
        return (
            "queries averaged (as trec_eval -c: a query with no doc at a measure's threshold "
            f"counts 0): {counts}"
            + (f"; of them counted 0 for want of such a doc: {', '.join(zeroed)}" if zeroed else "")
        )
    parts = []
    for m in ev.measures:
        name = str(m)
        left = len(ev.qids) - ev.n(name)
        note = f" ({left} left out: no doc of grade >= {m.threshold})" if left else ""
        parts.append(f"{name} {ev.n(name)}{note}")
    return "queries averaged: " + ", ".join(parts)


def fooled(ev: EvaluationFigures) -> None:
    """One line per judge whose labels count here and that canaries fooled."""
    from judgepool.reports.trust_text import fooled_line

    for row in ev.fooled:
        click.echo(fooled_line(row))


def warn(ev: EvaluationFigures) -> None:
    """The evaluation's warnings, loudly, on stderr (so stdout stays machine-readable)."""
    for text in ev.warnings:
        click.echo(f"warning: {text}", err=True)


def runs_table(ev: EvaluationFigures, flagged: Sequence[str] = (), gate: float = GATE) -> None:
    """Each run's means with their intervals (judged@k read against `gate`), then how the
    queries were averaged and the intervals made."""
    from judgepool.metrics.gate import fmt_judged

    names = [str(m) for m in ev.measures]
    judged = {str(m) for m in ev.measures if m.kind == "Judged"}
    headers = ["run", *names, "holes"] + (["note"] if flagged else [])
    rows = []
    for run in ev.runs:
        s = ev.summaries[run]
        # Judged@k's mean is the gate's number: printed so that it reads on the right side.
        exact = fmt_judged(s.judged_exact, gate)
        cells = [_ci(s.mean[m], s.ci95[m], exact if m in judged else None) for m in names]
        row = [run, *cells, s.holes]
        if flagged:
            row.append("UNRELIABLE" if run in flagged else "")
        rows.append(row)
    echo_table(headers, rows, right=(len(names) + 1,))
    click.echo(_averaged_note(ev))
    click.echo(
        f"95% intervals: percentile bootstrap over the averaged queries, {ev.resamples} "
        f"resamples, seed {ev.seed}"
    )
    external = [f"{m} computed by {e}" for m, e in ev.engines.items() if e != "judgepool"]
    if external:
        click.echo(
            "; ".join(external) + " on the same effective labels and rankings (judged@"
            f"{ev.k} and the gate by judgepool)"
        )
    missing = [f"{run} {ev.summaries[run].missing}" for run in ev.runs if ev.summaries[run].missing]
    if missing:
        click.echo(
            f"evaluation-set queries a run returned nothing for (scored 0): {', '.join(missing)}"
        )


def bounds_table(ev: EvaluationFigures, flagged: Sequence[str] = ()) -> None:
    """Each mean as it is and with every hole counted the top grade (runs with holes only)."""
    with_holes = [r for r in ev.runs if ev.summaries[r].bounds]
    if not with_holes:
        return
    names = [str(m) for m in ev.measures if m.threshold is not None]
    click.echo(
        f"\nbounds: each mean with every hole of the run's top {ev.k} counted grade 0 (as now) "
        f"and counted grade {ev.top_grade}, the lower first"
    )
    rows = []
    for run in with_holes:
        bounds = ev.summaries[run].bounds or {}
        cells = [" .. ".join(map(fmt_float, in_order(bounds[m]))) for m in names]
        note = ["UNRELIABLE" if run in flagged else ""] if flagged else []
        rows.append([run, ev.summaries[run].holes, *cells, *note])
    echo_table(["run", "holes", *names] + (["note"] if flagged else []), rows, right=(1,))


def per_query_table(ev: EvaluationFigures) -> None:
    """Every run's value on every query (`eval --per-query`)."""
    names = [str(m) for m in ev.measures]
    rows = [
        [run, qid, *(fmt_float(values[m], 4) for m in names)]
        for run in ev.runs
        for qid, values in ev.per_query(run).items()
    ]
    click.echo("")
    echo_table(["run", "qid", *names], rows, right=tuple(range(2, 2 + len(names))))


def comparison_table(cmp: ComparisonFigures) -> None:
    """`compare`'s table: the runs, the paired differences, the corrected ones, the bounds."""
    ev = cmp.evaluation
    flagged = [r.run for r in cmp.refused]
    click.echo(
        f"comparison of {counted(len(cmp.candidates), 'candidate')} with baseline {cmp.baseline}: "
        f"{header(ev)}"
    )
    fooled(ev)
    if cmp.unreliable:
        from judgepool.metrics.gate import describe

        listing = "; ".join(describe(r, ev.k, cmp.gate) for r in cmp.refused)
        click.echo(f"UNRELIABLE (forced past the judged@{ev.k} gate of {cmp.gate:g}): {listing}")
        if cmp.command is not None:
            click.echo(f"fill the holes with: {cmp.command}")
    runs_table(ev, flagged, cmp.gate)
    rows = [
        [
            d.candidate,
            d.measure,
            d.n,
            _signed(d.delta),
            "–" if d.ci95 is None else f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]",
            p_value(d.p, ev.resamples),
            p_value(d.p_holm, ev.resamples, d.p, cmp.alpha),
            "yes" if d.significant else "no",
            *(["UNRELIABLE" if d.unreliable else ""] if flagged else []),
        ]
        for d in cmp.deltas
    ]
    headers = ["candidate", "measure", "n", "delta", "95% CI", "p", "p(Holm)", "significant"]
    click.echo("")
    echo_table(headers + (["note"] if flagged else []), rows, right=(2, 3, 5, 6))
    tests = sum(1 for d in cmp.deltas if d.p is not None)
    click.echo(
        f"delta = candidate - baseline over the same queries; 95% CI: paired bootstrap; "
        f"p: paired randomisation test ({ev.resamples} sign flips; < x: none was as extreme, "
        "the p is under x); p(Holm): adjusted over "
        f"{tests} comparisons; significant: p(Holm) < {cmp.alpha:g}"
    )
    corrected_deltas(cmp)
    bounds_table(ev, flagged)
