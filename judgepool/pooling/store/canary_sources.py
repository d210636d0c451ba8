"""Where canaries come from: reserved ids, and passages of the collection unrelated to a query.

A canary (judge/canaries.py) is a synthetic pair of true grade 0 planted in a judge run. Its
doc id starts with `canary ` (a space): ingest refuses whitespace in ids, so no run, qrels or
passage can ever carry such an id, no canary can enter a pool, and none collides with a real
doc. Canary texts are not stored in `docs` (the user's collection, which inventories, pools and
exports read): each canary label keeps its text in its provenance.

Its passage is built on one that is unrelated to the query, chosen here, in this order:
1. a passage a person labelled 0 for that query (the latest human label of the pair, at the
   level of the run; at the doc level, the first chunk with text of the document);
2. else a passage some run put in its top 10 for another query that no run retrieved for this
   query at any depth and that has no label of any kind for it (checked on the chunk and its
   document); judge/canaries.py also demands that it shares no content word with the query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    CANARY_PREFIX,
    check_level,
    is_canary_id,
    latest_labels_sql,
)
from judgepool.pooling.store.sql import registered

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CANARY_PREFIX",
    "SourcePassage",
    "canary_doc_id",
    "far_candidates",
    "is_canary_id",
    "touched",
    "zero_labelled",
]


def canary_doc_id(kind: str, digest: str) -> str:
    """`canary KIND-DIGEST`: the id of a canary (the digest tells its text apart)."""
    return f"{CANARY_PREFIX}{kind}-{digest}"


@dataclass(frozen=True)
class SourcePassage:
    """A passage of the collection unrelated to query `qid`, and why it is."""

    qid: str
    doc_id: str
    text: str
    reason: str


def _qids_table(qids: Sequence[str]) -> pa.Table:
    import pyarrow as pa

    return pa.table({"qid": pa.array(sorted(set(qids)), pa.string())})


def zero_labelled(store: Store, level: str, qids: Sequence[str]) -> dict[str, list[SourcePassage]]:
    """qid -> passages a person labelled 0 for it (rule 1), ordered by doc id."""
    level = check_level(level)
    human = latest_labels_sql(level, "human")
    if level == "chunk":
        sql = f"""
            SELECT h.qid, h.doc_id, t.text, h.doc_id FROM ({human}) h
            JOIN _canary_qids w ON w.qid = h.qid
            JOIN (SELECT doc_id, any_value(text) AS text FROM docs
                  WHERE text IS NOT NULL AND trim(text) <> '' GROUP BY doc_id) t
              ON t.doc_id = h.doc_id
            WHERE h.grade = 0 ORDER BY h.qid, h.doc_id"""
    else:
        sql = f"""
            SELECT qid, chunk, text, document FROM (
                SELECT h.qid, d.doc_id AS chunk, d.text, h.doc_id AS document,
                       row_number() OVER (PARTITION BY h.qid, h.doc_id ORDER BY d.doc_id) AS n
                FROM ({human}) h JOIN _canary_qids w ON w.qid = h.qid
                JOIN docs d ON coalesce(d.parent_id, d.doc_id) = h.doc_id
                WHERE h.grade = 0 AND d.text IS NOT NULL AND trim(d.text) <> '')
            WHERE n = 1 ORDER BY qid, document"""
    with store.read() as con, registered(con, "_canary_qids", _qids_table(qids)):
        rows = con.execute(sql).fetchall()
    found: dict[str, list[SourcePassage]] = {}
    for qid, doc_id, text, labelled in rows:
        where = "" if doc_id == labelled else f" (a chunk of document {labelled})"
        found.setdefault(str(qid), []).append(
            SourcePassage(
                str(qid), str(doc_id), str(text), f"labelled 0 for this query by a person{where}"
            )
        )
    return found


def far_candidates(store: Store, limit: int, seed: int) -> list[tuple[str, str, str]]:
    """(doc_id, text, qid it was retrieved for) of up to `limit` passages that some run put in
    its top 10, drawn in a seeded order (md5 of the id and the seed: the same on every run)."""
    with store.read() as con:
        rows = con.execute(
            """
            WITH top AS (SELECT doc_id, min(qid) AS from_qid FROM run_rows WHERE rank <= 10
                         GROUP BY doc_id),
                 texts AS (SELECT doc_id, any_value(text) AS text FROM docs
                           WHERE text IS NOT NULL AND trim(text) <> '' GROUP BY doc_id)
            SELECT t.doc_id, x.text, t.from_qid FROM top t JOIN texts x USING (doc_id)
            ORDER BY md5(t.doc_id || ':' || ?), t.doc_id LIMIT ?""",
            [str(seed), int(limit)],
        ).fetchall()
    return [(str(d), str(t), str(q)) for d, t, q in rows]


def touched(store: Store, qids: Sequence[str], doc_ids: Sequence[str]) -> set[tuple[str, str]]:
    """The (qid, doc_id) pairs among these where some run retrieved the doc for the query (any
    depth) or any label exists for it or its document (any level, purpose or status)."""
    import pyarrow as pa

    if not qids or not doc_ids:
        return set()
    docs = pa.table({"doc_id": pa.array(sorted(set(doc_ids)), pa.string())})
    with (
        store.read() as con,
        registered(con, "_canary_qids", _qids_table(qids)),
        registered(con, "_canary_docs", docs),
    ):
        rows = con.execute(
            """
            WITH cand AS (SELECT c.doc_id, coalesce(d.parent_id, c.doc_id) AS document
                          FROM _canary_docs c LEFT JOIN (SELECT doc_id, any_value(parent_id)
                          AS parent_id FROM docs GROUP BY doc_id) d USING (doc_id))
            SELECT DISTINCT r.qid, r.doc_id FROM run_rows r
              JOIN _canary_qids q ON q.qid = r.qid JOIN _canary_docs c ON c.doc_id = r.doc_id
            UNION
            SELECT DISTINCT j.qid, c.doc_id FROM judgments j
              JOIN _canary_qids q ON q.qid = j.qid
              JOIN cand c ON j.doc_id = c.doc_id OR j.doc_id = c.document"""
        ).fetchall()
    return {(str(q), str(d)) for q, d in rows}
