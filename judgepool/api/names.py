"""One run name or several, as the library's calls take them (`runs="bm25"` or
`runs=["bm25", "splade"]`), made a list once for every `jp.Database` method."""

from __future__ import annotations

from collections.abc import Sequence


def names_of(value: str | Sequence[str] | None) -> list[str]:
    """`value` as a list of names (None: none, which the callers read as every run)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
