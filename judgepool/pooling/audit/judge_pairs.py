"""The judge's view of the labels pair by pair, with which labels are the judge's, and the pairs
where a judge and a person both gave a grade: what the weighted audit design and the corrected
interval's variance floor model (metrics/audit_design.py) read.

One read-only connection each. The judge's view is pooling.store.judgments.judge_view_labels_sql
(the judge's label wherever it gave one, the human label elsewhere): a pair whose view label is
the judge's is a **judge pair**, and every one of them is read by some measure of its query (the
ranked ones by the runs' values, all of them by nDCG's ideal ranking and the recall denominators),
so all of them are what an audit must label (pooling/audit/samples.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgepool.pooling.rankings import rankings_sql
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    check_level,
    judge_view_labels_sql,
    latest_labels_sql,
    quote,
)

Columns = dict[str, Any]  # column name -> numpy array (DuckDB's fetchnumpy)


@dataclass(frozen=True)
class JudgePairs:
    """The columns metrics/audit_design.py builds a JudgeView from.

    `qids`: the evaluation set in the judge's view (qid order); `hist` (qi, grade, n): labelled
    docs per grade; `top` (run_key, qi, pos, grade, pair): each run's top `depth` with the view's
    grade (NaN: none) and the judge pair there (-1: none); `pairs` (qi, grade, human): every
    judge pair, its judge grade and its latest human grade (NaN: none), in pair order."""

    qids: tuple[str, ...]
    hist: Columns
    top: Columns
    pairs: Columns


def judge_pairs(
    store: Store, level: str, labeller: str | None, keys: Sequence[int], depth: int
) -> JudgePairs:
    """The judge's view at `level` (of `labeller`'s judge labels, or any judge's) for the runs
    `keys`, cut at `depth`."""
    level = check_level(level)
    tag = uuid.uuid4().hex[:12]
    lab, qix, pix = f"_jp_lab_{tag}", f"_jp_qix_{tag}", f"_jp_pix_{tag}"
    human = latest_labels_sql(level, "human")
    with store.read() as con:
        try:
            con.execute(
                f"CREATE TEMP TABLE {lab} AS SELECT qid, doc_id, grade, source "
                f"FROM ({judge_view_labels_sql(level, labeller)})"
            )
            con.execute(
                f"CREATE TEMP TABLE {qix} AS SELECT qid, "
                f"(row_number() OVER (ORDER BY qid) - 1)::BIGINT AS qi "
                f"FROM (SELECT DISTINCT qid FROM {lab})"
            )
            con.execute(
                f"""CREATE TEMP TABLE {pix} AS
                    SELECT (row_number() OVER (ORDER BY l.qid, l.doc_id) - 1)::BIGINT AS pair,
                           l.qid, l.doc_id, q.qi, l.grade::BIGINT AS grade,
                           h.grade::DOUBLE AS human
                    FROM {lab} l JOIN {qix} q ON q.qid = l.qid
                    LEFT JOIN ({human}) h ON h.qid = l.qid AND h.doc_id = l.doc_id
                    WHERE l.source = 'judge'"""
            )
            qids = tuple(
                str(q) for (q,) in con.execute(f"SELECT qid FROM {qix} ORDER BY qi").fetchall()
            )
            hist = con.execute(
                f"SELECT q.qi, l.grade::BIGINT AS grade, count(*)::BIGINT AS n "
                f"FROM {lab} l JOIN {qix} q ON q.qid = l.qid GROUP BY ALL"
            ).fetchnumpy()
            top = con.execute(
                f"""SELECT r.run_key, q.qi, r.rank - 1 AS pos,
                           coalesce(l.grade::DOUBLE, 'NaN'::DOUBLE) AS grade,
                           coalesce(p.pair, -1)::BIGINT AS pair
                    FROM ({rankings_sql(level, list(keys), depth)}) r
                    JOIN {qix} q ON q.qid = r.qid
                    LEFT JOIN {lab} l ON l.qid = r.qid AND l.doc_id = r.doc_id
                    LEFT JOIN {pix} p ON p.qid = r.qid AND p.doc_id = r.doc_id"""
            ).fetchnumpy()
            pairs = con.execute(
                f"SELECT qi, grade, coalesce(human, 'NaN'::DOUBLE) AS human "
                f"FROM {pix} ORDER BY pair"
            ).fetchnumpy()
        finally:
            for table in (lab, qix, pix):
                con.execute(f"DROP TABLE IF EXISTS {table}")
    return JudgePairs(qids, hist, top, pairs)


def agreement_counts(store: Store, level: str, labeller: str | None) -> list[tuple[int, int, int]]:
    """(judge grade, human grade, pairs) over the pairs with both an ok judge label (a label or
    a calibration answer; of `labeller` when named) and an ok human label: the evidence of
    P(true grade | judge grade) that audits and calibrations leave."""
    level = check_level(level)
    who = "" if labeller is None else f" AND labeller = {quote(labeller)}"
    judge = f"""
        SELECT qid, doc_id, max_by(grade, id) AS grade FROM judgments
        WHERE level = {quote(level)} AND status = 'ok' AND grade IS NOT NULL
              AND source = 'judge' AND purpose IN ('label', 'calibration'){who}
        GROUP BY qid, doc_id"""
    human = latest_labels_sql(level, "human")
    with store.read() as con:
        rows = con.execute(
            f"""SELECT j.grade::BIGINT, h.grade::BIGINT, count(*)::BIGINT
                FROM ({judge}) j JOIN ({human}) h ON h.qid = j.qid AND h.doc_id = j.doc_id
                GROUP BY ALL"""
        ).fetchall()
    return [(int(a), int(b), int(n)) for a, b, n in rows]
