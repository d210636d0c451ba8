"""A run's plan: the holes of the pool -> the judge's requests, and the forecast of a dry run.

    plan = plan_holes(store, depth=10, runs=["splade"])          # holes -> requests
    judge = make_judge("openai/gpt-4o-mini")                      # judge.registry
    with JudgeCache() as cache:
        forecast(store, judge, plan, cache)                       # a dry run: no call made
        stats = backfill(store, judge, plan, LoopOptions(max_cost=5), cache)   # the bare loop

A whole run (the members, the canaries, a jury, the record) is judge/run/members.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.errors import JudgeError
from judgepool.judge.base import Estimate, Judge
from judgepool.judge.cache import JudgeCache, usable_entry
from judgepool.judge.loop import LabellingLoop, LoopOptions, LoopStats, ProgressSink
from judgepool.judge.options import (
    DEFAULT_MAX_CHUNKS,
    DEFAULT_PASSAGE_TOKENS,
    DEFAULT_QUERY_TOKENS,
)
from judgepool.judge.requests import Built, build_requests
from judgepool.pooling.pool import Hole, PoolSpec, list_holes
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, label_mark


@dataclass(frozen=True)
class Plan:
    """The holes of a pool and the requests built for them; `label_mark` is the highest
    judgment id when the holes were listed (what another judge writes later is above it)."""

    level: str
    depth: int
    runs: tuple[str, ...]
    holes: list[Hole]
    built: Built
    passage_tokens: int
    label_mark: int = 0


@dataclass(frozen=True)
class Forecast:
    """What a run would do: pairs from the cache, calls to make, tokens and cost."""

    holes: int
    no_text: int
    requests: int
    unique: int
    cached_pairs: int
    cached_unique: int
    truncated: int
    estimate: Estimate
    queries_truncated: int = 0
    readiness: JudgeError | None = None  # what a real run would stop on (no key)

    @property
    def calls(self) -> int:
        """Calls a run would make, before retries."""
        return self.unique - self.cached_unique


def plan_holes(
    store: Store,
    depth: int = 10,
    runs: Sequence[str] = (),
    level: str = "chunk",
    labeller: str | None = None,
    all_queries: bool = False,
    passage_tokens: int = DEFAULT_PASSAGE_TOKENS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
    query_tokens: int = DEFAULT_QUERY_TOKENS,
) -> Plan:
    """The holes (as `judgepool pool --list` shows them) and the judge requests for them."""
    mark = label_mark(store)  # before listing: a label written after it is above it
    chosen = check_level(level)
    spec = PoolSpec(
        depth=depth, runs=tuple(runs), level=chosen, labeller=labeller, all_queries=all_queries
    )
    holes = list_holes(store, spec)
    built = build_requests(
        store, holes, level, list(runs), passage_tokens, max_chunks, query_tokens
    )
    return Plan(level, depth, tuple(runs), holes, built, passage_tokens, mark)


def forecast(store: Store, judge: Judge, plan: Plan, cache: JudgeCache) -> Forecast:
    """A dry run: cache hits, distinct texts to send, estimated tokens and cost. No call, and
    no key needed: what a real run would lack is in `readiness`."""
    requests = plan.built.requests
    readiness = getattr(judge, "readiness", None)  # optional hook (see judge.base)
    problem = readiness() if readiness is not None and requests else None
    if requests:
        judge.prepare(store, requests)
    first_of: dict[str, int] = {}
    pairs_of: dict[str, int] = {}
    for index, request in enumerate(requests):
        key = judge.cache_key(request)
        first_of.setdefault(key, index)
        pairs_of[key] = pairs_of.get(key, 0) + 1
    hits = {k for k, v in cache.get_many(list(first_of)).items() if usable_entry(v)}
    to_call = [requests[i] for k, i in first_of.items() if k not in hits]
    return Forecast(
        holes=len(plan.holes),
        no_text=len(plan.built.skipped),
        requests=len(requests),
        unique=len(first_of),
        cached_pairs=sum(pairs_of[k] for k in hits),
        cached_unique=len(hits),
        truncated=plan.built.truncated,
        estimate=judge.estimate(to_call),
        queries_truncated=plan.built.queries_truncated,
        readiness=problem,
    )


def backfill(
    store: Store,
    judge: Judge,
    plan: Plan,
    options: LoopOptions,
    cache: JudgeCache,
    progress: ProgressSink | None = None,
) -> LoopStats:
    """Label every hole of the plan (see judge/loop.py); returns what happened."""
    loop = LabellingLoop(store, judge, cache, options, progress)
    return loop.run(plan.built.requests, plan.built.skipped, plan.label_mark)
