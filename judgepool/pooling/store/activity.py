"""Who is writing labels right now: live judges (from their claims) and the newest label's age.

A verdict read while a backfill is writing is provisional: the next labels can flip it. The database
says whether one is writing. A running `judgepool judge` holds claims (pooling/store/claims.py) on
the pairs it is paying for, renewed while it lives and released with their labels; so a claim whose
lease has not run out, held by a judge that is not known dead, means a judge is at work (it claims
its next groups while the last ones are still in flight, so a running judge holds claims from its
first call to its last label). An open provider batch holds claims too (`batch:ID`): its labels
arrive when it is collected, not now. The age of the newest judge label says how fresh the figures
are; it does not decide on its own (a judge that finished a second ago has written its last label:
its figures are final).

`state` reads this and the fingerprint of the database (pooling/store/inventory.py) in one short
read, so the dashboard learns both with the one read it makes per refresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from judgepool.pooling.store.claims import holder_is_dead
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.inventory import fingerprint_in

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class Activity:
    """Live writers of labels, read at `now` (UTC, naive like every stored time)."""

    judges: tuple[tuple[str, int], ...]  # (holder, pairs claimed) of live judge processes
    batches: tuple[tuple[str, int], ...]  # (holder, pairs claimed) of open provider batches
    newest_judge_label: datetime | None
    now: datetime

    @property
    def label_age_s(self) -> float | None:
        """Seconds since the newest judge label was written (None: no judge label)."""
        if self.newest_judge_label is None:
            return None
        return max(0.0, (self.now - self.newest_judge_label).total_seconds())

    @property
    def writing(self) -> bool:
        """A judge is writing labels now: a live judge process holds claims."""
        return bool(self.judges)

    @property
    def claimed(self) -> int:
        """Pairs live judges are paying for right now."""
        return sum(n for _, n in self.judges)


def activity_in(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> Activity:
    """The activity, read on an open connection (one query on claims, one on judgments)."""
    now = utcnow() if now is None else now
    rows = con.execute(
        "SELECT holder, count(*) FROM claims WHERE expires_at > ? GROUP BY holder ORDER BY holder",
        [now],
    ).fetchall()
    judges, batches = [], []
    for holder, count in rows:
        name, pairs = str(holder), int(count)
        if name.startswith("batch:"):
            batches.append((name, pairs))
        elif not holder_is_dead(name):
            judges.append((name, pairs))
    newest = con.execute("SELECT max(created_at) FROM judgments WHERE source = 'judge'").fetchone()
    return Activity(
        judges=tuple(judges),
        batches=tuple(batches),
        newest_judge_label=None if newest is None else newest[0],
        now=now,
    )


def activity(store: Store) -> Activity:
    """Who is writing labels to `store` now (see the module docstring)."""
    with store.read() as con:
        return activity_in(con)


def state(store: Store) -> tuple[tuple[str, ...], Activity]:
    """(fingerprint, activity) in one short read: what the dashboard reads on every refresh."""
    with store.read() as con:
        return fingerprint_in(con), activity_in(con)
