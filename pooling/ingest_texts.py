"""Ingest query texts and passage (doc or chunk) texts, each file in one transaction.

Ingesting an id that is already present replaces its row (the file is the newer truth). Passage
texts get their content hash here, once, so the judge and the offline judge can recognise the same
text under another id (after a re-chunking) without re-reading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.formats import check_readable, detect_format
from judgepool.pooling.readers import DocRow, iter_docs, read_queries
from judgepool.pooling.sql import one, registered
from judgepool.pooling.store import Store, utcnow
from judgepool.pooling.text import content_hash

if TYPE_CHECKING:
    import duckdb

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


def ingest_queries(store: Store, path: str | Path, fmt: str | None = None) -> TextsIngested:
    """Store the queries of a topics file (TSV `qid<TAB>text` or JSONL)."""
    import pyarrow as pa

    path = Path(path)
    check_readable(path)
    fmt = detect_format(path, "queries", fmt)
    rows = read_queries(path, fmt)
    table = pa.table({"qid": [q for q, _ in rows], "text": [t for _, t in rows]})
    with store.write(create=True) as con, registered(con, "_queries_arrow", table):
        (replaced,) = one(
            con, "SELECT count(*) FROM queries WHERE qid IN (SELECT qid FROM _queries_arrow)"
        )
        con.execute("DELETE FROM queries WHERE qid IN (SELECT qid FROM _queries_arrow)")
        con.execute(
            "INSERT INTO queries SELECT qid, text, $src, $now FROM _queries_arrow",
            {"src": str(path.resolve()), "now": utcnow()},
        )
    return TextsIngested(str(path), fmt, len(rows), int(replaced))


def _insert_docs(
    con: duckdb.DuckDBPyConnection, batch: list[DocRow], source: str
) -> tuple[int, int, int]:
    import pyarrow as pa

    table = pa.table(
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
    with registered(con, "_docs_arrow", table):
        (replaced,) = one(
            con, "SELECT count(*) FROM docs WHERE doc_id IN (SELECT doc_id FROM _docs_arrow)"
        )
        con.execute("DELETE FROM docs WHERE doc_id IN (SELECT doc_id FROM _docs_arrow)")
        con.execute(
            "INSERT INTO docs SELECT doc_id, text, title, parent_id, content_hash, $src, $now "
            "FROM _docs_arrow",
            {"src": source, "now": utcnow()},
        )
    without = sum(1 for d in batch if d.text is None)
    parents = sum(1 for d in batch if d.parent_id is not None)
    return int(replaced), without, parents


def ingest_docs(store: Store, path: str | Path, fmt: str | None = None) -> TextsIngested:
    """Store passages/chunks from JSONL (`doc_id|docid|id|_id`, `text|contents|body`) or TSV."""
    path = Path(path)
    check_readable(path)
    fmt = detect_format(path, "docs", fmt)
    source = str(path.resolve())
    total = replaced = without = parents = 0
    with store.write(create=True) as con:
        batch: list[DocRow] = []
        for row in iter_docs(path, fmt):
            batch.append(row)
            if len(batch) >= _BATCH:
                r, w, p = _insert_docs(con, batch, source)
                total, replaced, without, parents = (
                    total + len(batch),
                    replaced + r,
                    without + w,
                    parents + p,
                )
                batch = []
        if batch:
            r, w, p = _insert_docs(con, batch, source)
            total, replaced, without, parents = (
                total + len(batch),
                replaced + r,
                without + w,
                parents + p,
            )
    return TextsIngested(str(path), fmt, total, replaced, without, parents)
