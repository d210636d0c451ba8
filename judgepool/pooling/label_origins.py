"""Where the labels behind a comparison come from: the effective labels in the runs' top k, by
source (human or judge) and labeller, for the reports (`compare --format markdown`, `report`).

The pairs counted are the distinct (query, doc) pairs in the top k of the given runs on the
evaluation set (the queries with an effective label at the level): the pairs the measures
read. A pair without an effective label is a hole and is counted as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    check_level,
    effective_labels_sql,
    labelled_queries_sql,
)


@dataclass(frozen=True)
class LabelSource:
    """`pairs` of the runs' top k labelled by `labeller` (a file name or a judge), of `source`
    human or judge; source None is the holes (no effective label)."""

    source: str | None
    labeller: str | None
    pairs: int


def top_k_sources(
    store: Store, runs: Sequence[str], level: str, labeller: str | None, k: int
) -> tuple[LabelSource, ...]:
    """The effective labels of the runs' top-k pairs by source and labeller: human first, then
    judges, most pairs first, then the holes."""
    level = check_level(level)
    keys = list(run_keys(store, list(runs)).values())
    sql = f"""
        WITH top AS (
            SELECT DISTINCT r.qid, r.doc_id FROM ({rankings_sql(level, keys, k)}) r
            WHERE r.qid IN ({labelled_queries_sql(level, labeller)})
        )
        SELECT l.source AS source, l.labeller AS labeller, count(*) AS pairs
        FROM top LEFT JOIN ({effective_labels_sql(level, labeller)}) l
             ON l.qid = top.qid AND l.doc_id = top.doc_id
        GROUP BY l.source, l.labeller
        ORDER BY source IS NULL, source = 'judge', pairs DESC, labeller"""
    with store.read() as con:
        rows = con.execute(sql).fetchall()
    return tuple(
        LabelSource(None if s is None else str(s), None if lab is None else str(lab), int(n))
        for s, lab, n in rows
    )
