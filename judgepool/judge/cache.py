"""The judge cache: answers stored on disk under a hash of their content, so no pair is paid twice.

A key is a version-tagged SHA-256 of canonical JSON (sorted keys, no spaces) of everything that
determines an answer: the judge (model, every decoding parameter, template hash, parser version)
and the normalised query and passage texts, never an id. Two docs with the same text under one
query share a key; a re-chunked passage with unchanged text keeps its key; changing the model,
the template or a parameter changes it.

The cache lives in diskcache (SQLite, safe for several processes) at $JUDGEPOOL_CACHE_DIR/judge,
default ~/.cache/judgepool/judge ($XDG_CACHE_HOME respected). A value is JSON: the answer and
the provenance it was first produced with, so a hit can be recorded as a label that says where
it came from. Only `ok` answers are cached: a failure or an unparsed answer is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from judgepool.errors import JudgeError

ENV_CACHE_DIR = "JUDGEPOOL_CACHE_DIR"
#: Bump when the layout of keys or values changes: old entries are then simply not found.
CACHE_VERSION = "1"
#: What a cache's disk raises when it is full, read-only or gone (diskcache is SQLite + files).
CACHE_FAULTS = (OSError, sqlite3.Error)


def cache_root() -> Path:
    """$JUDGEPOOL_CACHE_DIR, else $XDG_CACHE_HOME/judgepool, else ~/.cache/judgepool."""
    explicit = os.environ.get(ENV_CACHE_DIR)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "judgepool"


def canonical_json(value: Any) -> str:
    """The one JSON spelling of a value: sorted keys, no whitespace, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_key(parts: dict[str, Any]) -> str:
    """A version-tagged hash of `parts` (which must hold content, never ids)."""
    digest = hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()
    return f"judge{CACHE_VERSION}:{digest}"


def usable_entry(entry: dict[str, Any]) -> bool:
    """Whether a stored entry is an ok answer we can turn into a label (else: ask again)."""
    answer = entry.get("answer")
    return (
        isinstance(answer, dict)
        and answer.get("status") == "ok"
        and isinstance(answer.get("grade"), int)
        and 0 <= answer["grade"] <= 3
    )


def open_disk_cache(
    directory: str | os.PathLike[str] | None, subfolder: str, what: str
) -> tuple[Path, Any]:
    """A diskcache.Cache in `directory` (default: the cache root / `subfolder`), created if
    needed; an unusable folder (not writable, read-only disk, full disk, a file in the way) is a
    JudgeError that says what happened and which variable to set."""
    import diskcache

    folder = Path(directory) if directory is not None else cache_root() / subfolder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder, diskcache.Cache(str(folder))
    except CACHE_FAULTS as err:
        why = str(err)
        if isinstance(err, sqlite3.Error) and "unable to open" in why:
            why += " (the folder is not writable, or its disk is read-only)"
        raise JudgeError(
            f"cannot open the {what} at {folder}: {why}",
            f"make that folder writable (or free space on its disk), or point {ENV_CACHE_DIR} "
            "at a writable folder",
        ) from err


class JudgeCache:
    """Answers by cache key, on disk; open it once per run and close it at the end."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory, self._cache = open_disk_cache(directory, "judge", "judge cache")

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for `key`, or None."""
        raw = self._cache.get(key)
        if raw is None:
            return None
        value = json.loads(raw)
        return value if isinstance(value, dict) else None

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The stored entries among `keys`, in one transaction (fast for thousands of keys)."""
        found: dict[str, dict[str, Any]] = {}
        with self._cache.transact():
            for key in keys:
                value = self.get(key)
                if value is not None:
                    found[key] = value
        return found

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an entry (written to disk before this returns)."""
        self._cache.set(key, json.dumps(entry, sort_keys=True, default=str, ensure_ascii=False))

    def put_many(self, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """Store many entries in one transaction (a batch's answers: thousands at once)."""
        with self._cache.transact():
            for key, entry in entries:
                self.put(key, entry)

    def __contains__(self, key: str) -> bool:
        return key in self._cache

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
