"""Human overrides: a person's grade for a pair, stored as a human label that wins everywhere.

An override is an ordinary human label (source `human`, labeller `override:<user>`), appended with
`write_judgments` like every other label, so it is the pair's effective label from then on (the
latest human label wins) in pools, metrics and exports. Its provenance records which label it
overrode (id, source, labeller, grade) and through which tool, so the audit trail keeps both.
Nothing is deleted: overriding again simply appends a newer human label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgepool.errors import UsageError
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    Judgment,
    check_level,
    effective_labels_sql,
    write_judgments,
)
from judgepool.pooling.store.sql import scalar

GRADES: tuple[int, ...] = (0, 1, 2, 3)
OVERRIDE_PREFIX = "override:"


@dataclass(frozen=True)
class Override:
    """What an override wrote, and the effective label it replaced (None: the pair had none)."""

    qid: str
    doc_id: str
    level: str
    grade: int
    labeller: str
    note: str | None
    replaced: dict[str, Any] | None


def override_labeller(user: str) -> str:
    """`override:<user>`; a user name is one word, so labellers stay readable in listings."""
    name = user.strip()
    if not name or any(ch.isspace() for ch in name):
        raise UsageError(f"user name {user!r} is empty or has whitespace", "give one word")
    return OVERRIDE_PREFIX + name


def _current(store: Store, qid: str, doc_id: str, level: str) -> tuple[bool, dict[str, Any] | None]:
    """(whether the pair is known at this level, its effective label if any)."""
    pair = {"qid": qid, "doc_id": doc_id}
    keys = list(run_keys(store).values())
    with store.read() as con:
        row = con.execute(
            f"SELECT judgment_id, source, labeller, grade FROM ({effective_labels_sql(level)}) "
            "WHERE qid = $qid AND doc_id = $doc_id",
            pair,
        ).fetchone()
        known = row is not None or bool(
            scalar(
                con,
                "SELECT count(*) FROM judgments WHERE qid = $qid AND doc_id = $doc_id "
                "AND level = $level",
                {**pair, "level": level},
            )
        )
        if not known and keys:
            known = bool(
                scalar(
                    con,
                    f"SELECT count(*) FROM ({rankings_sql(level, keys)}) "
                    "WHERE qid = $qid AND doc_id = $doc_id",
                    pair,
                )
            )
    if row is None:
        return known, None
    return known, {"id": int(row[0]), "source": row[1], "labeller": row[2], "grade": int(row[3])}


def override_label(
    store: Store,
    qid: str,
    doc_id: str,
    grade: int,
    user: str,
    note: str | None = None,
    level: str = "chunk",
    via: str = "library",
) -> Override:
    """Store `user`'s grade for (qid, doc_id) as a human label; it becomes the effective label.

    The pair must be known at the level (ranked by a run, or labelled before), so a typo in an
    id is refused instead of creating a label nobody will ever use.
    """
    level = check_level(level)
    if grade not in GRADES:
        raise UsageError(f"grade {grade!r} is not one of {GRADES}", "grades run from 0 to 3")
    labeller = override_labeller(user)
    known, replaced = _current(store, qid, doc_id, level)
    if not known:
        raise UsageError(
            f"no run ranks and no label names the pair ({qid}, {doc_id}) at the {level} level",
            "check the query and doc ids (and the level)",
        )
    text = (note or "").strip() or None
    write_judgments(
        store,
        [
            Judgment(
                qid=qid,
                doc_id=doc_id,
                grade=grade,
                source="human",
                labeller=labeller,
                status="ok",
                level=level,
                provenance={
                    "kind": "override",
                    "user": user.strip(),
                    "via": via,
                    "replaced": replaced,
                },
                note=text,
            )
        ],
    )
    return Override(qid, doc_id, level, grade, labeller, text, replaced)
