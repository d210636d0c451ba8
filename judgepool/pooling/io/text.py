"""Text normalisation and content hashes: the identity of a passage is its text, not its id.

The judge cache and the offline judge's embedding cache key on these hashes, so a chunk whose text
survives a re-chunking unchanged is recognised whatever its new id. Normalisation is deliberately
mild (Unicode NFC, whitespace runs collapsed, ends stripped): it removes differences a reader would
never see, and keeps everything a judge could react to (case, punctuation, digits).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")

#: Bump when `normalise` changes: it is part of every content hash.
NORMALISATION_VERSION = "1"


def normalise(text: str) -> str:
    """Return `text` in the canonical form that content hashes are computed over."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def content_hash(text: str) -> str:
    """A version-tagged SHA-256 of the normalised text (hex, 32 characters)."""
    digest = hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:32]
    return f"n{NORMALISATION_VERSION}:{digest}"
