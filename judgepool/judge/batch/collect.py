"""`judgepool judge --batch-collect`: finished batches -> labels with provenance, cache entries.

For each batch not collected yet: ask the provider how it stands (unless it had finished at the
last look); one still running is left alone and said when it is due. A finished one (completed,
expired, cancelled, failed) has its output and error files downloaded and read
(judge/batch/parse.py, the online judge's parser); then

1. every `ok` answer goes into the judge cache (a later online run of the same texts, here or
   in another database, costs nothing);
2. its labels, every pair's outcome, `collected_at` and the release of its claims are written
   in one transaction (pooling/batches.collect): a collection is whole or not at all, and a
   second one writes nothing. A process killed before that write leaves the batch uncollected:
   the next collection downloads the files again and writes every label once.

`ok` and `unparsed` answers become labels through the same LabelMaker as online answers (cost at
batch price; provenance: the batch id, custom_id, request id, price basis); failed lines (an
error, a non-200 status), lines an expired or failed batch never answered, and lines no file
holds become `error` labels with the reason: counted holes, never 0. A custom_id answered twice
with different grades is such a hole too (`conflicting_answers`); lines for custom_ids never
sent, repeats and unreadable lines are counted and said. Lines a cancelled batch
did not reach get no label (the cancel was asked for); their pairs are holes again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgepool.errors import Call, HolesFailedError, JudgeError, NothingLabelledError, remedy
from judgepool.judge.base import JudgeRequest, ShownSpan
from judgepool.judge.batch.parse import collect as read_outputs
from judgepool.judge.batch.support import batch_rates
from judgepool.judge.cache import CACHE_FAULTS, JudgeCache
from judgepool.judge.provenance import LabelMaker, now_iso
from judgepool.pooling.store import batches
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment

if TYPE_CHECKING:
    from judgepool.judge.batch.provider import BatchClient
    from judgepool.judge.batch.submit import Submission
    from judgepool.pooling.pool import PoolSummary

#: Outcome kinds that are not failures: the user cancelled the batch before it got there.
CANCELLED = "batch_cancelled"


@dataclass
class Collection:
    """What a collection did; pair counts unless said otherwise.

    `outcomes`: ok, unparsed, error (labels written), cancelled (no label: holes again);
    `failures` counts failed pairs by kind (http_500, batch_expired, missing, unparsed ...) with
    one message each in `failure_examples`; `lines` counts request lines by outcome."""

    collected: list[batches.BatchRow] = field(default_factory=list)
    open: list[batches.BatchRow] = field(default_factory=list)
    unsent: list[batches.BatchRow] = field(default_factory=list)  # recorded, not created
    adopted: list[batches.BatchRow] = field(default_factory=list)  # found after a crash
    outcomes: Counter[str] = field(default_factory=Counter)
    grades: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    failure_examples: dict[str, str] = field(default_factory=dict)
    lines: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    unpriced: int = 0  # answers whose cost is unknown
    tokens_in: int = 0
    tokens_out: int = 0
    labels_written: int = 0
    unreadable: int = 0  # output lines that were not JSON or named no custom_id
    unknown: list[str] = field(default_factory=list)  # custom_ids of lines we never sent
    repeated: int = 0  # lines beyond the first for a custom_id (the same grade, or a conflict)
    conflicts: int = 0  # custom_ids answered with different grades: their pairs stay holes
    cache_error: JudgeError | None = None
    retried: list[Submission] = field(default_factory=list)
    judged: list[tuple[PoolSummary, PoolSummary]] = field(default_factory=list)  # before, after

    @property
    def failed(self) -> int:
        return self.outcomes["error"] + self.outcomes["unparsed"]

    def problem(self) -> JudgeError | None:
        """How the collection fell short: the cache failed (1), some pairs failed (4), or all
        of them (5); None when every collected pair got a grade."""
        if self.cache_error is not None:
            return self.cache_error
        if not self.failed:
            return None
        why = "; ".join(f"{n} {kind}" for kind, n in self.failures.most_common())
        hint = remedy(
            "send them again as a new batch with: {} (or judge them online: {})",
            Call.of("collect_batches", retry_failed=True),
            Call.of("judge"),
        )
        if self.outcomes["ok"] == 0:
            return NothingLabelledError(
                f"nothing was labelled: all {self.failed} pairs collected failed ({why})", hint
            )
        return HolesFailedError(
            f"{self.failed} of {self.failed + self.outcomes['ok']} pairs collected failed and "
            f"are still holes ({why})",
            hint,
        )


def _requests(pairs: list[batches.BatchPair]) -> dict[str, tuple[str, list[JudgeRequest]]]:
    """custom_id -> (cache key, the pairs' requests as labels need them: no texts)."""
    found: dict[str, tuple[str, list[JudgeRequest]]] = {}
    for p in pairs:
        shown = tuple(ShownSpan(s["doc_id"], s["start"], s["end"]) for s in p.shown)
        request = JudgeRequest(
            p.qid, p.doc_id, p.level, "", "", shown, p.truncated, p.query_truncated
        )
        found.setdefault(p.custom_id, (p.cache_key, []))[1].append(request)
    return found


async def collect_one(
    store: Store, client: BatchClient, row: batches.BatchRow, result: Collection
) -> None:
    """Download, read, cache and write one finished batch (see the module docstring)."""
    wanted = _requests(batches.pairs_of(store, row.local_id))
    files = [await client.content(f) for f in (row.output_file_id, row.error_file_id) if f]
    read = read_outputs(list(wanted), files, batch_rates(row.model), row.batch_id)
    del files
    maker = LabelMaker(row.labeller, row.judge)
    judged_at = now_iso()
    labels: list[Judgment] = []
    outcomes: list[tuple[str, str, str | None]] = []
    cache_entries = []
    pairs: Counter[str] = Counter()
    grades: Counter[int] = Counter()
    failures: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for custom_id, outcome in read.outcomes.items():
        key, requests = wanted[custom_id]
        answer = outcome.answer
        if answer is not None:
            if answer.status == "ok":
                cache_entries.append((key, maker.cache_entry(answer, judged_at)))
                grades[answer.grade or 0] += len(requests)
            else:
                failures["unparsed"] += len(requests)
                examples.setdefault(
                    "unparsed",
                    "unparsed (the answer had no single grade 0-3): "
                    f"{answer.provenance.get('parse_problem') or 'no grade'}",
                )
            labels += maker.answered(requests, key, answer, 1, judged_at)
            pairs[answer.status] += len(requests)
            outcomes.append(
                (custom_id, answer.status, None if answer.status == "ok" else "unparsed")
            )
            continue
        kind = outcome.kind or "error"
        message = outcome.message or ""
        if kind == "missing" and row.status in ("expired", "cancelled", "failed"):
            kind = f"batch_{row.status}"
            message = (
                row.last_error
                if row.status == "failed" and row.last_error
                else f"the batch was {row.status} before this request was answered"
            )
        outcomes.append((custom_id, outcome.status, kind))
        if kind == CANCELLED:
            pairs["cancelled"] += len(requests)
            continue
        where = f" (batch {row.batch_id}, {custom_id})"
        labels += maker.failed(requests, key, kind, message + where, 1)
        pairs["error"] += len(requests)
        failures[kind] += len(requests)
        examples.setdefault(kind, f"{kind}: {message}")
    if cache_entries:
        try:
            with JudgeCache() as cache:
                cache.put_many(cache_entries)
        except (JudgeError, *CACHE_FAULTS) as err:  # the labels still go to the database
            result.cache_error = JudgeError(
                f"the judge cache failed while storing the answers of batch {row.name}: {err}; "
                "they were written to the database all the same",
                "free space on the cache's disk or make it writable (or point "
                "JUDGEPOOL_CACHE_DIR elsewhere): later runs then find these answers there",
            )
    progress = batches.Progress(row.status, completed=row.completed, failed=row.failed)
    written = batches.collect(store, row.local_id, labels, outcomes, progress)
    if written is None:  # another collection was first: it counted them
        return
    result.labels_written += written
    result.outcomes.update(pairs)
    result.grades.update(grades)
    result.failures.update(failures)
    for kind, text in examples.items():
        result.failure_examples.setdefault(kind, text)
    result.lines.update(read.counts())
    result.unreadable += read.malformed
    result.unknown += read.unknown
    result.repeated += read.duplicates
    result.conflicts += read.conflicts
    for label in labels:
        if label.status in ("ok", "unparsed") and "cache" not in label.provenance:
            if label.cost is None:
                result.unpriced += 1
            else:
                result.cost += label.cost
            result.tokens_in += label.tokens_in or 0
            result.tokens_out += label.tokens_out or 0
    again = batches.find(store, row.local_id)
    result.collected.append(again or row)
