"""Ids that match only after Unicode NFC normalisation or after removing zero-width characters.

Two files can spell one id differently in ways no reader sees: 'café' composed (U+00E9) in the
qrels and decomposed (e + U+0301) in the run, or a zero-width space pasted into an id. Ingest
keeps ids exactly as given (they are keys), so such a pair never matches; `near_matches` finds
them, so a report can warn and name a few instead of silently scoring them as unjudged.
Pure functions: no database, no I/O.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

#: Characters that take no space when shown: zero-width space, non-joiner, joiner, word joiner,
#: byte order mark (zero-width no-break space), soft hyphen, Mongolian vowel separator.
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")


@dataclass(frozen=True)
class NearMatch:
    """`ours` (from the first set) equals `theirs` (from the second) only after `how`."""

    ours: str
    theirs: str
    how: str  # "NFC", "zero-width" or "NFC and zero-width"


def _without_zero_width(value: str) -> str:
    return "".join(ch for ch in value if ch not in ZERO_WIDTH)


def canonical(value: str) -> str:
    """The id as a reader sees it: NFC, with zero-width characters removed."""
    return unicodedata.normalize("NFC", _without_zero_width(value))


def _how(ours: str, theirs: str) -> str:
    a, b = _without_zero_width(ours), _without_zero_width(theirs)
    if a == b:
        return "zero-width"
    if unicodedata.normalize("NFC", ours) == unicodedata.normalize("NFC", theirs):
        return "NFC"
    return "NFC and zero-width"


def near_matches(ours: Iterable[str], theirs: Iterable[str], limit: int = 5) -> list[NearMatch]:
    """Up to `limit` ids of `ours` absent from `theirs` that equal one of `theirs` once both
    are NFC-normalised and stripped of zero-width characters (sorted, so reports repeat)."""
    theirs_set = set(theirs)
    by_canonical: dict[str, str] = {}
    for value in sorted(theirs_set):
        by_canonical.setdefault(canonical(value), value)
    found: list[NearMatch] = []
    for value in sorted(set(ours) - theirs_set):
        match = by_canonical.get(canonical(value))
        if match is not None:
            found.append(NearMatch(value, match, _how(value, match)))
            if len(found) >= limit:
                break
    return found
