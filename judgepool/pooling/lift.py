"""Lift chunk labels to their documents, explicitly and with provenance.

For teams that judged chunks before evaluating at the document level: the document's grade for a
query is the highest effective grade among its labelled chunks (`rule="max"`: a document is as
relevant as its best passage). The lifted label keeps the source of the chunk label that gave the
maximum (human wins ties), is written by labeller `lift:max`, and records in its provenance every
chunk label it was computed from. Lifting again replaces the earlier lifted labels.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgepool.errors import Param, UsageError, remedy
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import effective_labels_sql, quote
from judgepool.pooling.store.sql import one

RULES = ("max",)


@dataclass(frozen=True)
class Lifted:
    """What one lift wrote."""

    rule: str
    labels: int
    queries: int
    from_chunks: int
    human: int
    judged: int


def lift_labels(store: Store, rule: str = "max", labeller: str | None = None) -> Lifted:
    """Write doc-level labels computed from the effective chunk-level labels."""
    if rule not in RULES:
        raise UsageError(
            f"unknown lift rule {rule!r}",
            remedy("use " + " or ".join("{}" for _ in RULES), *(Param("rule", r) for r in RULES)),
            value=rule,
        )
    lifted_by = f"lift:{rule}"
    with store.write() as con:
        con.execute(
            f"""CREATE TEMP TABLE _lift AS
                WITH chunk AS ({effective_labels_sql("chunk", labeller)})
                SELECT c.qid, coalesce(d.parent_id, c.doc_id) AS doc_id,
                       max(c.grade) AS grade,
                       arg_max(c.source, c.grade * 2 + (c.source = 'human')::INTEGER) AS source,
                       to_json(list({{'chunk': c.doc_id, 'grade': c.grade, 'source': c.source,
                                      'labeller': c.labeller}} ORDER BY c.doc_id)) AS chunks,
                       count(*) AS n
                FROM chunk c LEFT JOIN docs d ON d.doc_id = c.doc_id
                GROUP BY c.qid, coalesce(d.parent_id, c.doc_id)"""
        )
        con.execute(
            f"DELETE FROM judgments WHERE level = 'doc' AND labeller = {quote(lifted_by)} "
            "AND (qid, doc_id) IN (SELECT (qid, doc_id) FROM _lift)"
        )
        con.execute(
            f"""INSERT INTO judgments (qid, doc_id, level, grade, source, labeller, status,
                                       provenance, created_at)
                SELECT qid, doc_id, 'doc', grade, source, {quote(lifted_by)}, 'ok',
                       json_object('rule', $rule, 'judge', $judge, 'from_level', 'chunk',
                                   'chunks', chunks), $now
                FROM _lift ORDER BY qid, doc_id""",
            {"rule": rule, "judge": labeller, "now": utcnow()},
        )
        labels, queries, chunks, human, judged = one(
            con,
            "SELECT count(*), count(DISTINCT qid), coalesce(sum(n), 0), "
            "count(*) FILTER (WHERE source = 'human'), count(*) FILTER (WHERE source = 'judge') "
            "FROM _lift",
        )
        con.execute("DROP TABLE _lift")
    return Lifted(rule, int(labels), int(queries), int(chunks), int(human), int(judged))


__all__ = ["RULES", "Lifted", "lift_labels"]
