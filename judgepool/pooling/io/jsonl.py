"""The fields of one JSONL line: the object, its ids, texts, scores and grades, or a refusal
that names the line, the key and what to do. Types are checked, never converted: an id is a
string (or an integer, read as its decimal form), a score a number (or a string holding a C
float), a grade an integer; a bool is none of these.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from judgepool.errors import InputError
from judgepool.pooling.io.values import ID_HINT, check_grade, check_id, parse_grade, parse_score


def json_object(path: Path, line: int, text: str) -> dict[str, Any]:
    """The line as a JSON object (anything else is refused)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            path,
            f"invalid JSON: {err.msg} (column {err.colno})",
            line=line,
            hint="write one JSON object per line",
        ) from None
    if not isinstance(value, dict):
        raise InputError(
            path,
            f"expected a JSON object, found {type(value).__name__}",
            line=line,
            hint="write one JSON object per line",
        )
    return value


def json_id(path: Path, line: int, obj: dict[str, Any], keys: tuple[str, ...], what: str) -> str:
    """The id under the first of `keys` present: a string, or an integer as its decimal form."""
    for key in keys:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InputError(
                    path,
                    f"{what} ({key!r}) must be a string, found {type(value).__name__} {value!r}",
                    line=line,
                    hint=ID_HINT,
                )
            return check_id(path, line, what, str(value))
    raise InputError(
        path,
        f"no {what}: expected one of the keys {', '.join(keys)}",
        line=line,
        hint=f"give every line its {what} under one of those keys",
    )


def json_text(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    """(found, value) under the first of `keys` present."""
    for key in keys:
        if key in obj:
            return True, obj[key]
    return False, None


def json_score(path: Path, line: int, raw: Any) -> float:
    """A JSON number, or a string read as a TREC score is (a C float); never a bool."""
    if isinstance(raw, str):
        return parse_score(path, line, raw)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InputError(
            path,
            f"score {raw!r} is not a number ({type(raw).__name__})",
            line=line,
            hint="scores are JSON numbers (or strings holding a C float)",
        )
    try:
        score = float(raw)
    except OverflowError:  # an integer beyond a double: strtod would read an infinity
        return float("inf") if raw > 0 else float("-inf")
    if math.isnan(score):
        raise InputError(
            path,
            "score is NaN, which cannot be ranked",
            line=line,
            hint="give the line a real score, or drop it",
        )
    return score


def optional_str(path: Path, line: int, obj: dict[str, Any], key: str) -> str | None:
    """An optional string field (title, parent_id); an integer becomes its decimal form."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise InputError(
            path,
            f"{key!r} must be a string, found {type(value).__name__} {value!r}",
            line=line,
            hint=f"write {key!r} as a string (or leave it out)",
        )
    return str(value)


def json_grade(path: Path, line: int, raw: Any) -> int:
    """An integer grade, or a string holding one; never a bool or a float."""
    if isinstance(raw, str):
        return parse_grade(path, line, raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return check_grade(path, line, raw)
    raise InputError(
        path,
        f"grade {raw!r} is not an integer ({type(raw).__name__})",
        line=line,
        hint="grades are whole numbers",
    )
