"""`labels lift`: doc-level labels derived from the effective chunk-level labels, written with
their provenance (pooling/lift.py), for teams that judged chunks and evaluate documents."""

from __future__ import annotations

from typing import Literal

from judgepool.api.store import Store
from judgepool.errors import UsageError
from judgepool.pooling import lift
from judgepool.pooling.lift import Lifted

__all__ = ["LiftRule", "Lifted", "lift_labels"]

#: `max`: a document is as relevant as its best labelled chunk.
LiftRule = Literal["max"]


def lift_labels(
    store: Store,
    *,
    to: Literal["doc"] = "doc",
    rule: LiftRule = "max",
    labeller: str | None = None,
) -> Lifted:
    """Write `to`-level labels (documents: the chunks' parent_id) from the effective chunk
    labels, counting `labeller`'s judge labels (None: any judge's); lifting again replaces the
    earlier lifted labels."""
    if to != "doc":
        raise UsageError(f"cannot lift labels to the {to!r} level", "lift them to 'doc'")
    return lift.lift_labels(store, rule=rule, labeller=labeller)
