"""Token counts for budgets and estimates: tiktoken's cl100k_base, loaded offline.

One tokenizer for every model keeps truncation deterministic (the cut text is part of the cache
key, so it must not depend on which provider answers) and needs no network: the encoding file
ships inside litellm, and we point tiktoken at it without importing litellm itself (3+ seconds).
Counts are therefore estimates for non-OpenAI models; budgets that must hold (--max-cost) add
a margin on top.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.errors import JudgeError

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin and "TIKTOKEN_CACHE_DIR" not in os.environ:
        bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
        if bundled.is_dir():
            os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING)
    except Exception as err:  # a missing encoding file becomes a download attempt
        raise JudgeError(
            f"cannot load the {ENCODING} tokenizer: {err}",
            "reinstall litellm (it ships the encoding file), or set TIKTOKEN_CACHE_DIR",
        ) from err


def count_tokens(text: str) -> int:
    """The number of tokens in `text` (special-token strings count as plain text)."""
    return len(_encoding().encode(text, disallowed_special=()))


@dataclass(frozen=True)
class Cut:
    """`text[:end]` fits the budget; `truncated` says whether anything was cut."""

    end: int
    tokens: int
    truncated: bool


def cut_to_tokens(text: str, budget: int) -> Cut:
    """The longest prefix of `text`, ending on a token boundary, of at most `budget` tokens."""
    encoding = _encoding()
    tokens = encoding.encode(text, disallowed_special=())
    if len(tokens) <= budget:
        return Cut(len(text), len(tokens), False)
    prefix = encoding.decode_bytes(tokens[: max(0, budget)]).decode("utf-8", errors="ignore")
    end = len(prefix)
    while end > 0 and not text.startswith(prefix[:end]):
        end -= 1  # only when a token boundary splits a character differently (rare)
    return Cut(end, max(0, budget), True)
