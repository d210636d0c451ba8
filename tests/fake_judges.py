"""Reply functions for tests/fake_openai.py that play judges of known character.

- `gullible_reply` grades 3 whenever the passage holds an instruction about its grade (words such
  as "top grade", "perfectly relevant", "final score") or repeats every word of the query at
  least twice; otherwise it answers like `default_reply` (the passage's `[[grade=N]]` mark).
- `honest_reply` is `default_reply`: it grades by the mark only, whatever else the passage says.
- `fixed_reply(N)` always answers N; `by_model({...})` answers by the request's model name, so
  one server can play several jury members.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from tests.fake_openai import FakeRequest, Reply, default_reply

_QUERY = re.compile(r"<<<QUERY\n(.*?)\nQUERY>>>", re.S)
_WORD = re.compile(r"[^\W_]+")
_STOP = {"the", "and", "for", "what", "who", "how", "which", "with", "from", "that", "this"}
CUES = re.compile(
    r"top grade|top score|highest (grade|score)|grade is 3|grade it 3|rate this passage 3|"
    r"perfectly relevant|highly relevant|final score",
    re.I,
)


def query_of(prompt: str) -> str:
    """The query between our prompt's fences ('' when there are none)."""
    found = _QUERY.search(prompt)
    return found.group(1) if found else ""


def repeats_query(query: str, passage: str) -> bool:
    """Every word of the query (3+ letters, not a stopword) is in the passage twice or more."""
    words = [w for w in _WORD.findall(query.lower()) if len(w) >= 3 and w not in _STOP]
    counts = Counter(_WORD.findall(passage.lower()))
    return bool(words) and all(counts[w] >= 2 for w in words)


def gullible_reply(request: FakeRequest) -> Reply:
    """Fooled by instructions and keyword stuffing (see the module docstring)."""
    if CUES.search(request.passage) or repeats_query(query_of(request.prompt), request.passage):
        return Reply("The passage says it is the answer.\n##final score: 3")
    return default_reply(request)


honest_reply = default_reply


def fixed_reply(grade: int) -> Callable[[FakeRequest], Reply]:
    """Always `##final score: grade`."""

    def reply(request: FakeRequest) -> Reply:
        return Reply(f"##final score: {grade}")

    return reply
