"""The keyword options of `jp.Database`'s judge verbs, typed, and how they become the one frozen
spec a run is told (judge/options.py's `JudgeOptions`, which holds every default).

`db.judge(model, **options)` takes the options of `judgepool judge` as keywords: the TypedDicts
here name and type them (`Unpack`), grouped by what they are about, so that each verb takes
exactly the groups that apply to it; a keyword a verb does not take is refused with a
`UsageError` naming the ones it does (never silently ignored).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from judgepool.api.names import names_of
from judgepool.defaults import Level
from judgepool.errors import UsageError
from judgepool.judge.options import BATCH_POLL, JUDGE_DEFAULTS, Combine, Effort, JudgeOptions

__all__ = [
    "BATCH_POLL",
    "JUDGE_DEFAULTS",
    "BatchKeywords",
    "CalibrateKeywords",
    "Combine",
    "Effort",
    "JudgeKeywords",
    "JudgeOptions",
    "PromptKeywords",
    "judge_options",
]


class PoolKeywords(TypedDict, total=False):
    """Which holes: the pool of `runs` (default: all) at `depth` and `level`; `labeller`: whose
    judge labels count when finding holes; `all_queries`: also queries with no label yet."""

    depth: int
    runs: str | Sequence[str] | None
    level: Level
    labeller: str | None
    all_queries: bool


class RequestKeywords(TypedDict, total=False):
    """What each request is made of: the server (`api_base`), decoding (`temperature`,
    `max_tokens`, `reasoning_effort`: low | medium | high), the prompt `template` (a packaged
    name or a file), and the token budgets (`passage_tokens`, `query_tokens`; `max_chunks`
    shown of a document at the doc level)."""

    api_base: str | None
    temperature: float | None
    max_tokens: int | None
    reasoning_effort: Effort | None
    template: str | None
    passage_tokens: int
    query_tokens: int
    max_chunks: int


class CapKeywords(TypedDict, total=False):
    """When to stop: before spending more than `max_cost` USD or sending `max_calls` requests."""

    max_cost: float | None
    max_calls: int | None


class LoopKeywords(TypedDict, total=False):
    """How hard to push an online judge: calls in flight, seconds per call, retries per pair."""

    concurrency: int
    timeout: float
    retries: int


class CanaryKeywords(TypedDict, total=False):
    """Canaries: planted pairs of true grade 0, `canaries` per drawn query (0: none), up to
    `canary_queries` queries drawn with `canary_seed`; a kind graded >= 2 more often than
    `canary_threshold` marks the judge fooled."""

    canaries: int
    canary_queries: int
    canary_threshold: float
    canary_seed: int


class JuryKeywords(TypedDict, total=False):
    """Several judges: `models` (two or more) with their `api_bases` (one, or one per model),
    or `num_samples` answers of each model; `combine`: median | majority | mean."""

    models: Sequence[str]
    api_bases: Sequence[str]
    combine: Combine
    num_samples: int


class JudgeKeywords(
    PoolKeywords,
    RequestKeywords,
    CapKeywords,
    LoopKeywords,
    CanaryKeywords,
    JuryKeywords,
    total=False,
):
    """Every option of `db.judge` (those of `judgepool judge`)."""


class BatchKeywords(PoolKeywords, RequestKeywords, CapKeywords, total=False):
    """The options of `db.submit_batch`: a batch makes no calls of its own (no concurrency,
    timeout or retries) and has one judge."""


class CalibrateKeywords(RequestKeywords, CapKeywords, LoopKeywords, CanaryKeywords, total=False):
    """The options of `db.calibrate`: the pool's `depth` and `level` the sample is drawn from,
    and how the judge is asked, as for `db.judge`."""

    depth: int
    level: Level


class PromptKeywords(TypedDict, total=False):
    """The options of `db.render_prompt`: those of a judge run that shape its request."""

    template: str | None
    runs: str | Sequence[str] | None
    passage_tokens: int
    query_tokens: int
    max_chunks: int
    temperature: float | None
    max_tokens: int | None
    reasoning_effort: Effort | None


def keys_of(kind: type) -> frozenset[str]:
    """The keywords a TypedDict names (its own and those it inherits)."""
    return frozenset(getattr(kind, "__optional_keys__", ())) | frozenset(
        getattr(kind, "__required_keys__", ())
    )


def checked(what: str, kind: type, given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` with the sequences made tuples, after refusing a keyword `kind` does not name."""
    known = keys_of(kind)
    unknown = sorted(set(given) - known)
    if unknown:
        raise UsageError(
            f"unknown {what} option(s): {', '.join(unknown)}",
            f"use {', '.join(sorted(known))}",
            value=unknown,
        )
    values = dict(given)
    if "runs" in values:
        values["runs"] = tuple(names_of(values["runs"]))
    for name in ("models", "api_bases"):
        if name in values:
            values[name] = tuple(values[name])
    return values


def judge_options(
    what: str,
    kind: type,
    given: Mapping[str, Any],
    model: str | None,
    level: Level | None = None,
) -> JudgeOptions:
    """The spec a run is told: `model` (and `level`, where a method takes it as a parameter of
    its own) and the `given` keywords `kind` names; the rest default."""
    values = checked(what, kind, given)
    if level is not None:
        values["level"] = level
    return JudgeOptions(model=model, **values)
