"""What an evaluation reads from the database, as columns: one short read for the measures.

metrics/ turns these columns into per-query values; the SQL stays here, with the schema. Three
reads, each in one read-only connection:

- `evaluation_rows`: the evaluation set (queries with an effective label at the level), every
  query's labels as counts per grade, and each run's top k with the effective grade at each rank
  (NaN: a hole), for judgepool's own measures;
- `effective_label_rows`: the effective labels of the evaluation set, pair by pair, for measures
  computed by ir-measures;
- `ranking_rows`: the rankings of runs at the level, cut at a depth (or whole), in trec_eval order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgepool.pooling.idcheck import IdCheck, check_ids
from judgepool.pooling.rankings import rankings_sql
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, label_view_sql

Columns = dict[str, Any]  # column name -> numpy array (DuckDB's fetchnumpy)


@dataclass(frozen=True)
class EvaluationRows:
    """The columns `metrics.load` builds its arrays from.

    `qids` is the evaluation set in qid order; `hist` has (qi, grade, n): n labelled docs of that
    grade for query qi; `top` has (run_key, qi, pos, grade): the grade at 0-based rank `pos` of the
    run's ranking for query qi, NaN where the doc has no effective label; `ids` what
    pooling.idcheck found comparing the runs' ids with the labels'.
    """

    qids: tuple[str, ...]
    hist: Columns
    top: Columns
    ids: IdCheck


def _covered(keys: dict[str, int], top: Columns) -> dict[str, int]:
    """How many evaluation-set queries each run ranks (from the top k just read)."""
    import numpy as np

    if not top["run_key"].size:
        return dict.fromkeys(keys, 0)
    runs, queries = top["run_key"].astype(np.int64), top["qi"].astype(np.int64)
    # One integer per (run, query): a flat unique, not a unique of pairs (a sort of records).
    pairs = np.unique(runs * (int(queries.max()) + 1) + queries) // (int(queries.max()) + 1)
    found, counts = np.unique(pairs, return_counts=True)
    per_key = {int(key): int(n) for key, n in zip(found, counts, strict=True)}
    return {name: per_key.get(key, 0) for name, key in keys.items()}


def evaluation_rows(
    store: Store,
    level: str,
    labeller: str | None,
    keys: dict[str, int],
    depth: int,
    k: int,
    view: str = "effective",
) -> EvaluationRows:
    """The evaluation set, its label counts, the top `depth` of the runs `keys` (name -> key)
    and the id checks at cutoff `k`, in one read; `view` = which labels (pooling.store.judgments:
    `effective`, or `judge` for the judge's own labels where it gave one).

    The labels are read twice, never copied: once summed into counts per query and grade (one
    aggregate, no doc id kept), once for the pairs of the runs' top `depth` alone (the label
    rule restricted to those pairs, a join on a few thousand rows instead of on every label).
    """
    level = check_level(level)
    tag = uuid.uuid4().hex[:12]
    top_t, hist_t, qix = f"_eval_top_{tag}", f"_eval_hist_{tag}", f"_eval_qix_{tag}"
    with store.read() as con:
        try:
            ranked = rankings_sql(level, list(keys.values()), depth)
            con.execute(
                f"CREATE TEMP TABLE {top_t} AS SELECT run_key, qid, doc_id, rank FROM ({ranked})"
            )
            con.execute(
                f"CREATE TEMP TABLE {hist_t} AS SELECT qid, grade::BIGINT AS grade, "
                f"count(*)::BIGINT AS n FROM ({label_view_sql(view, level, labeller)}) GROUP BY ALL"
            )
            con.execute(
                f"CREATE TEMP TABLE {qix} AS SELECT qid, "
                f"(row_number() OVER (ORDER BY qid) - 1)::BIGINT AS qi "
                f"FROM (SELECT DISTINCT qid FROM {hist_t})"
            )
            qids = tuple(
                str(q) for (q,) in con.execute(f"SELECT qid FROM {qix} ORDER BY qi").fetchall()
            )
            hist = con.execute(
                f"SELECT q.qi, h.grade, h.n FROM {hist_t} h JOIN {qix} q ON q.qid = h.qid"
            ).fetchnumpy()
            top = con.execute(
                f"""SELECT r.run_key, q.qi, r.rank - 1 AS pos,
                           coalesce(l.grade::DOUBLE, 'NaN'::DOUBLE) AS grade,
                           strlen(r.doc_id) <> length(r.doc_id) AS odd
                    FROM {top_t} r
                    JOIN {qix} q ON q.qid = r.qid
                    LEFT JOIN ({label_view_sql(view, level, labeller, among=top_t)}) l
                      ON l.qid = r.qid AND l.doc_id = r.doc_id"""
            ).fetchnumpy()
            odd = bool(top["odd"].any())
            ids = check_ids(con, keys, level, labeller, k, _covered(keys, top), odd)
        finally:
            for table in (top_t, hist_t, qix):
                con.execute(f"DROP TABLE IF EXISTS {table}")
    return EvaluationRows(qids, hist, top, ids)


def effective_label_rows(
    store: Store, level: str, labeller: str | None = None, view: str = "effective"
) -> Columns:
    """(qid, doc_id, grade) of every effective label at `level` (or of the `judge` view),
    ordered by qid, doc_id."""
    level = check_level(level)
    with store.read() as con:
        return con.execute(
            f"SELECT qid, doc_id, grade::BIGINT AS grade "
            f"FROM ({label_view_sql(view, level, labeller)}) ORDER BY qid, doc_id"
        ).fetchnumpy()


def ranking_rows(
    store: Store, level: str, keys: Sequence[int], depth: int | None = None
) -> Columns:
    """(run_key, qid, doc_id, rank) of the runs `keys` at `level`, cut at `depth` (None: all),
    ordered by run, qid and rank (trec_eval's order, fixed at ingest)."""
    level = check_level(level)
    with store.read() as con:
        return con.execute(
            f"SELECT run_key, qid, doc_id, rank::BIGINT AS rank "
            f"FROM ({rankings_sql(level, list(keys), depth)}) ORDER BY run_key, qid, rank"
        ).fetchnumpy()
