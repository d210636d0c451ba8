"""Token counts for budgets and estimates: tiktoken's cl100k_base, loaded offline.

One tokenizer for every model keeps truncation deterministic (the cut text is part of the cache
key, so it must not depend on which provider answers) and needs no network: the encoding file
ships inside litellm, and we read it directly, without importing litellm itself (3+ seconds).
Counts are therefore estimates for non-OpenAI models; budgets that must hold (--max-cost) add
a margin on top.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import JudgeError

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base"


# cl100k_base as tiktoken defines it: the BPE file (by its URL's SHA-1 name, as tiktoken caches
# it, with tiktoken's expected SHA-256), the split pattern and the special tokens.
_BPE_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_BPE_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _bundled_bpe() -> Path | None:
    """litellm's copy of the cl100k_base file (found without importing litellm: 3+ seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    found = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers" / _BPE_FILE
    return found if found.is_file() else None


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    """cl100k_base from litellm's bundled file, read directly: no download and no change to the
    process's environment (tiktoken's own loader would need TIKTOKEN_CACHE_DIR set)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    bundled = _bundled_bpe()
    try:
        if bundled is None:  # no litellm copy: tiktoken's own loader (its cache, or a download)
            return tiktoken.get_encoding(ENCODING)
        ranks = load_tiktoken_bpe(str(bundled), expected_hash=_BPE_SHA256)
        return tiktoken.Encoding(
            name=ENCODING, pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL
        )
    except Exception as err:  # a damaged file, or a download that cannot happen offline
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
