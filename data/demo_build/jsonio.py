"""Byte-stable writers: the build must produce identical files on every run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write one JSON object per line (UTF-8, key order as given, '\\n' endings)."""
    n = 0
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file, skipping blank lines."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_text(path: Path, text: str) -> None:
    """Write text with '\\n' line endings regardless of platform."""
    with path.open("w", encoding="utf-8", newline="\n") as f:
        f.write(text)
