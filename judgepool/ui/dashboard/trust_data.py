"""The dashboard's readers for the trust loop (audit sample, its queue, calibration runs), cached
by the database's version as in ui/dashboard/data.py, and the two writes the queue makes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from judgepool.api import audit_queue
from judgepool.api.store import Store
from judgepool.defaults import Level

if TYPE_CHECKING:
    from judgepool.api.audit_queue import (
        AuditLabel,
        AuditSample,
        AuditStatus,
        CalibrationRun,
        ListedPair,
    )
    from judgepool.ui.dashboard.data import Version


@st.cache_data(show_spinner=False, max_entries=64)
def sample(db: str, version: Version, level: Level) -> AuditSample | None:
    """The audit sample in use at `level`."""
    return audit_queue.sample_in_use(Store(db), level)


@st.cache_data(show_spinner=False, max_entries=64)
def queue(db: str, version: Version, level: Level) -> list[ListedPair]:
    """Every judge-labelled pair of the sample's queries in its pool, with texts, in order."""
    return audit_queue.queue(Store(db), level)


@st.cache_data(show_spinner=False, max_entries=64)
def status(db: str, version: Version, level: Level) -> AuditStatus:
    """Queries audited, pairs labelled / left."""
    return audit_queue.status(Store(db), level)


@st.cache_data(show_spinner=False, max_entries=64)
def calibrations(db: str, version: Version, level: Level) -> list[CalibrationRun]:
    """The recorded calibration runs at `level`, newest first."""
    return audit_queue.calibrations(Store(db), level)


def save(
    db: str, sample_id: int, qid: str, doc_id: str, grade: int, user: str, level: Level, blind: bool
) -> AuditLabel:
    """Write a person's grade (a human label, effective at once)."""
    return audit_queue.save_grade(
        Store(db), sample_id, qid, doc_id, grade, user, level=level, blind=blind
    )


def undo(db: str, label: AuditLabel) -> None:
    """Remove the label just saved."""
    audit_queue.undo(Store(db), label)


def draw(db: str, queries: int, seed: int, depth: int, level: Level, labeller: str | None) -> str:
    """Draw (or resize) the audit sample; returns what happened."""
    return audit_queue.draw(
        Store(db), queries, seed=seed, depth=depth, level=level, labeller=labeller
    )
