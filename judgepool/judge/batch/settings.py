"""What a batch keeps of the judge run that sent it, and the judge and client made from it again.

A batch row stores the run's settings (model, api_base, decoding parameters, template, and how
the holes were planned: depth, runs, level, labeller, token budgets), so that collecting it,
retrying what failed, or finishing a send a crash interrupted needs no option repeated. An
api_base is stored masked (judge/redact.py): one holding credentials cannot be used again from
the database, and the command then asks for --api-base.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from judgepool.errors import Param, UsageError, remedy
from judgepool.judge.batch.support import batch_support
from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.judge.options import JudgeOptions
from judgepool.judge.redact import redact
from judgepool.judge.registry import constructor_options, is_offline

#: The settings a batch keeps (the rest, concurrency, timeouts, caps, concern one run only).
KEPT = (
    "model",
    "api_base",
    "depth",
    "runs",
    "level",
    "labeller",
    "all_queries",
    "temperature",
    "max_tokens",
    "passage_tokens",
    "query_tokens",
    "max_chunks",
    "template",
    "reasoning_effort",
)
_MASK = "***"
_API, _BATCH = Param("api_base", None), Param("submit_batch", None)  # named in the refusals


def kept(settings: JudgeOptions, model: str) -> dict[str, Any]:
    """The settings to store with a batch (`model` is the one chosen)."""
    values = {k: v for k, v in asdict(settings).items() if k in KEPT}
    values["model"] = model
    values["runs"] = list(settings.runs)
    if settings.api_base:
        values["api_base"] = redact(settings.api_base)
    return values


def restored(
    stored: dict[str, Any], api_base: str | None = None, name: str = "the batch"
) -> JudgeOptions:
    """The JudgeOptions a batch was sent with (`api_base` replaces the stored one)."""
    known = {f.name for f in fields(JudgeOptions)}
    values = {k: v for k, v in stored.items() if k in known and k in KEPT}
    values["runs"] = tuple(values.get("runs") or ())
    if api_base:
        values["api_base"] = api_base
    elif _MASK in str(values.get("api_base") or ""):
        raise UsageError(
            f"{name} was sent to an "
            + remedy("{} that holds credentials, which judgepool does not store", _API),
            remedy("pass the same {} again", _API),
            value=name,
        )
    return JudgeOptions(**values)


def batch_judge(model: str, settings: JudgeOptions) -> LLMJudge:
    """The LLM judge whose requests go into batches; refused, with what to do, for the offline
    judge and for providers with no batch API here (judge/batch/support.py)."""
    if is_offline(model):
        raise UsageError(
            remedy("{} sends requests to a provider's batch API; ", _BATCH)
            + f"{model} is the local offline judge, which costs nothing and has none",
            remedy(
                "run the same command without {}, or name a model with {}",
                _BATCH,
                Param("model", "openai/gpt-4o-mini"),
            ),
            value=model,
        )
    LLMSettings(model=model).check()
    batch_support(model)
    return LLMJudge(LLMSettings(model=model, **constructor_options(model, settings)))
