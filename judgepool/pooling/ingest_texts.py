"""Ingest query texts and passage (doc or chunk) texts, each file in one transaction.

Ingesting an id that is already present replaces its row (the file is the newer truth); the
queries a file gives groups for (a group column, or `groups=` a `qid<TAB>group` file) get
exactly those groups, in the same transaction (pooling/store/query_groups.py). Passage
texts get their content hash here, once, so the judge and the offline judge can recognise the same
text under another id (after a re-chunking) without re-reading it. A file is parsed and checked
before the database's write lock is taken: queries into memory, passages (which can be many
gigabytes) into a temporary Parquet file next to the database, so the lock is held only to swap
the rows in.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import Param, UsageError, remedy
from judgepool.host import naming
from judgepool.pooling.io.formats import check_readable, detect_format
from judgepool.pooling.io.query_files import read_group_file, read_queries
from judgepool.pooling.io.readers import DocRow, iter_docs
from judgepool.pooling.io.sniff import wrong_kind_hints
from judgepool.pooling.io.text import content_hash
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.query_groups import check_known, replace_groups
from judgepool.pooling.store.sql import one, registered

if TYPE_CHECKING:
    import pyarrow as pa

_BATCH = 50_000


@dataclass(frozen=True)
class TextsIngested:
    """What one `ingest queries` / `ingest docs` did."""

    path: str
    format: str
    rows: int
    replaced: int
    without_text: int = 0
    with_parent: int = 0
    memberships: int = 0  # query-group memberships written (queries only)
    groups: int = 0  # distinct groups among them
    groups_from: str | None = None  # the file the groups came from, when any did


def ingest_queries(
    store: Store,
    path: str | Path,
    fmt: str | None = None,
    groups: str | Path | None = None,
    origin: str | None = None,
) -> TextsIngested:
    """Store the queries of a topics file (TSV `qid<TAB>text`, TSV with a header, or JSONL),
    with their groups from the file's group column or from `groups` (a `qid<TAB>group` file);
    `origin` is what the database records as their source (default: the resolved path).

    Both files are read and checked before anything is written; then the texts and the groups go
    in one transaction: all of it or nothing."""
    import pyarrow as pa

    path = Path(path)
    check_readable(path)
    with wrong_kind_hints(path, "queries"):
        fmt = detect_format(path, "queries", fmt)
        found = read_queries(path, fmt)
    rows, memberships, groups_from = found.rows, found.groups, path
    if groups is not None:
        groups_from = Path(groups)
        if memberships is not None:
            raise UsageError(
                f"{path} has a group column and "
                + remedy("{}", Param("groups", str(groups_from)))
                + " gives groups too",
                remedy("give the groups once: in the queries file or in {}", Param("groups", None)),
                value=str(groups_from),
            )
        check_readable(groups_from)
        memberships = read_group_file(groups_from)
    table = pa.table({"qid": [q for q, _ in rows], "text": [t for _, t in rows]})
    with store.write(create=True) as con, registered(con, "_queries_arrow", table):
        (replaced,) = one(
            con, "SELECT count(*) FROM queries WHERE qid IN (SELECT qid FROM _queries_arrow)"
        )
        con.execute("DELETE FROM queries WHERE qid IN (SELECT qid FROM _queries_arrow)")
        con.execute(
            "INSERT INTO queries SELECT qid, text, $src, $now FROM _queries_arrow",
            {"src": origin or str(path.resolve()), "now": utcnow()},
        )
        if memberships is None:
            return TextsIngested(origin or str(path), fmt, len(rows), int(replaced))
        if groups is not None:  # a group file names the queries whose groups it replaces
            check_known(con, groups_from, memberships)
            qids = [m.qid for m in memberships]
        else:  # a group column: every query of the file gets the groups it lists, maybe none
            qids = [q for q, _ in rows]
        where = str(groups_from) if groups is not None else (origin or str(path))
        recorded = str((groups_from if groups is not None else path).resolve())
        if groups is None and origin is not None:
            recorded = origin
        done = replace_groups(con, qids, memberships, recorded)
    return TextsIngested(
        origin or str(path),
        fmt,
        len(rows),
        int(replaced),
        memberships=done.memberships,
        groups=done.groups,
        groups_from=where,
    )


def _doc_batch(batch: list[DocRow]) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.record_batch(
        {
            "doc_id": pa.array([d.doc_id for d in batch], pa.string()),
            "text": pa.array([d.text for d in batch], pa.string()),
            "title": pa.array([d.title for d in batch], pa.string()),
            "parent_id": pa.array([d.parent_id for d in batch], pa.string()),
            "content_hash": pa.array(
                [content_hash(d.text) if d.text is not None else None for d in batch], pa.string()
            ),
        }
    )


def _stage_docs(path: Path, fmt: str, staged: Path) -> tuple[int, int, int]:
    """Parse and hash every passage into the Parquet file `staged`: (rows, without text,
    with a parent_id). Raises on the first bad line, before anything reaches the database."""
    import pyarrow.parquet as pq

    total = without = parents = 0
    writer: pq.ParquetWriter | None = None

    def stage(batch: list[DocRow]) -> None:
        nonlocal writer
        record = _doc_batch(batch)
        with naming(staged):  # pyarrow's errors name no file: a full disk must say which
            writer = writer or pq.ParquetWriter(staged, record.schema)
            writer.write_batch(record)

    try:
        batch: list[DocRow] = []
        for row in iter_docs(path, fmt):
            batch.append(row)
            without += row.text is None
            parents += row.parent_id is not None
            if len(batch) >= _BATCH:
                stage(batch)
                total, batch = total + len(batch), []
        if batch:
            stage(batch)
            total += len(batch)
    finally:
        if writer is not None:
            with naming(staged):
                writer.close()
    return total, without, parents


def ingest_docs(
    store: Store, path: str | Path, fmt: str | None = None, origin: str | None = None
) -> TextsIngested:
    """Store passages/chunks from JSONL (`doc_id|docid|id|_id`, `text|contents|body`) or TSV;
    `origin` is what the database records as their source (default: the resolved path)."""
    path = Path(path)
    check_readable(path)
    # Staged next to the database (where the space will be needed anyway), else in the temp dir.
    parent = store.path.parent
    folder = parent if parent.is_dir() and os.access(parent, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix=".judgepool-ingest-", dir=folder) as scratch_dir:
        staged = Path(scratch_dir) / "docs.parquet"
        with wrong_kind_hints(path, "docs"):
            fmt = detect_format(path, "docs", fmt)
            total, without, parents = _stage_docs(path, fmt, staged)
        new_ids = "SELECT doc_id FROM read_parquet($staged)"
        params = {"staged": str(staged)}
        with store.write(create=True) as con:
            (replaced,) = one(con, f"SELECT count(*) FROM docs WHERE doc_id IN ({new_ids})", params)
            con.execute(f"DELETE FROM docs WHERE doc_id IN ({new_ids})", params)
            con.execute(
                "INSERT INTO docs SELECT doc_id, text, title, parent_id, content_hash, $src, $now "
                "FROM read_parquet($staged)",
                {**params, "src": origin or str(path.resolve()), "now": utcnow()},
            )
    return TextsIngested(origin or str(path), fmt, total, int(replaced), without, parents)
