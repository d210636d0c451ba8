"""What changed in a database since a reader last looked: its version (a small fingerprint that
moves with every label, run, doc, query, audit sample and calibration run), who is writing labels
now, and where the labels written since a version landed.

The dashboard keys every cached figure on the version and reads it with the activity in one short
read per refresh (ui/dashboard/data.py), so a running judge's labels show up without a click and
its figures are marked provisional. A run's mean can move with no new label in its own top k (the
ideal ranking changed): `relabelled` and `outside_shifts` say where that happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.defaults import K, Level
from judgepool.metrics.shift import Shift, outside_shifts
from judgepool.pooling.labels_in_top import relabelled_in_top
from judgepool.pooling.store.activity import Activity
from judgepool.pooling.store.activity import state as read_state
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.inventory import fingerprint, label_mark_of, same_but_labels

__all__ = [
    "Activity",
    "Shift",
    "Version",
    "label_mark_of",
    "outside_shifts",
    "relabelled",
    "same_but_labels",
    "state",
    "version",
]

#: The database's fingerprint; equal versions hold the same labels, runs, docs and queries.
Version = tuple[str, ...]


def version(store: Store) -> Version | None:
    """The database's version (None: no database file yet)."""
    return fingerprint(store) if store.exists() else None


def state(store: Store) -> tuple[Version, Activity] | None:
    """The version and who is writing labels now, in one read (None: no database file yet)."""
    return read_state(store) if store.exists() else None


def relabelled(
    store: Store, runs: Sequence[str], since: Version, *, level: Level, k: int = K
) -> dict[str, set[str]]:
    """Per run, the queries where a label written after version `since` is in its top k."""
    return relabelled_in_top(store, runs, level, k, label_mark_of(since))
