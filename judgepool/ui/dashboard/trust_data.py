"""The dashboard's readers for the trust loop (audit sample, its queue, calibration runs), cached
by the database's version as in ui/dashboard/data.py, and the two writes the queue makes."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import streamlit as st

from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.api.audit import AuditStatus, ListedPair
    from judgepool.defaults import Level
    from judgepool.pooling.audit.calibration_pairs import CalibrationRun
    from judgepool.pooling.audit.grades import AuditLabel
    from judgepool.pooling.audit.samples import AuditSample
    from judgepool.ui.dashboard.data import Version


@st.cache_data(show_spinner=False, max_entries=64)
def sample(db: str, version: Version, level: str) -> AuditSample | None:
    """The audit sample in use at `level`."""
    from judgepool.pooling.audit.samples import latest_sample

    return latest_sample(Store(db), level)


@st.cache_data(show_spinner=False, max_entries=64)
def queue(db: str, version: Version, level: str) -> list[ListedPair]:
    """Every judge-labelled pair of the sample's queries in its pool, with texts, in order."""
    from judgepool.api.audit import pairs

    return pairs(Store(db), level=cast("Level", level), everything=True)


@st.cache_data(show_spinner=False, max_entries=64)
def status(db: str, version: Version, level: str) -> AuditStatus:
    """Queries audited, pairs labelled / left."""
    from judgepool.api.audit import status

    return status(Store(db), level=cast("Level", level))


@st.cache_data(show_spinner=False, max_entries=64)
def calibrations(db: str, version: Version, level: str) -> list[CalibrationRun]:
    """The recorded calibration runs at `level`, newest first."""
    from judgepool.pooling.audit.calibration_pairs import calibration_runs

    return calibration_runs(Store(db), level)


def save(
    db: str, sample_id: int, qid: str, doc_id: str, grade: int, user: str, level: str, blind: bool
) -> AuditLabel:
    """Write a person's grade (a human label, effective at once)."""
    from judgepool.pooling.audit.grades import save_audit_label

    return save_audit_label(Store(db), sample_id, qid, doc_id, grade, user, level, blind)


def undo(db: str, label: AuditLabel) -> None:
    """Remove the label just saved."""
    from judgepool.pooling.audit.grades import undo_audit_label

    undo_audit_label(Store(db), label)


def draw(db: str, queries: int, seed: int, depth: int, level: str, labeller: str | None) -> str:
    """Draw (or resize) the audit sample; returns what happened."""
    from judgepool.api.audit import sample

    chosen = cast("Level", level)
    return sample(Store(db), queries, seed=seed, depth=depth, level=chosen, labeller=labeller).note
