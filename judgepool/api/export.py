"""The export verb: labels as TREC qrels or JSONL with provenance, one per (query, doc) pair,
ordered by qid then doc_id, the same bytes every time (pooling/export.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from judgepool.api.store import Store
from judgepool.defaults import LEVEL, Level
from judgepool.pooling import export

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_SOURCES",
    "ExportFormat",
    "ExportSource",
    "Exported",
    "export_qrels",
    "file_name",
    "labels_bytes",
    "qrels_bytes",
]

EXPORT_FORMATS = export.EXPORT_FORMATS
EXPORT_SOURCES = export.EXPORT_SOURCES

#: Which labels: the ones the measures use, the human ones, or the judges'.
ExportSource = Literal["effective", "human", "judge"]
#: `trec`: `qid 0 doc_id grade` lines; `jsonl`: every field of each label with its provenance.
ExportFormat = Literal["trec", "jsonl"]


@dataclass(frozen=True)
class Exported:
    """Where the labels were written, and how many."""

    path: Path
    labels: int


def export_qrels(
    store: Store,
    path: str | os.PathLike[str],
    *,
    level: Level = LEVEL,
    source: ExportSource = "effective",
    labeller: str | None = None,
    format: ExportFormat = "trec",
) -> Exported:
    """Write the labels to `path` atomically, never over the database, a DuckDB file or anything
    but a regular file; an export of nothing is refused (nothing written)."""
    written, count = export.export_file(store, path, level, source, labeller, format)
    return Exported(written, count)


def labels_bytes(
    store: Store,
    *,
    level: Level = LEVEL,
    source: ExportSource = "effective",
    labeller: str | None = None,
    format: ExportFormat = "trec",
) -> bytes:
    """The bytes `export_qrels` writes, ordered by qid then doc_id (the same database always
    gives the same bytes); empty when there is nothing to export (a download page says so)."""
    return export.export_labels(store, level=level, source=source, labeller=labeller, fmt=format)


def file_name(level: Level, source: str, format: str) -> str:
    """The suggested file name of an export, e.g. qrels.chunk.effective.txt."""
    return export.export_file_name(level, source, format)


def qrels_bytes(
    store: Store,
    *,
    level: Level = LEVEL,
    source: ExportSource = "effective",
    labeller: str | None = None,
    format: ExportFormat = "trec",
) -> bytes:
    """The bytes `export_qrels` writes (for stdout); an export of nothing is refused, saying
    which neighbouring choices would not be empty."""
    payload = labels_bytes(store, level=level, source=source, labeller=labeller, format=format)
    if not payload:
        raise export.nothing_to_export(store, level, source, labeller)
    return payload
