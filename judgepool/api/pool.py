"""The pool verb: judged@depth and holes per run, and the holes themselves (pooling/pool.py).

`jp.Database.pool` returns both at once (`pool`); `judgepool pool` prints the summary, or with
`--list` the holes, and reads only what it prints (`summary`, `holes`).
"""

from __future__ import annotations

from judgepool.api.results import Pool
from judgepool.api.store import Store
from judgepool.pooling import pool as pooling
from judgepool.pooling.pool import Hole, PoolSpec, PoolSummary, RunPool

__all__ = ["Hole", "Pool", "PoolSpec", "PoolSummary", "RunPool", "holes", "pool", "summary"]


def pool(store: Store, spec: PoolSpec | None = None) -> Pool:
    """The pool `spec` names: judged@depth and holes per run, and every hole (a table)."""
    spec = spec or PoolSpec()
    return Pool(pooling.pool_summary(store, spec), pooling.holes_table(store, spec))


def summary(store: Store, spec: PoolSpec | None = None) -> PoolSummary:
    """Per run: queries, judged@depth and holes; for the pool: pairs and holes."""
    return pooling.pool_summary(store, spec)


def holes(store: Store, spec: PoolSpec | None = None) -> list[Hole]:
    """The holes of the pool, ordered by qid, then best rank, then doc id."""
    return pooling.list_holes(store, spec)
