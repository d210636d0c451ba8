"""Ingest human labels (qrels) in one transaction, idempotently.

A human label is keyed by (qid, doc_id, level, source, labeller); the labeller defaults to the
qrels file's name. Ingesting the same file twice changes nothing; ingesting a corrected file
replaces exactly the labels whose grade changed (they become the latest, hence effective).
The file is parsed and checked first (pooling/io/fastscan.py, else the exact reader); the
database's write lock is held only to merge the labels in. Grades outside 0-3 are kept as given
and reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import Call, Placeholder, UsageError, remedy
from judgepool.pooling.io.fastscan import scan_qrels
from judgepool.pooling.io.formats import check_readable, detect_format
from judgepool.pooling.io.readers import LabelColumns, read_jsonl_qrels, read_trec_qrels
from judgepool.pooling.io.sniff import wrong_kind_hints
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level, quote
from judgepool.pooling.store.sql import one, registered

if TYPE_CHECKING:
    import pyarrow as pa

_TABLE = "_ingest_qrels"


@dataclass(frozen=True)
class QrelsIngested:
    """What one `ingest qrels` did (`added` counts new and changed labels written)."""

    path: str
    labeller: str
    level: str
    labels: int
    queries: int
    added: int
    changed: int
    unchanged: int
    min_grade: int = 0
    max_grade: int = 0

    @property
    def notes(self) -> list[str]:
        """What a user should know about the grades (those outside 0-3 are kept as given)."""
        found = []
        if self.max_grade > 3:
            found.append(f"grades up to {self.max_grade} found: nDCG gains are linear in the grade")
        if self.min_grade < 0:
            found.append(
                f"grades down to {self.min_grade} found: a negative grade counts as judged "
                "and adds no gain, as in trec_eval"
            )
        return found


@dataclass(frozen=True)
class ParsedQrels:
    """Qrels read and checked, not yet in the database."""

    path: Path
    table: pa.Table  # qid, doc_id, grade
    labels: int
    queries: int
    min_grade: int
    max_grade: int


def _columns_table(cols: LabelColumns) -> pa.Table:
    import pyarrow as pa

    return pa.table(
        {
            "qid": pa.array(cols.qids, pa.string()),
            "doc_id": pa.array(cols.doc_ids, pa.string()),
            "grade": pa.array(cols.grades, pa.int32()),
        }
    )


def in_pair_order(table: pa.Table) -> pa.Table | None:
    """The labels sorted by (qid, doc_id), byte-wise, or None when a pair is listed twice: one
    sort, then neighbours compared (Arrow's group_by would find a repeat in one hash pass, but it
    imports pandas: most of a second). The insert then keeps this order, which DuckDB would
    otherwise sort for again."""
    import pyarrow.compute as pc

    if table.num_rows < 2:
        return table
    ordered = table.take(
        pc.sort_indices(table, sort_keys=[("qid", "ascending"), ("doc_id", "ascending")])
    )
    qid, doc = ordered.column("qid"), ordered.column("doc_id")
    same = pc.and_(pc.equal(qid[1:], qid[:-1]), pc.equal(doc[1:], doc[:-1]))
    return None if pc.any(same).as_py() else ordered


def parse_qrels(path: str | Path, fmt: str | None = None) -> ParsedQrels:
    """Read and check the qrels at `path`, without touching the database."""
    import pyarrow.compute as pc

    path = Path(path)
    check_readable(path)
    with wrong_kind_hints(path, "qrels"):
        fmt = detect_format(path, "qrels", fmt)
        scanned = scan_qrels(path) if fmt == "trec" else None
        table = None if scanned is None else in_pair_order(scanned)
        if table is None:
            # The exact reader reads what the fast scan does not, or names the bad line.
            reader = read_jsonl_qrels if fmt == "jsonl" else read_trec_qrels
            exact = in_pair_order(_columns_table(reader(path)))
            if exact is None:  # the exact reader refuses a pair listed twice
                raise AssertionError(f"{path}: a pair listed twice was not refused")
            table = exact
    grades = pc.min_max(table.column("grade"))
    return ParsedQrels(
        path,
        table,
        table.num_rows,
        int(pc.count_distinct(table.column("qid")).as_py()),
        int(grades["min"].as_py()),
        int(grades["max"].as_py()),
    )


def ingest_qrels(
    store: Store,
    path: str | Path,
    level: str = "chunk",
    labeller: str | None = None,
    fmt: str | None = None,
    origin: str | None = None,
) -> QrelsIngested:
    """Store the human labels of a qrels file (TREC `qid 0 doc_id grade`, or JSONL); `origin`
    is what the labels' provenance records as their source (default: the resolved path)."""
    path = Path(path)
    level = check_level(level)
    labeller = labeller if labeller is not None else path.name
    if not labeller.strip() or any(ch.isspace() for ch in labeller):
        raise UsageError(
            f"labeller name {labeller!r} is empty or has whitespace",
            remedy(
                "name them: `{}`",
                Call.of("ingest_qrels", Placeholder("FILE"), labeller=Placeholder("NAME")),
            ),
            value=labeller,
        )
    same_key = (
        f"j.qid = n.qid AND j.doc_id = n.doc_id AND j.level = {quote(level)} "
        f"AND j.source = 'human' AND j.labeller = {quote(labeller)}"
    )
    parsed = parse_qrels(path, fmt)
    with store.write(create=True) as con, registered(con, _TABLE, parsed.table):
        # The first labels of this labeller at this level (a new database, a new qrels file)
        # have nothing to compare with: no join of every label against the database's.
        (held,) = one(
            con,
            "SELECT count(*) > 0 FROM judgments "
            "WHERE level = ? AND source = 'human' AND labeller = ?",
            [level, labeller],
        )
        changed = unchanged = 0
        if held:
            changed, unchanged = one(
                con,
                f"""SELECT count(*) FILTER (WHERE j.grade <> n.grade),
                           count(*) FILTER (WHERE j.grade = n.grade)
                    FROM {_TABLE} n JOIN judgments j ON {same_key}""",
            )
            con.execute(
                f"""DELETE FROM judgments WHERE id IN (
                        SELECT j.id FROM judgments j JOIN {_TABLE} n ON {same_key}
                        WHERE j.grade <> n.grade)"""
            )
        new_only = f"WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE {same_key})" if held else ""
        con.execute(
            f"""INSERT INTO judgments (qid, doc_id, level, grade, source, labeller, status,
                                       provenance, created_at)
                SELECT n.qid, n.doc_id, {quote(level)}, n.grade, 'human', {quote(labeller)}, 'ok',
                       $provenance::JSON, $now
                FROM {_TABLE} n {new_only}""",
            {"now": utcnow(), "provenance": json.dumps({"file": origin or str(path.resolve())})},
        )
    return QrelsIngested(
        path=origin or str(path),
        labeller=labeller,
        level=level,
        labels=parsed.labels,
        queries=parsed.queries,
        added=parsed.labels - int(unchanged),
        changed=int(changed),
        unchanged=int(unchanged),
        min_grade=parsed.min_grade,
        max_grade=parsed.max_grade,
    )
