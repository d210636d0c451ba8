"""`judgepool eval` and `judgepool compare`: the measures with intervals, and paired comparisons.

The numbers come from `metrics` (which see for the definitions); this module only prints them:
a table for people, CSV or one JSON object for programs. `compare` exits with code 3 when a
compared run is under the judged@k gate, after printing the JSON object when asked for JSON.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgepool.pooling.store.connection import Store
from judgepool.reports.command_line import command_line
from judgepool.ui.commands import comparing
from judgepool.ui.commands.comparing import by_option, fail_on_option
from judgepool.ui.commands.corrected_table import corrected_deltas, corrected_means
from judgepool.ui.format import echo_json, echo_table, fmt_float
from judgepool.ui.options import judge_option, level_option, runs_option

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.evaluate import EvaluationFigures

F = TypeVar("F", bound=Callable[..., Any])


def measure_options(formats: tuple[str, ...] | None) -> Callable[[F], F]:
    """--k, --rel, --key-rel, --measure, --resamples, --seed, --average and --format (one of
    `formats`; none when None): the options eval, compare and report share."""

    def decorate(func: F) -> F:
        return _with_measure_options(func, formats)

    return decorate


def _with_measure_options(func: F, formats: tuple[str, ...] | None) -> F:
    for option in reversed(
        (
            click.option(
                "--k",
                "k",
                type=click.IntRange(min=1),
                default=10,
                show_default=True,
                help="Cutoff: the measures look at each run's top K.",
            ),
            click.option(
                "--rel",
                type=click.IntRange(min=1),
                default=2,
                show_default=True,
                help="Lowest grade counted relevant by nR@K.",
            ),
            click.option(
                "--key-rel",
                type=click.IntRange(min=1),
                default=3,
                show_default=True,
                help="Lowest grade of a key doc, for R(rel=KEY_REL)@K.",
            ),
            click.option(
                "--measure",
                "measures",
                multiple=True,
                metavar="MEASURE",
                help="An ir-measures measure (nDCG@10, RR@10, AP@100, P(rel=2)@5 ...),"
                " repeatable [default: nDCG@K, R(rel=KEY_REL)@K, nR@K, Judged@K].",
            ),
            click.option(
                "--resamples",
                type=click.IntRange(min=1),
                default=10_000,
                show_default=True,
                help="Bootstrap and permutation resamples.",
            ),
            click.option(
                "--seed",
                type=int,
                default=None,
                help="Seed of the resampling [default: a fixed seed, so runs repeat].",
            ),
            *(
                [
                    click.option(
                        "--format",
                        "fmt",
                        type=click.Choice(formats),
                        default="table",
                        show_default=True,
                    )
                ]
                if formats
                else []
            ),
            click.option(
                "--average",
                type=click.Choice(["defined", "trec_eval"]),
                default="defined",
                show_default=True,
                help="defined: each mean over the queries with a doc at the measure's "
                "threshold; trec_eval: over every query, those counting 0, exactly as "
                "trec_eval -c (to reproduce published tables).",
            ),
        )
    ):
        func = option(func)
    return func


def _seed(seed: int | None) -> int:
    from judgepool.metrics.bootstrap import DEFAULT_SEED

    return DEFAULT_SEED if seed is None else seed


def _csv(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if cell is None else cell for cell in row])


def _ci(mean: float | None, ci: tuple[float, float] | None, shown: str | None = None) -> str:
    if mean is None:
        return "–"
    low, high = (fmt_float(ci[0]), fmt_float(ci[1])) if ci else ("–", "–")
    return f"{shown or f'{mean:.3f}'} [{low}, {high}]"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _header(ev: EvaluationFigures) -> str:
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


def _fooled(ev: EvaluationFigures) -> None:
    """One line per judge whose labels count here and that canaries fooled."""
    for row in ev.fooled:
        rates = ", ".join(
            f"{kind} {'–' if r is None else f'{r:.0%}'}" for kind, r in row.rates().items()
        )
        click.echo(
            f"FOOLED BY CANARIES: judge {row.labeller} (judge run {row.id}, "
            f"{row.started_at:%Y-%m-%d}) graded canaries of true grade 0 as relevant: {rates} "
            "(threshold "
            f"{(row.canary_threshold or 0):.0%}); its labels count here"
        )


def _warn(ev: EvaluationFigures) -> None:
    """The evaluation's warnings, loudly, on stderr (so stdout stays machine-readable)."""
    for text in ev.warnings:
        click.echo(f"warning: {text}", err=True)


def _runs_table(ev: EvaluationFigures, flagged: Sequence[str] = (), gate: float = 0.9) -> None:
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


def _bounds_table(ev: EvaluationFigures, flagged: Sequence[str] = ()) -> None:
    with_holes = [r for r in ev.runs if ev.summaries[r].bounds]
    if not with_holes:
        return
    names = [str(m) for m in ev.measures if m.threshold is not None]
    click.echo(
        f"\nbounds: each mean with every hole of the run's top {ev.k} counted grade 0 (as now) .. "
        f"counted grade {ev.top_grade}"
    )
    rows = []
    for run in with_holes:
        bounds = ev.summaries[run].bounds or {}
        cells = [f"{fmt_float(bounds[m][0])} .. {fmt_float(bounds[m][1])}" for m in names]
        note = ["UNRELIABLE" if run in flagged else ""] if flagged else []
        rows.append([run, ev.summaries[run].holes, *cells, *note])
    echo_table(["run", "holes", *names] + (["note"] if flagged else []), rows, right=(1,))


def _per_query_table(ev: EvaluationFigures) -> None:
    names = [str(m) for m in ev.measures]
    rows = [
        [run, qid, *(fmt_float(values[m], 4) for m in names)]
        for run in ev.runs
        for qid, values in ev.per_query(run).items()
    ]
    click.echo("")
    echo_table(["run", "qid", *names], rows, right=tuple(range(2, 2 + len(names))))


@click.command("eval")
@runs_option
@level_option
@judge_option
@measure_options(("table", "json", "csv"))
@click.option("--per-query", is_flag=True, help="Also show every query's values.")
@by_option
@click.pass_obj
def eval_command(
    store: Store,
    runs: tuple[str, ...],
    level: str,
    labeller: str | None,
    k: int,
    rel: int,
    key_rel: int,
    measures: tuple[str, ...],
    resamples: int,
    seed: int | None,
    fmt: str,
    average: str,
    per_query: bool,
    by: str | None,
) -> None:
    """nDCG@K, R(rel=3)@K, nR@K and Judged@K of the runs, with 95% bootstrap intervals.

    The queries averaged are those with at least one effective label (human, else judge); a
    query with no doc at a measure's threshold is left out of that measure's mean. Runs with
    holes also show the range of each mean between "every hole is grade 0" and "every hole
    has the top grade".
    """
    from judgepool.metrics.evaluate import evaluate
    from judgepool.reports.data import (
        PER_QUERY_HEADERS,
        SUMMARY_HEADERS,
        evaluation_json,
        per_query_rows,
        summary_rows,
    )

    ev = evaluate(
        store,
        runs or None,
        level=level,
        labeller=labeller,
        k=k,
        rel=rel,
        key_rel=key_rel,
        measures=measures or None,
        resamples=resamples,
        seed=_seed(seed),
        average=average,
    )
    groups = comparing.group_means_of(store, ev, by)
    _warn(ev)
    if fmt == "json":
        echo_json(evaluation_json(ev, comparing.groups_extra(groups)))
    elif fmt == "csv":
        if groups is not None:
            comparing.echo_group_means_csv(ev, groups)
        elif per_query:
            _csv(PER_QUERY_HEADERS, per_query_rows(ev))
        else:
            _csv(SUMMARY_HEADERS, summary_rows(ev))
    else:
        click.echo(f"evaluation of {len(ev.runs)} run(s): {_header(ev)}")
        _fooled(ev)
        _runs_table(ev)
        _bounds_table(ev)
        corrected_means(ev)
        if per_query:
            _per_query_table(ev)
        if groups is not None:
            comparing.echo_group_means(ev, groups)


def _comparison_table(cmp: ComparisonFigures) -> None:
    ev = cmp.evaluation
    flagged = [r.run for r in cmp.refused]
    click.echo(
        f"comparison of {len(cmp.candidates)} candidate(s) with baseline {cmp.baseline}: "
        f"{_header(ev)}"
    )
    _fooled(ev)
    if cmp.unreliable:
        from judgepool.metrics.gate import describe

        listing = "; ".join(describe(r, ev.k, cmp.gate) for r in cmp.refused)
        click.echo(f"UNRELIABLE (forced past the judged@{ev.k} gate of {cmp.gate:g}): {listing}")
        if cmp.command is not None:
            click.echo(f"fill the holes with: {command_line(cmp.command)}")
    _runs_table(ev, flagged, cmp.gate)
    rows = [
        [
            d.candidate,
            d.measure,
            d.n,
            _signed(d.delta),
            "–" if d.ci95 is None else f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]",
            fmt_float(d.p, 4),
            fmt_float(d.p_holm, 4),
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
        f"p: paired randomisation test ({ev.resamples} sign flips); p(Holm): adjusted over "
        f"{tests} comparisons; significant: p(Holm) < {cmp.alpha:g}"
    )
    corrected_deltas(cmp)
    _bounds_table(ev, flagged)


gate_option = click.option(
    "--gate",
    type=click.FloatRange(0.0, 1.0),
    default=0.9,
    show_default=True,
    help="Refuse when a compared run's judged@K is under this share.",
)
force_option = click.option(
    "--force", is_flag=True, help="Compare runs under the gate anyway (marked UNRELIABLE)."
)


@click.command("compare")
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE...")
@level_option
@judge_option
@measure_options(("table", "json", "csv", "markdown"))
@gate_option
@force_option
@fail_on_option
@by_option
@click.option(
    "--by-judge",
    is_flag=True,
    help="Also rank the runs under each judge (Kendall's tau between judges).",
)
@click.pass_obj
def compare_command(
    store: Store,
    baseline: str,
    candidates: tuple[str, ...],
    level: str,
    labeller: str | None,
    k: int,
    rel: int,
    key_rel: int,
    measures: tuple[str, ...],
    resamples: int,
    seed: int | None,
    fmt: str,
    average: str,
    gate: float,
    force: bool,
    fail_on: tuple[str, ...],
    by: str | None,
    by_judge: bool,
) -> None:
    """Compare CANDIDATE runs with BASELINE: paired differences, intervals, Holm-adjusted p.

    Refused (exit code 3) when a compared run's judged@K is under the gate: the message names
    each such run, its judged@K and holes, and the `judgepool judge` command that fills them.
    With --fail-on, exit code 4 when a rule breaks (a CI gate: see README, In CI).
    """
    from judgepool.metrics.verdicts import run_compare

    report = run_compare(
        store,
        baseline,
        candidates,
        fail_on=fail_on,
        by=by,
        level=level,
        labeller=labeller,
        k=k,
        rel=rel,
        key_rel=key_rel,
        measures=measures or None,
        resamples=resamples,
        seed=_seed(seed),
        gate=gate,
        force=force,
        average=average,
    )
    _warn(report.comparison.evaluation)
    ranked = None
    if by_judge and report.comparison.error() is None:
        from judgepool.metrics.by_judge import rank_by_judge

        ranked = rank_by_judge(
            store,
            [baseline, *candidates],
            level=level,
            k=k,
            measure=(measures or [None])[0],
            baseline=baseline,
            resamples=resamples,
            seed=_seed(seed),
            gate=gate,
        )
    if fmt == "table" and report.comparison.error() is None:
        _comparison_table(report.comparison)
        comparing.echo_group_deltas(report)
        comparing.echo_rules(report)
        if ranked is not None:
            from judgepool.ui.commands.judges import print_by_judge

            click.echo("")
            print_by_judge(ranked)
    elif fmt == "json" and ranked is not None:
        from judgepool.reports.ci import report_json_extra
        from judgepool.reports.data import comparison_json
        from judgepool.ui.commands.judges import by_judge_json

        extra = {**report_json_extra(report), "by_judge": by_judge_json(ranked)}
        echo_json(comparison_json(report.comparison, extra))
    else:
        comparing.echo_report(report, fmt)
    error = report.error()
    if error is not None:
        raise error
