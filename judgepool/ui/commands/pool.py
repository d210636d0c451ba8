"""`judgepool pool`: per run judged@k and holes, the pool's holes, or the holes themselves."""

from __future__ import annotations

import click

from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.errors import UsageError, counted
from judgepool.metrics.gate import fmt_judged, judge_command
from judgepool.reports.command_line import command_line
from judgepool.ui.format import echo_jsonl, echo_table, echo_tsv, note
from judgepool.ui.options import (
    all_queries_option,
    depth_option,
    judge_option,
    level_option,
    runs_option,
)


@click.command("pool")
@depth_option
@runs_option
@level_option
@judge_option
@all_queries_option
@click.option("--list", "as_list", is_flag=True, help="List the holes instead of the summary.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "tsv", "jsonl"]),
    default=None,
    help="Output format [default: table for the summary, tsv for --list].",
)
@click.pass_obj
def pool(
    store: Store,
    depth: int,
    runs: tuple[str, ...],
    level: Level,
    labeller: str | None,
    all_queries: bool,
    as_list: bool,
    fmt: str | None,
) -> None:
    """Pool the top DEPTH of the chosen runs: judged@DEPTH per run, and the holes to fill.

    A hole is a pooled (query, doc) pair with no effective label. Only queries with at least
    one label are pooled (the evaluation set), unless --all-queries is given.
    """
    from judgepool.api.pool import PoolSpec, holes, summary

    spec = PoolSpec(depth=depth, runs=runs, level=level, labeller=labeller, all_queries=all_queries)
    if as_list:
        found = holes(store, spec)
        if fmt == "jsonl":
            echo_jsonl(
                {
                    "qid": h.qid,
                    "doc_id": h.doc_id,
                    "level": level,
                    "best_rank": h.best_rank,
                    "runs": list(h.runs),
                    "has_text": h.has_text,
                    "has_query_text": h.has_query_text,
                }
                for h in found
            )
        else:
            rows = (
                (
                    h.qid,
                    h.doc_id,
                    h.best_rank,
                    ",".join(h.runs),
                    int(h.has_text),
                    int(h.has_query_text),
                )
                for h in found
            )
            headers = ("qid", "doc_id", "best_rank", "runs", "has_text", "has_query_text")
            if fmt == "table":
                echo_table(headers, rows, right=(2,))
            else:
                echo_tsv(headers, rows)
        note(f"{len(found)} holes at depth {depth} ({level} level)")
        return
    if fmt not in (None, "table"):
        raise UsageError(
            f"--format {fmt} applies to --list (the holes), not to the summary",
            f"add --list, or leave out --format {fmt}",
        )
    pooled = summary(store, spec)
    scope = "every query of the runs" if all_queries else "queries with at least one label"
    click.echo(
        f"pool of {counted(len(pooled.runs), 'run')} at depth {depth}, {level} level: "
        f"{pooled.scope_queries} queries ({scope})"
    )
    echo_table(
        ("run", "queries", "missing", f"judged@{depth}", "holes"),
        (
            (
                r.run,
                r.queries - r.missing_queries,
                r.missing_queries,
                fmt_judged(r.judged_exact),
                r.holes,
            )
            for r in pooled.runs
        ),
        right=(1, 2, 3, 4),
    )
    click.echo(
        f"pool: {pooled.pairs} pairs, {pooled.holes} holes "
        f"({pooled.holes_without_text} without passage text, "
        f"{pooled.holes_without_query_text} without query text)"
    )
    if pooled.queries_without_labels and not all_queries:
        click.echo(
            f"{pooled.queries_without_labels} queries of these runs have no label at the {level} "
            "level and are not pooled; add --all-queries to pool them too"
        )
    if pooled.holes:
        command = judge_command(store, depth, runs, level, all_queries, labeller=labeller)
        click.echo(f"fill the holes with: {command_line(command)} --model MODEL")
