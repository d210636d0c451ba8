"""Line-exact parsers of every input format: the authority on what a valid file is.

Each reader checks every line and raises `InputError` with the file, the 1-based line, what is
wrong and what to do. The values themselves (ids, scores, grades, how a TREC line splits) follow
pooling/io/values.py. The run and qrels ingest try a fast scan first and come here when that
scan gives up: to say exactly where and why a file is wrong, or to read what the scan does not
(mixed whitespace, comments, hex floats).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgepool.errors import InputError
from judgepool.pooling.io.formats import iter_lines
from judgepool.pooling.io.jsonl import (
    json_grade,
    json_id,
    json_object,
    json_score,
    json_text,
    optional_str,
)
from judgepool.pooling.io.values import (
    check_id,
    is_blank_or_comment,
    parse_grade,
    parse_score,
    split_columns,
)

QID_KEYS = ("qid", "query_id", "id", "_id")
QUERY_TEXT_KEYS = ("text", "query", "title")
DOC_ID_KEYS = ("doc_id", "docid", "id", "_id")
DOC_TEXT_KEYS = ("text", "contents", "body")
RUN_DOC_KEYS = ("doc_id", "docid")
GRADE_KEYS = ("grade", "relevance", "rel", "label")


@dataclass
class RunColumns:
    """A run as parallel columns, with the source line of every row (for error messages)."""

    qids: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    #: The distinct values of a TREC run's tag column, up to two (one tag can name the run).
    tags: list[str] = field(default_factory=list)


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


def _split_fields(path: Path, line: int, text: str, expected: int, what: str) -> list[str]:
    parts = split_columns(text)
    if len(parts) != expected:
        raise InputError(
            path,
            f"expected {expected} whitespace-separated columns ({what}), found {len(parts)}",
            line=line,
            hint=f"every line of this file must read `{what}`",
        )
    return parts


def no_entries(path: Path, what: str = "only blank lines") -> InputError:
    """The refusal of a file with nothing to ingest (an empty input never replaces data)."""
    return InputError(
        path, f"the file has no entries ({what})", hint="give a file with at least one entry"
    )


def _content_lines(path: Path, trec: bool = False) -> Iterator[tuple[int, str]]:
    """Non-blank lines (and, in TREC files, not `#` comments); refuses a file that has none."""
    seen = False
    for number, line in iter_lines(path):
        if is_blank_or_comment(line) if trec else not line.strip():
            continue
        seen = True
        yield number, line
    if not seen:
        raise no_entries(path, "only blank lines or comments" if trec else "only blank lines")


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
    for number, text in _content_lines(path, trec=True):
        qid, _, doc_id, _, score, tag = _split_fields(
            path, number, text, 6, "qid Q0 doc_id rank score tag"
        )
        cols.qids.append(check_id(path, number, "qid", qid))
        cols.doc_ids.append(check_id(path, number, "doc id", doc_id))
        cols.scores.append(parse_score(path, number, score))
        cols.lines.append(number)
        if len(cols.tags) < 2 and tag not in cols.tags:
            cols.tags.append(tag)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def read_jsonl_run(path: Path) -> RunColumns:
    """One JSON object per line: {"qid", "doc_id"|"docid", "score"} (other keys ignored)."""
    cols = RunColumns()
    for number, text in _content_lines(path):
        obj = json_object(path, number, text)
        cols.qids.append(json_id(path, number, obj, ("qid", "query_id"), "qid"))
        cols.doc_ids.append(json_id(path, number, obj, RUN_DOC_KEYS, "doc id"))
        if "score" not in obj:
            raise InputError(
                path, "no 'score' key", line=number, hint="give every line its 'score'"
            )
        cols.scores.append(json_score(path, number, obj["score"]))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def read_trec_qrels(path: Path) -> LabelColumns:
    """`qid iteration doc_id grade`; the iteration column is ignored, as trec_eval does."""
    cols = LabelColumns()
    for number, text in _content_lines(path, trec=True):
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
        obj = json_object(path, number, text)
        cols.qids.append(json_id(path, number, obj, ("qid", "query_id"), "qid"))
        cols.doc_ids.append(json_id(path, number, obj, RUN_DOC_KEYS, "doc id"))
        found, raw = json_text(obj, GRADE_KEYS)
        if not found:
            raise InputError(
                path,
                f"no grade: expected one of {', '.join(GRADE_KEYS)}",
                number,
                hint="give every line its grade under one of those keys",
            )
        cols.grades.append(json_grade(path, number, raw))
        cols.lines.append(number)
    check_unique_pairs(path, cols.qids, cols.doc_ids, cols.lines)
    return cols


def _check_unique_ids(path: Path, seen: dict[str, int], value: str, line: int, what: str) -> None:
    first = seen.setdefault(value, line)
    if first != line:
        raise InputError(
            path,
            f"{what} {value!r} appears twice (first on line {first})",
            line,
            hint=f"give each {what} once per file",
        )


_TSV_COLUMNS = {"doc_id", "docid", "id", "_id", "text", "contents", "body", "title", "parent_id"}


def _doc_from_json(path: Path, number: int, obj: dict[str, Any]) -> DocRow:
    doc_id = json_id(path, number, obj, DOC_ID_KEYS, "doc id")
    found, text = json_text(obj, DOC_TEXT_KEYS)
    if not found:
        raise InputError(
            path,
            f"no passage text: expected one of {', '.join(DOC_TEXT_KEYS)}",
            number,
            hint="give every passage its text (null for one that has none)",
        )
    if text is not None and not isinstance(text, str):
        raise InputError(
            path,
            f"passage text must be a string, found {type(text).__name__}",
            number,
            hint="write the text as a JSON string",
        )
    parent = optional_str(path, number, obj, "parent_id")
    if parent is not None:
        check_id(path, number, "parent_id", parent)
    return DocRow(
        doc_id=doc_id,
        text=text if text and text.strip() else None,
        title=optional_str(path, number, obj, "title"),
        parent_id=parent,
    )


def iter_docs(path: Path, fmt: str) -> Iterator[DocRow]:
    """Passages from JSONL or TSV (`doc_id<TAB>text`, or a header row naming the columns)."""
    seen: dict[str, int] = {}
    header: list[str] | None = None
    rows = 0
    for number, line in _content_lines(path):
        if fmt == "jsonl":
            row = _doc_from_json(path, number, json_object(path, number, line))
        else:
            fields = line.split("\t")
            if number == 1 and set(fields) <= _TSV_COLUMNS and len(fields) >= 2:
                header = fields
                continue
            if header is None:
                if len(fields) < 2:
                    raise InputError(
                        path,
                        "expected `doc_id<TAB>text`, found no tab",
                        number,
                        hint="separate each doc id from its text with a tab",
                    )
                fields = line.split("\t", 1)
                obj: dict[str, Any] = {"doc_id": fields[0], "text": fields[1]}
            else:
                if len(fields) != len(header):
                    raise InputError(
                        path,
                        f"expected {len(header)} tab-separated columns ({', '.join(header)}), "
                        f"found {len(fields)}",
                        line=number,
                        hint="give every row one value per header column (tab-separated)",
                    )
                obj = {k: (v if v != "" else None) for k, v in zip(header, fields, strict=True)}
            row = _doc_from_json(path, number, obj)
        _check_unique_ids(path, seen, row.doc_id, number, "doc id")
        rows += 1
        yield row
    if rows == 0:
        raise no_entries(path, "only a header row")
