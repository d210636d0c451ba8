"""Telling what kind of file a refused input is, so its refusal can name the command it needs.

Only consulted when a file has already been refused: a qrels file given to `ingest run` fails on
its first line, and the refusal then says 'this looks like a qrels file: use `judgepool ingest
qrels`'. The guess reads the first entry only; when it is unsure it says nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from judgepool.errors import Call, InputError, Remedy, join, remedy
from judgepool.pooling.io.formats import PARQUET_MAGIC, Kind, iter_lines, open_binary, parquet_rows
from judgepool.pooling.io.readers import GRADE_KEYS
from judgepool.pooling.io.values import DECIMAL, INTEGER, is_blank_or_comment, split_columns

_TEXT = "queries or docs"
_SHAPES = {
    "run": "qid Q0 doc_id rank score tag",
    "qrels": "qid 0 doc_id grade",
    _TEXT: "id<TAB>text",
}


def _parquet_kind(path: Path) -> str | None:
    """A Parquet file's kind from its columns; None for one with no rows (as for a text file
    with no entry: the other command would refuse it too, so naming it would mislead)."""
    import pyarrow.parquet as pq

    if not parquet_rows(path):
        return None
    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # any unreadable file simply gets no guess
        return None
    if "score" in names:
        return "run"
    return "qrels" if names & set(GRADE_KEYS) else None


def _first_entry(path: Path) -> str | None:
    try:
        for _, line in iter_lines(path):
            if not is_blank_or_comment(line):
                return line
    except InputError:
        return None
    return None


def _json_kind(line: str) -> str | None:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    keys = set(obj)
    if "score" in keys:
        return "run"
    if keys & set(GRADE_KEYS):
        return "qrels"
    if keys & {"doc_id", "docid", "contents", "body", "parent_id"}:
        return "docs"
    if keys & {"qid", "query_id", "query"}:
        return "queries"
    return None


def _text_kind(line: str) -> str | None:
    columns = split_columns(line)
    if len(columns) == 6 and re.fullmatch(DECIMAL, columns[4]):
        return "run"
    if len(columns) == 4 and re.fullmatch(INTEGER, columns[3]):
        return "qrels"
    if "\t" in line and len(line.split("\t", 1)[1].split()) > 1:
        return _TEXT
    return None


def guess_kind(path: Path) -> str | None:
    """'run', 'qrels', 'queries', 'docs', 'queries or docs', or None when unsure."""
    try:
        with open_binary(path) as fh:
            head = fh.read(4)
    except (OSError, EOFError):
        return None
    if head.startswith(PARQUET_MAGIC):
        return _parquet_kind(path)
    line = _first_entry(path)
    if line is None:
        return None
    if line.lstrip().startswith("{"):
        return _json_kind(line)
    return _text_kind(line)


def wrong_kind_hint(path: Path, kind: Kind) -> Remedy | None:
    """'this looks like a qrels file: use ...' when `path` seems to be another kind than `kind`."""
    guess = guess_kind(path)
    if guess is None or guess == kind or (guess == _TEXT and kind in ("queries", "docs")):
        return None
    shape = f" ({_SHAPES[guess]})" if guess in _SHAPES else ""
    verbs = ("queries", "docs") if guess == _TEXT else (guess,)
    use = join([remedy("`{}`", Call.of(f"ingest_{v}", str(path))) for v in verbs], " or ")
    return f"this looks like a {guess} file{shape}: use " + use


@contextmanager
def wrong_kind_hints(path: Path, kind: Kind) -> Iterator[None]:
    """Refusals raised inside the block say which command the file needs, when it is another."""
    try:
        yield
    except InputError as err:
        hint = wrong_kind_hint(path, kind)
        if hint is not None:
            err.hint = hint
        raise
