"""`judgepool export qrels`: write labels as TREC qrels or JSONL with provenance (atomically)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.ui.format import note
from judgepool.ui.options import judge_option, level_option

if TYPE_CHECKING:
    from judgepool.api.export import ExportFormat, ExportSource


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
    store: Store,
    source: ExportSource,
    level: Level,
    labeller: str | None,
    fmt: ExportFormat,
    output: Path | None,
) -> None:
    """Export one label per (query, doc) pair, ordered by qid then doc_id.

    The dashboard's Export page downloads exactly these bytes.
    """
    from judgepool.api.export import export_qrels, qrels_bytes

    if output is not None:
        done = export_qrels(
            store, output, level=level, source=source, labeller=labeller, format=fmt
        )
        note(f"{output}: {done.labels} {source} {level}-level labels [{fmt}]")
        return
    payload = qrels_bytes(store, level=level, source=source, labeller=labeller, format=fmt)
    sys.stdout.flush()
    sys.stdout.buffer.write(payload)
    sys.stdout.buffer.flush()
