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

from judgepool.judge.options import DEFAULT_MAX_CHUNKS
from judgepool.judge.requests import CHUNK_GAP
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level
from judgepool.pooling.store.texts import first_chunks, labelled_pairs_with_text, retrieved_chunks

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


def labelled_texts(
    store: Store, level: str, qids: Sequence[str], max_chunks: int = DEFAULT_MAX_CHUNKS
) -> dict[str, list[LabelledText]]:
    """qid -> its labelled docs with text, ordered by doc id (see the module docstring)."""
    level = check_level(level)
    labels = labelled_pairs_with_text(store, level, qids, skip_prefix=OFFLINE_LABELLER_PREFIX)
    texts: dict[tuple[str, str], str] = {
        (p.qid, p.doc_id): p.text for p in labels if p.text is not None
    }
    if level == "doc":
        texts = _document_texts(store, [(p.qid, p.doc_id) for p in labels], max_chunks)
    found: dict[str, list[LabelledText]] = {}
    for pair in labels:
        text = texts.get((pair.qid, pair.doc_id))
        if text is not None and text.strip():
            found.setdefault(pair.qid, []).append(
                LabelledText(pair.qid, pair.doc_id, pair.grade, pair.source, text)
            )
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
        own = first_chunks(store, missing, max_chunks)
        for pair in pairs:
            if pair not in texts and own.get(pair[1]):
                texts[pair] = CHUNK_GAP.join(own[pair[1]])
    return texts
