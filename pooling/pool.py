"""The pool of chosen runs at a depth, its holes, and judged@k per run.

Scope: pooling works on the **evaluation set**, the queries that have at least one effective label
at the level (the queries trec_eval would evaluate). `all_queries=True` adds every query of the
chosen runs, for a collection that starts with no labels at all.

judged@k of a run = mean over the scope's queries of (labelled docs among the run's top min(k,
returned)) / min(k, returned); a scope query the run does not rank counts 0. A **hole** is a pooled
(qid, doc_id) pair with no effective label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.pooling.errors import UsageError
from judgepool.pooling.labels import check_level, labelled_pairs_sql, labelled_queries_sql
from judgepool.pooling.rankings import doc_texts_sql, rankings_sql, run_keys
from judgepool.pooling.store import Store

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class RunPool:
    """One run's share of the pool."""

    run: str
    queries: int
    missing_queries: int
    judged: float
    holes: int


@dataclass(frozen=True)
class PoolSummary:
    """The pool of the chosen runs at `depth`, and how much of it is labelled."""

    level: str
    depth: int
    judge: str | None
    all_queries: bool
    runs: list[RunPool]
    scope_queries: int
    queries_without_labels: int
    pairs: int
    holes: int
    holes_without_text: int
    holes_without_query_text: int


@dataclass(frozen=True)
class Hole:
    """A pooled pair with no effective label; `runs` lists the runs that put it in their top-k."""

    qid: str
    doc_id: str
    best_rank: int
    runs: tuple[str, ...]
    has_text: bool
    has_query_text: bool


def check_depth(depth: int) -> int:
    """Depths are positive."""
    if depth < 1:
        raise UsageError(f"depth {depth} is not positive", "use e.g. --depth 10")
    return depth


def _pool_ctes(
    store: Store,
    depth: int,
    runs: Sequence[str] | None,
    level: str,
    judge: str | None,
    all_queries: bool,
) -> tuple[dict[str, int], str]:
    """Check the options; return the chosen runs (name -> run_key) and the pool's CTEs
    (`ranked`, `scope`, `candidates`, `lab`, `top`) that every pool query starts from."""
    check_depth(depth)
    level = check_level(level)
    keys = run_keys(store, runs)
    extra = "UNION SELECT DISTINCT qid FROM ranked" if all_queries else ""
    return keys, f"""
        WITH ranked AS ({rankings_sql(level, list(keys.values()), depth)}),
        scope AS ({labelled_queries_sql(level, judge)} {extra}),
        candidates AS (SELECT DISTINCT qid, doc_id FROM ranked),
        lab AS ({labelled_pairs_sql(level, judge, among="candidates")}),
        top AS (SELECT r.run_key, r.qid, r.doc_id, r.rank, l.qid IS NOT NULL AS labelled
                FROM ranked r JOIN scope s ON s.qid = r.qid
                LEFT JOIN lab l ON l.qid = r.qid AND l.doc_id = r.doc_id)
    """


def pool_summary(
    store: Store,
    depth: int = 10,
    runs: Sequence[str] | None = None,
    level: str = "chunk",
    judge: str | None = None,
    all_queries: bool = False,
) -> PoolSummary:
    """Per run: queries, judged@depth and holes; for the pool: pairs and holes."""
    level = check_level(level)
    keys, ctes = _pool_ctes(store, depth, runs, level, judge, all_queries)
    names = {v: k for k, v in keys.items()}
    with store.read() as con:
        per_run = con.execute(
            ctes
            + """,
            per_q AS (SELECT run_key, qid, avg(labelled::INTEGER) AS judged,
                             count(*) FILTER (WHERE NOT labelled) AS holes
                      FROM top GROUP BY run_key, qid),
            runs_x AS (SELECT unnest($keys) AS run_key)
            SELECT x.run_key, count(s.qid), count(s.qid) - count(p.qid),
                   coalesce(avg(coalesce(p.judged, 0)), 0),
                   coalesce(sum(p.holes), 0)
            FROM runs_x x CROSS JOIN scope s
            LEFT JOIN per_q p ON p.run_key = x.run_key AND p.qid = s.qid
            GROUP BY x.run_key""",
            {"keys": list(keys.values())},
        ).fetchall()
        totals = con.execute(
            ctes
            + f""",
            pooled AS (SELECT qid, doc_id, bool_or(labelled) AS labelled FROM top GROUP BY ALL),
            texts AS ({doc_texts_sql(level)})
            SELECT (SELECT count(*) FROM scope),
                   (SELECT count(DISTINCT qid) FROM ranked
                    WHERE qid NOT IN (SELECT qid FROM scope)),
                   count(*), count(*) FILTER (WHERE NOT p.labelled),
                   count(*) FILTER (WHERE NOT p.labelled AND NOT coalesce(t.has_text, false)),
                   count(*) FILTER (WHERE NOT p.labelled AND q.qid IS NULL)
            FROM pooled p LEFT JOIN texts t ON t.doc_id = p.doc_id
            LEFT JOIN queries q ON q.qid = p.qid"""
        ).fetchone()
    by_key = {int(r[0]): r for r in per_run}
    stats = []
    for key in keys.values():
        row = by_key.get(key)
        queries = int(row[1]) if row else 0
        stats.append(
            RunPool(
                run=names[key],
                queries=queries,
                missing_queries=int(row[2]) if row else 0,
                judged=float(row[3]) if row else 0.0,
                holes=int(row[4]) if row else 0,
            )
        )
    scope, unlabelled, pairs, holes, no_text, no_query = totals or (0, 0, 0, 0, 0, 0)
    return PoolSummary(
        level=level,
        depth=depth,
        judge=judge,
        all_queries=all_queries,
        runs=stats,
        scope_queries=int(scope),
        queries_without_labels=int(unlabelled),
        pairs=int(pairs),
        holes=int(holes),
        holes_without_text=int(no_text),
        holes_without_query_text=int(no_query),
    )


def holes_table(
    store: Store,
    depth: int = 10,
    runs: Sequence[str] | None = None,
    level: str = "chunk",
    judge: str | None = None,
    all_queries: bool = False,
) -> pa.Table:
    """The holes as an Arrow table (qid, doc_id, best_rank, runs, has_text, has_query_text),
    ordered by qid, best rank, doc id: the columnar form, for listing many holes quickly."""
    level = check_level(level)
    _, ctes = _pool_ctes(store, depth, runs, level, judge, all_queries)
    with store.read() as con:
        return con.sql(
            ctes
            + f""",
            texts AS ({doc_texts_sql(level)}),
            by_run AS (SELECT t.qid, t.doc_id, t.rank, n.name
                       FROM top t JOIN runs n ON n.run_key = t.run_key WHERE NOT t.labelled)
            SELECT h.qid, h.doc_id, h.best_rank, h.runs,
                   coalesce(t.has_text, false) AS has_text, q.qid IS NOT NULL AS has_query_text
            FROM (SELECT qid, doc_id, min(rank)::INTEGER AS best_rank,
                         list(DISTINCT name ORDER BY name) AS runs
                  FROM by_run GROUP BY qid, doc_id) h
            LEFT JOIN texts t ON t.doc_id = h.doc_id
            LEFT JOIN queries q ON q.qid = h.qid
            ORDER BY h.qid, h.best_rank, h.doc_id"""
        ).to_arrow_table()


def list_holes(
    store: Store,
    depth: int = 10,
    runs: Sequence[str] | None = None,
    level: str = "chunk",
    judge: str | None = None,
    all_queries: bool = False,
) -> list[Hole]:
    """The holes of the pool, ordered by qid, then best rank, then doc id."""
    table = holes_table(store, depth, runs, level, judge, all_queries)
    columns = [table.column(name).to_pylist() for name in Hole.__dataclass_fields__]
    return [
        Hole(qid, doc_id, best_rank, tuple(names), has_text, has_query_text)
        for qid, doc_id, best_rank, names, has_text, has_query_text in zip(*columns, strict=True)
    ]
