"""Reads of one side's labels: what the agreement reports and the demo compare (no SQL on the
judgments table outside pooling/)."""

from __future__ import annotations

from typing import Any

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, latest_labels_sql, quote

Columns = dict[str, Any]  # column name -> numpy array


def latest_label_rows(
    store: Store, level: str, source: str, labeller: str | None = None
) -> Columns:
    """(qid, doc_id, grade) of the latest ok label of each pair from `source` (and `labeller`),
    ordered by qid, doc_id."""
    with store.read() as con:
        return con.execute(
            f"SELECT qid, doc_id, grade::BIGINT AS grade "
            f"FROM ({latest_labels_sql(level, source, labeller)}) ORDER BY qid, doc_id"
        ).fetchnumpy()


def paired_grade_rows(store: Store, level: str, labeller: str | None = None) -> Columns:
    """(human, judge) grades of the pairs with both an ok human and an ok judge label (the
    latest of each; the judge `labeller`'s only when named), ordered by qid, doc_id."""
    human = latest_labels_sql(level, "human")
    labeller = latest_labels_sql(level, "judge", labeller)
    with store.read() as con:
        return con.execute(
            f"""SELECT h.grade::BIGINT AS human, l.grade::BIGINT AS judge
                FROM ({human}) h JOIN ({labeller}) l USING (qid, doc_id)
                ORDER BY qid, doc_id"""
        ).fetchnumpy()


def newest_labeller(store: Store, level: str, source: str) -> str | None:
    """The labeller of the most recently written label of `source` at `level` (any status)."""
    with store.read() as con:
        row = con.execute(
            f"SELECT labeller FROM judgments WHERE source = {quote(source)} "
            f"AND level = {quote(check_level(level))} ORDER BY id DESC LIMIT 1"
        ).fetchone()
    return None if row is None else str(row[0])


def effective_judge_labels(store: Store, level: str, labeller: str | None = None) -> int:
    """How many effective labels at `level` are a judge's (0 at once when no judge label is
    there): whether a judge-corrected interval is called for."""
    from judgepool.pooling.store.judgments import effective_labels_sql

    who = "" if labeller is None else f" AND labeller = {quote(labeller)}"
    with store.read() as con:
        row = con.execute(
            f"SELECT count(*) FROM judgments WHERE level = {quote(check_level(level))} "
            f"AND source = 'judge' AND status = 'ok' AND purpose = 'label'{who}"
        ).fetchone()
        if not row or not row[0]:
            return 0
        row = con.execute(
            f"SELECT count(*) FROM ({effective_labels_sql(level, labeller)}) WHERE source = 'judge'"
        ).fetchone()
    return int(row[0]) if row else 0
