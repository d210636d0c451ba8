"""Where labels written since a moment fall: in which queries of which run's top k.

A run's nDCG (and R, nR) can change without any label of its own top k changing: a new relevant
label of a doc it did not rank there raises the query's ideal ranking (and its count of relevant
docs). To say so honestly, the dashboard needs to know, per run, the queries where a label written
since it last looked does lie in the run's top k (those changes are the run's own); the rest of a
change comes from outside (metrics/shift.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.pooling.pool import check_depth
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, quote


def relabelled_in_top(
    store: Store, runs: Sequence[str], level: str, depth: int, since_id: int
) -> dict[str, set[str]]:
    """For each run, the queries where a label written after judgment id `since_id` (any source,
    status or purpose) is on a doc of the run's top `depth` at `level`."""
    check_depth(depth)
    keys = run_keys(store, runs)
    found: dict[str, set[str]] = {run: set() for run in keys}
    if not keys:
        return found
    names = {v: k for k, v in keys.items()}
    with store.read() as con:
        rows = con.execute(
            f"""SELECT DISTINCT r.run_key, r.qid
                FROM ({rankings_sql(level, list(keys.values()), depth)}) r
                JOIN judgments j ON j.qid = r.qid AND j.doc_id = r.doc_id
                WHERE j.id > $since AND j.level = {quote(check_level(level))}""",
            {"since": int(since_id)},
        ).fetchall()
    for key, qid in rows:
        found[names[int(key)]].add(str(qid))
    return found
