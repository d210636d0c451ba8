"""`judgepool runs | queries | status`: what is in the database."""

from __future__ import annotations

import click

from judgepool.api.store import Store
from judgepool.ui.format import echo_json, echo_table, echo_tsv

_FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "tsv", "json"]),
    default="table",
    show_default=True,
)


@click.command("runs")
@_FORMAT
@click.pass_obj
def runs(store: Store, fmt: str) -> None:
    """List the runs: rows, queries, format and the file each came from."""
    from judgepool.api.inventory import runs as list_runs

    found = list_runs(store)
    headers = ("run", "rows", "queries", "format", "ingested_at", "source_file")
    rows = [(r.name, r.rows, r.queries, r.format, r.ingested_at, r.source_file) for r in found]
    if fmt == "json":
        echo_json([dict(zip(headers, row, strict=True)) for row in rows])
    elif fmt == "tsv":
        echo_tsv(headers, rows)
    else:
        echo_table(headers, rows, right=(1, 2))


@click.command("queries")
@_FORMAT
@click.pass_obj
def queries(store: Store, fmt: str) -> None:
    """List the queries: text, how many runs rank them, human and judge labels."""
    from judgepool.api.inventory import queries as list_queries

    found = list_queries(store)
    headers = ("qid", "runs", "human_labels", "judge_labels", "text")
    rows = [(q.qid, q.runs, q.human_labels, q.judge_labels, q.text or "") for q in found]
    if fmt == "json":
        echo_json([dict(zip(headers, row, strict=True)) for row in rows])
    elif fmt == "tsv":
        echo_tsv(headers, rows)
    else:
        short = [(*r[:4], r[4] if len(r[4]) <= 60 else r[4][:57] + "...") for r in rows]
        echo_table(headers, short, right=(1, 2, 3))
        missing = sum(1 for q in found if q.text is None)
        if missing:
            click.echo(f"{missing} queries have no text (ingest a topics file to judge them)")


@click.command("status")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
def status(store: Store, fmt: str) -> None:
    """Counts of queries, docs, runs and labels (by level, source, labeller and status).

    `labels` counts the labels that can count; `canary` and `calibration` the checks of a judge
    (planted pairs, re-judged human-labelled pairs), which never count as labels."""
    from judgepool.api.inventory import status as status_counts

    counts = status_counts(store)
    if fmt == "json":
        echo_json({"db": str(store.path), **counts})
        return
    click.echo(f"database: {store.path} (schema version {counts['schema_version']})")
    click.echo(
        f"queries: {counts['queries']}  docs: {counts['docs']} "
        f"({counts['docs_without_text']} without text, {counts['parent_documents']} parents)  "
        f"runs: {counts['runs']} ({counts['run_rows']} rows)"
    )
    if counts["labels"]:
        echo_table(
            ("level", "source", "labeller", "status", "labels", "canary", "calibration"),
            [
                (
                    x["level"],
                    x["source"],
                    x["labeller"],
                    x["status"],
                    x["count"],
                    x["canary"],
                    x["calibration"],
                )
                for x in counts["labels"]
            ],
            right=(4, 5, 6),
        )
    else:
        click.echo("labels: none yet")
