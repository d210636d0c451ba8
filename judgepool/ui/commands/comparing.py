"""What `eval`, `compare` and `report` print beyond the plain tables: --fail-on, --by group,
--format markdown, and the JSON and CSV that carry them. The figures come from the api."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click

from judgepool.defaults import BY
from judgepool.ui.format import echo_json, echo_table, fmt_float

if TYPE_CHECKING:
    from judgepool.metrics.evaluate import EvaluationFigures
    from judgepool.metrics.groups import Groups
    from judgepool.metrics.verdicts import CompareReport

by_option = click.option(
    "--by",
    type=click.Choice(BY),
    default=None,
    help="Also break the figures down by query group (see `ingest queries --groups`): per "
    "group its queries, each mean or difference with its interval, a 'too small' marker; "
    "Holm over every group x measure comparison.",
)

fail_on_option = click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="RULE",
    help="Exit 4 when a rule breaks: regression[=MEASURE,...] (a candidate significantly "
    "worse, Holm-adjusted as in the table; default: every measure but Judged@K) or "
    "any-change[=MEASURE,...] (significantly different either way). A comparison refused by, "
    "or forced past, the gate exits 3. Repeatable.",
)


def _csv(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if cell is None else cell for cell in row])


def _ci(mean: float | None, ci: tuple[float, float] | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f} [{fmt_float(ci[0]) if ci else '–'}, {fmt_float(ci[1]) if ci else '–'}]"


def _marker(value: bool | None) -> str:
    return "too small" if value else ""


def echo_group_means(ev: EvaluationFigures, groups: Groups) -> None:
    """eval --by group: one row per group and measure, a column per run."""
    cells = {(m.group, m.measure, m.run): m for m in groups.means}
    rows = []
    for group in groups.groups:
        for name in (str(x) for x in ev.measures):
            found = [cells[(group, name, run)] for run in ev.runs]
            small = any(m.too_small for m in found)
            rows.append(
                [group, name, found[0].n, *(_ci(m.mean, m.ci95) for m in found), _marker(small)]
            )
    click.echo("\nby group (the evaluation-set queries of each group):")
    echo_table(["group", "measure", "n", *ev.runs, "note"], rows, right=(2,))
    spread = "the spread of the runs' overall means (highest - lowest)"
    if len(ev.runs) == 1:
        spread += ", undefined for one run: only groups of fewer than 2 queries are marked"
    click.echo(
        "too small: half the group's 95% interval is at least the overall effect, "
        f"{spread}, or the group has fewer than 2 queries: do not conclude on it"
        + (f"; {groups.ungrouped} queries are in no group" if groups.ungrouped else "")
    )


def echo_group_deltas(report: CompareReport) -> None:
    """compare --by group: one row per group, candidate and measure."""
    from judgepool.reports import sentences as report_text

    groups = report.groups
    if groups is None or not groups.deltas:
        return
    resamples = report.comparison.evaluation.resamples
    rows = [
        [
            d.group,
            d.candidate,
            d.measure,
            d.n,
            report_text.signed(d.delta),
            report_text.interval(d.ci95, True),
            report_text.p_value(d.p, resamples),
            report_text.p_value(d.p_holm, resamples, d.p, report.comparison.alpha),
            "yes" if d.significant else "no",
            ", ".join(
                x
                for x in ("too small" if d.too_small else "", "UNRELIABLE" if d.unreliable else "")
                if x
            ),
        ]
        for d in groups.deltas
    ]
    headers = [
        "group",
        "candidate",
        "measure",
        "n",
        "delta",
        "95% CI",
        "p",
        "p(Holm)",
        "significant",
        "note",
    ]
    click.echo("\nby group (the evaluation-set queries of each group):")
    echo_table(headers, rows, right=(3, 4, 6, 7))
    click.echo(report_text.groups_note(report))


def echo_rules(report: CompareReport) -> None:
    """The --fail-on outcome, one line."""
    from judgepool.reports import sentences as report_text

    line = report_text.rules_line(report)
    if line is not None:
        click.echo(f"\n{line}")


def echo_report(report: CompareReport, fmt: str) -> None:
    """compare in json, markdown or csv (the table is printed by ui/commands/evaluate.py)."""
    cmp = report.comparison
    if fmt == "json":
        from judgepool.reports.ci import report_json_extra
        from judgepool.reports.data import comparison_json

        echo_json(comparison_json(cmp, report_json_extra(report)))
    elif fmt == "markdown":
        from judgepool.reports.markdown import to_markdown

        click.echo(to_markdown(report), nl=False)
    elif fmt == "csv" and cmp.error() is None:
        from judgepool.reports.ci import GROUP_DELTA_HEADERS, group_delta_rows
        from judgepool.reports.data import COMPARISON_HEADERS, comparison_rows

        if report.groups is not None:
            _csv(GROUP_DELTA_HEADERS, group_delta_rows(cmp.evaluation.level, report.groups))
        else:
            _csv(COMPARISON_HEADERS, comparison_rows(cmp))


def echo_group_means_csv(ev: EvaluationFigures, groups: Groups) -> None:
    """eval --by group --format csv."""
    from judgepool.reports.ci import GROUP_MEAN_HEADERS, group_mean_rows

    _csv(GROUP_MEAN_HEADERS, group_mean_rows(ev.level, groups))
