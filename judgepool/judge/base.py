"""The judge port: what the labelling loop asks of any judge (an LLM, the offline judge, ...).

The loop (judge/loop.py) turns holes into `JudgeRequest`s, asks the judge's cache first, calls
`Judge.judge` for the rest with bounded concurrency, and writes each `JudgeAnswer` as a label with
provenance the moment it exists. A judge only has to say who it is (`labeller`, `describe`), what
makes two requests the same (`cache_key`, always content-based, never id-based), and how it
answers one request. `prepare` lets a judge do batch work first (the offline judge embeds every
passage and calibrates its thresholds there); an LLM judge leaves it empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from judgepool.pooling.store.connection import Store


@dataclass(frozen=True)
class ShownSpan:
    """One piece of text shown to the judge: which doc (chunk) and which characters of its text."""

    doc_id: str
    start: int
    end: int


@dataclass(frozen=True)
class JudgeRequest:
    """One hole to label, with exactly the text the judge will see.

    At the chunk level `passage` is the doc's text; at the doc level it is the best-ranked
    retrieved chunk(s) of the document for this query (`shown` records which, and which
    characters). `truncated` is set when the passage was cut to its token budget,
    `query_truncated` when the query was cut to its own.

    `purpose` is the stored labels' purpose (pooling/store/judgments.py PURPOSES): `label` for a
    hole, `canary` for a planted pair of known grade (judge/canaries.py), `calibration`; `about`
    says what such a pair is (kept in the label's provenance under the purpose's name).
    """

    qid: str
    doc_id: str
    level: str
    query: str
    passage: str
    shown: tuple[ShownSpan, ...]
    truncated: bool = False
    query_truncated: bool = False
    purpose: str = "label"
    about: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class JudgeAnswer:
    """What a judge said about one request.

    `status` is `ok` (a grade 0-3), `unparsed` (an answer with no single grade) or `error`
    (no usable answer: HTTP failure, timeout ...). `provenance` holds judge-specific details
    (latency breakdown, similarities, the neighbour used ...); the loop adds the common ones.
    """

    status: str
    grade: int | None
    raw_output: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    latency_s: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Estimate:
    """A dry run's forecast for some requests: tokens and cost (None when the price is unknown).

    `max_cost` is the worst case (every answer as long as the output cap allows, input counts
    with a margin); the loop reserves it before a call so that --max-cost is never exceeded.
    When a judge leaves it None, `cost` is used instead.
    """

    requests: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    max_cost: float | None = None


@runtime_checkable
class Judge(Protocol):
    """Anything that can grade (query, passage) pairs 0-3."""

    @property
    def labeller(self) -> str:
        """The labeller name stored with every label, e.g. `openai/gpt-4o-mini@umbrela-v1`."""
        ...

    def describe(self) -> dict[str, Any]:
        """Provenance shared by every label of this judge: model, template version and hash,
        decoding parameters, api_base host (never a key), method version."""
        ...

    def cache_key(self, request: JudgeRequest) -> str:
        """A hash of everything that determines the answer, built from content, never from ids."""
        ...

    def prepare(self, store: Store, requests: Sequence[JudgeRequest]) -> None:
        """Batch work before any `judge` call (may be a no-op)."""
        ...

    def estimate(self, requests: Sequence[JudgeRequest]) -> Estimate:
        """Forecast tokens and cost for `requests` (for --dry-run)."""
        ...

    async def judge(self, request: JudgeRequest) -> JudgeAnswer:
        """Grade one request. Transient failures may raise; the loop decides about retries."""
        ...

    # Optional, not part of the protocol: `async def aclose(self) -> None`. When a judge has it,
    # the loop awaits it at the end of its event loop (the LLM judge closes litellm's cached
    # HTTP clients there). And `def readiness(self) -> JudgeError | None`: what would stop a
    # real run before any call (the LLM judge: no key); a run raises it, a dry run only says it.
    # And an attribute `note: Callable[[str], None] | None`: the loop sets it before `prepare`
    # to the progress sink's `preparing` (when it has one and shows progress), for a long
    # preparation to say how far it is (the offline judge embeds every text there).


class TransientJudgeFailure(Exception):
    """A failure worth retrying (rate limit, 5xx, timeout, connection); the loop decides when.

    `kind` is one of `rate_limit`, `server`, `timeout`, `connection`; `retry_after` is the
    server's Retry-After in seconds when it sent one. `unanswered` is true when the request was
    sent and no reply was read (a timeout, an answer cut off, an unreadable body): the provider
    may have run it and billed it, so a cost cap charges it at its worst case. An HTTP error
    status that came back (429, 5xx) was not billed. `exhausted`, for a rate limit: whether the
    provider's rate-limit headers say a limit is used up (False: they say it is not, the 429 had
    another cause; None: no such header came).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        retry_after: float | None = None,
        unanswered: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.unanswered = kind in ("timeout", "connection") if unanswered is None else unanswered
        self.exhausted: bool | None = None


class RequestRejected(Exception):
    """A failure of this one request that a retry would not cure (the passage was refused by a
    content filter, the prompt exceeds the context window ...): labelled `error`, not retried.

    Failures that make every request fail (a bad key, an unknown model) are
    `judgepool.errors.JudgeError` instead: the loop stops on those.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
