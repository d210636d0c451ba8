"""The ingest verbs: queries, docs, qrels and runs from a file or a polars DataFrame.

Each source is read and checked before the database is locked, and written in one transaction
(judgepool/pooling/ingest_*.py); a DataFrame is checked exactly as a file of the same columns
(api/frames.py). `judgepool ingest ...` and `jp.Database.ingest_*` both call these.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from judgepool.api.frames import ORIGIN, Source, frame_of, from_frame, needs
from judgepool.api.store import Store
from judgepool.defaults import LEVEL, Level
from judgepool.errors import Call, Param, Placeholder
from judgepool.pooling import ingest_labels as labels_in
from judgepool.pooling import ingest_runs as runs_in
from judgepool.pooling import ingest_texts as texts_in
from judgepool.pooling.ingest_labels import QrelsIngested
from judgepool.pooling.ingest_runs import RunIngested
from judgepool.pooling.ingest_texts import TextsIngested

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "QrelsIngested",
    "RunIngested",
    "Source",
    "TextsIngested",
    "ingest_docs",
    "ingest_qrels",
    "ingest_queries",
    "ingest_run",
    "ingest_runs",
]


def _is_file(src: object) -> TypeGuard[Source]:
    """A path (a DataFrame is the other kind of source)."""
    return isinstance(src, str | os.PathLike)


def ingest_queries(
    store: Store,
    src: Source | pl.DataFrame,
    *,
    format: str | None = None,
    groups: Source | None = None,
) -> TextsIngested:
    """Queries from a TSV `qid<TAB>text` or JSONL file, or a DataFrame with columns qid and text,
    with their groups from a `group` column/key or from `groups`, a `qid<TAB>group` file."""
    group_path = None if groups is None else Path(groups)
    if _is_file(src):
        return texts_in.ingest_queries(store, Path(src), format, group_path)
    return from_frame(
        frame_of(src),
        ".jsonl",
        lambda p: texts_in.ingest_queries(store, p, "jsonl", group_path, ORIGIN),
    )


def ingest_docs(
    store: Store, src: Source | pl.DataFrame, *, format: str | None = None
) -> TextsIngested:
    """Passages or chunks from JSONL or TSV, or a DataFrame with columns doc_id, text and
    optionally title and parent_id."""
    if _is_file(src):
        return texts_in.ingest_docs(store, Path(src), format)
    return from_frame(
        frame_of(src), ".jsonl", lambda p: texts_in.ingest_docs(store, p, "jsonl", ORIGIN)
    )


def ingest_qrels(
    store: Store,
    src: Source | pl.DataFrame,
    *,
    labeller: str | None = None,
    level: Level = LEVEL,
    format: str | None = None,
) -> QrelsIngested:
    """Human labels from a TREC qrels or JSONL file (`labeller` defaults to the file's name), or
    a DataFrame with columns qid, doc_id and grade (then `labeller` is needed)."""
    if _is_file(src):
        return labels_in.ingest_qrels(store, Path(src), level, labeller, format)
    frame = frame_of(src)
    example = Call.of("ingest_qrels", Placeholder("df"), labeller="assessors-2024")
    who = needs(labeller, "labeller", Param("labeller", Placeholder("NAME")), example)
    return from_frame(
        frame, ".jsonl", lambda p: labels_in.ingest_qrels(store, p, level, who, "jsonl", ORIGIN)
    )


def ingest_run(
    store: Store,
    src: Source | pl.DataFrame,
    *,
    name: str | None = None,
    format: str | None = None,
) -> RunIngested:
    """A run from a TREC, JSONL or Parquet file (named by its tag, else its file name), or a
    DataFrame with columns qid, doc_id and score (then `name` is needed). A run ingested again
    under its name replaces it."""
    if _is_file(src):
        return runs_in.ingest_run(store, Path(src), name, format)
    frame = frame_of(src)
    example = Call.of("ingest_run", Placeholder("df"), name="bm25")
    run = needs(name, "run name", Param("name", Placeholder("NAME")), example)
    return from_frame(
        frame, ".parquet", lambda p: runs_in.ingest_run(store, p, run, "parquet", ORIGIN)
    )


def ingest_runs(
    store: Store,
    paths: Sequence[Source],
    *,
    name: str | None = None,
    format: str | None = None,
) -> list[RunIngested]:
    """Several run files: all read, named and checked (two that would get the same name are
    refused) before any is written, then each stored in a short transaction of its own."""
    return runs_in.ingest_runs(store, [Path(p) for p in paths], name, format)
