"""What a judge run is told (the options of `judgepool judge`) and the judge constructor's
options drawn from it: a module of its own so that judge/session.py and judge/panel.py (a jury's
members, the canaries) both read it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgepool.errors import Param, UsageError, remedy

_LLM_ONLY = ("api_base", "temperature", "max_tokens", "template", "reasoning_effort")


@dataclass(frozen=True)
class JudgeSettings:
    """Everything a judge run is told (the options of `judgepool judge`, with their defaults)."""

    model: str | None = None
    api_base: str | None = None
    depth: int = 10
    runs: tuple[str, ...] = ()
    level: str = "chunk"
    labeller: str | None = None  # whose labels count when finding holes (`--judge`)
    all_queries: bool = False
    concurrency: int = 8
    max_cost: float | None = None
    max_calls: int | None = None
    timeout: float = 60.0
    retries: int = 4
    temperature: float | None = None
    max_tokens: int | None = None
    passage_tokens: int = 1024
    query_tokens: int = 1024
    max_chunks: int = 3
    template: str | None = None
    reasoning_effort: str | None = None  # low | medium | high (reasoning models)
    # Several judges (judge/jury.py): every model of a jury (two or more), `api_bases` aligned
    # with them (or `api_base` for all); K samples of each model at a temperature > 0.
    models: tuple[str, ...] = ()
    api_bases: tuple[str, ...] = ()
    combine: str = "median"
    num_samples: int = 1
    # Canaries (judge/canaries.py): per drawn query (0: none), queries drawn, the threshold on a
    # kind's false-positive rate, the seed.
    canaries: int = 2
    canary_queries: int = 50
    canary_threshold: float = 0.10
    canary_seed: int = 20240611


def judge_options(model: str, settings: JudgeSettings) -> dict[str, Any]:
    """Constructor options for the chosen judge; LLM options given to the offline judge are an
    error rather than silently ignored."""
    from judgepool.judge.registry import is_offline

    given = {
        "api_base": settings.api_base,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "template": settings.template,
        "timeout": settings.timeout,
        "reasoning_effort": settings.reasoning_effort,
    }
    chosen = {k: v for k, v in given.items() if v is not None}
    if is_offline(model):
        wrong = [k for k in chosen if k in _LLM_ONLY]
        if wrong:
            named = ", ".join("{}" for _ in wrong)
            parts = [Param(k, None) for k in wrong]
            raise UsageError(
                remedy(f"{named} apply to LLM judges, not to ", *parts) + model,
                remedy(
                    f"leave out {named}, or choose an LLM with {{}} (e.g. openai/gpt-4o-mini)",
                    *parts,
                    Param("model", None),
                ),
                value=model,
            )
        return {}
    return chosen
