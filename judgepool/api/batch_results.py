"""What the library's batch calls return: a submission, a collection, the batches as a table.

As in results.py, each result keeps the object the work produced (`.result`, what the CLI prints
from) and shows its tables as polars DataFrames. A value that does not exist (a cost the price
map does not know) is null, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from judgepool.errors import JudgepoolError
    from judgepool.judge.batch.collect import Collection
    from judgepool.judge.batch.submit import Submission
    from judgepool.pooling.store.batches import BatchRow

BATCH_SCHEMA: dict[str, str] = {
    "batch_id": "String",
    "local_id": "String",
    "status": "String",
    "model": "String",
    "labeller": "String",
    "requests": "Int64",
    "completed": "Int64",
    "failed": "Int64",
    "pairs": "Int64",
    "created_at": "Datetime",
    "due": "Datetime",
    "collected_at": "Datetime",
    "last_error": "String",
}


def batch_frame(rows: list[BatchRow]) -> pl.DataFrame:
    """One row per batch (the columns of BATCH_SCHEMA); times in UTC."""
    import polars as pl

    schema = {name: getattr(pl, kind) for name, kind in BATCH_SCHEMA.items()}
    data = [
        {
            "batch_id": r.batch_id,
            "local_id": r.local_id,
            "status": r.status,
            "model": r.model,
            "labeller": r.labeller,
            "requests": r.requests,
            "completed": r.completed,
            "failed": r.failed,
            "pairs": r.pairs,
            "created_at": r.provider_created_at or r.created_at,
            "due": r.due,
            "collected_at": r.collected_at,
            "last_error": r.last_error,
        }
        for r in rows
    ]
    return pl.DataFrame(data, schema=schema, orient="row")


@dataclass(frozen=True)
class BatchCollection:
    """What `collect_batches` wrote: pairs by outcome and grade, cost, batches still open."""

    result: Collection

    @property
    def outcomes(self) -> dict[str, int]:
        """Pairs by outcome: ok, unparsed, error (labels written), cancelled (holes again)."""
        return dict(self.result.outcomes)

    @property
    def grades(self) -> dict[int, int]:
        return dict(self.result.grades)

    @property
    def failures(self) -> dict[str, int]:
        """Failed pairs by why (http_500, batch_expired, missing, unparsed ...)."""
        return dict(self.result.failures)

    @property
    def odd_lines(self) -> dict[str, int]:
        """Output lines that were not one answer per request sent: `unreadable` (not JSON, no
        custom_id), `never_sent` (a custom_id no batch sent: ignored), `repeated` (a request
        answered again) and `conflicting` (requests answered with different grades: their
        pairs stay holes, `failures["conflicting_answers"]`)."""
        found = self.result
        return {
            "unreadable": found.unreadable,
            "never_sent": len(found.unknown),
            "repeated": found.repeated,
            "conflicting": found.conflicts,
        }

    @property
    def cost(self) -> float | None:
        """USD of the answers collected, at batch price; None when some answer's price is
        unknown (`result.unpriced` counts them, `result.cost` sums the others)."""
        return None if self.result.unpriced else self.result.cost

    @property
    def problem(self) -> JudgepoolError | None:
        """Pairs that failed (the CLI's exit code 4, or 5 when nothing was labelled)."""
        return self.result.problem()

    @cached_property
    def collected(self) -> pl.DataFrame:
        """The batches collected by this call."""
        return batch_frame(self.result.collected)

    @cached_property
    def open(self) -> pl.DataFrame:
        """The batches still running (nothing collected from them); `due` says by when."""
        return batch_frame(self.result.open)

    @cached_property
    def judged(self) -> pl.DataFrame:
        """One row per run of the batches' pools: run, judged_before, judged_after, holes_left."""
        import polars as pl

        rows: list[dict[str, Any]] = [
            {
                "run": b.run,
                "judged_before": b.judged,
                "judged_after": a.judged,
                "holes_left": a.holes,
            }
            for before, after in self.result.judged
            for b, a in zip(before.runs, after.runs, strict=True)
        ]
        return pl.DataFrame(
            rows,
            schema={
                "run": pl.String,
                "judged_before": pl.Float64,
                "judged_after": pl.Float64,
                "holes_left": pl.Int64,
            },
            orient="row",
        )


@dataclass(frozen=True)
class BatchSubmission:
    """What `submit_batch` sent (or, as a dry run, would send), and its collection when it
    waited."""

    result: Submission
    problem: JudgepoolError | None = None  # a cap that left pairs out (the CLI's exit code 6)
    collection: BatchCollection | None = None  # with wait=True

    @property
    def dry_run(self) -> bool:
        return self.result.dry_run

    @property
    def pairs(self) -> int:
        """Pairs sent (or to send) in batches."""
        return self.result.pairs

    @property
    def requests(self) -> int:
        """Request lines sent (one per distinct text)."""
        return self.result.lines

    @property
    def cost(self) -> dict[str, float | None]:
        """Estimated USD of what was sent: at batch price, its worst case, and online."""
        found = self.result
        return {
            "batch": found.batch_cost,
            "batch_worst_case": found.worst_cost,
            "online": found.online_cost,
        }

    @cached_property
    def batches(self) -> pl.DataFrame:
        """The batches sent (their ids, to check on them or cancel one)."""
        return batch_frame(self.result.sent)
