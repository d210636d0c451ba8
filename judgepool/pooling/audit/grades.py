"""A person's grades from the audit queue: human labels with their provenance, and undo.

A queue grade is an ordinary human label (source `human`, labeller `audit:<user>`), appended with
`write_judgments`, so it is the pair's effective label from then on, and it counts towards the
audit of its query. Its provenance says it came from the audit queue, for which sample, and
whether the judge's grade was hidden when the person graded (blind, the default). Undo removes
the queue's own label of that pair, by id, and only while it is the newest label of the pair
that this labeller wrote: it is for the mis-click just made, not for rewriting history.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgepool.errors import UsageError
from judgepool.pooling.audit.overrides import GRADES
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, check_level, write_judgments
from judgepool.pooling.store.sql import scalar

AUDIT_PREFIX = "audit:"


@dataclass(frozen=True)
class AuditLabel:
    """A grade saved from the queue: the label's id (for undo) and what was written."""

    id: int
    qid: str
    doc_id: str
    level: str
    grade: int
    labeller: str


def audit_labeller(user: str) -> str:
    """`audit:<user>`; a user name is one word, so labellers stay readable in listings."""
    name = user.strip()
    if not name or any(ch.isspace() for ch in name):
        raise UsageError(f"user name {user!r} is empty or has whitespace", "give one word")
    return AUDIT_PREFIX + name


def save_audit_label(
    store: Store,
    sample_id: int,
    qid: str,
    doc_id: str,
    grade: int,
    user: str,
    level: str = "chunk",
    blind: bool = True,
    via: str = "dashboard",
) -> AuditLabel:
    """Store `user`'s grade for a pair of audit sample `sample_id` as a human label."""
    level = check_level(level)
    if grade not in GRADES:
        raise UsageError(f"grade {grade!r} is not one of {GRADES}", "grades run from 0 to 3")
    labeller = audit_labeller(user)
    write_judgments(
        store,
        [
            Judgment(
                qid=qid,
                doc_id=doc_id,
                grade=grade,
                source="human",
                labeller=labeller,
                level=level,
                provenance={
                    "kind": "audit",
                    "sample": sample_id,
                    "user": user.strip(),
                    "via": via,
                    "judge_grade_hidden": blind,
                },
            )
        ],
    )
    with store.read() as con:
        found = scalar(
            con,
            "SELECT max(id) FROM judgments WHERE qid = ? AND doc_id = ? AND level = ? "
            "AND labeller = ? AND source = 'human'",
            [qid, doc_id, level, labeller],
        )
    return AuditLabel(int(found), qid, doc_id, level, grade, labeller)


def undo_audit_label(store: Store, label: AuditLabel) -> None:
    """Remove the queue's label `label` (see the module docstring); refused if it is not the
    newest label this labeller gave the pair, or not a queue label."""
    with store.write() as con:
        newest = con.execute(
            "SELECT max(id) FROM judgments WHERE qid = ? AND doc_id = ? AND level = ? "
            "AND labeller = ? AND source = 'human'",
            [label.qid, label.doc_id, label.level, label.labeller],
        ).fetchone()
        if newest is None or newest[0] != label.id or not label.labeller.startswith(AUDIT_PREFIX):
            raise UsageError(
                f"label #{label.id} of ({label.qid}, {label.doc_id}) is not the newest audit "
                f"label of {label.labeller}: it cannot be undone",
                "grade the pair again instead (the newest human label is the one that counts)",
            )
        con.execute("DELETE FROM judgments WHERE id = ?", [label.id])
