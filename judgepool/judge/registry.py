"""From a model string to a judge: LLMs through litellm, `offline[:PATH]` to the offline judge.

`make_judge("openai/gpt-4o-mini", api_base=..., temperature=...)` builds an `LLMJudge`;
`make_judge("offline")` or `make_judge("offline:/path/to/model")` imports `judge.offline`
lazily (its heavy dependencies are an optional extra) and returns
`judge.offline.make_offline_judge(spec, **options)`.

`choose_model` decides what runs when the user gave no model: never a paid model by default.
With no provider key in the environment, the offline judge (and the reason is said); with a key
but no model, an error asking to name the model to pay for.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from judgepool.errors import JudgeError, Param, Remedy, UsageError, remedy
from judgepool.judge.base import Judge

if TYPE_CHECKING:
    from judgepool.judge.options import JudgeOptions

#: The options only an LLM judge takes: refused, not ignored, for the offline judge.
_LLM_ONLY = ("api_base", "temperature", "max_tokens", "template", "reasoning_effort")

OFFLINE = "offline"
_MODEL = Param("model", None)  # the parameter itself, in a sentence

#: Environment variables that mean "a paid provider is configured here".
PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "COHERE_API_KEY",
    "TOGETHERAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "FIREWORKS_AI_API_KEY",
    "AZURE_API_KEY",
)


def is_offline(model: str) -> bool:
    """`offline` or `offline:SPEC`."""
    return model == OFFLINE or model.startswith(OFFLINE + ":")


def provider_keys_present() -> list[str]:
    """The provider key variables set (non-empty) in the environment; never their values."""
    return [name for name in PROVIDER_KEYS if os.environ.get(name)]


def choose_model(model: str | None, api_base: str | None = None) -> tuple[str, Remedy | None]:
    """The model to use and, when we chose it for the user, why."""
    if model:
        return model, None
    if api_base:
        raise UsageError(
            remedy("{} needs {}", Param("api_base", None), _MODEL),
            remedy(
                "name the served model, e.g. {} or {}",
                Param("model", "openai/NAME"),
                Param("model", "hosted_vllm/NAME"),
            ),
            value=api_base,
        )
    keys = provider_keys_present()
    if keys:
        raise UsageError(
            f"{', '.join(keys)} is set but no " + remedy("{} was given", _MODEL),
            remedy(
                "name the model to pay for, e.g. {}, or use the free local judge with {}",
                Param("model", "openai/gpt-4o-mini"),
                Param("model", OFFLINE),
            ),
        )
    return OFFLINE, remedy(
        "no {} given and no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) in the "
        "environment: using the offline judge (local model, no network, no cost)",
        _MODEL,
    )


def make_judge(model: str, **options: Any) -> Judge:
    """The judge for `model` (see the module docstring); `options` go to its constructor."""
    if is_offline(model):
        hint = "install it with: pip install 'judgepool[offline]'"
        try:
            offline = importlib.import_module("judgepool.judge.offline")
        except ImportError as err:
            raise JudgeError(f"the offline judge is not available: {err}", hint) from err
        factory = getattr(offline, "make_offline_judge", None)
        if factory is None:
            raise JudgeError("the offline judge is not available in this install", hint)
        judge: Judge = factory(model, **options)
        return judge
    from judgepool.judge.llm import LLMJudge, LLMSettings

    return LLMJudge(LLMSettings(model=model, **options))


def constructor_options(model: str, options: JudgeOptions) -> dict[str, Any]:
    """Constructor options for the chosen judge; LLM options given to the offline judge are an
    error rather than silently ignored."""
    given = {
        "api_base": options.api_base,
        "temperature": options.temperature,
        "max_tokens": options.max_tokens,
        "template": options.template,
        "timeout": options.timeout,
        "reasoning_effort": options.reasoning_effort,
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
