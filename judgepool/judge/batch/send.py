"""Sending recorded batches: upload, create, record; and finding the ones a crash left unrecorded.

Each batch is recorded (pooling/store/batches.py) before anything is sent, then:

1. its input file is uploaded and the file id recorded;
2. the batch is created with `{"judgepool_intent": local_id, "judgepool_file": sha256}` as its
   metadata, and the provider's batch id recorded (its pairs' claims move to it).

A process killed anywhere in between leaves a row in status `submitting` whose submitter is gone.
The next `judge --batch` (`recover`) looks for it in the provider's batch list by its local id:
found, it is recorded and nothing is sent again; not found, it was never created, so the row is
dropped and its pairs are planned again, and their file (named by its content hash) is looked
for among the provider's files before it is uploaded again. No batch is ever created twice for
the same requests, and a file is uploaded again only when its upload's answer was lost.
`--batch-status` and `--batch-collect` only adopt (they never send).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from judgepool.judge.batch.provider import BatchClient, BatchProviderError, BatchStatus
from judgepool.judge.batch.settings import restored
from judgepool.pooling.store import batches, claims
from judgepool.pooling.store.connection import Store, utcnow

if TYPE_CHECKING:
    from judgepool.judge.batch.requests import BatchFile

Notify = Callable[[str], None]
#: A `submitting` batch untouched for this long is taken for abandoned, whoever sent it.
STALE = timedelta(hours=1)
#: Failures of a create that prove the batch was not created (anything else: it may have been).
NOT_CREATED = frozenset(
    {"rate_limit", "connection_refused", "auth", "not_found", "rejected", "quota", "unsupported"}
)


def progress_of(batch: BatchStatus) -> batches.Progress:
    return batches.Progress(
        status=batch.status,
        input_file_id=batch.input_file_id or None,
        output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        completed=batch.counts.completed,
        failed=batch.counts.failed,
        error="; ".join(batch.errors)[:500] or None,
    )


def created_at(batch: BatchStatus) -> datetime | None:
    if batch.created_at is None:
        return None
    return datetime.fromtimestamp(batch.created_at, UTC).replace(tzinfo=None)


def orphaned(row: batches.BatchRow) -> bool:
    """A batch recorded but not created whose sender is gone (or silent for an hour)."""
    if row.status != batches.SUBMITTING:
        return False
    return claims.holder_is_dead(row.submitter) or utcnow() - row.updated_at > STALE


class Clients:
    """Batch clients by (model, api_base), made when first needed, closed together."""

    def __init__(self, api_base: str | None = None) -> None:
        self.api_base = api_base  # --api-base, when given: it replaces the stored ones
        self.made: dict[tuple[str, str | None], BatchClient] = {}

    def get(self, model: str, api_base: str | None) -> BatchClient:
        key = (model, api_base)
        if key not in self.made:
            self.made[key] = BatchClient(model, api_base=api_base)
        return self.made[key]

    def of(self, row: batches.BatchRow) -> BatchClient:
        settings = restored(row.settings, self.api_base, f"batch {row.name}")
        return self.get(row.model, settings.api_base)

    async def aclose(self) -> None:
        if self.made:
            await next(iter(self.made.values())).aclose()  # closes every litellm client


async def recover(
    store: Store, clients: Clients, rows: list[batches.BatchRow], adopt_only: bool
) -> tuple[list[batches.BatchRow], dict[str, str | None]]:
    """Adopt the orphaned batches the provider has; unless `adopt_only`, drop the others and
    return their files (sha256 -> the recorded file id, or None: maybe uploaded, look for it)."""
    adopted: list[batches.BatchRow] = []
    files: dict[str, str | None] = {}
    for row in rows:
        if not orphaned(row):
            continue
        client = clients.of(row)
        found = await client.find("judgepool_intent", row.local_id)
        if found:
            batch = found[0]
            batches.record_created(
                store, row.local_id, batch.id, progress_of(batch), created_at(batch)
            )
            again = batches.find(store, row.local_id)
            if again is not None:
                adopted.append(again)
        elif not adopt_only:
            batches.drop(store, row.local_id)
            files[row.file_sha256] = row.input_file_id
    return adopted, files


async def _input_file(
    client: BatchClient,
    store: Store,
    new: batches.NewBatch,
    file: BatchFile,
    known: dict[str, str | None],
    notify: Notify | None,
    fresh: bool = False,
) -> tuple[str, bool]:
    """The input file's id at the provider (found again, or uploaded now) and whether it was
    found again rather than uploaded."""
    if not fresh and file.sha256 in known:
        file_id = known[file.sha256] or await client.find_file(file.name, file.size)
        if file_id is not None:
            batches.record_uploaded(store, new.local_id, file_id)
            return file_id, True
    if notify is not None:
        notify(f"uploading {file.name}: {len(file.entries):,} requests, {file.size:,} bytes")
    uploaded = await client.upload(file.name, file.data())
    batches.record_uploaded(store, new.local_id, uploaded.id)
    return uploaded.id, False


async def send(
    store: Store,
    client: BatchClient,
    made: list[batches.NewBatch],
    files: list[BatchFile],
    known: dict[str, str | None],
    notify: Notify | None = None,
) -> list[batches.BatchRow]:
    """Upload and create each recorded batch (see the module docstring); returns them as
    recorded. On a failure, batches certainly not created are dropped (their pairs are holes
    again) and the error is raised; one that may have been created is kept for `recover`."""
    done: set[str] = set()
    uncertain: str | None = None
    try:
        for new, file in zip(made, files, strict=True):
            file_id, reused = await _input_file(client, store, new, file, known, notify)
            metadata = {"judgepool_intent": new.local_id, "judgepool_file": new.file_sha256}
            uncertain = new.local_id
            try:
                batch = await client.create(file_id, metadata=metadata)
            except BatchProviderError as err:
                if err.kind in NOT_CREATED:
                    uncertain = None
                if not (reused and err.kind == "not_found"):
                    raise
                # the file found again is gone (deleted, expired): upload it and try once more
                file_id, _ = await _input_file(client, store, new, file, known, notify, True)
                uncertain = new.local_id
                batch = await client.create(file_id, metadata=metadata)
            batches.record_created(
                store, new.local_id, batch.id, progress_of(batch), created_at(batch)
            )
            uncertain = None
            done.add(new.local_id)
    except BatchProviderError as err:
        if uncertain is not None:
            batches.record_error(store, uncertain, str(err))
            err.hint = (
                "run the same command again: it first looks for this batch in the provider's "
                "batch list (by the id judgepool gave it) and sends it only if it is not there"
            )
        raise
    finally:
        for new in made:
            if new.local_id not in done and new.local_id != uncertain:
                batches.drop(store, new.local_id)
    rows = [batches.find(store, new.local_id) for new in made]
    return [row for row in rows if row is not None]
