"""The texts a judge is shown: query texts, passage texts, and a document's retrieved chunks.

At the doc level a judge sees a document through the chunks the runs retrieved for that query:
`retrieved_chunks` lists them in rank order (each chunk's best rank over the chosen runs), with
their texts, in one query for any number of (query, document) pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, effective_labels_sql
from judgepool.pooling.store.sql import registered


@dataclass(frozen=True)
class RetrievedChunk:
    """A chunk of a document that some chosen run retrieved for a query, at its best rank."""

    chunk_id: str
    best_rank: int
    text: str | None


def query_texts(store: Store, qids: Sequence[str]) -> dict[str, str]:
    """qid -> text for the given queries that have a text."""
    import pyarrow as pa

    wanted = pa.table({"qid": pa.array(sorted(set(qids)), pa.string())})
    with store.read() as con, registered(con, "_wanted_qids", wanted):
        rows = con.execute(
            "SELECT q.qid, q.text FROM queries q JOIN _wanted_qids w ON w.qid = q.qid "
            "WHERE q.text IS NOT NULL"
        ).fetchall()
    return {str(qid): str(text) for qid, text in rows}


def doc_texts(store: Store, doc_ids: Sequence[str]) -> dict[str, str | None]:
    """doc_id -> text (None when the doc has no text) for the given ids that are in `docs`."""
    import pyarrow as pa

    wanted = pa.table({"doc_id": pa.array(sorted(set(doc_ids)), pa.string())})
    with store.read() as con, registered(con, "_wanted_docs", wanted):
        rows = con.execute(
            "SELECT d.doc_id, d.text FROM docs d JOIN _wanted_docs w ON w.doc_id = d.doc_id"
        ).fetchall()
    return {str(doc_id): (None if text is None else str(text)) for doc_id, text in rows}


def retrieved_chunks(
    store: Store, keys: Sequence[int], pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], list[RetrievedChunk]]:
    """For each (qid, document id): the chunks of that document the runs `keys` retrieved for
    that query, best rank first (ties by chunk id), at any depth. A chunk's document is its
    parent_id, or the chunk itself when it has none (as in pooling.rankings)."""
    import pyarrow as pa

    if not pairs or not keys:
        return {}
    keys_sql = ", ".join(str(int(k)) for k in keys)
    wanted = pa.table(
        {
            "qid": pa.array([q for q, _ in pairs], pa.string()),
            "doc_id": pa.array([d for _, d in pairs], pa.string()),
        }
    )
    with store.read() as con, registered(con, "_wanted_pairs", wanted):
        rows = con.execute(
            f"""
            SELECT r.qid, coalesce(d.parent_id, r.doc_id) AS document, r.doc_id,
                   min(r.rank) AS best_rank, any_value(d.text) AS text
            FROM run_rows r LEFT JOIN docs d ON d.doc_id = r.doc_id
            JOIN (SELECT DISTINCT qid, doc_id FROM _wanted_pairs) w
              ON w.qid = r.qid AND w.doc_id = coalesce(d.parent_id, r.doc_id)
            WHERE r.run_key IN ({keys_sql})
            GROUP BY r.qid, coalesce(d.parent_id, r.doc_id), r.doc_id
            ORDER BY r.qid, document, best_rank, r.doc_id"""
        ).fetchall()
    found: dict[tuple[str, str], list[RetrievedChunk]] = {}
    for qid, document, chunk_id, best_rank, text in rows:
        found.setdefault((str(qid), str(document)), []).append(
            RetrievedChunk(str(chunk_id), int(best_rank), None if text is None else str(text))
        )
    return found


@dataclass(frozen=True)
class LabelledPair:
    """An effective label of a query's doc, with the doc's text at the chunk level (None at the
    doc level, where the caller builds the text from the document's chunks)."""

    qid: str
    doc_id: str
    grade: int
    source: str
    text: str | None


def labelled_pairs_with_text(
    store: Store, level: str, qids: Sequence[str], skip_prefix: str | None = None
) -> list[LabelledPair]:
    """The effective labels of the given queries at `level` (judges whose labeller starts with
    `skip_prefix` left out), ordered by qid, doc_id; at the chunk level only docs with text."""
    import pyarrow as pa

    level = check_level(level)
    wanted = pa.table({"qid": pa.array(sorted(set(qids)), pa.string())})
    labels = f"""SELECT e.qid, e.doc_id, e.grade, e.source
                 FROM ({effective_labels_sql(level, skip_prefix=skip_prefix)}) e
                 JOIN _labelled_qids w ON w.qid = e.qid"""
    with store.read() as con, registered(con, "_labelled_qids", wanted):
        if level == "chunk":
            rows = con.execute(
                f"""SELECT l.qid, l.doc_id, l.grade, l.source, t.text FROM ({labels}) l
                    JOIN (SELECT doc_id, any_value(text) AS text FROM docs
                          WHERE text IS NOT NULL GROUP BY doc_id) t ON t.doc_id = l.doc_id
                    ORDER BY l.qid, l.doc_id"""
            ).fetchall()
        else:
            rows = con.execute(
                f"SELECT qid, doc_id, grade, source, NULL FROM ({labels}) ORDER BY qid, doc_id"
            ).fetchall()
    return [
        LabelledPair(str(q), str(d), int(g), str(s), None if t is None else str(t))
        for q, d, g, s, t in rows
    ]


def first_chunks(store: Store, documents: Sequence[str], limit: int) -> dict[str, list[str]]:
    """document -> the texts of its first `limit` chunks with text, in chunk-id order (a chunk's
    document is its parent_id, or itself)."""
    import pyarrow as pa

    wanted = pa.table({"doc_id": pa.array(list(documents), pa.string())})
    with store.read() as con, registered(con, "_wanted_documents", wanted):
        rows = con.execute(
            f"""SELECT document, text FROM (
                    SELECT coalesce(d.parent_id, d.doc_id) AS document, d.text,
                           row_number() OVER (PARTITION BY coalesce(d.parent_id, d.doc_id)
                                              ORDER BY d.doc_id) AS n
                    FROM docs d JOIN _wanted_documents w
                      ON w.doc_id = coalesce(d.parent_id, d.doc_id)
                    WHERE d.text IS NOT NULL AND trim(d.text) <> ''
                ) WHERE n <= {int(limit)} ORDER BY document, n"""
        ).fetchall()
    found: dict[str, list[str]] = {}
    for document, text in rows:
        found.setdefault(str(document), []).append(str(text))
    return found
