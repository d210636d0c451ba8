"""Export labels as TREC qrels or as JSONL with full provenance, byte for byte reproducible.

Three label sets can be exported at a level:
- `effective`: the label every measure uses (latest human label, else latest `ok` judge label of
  the chosen judge), one per pair: exactly `pooling.store.judgments.effective_labels_sql`;
- `human`: the latest `ok` human label of each pair (qrels as ingested, plus overrides);
- `judge`: the latest `ok` judge label of each pair (of labeller `judge` when one is named).

TREC qrels are `qid 0 doc_id grade` lines; JSONL has one object per exported label with every
column of the judgments table (provenance parsed back into an object), so a label can be traced
to the model, prompt and answer that produced it. Rows are ordered by qid, then doc_id (byte-wise),
so the same database always gives the same bytes: the CLI and the dashboard both call
`export_labels`, and their outputs are identical. Files are written by `pooling.io.outfile`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from judgepool.errors import Call, Param, Placeholder, Remedy, UsageError, join, remedy
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, effective_labels_sql, latest_labels_sql

EXPORT_SOURCES: tuple[str, ...] = ("effective", "human", "judge")
EXPORT_FORMATS: tuple[str, ...] = ("trec", "jsonl")

# Every column of `judgments`, in table order: the JSONL keys.
JUDGMENT_FIELDS: tuple[str, ...] = (
    "id",
    "qid",
    "doc_id",
    "level",
    "grade",
    "source",
    "labeller",
    "status",
    "raw_output",
    "tokens_in",
    "tokens_out",
    "cost",
    "latency_s",
    "provenance",
    "note",
    "created_at",
    "purpose",
)


def check_export(source: str, fmt: str) -> None:
    """Refuse an unknown label set or format with the choices spelled out."""
    if source not in EXPORT_SOURCES:
        raise UsageError(
            f"unknown label source {source!r}", _choices("source", EXPORT_SOURCES), value=source
        )
    if fmt not in EXPORT_FORMATS:
        raise UsageError(
            f"unknown export format {fmt!r}", _choices("format", EXPORT_FORMATS), value=fmt
        )


def _choices(name: str, values: Sequence[str]) -> Remedy:
    """`use source="effective" or ...`: each choice said as the parameter it is."""
    return "use " + join([remedy("{}", Param(name, v)) for v in values], " or ")


def chosen_labels_sql(level: str, source: str, labeller: str | None = None) -> str:
    """A subquery of (qid, doc_id, judgment_id): the one exported label of each pair."""
    check_level(level)
    check_export(source, "trec")
    if source == "effective":
        return f"SELECT qid, doc_id, judgment_id FROM ({effective_labels_sql(level, labeller)})"
    if source == "human":
        return f"SELECT qid, doc_id, judgment_id FROM ({latest_labels_sql(level, 'human')})"
    return f"SELECT qid, doc_id, judgment_id FROM ({latest_labels_sql(level, 'judge', labeller)})"


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    return value


def export_labels(
    store: Store,
    level: str = "chunk",
    source: str = "effective",
    labeller: str | None = None,
    fmt: str = "trec",
) -> bytes:
    """The exported labels as bytes (UTF-8), ordered by qid then doc_id."""
    check_export(source, fmt)
    columns = ", ".join(f"j.{c}" for c in JUDGMENT_FIELDS)
    sql = f"""
        SELECT {columns} FROM ({chosen_labels_sql(level, source, labeller)}) c
        JOIN judgments j ON j.id = c.judgment_id
        ORDER BY j.qid, j.doc_id"""
    with store.read() as con:
        rows = con.execute(sql).fetchall()
    if fmt == "trec":
        return "".join(f"{r[1]} 0 {r[2]} {r[4]}\n" for r in rows).encode("utf-8")
    provenance_at = JUDGMENT_FIELDS.index("provenance")
    lines = []
    for row in rows:
        record = {k: _json_value(v) for k, v in zip(JUDGMENT_FIELDS, row, strict=True)}
        raw = row[provenance_at]
        record["provenance"] = json.loads(raw) if raw is not None else None
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n")
    return "".join(lines).encode("utf-8")


def count_labels(store: Store, level: str, source: str, labeller: str | None = None) -> int:
    """How many labels `export_labels` would write (one per pair)."""
    with store.read() as con:
        row = con.execute(f"SELECT count(*) FROM ({chosen_labels_sql(level, source, labeller)})")
        found = row.fetchone()
    return int(found[0]) if found else 0


def nothing_to_export(
    store: Store, level: str, source: str, labeller: str | None = None
) -> UsageError:
    """The refusal of an export that would write nothing: which labels are missing, and which
    neighbouring choices (the other level, the effective labels, any judge) would not be empty."""
    of_judge = "" if labeller is None else f" of judge {labeller!r}"
    other = "doc" if level == "chunk" else "chunk"
    tries: list[tuple[Remedy, str, str, str | None]] = [
        (remedy("{}", Param("level", other)), other, source, labeller)
    ]
    if source != "effective":
        tries.append((remedy("{}", Param("source", "effective")), level, "effective", labeller))
    if labeller is not None:
        tries.append((remedy("no {} (any judge)", Param("labeller", None)), level, source, None))
    found = [(what, count_labels(store, lv, src, jd)) for what, lv, src, jd in tries]
    found = [(what, n) for what, n in found if n]
    hint = (
        "these would not be empty: " + join([what + f" ({n} labels)" for what, n in found])
        if found
        else remedy(
            "label some pairs first: `{}` or `{}`",
            Call.of("ingest_qrels", Placeholder("FILE")),
            Call.of("judge"),
        )
    )
    return UsageError(
        f"no {source} {level}-level labels{of_judge}: nothing to export, nothing written", hint
    )


def export_file_name(level: str, source: str, fmt: str) -> str:
    """The suggested file name of an export (the dashboard's download name)."""
    return f"qrels.{level}.{source}.{'txt' if fmt == 'trec' else 'jsonl'}"


def export_file(
    store: Store,
    path: str | os.PathLike[str],
    level: str = "chunk",
    source: str = "effective",
    labeller: str | None = None,
    fmt: str = "trec",
) -> tuple[Path, int]:
    """Write the exported labels to `path` (atomically, never over the database, a DuckDB file
    or anything but a regular file); returns the path and the number of labels written.

    The target is checked before anything is read, and an export of nothing is refused."""
    from judgepool.pooling.io.outfile import check_target, write_atomic

    check_target(path, [store.path])
    payload = export_labels(store, level=level, source=source, labeller=labeller, fmt=fmt)
    if not payload:
        raise nothing_to_export(store, level, source, labeller)
    return write_atomic(path, payload, [store.path]), payload.count(b"\n")
