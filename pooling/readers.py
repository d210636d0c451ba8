"""Line-exact parsers of every input format: the authority on what a valid file is.

Each reader checks every line and raises `InputError` with the file, the 1-based line and what is
wrong. The run and qrels ingest try a fast DuckDB scan first and come here when that scan rejects
the file (to say exactly where and why) or when the file needs the tolerant split (tabs, runs of
spaces) that the fast scan does not do.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgepool.pooling.errors import InputError
from judgepool.pooling.formats import iter_lines

QID_KEYS = ("qid", "query_id", "id", "_id")
QUERY_TEXT_KEYS = ("text", "query", "title")
DOC_ID_KEYS = ("doc_id", "docid", "id", "_id")
DOC_TEXT_KEYS = ("text", "contents", "body")
RUN_DOC_KEYS = ("doc_id", "docid")
_INTEGER = re.compile(r"[+-]?[0-9]+")
GRADE_KEYS = ("grade", "relevance", "rel", "label")


@dataclass
class RunColumns:
    """A run as parallel columns, with the source line of every row (for error messages)."""

    qids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass
class LabelColumns:
    """Qrels as parallel columns."""

    qids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    grades: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class DocRow:
    """One passage or chunk; `text` is None when the file gave none (it cannot be judged)."""

    doc_id: str
    text: str | None
    title: str | None
    parent_id: str | None


def check_id(path: Path, line: int, what: str, value: str) -> str:
    """Ids are non-empty strings without whitespace, so they survive a TREC file unchanged."""
    if value == "":
        raise InputError(path, f"empty {what}", line=line)
    if any(ch.isspace() for ch in value):
        raise InputError(
            path,
            f"{what} {value!r} contains whitespace",
            line=line,
            hint="ids must not contain spaces or tabs (TREC files could not represent them)",
        )
    return value


def parse_score(path: Path, line: int, raw: str) -> float:
    """A finite-or-infinite float; NaN is refused because it has no place in a ranking."""
    try:
        score = float(raw)
    except ValueError:
        raise InputError(path, f"score {raw!r} is not a number", line=line) from None
    if math.isnan(score):
        raise InputError(path, "score is NaN, which cannot be ranked", line=line)
    return score


def parse_grade(path: Path, line: int, raw: str) -> int:
    """Grades are plain integers (negative ones are kept: trec_eval treats them as non-relevant)."""
    if not _INTEGER.fullmatch(raw):
        raise InputError(
            path, f"grade {raw!r} is not an integer", line=line, hint="grades are whole numbers"
        )
    return int(raw)


def _split_fields(path: Path, line: int, text: str, expected: int, what: str) -> list[str]:
    parts = text.split()
    if len(parts) != expected:
        raise InputError(
            path,
            f"expected {expected} whitespace-separated columns ({what}), found {len(parts)}",
            line=line,
        )
    return parts


def _json_object(path: Path, line: int, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(path, f"invalid JSON: {err.msg} (column {err.colno})", line=line) from None
    if not isinstance(value, dict):
        raise InputError(path, f"expected a JSON object, found {type(value).__name__}", line=line)
    return value


def _json_id(path: Path, line: int, obj: dict[str, Any], keys: tuple[str, ...], what: str) -> str:
    for key in keys:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InputError(
                    path, f"{what} ({key!r}) must be a string, found {value!r}", line=line
                )
            return check_id(path, line, what, str(value))
    raise InputError(path, f"no {what}: expected one of the keys {', '.join(keys)}", line=line)


def _json_text(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[bool, Any]:
    for key in keys:
        if key in obj:
            return True, obj[key]
    return False, None


def _content_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines; refuses a file that has none."""
    seen = False
    for number, line in iter_lines(path):
        if line.strip():
            seen = True
            yield number, line
    if not seen:
        raise InputError(path, "the file has no entries (only blank lines)")


def check_unique_pairs(path: Path, qids: list[str], doc_ids: list[str], lines: list[int]) -> None:
    """Refuse a (qid, doc_id) pair that appears twice, naming both lines."""
    first: dict[tuple[str, str], int] = {}
    for qid, doc_id, line in zip(qids, doc_ids, lines, strict=True):
        seen = first.setdefault((qid, doc_id), line)
        if seen != line:
            raise InputError(
                path,
                f"doc {doc_id!r} appears twice for query {qid!r} (first on line {seen})",
                line=line,
                hint="a ranking or a qrels file lists each (query, doc) pair once",
            )


def read_trec_run(path: Path) -> RunColumns:
    """`qid Q0 doc_id rank score tag`; the rank column is ignored (trec_eval orders by score)."""
    cols = RunColumns()
    for number, text in _content_lines(path):
        qid, _, doc_id, _, score, _ = _split_fields(
            path, number, text, 6, "qid Q0 doc_id rank score tag"
        )
        cols.qids.append(check_id(path, number, "qid", qid))
        cols.doc_ids.append(check_id(path, number, "doc id", doc_id))
        cols.scores.append(parse_score(path, number, score))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def read_jsonl_run(path: Path) -> RunColumns:
    """One JSON object per line: {"qid", "doc_id"|"docid", "score"} (other keys ignored)."""
    cols = RunColumns()
    for number, text in _content_lines(path):
        obj = _json_object(path, number, text)
        cols.qids.append(_json_id(path, number, obj, ("qid", "query_id"), "qid"))
        cols.doc_ids.append(_json_id(path, number, obj, RUN_DOC_KEYS, "doc id"))
        if "score" not in obj:
            raise InputError(path, "no 'score' key", line=number)
        raw = obj["score"]
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise InputError(path, f"score {raw!r} is not a number", line=number)
        cols.scores.append(parse_score(path, number, str(raw)))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def read_trec_qrels(path: Path) -> LabelColumns:
    """`qid iteration doc_id grade`; the iteration column is ignored, as trec_eval does."""
    cols = LabelColumns()
    for number, text in _content_lines(path):
        qid, _, doc_id, grade = _split_fields(path, number, text, 4, "qid 0 doc_id grade")
        cols.qids.append(check_id(path, number, "qid", qid))
        cols.doc_ids.append(check_id(path, number, "doc id", doc_id))
        cols.grades.append(parse_grade(path, number, grade))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def read_jsonl_qrels(path: Path) -> LabelColumns:
    """One JSON object per line: {"qid", "doc_id"|"docid", "grade"|"relevance"}."""
    cols = LabelColumns()
    for number, text in _content_lines(path):
        obj = _json_object(path, number, text)
        cols.qids.append(_json_id(path, number, obj, ("qid", "query_id"), "qid"))
        cols.doc_ids.append(_json_id(path, number, obj, RUN_DOC_KEYS, "doc id"))
        found, raw = _json_text(obj, GRADE_KEYS)
        if not found:
            raise InputError(path, f"no grade: expected one of {', '.join(GRADE_KEYS)}", number)
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise InputError(path, f"grade {raw!r} is not an integer", line=number)
        cols.grades.append(parse_grade(path, number, str(raw)))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def _check_unique_ids(path: Path, seen: dict[str, int], value: str, line: int, what: str) -> None:
    first = seen.setdefault(value, line)
    if first != line:
        raise InputError(path, f"{what} {value!r} appears twice (first on line {first})", line)


def read_queries(path: Path, fmt: str) -> list[tuple[str, str]]:
    """Topics as `qid<TAB>text` lines or JSONL {"qid"|"query_id"|"id", "text"|"query"|"title"}."""
    rows: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, line in _content_lines(path):
        if fmt == "tsv":
            if "\t" not in line:
                raise InputError(path, "expected `qid<TAB>text`, found no tab", line=number)
            qid, text = line.split("\t", 1)
        else:
            obj = _json_object(path, number, line)
            qid = _json_id(path, number, obj, QID_KEYS, "qid")
            found, text = _json_text(obj, QUERY_TEXT_KEYS)
            if not found or not isinstance(text, str):
                raise InputError(
                    path, f"no query text: expected a string under {QUERY_TEXT_KEYS}", number
                )
        check_id(path, number, "qid", qid)
        if not text.strip():
            raise InputError(path, f"query {qid!r} has empty text", line=number)
        _check_unique_ids(path, seen, qid, number, "qid")
        rows.append((qid, text.strip()))
    return rows


_TSV_COLUMNS = {"doc_id", "docid", "id", "_id", "text", "contents", "body", "title", "parent_id"}


def _optional_str(path: Path, line: int, obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise InputError(path, f"{key!r} must be a string, found {value!r}", line=line)
    return str(value)


def _doc_from_json(path: Path, number: int, obj: dict[str, Any]) -> DocRow:
    doc_id = _json_id(path, number, obj, DOC_ID_KEYS, "doc id")
    found, text = _json_text(obj, DOC_TEXT_KEYS)
    if not found:
        raise InputError(
            path, f"no passage text: expected one of {', '.join(DOC_TEXT_KEYS)}", number
        )
    if text is not None and not isinstance(text, str):
        raise InputError(
            path, f"passage text must be a string, found {type(text).__name__}", number
        )
    parent = _optional_str(path, number, obj, "parent_id")
    if parent is not None:
        check_id(path, number, "parent_id", parent)
    return DocRow(
        doc_id=doc_id,
        text=text if text and text.strip() else None,
        title=_optional_str(path, number, obj, "title"),
        parent_id=parent,
    )


def iter_docs(path: Path, fmt: str) -> Iterator[DocRow]:
    """Passages from JSONL or TSV (`doc_id<TAB>text`, or a header row naming the columns)."""
    seen: dict[str, int] = {}
    header: list[str] | None = None
    for number, line in _content_lines(path):
        if fmt == "jsonl":
            row = _doc_from_json(path, number, _json_object(path, number, line))
        else:
            fields = line.split("\t")
            if number == 1 and set(fields) <= _TSV_COLUMNS and len(fields) >= 2:
                header = fields
                continue
            if header is None:
                if len(fields) < 2:
                    raise InputError(path, "expected `doc_id<TAB>text`, found no tab", number)
                fields = line.split("\t", 1)
                obj: dict[str, Any] = {"doc_id": fields[0], "text": fields[1]}
            else:
                if len(fields) != len(header):
                    raise InputError(
                        path,
                        f"expected {len(header)} tab-separated columns ({', '.join(header)}), "
                        f"found {len(fields)}",
                        line=number,
                    )
                obj = {k: (v if v != "" else None) for k, v in zip(header, fields, strict=True)}
            row = _doc_from_json(path, number, obj)
        _check_unique_ids(path, seen, row.doc_id, number, "doc id")
        yield row
