"""A chat completion -> the JudgeAnswer stored for it: one reading for online calls and batch lines.

The online judge gets litellm's response object, a batch output line holds the provider's JSON
body: both are read here, from the same places (choices[0].message.content, usage,
finish_reason, model, id, the reasoning's size), graded by the same parser (judge/parse.py) on the
final text only (never the reasoning: judge/reasoning.py), and made storable the
same way (judge/provenance.storable: secrets masked, a raw answer over 8 kB cut at both ends and
flagged, the grade read from the whole answer first). An answer graded online and the same
answer graded from a batch file are therefore the same label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from judgepool.judge.base import JudgeAnswer
from judgepool.judge.parse import parse_grade
from judgepool.judge.provenance import storable
from judgepool.judge.reasoning import parse_problem, reasoning_of, reasoning_tokens
from judgepool.judge.redact import Redactor


def _get(value: Any, name: str) -> Any:
    """A field of a JSON object or of an SDK object (litellm's response)."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def completion_answer(
    completion: Any,
    price: Callable[[int, int, int], float | None] | None,
    latency_s: float | None = None,
    extra: Mapping[str, Any] | None = None,
    mask: Redactor | None = None,
) -> JudgeAnswer:
    """The storable answer of one chat completion (a litellm response or a JSON body).

    `price(tokens_in, tokens_out, reasoning_tokens)` gives its cost (None: unknown, also when the
    completion has no usage; reasoning tokens are part of tokens_out, priced at their own rate
    where the model has one); `extra` is added to the answer's provenance (a batch's ids and
    price basis); `mask` masks the secrets (one Redactor for a whole batch file).
    """
    choices = _get(completion, "choices")
    first = choices[0] if isinstance(choices, list | tuple) and choices else None
    message = _get(first, "message")
    content = _text(_get(message, "content"))
    usage = _get(completion, "usage")
    tokens_in = _int(_get(usage, "prompt_tokens"))
    tokens_out = _int(_get(usage, "completion_tokens"))
    reasoning = reasoning_tokens(usage)
    cost = (
        price(tokens_in, tokens_out, reasoning or 0)
        if price is not None and tokens_in is not None and tokens_out is not None
        else None
    )
    parsed = parse_grade(content)
    thought = reasoning_of(message)
    finish = _text(_get(first, "finish_reason"))
    answer = JudgeAnswer(
        status="ok" if parsed.ok else "unparsed",
        grade=parsed.grade,
        raw_output=content,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost,
        latency_s=latency_s,
        provenance={
            "parse": parsed.method,
            "parse_problem": parse_problem(parsed.problem, content, thought, finish),
            "finish_reason": finish,
            "reasoning_tokens": reasoning,
            "reasoning_chars": len(thought) if thought is not None else None,
            "response_model": _text(_get(completion, "model")),
            "response_id": _text(_get(completion, "id")),
            **(extra or {}),
        },
    )
    return storable(answer, mask)
