"""Holes -> judge requests: the query text and exactly the passage text the judge will be shown.

Chunk level: the doc's own text. Doc level: the document as the runs surfaced it for this query:
its best-ranked retrieved chunk, then further retrieved chunks in rank order while they fit the
token budget whole (at most `max_chunks`), joined by a visible gap marker. `shown` records each
chunk id and character range, so a label says exactly what was read.

A passage longer than the token budget is cut to it on a token boundary and flagged truncated; the
cut text is what the cache key is built from, so the same budget gives the same key. A query
longer than its own budget (`query_tokens`, 1024 by default: a question, not a document) is cut
the same way and flagged `query_truncated`. A hole whose passage or query has no text becomes a
`Skipped` (labelled `no_text`, never sent to a judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from judgepool.errors import Param, UsageError, remedy
from judgepool.judge.base import JudgeRequest, ShownSpan
from judgepool.judge.options import (
    DEFAULT_MAX_CHUNKS,
    DEFAULT_PASSAGE_TOKENS,
    DEFAULT_QUERY_TOKENS,
)
from judgepool.judge.tokens import count_tokens, cut_to_tokens
from judgepool.pooling.pool import Hole
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level
from judgepool.pooling.store.texts import doc_texts, query_texts, retrieved_chunks

#: Placed between two chunks of one document shown together (they need not be adjacent).
CHUNK_GAP = "\n[...]\n"


@dataclass(frozen=True)
class Skipped:
    """A hole no judge can grade: its passage or its query has no text."""

    qid: str
    doc_id: str
    level: str
    reason: str


@dataclass(frozen=True)
class Built:
    """The requests to judge and the holes skipped for want of text."""

    requests: list[JudgeRequest]
    skipped: list[Skipped]

    @property
    def truncated(self) -> int:
        return sum(1 for r in self.requests if r.truncated)

    @property
    def queries_truncated(self) -> int:
        return sum(1 for r in self.requests if r.query_truncated)


def _has_text(text: str) -> bool:
    return text.strip() != ""


def _chunk_request(hole: Hole, query: str, text: str | None, budget: int) -> JudgeRequest | Skipped:
    if text is None or not _has_text(text):
        return Skipped(hole.qid, hole.doc_id, "chunk", "no passage text")
    cut = cut_to_tokens(text, budget)
    return JudgeRequest(
        qid=hole.qid,
        doc_id=hole.doc_id,
        level="chunk",
        query=query,
        passage=text[: cut.end],
        shown=(ShownSpan(hole.doc_id, 0, cut.end),),
        truncated=cut.truncated,
    )


def _doc_request(
    hole: Hole, query: str, chunks: Sequence[tuple[str, str]], budget: int, max_chunks: int
) -> JudgeRequest | Skipped:
    if not chunks:
        return Skipped(hole.qid, hole.doc_id, "doc", "no retrieved chunk of it has text")
    first_id, first_text = chunks[0]
    cut = cut_to_tokens(first_text, budget)
    parts = [first_text[: cut.end]]
    shown = [ShownSpan(first_id, 0, cut.end)]
    used = cut.tokens
    gap = count_tokens(CHUNK_GAP)
    for chunk_id, text in chunks[1:max_chunks]:
        need = gap + count_tokens(text)
        if used + need > budget:
            break
        parts.append(text)
        shown.append(ShownSpan(chunk_id, 0, len(text)))
        used += need
    return JudgeRequest(
        qid=hole.qid,
        doc_id=hole.doc_id,
        level="doc",
        query=query,
        passage=CHUNK_GAP.join(parts),
        shown=tuple(shown),
        truncated=cut.truncated,
    )


def build_requests(
    store: Store,
    holes: Sequence[Hole],
    level: str = "chunk",
    runs: Sequence[str] | None = None,
    passage_tokens: int = DEFAULT_PASSAGE_TOKENS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
    query_tokens: int = DEFAULT_QUERY_TOKENS,
) -> Built:
    """One request per hole that has text (in the holes' order), and the skipped rest.

    `runs` matters at the doc level only: the chunks shown are those these runs retrieved.
    """
    level = check_level(level)
    if passage_tokens < 16:
        raise UsageError(
            remedy("{} is too small", Param("passage_tokens", passage_tokens)),
            "use at least 16",
            value=passage_tokens,
        )
    if query_tokens < 16:
        raise UsageError(
            remedy("{} is too small", Param("query_tokens", query_tokens)),
            "use at least 16",
            value=query_tokens,
        )
    if max_chunks < 1:
        raise UsageError(
            remedy("{} must be at least 1", Param("max_chunks", max_chunks)),
            "use 1 or more",
            value=max_chunks,
        )
    queries: dict[str, str] = {}
    cut_queries: set[str] = set()
    for qid, text in query_texts(store, [h.qid for h in holes]).items():
        cut = cut_to_tokens(text, query_tokens)
        queries[qid] = text[: cut.end]
        if cut.truncated:
            cut_queries.add(qid)
    if level == "chunk":
        texts = doc_texts(store, [h.doc_id for h in holes])
    else:
        keys = list(run_keys(store, runs).values())
        found = retrieved_chunks(store, keys, [(h.qid, h.doc_id) for h in holes])
    requests: list[JudgeRequest] = []
    skipped: list[Skipped] = []
    for hole in holes:
        query = queries.get(hole.qid)
        built: JudgeRequest | Skipped
        if query is None or not _has_text(query):
            built = Skipped(hole.qid, hole.doc_id, level, "no query text")
        elif level == "chunk":
            built = _chunk_request(hole, query, texts.get(hole.doc_id), passage_tokens)
        else:
            chunks = [
                (c.chunk_id, c.text)
                for c in found.get((hole.qid, hole.doc_id), [])
                if c.text is not None and c.text.strip()
            ]
            built = _doc_request(hole, query, chunks, passage_tokens, max_chunks)
        if isinstance(built, JudgeRequest):
            if hole.qid in cut_queries:
                built = replace(built, query_truncated=True)
            requests.append(built)
        else:
            skipped.append(built)
    return Built(requests, skipped)
