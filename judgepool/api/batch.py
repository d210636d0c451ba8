"""The batch verbs: judge the holes through a provider's batch API (about half the online price,
answered within 24 h), as `jp.Database.submit_batch / batches / collect_batches / cancel_batch`
and `judgepool judge --batch | --batch-status | --batch-collect | --batch-cancel` both do it.

    sent = submit(store, JudgeOptions(model="openai/gpt-4o-mini"))   # BatchSubmission
    status(store)                                 # every batch, the open ones asked about first
    collected = collect(store)                    # BatchCollection: labels written, still open
    cancel(store, "batch_abc")                    # the provider stops it; collect what it did

The work is judge/batch/session.py's; these services add what both callers need (waiting after
a submission, the caps of a retry, progress) and never print: `BatchProgress.sent` is told what
was sent before a wait begins, and remarks made on the way go to `progress.note`.
"""

from __future__ import annotations

from judgepool.api.batch_results import BatchCollection, BatchSubmission
from judgepool.api.progress import Progress
from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.judge.batch.collect import Collection
from judgepool.judge.batch.submit import Submission
from judgepool.judge.options import BATCH_POLL, JudgeOptions
from judgepool.pooling.store.batches import BatchRow
from judgepool.pooling.store.connection import Store

__all__ = [
    "BatchCollection",
    "BatchProgress",
    "BatchRow",
    "BatchSubmission",
    "Collection",
    "Submission",
    "cancel",
    "collect",
    "status",
    "submit",
]


class BatchProgress(Progress):
    """`Progress` for batches: also told what a submission sent, before it waits for it."""

    def sent(self, submission: Submission) -> None:
        """The batches are sent (`submission.sent`); a wait for them begins next, if asked."""


def submit(
    store: Store,
    options: JudgeOptions,
    *,
    dry_run: bool = False,
    wait: bool = False,
    poll: float = BATCH_POLL,
    progress: BatchProgress | None = None,
) -> BatchSubmission:
    """Send the holes of the pool to the model's batch API: the same requests and cache keys as
    `judge`; pairs in the cache are labelled at once, pairs an open batch or a running judge
    holds are left to it. `dry_run`: what would be sent, with batch and online prices, nothing
    sent or written. `wait`: then wait for the batches and collect them (`.collection`)."""
    from judgepool.judge.batch import session

    if options.is_jury:
        raise UsageError(
            remedy(
                "{} sends one model's requests once each; a jury ({} given twice, {}) is judged "
                "online",
                Param("submit_batch", None),
                Param("model", None),
                Param("num_samples", None),
            ),
            remedy(
                "judge the jury online ({}), or send a batch with a single {}",
                Call.of("judge"),
                Param("model", None),
            ),
        )
    shown = progress or BatchProgress()
    if dry_run:
        return BatchSubmission(session.dry_run(store, options))
    found = session.submit(store, options, notify=shown.note)
    shown.sent(found)
    collection = None
    if wait and found.sent:
        names = [r.local_id for r in found.sent]
        collection = collect(
            store, api_base=options.api_base, wait=True, poll=poll, names=names, progress=shown
        )
    return BatchSubmission(found, found.problem(options), collection)


def status(store: Store, *, api_base: str | None = None, refresh: bool = True) -> list[BatchRow]:
    """Every batch of the database, oldest first; with `refresh`, the provider is asked about
    the open ones first (and about any a killed process created, which are adopted)."""
    from judgepool.judge.batch import session

    return session.status(store, api_base, refresh)


def collect(
    store: Store,
    *,
    api_base: str | None = None,
    retry_failed: bool = False,
    wait: bool = False,
    poll: float = BATCH_POLL,
    names: list[str] | None = None,
    max_cost: float | None = None,
    max_calls: int | None = None,
    progress: Progress | None = None,
) -> BatchCollection:
    """Write the labels of every finished batch (of those `names`d): a second call writes
    nothing; batches still running are left (`.open`, with when they are due), or waited for
    with `wait`. `retry_failed` sends the pairs that failed (error, expired, unparsed) again as
    new batches, capped by `max_cost` / `max_calls`."""
    from judgepool.judge.batch import session

    shown = progress or Progress()
    caps = JudgeOptions(max_cost=max_cost, max_calls=max_calls)  # a retry's caps
    return BatchCollection(
        session.collect(
            store,
            api_base,
            retry_failed,
            wait,
            poll,
            names,
            waiting=shown.waiting,
            caps=caps,
            notify=shown.note,
        )
    )


def cancel(store: Store, batch_id: str, *, api_base: str | None = None) -> BatchRow | None:
    """Ask the provider to stop a batch (its id, or judgepool's local id); what it answered
    first is collected by `collect`. Returns its row as recorded now (None when it had never
    been created and was dropped: its pairs are holes again)."""
    from judgepool.judge.batch import session

    return session.cancel(store, batch_id, api_base)
