"""What a judge run is told: `JudgeOptions`, the one frozen spec of the options of `judgepool
judge` (and of `calibrate` and a batch), with their defaults. A module of its own, importing
nothing of the judge, so that every part of a run (judge/run/, judge/batch/, judge/requests.py)
reads it without importing the others; judge/registry.py draws a judge's constructor options
from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judgepool.defaults import DEPTH, LEVEL, Level
from judgepool.pooling.pool import PoolSpec
from judgepool.pooling.store.judgments import check_level

#: A request's token budgets (a longer passage or query is cut, and flagged so) and, at the doc
#: level, how many retrieved chunks of a document it shows.
DEFAULT_PASSAGE_TOKENS = 1024
DEFAULT_QUERY_TOKENS = 1024
DEFAULT_MAX_CHUNKS = 3
#: Seconds between two looks at open batches while waiting for them.
BATCH_POLL = 30.0
#: How several judges' grades become one (judge/jury.py).
Combine = Literal["median", "majority", "mean"]
#: The reasoning effort asked of a reasoning model.
Effort = Literal["low", "medium", "high"]


@dataclass(frozen=True)
class JudgeOptions:
    """Everything a judge run is told (the options of `judgepool judge`, with their defaults).

    `model` None: the offline judge unless a provider key is set (judge/registry.py). Several
    judges (judge/jury.py): `models` (two or more), `api_bases` aligned with them (or
    `api_base` for all), or `num_samples` K samples of each model at a temperature > 0.
    Canaries (judge/canaries.py): `canaries` per drawn query (0: none), `canary_queries` drawn
    (default: as many as make about 10 % of the holes, at least 12 and at most 100 canaries),
    `canary_threshold` on a kind's rate graded >= 2, `canary_seed`."""

    model: str | None = None
    api_base: str | None = None
    depth: int = DEPTH
    runs: tuple[str, ...] = ()
    level: Level = LEVEL
    labeller: str | None = None  # whose labels count when finding holes (`--judge`)
    all_queries: bool = False
    concurrency: int = 8
    max_cost: float | None = None
    max_calls: int | None = None
    timeout: float = 60.0
    retries: int = 4
    temperature: float | None = None
    max_tokens: int | None = None
    passage_tokens: int = DEFAULT_PASSAGE_TOKENS
    query_tokens: int = DEFAULT_QUERY_TOKENS
    max_chunks: int = DEFAULT_MAX_CHUNKS
    template: str | None = None
    reasoning_effort: Effort | None = None
    models: tuple[str, ...] = ()
    api_bases: tuple[str, ...] = ()
    combine: Combine = "median"
    num_samples: int = 1
    canaries: int = 2
    canary_queries: int | None = None  # None: about 10 % of the holes (judge/canaries.py)
    canary_threshold: float = 0.10
    canary_seed: int = 20240611

    @property
    def is_jury(self) -> bool:
        """Several judges label the holes (several models, or several samples of one)."""
        return len(self.models) > 1 or self.num_samples > 1

    def pool_spec(self, labeller: str | None) -> PoolSpec:
        """The pool these options judge, counting `labeller`'s labels (a jury counts its own)."""
        return PoolSpec(
            depth=self.depth,
            runs=self.runs,
            level=check_level(self.level),
            labeller=labeller,
            all_queries=self.all_queries,
        )


#: The defaults, for a command line's options to show (defined once, above).
JUDGE_DEFAULTS = JudgeOptions()
