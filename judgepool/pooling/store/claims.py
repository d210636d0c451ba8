"""Claims: who is paying for an answer right now, so that two judges never pay for it twice.

A claim is a row of `claims`: `key` names what is paid for (a judge cache key: the model, its
parameters, the prompt and the texts, so pairs that share a text share one claim), `holder` who
pays (`judge:HOST:PID:TOKEN` for a running `judgepool judge`, `batch:ID` for a provider batch that
is open), and `expires_at` the end of its lease. A holder renews its leases while it lives; a claim
whose lease has run out belongs to nobody, and the next judge that wants it takes it over, so the
claims of a killed judge come free after one lease.

A judge on this machine whose process is gone (killed, crashed, or unable to release its claims
before exiting: a full disk) is known dead at once: its holder name carries the host, the process
namespace and the pid, and a claim of a dead process is taken over without waiting for its lease.
A judge that is alive but stuck (stopped, suspended) or on another machine is waited for until
its lease ends.

A holder releases a claim in the same transaction that writes the labels it paid for (see
`labels.write_judgments(release=...)`), so a claim that disappears means its labels are in the
database. `claim` tells a judge, for each key it wants: now mine; held by someone else (wait or
skip); or already labelled by someone else since the judge made its plan (nothing to do). Every
function here is one short write transaction: DuckDB lets one process write at a time, which is
what makes claiming atomic across processes.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from judgepool.errors import UsageError
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.sql import registered

if TYPE_CHECKING:
    import duckdb

ENV_LEASE = "JUDGEPOOL_CLAIM_LEASE"
#: Seconds a claim lasts unless renewed; a live judge renews it every third of that.
DEFAULT_LEASE = 60.0


def lease_seconds() -> float:
    """$JUDGEPOOL_CLAIM_LEASE, else 60 s: how long a dead judge's claims block the others."""
    raw = os.environ.get(ENV_LEASE)
    if raw in (None, ""):
        return DEFAULT_LEASE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 1.0:
        raise UsageError(
            f"{ENV_LEASE}={raw!r} is not a number of seconds of at least 1",
            f"set {ENV_LEASE} to e.g. 60, or unset it",
        )
    return value


def _pid_namespace() -> str:
    """This process's pid namespace (processes of one namespace see each other's pids)."""
    try:
        return "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit()) or "-"
    except OSError:
        return "-"


#: The holder prefix of a provider batch's claims (`batch:ID`): online judges skip what it holds.
BATCH_PREFIX = "batch:"


def is_batch(holder: str) -> bool:
    """Whether `holder` is a provider batch (its claims last its 24-hour window, not a lease)."""
    return holder.startswith(BATCH_PREFIX)


def new_holder(kind: str = "judge", name: str | None = None) -> str:
    """A holder name: `judge:HOST:PIDNS:PID:TOKEN` for this process, or `batch:NAME` for a
    batch."""
    if kind == "batch":
        if not name:
            raise UsageError("a batch claim needs the batch id", "pass the provider's batch id")
        return f"{BATCH_PREFIX}{name}"
    host = socket.gethostname()
    holder = f"judge:{host}:{_pid_namespace()}:{os.getpid()}:{secrets.token_hex(4)}"
    _live.add(holder)
    return holder


#: The judge holders of this process that have not retired (their runs are still going).
_live: set[str] = set()


def retire(holder: str) -> None:
    """This process's `holder` is done: a claim it could not release is known dead at once."""
    _live.discard(holder)


def holder_is_dead(holder: str) -> bool:
    """Whether `holder` is a judge process of this machine (and pid namespace) that is gone.
    Unknown (another machine, a batch, a reused pid): False, and its lease decides."""
    parts = holder.split(":")
    if len(parts) != 5 or parts[0] != "judge" or not parts[3].isdigit():
        return False
    if parts[1] != socket.gethostname() or parts[2] != _pid_namespace() or parts[2] == "-":
        return False
    pid = int(parts[3])
    if pid == os.getpid():
        return holder not in _live
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (owned by someone else)
    try:  # a killed process its parent has not reaped yet is a zombie: gone all the same
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False


@dataclass(frozen=True)
class Wanted:
    """A key a holder wants to pay for, and the pairs (qid, doc_id) at `level` it would label."""

    key: str
    pairs: tuple[tuple[str, str], ...]
    level: str


@dataclass
class Claimed:
    """What `claim` decided, by key (every wanted key is in exactly one of the four)."""

    mine: list[str] = field(default_factory=list)
    taken_over: list[str] = field(default_factory=list)  # also mine: their lease had run out
    held: dict[str, tuple[str, datetime]] = field(default_factory=dict)  # holder, lease end
    labelled: list[str] = field(default_factory=list)  # done by someone else since the plan


def claim(
    store: Store,
    holder: str,
    wanted: Sequence[Wanted],
    labeller: str,
    since_id: int,
    lease_s: float,
) -> Claimed:
    """Claim every wanted key nobody else holds, in one transaction (see `claim_in`)."""
    if not wanted:
        return Claimed()
    with store.write() as con:
        return claim_in(con, holder, wanted, labeller, since_id, lease_s)


def claim_in(
    con: duckdb.DuckDBPyConnection,
    holder: str,
    wanted: Sequence[Wanted],
    labeller: str,
    since_id: int,
    lease_s: float,
    answered: Collection[str] = (),
) -> Claimed:
    """Inside an open write transaction: claim every wanted key nobody else holds.

    `answered`: keys whose labels the caller writes in this same transaction (cache hits): when
    granted they are reported like the others but left unclaimed (a claim of a dead or expired
    holder on them is dropped), as if claimed and released with their labels.

    A key with no claim whose pairs got a label from `labeller` after judgment id `since_id`
    (another judge finished it after this one listed its holes) is reported `labelled` and not
    claimed. A key whose claim has expired, or whose holder is a dead process of this machine,
    is taken over whatever its labels: its holder died before it wrote its final labels (those
    and the release are one transaction).
    """
    result = Claimed()
    if not wanted:
        return result
    import pyarrow as pa

    keys = pa.table({"key": pa.array([w.key for w in wanted], pa.string())})
    pairs = pa.table(
        {
            "key": pa.array([w.key for w in wanted for _ in w.pairs], pa.string()),
            "qid": pa.array([q for w in wanted for q, _ in w.pairs], pa.string()),
            "doc_id": pa.array([d for w in wanted for _, d in w.pairs], pa.string()),
            "level": pa.array([w.level for w in wanted for _ in w.pairs], pa.string()),
        }
    )
    with registered(con, "_wanted", keys), registered(con, "_pairs", pairs):
        now = utcnow()
        rows = con.execute(
            "SELECT c.key, c.holder, c.expires_at FROM claims c JOIN _wanted w USING (key)"
        ).fetchall()
        existing = {str(k): (str(h), e) for k, h, e in rows}
        free = [w.key for w in wanted if w.key not in existing]
        done: set[str] = set()
        if free:
            done = {
                str(k)
                for (k,) in con.execute(
                    "SELECT DISTINCT p.key FROM _pairs p JOIN judgments j ON j.qid = p.qid "
                    "AND j.doc_id = p.doc_id AND j.level = p.level "
                    "WHERE j.id > ? AND j.labeller = ?",
                    [since_id, labeller],
                ).fetchall()
            }
        dead = {h: holder_is_dead(h) for h, _ in existing.values() if h != holder}
        for w in wanted:
            found = existing.get(w.key)
            if found is None:
                (result.labelled if w.key in done else result.mine).append(w.key)
            elif found[0] == holder:
                result.mine.append(w.key)
            elif found[1] <= now or dead[found[0]]:
                result.taken_over.append(w.key)
            else:
                result.held[w.key] = found
        done_now = set(answered).intersection(result.mine + result.taken_over)
        stale = [k for k in done_now if k in existing]
        if stale:
            gone = pa.table({"key": pa.array(stale, pa.string())})
            with registered(con, "_gone", gone):
                con.execute("DELETE FROM claims WHERE key IN (SELECT key FROM _gone)")
        taken = [k for k in result.mine + result.taken_over if k not in done_now]
        if taken:
            ours = pa.table({"key": pa.array(taken, pa.string())})
            with registered(con, "_ours", ours):
                con.execute(
                    "INSERT INTO claims SELECT key, ?, ?, ? FROM _ours "
                    "ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, "
                    "claimed_at = excluded.claimed_at, expires_at = excluded.expires_at",
                    [holder, now, now + timedelta(seconds=lease_s)],
                )
    return result


def renew(store: Store, holder: str, lease_s: float) -> int:
    """Extend every claim of `holder` by one lease from now; returns how many it still holds."""
    with store.write() as con:
        return len(renew_in(con, holder, lease_s))


def renew_in(con: duckdb.DuckDBPyConnection, holder: str, lease_s: float) -> list[str]:
    """Inside an open write transaction: extend every claim of `holder` by one lease from now;
    returns the keys it still holds (one taken over by another judge meanwhile is not among
    them)."""
    rows = con.execute(
        "UPDATE claims SET expires_at = ? WHERE holder = ? RETURNING key",
        [utcnow() + timedelta(seconds=lease_s), holder],
    ).fetchall()
    return [str(k) for (k,) in rows]


def release_in(con: duckdb.DuckDBPyConnection, holder: str, keys: Sequence[str] | None) -> None:
    """Inside an open write transaction: drop `holder`'s claims on `keys` (all when None)."""
    if keys is None:
        con.execute("DELETE FROM claims WHERE holder = ?", [holder])
        return
    if not keys:
        return
    import pyarrow as pa

    table = pa.table({"key": pa.array(list(keys), pa.string())})
    with registered(con, "_released", table):
        con.execute(
            "DELETE FROM claims WHERE holder = ? AND key IN (SELECT key FROM _released)", [holder]
        )


def release(store: Store, holder: str, keys: Sequence[str] | None = None) -> None:
    """Drop `holder`'s claims on `keys` (all of them when None) in their own transaction."""
    with store.write() as con:
        release_in(con, holder, keys)


def holders(store: Store) -> list[tuple[str, int, datetime]]:
    """(holder, claims, latest lease end) of every holder with a live claim, for reports."""
    with store.read() as con:
        rows = con.execute(
            "SELECT holder, count(*), max(expires_at) FROM claims WHERE expires_at > ? "
            "GROUP BY holder ORDER BY holder",
            [utcnow()],
        ).fetchall()
    return [(str(h), int(n), e) for h, n, e in rows]


def held_by(store: Store, keys: Sequence[str]) -> dict[str, str]:
    """The keys among `keys` that a live holder claims now, with the holder (what a judge that
    started now would skip or wait for; read only, for dry runs)."""
    if not keys:
        return {}
    import pyarrow as pa

    table = pa.table({"key": pa.array(list(keys), pa.string())})
    with store.read() as con, registered(con, "_asked", table):
        rows = con.execute(
            "SELECT c.key, c.holder FROM claims c JOIN _asked a USING (key) WHERE c.expires_at > ?",
            [utcnow()],
        ).fetchall()
    return {str(k): str(h) for k, h in rows if not holder_is_dead(str(h))}
