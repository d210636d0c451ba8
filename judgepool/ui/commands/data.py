"""`judgepool ingest ...`: load queries, passages, qrels and runs; one transaction per file.

Each file is parsed and checked before the database is locked; the lock is held only to swap
the file's rows in, so a judge or the dashboard writing meanwhile barely waits.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from judgepool.api.store import Store
from judgepool.defaults import LEVEL, LEVELS, Level

F = TypeVar("F", bound=Callable[..., Any])

_FILES = click.argument(
    "files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False)
)


def _format_option(choices: tuple[str, ...]) -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=None,
        help="The file format (default: told from the file name, else from its first line).",
    )


@click.group()
def ingest() -> None:
    """Load files into the database (each file in one transaction: all of it or nothing).

    \b
    Formats (any of them may be gzip-compressed; TREC files split on any whitespace and skip
    `#` comment lines, as trec_eval does):
      queries  TSV `qid<TAB>text` (or a header row: qid, text, group), or JSONL
               {"qid", "text", "group"?}; groups also from --groups `qid<TAB>group`
      docs     JSONL {"doc_id"|"docid"|"id"|"_id", "text"|"contents"|"body", "title"?, "parent_id"?}
               or TSV `doc_id<TAB>text` (or a header row naming the columns)
      qrels    TREC `qid 0 doc_id grade`, or JSONL {"qid", "doc_id", "grade"}
      run      TREC `qid Q0 doc_id rank score tag`, JSONL {"qid", "doc_id", "score"}, or Parquet
    """


@ingest.command("queries")
@_FILES
@_format_option(("tsv", "jsonl"))
@click.option(
    "--groups",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="The queries' groups (class, language, source ...): `qid<TAB>group`, one membership "
    "a line; replaces the groups of the queries it names (one queries FILE only).",
)
@click.pass_obj
def ingest_queries_cmd(
    store: Store, files: tuple[Path, ...], fmt: str | None, groups: Path | None
) -> None:
    """Load query texts (topics), and their groups from --groups or a `group` column/key."""
    from judgepool.api.ingest import ingest_queries
    from judgepool.errors import UsageError

    if groups is not None and len(files) > 1:
        raise UsageError(
            f"--groups goes with one queries file, {len(files)} were given",
            "ingest the files one by one, giving --groups with the one it belongs to",
        )
    for path in files:
        done = ingest_queries(store, path, format=fmt, groups=groups)
        line = f"{path}: {done.rows} queries ({done.replaced} replaced) [{done.format}]"
        if done.groups_from is not None:
            source = "" if done.groups_from == str(path) else f" from {done.groups_from}"
            line += f"; {done.memberships} group memberships in {done.groups} groups{source}"
        click.echo(line)


@ingest.command("docs")
@_FILES
@_format_option(("jsonl", "tsv"))
@click.pass_obj
def ingest_docs_cmd(store: Store, files: tuple[Path, ...], fmt: str | None) -> None:
    """Load passage or chunk texts (with optional title and parent_id)."""
    from judgepool.api.ingest import ingest_docs

    for path in files:
        done = ingest_docs(store, path, format=fmt)
        click.echo(
            f"{path}: {done.rows} docs ({done.replaced} replaced, {done.without_text} without "
            f"text, {done.with_parent} with a parent_id) [{done.format}]"
        )


@ingest.command("qrels")
@_FILES
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default=LEVEL,
    show_default=True,
    help="chunk: labels of the ids the runs rank; doc: labels of their parent documents.",
)
@click.option("--labeller", default=None, help="Who made the labels [default: the file name].")
@_format_option(("trec", "jsonl"))
@click.pass_obj
def ingest_qrels_cmd(
    store: Store, files: tuple[Path, ...], level: Level, labeller: str | None, fmt: str | None
) -> None:
    """Load human labels (integer grades kept as given; any outside 0-3 are reported)."""
    from judgepool.api.ingest import ingest_qrels

    for path in files:
        done = ingest_qrels(store, path, level=level, labeller=labeller, format=fmt)
        click.echo(
            f"{path}: {done.labels} {done.level}-level labels on {done.queries} queries by "
            f"{done.labeller!r} ({done.added - done.changed} new, {done.changed} changed, "
            f"{done.unchanged} unchanged)"
        )
        for note in done.notes:
            click.echo(f"note: {path}: {note}", err=True)


@ingest.command("run")
@_FILES
@click.option(
    "--name",
    default=None,
    help="The run's name (one file only) [default: the file's tag when all its lines carry "
    "one, else the file name's stem].",
)
@_format_option(("trec", "jsonl", "parquet"))
@click.pass_obj
def ingest_run_cmd(
    store: Store, files: tuple[Path, ...], name: str | None, fmt: str | None
) -> None:
    """Load rankings; a run ingested again under the same name replaces the old one atomically.

    All the files are read and checked before any is written; two that would get the same
    name are refused.
    """
    from judgepool.api.ingest import ingest_runs

    for done in ingest_runs(store, files, name=name, format=fmt):
        path = done.path
        verb = "replaced" if done.replaced else "added"
        click.echo(
            f"{path}: run {done.name!r} {verb}: {done.rows} rows, {done.queries} queries "
            f"[{done.format}]"
        )
