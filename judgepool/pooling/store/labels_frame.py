"""Labels as one columnar table (for the library's `db.labels()`): every field but the raw answer,
filtered by level, source, labeller and status, or only the effective label of each pair."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgepool.errors import UsageError
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    SOURCES,
    STATUSES,
    check_level,
    effective_labels_sql,
    quote,
)

if TYPE_CHECKING:
    import pyarrow as pa

_FIELDS = (
    "id, qid, doc_id, level, grade, source, labeller, status, tokens_in, tokens_out, cost, "
    "latency_s, note, created_at, purpose, provenance"
)


def label_table(
    store: Store,
    level: str = "chunk",
    source: str | None = None,
    labeller: str | None = None,
    status: str | None = None,
    effective: bool = False,
    purpose: str | None = None,
) -> pa.Table:
    """The labels at `level` matching the filters, oldest first, with an `effective` column.

    With `effective=True` only the effective label of each pair is kept, and `labeller` names
    the judge whose labels count (human labels always do), as everywhere else.
    """
    level = check_level(level)
    if source is not None and source not in SOURCES:
        raise UsageError(f"unknown label source {source!r}", f"use one of {', '.join(SOURCES)}")
    if status is not None and status not in STATUSES:
        raise UsageError(f"unknown label status {status!r}", f"use one of {', '.join(STATUSES)}")
    clauses = [f"j.level = {quote(level)}"]
    if source is not None:
        clauses.append(f"j.source = {quote(source)}")
    if status is not None:
        clauses.append(f"j.status = {quote(status)}")
    if purpose is not None:
        clauses.append(f"j.purpose = {quote(purpose)}")
    if labeller is not None and not effective:
        clauses.append(f"j.labeller = {quote(labeller)}")
    chosen = effective_labels_sql(level, labeller if effective else None)
    join = "JOIN" if effective else "LEFT JOIN"
    columns = ", ".join(f"j.{c.strip()}" for c in _FIELDS.split(","))
    with store.read() as con:
        return con.sql(
            f"""SELECT {columns}, e.judgment_id IS NOT NULL AS effective
                FROM judgments j {join} ({chosen}) e ON e.judgment_id = j.id
                WHERE {" AND ".join(clauses)} ORDER BY j.id"""
        ).to_arrow_table()
