"""The audit queue as a person works through it: the audit sample in use, its judge-labelled pairs
with their texts, the progress, a grade written (a human label, effective at once) and undone, a
new draw; and the recorded calibration runs shown beside it.

The dashboard's Audit page reads and writes through these; `judgepool audit` and
`jp.Database.audit_*` draw and follow the same sample (api/audit.py). The types the page names
are re-exported here.
"""

from __future__ import annotations

from judgepool.api.audit import AuditStatus, ListedPair, pairs, sample
from judgepool.api.audit import status as audit_status
from judgepool.defaults import DEPTH, DRAW_SEED, LEVEL, Level
from judgepool.pooling.audit.calibration_pairs import CalibrationRun, calibration_runs
from judgepool.pooling.audit.grades import AuditLabel, save_audit_label, undo_audit_label
from judgepool.pooling.audit.samples import AuditSample, latest_sample
from judgepool.pooling.store.connection import Store

__all__ = [
    "AuditLabel",
    "AuditSample",
    "AuditStatus",
    "CalibrationRun",
    "ListedPair",
    "calibrations",
    "draw",
    "queue",
    "sample_in_use",
    "save_grade",
    "status",
    "undo",
]


def sample_in_use(store: Store, level: Level = LEVEL) -> AuditSample | None:
    """The audit sample in use at `level` (None: none drawn yet)."""
    return latest_sample(store, level)


def queue(store: Store, level: Level = LEVEL) -> list[ListedPair]:
    """Every judge-labelled pair of the sample's queries in its pool, with texts, in the sample's
    order, graded or not (the judge's grade rides along, for the page to reveal after grading)."""
    return pairs(store, level=level, everything=True)


def status(store: Store, level: Level = LEVEL) -> AuditStatus:
    """Queries fully audited and pairs labelled / left in the sample in use."""
    return audit_status(store, level=level)


def draw(
    store: Store,
    queries: int,
    *,
    seed: int = DRAW_SEED,
    depth: int = DEPTH,
    level: Level = LEVEL,
    labeller: str | None = None,
) -> str:
    """Draw (or resize) the audit sample over every run's pool; returns what happened, in
    words."""
    return sample(store, queries, seed=seed, depth=depth, level=level, labeller=labeller).note


def save_grade(
    store: Store,
    sample_id: int,
    qid: str,
    doc_id: str,
    grade: int,
    user: str,
    *,
    level: Level = LEVEL,
    blind: bool = True,
) -> AuditLabel:
    """Write `user`'s grade of a pair of audit sample `sample_id` as a human label (effective at
    once); `blind` records that the judge's grade was hidden when they graded."""
    return save_audit_label(store, sample_id, qid, doc_id, grade, user, level, blind)


def undo(store: Store, label: AuditLabel) -> None:
    """Remove a grade just written (refused unless it is still that person's newest label of
    the pair)."""
    undo_audit_label(store, label)


def calibrations(store: Store, level: Level = LEVEL) -> list[CalibrationRun]:
    """The recorded calibration runs at `level`, newest first."""
    return calibration_runs(store, level)
