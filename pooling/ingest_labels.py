"""Ingest human labels (qrels) in one transaction, idempotently.

A human label is keyed by (qid, doc_id, level, source, labeller); the labeller defaults to the
qrels file's name. Ingesting the same file twice changes nothing; ingesting a corrected file
replaces exactly the labels whose grade changed (they become the latest, hence effective).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.errors import UsageError
from judgepool.pooling.fastscan import scan_columns
from judgepool.pooling.formats import check_readable, detect_format
from judgepool.pooling.labels import check_level, quote
from judgepool.pooling.readers import LabelColumns, read_jsonl_qrels, read_trec_qrels
from judgepool.pooling.sql import one, temp_table_from
from judgepool.pooling.store import Store, utcnow

if TYPE_CHECKING:
    import duckdb

_TABLE = "_ingest_qrels"
_QRELS_COLUMNS = {"qid": "VARCHAR", "iter": "VARCHAR", "doc_id": "VARCHAR", "grade": "VARCHAR"}
_INTEGER_RE = "^[+-]?[0-9]+$"


@dataclass(frozen=True)
class QrelsIngested:
    """What one `ingest qrels` did (`added` counts new and changed labels written)."""

    path: str
    labeller: str
    level: str
    labels: int
    queries: int
    added: int
    changed: int
    unchanged: int


def _register(con: duckdb.DuckDBPyConnection, cols: LabelColumns) -> None:
    import pyarrow as pa

    table = pa.table(
        {
            "qid": pa.array(cols.qids, pa.string()),
            "doc_id": pa.array(cols.doc_ids, pa.string()),
            "grade": pa.array(cols.grades, pa.int32()),
        }
    )
    temp_table_from(con, _TABLE, table)


def _load_trec(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    keep = {
        "qid": "qid",
        "doc_id": "doc_id",
        # Only plain integers pass; anything else (1.0, 0x1) goes to the exact reader's verdict.
        "grade": f"CASE WHEN regexp_matches(grade, '{_INTEGER_RE}') "
        "THEN CAST(grade AS INTEGER) END",
    }
    fast = scan_columns(con, path, _TABLE, _QRELS_COLUMNS, keep, id_columns=("qid", "doc_id"))
    if fast:
        return
    _register(con, read_trec_qrels(path))


def ingest_qrels(
    store: Store,
    path: str | Path,
    level: str = "chunk",
    labeller: str | None = None,
    fmt: str | None = None,
) -> QrelsIngested:
    """Store the human labels of a qrels file (TREC `qid 0 doc_id grade`, or JSONL)."""
    path = Path(path)
    check_readable(path)
    level = check_level(level)
    fmt = detect_format(path, "qrels", fmt)
    labeller = labeller if labeller is not None else path.name
    if not labeller.strip() or any(ch.isspace() for ch in labeller):
        raise UsageError(
            f"labeller name {labeller!r} is empty or has whitespace", "pass --labeller NAME"
        )
    same_key = (
        f"j.qid = n.qid AND j.doc_id = n.doc_id AND j.level = {quote(level)} "
        f"AND j.source = 'human' AND j.labeller = {quote(labeller)}"
    )
    with store.write(create=True) as con:
        if fmt == "trec":
            _load_trec(con, path)
        else:
            _register(con, read_jsonl_qrels(path))
        labels, queries = one(con, f"SELECT count(*), count(DISTINCT qid) FROM {_TABLE}")
        changed, unchanged = one(
            con,
            f"""SELECT count(*) FILTER (WHERE j.grade <> n.grade),
                       count(*) FILTER (WHERE j.grade = n.grade)
                FROM {_TABLE} n JOIN judgments j ON {same_key}""",
        )
        con.execute(
            f"""DELETE FROM judgments WHERE id IN (
                    SELECT j.id FROM judgments j JOIN {_TABLE} n ON {same_key}
                    WHERE j.grade <> n.grade)"""
        )
        con.execute(
            f"""INSERT INTO judgments (qid, doc_id, level, grade, source, labeller, status,
                                       provenance, created_at)
                SELECT n.qid, n.doc_id, {quote(level)}, n.grade, 'human', {quote(labeller)}, 'ok',
                       $provenance::JSON, $now
                FROM {_TABLE} n
                WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE {same_key})
                ORDER BY n.qid, n.doc_id""",
            {"now": utcnow(), "provenance": json.dumps({"file": str(path.resolve())})},
        )
        con.execute(f"DROP TABLE {_TABLE}")
    return QrelsIngested(
        path=str(path),
        labeller=labeller,
        level=level,
        labels=int(labels),
        queries=int(queries),
        added=int(labels) - int(unchanged),
        changed=int(changed),
        unchanged=int(unchanged),
    )
