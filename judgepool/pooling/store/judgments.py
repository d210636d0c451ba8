"""Judgments: writing labels with their provenance, and the effective label of a pair.

Every label ever written stays in `judgments` (an audit trail); none is updated in place except
when a qrels file is ingested again (a human label is keyed by qid, doc_id, level, source and
labeller). The **effective label** of a (qid, doc_id) pair at a level is the latest human label,
else the latest `ok` label of a jury (a labeller `jury(...)@...`: several judges combined, see
judge/jury.py), else the latest `ok` judge label; when a judge is named, only that labeller's
judge labels are considered. "Latest" means last written (highest id). A jury's members write
ordinary judge labels too (each counts under `--judge MEMBER`); where the jury labelled a pair,
its combined label is the one that counts by default, whichever was written last. A pair whose
labels are all not-ok has no effective label: it is a hole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judgepool.defaults import LEVELS, Level
from judgepool.errors import Param, UsageError, remedy
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.sql import registered

if TYPE_CHECKING:
    import duckdb

SOURCES: tuple[str, ...] = ("human", "judge")
STATUSES: tuple[str, ...] = ("ok", "unparsed", "error", "no_text")
#: What a label is for: only `label` ones can be effective or exported; `calibration` and `canary`
#: labels are a judge's answers on pairs of known grade, kept to measure the judge.
PURPOSES: tuple[str, ...] = ("label", "calibration", "canary")
#: Every canary's doc id starts with this (judge/canaries.py): a space, which ingest refuses in
#: ids, so no real doc can carry such an id; a canary's label is never a `label`.
CANARY_PREFIX = "canary "


def is_canary_id(doc_id: str) -> bool:
    """Whether `doc_id` is a canary's (reserved: no real id can be one)."""
    return doc_id.startswith(CANARY_PREFIX)


#: The labellers of juries (judge/jury.py) start with this; no single judge's can (a model string
#: names a provider first, the offline judge is `offline...`).
JURY_PREFIX = "jury("
#: Orders judge labels for the effective rule: a jury's above any single judge's, then the latest.
_JUDGE_PICK = f"((source = 'judge' AND starts_with(labeller, '{JURY_PREFIX}'))::BIGINT << 61) + id"


def check_level(level: str) -> Level:
    """`chunk` = the ids the runs rank; `doc` = their parent documents."""
    if level not in LEVELS:
        raise UsageError(
            f"unknown level {level!r}",
            remedy("use {} or {}", Param("level", "chunk"), Param("level", "doc")),
            value=level,
        )
    return level  # type: ignore[return-value]


@dataclass(frozen=True)
class Judgment:
    """One label with its provenance, as the judge or a human produced it."""

    qid: str
    doc_id: str
    grade: int | None
    source: str
    labeller: str
    status: str = "ok"
    level: str = "chunk"
    raw_output: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    latency_s: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    purpose: str = "label"

    def check(self) -> None:
        """Refuse a label the table's constraints would refuse, with a readable message."""
        check_level(self.level)
        if self.source not in SOURCES:
            raise UsageError(
                f"label source {self.source!r} is not one of {SOURCES}",
                f"use source={' or '.join(map(repr, SOURCES))}",
            )
        if self.status not in STATUSES:
            raise UsageError(
                f"label status {self.status!r} is not one of {STATUSES}",
                f"use one of status={', '.join(map(repr, STATUSES))}",
            )
        if self.status == "ok" and self.grade is None:
            raise UsageError(
                f"an ok label needs a grade ({self.qid}, {self.doc_id})",
                "give the grade, or record the label with status 'unparsed' or 'error'",
            )
        if not self.labeller:
            raise UsageError("a label needs a labeller", "name who or what gave it (labeller=)")
        if self.purpose not in PURPOSES:
            raise UsageError(
                f"label purpose {self.purpose!r} is not one of {PURPOSES}",
                f"use one of purpose={', '.join(map(repr, PURPOSES))}",
            )
        if self.purpose == "label" and is_canary_id(self.doc_id):
            raise UsageError(
                f"({self.qid}, {self.doc_id}) is a canary, a planted pair of grade 0: it can "
                "never have a label that counts",
                "label a real pair (canary ids start with 'canary ')",
            )


_COLUMNS = (
    "qid, doc_id, level, grade, source, labeller, status, raw_output, tokens_in, tokens_out, "
    "cost, latency_s, provenance, note, created_at, purpose"
)


def _arrow(judgments: Sequence[Judgment]) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "qid": pa.array([j.qid for j in judgments], pa.string()),
            "doc_id": pa.array([j.doc_id for j in judgments], pa.string()),
            "level": pa.array([j.level for j in judgments], pa.string()),
            "grade": pa.array([j.grade for j in judgments], pa.int32()),
            "source": pa.array([j.source for j in judgments], pa.string()),
            "labeller": pa.array([j.labeller for j in judgments], pa.string()),
            "status": pa.array([j.status for j in judgments], pa.string()),
            "raw_output": pa.array([j.raw_output for j in judgments], pa.string()),
            "tokens_in": pa.array([j.tokens_in for j in judgments], pa.int32()),
            "tokens_out": pa.array([j.tokens_out for j in judgments], pa.int32()),
            "cost": pa.array([j.cost for j in judgments], pa.float64()),
            "latency_s": pa.array([j.latency_s for j in judgments], pa.float64()),
            "provenance": pa.array(
                [json.dumps(j.provenance, sort_keys=True, default=str) for j in judgments],
                pa.string(),
            ),
            "note": pa.array([j.note for j in judgments], pa.string()),
            "created_at": pa.array([utcnow()] * len(judgments), pa.timestamp("us")),
            "purpose": pa.array([j.purpose for j in judgments], pa.string()),
            "_seq": pa.array(range(len(judgments)), pa.int64()),
        }
    )


def write_judgments(
    store: Store,
    judgments: Sequence[Judgment],
    release: tuple[str, Sequence[str]] | None = None,
    unless_marked: bool = False,
) -> int:
    """Append labels in one short transaction; returns how many were written.

    `release` = (holder, keys): drop those claims (pooling/store/claims.py) in the same transaction,
    so that a claim disappears exactly when the labels it paid for are in the database.
    `unless_marked`: leave out a label when its labeller already gave the pair a label of the
    same status (for `no_text` marks: checked inside the write, so two judges at once write one).
    """
    if not judgments:
        if release is not None and release[1]:
            claims.release(store, release[0], release[1])
        return 0
    for j in judgments:
        j.check()
    with store.write() as con:
        written = insert_judgments_in(con, judgments, unless_marked)
        if release is not None:
            claims.release_in(con, release[0], release[1])
    return written


def insert_judgments_in(
    con: duckdb.DuckDBPyConnection, judgments: Sequence[Judgment], unless_marked: bool = False
) -> int:
    """Inside an open write transaction: append labels (see `write_judgments`)."""
    if not judgments:
        return 0
    for j in judgments:
        j.check()
    # One Arrow table, inserted in order: ~50x faster than executemany (3 ms a row), which
    # matters when a judge run writes thousands of cache hits at once.
    table = _arrow(judgments)
    unless = (
        " WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.qid = n.qid AND j.doc_id = n.doc_id"
        " AND j.level = n.level AND j.labeller = n.labeller AND j.status = n.status)"
        if unless_marked
        else ""
    )
    with registered(con, "_new_judgments", table):
        row = con.execute(
            f"INSERT INTO judgments ({_COLUMNS}) "
            f"SELECT {_COLUMNS} FROM _new_judgments n{unless} ORDER BY _seq"
        ).fetchone()
    return int(row[0]) if row else 0


def label_mark(store: Store) -> int:
    """The highest judgment id so far (0 when none): labels written later have higher ids."""
    with store.read() as con:
        row = con.execute("SELECT coalesce(max(id), 0) FROM judgments").fetchone()
    return int(row[0]) if row else 0


def quote(value: str) -> str:
    """A SQL string literal (for composing subqueries; values never come from SQL text)."""
    return "'" + value.replace("'", "''") + "'"


def _qualifying(level: str, labeller: str | None, skip_prefix: str | None = None) -> str:
    """WHERE clause of the labels that can be effective: ok human labels, ok judge labels (of
    `judge` only, when named; never of a labeller starting with `skip_prefix`)."""
    check_level(level)
    judges = "source = 'judge'"
    if labeller is not None:
        judges += f" AND labeller = {quote(labeller)}"
    if skip_prefix is not None:
        judges += f" AND NOT starts_with(labeller, {quote(skip_prefix)})"
    return (
        f"level = {quote(level)} AND status = 'ok' AND grade IS NOT NULL AND purpose = 'label' "
        f"AND (source = 'human' OR ({judges}))"
    )


def _among(among: str | None) -> str:
    """A restriction of the labels read to the (qid, doc_id) pairs of relation `among`: a pair's
    effective label depends on that pair's rows alone, so the rule's result is the same for it."""
    return "" if among is None else f" AND (qid, doc_id) IN (SELECT qid, doc_id FROM {among})"


def effective_labels_sql(
    level: str,
    labeller: str | None = None,
    skip_prefix: str | None = None,
    among: str | None = None,
) -> str:
    """A subquery of (qid, doc_id, grade, source, labeller, judgment_id): one row per labelled pair.

    This is THE effective-label rule (the latest human label of the pair, else the latest ok
    jury label, else the latest ok judge label), and every reader of labels goes through it.
    `labeller` restricts the judge labels considered to one labeller; `skip_prefix` leaves out
    judges whose labeller starts with it (the offline judge's own evidence must not feed on its
    earlier guesses); human labels always count. `among` restricts the pairs (see `_among`).
    """
    # One aggregate instead of a window: the pick key puts human labels above judge labels
    # (bit 62), a jury's above a single judge's (bit 61), and then the latest written first.
    return f"""
        SELECT qid, doc_id, max_by(grade, pick) AS grade, max_by(source, pick) AS source,
               max_by(labeller, pick) AS labeller, max_by(id, pick) AS judgment_id
        FROM (SELECT qid, doc_id, grade, source, labeller, id,
                     ((source = 'human')::BIGINT << 62) + {_JUDGE_PICK} AS pick
              FROM judgments WHERE {_qualifying(level, labeller, skip_prefix)}{_among(among)})
        GROUP BY qid, doc_id"""


def judge_view_labels_sql(level: str, labeller: str | None = None, among: str | None = None) -> str:
    """The effective-label rule with the judge first: the labels as the judge left them.

    Same columns as `effective_labels_sql`; for a pair with an ok judge label (of `labeller`,
    when named) it is the latest such label, even where a person labelled the pair since (an
    audit); for the others the latest human label. What the judge-corrected interval compares
    the human labels with (metrics/corrected.py).
    """
    return f"""
        SELECT qid, doc_id, max_by(grade, pick) AS grade, max_by(source, pick) AS source,
               max_by(labeller, pick) AS labeller, max_by(id, pick) AS judgment_id
        FROM (SELECT qid, doc_id, grade, source, labeller, id,
                     ((source = 'judge')::BIGINT << 62) + id AS pick
              FROM judgments WHERE {_qualifying(level, labeller)}{_among(among)})
        GROUP BY qid, doc_id"""


def label_view_sql(
    view: str, level: str, labeller: str | None = None, among: str | None = None
) -> str:
    """`effective` (the measures' labels) or `judge` (the judge's view) as a subquery; `among`
    restricts it to the pairs of a relation (see `_among`)."""
    if view == "effective":
        return effective_labels_sql(level, labeller, among=among)
    if view == "judge":
        return judge_view_labels_sql(level, labeller, among)
    raise UsageError(f"unknown label view {view!r}", "use 'effective' or 'judge'")


def latest_labels_sql(level: str, source: str, labeller: str | None = None) -> str:
    """A subquery of (qid, doc_id, grade, judgment_id): the latest ok label of each pair from one
    source (`human` or `judge`), of one labeller when named: a label set as one side holds it.
    Judge labels of any judge follow the effective rule's order (a jury's first)."""
    if source not in SOURCES:
        raise UsageError(
            f"label source {source!r} is not one of {SOURCES}", f"use one of {', '.join(SOURCES)}"
        )
    who = "" if labeller is None else f" AND labeller = {quote(labeller)}"
    pick = _JUDGE_PICK if source == "judge" and labeller is None else "id"
    return f"""
        SELECT qid, doc_id, max_by(grade, {pick}) AS grade, max_by(id, {pick}) AS judgment_id
        FROM judgments
        WHERE level = {quote(check_level(level))} AND status = 'ok' AND grade IS NOT NULL
              AND purpose = 'label'
              AND source = {quote(source)}{who}
        GROUP BY qid, doc_id"""


def labelled_pairs_sql(level: str, labeller: str | None = None, among: str | None = None) -> str:
    """A subquery of (qid, doc_id) for the pairs that have an effective label (no grade needed).

    Cheaper than `effective_labels_sql` when only the existence of a label matters (pools,
    judged@k): a pair is labelled iff one qualifying label exists. `among` names a relation of
    (qid, doc_id) candidates to restrict the search to (a join, much faster than a filter).
    """
    where = _qualifying(level, labeller)
    if among is None:
        return f"SELECT DISTINCT qid, doc_id FROM judgments WHERE {where}"
    return (
        f"SELECT DISTINCT j.qid, j.doc_id FROM judgments j "
        f"JOIN {among} c ON c.qid = j.qid AND c.doc_id = j.doc_id WHERE {where}"
    )


def labelled_queries_sql(level: str, labeller: str | None = None) -> str:
    """A subquery of (qid) for the evaluation set: queries with at least one effective label."""
    return f"SELECT DISTINCT qid FROM judgments WHERE {_qualifying(level, labeller)}"


def label_levels(store: Store) -> list[str]:
    """The levels that have at least one ok label, in LEVELS order."""
    with store.read() as con:
        found = {
            str(r[0])
            for r in con.execute(
                "SELECT DISTINCT level FROM judgments WHERE status = 'ok'"
            ).fetchall()
        }
    return [level for level in LEVELS if level in found]


def default_level(store: Store) -> Level:
    """The level a command (or the dashboard) works at when none is chosen: the chunk level,
    unless the database has labels at the doc level only (a re-chunking evaluated per
    document), where chunk-level figures would all be empty. One rule for every command."""
    if not store.exists():
        return "chunk"
    return "doc" if label_levels(store) == ["doc"] else "chunk"


def labellers(store: Store, level: str | None = None) -> list[tuple[str, str, int]]:
    """(source, labeller, number of labels) for every labeller, most labels first."""
    where = "" if level is None else f"WHERE level = {quote(check_level(level))}"
    with store.read() as con:
        return [
            (str(s), str(lab), int(n))
            for s, lab, n in con.execute(
                f"SELECT source, labeller, count(*) FROM judgments {where} "
                "GROUP BY ALL ORDER BY 3 DESC, 2"
            ).fetchall()
        ]
