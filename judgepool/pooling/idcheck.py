"""Ids that do not meet: a run's query ids against the labels', and ids equal only once normalised.

A run whose query ids are written differently from the qrels' ('q1101' against '1101') matches
no label: every evaluation-set query scores 0 and nothing says why. Two ids that differ only in
Unicode normalisation (a precomposed 'é' against 'e' + combining accent) or in zero-width
characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) look the same on screen and still never
match. `check_ids` finds both, in one read, for `metrics` to warn about:
- per run, its queries that are not in the evaluation set (how many, and a few of them);
- run query ids equal to an evaluation-set id once both are normalised (NFC, zero-width removed);
- doc ids in a run's top k that are holes but equal a labelled doc of the same query once
  normalised.
Only ids with a non-ASCII character can differ this way, so the normalised comparison is made on
those alone, and only a run that ranks queries outside the evaluation set has its query ids read:
on an ordinary collection the check costs two tiny reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgepool.pooling.rankings import rankings_sql
from judgepool.pooling.store.judgments import effective_labels_sql, labelled_queries_sql

if TYPE_CHECKING:
    import duckdb

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
SAMPLE = 3


def canonical_sql(column: str) -> str:
    """SQL for an id as compared here: NFC, zero-width characters removed."""
    return f"regexp_replace(nfc_normalize({column}), '[{ZERO_WIDTH}]', '', 'g')"


def _non_ascii(column: str) -> str:
    return f"strlen({column}) <> length({column})"


@dataclass(frozen=True)
class RunIdMatch:
    """An id of a run equal to a label's id only once both are normalised."""

    run: str
    kind: str  # "query" or "doc"
    qid: str  # the query (for a doc, the query it was ranked for)
    in_run: str
    in_labels: str
    by_nfc: bool  # equal after NFC alone (else zero-width characters made the difference)


@dataclass(frozen=True)
class IdCheck:
    """What `check_ids` found."""

    run_only: dict[str, tuple[int, tuple[str, ...]]]  # run -> (its queries not in the set, a few)
    near: tuple[RunIdMatch, ...]
    limit: int = 20  # near matches listed per kind at most (more may exist)


def check_ids(
    con: duckdb.DuckDBPyConnection,
    keys: Mapping[str, int],
    level: str,
    labeller: str | None,
    k: int,
    covered: Mapping[str, int],
    odd_top: bool = True,
    limit: int = 20,
) -> IdCheck:
    """Compare the runs' ids with the labels' (see the module docstring).

    `covered` is how many evaluation-set queries each run ranks (the caller has just read the
    top k): only a run with more queries than that has ids to compare, so an ordinary
    evaluation reads nothing more. `odd_top` says whether a doc id in the runs' top k has a
    non-ASCII character; `limit` caps the near matches listed per kind."""
    names = {v: n for n, v in keys.items()}
    ranked = dict(
        con.execute(
            f"SELECT run_key, n_queries FROM runs WHERE run_key IN ({_keys(keys.values())})"
        ).fetchall()
    )
    astray = [v for n, v in keys.items() if int(ranked.get(v, 0)) > covered.get(n, 0)]
    run_only: dict[str, tuple[int, tuple[str, ...]]] = {}
    near_queries: list[tuple[Any, ...]] = []
    if astray:
        queries = f"""
            WITH ev AS ({labelled_queries_sql(level, labeller)}),
            rq AS (SELECT run_key, qid FROM run_rows
                   WHERE rank = 1 AND run_key IN ({_keys(astray)})),  -- one row per query
            ro AS (SELECT run_key, qid FROM rq WHERE qid NOT IN (SELECT qid FROM ev))"""
        run_only = {
            names[int(key)]: (int(n), tuple(str(q) for q in sample))
            for key, n, sample in con.execute(
                queries + f" SELECT run_key, count(*), list(qid ORDER BY qid)[1:{SAMPLE}] "
                "FROM ro GROUP BY run_key"
            ).fetchall()
        }
        near_queries = con.execute(
            queries
            + f""",
            rx AS (SELECT * FROM ro WHERE {_non_ascii("qid")}),
            ex AS (SELECT * FROM ev WHERE {_non_ascii("qid")} OR (SELECT count(*) FROM rx) > 0)
            SELECT ro.run_key, ro.qid, ro.qid, e.qid, nfc_normalize(ro.qid) = nfc_normalize(e.qid)
            FROM ro JOIN ex e ON {canonical_sql("ro.qid")} = {canonical_sql("e.qid")}
            WHERE {_non_ascii("ro.qid")} OR {_non_ascii("e.qid")}
            ORDER BY 1, 2 LIMIT {int(limit)}"""
        ).fetchall()
    lab = f"SELECT qid, doc_id FROM ({effective_labels_sql(level, labeller)})"
    found = con.execute(f"SELECT count(*) FROM ({lab}) WHERE {_non_ascii('doc_id')}").fetchone()
    near_docs: list[tuple[Any, ...]] = []
    if odd_top or (found is not None and found[0]):
        near_docs = con.execute(
            f"""
            WITH lab AS ({lab}),
            holes AS (SELECT DISTINCT t.run_key, t.qid, t.doc_id
                      FROM ({rankings_sql(level, list(keys.values()), k)}) t
                      ANTI JOIN lab l ON l.qid = t.qid AND l.doc_id = t.doc_id),
            ha AS (SELECT * FROM holes WHERE {_non_ascii("doc_id")}),
            la AS (SELECT * FROM lab WHERE {_non_ascii("doc_id")}),
            hx AS (SELECT * FROM holes WHERE qid IN (SELECT qid FROM la) UNION SELECT * FROM ha),
            lx AS (SELECT * FROM lab WHERE qid IN (SELECT qid FROM ha) UNION SELECT * FROM la)
            SELECT hx.run_key, hx.qid, hx.doc_id, lx.doc_id,
                   nfc_normalize(hx.doc_id) = nfc_normalize(lx.doc_id)
            FROM hx JOIN lx ON lx.qid = hx.qid
                 AND {canonical_sql("lx.doc_id")} = {canonical_sql("hx.doc_id")}
            WHERE lx.doc_id <> hx.doc_id
            ORDER BY 1, 2, 3 LIMIT {int(limit)}"""
        ).fetchall()
    near = [
        RunIdMatch(names[int(key)], kind, str(q), str(a), str(b), bool(nfc))
        for kind, rows in (("query", near_queries), ("doc", near_docs))
        for key, q, a, b, nfc in rows
    ]
    return IdCheck(run_only, tuple(near), limit)


def _keys(keys: Iterable[int]) -> str:
    return ", ".join(str(int(k)) for k in keys)
