"""Run rankings at a level, as SQL: the ids as ranked (`chunk`) or collapsed to documents (`doc`).

A chunk run collapses to a document ranking by each document's best-ranked chunk (its first
occurrence in trec_eval order); a chunk's document is its `parent_id` in `docs`, or the chunk
itself when it has none (so a passage collection without parents is the same at both levels).
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.errors import Call, Placeholder, UsageError, remedy
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level


def run_keys(store: Store, names: Sequence[str] | None = None) -> dict[str, int]:
    """Map run name -> run_key for the named runs (all runs, by name, when `names` is empty)."""
    with store.read() as con:
        known = dict(con.execute("SELECT name, run_key FROM runs ORDER BY name").fetchall())
    if not names:
        return {str(k): int(v) for k, v in known.items()}
    unknown = [n for n in names if n not in known]
    if unknown:
        listing = ", ".join(sorted(known)) or "none yet"
        raise UsageError(
            f"unknown run(s): {', '.join(unknown)} (runs in the database: {listing})",
            remedy(
                "ingest it with `{}`, or check `{}`",
                Call.of("ingest_run", Placeholder("FILE"), name=Placeholder("NAME")),
                Call.of("runs"),
            ),
            value=unknown[0] if len(unknown) == 1 else unknown,
        )
    return {n: int(known[n]) for n in dict.fromkeys(names)}


def _keys_list(keys: Sequence[int]) -> str:
    if not keys:
        raise UsageError(
            "no runs to work on",
            remedy("ingest a run first: `{}`", Call.of("ingest_run", Placeholder("FILE"))),
        )
    return ", ".join(str(int(k)) for k in keys)


def rankings_sql(level: str, keys: Sequence[int], depth: int | None = None) -> str:
    """A subquery of (run_key, qid, doc_id, rank) at `level`, cut at `depth` when given.

    For `doc`, `chunk_id` (the best-ranked chunk) and `chunk_rank` come along as extra columns.
    """
    check_level(level)
    keys_sql = _keys_list(keys)
    cut = "" if depth is None else f" AND rank <= {int(depth)}"
    if level == "chunk":
        return f"SELECT run_key, qid, doc_id, rank FROM run_rows WHERE run_key IN ({keys_sql}){cut}"
    return f"""
        SELECT run_key, qid, doc_id, rank, chunk_id, chunk_rank FROM (
            SELECT run_key, qid, doc_id, chunk_id, chunk_rank,
                   row_number() OVER (PARTITION BY run_key, qid ORDER BY chunk_rank) AS rank
            FROM (
                SELECT r.run_key, r.qid, coalesce(d.parent_id, r.doc_id) AS doc_id,
                       arg_min(r.doc_id, r.rank) AS chunk_id, min(r.rank) AS chunk_rank
                FROM run_rows r LEFT JOIN docs d ON d.doc_id = r.doc_id
                WHERE r.run_key IN ({keys_sql})
                GROUP BY r.run_key, r.qid, coalesce(d.parent_id, r.doc_id)
            )
        ) WHERE true{cut}"""


def doc_texts_sql(level: str) -> str:
    """A subquery of (doc_id, has_text) at `level`: a document has text if any of its chunks has."""
    if check_level(level) == "chunk":
        return "SELECT doc_id, text IS NOT NULL AS has_text FROM docs"
    return (
        "SELECT coalesce(parent_id, doc_id) AS doc_id, bool_or(text IS NOT NULL) AS has_text "
        "FROM docs GROUP BY 1"
    )
