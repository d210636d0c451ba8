"""`judgepool eval` and `judgepool compare`: the measures with intervals, and paired comparisons.

The numbers come from the api's services (metrics/ has the definitions); this module parses the
options and prints: a table for people (eval_tables.py), CSV or one JSON object for programs.
`compare` exits with code 3 when a compared run is under the judged@k gate, after printing the
JSON object when asked for JSON.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import click

from judgepool.api.store import Store, holding
from judgepool.defaults import GATE, Level
from judgepool.errors import counted
from judgepool.ui.commands import comparing
from judgepool.ui.commands import eval_tables as tables
from judgepool.ui.commands.comparing import by_option, fail_on_option
from judgepool.ui.commands.corrected_table import corrected_means
from judgepool.ui.commands.measuring import Measuring, measure_options
from judgepool.ui.format import echo_json
from judgepool.ui.options import chosen_level, judge_option, later_level_option, runs_option
from judgepool.ui.working import working


def _csv(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if cell is None else cell for cell in row])


@click.command("eval")
@runs_option
@later_level_option
@judge_option
@measure_options(("table", "json", "csv"))
@click.option("--per-query", is_flag=True, help="Also show every query's values.")
@by_option
@click.pass_obj
def eval_command(
    store: Store,
    runs: tuple[str, ...],
    level: Level | None,
    labeller: str | None,
    measuring: Measuring,
    fmt: str,
    per_query: bool,
    by: str | None,
) -> None:
    """nDCG@K, R(rel=3)@K, nR@K and Judged@K of the runs, with 95% bootstrap intervals.

    The queries averaged are those with at least one effective label (human, else judge); a
    query with no doc at a measure's threshold is left out of that measure's mean. Runs with
    holes also show the range of each mean between "every hole is grade 0" and "every hole
    has the top grade".
    """
    from judgepool.api.evaluate import EvalSpec, evaluate
    from judgepool.reports.data import (
        PER_QUERY_HEADERS,
        SUMMARY_HEADERS,
        per_query_rows,
        summary_rows,
    )

    with holding(store):  # one open of the file for the default level and the figures
        spec = measuring.spec(EvalSpec, level=chosen_level(store, level), labeller=labeller)
        with working(
            f"computing the measures and bootstrap intervals ({spec.resamples:,} resamples)"
        ):
            found = evaluate(store, runs, spec, by=by)
    ev, groups = found.result, found.by_group
    tables.warn(ev)
    if fmt == "json":
        echo_json(found.to_json())
    elif fmt == "csv":
        if groups is not None:
            comparing.echo_group_means_csv(ev, groups)
        elif per_query:
            _csv(PER_QUERY_HEADERS, per_query_rows(ev))
        else:
            _csv(SUMMARY_HEADERS, summary_rows(ev))
    else:
        click.echo(f"evaluation of {counted(len(ev.runs), 'run')}: {tables.header(ev)}")
        tables.fooled(ev)
        tables.runs_table(ev)
        tables.bounds_table(ev)
        corrected_means(ev)
        if per_query:
            tables.per_query_table(ev)
        if groups is not None:
            comparing.echo_group_means(ev, groups)


gate_option = click.option(
    "--gate",
    type=click.FloatRange(0.0, 1.0),
    default=GATE,
    show_default=True,
    help="Refuse when a compared run's judged@K is under this share.",
)
force_option = click.option(
    "--force", is_flag=True, help="Compare runs under the gate anyway (marked UNRELIABLE)."
)


@click.command("compare")
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE...")
@later_level_option
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
    level: Level | None,
    labeller: str | None,
    measuring: Measuring,
    fmt: str,
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
    from judgepool.api.compare import CompareSpec, compare

    with holding(store):  # one open of the file for the default level and the figures
        spec = measuring.spec(
            CompareSpec,
            level=chosen_level(store, level),
            labeller=labeller,
            gate=gate,
            force=force,
        )
        with working(
            f"comparing: bootstrap intervals and sign flips ({spec.resamples:,} resamples)"
        ):
            found = compare(store, baseline, candidates, spec, fail_on=fail_on, by=by, refuse=False)
    report = found.report
    tables.warn(report.comparison.evaluation)
    ranked = None
    if by_judge and report.comparison.error() is None:
        from judgepool.api.judges import rank_by_judge

        ranked = rank_by_judge(
            store,
            [baseline, *candidates],
            level=spec.level,
            k=spec.k,
            measure=(measuring.measures or [None])[0],
            baseline=baseline,
            resamples=spec.resamples,
            seed=spec.seed,
            gate=gate,
        )
    if fmt == "table" and report.comparison.error() is None:
        tables.comparison_table(report.comparison)
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
