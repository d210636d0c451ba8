"""`judgepool export qrels`: write labels as TREC qrels or JSONL with provenance (atomically)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from judgepool.pooling.store.connection import Store
from judgepool.ui.format import note
from judgepool.ui.options import judge_option, level_option


@click.group("export")
def export() -> None:
    """Write labels out of the database."""


@export.command("qrels")
@click.option(
    "--source",
    type=click.Choice(["effective", "human", "judge"]),
    default="effective",
    show_default=True,
    help="effective: the labels the measures use (latest human, else latest ok judge label); "
    "human: human labels only; judge: judge labels only.",
)
@level_option
@judge_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trec", "jsonl"]),
    default="trec",
    show_default=True,
    help="trec: `qid 0 doc_id grade`; jsonl: every field of each label, with its provenance.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write to FILE (atomically: a temporary file, then renamed; never onto the database, "
    "a DuckDB file, a folder, a link or a device) [default: stdout].",
)
@click.pass_obj
def qrels(
    store: Store, source: str, level: str, labeller: str | None, fmt: str, output: Path | None
) -> None:
    """Export one label per (query, doc) pair, ordered by qid then doc_id.

    The dashboard's Export page downloads exactly these bytes.
    """
    from judgepool.pooling.export import export_file, export_labels, nothing_to_export

    if output is not None:
        _, count = export_file(store, output, level, source, labeller, fmt)
        note(f"{output}: {count} {source} {level}-level labels [{fmt}]")
        return
    payload = export_labels(store, level=level, source=source, labeller=labeller, fmt=fmt)
    if not payload:
        raise nothing_to_export(store, level, source, labeller)
    sys.stdout.flush()
    sys.stdout.buffer.write(payload)
    sys.stdout.buffer.flush()
