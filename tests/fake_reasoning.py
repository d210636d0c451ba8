"""A fake reasoning model: tests/fake_openai.py's server answering as reasoning models answer.

A reasoning model's reply carries its reasoning beside the answer (`message.reasoning_content`,
or Anthropic-style `thinking_blocks`, both of which litellm reads into the message) and counts
the reasoning in `usage.completion_tokens_details.reasoning_tokens` (part of
`completion_tokens`, as OpenAI counts them). The replies here are built per request, so the
grade follows the passage's `[[grade=N]]` mark as in `default_reply`:

- `reasoned`: the fixed line as the answer, and a reasoning that drafts a *different* grade
  (the judge must read the answer, never the draft);
- `answer_in_reasoning`: an empty answer, with the fixed line only in the reasoning (the judge
  must leave it unparsed).

Usage is fixed (PROMPT_TOKENS in, ANSWER_TOKENS + REASONING_TOKENS out) so costs are exact.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.fake_openai import GRADE_MARK, FakeRequest, Reply

PROMPT_TOKENS = 120
ANSWER_TOKENS = 8
REASONING_TOKENS = 600


def grade_of(request: FakeRequest) -> int:
    """The grade `default_reply` would give this request."""
    mark = GRADE_MARK.search(request.passage)
    return int(mark.group(1)) if mark else len(request.passage) % 4


def reasoning_body(
    request: FakeRequest,
    content: str | None,
    reasoning: str | None,
    where: str = "reasoning_content",
    finish_reason: str = "stop",
    reasoning_tokens: int = REASONING_TOKENS,
) -> bytes:
    """A chat completion whose message holds `content` and `reasoning` (under `where`:
    reasoning_content or thinking_blocks), with usage counting the reasoning tokens."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None and where == "reasoning_content":
        message["reasoning_content"] = reasoning
    elif reasoning is not None:
        message["thinking_blocks"] = [
            {"type": "thinking", "thinking": reasoning, "signature": "fake-signature"}
        ]
    completion = ANSWER_TOKENS + reasoning_tokens
    return json.dumps(
        {
            "id": "chatcmpl-reasoning",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": completion,
                "total_tokens": PROMPT_TOKENS + completion,
                "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            },
        }
    ).encode()


def reasoned(request: FakeRequest) -> Reply:
    """The answer line, after a reasoning that drafted another grade."""
    grade = grade_of(request)
    draft = f"First thought: ##final score: {(grade + 1) % 4}. On reflection the passage..."
    return Reply(body=reasoning_body(request, f"##final score: {grade}", draft))


def answer_in_reasoning(
    where: str = "reasoning_content", finish_reason: str = "stop"
) -> Callable[[FakeRequest], Reply]:
    """Replies whose answer is empty and whose reasoning ends with the fixed line."""

    def reply(request: FakeRequest) -> Reply:
        thought = f"The passage answers the query.\n##final score: {grade_of(request)}"
        return Reply(body=reasoning_body(request, "", thought, where, finish_reason))

    return reply
