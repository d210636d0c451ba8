"""Reasoning models (o-series, gpt-5, ...): which models reason, and the parameters they are sent.

Which models reason is litellm's model map's answer (`litellm.supports_reasoning`), never a
guess from the name; asking for `--reasoning-effort` makes any model one. What a model accepts
is litellm's answer too: `get_optional_params`, the parameter mapping every `completion` call
goes through, is asked (without `drop_params`) whether it takes a set of parameters, so a
parameter the model would refuse is never silently dropped.

A model that does not reason is sent what judgepool always sent (`temperature`, `max_tokens`:
its cache keys stay what they were). A reasoning model is sent
- `max_completion_tokens` (the cap covers the hidden reasoning and the answer; `max_tokens` is
  the visible answer alone on the providers that tell them apart), default REASONING_MAX_TOKENS
  since the reasoning is spent out of it (256 would leave most answers empty);
- the temperature the model allows: the one asked for, or refused with what to do; with no
  `--temperature`, 0 when the model takes it, else 1 (the only one o-series and gpt-5 take),
  else none at all (the provider's default);
- `reasoning_effort` when asked for (low | medium | high), and then it is part of the cache key
  (a cache that ignored it would hand low-effort answers to a high-effort run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judgepool.errors import Param, Remedy, UsageError, remedy
from judgepool.judge.litellm_env import load_litellm

EFFORTS = ("low", "medium", "high")
#: The output cap of a model that does not reason (what judgepool always sent).
DEFAULT_MAX_TOKENS = 256
#: The output cap of a reasoning model: its reasoning tokens are spent out of it.
REASONING_MAX_TOKENS = 8192
#: Reasoning tokens a grading answer typically takes, by effort (None: the provider's default),
#: for dry-run forecasts only: a rough figure; the worst case is the cap.
TYPICAL_REASONING_TOKENS: dict[str | None, int] = {
    None: 1024,
    "low": 512,
    "medium": 1024,
    "high": 2048,
}


@dataclass(frozen=True)
class Decoding:
    """The decoding parameters a judge sends (all of them in its cache key), and for a reasoning
    model one line saying what was chosen and why."""

    parameters: dict[str, Any]
    reasoning: bool = False
    why: str | Remedy | None = None
    effort: str | None = None

    @property
    def output_cap(self) -> int:
        """The most output tokens one call may take (reasoning included)."""
        return int(
            self.parameters.get("max_completion_tokens") or self.parameters.get("max_tokens") or 0
        )


def check_effort(effort: str | None) -> str | None:
    """`low`, `medium`, `high` or None; anything else is a UsageError."""
    if effort is not None and effort not in EFFORTS:
        raise UsageError(
            remedy("{} is not one of ", Param("reasoning_effort", effort)) + ", ".join(EFFORTS),
            remedy(
                "give {}, {} or {} (or leave it out)",
                *(Param("reasoning_effort", e) for e in ("low", "medium", "high")),
            ),
            value=effort,
        )
    return effort


def is_reasoning_model(model: str) -> bool:
    """Whether litellm's model map says `model` reasons (False for a model it does not know)."""
    litellm = load_litellm()
    try:
        return bool(litellm.supports_reasoning(model=model))
    except Exception:  # a model string litellm cannot place: not known to reason
        return False


def _provider(model: str) -> tuple[str, str] | None:
    """(the model name the provider knows, the provider), or None when litellm cannot tell."""
    litellm = load_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model)
    except Exception:
        return None
    return str(name), str(provider)


def refusal(model: str, parameters: dict[str, Any]) -> str | None:
    """None when litellm maps `parameters` for `model` without dropping any, else its reason
    (its first sentence: the advice to set `drop_params` is not ours to give)."""
    litellm = load_litellm()
    from litellm.utils import get_optional_params

    placed = _provider(model)
    if placed is None:
        return None  # litellm cannot place the model: the provider will say what it refuses
    name, provider = placed
    try:
        get_optional_params(model=name, custom_llm_provider=provider, **parameters)
    except litellm.UnsupportedParamsError as err:
        text = str(err).removeprefix("litellm.UnsupportedParamsError: ")
        return text.split(" To drop")[0].strip()
    return None


def _temperature(model: str, base: dict[str, Any], asked: float | None) -> tuple[float | None, str]:
    """The temperature to send a reasoning model and how it was chosen."""
    if asked is not None:
        problem = refusal(model, {**base, "temperature": asked})
        if problem is not None:
            raise UsageError(
                remedy("{} is not accepted by ", Param("temperature", asked))
                + f"{model} (a reasoning model): {problem}",
                remedy(
                    "leave out {} (judgepool then sends the lowest temperature the model takes), "
                    "or give one it accepts (o-series and gpt-5 take only 1)",
                    Param("temperature", None),
                ),
                value=asked,
            )
        return asked, f"temperature {asked:g} (asked for)"
    for candidate in (0.0, 1.0):
        if refusal(model, {**base, "temperature": candidate}) is None:
            how = "" if candidate == 0.0 else ": the only one it takes"
            return candidate, f"temperature {candidate:g}{how}"
    return None, "no temperature (it takes neither 0 nor 1: the provider's default)"


def decoding(
    model: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    effort: str | None = None,
) -> Decoding:
    """The parameters to send `model` (see the module docstring)."""
    effort = check_effort(effort)
    known = is_reasoning_model(model)
    if not known and effort is None:
        return Decoding(
            {
                "temperature": 0.0 if temperature is None else temperature,
                "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            }
        )
    base: dict[str, Any] = {
        "max_completion_tokens": REASONING_MAX_TOKENS if max_tokens is None else max_tokens
    }
    if effort is not None:
        base["reasoning_effort"] = effort
    problem = refusal(model, base)
    if problem is not None:
        left = [Param("reasoning_effort", None)] if effort else []
        left.append(Param("max_tokens", None))
        raise UsageError(
            f"{model} does not take these parameters: {problem}",
            remedy(
                "leave out " + " / ".join("{}" for _ in left) + ", or choose another {}",
                *left,
                Param("model", None),
            ),
            value=model,
        )
    chosen, how = _temperature(model, base, temperature)
    parameters = dict(base) if chosen is None else {"temperature": chosen, **base}
    source = (
        remedy("a reasoning model in litellm's model map")
        if known
        else remedy(
            "treated as a reasoning model because {} was given", Param("reasoning_effort", None)
        )
    )
    said = f", reasoning_effort {effort}" if effort else ", the provider's default effort"
    why = (
        f"{model} is "
        + source
        + f": max_completion_tokens {base['max_completion_tokens']} "
        + f"(the reasoning is spent out of it), {how}{said}"
    )
    return Decoding(parameters, reasoning=True, why=why, effort=effort)


def _field(value: Any, name: str) -> Any:
    """A field of an SDK object (litellm's response) or of a JSON object (a batch line's body)."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def reasoning_of(message: Any) -> str | None:
    """The reasoning text of a reply (`reasoning_content`, or the text of its thinking blocks);
    None when there is none. It is never parsed for a grade."""
    text = _field(message, "reasoning_content")
    if isinstance(text, str) and text.strip():
        return text
    blocks = _field(message, "thinking_blocks") or []
    parts = [str(b.get("thinking") or "") for b in blocks if isinstance(b, dict)]
    joined = "\n".join(p for p in parts if p.strip())
    return joined or None


def reasoning_tokens(usage: Any) -> int | None:
    """usage.completion_tokens_details.reasoning_tokens, when the provider reported it."""
    value = _field(_field(usage, "completion_tokens_details"), "reasoning_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_problem(
    problem: str | None, content: Any, thought: str | None, finish: Any
) -> str | None:
    """Why an answer is unparsed, saying so when its final text is empty but it reasoned: the
    grade is read from the final text only (a grade in the reasoning is a draft, not the
    answer), so such a reply stays unparsed."""
    if problem is None or thought is None or (isinstance(content, str) and content.strip()):
        return problem
    said = (
        f"empty answer: the final text is empty; the reply's reasoning ({len(thought)} "
        "characters) is never read for a grade"
    )
    if finish == "length":
        said += " (the output cap was spent reasoning: raise --max-tokens)"
    return said
