"""Provider batches in the database: intent, upload, creation, progress, collection (SQL only here).

A batch is a row of `batches` from the moment a judge means to send it: `local_id` (ours,
`jpb-<16 hex>`) exists before the provider's `batch_id`, so a process killed between creating
the batch and recording it leaves a row that says what to look for (the provider's batch list,
by the local_id in the batch's metadata). `batch_pairs` maps each request line (`custom_id`) to
its cache key and the pairs it answers, and after collection holds each pair's outcome.

The pairs of a batch are claimed (pooling/store/claims.py) in the transaction that records the
intent, under `batch:<local_id>`, renamed `batch:<batch_id>` in the transaction that records
the provider's id; their lease runs to the end of the batch's window (created + 24 h + a margin).
A batch is collected in one transaction: its labels, its pairs' outcomes, `collected_at` and the
release of its claims, so a collection is whole or not at all, and a second one finds
`collected_at` set and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from judgepool.errors import DatabaseError
from judgepool.pooling.store import claims
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import Judgment, insert_judgments_in
from judgepool.pooling.store.sql import registered

if TYPE_CHECKING:
    import duckdb

#: Status of a batch the provider does not have yet (intended, maybe uploaded).
SUBMITTING = "submitting"
#: Statuses after which a provider batch changes no more.
FINISHED = ("completed", "failed", "expired", "cancelled")
#: How long a batch's claims last after it is created: the 24-hour window and an hour's margin.
BATCH_LEASE = timedelta(hours=25)

_COLUMNS = (
    "local_id, batch_id, provider, model, labeller, api_base_host, judge, settings, "
    "file_sha256, file_bytes, input_file_id, output_file_id, error_file_id, status, requests, "
    "pairs, completed, failed, submitter, created_at, provider_created_at, updated_at, "
    "collected_at, last_error"
)


@dataclass(frozen=True)
class BatchPair:
    """One pair a request line answers, and what it was shown."""

    custom_id: str
    cache_key: str
    qid: str
    doc_id: str
    level: str
    shown: list[dict[str, Any]]
    truncated: bool = False
    query_truncated: bool = False
    outcome: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class NewBatch:
    """A batch a judge is about to send: one input file of `requests` lines for `pairs`."""

    local_id: str
    provider: str
    model: str
    labeller: str
    api_base_host: str | None
    judge: dict[str, Any]
    settings: dict[str, Any]
    file_sha256: str
    file_bytes: int
    requests: int
    submitter: str
    pairs: list[BatchPair] = field(repr=False)


@dataclass(frozen=True)
class Progress:
    """What the provider said about a batch on its last look."""

    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    error: str | None = None


@dataclass(frozen=True)
class BatchRow:
    """A row of `batches`."""

    local_id: str
    batch_id: str | None
    provider: str
    model: str
    labeller: str
    api_base_host: str | None
    judge: dict[str, Any]
    settings: dict[str, Any]
    file_sha256: str
    file_bytes: int
    input_file_id: str | None
    output_file_id: str | None
    error_file_id: str | None
    status: str
    requests: int
    pairs: int
    completed: int
    failed: int
    submitter: str
    created_at: datetime
    provider_created_at: datetime | None
    updated_at: datetime
    collected_at: datetime | None
    last_error: str | None

    @property
    def holder(self) -> str:
        """The claim holder of its pairs."""
        return claims.new_holder("batch", self.batch_id or self.local_id)

    @property
    def name(self) -> str:
        """The provider's id once there is one, else ours."""
        return self.batch_id or self.local_id

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def due(self) -> datetime:
        """When the provider's 24-hour window ends (UTC)."""
        return (self.provider_created_at or self.created_at) + timedelta(hours=24)


def _row(values: Sequence[Any]) -> BatchRow:
    data = list(values)
    data[6], data[7] = json.loads(data[6]), json.loads(data[7])
    return BatchRow(*data)


def open_batches(
    store: Store,
    wanted: Sequence[claims.Wanted],
    labeller: str,
    since_id: int,
    make: Callable[[list[str]], list[NewBatch]],
) -> tuple[claims.Claimed, list[NewBatch]]:
    """Claim the wanted keys and record the batches that will answer them, in one transaction.

    `make(keys)` is told the keys this judge got (free, or taken over from a dead holder) and
    returns the batches to record; each batch's pairs are then claimed under its own holder, to
    the end of its window. Keys `make` leaves out are released. Nothing is recorded, and nothing
    claimed, unless all of it is.
    """
    provisional = claims.new_holder("batch", f"claiming-{utcnow():%Y%m%d%H%M%S%f}")
    with store.write() as con:
        got = claims.claim_in(con, provisional, wanted, labeller, since_id, 600.0)
        batches = make(got.mine + got.taken_over)
        now = utcnow()
        for batch in batches:
            _insert(con, batch, now)
            keys = sorted({p.cache_key for p in batch.pairs})
            _move_claims(
                con,
                provisional,
                claims.new_holder("batch", batch.local_id),
                keys,
                now + BATCH_LEASE,
            )
        claims.release_in(con, provisional, None)
    return got, batches


def _insert(con: duckdb.DuckDBPyConnection, batch: NewBatch, now: datetime) -> None:
    import pyarrow as pa

    con.execute(
        f"INSERT INTO batches ({_COLUMNS}) VALUES "
        "(?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?, 0, 0, ?, ?, NULL, ?, NULL, "
        "NULL)",
        [
            batch.local_id,
            batch.provider,
            batch.model,
            batch.labeller,
            batch.api_base_host,
            json.dumps(batch.judge, sort_keys=True, default=str),
            json.dumps(batch.settings, sort_keys=True, default=str),
            batch.file_sha256,
            batch.file_bytes,
            SUBMITTING,
            batch.requests,
            len(batch.pairs),
            batch.submitter,
            now,
            now,
        ],
    )
    pairs = batch.pairs
    table = pa.table(
        {
            "local_id": pa.array([batch.local_id] * len(pairs), pa.string()),
            "custom_id": pa.array([p.custom_id for p in pairs], pa.string()),
            "cache_key": pa.array([p.cache_key for p in pairs], pa.string()),
            "qid": pa.array([p.qid for p in pairs], pa.string()),
            "doc_id": pa.array([p.doc_id for p in pairs], pa.string()),
            "level": pa.array([p.level for p in pairs], pa.string()),
            "shown": pa.array([json.dumps(p.shown) for p in pairs], pa.string()),
            "truncated": pa.array([p.truncated for p in pairs], pa.bool_()),
            "query_truncated": pa.array([p.query_truncated for p in pairs], pa.bool_()),
        }
    )
    with registered(con, "_new_batch_pairs", table):
        con.execute(
            "INSERT INTO batch_pairs SELECT local_id, custom_id, cache_key, qid, doc_id, level, "
            "shown, truncated, query_truncated, NULL, NULL FROM _new_batch_pairs"
        )


def _move_claims(
    con: duckdb.DuckDBPyConnection, old: str, new: str, keys: Sequence[str] | None, until: datetime
) -> None:
    """Hand `old`'s claims (on `keys`; all when None) to `new`, with a lease to `until`."""
    if keys is None:
        con.execute(
            "UPDATE claims SET holder = ?, expires_at = ? WHERE holder = ?", [new, until, old]
        )
        return
    import pyarrow as pa

    with registered(con, "_moved", pa.table({"key": pa.array(list(keys), pa.string())})):
        con.execute(
            "UPDATE claims SET holder = ?, expires_at = ? WHERE holder = ? "
            "AND key IN (SELECT key FROM _moved)",
            [new, until, old],
        )


def record_uploaded(store: Store, local_id: str, file_id: str) -> None:
    """The batch's input file is at the provider (a rerun reuses it instead of uploading)."""
    with store.write() as con:
        con.execute(
            "UPDATE batches SET input_file_id = ?, updated_at = ? WHERE local_id = ?",
            [file_id, utcnow(), local_id],
        )


def record_created(
    store: Store,
    local_id: str,
    batch_id: str,
    progress: Progress,
    provider_created_at: datetime | None,
) -> None:
    """The provider has the batch: its id, status, and its pairs' claims under its id."""
    created = provider_created_at or utcnow()
    with store.write() as con:
        con.execute(
            "UPDATE batches SET batch_id = ?, provider_created_at = ?, last_error = NULL "
            "WHERE local_id = ?",
            [batch_id, created, local_id],
        )
        _progress_in(con, local_id, progress)
        _move_claims(
            con,
            claims.new_holder("batch", local_id),
            claims.new_holder("batch", batch_id),
            None,
            created + BATCH_LEASE,
        )


def _progress_in(con: duckdb.DuckDBPyConnection, local_id: str, progress: Progress) -> None:
    con.execute(
        "UPDATE batches SET status = ?, input_file_id = coalesce(?, input_file_id), "
        "output_file_id = coalesce(?, output_file_id), error_file_id = coalesce(?, "
        "error_file_id), completed = ?, failed = ?, last_error = coalesce(?, last_error), "
        "updated_at = ? WHERE local_id = ?",
        [
            progress.status,
            progress.input_file_id,
            progress.output_file_id,
            progress.error_file_id,
            progress.completed,
            progress.failed,
            progress.error,
            utcnow(),
            local_id,
        ],
    )


def record_progress(store: Store, local_id: str, progress: Progress) -> None:
    """What the provider says about the batch now (status, counts, file ids)."""
    with store.write() as con:
        _progress_in(con, local_id, progress)


def record_error(store: Store, local_id: str, message: str) -> None:
    """Why the last step on this batch failed (shown by --batch-status)."""
    with store.write() as con:
        con.execute(
            "UPDATE batches SET last_error = ?, updated_at = ? WHERE local_id = ?",
            [message[:500], utcnow(), local_id],
        )


def drop(store: Store, local_id: str) -> None:
    """Forget a batch the provider never got: its rows, and its claims (its pairs are holes)."""
    with store.write() as con:
        status = con.execute("SELECT status FROM batches WHERE local_id = ?", [local_id]).fetchone()
        if status is None or status[0] != SUBMITTING:
            raise DatabaseError(
                f"batch {local_id} is not one that was never created", "this is a bug if you see it"
            )
        con.execute("DELETE FROM batch_pairs WHERE local_id = ?", [local_id])
        con.execute("DELETE FROM batches WHERE local_id = ?", [local_id])
        claims.release_in(con, claims.new_holder("batch", local_id), None)


def list_batches(store: Store, uncollected: bool = False) -> list[BatchRow]:
    """Every batch (or those not collected yet), oldest first."""
    where = " WHERE collected_at IS NULL" if uncollected else ""
    with store.read() as con:
        rows = con.execute(
            f"SELECT {_COLUMNS} FROM batches{where} ORDER BY created_at, local_id"
        ).fetchall()
    return [_row(r) for r in rows]


def find(store: Store, name: str) -> BatchRow | None:
    """The batch whose provider id or local id is `name`."""
    with store.read() as con:
        row = con.execute(
            f"SELECT {_COLUMNS} FROM batches WHERE batch_id = ? OR local_id = ?", [name, name]
        ).fetchone()
    return _row(row) if row is not None else None


def pairs_of(store: Store, local_id: str) -> list[BatchPair]:
    """The pairs of one batch, in the order they were recorded."""
    with store.read() as con:
        rows = con.execute(
            "SELECT custom_id, cache_key, qid, doc_id, level, shown, truncated, query_truncated, "
            "outcome, kind FROM batch_pairs WHERE local_id = ?",
            [local_id],
        ).fetchall()
    return [
        BatchPair(c, k, q, d, lv, json.loads(s), bool(t), bool(qt), o, kd)
        for c, k, q, d, lv, s, t, qt, o, kd in rows
    ]


def collect(
    store: Store,
    local_id: str,
    labels: Sequence[Judgment],
    outcomes: Sequence[tuple[str, str, str | None]],
    progress: Progress,
) -> int | None:
    """Write a batch's labels, its pairs' outcomes (custom_id, outcome, kind) and its status,
    set `collected_at` and release its claims, in one transaction. None when it was already
    collected (by an earlier run, or another process just now): nothing is written then."""
    import pyarrow as pa

    with store.write() as con:
        row = con.execute(
            "UPDATE batches SET collected_at = ? WHERE local_id = ? AND collected_at IS NULL "
            "RETURNING batch_id",
            [utcnow(), local_id],
        ).fetchone()
        if row is None:
            return None
        written = insert_judgments_in(con, labels)
        table = pa.table(
            {
                "custom_id": pa.array([c for c, _, _ in outcomes], pa.string()),
                "outcome": pa.array([o for _, o, _ in outcomes], pa.string()),
                "kind": pa.array([k for _, _, k in outcomes], pa.string()),
            }
        )
        with registered(con, "_outcomes", table):
            con.execute(
                "UPDATE batch_pairs SET outcome = o.outcome, kind = o.kind FROM _outcomes o "
                "WHERE batch_pairs.local_id = ? AND batch_pairs.custom_id = o.custom_id",
                [local_id],
            )
        _progress_in(con, local_id, progress)
        claims.release_in(con, claims.new_holder("batch", str(row[0] or local_id)), None)
    return written


def failed_pairs(store: Store) -> list[tuple[str, str, str, str, str | None]]:
    """(local_id, qid, doc_id, level, kind) of every pair a collected batch left without an
    answer (error, missing) or with an unparsed one, oldest batch first."""
    with store.read() as con:
        rows = con.execute(
            "SELECT p.local_id, p.qid, p.doc_id, p.level, p.kind FROM batch_pairs p "
            "JOIN batches b USING (local_id) WHERE b.collected_at IS NOT NULL "
            "AND p.outcome IS NOT NULL AND p.outcome <> 'ok' ORDER BY b.created_at, p.local_id"
        ).fetchall()
    return [
        (str(a), str(b), str(c), str(d), None if k is None else str(k)) for a, b, c, d, k in rows
    ]
