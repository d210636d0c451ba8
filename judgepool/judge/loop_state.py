"""The labelling loop's settings and counters, apart from the loop itself so that the parts it
drives (judge/calls.py) can be typed against them without importing the loop."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from judgepool.errors import JudgepoolError


@dataclass(frozen=True)
class LoopOptions:
    """How hard to push the judge, and when to stop. `lease`: seconds a claim lasts unless
    renewed (None: $JUDGEPOOL_CLAIM_LEASE, else 60). `purpose`: what the labels are for
    (`label`; `calibration` when re-judging pairs people labelled: never effective)."""

    concurrency: int = 8
    max_cost: float | None = None
    max_calls: int | None = None
    retries: int = 4
    rate_limit_retries: int = 20
    unparsed_retries: int = 1
    timeout: float = 60.0
    backoff_base: float = 0.5
    flush_every: float = 0.5
    flush_size: int = 32
    lease: float | None = None
    purpose: str = "label"


@dataclass
class LoopStats:
    """Live counters (read by the progress bar) and, at the end, the run's summary.

    `outcomes` counts pairs by final outcome: ok, unparsed, error, no_text, by_other_judge
    (another judge labelled it meanwhile), in_batch (an open provider batch holds it: `batches`
    names them), not_attempted (a cap or a stop came first).
    `cached` counts pairs answered from the cache, `shared` pairs whose text another pair of this
    run already paid for, `taken_over` pairs claimed by a judge that died (its lease ran out).
    `failures` counts failed pairs by why (a failure kind, or `unparsed`), with one message each
    in `failure_examples`. `cost` is what answers cost; `charged` the worst cases of the
    `unanswered` requests (sent, nothing readable came back). `transactions` counts the writer's
    database transactions (labels, claims and renewals together; judge/writer.py). `prepare_s`
    is the judge's preparation (importing litellm, loading a model), `elapsed_s` the labelling
    after it.
    """

    total: int
    done: int = 0
    cached: int = 0
    shared: int = 0
    calls: int = 0
    rate_limited: int = 0
    retried: int = 0
    cost: float = 0.0
    charged: float = 0.0
    unanswered: int = 0
    unpriced_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    labels_written: int = 0
    transactions: int = 0
    taken_over: int = 0
    other_judges: int = 0
    batches: list[str] = field(default_factory=list)
    grades: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    failure_examples: dict[str, str] = field(default_factory=dict)
    stopped: str | None = None
    fatal: JudgepoolError | None = None
    prepare_s: float = 0.0
    elapsed_s: float = 0.0

    @property
    def failed(self) -> int:
        return self.outcomes["error"] + self.outcomes["unparsed"]


class ProgressSink(Protocol):
    """Something that shows progress (judge/progress.py); told after every finished pair, and
    given remarks for the person watching (a wait for another judge's claims)."""

    def update(self, stats: LoopStats, advanced: int) -> None: ...

    def note(self, message: str) -> None: ...

    def close(self) -> None: ...
