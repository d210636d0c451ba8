"""The labels one run wrote: the latest label of each pair by each labeller since a label mark
(what a jury combines, what a canary check counts; no SQL on judgments outside pooling/)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import PURPOSES, check_level, quote
from judgepool.pooling.store.sql import registered


@dataclass(frozen=True)
class RunLabel:
    """One judge label: its id, pair, status and grade."""

    id: int
    qid: str
    doc_id: str
    status: str
    grade: int | None


def labels_since(
    store: Store,
    level: str,
    labellers: Sequence[str],
    since_id: int,
    purpose: str = "label",
    pairs: Sequence[tuple[str, str]] | None = None,
) -> dict[str, dict[tuple[str, str], RunLabel]]:
    """labeller -> (qid, doc_id) -> the latest judge label of that pair by that labeller written
    after judgment id `since_id`, with `purpose`, at `level` (of `pairs` only, when given).

    The latest is the last written: after an unparsed answer and its retry, the retry's."""
    import pyarrow as pa

    level = check_level(level)
    if purpose not in PURPOSES:
        raise ValueError(f"purpose {purpose!r} is not one of {PURPOSES}")
    found: dict[str, dict[tuple[str, str], RunLabel]] = {name: {} for name in labellers}
    if not labellers:
        return found
    who = ", ".join(quote(name) for name in labellers)
    where = (
        f"j.level = {quote(level)} AND j.source = 'judge' AND j.purpose = {quote(purpose)} "
        f"AND j.id > {int(since_id)} AND j.labeller IN ({who})"
    )
    sql = f"""
        SELECT j.labeller, j.qid, j.doc_id, max(j.id) AS id, max_by(j.status, j.id),
               max_by(j.grade, j.id)
        FROM judgments j {{join}} WHERE {where} GROUP BY j.labeller, j.qid, j.doc_id"""
    with store.read() as con:
        if pairs is None:
            rows = con.execute(sql.format(join="")).fetchall()
        else:
            wanted = pa.table(
                {
                    "qid": pa.array([q for q, _ in pairs], pa.string()),
                    "doc_id": pa.array([d for _, d in pairs], pa.string()),
                }
            )
            join = (
                "JOIN (SELECT DISTINCT qid, doc_id FROM _run_pairs) w "
                "ON w.qid = j.qid AND w.doc_id = j.doc_id"
            )
            with registered(con, "_run_pairs", wanted):
                rows = con.execute(sql.format(join=join)).fetchall()
    for labeller, qid, doc_id, id_, status, grade in rows:
        found[str(labeller)][(str(qid), str(doc_id))] = RunLabel(
            int(id_), str(qid), str(doc_id), str(status), None if grade is None else int(grade)
        )
    return found
