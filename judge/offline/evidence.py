"""What the offline judge reads from the store: the labelled passages of the queries it judges.

Evidence = the effective label of each (query, doc) pair at the level being judged, counting
human labels and the labels of other judges (an LLM's), but never an offline judge's own
labels: a guess must not become evidence for the next guess. As everywhere, a human label beats
a judge label, and the latest label wins among equals.

The text that stands for a labelled doc is the text a judge would be shown for it:
- chunk level: the doc's text;
- doc level: the document's chunks that the runs retrieved for this query, best rank first, at
  most `max_chunks`, joined as judge/requests.py joins them; a labelled document that no run
  retrieved for the query is represented by its first chunks in id order.
A labelled doc with no text is left out (it cannot be compared with anything).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.judge.requests import CHUNK_GAP, DEFAULT_MAX_CHUNKS
from judgepool.pooling.labels import check_level, quote
from judgepool.pooling.passages import retrieved_chunks
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.sql import registered
from judgepool.pooling.store import Store

#: Labellers with this prefix are offline judges: their labels are never used as evidence.
OFFLINE_LABELLER_PREFIX = "offline:"


@dataclass(frozen=True)
class LabelledText:
    """One labelled pair with the text that represents its doc."""

    qid: str
    doc_id: str
    grade: int
    source: str
    text: str


def _evidence_labels_sql(level: str) -> str:
    """Effective labels among human and non-offline judge labels, for the wanted queries."""
    return f"""
        SELECT qid, doc_id, grade, source FROM (
            SELECT j.qid, j.doc_id, j.grade, j.source,
                   row_number() OVER (PARTITION BY j.qid, j.doc_id
                                      ORDER BY (j.source = 'human') DESC, j.id DESC) AS pick
            FROM judgments j JOIN _offline_qids w ON w.qid = j.qid
            WHERE j.level = {quote(level)} AND j.status = 'ok' AND j.grade IS NOT NULL
              AND (j.source = 'human'
                   OR NOT starts_with(j.labeller, {quote(OFFLINE_LABELLER_PREFIX)}))
        ) WHERE pick = 1"""


def labelled_texts(
    store: Store, level: str, qids: Sequence[str], max_chunks: int = DEFAULT_MAX_CHUNKS
) -> dict[str, list[LabelledText]]:
    """qid -> its labelled docs with text, ordered by doc id (see the module docstring)."""
    import pyarrow as pa

    level = check_level(level)
    wanted = pa.table({"qid": pa.array(sorted(set(qids)), pa.string())})
    texts: dict[tuple[str, str], str] = {}
    with store.read() as con, registered(con, "_offline_qids", wanted):
        if level == "chunk":
            rows = con.execute(
                f"""SELECT e.qid, e.doc_id, e.grade, e.source, t.text
                    FROM ({_evidence_labels_sql(level)}) e
                    JOIN (SELECT doc_id, any_value(text) AS text FROM docs
                          WHERE text IS NOT NULL GROUP BY doc_id) t ON t.doc_id = e.doc_id
                    ORDER BY e.qid, e.doc_id"""
            ).fetchall()
            texts = {(str(q), str(d)): str(t) for q, d, _, _, t in rows}
        else:
            rows = con.execute(
                f"SELECT qid, doc_id, grade, source, NULL FROM ({_evidence_labels_sql(level)}) "
                "ORDER BY qid, doc_id"
            ).fetchall()
    labels = [(str(q), str(d), int(g), str(s)) for q, d, g, s, _ in rows]
    if level == "doc":
        texts = _document_texts(store, [(q, d) for q, d, _, _ in labels], max_chunks)
    found: dict[str, list[LabelledText]] = {}
    for qid, doc_id, grade, source in labels:
        text = texts.get((qid, doc_id))
        if text is not None and text.strip():
            found.setdefault(qid, []).append(LabelledText(qid, doc_id, grade, source, text))
    return found


def _document_texts(
    store: Store, pairs: Sequence[tuple[str, str]], max_chunks: int
) -> dict[tuple[str, str], str]:
    """(qid, document) -> its retrieved chunks for the query (else its first chunks), joined."""
    if not pairs:
        return {}
    keys = list(run_keys(store).values())
    retrieved = retrieved_chunks(store, keys, pairs) if keys else {}
    texts: dict[tuple[str, str], str] = {}
    for pair in pairs:
        chunks = [c.text for c in retrieved.get(pair, []) if c.text and c.text.strip()]
        if chunks:
            texts[pair] = CHUNK_GAP.join(chunks[:max_chunks])
    missing = sorted({doc for qid, doc in pairs if (qid, doc) not in texts})
    if missing:
        own = _own_chunks(store, missing, max_chunks)
        for pair in pairs:
            if pair not in texts and own.get(pair[1]):
                texts[pair] = CHUNK_GAP.join(own[pair[1]])
    return texts


def _own_chunks(store: Store, documents: Sequence[str], max_chunks: int) -> dict[str, list[str]]:
    """document -> the texts of its first `max_chunks` chunks in id order."""
    import pyarrow as pa

    wanted = pa.table({"doc_id": pa.array(list(documents), pa.string())})
    with store.read() as con, registered(con, "_offline_documents", wanted):
        rows = con.execute(
            f"""SELECT document, text FROM (
                    SELECT coalesce(d.parent_id, d.doc_id) AS document, d.text,
                           row_number() OVER (PARTITION BY coalesce(d.parent_id, d.doc_id)
                                              ORDER BY d.doc_id) AS n
                    FROM docs d JOIN _offline_documents w
                      ON w.doc_id = coalesce(d.parent_id, d.doc_id)
                    WHERE d.text IS NOT NULL AND trim(d.text) <> ''
                ) WHERE n <= {int(max_chunks)} ORDER BY document, n"""
        ).fetchall()
    found: dict[str, list[str]] = {}
    for document, text in rows:
        found.setdefault(str(document), []).append(str(text))
    return found
