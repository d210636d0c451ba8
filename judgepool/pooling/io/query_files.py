"""Line-exact readers of query files and group files: queries with their groups, or refusals.

A **queries** file is TSV or JSONL:
- TSV `qid<TAB>text`, one query a line (the text may hold tabs); or TSV with a header row naming
  its columns: one id column (`qid`, `query_id`, `id`, `_id`), one text column (`text`, `query`,
  `title`) and optionally `group`, whose cell holds the query's groups separated by commas
  (empty: none);
- JSONL {"qid"|"query_id"|"id"|"_id", "text"|"query"|"title", "group"?}: `group` is a string, a
  list of strings, or null / [] for none.
A **group file** (`ingest queries --groups FILE`) holds one membership a line, `qid<TAB>group`,
optionally under a header row `qid<TAB>group`; a query in several groups has several lines.

A group name is any text without control characters and without a comma (the separator of the
TSV column), with no space at either end; one query is in a group once. Every refusal names the
file, the line and what to do, like every other reader (pooling/io/readers.py).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgepool.errors import InputError
from judgepool.pooling.io.formats import iter_lines
from judgepool.pooling.io.jsonl import json_id, json_object, json_text
from judgepool.pooling.io.readers import QID_KEYS, QUERY_TEXT_KEYS, no_entries
from judgepool.pooling.io.values import check_id

GROUP_KEY = "group"
_GROUP_SEPARATOR = ","


@dataclass(frozen=True)
class Membership:
    """One query in one group, with the line that said so (for refusals)."""

    qid: str
    group: str
    line: int


@dataclass(frozen=True)
class QueryFile:
    """The queries of a file, in file order, and their groups when the file has a group column
    or key (None when it has neither: the groups stored for these queries are left alone)."""

    rows: list[tuple[str, str]]
    groups: list[Membership] | None


def check_group(path: Path, line: int, raw: str) -> str:
    """A group name: no control character, no comma, no space at either end, not empty."""
    name = raw.strip()
    if not name:
        raise InputError(
            path, "empty group name", line, hint="give the group a name, or drop it from the line"
        )
    if _GROUP_SEPARATOR in name:
        raise InputError(
            path,
            f"group {name!r} contains a comma",
            line,
            hint="group names may not contain commas (the separator of a group column): "
            "rename the group",
        )
    for char in name:
        if unicodedata.category(char) == "Cc":
            raise InputError(
                path,
                f"group {name!r} contains a control character (U+{ord(char):04X})",
                line,
                hint="group names may not contain control characters: fix the line",
            )
    return name


def _add(
    path: Path, out: list[Membership], seen: dict[tuple[str, str], int], m: Membership
) -> None:
    first = seen.setdefault((m.qid, m.group), m.line)
    if first != m.line:
        raise InputError(
            path,
            f"query {m.qid!r} is put in group {m.group!r} twice (first on line {first})",
            m.line,
            hint="list each membership once",
        )
    out.append(m)


def _once(path: Path, line: int, names: list[str]) -> list[str]:
    """The groups of one line, each once."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InputError(
                path,
                f"group {name!r} is listed twice on this line",
                line,
                hint="list each of the query's groups once",
            )
    return names


def _tsv_header(fields: list[str]) -> dict[str, int] | None:
    """Column positions when `fields` is a header row (id, text and maybe group), else None."""
    ids = [i for i, f in enumerate(fields) if f in QID_KEYS]
    texts = [i for i, f in enumerate(fields) if f in QUERY_TEXT_KEYS]
    groups = [i for i, f in enumerate(fields) if f == GROUP_KEY]
    known = len(ids) + len(texts) + len(groups) == len(fields)
    if not known or len(ids) != 1 or len(texts) != 1 or len(groups) > 1:
        return None
    return {"qid": ids[0], "text": texts[0], **({"group": groups[0]} if groups else {})}


def _json_groups(path: Path, line: int, obj: dict[str, Any]) -> list[str]:
    raw = obj.get(GROUP_KEY)
    if raw is None:
        return []
    if isinstance(raw, str):
        return [check_group(path, line, raw)]
    if isinstance(raw, list) and all(isinstance(g, str) for g in raw):
        return [check_group(path, line, g) for g in raw]
    raise InputError(
        path,
        f"'group' must be a string or a list of strings, found {type(raw).__name__} {raw!r}",
        line,
        hint='write e.g. "group": "factoid" or "group": ["factoid", "en"]',
    )


def _check_text(path: Path, line: int, qid: str, text: Any) -> str:
    if not isinstance(text, str):
        raise InputError(
            path,
            f"no query text: expected a string under one of {', '.join(QUERY_TEXT_KEYS)}",
            line,
            hint="give every query its text",
        )
    if not text.strip():
        raise InputError(
            path,
            f"query {qid!r} has empty text",
            line=line,
            hint="give every query its text, or drop the line",
        )
    return text.strip()


def read_queries(path: Path, fmt: str) -> QueryFile:
    """Every query of a TSV or JSONL queries file, with its groups when the file gives them."""
    rows: list[tuple[str, str]] = []
    groups: list[Membership] = []
    seen_groups: dict[tuple[str, str], int] = {}
    seen: dict[str, int] = {}
    header: dict[str, int] | None = None
    grouped = False
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        names: list[str] = []
        if fmt == "tsv":
            fields = line.split("\t")
            if not rows and header is None and (found := _tsv_header(fields)) is not None:
                header, grouped = found, "group" in found
                continue
            if not rows and header is None and fields[0] in QID_KEYS:
                raise InputError(
                    path,
                    f"the first line looks like a header row, but its columns "
                    f"({', '.join(fields)}) are not an id, a text and maybe a group",
                    number,
                    hint=f"name the columns {QID_KEYS[0]}, text and (optionally) {GROUP_KEY}, "
                    "or drop the header row",
                )
            if header is None:
                if len(fields) < 2:
                    raise InputError(
                        path,
                        "expected `qid<TAB>text`, found no tab",
                        line=number,
                        hint="separate each qid from its text with a tab",
                    )
                qid, text = line.split("\t", 1)
            else:
                if len(fields) != len(header):
                    raise InputError(
                        path,
                        f"expected {len(header)} tab-separated columns (as the header row), "
                        f"found {len(fields)}",
                        number,
                        hint="give every row one value per header column (tab-separated)",
                    )
                qid, text = fields[header["qid"]], fields[header["text"]]
                if grouped and fields[header["group"]].strip():
                    cell = fields[header["group"]].split(_GROUP_SEPARATOR)
                    names = [check_group(path, number, g) for g in cell]
        else:
            obj = json_object(path, number, line)
            qid = json_id(path, number, obj, QID_KEYS, "qid")
            _, text = json_text(obj, QUERY_TEXT_KEYS)
            grouped = grouped or GROUP_KEY in obj
            names = _json_groups(path, number, obj)
        check_id(path, number, "qid", qid)
        text = _check_text(path, number, qid, text)
        first = seen.setdefault(qid, number)
        if first != number:
            raise InputError(
                path,
                f"qid {qid!r} appears twice (first on line {first})",
                number,
                hint="give each qid once per file",
            )
        rows.append((qid, text))
        for name in _once(path, number, names):
            _add(path, groups, seen_groups, Membership(qid, name, number))
    if not rows:
        raise no_entries(path, "only a header row" if header is not None else "only blank lines")
    return QueryFile(rows, groups if grouped else None)


def read_group_file(path: Path) -> list[Membership]:
    """The memberships of a `qid<TAB>group` file (a first line `qid<TAB>group` is a header)."""
    out: list[Membership] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if number == 1 and [f.strip() for f in fields] == ["qid", GROUP_KEY]:
            continue
        if len(fields) != 2:
            raise InputError(
                path,
                f"expected `qid<TAB>group`, found {len(fields)} tab-separated field(s)",
                number,
                hint="write one membership a line: the qid, a tab, the group's name (a query "
                "in several groups gets several lines)",
            )
        qid = check_id(path, number, "qid", fields[0])
        _add(path, out, seen, Membership(qid, check_group(path, number, fields[1]), number))
    if not out:
        raise no_entries(path, "no `qid<TAB>group` line")
    return out
